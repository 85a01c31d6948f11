#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench_attack_fixes.sh - what an attacker found in pmwal bench, each kept
# fixed: the primitives' scratch file beside a target never writes over or
# deletes a file bench did not make (a link to a precious file, the user's
# own NAME.prim); a second run on a log a live run is writing is refused
# (exit 2, the writer's pid) before anything is truncated; --json and
# pmwal report refuse FIFOs and directories by name, before the run; a
# --json path a log file would take is refused; a job file's rate x numjobs
# overflow, a bad section after good ones, a NUL byte, binary bytes; the
# equivalent fio command shell-quoted; an unknown mode that is a path.
# About 20 s on two cores.
# usage: bench_attack_fixes.sh PATH/TO/pmwal
set -u
. "$(cd "$(dirname "$0")" && pwd)/support/bench_lib.sh"
expect_timeout=30
pmwal=${1:?usage: bench_attack_fixes.sh PATH/TO/pmwal}
pmwal=$(cd "$(dirname "$pmwal")" && pwd)/$(basename "$pmwal")
command -v python3 >/dev/null || { echo "SKIP: python3 not installed (scripts/deps.sh test)"; exit 77; }
# A disk filesystem for the file primitives: O_DIRECT is refused on tmpfs.
work=$(mktemp -d /var/tmp/pmwal-attack-fixes.XXXXXX)
shm=$(mktemp -d /dev/shm/pmwal-attack-fixes.XXXXXX)
bgpid=
trap '[ -n "$bgpid" ] && kill "$bgpid" 2>/dev/null; rm -rf "$work" "$shm"' EXIT
cd "$work" || exit 1

same() { # same FILE SUM: FILE is still what it was
	[ "$(sha1sum <"$1")" = "$2" ] || fail "$1 was changed"
}

step "primitives: a link NAME.prim to a precious file is neither written nor deleted"
head -c 1M /dev/urandom >precious
sum=$(sha1sum <precious)
ln -s precious x.wal.prim
expect 2 "bench log with x.wal.prim a link" -- "$pmwal" bench log "$work/x.wal" \
	--runtime 200ms --ramp 0 --prim-time 50ms --capacity 16m --quiet
same precious "$sum"
[ -L x.wal.prim ] || fail "x.wal.prim (a link) was removed"
has err.txt "x.wal.prim already exists (a symbolic link)" "bench did not create it"
[ "$(stat -c %s precious)" = 1048576 ] || fail "precious changed size"

step "primitives: the user's own NAME.prim beside NAME is left alone"
echo "my notes" >notes
cp precious notes.prim
expect 2 "bench primitives with notes.prim there" -- "$pmwal" bench primitives \
	"$work/notes" --prim-time 50ms --quiet
same notes.prim "$sum"
has err.txt "notes.prim already exists and bench did not create it"

step "primitives: pmem:PATH with PATH.prim a link"
ln -s "$work/precious" "$shm/p.wal.prim"
expect 2 "bench primitives pmem: with a link" -- "$pmwal" bench primitives \
	"pmem:$shm/p.wal" --prim-time 50ms --quiet
same precious "$sum"
[ -L "$shm/p.wal.prim" ] || fail "$shm/p.wal.prim (a link) was removed"

step "primitives: a FIFO named NAME.prim: refused, no hang"
mkfifo fifo.prim
expect 2 "bench primitives with a FIFO .prim" -- "$pmwal" bench primitives \
	"$work/fifo" --prim-time 50ms --quiet
[ -p fifo.prim ] || fail "fifo.prim was removed"

step "primitives: a free name runs, twice, and leaves nothing behind"
expect 0 "bench primitives" -- "$pmwal" bench primitives "$work/free" --prim-time 30ms --quiet
expect 0 "bench primitives again" -- "$pmwal" bench primitives "$work/free" --prim-time 30ms --quiet
expect 0 "bench primitives pmem:" -- "$pmwal" bench primitives "pmem:$shm/free" \
	--prim-time 30ms --quiet
ls "$work"/free* "$shm"/free* 2>/dev/null | grep . && fail "scratch files left behind"

step "primitives: a scratch file a killed run left (marked) is bench's: reused, removed"
if head -c 4096 /dev/zero >left.prim && python3 -c \
	'import os; os.setxattr("left.prim", "user.pmwal.bench", b"scratch")' 2>/dev/null; then
	expect 0 "bench primitives over a killed run's scratch" -- "$pmwal" bench primitives \
		"$work/left" --prim-time 30ms --quiet
	[ -e left.prim ] && fail "left.prim (bench's own) was not removed"
else
	echo "   (no user xattrs here: the marked-leftover case is not checked)"
fi

live() { # live TARGET: a log run in the background, writing TARGET for ~4 s
	"$pmwal" bench log "$1" --capacity 16m --runtime 4s --ramp 0 --no-primitives \
		--quiet >"$work/bg.out" 2>&1 &
	bgpid=$!
	for _ in $(seq 1 100); do # until its writer lock is taken (read-only look)
		"$pmwal" info "$1" 2>/dev/null | grep -q "writer *pid $bgpid" && return 0
		sleep 0.05
	done
	fail "the background run on $1 never held its writer lock"
}
bgwait() {
	wait "$bgpid"
	local rc=$?
	bgpid=
	[ "$rc" = 0 ] || { fail "the first run (on $1) ended with $rc"; sed 's/^/   | /' "$work/bg.out"; }
}

step "two runs on one pmem: log: the second is refused, the first is unharmed"
live "pmem:$shm/c.wal"
expect 2 "second bench log on a live pmem: log" -- "$pmwal" bench log "pmem:$shm/c.wal" \
	--capacity 16m --runtime 300ms --ramp 0 --no-primitives --quiet
has err.txt "is open for writing by pid $bgpid (another bench run?)"
expect 2 "bench recovery on a live log" -- "$pmwal" bench recovery "pmem:$shm/c.wal" \
	--size 4m --quiet
has err.txt "open for writing by pid"
expect 2 "bench io on a live log" -- "$pmwal" bench io "pmem:$shm/c.wal" --rw write \
	--size 4m --runtime 100ms --ramp 0 --quiet --force
has err.txt "open for writing by pid"
bgwait "pmem:$shm/c.wal"

step "two runs on one file log: the second is refused, the first's log is whole"
live "$work/c.wal"
expect 2 "second bench log on a live file log" -- "$pmwal" bench log "$work/c.wal" \
	--capacity 16m --runtime 300ms --ramp 0 --no-primitives --quiet
has err.txt "is open for writing by pid $bgpid"
size=$(stat -c %s "$work/c.wal")
[ "$size" -gt 0 ] || fail "the live log was truncated to $size bytes"
printf '[j]\nfilename=%s\nrw=write\nsize=4m\nruntime=100ms\n' "$work/c.wal" >live.fio
expect 2 "a job file writing a live log" -- "$pmwal" bench io --job live.fio --quiet --force
has err.txt "open for writing by pid"
bgwait "$work/c.wal"

quick=(--runtime 100ms --ramp 0 --no-primitives --capacity 4m --quiet)

step "--json: a FIFO, a directory, a missing directory, /dev/full: refused before the run"
mkfifo out.fifo
mkdir -p outdir
for bad in out.fifo outdir "$work/no/such/dir/r.json" /dev/full; do
	rm -f "$work/ran.wal"
	expect 2 "--json $bad" -- "$pmwal" bench log "$work/ran.wal" "${quick[@]}" --json "$bad"
	has err.txt "--json $bad"
	[ -e "$work/ran.wal" ] && fail "--json $bad: the run ran before the refusal"
done
has err.txt "/dev/full is a character device"
expect 2 "--json FIFO named" -- "$pmwal" bench log "$work/ran.wal" "${quick[@]}" --json out.fifo
has err.txt "out.fifo is a FIFO"
expect 0 "--json /dev/null" -- "$pmwal" bench log "$work/ran.wal" "${quick[@]}" --json /dev/null

step "--json a name a --write_bw_log file would take: refused"
mkdir -p j
expect 2 "--json = a bw log" -- "$pmwal" bench log "$work/ran.wal" "${quick[@]}" \
	--write_bw_log "$work/j/same" --json "$work/j/same_bw.1.log"
has err.txt "would write too"
expect 2 "--json = a lat log, another spelling" -- "$pmwal" bench log "$work/ran.wal" "${quick[@]}" \
	--write_lat_log j/same --json "$work/./j/same_clat.3.log"
expect 0 "--json beside the logs" -- "$pmwal" bench log "$work/ran.wal" "${quick[@]}" \
	--write_bw_log "$work/j/same" --json "$work/j/same.json"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/j/same.json" ||
	fail "j/same.json is not the JSON"

step "pmwal report: a FIFO and a directory are refused by name, no hang"
expect 2 "pmwal report FIFO" -- "$pmwal" report out.fifo -o "$work/rep"
has err.txt "out.fifo is a FIFO"
expect 2 "pmwal report DIR" -- "$pmwal" report outdir -o "$work/rep"
has err.txt "outdir is a directory: pass the result JSON files"

step "job files: rate x numjobs overflow, a bad middle section, NUL and binary bytes"
printf '[a]\nfilename=%s/r.dat\nrw=write\nsize=1m\nruntime=50ms\nrate=16383p\nnumjobs=256\n' \
	"$work" >rate.fio
expect 2 "rate x numjobs overflow" -- "$pmwal" bench io --job rate.fio --quiet
has err.txt "job \[a\]: rate" "overflows"
{
	printf '[a]\nfilename=%s/a.dat\nrw=write\nsize=1m\nruntime=50ms\n' "$work"
	printf '[b]\nfilename=%s/no/such/b.dat\nrw=write\nsize=1m\nruntime=50ms\n' "$work"
	printf '[c]\nfilename=%s/c.dat\nrw=write\nsize=1m\nruntime=50ms\n' "$work"
} >mid.fio
expect 2 "a bad middle section" -- "$pmwal" bench io --job mid.fio --quiet --json mid.json
has err.txt "job \[b\]" "no job was run"
[ -e a.dat ] && fail "job [a] ran before [b]'s bad filename was found"
printf '[a]\nrw=wr\000ite\n' >nul.fio
expect 2 "a NUL byte" -- "$pmwal" bench io --job nul.fio --quiet
has err.txt "a NUL byte at line 2: not a text file"
grep -q "longer than" err.txt && fail "a NUL byte is called a long line"
printf '[a]\nrw=\001\033[31m\377\n' >bin.fio
expect 2 "binary bytes" -- "$pmwal" bench io --job bin.fio --quiet
python3 - "$work/err.txt" <<'PY' || fail "the message echoes raw control bytes"
import sys
b = open(sys.argv[1], 'rb').read()
sys.exit(1 if any(c < 0x20 and c != 0x0a or c >= 0x7f for c in b) else 0)
PY
has err.txt '\\x1b'

step "the equivalent fio command is shell-quoted"
mkdir -p "$work/it's dir"
expect 0 "primitives in a quoted dir" -- "$pmwal" bench primitives "$work/it's dir/t" \
	--prim-time 20ms --quiet --json q.json
python3 - q.json "$work/it's dir/t.prim" <<'PY' || fail "fio_command does not split back to the file name"
import json, shlex, sys
for j in json.load(open(sys.argv[1]))['jobs']:
    cmd = j['pmwal']['fio_command']
    args = shlex.split(cmd)
    if '--filename=' + sys.argv[2] not in args:
        print('FAIL: ' + cmd); sys.exit(1)
PY
expect 0 "bench io in a quoted dir" -- "$pmwal" bench io "$work/it's dir/a b;c.dat" --size 16m \
	--rw write --runtime 100ms --ramp 0 --quiet --json q2.json
python3 - q2.json "$work/it's dir/a b;c.dat" <<'PY' || fail "bench io's fio_command does not split back to the file name"
import json, shlex, sys
cmd = json.load(open(sys.argv[1]))['jobs'][0]['pmwal']['fio_command']
if '--filename=' + sys.argv[2] not in shlex.split(cmd):
    print('FAIL: ' + cmd); sys.exit(1)
PY

step "pmwal bench WORD: every mode listed, a path pointed at bench io"
expect 2 "an unknown mode" -- "$pmwal" bench sideways
has err.txt "suite" "io, log, recovery, primitives, dual, compare"
expect 2 "a path as the mode" -- "$pmwal" bench "$work/precious"
has err.txt "pmwal bench io $work/precious"

finish bench_attack_fixes
