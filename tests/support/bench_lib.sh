# SPDX-License-Identifier: MIT
# bench_lib.sh - the checks the bench test scripts share (sourced, not run).
# A script sets $work (its scratch directory, where out.txt and err.txt of
# the last command land) and may set expect_timeout (seconds, default 60);
# it ends with `finish NAME`.
fails=0
step() { printf '== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*"; fails=$((fails + 1)); }
expect() { # expect STATUS DESCRIPTION -- command...: its exit status is STATUS
	local want=$1 what=$2; shift 3
	timeout "${expect_timeout:-60}" "$@" >"$work/out.txt" 2>"$work/err.txt"
	local got=$?
	if [ "$got" != "$want" ]; then
		fail "$what: exit $got, expected $want"
		cat "$work/out.txt" "$work/err.txt" | sed 's/^/   | /' | tail -20
	fi
}
has() { # has FILE STRING...: every string occurs in FILE
	local f=$1 s; shift
	for s in "$@"; do
		grep -q -- "$s" "$f" || { fail "$f lacks '$s'"; sed 's/^/   | /' "$f" | tail -5; }
	done
}
said() { # said STRING...: the last command's stderr names each string
	has "$work/err.txt" "$@"
}
finish() { # finish NAME: the verdict, and the script's exit status
	if [ "$fails" -ne 0 ]; then
		echo "$1: $fails check(s) failed"
		exit 1
	fi
	echo "$1: all passed"
	exit 0
}
