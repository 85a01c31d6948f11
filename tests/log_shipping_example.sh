#!/usr/bin/env bash
# The log-shipping pair as a user runs it (docs/followers.md, "Example: log shipping"):
# a primary appends numbered records, a standby follows the log and takes it
# over when the primary is SIGKILLed mid-stream. Checked each round: the
# standby applied exactly LSN 1..X, in order, each once; every record the
# primary acked is among them, bytes included; the standby's own appends
# continue at X+1; and `pmwal dump` of the log holds exactly those records.
#   log_shipping_example.sh SHIP_PRIMARY SHIP_STANDBY PMWAL_CLI
set -euo pipefail
primary=$1
standby=$2
cli=$3
dir=$(mktemp -d /tmp/pmwal-ship-XXXXXX)
children=()
cleanup() {
	for pid in "${children[@]}"; do
		kill -9 "$pid" 2>/dev/null || true
	done
	rm -rf "$dir"
}
trap cleanup EXIT
# Status pages here, not in /dev/shm: a killed writer's page stays behind.
export PMWAL_STATUS_DIR=$dir/status
mkdir "$dir/status"

fail() {
	echo "FAIL: $*"
	for f in "$dir"/*.out; do
		echo "--- $f (last lines)"
		tail -n 5 "$f"
	done
	exit 1
}

# wait_for FILE PATTERN: until a line of FILE matches (10 s at most).
wait_for() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q "$2" "$1" && return 0
		sleep 0.05
	done
	fail "no line '$2' in $1 after 10 s"
}

# wait_exit PID: $status gets its exit status once it exits (20 s at most,
# then it is killed). Not in a subshell: only this shell may wait for it.
wait_exit() {
	local i
	for ((i = 0; i < 400; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$1" 2>/dev/null; then
		kill -9 "$1"
		fail "pid $1 still running after 20 s"
	fi
	status=0
	wait "$1" || status=$?
}

acked_lsns() { sed -n 's/^acked LSN \([0-9]*\):.*/\1/p' "$1"; }

# round NAME APPLY_US: the standby spends APPLY_US applying each record; at
# 2000 us (500 a second, the primary writes 2000) its follower is hundreds of
# records behind at the takeover, and the rest come from the recovered log.
round() {
	local log=$dir/$1.log p=$dir/$1.primary.out s=$dir/$1.standby.out
	"$primary" "$log" --create 64M --count 50000 --rate 2000 >"$p" 2>&1 &
	local ppid=$!
	children+=("$ppid")
	wait_for "$p" '^acked LSN 100:'
	"$standby" "$log" --count 20 --apply-us "$2" >"$s" 2>&1 &
	local spid=$!
	children+=("$spid")
	wait_for "$s" '^applied LSN 200:'
	kill -9 "$ppid"
	status=0
	{ wait "$ppid"; } 2>/dev/null || status=$? # SIGKILLed: no "Killed" line
	[ "$status" = 137 ] || fail "$1: the primary exited $status before it was killed"
	wait_exit "$spid"
	[ "$status" = 0 ] || fail "$1: the standby exited $status"

	local x
	x=$(sed -n 's/^took over at LSN \([0-9]*\)$/\1/p' "$s")
	[ -n "$x" ] || fail "$1: no 'took over at LSN X' line"
	# Applied: exactly 1..X, in order, no duplicate.
	diff <(seq 1 "$x") <(sed -n 's/^applied LSN \([0-9]*\):.*/\1/p' "$s") >/dev/null ||
		fail "$1: the LSNs applied are not exactly 1..$x"
	# Every record the primary acked (a prefix of the log) was applied as acked.
	local k
	k=$(grep -c '^acked LSN' "$p")
	[ "$k" -ge 100 ] && [ "$k" -le "$x" ] || fail "$1: primary acked $k, took over at $x"
	diff <(sed -n 's/^acked //p' "$p") <(sed -n 's/^applied //p' "$s" | head -n "$k") \
		>/dev/null || fail "$1: an acked record was not applied as acked"
	# The standby's own appends: X+1..X+20.
	diff <(seq $((x + 1)) $((x + 20))) <(acked_lsns "$s") >/dev/null ||
		fail "$1: the standby's appends do not continue at $((x + 1))"
	# The log itself, read by the CLI: the same records, line for line.
	"$cli" dump "$log" >"$dir/$1.dump" || fail "$1: pmwal dump failed"
	diff "$dir/$1.dump" <(sed -n 's/^\(applied\|acked\) LSN \([0-9]*\): /\2\t/p' "$s") \
		>/dev/null || fail "$1: pmwal dump disagrees with what the standby applied"
	local caught
	caught=$(sed -n 's/^standby: caught up \([0-9]*\) .*/\1/p' "$s")
	echo "$1: primary acked $k, killed; took over at LSN $x ($caught caught up" \
		"after the follower), standby appended $((x + 1))..$((x + 20))"
}

round live 0
round lagging 2000
echo "log_shipping_example: 2 passed, 0 failed"
