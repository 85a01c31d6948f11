#!/usr/bin/env bash
# Installs the build into a temporary prefix, builds tests/consumer against it
# with find_package(pmwal), checks pkg-config and the exported symbols, and
# runs the consumer.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d /var/tmp/pmwal-consumer-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/build" >/dev/null
so=$(find "$tmp/prefix" -name 'libpmwal.so.*.*' | head -n 1)
libdir=$(dirname "$so")
PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --exists pmwal
bad=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBR]$/ {print $3}' | grep -v '^pmwal_' || true)
if [ -n "$bad" ]; then
	echo "exported symbols without the pmwal_ prefix:"; echo "$bad"; exit 1
fi
# A sanitizer build of the library needs its runtime loaded first.
# (Not `ldd | grep -q`: grep quitting early can kill ldd with SIGPIPE, and
# under pipefail the test then read "no sanitizer" and failed by chance.)
preload=
deps=$(ldd "$so")
if grep -q libasan <<<"$deps"; then
	preload=$(gcc -print-file-name=libasan.so)
fi
ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$preload" LD_LIBRARY_PATH="$libdir" "$tmp/build/consumer" "$tmp/log"
