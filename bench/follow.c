// SPDX-License-Identifier: MIT
/*
 * follow.c - the followers of `pmwal bench log --followers N`: N forked
 * processes that each open the log read-only and follow it as it grows
 * (pmwal_iter_next, and pmwal_iter_wait at the durable end), as replicas or
 * change-data-capture readers would. What they cost the writer is read from
 * its throughput alone and with them (suite.c); what they see is measured
 * here: the lag from the writer's acknowledgement of a record to its
 * delivery, and the proof that each follower delivered every acknowledged
 * record exactly once, in LSN order, with the bytes appended. A follower
 * that delivers anything else fails the run.
 *
 * Processes, not threads: a follower shares nothing with the writer but the
 * log, its status page, and the memory mapped here before fork: the ack
 * stamps (a ring indexed by LSN, each slot holding its LSN so that a stamp
 * overwritten by a later record is recognised), each follower's position
 * (with --follower-hold, the writer releases nothing a follower has yet to
 * read; without, a follower behind a release resumes at the head) and each
 * follower's result. A follower opens its own handle after fork, and dies
 * with its parent (PR_SET_PDEATHSIG).
 */
#include "bench.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pmwal.h"

#define FOLLOW_RING_MIN (UINT64_C(1) << 16)
#define FOLLOW_RING_MAX (UINT64_C(1) << 22) /* 64 MiB of stamps */
#define FOLLOW_WAIT_MS	20		    /* a follower looks at the stop flag */
#define FOLLOW_READY_NS (UINT64_C(10) * 1000000000) /* to open and start */
#define FOLLOW_DRAIN_NS (UINT64_C(30) * 1000000000) /* the rest, after the stop */
#define FOLLOW_REAP_NS	(FOLLOW_DRAIN_NS + UINT64_C(5) * 1000000000)
#define FOLLOW_POLL_NS	1000000

enum follow_state { FS_WAITING, FS_FOLLOWING, FS_DONE, FS_FAILED };

/* The writer's acknowledgement of one record; lsn 0 while it is rewritten. */
struct ack_slot {
	uint64_t lsn;
	uint64_t ack_ns;
};

struct follower_slot {
	/* Last LSN delivered (0: none): the follower writes, the writer reads.
	 * Alone in its cache line: it moves with every record. */
	_Alignas(64) uint64_t pos;
	_Alignas(64) uint32_t state; /* enum follow_state */
	int err;
	uint64_t records;
	uint64_t first_lsn;
	uint64_t last_lsn;
	uint64_t before_ack; /* delivered before the ack was stamped: lag 0 */
	uint64_t unstamped;  /* stamp overwritten by a later record: lag unknown */
	uint64_t skipped;    /* released before this follower read them */
	uint64_t resumes;    /* PMWAL_ERANGE, then on from the head */
	bool resumed;	     /* the next delivery may skip forward */
	struct hist lag;     /* ns, deliveries after the ramp */
	char errmsg[384];
};

struct follow_shared {
	uint64_t first_lsn; /* the first record each follower must deliver */
	uint64_t window_ns; /* lag counts from here (0: the ramp goes on) */
	uint64_t end_lsn;   /* with stop: the last acknowledged record */
	uint32_t stop;
	uint32_t abort; /* the writer has no log: leave */
	struct follower_slot f[BENCH_FOLLOWERS_MAX];
};

struct followers {
	const char *target;
	uint32_t open_flags;
	uint32_t record_bytes;
	bool hold; /* --follower-hold: nothing a follower needs is released */
	uint32_t n;
	uint8_t *record; /* what every appender appends, checked on delivery */
	struct follow_shared *sh;
	struct ack_slot *ring;
	uint64_t ring_mask;
	int gate; /* write end: closing it lets the followers open the log */
	pid_t pid[BENCH_FOLLOWERS_MAX];
	bool reaped[BENCH_FOLLOWERS_MAX];
	struct rusage ru[BENCH_FOLLOWERS_MAX];
};

#define LD(f)	 __atomic_load_n(&(f), __ATOMIC_ACQUIRE)
#define ST(f, v) __atomic_store_n(&(f), (v), __ATOMIC_RELEASE)

/* ---- the follower process ------------------------------------------------ */

static int slot_fail(struct follower_slot *me, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int slot_fail(struct follower_slot *me, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(me->errmsg, sizeof(me->errmsg), fmt, ap);
	va_end(ap);
	me->err = err;
	ST(me->state, FS_FAILED);
	return -1;
}

/* Lag of @lsn delivered at @now, against the writer's stamp. */
static void record_lag(struct followers *f, struct follower_slot *me, uint64_t lsn,
		       uint64_t now)
{
	uint64_t window = LD(f->sh->window_ns);
	struct ack_slot *s = &f->ring[lsn & f->ring_mask];

	if (!window || now < window)
		return;
	uint64_t l1 = LD(s->lsn);
	uint64_t ack = LD(s->ack_ns); /* acquire: the second look comes after */
	uint64_t l2 = __atomic_load_n(&s->lsn, __ATOMIC_RELAXED);

	if (l1 == lsn && l2 == lsn && ack <= now) {
		hist_record(&me->lag, now - ack);
		return;
	}
	if (l1 > lsn || l2 > lsn) {
		me->unstamped++;
		return;
	}
	/* The follower woke at the durable end's publication, which comes
	 * before the appender returns and stamps it. */
	me->before_ack++;
	hist_record(&me->lag, 0);
}

static int deliver(struct followers *f, struct follower_slot *me, uint64_t lsn,
		   const void *data, size_t len)
{
	uint64_t now = now_ns();
	uint64_t due = me->records ? me->last_lsn + 1 : f->sh->first_lsn;

	if (lsn > due && me->resumed) {
		me->skipped += lsn - due; /* released before it read them */
	} else if (lsn != due)
		return slot_fail(me, PMWAL_ECORRUPT,
				 "LSN %" PRIu64 " delivered where %" PRIu64
				 " was due (%s)",
				 lsn, due, lsn < due ? "a repeat" : "a gap");
	if (len != f->record_bytes || memcmp(data, f->record, len))
		return slot_fail(me, PMWAL_ECORRUPT,
				 "LSN %" PRIu64 ": the %zu bytes delivered are not the "
				 "%u appended",
				 lsn, len, f->record_bytes);
	if (!me->records)
		me->first_lsn = lsn;
	me->resumed = false;
	me->records++;
	me->last_lsn = lsn;
	ST(me->pos, lsn);
	record_lag(f, me, lsn, now);
	return 0;
}

/* Deliver until the writer stopped and its last acknowledged record came. */
static int follow_loop(struct followers *f, struct follower_slot *me, struct pmwal *w,
		       struct pmwal_iter **itp)
{
	struct pmwal_iter *it = *itp;

	uint64_t drain_until = 0;

	for (;;) {
		uint64_t lsn;
		const void *data;
		size_t len;
		int rc = pmwal_iter_next(it, &lsn, &data, &len);

		if (rc == 1) {
			if (deliver(f, me, lsn, data, len))
				return -1;
			continue;
		}
		if (rc == PMWAL_ERANGE && !f->hold) {
			/* Behind a release: on from the head, as a replica
			 * rebuilt from a checkpoint would be. */
			pmwal_iter_close(it);
			*itp = it = NULL;
			rc = pmwal_iter_open(w, 0, itp);
			if (rc)
				return slot_fail(me, rc, "iterator from the head: %s (%s)",
						 pmwal_strerror(rc), pmwal_errmsg(w));
			it = *itp;
			me->resumes++;
			me->resumed = true;
			continue;
		}
		if (rc < 0)
			return slot_fail(me, rc, "after LSN %" PRIu64 ": %s (%s)",
					 me->last_lsn, pmwal_strerror(rc),
					 pmwal_errmsg(w));
		if (LD(f->sh->stop)) {
			uint64_t end = f->sh->end_lsn;
			uint64_t have = me->records ? me->last_lsn : f->sh->first_lsn - 1;

			if (have >= end)
				return 0;
			if (!drain_until)
				drain_until = now_ns() + FOLLOW_DRAIN_NS;
			else if (now_ns() > drain_until)
				return slot_fail(
				    me, PMWAL_ERANGE,
				    "stopped at LSN %" PRIu64
				    ": the writer acknowledged up to %" PRIu64
				    ", which never came (%.0f s)",
				    have, end, FOLLOW_DRAIN_NS / 1e9);
		}
		rc = pmwal_iter_wait(it, FOLLOW_WAIT_MS);
		if (rc < 0)
			return slot_fail(me, rc, "wait: %s", pmwal_strerror(rc));
	}
}

static void follow(struct followers *f, struct follower_slot *me)
{
	char msg[256] = "";
	struct pmwal_options o = {
	    .target = f->target,
	    .flags = PMWAL_OPEN_READONLY | f->open_flags,
	    .errmsg_buf = msg,
	    .errmsg_len = sizeof(msg),
	};
	struct pmwal *w = NULL;
	struct pmwal_iter *it = NULL;
	int ret = pmwal_open(&o, &w);

	if (ret) {
		slot_fail(me, ret, "open read-only: %s (%s)", pmwal_strerror(ret), msg);
		return;
	}
	ret = pmwal_iter_open(w, 0, &it);
	if (ret) {
		slot_fail(me, ret, "iterator: %s (%s)", pmwal_strerror(ret),
			  pmwal_errmsg(w));
		goto close_log;
	}
	ST(me->state, FS_FOLLOWING);
	if (follow_loop(f, me, w, &it) == 0)
		ST(me->state, FS_DONE);
	pmwal_iter_close(it);
close_log:
	pmwal_close(w);
}

static _Noreturn void follower_main(struct followers *f, uint32_t i, int gate,
				    pid_t parent)
{
	char b;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1); /* the parent died before the line above */
	/* Ctrl-C stops the writer, which then stops us after the last record. */
	signal(SIGINT, SIG_IGN);
	while (read(gate, &b, 1) < 0 && errno == EINTR)
		;
	close(gate);
	if (!LD(f->sh->abort))
		follow(f, &f->sh->f[i]);
	_exit(0);
}

/* ---- the writer's side ---------------------------------------------------- */

static void *map_shared(size_t bytes)
{
	void *p =
	    mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Stamps enough for every record the log holds (each takes its bytes and a
 * 4-byte length, format.c): a follower is never further behind than that,
 * since nothing it has yet to read is released. */
static uint64_t ring_slots(const struct log_spec *s)
{
	uint64_t want = s->capacity_bytes / (s->record_bytes + 4u), n = FOLLOW_RING_MIN;

	while (n < want && n < FOLLOW_RING_MAX)
		n <<= 1;
	return n;
}

int followers_fork(const struct log_spec *s, struct followers **out, char *err,
		   size_t errlen)
{
	struct followers *f = calloc(1, sizeof(*f));
	uint64_t rng = now_ns() | 1;
	int gate[2] = {-1, -1};

	*out = NULL;
	if (!f || !(f->record = malloc(s->record_bytes)))
		goto no_memory;
	f->target = s->target;
	f->open_flags = s->open_flags & (PMWAL_OPEN_BUFFERED_IO | PMWAL_OPEN_NO_URING);
	f->record_bytes = s->record_bytes;
	f->hold = s->follower_hold;
	f->gate = -1;
	for (uint32_t k = 0; k < s->record_bytes; k += 8) {
		uint64_t v = rng_next(&rng);
		memcpy(f->record + k, &v,
		       s->record_bytes - k < 8 ? s->record_bytes - k : 8);
	}
	uint64_t slots = ring_slots(s);
	f->sh = map_shared(sizeof(*f->sh));
	f->ring = map_shared(slots * sizeof(*f->ring));
	if (!f->sh || !f->ring)
		goto no_memory;
	f->ring_mask = slots - 1;
	for (uint32_t i = 0; i < BENCH_FOLLOWERS_MAX; i++)
		hist_init(&f->sh->f[i].lag);
	if (pipe(gate)) {
		int e = errno;
		snprintf(err, errlen, "followers: pipe: %s", strerror(e));
		followers_free(f);
		return -e;
	}
	f->gate = gate[1];
	fflush(NULL);
	pid_t parent = getpid();
	for (; f->n < s->followers; f->n++) {
		pid_t pid = fork();
		if (pid == 0) {
			close(gate[1]);
			follower_main(f, f->n, gate[0], parent);
		}
		if (pid < 0) {
			int e = errno;
			snprintf(err, errlen, "follower %u: fork: %s", f->n, strerror(e));
			close(gate[0]);
			followers_free(f);
			return -e;
		}
		f->pid[f->n] = pid;
	}
	close(gate[0]);
	*out = f;
	return 0;
no_memory:
	snprintf(err, errlen, "followers: out of memory");
	followers_free(f);
	return -ENOMEM;
}

/* Reap follower @i if it exited; true once it has. */
static bool reap(struct followers *f, uint32_t i, bool block)
{
	int st;

	if (f->reaped[i])
		return true;
	pid_t got;
	while ((got = wait4(f->pid[i], &st, block ? 0 : WNOHANG, &f->ru[i])) < 0 &&
	       errno == EINTR)
		;
	if (got == 0)
		return false;
	f->reaped[i] = true;
	struct follower_slot *me = &f->sh->f[i];
	uint32_t state = LD(me->state);
	if (state == FS_FAILED || (state == FS_DONE && WIFEXITED(st) && !WEXITSTATUS(st)))
		return true;
	if (WIFSIGNALED(st))
		slot_fail(me, -EINTR, "died of signal %d (%s)", WTERMSIG(st),
			  strsignal(WTERMSIG(st)));
	else
		slot_fail(me, -EINTR, "exited (status %d) before it was done",
			  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return true;
}

static int first_failure(struct followers *f, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < f->n; i++) {
		struct follower_slot *me = &f->sh->f[i];
		if (LD(me->state) == FS_FAILED) {
			snprintf(err, errlen, "follower %u: %s", i, me->errmsg);
			return me->err ? me->err : -EIO;
		}
	}
	return 0;
}

int followers_open(struct followers *f, uint64_t first_lsn, char *err, size_t errlen)
{
	uint64_t until = now_ns() + FOLLOW_READY_NS;

	f->sh->first_lsn = first_lsn;
	close(f->gate); /* EOF: they open the log now */
	f->gate = -1;
	for (uint32_t i = 0; i < f->n;) {
		uint32_t state = LD(f->sh->f[i].state);
		if (state != FS_WAITING || reap(f, i, false)) {
			i++;
			continue;
		}
		if (now_ns() > until) {
			slot_fail(&f->sh->f[i], -ETIMEDOUT,
				  "did not open the log within %.0f s",
				  FOLLOW_READY_NS / 1e9);
			break;
		}
		sleep_ns(FOLLOW_POLL_NS);
	}
	return first_failure(f, err, errlen);
}

void followers_window(struct followers *f, uint64_t start_ns)
{
	ST(f->sh->window_ns, start_ns);
}

void followers_ack(struct followers *f, uint64_t lsn, uint64_t ack_ns)
{
	struct ack_slot *s = &f->ring[lsn & f->ring_mask];

	/* A seqlock whose odd state is lsn 0 (no record has it); the release
	 * store of the stamp orders the 0 before it. */
	__atomic_store_n(&s->lsn, 0, __ATOMIC_RELAXED);
	ST(s->ack_ns, ack_ns);
	ST(s->lsn, lsn);
}

uint64_t followers_needed_lsn(struct followers *f)
{
	uint64_t need = UINT64_MAX;

	for (uint32_t i = 0; i < f->n; i++) {
		struct follower_slot *me = &f->sh->f[i];
		if (LD(me->state) != FS_FOLLOWING)
			continue;
		uint64_t pos = LD(me->pos), next = pos ? pos + 1 : f->sh->first_lsn;
		if (next < need)
			need = next;
	}
	return need;
}

bool followers_poll(struct followers *f)
{
	for (uint32_t i = 0; i < f->n; i++)
		(void)reap(f, i, false);
	return followers_failed(f);
}

bool followers_failed(struct followers *f)
{
	for (uint32_t i = 0; i < f->n; i++)
		if (LD(f->sh->f[i].state) == FS_FAILED)
			return true;
	return false;
}

static double ru_s(const struct rusage *ru)
{
	return ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 + ru->ru_stime.tv_sec +
	       ru->ru_stime.tv_usec / 1e6;
}

/* Each delivered first..end exactly once: count, ends (deliver() checked
 * every step in between). */
static void verify(struct followers *f, uint32_t i, uint64_t end_lsn)
{
	struct follower_slot *me = &f->sh->f[i];
	uint64_t first = f->sh->first_lsn;
	uint64_t want = end_lsn >= first ? end_lsn - first + 1 : 0;

	if (LD(me->state) == FS_FAILED)
		return;
	if (me->records + me->skipped != want ||
	    (want && ((me->first_lsn != first && !me->resumes) || me->last_lsn != end_lsn)))
		slot_fail(me, PMWAL_ERANGE,
			  "delivered %" PRIu64 " records, LSN %" PRIu64 "..%" PRIu64
			  "; the writer acknowledged %" PRIu64 ", LSN %" PRIu64
			  "..%" PRIu64,
			  me->records, me->first_lsn, me->last_lsn, want, first, end_lsn);
}

static json_t *lag_us_json(const struct hist *h)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:f,s:I}", "p50", hist_percentile(h, 50) / 1e3,
			 "p99", hist_percentile(h, 99) / 1e3, "p99.9",
			 hist_percentile(h, 99.9) / 1e3, "max", h->max / 1e3, "mean",
			 hist_mean(h) / 1e3, "N", (json_int_t)h->count);
}

static json_t *follower_json(struct followers *f, uint32_t i)
{
	struct follower_slot *me = &f->sh->f[i];
	double cpu_s = ru_s(&f->ru[i]);
	json_t *o = json_pack(
	    "{s:I,s:I,s:I,s:b,s:f,s:f,s:I,s:I,s:o}", "records", (json_int_t)me->records,
	    "first_lsn", (json_int_t)me->first_lsn, "last_lsn", (json_int_t)me->last_lsn,
	    "ok", LD(me->state) == FS_DONE, "cpu_s", cpu_s, "cpu_ns_per_record",
	    me->records ? cpu_s * 1e9 / me->records : 0.0, "delivered_before_ack",
	    (json_int_t)me->before_ack, "lag_unknown", (json_int_t)me->unstamped,
	    "lag_us", lag_us_json(&me->lag));

	json_object_set_new(o, "skipped_behind_release", json_integer((json_int_t)me->skipped));
	json_object_set_new(o, "resumes", json_integer((json_int_t)me->resumes));
	if (LD(me->state) == FS_FAILED)
		json_object_set_new(o, "error", json_string(me->errmsg));
	return o;
}

static json_t *section_json(struct followers *f, uint64_t end_lsn)
{
	struct hist lag;
	uint64_t before = 0, unknown = 0, skipped = 0, resumes = 0;
	json_t *each = json_array();
	uint64_t first = f->sh->first_lsn;

	hist_init(&lag);
	for (uint32_t i = 0; i < f->n; i++) {
		hist_merge(&lag, &f->sh->f[i].lag);
		before += f->sh->f[i].before_ack;
		unknown += f->sh->f[i].unstamped;
		skipped += f->sh->f[i].skipped;
		resumes += f->sh->f[i].resumes;
		json_array_append_new(each, follower_json(f, i));
	}
	json_t *o = json_pack(
	    "{s:I,s:b,s:{s:I,s:I,s:I},s:o,s:o,s:I,s:I,s:s,s:o}", "count",
	    (json_int_t)f->n, "verified", !followers_failed(f), "expected", "first_lsn",
	    (json_int_t)first, "last_lsn", (json_int_t)end_lsn, "records",
	    (json_int_t)(end_lsn >= first ? end_lsn - first + 1 : 0), "lag_us",
	    lag_us_json(&lag), "lag_ns", clat_json(&lag), "delivered_before_ack",
	    (json_int_t)before, "lag_unknown", (json_int_t)unknown, "lag_note",
	    "lag: the follower's pmwal_iter_next() returned the record, minus the "
	    "writer's acknowledgement (pmwal_append() returned; buffered: "
	    "pmwal_durable_lsn() covered it), deliveries after the ramp; a record "
	    "delivered before its acknowledgement was stamped counts as lag 0 "
	    "(delivered_before_ack): the follower wakes at the durable end's "
	    "publication, which comes before the appender returns",
	    "per_follower", each);

	json_object_set_new(o, "hold", json_boolean(f->hold));
	json_object_set_new(o, "skipped_behind_release", json_integer((json_int_t)skipped));
	json_object_set_new(o, "resumes", json_integer((json_int_t)resumes));
	return o;
}

int followers_stop(struct followers *f, uint64_t end_lsn, json_t **section, char *err,
		   size_t errlen)
{
	uint64_t until = now_ns() + FOLLOW_REAP_NS;
	bool all = false;

	f->sh->end_lsn = end_lsn;
	ST(f->sh->stop, 1);
	while (!all) {
		all = true;
		for (uint32_t i = 0; i < f->n; i++)
			all &= reap(f, i, false);
		if (all)
			break;
		if (now_ns() > until) {
			for (uint32_t i = 0; i < f->n; i++) {
				if (f->reaped[i])
					continue;
				kill(f->pid[i], SIGKILL);
				reap(f, i, true);
				slot_fail(&f->sh->f[i], -ETIMEDOUT,
					  "did not stop within %.0f s of the writer",
					  FOLLOW_REAP_NS / 1e9);
			}
			break;
		}
		sleep_ns(FOLLOW_POLL_NS);
	}
	for (uint32_t i = 0; i < f->n; i++)
		verify(f, i, end_lsn);
	*section = section_json(f, end_lsn);
	return first_failure(f, err, errlen);
}

const uint8_t *followers_record(const struct followers *f)
{
	return f->record;
}

void followers_free(struct followers *f)
{
	if (!f)
		return;
	if (f->sh && f->gate >= 0) {
		ST(f->sh->abort, 1); /* they never saw a log: leave */
		close(f->gate);
	}
	for (uint32_t i = 0; i < f->n; i++) {
		if (!f->reaped[i]) {
			kill(f->pid[i], SIGKILL);
			reap(f, i, true);
		}
	}
	if (f->ring)
		munmap(f->ring, (f->ring_mask + 1) * sizeof(*f->ring));
	if (f->sh)
		munmap(f->sh, sizeof(*f->sh));
	free(f->record);
	free(f);
}

/* ---- reading the result back (suite.c prints it) -------------------------- */

void followers_compare(json_t *job, json_t *alone)
{
	json_t *fl = json_object_get(
	    json_object_get(json_object_get(job, "pmwal"), "log"), "followers");
	double without = json_real_value(
		   json_object_get(json_object_get(alone, "write"), "iops")),
	       with = json_real_value(
		   json_object_get(json_object_get(job, "write"), "iops"));

	if (!fl)
		return;
	if (json_object_get(alone, "jobname"))
		json_object_set(fl, "alone_job", json_object_get(alone, "jobname"));
	json_object_set_new(fl, "writer_ops_per_s_without", json_real(without));
	json_object_set_new(fl, "writer_ops_per_s_with", json_real(with));
	json_object_set_new(fl, "ratio", json_real(without > 0 ? with / without : 0.0));
}

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

void followers_print(json_t *job)
{
	json_t *fl = json_object_get(
	    json_object_get(json_object_get(job, "pmwal"), "log"), "followers");
	json_t *lag = json_object_get(fl, "lag_us"),
	       *exp = json_object_get(fl, "expected");
	json_t *one;
	size_t i;

	if (!fl)
		return;
	if (!json_is_true(json_object_get(fl, "verified"))) {
		json_array_foreach(json_object_get(fl, "per_follower"), i, one)
		{
			const char *e = json_string_value(json_object_get(one, "error"));
			if (e)
				printf("%-9s FAILED: follower %zu: %s\n", "", i, e);
		}
		return;
	}
	printf("%-9s %.0f follower%s: writer %.0f appends/s alone, %.0f with them "
	       "(x%.3f)\n",
	       "", num(fl, "count"), num(fl, "count") == 1 ? "" : "s",
	       num(fl, "writer_ops_per_s_without"), num(fl, "writer_ops_per_s_with"),
	       num(fl, "ratio"));
	printf("%-9s lag ack->delivered: p50 %.1fus p99 %.1fus p99.9 %.1fus max %.1fus; "
	       "%.0f of %.0f (%.1f%%) delivered before the ack (lag 0)\n",
	       "", num(lag, "p50"), num(lag, "p99"), num(lag, "p99.9"), num(lag, "max"),
	       num(fl, "delivered_before_ack"), num(lag, "N"),
	       num(lag, "N") > 0 ? 100 * num(fl, "delivered_before_ack") / num(lag, "N")
				 : 0.0);
	if (num(fl, "lag_unknown") > 0)
		printf(
		    "%-9s %.0f deliveries without a lag: their stamp was overwritten\n",
		    "", num(fl, "lag_unknown"));
	printf("%-9s each delivered LSN %.0f..%.0f (%.0f records) once, in order, "
	       "bytes checked%s\n",
	       "", num(exp, "first_lsn"), num(exp, "last_lsn"), num(exp, "records"),
	       num(fl, "skipped_behind_release") > 0 ? ", except those released first" : "");
	if (json_is_true(json_object_get(fl, "hold")))
		printf("%-9s full log: %.0f of %.0f releases held back for a follower, the "
		       "writer waiting %.2f s\n",
		       "", num(fl, "releases_held_back"),
		       num(json_object_get(json_object_get(job, "pmwal"), "log"), "releases"),
		       num(fl, "writer_wait_s"));
	else
		printf("%-9s the writer released as alone: %.0f records released before a "
		       "follower read them (%.0f resumes at the head)\n",
		       "", num(fl, "skipped_behind_release"), num(fl, "resumes"));
}
