// SPDX-License-Identifier: MIT
/*
 * ship_standby.c - the following half of a log-shipping pair (ship_primary.c
 * writes): a hot standby on the same host that applies every record its
 * primary makes durable and, when the primary dies, takes the log over and
 * goes on as the primary, its appends continuing the LSNs.
 *
 *   ship_standby LOG [--count N] [--rate R] [--apply-us US]
 *
 * Two things go on at once:
 *  - the main thread follows the log through a read-only handle (it takes no
 *    lock and never slows the writer), applies each record to a tiny state
 *    (records applied, last LSN, a hash of every record in order) and prints
 *    "applied LSN 17: primary 17";
 *  - a second thread waits for the writer lock (PMWAL_OPEN_WAIT_LOCK). The
 *    kernel drops the lock when the primary closes the log or dies, however
 *    it dies; the open then runs recovery and returns a writer handle.
 *
 * The handoff is where a standby loses a record or applies one twice, so it
 * goes by LSN, not by time. The writer handle's recovery is the authority on
 * where the old primary's log ends (LSN X); the follower stops between two
 * records, having applied up to some A <= X, and the records A+1..X it had
 * not delivered yet are read from the writer handle. Then "took over at LSN
 * X", and the standby appends records of its own from X+1: stdin's lines, or
 * with --count N "standby 1" .. "standby N", R a second with --rate R.
 * --apply-us US makes each apply take US microseconds: a standby slower than
 * its primary, whose follower is behind when the primary dies.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmwal.h>

#define FOLLOW_ROUND_MS 100 /* how late the follower may notice the takeover */

/* What the standby replicates: its "database". */
struct state {
	uint64_t records;  /* records applied */
	uint64_t last_lsn; /* the last one (0: none yet) */
	uint64_t hash;	   /* FNV-1a over every (LSN, record) applied, in order */
	uint32_t apply_us; /* work per record (--apply-us: a standby that lags) */
};

/* The takeover thread's result, read by the main thread once done is set. */
struct takeover {
	const char *target;
	struct pmwal *w; /* the writer handle (NULL until open, or if it failed) */
	int rc;
	char err[512];
	atomic_bool done;
};

static void usage(void)
{
	fprintf(stderr, "usage: ship_standby LOG [--count N] [--rate R] [--apply-us US]\n"
			"  follows LOG (written by ship_primary) and takes it over when "
			"its writer dies\n"
			"  --count N      then append N generated records instead of "
			"stdin's lines\n"
			"  --rate R       at most R records a second (0: unpaced)\n"
			"  --apply-us US  spend US microseconds applying each record, "
			"to watch a\n"
			"                 standby that lags behind its primary catch up "
			"at the takeover\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);

	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/*
 * Applies one record. The log hands records over in LSN order, each once;
 * the check makes a broken handoff loud instead of a silently wrong state.
 * 0, or -1 (said on stderr) for a record out of order.
 */
static int apply(struct state *s, uint64_t lsn, const void *data, size_t len)
{
	if (s->last_lsn && lsn != s->last_lsn + 1) {
		fprintf(stderr,
			"ship_standby: LSN %llu came after LSN %llu: a record was %s\n",
			(unsigned long long)lsn, (unsigned long long)s->last_lsn,
			lsn <= s->last_lsn ? "repeated" : "skipped");
		return -1;
	}
	s->hash = fnv1a(s->hash, &lsn, sizeof(lsn));
	s->hash = fnv1a(s->hash, data, len);
	s->last_lsn = lsn;
	s->records++;
	if (s->apply_us) {
		struct timespec work = {.tv_sec = s->apply_us / 1000000,
					.tv_nsec = (long)(s->apply_us % 1000000) * 1000};

		nanosleep(&work, NULL);
	}
	return 0;
}

static void print_state(const char *when, const struct state *s)
{
	printf("%s: %llu records applied, last LSN %llu, hash %016llx\n", when,
	       (unsigned long long)s->records, (unsigned long long)s->last_lsn,
	       (unsigned long long)s->hash);
}

/* Applies and prints every record @it has from here to the durable end. */
static int apply_available(struct pmwal *w, struct pmwal_iter *it, struct state *s,
			   atomic_bool *stop)
{
	uint64_t lsn;
	const void *data;
	size_t len;
	int rc = 0;

	while ((!stop || !atomic_load(stop)) &&
	       (rc = pmwal_iter_next(it, &lsn, &data, &len)) == 1) {
		if (apply(s, lsn, data, len))
			return -1;
		printf("applied LSN %llu: %.*s\n", (unsigned long long)lsn, (int)len,
		       (const char *)data);
	}
	if (rc < 0) {
		/* PMWAL_ERANGE: the primary released records not yet applied
		 * here; the message names the LSN the log starts at now. A
		 * standby that far behind rebuilds from a checkpoint. */
		fprintf(stderr, "ship_standby: %s: %s\n", pmwal_strerror(rc),
			pmwal_errmsg(w));
		return -1;
	}
	return 0;
}

/* The takeover thread: blocks until the primary lets go of the log. */
static void *await_writer_lock(void *arg)
{
	struct takeover *t = arg;
	struct pmwal_options o = {.target = t->target,
				  .flags = PMWAL_OPEN_WAIT_LOCK,
				  .errmsg_buf = t->err,
				  .errmsg_len = sizeof(t->err)};

	t->rc = pmwal_open(&o, &t->w);
	atomic_store(&t->done, true);
	return NULL;
}

/* Follows the primary through @r until the takeover thread is done. */
static int follow(struct pmwal *r, struct takeover *t, struct state *s)
{
	struct pmwal_iter *it;
	int rc = pmwal_iter_open(r, 0, &it); /* 0: from the log's head */

	if (rc) {
		fprintf(stderr, "ship_standby: %s: %s\n", pmwal_strerror(rc),
			pmwal_errmsg(r));
		return -1;
	}
	while (!atomic_load(&t->done)) {
		rc = apply_available(r, it, s, &t->done);
		if (rc)
			break;
		/* Caught up: sleep until the primary's next group is durable,
		 * or one round, to look whether the lock came free. */
		(void)pmwal_iter_wait(it, FOLLOW_ROUND_MS);
	}
	pmwal_iter_close(it);
	return rc;
}

/*
 * The takeover: the records the follower had not delivered yet, read from
 * the writer handle, up to the end its recovery found (@info). Nothing is
 * applied twice (the iterator starts past the last LSN applied) and nothing
 * is skipped (it runs to the recovered end, checked after).
 */
static int catch_up(struct pmwal *w, const struct pmwal_info *info, struct state *s)
{
	uint64_t end_lsn = info->next_lsn - 1;
	struct pmwal_iter *it;

	if (s->last_lsn > end_lsn) {
		/* The new primary would write other records at these LSNs. */
		fprintf(stderr,
			"ship_standby: applied up to LSN %llu, but the log recovered "
			"ends at LSN %llu: this standby is ahead of its log\n",
			(unsigned long long)s->last_lsn, (unsigned long long)end_lsn);
		return -1;
	}
	int rc = pmwal_iter_open(w, s->last_lsn ? s->last_lsn + 1 : 0, &it);

	if (rc) {
		fprintf(stderr, "ship_standby: %s: %s\n", pmwal_strerror(rc),
			pmwal_errmsg(w));
		return -1;
	}
	uint64_t followed = s->records;

	rc = apply_available(w, it, s, NULL);
	pmwal_iter_close(it);
	if (rc)
		return -1;
	printf("standby: caught up %llu records the follower had not delivered\n",
	       (unsigned long long)(s->records - followed));
	if (end_lsn >= info->head_lsn && s->last_lsn != end_lsn) {
		fprintf(stderr,
			"ship_standby: the log recovered ends at LSN %llu, but its "
			"records stopped at LSN %llu\n",
			(unsigned long long)end_lsn, (unsigned long long)s->last_lsn);
		return -1;
	}
	return 0;
}

/* Sleeps until the next record is due: R a second, on a fixed schedule. */
static void pace(struct timespec *due, uint64_t rate)
{
	if (!rate)
		return;
	due->tv_nsec += (long)(1000000000u / rate);
	due->tv_sec += due->tv_nsec / 1000000000;
	due->tv_nsec %= 1000000000;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, due, NULL);
}

/* The next record: stdin's next non-empty line, or "standby I". 0 at the end. */
static size_t next_record(uint64_t count, uint64_t i, char **line, size_t *cap)
{
	if (count) {
		if (i > count)
			return 0;
		if (*cap < 32) {
			free(*line);
			*cap = 32;
			*line = malloc(*cap);
			if (!*line)
				return 0;
		}
		return (size_t)snprintf(*line, *cap, "standby %llu",
					(unsigned long long)i);
	}
	for (;;) {
		ssize_t n = getline(line, cap, stdin);

		if (n < 0)
			return 0;
		if (n && (*line)[n - 1] == '\n')
			(*line)[--n] = 0;
		if (n)
			return (size_t)n;
	}
}

/* Goes on as the primary: appends, acks once durable, applies. */
static int serve(struct pmwal *w, struct state *s, uint64_t count, uint64_t rate)
{
	struct timespec due;
	char *line = NULL;
	size_t cap = 0, len;
	int rc = 0;

	clock_gettime(CLOCK_MONOTONIC, &due);
	for (uint64_t i = 1; (len = next_record(count, i, &line, &cap)); i++) {
		uint64_t lsn;

		rc = pmwal_append(w, line, len, &lsn);
		if (rc) {
			fprintf(stderr, "ship_standby: %s: %s\n", pmwal_strerror(rc),
				pmwal_errmsg(w));
			break;
		}
		printf("acked LSN %llu: %.*s\n", (unsigned long long)lsn, (int)len, line);
		rc = apply(s, lsn, line, len);
		if (rc)
			break;
		pace(&due, rate);
	}
	free(line);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"count", required_argument, NULL, 'n'},
					   {"rate", required_argument, NULL, 'r'},
					   {"apply-us", required_argument, NULL, 'a'},
					   {"help", no_argument, NULL, 'h'},
					   {0}};
	uint64_t count = 0, rate = 0, apply_us = 0;
	int opt;

	while ((opt = getopt_long(argc, argv, "n:r:a:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'a':
			if (parse_u64(optarg, &apply_us) || apply_us > 10000000) {
				usage();
				return 2;
			}
			break;
		case 'n':
			if (parse_u64(optarg, &count) || !count) {
				usage();
				return 2;
			}
			break;
		case 'r':
			if (parse_u64(optarg, &rate) || rate > 1000000000u) {
				usage();
				return 2;
			}
			break;
		default:
			usage();
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind != argc - 1) {
		usage();
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	struct takeover t = {.target = argv[optind]};
	char err[512] = "";
	struct pmwal_options o = {.target = t.target,
				  .flags = PMWAL_OPEN_READONLY,
				  .errmsg_buf = err,
				  .errmsg_len = sizeof(err)};
	struct state s = {.hash = 0xcbf29ce484222325ull, .apply_us = (uint32_t)apply_us};
	struct pmwal *r;
	pthread_t thread;
	long pid = 0;

	int rc = pmwal_open(&o, &r);

	if (rc) {
		fprintf(stderr, "ship_standby: %s: %s\n", pmwal_strerror(rc), err);
		return 1;
	}
	(void)pmwal_writer_pid(t.target, &pid);
	printf("standby: following %s (writer pid %ld), waiting for its writer lock\n",
	       t.target, pid);
	rc = pthread_create(&thread, NULL, await_writer_lock, &t);
	if (rc) {
		fprintf(stderr, "ship_standby: pthread_create: %s\n", strerror(rc));
		pmwal_close(r);
		return 1;
	}
	/* On failure the thread may still wait for the lock: exit leaves it. */
	if (follow(r, &t, &s)) {
		pmwal_close(r);
		return 1;
	}
	pthread_join(thread, NULL);
	if (t.rc) {
		fprintf(stderr, "ship_standby: taking the log over: %s: %s\n",
			pmwal_strerror(t.rc), t.err);
		pmwal_close(r);
		return 1;
	}
	struct pmwal_info info;
	const struct pmwal_report *rep = pmwal_recovery_report(t.w);

	pmwal_stat(t.w, &info);
	printf("standby: writer lock taken; recovery: %s; the follower had applied up to "
	       "LSN %llu\n",
	       rep->detail, (unsigned long long)s.last_lsn);
	rc = catch_up(t.w, &info, &s);
	pmwal_close(r); /* caught up: the writer handle reads from here on */
	if (rc) {
		pmwal_close(t.w);
		return 1;
	}
	printf("took over at LSN %llu\n", (unsigned long long)(info.next_lsn - 1));
	print_state("state at takeover", &s);
	rc = serve(t.w, &s, count, rate);

	int close_rc = pmwal_close(t.w);

	if (close_rc)
		fprintf(stderr, "ship_standby: close: %s\n", pmwal_strerror(close_rc));
	print_state("state at exit", &s);
	return rc || close_rc ? 1 : 0;
}
