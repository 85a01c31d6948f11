#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The NVDIMM lane: a real Linux kernel and QEMU's emulated NVDIMMs run pmwal's
# persistent-memory paths end to end, the ones libpmem2 picks by what the
# kernel says: a file on ext4 mounted -o dax (fsdax: MAP_SYNC, cache-line
# granularity, flush + drain) and device DAX (/dev/dax1.0: no filesystem).
# Boot 1 loads the NVDIMM modules, makes the namespaces with ndctl, probes,
# checks the refusals, runs the raw-region benchmark phases, creates a log on
# each and appends records, printing an ack for each; the host SIGKILLs QEMU
# mid-append (the backing files keep what the guest's stores reached). Boot 2
# verifies and dumps both logs; every acked record must be there
# (docs/reliability.md I1), and the verdict must be clean or a torn tail.
#
# usage: tests/qemu/nvdimm.sh BUILD_DIR   (the pmwal binary is BUILD_DIR/cli/pmwal)
# env:   PMWAL_QEMU_KERNEL=vmlinuz     a kernel (default: the Debian cloud kernel,
#                                      cached or fetched with apt-get download:
#                                      tests/qemu/lib.sh, shared with run.sh)
#        PMWAL_QEMU_MODULES=DIR        its lib/modules/VERSION directory (default:
#                                      beside the cached kernel)
#        PMWAL_QEMU_ACKS=N             kill after N acks on each log (default 10)
#        PMWAL_QEMU_KEEP=1             keep the work directory (serial logs)
# exit:  0 pass, 1 fail, 77 skip (with a SKIP line saying why)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-}
acks_wanted=${PMWAL_QEMU_ACKS:-10}
cache=${PMWAL_QEMU_CACHE:-/var/tmp/pmwal-qemu-cache}

# shellcheck source=tests/qemu/lib.sh
. "$here/lib.sh"

[ -n "$build" ] || { echo "usage: $0 BUILD_DIR"; exit 2; }
pmwal=$build/cli/pmwal
[ -x "$pmwal" ] || fail "no pmwal binary at $pmwal (build first)"
qemu_lane_tools
ndctl=$(command -v ndctl || true)
[ -n "$ndctl" ] || skip "ndctl is needed in the guest to make fsdax and devdax namespaces (apt-get install ndctl)"
mkfs=$(command -v mkfs.ext4 || true)
[ -n "$mkfs" ] || skip "mkfs.ext4 is needed in the guest (apt-get install e2fsprogs)"

kernel=$(find_kernel)
[ -n "$kernel" ] && [ -r "$kernel" ] ||
	skip "no kernel (set PMWAL_QEMU_KERNEL and PMWAL_QEMU_MODULES, or let apt-get download linux-image-cloud-amd64)"
kver=$(basename "$kernel" | sed 's/^vmlinuz-//')
moddir=${PMWAL_QEMU_MODULES:-$(dirname "$(dirname "$kernel")")/lib/modules/$kver}
config=$(dirname "$kernel")/config-$kver
# The NVDIMM stack: the ACPI NFIT bus, libnvdimm, the pmem block driver (and
# the BTT it links against), the device-DAX drivers. Debian builds them as
# modules; a kernel with them built in needs none of them.
want_modules="libnvdimm nfit nd_btt nd_pmem dax_pmem device_dax"
# virtio-pmem (asynchronous DAX: DAX without MAP_SYNC), optional
virtio_modules="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci nd_virtio virtio_pmem"
if [ -r "$config" ]; then
	for c in CONFIG_ACPI_NFIT CONFIG_BLK_DEV_PMEM CONFIG_DEV_DAX_PMEM CONFIG_FS_DAX CONFIG_ZONE_DEVICE; do
		grep -qE "^$c=(y|m)" "$config" ||
			skip "kernel $kver lacks $c (no NVDIMM or DAX support): use a kernel with it (PMWAL_QEMU_KERNEL)"
	done
fi

work=$(mktemp -d /var/tmp/pmwal-nvdimm-XXXXXX)
qpid=
cleanup() {
	[ -n "$qpid" ] && kill -9 "$qpid" 2>/dev/null
	[ -n "${PMWAL_QEMU_KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

# ---- initramfs: busybox, pmwal, ndctl, mkfs.ext4, the NVDIMM modules ----
root=$work/root
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,etc,modules}
add_binary "$busybox" busybox
add_binary "$pmwal" pmwal
add_binary "$ndctl" ndctl
add_binary "$mkfs" mkfs.ext4
[ -d "$moddir" ] ||
	skip "no modules for kernel $kver at $moddir (set PMWAL_QEMU_MODULES to its lib/modules/VERSION)"
add_module() { # add_module NAME: into the initramfs and its load order; 1 if absent
	local ko
	ko=$(find "$moddir" \( -name "$1.ko" -o -name "$1.ko.xz" -o -name "$1.ko.zst" \) 2>/dev/null | head -1)
	[ -n "$ko" ] || return 1
	case $ko in
	*.xz) xz -dc "$ko" >"$root/modules/$1.ko" || skip "cannot decompress $ko (apt-get install xz-utils)" ;;
	*.zst) zstd -qdc "$ko" >"$root/modules/$1.ko" || skip "cannot decompress $ko (apt-get install zstd)" ;;
	*) cp "$ko" "$root/modules/$1.ko" ;;
	esac
	echo "$1" >>"$root/modules.txt"
}
for m in $want_modules; do
	add_module "$m" && continue
	grep -q "/$m.ko$" "$moddir/modules.builtin" 2>/dev/null && continue # built in
	skip "kernel $kver has no $m module under $moddir, nor built in (set PMWAL_QEMU_MODULES)"
done
# built in, or missing: the guest says when there is no virtio-pmem
for m in $virtio_modules; do add_module "$m" || true; done
touch "$root/modules.txt"
cp "$here/nvdimm_init.sh" "$root/init"
chmod +x "$root/init"
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || {
	mkdir -p "$root/lib64"
	cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
}
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initrd.gz" ||
	fail "could not build the initramfs"

# ---- the machine: two label-less NVDIMMs, one per namespace mode ----
nv0=$work/nvdimm0.img
nv1=$work/nvdimm1.img
vp0=$work/virtio-pmem.img
truncate -s 256M "$nv0" "$nv1"
truncate -s 128M "$vp0"
boot() { # boot PHASE LOG: start QEMU in the background, set qpid
	qemu-system-x86_64 -machine pc,accel=tcg,nvdimm=on -cpu max \
		-m 512M,slots=4,maxmem=2G -smp 1 \
		-display none -monitor none -serial "file:$2" -no-reboot \
		-kernel "$kernel" -initrd "$work/initrd.gz" \
		-append "console=ttyS0 panic=-1 quiet loglevel=3 pmwal.phase=$1 pmwal.records=1000" \
		-object "memory-backend-file,id=nv0,share=on,mem-path=$nv0,size=256M" \
		-device nvdimm,id=nvdimm0,memdev=nv0 \
		-object "memory-backend-file,id=nv1,share=on,mem-path=$nv1,size=256M" \
		-device nvdimm,id=nvdimm1,memdev=nv1 \
		-object "memory-backend-file,id=vp0,share=on,mem-path=$vp0,size=128M" \
		-device virtio-pmem-pci,memdev=vp0,id=vpmem0 \
		>"$2.qemu" 2>&1 &
	qpid=$!
}

log1=$work/boot1.log
t0=$SECONDS
boot write "$log1"
if ! wait_for "$log1" "PMWAL-BEGIN" 180; then
	cat "$log1.qemu" "$log1" 2>/dev/null | tail -20
	grep -qi "nvdimm" "$log1.qemu" 2>/dev/null && skip "this QEMU cannot emulate an NVDIMM: $(head -1 "$log1.qemu")"
	fail "boot 1 never reached /init"
fi
if ! wait_for "$log1" "PMWAL-ACK devdax ${acks_wanted}[^0-9]\|PMWAL-FAIL\|PMWAL-SKIP\|PMWAL-WRITE-DONE\|PMWAL-END" 600; then
	tail -30 "$log1"
	fail "boot 1: no ack $acks_wanted in time"
fi
# The power cut: SIGKILL, mid-append (the guest keeps appending), after a
# random 0-0.9 s so that it lands at different points of an append.
grep -q "PMWAL-ACK devdax $acks_wanted" "$log1" && sleep "0.$((RANDOM % 10))"
kill -9 "$qpid"
wait "$qpid" 2>/dev/null
qpid=
tr -d '\r' <"$log1" >"$log1.txt"
echo "boot 1: $((SECONDS - t0)) s"
if grep -q "PMWAL-SKIP" "$log1.txt"; then
	# a module the kernel would not load is the kernel's limit; all loaded
	# and still no pmem device is this lane's failure
	grep -q "PMWAL-MODULE-FAIL" "$log1.txt" ||
		{ tail -40 "$log1.txt"; fail "boot 1: $(sed -n 's/^PMWAL-SKIP //p' "$log1.txt" | head -1), with every module loaded"; }
	skip "$(sed -n 's/^PMWAL-SKIP //p' "$log1.txt" | head -1): kernel $kver would not load $(sed -n 's/^PMWAL-MODULE-FAIL //p' "$log1.txt" | tr '\n' ' ')"
fi
grep -q "PMWAL-FAIL" "$log1.txt" && { tail -40 "$log1.txt"; fail "boot 1: $(grep PMWAL-FAIL "$log1.txt" | head -3)"; }

# jv LOG TAG KEY: a top-level value of the JSON object printed with "TAG " in
# front of each line (pmwal probe --json: two spaces of indent at top level)
jv() { sed -n "s/^$2   \"$3\": \(.*\)\$/\1/p" "$1" | sed 's/,$//; s/^"//; s/"$//' | head -1; }
# the same one level down, inside the object KEY1
jv2() { sed -n "/^$2   \"$3\": {/,/^$2   }/s/^$2     \"$4\": \(.*\)\$/\1/p" "$1" | sed 's/,$//; s/^"//; s/"$//' | head -1; }
# info LOG TAG FIELD: a `pmwal info` field
info() { sed -n "s/^$2   $3  *//p" "$1" | head -1; }
check() { # check WHAT WANT GOT
	[ "$2" = "$3" ] || fail "$1: want '$2', got '${3:-nothing}'"
}

# ---- fsdax: a file on ext4 mounted -o dax on /dev/pmem0 ----
l=$log1.txt
[ -n "$(jv "$l" PMWAL-PROBE-FSDAX kind)" ] ||
	{ grep -E "PMWAL-(NDCTL|MOUNT)" "$l" | tail -20; fail "no probe of /mnt/dax/log"; }
echo "probe /mnt/dax/log: dax $(jv "$l" PMWAL-PROBE-FSDAX dax), MAP_SYNC $(jv "$l" PMWAL-PROBE-FSDAX map_sync)," \
	"granularity $(jv "$l" PMWAL-PROBE-FSDAX pmem2_granularity), alignment $(jv "$l" PMWAL-PROBE-FSDAX pmem2_alignment)," \
	"size $(jv "$l" PMWAL-PROBE-FSDAX size_bytes), mount $(jv "$l" PMWAL-PROBE-FSDAX mount_options)"
check "fsdax probe: dax" true "$(jv "$l" PMWAL-PROBE-FSDAX dax)"
check "fsdax probe: map_sync" true "$(jv "$l" PMWAL-PROBE-FSDAX map_sync)"
check "fsdax probe: libpmem2 granularity" cache-line "$(jv "$l" PMWAL-PROBE-FSDAX pmem2_granularity)"
check "fsdax probe: emulated" false "$(jv "$l" PMWAL-PROBE-FSDAX pmem_emulated)"
echo "info pmem:/mnt/dax/log: medium $(info "$l" PMWAL-INFO-FSDAX medium); granularity $(info "$l" PMWAL-INFO-FSDAX granularity); durability $(info "$l" PMWAL-INFO-FSDAX durability)"
check "fsdax info: granularity" cache-line "$(info "$l" PMWAL-INFO-FSDAX granularity)"
check "fsdax info: durability" "pmem2 flush+drain (MAP_SYNC)" "$(info "$l" PMWAL-INFO-FSDAX durability)"

# ---- devdax: /dev/dax1.0 ----
echo "probe /dev/dax1.0: dax $(jv "$l" PMWAL-PROBE-DEVDAX dax), MAP_SYNC $(jv "$l" PMWAL-PROBE-DEVDAX map_sync)," \
	"granularity $(jv "$l" PMWAL-PROBE-DEVDAX pmem2_granularity), alignment $(jv "$l" PMWAL-PROBE-DEVDAX align)" \
	"(libpmem2 $(jv "$l" PMWAL-PROBE-DEVDAX pmem2_alignment)), size $(jv "$l" PMWAL-PROBE-DEVDAX size_bytes)," \
	"$(jv2 "$l" PMWAL-PROBE-DEVDAX nvdimm namespace) mode $(jv2 "$l" PMWAL-PROBE-DEVDAX nvdimm mode)"
check "devdax probe: kind" devdax "$(jv "$l" PMWAL-PROBE-DEVDAX kind)"
check "devdax probe: libpmem2 granularity" cache-line "$(jv "$l" PMWAL-PROBE-DEVDAX pmem2_granularity)"
check "devdax probe: alignment" 2097152 "$(jv "$l" PMWAL-PROBE-DEVDAX align)"
check "devdax probe: libpmem2 alignment" 2097152 "$(jv "$l" PMWAL-PROBE-DEVDAX pmem2_alignment)"
check "devdax probe: namespace mode" devdax "$(jv2 "$l" PMWAL-PROBE-DEVDAX nvdimm mode)"
echo "info /dev/dax1.0: medium $(info "$l" PMWAL-INFO-DEVDAX medium); granularity $(info "$l" PMWAL-INFO-DEVDAX granularity); durability $(info "$l" PMWAL-INFO-DEVDAX durability)"
check "devdax info: granularity" cache-line "$(info "$l" PMWAL-INFO-DEVDAX granularity)"
check "devdax info: durability" "pmem2 flush+drain (device-DAX)" "$(info "$l" PMWAL-INFO-DEVDAX durability)"
check "devdax at 4 KiB alignment: create, append 20, verify" 0 "$(sed -n 's/^PMWAL-ALIGN4K-RC //p' "$l")"
grep -qE '^PMWAL-ALIGN4K-PROBE   "pmem2_alignment": 4096' "$l" ||
	fail "devdax at 4 KiB alignment: probe does not report it"
echo "devdax at 4 KiB alignment: a log created, 20 records appended and verified"

# ---- probe without a target: the machine's DAX and pmem devices ----
grep -qE '^PMWAL-PROBE-LIST +"path": "/dev/dax1.0"' "$l" &&
	grep -qE '^PMWAL-PROBE-LIST +"path": "/dev/pmem0"' "$l" ||
	{ grep PMWAL-PROBE-LIST "$l"; fail "pmwal probe (no target) does not list /dev/dax1.0 and /dev/pmem0"; }
echo "probe (no target): lists $(grep -oE '"path": "/dev/(dax|pmem)[^"]*"' "$l" | sed 's/.*: //' | sort -u | tr -d '"' | tr '\n' ' ')"

# ---- /dev/pmem0: the fsdax namespace's block device ----
echo "probe /dev/pmem0: kind $(jv "$l" PMWAL-PROBE-PMEM0 kind), dax $(jv2 "$l" PMWAL-PROBE-PMEM0 queue dax)," \
	"size $(jv "$l" PMWAL-PROBE-PMEM0 size_bytes), $(jv2 "$l" PMWAL-PROBE-PMEM0 nvdimm namespace)" \
	"mode $(jv2 "$l" PMWAL-PROBE-PMEM0 nvdimm mode), alignment $(jv2 "$l" PMWAL-PROBE-PMEM0 nvdimm align)"
check "pmem0 probe: kind" pmem-namespace "$(jv "$l" PMWAL-PROBE-PMEM0 kind)"
check "pmem0 probe: queue/dax" 1 "$(jv2 "$l" PMWAL-PROBE-PMEM0 queue dax)"
check "pmem0 probe: namespace mode" fsdax "$(jv2 "$l" PMWAL-PROBE-PMEM0 nvdimm mode)"
check "pmem0 probe: alignment" 2097152 "$(jv2 "$l" PMWAL-PROBE-PMEM0 nvdimm align)"

# ---- no MAP_SYNC: ext4 on pmem0 without DAX; virtio-pmem (DAX, async) ----
check "no-DAX mount: create" 0 "$(sed -n 's/^PMWAL-NODAX-CREATE-RC //p' "$l")"
check "no-DAX mount: append and verify" 0 "$(sed -n 's/^PMWAL-NODAX-VERIFY-RC //p' "$l")"
check "no-DAX mount: probe mount options" "rw,relatime,dax=never" "$(jv "$l" PMWAL-PROBE-NODAX mount_options)"
check "no-DAX mount: probe map_sync" false "$(jv "$l" PMWAL-PROBE-NODAX map_sync)"
check "no-DAX mount: durability" "msync (emulated: not DAX; mount -o dax for MAP_SYNC)" \
	"$(info "$l" PMWAL-NODAX-INFO durability)"
jv "$l" PMWAL-PROBE-NODAX map_sync_note | grep -q -- "-o dax" || fail "no-DAX mount: probe does not say to mount -o dax"
echo "ext4 on /dev/pmem0 without DAX: durability $(info "$l" PMWAL-NODAX-INFO durability); probe: $(jv "$l" PMWAL-PROBE-NODAX map_sync_note)"
if grep -q "^PMWAL-VPMEM-NONE" "$l"; then
	echo "NOTE: no virtio-pmem case: $(sed -n 's/^PMWAL-VPMEM-NONE //p' "$l")"
else
	check "virtio-pmem: create" 0 "$(sed -n 's/^PMWAL-VDAX-CREATE-RC //p' "$l")"
	check "virtio-pmem: append and verify" 0 "$(sed -n 's/^PMWAL-VDAX-VERIFY-RC //p' "$l")"
	check "virtio-pmem: probe dax" true "$(jv "$l" PMWAL-PROBE-VDAX dax)"
	check "virtio-pmem: probe map_sync" false "$(jv "$l" PMWAL-PROBE-VDAX map_sync)"
	check "virtio-pmem: durability" "msync (DAX without MAP_SYNC)" "$(info "$l" PMWAL-VDAX-INFO durability)"
	echo "ext4 -o dax on virtio-pmem: dax true, MAP_SYNC false, granularity $(info "$l" PMWAL-VDAX-INFO granularity), durability $(info "$l" PMWAL-VDAX-INFO durability)"
fi

# ---- bad input: exit 2 and a message naming the fix ----
bad() { # bad TAG WANT_RC PATTERN
	local rc msg
	rc=$(sed -n "s/^PMWAL-$1-RC //p" "$l")
	msg=$(sed -n "s/^PMWAL-$1 //p" "$l" | head -1)
	[ "$rc" = "$2" ] || fail "$1: exit ${rc:-?}, want $2 ($msg)"
	echo "$msg" | grep -q -- "$3" || fail "$1: message does not name '$3': $msg"
	echo "refused (exit $rc): $msg"
}
bad BAD-DEVDAX-SIZE 2 "ndctl create-namespace"
bad BAD-DEVDAX-SMALL 2 "below the minimum"
bad BAD-PMEM-BLK 2 "use PATH, not pmem:PATH"
bad BAD-FSDAX-SIZE 1 "cannot allocate"

# ---- the raw-region benchmark phases: functional only under TCG ----
for t in pmem:/mnt/dax/bench /dev/dax1.0; do
	for ph in IO PRIM; do
		rc=$(sed -n "s|^PMWAL-BENCH-$ph-RC \([0-9]*\) $t\$|\1|p" "$l")
		[ "$rc" = 0 ] || { grep "PMWAL-BENCH-$ph $t" "$l"; fail "bench $ph on $t exited ${rc:-?}"; }
		sed -n "s|^PMWAL-BENCH-$ph $t \(.*[0-9].*\)|  [TCG, functional only: not a measurement] \1|p" "$l" | grep -v "^ *\[.*\] phase"
	done
done

acked_fs=$(grep -c '^PMWAL-ACK fsdax ' "$l")
acked_dax=$(grep -c '^PMWAL-ACK devdax ' "$l")
echo "boot 1: $acked_fs records acked on pmem:/mnt/dax/log, $acked_dax on /dev/dax1.0 before the kill"
[ "$acked_fs" -ge 1 ] && [ "$acked_dax" -ge 1 ] || fail "nothing was acked"

# ---- boot 2: after the power cut ----
log2=$work/boot2.log
t0=$SECONDS
boot verify "$log2"
wait_for "$log2" "PMWAL-END" 300 || { tail -30 "$log2"; fail "boot 2 did not finish"; }
wait "$qpid" 2>/dev/null
qpid=
tr -d '\r' <"$log2" >"$log2.txt"
echo "boot 2: $((SECONDS - t0)) s"
grep -q "PMWAL-FAIL" "$log2.txt" && { tail -40 "$log2.txt"; fail "boot 2: $(grep PMWAL-FAIL "$log2.txt" | head -3)"; }
for n in FSDAX DEVDAX; do
	case $n in FSDAX) tag=fsdax target=pmem:/mnt/dax/log ;; *) tag=devdax target=/dev/dax1.0 ;; esac
	vrc=$(sed -n "s/^PMWAL-VERIFY-RC-$n //p" "$log2.txt")
	verdict=$(sed -n "s/^PMWAL-VERIFY-$n [^ ]*: //p" "$log2.txt" | head -1)
	[ "$vrc" = 0 ] || { grep "PMWAL-VERIFY-$n" "$log2.txt"; fail "$target: verify after the kill exited ${vrc:-?} (want 0: clean or torn tail)"; }
	case $verdict in clean* | torn*) ;; *) fail "$target: verdict '$verdict', want clean or torn tail" ;; esac
	lost=0 acked=0
	for i in $(sed -n "s/^PMWAL-ACK $tag \([0-9]*\).*/\1/p" "$log1.txt"); do
		acked=$((acked + 1))
		grep -q "^PMWAL-REC-$n [0-9]*	rec-$i\$" "$log2.txt" || { echo "lost acked record rec-$i on $target"; lost=$((lost + 1)); }
	done
	recovered=$(grep -c "^PMWAL-REC-$n [0-9]*	rec-" "$log2.txt")
	echo "boot 2: $target: verdict $verdict; $recovered records recovered, $lost of $acked acked records lost"
	[ "$lost" -eq 0 ] || fail "$target: $lost acked records lost"
done
echo "PASS: QEMU NVDIMM lane (fsdax with MAP_SYNC: $acked_fs acked; devdax: $acked_dax acked; all recovered after SIGKILL)"
