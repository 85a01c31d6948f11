#!/bin/busybox sh
# SPDX-License-Identifier: MIT
# /init of the QEMU lane's initramfs (tests/qemu/run.sh builds it). Runs one
# phase, chosen on the kernel command line (pmwal.phase=write|verify|strict), against
# the emulated NVMe controller's PMR at 0000:00:04.0, and reports on the
# serial console with PMWAL-* lines the host parses:
#   write:  probe, create a log on the PMR, append records one pmwal process
#           each, print "PMWAL-ACK i" after each append returned durable; the
#           host kills QEMU somewhere in this loop.
#   verify: verify and dump the log after the "power loss".
#   strict: (booted without iomem=relaxed) the refused BAR mmap's message,
#           then the fix it names (unbinding nvme) making the PMR reachable.
# write and verify boot with iomem=relaxed: Debian's CONFIG_IO_STRICT_DEVMEM
# refuses BAR mmaps while the nvme driver owns the controller otherwise.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# As on any Linux system: a log's writer keeps its status page in /dev/shm.
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mkdir -p /tmp && mount -t tmpfs tmpfs /tmp

arg() { sed -n "s/.*pmwal\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
phase=$(arg phase)
records=$(arg records)
bdf=0000:00:04.0
target="pmr:$bdf,enable"

echo "PMWAL-BEGIN $phase"
case "$phase" in
write)
	pmwal probe
	pmwal probe "pmr:$bdf" --json | sed 's/^/PMWAL-PROBE /'
	# the controller's namespace: NVMe identify through libnvme, queue/
	pmwal probe /dev/nvme0n1 --json | sed 's/^/PMWAL-PROBE-NS /'
	echo "PMWAL-PROBE-NS-RC $?"
	pmwal probe /dev/nvme0 --json | sed 's/^/PMWAL-PROBE-CTRL /'
	# the io_uring backend on the real NVMe driver's block device
	pmwal create /dev/nvme0n1 --force >/dev/null &&
		seq 1 500 | pmwal append /dev/nvme0n1 &&
		pmwal info /dev/nvme0n1 | sed -n 's/^  \(medium\|durability\) /PMWAL-NS-INFO &/p'
	echo "PMWAL-NS-APPEND-RC $?"
	if ! pmwal create "$target" --size 4194304; then
		echo "PMWAL-FAIL create"
		poweroff -f
	fi
	pmwal info "$target"
	i=1
	while [ "$i" -le "$records" ]; do
		if echo "rec-$i" | pmwal append "$target" >/dev/null; then
			echo "PMWAL-ACK $i"
		else
			echo "PMWAL-FAIL append $i"
			break
		fi
		i=$((i + 1))
	done
	echo "PMWAL-WRITE-DONE"
	# the host kills QEMU; should it not, stay up rather than shut down
	# cleanly, so the test never passes on a clean shutdown by mistake
	sleep 600
	;;
verify)
	pmwal verify /dev/nvme0n1 --json | sed 's/^/PMWAL-NS-VERIFY /'
	pmwal verify "$target"
	echo "PMWAL-VERIFY-RC $?"
	pmwal dump "$target" | sed 's/^/PMWAL-REC /'
	echo "PMWAL-DUMP-RC $?"
	;;
strict)
	# booted without iomem=relaxed: the BAR mmap must be refused with
	# the message naming both fixes, and the second fix must work
	pmwal probe "pmr:$bdf"
	echo "PMWAL-STRICT-RC $?"
	echo "$bdf" >/sys/bus/pci/drivers/nvme/unbind
	pmwal probe "pmr:$bdf" | grep -E '^  (supported|write_barrier):'
	echo "PMWAL-UNBOUND-RC $?"
	;;
*)
	echo "PMWAL-FAIL unknown phase '$phase'"
	;;
esac
echo "PMWAL-END"
poweroff -f
