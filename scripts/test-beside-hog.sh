#!/usr/bin/env bash
# Run the test suite (or the vitest arguments given) while CPU hogs run beside it: the proof that tests assert
# ledgers and observations, not rates that depend on how busy the machine is.
#
#   bash scripts/test-beside-hog.sh                      # npm test beside one busy loop per core
#   HOGS=1 bash scripts/test-beside-hog.sh test/e2e/cpu-bound.test.ts
#
# Each hog is a bounded busy loop (it ends by itself after HOG_MAX_S seconds, default 3600) started here; they are
# stopped by their pids when the tests end, whatever happens. Nothing else is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
hogs="${HOGS:-$(nproc)}"
max_s="${HOG_MAX_S:-3600}"
pids=()
stop_hogs() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait "${pids[@]}" 2>/dev/null || true; }
trap stop_hogs EXIT
for _ in $(seq 1 "$hogs"); do
  node -e "const end = Date.now() + ${max_s} * 1000; while (Date.now() < end) {}" &
  pids+=("$!")
done
echo "test-beside-hog: ${hogs} busy loop(s) running beside the tests (pids ${pids[*]}; each ends after ${max_s} s at most)" >&2
bash scripts/test-lanes.sh "$@"
