#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench_smoke.sh - CI smoke of `pmwal bench` and `pmwal report`: a short run
# of every workload (io, log, recovery, primitives, dual, sweep, compare, the
# default suite), the bad-input exits, Ctrl-C writing partial results, and a
# headless chromium screenshot of the HTML report (skipped, with the reason,
# where chromium is not installed). About a minute on two cores.
# usage: bench_smoke.sh PATH/TO/pmwal
set -u
pmwal=${1:?usage: bench_smoke.sh PATH/TO/pmwal}
pmwal=$(cd "$(dirname "$pmwal")" && pwd)/$(basename "$pmwal")
# A disk filesystem: O_DIRECT is refused on tmpfs.
work=$(mktemp -d /var/tmp/pmwal-bench-smoke.XXXXXX)
# The default pmem and PMR targets in a directory of this run's own: another
# run at the same time (or a user's bench) keeps its files.
PMWAL_BENCH_SHM=$(mktemp -d /dev/shm/pmwal-smoke-XXXXXX) || exit 1
export PMWAL_BENCH_SHM
trap 'rm -rf "$work" "$PMWAL_BENCH_SHM"; rm -f /dev/shm/pmwal-smoke-pmr.wal*' EXIT
cd "$work" || exit 1
fails=0

step() { printf '== %s\n' "$*"; }
fail() { printf 'FAIL: %s\n' "$*"; fails=$((fails + 1)); }
expect() { # expect STATUS DESCRIPTION -- command...
	local want=$1 what=$2; shift 3
	"$@" >"$work/out.txt" 2>&1
	local got=$?
	if [ "$got" != "$want" ]; then
		fail "$what: exit $got, expected $want"
		sed 's/^/   | /' "$work/out.txt" | tail -20
	fi
}
has() { # has FILE STRING...: every string occurs in FILE
	local f=$1; shift
	for s in "$@"; do
		grep -q -- "$s" "$f" || fail "$f lacks $s"
	done
}

step "bench io: randrw 50/50 on a file, fio-shaped JSON"
expect 0 "bench io" -- "$pmwal" bench io io.dat --rw randrw --bs 4k --iodepth 16 \
	--size 64m --runtime 2s --ramp 200ms --json io.json --csv csv
if grep -q "refused" out.txt; then
	echo "SKIP: io_uring or O_DIRECT refused here: $(grep refused out.txt)"
	exit 77
fi
has io.json '"jobs"' '"read"' '"write"' '"iops"' '"bw_bytes"' '"io_bytes"' \
	'"clat_ns"' '"50.000000"' '"99.990000"' '"fio_command"' '"series"' '"environment"'
has csv/jobs.csv "randrw50"
has csv/series.csv "randrw50"

step "bench io: percentage rate cap (write 20% of its measured maximum)"
expect 0 "rate cap" -- "$pmwal" bench io io.dat --rw randrw --size 64m --runtime 1s \
	--rate-write 20% --json cap.json
has cap.json '"rate_calibration"' '"cap_bw_bytes"'

step "bench io: iodepth sweep"
expect 0 "sweep" -- "$pmwal" bench io io.dat --rw randread --size 64m --runtime 500ms \
	--sweep iodepth=1,4..16 --json sweep.json
has sweep.json '"sweep"' '"iodepth"'

step "bench io: emulated pmem region"
expect 0 "pmem io" -- "$pmwal" bench io pmem --rw write --bs 4k --iodepth 1 --size 64m \
	--runtime 1s --json pmem.json
has pmem.json '"emulated": true' 'libpmem'

step "bench log: flash 4 threads, pmem 1 thread, buffered commit"
expect 0 "log flash" -- "$pmwal" bench log flash --threads 4 --runtime 2s --prim-time 200ms --json log.json
has log.json "\"appends_per_s\"" "\"records_per_group\"" "\"durability\"" "fdatasync"
expect 0 "log pmem" -- "$pmwal" bench log pmem --runtime 1s --prim-time 200ms
expect 0 "log buffered" -- "$pmwal" bench log flash --commit buffered --group-window-us 100 --no-primitives \
	--runtime 1s
expect 0 "log record sweep" -- "$pmwal" bench log flash --sweep record=512,4k --runtime 500ms --no-primitives
expect 0 "log outstanding" -- "$pmwal" bench log flash --commit buffered --outstanding 64 \
	--no-primitives --runtime 500ms --json out64.json
has out64.json '"outstanding": 64' 'qd=64'
expect 2 "outstanding needs buffered" -- "$pmwal" bench log flash --outstanding 64 --runtime 500ms
has out.txt "needs --commit buffered"

step "bench primitives: pg_test_fsync's list on a file, drain and PMR barrier on regions"
expect 0 "primitives" -- "$pmwal" bench primitives flash --prim-time 40ms --json prim.json
has prim.json "4K write, no sync" "4K write + fdatasync" "4K write + fsync" "4K O_DSYNC write" \
	"4K O_SYNC write" "4K RWF_DSYNC write" "8K write + fdatasync" "2 x 4K writes + fsync" \
	"2 x 8K O_DSYNC writes" "4 x 4K O_SYNC writes" "16K O_SYNC write" '"99.900000"'
grep -q "16 x 1K O_SYNC writes" prim.json || grep -q "16 x 1K O_SYNC writes' left out" out.txt ||
	fail "16 x 1K O_SYNC writes neither measured nor said to be left out"
expect 0 "primitives pmr" -- "$pmwal" bench primitives pmr --prim-time 40ms --json primpmr.json
has primpmr.json "barrier alone" "4K nt-copy + barrier" "4K nt-copy, no barrier" "PMRSTS" \
	"16 x 1K nt-copies + barrier" "emulated PMR"
expect 0 "primitives pmem" -- "$pmwal" bench primitives pmem --prim-time 40ms --json primpmem.json
has primpmem.json "barrier alone" "drain"

step "running twice: a run owns what it creates, a killed run's files too, not the user's"
expect 0 "log on a new file" -- "$pmwal" bench log twice.wal --runtime 300ms --prim-time 50ms
expect 0 "the same command again" -- "$pmwal" bench log twice.wal --runtime 300ms --prim-time 50ms
expect 0 "log on a new fake PMR" -- "$pmwal" bench log fakepmr:/dev/shm/pmwal-smoke-pmr.wal --runtime 300ms --prim-time 50ms
expect 0 "the same fake PMR again" -- "$pmwal" bench log fakepmr:/dev/shm/pmwal-smoke-pmr.wal --runtime 300ms --prim-time 50ms
rm -f /dev/shm/pmwal-smoke-pmr.wal /dev/shm/pmwal-smoke-pmr.wal.pmwal-bench
"$pmwal" bench log killed.wal --runtime 30s --no-primitives --quiet >/dev/null 2>&1 &
pid=$!
sleep 1.5
kill -KILL "$pid"
wait "$pid" 2>/dev/null
expect 0 "after a killed run" -- "$pmwal" bench log killed.wal --runtime 300ms --no-primitives
cp killed.wal users.wal # a copy bench did not create: the user's log
rm -f users.wal.pmwal-bench
expect 2 "a log bench did not create" -- "$pmwal" bench log users.wal --runtime 300ms --no-primitives
has out.txt "holds a pmwal log" "--force"
expect 2 "a refused log run" -- "$pmwal" bench log refused.wal --outstanding 64 --runtime 300ms
[ ! -e refused.wal ] || fail "a refused run left the file it created"

step "bench io --until-full: the whole target once, refused where it must be"
expect 0 "until full" -- "$pmwal" bench io full.dat --rw write --bs 128k --iodepth 8 --size 64m \
	--interval 20ms --until-full --json full.json
has full.json '"until_full": true' "until full" '"series"'
expect 0 "until full again, the file's size" -- "$pmwal" bench io full.dat --rw write --bs 128k --until-full
expect 2 "until full reading" -- "$pmwal" bench io full.dat --rw read --until-full
has out.txt "--rw write"
expect 2 "until full, new file, no size" -- "$pmwal" bench io new-full.dat --rw write --until-full
has out.txt "give --size"
[ ! -e new-full.dat ] || fail "a refused --until-full left new-full.dat"
if [ -b /dev/vda ] || [ -b /dev/sda ]; then
	dev=$([ -b /dev/vda ] && echo /dev/vda || echo /dev/sda)
	expect 2 "until full on a device without --force" -- "$pmwal" bench io "$dev" --rw write --until-full
	has out.txt "--force"
fi

step "bench primitives and recovery"
expect 0 "recovery" -- "$pmwal" bench recovery flash --size 32m --json rec.json
has rec.json '"s_per_gib"' '"verdict": "clean"'

step "bench dual: writer and reader at once, and each alone"
expect 0 "dual" -- "$pmwal" bench dual io.dat --rw write --bs 128k --iodepth 4 --size 64m \
	--runtime 1s --b "rw=read" --json dual.json
has dual.json "c0 alone" "c1 shared" "sum of clients"

step "bench compare: flash, PMR and pmem with ratios to flash; two targets"
expect 0 "compare" -- "$pmwal" bench compare --runtime 200ms --prim-time 50ms --size 32m --json cmp.json
has cmp.json '"compare"' '"ops_ratio"' '"rate_ratio"' '"targets"' "durable 4K write" \
	"randrw50 bs=4k qd=32" '"s/GiB"' '"pmr"'
has out.txt "C=pmem" "recovery (GiB/s; s/GiB)"
# The durable row takes a durable write: never the no-sync or no-barrier baseline.
if grep -A40 '"workload": "durable 4K write' cmp.json | grep -q 'no barrier\|no sync'; then
	fail "compare's durable 4K write row took a baseline that makes nothing durable"
fi
expect 2 "compare four" -- "$pmwal" bench compare flash pmem pmr flash
has out.txt "two or three targets"

step "default suite (--quick) with the report"
expect 0 "suite" -- "$pmwal" bench --quick -o rep
has rep/result.json "emulated PMR" "fakepmr:" "until full" "randwrite sweep iodepth" "randrw sweep iodepth"
has rep/index.html "<svg" "EMULATED" "Latency distributions" "IOPS and p99 over time" "latency CDF" "latency histogram" "emulated PMR" "x[0-9]"
[ -s rep/result.json ] && [ -s rep/jobs.csv ] || fail "suite report files missing"

step "pmwal report over several results"
expect 0 "report" -- "$pmwal" report rep/result.json io.json pmem.json -o rep2
has rep2/index.html "<svg" "Targets side by side"

step "bench log --followers: alone and with 2 followers, lag, each record delivered once"
expect 0 "bench log followers" -- "$pmwal" bench log pmem --followers 2 --runtime 1s --ramp 200ms --no-primitives --json fol.json
has fol.json '"verified": true' '"lag_us"' '"ratio"' '"delivered_before_ack"' '"skipped_behind_release"'
expect 0 "bench log followers, held" -- "$pmwal" bench log pmem --followers 1 --follower-hold --capacity 4m --runtime 1s --ramp 200ms --no-primitives --json hold.json
has hold.json '"verified": true' '"releases_held_back"' '"hold": true'
expect 2 "bench log --followers 17" -- "$pmwal" bench log pmem --followers 17
has out.txt "followers"

step "bad input exits 2 with a message"
expect 2 "bad bs" -- "$pmwal" bench io io.dat --bs 4x
has out.txt "not a size"
expect 2 "bad mode" -- "$pmwal" bench sideways
expect 2 "missing device" -- "$pmwal" bench io /dev/pmwal-smoke-missing --runtime 1s
has out.txt "no such device"
expect 2 "size beyond the disk" -- "$pmwal" bench io big.dat --size 100t --runtime 1s
has out.txt "larger than"
# tmpfs takes O_DIRECT since Linux 6.6: refused with the hint before, measured after
if python3 -c 'import os; os.close(os.open("/dev/shm/pmwal-smoke.dat", os.O_CREAT | os.O_RDWR | os.O_DIRECT))' 2>/dev/null; then
	rm -f /dev/shm/pmwal-smoke.dat
	expect 0 "O_DIRECT on tmpfs (taken here)" -- "$pmwal" bench io /dev/shm/pmwal-smoke.dat --size 1m --runtime 100ms
else
	rm -f /dev/shm/pmwal-smoke.dat
	expect 2 "O_DIRECT on tmpfs" -- "$pmwal" bench io /dev/shm/pmwal-smoke.dat --size 1m --runtime 1s
	has out.txt "O_DIRECT" "--direct=0"
fi
rm -f /dev/shm/pmwal-smoke.dat
expect 2 "report of nothing" -- "$pmwal" report
dd if=/dev/zero of=fs.img bs=1M count=4 status=none
printf '\x53\xef' | dd of=fs.img bs=1 seek=1080 conv=notrunc status=none
expect 2 "filesystem magic" -- "$pmwal" bench io fs.img --rw write --runtime 1s
has out.txt "ext2/3/4" "--force"

step "Ctrl-C stops the run and still writes the results"
"$pmwal" bench io io.dat --rw randread --size 64m --runtime 30s --json int.json \
	>int.txt 2>&1 &
pid=$!
sleep 2
kill -INT "$pid"
wait "$pid"
st=$?
[ "$st" = 1 ] || fail "interrupted run exit $st, expected 1"
has int.json '"interrupted": true' '"iops"'

step "headless chromium renders the report"
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ]; then
	echo "SKIP: chromium is not installed (apt-get install chromium); screenshot not checked"
else
	# Two widths: a wide screen (charts side by side) and a narrow one.
	for w in 1400,2400 820,2400; do
		png=$work/report-${w%,*}.png
		timeout 120 "$chrome" --headless --no-sandbox --disable-gpu \
			--disable-background-networking --disable-component-update --disable-sync \
			--no-first-run --user-data-dir="$(mktemp -d -p "$work")" --window-size=$w \
			--screenshot="$png" "file://$work/rep/index.html" >chrome.txt 2>&1
		size=$(stat -c %s "$png" 2>/dev/null || echo 0)
		[ "$size" -gt 20000 ] || fail "screenshot at ${w%,*} px missing or blank ($size bytes)"
		echo "screenshot at ${w%,*} px: $size bytes"
		[ -n "${PMWAL_SMOKE_SHOTS:-}" ] && cp "$png" "$PMWAL_SMOKE_SHOTS/"
	done
fi

if [ "$fails" -gt 0 ]; then
	echo "bench_smoke: $fails failure(s)"
	exit 1
fi
echo "bench_smoke: all passed"
