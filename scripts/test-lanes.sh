#!/usr/bin/env bash
# `npm test`: the two lanes of vitest.config.ts (`engine`, `local`) as two vitest processes side by side, each one
# file at a time. (One vitest process runs every project whose files may not run in parallel in one sequential
# group, so the lanes would not overlap.) Each lane's lines are prefixed with its name; the exit status is the
# first failing lane's. Arguments (files, -t filters) go to both lanes; a lane they match nothing in passes.
#
#   npm test                                  # everything
#   npm test -- test/e2e/cpu-bound.test.ts    # one file, in whichever lane holds it
set -uo pipefail
cd "$(dirname "$0")/.."
extra=()
[ "$#" -gt 0 ] && extra=(--passWithNoTests)
pids=()
for lane in engine local; do
  ( npx vitest run --project "$lane" "${extra[@]}" "$@" 2>&1 | sed -u "s/^/[$lane] /"; exit "${PIPESTATUS[0]}" ) &
  pids+=("$!")
done
stop_lanes() { for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done; }
trap stop_lanes INT TERM
rc=0
for p in "${pids[@]}"; do
  wait "$p"; s=$?
  [ "$rc" = 0 ] && rc=$s
done
exit "$rc"
