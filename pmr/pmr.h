/* SPDX-License-Identifier: MIT */
/*
 * pmr.h - persistent regions: memory that keeps its contents across power loss
 * once a barrier says so. Stands alone (libpmem2, sysfs); never includes the
 * log engine, so bench can measure a raw region and the engine can log to one.
 * Targets are taken apart by pmwal_target_parse(), from libpmwal's public
 * header (pmwal.h), as everywhere else.
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
 *
 * pmr: and fakepmr: targets take ",enable" (same as pmr_params.enable), and
 * fakepmr: also pmrs=0|1 (CAP.PMRS), en=0|1 (PMRCTL.EN at start, default 1),
 * pmrto=N, pmrtu=N (enable timeout, default 1 x 500 ms), and for crash-point
 * exploration crash_at=N[,crash_mode=M][,crash_seed=S]: the N-th barrier that
 * finds stores pending loses power instead (pmr_fake_power_loss() with mode
 * M, seed S, default N) and the process is killed with SIGKILL.
 *
 * Threads: pmem: and devdax regions take copies and barriers from any number
 * of threads; a barrier makes durable at least every copy its own thread made
 * before it. pmr: and fakepmr: regions are written by one thread at a time
 * (copy and barrier: the PMR protocol has one barrier for the controller).
 * Loads through pmr_base() may come from any thread.
 */
#ifndef PMWAL_PMR_H
#define PMWAL_PMR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "openat.h"

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
	bool enable;	  /* pmr: set PMRCTL.EN if the PMR is disabled */
	bool create_excl; /* with create_bytes: fail with -EEXIST if the file exists */
};

struct pmr_info {
	enum pmr_kind kind;
	uint64_t size_bytes;
	char kind_name[16];   /* "pmem", "devdax", "pmr", "fakepmr" */
	char granularity[16]; /* "byte", "cache-line", "page" */
	char barrier[64];     /* e.g. "pmem2 drain", "sfence + PMRSTS read" */
	bool emulated;	      /* not real persistent media */
	bool durable;	      /* a barrier makes stores persistent */
	uint32_t pmrwbm;      /* NVMe/fake PMR: write barrier mechanism bits */
};

/*
 * Open a region. On success returns 0 and *out (release with pmr_close);
 * on failure *out is NULL and @err (if given) says what is wrong and what to
 * do. Errors: -EINVAL (malformed target or option, empty or tiny file),
 * -ENOENT (no such file or PCI device), -EEXIST (create_excl), -EISDIR,
 * -EACCES/-EPERM (permission: run as root; for BARs also kernel lockdown),
 * -EINVAL from a BAR mmap (strict devmem: iomem=relaxed or unbind nvme),
 * -ENODEV (not NVMe, no PMR, not a DAX device), -ENXIO (PMR disabled and no
 * enable), -ETIMEDOUT (NRDY past PMRTO), -EIO (PMR health, device gone),
 * -EROFS (PMR health "read only" on a writable open), -ENOSPC, -ENOMEM.
 * A PMR whose PMRWBM offers no barrier opens with info.durable false.
 */
int pmr_open(const struct pmr_params *p, struct pmr_region **out, char *err,
	     size_t errlen);
void pmr_close(struct pmr_region *r);

/* pmr_open_shared_safe(), pmr_walk(), pmr_in_dev_fs(): openat.h. */

uint8_t *pmr_base(const struct pmr_region *r);
uint64_t pmr_size(const struct pmr_region *r);
void pmr_get_info(const struct pmr_region *r, struct pmr_info *info);

/* Copy @len bytes to @off with non-temporal stores (flushed, not drained);
 * not durable until pmr_barrier(). @off + @len must lie inside the region,
 * and the region must be writable (programmer errors, asserted). */
void pmr_copy_nodrain(struct pmr_region *r, uint64_t off, const void *src, size_t len);

/*
 * Make every earlier copy persistent: one drain (pmem), one msync of the
 * pages written since the last barrier (PAGE granularity), or SFENCE and the
 * read PMRWBM names (PMR). Returns 0, or -EIO (controller reports an error, or
 * the fake PMR's file write failed), -errno from msync, -ENOTSUP (no barrier
 * mechanism: nothing can be claimed durable), -EROFS (read-only region).
 * A failure is sticky: every later barrier fails too, so nothing written
 * before it is ever reported durable.
 */
int pmr_barrier(struct pmr_region *r);

/*
 * Forget what this process holds of the region and read it from the medium
 * again: what another process made durable since this one opened it. Only
 * the fake PMR keeps such a copy (its controller's volatile buffer lives in
 * the opening process); a real PMR or a mapped file is read in place.
 * Nothing may be stored and not yet barriered. Returns 0 or -errno.
 */
int pmr_reload(struct pmr_region *r);

/*
 * NVMe PMR registers, read and decoded (pmr:BDF and fakepmr: targets). Filled
 * by pmr_query_caps() without enabling or mapping the PMR itself, so probing
 * never changes the device.
 */
struct pmr_caps {
	uint64_t cap; /* CAP (offset 0) */
	uint32_t pmrcap, pmrctl, pmrsts, pmrebs, pmrswtp;
	bool pmrs;		   /* CAP.PMRS: the controller has a PMR */
	bool rds, wds, cmss;	   /* PMRCAP: read/write data support, memory space */
	unsigned bir;		   /* PMRCAP.BIR: BAR holding the PMR */
	unsigned pmrtu;		   /* PMRCAP.PMRTU: 0 = 500 ms units, 1 = minutes */
	unsigned pmrto;		   /* PMRCAP.PMRTO: enable timeout in PMRTU units */
	unsigned pmrwbm;	   /* PMRCAP.PMRWBM bits 13:10 */
	bool enabled;		   /* PMRCTL.EN */
	bool nrdy, cbai;	   /* PMRSTS.NRDY, PMRSTS.CBAI */
	unsigned hsts, err;	   /* PMRSTS.HSTS (0 = normal), PMRSTS.ERR */
	uint64_t timeout_ms;	   /* enable timeout decoded from PMRTO/PMRTU */
	uint64_t elasticity_bytes; /* PMREBS: buffer size decoded (0 if none) */
	uint64_t bar_bytes;	   /* size of BAR <bir> (0 if unknown) */
};

/* Read and decode the PMR registers of a pmr:BDF or fakepmr: target. Returns
 * 0, or -errno with @err naming the cause and the fix (as pmr_open). */
int pmr_query_caps(const char *target, struct pmr_caps *caps, char *err, size_t errlen);

/* Names for PMRSTS.HSTS and the PMRWBM mechanism ("PMRSTS read", ...). */
const char *pmr_hsts_name(unsigned hsts);
const char *pmr_wbm_name(unsigned pmrwbm);

/* What a simulated power loss does to stores made since the last barrier. */
enum pmr_loss_mode {
	PMR_LOSS_DROP_ALL = 0,	  /* every pending store is lost */
	PMR_LOSS_KEEP_SUBSET = 1, /* each pending 64-byte line survives or not */
	PMR_LOSS_TEAR_WORDS = 2,  /* each 8-byte word of a pending line survives or not */
	PMR_LOSS_ZERO_LINES = 3, /* each pending line survives, is lost, or reads zeros */
	PMR_LOSS_GARBAGE_LINES =
	    4, /* each pending line survives, is lost, or is garbage */
};

/*
 * fakepmr: only. Simulate a power loss: stores since the last barrier are
 * dropped, kept or torn as @mode says, chosen by a PRNG seeded with @seed (the
 * same seed gives the same image). Barriered stores are never touched.
 * Afterwards the region shows what a reboot would find (loads read the
 * durable image) and stays usable. Returns the number of pending 64-byte lines
 * that were affected, or -EINVAL (not a fake PMR, or unknown mode).
 */
int pmr_fake_power_loss(struct pmr_region *r, uint64_t seed, int mode);

/*
 * fakepmr: only. Set PMRSTS.HSTS from now on, as a controller would report a
 * health problem: later barriers fail with -EIO while it is not 0. Returns 0
 * or -EINVAL (not a fake PMR).
 */
int pmr_fake_set_hsts(struct pmr_region *r, unsigned hsts);

/* fakepmr: only. Bytes in 64-byte lines stored since the last barrier. */
uint64_t pmr_fake_pending_bytes(const struct pmr_region *r);

#endif /* PMWAL_PMR_H */
