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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	snprintf(d->dev.durability, sizeof(d->dev.durability), "%.52s%s", info.barrier,
		 info.emulated ? " (emulated)" : "");
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
