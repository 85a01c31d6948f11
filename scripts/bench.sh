#!/usr/bin/env bash
# The main job: builds pmwal and runs `pmwal bench` with no arguments, the
# default suite on its built-in targets (a file on the local disk as flash,
# and an emulated pmem region and an emulated PMR in /dev/shm), in the
# directory it was started from (or $PMWAL_BENCH_DIR): the test file and
# ./pmwal-report/ go there. Extra arguments go to `pmwal bench`.
set -euo pipefail
here=$PWD
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/deps.sh bench
# Its own build folder: the test command configures build/release with tests.
cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMWAL_TESTS=OFF >/dev/null
cmake --build build/bench -j "$(nproc)" >/dev/null
cd "$here"
exec "$root/build/bench/cli/pmwal" bench "$@"
