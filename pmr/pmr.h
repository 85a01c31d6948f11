/* SPDX-License-Identifier: MIT */
/*
 * pmr.h - persistent regions: memory that keeps its contents across power loss
 * once a barrier says so. Stands alone (libpmem2, sysfs); never includes the
 * log engine, so bench can measure a raw region and the engine can log to one.
 *
 * Kinds of region, chosen from the target string:
 *   pmem:PATH / PATH   a file mapped through libpmem2 (DAX file: real; any other
 *                      file: PAGE granularity, or CACHE_LINE when forced with
 *                      PMEM2_FORCE_GRANULARITY; either way flagged emulated);
 *   /dev/daxX.Y        device-DAX through libpmem2;
 *   pmr:BDF            an NVMe controller's Persistent Memory Region, mapped
 *                      write-combining from the PCI BAR in sysfs;
 *   fakepmr:PATH[,wbm=N][,nrdy_ms=N][,hsts=N]
 *                      a file-backed simulated PMR with a software register
 *                      block; runs the whole PMR code path on any machine.
 */
#ifndef PMWAL_PMR_H
#define PMWAL_PMR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmr_region;

enum pmr_kind {
	PMR_KIND_PMEM = 1,   /* libpmem2 file mapping */
	PMR_KIND_DEVDAX = 2, /* libpmem2 device DAX */
	PMR_KIND_NVME = 3,   /* NVMe PMR through the BAR */
	PMR_KIND_FAKE = 4,   /* simulated PMR */
};

struct pmr_params {
	const char *target;
	uint64_t create_bytes; /* pmem:/fakepmr: create or extend the file to this size */
	bool readonly;
	bool enable;           /* pmr: set PMRCTL.EN if the PMR is disabled */
};

struct pmr_info {
	enum pmr_kind kind;
	uint64_t size_bytes;
	char kind_name[16];    /* "pmem", "devdax", "pmr", "fakepmr" */
	char granularity[16];  /* "byte", "cache-line", "page" */
	char barrier[64];      /* e.g. "pmem2 drain", "sfence + PMRSTS read" */
	bool emulated;         /* not real persistent media */
	bool durable;          /* a barrier makes stores persistent */
	uint32_t pmrwbm;       /* NVMe/fake PMR: write barrier mechanism bits */
};

/* Open a region. Returns 0, or -errno / a negative code with @err saying what
 * is wrong and what to do (no PMR, PMR disabled, strict devmem, permission). */
int pmr_open(const struct pmr_params *p, struct pmr_region **out, char *err, size_t errlen);
void pmr_close(struct pmr_region *r);

uint8_t *pmr_base(const struct pmr_region *r);
uint64_t pmr_size(const struct pmr_region *r);
void pmr_get_info(const struct pmr_region *r, struct pmr_info *info);

/* Copy @len bytes to @off with non-temporal stores (flushed, not drained). */
void pmr_copy_nodrain(struct pmr_region *r, uint64_t off, const void *src, size_t len);

/* Make every earlier copy persistent (drain, or SFENCE + the read PMRWBM names).
 * Returns 0, or -errno (-EIO: controller reports an error; -ENOTSUP: no
 * barrier mechanism, nothing can be claimed durable). */
int pmr_barrier(struct pmr_region *r);

#endif /* PMWAL_PMR_H */
