// SPDX-License-Identifier: MIT
/*
 * log.c - `pmwal bench log`: durable appends through the public API only
 * (pmwal.h), as a database would make them: N appender threads, a record
 * size, a commit policy and a group-commit window. What it reports is
 * append-to-durable latency: with PMWAL_COMMIT_DURABLE the time
 * pmwal_append() takes; with PMWAL_COMMIT_BUFFERED the time from the call
 * until pmwal_durable_lsn() covers the record's LSN.
 *
 * A time-based run outlives any log size, so a full log is answered the way
 * a database answers it after a checkpoint: release everything durable
 * (pmwal_release) and go on. Releases are counted in the result.
 *
 * With --followers N, N processes follow the log as it is written
 * (follow.c): each acknowledgement is stamped for them, and a full log is
 * released only below the slowest follower's position, waiting for it if
 * need be (counted too): a database keeps the log its replicas still read.
 */
#include "bench.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "pmwal.h"

#define LOG_THREADS_MAX 1024u
/* Buffered policy: appends awaiting durability per thread (bounded). */
#define LOG_PENDING_MAX	     4096u
#define LOG_DEFAULT_CAPACITY (UINT64_C(256) << 20)
/* A follower that reads nothing for this long while the log is full is stuck. */
#define LOG_FOLLOWER_STALL_NS (UINT64_C(10) * 1000000000)
#define LOG_FOLLOWER_POLL_NS  50000

struct log_shared {
	const struct log_spec *spec;
	struct pmwal *w;
	pthread_barrier_t start;
	pthread_mutex_t release_lock;
	uint64_t releases;
	struct followers *fol;	   /* NULL: none */
	uint64_t releases_held;	   /* below the durable end: a follower behind */
	uint64_t follower_wait_ns; /* full log, appenders waiting for followers */
	int abort; /* set by any appender on error (atomic) */
};

struct log_thread {
	struct log_shared *sh;
	pthread_t tid;
	struct thread_stats st;
	uint8_t *rec;
	uint64_t pend_lsn[LOG_PENDING_MAX];
	uint64_t pend_ns[LOG_PENDING_MAX];
	uint32_t head, count;
	int err;
	char errmsg[256];
};

void log_spec_defaults(struct log_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->record_bytes = 4096;
	s->threads = 1;
	s->commit_policy = PMWAL_COMMIT_DURABLE;
	s->capacity_bytes = LOG_DEFAULT_CAPACITY;
	s->runtime_ns = 10000000000ull;
	s->ramp_ns = 500000000ull;
	s->interval_ns = 100000000ull;
}

void log_jobname(const struct log_spec *s, char *buf, size_t len)
{
	char rec[16];

	if (s->record_bytes % 1024)
		snprintf(rec, sizeof(rec), "%u", s->record_bytes);
	else
		snprintf(rec, sizeof(rec), "%uk", s->record_bytes / 1024);
	snprintf(buf, len, "log rec=%s thr=%u %s%s", rec, s->threads,
		 s->commit_policy == PMWAL_COMMIT_BUFFERED ? "buffered" : "durable",
		 s->group_window_us ? " win" : "");
	if (s->outstanding)
		snprintf(buf + strlen(buf), len - strlen(buf), " qd=%u", s->outstanding);
	if (s->groups_in_flight)
		snprintf(buf + strlen(buf), len - strlen(buf), " gif=%u", s->groups_in_flight);
	if (s->group_window_us)
		snprintf(buf + strlen(buf), len - strlen(buf), "=%uus",
			 s->group_window_us);
	if (s->followers)
		snprintf(buf + strlen(buf), len - strlen(buf), " fol=%u", s->followers);
}

json_t *log_options_json(const struct log_spec *s)
{
	json_t *o = json_pack(
	    "{s:s,s:I,s:I,s:s,s:I,s:I,s:I,s:I,s:f,s:f}", "target", s->target,
	    "record_size", (json_int_t)s->record_bytes, "threads", (json_int_t)s->threads,
	    "commit", s->commit_policy == PMWAL_COMMIT_BUFFERED ? "buffered" : "durable",
	    "group_window_us", (json_int_t)s->group_window_us, "outstanding",
	    (json_int_t)s->outstanding, "groups_in_flight",
	    (json_int_t)s->groups_in_flight, "capacity", (json_int_t)s->capacity_bytes,
	    "runtime_s", s->runtime_ns / 1e9, "ramp_s", s->ramp_ns / 1e9);

	if (s->followers)
		json_object_set_new(o, "followers", json_integer(s->followers));
	return o;
}

static void thread_fail(struct log_thread *t, int err, const char *what)
{
	if (!t->err) {
		t->err = err;
		snprintf(t->errmsg, sizeof(t->errmsg), "%s: %s (%s)", what,
			 pmwal_strerror(err), pmwal_errmsg(t->sh->w));
	}
	__atomic_store_n(&t->sh->abort, 1, __ATOMIC_RELAXED);
}

static void thread_fail_msg(struct log_thread *t, int err, const char *msg)
{
	if (!t->err) {
		t->err = err;
		snprintf(t->errmsg, sizeof(t->errmsg), "%s", msg);
	}
	__atomic_store_n(&t->sh->abort, 1, __ATOMIC_RELAXED);
}

/*
 * Lower *@to to the slowest follower's next LSN, waiting until that one has
 * read at least half of what the log holds, so that each release frees half
 * of it at least: a release writes a superblock, and releasing a few
 * records at a time behind a slow follower would cost the writer more than
 * the followers do. 0; -EINTR: Ctrl-C or a follower failed; -ETIMEDOUT: a
 * follower read nothing for LOG_FOLLOWER_STALL_NS (a message in @t).
 */
static int wait_for_followers(struct log_thread *t, uint64_t *to)
{
	struct log_shared *sh = t->sh;
	struct pmwal_info info;
	uint64_t t0 = now_ns(), moved_ns = t0, need, seen = 0;

	pmwal_stat(sh->w, &info);
	uint64_t enough = info.head_lsn + (*to - info.head_lsn + 1) / 2;
	while ((need = followers_needed_lsn(sh->fol)) < enough) {
		uint64_t now = now_ns();
		if (bench_stop || followers_failed(sh->fol)) {
			__atomic_store_n(&sh->abort, 1, __ATOMIC_RELAXED);
			return -EINTR;
		}
		if (need != seen) {
			seen = need;
			moved_ns = now;
		} else if (now - moved_ns > LOG_FOLLOWER_STALL_NS) {
			char msg[200];
			snprintf(msg, sizeof(msg),
				 "log full at LSN %" PRIu64 " and a follower has read "
				 "nothing past LSN %" PRIu64 " for %.0f s",
				 info.next_lsn, need - 1, LOG_FOLLOWER_STALL_NS / 1e9);
			thread_fail_msg(t, -ETIMEDOUT, msg);
			return -ETIMEDOUT;
		}
		sleep_ns(LOG_FOLLOWER_POLL_NS);
	}
	sh->follower_wait_ns += now_ns() - t0;
	if (need < *to) {
		sh->releases_held++;
		*to = need;
	}
	return 0;
}

/* The log is full: release what is durable, as after a checkpoint (and
 * what every follower has read). */
static int make_room(struct log_thread *t)
{
	struct log_shared *sh = t->sh;
	int ret = 0;

	pthread_mutex_lock(&sh->release_lock);
	if (sh->spec->commit_policy == PMWAL_COMMIT_BUFFERED)
		ret = pmwal_sync(sh->w);
	uint64_t to = pmwal_durable_lsn(sh->w) + 1;
	if (!ret && sh->fol && sh->spec->follower_hold)
		ret = wait_for_followers(t, &to);
	if (!ret && to > 1)
		ret = pmwal_release(sh->w, to);
	sh->releases++;
	pthread_mutex_unlock(&sh->release_lock);
	return ret;
}

/* Buffered policy: every pending append now covered by the durable LSN. */
static void drain_durable(struct log_thread *t, uint64_t durable)
{
	uint64_t now = now_ns();

	while (t->count && t->pend_lsn[t->head] <= durable) {
		if (t->sh->fol)
			followers_ack(t->sh->fol, t->pend_lsn[t->head], now);
		tstats_record(&t->st, DIR_WRITE, t->sh->spec->record_bytes,
			      now - t->pend_ns[t->head], now);
		t->head = (t->head + 1) % LOG_PENDING_MAX;
		t->count--;
	}
}

static int append_one(struct log_thread *t, uint64_t *lsn, uint64_t *t0)
{
	const struct log_spec *s = t->sh->spec;

	for (int tries = 0; tries < 4; tries++) {
		*t0 = now_ns();
		int ret = pmwal_append(t->sh->w, t->rec, s->record_bytes, lsn);
		if (ret != PMWAL_EFULL)
			return ret;
		ret = make_room(t);
		if (ret)
			return ret;
	}
	return PMWAL_EFULL;
}

static void *appender(void *arg)
{
	struct log_thread *t = arg;
	const struct log_spec *s = t->sh->spec;
	bool buffered = s->commit_policy == PMWAL_COMMIT_BUFFERED;

	pthread_barrier_wait(&t->sh->start);
	t->st.start_ns = now_ns() + s->ramp_ns;
	t->st.end_ns = t->st.start_ns + s->runtime_ns;
	uint64_t now = now_ns();

	while (!bench_stop && !__atomic_load_n(&t->sh->abort, __ATOMIC_RELAXED) &&
	       now < t->st.end_ns) {
		uint64_t lsn, t0;
		int ret = append_one(t, &lsn, &t0);
		if (t->sh->fol && (ret == -EINTR || ret == -ETIMEDOUT))
			break; /* waiting for followers: Ctrl-C, one failed, or stuck */
		if (ret) {
			thread_fail(t, ret, "append");
			break;
		}
		now = now_ns();
		if (!buffered) {
			if (t->sh->fol)
				followers_ack(t->sh->fol, lsn, now);
			tstats_record(&t->st, DIR_WRITE, s->record_bytes, now - t0, now);
			continue;
		}
		if (t->count >= (s->outstanding ? s->outstanding : LOG_PENDING_MAX)) {
			ret = pmwal_wait(t->sh->w, t->pend_lsn[t->head]);
			if (ret) {
				thread_fail(t, ret, "wait");
				break;
			}
		}
		uint32_t at = (t->head + t->count) % LOG_PENDING_MAX;
		t->pend_lsn[at] = lsn;
		t->pend_ns[at] = t0;
		t->count++;
		drain_durable(t, pmwal_durable_lsn(t->sh->w));
	}
	if (buffered && t->count && pmwal_sync(t->sh->w) == 0)
		drain_durable(t, pmwal_durable_lsn(t->sh->w));
	tstats_finish(&t->st);
	return NULL;
}

int log_check_no_writer(const char *target, char *err, size_t errlen)
{
	long pid = 0;

	/* An error (no such file yet, not a target): nobody writes it. */
	if (!target || pmwal_writer_pid(target, &pid) || !pid)
		return 0;
	/* A writer just killed: its lock goes with its last file reference,
	 * which the kernel may drop a moment after the process (an io_uring
	 * instance is torn down after its task). Up to 3 s for a holder that
	 * is gone: a dead pid, or one pmwal cannot name (-1: it says so of a
	 * writer that has exited, and of one in another PID namespace). */
	for (int i = 0; i < 150 && (pid < 0 || (kill((pid_t)pid, 0) && errno == ESRCH)); i++) {
		usleep(20000);
		if (pmwal_writer_pid(target, &pid) || !pid)
			return 0;
	}
	if (pid > 0)
		snprintf(err, errlen,
			 "%s is open for writing by pid %ld (another bench run?); "
			 "wait for it to finish or name another target",
			 target, pid);
	else
		snprintf(err, errlen,
			 "%s is open for writing by another process (another bench "
			 "run?); wait for it to finish or name another target",
			 target);
	return PMWAL_BENCH_EUSAGE;
}

static int open_log(const struct log_spec *s, struct pmwal **w, char *err, size_t errlen)
{
	struct pmwal_options o = {
	    .target = s->target,
	    .capacity_bytes = s->capacity_bytes,
	    /* A new log each run, over whatever target_check_writable() let
	     * it replace (a log, or with --force any data). */
	    .flags = PMWAL_OPEN_FORMAT | PMWAL_OPEN_FORCE | s->open_flags,
	    .commit_policy = s->commit_policy,
	    .group_window_us = s->group_window_us,
	    .groups_in_flight = s->groups_in_flight,
	    .errmsg_buf = err,
	    .errmsg_len = errlen,
	};

	if (log_check_no_writer(s->target, err, errlen) ||
	    target_check_writable(s->target, s->force, err, errlen))
		return PMWAL_BENCH_EUSAGE;
	int ret = pmwal_open(&o, w);
	if (ret && !*err)
		snprintf(err, errlen, "%s: %s", s->target, pmwal_strerror(ret));
	if (ret == PMWAL_EBADOPT || ret == PMWAL_EUNSUPPORTED || ret == -ENOENT ||
	    ret == -EACCES || ret == -ENOSPC || ret == PMWAL_ENOTDURABLE)
		return PMWAL_BENCH_EUSAGE;
	return ret;
}

static json_t *log_section(const struct log_spec *s, struct pmwal *w,
			   const struct run_result *r, uint64_t releases)
{
	struct pmwal_info info;
	double sec = r->runtime_ns / 1e9;

	memset(&info, 0, sizeof(info));
	pmwal_stat(w, &info);
	return json_pack(
	    "{s:I,s:I,s:s,s:I,s:f,s:f,s:f,s:s,s:s,s:s,s:s,s:b,s:b,s:I,s:I}",
	    "record_bytes", (json_int_t)s->record_bytes, "threads",
	    (json_int_t)s->threads, "commit",
	    s->commit_policy == PMWAL_COMMIT_BUFFERED ? "buffered" : "durable",
	    "group_window_us", (json_int_t)s->group_window_us, "appends_per_s",
	    sec > 0 ? r->dir[DIR_WRITE].ops / sec : 0.0, "bytes_per_s",
	    sec > 0 ? r->dir[DIR_WRITE].bytes / sec : 0.0, "records_per_group",
	    info.groups_written ? (double)info.records_written / info.groups_written
				: 0.0,
	    "medium", info.medium, "io_path", info.io_path, "durability", info.durability,
	    "granularity", info.granularity, "emulated", info.emulated, "direct_io",
	    info.direct_io, "releases", (json_int_t)releases, "capacity_bytes",
	    (json_int_t)info.capacity_bytes);
}

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* Whether the run goes on: no Ctrl-C, no appender and no follower failed. */
static bool run_going(struct log_shared *sh)
{
	if (sh->fol && followers_poll(sh->fol))
		__atomic_store_n(&sh->abort, 1, __ATOMIC_RELAXED);
	return !bench_stop && !__atomic_load_n(&sh->abort, __ATOMIC_RELAXED);
}

static void run_threads(struct log_shared *sh, struct log_thread *th,
			struct run_result *r)
{
	const struct log_spec *s = sh->spec;
	struct rusage ru0, ru1;
	uint64_t t0;

	for (uint32_t i = 0; i < s->threads; i++)
		pthread_create(&th[i].tid, NULL, appender, &th[i]);
	pthread_barrier_wait(&sh->start);
	t0 = now_ns();
	if (sh->fol)
		followers_window(sh->fol, t0 + s->ramp_ns);
	progress_begin("log", s->ramp_ns + s->runtime_ns);
	while (run_going(sh) && now_ns() - t0 < s->ramp_ns) {
		progress_update(now_ns() - t0);
		sleep_ns(20000000);
	}
	getrusage(RUSAGE_SELF, &ru0);
	while (run_going(sh) && now_ns() - t0 < s->ramp_ns + s->runtime_ns) {
		progress_update(now_ns() - t0);
		sleep_ns(50000000);
	}
	for (uint32_t i = 0; i < s->threads; i++)
		pthread_join(th[i].tid, NULL);
	getrusage(RUSAGE_SELF, &ru1);
	progress_end();
	uint64_t el = now_ns() - t0;
	r->runtime_ns = el > s->ramp_ns ? el - s->ramp_ns : 0;
	if (r->runtime_ns > s->runtime_ns)
		r->runtime_ns = s->runtime_ns;
	r->usr_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	r->sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	r->ctx_switches =
	    (uint64_t)(ru1.ru_nvcsw + ru1.ru_nivcsw - ru0.ru_nvcsw - ru0.ru_nivcsw);
	r->interrupted = bench_stop;
}

static int threads_init(struct log_shared *sh, struct log_thread *th)
{
	const struct log_spec *s = sh->spec;
	uint64_t rng = now_ns() | 1;

	for (uint32_t i = 0; i < s->threads; i++) {
		th[i].sh = sh;
		th[i].rec = malloc(s->record_bytes);
		if (!th[i].rec || tstats_init(&th[i].st, s->interval_ns, s->runtime_ns))
			return -ENOMEM;
		for (uint32_t k = 0; k + 8 <= s->record_bytes; k += 8) {
			uint64_t v = rng_next(&rng);
			memcpy(th[i].rec + k, &v, 8);
		}
		/* Followers check each record's bytes: one record for all. */
		if (sh->fol)
			memcpy(th[i].rec, followers_record(sh->fol), s->record_bytes);
	}
	return 0;
}

/* The followers open the log and follow it from its first record. */
static int followers_attach(struct log_shared *sh, struct run_result *r)
{
	struct pmwal_info info;

	pmwal_stat(sh->w, &info);
	return followers_open(sh->fol, info.head_lsn, r->errmsg, sizeof(r->errmsg));
}

/* The writer stopped: the followers deliver the rest, and what each
 * delivered is checked; pmwal.log.followers describes it. */
static void followers_finish(struct log_shared *sh, struct run_result *r, json_t *section)
{
	json_t *fs = NULL;
	char msg[sizeof(r->errmsg)];
	int ret =
	    followers_stop(sh->fol, pmwal_durable_lsn(sh->w), &fs, msg, sizeof(msg));

	if (ret && !r->err) {
		r->err = ret;
		snprintf(r->errmsg, sizeof(r->errmsg), "%s", msg);
	}
	json_object_set_new(fs, "releases_held_back",
			    json_integer((json_int_t)sh->releases_held));
	json_object_set_new(fs, "writer_wait_s", json_real(sh->follower_wait_ns / 1e9));
	json_object_set_new(section, "followers", fs);
}

static int log_spec_check(const struct log_spec *s, struct run_result *r)
{
	if (!s->threads || s->threads > LOG_THREADS_MAX || !s->record_bytes) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "--threads must be in 1..%u and "
			 "--record-size above 0",
			 LOG_THREADS_MAX);
		return PMWAL_BENCH_EUSAGE;
	}
	if (s->outstanding && s->commit_policy != PMWAL_COMMIT_BUFFERED) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "--outstanding bounds appends awaiting durability: it needs "
			 "--commit buffered (a durable append waits for itself)");
		return PMWAL_BENCH_EUSAGE;
	}
	if (s->followers > BENCH_FOLLOWERS_MAX) {
		snprintf(r->errmsg, sizeof(r->errmsg), "--followers must be in 0..%u",
			 BENCH_FOLLOWERS_MAX);
		return PMWAL_BENCH_EUSAGE;
	}
	return 0;
}

struct run_result *log_run(const struct log_spec *s, json_t **extra)
{
	struct run_result *r = result_new();
	struct log_shared sh = {.spec = s};
	struct log_thread *th = NULL;
	int ret;

	*extra = NULL;
	if (!r)
		return NULL;
	r->err = log_spec_check(s, r);
	if (r->err)
		return r;
	/* Before the log opens: the followers inherit no handle of it. */
	if (s->followers) {
		r->err = followers_fork(s, &sh.fol, r->errmsg, sizeof(r->errmsg));
		if (r->err)
			return r;
	}
	ret = open_log(s, &sh.w, r->errmsg, sizeof(r->errmsg));
	if (ret) {
		r->err = ret;
		followers_free(sh.fol);
		return r;
	}
	th = calloc(s->threads, sizeof(*th));
	pthread_mutex_init(&sh.release_lock, NULL);
	pthread_barrier_init(&sh.start, NULL, s->threads + 1);
	if (sh.fol && (r->err = followers_attach(&sh, r)))
		goto out;
	if (!th || threads_init(&sh, th)) {
		r->err = -ENOMEM;
		snprintf(r->errmsg, sizeof(r->errmsg), "out of memory");
		goto out;
	}
	run_threads(&sh, th, r);
	for (uint32_t i = 0; i < s->threads; i++) {
		if (th[i].err && !r->err) {
			r->err = th[i].err;
			snprintf(r->errmsg, sizeof(r->errmsg), "%s", th[i].errmsg);
		}
		result_merge_thread(r, &th[i].st);
	}
	struct pmwal_info info;
	if (pmwal_stat(sh.w, &info) == 0) {
		r->emulated = info.emulated;
		snprintf(r->engine, sizeof(r->engine), "pmwal %s %s", info.io_path,
			 info.durability);
	}
	*extra = log_section(s, sh.w, r, sh.releases);
	if (sh.fol)
		followers_finish(&sh, r, *extra);
out:
	followers_free(sh.fol);
	for (uint32_t i = 0; th && i < s->threads; i++) {
		free(th[i].rec);
		tstats_free(&th[i].st);
	}
	free(th);
	pthread_barrier_destroy(&sh.start);
	pthread_mutex_destroy(&sh.release_lock);
	ret = pmwal_close(sh.w);
	if (ret && !r->err) {
		r->err = ret;
		snprintf(r->errmsg, sizeof(r->errmsg), "close: %s", pmwal_strerror(ret));
	}
	return r;
}
