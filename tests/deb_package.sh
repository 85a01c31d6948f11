#!/usr/bin/env bash
# The Debian packages (debian/): builds them from a copy of the source tree
# (the tree itself is left as it was), checks them with lintian, installs
# them, and then uses what was installed, not the build tree: builds
# tests/consumer against /usr with CMake find_package(pmwal) and with
# pkg-config (shared and static), runs /usr/bin/pmwal on a log, and finds the
# manual pages with man -w. Purges the packages at the end, and whatever
# their installation newly installed, so that the machine is left as it was.
# Needs root (it installs packages); skips, exit 77, without root or the
# packaging tools (scripts/deps.sh test installs them), or where pmwal's
# packages are installed already (they are not ours to remove).
set -euo pipefail
src=$(cd "$1" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "deb_package installs packages: run it as root"
for tool in dpkg-buildpackage dh lintian apt-get man pkg-config gcc cmake; do
	command -v "$tool" >/dev/null ||
		skip "$tool is missing: bash scripts/deps.sh test installs the packaging tools"
done
pkgs=(libpmwal0 libpmwal-dev pmwal)
installed() { dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null | grep -qx installed; }
for p in "${pkgs[@]}"; do
	installed "$p" && skip "$p is installed already; remove it (apt-get purge ${pkgs[*]}) to run this test"
done

tmp=$(mktemp -d /var/tmp/pmwal-deb-XXXXXX)
# What the test installs, and so purges: pmwal's packages, and those their
# installation would newly install (step 5 finds them).
ours=$tmp/ours
printf '%s\n' "${pkgs[@]}" >"$ours"
cleanup() {
	local rc=$? p purge=()
	while read -r p; do installed "$p" && purge+=("$p"); done <"$ours"
	if [ ${#purge[@]} -gt 0 ]; then
		DEBIAN_FRONTEND=noninteractive timeout 120 apt-get purge -y -qq \
			-o DPkg::Lock::Timeout=60 "${purge[@]}" >"$tmp/purge.log" 2>&1 ||
			{ echo "deb_package: purging ${purge[*]} failed:"; cat "$tmp/purge.log"; rc=1; }
	fi
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. A copy of the tree: what git tracks plus new files it does not ignore
# (so that uncommitted work is what gets packaged), or without git
# everything but build directories.
mkdir "$tmp/src"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$src" ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			# Deleted but not yet committed: not part of the tree.
			if [ -e "$src/$f" ] || [ -L "$src/$f" ]; then printf '%s\0' "$f"; fi
		done | (cd "$src" && cpio -0 -pdm --quiet "$tmp/src")
else
	tar -C "$src" --exclude=./.git --exclude='./build*' --exclude='./obj-*' -cf - . |
		tar -C "$tmp/src" -xf -
fi

# 2. The changelog's version is the one the build gives the library.
project_version=$(sed -n 's/^project(pmwal VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
deb_version=$(cd "$tmp/src" && dpkg-parsechangelog -S Version)
upstream=${deb_version#*:}
upstream=${upstream%-*}
[ "$upstream" = "$project_version" ] ||
	fail "debian/changelog says $deb_version, CMakeLists.txt's project() $project_version: add a changelog entry (dch -v $project_version)"

# The build dependencies are what scripts/deps.sh build installs (less
# build-essential's gcc and make): an optional library missing from them
# (libnvme) would quietly be left out of the packages.
build_deps=$(awk '/^Build-Depends:/ {on = 1; sub(/^Build-Depends:/, ""); print; next}
	on && /^[ \t]/ {print; next} {on = 0}' "$src/debian/control" | tr ',' '\n' |
	awk '{print $1}')
# shellcheck disable=SC2013 # the list is words on one line
for p in $(sed -n 's/^build=(\(.*\))$/\1/p' "$src/scripts/deps.sh"); do
	case "$p" in gcc | make) continue ;; esac
	grep -qx "$p" <<<"$build_deps" ||
		fail "scripts/deps.sh build installs $p, debian/control's Build-Depends lacks it"
done

# 3. Build the packages: the test suites are CI's lanes, not the build's.
echo "deb_package: building $deb_version in $tmp"
SECONDS=0
(cd "$tmp/src" && DEB_BUILD_OPTIONS=nocheck timeout 420 dpkg-buildpackage -us -uc -b) \
	>"$tmp/build.log" 2>&1 || { tail -n 60 "$tmp/build.log"; fail "dpkg-buildpackage failed (above)"; }
echo "deb_package: built in $SECONDS s"
cd "$tmp"
debs=()
for p in "${pkgs[@]}"; do
	f=$(ls "${p}_${deb_version}_"*.deb 2>/dev/null || true)
	[ -n "$f" ] || fail "no ${p}_${deb_version}_*.deb was built"
	debs+=("./$f")
done
changes=$(ls pmwal_"$deb_version"_*.changes)

# 4. lintian: no errors; warnings are shown.
timeout 120 lintian --fail-on error --tag-display-limit 0 "$changes" >lintian.log 2>&1 ||
	{ cat lintian.log; fail "lintian reports errors (E: above)"; }
grep -E '^[EWIP]: ' lintian.log | sed 's/^/deb_package: lintian: /' || true

# 5. Install; the man pages even where dpkg is told to leave them out.
# Packages installed new for them (none where the build dependencies are
# installed, as they are here) are purged with them; upgraded ones are not.
apt_install=(apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=60
	-o DPkg::Options::=--path-include=/usr/share/man/* "${debs[@]}")
timeout 120 "${apt_install[@]}" -s >install.log 2>&1 || { cat install.log; fail "apt-get install -s ${debs[*]} failed"; }
awk '$1 == "Inst" && $3 !~ /^\[/ {print $2}' install.log >>"$ours"
DEBIAN_FRONTEND=noninteractive timeout 120 "${apt_install[@]}" >install.log 2>&1 ||
	{ cat install.log; fail "apt-get install ${debs[*]} failed"; }
for p in "${pkgs[@]}"; do
	installed "$p" || fail "$p is not installed after apt-get install"
done

# From here on, nothing may come from the build: only what is installed.
unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR CMAKE_PREFIX_PATH LD_LIBRARY_PATH LIBRARY_PATH \
	CPATH C_INCLUDE_PATH MANPATH
rm -rf "$tmp/src"
export PMWAL_STATUS_DIR=$tmp/status
mkdir "$PMWAL_STATUS_DIR"
owner() { dpkg-query -S "$(readlink -f "$1")" 2>/dev/null | cut -d: -f1 | head -n 1; }
libpmwal_of() { # the libpmwal.so.0 a program loads, and the package it came from
	local so
	so=$(ldd "$1" | awk '$1 == "libpmwal.so.0" {print $3}')
	[ -n "$so" ] || fail "$1 does not load libpmwal.so.0"
	[ "$(owner "$so")" = libpmwal0 ] || fail "$1 loads $so, which is not libpmwal0's"
}
consumer() { # consumer NAME BINARY
	"$2" "$tmp/log-$1" >out.txt 2>&1 || { cat out.txt; fail "consumer ($1) failed"; }
	grep -q "pmwal $project_version appended LSN 1" out.txt || { cat out.txt; fail "consumer ($1) said otherwise"; }
	echo "deb_package: consumer $1: $(cat out.txt)"
}

# 6. CMake: find_package(pmwal) from /usr, shared and static.
timeout 60 cmake -S "$src/tests/consumer" -B consumer >cmake.log 2>&1 ||
	{ cat cmake.log; fail "CMake cannot configure the consumer against the installed package"; }
pmwal_dir=$(sed -n 's/^pmwal_DIR:PATH=//p' consumer/CMakeCache.txt)
[ "$(owner "$pmwal_dir/pmwalConfig.cmake")" = libpmwal-dev ] ||
	fail "find_package(pmwal) found $pmwal_dir, not libpmwal-dev's"
timeout 120 cmake --build consumer >>cmake.log 2>&1 || { cat cmake.log; fail "the consumer does not build"; }
libpmwal_of consumer/consumer
# (ldd's whole output first: grep -q quitting early could kill ldd with
# SIGPIPE, and under pipefail the check would then pass by chance.)
deps=$(ldd consumer/consumer_static)
grep -q libpmwal <<<"$deps" && fail "consumer_static loads libpmwal.so"
consumer cmake-shared consumer/consumer
consumer cmake-static consumer/consumer_static

# 7. pkg-config, shared and static.
inc=$(readlink -f "$(pkg-config --variable=includedir pmwal)")
[ "$(owner "$inc/pmwal.h")" = libpmwal-dev ] || fail "pkg-config's includedir $inc has no libpmwal-dev pmwal.h"
[ "$(pkg-config --modversion pmwal)" = "$project_version" ] || fail "pkg-config says pmwal $(pkg-config --modversion pmwal)"
# shellcheck disable=SC2046 # the flags split into words
gcc -o pc_shared "$src/tests/consumer/main.c" $(pkg-config --cflags --libs pmwal)
libpmwal_of pc_shared
consumer pkg-config-shared ./pc_shared
# shellcheck disable=SC2046
gcc -o pc_static "$src/tests/consumer/main.c" $(pkg-config --cflags pmwal) \
	-Wl,-Bstatic -lpmwal -Wl,-Bdynamic $(pkg-config --libs --static pmwal | sed 's/-lpmwal//')
deps=$(ldd pc_static)
grep -q libpmwal <<<"$deps" && fail "pc_static loads libpmwal.so"
consumer pkg-config-static ./pc_static

# 8. The tool.
[ "$(owner /usr/bin/pmwal)" = pmwal ] || fail "/usr/bin/pmwal is not the pmwal package's"
v=$(/usr/bin/pmwal --version)
[[ "$v" == "pmwal $project_version "* ]] || fail "pmwal --version says '$v', not pmwal $project_version"
/usr/bin/pmwal create "$tmp/cli.log" --size 1M >out.txt 2>&1 || { cat out.txt; fail "pmwal create"; }
seq 1 100 | /usr/bin/pmwal append "$tmp/cli.log" >out.txt 2>&1 || { cat out.txt; fail "pmwal append"; }
/usr/bin/pmwal verify --json "$tmp/cli.log" >out.txt 2>&1 || { cat out.txt; fail "pmwal verify"; }
if ! grep -q '"verdict": "clean"' out.txt || ! grep -q '"records": 100,' out.txt; then
	cat out.txt; fail "pmwal verify does not find the 100 records clean"
fi
echo "deb_package: $v: create, append, verify: 100 records, clean"

# 9. The manual, where man looks for it.
for page in pmwal_append 1:pmwal 1:pmwal-verify 3:pmwal; do
	sect=${page%%:*} name=${page#*:}
	[ "$sect" = "$page" ] && sect=
	# shellcheck disable=SC2086 # no section: no word
	m=$(man -w $sect "$name" 2>&1) || fail "man -w $sect $name: $m"
	want=libpmwal-dev
	case "$m" in */man1/*) want=pmwal ;; esac
	[ "$(owner "$m")" = "$want" ] || fail "man -w $sect $name finds $m, not $want's page"
done
echo "deb_package: man -w finds pmwal_append(3), pmwal(1), pmwal-verify(1), pmwal(3)"

# 10. Purge (cleanup), then nothing of them is left.
trap - EXIT
cleanup_rc=0
(cleanup) || cleanup_rc=$?
[ "$cleanup_rc" -eq 0 ] || fail "purging the packages failed"
for p in "${pkgs[@]}"; do
	installed "$p" && fail "$p is still installed after apt-get purge"
done
for f in /usr/bin/pmwal /usr/include/pmwal.h /usr/share/man/man3/pmwal_append.3.gz; do
	[ ! -e "$f" ] || fail "$f is left after apt-get purge"
done
echo "deb_package: ${pkgs[*]} built, lintian-clean, installed, used and purged"
