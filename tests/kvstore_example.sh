#!/usr/bin/env bash
# The embedding example as a user drives it (examples/kvstore.c): puts and
# deletes acknowledged once durable, a checkpoint that releases the log, the
# state rebuilt from the snapshot and the log at start; then its crash test
# (tests/kvstore_crash.c: SIGKILL at drawn moments, a third in a checkpoint)
# on a file, emulated pmem and a fake PMR. ROUNDS (default 40) bounds it.
set -euo pipefail
kv=$1 crash=$2
rounds=${ROUNDS:-40}
dir=$(mktemp -d /var/tmp/pmwal-kv-XXXXXX)
shm=$(mktemp -d /dev/shm/pmwal-kv-XXXXXX)
trap 'rm -rf "$dir" "$shm"' EXIT
export PMWAL_STATUS_DIR=$dir
fail() { echo "FAIL: $*"; exit 1; }
out=$(printf 'put colour blue\nput size 42\nput colour green\ndel size\nget colour\nget size\ncheckpoint\nput shape round\nquit\n' | "$kv" "$dir")
grep -q '^value green$' <<<"$out" || fail "get colour: $out"
grep -q '^missing$' <<<"$out" || fail "get size after del: $out"
grep -q '^checkpoint 4$' <<<"$out" || fail "checkpoint: $out"
[ -f "$dir/snapshot" ] || fail "no snapshot"
out=$(printf 'dump\n' | "$kv" "$dir" | sort)
[ "$out" = "$(printf 'colour green\nend\nshape round')" ] || fail "state after restart: $out"
out=$(printf 'frobnicate\nput onlykey\n' | "$kv" "$dir")
[ "$(grep -c '^error' <<<"$out")" = 2 ] || fail "bad lines: $out"
"$kv" 2>/dev/null && fail "no arguments accepted"
mkdir "$dir/file" "$dir/pmem" "$dir/fake"
"$crash" "$kv" "$dir/file" "" "$rounds" 1
"$crash" "$kv" "$dir/pmem" "pmem:$shm/kv.log" "$rounds" 2
"$crash" "$kv" "$dir/fake" "fakepmr:$shm/kv.fake" "$rounds" 3
echo "kvstore_example: passed"
