#!/usr/bin/env bash
# The example store (examples/kvstore.c) where its resources run out or are
# attacked: a checkpoint's filesystem full (the write that triggered the
# checkpoint is durable and answered "ok"; a log that fills while
# checkpoints fail refuses writes by name), idle connections past every cap
# (a new client is still served), and files or links another user plants in
# the store's directory or beside its socket (never written through).
#   kvstore_limits.sh KVSTORE PMWAL_CLI
set -euo pipefail
kv=$1 cli=$2
clients=$(dirname "$0")/kv_clients.py
dir=$(mktemp -d /var/tmp/pmwal-kvlim-XXXXXX)
shm=$(mktemp -d /dev/shm/pmwal-kvlim-XXXXXX)
user=pmwal-t-servers-$$
made_user=0 mounted=0 spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	[ $mounted = 1 ] && umount "$dir/small"
	[ $made_user = 1 ] && userdel "$user" 2>/dev/null
	rm -rf "$dir" "$shm"
}
trap cleanup EXIT
export PMWAL_STATUS_DIR=$dir
fail() { echo "FAIL: $*"; exit 1; }
serve() { # serve DIR [ARGS...]: a store on DIR/s in the background; $spid
	"$kv" "$1" --socket "$1/s" "${@:2}" 2>>"$1.err" &
	spid=$!
	for _ in $(seq 200); do [ -S "$1/s" ] && return; sleep 0.05; done
	fail "no socket in $1: $(cat "$1.err")"
}
stop() { kill -TERM "$spid"; wait "$spid" || fail "store exit $?"; spid=; }

# 1. The checkpoint's filesystem full: a 256 KiB tmpfs holds DIR (the
# snapshot), the log is elsewhere.
mkdir -m 0700 "$dir/small"
if mount -t tmpfs -o size=256k,mode=0700 tmpfs "$dir/small" 2>/dev/null; then
	mounted=1
	"$cli" create "pmem:$shm/ck.log" --size 1m >/dev/null
	printf 'put a 1\n' | "$kv" "$dir/small" --target "pmem:$shm/ck.log" >/dev/null
	dd if=/dev/zero of="$dir/small/fill" bs=4k 2>/dev/null || true
	out=$(printf 'put b 2\nput c 3\nget c\nstats\n' |
		"$kv" "$dir/small" --target "pmem:$shm/ck.log" --checkpoint-every 3 2>"$dir/ck.err")
	# LSN 3 (put c) triggers the checkpoint, which fails for want of space.
	[ "$(sed -n 2p <<<"$out")" = "ok 3" ] || fail "the put whose checkpoint failed: $out"
	grep -q '^value 3$' <<<"$out" || fail "get after the failed checkpoint: $out"
	grep -q '^stats applied 3 checkpoints 0 checkpoint_failures 1 failing 1 .*No space left' \
		<<<"$out" || fail "stats: $out"
	grep -q 'checkpoint at LSN 3 failed.*No space left on device' "$dir/ck.err" ||
		fail "stderr: $(cat "$dir/ck.err")"
	out=$(printf 'get c\n' | "$kv" "$dir/small" --target "pmem:$shm/ck.log")
	[ "$out" = "value 3" ] || fail "after a restart: $out"
	# Checkpoints keep failing: the log fills, and then a write is refused
	# by name, and was not made.
	out=$(python3 -c "
for i in range(40): print('put k%d %s' % (i, 'v' * 60000))
print('get k39')" | "$kv" "$dir/small" --target "pmem:$shm/ck.log" --checkpoint-every 1 2>/dev/null)
	grep -q '^error: log full: checkpoint failing: .*No space left on device' <<<"$out" ||
		fail "a full log while checkpoints fail: $(cut -c1-200 <<<"$out")"
	n=$(grep -c '^ok ' <<<"$out")
	last=$((n - 1))
	[ "$n" -gt 3 ] || fail "only $n puts before the log filled"
	out=$(printf 'get k%d\nget k%d\n' $last $((n)) | "$kv" "$dir/small" --target "pmem:$shm/ck.log")
	if [ "$(sed -n 1p <<<"$out" | cut -c1-12)" != "value vvvvvv" ] ||
		[ "$(sed -n 2p <<<"$out")" != missing ]; then
		fail "what the full log holds: $(cut -c1-100 <<<"$out")"
	fi
	umount "$dir/small"
	mounted=0
	echo "checkpoint on a full filesystem: the write answered ok, kept, counted"
else
	echo "SKIP: a full checkpoint filesystem (mount -t tmpfs refused: not root?)"
fi

# 2. Idle clients: 1100 idle connections (more than the default 1024) do
# not lock a new client out, nor do 40 past a per-uid cap of 8; a client
# silent for --idle-timeout is told so and closed.
mkdir -m 0700 "$dir/idle"
serve "$dir/idle"
timeout 60 python3 "$clients" idle "$dir/idle/s" 1100 || fail "1100 idle connections"
stop
serve "$dir/idle" --max-clients 16 --max-clients-per-uid 8 --idle-timeout 1
timeout 30 python3 "$clients" idle "$dir/idle/s" 40 || fail "40 idle past a cap of 8"
timeout 30 python3 "$clients" timeout "$dir/idle/s" 1 || fail "the idle timeout"
stop
for bad in "--max-clients 0" "--max-clients x" "--idle-timeout -1" "--socket-mode 0400" \
	"--socket-mode 9" "--max-clients 4 --max-clients-per-uid 5"; do
	# shellcheck disable=SC2086
	"$kv" "$dir/idle" $bad </dev/null 2>/dev/null && fail "accepted: $bad"
done
help=$("$kv" --help 2>&1) && fail "--help ran a store"
grep -q -- '--idle-timeout SECONDS' <<<"$help" || fail "--help does not name --idle-timeout"

# 4. The socket and the store's files where other users can write.
mkdir -m 0777 "$dir/open"
chmod 0777 "$dir/open"
err=$("$kv" "$dir/open" </dev/null 2>&1) && fail "a world-writable DIR was used"
grep -q 'writable by other users' <<<"$err" || fail "world-writable DIR: $err"
mkdir -m 0700 "$dir/own"
err=$("$kv" "$dir/own" --socket "$dir/open/s" 2>&1) && fail "a socket in a world-writable dir"
grep -q 'writable by other users' <<<"$err" || fail "socket dir: $err"
serve "$dir/own"
[ "$(stat -c %a "$dir/own/s")" = 600 ] || fail "socket mode $(stat -c %a "$dir/own/s")"
stop
if ! useradd -M -r -s /usr/sbin/nologin "$user" 2>/dev/null; then
	echo "SKIP: files planted by another user (useradd refused: not root?)"
	echo "kvstore_limits: passed"
	exit 0
fi
made_user=1
chmod 0711 "$dir" # the other user reaches the directories below
as_user() { setpriv --reuid="$user" --regid="$user" --clear-groups "$@"; }
echo "root's precious file" >"$dir/precious"
chmod 0644 "$dir/precious"
sum=$(sha256sum <"$dir/precious")
mkdir -m 1777 "$dir/sticky"
chmod 1777 "$dir/sticky"
printf 'put a 1\n' | "$kv" "$dir/sticky" >/dev/null
as_user ln -s "$dir/precious" "$dir/sticky/snapshot.tmp"
out=$(printf 'put b 2\ncheckpoint\nget b\n' | "$kv" "$dir/sticky" 2>&1)
grep -q 'snapshot.tmp: exists and is a symbolic link: not writing through it' <<<"$out" ||
	fail "a planted snapshot.tmp link: $out"
grep -q '^value 2$' <<<"$out" || fail "the store after the planted link: $out"
[ "$(sha256sum <"$dir/precious")" = "$sum" ] || fail "the root file was written through a link"
rm "$dir/sticky/snapshot.tmp"
mkdir -m 1777 "$dir/sticky3"
chmod 1777 "$dir/sticky3"
as_user ln -s "$dir/precious" "$dir/sticky3/lock"
err=$("$kv" "$dir/sticky3" </dev/null 2>&1) && fail "a planted lock link was used"
grep -q 'lock: a symbolic link' <<<"$err" || fail "planted lock: $err"
as_user sh -c "echo fake >'$dir/sticky3/snapshot'"
rm -f "$dir/sticky3/lock"
err=$("$kv" "$dir/sticky3" </dev/null 2>&1) && fail "another user's snapshot was loaded"
grep -q "snapshot: owned by uid" <<<"$err" || fail "planted snapshot: $err"
[ "$(sha256sum <"$dir/precious")" = "$sum" ] || fail "the root file changed"
# A socket path another user planted first: a link, or a socket of theirs.
as_user ln -s "$dir/precious" "$dir/sticky/s"
err=$("$kv" "$dir/own" --socket "$dir/sticky/s" 2>&1) && fail "a planted socket link was used"
grep -q 'not a socket: not replacing it' <<<"$err" || fail "planted socket link: $err"
rm "$dir/sticky/s"
as_user /usr/bin/python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('$dir/sticky/s')"
err=$("$kv" "$dir/own" --socket "$dir/sticky/s" 2>&1) && fail "another user's socket was replaced"
grep -q "another user's socket" <<<"$err" || fail "planted socket: $err"
[ "$(sha256sum <"$dir/precious")" = "$sum" ] || fail "the root file changed"
echo "kvstore_limits: passed"
