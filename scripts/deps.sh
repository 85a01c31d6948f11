#!/usr/bin/env bash
# Installs the Debian 12 packages pmwal needs, only those that are missing.
#   deps.sh build   compiler, CMake, and the libraries libpmwal links
#   deps.sh test    + Criterion, and what the tests drive (fio, chromium, peers,
#                   libraft-dev and libuv1-dev for libpmwal-raft, ndctl for
#                   the QEMU NVDIMM lane, dpkg-dev, debhelper and lintian
#                   for the Debian packages' test, jq and Prometheus's
#                   parser for the JSON and OpenMetrics checks)
#   deps.sh bench   + fio and the peers the benchmark compares against
set -euo pipefail
build=(gcc make cmake pkg-config liburing-dev libxxhash-dev libpmem2-dev libjansson-dev libnvme-dev)
peers=(fio libpmemlog-dev librocksdb-dev g++)
case "${1:-build}" in
build) want=("${build[@]}") ;;
test) want=("${build[@]}" "${peers[@]}" libcriterion-dev clang chromium qemu-system-x86 busybox-static cpio ndctl man-db groff-base libraft-dev libuv1-dev gnuplot-nox python3-jsonschema python3-six python3-prometheus-client jq dpkg-dev debhelper lintian) ;;
bench) want=("${build[@]}" "${peers[@]}") ;;
*) echo "usage: deps.sh build|test|bench" >&2; exit 2 ;;
esac
missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: not root; install them with: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Chromium renders the report with its recommended fonts; the rest needs none.
plain=() with_recommends=()
for p in "${missing[@]}"; do
	if [ "$p" = chromium ]; then with_recommends+=("$p"); else plain+=("$p"); fi
done
[ ${#plain[@]} -eq 0 ] || apt-get install -y -qq --no-install-recommends "${plain[@]}" >/dev/null
[ ${#with_recommends[@]} -eq 0 ] || apt-get install -y -qq "${with_recommends[@]}" >/dev/null
