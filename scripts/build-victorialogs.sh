#!/usr/bin/env bash
# Build VictoriaLogs' single-node server (`victoria-logs`, the main package app/victoria-logs of the Go module
# github.com/VictoriaMetrics/VictoriaLogs at v1.52.2, from the Go module proxy) and print the binary's path.
# The project's own module plugins/sinks/victorialogs/build/ (go.mod with a `tool` line, go.sum) pins every module.
# Built as upstream's release build is (its Makefile, `victoria-logs-linux-amd64-prod`): CGO on (gozstd's zstd),
# the version stamped with -X …/lib/buildinfo.Version in upstream's format
# `victoria-logs-<date>-<time>-tags-v1.52.2`, from the module version and time the go command resolved (no git here),
# so that `victoria-logs -version` names the release.
#
# Cached outside the clone: ${INGESTBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ingestbench}/victorialogs/<key>/
# victoria-logs, where <key> is the sha256 of go.mod, go.sum and this script (names and contents) and the Go version;
# a second run with the same inputs only prints the path. plugins/sinks/victorialogs/build.ts asks `--path`.
#   bash scripts/build-victorialogs.sh          # build if needed, print the path
#   bash scripts/build-victorialogs.sh --path   # print the path it would have (built or not), build nothing
set -euo pipefail
cd "$(dirname "$0")/.."
src=plugins/sinks/victorialogs/build
module=github.com/VictoriaMetrics/VictoriaLogs
export PATH="$PATH:/usr/local/go/bin"
die() { echo "build-victorialogs: $*" >&2; exit 1; }
command -v go >/dev/null || die "go is not on PATH (Go >= 1.26.5 is needed, as $module's go.mod says)"

root="${INGESTBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ingestbench}"
[ "$root" = off ] && die "INGESTBENCH_CACHE_DIR=off: the VictoriaLogs build needs a cache directory"
goversion="$(go env GOVERSION)"
key="$( (sha256sum "$src/go.mod" "$src/go.sum" scripts/build-victorialogs.sh; echo "$goversion") | sha256sum | cut -c1-16)"
entry="$root/victorialogs/$key"
bin="$entry/victoria-logs"
if [ "${1:-}" = --path ]; then echo "$bin"; exit 0; fi
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
command -v gcc >/dev/null || die "gcc is not on PATH (the cgo build of gozstd needs it: apt-get install gcc libc6-dev)"

mkdir -p "$root/victorialogs"
staging="$root/victorialogs/.staging-$$-$RANDOM"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging"
# the module's version and commit time as the go command resolved them (go.sum checks the content)
read -r version mtime < <(cd "$src" && go list -m -f '{{.Version}} {{.Time.UTC.Format "20060102-150405"}}' "$module")
[ "$version" = v1.52.2 ] || die "$src/go.mod resolves $module to $version, not v1.52.2"
stamp="victoria-logs-$mtime-tags-$version"
echo "build-victorialogs: go build ($goversion) of $module/app/victoria-logs@$version into $entry …" >&2
# -trimpath: the binary does not name this clone's path
(cd "$src" && CGO_ENABLED=1 nice -n 10 go build -trimpath \
  -ldflags="-X 'github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=$stamp'" \
  -o "$staging/victoria-logs" "$module/app/victoria-logs")
"$staging/victoria-logs" -version >&2
# the first rename wins when two builds race; the loser's staging is removed by the trap
mv -T "$staging" "$entry" 2>/dev/null || [ -x "$bin" ] || die "could not put $entry in place"
echo "$bin"
