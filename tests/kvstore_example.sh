#!/usr/bin/env bash
# The embedding example as a user drives it (examples/kvstore.c): puts and
# deletes acknowledged once durable, a checkpoint that releases the log, the
# state rebuilt from the snapshot and the log at start; then its crash test
# (tests/kvstore_crash.c: SIGKILL at drawn moments, a third in a checkpoint)
# on a file, emulated pmem and a fake PMR, with one client on stdin and with
# 8 clients at once on the store's Unix socket. ROUNDS (default 40) bounds it.
set -euo pipefail
kv=$1 crash=$2 kvbench=${3:-}
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
# The snapshot holds every value the log does: no more readable than the log
# (0640), whatever the umask.
[ $(( 0$(stat -c %a "$dir/snapshot") & 07 )) -eq 0 ] ||
	fail "snapshot readable by every user: mode $(stat -c %a "$dir/snapshot") (log: $(stat -c %a "$dir/log"))"
out=$(printf 'dump\n' | "$kv" "$dir" | sort)
[ "$out" = "$(printf 'colour green\nend\nshape round')" ] || fail "state after restart: $out"
out=$(printf 'frobnicate\nput onlykey\n' | "$kv" "$dir")
[ "$(grep -c '^error' <<<"$out")" = 2 ] || fail "bad lines: $out"
"$kv" 2>/dev/null && fail "no arguments accepted"
# A second store on the directory is refused while the first runs.
sleep 3 | "$kv" "$dir" &
first=$!
sleep 0.5
err=$(echo dump | "$kv" "$dir" 2>&1 >/dev/null) && fail "a second store on $dir ran"
grep -q 'another store has this directory open' <<<"$err" || fail "second store: $err"
wait $first
# Every byte of the snapshot damaged: refused, naming the file; then restored.
cp "$dir/snapshot" "$dir/snap.good"
size=$(stat -c %s "$dir/snapshot")
for ((off = 0; off < size; off++)); do
	cp "$dir/snap.good" "$dir/snapshot"
	printf '\xa5' | dd of="$dir/snapshot" bs=1 seek=$off conv=notrunc status=none
	cmp -s "$dir/snapshot" "$dir/snap.good" && continue
	err=$(echo dump | "$kv" "$dir" 2>&1 >/dev/null) && fail "snapshot damaged at byte $off accepted"
	grep -q "$dir/snapshot" <<<"$err" || fail "damage at $off: $err"
done
for cut in 0 8 47 $((size - 1)); do
	head -c $cut "$dir/snap.good" >"$dir/snapshot"
	echo dump | "$kv" "$dir" >/dev/null 2>&1 && fail "snapshot cut to $cut bytes accepted"
done
# Another store's snapshot, or another store's log, is refused by name.
mkdir "$dir/other"
printf 'put x 1\ncheckpoint\n' | "$kv" "$dir/other" >/dev/null
cp "$dir/other/snapshot" "$dir/snapshot"
err=$(echo dump | "$kv" "$dir" 2>&1 >/dev/null) && fail "another store's snapshot accepted"
grep -q 'another store' <<<"$err" || fail "another store's snapshot: $err"
cp "$dir/snap.good" "$dir/snapshot"
out=$(printf 'dump\n' | "$kv" "$dir" | sort)
[ "$out" = "$(printf 'colour green\nend\nshape round')" ] || fail "state after the attacks: $out"
python3 -c "print('put k ' + 'x' * 3000000); print('get k')" >"$dir/long"
out=$("$kv" "$dir" <"$dir/long")
grep -q '^error: a line longer than' <<<"$out" || fail "a 3 MB line: $out"
for bad in "--checkpoint-every x" "--socket" "--frob 1"; do
	# shellcheck disable=SC2086
	"$kv" "$dir" $bad </dev/null 2>/dev/null && fail "accepted: $bad"
done
# The socket: SIGTERM stops the store cleanly and removes its socket.
mkdir "$dir/sock"
"$kv" "$dir/sock" --socket "$dir/sock/s" 2>/dev/null &
pid=$!
for _ in $(seq 100); do [ -S "$dir/sock/s" ] && break; sleep 0.05; done
[ -S "$dir/sock/s" ] || fail "no socket"
kill -TERM $pid
wait $pid || fail "SIGTERM: exit $?"
[ -e "$dir/sock/s" ] && fail "socket left behind"
# Socket clients as an attacker writes them (tests/kv_clients.py).
clients=$(dirname "$0")/kv_clients.py
serve() { # serve DIR [ARGS...]: a store on DIR/s in the background; $spid
	"$kv" "$1" --socket "$1/s" "${@:2}" 2>>"$1/err" &
	spid=$!
	for _ in $(seq 200); do [ -S "$1/s" ] && return; sleep 0.05; done
	fail "no socket in $1"
}
# Put and delete keys of their own at once (dead entries pile up between
# checkpoints): every client answered, none hangs.
mkdir "$dir/churn"
serve "$dir/churn"
timeout 120 python3 "$clients" churn "$dir/churn/s" 32 3 || fail "churn"
kill -TERM $spid; wait $spid || fail "churn: store exit $?"
# A client dying in the middle of a line: the half line is never executed.
mkdir "$dir/half"
serve "$dir/half"
python3 "$clients" half "$dir/half/s" || fail "half: client"
kill -TERM $spid; wait $spid
out=$(printf 'get balance\nget other\n' | "$kv" "$dir/half")
[ "$out" = "$(printf 'value 100\nvalue 5')" ] || fail "a half line was executed: $out"
# A client that never reads its answers does not hold the store's shutdown.
serve "$dir/half"
python3 "$clients" stall "$dir/half/s" &
cpid=$!
sleep 1
kill -TERM $spid
for _ in $(seq 300); do kill -0 $spid 2>/dev/null || break; sleep 0.1; done
kill -0 $spid 2>/dev/null && fail "the store's shutdown waits on a client that does not read"
echo "stalled client: the store stopped in $SECONDS s of the test"
kill $cpid 2>/dev/null; wait $cpid 2>/dev/null || true
# --socket never replaces what is not a stale socket: a file, a live store's.
echo precious >"$dir/half/notasocket"
"$kv" "$dir/churn" --socket "$dir/half/notasocket" 2>/dev/null && fail "a file was replaced"
[ "$(cat "$dir/half/notasocket")" = precious ] || fail "the file at --socket changed"
serve "$dir/churn"
err=$("$kv" "$dir/half" --socket "$dir/churn/s" 2>&1) && fail "a live socket was taken"
grep -q 'another process serves' <<<"$err" || fail "live socket: $err"
kill -TERM $spid; wait $spid
# A value larger than the log's records is refused, and the store goes on.
"$(dirname "$kv")/../cli/pmwal" create "pmem:$shm/tiny.log" --size 1m >/dev/null 2>&1 ||
	fail "pmwal create"
mkdir "$dir/tiny"
out=$(python3 -c "print('put a 1'); print('put big ' + 'x' * 300000); print('get a')" |
	"$kv" "$dir/tiny" --target "pmem:$shm/tiny.log")
grep -q 'larger than the log takes' <<<"$out" && grep -q '^value 1$' <<<"$out" ||
	fail "a value too big for the log: $(cut -c1-200 <<<"$out")"
mkdir "$dir/file" "$dir/pmem" "$dir/fake" "$dir/cfile" "$dir/cpmem" "$dir/cfake"
"$crash" "$kv" "$dir/file" "" "$rounds" 1
"$crash" "$kv" "$dir/pmem" "pmem:$shm/kv.log" "$rounds" 2
"$crash" "$kv" "$dir/fake" "fakepmr:$shm/kv.fake" "$rounds" 3
"$crash" "$kv" "$dir/cfile" "" "$rounds" 4 8 2>&1 | grep -v '^kvstore: serving'
"$crash" "$kv" "$dir/cpmem" "pmem:$shm/kvc.log" "$rounds" 5 8 2>&1 | grep -v '^kvstore: serving'
"$crash" "$kv" "$dir/cfake" "fakepmr:$shm/kvc.fake" "$rounds" 6 8 2>&1 | grep -v '^kvstore: serving'
# The benchmark runs (its speed is not judged here), and refuses bad input.
if [ -n "$kvbench" ]; then
	out=$("$kvbench" --dir "$dir" --clients 1,4 --seconds 1 --rounds 1)
	echo "$out"
	[ "$(grep -c 'example store (pmwal)' <<<"$out")" = 2 ] || fail "kvbench rows: $out"
	for bad in "--clients 0" "--clients 1,x" "--seconds -1" "--target tape" "--rounds"; do
		# shellcheck disable=SC2086
		rc=0
		"$kvbench" --dir "$dir" $bad >/dev/null 2>&1 || rc=$?
		[ $rc = 2 ] || fail "kvbench: $bad: exit $rc, not 2"
	done
	"$kvbench" --dir "$dir/missing" --seconds 1 >/dev/null 2>&1 && fail "kvbench: missing --dir"
	ls "$dir" | grep -q kvbench && fail "kvbench left its directory behind"
fi
echo "kvstore_example: passed"
