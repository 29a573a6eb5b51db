#!/usr/bin/env bash
# `npm test`: the two lanes of vitest.config.ts (`engine`, `local`) as two vitest processes side by side, each one
# file at a time. (One vitest process runs every project whose files may not run in parallel in one sequential
# group, so the lanes would not overlap.) Each lane's lines are prefixed with its name; the exit status is the
# first failing lane's. Arguments (files, -t filters) go to both lanes; a lane they match nothing in passes.
# A failing lane's "Failed Tests" block is printed again at the very end, after both lanes' output: a CI log kept
# only by its tail still names what failed.
#
#   npm test                                  # everything
#   npm test -- test/e2e/cpu-bound.test.ts    # one file, in whichever lane holds it
set -uo pipefail
cd "$(dirname "$0")/.."
extra=()
[ "$#" -gt 0 ] && extra=(--passWithNoTests)
logs=$(mktemp -d "${TMPDIR:-/tmp}/ingestbench-lanes-XXXXXX")
trap 'rm -rf "$logs"' EXIT
lanes=(engine local)
pids=()
for lane in "${lanes[@]}"; do
  ( npx vitest run --project "$lane" "${extra[@]}" "$@" 2>&1 | sed -u "s/^/[$lane] /" | tee "$logs/$lane"; exit "${PIPESTATUS[0]}" ) &
  pids+=("$!")
done
stop_lanes() { for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null || true; done; }
trap stop_lanes INT TERM
rc=0
failed=()
for i in "${!pids[@]}"; do
  wait "${pids[$i]}"; s=$?
  [ "$s" != 0 ] && failed+=("${lanes[$i]} (exit $s)")
  [ "$rc" = 0 ] && rc=$s
done
for f in "${failed[@]}"; do
  lane=${f%% *}
  echo "== lane $f: its failures again (vitest's Failed Tests and Errors blocks, at most 150 lines)"
  # from vitest's first "Failed Tests" / "Unhandled Errors" rule to its summary; the lane's last lines when it has none
  block=$(sed 's/\x1b\[[0-9;]*m//g' "$logs/$lane" | awk '/⎯ (Failed Tests|Unhandled Error)/ { on = 1 } /Test Files / { on = 0 } on' | head -150)
  if [ -n "$block" ]; then echo "$block"; else tail -40 "$logs/$lane"; fi
done
[ "${#failed[@]}" -gt 0 ] && echo "== failed lanes: ${failed[*]}"
exit "$rc"
