#!/usr/bin/env bash
# Installs the build into a temporary prefix, moves the prefix elsewhere (a
# package is relocatable), and builds tests/consumer/main.c against it four
# ways: CMake find_package(pmwal) with the shared and with the static library,
# and pkg-config with each. Checks the exported symbols and runs every build.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d /var/tmp/pmwal-consumer-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/installed" >/dev/null
mv "$tmp/installed" "$tmp/prefix" # nothing may remember where it was installed
so=$(find "$tmp/prefix" -name 'libpmwal.so.*.*' | head -n 1)
libdir=$(dirname "$so")
export PKG_CONFIG_PATH="$libdir/pkgconfig"
bad=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBR]$/ {print $3}' | grep -v '^pmwal_' || true)
if [ -n "$bad" ]; then
	echo "exported symbols without the pmwal_ prefix:"; echo "$bad"; exit 1
fi
# A sanitizer build of the library needs its runtime, loaded first.
# (Not `ldd | grep -q`: grep quitting early can kill ldd with SIGPIPE, and
# under pipefail the test then read "no sanitizer" and failed by chance.)
preload= san=()
deps=$(ldd "$so")
if grep -q libasan <<<"$deps"; then
	preload=$(gcc -print-file-name=libasan.so)
	san=(-fsanitize=address,undefined)
fi
run() { # run NAME BINARY
	ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$preload" LD_LIBRARY_PATH="$libdir" \
		"$2" "$tmp/log-$1" >"$tmp/out" 2>&1 || { echo "consumer ($1) failed:"; cat "$tmp/out"; exit 1; }
	echo "installed_consumer: $1: $(cat "$tmp/out")"
}
# pkg-config finds the moved prefix, and names only what is needed.
pkg-config --exists pmwal
inc=$(pkg-config --variable=includedir pmwal)
[ -f "$inc/pmwal.h" ] || { echo "pkg-config's includedir $inc has no pmwal.h"; exit 1; }
for lib in -luring -lpmem2 -lxxhash; do
	pkg-config --libs --static pmwal | grep -q -- "$lib" ||
		{ echo "pmwal.pc's static link lacks $lib"; exit 1; }
done
# CMake: shared and static.
cmake -S "$src" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
	-DCMAKE_C_FLAGS="${san[*]:-}" -DCMAKE_EXE_LINKER_FLAGS="${san[*]:-}" >/dev/null
cmake --build "$tmp/build" >/dev/null
run cmake-shared "$tmp/build/consumer"
run cmake-static "$tmp/build/consumer_static"
# pkg-config: shared, and static (the archive, and what Requires.private adds).
gcc "${san[@]}" -o "$tmp/pc_shared" "$src/main.c" $(pkg-config --cflags --libs pmwal)
run pkg-config-shared "$tmp/pc_shared"
gcc "${san[@]}" -o "$tmp/pc_static" "$src/main.c" $(pkg-config --cflags pmwal) \
	-Wl,-Bstatic -lpmwal -Wl,-Bdynamic $(pkg-config --libs --static pmwal | sed 's/-lpmwal//')
if ldd "$tmp/pc_static" | grep -q libpmwal; then
	echo "the static consumer links libpmwal.so"; exit 1
fi
run pkg-config-static "$tmp/pc_static"
