#!/bin/busybox sh
# SPDX-License-Identifier: MIT
# /init of the NVDIMM lane's initramfs (tests/qemu/nvdimm.sh builds it). The
# machine has two emulated NVDIMMs: region0 becomes an fsdax namespace
# (/dev/pmem0, ext4 mounted -o dax on /mnt/dax), region1 a devdax one
# (/dev/dax1.0). One phase runs, chosen on the kernel command line
# (pmwal.phase=write|verify), and reports on the serial console with PMWAL-*
# lines the host parses:
#   write:  load the NVDIMM modules, make the namespaces (ndctl), the
#           filesystem; probe; the refusals (bad input); the raw-region
#           benchmark phases; create a log on each; then append records, one
#           pmwal process each, printing "PMWAL-ACK fsdax|devdax i" after each
#           append returned durable; the host kills QEMU in this loop.
#   verify: load the modules (the namespaces come back from their info
#           blocks), mount, verify and dump both logs.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# As on any Linux system: a log's writer keeps its status page in /dev/shm.
mkdir -p /dev/shm && mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mkdir -p /tmp /run /mnt/dax /mnt/nodax && mount -t tmpfs tmpfs /tmp && mount -t tmpfs tmpfs /run

arg() { sed -n "s/.*pmwal\.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
phase=$(arg phase)
records=$(arg records)
fslog=pmem:/mnt/dax/log
daxlog=/dev/dax1.0

echo "PMWAL-BEGIN $phase"
# modules.txt: the NVDIMM modules in load order (dependencies first)
while read -r m; do
	insmod "/modules/$m.ko" || echo "PMWAL-MODULE-FAIL $m"
done </modules.txt
# the devices appear asynchronously after the drivers bind
wait_dev() {
	i=0
	while [ ! -e "$1" ] && [ "$i" -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$1" ]
}

case "$phase" in
write)
	wait_dev /dev/pmem0 || { echo "PMWAL-SKIP no /dev/pmem0 after loading the NVDIMM modules"; poweroff -f; }
	wait_dev /dev/pmem1 || { echo "PMWAL-SKIP no /dev/pmem1 after loading the NVDIMM modules"; poweroff -f; }
	ndctl list -N | sed 's/^/PMWAL-NDCTL-RAW /'
	# label-less NVDIMMs: each region holds one raw namespace; reconfigure
	# it in place (an info block at its start says the mode across boots)
	ndctl create-namespace -f -e namespace0.0 -m fsdax >/tmp/ns0 2>&1
	echo "PMWAL-NS-FSDAX-RC $?"
	ndctl create-namespace -f -e namespace1.0 -m devdax -a 2M >/tmp/ns1 2>&1
	echo "PMWAL-NS-DEVDAX-RC $?"
	sed 's/^/PMWAL-NDCTL /' /tmp/ns0 /tmp/ns1
	wait_dev /dev/pmem0 && wait_dev $daxlog ||
		{ echo "PMWAL-FAIL namespaces: no /dev/pmem0 or $daxlog"; poweroff -f; }

	# a pmem file without MAP_SYNC, twice: ext4 on pmem0 mounted without
	# DAX, and ext4 mounted -o dax on virtio-pmem (asynchronous DAX: DAX,
	# but MAP_SYNC refused). libpmem2 maps both at page granularity (msync);
	# pmwal must say which it is and what to do.
	mkfs.ext4 -q -F -b 4096 /dev/pmem0 || echo "PMWAL-FAIL mkfs.ext4"
	mount -t ext4 -o dax=never /dev/pmem0 /mnt/nodax
	vp=
	for b in /sys/block/pmem*; do
		readlink -f "$b" | grep -q virtio && vp=/dev/${b##*/}
	done
	if [ -n "$vp" ] && mkfs.ext4 -q -F -b 4096 "$vp" && mkdir -p /mnt/vdax &&
		mount -t ext4 -o dax "$vp" /mnt/vdax; then
		grep /mnt/vdax /proc/mounts | sed 's/^/PMWAL-VPMEM-MOUNT /'
		dirs="nodax vdax"
	else
		echo "PMWAL-VPMEM-NONE no virtio-pmem device with DAX ($vp)"
		dirs=nodax
	fi
	for d in $dirs; do
		n=$(echo "$d" | tr a-z A-Z)
		pmwal create "pmem:/mnt/$d/log" --size 4194304 >/tmp/out 2>&1
		echo "PMWAL-$n-CREATE-RC $?"
		echo rec-1 | pmwal append "pmem:/mnt/$d/log" >>/tmp/out 2>&1 &&
			pmwal verify "pmem:/mnt/$d/log" >>/tmp/out 2>&1
		echo "PMWAL-$n-VERIFY-RC $?"
		pmwal info "pmem:/mnt/$d/log" >>/tmp/out 2>&1
		sed "s/^/PMWAL-$n-INFO /" /tmp/out
		pmwal probe "/mnt/$d/log" --json | sed "s/^/PMWAL-PROBE-$n /"
		rm -f "/mnt/$d/log"
		umount "/mnt/$d"
	done

	mount -t ext4 -o dax /dev/pmem0 /mnt/dax || echo "PMWAL-FAIL mount -o dax"
	grep /mnt/dax /proc/mounts | sed 's/^/PMWAL-MOUNT /'

	# bad input 2: a log larger than the namespace
	pmwal create $daxlog --size 1073741824 --force >/tmp/out 2>&1
	echo "PMWAL-BAD-DEVDAX-SIZE-RC $?"
	sed 's/^/PMWAL-BAD-DEVDAX-SIZE /' /tmp/out
	pmwal create pmem:/mnt/dax/big --size 1073741824 >/tmp/out 2>&1
	echo "PMWAL-BAD-FSDAX-SIZE-RC $?"
	sed 's/^/PMWAL-BAD-FSDAX-SIZE /' /tmp/out
	rm -f /mnt/dax/big
	# bad input 3: a log smaller than the smallest
	pmwal create $daxlog --size 8192 --force >/tmp/out 2>&1
	echo "PMWAL-BAD-DEVDAX-SMALL-RC $?"
	sed 's/^/PMWAL-BAD-DEVDAX-SMALL /' /tmp/out
	# bad input 4: a block device named as pmem
	pmwal create pmem:/dev/pmem0 --size 4194304 >/tmp/out 2>&1
	echo "PMWAL-BAD-PMEM-BLK-RC $?"
	sed 's/^/PMWAL-BAD-PMEM-BLK /' /tmp/out

	# the raw-region benchmark phases (TCG: functional, not a measurement)
	for t in pmem:/mnt/dax/bench $daxlog; do
		pmwal bench io "$t" --rw write --bs 4k --size 8m --runtime 1s --ramp 0 \
			--force >/tmp/out 2>&1
		echo "PMWAL-BENCH-IO-RC $? $t"
		sed "s|^|PMWAL-BENCH-IO $t |" /tmp/out | tail -15
		pmwal bench primitives "$t" --size 8m --runtime 1s --ramp 0 \
			--force >/tmp/out 2>&1
		echo "PMWAL-BENCH-PRIM-RC $? $t"
		sed "s|^|PMWAL-BENCH-PRIM $t |" /tmp/out | tail -15
	done
	rm -f /mnt/dax/bench

	# device-DAX at 4 KiB alignment (2 MiB is the default): the log maps
	# whole alignment units, so any the kernel offers must do
	if ndctl create-namespace -f -e namespace1.0 -m devdax -a 4k >/tmp/out 2>&1 &&
		wait_dev $daxlog; then
		pmwal create $daxlog --size 4194304 --force >/tmp/out 2>&1 &&
			seq 1 20 | pmwal append $daxlog >>/tmp/out 2>&1 &&
			pmwal verify $daxlog >>/tmp/out 2>&1
		echo "PMWAL-ALIGN4K-RC $?"
		pmwal probe $daxlog --json | grep -E '"(align|pmem2_alignment|map_sync)"' |
			sed 's/^/PMWAL-ALIGN4K-PROBE /'
	else
		echo "PMWAL-ALIGN4K-RC none"
	fi
	sed 's/^/PMWAL-ALIGN4K /' /tmp/out
	ndctl create-namespace -f -e namespace1.0 -m devdax -a 2M >/tmp/out 2>&1 &&
		wait_dev $daxlog || { cat /tmp/out; echo "PMWAL-FAIL back to 2M devdax"; poweroff -f; }

	if ! pmwal create $fslog --size 8388608; then
		echo "PMWAL-FAIL create $fslog"
		poweroff -f
	fi
	if ! pmwal create $daxlog --size 8388608 --force; then
		echo "PMWAL-FAIL create $daxlog"
		poweroff -f
	fi
	pmwal probe /mnt/dax/log --json | sed 's/^/PMWAL-PROBE-FSDAX /'
	pmwal probe $daxlog --json | sed 's/^/PMWAL-PROBE-DEVDAX /'
	pmwal probe /dev/pmem0 --json | sed 's/^/PMWAL-PROBE-PMEM0 /'
	pmwal probe --json | sed 's/^/PMWAL-PROBE-LIST /'
	pmwal info $fslog | sed 's/^/PMWAL-INFO-FSDAX /'
	pmwal info $daxlog | sed 's/^/PMWAL-INFO-DEVDAX /'
	echo "PMWAL-APPENDING"
	i=1
	while [ "$i" -le "$records" ]; do
		if echo "rec-$i" | pmwal append $fslog >/dev/null; then
			echo "PMWAL-ACK fsdax $i"
		else
			echo "PMWAL-FAIL append fsdax $i"
			break
		fi
		if echo "rec-$i" | pmwal append $daxlog >/dev/null; then
			echo "PMWAL-ACK devdax $i"
		else
			echo "PMWAL-FAIL append devdax $i"
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
	wait_dev /dev/pmem0 && wait_dev $daxlog ||
		{ echo "PMWAL-FAIL after the kill: no /dev/pmem0 or $daxlog"; poweroff -f; }
	ndctl list -N | sed 's/^/PMWAL-NDCTL /'
	mount -t ext4 -o dax /dev/pmem0 /mnt/dax || echo "PMWAL-FAIL mount -o dax after the kill"
	for t in $fslog $daxlog; do
		case $t in pmem:*) n=FSDAX ;; *) n=DEVDAX ;; esac
		pmwal verify "$t" >/tmp/out 2>&1
		echo "PMWAL-VERIFY-RC-$n $?"
		sed "s/^/PMWAL-VERIFY-$n /" /tmp/out
		pmwal dump "$t" >/tmp/out 2>&1
		echo "PMWAL-DUMP-RC-$n $?"
		sed "s/^/PMWAL-REC-$n /" /tmp/out
	done
	;;
*)
	echo "PMWAL-FAIL unknown phase '$phase'"
	;;
esac
echo "PMWAL-END"
poweroff -f
