#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The QEMU lane: a real Linux kernel and QEMU's emulated NVMe controller with
# a PMR (docs/pmr.md) run pmwal's PMR path end to end: sysfs BARs, PMRCTL enable,
# write-combining stores, the PMRSTS-read barrier, and a log that survives the
# machine being killed. Boot 1 probes, creates a log on the PMR and appends
# records, printing an ack for each; the host SIGKILLs QEMU mid-append. Boot 2
# verifies and dumps the log from the same PMR backing file; every acked
# record must be there (docs/reliability.md I1), and the verdict must be clean or a
# torn tail.
#
# usage: tests/qemu/run.sh BUILD_DIR   (the pmwal binary is BUILD_DIR/cli/pmwal)
# env:   PMWAL_QEMU_KERNEL=vmlinuz     a kernel with nvme built in (default:
#                                      a Debian cloud kernel, cached or fetched
#                                      with apt-get download)
#        PMWAL_QEMU_ACKS=N             kill after N acks (default 12)
# exit:  0 pass, 1 fail, 77 skip (with a SKIP line saying why)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-}
acks_wanted=${PMWAL_QEMU_ACKS:-12}
cache=${PMWAL_QEMU_CACHE:-/var/tmp/pmwal-qemu-cache}

. "$here/lib.sh"

[ -n "$build" ] || { echo "usage: $0 BUILD_DIR"; exit 2; }
pmwal=$build/cli/pmwal
[ -x "$pmwal" ] || fail "no pmwal binary at $pmwal (build first)"
qemu_lane_tools

kernel=$(find_kernel)
[ -n "$kernel" ] && [ -r "$kernel" ] ||
	skip "no kernel with nvme built in (set PMWAL_QEMU_KERNEL, or let apt-get download linux-image-cloud-amd64)"

work=$(mktemp -d /var/tmp/pmwal-qemu-XXXXXX)
qpid=
cleanup() {
	[ -n "$qpid" ] && kill -9 "$qpid" 2>/dev/null
	[ -n "${PMWAL_QEMU_KEEP:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

# ---- initramfs: static busybox, pmwal and the shared libraries it loads ----
root=$work/root
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,etc}
add_binary "$busybox" busybox
add_binary "$pmwal" pmwal
cp "$here/init.sh" "$root/init"
chmod +x "$root/init"
# the loader may be asked for by its /lib64 name
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || {
	mkdir -p "$root/lib64"
	cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
}
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initrd.gz" ||
	fail "could not build the initramfs"

# ---- the machine ----
pmr_img=$work/pmr.img
ns_img=$work/ns.img
truncate -s 16M "$pmr_img"
truncate -s 8M "$ns_img"
boot() { # boot PHASE LOG [KERNEL_ARGS]: start QEMU in the background, set qpid
	local args=${3-iomem=relaxed}
	qemu-system-x86_64 -machine pc,accel=tcg -cpu max -m 512 -smp 1 \
		-display none -monitor none -serial "file:$2" -no-reboot \
		-kernel "$kernel" -initrd "$work/initrd.gz" \
		-append "console=ttyS0 $args panic=-1 quiet loglevel=3 pmwal.phase=$1 pmwal.records=1000" \
		-object "memory-backend-file,id=pmr0,share=on,mem-path=$pmr_img,size=16M" \
		-drive "file=$ns_img,if=none,id=ns0,format=raw" \
		-device nvme,serial=pmwal0,pmrdev=pmr0,addr=04.0,drive=ns0 \
		>"$2.qemu" 2>&1 &
	qpid=$!
}

log1=$work/boot1.log
boot write "$log1"
if ! wait_for "$log1" "PMWAL-BEGIN" 180; then
	cat "$log1.qemu" "$log1" 2>/dev/null | tail -20
	grep -qi "nvme.*pmrdev\|property" "$log1.qemu" 2>/dev/null &&
		skip "this QEMU has no NVMe PMR (pmrdev)"
	fail "boot 1 never reached /init"
fi
# (serial lines end in CR LF: "[^0-9]" ends the number)
if ! wait_for "$log1" "PMWAL-ACK $acks_wanted[^0-9]\|PMWAL-FAIL\|PMWAL-WRITE-DONE" 300; then
	tail -30 "$log1"
	fail "boot 1: no ack $acks_wanted in time"
fi
# The power cut: SIGKILL, mid-append (the guest keeps appending).
kill -9 "$qpid"
wait "$qpid" 2>/dev/null
qpid=
tr -d '\r' <"$log1" >"$log1.txt"
grep -q "PMWAL-FAIL" "$log1.txt" && { tail -30 "$log1.txt"; fail "boot 1: $(grep PMWAL-FAIL "$log1.txt")"; }
grep -A1 "^pmrs:" "$log1.txt"
grep -E '^PMWAL-PROBE +"(pmrwbm|write_barrier|bar_bytes)"' "$log1.txt"
grep -E "^  (medium|durability) " "$log1.txt"
grep -qE '^PMWAL-PROBE-NS +"model": "QEMU NVMe Ctrl"' "$log1.txt" &&
	grep -qE '^PMWAL-PROBE-NS +"awupf_blocks"' "$log1.txt" &&
	grep -qE '^PMWAL-PROBE-NS +"logical_block_size"' "$log1.txt" ||
	{ grep PMWAL-PROBE-NS "$log1.txt"; fail "probe of /dev/nvme0n1 lacks identify or queue facts"; }
echo "probe /dev/nvme0n1: $(grep -cE '^PMWAL-PROBE-NS +"' "$log1.txt") facts, identify and queue/ present"
grep -qE '^PMWAL-PROBE-CTRL +"kind": "nvme-controller"' "$log1.txt" &&
	grep -qE '^PMWAL-PROBE-CTRL +"volatile_write_cache"' "$log1.txt" ||
	{ grep PMWAL-PROBE-CTRL "$log1.txt"; fail "probe of /dev/nvme0 lacks identify facts"; }
grep -q '^PMWAL-NS-APPEND-RC 0' "$log1.txt" ||
	{ grep PMWAL-NS "$log1.txt"; fail "io_uring log on /dev/nvme0n1 failed"; }
grep '^PMWAL-NS-INFO' "$log1.txt"
acked=$(grep -c '^PMWAL-ACK ' "$log1.txt")
echo "boot 1: $acked records acked before the kill"

log2=$work/boot2.log
boot verify "$log2"
wait_for "$log2" "PMWAL-END" 300 || { tail -30 "$log2"; fail "boot 2 did not finish"; }
wait "$qpid" 2>/dev/null
qpid=
tr -d '\r' <"$log2" >"$log2.txt"
grep -qE '^PMWAL-NS-VERIFY +"records": 500,' "$log2.txt" ||
	{ grep PMWAL-NS "$log2.txt"; fail "the /dev/nvme0n1 log lost records across the kill"; }
echo "boot 2: /dev/nvme0n1 io_uring log verifies with its 500 records"
grep -E -A2 '^pmr:[0-9a-f:.]+,enable: ' "$log2.txt" | head -3
vrc=$(sed -n 's/^PMWAL-VERIFY-RC \([0-9]*\).*/\1/p' "$log2.txt")
[ "$vrc" = 0 ] || { tail -30 "$log2.txt"; fail "verify after the kill exited ${vrc:-?} (want 0: clean or torn tail)"; }
lost=0
for i in $(sed -n 's/^PMWAL-ACK \([0-9]*\).*/\1/p' "$log1.txt"); do
	grep -q "^PMWAL-REC [0-9]*	rec-$i\$" "$log2.txt" || { echo "lost acked record rec-$i"; lost=$((lost + 1)); }
done
recovered=$(grep -c '^PMWAL-REC ' "$log2.txt")
echo "boot 2: $recovered records recovered, $lost of $acked acked records lost"
[ "$lost" -eq 0 ] || fail "$lost acked records lost"
[ "$acked" -ge 1 ] || fail "nothing was acked"
# Without iomem=relaxed the kernel refuses the BAR mmap while nvme is bound:
# the message must say so and name both fixes, and unbinding must work.
log3=$work/boot3.log
boot strict "$log3" ""
wait_for "$log3" "PMWAL-END" 300 || { tail -30 "$log3"; fail "boot 3 did not finish"; }
wait "$qpid" 2>/dev/null
qpid=
tr -d '\r' <"$log3" >"$log3.txt"
grep -q "^PMWAL-STRICT-RC 2" "$log3.txt" && grep -q "iomem=relaxed" "$log3.txt" &&
	grep -q "echo 0000:00:04.0 > /sys/bus/pci/drivers/nvme/unbind" "$log3.txt" ||
	{ tail -20 "$log3.txt"; fail "strict devmem: wrong exit code or message"; }
grep -q "^PMWAL-UNBOUND-RC 0" "$log3.txt" ||
	{ tail -20 "$log3.txt"; fail "the PMR stayed unreachable after unbinding nvme"; }
echo "strict devmem: refused with both fixes named; reachable after unbinding nvme"
echo "PASS: QEMU NVMe PMR lane ($acked acked, $recovered recovered after SIGKILL)"
