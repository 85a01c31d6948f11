#!/usr/bin/env bash
# Builds pmwal twice (release with -Werror, and ASan+UBSan) and runs every test
# in both: Criterion suites, CLI round trips, the installed-package consumer,
# the benchmark smoke. Installs missing Debian packages first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh test
jobs=$(nproc)
run() { # run BUILD_DIR CMAKE_ARGS... [-R CTEST_REGEX]
	local dir=$1; shift
	local args=() filter=()
	while [ $# -gt 0 ]; do
		if [ "$1" = -R ]; then filter=(-R "$2"); shift 2; else args+=("$1"); shift; fi
	done
	cmake -S . -B "$dir" -DPMWAL_WERROR=ON -DPMWAL_TESTS=ON "${args[@]}" >/dev/null
	cmake --build "$dir" -j "$jobs" >/dev/null
	local rc=0
	(cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 1200 "${filter[@]}") || rc=$?
	# A test skipped says why (a SKIP: line in its output): the reason is
	# part of the summary, not only a count.
	awk '/^[0-9]+\/[0-9]+ Testing: /{t=$3} /^SKIP: /{print "skipped " t ": " substr($0, 7)}' \
		"$dir/Testing/Temporary/LastTest.log" 2>/dev/null | sort -u
	return $rc
}
status=0
echo "== release build (-Werror)"
run build/release -DCMAKE_BUILD_TYPE=RelWithDebInfo || status=1
echo "== ASan+UBSan build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run build/asan -DCMAKE_BUILD_TYPE=Debug -DPMWAL_SANITIZE=ON || status=1
# ThreadSanitizer: the concurrency tests (Criterion's runner cannot start
# under TSan; stress_threads and pmwal crashtest are plain programs): many
# appender threads on each medium with follower threads reading live, the
# random crash campaign's threaded rounds with async appends and callbacks,
# the takeover campaign's processes, the example store's writer threads, and
# the replicated store's nodes (libpmwal-raft hands pmwal's committer-thread
# callbacks to the libuv loop) under SIGKILL.
echo "== ThreadSanitizer build (stress_threads, crashtest_random, crashtest_inflight, crashtest_takeover, kv_threads, raftkv_cluster)"
TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/tests/tsan.supp" \
	run build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMWAL_TSAN=ON \
	-R '^(stress_threads|crashtest_random|crashtest_inflight|crashtest_takeover|kv_threads|raftkv_cluster)$' || status=1
exit $status
