#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ab.sh - one build of pmwal against another, the same benchmark rows run
# alternately (A, B, A, B, ...) so that a machine's drift favours neither,
# each row's median appends/s for both and the ratio B/A.
#
# usage: bench/ab.sh A/pmwal B/pmwal [ROUNDS] [SECONDS]
#   A, B:    two pmwal binaries (say main's and a change's: build each with
#            cmake -S . -B build/ab-X -DCMAKE_BUILD_TYPE=RelWithDebInfo)
#   ROUNDS:  runs per build and row (3); SECONDS: each run's length (3)
#   ROWS:    a space-separated subset of the rows below, by name (all)
# The flash rows run in $PMWAL_BENCH_DIR or the current directory (a disk
# filesystem: O_DIRECT); pmem and the fake PMR in /dev/shm (emulated: a
# tmpfs file through libpmem2). A ratio below 1 means B is slower. Read a
# ratio against the spread of its runs (min-max), printed beside it: on a
# shared or virtual machine a few percent is noise.
set -u
a=${1:?usage: ab.sh A/pmwal B/pmwal [ROUNDS] [SECONDS]}
b=${2:?usage: ab.sh A/pmwal B/pmwal [ROUNDS] [SECONDS]}
rounds=${3:-3}
secs=${4:-3}
for bin in "$a" "$b"; do
	[ -x "$bin" ] || { echo "ab.sh: $bin: not an executable pmwal" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "ab.sh needs python3 to read JSON" >&2; exit 2; }
dir=${PMWAL_BENCH_DIR:-.}
work=$(mktemp -d "$dir/pmwal-ab.XXXXXX") || exit 2
shm=$(mktemp -d /dev/shm/pmwal-ab.XXXXXX) || exit 2
trap 'rm -rf "$work" "$shm"' EXIT

# name | target | bench log options
all_rows=(
	"pmem-4k-t1|pmem:$shm/pmem|--record-size 4k --threads 1"
	"pmem-64b-t1|pmem:$shm/pmem|--record-size 64 --threads 1"
	"pmem-4k-t4|pmem:$shm/pmem|--record-size 4k --threads 4"
	"fakepmr-4k-t1|fakepmr:$shm/pmr|--record-size 4k --threads 1"
	"fakepmr-4k-t4|fakepmr:$shm/pmr|--record-size 4k --threads 4"
	"flash-4k-t1|$work/flash|--record-size 4k --threads 1"
)
want=" ${ROWS:-} "

# run BIN TARGET OPTS... : prints appends/s, or 0 when the run failed
run() {
	local bin=$1 target=$2; shift 2
	local out="$work/run.json"
	rm -f "$out" "${target#*:}"
	if ! "$bin" bench log "$target" "$@" --runtime "${secs}s" --capacity 256m \
		--no-primitives --quiet --force --json "$out" >"$work/run.log" 2>&1; then
		echo "ab.sh: $bin bench log $target $* failed:" >&2
		tail -3 "$work/run.log" >&2
		echo 0
		return
	fi
	python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['jobs'][0]['write']['iops'])" "$out"
}

printf '%-16s %14s %14s %7s   %s\n' row "A appends/s" "B appends/s" "B/A" "spread A; B"
for r in "${all_rows[@]}"; do
	IFS='|' read -r name target opts <<<"$r"
	[ "$want" = "  " ] || [[ $want == *" $name "* ]] || continue
	va=() vb=()
	for ((i = 0; i < rounds; i++)); do
		# shellcheck disable=SC2086 # opts is a list of options
		va+=("$(run "$a" "$target" $opts)")
		# shellcheck disable=SC2086
		vb+=("$(run "$b" "$target" $opts)")
	done
	python3 - "$name" "${va[*]}" "${vb[*]}" <<'EOF'
import statistics, sys
name, a, b = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
ma, mb = statistics.median(a), statistics.median(b)
ratio = "%.3f" % (mb / ma) if ma else "n/a"
spread = "%.0f-%.0f; %.0f-%.0f" % (min(a), max(a), min(b), max(b))
print("%-16s %14.0f %14.0f %7s   %s" % (name, ma, mb, ratio, spread))
EOF
done
