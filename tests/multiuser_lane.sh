#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The multi-user lane: pmwal's programs, run as root, beside a second local
# user who does what a hostile one would in every shared place pmwal uses:
# status pages (PMWAL_STATUS_DIR, /dev/shm by default), bench's scratch
# targets (PMWAL_BENCH_SHM), /run/lock, the output directories of report,
# bench and crashtest, and the example servers' sockets, ports and
# directories. That user plants files, symlinks (to a root-only canary, and
# to root's directories on the way to what root writes),
# FIFOs and directories under the names pmwal will use, holds read locks on
# what it can read, fills a small filesystem and holds many idle
# connections.
#
# Every attempt must end, within a bound, in a clear error or a safe result:
# never a hang, a write through a link (the canary is checksummed after each
# check) or a feature silently lost (a writer must still be heard by its
# followers while it runs).
#
#   multiuser_lane.sh [PMWAL_CLI [EXAMPLES_DIR]]   (default build/release)
#
# Prints "ok NAME" or "FAIL NAME: what happened" per check, then
# "N passed, M failed"; exits 1 if any failed. As a user who cannot create
# users: "SKIP: reason", exit 0.
set -u

here=$(cd "$(dirname "$0")" && pwd)
PMWAL=$(readlink -f "${1:-$here/../build/release/cli/pmwal}")
EX=$(readlink -f "${2:-$(dirname "$PMWAL")/../examples}")
HELPER=$here/support/lanes_helper.py
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: not root: cannot create a second user"
	exit 0
fi
for t in useradd userdel setpriv timeout "$PY"; do
	command -v "$t" >/dev/null || { echo "SKIP: $t missing"; exit 0; }
done
U=pmwal-t-lanes-$$
if ! useradd -M -r -s /usr/sbin/nologin "$U" 2>/dev/null; then
	echo "SKIP: useradd $U failed (no user database to write?)"
	exit 0
fi

# Everything of the lane: T (root's, 0755) holds logs and outputs; PUB is a
# sticky world-writable directory standing in for /tmp and /dev/shm (a
# private one, so that other tests running at once are not disturbed; the
# code paths are those of /dev/shm); CAN is root's 0700 canary directory.
T=$(mktemp -d /var/tmp/pmwal-mu.XXXXXX)
PUB=$(mktemp -d /dev/shm/pmwal-mu.XXXXXX)
CAN=$(mktemp -d /var/tmp/pmwal-mu-canary.XXXXXX)
chmod 0755 "$T"
chmod 1777 "$PUB"
chmod 0700 "$CAN"
CANARY=$CAN/canary
MNT=""
BGPIDS=()
cleanup() {
	for p in "${BGPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$MNT" ] && umount -l "$MNT" 2>/dev/null
	rm -rf "$T" "$PUB" "$CAN"
	userdel "$U" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM

canary_reset() {
	printf 'canary of the multi-user lane: pmwal must never write here\n' >"$CANARY"
	chmod 0600 "$CANARY"
	CSUM=$(sha256sum <"$CANARY")
}
canary_reset

asu() { setpriv --reuid="$U" --regid="$U" --clear-groups "$@"; }
# The helper as the other user (it reads the script from root's stdin).
uhelp() { asu timeout 30 "$PY" - "$@" <"$HELPER"; }
# A fresh sticky, world-writable status directory (a /dev/shm of its own).
newpub() {
	local d
	d=$(mktemp -d "$PUB/$1.XXXXXX")
	chmod 1777 "$d"
	echo "$d"
}
# wait_for FILE PATTERN SECONDS: 0 once FILE holds PATTERN.
wait_for() {
	local i n=$(($3 * 20))
	for ((i = 0; i < n; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}
# bgu OUT ARGS...: the helper as the other user, in the background, its
# output to OUT; its pid (timeout's, which passes a TERM on) in BGPID.
bgu() {
	local out=$1
	shift
	setpriv --reuid="$U" --regid="$U" --clear-groups timeout 30 "$PY" - "$@" \
		<"$HELPER" >"$out" 2>&1 &
	BGPID=$!
	BGPIDS+=($BGPID)
}

PASS=0
FAILN=0
REASONS=""
why() { REASONS="${REASONS:+$REASONS; }$*"; }
check() {
	local name=$1
	REASONS=""
	"c_$name" 2>>"$T/shell.err" # the shell's "Killed", "Bus error"
	if [ "$(sha256sum <"$CANARY")" != "$CSUM" ]; then
		why "the canary was written through a planted link (now: $(head -c 80 "$CANARY" | tr -c '[:print:]' '.'))"
		canary_reset
	fi
	if [ -z "$REASONS" ]; then
		echo "ok $name"
		PASS=$((PASS + 1))
	else
		echo "FAIL $name: $REASONS"
		FAILN=$((FAILN + 1))
	fi
}

# writer_follow DIR LOG: a writer (ship_primary, 20 records at 15/s) with a
# follower (pmwal tail --follow, root) beside it. Fails (why) unless the
# follower prints a record while the writer still runs and the writer ends
# 0 with all 20 records durable. $1: the status directory.
writer_follow() {
	local st=$1 log=$2 tag=$3 page=${4:-} wpid fpid alive before
	before=$(timeout 10 "$PMWAL" dump "$log" 2>/dev/null | grep -c 'primary')
	env PMWAL_STATUS_DIR="$st" timeout 8 "$EX/ship_primary" "$log" --count 20 --rate 20 \
		>"$T/$tag.w.out" 2>"$T/$tag.w.err" &
	wpid=$!
	env PMWAL_STATUS_DIR="$st" timeout 6 "$PMWAL" tail "$log" --follow --from 1 \
		>"$T/$tag.f.out" 2>"$T/$tag.f.err" &
	fpid=$!
	if wait_for "$T/$tag.f.out" "primary 3\$" 5; then
		kill -0 "$wpid" 2>/dev/null && alive=1 || alive=0
		[ $alive = 1 ] || why "the follower heard of records only after the writer ended"
		# Its page (where one was planted): the writer's own, or it
		# said why it has none.
		if [ -n "$page" ] && [ $alive = 1 ] &&
			[ "$(stat -c '%u %F' "$st/$page" 2>/dev/null)" != "0 regular file" ] &&
			! grep -qi 'status' "$T/$tag.w.err"; then
			why "the writer ran without its status page ($st/$page is $(stat -c '%U %F' "$st/$page" 2>&1)) and said nothing"
		fi
	else
		why "no record reached the follower in 5 s while the writer ran ($(head -c 200 "$T/$tag.f.err"))"
	fi
	wait "$wpid"
	local rc=$?
	kill "$fpid" 2>/dev/null
	wait "$fpid" 2>/dev/null
	[ $rc = 0 ] || why "the writer exited $rc ($(head -c 300 "$T/$tag.w.err"))"
	[ $rc = 124 ] && why "the writer hung"
	local n
	n=$(timeout 10 "$PMWAL" dump "$log" 2>/dev/null | grep -c 'primary')
	[ "$((n - before))" = 20 ] || why "the log holds $((n - before)) of the writer's 20 records"
}

# page_name DIR LOG: runs a writer briefly and prints the name of the status
# page it made in DIR (empty if none).
page_name() {
	local st=$1 log=$2 i p=""
	env PMWAL_STATUS_DIR="$st" timeout 10 "$EX/ship_primary" "$log" --count 6 --rate 6 \
		>/dev/null 2>&1 &
	local w=$!
	for ((i = 0; i < 40; i++)); do
		p=$(ls "$st" 2>/dev/null | grep '^pmwal-.*\.status$' | head -1)
		[ -n "$p" ] && break
		sleep 0.05
	done
	wait $w
	echo "$p"
}

newlog() { # newlog NAME: a fresh 1 MiB log in T, readable by all
	rm -f "$T/$1"
	timeout 30 "$PMWAL" create "$T/$1" --size 1M >/dev/null 2>"$T/$1.create.err" ||
		why "pmwal create $T/$1 failed: $(cat "$T/$1.create.err")"
	chmod 0644 "$T/$1"
}

# ---- status pages ------------------------------------------------------------

# The baseline: no attacker; a follower hears the writer while it runs.
c_page_baseline() {
	local st
	st=$(newpub base)
	newlog base.log
	writer_follow "$st" "$T/base.log" base
}

# plant_page KIND: the other user puts KIND at the page's name before the
# writer starts; the writer must still work with its followers (or refuse
# clearly, which writer_follow reports as a failure to run: a store that
# any user can stop is a finding too), and never write through a link.
plant_page() {
	local kind=$1 st page
	st=$(newpub "p$kind")
	newlog "p$kind.log"
	page=$(page_name "$st" "$T/p$kind.log")
	if [ -z "$page" ]; then
		why "no status page appeared in $st (nothing to plant against)"
		return
	fi
	case $kind in
	symlink) asu ln -s "$CANARY" "$st/$page" ;;
	fifo) asu mkfifo -m 0666 "$st/$page" ;;
	dir) asu mkdir -m 0777 "$st/$page" ;;
	file) asu sh -c "head -c 4096 /dev/zero >'$st/$page'; chmod 0666 '$st/$page'" ;;
	esac || { why "could not plant a $kind as $U"; return; }
	writer_follow "$st" "$T/p$kind.log" "p$kind" "$page"
}
c_page_planted_symlink() { plant_page symlink; }
c_page_planted_fifo() { plant_page fifo; }
c_page_planted_dir() { plant_page dir; }
c_page_planted_file() { plant_page file; }

# The other user holds read locks on the page of a writer that ran (bytes 0
# and 1: what every user of a page locks); the next writer and its follower
# must not hang on them.
c_page_read_lock() {
	local st page
	st=$(newpub lock)
	newlog lock.log
	env PMWAL_STATUS_DIR="$st" timeout 15 "$EX/ship_primary" "$T/lock.log" --count 12 \
		--rate 12 >/dev/null 2>&1 &
	local w=$! i
	for ((i = 0; i < 40; i++)); do
		page=$(ls "$st" 2>/dev/null | grep '^pmwal-.*\.status$' | head -1)
		[ -n "$page" ] && break
		sleep 0.05
	done
	if [ -z "$page" ]; then
		why "no status page appeared"
		wait $w
		return
	fi
	bgu "$T/lock.h.out" lock "$st/$page" 2 20
	local h=$BGPID
	wait_for "$T/lock.h.out" locked 5 || why "the other user could not lock the page: $(cat "$T/lock.h.out")"
	wait $w
	writer_follow "$st" "$T/lock.log" lock
	kill "$h" 2>/dev/null
}

# A full status filesystem (the other user filled /dev/shm): the writer
# must not die of SIGBUS on its page nor run silently without it.
c_page_full_fs() {
	MNT=$(mktemp -d "$T/mnt.XXXXXX")
	if ! mount -t tmpfs -o size=64k,mode=1777 tmpfs "$MNT" 2>/dev/null; then
		echo "  (page_full_fs: cannot mount a small tmpfs; checked nothing)"
		MNT=""
		return
	fi
	newlog full.log
	uhelp fill "$MNT" >"$T/full.h.out" 2>&1
	# A writer that cannot have its page refuses to start, saying the
	# directory is full (never a SIGBUS), or runs with a page it could
	# allocate and is heard by its followers.
	local rc
	env PMWAL_STATUS_DIR="$MNT" timeout 8 "$EX/ship_primary" "$T/full.log" --count 3 \
		--rate 100 >"$T/full.w.out" 2>"$T/full.w.err"
	rc=$?
	if [ $rc = 124 ]; then
		why "the writer hung"
	elif [ $rc -gt 128 ]; then
		why "the writer died of signal $((rc - 128))"
	elif [ $rc != 0 ]; then
		grep -q 'status page' "$T/full.w.err" && grep -q 'No space left' "$T/full.w.err" ||
			why "refused without saying its status page's directory is full ($(head -c 300 "$T/full.w.err"))"
	else
		writer_follow "$MNT" "$T/full.log" full
		grep -q 'signal\|Bus' "$T/full.w.err" && why "the writer died of a signal"
	fi
	umount -l "$MNT"
	MNT=""
}

# The other user may read the log (0644) and holds a read lock on its first
# byte: a writer must open it, or refuse saying what holds it, in bounded
# time (never hang, never blame a writer that is not there).
c_log_read_lock() {
	newlog rl.log
	bgu "$T/rl.h.out" lock "$T/rl.log" 1 20
	local h=$BGPID
	wait_for "$T/rl.h.out" locked 5 || why "could not lock the log as $U: $(cat "$T/rl.h.out")"
	local rc
	printf 'a\nb\n' | timeout 10 "$PMWAL" append "$T/rl.log" >"$T/rl.out" 2>"$T/rl.err"
	rc=$?
	kill "$h" 2>/dev/null
	[ $rc = 124 ] && why "pmwal append hung behind another user's read lock"
	# Opening is right; refusing is safe only with the truth: no process
	# has the log open for writing, a reader holds a lock on it.
	if [ $rc != 0 ] && [ $rc != 124 ]; then
		grep -qi 'open for writing' "$T/rl.err" &&
			why "a reader's lock was reported as a writer (exit $rc): $(head -c 300 "$T/rl.err")"
		[ -s "$T/rl.err" ] || why "refused without a message"
	fi
}

# ---- /run/lock --------------------------------------------------------------

# A PMR's lock file (wal/lock.c names it after the PCI address) planted as a
# symlink to the canary; no such PMR here: the open must fail clearly and
# write nothing through the link.
c_pmr_lockfile_symlink() {
	local dir="" d
	for d in /run/lock /run /tmp; do [ -d $d ] && { dir=$d; break; }; done
	local f="$dir/pmwal-pmr-0000:7f:1f.7.lock"
	rm -f "$f"
	asu ln -s "$CANARY" "$f" 2>/dev/null || { echo "  (pmr_lockfile_symlink: $dir not writable by $U)"; return; }
	printf 'a\n' | timeout 10 "$PMWAL" append pmr:0000:7f:1f.7 >"$T/pmr.out" 2>"$T/pmr.err"
	local rc=$?
	[ $rc = 124 ] && why "pmwal append pmr: hung"
	[ $rc = 0 ] && why "pmwal append on a PMR that does not exist succeeded"
	[ -s "$T/pmr.err" ] || why "no error message"
	rm -f "$f"
}

# ---- output directories: report, bench, crashtest ---------------------------

# A user-owned directory standing where root's output will go, its files
# symlinks to the canary.
plant_outdir() {
	local d=$1
	shift
	asu mkdir -m 0777 "$d" || return 1
	local n
	for n in "$@"; do asu ln -s "$CANARY" "$d/$n" || return 1; done
}

BENCH_JSON=""
bench_json() { # a result to report on, made once
	[ -n "$BENCH_JSON" ] && return 0
	local s
	s=$(newpub bench)
	(cd "$T" && env PMWAL_BENCH_SHM="$s" PMWAL_STATUS_DIR="$s" timeout 30 "$PMWAL" bench log pmem \
		--quick --runtime 100ms --ramp 0 --no-primitives --json "$T/bench.json" \
		>/dev/null 2>"$T/bench.err") || { why "bench for a result failed: $(tail -c 300 "$T/bench.err")"; return 1; }
	BENCH_JSON=$T/bench.json
}

# run_bench TAG ARGS...: a short bench run as root, cwd T.
run_bench() {
	local tag=$1 s
	shift
	s=$(newpub "b$tag")
	(cd "$T" && env PMWAL_BENCH_SHM="$s" PMWAL_STATUS_DIR="$s" timeout 30 "$PMWAL" bench log pmem \
		--quick --runtime 100ms --ramp 0 --no-primitives "$@" >"$T/b$tag.out" 2>"$T/b$tag.err")
}

c_report_o_symlinks() {
	bench_json || return
	local d=$PUB/report-$$
	plant_outdir "$d" index.html result.json jobs.csv series.csv || { why "could not plant"; return; }
	timeout 20 "$PMWAL" report -o "$d" "$BENCH_JSON" >"$T/rep.out" 2>"$T/rep.err"
	local rc=$?
	[ $rc = 124 ] && why "pmwal report hung"
	[ $rc = 0 ] && [ -L "$d/index.html" ] && why "pmwal report -o wrote index.html through the other user's symlink"
}

c_bench_json_symlink() {
	local f=$PUB/bench-$$.json
	asu ln -s "$CANARY" "$f" || { why "could not plant"; return; }
	run_bench json --json "$f"
	local rc=$?
	[ $rc = 124 ] && why "pmwal bench hung"
	[ $rc = 0 ] && [ -L "$f" ] && why "pmwal bench --json went through the other user's symlink"
}

c_bench_csv_symlinks() {
	local d=$PUB/csv-$$
	plant_outdir "$d" jobs.csv series.csv || { why "could not plant"; return; }
	run_bench csv --csv "$d"
	local rc=$?
	[ $rc = 124 ] && why "pmwal bench hung"
}

c_bench_o_symlinks() {
	local d=$PUB/out-$$
	plant_outdir "$d" index.html result.json jobs.csv series.csv || { why "could not plant"; return; }
	run_bench o -o "$d"
	local rc=$?
	[ $rc = 124 ] && why "pmwal bench hung"
}

# bench's default pmem target (PMWAL_BENCH_SHM/pmwal-bench.wal) and its data
# file planted as symlinks, a FIFO and a directory: bench must refuse them
# (they are not its scratch files) in bounded time and write nothing.
c_bench_default_targets() {
	local s kind f
	for kind in symlink fifo dir; do
		s=$(newpub "bt$kind")
		for f in pmwal-bench.wal pmwal-bench.dat; do
			case $kind in
			symlink) asu ln -s "$CANARY" "$s/$f" ;;
			fifo) asu mkfifo -m 0666 "$s/$f" ;;
			dir) asu mkdir -m 0777 "$s/$f" ;;
			esac
		done
		(cd "$T" && env PMWAL_BENCH_SHM="$s" PMWAL_STATUS_DIR="$s" timeout 30 "$PMWAL" bench log \
			pmem --quick --runtime 100ms --ramp 0 --no-primitives >"$T/bt.out" 2>"$T/bt.err")
		local rc=$?
		[ $rc = 124 ] && why "bench hung on a planted $kind"
		[ $rc = 0 ] && why "bench ran on the other user's $kind (exit 0)"
		[ $rc != 0 ] && [ $rc != 124 ] && ! [ -s "$T/bt.err" ] && ! grep -q "error" "$T/bt.out" &&
			why "bench refused a planted $kind without a message"
		case $kind in
		symlink) [ -L "$s/pmwal-bench.wal" ] || why "the other user's symlink was removed or replaced" ;;
		esac
	done
}

# crashtest's kill lane writes DIR/pmwal-crashtest-PID-file.log and
# /dev/shm/pmwal-crashtest-PID-*.log: the other user plants symlinks at the
# names of the pid to come, and keeps planting while it runs.
c_crashtest_dir_race() {
	local d=$PUB/ct-$$
	mkdir -m 1777 "$d"
	local pidf=$T/ct.pid
	: >"$pidf"
	chmod 0644 "$pidf"
	setpriv --reuid="$U" --regid="$U" --clear-groups timeout 15 sh -c '
		while [ ! -s "$1" ]; do sleep 0.01; done
		p=$(cat "$1")
		end=$(($(date +%s) + 8))
		while [ $(date +%s) -lt $end ]; do
			ln -s "$2" "$3/pmwal-crashtest-$p-file.log" 2>/dev/null
			ln -s "$2" "/dev/shm/pmwal-crashtest-$p-pmem.log" 2>/dev/null
		done' sh "$pidf" "$CANARY" "$d" >/dev/null 2>&1 &
	local a=$!
	timeout 30 bash -c 'echo $$ >"$1"; exec "$2" crashtest --mode kill --medium nvme --seed 1 --count 5 --dir "$3"' \
		sh "$pidf" "$PMWAL" "$d" >"$T/ct.out" 2>"$T/ct.err"
	local rc=$?
	kill "$a" 2>/dev/null
	wait "$a" 2>/dev/null
	[ $rc = 124 ] && why "crashtest hung"
	rm -f "/dev/shm/pmwal-crashtest-$(cat "$pidf")-pmem.log"
}

# ---- the example servers ----------------------------------------------------

# kvstore --socket at a name the other user took first (a symlink to the
# canary, a FIFO, a socket it serves): refused clearly, nothing written.
c_kvstore_socket_planted() {
	local kind sock d
	for kind in symlink fifo live; do
		d=$T/kvs-$kind
		mkdir -p "$d"
		sock=$PUB/kv-$kind-$$.sock
		case $kind in
		symlink) asu ln -s "$CANARY" "$sock" ;;
		fifo) asu mkfifo -m 0666 "$sock" ;;
		live)
			setpriv --reuid="$U" --regid="$U" --clear-groups timeout 20 "$PY" -c 'import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); print("bound",flush=True); time.sleep(15)' \
				"$sock" >"$T/kvlive.out" 2>&1 &
			BGPIDS+=($!)
			wait_for "$T/kvlive.out" bound 5
			;;
		esac
		timeout 10 "$EX/kvstore" "$d" --socket "$sock" >"$T/kvs.out" 2>"$T/kvs.err"
		local rc=$?
		[ $rc = 124 ] && why "kvstore hung on a planted $kind socket name (or served on it)"
		[ $rc = 0 ] && why "kvstore exited 0 on a planted $kind"
		[ $rc != 0 ] && [ $rc != 124 ] && ! [ -s "$T/kvs.err" ] && why "no message for a planted $kind"
	done
}

# kvstore DIR in a sticky shared directory (as /tmp): the other user plants
# snapshot.tmp, snapshot and lock as symlinks to the canary before the store
# starts; a put and a checkpoint must not write through them.
c_kvstore_dir_planted() {
	local d=$T/kvdir st n
	st=$(newpub kvdir)
	mkdir -m 1777 "$d" # on a disk (the log wants O_DIRECT), sticky as /tmp
	for n in snapshot.tmp lock; do asu ln -s "$CANARY" "$d/$n"; done
	printf 'put a 1\ncheckpoint\nget a\n' |
		env PMWAL_STATUS_DIR="$st" timeout 10 "$EX/kvstore" "$d" >"$T/kvd.out" 2>"$T/kvd.err"
	local rc=$?
	[ $rc = 124 ] && why "kvstore hung"
	# refusing the planted names is safe; running must be on its own files
	[ $rc != 0 ] && [ $rc != 124 ] && ! [ -s "$T/kvd.err" ] && why "kvstore exited $rc without a message"
}

# kvstore DIR in a sticky shared directory, the other user's directory at
# the name of its snapshot's temporary file: checkpoints fail. An answer
# must still say what happened to the write: a put answered "error" is not
# in the store after a restart, a put answered "ok" is.
c_kvstore_checkpoint_blocked() {
	local d=$T/kvck st
	st=$(newpub kvck)
	mkdir -m 1777 "$d"
	asu mkdir "$d/snapshot.tmp" || { why "could not plant"; return; }
	printf 'put a 1\nput b 2\nput c 3\n' |
		env PMWAL_STATUS_DIR="$st" timeout 10 "$EX/kvstore" "$d" --checkpoint-every 1 \
		>"$T/kvc1.out" 2>"$T/kvc1.err"
	[ $? = 124 ] && why "kvstore hung"
	printf 'get a\nget b\nget c\n' |
		env PMWAL_STATUS_DIR="$st" timeout 10 "$EX/kvstore" "$d" >"$T/kvc2.out" 2>"$T/kvc2.err"
	local i=0 k ans got
	for k in a b c; do
		i=$((i + 1))
		ans=$(sed -n "${i}p" "$T/kvc1.out")
		got=$(sed -n "${i}p" "$T/kvc2.out")
		case $ans in
		ok*) [ "$got" = "value $i" ] || why "put $k was answered '$ans' but after a restart: '$got'" ;;
		error*) [ "$got" = missing ] || why "put $k was answered '$ans' but is in the store after a restart ('$got')" ;;
		*) why "put $k got no answer ($(head -c 200 "$T/kvc1.err"))" ;;
		esac
	done
}

# Many idle clients (of root: the socket is root's 0755) must not lock other
# clients out of the store.
c_kvstore_idle_clients() {
	local d=$T/kvidle sock=$PUB/kvidle-$$.sock
	mkdir -p "$d"
	env PMWAL_STATUS_DIR="$d" timeout 30 "$EX/kvstore" "$d" --socket "$sock" >"$T/kvi.out" 2>"$T/kvi.err" &
	local k=$!
	BGPIDS+=($k)
	local i
	for ((i = 0; i < 100; i++)); do
		[ -S "$sock" ] && break
		sleep 0.05
	done
	[ -S "$sock" ] || { why "kvstore did not serve $sock: $(cat "$T/kvi.err")"; return; }
	chmod 0666 "$sock"
	bgu "$T/kvi.h.out" flood "unix:$sock" 1100 20
	local fl=$BGPID
	wait_for "$T/kvi.h.out" flooding 15 || why "the flood did not start"
	timeout 8 "$PY" "$HELPER" ask "unix:$sock" 5 "put k v" >"$T/kvi.ask" 2>&1
	grep -q '^ok' "$T/kvi.ask" || why "with 1100 idle clients of $U, a put got: $(head -c 200 "$T/kvi.ask") ($(cat "$T/kvi.h.out"))"
	kill "$fl" "$k" 2>/dev/null
	wait "$k" 2>/dev/null
}

RPORT=$((21000 + $$ % 9000))
# raftkv's ports taken first by the other user: the node must exit with a
# clear error, not run without its client port (nor hang).
c_raftkv_port_taken() {
	[ -x "$EX/raftkv" ] || { echo "  (raftkv_port_taken: no raftkv built; checked nothing)"; return; }
	local d=$T/rk-port p=$((RPORT + 1))
	mkdir -p "$d"
	bgu "$T/rkp.h.out" bind "127.0.0.1:$((p + 1000))" 15
	local b=$BGPID
	wait_for "$T/rkp.h.out" bound 5 || { why "could not bind as $U: $(cat "$T/rkp.h.out")"; return; }
	env PMWAL_STATUS_DIR="$d" timeout 8 "$EX/raftkv" --id 1 --peers "127.0.0.1:$p" --dir "$d" \
		>"$T/rkp.out" 2>"$T/rkp.err"
	local rc=$?
	[ $rc = 124 ] && why "raftkv ran on without its client port (or hung) while $U held it"
	[ $rc = 0 ] && why "raftkv exited 0"
	[ -s "$T/rkp.err" ] || [ -s "$T/rkp.out" ] || why "no message"
	kill "$b" 2>/dev/null
}

# raftkv --dir in a sticky shared directory: the other user plants the
# names its storage writes (meta.tmp at every term or vote, snapshot.tmp)
# as symlinks to the canary; the node must not write through them.
c_raftkv_dir_planted() {
	[ -x "$EX/raftkv" ] || { echo "  (raftkv_dir_planted: no raftkv built; checked nothing)"; return; }
	local d=$T/rk-dir p=$((RPORT + 5)) st n
	st=$(newpub rkdir)
	mkdir -m 1777 "$d"
	for n in meta.tmp snapshot.tmp; do asu ln -s "$CANARY" "$d/$n"; done
	env PMWAL_STATUS_DIR="$st" timeout 20 "$EX/raftkv" --id 1 --peers "127.0.0.1:$p" --dir "$d" \
		>"$T/rkd.out" 2>"$T/rkd.err" &
	local k=$!
	BGPIDS+=($k)
	timeout 8 "$PY" "$HELPER" ask "tcp:127.0.0.1:$((p + 1000))" 6 "put a 1" >"$T/rkd.ask" 2>&1
	kill "$k" 2>/dev/null
	wait "$k" 2>/dev/null
	# a refusal of the planted names is safe; a put taken must be the node's own
	grep -q '^ok' "$T/rkd.ask" || [ -s "$T/rkd.err" ] || why "neither a put nor a message: $(cat "$T/rkd.ask")"
}

# Many idle TCP clients of the other user must not lock others out.
c_raftkv_idle_clients() {
	[ -x "$EX/raftkv" ] || { echo "  (raftkv_idle_clients: no raftkv built; checked nothing)"; return; }
	local d=$T/rk-idle p=$((RPORT + 3))
	mkdir -p "$d"
	env PMWAL_STATUS_DIR="$d" timeout 40 "$EX/raftkv" --id 1 --peers "127.0.0.1:$p" --dir "$d" \
		>"$T/rki.out" 2>"$T/rki.err" &
	local k=$!
	BGPIDS+=($k)
	timeout 12 "$PY" "$HELPER" ask "tcp:127.0.0.1:$((p + 1000))" 10 "put a 1" >"$T/rki.ask0" 2>&1
	grep -q '^ok' "$T/rki.ask0" || { why "raftkv did not take a put: $(cat "$T/rki.ask0") $(head -c 200 "$T/rki.err")"; kill $k; return; }
	bgu "$T/rki.h.out" flood "tcp:127.0.0.1:$((p + 1000))" 1100 20
	local fl=$BGPID
	wait_for "$T/rki.h.out" flooding 15 || why "the flood did not start"
	timeout 8 "$PY" "$HELPER" ask "tcp:127.0.0.1:$((p + 1000))" 5 "put k v" >"$T/rki.ask" 2>&1
	grep -q '^ok' "$T/rki.ask" || why "with 1100 idle clients of $U, a put got: $(head -c 200 "$T/rki.ask") ($(cat "$T/rki.h.out"))"
	kill "$fl" "$k" 2>/dev/null
	wait "$k" 2>/dev/null
}

# ---- another user's link on the way to what root writes ---------------------

# plant_dirlink NAME: the other user's link PUB/NAME-PID to a fresh directory
# of root's (T/NAME.root, 0755); prints the link. Root writing below the link
# would write in its own directory where the other user sent it.
plant_dirlink() {
	local root=$T/$1.root lnk=$PUB/$1-$$
	mkdir -m 0755 "$root" || return 1
	asu ln -s "$root" "$lnk" || return 1
	echo "$lnk"
}
# refused_by_link TAG RC ERRFILE ROOTDIR: the command was refused in bounded
# time, naming the link and its owner, and left ROOTDIR empty.
refused_by_link() {
	local tag=$1 rc=$2 errf=$3 root=$4
	[ "$rc" = 124 ] && why "$tag: hung (or ran through the link)"
	[ "$rc" = 0 ] && why "$tag: ran (exit 0) through the other user's link"
	grep -q 'symbolic link' "$errf" && grep -q "$U" "$errf" ||
		why "$tag: the refusal names neither the link nor its owner: $(head -c 300 "$errf")"
	[ -z "$(ls -A "$root" 2>/dev/null)" ] ||
		why "$tag: written through the link into root's directory: $(ls -A "$root" | head -3)"
}

# PMWAL_STATUS_DIR below the other user's link to a directory of root's: the
# writer must not make its page there.
c_path_link_status_dir() {
	local lnk
	lnk=$(plant_dirlink stl) || { why "could not plant"; return; }
	mkdir -m 0755 "$T/stl.root/s"
	newlog stl.log
	env PMWAL_STATUS_DIR="$lnk/s" timeout 10 "$EX/ship_primary" "$T/stl.log" --count 3 --rate 100 \
		>"$T/stl.out" 2>"$T/stl.err"
	local rc=$?
	refused_by_link "writer" $rc "$T/stl.err" "$T/stl.root/s"
	grep -q 'PMWAL_STATUS_DIR' "$T/stl.err" || why "the refusal does not say what to set: $(head -c 300 "$T/stl.err")"
}

# pmwal bench io on a file target below the other user's link: a new file is
# not created where it leads, an existing one (--force) not written.
c_path_link_bench_target() {
	local lnk rc
	lnk=$(plant_dirlink btl) || { why "could not plant"; return; }
	(cd "$T" && timeout 20 "$PMWAL" bench io "file:$lnk/x.dat" --rw write --size 1m \
		--runtime 100ms --ramp 0 --direct 0 --quiet >"$T/btl.out" 2>"$T/btl.err")
	rc=$?
	refused_by_link "new target" $rc "$T/btl.err" "$T/btl.root"
	cp "$CANARY" "$T/btl.root/y.dat"
	local sum
	sum=$(sha256sum <"$T/btl.root/y.dat")
	(cd "$T" && timeout 20 "$PMWAL" bench io "$lnk/y.dat" --rw write --size 4k --runtime 100ms \
		--ramp 0 --direct 0 --quiet --force >"$T/btl2.out" 2>"$T/btl2.err")
	rc=$?
	[ $rc = 124 ] && why "--force target: hung"
	[ $rc = 0 ] && why "--force target: ran through the other user's link"
	grep -q 'symbolic link' "$T/btl2.err" || why "--force target: $(head -c 300 "$T/btl2.err")"
	[ "$(sha256sum <"$T/btl.root/y.dat")" = "$sum" ] || why "--force target: root's file was written"
}

# kvstore --socket below the other user's link: no socket is made where it
# leads, and the store does not serve.
c_path_link_kvstore_socket() {
	local lnk rc d=$T/ksl-data
	lnk=$(plant_dirlink ksl) || { why "could not plant"; return; }
	mkdir -p "$d"
	env PMWAL_STATUS_DIR="$d" timeout 10 "$EX/kvstore" "$d" --socket "$lnk/sock" \
		>"$T/ksl.out" 2>"$T/ksl.err" </dev/null
	rc=$?
	refused_by_link "kvstore --socket" $rc "$T/ksl.err" "$T/ksl.root"
}

# kvstore DIR below the other user's link: the store is not opened there.
c_path_link_kvstore_dir() {
	local lnk rc st
	lnk=$(plant_dirlink kdl) || { why "could not plant"; return; }
	st=$(newpub kdl)
	printf 'put a 1\n' | env PMWAL_STATUS_DIR="$st" timeout 10 "$EX/kvstore" "$lnk" \
		>"$T/kdl.out" 2>"$T/kdl.err"
	rc=$?
	refused_by_link "kvstore DIR" $rc "$T/kdl.err" "$T/kdl.root"
}

# raftkv --dir below the other user's link: the node's storage is not made
# where it leads.
c_path_link_raftkv_dir() {
	[ -x "$EX/raftkv" ] || { echo "  (path_link_raftkv_dir: no raftkv built; checked nothing)"; return; }
	local lnk rc st p=$((RPORT + 7))
	lnk=$(plant_dirlink rkl) || { why "could not plant"; return; }
	st=$(newpub rkl)
	env PMWAL_STATUS_DIR="$st" timeout 10 "$EX/raftkv" --id 1 --peers "127.0.0.1:$p" --dir "$lnk" \
		>"$T/rkl.out" 2>"$T/rkl.err"
	rc=$?
	refused_by_link "raftkv --dir" $rc "$T/rkl.err" "$T/rkl.root"
}

# A follower of another user on root's readable log hears the writer.
c_follower_other_user() {
	local st
	st=$(newpub ofol)
	newlog ofol.log
	env PMWAL_STATUS_DIR="$st" timeout 15 "$EX/ship_primary" "$T/ofol.log" --count 20 --rate 20 \
		>"$T/ofol.w.out" 2>"$T/ofol.w.err" &
	local w=$!
	setpriv --reuid="$U" --regid="$U" --clear-groups env PMWAL_STATUS_DIR="$st" timeout 6 "$PMWAL" tail "$T/ofol.log" --follow --from 1 \
		>"$T/ofol.f.out" 2>"$T/ofol.f.err" &
	local f=$!
	if wait_for "$T/ofol.f.out" "primary 3\$" 5; then
		kill -0 $w 2>/dev/null || why "the other user's follower heard only after the writer ended"
	else
		why "the other user's follower heard nothing in 5 s: $(head -c 200 "$T/ofol.f.err")"
	fi
	wait $w || why "the writer failed: $(head -c 200 "$T/ofol.w.err")"
	kill $f 2>/dev/null
	wait $f 2>/dev/null
}

CHECKS=(page_baseline page_planted_symlink page_planted_fifo page_planted_dir
	page_planted_file page_read_lock page_full_fs log_read_lock pmr_lockfile_symlink
	report_o_symlinks bench_json_symlink bench_csv_symlinks bench_o_symlinks
	bench_default_targets crashtest_dir_race kvstore_socket_planted kvstore_dir_planted
	kvstore_checkpoint_blocked kvstore_idle_clients raftkv_port_taken raftkv_dir_planted raftkv_idle_clients follower_other_user
	path_link_status_dir path_link_bench_target path_link_kvstore_socket path_link_kvstore_dir
	path_link_raftkv_dir)
[ -n "${LANE_CHECKS:-}" ] && read -r -a CHECKS <<<"$LANE_CHECKS"
for c in "${CHECKS[@]}"; do
	t0=$SECONDS
	check "$c"
	[ -n "${LANE_TIMES:-}" ] && echo "  ($c: $((SECONDS - t0)) s)"
done
echo "$PASS passed, $FAILN failed"
[ "$FAILN" = 0 ]
