// SPDX-License-Identifier: MIT
/*
 * sim.c - simulated media for crash testing (pmwal_sim_* in pmwal.h): a
 * persistent-memory region, an NVMe SSD with a volatile write cache, and the
 * fake PMR's mapped region, each behind the same struct wal_dev the real
 * backends fill, so the engine and recovery run unchanged on them.
 *
 * Each medium keeps two images: cur (what loads and reads see: the mapping,
 * or the drive's cache) and dur (what survives power loss), plus the list of
 * units stored or written since the last barrier or flush (64-byte lines on
 * mapped media, writes of at most 4 KiB on nvme). Every store or write piece,
 * barrier and flush is one numbered event; the event chosen as the power loss
 * does not happen, the medium is dead from then on (-EIO), and a snapshot of
 * both images and the pending units is kept. Crash image i is rebuilt from
 * that snapshot alone, so every image of one crash can be tried in turn.
 *
 * Bounds: at most SIM_FAULTS_MAX armed faults; the pending list holds at most
 * one entry per line (mapped) or one per write since the last flush (nvme).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pmwal.h"
#include "sim.h"

#define SIM_LINE_BYTES	   64u
#define SIM_WRITE_BYTES	   4096u /* nvme: one cached write is at most this */
#define SIM_SECTOR_BYTES   512u
#define SIM_FAULTS_MAX	   8
#define SIM_EXHAUSTIVE_DEF 10u
#define SIM_EXHAUSTIVE_MAX 20u /* 2^20 subsets: an index still fits easily */
#define SIM_SAMPLE_DEF	   256u
#define SIM_TORN_DEF	   16u

struct sim_unit {
	uint64_t off;
	uint32_t len;
	uint32_t tag; /* mapped: the storing thread's (sim_tag); 0 on nvme */
};

/*
 * Mapped media: a barrier (SFENCE, a drain, a PMR read) makes durable only
 * the stores of the thread that issues it, as on the hardware; a line is
 * pending under the tag of the thread that stored it last. An engine that
 * counted on another thread's barrier for its own stores loses them here.
 */
static uint32_t sim_tag(void)
{
	static uint32_t next;
	static _Thread_local uint32_t tag;

	if (!tag)
		tag = __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED) | 1u << 31;
	return tag;
}

struct pmwal_sim {
	struct pmwal_sim *next; /* registry */
	pthread_mutex_t mu;
	struct pmwal_sim_options o;
	char name[64];
	char target[72];
	uint64_t size;
	uint8_t *cur, *dur;
	uint32_t *line_pending; /* mapped: per line, the tag it is pending under, or 0 */
	struct sim_unit *pend;
	size_t npend, pend_cap;
	uint64_t events, crash_at;
	bool dead;
	uint64_t order_rng; /* nvme completion order */
	/* the power loss: the state the crash images are built from */
	bool have_crash;
	uint8_t *snap_cur, *snap_dur;
	struct sim_unit *snap_pend;
	size_t snap_n;
	struct pmwal_sim_crash_info ci;
	struct pmwal_sim_fault faults[SIM_FAULTS_MAX];
	int nfaults;
	int open_devs;
	bool freed; /* pmwal_sim_free() came while a log was open: the last close frees */
};

/* A device on a medium: the medium outlives it. */
struct sim_wdev {
	struct wal_dev dev; /* first: the engine holds a struct wal_dev * */
	struct pmwal_sim *sim;
	bool readonly;
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pmwal_sim *registry;
static uint64_t registry_serial;

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static bool mapped(const struct pmwal_sim *s)
{
	return s->o.medium != PMWAL_SIM_NVME;
}

static struct pmwal_sim *sim_of(struct wal_dev *dev)
{
	return ((struct sim_wdev *)dev)->sim;
}

static int pend_add(struct pmwal_sim *s, uint64_t off, uint32_t len, uint32_t tag)
{
	if (s->npend == s->pend_cap) {
		size_t cap = s->pend_cap ? s->pend_cap * 2 : 256;
		struct sim_unit *p = realloc(s->pend, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->pend = p;
		s->pend_cap = cap;
	}
	s->pend[s->npend++] = (struct sim_unit){off, len, tag};
	return 0;
}

/* Pending units become durable: those of @tag and those of no thread (a
 * mapped barrier), or all of them (@tag 0: a completed flush). */
static void make_durable(struct pmwal_sim *s, uint32_t tag)
{
	size_t keep = 0;

	for (size_t i = 0; i < s->npend; i++) {
		const struct sim_unit *u = &s->pend[i];

		if (tag && u->tag && u->tag != tag) {
			s->pend[keep++] = *u;
			continue;
		}
		memcpy(s->dur + u->off, s->cur + u->off, u->len);
		if (mapped(s) && u->tag && s->line_pending[u->off / SIM_LINE_BYTES] == u->tag)
			s->line_pending[u->off / SIM_LINE_BYTES] = 0;
	}
	s->npend = keep;
}

static void crash_info(struct pmwal_sim *s, uint64_t n)
{
	uint32_t emax = s->o.exhaustive_max ? s->o.exhaustive_max : SIM_EXHAUSTIVE_DEF;
	bool atomic = s->o.medium == PMWAL_SIM_NVME && s->o.atomic_write_bytes >= 4096;

	s->ci = (struct pmwal_sim_crash_info){.event = n, .pending = s->snap_n};
	s->ci.exhaustive = s->snap_n <= emax;
	s->ci.subsets = s->ci.exhaustive ? 1ull << s->snap_n
					 : (s->o.sample_images ? s->o.sample_images
							       : SIM_SAMPLE_DEF);
	if (s->snap_n && !atomic)
		s->ci.torn = s->o.torn_images ? s->o.torn_images : SIM_TORN_DEF;
}

/* Power is lost at event @n: keep what the crash images are made from. */
static void power_loss(struct pmwal_sim *s, uint64_t n)
{
	s->dead = true;
	s->have_crash = true;
	memcpy(s->snap_cur, s->cur, s->size);
	memcpy(s->snap_dur, s->dur, s->size);
	free(s->snap_pend);
	s->snap_pend = NULL;
	s->snap_n = 0;
	if (s->npend) {
		s->snap_pend = malloc(s->npend * sizeof(*s->snap_pend));
		if (s->snap_pend) {
			memcpy(s->snap_pend, s->pend, s->npend * sizeof(*s->pend));
			s->snap_n = s->npend;
		}
	}
	crash_info(s, n);
}

/*
 * Starts event number events++: 0 to go ahead (*@f set if a lost or
 * misdirected write applies to it), or the error it fails with.
 */
static int event(struct pmwal_sim *s, const struct pmwal_sim_fault **f)
{
	uint64_t n;

	if (f)
		*f = NULL;
	if (s->dead)
		return -EIO;
	n = s->events++;
	if (n == s->crash_at) {
		power_loss(s, n);
		return -EIO;
	}
	for (int i = 0; i < s->nfaults; i++) {
		const struct pmwal_sim_fault *x = &s->faults[i];

		if (x->event != n || x->kind == PMWAL_SIM_READ_ERROR)
			continue;
		if (x->kind == PMWAL_SIM_FAIL)
			return x->err ? x->err : -EIO;
		if (f)
			*f = x;
	}
	return 0;
}

static bool in_bounds(const struct pmwal_sim *s, uint64_t off, uint64_t len)
{
	return off <= s->size && len <= s->size - off;
}

/*
 * PMWAL_SIM_PROTECT: the mapping (cur) is read-only except while the seam
 * itself writes it, so a store that bypasses store() faults at once instead
 * of landing unseen by the crash model. Called with s->mu held.
 */
static void cur_writable(struct pmwal_sim *s, bool rw)
{
	if (s->o.flags & PMWAL_SIM_PROTECT)
		(void)mprotect(s->cur, s->size, rw ? PROT_READ | PROT_WRITE : PROT_READ);
}

/* Where a write lands: its offset, that of a misdirecting fault, or nowhere. */
static bool landing(const struct pmwal_sim *s, const struct pmwal_sim_fault *f,
		    uint64_t off, uint64_t len, uint64_t *at)
{
	*at = off;
	if (!f)
		return true;
	if (f->kind == PMWAL_SIM_LOST)
		return false;
	*at = f->off;
	return in_bounds(s, f->off, len);
}

/* ---- mapped media: pmem and fakepmr --------------------------------------- */

static int mapped_store_locked(struct pmwal_sim *s, const struct wal_io *ios, int count)
{
	for (int i = 0; i < count; i++)
		if (!in_bounds(s, ios[i].off, ios[i].len))
			return -EINVAL;
	for (int i = 0; i < count; i++) {
		const struct pmwal_sim_fault *f;
		uint64_t at;
		int rc = event(s, &f);

		if (rc)
			return rc;
		if (!ios[i].len || !landing(s, f, ios[i].off, ios[i].len, &at))
			continue;
		cur_writable(s, true);
		memcpy(s->cur + at, ios[i].buf, ios[i].len);
		cur_writable(s, false);
		for (uint64_t l = at / SIM_LINE_BYTES;
		     l <= (at + ios[i].len - 1) / SIM_LINE_BYTES; l++) {
			if (s->line_pending[l] == sim_tag())
				continue;
			rc = pend_add(s, l * SIM_LINE_BYTES, SIM_LINE_BYTES, sim_tag());
			if (rc)
				return rc;
			s->line_pending[l] = sim_tag();
		}
	}
	return 0;
}

static int mapped_barrier_locked(struct pmwal_sim *s)
{
	int rc = event(s, NULL);

	if (!rc)
		make_durable(s, sim_tag());
	return rc;
}

static int sim_store(struct wal_dev *dev, const struct wal_io *ios, int count)
{
	struct pmwal_sim *s = sim_of(dev);
	int rc;

	if (((struct sim_wdev *)dev)->readonly)
		return -EROFS;
	pthread_mutex_lock(&s->mu);
	rc = mapped_store_locked(s, ios, count);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static int sim_barrier(struct wal_dev *dev)
{
	struct pmwal_sim *s = sim_of(dev);
	int rc;

	if (((struct sim_wdev *)dev)->readonly)
		return -EROFS;
	pthread_mutex_lock(&s->mu);
	rc = mapped_barrier_locked(s);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* ---- nvme: writes into a volatile cache, then a flush --------------------- */

/* One write of at most SIM_WRITE_BYTES, completed in any order. */
static int nvme_write_locked(struct pmwal_sim *s, const uint8_t *src, uint64_t off,
			     uint32_t len)
{
	const struct pmwal_sim_fault *f;
	uint64_t at;
	int rc = event(s, &f);

	if (rc)
		return rc;
	if (!landing(s, f, off, len, &at))
		return 0; /* lost: acknowledged, never written */
	cur_writable(s, true);
	memcpy(s->cur + at, src, len);
	cur_writable(s, false);
	if (s->o.flags & PMWAL_SIM_FUA) {
		memcpy(s->dur + at, src, len);
		return 0;
	}
	return pend_add(s, at, len, 0);
}

static int nvme_commit_locked(struct pmwal_sim *s, const struct wal_io *ios, int count,
			      uint32_t lanes)
{
	struct sim_unit *w;
	size_t n = 0, k = 0;
	int rc = 0;

	for (int i = 0; i < count; i++) {
		if (!in_bounds(s, ios[i].off, ios[i].len) ||
		    ios[i].off % SIM_SECTOR_BYTES || ios[i].len % SIM_SECTOR_BYTES)
			return -EINVAL;
		n += (ios[i].len + SIM_WRITE_BYTES - 1) / SIM_WRITE_BYTES;
	}
	w = malloc((n ? n : 1) * sizeof(*w) * 2);
	if (!w)
		return -ENOMEM;
	/* w[k].off: device offset; w[n + k].off: source piece, .len its offset */
	for (int i = 0; i < count; i++)
		for (uint64_t o = 0; o < ios[i].len; o += SIM_WRITE_BYTES, k++) {
			uint64_t left = ios[i].len - o;

			w[k] = (struct sim_unit){
			    ios[i].off + o,
			    (uint32_t)(left < SIM_WRITE_BYTES ? left : SIM_WRITE_BYTES), 0};
			w[n + k] = (struct sim_unit){(uint64_t)i, (uint32_t)o, 0};
		}
	/* Completions in a seeded random order (Fisher-Yates). */
	for (size_t i = n; i > 1; i--) {
		size_t j = splitmix(&s->order_rng) % i;
		struct sim_unit t = w[i - 1], t2 = w[n + i - 1];

		w[i - 1] = w[j];
		w[n + i - 1] = w[n + j];
		w[j] = t;
		w[n + j] = t2;
	}
	/* Each write, and the flush, is its own step: the lock is let go
	 * between them, so that the writes of several groups in flight (a
	 * commit on each of several threads) interleave, and a flush makes
	 * durable every write completed before it, another group's too, as a
	 * drive's does. A power loss may then keep a later group and tear an
	 * earlier one. */
	for (size_t i = 0; i < n && !rc; i++) {
		const uint8_t *src = (const uint8_t *)ios[w[n + i].off].buf + w[n + i].len;

		rc = nvme_write_locked(s, src, w[i].off, w[i].len);
		pthread_mutex_unlock(&s->mu);
		if (lanes > 1)
			sched_yield(); /* let another group's writes go first */
		pthread_mutex_lock(&s->mu);
	}
	free(w);
	if (rc || (s->o.flags & PMWAL_SIM_FUA))
		return rc;
	rc = event(s, NULL); /* the flush, issued after every completion */
	if (!rc)
		make_durable(s, 0);
	return rc;
}

static int sim_commit(struct wal_dev *dev, const struct wal_io *ios, int count,
		      struct wal_submitted *submitted)
{
	struct pmwal_sim *s = sim_of(dev);
	int rc;

	(void)submitted; /* the simulated writes are done at once */
	if (((struct sim_wdev *)dev)->readonly)
		return -EROFS;
	pthread_mutex_lock(&s->mu);
	if (mapped(s)) {
		rc = mapped_store_locked(s, ios, count);
		if (!rc)
			rc = mapped_barrier_locked(s);
	} else {
		rc = nvme_commit_locked(s, ios, count, dev->commit_lanes);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static int sim_read(struct wal_dev *dev, void *buf, size_t len, uint64_t off)
{
	struct pmwal_sim *s = sim_of(dev);
	int rc = 0;

	pthread_mutex_lock(&s->mu);
	if (s->dead || !in_bounds(s, off, len))
		rc = s->dead ? -EIO : -EINVAL;
	for (int i = 0; i < s->nfaults && !rc; i++) {
		const struct pmwal_sim_fault *f = &s->faults[i];

		if (f->kind == PMWAL_SIM_READ_ERROR && off < f->off + f->len &&
		    f->off < off + len)
			rc = -EIO;
	}
	if (!rc)
		memcpy(buf, s->cur + off, len);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static void sim_release(struct pmwal_sim *s);

static void sim_close(struct wal_dev *dev)
{
	struct sim_wdev *d = (struct sim_wdev *)dev;

	if (!d)
		return;
	struct pmwal_sim *s = d->sim;

	pthread_mutex_lock(&s->mu);
	bool last = --s->open_devs == 0 && s->freed;

	/* A writer closed (after a failure, say) left stores no barrier of its
	 * threads will follow: flushed lines reach the medium in time on the
	 * hardware, so any later barrier makes them durable here, as it did
	 * before barriers were per thread. */
	if (mapped(s) && !d->readonly)
		for (size_t i = 0; i < s->npend; i++) {
			s->line_pending[s->pend[i].off / SIM_LINE_BYTES] = 0;
			s->pend[i].tag = 0;
		}

	pthread_mutex_unlock(&s->mu);
	free(d);
	if (last)
		sim_release(s);
}

static const uint8_t *sim_map(struct wal_dev *dev)
{
	return sim_of(dev)->cur;
}

static const struct wal_dev_ops sim_mapped_ops = {
    .map = sim_map,
    .commit = sim_commit,
    .read = sim_read,
    .close = sim_close,
    .store = sim_store,
    .barrier = sim_barrier,
};

static const struct wal_dev_ops sim_nvme_ops = {
    .commit = sim_commit, .read = sim_read, .close = sim_close};

static const char *medium_name(uint32_t m)
{
	return m == PMWAL_SIM_PMEM ? "sim-pmem" : m == PMWAL_SIM_NVME ? "sim-nvme"
								       : "sim-fakepmr";
}

int wal_dev_open_sim(const struct wal_dev_params *p, const char *name,
		     struct wal_dev **out, char *err, size_t errlen)
{
	struct pmwal_sim *s;
	struct sim_wdev *d;

	*out = NULL;
	pthread_mutex_lock(&registry_mu);
	for (s = registry; s && strcmp(s->name, name) != 0; s = s->next)
		;
	pthread_mutex_unlock(&registry_mu);
	if (!s) {
		snprintf(err, errlen,
			 "%s: no simulated medium of that name (pmwal_sim_new makes one)",
			 p->target);
		return -ENOENT;
	}
	if (p->create_bytes > s->size) {
		snprintf(err, errlen, "%s: %llu bytes asked, the medium has %llu",
			 p->target, (unsigned long long)p->create_bytes,
			 (unsigned long long)s->size);
		return -ENOSPC;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->sim = s;
	d->readonly = p->readonly;
	d->dev.size_bytes = s->size;
	d->dev.caps = WAL_CAP_EMULATED;
	if (mapped(s)) {
		d->dev.ops = &sim_mapped_ops;
		d->dev.sector_bytes = SIM_LINE_BYTES;
		d->dev.atomic_write_bytes = s->o.medium == PMWAL_SIM_PMEM ? 8 : 0;
		snprintf(d->dev.io_path, sizeof(d->dev.io_path), "mapped");
		snprintf(d->dev.granularity, sizeof(d->dev.granularity), "cache-line");
		snprintf(d->dev.durability, sizeof(d->dev.durability),
			 "simulated %s barrier", s->o.medium == PMWAL_SIM_PMEM ? "drain"
										 : "PMR");
	} else {
		d->dev.ops = &sim_nvme_ops;
		d->dev.commit_lanes = p->commit_lanes; /* commits interleave */
		d->dev.sector_bytes = SIM_SECTOR_BYTES;
		d->dev.atomic_write_bytes = s->o.atomic_write_bytes;
		snprintf(d->dev.io_path, sizeof(d->dev.io_path), "sim");
		snprintf(d->dev.durability, sizeof(d->dev.durability),
			 "simulated %s", (s->o.flags & PMWAL_SIM_FUA) ? "fua writes"
								      : "writes + flush");
	}
	snprintf(d->dev.medium, sizeof(d->dev.medium), "%s", medium_name(s->o.medium));
	pthread_mutex_lock(&s->mu);
	s->open_devs++;
	pthread_mutex_unlock(&s->mu);
	*out = &d->dev;
	return 0;
}

/* ---- the public API --------------------------------------------------------- */

static void sim_release(struct pmwal_sim *s)
{
	if (!s)
		return;
	if (s->cur)
		munmap(s->cur, s->size);
	free(s->dur);
	free(s->snap_cur);
	free(s->snap_dur);
	free(s->line_pending);
	free(s->pend);
	free(s->snap_pend);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static bool options_valid(const struct pmwal_sim_options *o)
{
	for (size_t i = 0; i < sizeof(o->reserved) / sizeof(o->reserved[0]); i++)
		if (o->reserved[i])
			return false;
	return o->medium >= PMWAL_SIM_PMEM && o->medium <= PMWAL_SIM_FAKEPMR &&
	       o->size_bytes >= 4096 && o->size_bytes % 4096 == 0 &&
	       !(o->flags & ~(uint32_t)(PMWAL_SIM_FUA | PMWAL_SIM_PROTECT)) &&
	       o->exhaustive_max <= SIM_EXHAUSTIVE_MAX &&
	       (!o->name || (o->name[0] && strlen(o->name) < 64));
}

int pmwal_sim_new(const struct pmwal_sim_options *opt, struct pmwal_sim **out)
{
	struct pmwal_sim *s, *x;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!opt || !options_valid(opt))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->mu, NULL);
	s->o = *opt;
	s->size = opt->size_bytes;
	s->cur = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		      0);
	if (s->cur == MAP_FAILED)
		s->cur = NULL;
	s->dur = calloc(1, s->size);
	s->snap_cur = malloc(s->size);
	s->snap_dur = malloc(s->size);
	s->line_pending = calloc(s->size / SIM_LINE_BYTES, sizeof(*s->line_pending));
	if (!s->cur || !s->dur || !s->snap_cur || !s->snap_dur || !s->line_pending) {
		sim_release(s);
		return -ENOMEM;
	}
	s->crash_at = UINT64_MAX;
	s->order_rng = opt->seed;
	cur_writable(s, false);
	pthread_mutex_lock(&registry_mu);
	if (opt->name)
		snprintf(s->name, sizeof(s->name), "%s", opt->name);
	else
		snprintf(s->name, sizeof(s->name), "sim%llu",
			 (unsigned long long)++registry_serial);
	for (x = registry; x && strcmp(x->name, s->name) != 0; x = x->next)
		;
	if (x) {
		pthread_mutex_unlock(&registry_mu);
		sim_release(s);
		return -EEXIST;
	}
	s->o.name = NULL; /* the caller's string is not kept */
	snprintf(s->target, sizeof(s->target), "sim:%s", s->name);
	s->next = registry;
	registry = s;
	pthread_mutex_unlock(&registry_mu);
	*out = s;
	return 0;
}

void pmwal_sim_free(struct pmwal_sim *sim)
{
	struct pmwal_sim **pp;

	if (!sim)
		return;
	pthread_mutex_lock(&registry_mu);
	for (pp = &registry; *pp && *pp != sim; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = sim->next;
	pthread_mutex_unlock(&registry_mu);
	/* A log still open on it keeps it alive (unnamed) until it closes. */
	pthread_mutex_lock(&sim->mu);
	bool busy = sim->open_devs > 0;

	sim->freed = true;
	pthread_mutex_unlock(&sim->mu);
	if (!busy)
		sim_release(sim);
}

const char *pmwal_sim_target(const struct pmwal_sim *sim)
{
	return sim ? sim->target : NULL;
}

void pmwal_sim_reset(struct pmwal_sim *sim)
{
	if (!sim)
		return;

	pthread_mutex_lock(&sim->mu);
	cur_writable(sim, true);
	memset(sim->cur, 0, sim->size);
	cur_writable(sim, false);
	memset(sim->dur, 0, sim->size);
	memset(sim->line_pending, 0, sim->size / SIM_LINE_BYTES * sizeof(*sim->line_pending));
	sim->npend = 0;
	sim->events = 0;
	sim->crash_at = UINT64_MAX;
	sim->dead = false;
	sim->have_crash = false;
	sim->nfaults = 0;
	sim->order_rng = sim->o.seed;
	pthread_mutex_unlock(&sim->mu);
}

uint64_t pmwal_sim_events(struct pmwal_sim *sim)
{
	uint64_t n;

	if (!sim)
		return 0;

	pthread_mutex_lock(&sim->mu);
	n = sim->events;
	pthread_mutex_unlock(&sim->mu);
	return n;
}

uint64_t pmwal_sim_pending(struct pmwal_sim *sim)
{
	uint64_t n;

	if (!sim)
		return 0;

	pthread_mutex_lock(&sim->mu);
	n = sim->npend;
	pthread_mutex_unlock(&sim->mu);
	return n;
}

void pmwal_sim_crash_at(struct pmwal_sim *sim, uint64_t n)
{
	if (!sim)
		return;

	pthread_mutex_lock(&sim->mu);
	sim->crash_at = n;
	pthread_mutex_unlock(&sim->mu);
}

void pmwal_sim_crash(struct pmwal_sim *sim)
{
	if (!sim)
		return;

	pthread_mutex_lock(&sim->mu);
	if (!sim->dead)
		power_loss(sim, sim->events);
	pthread_mutex_unlock(&sim->mu);
}

int pmwal_sim_crashed(struct pmwal_sim *sim)
{
	int d;

	if (!sim)
		return 0;

	pthread_mutex_lock(&sim->mu);
	d = sim->dead;
	pthread_mutex_unlock(&sim->mu);
	return d;
}

uint64_t pmwal_sim_crash_images(struct pmwal_sim *sim, struct pmwal_sim_crash_info *info)
{
	uint64_t n = 0;

	if (!sim)
		return 0;

	pthread_mutex_lock(&sim->mu);
	if (sim->have_crash) {
		n = sim->ci.subsets + sim->ci.torn;
		if (info)
			*info = sim->ci;
	} else if (info) {
		memset(info, 0, sizeof(*info));
	}
	pthread_mutex_unlock(&sim->mu);
	return n;
}

/* Bytes of unit @u in a torn image: every @g-byte piece lands or not, or the
 * unit is absent, whole, zeroed or garbage. */
static void tear_unit(struct pmwal_sim *s, const struct sim_unit *u, uint64_t *rng)
{
	uint32_t g = s->o.medium == PMWAL_SIM_PMEM	  ? 8
		     : s->o.medium == PMWAL_SIM_FAKEPMR ? 4
							: SIM_SECTOR_BYTES;
	uint8_t *dst = s->dur + u->off;
	const uint8_t *src = s->snap_cur + u->off;

	switch (splitmix(rng) % 5) {
	case 0: /* absent */
		return;
	case 1:
		memcpy(dst, src, u->len);
		return;
	case 2:
		for (uint32_t o = 0; o < u->len; o += g)
			if (splitmix(rng) & 1)
				memcpy(dst + o, src + o, g < u->len - o ? g : u->len - o);
		return;
	case 3:
		memset(dst, 0, u->len);
		return;
	default:
		for (uint32_t o = 0; o < u->len; o++)
			dst[o] = (uint8_t)splitmix(rng);
	}
}

int pmwal_sim_apply_image(struct pmwal_sim *sim, uint64_t index)
{
	struct pmwal_sim *s = sim;
	int rc = 0;

	if (!sim)
		return -EINVAL;

	pthread_mutex_lock(&s->mu);
	if (!s->have_crash) {
		rc = -EINVAL;
		goto out;
	}
	if (index >= s->ci.subsets + s->ci.torn) {
		rc = -ERANGE;
		goto out;
	}
	memcpy(s->dur, s->snap_dur, s->size);
	uint64_t rng = s->o.seed ^ (index * 0xd1b54a32d192ed03ull) ^ s->ci.event;

	for (size_t k = 0; k < s->snap_n; k++) {
		const struct sim_unit *u = &s->snap_pend[k];
		bool land;

		if (index >= s->ci.subsets) {
			tear_unit(s, u, &rng);
			continue;
		}
		if (s->ci.exhaustive)
			land = (index >> k) & 1;
		else
			land = index == 1 || (index > 1 && (splitmix(&rng) & 1));
		if (land)
			memcpy(s->dur + u->off, s->snap_cur + u->off, u->len);
	}
	cur_writable(s, true);
	memcpy(s->cur, s->dur, s->size);
	cur_writable(s, false);
	memset(s->line_pending, 0, s->size / SIM_LINE_BYTES * sizeof(*s->line_pending));
	s->npend = 0;
	s->dead = false;
	s->crash_at = UINT64_MAX;
out:
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int pmwal_sim_damage(struct pmwal_sim *sim, uint64_t off, uint64_t len, int kind)
{
	if (!sim)
		return -EINVAL;
	uint64_t rng = sim->o.seed ^ off;

	if (!in_bounds(sim, off, len) || kind < PMWAL_SIM_FLIP || kind > PMWAL_SIM_GARBAGE)
		return -EINVAL;
	pthread_mutex_lock(&sim->mu);
	cur_writable(sim, true);
	for (uint64_t i = off; i < off + len; i++) {
		uint8_t b = kind == PMWAL_SIM_FLIP   ? (uint8_t)(sim->dur[i] ^ 0x10)
			    : kind == PMWAL_SIM_ZERO ? 0
						     : (uint8_t)splitmix(&rng);

		sim->dur[i] = b;
		sim->cur[i] = b;
	}
	cur_writable(sim, false);
	pthread_mutex_unlock(&sim->mu);
	return 0;
}

int pmwal_sim_overwrite(struct pmwal_sim *sim, uint64_t off, const void *buf, uint64_t len)
{
	if (!sim || (!buf && len) || !in_bounds(sim, off, len))
		return -EINVAL;
	pthread_mutex_lock(&sim->mu);
	memcpy(sim->dur + off, buf, len);
	cur_writable(sim, true);
	memcpy(sim->cur + off, buf, len);
	cur_writable(sim, false);
	pthread_mutex_unlock(&sim->mu);
	return 0;
}

int pmwal_sim_fault(struct pmwal_sim *sim, const struct pmwal_sim_fault *f)
{
	int rc = 0;

	if (!sim || !f)
		return -EINVAL;

	if (f->kind < PMWAL_SIM_FAIL || f->kind > PMWAL_SIM_READ_ERROR || f->err > 0 ||
	    (f->kind == PMWAL_SIM_MISDIRECT && !in_bounds(sim, f->off, 0)) ||
	    (f->kind == PMWAL_SIM_READ_ERROR && (!f->len || !in_bounds(sim, f->off, f->len))))
		return -EINVAL;
	pthread_mutex_lock(&sim->mu);
	if (sim->nfaults == SIM_FAULTS_MAX)
		rc = -ENOSPC;
	else
		sim->faults[sim->nfaults++] = *f;
	pthread_mutex_unlock(&sim->mu);
	return rc;
}

void pmwal_sim_clear_faults(struct pmwal_sim *sim)
{
	if (!sim)
		return;
	pthread_mutex_lock(&sim->mu);
	sim->nfaults = 0;
	pthread_mutex_unlock(&sim->mu);
}

const uint8_t *pmwal_sim_durable(struct pmwal_sim *sim)
{
	if (!sim)
		return NULL;

	return sim->dur;
}
