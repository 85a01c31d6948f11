#!/usr/bin/env bash
# Proves the harness: builds pmwal once per deliberately broken behaviour of
# wal/seeded.h (cmake -DPMWAL_SEEDED_BUG=NAME), runs every test lane against
# it and prints which lanes caught it. A bug no lane catches is a hole in the
# harness, not in the build: the script exits 1 then.
#
#   bash scripts/seeded-bugs.sh            # all of them (about 5 min each on 2 cores)
#   bash scripts/seeded-bugs.sh ACK_BEFORE_FLUSH HEAD_UNCHECKED
#   LANES="unit crashtest" bash scripts/seeded-bugs.sh
#
# Lanes (CTest names, so a lane is exactly what CI runs):
#   unit      the Criterion suites of the format, the engine, attacks, locks, media
#   recovery  test_recovery (crash images of the simulated device, damage)
#   fuzz      the fuzz corpora replayed (test_fuzz)
#   cli       the CLI round trips and attacks
#   crashtest the bounded `pmwal crashtest` campaigns (exhaustive, random, faults, kill)
#   stress    many threads on each medium
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
jobs=$(nproc)
bugs=("$@")
if [ ${#bugs[@]} -eq 0 ]; then
	mapfile -t bugs < <(sed -n 's/^#define PMWAL_BUG_\([A-Z_]*\)[[:space:]].*/\1/p' wal/seeded.h)
fi
read -r -a lanes <<<"${LANES:-unit recovery fuzz cli crashtest stress}"
declare -A lane_re=(
	[unit]='^(test_format|test_attack|test_lock|test_wal|test_follow|test_fakepmr|test_pmr_crash|test_sim)$'
	[recovery]='^test_recovery$'
	[fuzz]='^test_fuzz$'
	[cli]='^cli_'
	[crashtest]='^crashtest_'
	[stress]='^stress_threads$'
)
mkdir -p "$root/build/seeded"
caught_all=0
results=()
for bug in "${bugs[@]}"; do
	if ! grep -q "^#define PMWAL_BUG_${bug}[[:space:]]" wal/seeded.h; then
		echo "seeded-bugs: no bug named '$bug' in wal/seeded.h" >&2
		exit 2
	fi
	dir=$root/build/seeded/$bug
	echo "== $bug: building in $dir"
	if ! cmake -S . -B "$dir" -DPMWAL_TESTS=ON -DPMWAL_SEEDED_BUG="$bug" \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$dir.cmake.log" 2>&1 ||
		! cmake --build "$dir" -j "$jobs" >"$dir.build.log" 2>&1; then
		echo "seeded-bugs: $bug does not build (see $dir.build.log)" >&2
		exit 1
	fi
	by=()
	for lane in "${lanes[@]}"; do
		re=${lane_re[$lane]:-}
		if [ -z "$re" ]; then
			echo "seeded-bugs: unknown lane '$lane'" >&2
			exit 2
		fi
		n=$(cd "$dir" && ctest -N -R "$re" | sed -n 's/^Total Tests: //p')
		if [ "${n:-0}" -eq 0 ]; then
			echo "   $lane: no tests"
			continue
		fi
		t0=$SECONDS
		if (cd "$dir" && ctest -R "$re" -j "$jobs" --timeout 300 \
			>"$dir.$lane.log" 2>&1); then
			echo "   $lane: passed (missed it) in $((SECONDS - t0)) s"
		else
			failed=$(sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\).*/\1/p' "$dir.$lane.log" |
				tr '\n' ' ')
			echo "   $lane: CAUGHT in $((SECONDS - t0)) s by ${failed% }"
			by+=("$lane")
		fi
	done
	if [ ${#by[@]} -eq 0 ]; then
		results+=("$(printf '%-24s MISSED' "$bug")")
		caught_all=1
	else
		results+=("$(printf '%-24s caught by %s' "$bug" "${by[*]}")")
	fi
done
echo
echo "seeded bugs, by lane (lanes run: ${lanes[*]}):"
printf '  %s\n' "${results[@]}"
n_caught=$(printf '%s\n' "${results[@]}" | grep -c 'caught by')
echo "seeded bugs: $n_caught of ${#bugs[@]} caught"
exit $caught_all
