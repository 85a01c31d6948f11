#!/usr/bin/env bash
# The embedding example as a user runs it: every `set` is durable in the log
# before it is acknowledged, and a fresh process rebuilds the table by replay.
set -euo pipefail
kv=$1
dir=$(mktemp -d /var/tmp/pmwal-kv-XXXXXX)
trap 'rm -rf "$dir"' EXIT
log=$dir/kv.log
"$kv" "$log" set colour blue >/dev/null
"$kv" "$log" set size 42 >/dev/null
"$kv" "$log" set colour green >/dev/null
[ "$("$kv" "$log" get colour)" = green ] || { echo "FAIL: colour"; exit 1; }
[ "$("$kv" "$log" get size)" = 42 ] || { echo "FAIL: size"; exit 1; }
if "$kv" "$log" get missing >/dev/null 2>&1; then echo "FAIL: missing key found"; exit 1; fi
echo "kvstore_example: 3 passed, 0 failed"
