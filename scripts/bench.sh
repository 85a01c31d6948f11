#!/usr/bin/env bash
# The main job: builds pmwal and runs `pmwal bench` with no arguments, the
# default suite on embedded targets (an emulated PMR region in /dev/shm and a
# file on the local disk as flash). Extra arguments go to `pmwal bench`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh bench
# Its own build folder: the test command configures build/release with tests.
cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPMWAL_TESTS=OFF >/dev/null
cmake --build build/bench -j "$(nproc)" >/dev/null
exec build/bench/cli/pmwal bench "$@"
