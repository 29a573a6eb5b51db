#!/usr/bin/env bash
# Regenerate README.md's sample `npm run bench` output on this machine (docs/decisions/0007-every-number-names-its-machine.md):
# runs `npm run bench` once (about 2 minutes; --progress plain), and prints the machine line (CPU model, cores, kernel,
# cgroup version, date, command) followed by the output as a fenced block — the text between the README's
# `<!-- readme-sample:bench -->` and `<!-- /readme-sample:bench -->` markers.
#
#   bash scripts/readme-sample.sh                 # run the bench, print the block
#   bash scripts/readme-sample.sh --write         # ... and replace the README's block with it
#   bash scripts/readme-sample.sh --from FILE     # format an output captured earlier instead of running the bench
#   options combine; --readme PATH writes another file than README.md (tests)
#
# The machine line is what test/docs/readme-figures.test.ts requires beside every sample block. Exit status: the
# bench's (a failed bench writes nothing), 2 on bad arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

from=""
write=0
readme="README.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --from) from="${2:?--from needs a file}"; shift 2 ;;
    --write) write=1; shift ;;
    --readme) readme="${2:?--readme needs a path}"; shift 2 ;;
    *) echo "readme-sample: unknown argument $1 (use --from FILE, --write, --readme PATH)" >&2; exit 2 ;;
  esac
done

# The machine: the same facts as a run's environment fingerprint (harness/runner/environment.ts).
cpu="$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n1)"
[ -n "$cpu" ] || cpu="$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n1)"
cores="$(nproc)"
kernel="$(uname -r)"
case "$(stat -fc %T /sys/fs/cgroup 2>/dev/null || true)" in
  cgroup2fs) cgroup="v2" ;;
  tmpfs) cgroup="v1" ;;
  *) cgroup="none" ;;
esac
machine="Measured on ${cpu}, ${cores} cores, kernel ${kernel}, cgroup ${cgroup}, $(date -u +%Y-%m-%d), with \`npm run bench\`:"

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
if [ -n "$from" ]; then
  cat "$from" >"$out"
else
  # plain progress lines (what a non-terminal gets) and the result tables, stderr and stdout in order
  npm run --silent bench -- --progress plain >"$out" 2>&1
fi
# no colour codes or carriage-return redraws in the README
sed -i -e 's/\x1b\[[0-9;]*[A-Za-z]//g' -e 's/\r$//' "$out"

block="$(printf '%s\n\n```\n%s\n```' "$machine" "$(cat "$out")")"
printf '%s\n' "$block"

if [ "$write" = 1 ]; then
  grep -q '^<!-- readme-sample:bench -->$' "$readme" && grep -q '^<!-- /readme-sample:bench -->$' "$readme" \
    || { echo "readme-sample: $readme has no <!-- readme-sample:bench --> … <!-- /readme-sample:bench --> markers" >&2; exit 2; }
  BLOCK="$block" node -e '
    const fs = require("node:fs");
    const file = process.argv[1];
    const text = fs.readFileSync(file, "utf8");
    const re = /^<!-- readme-sample:bench -->\n[\s\S]*?^<!-- \/readme-sample:bench -->$/m;
    fs.writeFileSync(file, text.replace(re, () => `<!-- readme-sample:bench -->\n${process.env.BLOCK}\n<!-- /readme-sample:bench -->`));
  ' "$readme"
  echo "readme-sample: wrote the block into $readme" >&2
fi
