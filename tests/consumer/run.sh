#!/usr/bin/env bash
# Installs the build into a temporary prefix, builds tests/consumer against it
# with find_package(pmwal), checks pkg-config, and runs the consumer.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/build" >/dev/null
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$(echo "$tmp"/prefix/lib/*/pkgconfig)" \
	pkg-config --exists pmwal
nm -D --defined-only "$tmp"/prefix/lib*/libpmwal.so* "$tmp"/prefix/lib/*/libpmwal.so* 2>/dev/null |
	awk '$2 ~ /[TDB]/ {print $3}' | sort -u >"$tmp/syms"
if grep -v '^pmwal_' "$tmp/syms" | grep -v '^PMWAL_' | grep -q .; then
	echo "exported symbols without the pmwal_ prefix:"; grep -v '^pmwal_' "$tmp/syms"; exit 1
fi
LD_LIBRARY_PATH="$tmp/prefix/lib:$(echo "$tmp"/prefix/lib/*)" "$tmp/build/consumer" "$tmp/log"
