/* SPDX-License-Identifier: MIT */
/*
 * pmr_internal.h - what the kinds of region share inside pmr/: the region
 * object every kind embeds first, its small ops table, and the NVMe PMR
 * protocol (register decoding, enable, barrier) written once against a
 * register-access seam, so the real BAR (nvme.c) and the simulated register
 * block (fake.c) run the same code. Never installed, never seen by wal/.
 */
#ifndef PMWAL_PMR_INTERNAL_H
#define PMWAL_PMR_INTERNAL_H

#include "pmr.h"

#include <stdarg.h>

struct pmr_region_ops {
	void (*copy_nodrain)(struct pmr_region *r, uint64_t off, const void *src,
			     size_t len);
	int (*barrier)(struct pmr_region *r);
	void (*close)(struct pmr_region *r);
	/* Optional: read the medium again where this process keeps a copy of
	 * it (the fake PMR's shadow), with nothing stored since the last
	 * barrier. */
	int (*reload)(struct pmr_region *r);
};

/* Every kind embeds this as its first member. */
struct pmr_region {
	const struct pmr_region_ops *ops;
	uint8_t *base;
	uint64_t size_bytes;
	bool readonly; /* mapped without write access: copies refused */
	struct pmr_info info;
};

/* NVMe controller register offsets (NVMe 1.4, section 3.1). */
#define PMR_REG_CAP	0x0000u
#define PMR_REG_PMRCAP	0x0e00u
#define PMR_REG_PMRCTL	0x0e04u
#define PMR_REG_PMRSTS	0x0e08u
#define PMR_REG_PMREBS	0x0e0cu
#define PMR_REG_PMRSWTP 0x0e10u
#define PMR_BAR0_MIN	0x1000u /* registers we touch lie below this */

#define PMR_CAP_PMRS_BIT 56
#define PMR_PMRCTL_EN	 0x1u
#define PMR_PMRSTS_NRDY	 (1u << 8)

/* PMRWBM bits: which read makes earlier PMR writes persistent. */
#define PMR_WBM_PMR_READ    0x1u
#define PMR_WBM_PMRSTS_READ 0x2u

enum pmr_barrier_kind {
	PMR_BARRIER_NONE = 0,	 /* PMRWBM offers nothing: not durable */
	PMR_BARRIER_PMRSTS = 1,	 /* SFENCE, then read PMRSTS */
	PMR_BARRIER_PMR_READ = 2 /* SFENCE, then read from the PMR */
};

struct pmr_ctrl;

/*
 * The seam between the PMR protocol and a controller. Real: MMIO loads and
 * stores on BAR0 and an uncached load from the PMR BAR. Fake: a struct, and
 * the reads that the PMRWBM names commit the pending stores.
 */
struct pmr_ctrl_ops {
	uint32_t (*reg_read32)(struct pmr_ctrl *c, uint32_t off);
	void (*reg_write32)(struct pmr_ctrl *c, uint32_t off, uint32_t val);
	/* One uncached load from the PMR itself (PMRWBM bit 0). */
	void (*pmr_read)(struct pmr_ctrl *c);
	/* Optional: an error the barrier could not see in PMRSTS (fake only). */
	int (*barrier_check)(struct pmr_ctrl *c);
};

struct pmr_ctrl {
	const struct pmr_ctrl_ops *ops;
	const char *name; /* for messages: "pmr:0000:00:04.0" */
	struct pmr_caps caps;
	enum pmr_barrier_kind barrier;
	int failed; /* sticky barrier error (-EIO), 0 while healthy */
	/* Barrier reads started and completed (pmr_ctrl_barrier shares them). */
	uint64_t reads_started, reads_done;
	uint32_t done_word; /* reads_done's low half: waiters sleep on it */
	uint32_t sleepers;  /* waiters asleep or about to be */
};

/* Read CAP and the PMR registers through the seam and decode them. */
void pmr_ctrl_read_caps(struct pmr_ctrl *c);

/*
 * The open protocol shared by real and fake PMRs: CAP.PMRS, PMRCTL.EN (set
 * when @enable), NRDY within the PMRTO timeout, HSTS, barrier choice. Returns
 * 0 or -errno with @err naming cause and fix.
 */
int pmr_ctrl_start(struct pmr_ctrl *c, bool enable, bool readonly, char *err,
		   size_t errlen);

/* SFENCE then a read PMRWBM names, started after it (shared between
 * threads). 0, -EIO or -ENOTSUP. */
int pmr_ctrl_barrier(struct pmr_ctrl *c);

/* Fill the info fields every PMR kind shares from the decoded registers. */
void pmr_ctrl_fill_info(const struct pmr_ctrl *c, struct pmr_info *info);

/* Drain the CPU's write-combining buffers (and order earlier stores). */
void pmr_sfence(void);

/* Kind constructors (region.c parses the target and calls one). */
int pmr_pmem_open(const struct pmr_params *p, const char *path, bool devdax,
		  struct pmr_region **out, char *err, size_t errlen);
int pmr_nvme_open(const struct pmr_params *p, const char *spec, struct pmr_region **out,
		  char *err, size_t errlen);
int pmr_fake_open(const struct pmr_params *p, const char *spec, struct pmr_region **out,
		  char *err, size_t errlen);
/* The message for a refused BAR mmap (EINVAL: strict devmem; EPERM/EACCES:
 * not root or lockdown). Exposed for tests: only real hardware refuses. */
int pmr_nvme_mmap_error(const char *bdf, const char *file, int rc, char *err,
			size_t errlen);
int pmr_nvme_query(const char *spec, struct pmr_caps *caps, char *err, size_t errlen);
int pmr_fake_query(const char *spec, struct pmr_caps *caps, char *err, size_t errlen);
bool pmr_is_fake(const struct pmr_region *r);

/* Open @path as pmr_params say: create or extend a regular file to
 * create_bytes (zero-filled), refuse directories and empty files; @devdax
 * wants a character device. Returns the fd or -errno with a message. */
int pmr_open_file(const struct pmr_params *p, const char *path, bool devdax, char *err,
		  size_t errlen);

/* snprintf into @err (if any); returns @rc so callers can `return pmr_errf(...)`. */
int pmr_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Parse "N" (decimal or 0x hex) into *v; false on junk or overflow. */
bool pmr_parse_u64(const char *s, uint64_t *v);

/* Read a small sysfs-style file into @buf (trailing newline cut). 0 or -errno. */
int pmr_read_file(const char *path, char *buf, size_t buflen);

/* Current CLOCK_MONOTONIC time in milliseconds. */
uint64_t pmr_now_ms(void);

#endif /* PMWAL_PMR_INTERNAL_H */
