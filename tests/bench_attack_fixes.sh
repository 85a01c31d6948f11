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
# equivalent fio command shell-quoted; an unknown mode that is a path;
# --size N% (fio's share of an existing file, refused for a new or empty
# one); a numjobs sweep runs and labels 1, 2, 4 threads; an empty file of
# the user's is refused for writes and left unmarked; -o and --csv checked
# before the run; pmwal report keeps every row past 4096 jobs.
# About 30 s on two cores.
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

io_quick=(--runtime 100ms --ramp 0 --quiet)

step "--size N%: a share of an existing file's size (fio's size=N%), refused without one"
head -c 8M /dev/urandom >pct.dat
psum=$(sha1sum <pct.dat)
expect 0 "read --size 50% of a file" -- "$pmwal" bench io "$work/pct.dat" --rw read \
	--size 50% "${io_quick[@]}" --json pct50.json
expect 0 "randread --size 100% of a file" -- "$pmwal" bench io "$work/pct.dat" \
	--rw randread --size 100% "${io_quick[@]}" --json pct100.json
expect 2 "write --size 100% of the user's file without --force" -- "$pmwal" bench io \
	"$work/pct.dat" --rw write --size 100% "${io_quick[@]}"
said "pct.dat is a file pmwal bench did not create (8388608 bytes)"
same pct.dat "$psum"
expect 0 "write --size 100% of the user's file with --force" -- "$pmwal" bench io \
	"$work/pct.dat" --rw randwrite --size 100% "${io_quick[@]}" --force
[ "$(stat -c %s pct.dat)" = 8388608 ] || fail "--size 100% changed the file's size"
expect 2 "--size 100% of a new file" -- "$pmwal" bench io "$work/newpct.dat" --rw write \
	--size 100% "${io_quick[@]}"
said "newpct.dat does not exist" "give --size in bytes"
[ -e newpct.dat ] && fail "--size 100% of a new file created it"
: >emptypct.dat
expect 2 "--size 100% of an empty file" -- "$pmwal" bench io "$work/emptypct.dat" \
	--rw read --size 100% "${io_quick[@]}" --force
said "emptypct.dat is empty"
for bad in 0% 101% 1.5% 50%% x%; do
	expect 2 "--size $bad" -- "$pmwal" bench io "$work/pct.dat" --rw read --size "$bad" \
		"${io_quick[@]}"
	said "1..100"
done
expect 2 "--size 50% for bench log" -- "$pmwal" bench log "$work/pct.wal" "${quick[@]}" \
	--size 50%
said "bench io"
head -c 4M /dev/zero >"$shm/pct.pmem"
expect 0 "read --size 50% of a pmem: file" -- "$pmwal" bench io "pmem:$shm/pct.pmem" \
	--rw read --size 50% "${io_quick[@]}" --json pctpmem.json
printf '[a]\nfilename=%s/pct.dat\nrw=read\nsize=25%%\nruntime=100ms\n' "$work" >pct.fio
expect 0 "a job file's size=25%" -- "$pmwal" bench io --job pct.fio --quiet --json pctjob.json
# One python3 for every JSON: it starts in a second or more on a loaded machine.
python3 - <<'PY' || fail "--size N% did not measure that share of the file"
import json
def job(f):
    return json.load(open(f))['jobs'][0]
for f, size, opt in (('pct50.json', 4194304, '50%'), ('pct100.json', 8388608, '100%'),
                     ('pctpmem.json', 2097152, '50%'), ('pctjob.json', 2097152, '25%')):
    j = job(f)
    got = (j['pmwal']['options']['size'], j['job options']['size'])
    if got != (size, opt):
        print('FAIL: %s: size %s, fio size %s; expected %d, %s' % ((f,) + got + (size, opt)))
        raise SystemExit(1)
if '--size=4m' not in job('pct50.json')['pmwal']['fio_command']:
    print('FAIL: the fio command does not give the size 50% came to'); raise SystemExit(1)
PY
{
	printf '[a]\nfilename=%s/pa.dat\nrw=write\nsize=1m\nruntime=50ms\n' "$work"
	printf '[b]\nfilename=%s/pb.dat\nrw=write\nsize=100%%\nruntime=50ms\n' "$work"
} >pctnew.fio
expect 2 "a job file's size=100% of a new file" -- "$pmwal" bench io --job pctnew.fio --quiet
said "job \[b\]" "pb.dat does not exist" "no job was run"
[ -e pa.dat ] && fail "job [a] ran before [b]'s size=100% of a new file was refused"

step "--sweep numjobs=1,2,4: each point runs that many threads, labelled so"
# python3 runs the sweep and counts its threads named pmwal (the jobs carry the
# process's name, io_uring's workers do not) every 5 ms, without a fork each.
python3 - "$pmwal" "$work" <<'PY' || fail "the numjobs sweep"
import glob, json, subprocess, sys, time
pmwal, work = sys.argv[1:3]
out = open(work + '/sw.out', 'w')
p = subprocess.Popen([pmwal, 'bench', 'io', work + '/sw.dat', '--rw', 'randread',
                      '--size', '16m', '--sweep', 'numjobs=1,2,4', '--runtime', '500ms',
                      '--ramp', '0', '--quiet', '--json', 'sw.json', '--csv', 'swcsv',
                      '-o', 'swrep'], stdout=out, stderr=out)
seen = set()
while p.poll() is None:
    n = 0
    for f in glob.glob('/proc/%d/task/*/comm' % p.pid):
        try:
            n += open(f).read().strip() == 'pmwal'
        except OSError:
            pass
    seen.add(n)
    time.sleep(0.005)
bad = []
if p.returncode:
    bad.append('exit %d: %s' % (p.returncode, open(work + '/sw.out').read()))
for n in (1, 2, 4): # beside the main thread
    if n + 1 not in seen:
        bad.append('no point ran with %d job thread(s) (seen %s)' % (n, sorted(seen)))
if max(seen) > 5:
    bad.append('%d job threads ran, at most 4 asked' % (max(seen) - 1))
jobs = json.load(open('sw.json'))['jobs'] if not p.returncode else []
if [j['pmwal']['sweep']['value'] for j in jobs] != [1, 2, 4]:
    bad.append('sweep values %s' % [j['pmwal'].get('sweep') for j in jobs])
for j, n in zip(jobs, (1, 2, 4)):
    pm = j['pmwal']
    if (pm['sweep']['key'], pm['options']['numjobs'], j['job options']['numjobs']) != \
            ('numjobs', n, str(n)) or 'jobs=%d' % n not in j['jobname'] or \
            '--numjobs=%d' % n not in pm['fio_command'] or not j['read']['total_ios']:
        bad.append('point %d is not labelled numjobs=%d: %s' % (n, n, j['jobname']))
for b in bad:
    print('FAIL: ' + b)
sys.exit(1 if bad else 0)
PY
for n in 1 2 4; do
	has swcsv/jobs.csv "randread bs=4k qd=32 jobs=$n"
	has swrep/index.html "randread bs=4k qd=32 jobs=$n"
done
has swrep/index.html "operations/s by numjobs"

step "an empty file bench did not create is the user's: refused for writes, untouched"
: >empty.dat
head -c 1 /dev/zero >one.dat
expect 2 "write a one-byte user's file" -- "$pmwal" bench io "$work/one.dat" --rw write \
	--size 4m "${io_quick[@]}"
sed 's/one\.dat/F/; s/([0-9]* bytes)/(N bytes)/' err.txt >one.msg
expect 2 "write an empty user's file" -- "$pmwal" bench io "$work/empty.dat" --rw write \
	--size 4m "${io_quick[@]}"
said "empty.dat is a file pmwal bench did not create (0 bytes)"
sed 's/empty\.dat/F/; s/([0-9]* bytes)/(N bytes)/' err.txt | cmp -s - one.msg ||
	fail "an empty file is refused with another message than a non-empty one"
untouched() { # untouched FILE: still 0 bytes, no marker beside it (the xattr: below)
	[ "$(stat -c %s "$1")" = 0 ] || fail "$1 was written ($(stat -c %s "$1") bytes)"
	[ -e "$1.pmwal-bench" ] && fail "$1 got a scratch marker beside it"
}
untouched empty.dat
expect 2 "bench log on an empty user's file" -- "$pmwal" bench log "$work/empty.dat" \
	"${quick[@]}"
said "empty.dat is a file pmwal bench did not create (0 bytes)"
untouched empty.dat
expect 2 "bench recovery on an empty user's file" -- "$pmwal" bench recovery \
	"$work/empty.dat" --size 4m --quiet
untouched empty.dat
: >"$shm/empty.pmem"
expect 2 "write an empty user's pmem: file" -- "$pmwal" bench io "pmem:$shm/empty.pmem" \
	--rw write --size 4m "${io_quick[@]}"
said "empty.pmem is a file pmwal bench did not create (0 bytes)"
untouched "$shm/empty.pmem"
printf '[a]\nfilename=%s/empty.dat\nrw=write\nsize=4m\nruntime=50ms\n' "$work" >empty.fio
expect 2 "a job file writing an empty user's file" -- "$pmwal" bench io --job empty.fio --quiet
untouched empty.dat
expect 0 "write an empty user's file with --force" -- "$pmwal" bench io "$work/empty.dat" \
	--rw write --size 4m "${io_quick[@]}" --force
[ "$(stat -c %s empty.dat)" = 4194304 ] || fail "--force did not write empty.dat"
# Nothing takes bench's mark off a file it leaves, so none now means none before.
python3 - empty.dat "$shm/empty.pmem" <<'PY' || fail "an empty user's file was marked as bench's"
import os, sys
for f in sys.argv[1:]:
    try:
        if 'user.pmwal.bench' in os.listxattr(f):
            print('FAIL: %s has the xattr user.pmwal.bench' % f); sys.exit(1)
    except OSError:
        pass # no xattrs here: the marker file, checked above
PY

step "-o DIR and --csv DIR are checked before the run"
rodir=$work/rodir
mkdir -p "$rodir" rj/result.json
ro_run=()
if [ "$(id -u)" != 0 ]; then
	chmod 555 "$rodir"
elif unshare -m true 2>/dev/null; then # root writes anywhere but on a read-only mount
	ro_run=(unshare -m sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" &&
		shift && exec "$@"' "$rodir" "$rodir")
else
	echo "   (root without mount namespaces: the unwritable directory is not checked)"
	rodir=
fi
for bad in "$work/no/such/rep" "$work/precious" "$work/out.fifo" "$work/rj" ${rodir:+"$rodir"}; do
	rm -f "$work/o.dat"
	run=("$pmwal")
	[ "$bad" = "$rodir" ] && run=("${ro_run[@]}" "$pmwal")
	expect 2 "-o $bad" -- "${run[@]}" bench io "$work/o.dat" --rw write --size 4m \
		"${io_quick[@]}" -o "$bad"
	said "-o $bad"
	[ -e "$work/o.dat" ] && fail "-o $bad: the run ran before the refusal"
done
expect 2 "-o a missing parent" -- "$pmwal" bench io "$work/o.dat" --rw write --size 4m \
	"${io_quick[@]}" -o "$work/no/such/rep"
said "$work/no/such is not a directory"
expect 2 "-o a regular file" -- "$pmwal" bench io "$work/o.dat" --rw write --size 4m \
	"${io_quick[@]}" -o precious
said "precious is a regular file"
expect 2 "-o a FIFO" -- "$pmwal" bench log "$work/o.wal" "${quick[@]}" --output out.fifo
said "out.fifo is a FIFO"
[ -e "$work/o.wal" ] && fail "-o FIFO: bench log ran before the refusal"
expect 2 "-o DIR holding a directory result.json" -- "$pmwal" bench io "$work/o.dat" \
	--rw write --size 4m "${io_quick[@]}" -o rj
said "rj/result.json is a directory"
expect 2 "--csv a FIFO" -- "$pmwal" bench io "$work/o.dat" --rw write --size 4m \
	"${io_quick[@]}" --csv out.fifo
said "--csv out.fifo is a FIFO"
[ -e "$work/o.dat" ] && fail "--csv FIFO: the run ran before the refusal"
expect 2 "pmwal report -o a missing parent" -- "$pmwal" report pct.json -o "$work/no/such/rep"
said "-o $work/no/such/rep"
expect 0 "-o a new directory (trailing slash)" -- "$pmwal" bench io "$work/o.dat" --rw write \
	--size 4m "${io_quick[@]}" -o "$work/newrep/"
[ -s newrep/index.html ] || fail "-o newrep/ wrote no index.html"

step "pmwal report with more than 4096 jobs: every row, no crash"
python3 - big.json <<'PY'
import json, sys
pct = {k: 1000 * (i + 1) for i, k in enumerate(
    ['1.000000', '10.000000', '50.000000', '90.000000', '99.000000',
     '99.900000', '99.990000', '99.999000'])}
def job(i):
    d = {'total_ios': 10, 'iops': 100.0, 'bw_bytes': 409600,
         'clat_ns': {'min': 900, 'max': 9000, 'mean': 2000.0, 'percentile': pct}}
    return {'jobname': 'randread bs=4k', 'read': d, 'write': {'total_ios': 0},
            'pmwal': {'phase': 'io', 'target': 'big-%05d' % i, 'label': ''}}
json.dump({'jobs': [job(i) for i in range(5000)], 'pmwal': {}}, open(sys.argv[1], 'w'))
PY
expect 0 "pmwal report of 5000 jobs" -- "$pmwal" report big.json -o "$work/bigrep"
rows=$(grep -o '<td>big-[0-9]*</td>' bigrep/index.html | sort -u | wc -l)
[ "$rows" = 5000 ] || fail "the report has $rows of 5000 jobs' rows"

finish bench_attack_fixes
