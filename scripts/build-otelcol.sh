#!/usr/bin/env bash
# Build ingestbench's OpenTelemetry Collector distribution (plugins/collectors/otelcol/distribution: go.mod, go.sum,
# main.go, components.go, in the shape the Collector Builder generates; every module of release 0.165.0 / 1.71.0
# from the Go module proxy) and print the binary's path.
#
# Cached outside the clone: ${INGESTBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ingestbench}/otelcol/<key>/otelcol
# where <key> is the sha256 of go.mod, go.sum and the .go files (names and contents) and the Go version; a second run
# with the same inputs only prints the path. plugins/collectors/otelcol/build.ts computes the same key.
#   bash scripts/build-otelcol.sh          # build if needed, print the path
#   bash scripts/build-otelcol.sh --path   # print the path it would have (built or not), build nothing
set -euo pipefail
cd "$(dirname "$0")/.."
src=plugins/collectors/otelcol/distribution
export PATH="$PATH:/usr/local/go/bin"
die() { echo "build-otelcol: $*" >&2; exit 1; }
command -v go >/dev/null || die "go is not on PATH (Go >= 1.26 is needed: https://go.dev/dl/)"

root="${INGESTBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ingestbench}"
[ "$root" = off ] && die "INGESTBENCH_CACHE_DIR=off: the collector build needs a cache directory"
goversion="$(go env GOVERSION)"
# the key: each input's name and sha256, sorted by name, then the Go version
key="$( (cd "$src" && sha256sum go.mod go.sum $(ls *.go | LC_ALL=C sort); echo "$goversion") | sha256sum | cut -c1-16)"
entry="$root/otelcol/$key"
bin="$entry/otelcol"
if [ "${1:-}" = --path ]; then echo "$bin"; exit 0; fi
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

mkdir -p "$root/otelcol"
staging="$root/otelcol/.staging-$$-$RANDOM"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging"
echo "build-otelcol: go build ($goversion) of $src into $entry …" >&2
# -trimpath: the binary does not name this clone's path; CGO off: one static binary
(cd "$src" && CGO_ENABLED=0 nice -n 10 go build -trimpath -ldflags='-s -w' -o "$staging/otelcol" .)
"$staging/otelcol" --version >&2
# the first rename wins when two builds race; the loser's staging is removed by the trap
mv -T "$staging" "$entry" 2>/dev/null || [ -x "$bin" ] || die "could not put $entry in place"
echo "$bin"
