// SPDX-License-Identifier: MIT
/*
 * ctrl.c - the NVMe PMR protocol, once: decode CAP/PMRCAP/PMRSTS/PMREBS,
 * enable the PMR and wait for NRDY within PMRTO, refuse a PMR whose health
 * status is bad, pick the write barrier PMRWBM offers and run it. Register
 * access goes through struct pmr_ctrl_ops, so the real controller (nvme.c)
 * and the simulated one (fake.c) share every decision made here; a test on
 * the fake exercises the code a real device runs.
 */
#include "pmr_internal.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

void pmr_sfence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	/* Drains the write-combining buffers: the PMR stores are posted to
	 * PCIe before the barrier's read is issued. */
	_mm_sfence();
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

const char *pmr_hsts_name(unsigned hsts)
{
	switch (hsts) {
	case 0:
		return "normal";
	case 1:
		return "restore error";
	case 2:
		return "read only";
	case 3:
		return "unreliable";
	default:
		return "reserved";
	}
}

const char *pmr_wbm_name(unsigned pmrwbm)
{
	switch (pmrwbm & (PMR_WBM_PMR_READ | PMR_WBM_PMRSTS_READ)) {
	case PMR_WBM_PMR_READ:
		return "PMR read";
	case PMR_WBM_PMRSTS_READ:
		return "PMRSTS read";
	case PMR_WBM_PMR_READ | PMR_WBM_PMRSTS_READ:
		return "PMR read or PMRSTS read";
	default:
		return "none";
	}
}

static void decode_pmrsts(struct pmr_caps *k, uint32_t sts)
{
	k->pmrsts = sts;
	k->err = sts & 0xffu;
	k->nrdy = (sts >> 8) & 1u;
	k->hsts = (sts >> 9) & 7u;
	k->cbai = (sts >> 12) & 1u;
}

void pmr_ctrl_read_caps(struct pmr_ctrl *c)
{
	struct pmr_caps *k = &c->caps;
	uint64_t bar_bytes = k->bar_bytes; /* filled by the backend */
	uint64_t unit_ms;
	unsigned szu;

	memset(k, 0, sizeof(*k));
	k->bar_bytes = bar_bytes;
	/* Two 32-bit loads: 64-bit MMIO reads are not guaranteed on every
	 * platform, and CAP does not change under us. */
	k->cap = c->ops->reg_read32(c, PMR_REG_CAP) |
		 (uint64_t)c->ops->reg_read32(c, PMR_REG_CAP + 4) << 32;
	k->pmrs = (k->cap >> PMR_CAP_PMRS_BIT) & 1u;
	if (!k->pmrs)
		return; /* PMR registers are reserved without CAP.PMRS */
	k->pmrcap = c->ops->reg_read32(c, PMR_REG_PMRCAP);
	k->pmrctl = c->ops->reg_read32(c, PMR_REG_PMRCTL);
	k->pmrebs = c->ops->reg_read32(c, PMR_REG_PMREBS);
	k->pmrswtp = c->ops->reg_read32(c, PMR_REG_PMRSWTP);
	decode_pmrsts(k, c->ops->reg_read32(c, PMR_REG_PMRSTS));

	k->rds = (k->pmrcap >> 3) & 1u;
	k->wds = (k->pmrcap >> 4) & 1u;
	k->bir = (k->pmrcap >> 5) & 7u;
	k->pmrtu = (k->pmrcap >> 8) & 3u;
	k->pmrwbm = (k->pmrcap >> 10) & 0xfu;
	k->pmrto = (k->pmrcap >> 16) & 0xffu;
	k->cmss = (k->pmrcap >> 24) & 1u;
	k->enabled = k->pmrctl & PMR_PMRCTL_EN;

	/* PMRTU 0: 500 ms units, 1: minutes. A PMRTO of 0 would mean "no
	 * time at all"; give the controller one unit instead. */
	unit_ms = k->pmrtu == 0 ? 500u : 60000u;
	k->timeout_ms = (k->pmrto ? k->pmrto : 1u) * unit_ms;

	szu = k->pmrebs & 0xfu;
	if (szu <= 3)
		k->elasticity_bytes = (uint64_t)(k->pmrebs >> 8) << (10u * szu);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000u,
			      .tv_nsec = (long)(ms % 1000u) * 1000000L};

	nanosleep(&ts, NULL);
}

/* Poll NRDY until clear; bounded by the controller's own PMRTO timeout. */
static int wait_ready(struct pmr_ctrl *c, char *err, size_t errlen)
{
	uint64_t deadline = pmr_now_ms() + c->caps.timeout_ms;
	uint32_t sts;

	for (;;) {
		sts = c->ops->reg_read32(c, PMR_REG_PMRSTS);
		if (sts == UINT32_MAX)
			return pmr_errf(
			    err, errlen, -EIO,
			    "%s: PMRSTS reads all ones: the controller stopped "
			    "responding (removed or in reset); check `lspci` and dmesg",
			    c->name);
		if (!(sts & PMR_PMRSTS_NRDY))
			break;
		if (pmr_now_ms() >= deadline)
			return pmr_errf(
			    err, errlen, -ETIMEDOUT,
			    "%s: PMR not ready after %llu ms (PMRSTS.NRDY still 1, "
			    "PMRTO=%u x %s): the controller may still be restoring "
			    "the PMR; retry later, or check its health with "
			    "`pmwal probe %s`",
			    c->name, (unsigned long long)c->caps.timeout_ms,
			    c->caps.pmrto, c->caps.pmrtu ? "1 min" : "500 ms", c->name);
		sleep_ms(1);
	}
	decode_pmrsts(&c->caps, sts);
	return 0;
}

static int check_health(struct pmr_ctrl *c, bool readonly, char *err, size_t errlen)
{
	unsigned hsts = c->caps.hsts;

	if (hsts == 0)
		return 0;
	if (hsts == 2 && readonly)
		return 0;
	if (hsts == 2)
		return pmr_errf(
		    err, errlen, -EROFS,
		    "%s: PMR health status is \"read only\" (PMRSTS.HSTS=2): "
		    "the controller refuses writes; open read-only to recover "
		    "what it holds",
		    c->name);
	return pmr_errf(err, errlen, -EIO,
			"%s: PMR health status is \"%s\" (PMRSTS.HSTS=%u): its contents "
			"cannot be trusted; copy off what you need read-only elsewhere "
			"and consult the vendor tools before reusing it",
			c->name, pmr_hsts_name(hsts), hsts);
}

int pmr_ctrl_start(struct pmr_ctrl *c, bool enable, bool readonly, char *err,
		   size_t errlen)
{
	int rc;

	pmr_ctrl_read_caps(c);
	if (c->caps.cap == UINT64_MAX)
		return pmr_errf(err, errlen, -EIO,
				"%s: controller registers read all ones: the device is "
				"gone or powered down; check `lspci` and dmesg",
				c->name);
	if (!c->caps.pmrs)
		return pmr_errf(
		    err, errlen, -ENODEV,
		    "%s: this NVMe controller has no Persistent Memory Region "
		    "(CAP.PMRS=0): use a controller that has one, or log to its "
		    "namespace as a block device (/dev/nvmeXnY)",
		    c->name);
	if (!c->caps.enabled) {
		if (!enable)
			return pmr_errf(
			    err, errlen, -ENXIO,
			    "%s: the PMR is disabled (PMRCTL.EN=0): pass the enable "
			    "option (`--enable-pmr`, or append \",enable\" to the "
			    "target) to enable it",
			    c->name);
		c->ops->reg_write32(c, PMR_REG_PMRCTL, c->caps.pmrctl | PMR_PMRCTL_EN);
		c->caps.enabled = true;
	}
	rc = wait_ready(c, err, errlen);
	if (rc)
		return rc;
	rc = check_health(c, readonly, err, errlen);
	if (rc)
		return rc;

	/* Prefer the PMRSTS read: its value also tells us the health. */
	if (c->caps.pmrwbm & PMR_WBM_PMRSTS_READ)
		c->barrier = PMR_BARRIER_PMRSTS;
	else if (c->caps.pmrwbm & PMR_WBM_PMR_READ)
		c->barrier = PMR_BARRIER_PMR_READ;
	else
		c->barrier = PMR_BARRIER_NONE;
	c->failed = 0;
	c->reads_started = c->reads_done = 0;
	c->done_word = 0;
	c->sleepers = 0;
	return 0;
}

/* Spins (PAUSE, tens of nanoseconds each) before a barrier waiting for
 * another's read sleeps on the futex. */
#define PMR_BARRIER_SPINS 2048u

/* The read that ends a barrier, and its verdict (sticky). */
static void barrier_read(struct pmr_ctrl *c)
{
	int failed = 0;
	uint32_t sts;

	switch (c->barrier) {
	case PMR_BARRIER_PMRSTS:
		/* PCIe reads do not pass posted writes: the completion of this
		 * read proves the earlier stores reached the controller. */
		sts = c->ops->reg_read32(c, PMR_REG_PMRSTS);
		if (sts == UINT32_MAX || (sts & PMR_PMRSTS_NRDY) || ((sts >> 9) & 7u))
			failed = -EIO;
		break;
	case PMR_BARRIER_PMR_READ:
	default:
		c->ops->pmr_read(c);
		break;
	}
	if (!failed && c->ops->barrier_check)
		failed = c->ops->barrier_check(c);
	if (failed)
		__atomic_store_n(&c->failed, failed, __ATOMIC_RELEASE);
}

/*
 * A barrier is the caller's SFENCE (the write-combining buffers are the
 * core's own) and then a read that starts after it. That read need not be
 * the caller's: a read proves that every store posted before it started
 * reached the controller, whichever core posted it, as all of them reach
 * the device through the same root port, in order (PCIe reads do not pass
 * posted writes on one path). So reads are shared, as group commit shares
 * a flash write: reads are numbered; a barrier fences, notes how many reads
 * have started (S, with a locked instruction, which waits for the fenced
 * stores), and waits for read S + 1 to complete, starting it itself when
 * no read is under way. Appenders arriving while a read is in flight are
 * covered by the next one, one read for all of them, instead of a read
 * each. A read that was already in flight when the caller fenced never
 * counts: it may have passed the caller's stores. (Across sockets the
 * stores of another socket's core travel to the root port over the CPU's
 * own interconnect; the fence that each caller keeps orders them before
 * the read it waits for, as it orders its own.)
 */
int pmr_ctrl_barrier(struct pmr_ctrl *c)
{
	int failed = __atomic_load_n(&c->failed, __ATOMIC_ACQUIRE);

	/* Sticky: once a barrier failed nothing later may be called durable. */
	if (failed)
		return failed;
	if (c->barrier != PMR_BARRIER_PMRSTS && c->barrier != PMR_BARRIER_PMR_READ)
		return -ENOTSUP;
	pmr_sfence();
	uint64_t want = __atomic_fetch_add(&c->reads_started, 0, __ATOMIC_SEQ_CST) + 1;

	for (uint32_t spins = 0;; spins++) {
		uint64_t done = __atomic_load_n(&c->reads_done, __ATOMIC_ACQUIRE);

		if (done >= want)
			return __atomic_load_n(&c->failed, __ATOMIC_ACQUIRE);
		uint64_t idle = done;

		/* None under way: start the next one (numbered done + 1, which
		 * is at least want). */
		if (__atomic_compare_exchange_n(&c->reads_started, &idle, done + 1, false,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
			barrier_read(c);
			__atomic_store_n(&c->done_word, (uint32_t)(done + 1), __ATOMIC_SEQ_CST);
			__atomic_store_n(&c->reads_done, done + 1, __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&c->sleepers, __ATOMIC_SEQ_CST))
				syscall(SYS_futex, &c->done_word, FUTEX_WAKE_PRIVATE, INT32_MAX,
					NULL, NULL, 0);
			continue;
		}
		/* A read is in flight (microseconds): spin a while, then sleep
		 * until one completes, so that the thread running it gets the
		 * core when there are more appenders than cores. */
		if (spins < PMR_BARRIER_SPINS) {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
			continue;
		}
		__atomic_fetch_add(&c->sleepers, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&c->reads_done, __ATOMIC_SEQ_CST) == done)
			syscall(SYS_futex, &c->done_word, FUTEX_WAIT_PRIVATE, (uint32_t)done,
				NULL, NULL, 0);
		__atomic_fetch_sub(&c->sleepers, 1, __ATOMIC_SEQ_CST);
	}
}

void pmr_ctrl_fill_info(const struct pmr_ctrl *c, struct pmr_info *info)
{
	snprintf(info->granularity, sizeof(info->granularity), "byte");
	switch (c->barrier) {
	case PMR_BARRIER_PMRSTS:
		snprintf(info->barrier, sizeof(info->barrier), "sfence + PMRSTS read");
		break;
	case PMR_BARRIER_PMR_READ:
		snprintf(info->barrier, sizeof(info->barrier), "sfence + PMR read");
		break;
	default:
		snprintf(info->barrier, sizeof(info->barrier), "none (PMRWBM=%u)",
			 c->caps.pmrwbm);
		break;
	}
	info->durable = c->barrier != PMR_BARRIER_NONE;
	info->pmrwbm = c->caps.pmrwbm;
}
