// SPDX-License-Identifier: MIT
/*
 * test_pmr_crash.c - the whole stack on a fake PMR under crashes: engine,
 * mapped device, PMR barrier. A fake PMR keeps unbarriered stores in the
 * process's own memory, so SIGKILL of a writer is a power loss that drops
 * every store not yet barriered, at whatever instruction the kill lands.
 * Each round a child appends self-describing records and reports each ack;
 * the parent kills it at a seeded random moment, then recovery must return
 * every acked record byte-exact (I1), nothing never submitted (I3), and a
 * clean or torn-tail verdict (I4). Crash points: crash_at=N makes the N-th
 * barrier the power failure, in each loss mode, for every N up to a bound
 * (the open's own writes included). Also: recovery of a fake PMR image made
 * by pmr_fake_power_loss() in each loss mode after a clean close.
 */
#include "pmr.h"
#include "pmwal.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOG_BYTES    (4u << 20)
#define ROUNDS	     16
#define ACKS_MAX     (1u << 21)
#define CRASH_POINTS 40
#define REC_MAX	     3000
#define REC_BIG	     13000 /* every 5th record: a group of up to 4 blocks */

static char *dir;
static char target[512];

static void setup(void)
{
	dir = tu_mkdtemp_shm();
	cr_assert_not_null(dir, "mkdtemp: %s", strerror(errno));
	snprintf(target, sizeof(target), "fakepmr:%s/log", dir);
}

static void teardown(void)
{
	tu_rmdir(dir);
	dir = NULL;
}

TestSuite(pmr_crash, .init = setup, .fini = teardown);

struct ack {
	uint64_t lsn, key;
};

static int open_at(const char *t, uint32_t flags, struct pmwal **w, char *msg,
		   size_t msglen)
{
	struct pmwal_options o = {
	    .target = t,
	    .capacity_bytes = LOG_BYTES,
	    .flags = flags,
	    .errmsg_buf = msg,
	    .errmsg_len = msglen,
	};

	return pmwal_open(&o, w);
}

static int open_log(uint32_t flags, struct pmwal **w, char *msg, size_t msglen)
{
	return open_at(target, flags, w, msg, msglen);
}

/* A record: its key, then bytes derived from the key. */
static size_t make_record(uint8_t *buf, uint64_t key)
{
	size_t span = key % 5 == 0 ? REC_BIG : REC_MAX;
	size_t len = 8 + (size_t)(key * 2654435761u % (span - 8));

	memcpy(buf, &key, 8);
	tu_fill(buf + 8, len - 8, key);
	return len;
}

static bool record_ok(const uint8_t *data, size_t len, uint64_t *key)
{
	static __thread uint8_t want[REC_BIG];

	if (len < 8)
		return false;
	memcpy(key, data, 8);
	return make_record(want, *key) == len && memcmp(want, data, len) == 0;
}

/* The child: append until killed (or the log is full), ack each record. */
static void writer(int fd, const char *t, uint64_t keys, uint64_t max)
{
	static uint8_t buf[REC_BIG];
	struct pmwal *w;
	char msg[256];

	if (open_at(t, 0, &w, msg, sizeof(msg)) != 0)
		_exit(3);
	for (uint64_t i = 0; i < max; i++) {
		struct ack a = {.key = keys | i};
		size_t len = make_record(buf, a.key);
		int rc = pmwal_append(w, buf, len, &a.lsn);

		/* full: keep the last 64 records, so the ring wraps and
		 * recovery meets blocks of earlier laps */
		if (rc == PMWAL_EFULL && pmwal_durable_lsn(w) > 64 &&
		    pmwal_release(w, pmwal_durable_lsn(w) - 64) == 0)
			rc = pmwal_append(w, buf, len, &a.lsn);
		if (rc != 0)
			break;
		if (write(fd, &a, sizeof(a)) != sizeof(a))
			_exit(4);
	}
	/* unbounded writers wait for their kill; bounded ones report that
	 * they never met their crash point by exiting */
	if (max == UINT64_MAX)
		pause();
	_exit(0);
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Recover and check every acked record; returns how many records it saw. */
/* @label says which run in messages (the seed, the crash point). */
static uint64_t check_log(const struct ack *acks, size_t nacks, const char *label)
{
	struct pmwal *w;
	struct pmwal_iter *it;
	const struct pmwal_report *rep;
	struct pmwal_info info;
	uint64_t lsn, key, prev = 0, seen = 0, *keys;
	const void *data;
	size_t len, max_lsn = 0;
	char msg[256] = "";
	int rc;

	for (size_t i = 0; i < nacks; i++)
		if (acks[i].lsn > max_lsn)
			max_lsn = acks[i].lsn;
	keys = calloc(max_lsn + 1, sizeof(*keys));
	cr_assert_not_null(keys);
	rc = open_log(0, &w, msg, sizeof(msg));
	cr_assert_eq(rc, 0, "%s: recovery failed: %s (%s)", label, pmwal_strerror(rc),
		     msg);
	rep = pmwal_recovery_report(w);
	cr_assert(rep->verdict == PMWAL_CLEAN || rep->verdict == PMWAL_TORN_TAIL,
		  "%s: verdict %d: %s", label, rep->verdict, rep->detail);
	cr_assert_eq(pmwal_iter_open(w, 0, &it), 0);
	while ((rc = pmwal_iter_next(it, &lsn, &data, &len)) == 1) {
		/* per-record checks assert only on failure: with --full-stats
		 * every passing assert is a message to the runner */
		if (!record_ok(data, len, &key))
			cr_assert_fail("%s: LSN %llu is not a record that was submitted",
				       label, (unsigned long long)lsn);
		if (prev != 0 && lsn != prev + 1)
			cr_assert_fail("%s: hole after LSN %llu", label,
				       (unsigned long long)prev);
		if (lsn <= max_lsn)
			keys[lsn] = key;
		prev = lsn;
		seen++;
	}
	cr_assert_eq(rc, 0, "%s: iterator: %s", label, pmwal_strerror(rc));
	cr_assert_eq(pmwal_stat(w, &info), 0);
	for (size_t i = 0; i < nacks; i++)
		if (acks[i].lsn >= info.head_lsn && keys[acks[i].lsn] != acks[i].key)
			cr_assert_fail("%s: acked LSN %llu lost or wrong", label,
				       (unsigned long long)acks[i].lsn);
	pmwal_iter_close(it);
	cr_assert_eq(pmwal_close(w), 0);
	free(keys);
	return seen;
}

/* Append acks from @fd for @ms milliseconds (-1: until EOF). */
static size_t read_acks(int fd, struct ack *acks, size_t n, int ms)
{
	struct timespec t0, t;
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int left = ms;
	ssize_t got;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (n < ACKS_MAX && poll(&pfd, 1, left) > 0) {
		got = read(fd, &acks[n], sizeof(acks[n]));
		if (got != sizeof(acks[n]))
			break;
		n++;
		if (ms < 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - (int)((t.tv_sec - t0.tv_sec) * 1000 +
				  (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			break;
	}
	return n;
}

Test(pmr_crash, sigkill_loses_only_unacked_records, .timeout = 600)
{
	static struct ack acks[ACKS_MAX];
	size_t nacks = 0;
	uint64_t seed = (uint64_t)time(NULL), s, seen = 0;
	char label[64];
	struct pmwal *w;
	char msg[256] = "";

	if (getenv("PMWAL_TEST_SEED"))
		seed = strtoull(getenv("PMWAL_TEST_SEED"), NULL, 0);
	s = seed | 1;
	cr_log_info("seed %llu (PMWAL_TEST_SEED replays it)", (unsigned long long)seed);
	cr_assert_eq(open_log(PMWAL_OPEN_CREATE, &w, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_eq(pmwal_close(w), 0);

	for (uint64_t round = 1; round <= ROUNDS; round++) {
		int delay_ms = (int)(rng_next(&s) % 150u), fds[2], status;
		pid_t pid;

		cr_assert_eq(pipe(fds), 0);
		pid = fork();
		if (pid == 0) { /* no Criterion calls in the child */
			close(fds[0]);
			writer(fds[1], target, round << 32, UINT64_MAX);
		}
		cr_assert_geq(pid, 0);
		close(fds[1]);
		/* read acks while waiting: a full pipe would stall the writer */
		nacks = read_acks(fds[0], acks, nacks, delay_ms);
		kill(pid, SIGKILL);
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		cr_assert(WIFSIGNALED(status), "writer exited %d before the kill",
			  WEXITSTATUS(status));
		nacks = read_acks(fds[0], acks, nacks, -1);
		close(fds[0]);
		snprintf(label, sizeof(label), "seed %llu, kill %llu",
			 (unsigned long long)seed, (unsigned long long)round);
		seen = check_log(acks, nacks, label);
	}
	cr_log_info("%zu acked records over %d kills, %llu in the log at the end", nacks,
		    ROUNDS, (unsigned long long)seen);
	cr_assert_gt(nacks, 0, "the writer never got an ack");
}

/*
 * Crash-point exploration: the N-th barrier with stores pending loses power
 * in each mode (crash_at=N in the target) and the writer dies there, for
 * every N up to CRASH_POINTS, the open's own writes included. After each,
 * recovery keeps every ack and nothing else appears.
 */
Test(pmr_crash, every_barrier_is_a_crash_point, .timeout = 600)
{
	static struct ack acks[ACKS_MAX];
	size_t nacks = 0, crashes = 0;
	struct pmwal *w;
	char msg[256] = "", t[600];

	cr_assert_eq(open_log(PMWAL_OPEN_CREATE, &w, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_eq(pmwal_close(w), 0);
	for (unsigned mode = PMR_LOSS_DROP_ALL; mode <= PMR_LOSS_GARBAGE_LINES; mode++) {
		for (unsigned n = 1; n <= CRASH_POINTS; n++) {
			int fds[2], status;
			pid_t pid;

			snprintf(t, sizeof(t), "%s,crash_at=%u,crash_mode=%u", target, n,
				 mode);
			cr_assert_eq(pipe(fds), 0);
			pid = fork();
			if (pid == 0) {
				close(fds[0]);
				writer(fds[1], t, (uint64_t)(mode * 1000 + n) << 32,
				       10 * CRASH_POINTS);
			}
			cr_assert_geq(pid, 0);
			close(fds[1]);
			nacks = read_acks(fds[0], acks, nacks, -1);
			close(fds[0]);
			cr_assert_eq(waitpid(pid, &status, 0), pid);
			if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
				cr_assert_fail(
				    "mode %u, crash point %u: writer exited %d "
				    "without reaching it",
				    mode, n, WEXITSTATUS(status));
			crashes++;
			snprintf(t, sizeof(t), "loss mode %u at crash point %u", mode, n);
			check_log(acks, nacks, t);
		}
	}
	cr_log_info("%zu crash points, %zu acked records, all recovered", crashes, nacks);
}

/* A clean log, then unbarriered garbage over its tail region, then a power
 * loss in @mode: recovery still returns every record. */
static void loss_after_close(int mode)
{
	static uint8_t buf[REC_BIG], junk[8192];
	struct pmr_params p = {.target = target};
	struct pmr_region *r;
	struct ack acks[200];
	struct pmwal *w;
	char msg[256] = "", err[512];
	struct pmwal_info info;

	cr_assert_eq(open_log(PMWAL_OPEN_CREATE, &w, msg, sizeof(msg)), 0, "%s", msg);
	for (uint64_t i = 0; i < 200; i++) {
		acks[i].key = i + 1;
		cr_assert_eq(
		    pmwal_append(w, buf, make_record(buf, acks[i].key), &acks[i].lsn), 0);
	}
	cr_assert_eq(pmwal_stat(w, &info), 0);
	cr_assert_str_eq(info.medium, "fakepmr");
	cr_assert_eq(pmwal_close(w), 0);

	/* stores nobody barriered, past the end of the log's writes */
	cr_assert_eq(pmr_open(&p, &r, err, sizeof(err)), 0, "%s", err);
	memset(junk, 0xa5, sizeof(junk));
	pmr_copy_nodrain(r, pmr_size(r) / 2, junk, sizeof(junk));
	cr_assert_eq(pmr_fake_power_loss(r, 99, mode), (int)(sizeof(junk) / 64));
	pmr_close(r);
	snprintf(err, sizeof(err), "loss mode %d after close", mode);
	cr_assert_eq(check_log(acks, 200, err), 200);
}

Test(pmr_crash, loss_modes_never_touch_barriered_records)
{
	static const int modes[] = {PMR_LOSS_DROP_ALL, PMR_LOSS_KEEP_SUBSET,
				    PMR_LOSS_TEAR_WORDS, PMR_LOSS_ZERO_LINES,
				    PMR_LOSS_GARBAGE_LINES};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char path[600];

		loss_after_close(modes[i]);
		snprintf(path, sizeof(path), "%s/log", dir);
		cr_assert_eq(unlink(path), 0);
	}
}
