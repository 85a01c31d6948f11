#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench_fio_compat.sh - pmwal bench's output read by fio's own tools, checked
# against what fio 3.33 itself writes on this machine: the key set and types
# of a real fio json+ run (not a list typed here) against pmwal's, clat_ns.bins
# summing to N, fio_jsonplus_clat2csv's CSV (counts, --validate), fio2gnuplot
# plotting pmwal's --write_bw_log files, a fio-plot style key walk over every
# job, the "pmwal" block against bench/schema/pmwal-bench.schema.json, fio job
# files (--job: fio's size units, unknown options, a job file given as a
# target), --json - and --output-format, and running the same command twice.
# Skips (77) with the reason where fio, its tools, gnuplot or python3's
# jsonschema are missing. About 20 s on two cores.
# usage: bench_fio_compat.sh PATH/TO/pmwal
set -u
. "$(cd "$(dirname "$0")" && pwd)/support/bench_lib.sh"
pmwal=${1:?usage: bench_fio_compat.sh PATH/TO/pmwal}
pmwal=$(cd "$(dirname "$pmwal")" && pwd)/$(basename "$pmwal")
src=$(cd "$(dirname "$0")/.." && pwd)
schema=$src/bench/schema/pmwal-bench.schema.json
for tool in fio fio_jsonplus_clat2csv fio2gnuplot fio_generate_plots gnuplot python3; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed (scripts/deps.sh test)"; exit 77; }
done
# jsonschema for the schema check, six for fio_jsonplus_clat2csv itself
python3 -c 'import jsonschema, six' 2>/dev/null ||
	{ echo "SKIP: python3-jsonschema or python3-six not installed (scripts/deps.sh test)"; exit 77; }
# A disk filesystem: O_DIRECT is refused on tmpfs.
work=$(mktemp -d /var/tmp/pmwal-fio-compat.XXXXXX)
# Its pmem files in a directory of its own (mktemp): a fixed name in the
# shared /dev/shm could be a link another user planted.
shmdir=$(mktemp -d /dev/shm/pmwal-fio-compat.XXXXXX) || exit 1
shm=$shmdir/f
trap 'rm -rf "$work" "$shmdir"' EXIT
cd "$work" || exit 1

py() { python3 - "$@" || fail "python check: $*"; }

step "fio 3.33 itself: a tiny json+ run, the reference key set"
fio --name=ref --filename="$work/fio.dat" --size=16m --rw=randrw --bs=4k \
	--runtime=1 --time_based --output-format=json+ >fio.json 2>fio.err ||
	{ fail "fio ran: $(tail -3 fio.err)"; }

step "pmwal bench io: json+, bw/iops logs at 100 ms"
expect 0 "bench io json+" -- "$pmwal" bench io pm.dat --rw randrw --bs 4k --iodepth 4 \
	--size 16m --runtime 1s --output-format json+ --json pm.json \
	--write_bw_log pm --write_iops_log pm --write_lat_log pm --log_avg_msec 100
expect 0 "bench log" -- "$pmwal" bench log wal.dat --runtime 300ms --no-primitives \
	--quiet --output-format json+ --json log.json
expect 0 "bench primitives" -- "$pmwal" bench primitives prim.dat --prim-time 100ms --quiet \
	--output-format json+ --json prim.json
expect 0 "bench recovery" -- "$pmwal" bench recovery rec.wal --size 8m --quiet \
	--output-format json+ --json rec.json

step "every key fio writes, with fio's type"
py fio.json pm.json log.json prim.json rec.json <<'EOF'
import json, sys
def shape(o, p, out):
    if isinstance(o, dict):
        for k, v in o.items():
            if p.endswith(('/bins', '/percentile', '/job options')):
                continue
            if p == '' and k == 'pmwal' or p.endswith('[]') and k == 'pmwal':
                continue
            q = p + '/' + k
            # read, write and trim share one shape
            if p.endswith('[]') and k in ('read', 'write', 'trim'):
                q = p + '/DIR'
            out.setdefault(q, set()).add(type(v).__name__)
            shape(v, q, out)
    elif isinstance(o, list):
        for v in o:
            shape(v, p + '[]', out)
ref, = [json.load(open(sys.argv[1]))]
want = {}
shape(ref, '', want)
want.pop('/disk_util[]', None)          # fio's disks; pmwal's list is empty
for k in [k for k in want if k.startswith('/disk_util[]/')]:
    want.pop(k)
bad = 0
for f in sys.argv[2:]:
    got = {}
    shape(json.load(open(f)), '', got)
    for k, t in sorted(want.items()):
        if k not in got:
            print(f'FAIL: {f}: fio key {k} missing'); bad += 1
        elif got[k] != t:
            print(f'FAIL: {f}: {k} is {got[k]}, fio writes {t}'); bad += 1
print(f'{len(want)} fio keys checked in {len(sys.argv) - 2} files')
sys.exit(1 if bad else 0)
EOF

step "clat_ns.bins: fio's bin values, counts summing to N"
py pm.json log.json prim.json rec.json fio.json <<'EOF'
import json, sys
def idx_to_val(i):  # fio stat.c plat_idx_to_val, BITS 6, VAL 64
    if i < 128: return i
    eb = (i >> 6) - 1
    return (1 << (eb + 6)) + int((i % 64 + 0.5) * (1 << eb))
vals = {idx_to_val(i) for i in range(29 * 64)}
bad = 0
for f in sys.argv[1:]:
    for j in json.load(open(f))['jobs']:
        for d in ('read', 'write', 'trim'):
            c = j[d]['clat_ns']
            if c['N'] == 0:
                if 'bins' in c: print(f'FAIL: {f} {d}: bins with N=0'); bad += 1
                continue
            b = c['bins']
            if sum(b.values()) != c['N']:
                print(f'FAIL: {f} {d}: bins sum {sum(b.values())} != N {c["N"]}'); bad += 1
            odd = [k for k in b if int(k) not in vals]
            if odd:
                print(f'FAIL: {f} {d}: keys not fio bin values: {odd[:5]}'); bad += 1
            if not (int(min(b, key=int)) <= c['min'] * 1.02 + 1 and int(max(b, key=int)) >= c['max'] * 0.98):
                print(f'FAIL: {f} {d}: bins do not span min..max'); bad += 1
sys.exit(1 if bad else 0)
EOF

step "fio_jsonplus_clat2csv: a CSV with the right counts, and its own --validate"
fio_jsonplus_clat2csv pm.json pm.csv >clat2csv.txt 2>&1 || fail "fio_jsonplus_clat2csv: $(tail -3 clat2csv.txt)"
has clat2csv.txt "pm_job0.csv generated"
py pm.json pm_job0.csv <<'EOF'
import csv, json, sys
j = json.load(open(sys.argv[1]))['jobs'][0]
rows = list(csv.reader(open(sys.argv[2]), skipinitialspace=True))
head, body = rows[0], rows[1:]
bad = 0
for d in ('read', 'write'):
    col = head.index(f'{d}_clat_ns_count')
    n = sum(int(r[col]) for r in body if r[col].strip())
    if n != j[d]['clat_ns']['N'] or n == 0:
        print(f'FAIL: CSV {d} clat counts {n}, JSON N {j[d]["clat_ns"]["N"]}'); bad += 1
print(f'{len(body)} CSV rows')
sys.exit(1 if bad or len(body) < 2 else 0)
EOF
fio_jsonplus_clat2csv --validate pm.json pm.csv >validate.txt 2>&1 || fail "clat2csv --validate: $(tail -3 validate.txt)"

step "--output-format json: no bins; --json - is stdout, no file named '-'"
expect 0 "json to stdout" -- "$pmwal" bench io pm.dat --rw randread --size 16m --runtime 300ms \
	--output-format json
py out.txt <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))   # nothing but JSON on stdout
assert all('bins' not in j['read']['clat_ns'] for j in d['jobs']), 'bins in plain json'
EOF
expect 0 "--json -" -- "$pmwal" bench io pm.dat --rw randread --size 16m --runtime 300ms --json -
py out.txt <<'EOF'
import json, sys
json.load(open(sys.argv[1]))
EOF
[ -e ./- ] && fail "--json - wrote a file named '-'"
expect 0 "normal,json" -- "$pmwal" bench io pm.dat --rw randread --size 16m --runtime 300ms \
	--output-format normal,json
py out.txt <<'EOF'
import json, sys
json.load(open(sys.argv[1]))   # the table went to stderr
EOF
has err.txt "phase" "randread"
step "--output-format terse: fio's terse v3, field for field"
fio --name=ref --filename="$work/fio.dat" --size=16m --rw=randwrite --bs=4k \
	--runtime=300ms --time_based --output-format=terse >fio.terse 2>/dev/null ||
	fail "fio --output-format=terse ran"
expect 0 "terse" -- "$pmwal" bench io pm.dat --rw randwrite --size 16m --runtime 300ms \
	--output-format terse
py fio.terse out.txt <<'EOF'
import re, sys
def kind(v):
    for name, rx in (('int', r'-?\d+'), ('float', r'-?\d+\.\d{6}'), ('pct6', r'\d+\.\d{6}%'),
                     ('pct1', r'\d+\.\d%'), ('pct2', r'\d+\.\d\d%'),
                     ('percentile', r'(\d+\.\d{6}|0)%=\d+')):
        if re.fullmatch(rx, v):
            return name
    return 'text'
fio = open(sys.argv[1]).read().split('\n')[0].split(';')
lines = open(sys.argv[2]).read().splitlines()
assert len(lines) == 1, f'{len(lines)} lines on stdout'
pm = lines[0].split(';')
# fio appends 9 fields per disk (disk_util); pmwal has none
assert len(pm) == 121 and len(fio) >= 121, (len(pm), len(fio))
bad = [(i + 1, a, b) for i, (a, b) in enumerate(zip(fio, pm)) if kind(a) != kind(b)]
assert not bad, bad[:5]
assert pm[0] == '3' and int(pm[47]) > 0, pm[:50]   # write IOPS
EOF
expect 2 "terse and JSON on stdout" -- "$pmwal" bench io pm.dat --output-format terse,json
has err.txt "--json FILE"
expect 2 "bad format" -- "$pmwal" bench io pm.dat --output-format xml
has err.txt "xml" "normal, json, json+, terse"
expect 2 "lat log without a prefix" -- "$pmwal" bench io pm.dat --write_lat_log ''
has err.txt "write_lat_log" "prefix"
expect 2 "log_avg_msec 0" -- "$pmwal" bench io pm.dat --log_avg_msec 0
expect 2 "two intervals" -- "$pmwal" bench io pm.dat --log_avg_msec 100 --interval 1s
has err.txt "give one"

step "fio log files: fio's line format; fio2gnuplot plots them"
py pm.json pm_bw.1.log pm_iops.1.log <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))['jobs'][0]
for f, key in ((sys.argv[2], 'bw'), (sys.argv[3], 'iops')):
    lines = [l.split(',') for l in open(f)]
    assert len(lines) >= 16, f'{f}: {len(lines)} lines'
    assert all(len(l) == 5 for l in lines), f'{f}: not 5 fields'
    t = [int(l[0]) for l in lines]
    assert t == sorted(t) and t[0] == 100, f'{f}: times {t[:4]}'
    pts = j['pmwal']['series']['points']
    for d in (0, 1):
        v = [int(l[1]) for l in lines if int(l[2]) == d]
        name = 'read' if d == 0 else 'write'
        # one line per interval of the series, in fio's units
        want = [round(p[(3 if key == 'iops' else 1) + d] / (1 if key == 'iops' else 1024))
                for p in pts]
        assert len(v) == len(pts) and all(abs(a - b) <= 1 for a, b in zip(v, want)), \
            f'{f} {name}: {v[:5]} vs the series {want[:5]}'
        # bw_mean/iops_mean average the first *_samples of those intervals
        n = j[name][key + '_samples']
        mean = j[name][key + '_mean']
        assert 0 < n <= len(v) and abs(sum(v[:n]) / n - mean) <= 1, \
            f'{f} {name}: log mean {sum(v[:n]) / n} vs {key}_mean {mean}'
EOF
# The latency logs: lat and clat the interval's mean completion latency in ns
# (fio's unit), weighted by the interval's ops they give clat_ns.mean back;
# slat empty, as fio's is for a synchronous engine.
py pm.json pm_lat.1.log pm_clat.1.log pm_slat.1.log <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))['jobs'][0]
pts = j['pmwal']['series']['points']
assert open(sys.argv[4]).read() == '', 'slat log not empty'
for f in sys.argv[2:4]:
    lines = [[int(x) for x in l.split(',')] for l in open(f)]
    assert lines and all(len(l) == 5 for l in lines), f
    for d, name in ((0, 'read'), (1, 'write')):
        v = [l[1] for l in lines if l[2] == d]
        ops = [p[3 + d] for p in pts if p[3 + d] > 0]
        assert len(v) == len(ops), f'{f} {name}: {len(v)} lines, {len(ops)} intervals with I/O'
        if not v:
            continue
        mean = sum(a * b for a, b in zip(v, ops)) / sum(ops)
        want = j[name]['clat_ns']['mean']
        assert abs(mean - want) <= 0.01 * want + 2, f'{f} {name}: {mean} vs clat mean {want}'
EOF
mkdir plots && cp pm_bw.1.log plots/ && (cd plots && fio2gnuplot -p 'pm_bw*.log' -g -t pmwal >../gnuplot.txt 2>&1) ||
	fail "fio2gnuplot: $(tail -3 gnuplot.txt)"
ls plots/*.png >/dev/null 2>&1 || { fail "fio2gnuplot made no plot"; tail -5 gnuplot.txt; }
# fio_generate_plots draws the lat, clat, bw and iops logs it finds (it stops
# at the latency logs when there are none).
mkdir genplots && cp pm_*.1.log genplots/ &&
	(cd genplots && fio_generate_plots pmwal >../genplots.txt 2>&1) ||
	fail "fio_generate_plots: $(tail -3 genplots.txt)"
for k in lat clat bw iops; do
	[ -s "genplots/pmwal-$k.svg" ] || fail "fio_generate_plots drew no $k plot"
done

step "a fio-plot style parser: every key it reads, in every job"
py pm.json log.json prim.json rec.json <<'EOF'
import json, sys
bad = 0
for f in sys.argv[1:]:
    for j in json.load(open(f))['jobs']:
        try:
            o = j['job options']
            _ = (o['rw'], o['bs'], o['iodepth'], o['numjobs'], j['jobname'])
            for d in ('read', 'write'):
                r = j[d]
                _ = (r['iops'], r['iops_stddev'], r['bw'], r['bw_dev'], r['lat_ns']['mean'],
                     r['lat_ns']['stddev'], r['clat_ns']['mean'], r['runtime'])
            _ = (j['sync']['lat_ns']['N'], j['iodepth_level'], j['usr_cpu'], j['ctx'])
            # the latency buckets share out every I/O (fio writes a share
            # below 0.01% as 0.01, hence the slack)
            tot = sum(sum(j[u].values()) for u in ('latency_ns', 'latency_us', 'latency_ms'))
            ios = j['read']['total_ios'] + j['write']['total_ios']
            if ios and not 99.9 <= tot <= 100.5:
                print(f'FAIL: {f} job {j["jobname"]}: latency buckets sum to {tot}%'); bad += 1
        except KeyError as e:
            print(f'FAIL: {f} job {j.get("jobname")}: no {e}'); bad += 1
print('fio-plot keys present')
sys.exit(1 if bad else 0)
EOF

step "the pmwal block against its JSON Schema (schema_version)"
py "$schema" pm.json log.json prim.json rec.json <<'EOF'
import json, sys, jsonschema
s = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(s)
for f in sys.argv[2:]:
    d = json.load(open(f))
    jsonschema.validate(d, s)
    assert d['pmwal']['schema_version'] == 1
bad = json.load(open(sys.argv[2])); bad['pmwal']['schema_version'] = 'one'
try:
    jsonschema.validate(bad, s); sys.exit('schema accepts a wrong schema_version')
except jsonschema.ValidationError:
    pass
EOF

step "fio job files: --job runs each section as a job, fio's syntax and units"
cat >two.fio <<'EOF'
; two jobs on one file
# fio's comments, a global section, a bare boolean
[global]
filename=job.dat
size=8m
runtime=300ms
time_based
direct=1

[writer]
rw=randwrite
bs=4k
iodepth=4

[reader]
rw=randread
kb_base=1000
bs=4KiB
EOF
fio --parse-only two.fio >/dev/null 2>&1 || fail "fio itself does not parse two.fio"
expect 0 "--job two.fio" -- "$pmwal" bench io --job two.fio --json job.json
py job.json <<'EOF'
import json, sys
jobs = json.load(open(sys.argv[1]))['jobs']
assert [j['jobname'] for j in jobs] == ['writer', 'reader'], [j['jobname'] for j in jobs]
assert jobs[0]['job options']['rw'] == 'randwrite' and jobs[0]['write']['total_ios'] > 0
assert jobs[1]['job options']['bs'] == '4k', jobs[1]['job options']   # 4KiB, kb_base=1000
assert jobs[1]['read']['total_ios'] > 0 and jobs[0]['job options']['size'] == '8m'
EOF
# fio writes the [global] section at the top level, bare booleans left out
fio --output-format=json two.fio >fio-two.json 2>/dev/null || fail "fio ran two.fio"
py fio-two.json job.json <<'EOF'
import json, sys
# fio prints its notes on stdout before the JSON
fio, pm = (json.loads(t[t.index('{'):]) for t in (open(f).read() for f in sys.argv[1:]))
assert fio['global options'] == pm['global options'], (fio['global options'], pm['global options'])
EOF
# fio's default kb_base=1024: 4KiB is 4000 bytes, not a multiple of a sector.
printf '[j]\nfilename=job.dat\nrw=randread\nbs=4KiB\nsize=8m\nruntime=200ms\n' >kib.fio
expect 2 "4KiB under kb_base=1024" -- "$pmwal" bench io --job kib.fio
has err.txt "4000"
printf '[j]\nrw=randread\nverify=md5\n' >unknown.fio
expect 2 "unknown option" -- "$pmwal" bench io --job unknown.fio
has err.txt "unknown.fio:3" "'verify' is not supported"
printf '[j]\nsize=1.5g\n' >frac.fio
expect 2 "fractional size" -- "$pmwal" bench io --job frac.fio
has err.txt "frac.fio:2" "1.5g"
printf '; nothing\n[global]\nbs=4k\n' >nojob.fio
expect 2 "no job section" -- "$pmwal" bench io --job nojob.fio
has err.txt "no job section"
printf 'rw=read\n' >nosection.fio
expect 2 "option before a section" -- "$pmwal" bench io --job nosection.fio
expect 2 "missing job file" -- "$pmwal" bench io --job nosuch.fio
has err.txt "nosuch.fio"
head -c 4096 /dev/urandom >binary.fio
expect 2 "binary job file" -- "$pmwal" bench io --job binary.fio
printf '[j]\nioengine=libaio\n' >engine.fio
expect 2 "other engine" -- "$pmwal" bench io --job engine.fio
has err.txt "ioengine" "libaio"
expect 2 "--job with bench log" -- "$pmwal" bench log --job two.fio
expect 2 "--job with --sweep" -- "$pmwal" bench io --job two.fio --sweep iodepth=1,2
expect 2 "a directory as job file" -- "$pmwal" bench io --job "$work"
has err.txt "not a regular file"
mkfifo fifo.fio
expect 2 "a FIFO as job file (no hang)" -- timeout 20 "$pmwal" bench io --job fifo.fio
expect 2 "/dev/zero as job file" -- "$pmwal" bench io --job /dev/zero
for i in $(seq 65); do printf '[j%d]\n' "$i"; done >many.fio
expect 2 "65 jobs" -- "$pmwal" bench io --job many.fio
has err.txt "more than 64 jobs"
head -c 5000 /dev/zero | tr '\0' a | sed 's/^/[j]\nrw=/' >long.fio
expect 2 "a 5000-character line" -- "$pmwal" bench io --job long.fio
has err.txt "longer than"
expect 2 "log prefix in no directory" -- "$pmwal" bench io pm.dat --write_bw_log /nonexistent/p
has err.txt "/nonexistent"
[ -s out.txt ] && fail "a refused job file ran something: $(head -2 out.txt)"

step "a job file given as a target is refused, and left as it was"
sum=$(md5sum <two.fio)
expect 2 "job file as target" -- "$pmwal" bench io two.fio --rw randwrite --runtime 300ms
has err.txt "fio job file" "--job two.fio"
expect 2 "job file as log target" -- "$pmwal" bench log two.fio --runtime 300ms
[ "$(md5sum <two.fio)" = "$sum" ] || fail "two.fio was changed"

step "running twice: the same command succeeds; a user's file is not overwritten"
for i in 1 2; do
	expect 0 "run $i of the same write" -- "$pmwal" bench io again.dat --rw randwrite \
		--size 8m --runtime 200ms --quiet
done
expect 0 "--job twice" -- "$pmwal" bench io --job two.fio --quiet
head -c 1048576 /dev/urandom >user.dat
sum=$(md5sum <user.dat)
expect 2 "a user's file" -- "$pmwal" bench io user.dat --rw randwrite --size 1m --runtime 200ms
has err.txt "did not create" "--force"
[ "$(md5sum <user.dat)" = "$sum" ] || fail "user.dat was written"
expect 0 "a user's file, read" -- "$pmwal" bench io user.dat --rw randread --size 1m \
	--runtime 200ms --quiet
expect 0 "a user's file with --force" -- "$pmwal" bench io user.dat --rw randwrite --size 1m \
	--runtime 200ms --quiet --force
# a pmem: target is a file too
for i in 1 2; do
	expect 0 "run $i on a pmem file" -- "$pmwal" bench io "pmem:$shm.scratch" --rw write \
		--size 8m --runtime 200ms --quiet
done
head -c 1048576 /dev/urandom >"$shm.user"
sum=$(md5sum <"$shm.user")
expect 2 "a user's pmem file" -- "$pmwal" bench io "pmem:$shm.user" --rw write --runtime 200ms
has err.txt "did not create"
[ "$(md5sum <"$shm.user")" = "$sum" ] || fail "$shm.user was written"

finish bench_fio_compat
