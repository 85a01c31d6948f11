#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The start-twice lane: every CLI command and example that creates or opens
# a log, run once, killed (SIGKILL in the middle of its stream where it has
# one) and started again the same way, with the same command line, as a
# supervisor would. Nothing acknowledged may be lost; the second start must
# neither wipe the log nor refuse it, except where refusing is the
# documented behaviour (pmwal create of an existing log without --force,
# ship_primary --create on an existing log): then a clear refusal and the
# log intact.
#
#   start_twice.sh [PMWAL_CLI [EXAMPLES_DIR]]   (default build/release)
#
# Prints "ok NAME" or "FAIL NAME: what happened" per check, then
# "N passed, M failed"; exits 1 if any failed. LANE_CHECKS="a b" runs some.
set -u

here=$(cd "$(dirname "$0")" && pwd)
PMWAL=$(readlink -f "${1:-$here/../build/release/cli/pmwal}")
EX=$(readlink -f "${2:-$(dirname "$PMWAL")/../examples}")
HELPER=$here/support/lanes_helper.py
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

# Logs on a disk filesystem (O_DIRECT), status pages of their own.
T=$(mktemp -d "${TMPDIR:-/var/tmp}/pmwal-st2.XXXXXX")
SHM=$(mktemp -d /dev/shm/pmwal-st2.XXXXXX)
export PMWAL_STATUS_DIR=$SHM
BGPIDS=()
cleanup() {
	# TERM first: a timeout(1) among them passes it on to its child
	for p in "${BGPIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	sleep 0.2
	for p in "${BGPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T" "$SHM"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

wait_for() { # FILE PATTERN SECONDS
	local i n=$(($3 * 20))
	for ((i = 0; i < n; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

PASS=0
FAILN=0
REASONS=""
why() { REASONS="${REASONS:+$REASONS; }$*"; }
check() {
	REASONS=""
	# the shell's own notes ("Killed", "Bus error") go to a file: the
	# check says what matters
	"c_$1" 2>>"$T/shell.err"
	if [ -z "$REASONS" ]; then
		echo "ok $1"
		PASS=$((PASS + 1))
	else
		echo "FAIL $1: $REASONS"
		FAILN=$((FAILN + 1))
	fi
}

# have_records LOG FILE: every "LSN<TAB>payload" line of FILE is in the log.
have_records() {
	local log=$1 want=$2 lost
	timeout 10 "$PMWAL" dump "$log" >"$want.dump" 2>"$want.dump.err"
	lost=$(grep -cvxF -f "$want.dump" "$want")
	if [ "$lost" != 0 ]; then
		why "$lost of $(wc -l <"$want") acknowledged records lost from $log (first: $(grep -vxF -f "$want.dump" "$want" | head -1 | tr '\t' ' '); dump: $(head -c 200 "$want.dump.err"))"
	fi
}

# ---- the CLI ----------------------------------------------------------------

# pmwal create twice: the second refuses (no --force), the log intact.
c_cli_create_twice() {
	local l=$T/create.log
	timeout 10 "$PMWAL" create "$l" --size 1M >/dev/null 2>"$T/c1.err" || why "create failed: $(cat "$T/c1.err")"
	printf 'one\ntwo\nthree\n' | timeout 10 "$PMWAL" append "$l" >/dev/null 2>&1 || why "append failed"
	printf '1\tone\n2\ttwo\n3\tthree\n' >"$T/create.want"
	timeout 10 "$PMWAL" create "$l" --size 1M >"$T/c2.out" 2>"$T/c2.err"
	local rc=$?
	[ $rc = 0 ] && why "pmwal create formatted an existing log without --force"
	[ $rc = 124 ] && why "pmwal create hung"
	grep -q -- '--force' "$T/c2.err" || why "the refusal does not say what to do: $(head -c 200 "$T/c2.err")"
	have_records "$l" "$T/create.want"
}

# pmwal append fed a long stream, SIGKILLed in the middle, started again at
# once with the same command line, five times: every start opens the log
# (no "open for writing by pid N" of the killed one), what the completed
# runs acknowledged stays.
c_cli_append_kill_restart() {
	local l=$T/append.log i p rc
	timeout 10 "$PMWAL" create "$l" --size 16M >/dev/null 2>&1 || why "create failed"
	: >"$T/append.want"
	for ((i = 1; i <= 8; i++)); do
		yes "record of round $i with some payload" | head -n 30000 |
			"$PMWAL" append "$l" >/dev/null 2>"$T/ak.err" &
		p=$!
		BGPIDS+=($p)
		sleep 0.1
		kill -KILL "$p" 2>/dev/null
		# Odd rounds: restarted once the killed one is reaped; even rounds:
		# at once, while it may still be exiting (a supervisor that does
		# not wait); either way the restart must open the log.
		[ $((i % 2)) = 1 ] && wait "$p" 2>/dev/null
		# the supervisor's restart: the same command, now with a short input
		printf 'acked %d a\nacked %d b\n' $i $i | timeout 10 "$PMWAL" append "$l" >"$T/ar.out" 2>"$T/ar.err"
		rc=$?
		wait "$p" 2>/dev/null
		if [ $rc != 0 ]; then
			why "restart $i after SIGKILL exited $rc: $(head -c 300 "$T/ar.err")"
			continue
		fi
		# "appended 2 records (LSN a..b), durable"
		local a b
		a=$(cat "$T/ar.out" "$T/ar.err" | sed -n 's/.*(LSN \([0-9]*\)\.\.\([0-9]*\)).*/\1/p')
		b=$(cat "$T/ar.out" "$T/ar.err" | sed -n 's/.*(LSN \([0-9]*\)\.\.\([0-9]*\)).*/\2/p')
		if [ -z "$a" ] || [ "$b" != $((a + 1)) ]; then
			why "restart $i: no LSN range in '$(cat "$T/ar.out" "$T/ar.err")'"
			continue
		fi
		printf '%s\tacked %d a\n%s\tacked %d b\n' "$a" $i "$b" $i >>"$T/append.want"
	done
	have_records "$l" "$T/append.want"
	timeout 10 "$PMWAL" verify "$l" >"$T/av.out" 2>&1
	rc=$?
	[ $rc = 0 ] || why "verify after the restarts exited $rc: $(head -c 200 "$T/av.out")"
}

# After a killed writer, pmwal recover twice (as a boot script run twice
# would), then dump twice: the same records each time, none lost.
c_cli_recover_dump_twice() {
	local l=$T/rec.log p rc
	timeout 10 "$PMWAL" create "$l" --size 8M >/dev/null 2>&1 || why "create failed"
	printf 'keep 1\nkeep 2\n' | timeout 10 "$PMWAL" append "$l" >/dev/null 2>&1 || why "append failed"
	printf '1\tkeep 1\n2\tkeep 2\n' >"$T/rec.want"
	yes "torn payload" | head -n 300000 | "$PMWAL" append "$l" >/dev/null 2>&1 &
	p=$!
	BGPIDS+=($p)
	sleep 0.2
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	for i in 1 2; do
		timeout 10 "$PMWAL" recover "$l" >"$T/rec$i.out" 2>&1
		rc=$?
		[ $rc = 0 ] || why "recover $i exited $rc: $(head -c 300 "$T/rec$i.out")"
		timeout 10 "$PMWAL" dump "$l" >"$T/dump$i.out" 2>"$T/dump$i.err"
		rc=$?
		[ $rc = 0 ] || why "dump $i exited $rc: $(head -c 300 "$T/dump$i.err")"
	done
	cmp -s "$T/dump1.out" "$T/dump2.out" || why "the second recover or dump changed what the log holds"
	have_records "$l" "$T/rec.want"
}

# pmwal bench log on its scratch file, SIGKILLed once, then the same
# command line twice: each later run reuses the file (not "not bench's").
# On a user's log (made by pmwal create) bench refuses, the log intact.
c_bench_log_twice() {
	local f=$T/bench.wal p rc i
	local cmd=("$PMWAL" bench log "$f" --quick --runtime 300ms --ramp 0 --no-primitives --capacity 8m)
	"${cmd[@]}" >/dev/null 2>&1 &
	p=$!
	BGPIDS+=($p)
	sleep 0.3
	kill -KILL "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	for i in 1 2; do
		(cd "$T" && timeout 30 "${cmd[@]}") >"$T/bl$i.out" 2>&1
		rc=$?
		[ $rc = 0 ] || why "run $i after the killed one exited $rc: $(grep -i 'error\|refus\|pmwal bench:' "$T/bl$i.out" | head -c 300)"
	done
	local l=$T/user.log
	timeout 10 "$PMWAL" create "$l" --size 8M >/dev/null 2>&1 || why "create failed"
	printf 'mine\n' | timeout 10 "$PMWAL" append "$l" >/dev/null 2>&1
	printf '1\tmine\n' >"$T/user.want"
	(cd "$T" && timeout 30 "$PMWAL" bench log "$l" --quick --runtime 200ms --ramp 0 --no-primitives) \
		>"$T/bu.out" 2>&1
	rc=$?
	[ $rc = 0 ] && why "bench log overwrote a user's log without --force"
	have_records "$l" "$T/user.want"
}

# ---- the examples -----------------------------------------------------------

# kvstore: puts on stdin, acknowledged; then served on a socket with
# checkpoints, SIGKILLed in the middle of a client's puts; started again
# with the same command line: every acknowledged put is there.
c_kvstore_twice() {
	local d=$T/kv sock=$T/kv.sock k rc
	mkdir -p "$d"
	printf 'put first 1\nput second 2\n' | timeout 10 "$EX/kvstore" "$d" >"$T/kv1.out" 2>"$T/kv1.err"
	[ "$(grep -c '^ok' "$T/kv1.out")" = 2 ] || why "the first start did not acknowledge 2 puts: $(cat "$T/kv1.out" "$T/kv1.err" | head -c 300)"
	printf 'get first\nget second\n' | timeout 10 "$EX/kvstore" "$d" >"$T/kv2.out" 2>"$T/kv2.err"
	[ "$(tr '\n' ' ' <"$T/kv2.out")" = "value 1 value 2 " ] || why "the second start (stdin) answered: $(cat "$T/kv2.out" "$T/kv2.err" | tr '\n' ' ' | head -c 300)"
	local run
	for run in 1 2; do
		"$EX/kvstore" "$d" --socket "$sock" --checkpoint-every 50 >"$T/kvs$run.out" 2>"$T/kvs$run.err" &
		k=$!
		BGPIDS+=($k)
		timeout 20 "$PY" "$HELPER" puts "unix:$sock" "r$run-" 100000 >"$T/kvp$run.out" 2>&1 &
		local c=$!
		wait_for "$T/kvp$run.out" acked 10
		sleep 0.4
		kill -KILL $k 2>/dev/null
		wait $k 2>/dev/null
		wait $c 2>/dev/null
		grep -q acked "$T/kvp$run.out" || why "run $run acknowledged nothing: $(head -c 200 "$T/kvs$run.err") $(head -c 200 "$T/kvp$run.out")"
	done
	# the third start, the same way, and its dump
	timeout 30 "$EX/kvstore" "$d" --socket "$sock" --checkpoint-every 50 >"$T/kvs3.out" 2>"$T/kvs3.err" &
	k=$!
	BGPIDS+=($k)
	timeout 15 "$PY" "$HELPER" dump "unix:$sock" 10 >"$T/kvd.out" 2>&1
	kill -TERM $k 2>/dev/null
	wait $k 2>/dev/null
	grep -q '^end$' "$T/kvd.out" || { why "no dump after the restart: $(head -c 200 "$T/kvd.out") $(head -c 300 "$T/kvs3.err")"; return; }
	cat "$T"/kvp[12].out | sed -n 's/^acked //p' >"$T/kv.want"
	printf 'first 1\nsecond 2\n' >>"$T/kv.want"
	local lost
	lost=$(grep -cvxF -f "$T/kvd.out" "$T/kv.want")
	[ "$lost" = 0 ] || why "$lost of $(wc -l <"$T/kv.want") acknowledged puts lost (first: $(grep -vxF -f "$T/kvd.out" "$T/kv.want" | head -1))"
}

# kvstore on the mapped media (emulated pmem, the fake PMR): started twice
# with the same --target, the second start finds the first one's writes.
c_kvstore_mapped_twice() {
	local tgt d i=0
	for tgt in "pmem:$SHM/kv.pmem" "fakepmr:$SHM/kv.pmr"; do
		i=$((i + 1))
		d=$T/kvm$i
		mkdir -p "$d"
		printf 'put k%d v%d\n' $i $i | timeout 10 "$EX/kvstore" "$d" --target "$tgt" >"$T/kvm$i.1" 2>&1
		grep -q '^ok' "$T/kvm$i.1" || { why "$tgt: the first start: $(head -c 200 "$T/kvm$i.1")"; continue; }
		printf 'get k%d\n' $i | timeout 10 "$EX/kvstore" "$d" --target "$tgt" >"$T/kvm$i.2" 2>&1
		[ "$(cat "$T/kvm$i.2")" = "value v$i" ] || why "$tgt: the second start answered: $(head -c 200 "$T/kvm$i.2")"
	done
}

# ship_primary --create twice (the second refuses: the log exists, intact),
# then unpaced, SIGKILLed, started again the same way: every acked record
# stays; and ship_standby started twice goes on from where the log ends.
c_ship_twice() {
	local l=$T/ship.log p rc run
	timeout 10 "$EX/ship_primary" "$l" --create 32M --count 3 >"$T/sp1.out" 2>"$T/sp1.err" || why "first start failed: $(cat "$T/sp1.err")"
	timeout 10 "$EX/ship_primary" "$l" --create 32M --count 3 >"$T/sp2.out" 2>"$T/sp2.err"
	rc=$?
	if [ $rc = 0 ]; then
		grep -q 'LSN 4:' "$T/sp2.out" || why "ship_primary --create started again over its log (LSNs began anew)"
	else
		[ -s "$T/sp2.err" ] || why "refused without a message"
	fi
	for run in 1 2; do
		"$EX/ship_primary" "$l" --count 1000000 >"$T/spk$run.out" 2>"$T/spk$run.err" &
		p=$!
		BGPIDS+=($p)
		wait_for "$T/spk$run.out" acked 5
		sleep 0.05
		kill -KILL $p 2>/dev/null
		wait $p 2>/dev/null
		grep -q acked "$T/spk$run.out" || why "run $run acked nothing: $(head -c 300 "$T/spk$run.err")"
	done
	cat "$T/sp1.out" "$T/sp2.out" "$T"/spk[12].out | sed -n 's/^acked LSN \([0-9]*\): /\1\t/p' >"$T/ship.want"
	for run in 1 2; do
		timeout 10 "$EX/ship_standby" "$l" --count 2 >"$T/ss$run.out" 2>"$T/ss$run.err"
		rc=$?
		[ $rc = 0 ] || why "ship_standby start $run exited $rc: $(tail -c 300 "$T/ss$run.err")"
		sed -n 's/^acked LSN \([0-9]*\): /\1\t/p' "$T/ss$run.out" >>"$T/ship.want"
	done
	have_records "$l" "$T/ship.want"
}

# ship_primary unpaced, SIGKILLed after 30 ms and started again at once
# (before the killed one is reaped, as a supervisor that does not wait),
# up to 200 times (15 s): every restart opens the log (the dying writer is waited for, not
# named as a live one), every acked record stays.
c_ship_kill_restart_loop() {
	local l=$T/loop.log p i rc refused=0 first=""
	timeout 10 "$EX/ship_primary" "$l" --create 64M --count 1 >"$T/lp0.out" 2>&1 || why "create failed: $(cat "$T/lp0.out")"
	local until=$((SECONDS + 15))
	for ((i = 1; i <= 200 && SECONDS < until; i++)); do
		"$EX/ship_primary" "$l" --count 100000000 >"$T/lpk$i.out" 2>/dev/null &
		p=$!
		BGPIDS+=($p)
		sleep 0.03
		kill -KILL $p 2>/dev/null
		timeout 10 "$EX/ship_primary" "$l" --count 1 >"$T/lpr$i.out" 2>"$T/lpr$i.err"
		rc=$?
		wait $p 2>/dev/null
		if grep -q 'log full' "$T/lpr$i.err"; then
			break # the lane's log is too small for this machine's speed
		fi
		if [ $rc != 0 ]; then
			refused=$((refused + 1))
			first="round $i: exit $rc: $(head -c 300 "$T/lpr$i.err")"
			break
		fi
	done
	[ $refused = 0 ] || why "a restart right after SIGKILL failed ($first)"
	cat "$T"/lp0.out "$T"/lpk*.out "$T"/lpr*.out | sed -n 's/^acked LSN \([0-9]*\): /\1\t/p' >"$T/loop.want"
	have_records "$l" "$T/loop.want"
}

# raftkv, one node: puts acknowledged, SIGKILL in the middle of a client's
# puts, started again with the same command line: every acknowledged put
# is in the state it rebuilds.
c_raftkv_twice() {
	[ -x "$EX/raftkv" ] || { echo "  (raftkv_twice: no raftkv built; checked nothing)"; return; }
	local d=$T/raft port=$((22000 + $$ % 9000)) k run
	mkdir -p "$d"
	local cmd=("$EX/raftkv" --id 1 --peers "127.0.0.1:$port" --dir "$d")
	for run in 1 2; do
		"${cmd[@]}" >"$T/rk$run.out" 2>"$T/rk$run.err" &
		k=$!
		BGPIDS+=($k)
		timeout 10 "$PY" "$HELPER" ask "tcp:127.0.0.1:$((port + 1000))" 8 "put warm$run up" >"$T/rkw$run.out" 2>&1
		grep -q '^ok' "$T/rkw$run.out" || why "start $run took no put: $(head -c 200 "$T/rkw$run.out") $(tail -c 300 "$T/rk$run.err")"
		grep -q '^ok' "$T/rkw$run.out" && echo "warm$run up" >>"$T/rk.want"
		timeout 10 "$PY" "$HELPER" puts "tcp:127.0.0.1:$((port + 1000))" "r$run-" 100000 >"$T/rkp$run.out" 2>&1 &
		local c=$!
		sleep 0.5
		kill -KILL $k 2>/dev/null
		wait $k 2>/dev/null
		wait $c 2>/dev/null
		sed -n 's/^acked //p' "$T/rkp$run.out" >>"$T/rk.want"
	done
	timeout 30 "${cmd[@]}" >"$T/rk3.out" 2>"$T/rk3.err" &
	k=$!
	BGPIDS+=($k)
	# wait for it to lead again (a put), then its dump
	timeout 10 "$PY" "$HELPER" ask "tcp:127.0.0.1:$((port + 1000))" 8 "put warm3 up" >"$T/rkw3.out" 2>&1
	timeout 10 "$PY" "$HELPER" dump "tcp:127.0.0.1:$((port + 1000))" 5 >"$T/rkd.out" 2>&1
	kill -TERM $k 2>/dev/null
	wait $k 2>/dev/null
	[ "$(wc -l <"$T/rk.want")" -gt 3 ] || why "the killed runs acknowledged almost nothing: $(head -c 200 "$T/rkp1.out")"
	grep -q '^end$' "$T/rkd.out" || { why "no dump after the restart: $(head -c 200 "$T/rkd.out") $(tail -c 300 "$T/rk3.err")"; return; }
	# dump lines: KEY INDEX COUNT VALUE
	awk '$0 != "end" { print $1, $4 }' "$T/rkd.out" >"$T/rkd.kv"
	local lost
	lost=$(grep -cvxF -f "$T/rkd.kv" "$T/rk.want")
	[ "$lost" = 0 ] || why "$lost of $(wc -l <"$T/rk.want") acknowledged puts lost (first: $(grep -vxF -f "$T/rkd.kv" "$T/rk.want" | head -1))"
}

CHECKS=(cli_create_twice cli_append_kill_restart cli_recover_dump_twice bench_log_twice
	kvstore_twice kvstore_mapped_twice ship_twice ship_kill_restart_loop raftkv_twice)
[ -n "${LANE_CHECKS:-}" ] && read -r -a CHECKS <<<"$LANE_CHECKS"
for c in "${CHECKS[@]}"; do
	t0=$SECONDS
	check "$c"
	[ -n "${LANE_TIMES:-}" ] && echo "  ($c: $((SECONDS - t0)) s)"
done
echo "$PASS passed, $FAILN failed"
[ "$FAILN" = 0 ]
