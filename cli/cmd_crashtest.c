// SPDX-License-Identifier: MIT
/*
 * cmd_crashtest.c - `pmwal crashtest`: crash the log at every durability
 * event of a workload on simulated media (pmwal_sim_*), recover from every
 * image a reboot could find, and check the invariants of docs/crashtest.md
 * (I1-I10) against what was submitted and acknowledged. Also: damage at rest
 * (every live block, every superblock byte), device faults at run time, and
 * real processes SIGKILLed on real files.
 *
 * Each campaign (one medium, one mode) runs in a child process that keeps its
 * counters in shared memory, so a crash (signal) or a hang in the code under
 * test is counted and reported with the seed that replays it instead of
 * taking the harness down. Every random choice comes from --seed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "format.h"
#include "outfile.h"
#include "pmwal.h"
#include "util.h"

/* ---- counters and figures ------------------------------------------------ */

/* Every counter must read 0 (docs/crashtest.md, docs/reliability.md I1-I10). */
#define CT_COUNTERS(X)                                                                   \
	X(records_lost, "I1 an acked record missing or changed")                        \
	X(holes, "I2 a gap in the recovered LSNs")                                       \
	X(misordered, "I2 an LSN out of order")                                          \
	X(phantoms, "I3 a record never submitted, released or stale")                    \
	X(lsn_reuse, "I2 next LSN at or below an acked or recovered one")                \
	X(silent_truncations, "I4 acked records gone under damage, verdict not CORRUPT") \
	X(missed_corruptions, "I4 damage to durable data not reported CORRUPT")          \
	X(misplaced_corruptions, "I4 CORRUPT at the wrong LSN or offset")                \
	X(false_corruption, "I4 a crash alone reported CORRUPT")                         \
	X(open_failures, "a created log refused to open after a crash")                  \
	X(recovery_crashes, "I5 the checking process died on a signal")                  \
	X(timeouts, "I5 one recovery took longer than 10 s")                             \
	X(not_idempotent, "I6 a second recovery disagreed with the first")               \
	X(acked_after_error, "I7 a call succeeded after the handle failed")              \
	X(ordering_violations, "I8 an ack while writes were still volatile")             \
	X(fencing_violations, "I9 a second writer opened a live log")                    \
	X(duplicates, "I11 a follower delivered a record twice")                         \
	X(follower_errors, "I11 a follower failed reading a live log")                   \
	X(hangs, "I10 no progress for --hang-seconds")                                   \
	X(harness_errors, "the workload failed with no fault injected")

/* What a campaign did. */
#define CT_FIGURES(X)                                                                    \
	X(crash_points)                                                                  \
	X(exhaustive_points)                                                             \
	X(crash_images)                                                                  \
	X(subset_images)                                                                 \
	X(torn_images)                                                                   \
	X(recovery_crash_points)                                                         \
	X(recovery_crash_images)                                                         \
	X(faults_flip)                                                                   \
	X(faults_zero)                                                                   \
	X(faults_garbage)                                                                \
	X(faults_sealed)                                                                 \
	X(faults_superblock)                                                             \
	X(faults_free_space)                                                             \
	X(faults_fail)                                                                   \
	X(faults_lost)                                                                   \
	X(faults_misdirect)                                                              \
	X(faults_read_error)                                                             \
	X(kills)                                                                         \
	X(takeovers)                                                                     \
	X(fence_rounds)                                                                  \
	X(fence_waits)                                                                   \
	X(followers)                                                                     \
	X(records_delivered)                                                             \
	X(delivered_before_ack)                                                          \
	X(lag_p50_us)                                                                    \
	X(lag_p99_us)                                                                    \
	X(lag_p999_us)                                                                   \
	X(lag_max_us)                                                                    \
	X(fence_probes)                                                                  \
	X(records_appended)                                                              \
	X(records_checked)                                                               \
	X(recoveries)                                                                    \
	X(torn_beside)

enum {
#define CT_X_ENUM(name, text) C_##name,
	CT_COUNTERS(CT_X_ENUM)
#undef CT_X_ENUM
	CT_NCOUNTERS
};
enum {
#define CT_X_ENUM(name) F_##name,
	CT_FIGURES(CT_X_ENUM)
#undef CT_X_ENUM
	CT_NFIGURES
};

static const char *const counter_names[] = {
#define CT_X_NAME(name, text) #name,
	CT_COUNTERS(CT_X_NAME)
#undef CT_X_NAME
};
static const char *const counter_text[] = {
#define CT_X_TEXT(name, text) text,
	CT_COUNTERS(CT_X_TEXT)
#undef CT_X_TEXT
};
static const char *const figure_names[] = {
#define CT_X_NAME(name) #name,
	CT_FIGURES(CT_X_NAME)
#undef CT_X_NAME
};

/* Lives in shared memory: the campaign child writes, the parent reads. */
struct ct_shared {
	uint64_t c[CT_NCOUNTERS];
	uint64_t f[CT_NFIGURES];
	uint64_t heartbeat;
	uint32_t failures_printed;
	int finished;
	char where[256]; /* what is being checked now, with its replay line */
};

/* ---- options ------------------------------------------------------------- */

enum ct_mode { M_EXHAUSTIVE, M_RANDOM, M_FAULTS, M_KILL, M_TAKEOVER, M_NMODES };
static const char *const mode_names[] = {"exhaustive", "random", "faults", "kill", "takeover"};

struct ct_medium {
	const char *name;
	uint32_t sim;	   /* enum pmwal_sim_medium */
	uint32_t simflags; /* PMWAL_SIM_FUA */
	const char *kill;  /* the real target kind the kill lane uses */
};
static const struct ct_medium media[] = {
    {"pmem", PMWAL_SIM_PMEM, 0, "pmem"},
    {"nvme", PMWAL_SIM_NVME, 0, "file"},
    {"nvme-fua", PMWAL_SIM_NVME, PMWAL_SIM_FUA, NULL},
    {"fakepmr", PMWAL_SIM_FAKEPMR, 0, "fakepmr"},
};
#define NMEDIA (sizeof(media) / sizeof(media[0]))

struct ct_opts {
	uint64_t seed;
	uint64_t count;	       /* points (exhaustive), rounds (random, kill), faults */
	uint64_t seconds;      /* random, kill: stop after this long */
	uint64_t ops;	       /* workload operations */
	uint64_t images;       /* most images checked per crash point (0: all) */
	uint64_t point;	       /* exhaustive: only this point (replay), or UINT64_MAX */
	uint64_t hang_seconds; /* no progress for this long is a hang */
	uint32_t threads;      /* random: most appender threads */
	uint32_t inflight;     /* groups in flight (0: random draws 1, 2 or 4) */
	bool json, verbose;
	const char *dir; /* kill lane files */
};

/* ---- deterministic randomness and record contents --------------------------- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return mix64(*s);
}

static uint64_t rnd_below(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

/*
 * A record is named by a key; its length and bytes follow from (seed, key).
 * Single-writer keys are gen << 48 | lsn (the LSN is known before the append);
 * KEY_MAX makes a record of exactly record_bytes_max. Threaded keys set
 * KEY_THREAD and carry tid, gen and a per-thread sequence, and the record
 * starts with its key, so a recovered record names itself.
 */
#define KEY_THREAD (1ull << 63)
#define KEY_MAX	   (1ull << 47)
#define KEY_SMALL  (1ull << 46) /* at most 2000 bytes (batches) */

/* Records are at most REC_MAX_BASE + 99 bytes (wl_draw): ct->buf holds one. */
#define REC_MAX_BASE (4024u * 3)
#define REC_BUF_BYTES (REC_MAX_BASE + 128)

static uint64_t key_single(uint32_t gen, uint64_t lsn)
{
	return (uint64_t)gen << 48 | lsn;
}

static uint64_t key_thread(uint32_t tid, uint32_t gen, uint64_t seq)
{
	return KEY_THREAD | (uint64_t)(tid & 0xff) << 55 | (uint64_t)(gen & 0x7f) << 48 |
	       (seq & ((1ull << 48) - 1));
}

static uint32_t rec_len(uint64_t seed, uint64_t key, uint32_t rec_max)
{
	uint64_t h = mix64(seed ^ mix64(key ^ 0x6c656e));
	uint32_t len;

	if (!(key & KEY_THREAD) && (key & KEY_MAX))
		return rec_max;
	switch (h % 10) {
	case 0: case 1: case 2: case 3:
		len = 1 + (uint32_t)(h >> 8) % 64;
		break;
	case 4: case 5: case 6:
		len = 1 + (uint32_t)(h >> 8) % 1200;
		break;
	case 7: case 8: /* around one block's payload */
		len = 3000 + (uint32_t)(h >> 8) % 2200;
		break;
	default:
		len = 1 + (uint32_t)((h >> 8) % rec_max);
	}
	if (len > rec_max)
		len = rec_max;
	if (!(key & KEY_THREAD) && (key & KEY_SMALL) && len > 2000)
		len = 1 + len % 2000;
	if ((key & KEY_THREAD) && len < 8)
		len = 8;
	return len;
}

static void rec_fill(uint8_t *p, uint32_t len, uint64_t seed, uint64_t key)
{
	uint64_t s = mix64(seed * 0x2545f4914f6cdd1dull ^ key);

	for (uint32_t i = 0; i < len; i += 8) {
		uint64_t v = mix64(s + i);
		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
	if (key & KEY_THREAD)
		memcpy(p, &key, 8);
}

/* ---- the model: what was submitted and what was acknowledged --------------- */

enum { ST_NONE = 0, ST_SUBMITTED = 1, ST_ACKED = 2 };
#define MAXT 8

struct mrec {
	uint64_t key;
	uint8_t st;
};

struct model {
	pthread_mutex_t mu;
	struct mrec *r; /* by LSN */
	uint64_t n;
	uint64_t acked_max;   /* A */
	uint64_t unacked_from;/* lowest LSN that may still be ST_SUBMITTED */
	uint64_t head_lo;     /* release acknowledged: records below are gone */
	uint64_t head_hi;     /* release requested: records below may be gone */
	uint32_t gen;
	uint32_t rec_max;
	uint64_t seed;
	bool created;	      /* the create returned: the log must open */
	bool threaded;
	uint64_t tsub[MAXT];  /* threaded: records each thread submitted */
	/* kill lane: an LSN at or past dflt_from with no entry is gen dflt_gen */
	bool dflt;
	uint64_t dflt_from;
	uint32_t dflt_gen;
};

/*
 * The model is shared by the workload's threads and the log's completion
 * callbacks (which run on the committer thread): every model_* call takes
 * m->mu itself, and m_* are the unlocked parts they are built from. Checks
 * read the model only after every handle is closed.
 */
static struct mrec *m_at(struct model *m, uint64_t lsn)
{
	if (lsn >= m->n) {
		uint64_t n = m->n ? m->n : 1024;
		while (n <= lsn)
			n *= 2;
		struct mrec *r = realloc(m->r, n * sizeof(*r));
		if (!r) {
			fprintf(stderr, "crashtest: out of memory for the model\n");
			_exit(1);
		}
		memset(r + m->n, 0, (n - m->n) * sizeof(*r));
		m->r = r;
		m->n = n;
	}
	return &m->r[lsn];
}

static void m_ack(struct model *m, uint64_t lsn)
{
	struct mrec *r = m_at(m, lsn);
	r->st = ST_ACKED;
	if (lsn > m->acked_max)
		m->acked_max = lsn;
}

static void model_init(struct model *m, uint64_t seed, uint32_t rec_max)
{
	free(m->r);
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->mu, NULL);
	m->seed = seed;
	m->rec_max = rec_max;
	m->head_lo = m->head_hi = 1;
	m->unacked_from = 1;
}

/* A callback may report a record durable before its appender records it. */
static void model_submit(struct model *m, uint64_t lsn, uint64_t key)
{
	pthread_mutex_lock(&m->mu);
	struct mrec *r = m_at(m, lsn);
	r->key = key;
	if (r->st != ST_ACKED)
		r->st = ST_SUBMITTED;
	pthread_mutex_unlock(&m->mu);
}

/* The append of @lsn was refused: it was never the log's. */
static void model_unsubmit(struct model *m, uint64_t lsn)
{
	pthread_mutex_lock(&m->mu);
	m_at(m, lsn)->st = ST_NONE;
	pthread_mutex_unlock(&m->mu);
}

static void model_ack(struct model *m, uint64_t lsn)
{
	pthread_mutex_lock(&m->mu);
	m_ack(m, lsn);
	pthread_mutex_unlock(&m->mu);
}

/* Everything up to @lsn that was submitted is acknowledged. */
static void model_ack_upto(struct model *m, uint64_t lsn)
{
	pthread_mutex_lock(&m->mu);
	for (uint64_t l = m->unacked_from; l <= lsn; l++)
		if (l < m->n && m->r[l].st == ST_SUBMITTED)
			m_ack(m, l);
	if (lsn + 1 > m->unacked_from)
		m->unacked_from = lsn + 1;
	pthread_mutex_unlock(&m->mu);
}

static uint64_t model_acked_max(struct model *m)
{
	pthread_mutex_lock(&m->mu);
	uint64_t a = m->acked_max;
	pthread_mutex_unlock(&m->mu);
	return a;
}

/* An open returned: LSNs at or past @next were never written durably by any
 * acked call; forget what was submitted there (it will be reused). */
static void model_forget_from(struct model *m, uint64_t next)
{
	pthread_mutex_lock(&m->mu);
	for (uint64_t l = next; l < m->n; l++)
		if (m->r[l].st == ST_SUBMITTED)
			m->r[l].st = ST_NONE;
	pthread_mutex_unlock(&m->mu);
}

/* ---- the campaign context -------------------------------------------------- */

struct wl {
	uint64_t seed;
	uint32_t ops;
	uint32_t cap_blocks;
	uint32_t rec_max;
	uint32_t group_bytes_max;
	uint32_t policy;
	uint32_t threads;
	uint32_t inflight; /* options.groups_in_flight */
};

struct ct {
	struct ct_shared *sh;
	const struct ct_opts *o;
	const struct ct_medium *md;
	int mode;
	struct pmwal_sim *sim;
	struct wl p;
	char target[300]; /* sim target, or the kill lane's real target */
	char where[200];  /* "point 12 image 40" */
	uint8_t *buf;	  /* one record */
	double t0;
	bool fault_mode;  /* damage was injected: loss must come with CORRUPT */
	bool fault_armed; /* a device fault is armed: the workload may fail */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void beat(struct ct *ct)
{
	__atomic_add_fetch(&ct->sh->heartbeat, 1, __ATOMIC_RELAXED);
}

static void fig(struct ct *ct, int f, uint64_t n)
{
	__atomic_add_fetch(&ct->sh->f[f], n, __ATOMIC_RELAXED);
}

/* The replay's --groups-in-flight, when it was given (else the seed draws it). */
static const char *inflight_arg(const struct ct *ct)
{
	static const char *arg[] = {"", " --groups-in-flight 1", " --groups-in-flight 2",
				    " --groups-in-flight 3", " --groups-in-flight 4"};

	return ct->o->inflight < 5 ? arg[ct->o->inflight] : "";
}

/* Count a violation and say where, with the command line that replays it. */
static void fail(struct ct *ct, int c, const char *fmt, ...)
{
	__atomic_add_fetch(&ct->sh->c[c], 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&ct->sh->failures_printed, 1, __ATOMIC_RELAXED) >=
	    (ct->o->verbose ? 1000u : 10u))
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr,
		"crashtest: FAIL %s: %s [%s %s, seed %" PRIu64 ", %s]\n"
		"  replay: pmwal crashtest --medium %s --mode %s --seed %" PRIu64 "%s%s\n",
		counter_names[c], msg, ct->md->name, mode_names[ct->mode], ct->p.seed,
		ct->where, ct->md->name, mode_names[ct->mode], ct->p.seed,
		ct->mode == M_RANDOM ? " --count 1" : "", inflight_arg(ct));
}

static void set_where(struct ct *ct, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ct->where, sizeof(ct->where), fmt, ap);
	va_end(ap);
	snprintf(ct->sh->where, sizeof(ct->sh->where),
		 "%s %s, seed %" PRIu64 ", %s (replay: pmwal crashtest --medium %s --mode %s "
		 "--seed %" PRIu64 "%s%s)",
		 ct->md->name, mode_names[ct->mode], ct->p.seed, ct->where, ct->md->name,
		 mode_names[ct->mode], ct->p.seed, ct->mode == M_RANDOM ? " --count 1" : "",
		 inflight_arg(ct));
	beat(ct);
}

static struct pmwal_options log_opts(struct ct *ct, uint32_t flags)
{
	struct pmwal_options o = {.target = ct->target,
				  .capacity_bytes = (2ull + ct->p.cap_blocks) * 4096,
				  .flags = flags,
				  .commit_policy = ct->p.policy,
				  .group_bytes_max = ct->p.group_bytes_max,
				  .groups_in_flight = ct->p.inflight,
				  .record_bytes_max = (flags & PMWAL_OPEN_CREATE) ? ct->p.rec_max : 0};
	return o;
}

/* A workload drawn from @seed: small rings so that they wrap, records from
 * one byte to several blocks, either commit policy. */
static struct wl wl_draw(uint64_t seed, uint64_t ops, uint32_t max_threads,
		         uint32_t inflight)
{
	uint64_t s = seed;
	static const uint32_t caps[] = {6, 12, 24, 48};
	static const uint32_t groups[] = {0, 4096, 16384, 65536};
	struct wl p = {.seed = seed, .ops = (uint32_t)ops};

	p.cap_blocks = caps[rnd_below(&s, 4)];
	p.rec_max = REC_MAX_BASE + (uint32_t)rnd_below(&s, 100);
	p.group_bytes_max = groups[rnd_below(&s, 4)];
	p.policy = rnd_below(&s, 4) == 0 ? PMWAL_COMMIT_BUFFERED : PMWAL_COMMIT_DURABLE;
	p.threads = max_threads > 1 ? 1 + (uint32_t)rnd_below(&s, max_threads) : 1;
	/* Drawn last, so that the fields above are what they were before it. */
	static const uint32_t flights[] = {1, 2, 4};
	uint64_t f = rnd_below(&s, 3);

	p.inflight = inflight ? inflight : flights[f];
	return p;
}

/* ---- the single-writer workload ------------------------------------------------ */

struct wstate {
	struct ct *ct;
	struct model *m;
	struct pmwal *w;
	uint64_t next; /* the LSN the next append gets */
	bool failed;   /* a call failed: the handle must fail stop */
	int fail_rc;
	const char *fail_what; /* the call that failed */
};

/* An acknowledgement by a synchronous call: nothing may still be volatile. */
static void sync_ack(struct wstate *s, uint64_t upto)
{
	if (s->ct->sim && pmwal_sim_pending(s->ct->sim))
		fail(s->ct, C_ordering_violations,
		     "ack of LSN %" PRIu64 " with %" PRIu64 " writes or lines still volatile",
		     upto, pmwal_sim_pending(s->ct->sim));
	model_ack_upto(s->m, upto);
}

static void on_durable(void *arg, uint64_t lsn, int status)
{
	struct model *m = arg;

	if (status)
		return;
	model_ack(m, lsn);
}

/* Open (or create) the log; on success the model learns where it resumes. */
static int w_open(struct wstate *s, bool create)
{
	struct pmwal_options o = log_opts(s->ct, create ? PMWAL_OPEN_CREATE : 0);
	struct pmwal_info info;
	int rc = pmwal_open(&o, &s->w);

	fig(s->ct, F_recoveries, 1);
	if (rc) {
		s->failed = true;
		s->fail_rc = rc;
		s->fail_what = "open";
		return rc;
	}
	if (create)
		s->m->created = true;
	pmwal_stat(s->w, &info);
	uint64_t acked = model_acked_max(s->m);
	if (info.next_lsn <= acked)
		fail(s->ct, C_lsn_reuse,
		     "reopen in the workload: next LSN %" PRIu64 " but LSN %" PRIu64 " was acked",
		     info.next_lsn, acked);
	/* What recovery kept is the log's from now on: it must stay. */
	model_forget_from(s->m, info.next_lsn);
	model_ack_upto(s->m, info.next_lsn - 1);
	s->next = info.next_lsn;
	return 0;
}

static bool w_error(struct wstate *s, int rc, const char *what)
{
	s->failed = true;
	s->fail_rc = rc;
	s->fail_what = what;
	return false;
}

/* Release below @lsn, keeping the model's idea of the head range. */
static bool w_release(struct wstate *s, uint64_t lsn)
{
	if (lsn > s->m->head_hi)
		s->m->head_hi = lsn;
	int rc = pmwal_release(s->w, lsn);
	if (rc)
		return w_error(s, rc, "release");
	if (lsn > s->m->head_lo)
		s->m->head_lo = lsn;
	return true;
}

/* Make room after PMWAL_EFULL: sync, then release all but a few records, or
 * everything when @all (a ring of a few blocks cannot keep two of the largest
 * records and take a third). */
static bool w_make_room(struct wstate *s, uint64_t *r, bool all)
{
	int rc = pmwal_sync(s->w);
	if (rc)
		return w_error(s, rc, "sync");
	sync_ack(s, s->next - 1);
	uint64_t keep = all ? 0 : rnd_below(r, 3);
	uint64_t to = s->next > keep ? s->next - keep : s->next;
	if (to < s->m->head_lo)
		to = s->m->head_lo;
	return w_release(s, to);
}

/* Append one record with the next LSN; false when the workload must stop. */
static bool w_append1(struct wstate *s, uint64_t *r, uint64_t flags)
{
	struct model *m = s->m;
	uint64_t key = key_single(m->gen, s->next) | flags;
	uint32_t len = rec_len(m->seed, key, m->rec_max);
	uint64_t lsn = 0;

	for (int tries = 0;; tries++) {
		rec_fill(s->ct->buf, len, m->seed, key);
		model_submit(m, s->next, key);
		int rc = pmwal_append(s->w, s->ct->buf, len, &lsn);
		if (rc == PMWAL_EFULL && tries < 2) {
			model_unsubmit(m, s->next);
			if (!w_make_room(s, r, tries > 0))
				return false;
			continue;
		}
		if (rc) {
			if (rc == PMWAL_EFULL)
				model_unsubmit(m, s->next);
			return w_error(s, rc, "append");
		}
		break;
	}
	if (lsn != s->next) {
		fail(s->ct, C_lsn_reuse, "append got LSN %" PRIu64 ", expected %" PRIu64, lsn,
		     s->next);
		return false;
	}
	s->next++;
	fig(s->ct, F_records_appended, 1);
	if (s->ct->p.policy == PMWAL_COMMIT_DURABLE)
		sync_ack(s, lsn);
	return true;
}

static bool w_appendv(struct wstate *s, uint64_t *r)
{
	struct model *m = s->m;
	int count = 2 + (int)rnd_below(r, 5);
	struct iovec iov[8];
	uint8_t *bufs[8];
	uint64_t first = 0;

	for (int i = 0; i < count; i++) {
		uint64_t key = key_single(m->gen, s->next + i) | KEY_SMALL;
		uint32_t len = rec_len(m->seed, key, m->rec_max);
		bufs[i] = malloc(len);
		rec_fill(bufs[i], len, m->seed, key);
		iov[i] = (struct iovec){bufs[i], len};
		model_submit(m, s->next + i, key);
	}
	int rc = pmwal_appendv(s->w, iov, count, &first);
	for (int i = 0; i < count; i++)
		free(bufs[i]);
	if (rc == PMWAL_EFULL) {
		for (int i = 0; i < count; i++)
			model_unsubmit(m, s->next + i);
		return w_make_room(s, r, false);
	}
	if (rc)
		return w_error(s, rc, "appendv");
	if (first != s->next) {
		fail(s->ct, C_lsn_reuse, "appendv got LSN %" PRIu64 ", expected %" PRIu64, first,
		     s->next);
		return false;
	}
	s->next += count;
	fig(s->ct, F_records_appended, count);
	if (s->ct->p.policy == PMWAL_COMMIT_DURABLE)
		sync_ack(s, s->next - 1);
	return true;
}

static bool w_async(struct wstate *s, uint64_t *r)
{
	struct model *m = s->m;
	int count = 1 + (int)rnd_below(r, 6);
	uint64_t lsn = 0;

	for (int i = 0; i < count; i++) {
		uint64_t key = key_single(m->gen, s->next);
		uint32_t len = rec_len(m->seed, key, m->rec_max);
		rec_fill(s->ct->buf, len, m->seed, key);
		model_submit(m, s->next, key);
		int rc = pmwal_append_async(s->w, s->ct->buf, len, on_durable, m, &lsn);
		if (rc == PMWAL_EFULL) {
			model_unsubmit(m, s->next);
			return w_make_room(s, r, false);
		}
		if (rc)
			return w_error(s, rc, "append_async");
		if (lsn != s->next) {
			fail(s->ct, C_lsn_reuse, "append_async got LSN %" PRIu64 ", expected %" PRIu64,
			     lsn, s->next);
			return false;
		}
		s->next++;
		fig(s->ct, F_records_appended, 1);
	}
	int rc = rnd_below(r, 2) ? pmwal_wait(s->w, lsn) : pmwal_sync(s->w);
	if (rc)
		return w_error(s, rc, "wait");
	sync_ack(s, lsn);
	return true;
}

/*
 * Run the single-writer workload drawn from ct->p until it ends or a call
 * fails (a crash or an injected fault). The log is created on a blank medium;
 * with @close_clean it ends with a clean close.
 */
static void wl_run(struct ct *ct, struct model *m, bool close_clean)
{
	struct wstate s = {.ct = ct, .m = m};
	uint64_t r = ct->p.seed ^ 0x776f726b6c6f6164ull;

	if (w_open(&s, true))
		return;
	for (uint32_t op = 0; op < ct->p.ops && !s.failed; op++) {
		uint64_t d = rnd_below(&r, 100);

		beat(ct);
		bool ok = true;

		if (d < 40) {
			ok = w_append1(&s, &r, 0);
		} else if (d < 52) {
			ok = w_appendv(&s, &r);
		} else if (d < 64) {
			ok = w_async(&s, &r);
		} else if (d < 72) {
			int rc = pmwal_sync(s.w);
			ok = rc ? w_error(&s, rc, "sync") : true;
			if (!rc)
				sync_ack(&s, s.next - 1);
		} else if (d < 82) { /* release part of what is durable */
			uint64_t dur = pmwal_durable_lsn(s.w);
			if (dur >= m->head_lo)
				ok = w_release(&s, m->head_lo + rnd_below(&r, dur - m->head_lo + 2));
		} else if (d < 85) { /* release everything */
			int rc = pmwal_sync(s.w);
			ok = rc ? w_error(&s, rc, "sync") : true;
			if (ok) {
				sync_ack(&s, s.next - 1);
				ok = w_release(&s, s.next);
			}
		} else if (d < 91) { /* close and open again: recovery mid-run */
			int rc = pmwal_close(s.w);
			s.w = NULL;
			if (rc) {
				ok = w_error(&s, rc, "close");
			} else {
				sync_ack(&s, s.next - 1);
				ok = !w_open(&s, false);
			}
		} else if (d < 95) { /* a record of exactly record_bytes_max */
			ok = w_append1(&s, &r, KEY_MAX);
		} else { /* one byte too big: refused, the log lives on */
			int rc = pmwal_append(s.w, ct->buf, ct->p.rec_max + 1, NULL);
			if (rc == 0)
				fail(ct, C_harness_errors, "a record of record_bytes_max + 1 was taken");
			else if (rc != PMWAL_ETOOBIG)
				ok = w_error(&s, rc, "append too big");
		}
		(void)ok;
		if (s.w && !s.failed) {
			uint64_t dur = pmwal_durable_lsn(s.w);
			if (dur >= s.next && dur)
				fail(ct, C_ordering_violations,
				     "durable LSN %" PRIu64 " ahead of the next LSN %" PRIu64, dur,
				     s.next);
			model_ack_upto(m, dur < s.next ? dur : s.next - 1);
		}
	}
	if (s.failed && ct->o->verbose)
		fprintf(stderr, "  %s: %s failed: %s\n", ct->where, s.fail_what,
			pmwal_strerror(s.fail_rc));
	if (s.failed && s.w) {
		/* I7: the handle fails stop. Nothing more is acknowledged. */
		uint64_t lsn;
		int was = s.fail_rc;
		if (was != PMWAL_EFULL && was != PMWAL_ETOOBIG) {
			if (pmwal_append(s.w, "x", 1, &lsn) == 0 &&
			    ct->p.policy == PMWAL_COMMIT_DURABLE) {
				fail(ct, C_acked_after_error,
				     "append acked LSN %" PRIu64 " after %s failed: %s", lsn,
				     s.fail_what, pmwal_strerror(was));
				model_submit(m, lsn, key_single(m->gen, lsn));
			}
			if (pmwal_sync(s.w) == 0 && s.next > model_acked_max(m) + 1)
				fail(ct, C_acked_after_error, "sync succeeded after %s failed: %s",
				     s.fail_what, pmwal_strerror(was));
		}
		pmwal_close(s.w);
		s.w = NULL;
	}
	if (s.w) {
		if (close_clean) {
			int rc = pmwal_close(s.w);
			if (ct->o->verbose && rc)
				fprintf(stderr, "  %s: close: %s\n", ct->where, pmwal_strerror(rc));
			if (rc == 0)
				sync_ack(&s, s.next - 1);
			else if (!ct->fault_mode && !ct->fault_armed && !pmwal_sim_crashed(ct->sim))
				fail(ct, C_harness_errors, "clean close failed: %s", pmwal_strerror(rc));
		} else {
			pmwal_close(s.w);
		}
	}
	if (s.failed && !ct->fault_mode && !ct->fault_armed && ct->sim &&
	    !pmwal_sim_crashed(ct->sim))
		fail(ct, C_harness_errors, "workload failed with no crash: %s",
		     pmwal_strerror(s.fail_rc));
}

/* Open the log again and append (no release) until two thirds of the ring
 * hold live records, so that at-rest damage has blocks to hit, across the
 * ring's wrap. Returns false when the log would not open or take records. */
static bool wl_fill(struct ct *ct, struct model *m)
{
	struct wstate s = {.ct = ct, .m = m};
	struct pmwal_info info;
	bool ok = false;

	if (w_open(&s, false))
		return false;
	for (int i = 0; i < 1000; i++) {
		pmwal_stat(s.w, &info);
		if (info.used_blocks * 3 >= info.capacity_blocks * 2) {
			ok = true;
			break;
		}
		uint64_t key = key_single(m->gen, s.next) | KEY_SMALL, lsn;
		uint32_t len = rec_len(m->seed, key, m->rec_max);
		rec_fill(ct->buf, len, m->seed, key);
		model_submit(m, s.next, key);
		int rc = pmwal_append(s.w, ct->buf, len, &lsn);
		if (rc == PMWAL_EFULL) {
			model_unsubmit(m, s.next);
			ok = true;
			break;
		}
		if (rc || lsn != s.next)
			break;
		s.next++;
		fig(ct, F_records_appended, 1);
		sync_ack(&s, lsn);
	}
	if (pmwal_close(s.w))
		ok = false;
	if (ok)
		sync_ack(&s, s.next - 1);
	else
		fail(ct, C_harness_errors, "could not fill the log for the fault campaign");
	return ok;
}

/* ---- the threaded workload (random mode) ------------------------------------- */

struct tctx {
	struct ct *ct;
	struct model *m;
	struct pmwal *w;
	uint32_t tid;
	uint32_t ops;
	bool *stop;
};

static void *wl_thread(void *arg)
{
	struct tctx *t = arg;
	struct model *m = t->m;
	uint64_t r = t->ct->p.seed ^ mix64(t->tid + 1);
	uint8_t *buf = malloc(m->rec_max + 8);

	for (uint32_t op = 0; op < t->ops && !__atomic_load_n(t->stop, __ATOMIC_RELAXED); op++) {
		beat(t->ct); /* progress, for the hang watch */
		pthread_mutex_lock(&m->mu);
		uint64_t seq = m->tsub[t->tid]++;
		pthread_mutex_unlock(&m->mu);
		uint64_t key = key_thread(t->tid, m->gen, seq);
		uint32_t len = rec_len(m->seed, key, m->rec_max);
		uint64_t lsn = 0, d = rnd_below(&r, 100);
		int rc;

		rec_fill(buf, len, m->seed, key);
		if (d < 70) {
			rc = pmwal_append(t->w, buf, len, &lsn);
			if (rc == 0) {
				model_submit(m, lsn, key);
				if (t->ct->p.policy == PMWAL_COMMIT_DURABLE)
					model_ack(m, lsn);
			}
		} else {
			/* No lock held across the call: its callback takes it. */
			rc = pmwal_append_async(t->w, buf, len, on_durable, m, &lsn);
			if (rc == 0) {
				model_submit(m, lsn, key);
			}
			if (rc == 0 && d < 85) {
				rc = pmwal_wait(t->w, lsn);
				if (rc == 0) {
					model_ack(m, lsn);
				}
			}
		}
		if (rc == 0)
			fig(t->ct, F_records_appended, 1);
		if (rc == PMWAL_EFULL && t->tid == 0) {
			/* Thread 0 makes room: release what is durable. */
			uint64_t dur = pmwal_durable_lsn(t->w);
			pthread_mutex_lock(&m->mu);
			if (dur + 1 > m->head_hi)
				m->head_hi = dur + 1;
			pthread_mutex_unlock(&m->mu);
			rc = pmwal_release(t->w, dur + 1);
			if (rc == 0) {
				pthread_mutex_lock(&m->mu);
				if (dur + 1 > m->head_lo)
					m->head_lo = dur + 1;
				pthread_mutex_unlock(&m->mu);
				continue;
			}
		}
		if (rc == PMWAL_EFULL) {
			sched_yield();
			continue;
		}
		if (rc) {
			__atomic_store_n(t->stop, true, __ATOMIC_RELAXED);
			break;
		}
	}
	free(buf);
	return NULL;
}

static void wl_run_threads(struct ct *ct, struct model *m)
{
	struct pmwal_options o = log_opts(ct, PMWAL_OPEN_CREATE);
	struct pmwal *w;
	pthread_t th[MAXT];
	struct tctx t[MAXT];
	bool stop = false;
	uint32_t n = ct->p.threads > MAXT ? MAXT : ct->p.threads;

	m->threaded = true;
	fig(ct, F_recoveries, 1);
	if (pmwal_open(&o, &w))
		return;
	m->created = true;
	for (uint32_t i = 0; i < n; i++) {
		t[i] = (struct tctx){ct, m, w, i, ct->p.ops * 2 / n + 1, &stop};
		pthread_create(&th[i], NULL, wl_thread, &t[i]);
	}
	for (uint32_t i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	uint64_t dur = pmwal_durable_lsn(w);
	model_ack_upto(m, dur);
	pmwal_close(w);
}

/* ---- checking one recovered log ------------------------------------------------- */

/* Records appended after recovery, by the check itself. */
struct overlay {
	uint64_t from; /* LSNs >= from are the check's, gen gen */
	uint64_t to;   /* and < to, all acked */
	uint32_t gen;
};

struct scan {
	uint64_t head, first, last, count, next;
	int verdict;
	bool iter_error;
};

/* Is @data the record that @lsn should hold? Counts what is wrong. */
static void check_record(struct ct *ct, struct model *m, const struct overlay *ov, uint64_t lsn,
			 const uint8_t *data, size_t len)
{
	uint64_t key;
	bool known = false, acked = false;

	if (ov && lsn >= ov->from) {
		if (lsn >= ov->to) {
			fail(ct, C_phantoms, "LSN %" PRIu64 " past the last appended (%" PRIu64 ")",
			     lsn, ov->to - 1);
			return;
		}
		key = key_single(ov->gen, lsn);
		known = acked = true;
	} else if (lsn < m->n && m->r[lsn].st != ST_NONE) {
		key = m->r[lsn].key;
		known = true;
		acked = m->r[lsn].st == ST_ACKED;
	} else if (m->dflt && lsn >= m->dflt_from) {
		key = key_single(m->dflt_gen, lsn);
		known = true;
	} else if (m->threaded && len >= 8) {
		memcpy(&key, data, 8);
		uint32_t tid = (uint32_t)(key >> 55) & 0xff;
		uint64_t seq = key & ((1ull << 48) - 1);
		if (!(key & KEY_THREAD) || tid >= MAXT || ((key >> 48) & 0x7f) != (m->gen & 0x7f) ||
		    seq >= m->tsub[tid]) {
			fail(ct, C_phantoms, "LSN %" PRIu64 " holds no record any thread submitted",
			     lsn);
			return;
		}
	} else {
		fail(ct, C_phantoms, "LSN %" PRIu64 " was never submitted", lsn);
		return;
	}
	(void)known;
	uint32_t want = rec_len(m->seed, key, m->rec_max);
	uint8_t *exp = ct->buf;
	rec_fill(exp, want, m->seed, key);
	if (len != want || memcmp(exp, data, len)) {
		if (acked)
			fail(ct, C_records_lost,
			     "acked LSN %" PRIu64 " came back changed (%zu bytes, wanted %u)", lsn, len,
			     want);
		else
			fail(ct, C_phantoms,
			     "LSN %" PRIu64 " holds bytes never submitted for it (%zu bytes, wanted %u)",
			     lsn, len, want);
	}
	fig(ct, F_records_checked, 1);
}

/* Iterate the whole log on @w and check it against the model. */
static void scan_log(struct ct *ct, struct model *m, const struct overlay *ov, struct pmwal *w,
		     struct scan *sc)
{
	struct pmwal_info info;
	struct pmwal_iter *it;
	const void *data;
	size_t len;
	uint64_t lsn, expect;
	int rc;

	memset(sc, 0, sizeof(*sc));
	pmwal_stat(w, &info);
	sc->head = info.head_lsn;
	sc->next = info.next_lsn;
	sc->verdict = pmwal_recovery_report(w)->verdict;
	if (pmwal_iter_open(w, 0, &it)) {
		fail(ct, C_records_lost, "iterator refused to open at the head");
		return;
	}
	expect = sc->head;
	uint64_t limit = (m->n > sc->next ? m->n : sc->next) + 16;
	while ((rc = pmwal_iter_next(it, &lsn, &data, &len)) == 1 && sc->count < limit) {
		if (sc->count == 0)
			sc->first = lsn;
		if (lsn != expect) {
			if (lsn > expect)
				fail(ct, C_holes, "LSN %" PRIu64 " follows %" PRIu64, lsn, expect - 1);
			else
				fail(ct, C_misordered, "LSN %" PRIu64 " after %" PRIu64, lsn,
				     expect - 1);
		}
		if (lsn < m->head_lo)
			fail(ct, C_phantoms,
			     "LSN %" PRIu64 " returned although release below %" PRIu64 " was acked",
			     lsn, m->head_lo);
		check_record(ct, m, ov, lsn, data, len);
		expect = lsn + 1;
		sc->last = lsn;
		sc->count++;
	}
	pmwal_iter_close(it);
	if (rc < 0) {
		sc->iter_error = true;
		/* Under injected damage or read errors a loud error is a detection;
		 * after a crash alone it is a loss. */
		if (ct->fault_mode)
			return;
		fail(ct, C_records_lost, "iteration stopped after LSN %" PRIu64 ": %s", sc->last,
		     pmwal_strerror(rc));
	}
	if (sc->count && sc->first != sc->head)
		fail(ct, C_holes, "first record %" PRIu64 " but head LSN %" PRIu64, sc->first,
		     sc->head);
	if (sc->count && sc->next != sc->last + 1)
		fail(ct, C_lsn_reuse, "next LSN %" PRIu64 " after last record %" PRIu64, sc->next,
		     sc->last);
	/* I1: every acked LSN at or past the head that may not be released. */
	uint64_t lost = 0, first_lost = 0;
	uint64_t top = ov ? ov->from : UINT64_MAX;
	for (uint64_t l = m->head_lo; l < m->n && l < top; l++) {
		if (m->r[l].st != ST_ACKED)
			continue;
		if (l < sc->head && l < m->head_hi)
			continue; /* a requested release may have landed */
		if (l < sc->head || !sc->count || l > sc->last) {
			if (!lost++)
				first_lost = l;
		}
	}
	if (ov)
		for (uint64_t l = ov->from; l < ov->to; l++)
			if (!sc->count || l > sc->last || l < sc->head) {
				if (!lost++)
					first_lost = l;
			}
	if (lost) {
		int c = ct->fault_mode ? C_silent_truncations : C_records_lost;
		fail(ct, c,
		     "%" PRIu64 " acked records missing from LSN %" PRIu64 " (recovered %" PRIu64
		     "..%" PRIu64 ", head %" PRIu64 ", verdict %d)",
		     lost, first_lost, sc->first, sc->last, sc->head, sc->verdict);
	}
	if (sc->next <= m->acked_max && (!ov || sc->next < ov->from))
		fail(ct, C_lsn_reuse, "next LSN %" PRIu64 " but LSN %" PRIu64 " was acked", sc->next,
		     m->acked_max);
}

static int open_timed(struct ct *ct, struct pmwal_options *o, struct pmwal **w)
{
	double t = now_s();
	int rc = pmwal_open(o, w);
	fig(ct, F_recoveries, 1);
	/* A group torn while a later one landed whole (several in flight). */
	if (rc == 0 && strstr(pmwal_recovery_report(*w)->detail, "in flight"))
		fig(ct, F_torn_beside, 1);
	if (now_s() - t > 10)
		fail(ct, C_timeouts, "recovery took %.1f s", now_s() - t);
	beat(ct);
	return rc;
}

/*
 * The full check of one crash image (crash-only: CLEAN or TORN_TAIL, nothing
 * acked lost): verify read-only, open (recovery), scan; open again and scan
 * (I6); append, sync, close, open and scan once more.
 * Returns the events recovery made on this image (for crashes during it).
 */
static uint64_t check_image(struct ct *ct, struct model *m, bool append_again)
{
	struct pmwal_options o = log_opts(ct, 0);
	struct pmwal_report vr;
	struct pmwal *w;
	struct scan a, b;
	int rc = pmwal_verify(&o, &vr);

	if (rc) {
		if (!m->created && (rc == PMWAL_EFORMAT || rc == PMWAL_ECORRUPT))
			return 0; /* the create never returned: no log is fine */
		if (ct->o->verbose && ct->sim) { /* what the superblocks hold */
			struct wal_sb sa, sb2;
			const uint8_t *d = pmwal_sim_durable(ct->sim);
			int ra = wal_sb_decode(d, &sa), rb = wal_sb_decode(d + 4096, &sb2);
			struct pmwal_sim_crash_info ci;
			pmwal_sim_crash_images(ct->sim, &ci);
			fprintf(stderr, "  superblock copy 0: %d (sb_seq %" PRIu64 ", epoch %u), copy 1: %d (sb_seq %" PRIu64 ", epoch %u); power loss at event %" PRIu64 " with %" PRIu64 " pending\n",
				ra, ra ? 0 : sa.sb_seq, ra ? 0 : sa.epoch, rb, rb ? 0 : sb2.sb_seq, rb ? 0 : sb2.epoch, ci.event, ci.pending);
		}
		if (rc == PMWAL_ECORRUPT)
			fail(ct, C_false_corruption, "verify: %s", pmwal_strerror(rc));
		else
			fail(ct, C_open_failures, "verify: %s", pmwal_strerror(rc));
		return 0;
	}
	if (vr.verdict == PMWAL_CORRUPT) {
		fail(ct, C_false_corruption, "verify says CORRUPT after a crash: %s", vr.detail);
		return 0;
	}
	uint64_t e0 = ct->sim ? pmwal_sim_events(ct->sim) : 0;
	rc = open_timed(ct, &o, &w);
	uint64_t recovery_events = ct->sim ? pmwal_sim_events(ct->sim) - e0 : 0;
	if (rc) {
		fail(rc == PMWAL_ECORRUPT ? ct : ct, rc == PMWAL_ECORRUPT ? C_false_corruption
									 : C_open_failures,
		     "open after verify said %s: %s",
		     vr.verdict == PMWAL_CLEAN ? "CLEAN" : "TORN_TAIL", pmwal_strerror(rc));
		return 0;
	}
	scan_log(ct, m, NULL, w, &a);
	if (a.count != vr.records || (a.count && a.last != vr.last_lsn))
		fail(ct, C_not_idempotent,
		     "verify found %" PRIu64 " records to %" PRIu64 ", open %" PRIu64 " to %" PRIu64,
		     vr.records, vr.last_lsn, a.count, a.last);
	pmwal_close(w);
	if (!append_again)
		return recovery_events;

	/* I6: recovering the recovered log changes nothing. */
	if ((rc = open_timed(ct, &o, &w))) {
		fail(ct, C_not_idempotent, "second open failed: %s", pmwal_strerror(rc));
		return recovery_events;
	}
	scan_log(ct, m, NULL, w, &b);
	if (b.count != a.count || b.first != a.first || b.last != a.last ||
	    b.verdict == PMWAL_CORRUPT)
		fail(ct, C_not_idempotent,
		     "second recovery: %" PRIu64 " records %" PRIu64 "..%" PRIu64
		     ", first: %" PRIu64 " records %" PRIu64 "..%" PRIu64,
		     b.count, b.first, b.last, a.count, a.first, a.last);

	/* The log goes on: append past what recovery kept, then recover again. */
	struct overlay ov = {.from = b.next, .to = b.next, .gen = m->gen + 1};
	for (int i = 0; i < 3; i++) {
		uint64_t key = key_single(ov.gen, ov.to), lsn;
		uint32_t len = rec_len(m->seed, key, m->rec_max);
		rec_fill(ct->buf, len, m->seed, key);
		rc = pmwal_append(w, ct->buf, len, &lsn);
		if (rc == PMWAL_EFULL)
			break; /* a full ring after recovery is fine; the model stays as it is */
		if (rc) {
			fail(ct, C_harness_errors, "append after recovery: %s", pmwal_strerror(rc));
			break;
		}
		if (lsn != ov.to) {
			fail(ct, C_lsn_reuse, "append after recovery got LSN %" PRIu64 ", not %" PRIu64,
			     lsn, ov.to);
			break;
		}
		ov.to++;
	}
	if ((rc = pmwal_sync(w)))
		fail(ct, C_harness_errors, "sync after recovery: %s", pmwal_strerror(rc));
	if (ct->sim && pmwal_sim_pending(ct->sim))
		fail(ct, C_ordering_violations, "sync returned with writes still volatile");
	if ((rc = pmwal_close(w)))
		fail(ct, C_harness_errors, "close after recovery: %s", pmwal_strerror(rc));
	if ((rc = open_timed(ct, &o, &w))) {
		fail(ct, C_not_idempotent, "open after appending to the recovered log: %s",
		     pmwal_strerror(rc));
		return recovery_events;
	}
	struct scan c;
	scan_log(ct, m, &ov, w, &c);
	pmwal_close(w);
	return recovery_events;
}

/* ---- exhaustive and random campaigns on simulated media ------------------------- */

static int sim_open(struct ct *ct)
{
	struct pmwal_sim_options so = {.medium = ct->md->sim,
				       .flags = ct->md->simflags | PMWAL_SIM_PROTECT,
				       .size_bytes = (2ull + 48) * 4096,
				       .seed = ct->p.seed};
	int rc = pmwal_sim_new(&so, &ct->sim);
	if (rc) {
		fprintf(stderr, "crashtest: cannot make a simulated %s medium: %s\n", ct->md->name,
			pmwal_strerror(rc));
		return rc;
	}
	snprintf(ct->target, sizeof(ct->target), "%s", pmwal_sim_target(ct->sim));
	return 0;
}

/* Crash images of the last power loss: every one, or @cap of them drawn
 * evenly (subsets first, then torn variants). */
static void check_images(struct ct *ct, struct model *m, uint64_t point, uint64_t *rs,
			 bool nested)
{
	struct pmwal_sim_crash_info info;
	uint64_t n = pmwal_sim_crash_images(ct->sim, &info);
	uint64_t cap = ct->o->images ? ct->o->images : n;
	uint64_t step = n > cap ? n / cap : 1;
	uint64_t recovery_events = 0, chosen = n ? rnd_below(rs, n) : 0;

	if (!nested) {
		fig(ct, F_crash_points, 1);
		if (info.exhaustive)
			fig(ct, F_exhaustive_points, 1);
	} else {
		fig(ct, F_recovery_crash_points, 1);
	}
	for (uint64_t i = 0; i < n; i += step) {
		set_where(ct, "%spoint %" PRIu64 " image %" PRIu64 " of %" PRIu64,
			  nested ? "recovery crash after " : "", point, i, n);
		if (pmwal_sim_apply_image(ct->sim, i)) {
			fail(ct, C_harness_errors, "image %" PRIu64 " would not apply", i);
			continue;
		}
		fig(ct, nested ? F_recovery_crash_images : F_crash_images, 1);
		if (!nested)
			fig(ct, i < info.subsets ? F_subset_images : F_torn_images, 1);
		uint64_t e = check_image(ct, m, !nested);
		if (i <= chosen && chosen < i + step) {
			chosen = i;
			recovery_events = e;
		}
	}
	if (nested || !n || !m->created)
		return;
	/* F11: power fails again while recovery runs on one of the images. */
	if (!recovery_events)
		return;
	pmwal_sim_apply_image(ct->sim, chosen);
	uint64_t j = point % recovery_events;
	pmwal_sim_crash_at(ct->sim, pmwal_sim_events(ct->sim) + j);
	struct pmwal_options o = log_opts(ct, 0);
	struct pmwal *w;
	if (open_timed(ct, &o, &w) == 0)
		pmwal_close(w);
	if (pmwal_sim_crashed(ct->sim))
		check_images(ct, m, point, rs, true);
	pmwal_sim_crash_at(ct->sim, UINT64_MAX);
}

static void run_exhaustive(struct ct *ct)
{
	struct model m = {0};
	uint64_t rs = ct->p.seed;

	/* A dry run counts the workload's events. */
	pmwal_sim_reset(ct->sim);
	model_init(&m, ct->p.seed, ct->p.rec_max);
	wl_run(ct, &m, true);
	uint64_t events = pmwal_sim_events(ct->sim);
	uint64_t count = ct->o->count && ct->o->count < events ? ct->o->count : events;
	uint64_t stride = events / (count ? count : 1);

	if (!stride)
		stride = 1;
	if (ct->o->point != UINT64_MAX && ct->o->point >= events) {
		fail(ct, C_harness_errors,
		     "--point %" PRIu64 " is past the workload's last event (%" PRIu64
		     " events: give 0..%" PRIu64 ")",
		     ct->o->point, events, events ? events - 1 : 0);
		free(m.r);
		return;
	}
	for (uint64_t k = 0; k < count; k++) {
		uint64_t point = ct->o->point != UINT64_MAX ? ct->o->point : k * stride;
		if (point >= events)
			break;
		set_where(ct, "point %" PRIu64 " of %" PRIu64, point, events);
		pmwal_sim_reset(ct->sim);
		pmwal_sim_crash_at(ct->sim, point);
		model_init(&m, ct->p.seed, ct->p.rec_max);
		wl_run(ct, &m, true);
		if (!pmwal_sim_crashed(ct->sim)) {
			/* Async appends let the committer group records by timing,
			 * so a run can end a few events short of the dry run's
			 * count: the power fails at its end instead. */
			pmwal_sim_crash(ct->sim);
		}
		check_images(ct, &m, point, &rs, false);
		if (ct->o->point != UINT64_MAX)
			break;
	}
	free(m.r);
}

static void run_random(struct ct *ct)
{
	struct model m = {0};
	uint64_t base = ct->p.seed;
	uint64_t rounds = ct->o->count ? ct->o->count : (ct->o->seconds ? UINT64_MAX : 200);

	for (uint64_t k = 0; k < rounds; k++) {
		if (ct->o->seconds && now_s() - ct->t0 > (double)ct->o->seconds)
			break;
		ct->p = wl_draw(base + k, ct->o->ops, ct->o->threads, ct->o->inflight);
		uint64_t rs = ct->p.seed;
		/* A medium seeded by the round: --seed S --count 1 replays round S. */
		pmwal_sim_free(ct->sim);
		ct->sim = NULL;
		if (sim_open(ct))
			break;
		/* The crash point: anywhere in the run, sized by a dry run. */
		pmwal_sim_reset(ct->sim);
		model_init(&m, ct->p.seed, ct->p.rec_max);
		set_where(ct, "round %" PRIu64 " dry run", k);
		if (ct->p.threads > 1)
			wl_run_threads(ct, &m);
		else
			wl_run(ct, &m, true);
		uint64_t events = pmwal_sim_events(ct->sim);
		uint64_t point = rnd_below(&rs, events ? events : 1);
		set_where(ct, "round %" PRIu64 " point %" PRIu64, k, point);
		pmwal_sim_reset(ct->sim);
		pmwal_sim_crash_at(ct->sim, point);
		model_init(&m, ct->p.seed, ct->p.rec_max);
		if (ct->p.threads > 1)
			wl_run_threads(ct, &m);
		else
			wl_run(ct, &m, true);
		if (!pmwal_sim_crashed(ct->sim))
			pmwal_sim_crash(ct->sim); /* threads finished early: lose power now */
		check_images(ct, &m, point, &rs, false);
	}
	free(m.r);
}

/* ---- faults: damage at rest and device faults at run time ------------------------- */

/* The clean log's layout, read through the format's own decoders (format.c
 * specifies it): which blocks are live and which LSN each begins with. */
struct layout {
	struct wal_sb sb;
	uint64_t live;	      /* live blocks: [head_seq, end_seq) */
	uint8_t *img;	      /* a copy of the clean durable image */
	uint64_t bytes;
};

static int read_layout(struct ct *ct, struct layout *L)
{
	uint64_t bytes = (2ull + ct->p.cap_blocks) * 4096;
	const uint8_t *d = pmwal_sim_durable(ct->sim);
	char why[128];

	L->bytes = bytes;
	L->img = malloc(bytes);
	memcpy(L->img, d, bytes);
	if (wal_sb_pick(L->img, &L->sb, why, sizeof(why))) {
		fail(ct, C_harness_errors, "the clean log has no valid superblock: %s", why);
		return -1;
	}
	L->live = L->sb.end_seq - L->sb.head_seq;
	return 0;
}

/* The LSN recovery must name for damage to the live block at @seq: the
 * record in progress at the block's first payload byte, or the head LSN when
 * that record was released (the head block may begin inside one). */
static uint64_t block_lsn(const struct layout *L, uint64_t seq, uint64_t *off)
{
	struct wal_block_hdr h;
	uint64_t slot = seq % L->sb.capacity_blocks;

	*off = wal_slot_offset(slot);
	wal_block_decode_hdr(L->img + *off, &h);
	uint64_t lsn = h.first_rec != WAL_NO_RECORD && h.first_rec > 0
			   ? h.first_lsn - 1 /* the block starts inside the previous record */
			   : h.first_lsn;
	return lsn > L->sb.head_lsn ? lsn : L->sb.head_lsn;
}

/* Verify and strict-open the damaged image: CORRUPT at @want_off and
 * @want_lsn, nothing written, strict open refused. */
static void expect_corrupt(struct ct *ct, struct model *m, uint64_t want_off, uint64_t want_lsn)
{
	struct pmwal_options o = log_opts(ct, 0);
	struct pmwal_report rep;
	struct pmwal *w;
	int rc = pmwal_verify(&o, &rep);

	fig(ct, F_recoveries, 1);
	if (rc) {
		/* Refusing the log outright is a detection, not a loss. */
		return;
	}
	if (rep.verdict != PMWAL_CORRUPT) {
		bool lost = rep.last_lsn < m->acked_max || rep.records == 0;
		fail(ct, lost ? C_silent_truncations : C_missed_corruptions,
		     "damage at offset %" PRIu64 " (LSN %" PRIu64 ") reads %s with records to %" PRIu64,
		     want_off, want_lsn, rep.verdict == PMWAL_CLEAN ? "CLEAN" : "TORN_TAIL",
		     rep.last_lsn);
		return;
	}
	if (rep.corrupt_offset != want_off || rep.corrupt_lsn != want_lsn)
		fail(ct, C_misplaced_corruptions,
		     "CORRUPT at offset %" PRIu64 " LSN %" PRIu64 ", damage was at %" PRIu64
		     " LSN %" PRIu64,
		     rep.corrupt_offset, rep.corrupt_lsn, want_off, want_lsn);
	rc = open_timed(ct, &o, &w);
	if (rc == 0) {
		fail(ct, C_missed_corruptions, "strict open accepted a log verify calls CORRUPT");
		pmwal_close(w);
	} else if (rc != PMWAL_ECORRUPT) {
		fail(ct, C_missed_corruptions, "strict open of a CORRUPT log: %s (not ECORRUPT)",
		     pmwal_strerror(rc));
	}
}

/* Damage that leaves every record readable (free space, one superblock copy):
 * the log opens with everything acked. */
static void expect_intact(struct ct *ct, struct model *m, const char *what)
{
	struct pmwal_options o = log_opts(ct, 0);
	struct pmwal *w;
	struct scan sc;
	int rc = open_timed(ct, &o, &w);

	if (rc) {
		fail(ct, C_false_corruption, "%s: open refused: %s", what, pmwal_strerror(rc));
		return;
	}
	scan_log(ct, m, NULL, w, &sc);
	if (sc.verdict == PMWAL_CORRUPT)
		fail(ct, C_false_corruption, "%s: verdict CORRUPT", what);
	pmwal_close(w);
}

static const int damage_kinds[] = {PMWAL_SIM_FLIP, PMWAL_SIM_ZERO, PMWAL_SIM_GARBAGE};
static const int damage_fig[] = {F_faults_flip, F_faults_zero, F_faults_garbage};

/* Damage one range of the clean image; false when it changed nothing. */
static bool damage(struct ct *ct, const struct layout *L, uint64_t off, uint64_t len, int kind)
{
	pmwal_sim_apply_image(ct->sim, 0); /* the clean log again */
	if (pmwal_sim_damage(ct->sim, off, len, kind)) {
		fail(ct, C_harness_errors, "damage at %" PRIu64 "+%" PRIu64 " refused", off, len);
		return false;
	}
	return memcmp(pmwal_sim_durable(ct->sim) + off, L->img + off, len) != 0;
}

static void run_damage(struct ct *ct, struct model *m, uint64_t *rs)
{
	struct layout L = {0};

	if (read_layout(ct, &L))
		return;
	pmwal_sim_crash(ct->sim); /* nothing pending: image 0 is the clean log */
	/* Every live block, each kind, at a drawn byte of its used bytes. */
	for (uint64_t q = L.sb.head_seq; q < L.sb.end_seq; q++) {
		uint64_t off, lsn = block_lsn(&L, q, &off);
		struct wal_block_hdr h;
		wal_block_decode_hdr(L.img + off, &h);
		uint64_t used = WAL_HDR_BYTES + (h.payload_bytes <= WAL_PAYLOAD_BYTES ? h.payload_bytes : 0);
		for (int k = 0; k < 3; k++) {
			uint64_t at = off + rnd_below(rs, used);
			uint64_t len = damage_kinds[k] == PMWAL_SIM_FLIP ? 1 : 1 + rnd_below(rs, 512);
			if (at + len > off + used)
				len = off + used - at;
			set_where(ct, "damage %s at %" PRIu64 "+%" PRIu64 " (block seq %" PRIu64 ")",
				  k == 0 ? "flip" : k == 1 ? "zero" : "garbage", at, len, q);
			if (!damage(ct, &L, at, len, damage_kinds[k]))
				continue; /* zeros over zeros */
			fig(ct, damage_fig[k], 1);
			expect_corrupt(ct, m, off, lsn);
		}
		/* F10: blocks that pass the checksum but are not this one: the
		 * same block from an earlier lap, from another log, and another
		 * live block of this log in its slot (each resealed). */
		for (int v = 0; v < 3; v++) {
			uint8_t blk[WAL_BLOCK_BYTES];
			struct wal_block_hdr bh;
			uint64_t slot = q % L.sb.capacity_blocks;
			const char *what = v == 0 ? "an earlier lap's" : v == 1 ? "another log's"
									    : "a misplaced";

			memcpy(blk, L.img + off, sizeof(blk));
			wal_block_decode_hdr(blk, &bh);
			if (v == 0) {
				if (bh.seq < L.sb.capacity_blocks)
					continue; /* no earlier lap */
				bh.seq -= L.sb.capacity_blocks;
			} else if (v == 1) {
				bh.log_id ^= 0x5a5a5a5a5a5a5a5aull;
			} else {
				if (L.live < 2)
					continue;
				uint64_t other = L.sb.head_seq + (q - L.sb.head_seq + 1) % L.live;
				memcpy(blk, L.img + wal_slot_offset(other % L.sb.capacity_blocks),
				       sizeof(blk));
				wal_block_seal(blk, slot);
				goto put;
			}
			wal_block_encode_hdr(&bh, blk);
			wal_block_seal(blk, slot);
put:
			set_where(ct, "%s block sealed at slot %" PRIu64 " (block seq %" PRIu64 ")",
				  what, slot, q);
			pmwal_sim_apply_image(ct->sim, 0);
			if (pmwal_sim_overwrite(ct->sim, off, blk, sizeof(blk))) {
				fail(ct, C_harness_errors, "overwrite at %" PRIu64 " refused", off);
				continue;
			}
			fig(ct, F_faults_sealed, 1);
			expect_corrupt(ct, m, off, lsn);
		}
	}
	/* Free and released slots: nothing there is the log's. */
	for (uint64_t q = L.sb.end_seq; q < L.sb.head_seq + L.sb.capacity_blocks; q++) {
		uint64_t off = wal_slot_offset(q % L.sb.capacity_blocks);
		set_where(ct, "damage flip in free slot %" PRIu64, q % L.sb.capacity_blocks);
		if (!damage(ct, &L, off + rnd_below(rs, 4096), 1, PMWAL_SIM_FLIP))
			continue;
		fig(ct, F_faults_free_space, 1);
		expect_intact(ct, m, "damage in a free slot");
	}
	/* Every byte of the superblock's used fields, in one copy, then both. */
	for (uint64_t b = 0; b < WAL_SB_USED_BYTES + 8; b++) {
		for (int copy = 0; copy < 3; copy++) {
			set_where(ct, "superblock byte %" PRIu64 " in %s", b,
				  copy == 2 ? "both copies" : copy ? "copy 1" : "copy 0");
			pmwal_sim_apply_image(ct->sim, 0);
			if (copy != 1)
				pmwal_sim_damage(ct->sim, b, 1, PMWAL_SIM_FLIP);
			if (copy != 0)
				pmwal_sim_damage(ct->sim, WAL_SB_BYTES + b, 1, PMWAL_SIM_FLIP);
			fig(ct, F_faults_superblock, 1);
			if (copy < 2) {
				expect_intact(ct, m, "one superblock copy damaged");
				continue;
			}
			struct pmwal_options o = log_opts(ct, 0);
			struct pmwal *w;
			int rc = open_timed(ct, &o, &w);
			if (rc == 0) {
				struct scan sc;
				scan_log(ct, m, NULL, w, &sc);
				fail(ct, C_missed_corruptions,
				     "both superblock copies damaged at byte %" PRIu64 " and the log opened",
				     b);
				pmwal_close(w);
			}
		}
	}
	free(L.img);
}

/* Device faults while the workload runs: a failed write or flush (the log
 * fails stop, the medium lives), a lost write, a misdirected write; then a
 * read error under recovery. */
static void run_device_faults(struct ct *ct, struct model *m, uint64_t events, uint64_t *rs)
{
	uint64_t per_kind = ct->o->count ? ct->o->count : 60;

	for (int kind = PMWAL_SIM_FAIL; kind <= PMWAL_SIM_READ_ERROR; kind++) {
		int f = kind == PMWAL_SIM_FAIL	   ? F_faults_fail
			: kind == PMWAL_SIM_LOST   ? F_faults_lost
			: kind == PMWAL_SIM_MISDIRECT ? F_faults_misdirect
						      : F_faults_read_error;
		for (uint64_t k = 0; k < per_kind; k++) {
			struct pmwal_sim_fault fl = {.kind = kind};
			uint64_t ev = rnd_below(rs, events);

			pmwal_sim_reset(ct->sim);
			model_init(m, ct->p.seed, ct->p.rec_max);
			if (kind == PMWAL_SIM_READ_ERROR) {
				/* Build the log, then make one live block unreadable. */
				ct->fault_mode = false;
				wl_run(ct, m, true);
				if (!wl_fill(ct, m))
					return;
				struct layout L = {0};
				if (read_layout(ct, &L))
					return;
				uint64_t q = L.sb.head_seq + rnd_below(rs, L.live ? L.live : 1);
				fl.off = wal_slot_offset(q % L.sb.capacity_blocks) + rnd_below(rs, 4096);
				fl.len = 1;
				free(L.img);
				set_where(ct, "read error at %" PRIu64 " (block seq %" PRIu64 ")",
					  fl.off, q);
				pmwal_sim_fault(ct->sim, &fl);
				fig(ct, f, 1);
				ct->fault_mode = true;
				struct pmwal_options o = log_opts(ct, 0);
				struct pmwal *w;
				struct pmwal_report rep;
				int rc = pmwal_verify(&o, &rep);
				if (rc == 0 && rep.verdict != PMWAL_CORRUPT && L.live &&
				    rep.last_lsn < m->acked_max)
					fail(ct, C_silent_truncations,
					     "a read error at %" PRIu64 " reads %d with records to %" PRIu64,
					     fl.off, rep.verdict, rep.last_lsn);
				if (open_timed(ct, &o, &w) == 0) {
					struct scan sc;
					scan_log(ct, m, NULL, w, &sc);
					pmwal_close(w);
				}
				ct->fault_mode = false;
				continue;
			}
			fl.event = ev;
			fl.err = rnd_below(rs, 2) ? -EIO : -ENOSPC;
			fl.off = wal_slot_offset(rnd_below(rs, ct->p.cap_blocks));
			set_where(ct, "%s at event %" PRIu64,
				  kind == PMWAL_SIM_FAIL ? "failed I/O" : kind == PMWAL_SIM_LOST ? "lost write" : "misdirected write",
				  ev);
			pmwal_sim_fault(ct->sim, &fl);
			fig(ct, f, 1);
			ct->fault_mode = kind != PMWAL_SIM_FAIL;
			ct->fault_armed = true;
			wl_run(ct, m, true);
			ct->fault_armed = false;
			/* One that the workload never reached must not fire in the check. */
			pmwal_sim_clear_faults(ct->sim);
			if (kind == PMWAL_SIM_FAIL) {
				check_image(ct, m, true);
			} else {
				/* An acked write that never landed, or landed elsewhere: the
				 * log may be refused or CORRUPT, but it never returns fewer
				 * acked records as if nothing happened, nor a stray copy. */
				struct pmwal_options o = log_opts(ct, 0);
				struct pmwal_report rep;
				struct pmwal *w;
				int vrc = pmwal_verify(&o, &rep);
				if (ct->o->verbose) {
					struct wal_sb a, b;
					const uint8_t *d = pmwal_sim_durable(ct->sim);
					int ra = wal_sb_decode(d, &a), rb = wal_sb_decode(d + 4096, &b);
					fprintf(stderr, "  sb0 %d seq %" PRIu64 " head %" PRIu64 "/%" PRIu64 " end %" PRIu64 "/%" PRIu64 " fl %u; sb1 %d seq %" PRIu64 " head %" PRIu64 "/%" PRIu64 " end %" PRIu64 "/%" PRIu64 " fl %u; events %" PRIu64 "\n",
						ra, a.sb_seq, a.head_seq, a.head_lsn, a.end_seq, a.end_lsn, a.flags, rb, b.sb_seq, b.head_seq, b.head_lsn, b.end_seq, b.end_lsn, b.flags, pmwal_sim_events(ct->sim));
				}
				if (ct->o->verbose)
					fprintf(stderr, "  %s: verify %d verdict %d records %" PRIu64
						"..%" PRIu64 " hint %" PRIu64 ": %s\n", ct->where, vrc,
						rep.verdict, rep.first_lsn, rep.last_lsn,
						rep.durable_hint, rep.detail);
				if (vrc == 0 && rep.verdict != PMWAL_CORRUPT &&
				    open_timed(ct, &o, &w) == 0) {
					struct scan sc;
					scan_log(ct, m, NULL, w, &sc);
					pmwal_close(w);
				}
			}
			ct->fault_mode = false;
		}
	}
}

static void run_faults(struct ct *ct)
{
	struct model m = {0};
	uint64_t rs = ct->p.seed ^ 0x6661756c74ull;

	ct->p.cap_blocks = 24; /* several laps, a live region that wraps */
	ct->p.policy = PMWAL_COMMIT_DURABLE;
	pmwal_sim_reset(ct->sim);
	model_init(&m, ct->p.seed, ct->p.rec_max);
	set_where(ct, "building the log");
	wl_run(ct, &m, true);
	uint64_t events = pmwal_sim_events(ct->sim);
	if (!wl_fill(ct, &m)) {
		free(m.r);
		return;
	}
	ct->fault_mode = true;
	run_damage(ct, &m, &rs);
	ct->fault_mode = false;
	run_device_faults(ct, &m, events, &rs);
	free(m.r);
}

/* ---- kill: real writers on real files, SIGKILLed ---------------------------------- */

/* What the writer child tells the parent, through a pipe, as it happens. */
enum {
	MSG_OPENED = 1,
	MSG_ACKED,
	MSG_RELEASE_REQ,
	MSG_RELEASED,
	MSG_FENCED, /* takeover: an append or release was refused, PMWAL_EFENCED */
	MSG_BUSY,   /* takeover: breaking the lock waits for a stopped writer */
	MSG_CLOSED, /* takeover: the last writer closed (value: its rc) */
	MSG_FAILED, /* takeover: an open or call failed (value: -rc) */
};
struct msg {
	uint32_t type;
	uint32_t pad;
	uint64_t value;
};

static void put_msg(int fd, uint32_t type, uint64_t value)
{
	struct msg x = {type, 0, value};
	if (write(fd, &x, sizeof(x)) != sizeof(x))
		_exit(3);
}

/* The writer: open (recovery), append until killed. Records of round @gen. */
static void kill_child(struct ct *ct, int fd, uint32_t gen)
{
	struct pmwal_options o = log_opts(ct, 0);
	struct pmwal *w;
	struct pmwal_info info;
	uint64_t r = ct->p.seed ^ mix64(gen);

	o.commit_policy = PMWAL_COMMIT_DURABLE;
	if (pmwal_open(&o, &w))
		_exit(2);
	pmwal_stat(w, &info);
	put_msg(fd, MSG_OPENED, info.next_lsn);
	uint64_t next = info.next_lsn, head = info.head_lsn;
	for (;;) {
		uint64_t key = key_single(gen, next), lsn;
		uint32_t len = rec_len(ct->p.seed, key, ct->p.rec_max);
		rec_fill(ct->buf, len, ct->p.seed, key);
		int rc = pmwal_append(w, ct->buf, len, &lsn);
		if (rc == 0) {
			put_msg(fd, MSG_ACKED, lsn);
			next = lsn + 1;
		}
		if (rc == PMWAL_EFULL || (rc == 0 && rnd_below(&r, 50) == 0)) {
			uint64_t to = next - rnd_below(&r, 4);
			if (to < head)
				to = head;
			put_msg(fd, MSG_RELEASE_REQ, to);
			if (pmwal_release(w, to))
				_exit(4);
			put_msg(fd, MSG_RELEASED, to);
			head = to;
			continue;
		}
		if (rc)
			_exit(5);
	}
}

/*
 * Wait until the killed writer's lock on @path is free, as a standby taking
 * over would (pmwal_open waits the same way): the kernel finishes the writes
 * it had in flight before it lets go of its file. Reading the log before
 * then could see them land between two reads.
 */
static bool wait_lock_free(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1};
	bool ok = false;

	if (fd < 0)
		return false;
	for (int i = 0; i < 10000 && !ok; i++) {
		ok = fcntl(fd, F_OFD_SETLK, &fl) == 0;
		if (!ok)
			usleep(1000);
	}
	close(fd); /* the lock goes with it */
	return ok;
}

static int kill_target(struct ct *ct, char *path, size_t len)
{
	const char *kind = ct->md->kill;
	const char *dir = !strcmp(kind, "file") ? ct->o->dir : "/dev/shm";

	snprintf(path, len, "%s/pmwal-crashtest-%d-%s.log", dir, (int)getpid(), kind);
	if (!strcmp(kind, "file"))
		snprintf(ct->target, sizeof(ct->target), "%s", path);
	else
		snprintf(ct->target, sizeof(ct->target), "%s:%s", kind, path);
	return 0;
}

/*
 * Frees the kill lane's log name @path for a fresh log (created with
 * PMWAL_OPEN_EXCL next): a log a killed campaign left is removed; a link, or
 * another user's file in a directory others share, is refused and left as
 * it is, as is a directory another user controls (bench/outfile.h). 0, or
 * -1 with @err.
 */
static int kill_name_free(struct ct *ct, const char *path, char *err, size_t errlen)
{
	const char *opt = !strcmp(ct->md->kill, "file") ? "--dir" : "crashtest";
	const char *slash = strrchr(path, '/');
	char dir[256];

	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	int dfd = out_dir_open(opt, dir, false, err, errlen);
	if (dfd < 0)
		return -1;
	int rc = out_name_check(opt, dfd, dir, slash + 1, err, errlen);
	if (!rc && unlinkat(dfd, slash + 1, 0) && errno != ENOENT) {
		snprintf(err, errlen, "%s: cannot remove it: %s", path, strerror(errno));
		rc = -1;
	}
	close(dfd);
	return rc;
}

static void run_kill(struct ct *ct)
{
	char path[256];
	struct model m = {0};
	uint64_t rs = ct->p.seed ^ 0x6b696c6cull;
	uint64_t rounds = ct->o->count ? ct->o->count : (ct->o->seconds ? UINT64_MAX : 40);
	struct pmwal *w;
	char err[256] = "";

	if (!ct->md->kill) {
		fprintf(stderr, "crashtest: the kill lane has no real %s target; skipped\n",
			ct->md->name);
		return;
	}
	kill_target(ct, path, sizeof(path));
	ct->p.cap_blocks = 64;
	ct->p.policy = PMWAL_COMMIT_DURABLE;
	struct pmwal_options o = log_opts(ct, PMWAL_OPEN_CREATE | PMWAL_OPEN_EXCL);
	o.errmsg_buf = err;
	o.errmsg_len = sizeof(err);
	if (kill_name_free(ct, path, err, sizeof(err))) {
		fprintf(stderr, "crashtest: the kill lane's log: %s\n", err);
		fail(ct, C_harness_errors, "kill lane log not created");
		return;
	}
	int rc = pmwal_open(&o, &w);
	if (rc) {
		if (rc != -EEXIST)
			unlink(path); /* what the failed create made */
		fprintf(stderr,
			"crashtest: cannot create a log at %s for the kill lane: %s\n  %s\n"
			"  (--dir DIR: a directory with room for a 264 KiB log, on a filesystem "
			"with O_DIRECT such as ext4 or xfs)\n",
			ct->target, pmwal_strerror(rc), err);
		fail(ct, C_harness_errors, "kill lane log not created");
		return;
	}
	pmwal_close(w);
	model_init(&m, ct->p.seed, ct->p.rec_max);
	m.created = true;
	m.dflt = true;
	for (uint64_t k = 0; k < rounds; k++) {
		if (ct->o->seconds && now_s() - ct->t0 > (double)ct->o->seconds)
			break;
		uint32_t gen = (uint32_t)(k + 1) & 0x7fff;
		int pfd[2];
		if (pipe(pfd)) {
			fail(ct, C_harness_errors, "pipe: %s", strerror(errno));
			break;
		}
		set_where(ct, "kill round %" PRIu64, k);
		pid_t pid = fork();
		if (pid == 0) {
			/* Never outlive the campaign (an interrupted run). */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(pfd[0]);
			kill_child(ct, pfd[1], gen);
			_exit(0);
		}
		close(pfd[1]);
		/* While it lives, a second writer must be refused (I9). */
		usleep(1000 + (useconds_t)rnd_below(&rs, 4000));
		struct msg x;
		ssize_t got = read(pfd[0], &x, sizeof(x)); /* wait until it opened */
		if (got == sizeof(x) && x.type == MSG_OPENED && kill(pid, 0) == 0) {
			struct pmwal_options o2 = log_opts(ct, 0);
			struct pmwal *w2;
			fig(ct, F_fence_probes, 1);
			if (pmwal_open(&o2, &w2) == 0) {
				fail(ct, C_fencing_violations,
				     "a second writer opened %s while pid %d had it open", ct->target,
				     (int)pid);
				pmwal_close(w2);
			}
		}
		usleep((useconds_t)rnd_below(&rs, 30000));
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		fig(ct, F_kills, 1);
		if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL))
			fail(ct, C_harness_errors, "writer exited with status %d before the kill",
			     WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		if (!wait_lock_free(path))
			fail(ct, C_hangs, "the killed writer's lock on %s was not free after 10 s",
			     path);
		/* What it acknowledged before dying. */
		uint64_t opened = 0;
		if (got == sizeof(x)) {
			do {
				if (x.type == MSG_OPENED) {
					opened = x.value;
					model_forget_from(&m, x.value);
					model_ack_upto(&m, x.value - 1);
					m.dflt_from = x.value;
					m.dflt_gen = gen;
				} else if (x.type == MSG_ACKED) {
					model_submit(&m, x.value, key_single(gen, x.value));
					model_ack(&m, x.value);
					fig(ct, F_records_appended, 1);
				} else if (x.type == MSG_RELEASE_REQ) {
					if (x.value > m.head_hi)
						m.head_hi = x.value;
				} else if (x.type == MSG_RELEASED) {
					if (x.value > m.head_lo)
						m.head_lo = x.value;
				}
			} while (read(pfd[0], &x, sizeof(x)) == sizeof(x));
		}
		close(pfd[0]);
		(void)opened;
		check_image(ct, &m, false);
		/* Recovery in check_image fixed what the log holds from here on. */
		struct pmwal_options o3 = log_opts(ct, PMWAL_OPEN_READONLY);
		struct pmwal *w3;
		if (pmwal_open(&o3, &w3) == 0) {
			struct pmwal_info info;
			pmwal_stat(w3, &info);
			for (uint64_t l = info.head_lsn; l < info.next_lsn; l++)
				if (l >= m.n || m.r[l].st == ST_NONE)
					model_submit(&m, l, key_single(gen, l));
			model_forget_from(&m, info.next_lsn);
			model_ack_upto(&m, info.next_lsn - 1);
			m.dflt_from = info.next_lsn;
			pmwal_close(w3);
		}
	}
	unlink(path);
	free(m.r);
}

/* ---- takeover: followers, standbys and a fenced writer, real processes ----------- */

/*
 * One log on a real target (a file through io_uring, emulated pmem, a fake
 * PMR), TK_FOLLOWERS follower processes reading it live from LSN 1 to the
 * end, and a chain of writers: each round either SIGKILLs the writer while a
 * standby waits for the lock (PMWAL_OPEN_WAIT_LOCK), or SIGSTOPs it while
 * another breaks the lock (PMWAL_OPEN_BREAK_LOCK), then resumes it: it must
 * be fenced. At the end every follower must have delivered every record of
 * the log exactly once, in order, and every acknowledged one with the bytes
 * of the writer that acknowledged it. Writers release only what every
 * follower has read, so the ring wraps under the followers.
 */
#define TK_FOLLOWERS 2
#define TK_LSNS	     (1u << 18) /* LSNs one campaign tracks */
#define TK_REC_MAX   1500u

struct tk_follower {
	uint64_t delivered, last, dups, gaps, bad, before_ack;
	int err_rc;
	char err[240];
	uint32_t lag_us[TK_LSNS]; /* by delivery */
};

struct tk_shared {
	uint64_t ack_ns[TK_LSNS]; /* by LSN: when its writer's append returned */
	uint16_t gen_of[TK_FOLLOWERS][TK_LSNS]; /* by LSN: the round a follower saw */
	uint64_t pos[TK_FOLLOWERS];		/* next LSN each follower wants */
	int stop_writer;			/* the last writer closes */
	int stop;				/* followers stop at final_lsn */
	uint64_t final_lsn;
	struct tk_follower f[TK_FOLLOWERS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A record: its key (round << 48 | LSN), then bytes drawn from it. */
static uint32_t tk_len(struct ct *ct, uint64_t key)
{
	return 8 + rec_len(ct->p.seed, key | KEY_SMALL, TK_REC_MAX - 8);
}

static void tk_fill(struct ct *ct, uint8_t *p, uint64_t key)
{
	uint32_t len = tk_len(ct, key);

	memcpy(p, &key, 8);
	rec_fill(p + 8, len - 8, ct->p.seed, key);
}

/* The writer of round @gen: opens with @flags, appends until killed, fenced
 * or told to close. */
static void tk_writer(struct ct *ct, struct tk_shared *tk, int fd, uint32_t gen, uint32_t flags)
{
	struct pmwal_options o = log_opts(ct, flags);
	char err[512] = "";
	struct pmwal *w = NULL;
	struct pmwal_info info;
	uint64_t r = ct->p.seed ^ mix64(gen ^ 0x74616b65ull);
	int rc;

	o.commit_policy = PMWAL_COMMIT_DURABLE;
	o.errmsg_buf = err;
	o.errmsg_len = sizeof(err);
	while ((rc = pmwal_open(&o, &w)) == -EBUSY && (flags & PMWAL_OPEN_BREAK_LOCK) &&
	       strstr(err, "in the middle of a write")) {
		put_msg(fd, MSG_BUSY, 0); /* a stopped writer mid-write: it is continued */
		usleep(2000);
	}
	/* Another breaker was first; or, the old writer gone, took the lock
	 * and the log while this one recovered it: refused either way. */
	if ((rc == -EBUSY || rc == PMWAL_EFENCED) && (flags & PMWAL_OPEN_BREAK_LOCK)) {
		put_msg(fd, MSG_FAILED, EBUSY);
		_exit(0);
	}
	if (rc) {
		fprintf(stderr, "crashtest: takeover writer %u: open: %s\n", gen, err);
		put_msg(fd, MSG_FAILED, (uint64_t)-rc);
		_exit(2);
	}
	pmwal_stat(w, &info);
	put_msg(fd, MSG_OPENED, info.next_lsn);
	uint64_t head = info.head_lsn;

	for (uint64_t n = 0;; n++) {
		if (__atomic_load_n(&tk->stop_writer, __ATOMIC_ACQUIRE)) {
			rc = pmwal_close(w);
			put_msg(fd, MSG_CLOSED, (uint64_t)-rc);
			_exit(0);
		}
		/* Release what every follower has read, now and then or when full. */
		uint64_t low = UINT64_MAX;

		for (int i = 0; i < TK_FOLLOWERS; i++) {
			uint64_t p = __atomic_load_n(&tk->pos[i], __ATOMIC_ACQUIRE);

			low = p < low ? p : low;
		}
		pmwal_stat(w, &info);
		if (low > info.durable_lsn + 1)
			low = info.durable_lsn + 1;
		if (low > head && (n % 64 == 0 || info.used_blocks * 4 > info.capacity_blocks * 3)) {
			rc = pmwal_release(w, low);
			if (rc == PMWAL_EFENCED) {
				put_msg(fd, MSG_FENCED, 0);
				_exit(0);
			}
			if (rc) {
				put_msg(fd, MSG_FAILED, (uint64_t)-rc);
				_exit(4);
			}
			head = low;
		}
		if (info.next_lsn >= TK_LSNS - 64) { /* tracked LSNs used up: idle */
			usleep(1000);
			continue;
		}
		uint64_t key = key_single(gen, info.next_lsn), lsn;

		tk_fill(ct, ct->buf, key);
		rc = pmwal_append(w, ct->buf, tk_len(ct, key), &lsn);
		if (rc == 0) {
			if (lsn != info.next_lsn) {
				put_msg(fd, MSG_FAILED, 1000); /* single appender: LSN foreseen */
				_exit(5);
			}
			__atomic_store_n(&tk->ack_ns[lsn], mono_ns(), __ATOMIC_RELEASE);
			put_msg(fd, MSG_ACKED, lsn);
		} else if (rc == PMWAL_EFENCED) {
			put_msg(fd, MSG_FENCED, 0);
			_exit(0);
		} else if (rc == PMWAL_EFULL) {
			usleep(500); /* the followers are behind: they free it */
		} else {
			put_msg(fd, MSG_FAILED, (uint64_t)-rc);
			_exit(5);
		}
		if (rnd_below(&r, 8) == 0)
			usleep((useconds_t)rnd_below(&r, 300));
	}
}

static void tk_follower(struct ct *ct, struct tk_shared *tk, int idx)
{
	struct tk_follower *f = &tk->f[idx];
	struct pmwal_options o = log_opts(ct, PMWAL_OPEN_READONLY);
	struct pmwal *w;
	struct pmwal_iter *it;
	uint64_t lsn, stop_t = 0;
	const void *data;
	size_t len;
	int rc;

	o.capacity_bytes = 0;
	if ((rc = pmwal_open(&o, &w)) || (rc = pmwal_iter_open(w, 1, &it))) {
		f->err_rc = rc;
		snprintf(f->err, sizeof(f->err), "open: %s", pmwal_strerror(rc));
		_exit(2);
	}
	for (;;) {
		rc = pmwal_iter_next(it, &lsn, &data, &len);
		if (rc == 1) {
			uint64_t t = mono_ns(), key;

			if (lsn <= f->last) {
				f->dups++;
				continue;
			}
			if (lsn != f->last + 1)
				f->gaps += lsn - f->last - 1;
			f->last = lsn;
			__atomic_store_n(&tk->pos[idx], lsn + 1, __ATOMIC_RELEASE);
			memcpy(&key, data, len >= 8 ? 8 : 0);
			if (len < 8 || (key & ((1ull << 48) - 1)) != lsn || len != tk_len(ct, key) ||
			    (tk_fill(ct, ct->buf, key), memcmp(ct->buf, data, len))) {
				f->bad++;
				continue;
			}
			if (lsn < TK_LSNS)
				tk->gen_of[idx][lsn] = (uint16_t)(key >> 48);
			uint64_t acked = lsn < TK_LSNS ? __atomic_load_n(&tk->ack_ns[lsn], __ATOMIC_ACQUIRE) : 0;

			if (f->delivered < TK_LSNS) {
				/* Published durable before its appender returned: lag 0. */
				if (!acked || acked > t)
					f->before_ack++;
				f->lag_us[f->delivered] = acked && acked < t ? (uint32_t)((t - acked) / 1000) : 0;
			}
			f->delivered++;
			continue;
		}
		if (rc < 0) {
			f->err_rc = rc;
			snprintf(f->err, sizeof(f->err), "after LSN %llu: %s: %s",
				 (unsigned long long)f->last, pmwal_strerror(rc), pmwal_errmsg(w));
			break;
		}
		if (__atomic_load_n(&tk->stop, __ATOMIC_ACQUIRE)) {
			if (f->last >= tk->final_lsn)
				break;
			if (!stop_t)
				stop_t = mono_ns();
			else if (mono_ns() - stop_t > 20000000000ull) {
				f->err_rc = -ETIMEDOUT;
				snprintf(f->err, sizeof(f->err),
					 "stuck at LSN %llu for 20 s, the log ends at %llu",
					 (unsigned long long)f->last,
					 (unsigned long long)tk->final_lsn);
				break;
			}
		}
		(void)pmwal_iter_wait(it, 100);
	}
	pmwal_iter_close(it);
	pmwal_close(w);
	_exit(0);
}

struct tk_proc {
	pid_t pid;
	int fd; /* its messages */
	uint32_t gen;
};

static bool tk_spawn_writer(struct ct *ct, struct tk_shared *tk, struct tk_proc *p, uint32_t gen,
			    uint32_t flags)
{
	int pfd[2];

	if (pipe(pfd)) {
		fail(ct, C_harness_errors, "pipe: %s", strerror(errno));
		return false;
	}
	(void)fcntl(pfd[1], F_SETPIPE_SZ, 1 << 20);
	p->gen = gen;
	p->pid = fork();
	if (p->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[0]);
		tk_writer(ct, tk, pfd[1], gen, flags);
		_exit(0);
	}
	close(pfd[1]);
	p->fd = pfd[0];
	return p->pid > 0;
}

/* The next message of @p within @ms, false if none (or it exited). */
static bool tk_msg(struct tk_proc *p, struct msg *x, int ms)
{
	struct pollfd pf = {.fd = p->fd, .events = POLLIN};

	if (poll(&pf, 1, ms) <= 0)
		return false;
	return read(p->fd, x, sizeof(*x)) == sizeof(*x);
}

/* Reads @p's acknowledgements into @acked until its pipe ends (it exited). */
static void tk_drain(struct ct *ct, struct tk_proc *p, uint16_t *acked, uint64_t *acked_max,
		     int *fenced)
{
	struct msg x;

	while (read(p->fd, &x, sizeof(x)) == sizeof(x)) {
		if (x.type == MSG_ACKED && x.value < TK_LSNS) {
			if (acked[x.value])
				fail(ct, C_lsn_reuse, "LSN %llu acknowledged by round %u and round %u",
				     (unsigned long long)x.value, acked[x.value], p->gen);
			acked[x.value] = (uint16_t)p->gen;
			if (x.value > *acked_max)
				*acked_max = x.value;
			fig(ct, F_records_appended, 1);
		} else if (x.type == MSG_FENCED && fenced) {
			*fenced = 1;
		} else if (x.type == MSG_FAILED) {
			fail(ct, C_harness_errors, "writer of round %u failed: %s", p->gen,
			     pmwal_strerror(-(int)x.value));
		}
	}
	close(p->fd);
	p->fd = -1;
}

/* The OPENED message of a new writer: the LSN it continues at. With
 * @refused, a breaker's -EBUSY (another was first) sets it instead. */
static bool tk_opened(struct ct *ct, struct tk_proc *p, uint64_t acked_max, pid_t stopped,
		      bool *refused)
{
	struct msg x;
	uint64_t t0 = mono_ns();

	while (mono_ns() - t0 < 30000000000ull) {
		if (!tk_msg(p, &x, 100))
			continue;
		if (x.type == MSG_BUSY) {
			fig(ct, F_fence_waits, 1);
			if (stopped > 0)
				kill(stopped, SIGCONT); /* it was stopped mid-write */
			continue;
		}
		if (x.type == MSG_FAILED && x.value == EBUSY && refused) {
			*refused = true;
			return false;
		}
		if (x.type != MSG_OPENED) {
			fail(ct, C_harness_errors, "writer of round %u did not open: %s", p->gen,
			     x.type == MSG_FAILED ? pmwal_strerror(-(int)x.value) : "?");
			return false;
		}
		if (x.value <= acked_max)
			fail(ct, C_lsn_reuse,
			     "round %u continues at LSN %llu, but LSN %llu was acknowledged",
			     p->gen, (unsigned long long)x.value, (unsigned long long)acked_max);
		return true;
	}
	fail(ct, C_hangs, "writer of round %u did not open within 30 s", p->gen);
	return false;
}

static uint64_t pct(uint32_t *v, uint64_t n, double q)
{
	if (!n)
		return 0;
	uint64_t i = (uint64_t)(q * (double)(n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void run_takeover(struct ct *ct)
{
	char path[256];
	uint64_t rs = ct->p.seed ^ 0x74616b656f766572ull;
	uint64_t rounds = ct->o->count ? ct->o->count : (ct->o->seconds ? UINT64_MAX : 20);
	struct tk_shared *tk = mmap(NULL, sizeof(*tk), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint16_t *acked = calloc(TK_LSNS, sizeof(*acked));
	pid_t fpid[TK_FOLLOWERS] = {0};
	struct pmwal *w;
	char err[256] = "";
	uint64_t acked_max = 0;
	int rc;

	if (!ct->md->kill) {
		fprintf(stderr, "crashtest: the takeover lane has no real %s target; skipped\n",
			ct->md->name);
		return;
	}
	if (tk == MAP_FAILED || !acked) {
		fail(ct, C_harness_errors, "no memory for the takeover lane");
		return;
	}
	kill_target(ct, path, sizeof(path));
	ct->p.cap_blocks = 256;
	ct->p.rec_max = TK_REC_MAX;
	ct->p.policy = PMWAL_COMMIT_DURABLE;
	struct pmwal_options o = log_opts(ct, PMWAL_OPEN_CREATE | PMWAL_OPEN_EXCL);

	o.errmsg_buf = err;
	o.errmsg_len = sizeof(err);
	if (kill_name_free(ct, path, err, sizeof(err))) {
		fprintf(stderr, "crashtest: the takeover lane's log: %s\n", err);
		fail(ct, C_harness_errors, "takeover lane log not created");
		goto out;
	}
	rc = pmwal_open(&o, &w);
	if (rc) {
		if (rc != -EEXIST)
			unlink(path);
		fprintf(stderr, "crashtest: cannot create a log at %s for the takeover lane: %s\n  %s\n",
			ct->target, pmwal_strerror(rc), err);
		fail(ct, C_harness_errors, "takeover lane log not created");
		goto out;
	}
	pmwal_close(w);
	for (int i = 0; i < TK_FOLLOWERS; i++) {
		tk->pos[i] = 1;
		fpid[i] = fork();
		if (fpid[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			tk_follower(ct, tk, i);
		}
	}
	fig(ct, F_followers, TK_FOLLOWERS);
	struct tk_proc cur = {0}, next = {0};
	uint32_t gen = 1;

	if (!tk_spawn_writer(ct, tk, &cur, gen, 0) || !tk_opened(ct, &cur, 0, 0, NULL))
		goto stop;
	for (uint64_t k = 0; k < rounds; k++) {
		if (ct->o->seconds && now_s() - ct->t0 > (double)ct->o->seconds)
			break;
		bool fence = rnd_below(&rs, 3) == 0;
		int fenced = 0;

		set_where(ct, "takeover round %" PRIu64 " (%s)", k, fence ? "fence" : "kill");
		gen = gen % 0x7fff + 1;
		if (!fence) {
			/* A standby waits on the lock; the writer dies. */
			if (!tk_spawn_writer(ct, tk, &next, gen, PMWAL_OPEN_WAIT_LOCK))
				break;
			usleep(2000 + (useconds_t)rnd_below(&rs, 40000));
			kill(cur.pid, SIGKILL);
			waitpid(cur.pid, NULL, 0);
			fig(ct, F_kills, 1);
			tk_drain(ct, &cur, acked, &acked_max, NULL);
			if (!tk_opened(ct, &next, acked_max, 0, NULL))
				break;
		} else {
			/* The writer stops; two others break its lock at once: one
			 * takes the log, the other is refused; the writer resumes
			 * fenced. */
			struct tk_proc rival = {0};
			bool lost[2] = {false, false};

			usleep(2000 + (useconds_t)rnd_below(&rs, 40000));
			kill(cur.pid, SIGSTOP);
			fig(ct, F_fence_rounds, 1);
			if (!tk_spawn_writer(ct, tk, &next, gen, PMWAL_OPEN_BREAK_LOCK))
				break;
			uint32_t rgen = gen = gen % 0x7fff + 1;

			if (!tk_spawn_writer(ct, tk, &rival, rgen, PMWAL_OPEN_BREAK_LOCK))
				break;
			bool ok = tk_opened(ct, &next, 0, cur.pid, &lost[0]);
			bool rok = tk_opened(ct, &rival, 0, cur.pid, &lost[1]);

			if (ok && rok) {
				/* Legitimate only one after the other: the old writer,
				 * continued (it was stopped mid-write) and fenced, exited
				 * and let go of its lock, which the slower breaker then
				 * took, fencing the faster one, which must stop. */
				pid_t gone = 0;
				int fenced2 = 0;

				for (uint64_t t0 = mono_ns(); !gone && mono_ns() - t0 < 10000000000ull;) {
					kill(cur.pid, SIGCONT);
					if (waitpid(next.pid, NULL, WNOHANG) == next.pid)
						gone = next.pid;
					else if (waitpid(rival.pid, NULL, WNOHANG) == rival.pid)
						gone = rival.pid;
					else
						usleep(1000);
				}
				if (gone == next.pid) { /* the rival goes on */
					struct tk_proc t = next;

					next = rival;
					rival = t;
				}
				if (gone)
					tk_drain(ct, &rival, acked, &acked_max, &fenced2);
				if (!gone || !fenced2)
					fail(ct, C_fencing_violations,
					     "two breakers (rounds %u and %u) both took the log and "
					     "neither was fenced", next.gen, rival.gen);
				rok = false;
			}
			if (!ok && !rok && lost[0] && lost[1])
				fail(ct, C_harness_errors, "both breakers were refused");
			if (rok && !ok) { /* the rival won: it goes on as the writer */
				struct tk_proc t = next;

				next = rival;
				rival = t;
				ok = true;
			}
			/* The loser exits at once; whatever it says is drained. */
			if (rival.fd >= 0) {
				waitpid(rival.pid, NULL, 0);
				tk_drain(ct, &rival, acked, &acked_max, NULL);
			}

			kill(cur.pid, SIGCONT);
			int st = 0;
			uint64_t t0 = mono_ns();

			while (waitpid(cur.pid, &st, WNOHANG) == 0) {
				if (mono_ns() - t0 > 10000000000ull) {
					fail(ct, C_fencing_violations,
					     "round %u's writer, its lock broken, still appends "
					     "10 s later (not fenced)", cur.gen);
					kill(cur.pid, SIGKILL);
					waitpid(cur.pid, &st, 0);
					break;
				}
				usleep(1000);
			}
			tk_drain(ct, &cur, acked, &acked_max, &fenced);
			if (!fenced && ok)
				fail(ct, C_fencing_violations,
				     "round %u's writer was taken over but never told PMWAL_EFENCED",
				     cur.gen);
			if (!ok)
				break;
			/* Its own acks since the claim would reuse LSNs: tk_drain
			 * counts them (lsn_reuse); the follower check counts any of
			 * its bytes that landed (records_lost). The new writer takes
			 * the lock once the old one is gone; until then a standby
			 * would take it first. */
			long holder = 0;

			for (int i = 0; i < 2000 && holder != next.pid; i++) {
				if (pmwal_writer_pid(ct->target, &holder))
					break;
				usleep(1000);
			}
			if (holder != next.pid)
				fail(ct, C_fencing_violations,
				     "round %u broke the lock but holds none after its old "
				     "holder exited (holder: %ld)", gen, holder);
		}
		fig(ct, F_takeovers, 1);
		cur = next;
		next.fd = -1;
	}
	/* The last writer closes cleanly; the followers read to its end. */
	__atomic_store_n(&tk->stop_writer, 1, __ATOMIC_RELEASE);
	{
		int st;
		uint64_t t0 = mono_ns();

		while (waitpid(cur.pid, &st, WNOHANG) == 0) {
			if (mono_ns() - t0 > 30000000000ull) {
				fail(ct, C_hangs, "the last writer did not close within 30 s");
				kill(cur.pid, SIGKILL);
				waitpid(cur.pid, &st, 0);
				break;
			}
			usleep(1000);
		}
		tk_drain(ct, &cur, acked, &acked_max, NULL);
	}
stop:;
	struct pmwal_options ro = log_opts(ct, PMWAL_OPEN_READONLY);
	struct pmwal_info info = {0};

	ro.capacity_bytes = 0;
	if (pmwal_open(&ro, &w) == 0) {
		pmwal_stat(w, &info);
		pmwal_close(w);
	}
	tk->final_lsn = info.next_lsn ? info.next_lsn - 1 : 0;
	__atomic_store_n(&tk->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < TK_FOLLOWERS; i++) {
		int st;

		if (fpid[i] > 0)
			waitpid(fpid[i], &st, 0);
		if (fpid[i] > 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
			fail(ct, C_follower_errors, "follower %d died (status %d)", i, st);
	}
	if (acked_max > tk->final_lsn)
		fail(ct, C_records_lost, "LSN %llu was acknowledged; the log ends at %llu",
		     (unsigned long long)acked_max, (unsigned long long)tk->final_lsn);
	uint32_t *lags = NULL;
	uint64_t nlags = 0;

	for (int i = 0; i < TK_FOLLOWERS; i++) {
		struct tk_follower *f = &tk->f[i];

		if (f->err_rc)
			fail(ct, C_follower_errors, "follower %d: %s", i, f->err);
		if (f->dups)
			fail(ct, C_duplicates, "follower %d delivered %llu records twice", i,
			     (unsigned long long)f->dups);
		if (f->gaps)
			fail(ct, C_holes, "follower %d skipped %llu LSNs", i,
			     (unsigned long long)f->gaps);
		if (f->bad)
			fail(ct, C_phantoms, "follower %d delivered %llu records with wrong bytes",
			     i, (unsigned long long)f->bad);
		if (f->last != tk->final_lsn && !f->err_rc)
			fail(ct, C_records_lost, "follower %d stopped at LSN %llu of %llu", i,
			     (unsigned long long)f->last, (unsigned long long)tk->final_lsn);
		uint64_t lost = 0;

		for (uint64_t l = 1; l <= acked_max && l < TK_LSNS; l++)
			if (acked[l] && tk->gen_of[i][l] != acked[l])
				lost++;
		if (lost)
			fail(ct, C_records_lost,
			     "follower %d: %llu acknowledged records not delivered with the "
			     "bytes of the writer that acknowledged them",
			     i, (unsigned long long)lost);
		fig(ct, F_records_delivered, f->delivered);
		fig(ct, F_delivered_before_ack, f->before_ack);
		uint64_t n = f->delivered < TK_LSNS ? f->delivered : TK_LSNS;
		uint32_t *m = n ? realloc(lags, (nlags + n) * sizeof(*lags)) : NULL;

		if (m) {
			lags = m;
			memcpy(lags + nlags, f->lag_us, n * sizeof(*lags));
			nlags += n;
		}
	}
	fig(ct, F_records_checked, tk->f[0].delivered);
	if (lags) {
		qsort(lags, nlags, sizeof(*lags), cmp_u32);
		fig(ct, F_lag_p50_us, pct(lags, nlags, 0.5));
		fig(ct, F_lag_p99_us, pct(lags, nlags, 0.99));
		fig(ct, F_lag_p999_us, pct(lags, nlags, 0.999));
		fig(ct, F_lag_max_us, nlags ? lags[nlags - 1] : 0);
	}
	free(lags);
	unlink(path);
out:
	free(acked);
	munmap(tk, sizeof(*tk));
}

/* ---- running a campaign in a child process ---------------------------------------- */

static void campaign(struct ct *ct)
{
	ct->buf = malloc(REC_BUF_BYTES);
	ct->t0 = now_s();
	if (ct->mode != M_KILL && ct->mode != M_TAKEOVER && sim_open(ct))
		_exit(1);
	switch (ct->mode) {
	case M_EXHAUSTIVE: run_exhaustive(ct); break;
	case M_RANDOM: run_random(ct); break;
	case M_FAULTS: run_faults(ct); break;
	case M_KILL: run_kill(ct); break;
	case M_TAKEOVER: run_takeover(ct); break;
	}
	pmwal_sim_free(ct->sim);
	free(ct->buf);
	ct->sh->finished = 1;
}

struct result {
	const char *medium;
	int mode;
	struct ct_shared sh;
	double seconds;
	bool passed;
	bool interrupted;
};

/* SIGINT, SIGTERM or SIGHUP: the running campaign is stopped and cleaned up. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* The kill lane's files of campaign process @pid (kill_target names them). */
static void remove_kill_files(const struct ct_opts *o, pid_t pid)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/pmwal-crashtest-%d-file.log", o->dir, (int)pid);
	unlink(path);
	snprintf(path, sizeof(path), "/dev/shm/pmwal-crashtest-%d-pmem.log", (int)pid);
	unlink(path);
	snprintf(path, sizeof(path), "/dev/shm/pmwal-crashtest-%d-fakepmr.log", (int)pid);
	unlink(path);
}

static void run_campaign(const struct ct_opts *o, const struct ct_medium *md, int mode,
			 struct result *res)
{
	struct ct_shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct ct ct = {.sh = sh, .o = o, .md = md, .mode = mode};
	double t0 = now_s();

	memset(res, 0, sizeof(*res));
	res->medium = md->name;
	res->mode = mode;
	if (sh == MAP_FAILED) {
		fprintf(stderr, "crashtest: mmap: %s\n", strerror(errno));
		return;
	}
	ct.p = wl_draw(o->seed, o->ops, 1, o->inflight ? o->inflight : 1);
	ct.p.cap_blocks = 24;
	ct.p.policy = PMWAL_COMMIT_DURABLE;
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		/* The parent handles interrupts (it kills us and cleans up); we die
		 * with it whatever happens to it. */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		campaign(&ct);
		fflush(NULL);
		_exit(0);
	}
	uint64_t last = 0;
	double last_t = now_s();
	int st = 0;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			break;
		if (stop_signal) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			remove_kill_files(o, pid);
			res->interrupted = true;
			munmap(sh, sizeof(*sh));
			return;
		}
		usleep(100000);
		uint64_t hb = __atomic_load_n(&sh->heartbeat, __ATOMIC_RELAXED);
		if (hb != last) {
			last = hb;
			last_t = now_s();
		} else if (now_s() - last_t > (double)o->hang_seconds) {
			fprintf(stderr, "crashtest: FAIL hangs: no progress for %" PRIu64 " s at %s\n",
				o->hang_seconds, sh->where);
			sh->c[C_hangs]++;
			/* Where each thread waits, for the report (where gdb is). */
			if (access("/usr/bin/gdb", X_OK) == 0) {
				char cmd[160];

				fprintf(stderr, "crashtest: the stalled campaign's threads:\n");
				fflush(stderr);
				snprintf(cmd, sizeof(cmd),
					 "timeout 60 /usr/bin/gdb -q -p %d -batch -ex 'thread apply "
					 "all bt' 1>&2 2>/dev/null",
					 (int)pid);
				if (system(cmd) != 0)
					fprintf(stderr, "crashtest: (gdb could not attach)\n");
			}
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
	}
	/* A campaign that crashed or hung did not remove its real targets. */
	remove_kill_files(o, pid);
	if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
		sh->c[C_recovery_crashes]++;
		fprintf(stderr, "crashtest: FAIL recovery_crashes: signal %d (%s) at %s\n",
			WTERMSIG(st), strsignal(WTERMSIG(st)), sh->where);
	} else if (!sh->finished && !sh->c[C_hangs]) {
		sh->c[C_harness_errors]++;
		fprintf(stderr, "crashtest: the %s %s campaign stopped early (status %d) at %s\n",
			md->name, mode_names[mode], WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			sh->where);
	}
	res->sh = *sh;
	res->seconds = now_s() - t0;
	res->passed = true;
	for (int i = 0; i < CT_NCOUNTERS; i++)
		if (sh->c[i])
			res->passed = false;
	munmap(sh, sizeof(*sh));
}

static void print_result(const struct result *r)
{
	const uint64_t *f = r->sh.f;

	printf("%s %s: %s in %.1f s\n", r->medium, mode_names[r->mode],
	       r->passed ? "PASS" : "FAIL", r->seconds);
	if (f[F_crash_points])
		printf("  crash points %" PRIu64 " (%" PRIu64 " with every subset), images %" PRIu64
		       " (subsets %" PRIu64 ", torn/zero/garbage %" PRIu64 ")\n"
		       "  crashes during recovery %" PRIu64 ", their images %" PRIu64 "\n",
		       f[F_crash_points], f[F_exhaustive_points], f[F_crash_images],
		       f[F_subset_images], f[F_torn_images], f[F_recovery_crash_points],
		       f[F_recovery_crash_images]);
	if (r->mode == M_FAULTS)
		printf("  at rest: flip %" PRIu64 ", zero %" PRIu64 ", garbage %" PRIu64
		       ", sealed stale/foreign/misplaced %" PRIu64 ", superblock %" PRIu64
		       ", free space %" PRIu64 "\n"
		       "  device: failed I/O %" PRIu64 ", lost writes %" PRIu64
		       ", misdirected %" PRIu64 ", read errors %" PRIu64 "\n",
		       f[F_faults_flip], f[F_faults_zero], f[F_faults_garbage],
		       f[F_faults_sealed], f[F_faults_superblock], f[F_faults_free_space], f[F_faults_fail],
		       f[F_faults_lost], f[F_faults_misdirect], f[F_faults_read_error]);
	if (r->mode == M_KILL)
		printf("  kills %" PRIu64 ", second-writer probes %" PRIu64 "\n", f[F_kills],
		       f[F_fence_probes]);
	if (r->mode == M_TAKEOVER)
		printf("  takeovers %" PRIu64 " (writer SIGKILLed, standby took over %" PRIu64
		       "; writer SIGSTOPped, lock broken, writer fenced %" PRIu64
		       ", of which the breaker waited for a write %" PRIu64 ")\n"
		       "  followers %" PRIu64 ": acknowledged %" PRIu64 ", delivered %" PRIu64
		       " in all (%" PRIu64 " before their appender returned), lost %" PRIu64
		       ", duplicated %" PRIu64 "\n"
		       "  follower lag, durable to delivered: p50 %" PRIu64 " us, p99 %" PRIu64
		       " us, p99.9 %" PRIu64 " us, max %" PRIu64 " us\n",
		       f[F_takeovers], f[F_kills], f[F_fence_rounds], f[F_fence_waits],
		       f[F_followers], f[F_records_appended], f[F_records_delivered],
		       f[F_delivered_before_ack], r->sh.c[C_records_lost], r->sh.c[C_duplicates],
		       f[F_lag_p50_us], f[F_lag_p99_us], f[F_lag_p999_us], f[F_lag_max_us]);
	printf("  records appended %" PRIu64 ", checked %" PRIu64 ", recoveries %" PRIu64
	       " (a group torn beside later ones: %" PRIu64 ")\n",
	       f[F_records_appended], f[F_records_checked], f[F_recoveries], f[F_torn_beside]);
	printf("  counters:");
	for (int i = 0; i < CT_NCOUNTERS; i++)
		printf("%s %s %" PRIu64, i ? "," : "", counter_names[i], r->sh.c[i]);
	printf("\n");
	fflush(stdout);
}

static const struct cli_opt crashtest_opts[] = {
    {"medium", 0, "M", 'm', "pmem, nvme, nvme-fua, fakepmr or all (default all)",
     "pmem nvme nvme-fua fakepmr all", false},
    {"mode", 0, "MODE", 'M',
     "exhaustive, random, faults, kill, takeover or all (default all)",
     "exhaustive random faults kill takeover all", false},
    {"seed", 0, "N", 's', "drives every choice; a failure prints the one that replays it",
     NULL, false},
    {"count", 0, "N", 'c',
     "exhaustive: crash points (0 = every event); random, kill, takeover: "
     "rounds; faults: device faults of each kind",
     NULL, false},
    {"seconds", 0, "S", 'S', "random, kill, takeover: stop after S seconds", NULL, false},
    {"ops", 0, "N", 'o', "workload operations (default 60)", NULL, false},
    {"images", 0, "N", 'i', "most images checked per crash point (default all)", NULL,
     false},
    {"threads", 0, "N", 't', "random: up to N appender threads (default 4, at most 8)",
     NULL, false},
    {"groups-in-flight", 0, "N", 'g',
     "the log's groups_in_flight, 1 to 4 (default: random "
     "draws 1, 2 or 4 per round; others use 1)",
     NULL, false},
    {"point", 0, "N", 'p', "exhaustive: only crash point N (replay)", NULL, false},
    {"dir", 0, "DIR", 'd', "kill lane file directory (default /var/tmp)", NULL, false},
    {"hang-seconds", 0, "S", 'H',
     "a campaign with no progress this long is a hang (default 120)", NULL, false},
    {"json", 0, NULL, 'j', "one JSON object on stdout instead of text (errors too)", NULL,
     false},
    {"verbose", 'v', NULL, 'v',
     "print up to 1000 violations (not 10), and each injected failure", NULL, false},
    {"help", 'h', NULL, 'h', "this text", NULL, false},
    {0},
};

const struct cli_cmd cli_crashtest = {
    .name = "crashtest",
    .summary = "crash the log on simulated media and real writers; check",
    .synopsis = "[--medium M] [--mode MODE] [--seed N] [--count N] [OPTIONS]",
    .description =
	"Crash the log on simulated media at every durability event of a workload,\n"
	"recover every image a reboot could find, and check what came back against\n"
	"what was submitted and acknowledged. It takes no target: it makes its own\n"
	"media. Modes:\n"
	"  exhaustive  every event of a bounded workload is a crash point\n"
	"  random      a drawn workload (threads, policy, ring) per round, crashed at\n"
	"              a drawn event\n"
	"  faults      damage to every live block and superblock byte; failed, lost\n"
	"              and misdirected writes; read errors\n"
	"  kill        a real writer process on a real file (nvme: DIR, io_uring +\n"
	"              O_DIRECT), pmem or fakepmr (/dev/shm), SIGKILLed at a drawn\n"
	"              moment, each round\n"
	"  takeover    two follower processes read the log live while its writer is\n"
	"              SIGKILLed (a standby waiting on the lock takes over) or\n"
	"              SIGSTOPped (another breaks the lock; the old writer must be\n"
	"              fenced), each round; every record delivered once, in order\n"
	"Only random rounds run several threads: elsewhere one appender has at most\n"
	"one group in flight. docs/crashtest.md describes the models, the checks and\n"
	"the counters.\n",
    .opts = crashtest_opts,
    .exit_status = "0\tevery campaign passed: every counter is 0\n"
		   "1\ta campaign failed (the seed that replays it is printed)\n"
		   "2\tbad usage\n"
		   "128+N\tinterrupted by signal N (its files removed)\n",
    .args = CLI_ARGS_NONE,
};

static json_t *result_json(const struct result *r)
{
	json_t *c = json_object(), *f = json_object();
	for (int i = 0; i < CT_NCOUNTERS; i++)
		json_object_set_new(c, counter_names[i], json_integer((json_int_t)r->sh.c[i]));
	for (int i = 0; i < CT_NFIGURES; i++)
		json_object_set_new(f, figure_names[i], json_integer((json_int_t)r->sh.f[i]));
	return json_pack("{s:s, s:s, s:b, s:f, s:o, s:o}", "medium", r->medium, "mode",
			 mode_names[r->mode], "passed", r->passed, "seconds", r->seconds,
			 "figures", f, "counters", c);
}

/* A usage error: one line on stderr and, with --json, the JSON object every
 * pmwal command prints for an error on stdout; then exit status 2. */
#define usage_error(json, ...) (void)cli_usage_error("crashtest", json, NULL, __VA_ARGS__)

int cmd_crashtest(int argc, char **argv)
{
	struct ct_opts o = {.seed = 1, .ops = 60, .point = UINT64_MAX, .hang_seconds = 120,
			    .threads = 4, .dir = "/var/tmp"};
	const char *medium = "all", *mode = "all";
	uint64_t v;
	int ch;

	bool json_wanted = cli_wants_json(argc, argv); /* errors are JSON too */
	optind = 1;
	while ((ch = cli_getopt(&cli_crashtest, argc, argv)) != -1) {
		const char *name = NULL;
		uint64_t *dst = NULL, max = UINT64_MAX, min = 0;
		switch (ch) {
		case 'm': medium = optarg; continue;
		case 'M': mode = optarg; continue;
		case 'd': o.dir = optarg; continue;
		case 'j': o.json = true; continue;
		case 'v': o.verbose = true; continue;
		case 'h':
			cli_help(stdout, &cli_crashtest);
			return 0;
		case 's': name = "--seed"; dst = &o.seed; break;
		case 'c': name = "--count"; dst = &o.count; break;
		case 'S': name = "--seconds"; dst = &o.seconds; break;
		case 'o': name = "--ops"; dst = &o.ops; min = 1; max = 100000; break;
		case 'i': name = "--images"; dst = &o.images; break;
		case 'p': name = "--point"; dst = &o.point; break;
		case 'H': name = "--hang-seconds"; dst = &o.hang_seconds; min = 1; max = 86400; break;
		case 't': name = "--threads"; dst = &v; min = 1; max = MAXT; break;
		case 'g':
			name = "--groups-in-flight";
			dst = &v;
			min = 1;
			max = 4;
			break;
		default:
			return cli_bad_option(&cli_crashtest, ch, argc, argv);
		}
		if (cli_parse_u64(optarg, dst) || *dst < min || *dst > max) {
			usage_error(json_wanted, "%s '%s': want a number from %" PRIu64
					" to %" PRIu64 "\n", name, optarg, min, max);
			return 2;
		}
		if (ch == 't')
			o.threads = (uint32_t)v;
		if (ch == 'g')
			o.inflight = (uint32_t)v;
	}
	if (optind < argc) {
		usage_error(json_wanted, "unexpected argument '%s' (it takes no target: "
				"it makes its own media)\n", argv[optind]);
		return 2;
	}
	bool want_medium[NMEDIA] = {0}, want_mode[M_NMODES] = {0}, any = false;
	for (size_t i = 0; i < NMEDIA; i++)
		if (!strcmp(medium, "all") || !strcmp(medium, media[i].name))
			want_medium[i] = any = true;
	if (!any) {
		usage_error(json_wanted, "--medium '%s': want pmem, nvme, nvme-fua, "
				"fakepmr or all\n", medium);
		return 2;
	}
	any = false;
	for (int i = 0; i < M_NMODES; i++)
		if (!strcmp(mode, "all") || !strcmp(mode, mode_names[i]))
			want_mode[i] = any = true;
	if (!any) {
		usage_error(json_wanted, "--mode '%s': want exhaustive, random, faults, "
				"kill, takeover or all\n", mode);
		return 2;
	}
	if (o.point != UINT64_MAX && !(want_mode[M_EXHAUSTIVE] && !strcmp(mode, "exhaustive"))) {
		usage_error(json_wanted, "--point replays one exhaustive crash point: "
				"give --mode exhaustive\n");
		return 2;
	}
	if (o.seconds && !strcmp(mode, "exhaustive")) {
		usage_error(json_wanted, "--seconds bounds random and kill campaigns; "
				"an exhaustive one is bounded by --count\n");
		return 2;
	}
	if (o.seconds && !strcmp(mode, "faults")) {
		usage_error(json_wanted, "--seconds bounds random and kill campaigns; "
				"the faults campaign is bounded by --count\n");
		return 2;
	}
	/* The kill lane's nvme log goes there: a directory, and one no other
	 * user controls (bench/outfile.h). */
	if (want_mode[M_KILL] || want_mode[M_TAKEOVER]) {
		char derr[1024];
		int dfd = out_dir_open("--dir", o.dir, false, derr, sizeof(derr));
		if (dfd < 0) {
			usage_error(json_wanted,
				    "%s (the kill lane writes its nvme log "
				    "there)\n",
				    derr);
			return 2;
		}
		close(dfd);
	}

	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	struct result res[NMEDIA * M_NMODES];
	int nres = 0, passed = 0;
	json_t *arr = json_array();
	for (int md = 0; md < M_NMODES; md++)
		for (size_t i = 0; i < NMEDIA; i++) {
			if (!want_medium[i] || !want_mode[md])
				continue;
			if ((md == M_KILL || md == M_TAKEOVER) && !media[i].kill)
				continue;
			if (!o.json) {
				printf("crashtest: %s %s, seed %" PRIu64 " ...\n", media[i].name,
				       mode_names[md], o.seed);
				fflush(stdout);
			}
			run_campaign(&o, &media[i], md, &res[nres]);
			if (res[nres].interrupted || stop_signal) {
				int sig = stop_signal;
				fprintf(stderr,
					"crashtest: interrupted (%s) during the %s %s campaign: it "
					"was stopped and its files removed; %d campaign%s finished "
					"before it, %d passed\n",
					strsignal(sig), media[i].name, mode_names[md], nres,
					nres == 1 ? "" : "s", passed);
				json_decref(arr);
				fflush(NULL);
				signal(sig, SIG_DFL);
				raise(sig);
				return 128 + sig;
			}
			if (o.json)
				json_array_append_new(arr, result_json(&res[nres]));
			else
				print_result(&res[nres]);
			passed += res[nres].passed;
			nres++;
		}
	if (o.json) {
		json_t *top = json_pack("{s:I, s:i, s:i, s:o}", "seed", (json_int_t)o.seed,
					"passed", passed, "failed", nres - passed, "campaigns", arr);
		char *s = json_dumps(top, JSON_INDENT(2));
		puts(s);
		free(s);
		json_decref(top);
	} else {
		json_decref(arr);
		uint64_t tot[CT_NCOUNTERS] = {0}, images = 0;
		for (int i = 0; i < nres; i++) {
			for (int c = 0; c < CT_NCOUNTERS; c++)
				tot[c] += res[i].sh.c[c];
			images += res[i].sh.f[F_crash_images] + res[i].sh.f[F_recovery_crash_images];
		}
		printf("crashtest: %" PRIu64 " crash images checked in all; ", images);
		bool zero = true;
		for (int c = 0; c < CT_NCOUNTERS; c++)
			if (tot[c]) {
				printf("%s%s %" PRIu64 " (%s)", zero ? "" : ", ", counter_names[c],
				       tot[c], counter_text[c]);
				zero = false;
			}
		printf("%s\ncrashtest: %d passed, %d failed\n", zero ? "every counter 0" : "",
		       passed, nres - passed);
	}
	return passed == nres ? 0 : 1;
}
