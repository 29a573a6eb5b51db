#!/bin/bash
# Apply fix-buffered-write.sed to fluent-plugin-griddb 1.0.2's out_griddb.rb and FAIL unless it took:
#   apply-fix.sh <path of out_griddb.rb>      (the image build passes "$(gem which fluent/plugin/out_griddb)",
#                                              the file Fluentd loads, as write-up 000 advises)
# Checks: before, exactly one call `handle_record(record_array)` (the buffered write path of 1.0.2; any other
# count means this is not the pinned plugin, e.g. 1.0.1 or an already patched file); after, no call to
# handle_record is left, and def write(chunk) calls handle_insert_type(record_array); then `ruby -c` (syntax).
# RUBY_SYNTAX_CHECK=0 skips only the ruby -c step (for hosts without Ruby; the image build never sets it).
set -euo pipefail

file=${1:?usage: apply-fix.sh <path of out_griddb.rb>}
script=${FIX_SED:-"$(dirname "$0")/fix-buffered-write.sed"}

fail() {
  echo "apply-fix: $*" >&2
  exit 1
}

[ -f "$file" ] || fail "no such file: $file"
[ -f "$script" ] || fail "no such sed script: $script"

before=$(grep -c 'handle_record(record_array)' "$file" || true)
[ "$before" = 1 ] || fail "expected exactly one call handle_record(record_array) in $file (the buffered write path of fluent-plugin-griddb 1.0.2), found $before: not the pinned plugin version, or already patched"

sed -i -f "$script" "$file"

if grep -n 'handle_record(' "$file" >&2; then
  fail "$file still calls handle_record after the fix"
fi
# the call must now sit in the body of def write(chunk)
awk '
  /^[[:space:]]*def write\(chunk\)/ { inwrite = 1; next }
  inwrite && /^[[:space:]]*def / { inwrite = 0 }
  inwrite && /handle_insert_type\(record_array\)/ { found = 1 }
  END { exit found ? 0 : 1 }
' "$file" || fail "def write(chunk) in $file does not call handle_insert_type(record_array) after the fix"

if [ "${RUBY_SYNTAX_CHECK:-1}" != 0 ]; then
  ruby -c "$file" >/dev/null || fail "$file is not valid Ruby after the fix"
fi
echo "apply-fix: $file: buffered write path now calls handle_insert_type(record_array)"
