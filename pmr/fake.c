// SPDX-License-Identifier: MIT
/*
 * fake.c - a simulated NVMe PMR, so the whole PMR path (register decoding,
 * enable and NRDY wait, health check, barrier choice) and the crash behaviour
 * of a PMR can be tested on any machine. Real hardware cannot show what is
 * lost at power failure; this can (docs/reliability.md, "Fake PMR").
 *
 * Model: the region's bytes live in a volatile shadow buffer (what loads
 * see); the backing file is the durable image. A store marks its 64-byte
 * lines pending. The read that PMRWBM names (PMRSTS, or any PMR address)
 * commits every pending line to the file, as a PCIe read completing after
 * posted writes proves they arrived. pmr_fake_power_loss() drops, keeps a
 * random subset of, or tears at 8-byte words the pending lines; barriered
 * lines are never touched. The register block is a struct behind the same
 * ops seam the MMIO code uses. The host's own crash is outside the model:
 * the file is written, not fsynced.
 */
#include "pmr_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE_BYTES 64u
#define WORD_BYTES 8u

/* What the target string asks the simulated controller to be. */
struct fake_opts {
	char path[PATH_MAX];
	unsigned wbm, hsts, pmrto, pmrtu;
	uint64_t nrdy_ms;
	bool pmrs, en, enable;
	/* crash-point exploration: at the crash_at-th barrier that has stores
	 * pending, lose power (crash_mode, crash_seed) and SIGKILL ourselves */
	uint64_t crash_at, crash_seed;
	unsigned crash_mode;
};

struct pmr_fake {
	struct pmr_region r;
	struct pmr_ctrl c;
	struct fake_opts o;
	char name[PATH_MAX + 16];
	int fd;
	uint64_t file_bytes;
	/* Pending-line bitmap (atomic words), and the line range [lo, hi)
	 * that may hold set bits, so a commit scans what was written, not the
	 * region. A store marks its lines with atomic ORs and then grows the
	 * range under range_mu (two compares), so it never waits for a
	 * barrier's file writes; lock serialises barriers (held across their
	 * writes: a barrier that finds nothing left knows that an earlier one
	 * which took its lines has written them) and guards barriers and
	 * commit_err. Several threads store and barrier at once, as appenders
	 * on one log do. */
	pthread_mutex_t lock, range_mu;
	uint64_t *pending;
	uint64_t pending_lo, pending_hi; /* hi == 0: empty */
	/* One bit per pending word that may be non-zero, so a commit steps
	 * over empty words 64 at a time: 32 random 4 KiB stores over a 1 GiB
	 * region spread the range over the whole bitmap, and scanning its
	 * 256 Ki words took each barrier 18 ms (raw randwrite qd32: 1.7k/s,
	 * against 168k/s at qd1). Set after the word's bits, cleared (only
	 * within the range taken) before they are taken. */
	uint64_t *summary;
	/* register block */
	uint64_t cap;
	uint32_t pmrcap, pmrctl;
	uint64_t en_at_ms;
	int commit_err;
	uint64_t barriers; /* barriers that found stores pending */
};

static int parse_spec(const char *spec, struct fake_opts *o, char *err, size_t errlen)
{
	char buf[PATH_MAX + 128];
	char *opt, *save = NULL;
	uint64_t v;

	memset(o, 0, sizeof(*o));
	o->wbm = PMR_WBM_PMRSTS_READ; /* what QEMU's emulated PMR reports */
	o->pmrs = true;
	o->en = true;
	o->pmrto = 1;
	if (strlen(spec) >= sizeof(buf))
		return pmr_errf(err, errlen, -ENAMETOOLONG, "fakepmr:%s: target too long",
				spec);
	snprintf(buf, sizeof(buf), "%s", spec);
	opt = strchr(buf, ',');
	if (opt)
		*opt++ = '\0';
	if (!buf[0] || strlen(buf) >= sizeof(o->path))
		return pmr_errf(err, errlen, -EINVAL,
				"fakepmr:%s: give a file path: fakepmr:PATH[,wbm=N]...",
				spec);
	memcpy(o->path, buf, strlen(buf) + 1); /* length checked above */
	for (char *t = opt ? strtok_r(opt, ",", &save) : NULL; t;
	     t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');

		if (strcmp(t, "enable") == 0) {
			o->enable = true;
			continue;
		}
		if (!eq || !pmr_parse_u64(eq + 1, &v))
			goto bad;
		*eq = '\0';
		if (strcmp(t, "wbm") == 0 && v <= 0xf)
			o->wbm = (unsigned)v;
		else if (strcmp(t, "hsts") == 0 && v <= 7)
			o->hsts = (unsigned)v;
		else if (strcmp(t, "nrdy_ms") == 0 && v <= 3600000u)
			o->nrdy_ms = v;
		else if (strcmp(t, "pmrs") == 0 && v <= 1)
			o->pmrs = v;
		else if (strcmp(t, "en") == 0 && v <= 1)
			o->en = v;
		else if (strcmp(t, "pmrto") == 0 && v <= 0xff)
			o->pmrto = (unsigned)v;
		else if (strcmp(t, "pmrtu") == 0 && v <= 1)
			o->pmrtu = (unsigned)v;
		else if (strcmp(t, "crash_at") == 0)
			o->crash_at = v;
		else if (strcmp(t, "crash_mode") == 0 && v <= PMR_LOSS_GARBAGE_LINES)
			o->crash_mode = (unsigned)v;
		else if (strcmp(t, "crash_seed") == 0)
			o->crash_seed = v;
		else
			goto bad;
	}
	return 0;
bad:
	return pmr_errf(
	    err, errlen, -EINVAL,
	    "fakepmr:%s: bad option: known are wbm=0..15, nrdy_ms=N, hsts=0..7, "
	    "pmrs=0|1, en=0|1, pmrto=0..255, pmrtu=0|1, crash_at=N, "
	    "crash_mode=0..4, crash_seed=N, enable",
	    spec);
}

static struct pmr_fake *ctrl_to_fake(struct pmr_ctrl *c)
{
	return (struct pmr_fake *)((char *)c - offsetof(struct pmr_fake, c));
}

static void set_registers(struct pmr_fake *f)
{
	const struct fake_opts *o = &f->o;

	f->cap = o->pmrs ? 1ull << PMR_CAP_PMRS_BIT : 0;
	/* RDS, WDS, BIR 4 (as QEMU), PMRTU, PMRWBM, PMRTO */
	f->pmrcap =
	    1u << 3 | 1u << 4 | 4u << 5 | o->pmrtu << 8 | o->wbm << 10 | o->pmrto << 16;
	f->pmrctl = o->en ? PMR_PMRCTL_EN : 0;
	f->en_at_ms = pmr_now_ms();
}

static bool fake_ready(struct pmr_fake *f)
{
	return (f->pmrctl & PMR_PMRCTL_EN) && pmr_now_ms() >= f->en_at_ms + f->o.nrdy_ms;
}

/* All of @len bytes at @off, written from or read into @buf; -errno. */
static int xfer_all(int fd, uint8_t *buf, size_t len, uint64_t off, bool write)
{
	while (len) {
		ssize_t n = write ? pwrite(fd, buf, len, (off_t)off)
				  : pread(fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int write_all(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	return xfer_all(fd, (uint8_t *)buf, len, off, true);
}

static int read_all(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	return xfer_all(fd, buf, len, off, false);
}

static bool line_pending(const struct pmr_fake *f, uint64_t line)
{
	return __atomic_load_n(&f->pending[line / 64], __ATOMIC_ACQUIRE) >> (line % 64) & 1u;
}

/* Takes the pending range, leaving it empty: false if it was. */
static bool take_range(struct pmr_fake *f, uint64_t *lo, uint64_t *hi)
{
	pthread_mutex_lock(&f->range_mu);
	*lo = f->pending_lo;
	*hi = f->pending_hi;
	f->pending_lo = f->pending_hi = 0;
	pthread_mutex_unlock(&f->range_mu);
	return *hi != 0;
}

/*
 * Calls @fn for each run of pending lines in the range taken, clearing them:
 * a line marked meanwhile stays for the next barrier (or is taken now, which
 * is as good: its bytes were stored before its mark).
 */
static int take_runs(struct pmr_fake *f, int (*fn)(struct pmr_fake *, uint64_t, uint64_t, void *),
		     void *arg)
{
	uint64_t lo, hi, start = UINT64_MAX, next = 0;
	int rc = 0;

	if (!take_range(f, &lo, &hi))
		return 0;
	uint64_t wlo = lo / 64, whi = (hi + 63) / 64;

	for (uint64_t sw = wlo / 64; sw <= (whi - 1) / 64 && !rc; sw++) {
		/* Only the words of the range taken: a word beyond it may hold a
		 * store whose range is still being grown, for the next barrier. */
		uint64_t mask = ~0ull;

		if (sw == wlo / 64)
			mask &= ~0ull << (wlo % 64);
		if (sw == (whi - 1) / 64 && whi % 64)
			mask &= ~0ull >> (64 - whi % 64);
		uint64_t words = __atomic_fetch_and(&f->summary[sw], ~mask, __ATOMIC_ACQ_REL) & mask;

		for (uint64_t sb = 0; words && !rc; sb++, words >>= 1) {
			if (!(words & 1u))
				continue;
			uint64_t w = sw * 64 + sb;
			uint64_t bits = __atomic_exchange_n(&f->pending[w], 0, __ATOMIC_ACQ_REL);

			/* A run ends at a word that was skipped or has a gap. */
			if (start != UINT64_MAX && w * 64 != next) {
				rc = fn(f, start, next, arg);
				start = UINT64_MAX;
			}
			for (uint64_t b = 0; b < 64 && !rc; b++) {
				uint64_t line = w * 64 + b;

				if (bits >> b & 1u) {
					if (start == UINT64_MAX)
						start = line;
					continue;
				}
				if (start != UINT64_MAX)
					rc = fn(f, start, line, arg);
				start = UINT64_MAX;
			}
			next = (w + 1) * 64;
		}
	}
	if (!rc && start != UINT64_MAX)
		rc = fn(f, start, next, arg);
	return rc;
}

static size_t line_len(const struct pmr_fake *f, uint64_t line)
{
	uint64_t off = line * LINE_BYTES;

	return f->r.size_bytes - off < LINE_BYTES ? (size_t)(f->r.size_bytes - off)
						  : LINE_BYTES;
}

static int commit_run(struct pmr_fake *f, uint64_t line, uint64_t run, void *arg)
{
	int rc;

	(void)arg;
	rc = write_all(f->fd, f->r.base + line * LINE_BYTES,
		       (size_t)((run - 1 - line) * LINE_BYTES + line_len(f, run - 1)),
		       line * LINE_BYTES);
	if (rc && !f->commit_err)
		f->commit_err = rc;
	return 0; /* the other runs still land */
}

/* Pending lines reach the durable image: runs of lines, one pwrite each
 * (lock held). */
static void fake_commit(struct pmr_fake *f)
{
	(void)take_runs(f, commit_run, NULL);
}

/* The read PMRWBM names arrived: commit the pending stores, unless this is
 * the crash point the target asked for (crash_at=N). Then the power fails
 * as this barrier is in flight: some of its stores land (crash_mode), and
 * the process dies before anyone can be told the barrier completed. */
static int power_loss_locked(struct pmr_fake *f, uint64_t seed, int mode);

static void fake_barrier_read(struct pmr_fake *f)
{
	/* Another thread's barrier holds it for a file write of a few
	 * microseconds: wait that out spinning, as a PCIe read waits, rather
	 * than with a futex sleep and wake-up that cost more than the write
	 * (2 appenders on one fake PMR: 0.45x of one thread with a plain
	 * lock). */
	for (int i = 0; i < 4096 && pthread_mutex_trylock(&f->lock); i++) {
		if (i == 4095) {
			pthread_mutex_lock(&f->lock);
			break;
		}
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	if (f->o.crash_at && pmr_fake_pending_bytes(&f->r) && ++f->barriers == f->o.crash_at) {
		power_loss_locked(f, f->o.crash_seed ? f->o.crash_seed : f->o.crash_at,
				  (int)f->o.crash_mode);
		raise(SIGKILL);
	}
	fake_commit(f);
	pthread_mutex_unlock(&f->lock);
}

static uint32_t fake_read32(struct pmr_ctrl *c, uint32_t off)
{
	struct pmr_fake *f = ctrl_to_fake(c);
	uint32_t sts;

	if (off == PMR_REG_CAP)
		return (uint32_t)f->cap;
	if (off == PMR_REG_CAP + 4)
		return (uint32_t)(f->cap >> 32);
	if (!f->o.pmrs)
		return 0; /* PMR registers are reserved without CAP.PMRS */
	switch (off) {
	case PMR_REG_PMRCAP:
		return f->pmrcap;
	case PMR_REG_PMRCTL:
		return f->pmrctl;
	case PMR_REG_PMRSTS:
		sts = f->o.hsts << 9;
		if (!fake_ready(f))
			return sts | PMR_PMRSTS_NRDY;
		if (f->o.wbm & PMR_WBM_PMRSTS_READ)
			fake_barrier_read(f);
		return sts;
	default:
		return 0;
	}
}

static void fake_write32(struct pmr_ctrl *c, uint32_t off, uint32_t val)
{
	struct pmr_fake *f = ctrl_to_fake(c);

	if (off != PMR_REG_PMRCTL || !f->o.pmrs)
		return;
	if ((val & PMR_PMRCTL_EN) && !(f->pmrctl & PMR_PMRCTL_EN))
		f->en_at_ms = pmr_now_ms(); /* NRDY counts from here */
	f->pmrctl = val & PMR_PMRCTL_EN;
}

static void fake_pmr_read(struct pmr_ctrl *c)
{
	struct pmr_fake *f = ctrl_to_fake(c);

	if ((f->o.wbm & PMR_WBM_PMR_READ) && fake_ready(f))
		fake_barrier_read(f);
}

static int fake_barrier_check(struct pmr_ctrl *c)
{
	struct pmr_fake *f = ctrl_to_fake(c);
	int rc;

	/* The file write failing is this model's media error. */
	pthread_mutex_lock(&f->lock);
	rc = f->commit_err ? -EIO : 0;
	pthread_mutex_unlock(&f->lock);
	return rc;
}

static const struct pmr_ctrl_ops fake_ctrl_ops = {
    .reg_read32 = fake_read32,
    .reg_write32 = fake_write32,
    .pmr_read = fake_pmr_read,
    .barrier_check = fake_barrier_check,
};

static void fake_copy_nodrain(struct pmr_region *r, uint64_t off, const void *src,
			      size_t len)
{
	struct pmr_fake *f = (struct pmr_fake *)r;
	uint64_t first = off / LINE_BYTES, last = (off + len - 1) / LINE_BYTES;

	memcpy(r->base + off, src, len);
	for (uint64_t l = first; l <= last; l++) {
		__atomic_fetch_or(&f->pending[l / 64], 1ull << (l % 64), __ATOMIC_RELEASE);
		if (l == last || (l + 1) % 64 == 0) /* the word's last line here */
			__atomic_fetch_or(&f->summary[l / 64 / 64], 1ull << (l / 64 % 64),
					  __ATOMIC_RELEASE);
	}
	pthread_mutex_lock(&f->range_mu);
	if (f->pending_hi == 0 || first < f->pending_lo)
		f->pending_lo = first;
	if (last + 1 > f->pending_hi)
		f->pending_hi = last + 1;
	pthread_mutex_unlock(&f->range_mu);
}

static int fake_barrier(struct pmr_region *r)
{
	return pmr_ctrl_barrier(&((struct pmr_fake *)r)->c);
}

static void fake_close(struct pmr_region *r)
{
	struct pmr_fake *f = (struct pmr_fake *)r;

	/* Closing is not a power loss: posted writes still land. */
	if (f->pending && r->base && !r->readonly)
		fake_commit(f);
	if (r->base)
		munmap(r->base, (size_t)r->size_bytes);
	free(f->pending);
	free(f->summary);
	if (f->fd >= 0)
		close(f->fd);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->range_mu);
	free(f);
}

static int fake_reload(struct pmr_region *r)
{
	struct pmr_fake *f = (struct pmr_fake *)r;

	if (r->readonly)
		return 0; /* the image itself is mapped */
	return read_all(f->fd, r->base, (size_t)r->size_bytes, 0);
}

static const struct pmr_region_ops fake_region_ops = {
    .copy_nodrain = fake_copy_nodrain,
    .barrier = fake_barrier,
    .close = fake_close,
    .reload = fake_reload,
};

bool pmr_is_fake(const struct pmr_region *r)
{
	return r && r->ops == &fake_region_ops;
}

int pmr_fake_query(const char *spec, struct pmr_caps *caps, char *err, size_t errlen)
{
	struct pmr_fake *f;
	struct stat st;
	int rc;

	f = calloc(1, sizeof(*f));
	if (!f)
		return pmr_errf(err, errlen, -ENOMEM, "out of memory");
	rc = parse_spec(spec, &f->o, err, errlen);
	if (rc)
		goto cleanup;
	set_registers(f);
	f->c.ops = &fake_ctrl_ops;
	pmr_ctrl_read_caps(&f->c);
	if (stat(f->o.path, &st) == 0)
		f->c.caps.bar_bytes = (uint64_t)st.st_size;
	*caps = f->c.caps;
cleanup:
	free(f);
	return rc;
}

static int load_shadow(struct pmr_fake *f, char *err, size_t errlen)
{
	size_t size = (size_t)f->r.size_bytes;
	void *p;
	int rc;

	/* Read-only (another process's follower, a verify): the durable image
	 * itself, shared, so that what a writer's barrier commits to the file
	 * shows here as it would on the one device both would map. */
	if (f->r.readonly) {
		p = mmap(NULL, size, PROT_READ, MAP_SHARED, f->fd, 0);
		if (p == MAP_FAILED)
			return pmr_errf(err, errlen, -errno, "%s: cannot map the image: %s",
					f->name, strerror(errno));
		f->r.base = p;
		f->pending = calloc(1, sizeof(uint64_t));
		f->summary = calloc(1, sizeof(uint64_t));
		return f->pending && f->summary ? 0
						: pmr_errf(err, errlen, -ENOMEM, "out of memory");
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return pmr_errf(err, errlen, -ENOMEM,
				"%s: cannot allocate the %zu-byte shadow buffer", f->name,
				size);
	f->r.base = p;
	rc = read_all(f->fd, f->r.base, size, 0);
	if (rc)
		return pmr_errf(err, errlen, rc, "%s: reading the durable image: %s",
				f->name, strerror(-rc));
	uint64_t words = (size / LINE_BYTES + 1 + 63) / 64;

	f->pending = calloc(words, sizeof(uint64_t));
	f->summary = calloc((words + 63) / 64, sizeof(uint64_t));
	if (!f->pending || !f->summary)
		return pmr_errf(err, errlen, -ENOMEM, "out of memory");
	return 0;
}

int pmr_fake_open(const struct pmr_params *p, const char *spec, struct pmr_region **out,
		  char *err, size_t errlen)
{
	struct pmr_params fp = *p;
	struct pmr_fake *f;
	struct pmr_info *info;
	struct stat st;
	int rc;

	f = calloc(1, sizeof(*f));
	if (!f)
		return pmr_errf(err, errlen, -ENOMEM, "out of memory");
	f->fd = -1;
	pthread_mutex_init(&f->lock, NULL);
	pthread_mutex_init(&f->range_mu, NULL);
	rc = parse_spec(spec, &f->o, err, errlen);
	if (rc)
		goto cleanup;
	snprintf(f->name, sizeof(f->name), "fakepmr:%s", f->o.path);
	set_registers(f);
	f->c.ops = &fake_ctrl_ops;
	f->c.name = f->name;

	rc = pmr_open_file(&fp, f->o.path, false, err, errlen);
	if (rc < 0)
		goto cleanup;
	f->fd = rc;
	if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = pmr_errf(err, errlen, -EINVAL, "%s: not a regular file", f->name);
		goto cleanup;
	}
	f->file_bytes = (uint64_t)st.st_size;
	f->c.caps.bar_bytes = f->file_bytes;

	rc = pmr_ctrl_start(&f->c, p->enable || f->o.enable, p->readonly, err, errlen);
	if (rc)
		goto cleanup;
	f->r.size_bytes = f->file_bytes - f->file_bytes % LINE_BYTES;
	if (f->r.size_bytes == 0) {
		rc = pmr_errf(err, errlen, -EINVAL, "%s: file smaller than 64 bytes",
			      f->name);
		goto cleanup;
	}
	f->r.readonly = p->readonly;
	rc = load_shadow(f, err, errlen);
	if (rc)
		goto cleanup;

	f->r.ops = &fake_region_ops;
	info = &f->r.info;
	info->kind = PMR_KIND_FAKE;
	info->size_bytes = f->r.size_bytes;
	snprintf(info->kind_name, sizeof(info->kind_name), "fakepmr");
	pmr_ctrl_fill_info(&f->c, info);
	info->emulated = true;
	*out = &f->r;
	return 0;

cleanup:
	f->r.readonly = true; /* nothing pending to commit */
	f->r.ops = &fake_region_ops;
	fake_close(&f->r);
	return rc;
}

/* splitmix64: small, seedable, and the same sequence everywhere. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Decide one pending line's fate; the shadow ends equal to the file. */
static int lose_line(struct pmr_fake *f, uint64_t line, uint64_t *rng, int mode)
{
	uint8_t durable[LINE_BYTES];
	uint8_t *shadow = f->r.base + line * LINE_BYTES;
	size_t len = line_len(f, line);
	uint64_t bits;
	int rc;

	rc = read_all(f->fd, durable, len, line * LINE_BYTES);
	if (rc)
		return rc;
	switch (mode) {
	case PMR_LOSS_KEEP_SUBSET:
		if (next_rand(rng) & 1u)
			return write_all(f->fd, shadow, len, line * LINE_BYTES);
		break;
	case PMR_LOSS_ZERO_LINES:
	case PMR_LOSS_GARBAGE_LINES:
		/* a third each: kept, lost, damaged (docs/reliability.md F4) */
		bits = next_rand(rng) % 3u;
		if (bits == 0)
			return write_all(f->fd, shadow, len, line * LINE_BYTES);
		if (bits == 1)
			break;
		for (size_t w = 0; w * WORD_BYTES < len; w++) {
			uint64_t v = mode == PMR_LOSS_ZERO_LINES ? 0 : next_rand(rng);

			memcpy(durable + w * WORD_BYTES, &v, WORD_BYTES);
		}
		rc = write_all(f->fd, durable, len, line * LINE_BYTES);
		if (rc)
			return rc;
		break;
	case PMR_LOSS_TEAR_WORDS:
		bits = next_rand(rng);
		for (size_t w = 0; w * WORD_BYTES < len; w++)
			if (bits >> w & 1u)
				memcpy(durable + w * WORD_BYTES, shadow + w * WORD_BYTES,
				       WORD_BYTES);
		rc = write_all(f->fd, durable, len, line * LINE_BYTES);
		if (rc)
			return rc;
		break;
	default:
		break;
	}
	memcpy(shadow, durable, len);
	return 0;
}

struct loss {
	uint64_t rng;
	int mode, count;
};

static int lose_run(struct pmr_fake *f, uint64_t line, uint64_t run, void *arg)
{
	struct loss *l = arg;

	for (; line < run; line++) {
		int rc = lose_line(f, line, &l->rng, l->mode);

		if (rc)
			return rc;
		l->count++;
	}
	return 0;
}

static int power_loss_locked(struct pmr_fake *f, uint64_t seed, int mode)
{
	struct loss l = {seed, mode, 0};
	int rc = take_runs(f, lose_run, &l);

	return rc ? rc : l.count;
}

int pmr_fake_power_loss(struct pmr_region *r, uint64_t seed, int mode)
{
	struct pmr_fake *f = (struct pmr_fake *)r;
	int rc;

	if (!pmr_is_fake(r) || mode < PMR_LOSS_DROP_ALL || mode > PMR_LOSS_GARBAGE_LINES)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	rc = power_loss_locked(f, seed, mode);
	pthread_mutex_unlock(&f->lock);
	return rc;
}

int pmr_fake_set_hsts(struct pmr_region *r, unsigned hsts)
{
	if (!pmr_is_fake(r) || hsts > 7)
		return -EINVAL;
	((struct pmr_fake *)r)->o.hsts = hsts;
	return 0;
}

uint64_t pmr_fake_pending_bytes(const struct pmr_region *r)
{
	struct pmr_fake *f = (struct pmr_fake *)r;
	uint64_t n = 0;

	if (!pmr_is_fake(r))
		return 0;
	pthread_mutex_lock(&f->range_mu);
	for (uint64_t line = f->pending_lo; line < f->pending_hi; line++)
		n += line_pending(f, line) ? line_len(f, line) : 0;
	pthread_mutex_unlock(&f->range_mu);
	return n;
}
