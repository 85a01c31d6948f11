// SPDX-License-Identifier: MIT
/*
 * dev_pmem.c - the mapped device: a persistent region from pmr/ (libpmem2
 * DAX or emulated file, device-DAX, NVMe PMR, fake PMR) behind the engine's
 * device interface. A group commit is one non-temporal copy per piece and a
 * single barrier for the whole group (one drain, or one SFENCE + PMR read):
 * the cheap path docs/pmr.md describes, instead of a barrier per record. The
 * device never parses a block; it only refuses, at open, a medium that can
 * give no durability (a PMR without a write barrier mechanism).
 */
#include "device.h"
#include "pmwal.h"
#include "pmr.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct wal_dev_pmem {
	struct wal_dev dev; /* first: the engine holds a struct wal_dev * */
	struct pmr_region *region;
	bool readonly;
};

static struct wal_dev_pmem *to_pmem(struct wal_dev *dev)
{
	return (struct wal_dev_pmem *)dev;
}

static bool in_bounds(const struct wal_dev *dev, uint64_t off, size_t len)
{
	return off <= dev->size_bytes && len <= dev->size_bytes - off;
}

static int pmem_store(struct wal_dev *dev, const struct wal_io *ios, int count)
{
	struct wal_dev_pmem *d = to_pmem(dev);

	if (d->readonly)
		return -EROFS;
	/* Check every piece before storing any: a half-applied group is
	 * harmless (nothing is acked) but pointless. */
	for (int i = 0; i < count; i++)
		if (!in_bounds(dev, ios[i].off, ios[i].len))
			return -EINVAL;
	for (int i = 0; i < count; i++)
		pmr_copy_nodrain(d->region, ios[i].off, ios[i].buf, ios[i].len);
	return 0;
}

static int pmem_barrier(struct wal_dev *dev)
{
	return pmr_barrier(to_pmem(dev)->region);
}

static int pmem_commit(struct wal_dev *dev, const struct wal_io *ios, int count,
		       struct wal_submitted *submitted)
{
	(void)submitted; /* stores do not wait: nothing to overlap */
	int rc = pmem_store(dev, ios, count);

	return rc ? rc : pmem_barrier(dev);
}

static int pmem_read(struct wal_dev *dev, void *buf, size_t len, uint64_t off)
{
	if (!in_bounds(dev, off, len))
		return -EINVAL;
	memcpy(buf, pmr_base(to_pmem(dev)->region) + off, len);
	return 0;
}

static const uint8_t *pmem_map(struct wal_dev *dev)
{
	return pmr_base(to_pmem(dev)->region);
}

static void pmem_close(struct wal_dev *dev)
{
	struct wal_dev_pmem *d = to_pmem(dev);

	if (!d)
		return;
	pmr_close(d->region);
	free(d);
}

static int pmem_reload(struct wal_dev *dev)
{
	return pmr_reload(to_pmem(dev)->region);
}

/* Whether the block device under @path's filesystem can do DAX (its
 * queue/dax; a partition's is its disk's). */
static bool fs_device_dax(const char *path)
{
	char sys[64], real[PATH_MAX], attr[PATH_MAX + 32], buf[4] = "";
	struct stat st;
	int fd;

	if (stat(path, &st) != 0)
		return false;
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	if (!realpath(sys, real))
		return false;
	snprintf(attr, sizeof(attr), "%s/partition", real);
	snprintf(attr, sizeof(attr),
		 access(attr, F_OK) == 0 ? "%s/../queue/dax" : "%s/queue/dax", real);
	fd = open(attr, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	close(fd);
	return buf[0] == '1';
}

/* Whether the kernel maps @path with DAX (statx's STATX_ATTR_DAX). */
static bool file_dax(const char *path)
{
	struct statx stx;

	return statx(AT_FDCWD, path, 0, STATX_BASIC_STATS, &stx) == 0 &&
	       (stx.stx_attributes_mask & STATX_ATTR_DAX) &&
	       (stx.stx_attributes & STATX_ATTR_DAX);
}

/*
 * What `pmwal info` says makes a group durable, from what libpmem2 chose:
 * cache-line granularity is a flush (non-temporal stores or CLWB) and a drain
 * (SFENCE), which a DAX file only has with MAP_SYNC (page faults commit the
 * file's metadata) and device-DAX always; byte granularity (eADR) needs no
 * flush; page granularity is msync. A page-granular file says why when its
 * medium could do better: a DAX file without MAP_SYNC (asynchronous DAX such
 * as virtio-pmem: msync is the right barrier there), or a file on a DAX
 * capable device mounted without DAX (the fix: mount -o dax). The log works
 * either way.
 */
static void durability_text(char *out, size_t len, const struct pmr_info *info,
			    const char *path)
{
	bool mapped = info->kind == PMR_KIND_PMEM || info->kind == PMR_KIND_DEVDAX;
	bool drain = mapped && strcmp(info->barrier, "pmem2 drain") == 0;
	const char *how = info->barrier;
	const char *why = NULL;

	if (drain)
		how = strcmp(info->granularity, "byte") == 0 ? "pmem2 drain"
							     : "pmem2 flush+drain";
	if (drain && info->kind == PMR_KIND_DEVDAX)
		why = "device-DAX";
	else if (drain && !info->emulated)
		why = "MAP_SYNC";
	else if (info->kind == PMR_KIND_PMEM && !strcmp(info->granularity, "page") &&
		 file_dax(path))
		why = "DAX without MAP_SYNC";
	else if (info->kind == PMR_KIND_PMEM && !strcmp(info->granularity, "page") &&
		 fs_device_dax(path))
		why = "emulated: not DAX; mount -o dax for MAP_SYNC";
	else if (info->emulated)
		why = "emulated";
	if (why)
		snprintf(out, len, "%.40s (%s)", how, why);
	else
		snprintf(out, len, "%.52s", how);
}

static const struct wal_dev_ops pmem_ops = {
    .reload = pmem_reload,
    .commit = pmem_commit,
    .store = pmem_store,
    .barrier = pmem_barrier,
    .read = pmem_read,
    .close = pmem_close,
    .map = pmem_map,
};

int wal_dev_open_pmem(const struct wal_dev_params *p, struct wal_dev **out, char *err,
		      size_t errlen)
{
	struct pmr_params pp = {
	    .target = p->target,
	    .create_bytes = p->create_bytes,
	    .create_excl = p->create_excl,
	    .readonly = p->readonly,
	};
	struct wal_dev_pmem *d;
	struct pmwal_target t;
	struct pmr_info info;
	int rc;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = pmr_open(&pp, &d->region, err, errlen);
	if (rc)
		goto cleanup_d;
	pmr_get_info(d->region, &info);
	if (!info.durable && !p->readonly) {
		snprintf(
		    err, errlen,
		    "%s: %s has no write barrier (PMRWBM=%u): no write to it can be "
		    "known durable, so pmwal will not log to it; open it read-only to "
		    "inspect it, or use a medium with a barrier",
		    p->target, info.kind_name, info.pmrwbm);
		rc = PMWAL_ENOTDURABLE;
		goto cleanup_region;
	}

	/* A device's size is its own (a file grows to the size asked): asking
	 * for more is a namespace too small for this log. */
	if (info.kind == PMR_KIND_DEVDAX && p->create_bytes > pmr_size(d->region)) {
		snprintf(err, errlen,
			 "%s: the device-DAX namespace holds %llu bytes, less than the "
			 "%llu asked: give a size of at most %llu (or none: the whole "
			 "device), or make a larger namespace (ndctl create-namespace "
			 "-m devdax -s SIZE)",
			 p->target, (unsigned long long)pmr_size(d->region),
			 (unsigned long long)p->create_bytes,
			 (unsigned long long)pmr_size(d->region));
		rc = PMWAL_EBADOPT;
		goto cleanup_region;
	}
	d->readonly = p->readonly;
	d->dev.ops = &pmem_ops;
	d->dev.size_bytes = pmr_size(d->region);
	/* Loads and stores work at any alignment; 64 keeps pieces on cache
	 * lines, the unit both pmem flushes and the fake PMR tracks. */
	d->dev.sector_bytes = 64;
	/* An aligned 8-byte store is power-fail atomic on persistent memory;
	 * nothing is promised for stores over PCIe into a PMR. */
	d->dev.atomic_write_bytes =
	    info.kind == PMR_KIND_PMEM || info.kind == PMR_KIND_DEVDAX ? 8 : 0;
	d->dev.caps = (info.emulated ? WAL_CAP_EMULATED : 0) |
		      (info.durable ? 0 : WAL_CAP_NOT_DURABLE);
	snprintf(d->dev.medium, sizeof(d->dev.medium), "%s", info.kind_name);
	snprintf(d->dev.io_path, sizeof(d->dev.io_path), "mapped");
	(void)pmwal_target_parse(p->target, &t); /* pmr_open accepted it */
	durability_text(d->dev.durability, sizeof(d->dev.durability), &info, t.path);
	snprintf(d->dev.granularity, sizeof(d->dev.granularity), "%s", info.granularity);
	*out = &d->dev;
	return 0;

cleanup_region:
	pmr_close(d->region);
cleanup_d:
	free(d);
	return rc;
}

/* The region under a mapped device, for crash tests (pmr_fake_power_loss)
 * and for bench; NULL if @dev is not a mapped device. */
struct pmr_region *wal_dev_pmem_region(struct wal_dev *dev)
{
	if (!dev || dev->ops != &pmem_ops)
		return NULL;
	return to_pmem(dev)->region;
}
