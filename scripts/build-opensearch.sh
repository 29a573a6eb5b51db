#!/usr/bin/env bash
# Build ingestbench's OpenSearch launcher (plugins/sinks/opensearch/launcher/): one OpenSearch 2.19.6 node from
# OpenSearch's Maven Central modules (the pom), started by its bin/opensearch. Maven resolves and packages it in a
# temporary copy (nothing is written into the clone); the result is cached outside the clone, like core/cache.ts:
#
#   ${INGESTBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ingestbench}/opensearch-launcher/<key>/{bin,lib,modules,plugins}
#
# <key>: the first 32 hex digits of the sha256 over `sha256sum` lines ("<hex>  <path>") of launcher/pom.xml,
# launcher/bin/ and launcher/src/, sorted by path: plugins/sinks/opensearch/launcher.ts launcherKey computes the same
# key to find the build (ProgramSpec.built). A complete entry is never rebuilt: a second run costs a second.
# Prints the program to run (<entry>/bin/opensearch).
set -euo pipefail
cd "$(dirname "$0")/.."
src=plugins/sinks/opensearch/launcher
die() { echo "build-opensearch: $*" >&2; exit 1; }

root="${INGESTBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ingestbench}"
[ "$root" != off ] || die "INGESTBENCH_CACHE_DIR=off: the launcher is built into the cache, which is turned off"
key="$(cd "$src" && find pom.xml bin src -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-32)"
entry="$root/opensearch-launcher/$key"
if [ -x "$entry/bin/opensearch" ]; then
  echo "$entry/bin/opensearch"
  exit 0
fi
command -v mvn >/dev/null || die "mvn is not installed (apt-get install maven)"
command -v java >/dev/null || die "java is not installed (apt-get install openjdk-17-jre-headless)"
mkdir -p "$root/opensearch-launcher"
chmod 700 "$root/opensearch-launcher" 2>/dev/null || true
staging="$(mktemp -d "$root/opensearch-launcher/.staging-$$-XXXXXXXX")"
trap 'rm -rf "$staging"' EXIT
cp -a "$src/pom.xml" "$src/src" "$staging/"
nice mvn -q -B -Dstyle.color=never -f "$staging/pom.xml" package >&2 || die "mvn package failed in $staging (output above)"
mkdir -p "$staging/out/bin" "$staging/out/lib" "$staging/out/modules" "$staging/out/plugins"
cp "$staging"/target/lib/*.jar "$staging/target/opensearch-launcher.jar" "$staging/out/lib/"
cp "$src/bin/opensearch" "$staging/out/bin/opensearch"
chmod 755 "$staging/out/bin/opensearch"
"$staging/out/bin/opensearch" --version >&2 || die "the built launcher does not print its version"
# the first rename wins; a concurrent build's entry is as good as this one
mv -T "$staging/out" "$entry" 2>/dev/null || [ -x "$entry/bin/opensearch" ] || die "cannot put $entry in place"
echo "$entry/bin/opensearch"
