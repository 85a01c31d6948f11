# SPDX-License-Identifier: MIT
# What the QEMU lanes share (tests/qemu/run.sh: NVMe PMR; tests/qemu/nvdimm.sh:
# NVDIMM): the skip and fail exits, the tools every lane needs, the Debian
# cloud kernel (cached, or fetched with apt-get download), the initramfs
# helper and the serial-log wait. Sourced; the lane sets $cache first and
# $root (the initramfs tree) and $qpid (the running QEMU) as it goes.

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# qemu_lane_tools: skip unless QEMU, an x86_64 host, busybox and cpio are
# here; sets $busybox.
qemu_lane_tools() {
	command -v qemu-system-x86_64 >/dev/null ||
		skip "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
	[ "$(uname -m)" = x86_64 ] || skip "the lane boots an x86_64 kernel; this is $(uname -m)"
	busybox=$(command -v busybox || true)
	[ -n "$busybox" ] || skip "busybox is needed for the guest's shell (apt-get install busybox-static)"
	command -v cpio >/dev/null || skip "cpio not installed"
}

# find_kernel: print the kernel to boot: $PMWAL_QEMU_KERNEL, or Debian's cloud
# kernel from $cache or /boot, or one fetched into $cache with apt-get
# download (the package's modules land beside it, in $cache/lib/modules).
find_kernel() {
	local k
	if [ -n "${PMWAL_QEMU_KERNEL:-}" ]; then
		echo "$PMWAL_QEMU_KERNEL"
		return
	fi
	# The cache is booted from and unpacked into: it must be this user's
	# own directory (by default it is a fixed name in the shared /var/tmp,
	# where another user could have made it first, kernel included).
	mkdir -m 0755 "$cache" 2>/dev/null
	if [ -L "$cache" ] || [ ! -d "$cache" ] || [ "$(stat -c %u "$cache")" != "$(id -u)" ] ||
		[ $((0$(stat -c %a "$cache") & 022)) -ne 0 ]; then
		echo "the kernel cache $cache is not a directory of this user's that only it" \
			"can write: not used (remove it, or set PMWAL_QEMU_CACHE to one)" >&2
		ls /boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -1
		return
	fi
	k=$(ls "$cache"/boot/vmlinuz-*-cloud-amd64 /boot/vmlinuz-*-cloud-amd64 2>/dev/null |
		sort -V | tail -1)
	if [ -n "$k" ]; then
		echo "$k"
		return
	fi
	# docs/pmr.md: the cloud kernel has nvme built in, so no modules are needed
	command -v apt-get >/dev/null || return
	mkdir -p "$cache" && (
		cd "$cache" || exit 1
		pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null |
			sed -n 's/.*Depends: \(linux-image-[0-9].*\)/\1/p' | head -1)
		[ -n "$pkg" ] && timeout 300 apt-get download "$pkg" >/dev/null 2>&1 &&
			dpkg-deb -x "$pkg"_*.deb . && rm -f "$pkg"_*.deb
	) >/dev/null 2>&1
	ls "$cache"/boot/vmlinuz-*-cloud-amd64 2>/dev/null | sort -V | tail -1
}

add_binary() { # add_binary PATH NAME: the binary and every shared library it loads
	cp -L "$1" "$root/bin/$2"
	ldd "$1" 2>/dev/null | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' |
		while read -r lib; do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
}

wait_for() { # wait_for LOG PATTERN SECONDS: 0 once PATTERN is in LOG
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$qpid" 2>/dev/null || { grep -q -- "$2" "$1" 2>/dev/null; return; }
		sleep 0.1
	done
	return 1
}
