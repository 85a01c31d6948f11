// SPDX-License-Identifier: MIT
/*
 * stress_threads.c - the public API from many threads at once, on each kind
 * of medium here (a file through io_uring with one and with four groups in
 * flight, emulated pmem, a fake PMR): eight
 * appenders mixing durable and async appends, each also syncing and
 * releasing now and then, then every record left is read back and checked.
 * A plain program rather than a Criterion suite so that it also runs under
 * ThreadSanitizer (-DPMWAL_TSAN=ON), where Criterion's runner cannot start;
 * in every build it is the check that group commit, direct groups on mapped
 * media, callbacks and release hold together under contention, with two
 * follower threads reading the log live through a read-only handle. Refused calls
 * from every thread check that each error message read back is whole.
 */
#include "pmwal.h"
#include "testutil.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define EACH	2000

static struct pmwal *w;
static atomic_int async_ok, async_failed;
static atomic_int failures;

static void fail(const char *what, int rc)
{
	fprintf(stderr, "stress_threads: %s: %s (%s)\n", what, pmwal_strerror(rc),
		pmwal_errmsg(w));
	atomic_fetch_add(&failures, 1);
}

static void on_durable(void *arg, uint64_t lsn, int status)
{
	(void)arg;
	(void)lsn;
	atomic_fetch_add(status ? &async_failed : &async_ok, 1);
}

/* A record: its 8-byte key (thread, index), then bytes derived from it. */
static size_t rec_len(long id, int i)
{
	return i % 13 == 0 ? 4000 + (size_t)((id * 131 + i * 977) % 9000)
			   : 8 + (size_t)((id * 7919 + i * 31) % 999);
}

/*
 * Two refusals at once from many threads (a release beyond the durable end,
 * an iterator beyond the log): the message each reads back must be one whole
 * message, never two written over each other.
 */
static void refusals(const char *target)
{
	struct pmwal_iter *it;
	size_t tl = strlen(target);

	if (pmwal_release(w, UINT64_MAX / 2) != PMWAL_ERANGE ||
	    pmwal_iter_open(w, UINT64_MAX / 2, &it) != PMWAL_ERANGE) {
		fail("a refused call was not refused", 0);
		return;
	}
	const char *m = pmwal_errmsg(w);

	if (strncmp(m, target, tl) != 0 || m[tl] != ':' ||
	    (!strstr(m, ": release below LSN ") && !strstr(m, ": iterator from LSN ")) ||
	    strstr(m + tl + 1, target)) {
		fprintf(stderr, "stress_threads: a torn error message: \"%s\"\n", m);
		atomic_fetch_add(&failures, 1);
	}
}

static const char *run_target;
static atomic_int appenders_left;

/* Beside the appenders, a thread that only syncs and waits: it must be woken
 * by every kind of group, direct ones on mapped media included. */
static void *syncer(void *arg)
{
	(void)arg;
	while (atomic_load(&appenders_left) > 0) {
		int rc = pmwal_sync(w);

		if (!rc)
			rc = pmwal_wait(w, pmwal_durable_lsn(w));
		if (rc) {
			fail("sync beside the appenders", rc);
			return NULL;
		}
	}
	return NULL;
}

static void *appender(void *arg)
{
	long id = (long)arg;
	static _Thread_local uint8_t buf[13000];

	for (int i = 0; i < EACH; i++) {
		size_t len = rec_len(id, i);
		uint64_t lsn;
		int rc;

		uint64_t key = (uint64_t)id << 32 | (uint64_t)i;

		memcpy(buf, &key, 8);
		tu_fill(buf + 8, len - 8, key);
		if (i % 10 == 3)
			rc = pmwal_append_async(w, buf, len, on_durable, NULL, &lsn);
		else
			rc = pmwal_append(w, buf, len, &lsn);
		if (rc) {
			fail("append", rc);
			return NULL;
		}
		if (i % 50 == 7)
			refusals(run_target);
		if (i % 400 == 399) {
			if ((rc = pmwal_sync(w)) != 0)
				fail("sync", rc);
			uint64_t d = pmwal_durable_lsn(w);

			if (d > 2000 && (rc = pmwal_release(w, d - 2000)) != 0)
				fail("release", rc);
		}
	}
	return NULL;
}

/*
 * Followers: threads each with an iterator on one read-only handle (as
 * another process's would be), reading while the appenders write: every
 * record they get is one some thread appended, in LSN order, never twice;
 * behind a release they start again at the head.
 */
#define FOLLOWERS 2
static struct pmwal *r;
static _Atomic uint64_t final_lsn;

static int record_ok(uint64_t lsn, const void *data, size_t len)
{
	uint64_t key = 0;

	(void)lsn;
	if (len >= 8)
		memcpy(&key, data, 8);
	long id = (long)(key >> 32);
	int i = (int)(key & 0xffffffffu);

	return len >= 8 && id < THREADS && i < EACH && rec_len(id, i) == len &&
	       tu_check((const uint8_t *)data + 8, len - 8, key);
}

static void *follower(void *arg)
{
	struct pmwal_iter *it = NULL;
	uint64_t lsn, last = 0, n = 0;
	const void *data;
	size_t len;
	bool resumed = true;
	int rc;

	(void)arg;
	if ((rc = pmwal_iter_open(r, 0, &it)) != 0) {
		fail("follower iter_open", rc);
		return NULL;
	}
	for (;;) {
		rc = pmwal_iter_next(it, &lsn, &data, &len);
		if (rc == 1) {
			if (!record_ok(lsn, data, len) || lsn <= last ||
			    (lsn != last + 1 && !resumed)) {
				fprintf(stderr,
					"stress_threads: follower: LSN %llu after %llu%s\n",
					(unsigned long long)lsn, (unsigned long long)last,
					record_ok(lsn, data, len) ? "" : ", not a record appended");
				atomic_fetch_add(&failures, 1);
				break;
			}
			last = lsn;
			resumed = false;
			n++;
			continue;
		}
		if (rc == PMWAL_ERANGE) { /* behind a release: from the head */
			pmwal_iter_close(it);
			it = NULL;
			if ((rc = pmwal_iter_open(r, 0, &it)) != 0) {
				fail("follower iter_open again", rc);
				break;
			}
			resumed = true;
			continue;
		}
		if (rc < 0) {
			fprintf(stderr, "stress_threads: follower: %s (%s)\n", pmwal_strerror(rc),
				pmwal_errmsg(r));
			atomic_fetch_add(&failures, 1);
			break;
		}
		uint64_t end = atomic_load(&final_lsn);

		if (end && last >= end)
			break;
		(void)pmwal_iter_wait(it, 50);
	}
	pmwal_iter_close(it);
	if (!n)
		atomic_fetch_add(&failures, 1);
	return NULL;
}

/* Every record from the head on is one some thread appended, in LSN order. */
static int check(const char *target)
{
	struct pmwal_options o = {.target = target};
	struct pmwal_iter *it;
	uint64_t lsn, prev = 0, n = 0;
	const void *data;
	size_t len;
	int rc;

	if ((rc = pmwal_open(&o, &w)) != 0) {
		fprintf(stderr, "stress_threads: reopen %s: %s\n", target,
			pmwal_strerror(rc));
		return 1;
	}
	if ((rc = pmwal_iter_open(w, 0, &it)) != 0) {
		fail("iter_open", rc);
		return 1;
	}
	while ((rc = pmwal_iter_next(it, &lsn, &data, &len)) == 1) {
		uint64_t key = 0;

		if (len >= 8)
			memcpy(&key, data, 8);
		long id = (long)(key >> 32);
		int i = (int)(key & 0xffffffffu);
		int ok = len >= 8 && id < THREADS && i < EACH && rec_len(id, i) == len &&
			 tu_check((const uint8_t *)data + 8, len - 8, key);

		if (!ok || (prev && lsn != prev + 1)) {
			fprintf(stderr,
				"stress_threads: %s: LSN %llu is not a record appended\n",
				target, (unsigned long long)lsn);
			return 1;
		}
		prev = lsn;
		n++;
	}
	if (rc) {
		fail("iter_next", rc);
		return 1;
	}
	pmwal_iter_close(it);
	pmwal_close(w);
	printf("%s: %llu records read back after releases, in order\n", target,
	       (unsigned long long)n);
	return n == 0;
}

static int run(const char *target, uint32_t groups_in_flight)
{
	struct pmwal_options o = {.target = target,
				  .capacity_bytes = 64u << 20,
				  .flags = PMWAL_OPEN_FORMAT, /* a new log each run */
				  .groups_in_flight = groups_in_flight};
	pthread_t t[THREADS];
	int rc;

	run_target = target;
	atomic_store(&async_ok, 0);
	atomic_store(&async_failed, 0);
	if ((rc = pmwal_open(&o, &w)) != 0) {
		fprintf(stderr, "stress_threads: open %s: %s\n", target,
			pmwal_strerror(rc));
		return 1;
	}
	pthread_t st, ft[FOLLOWERS];
	struct pmwal_options ro = {.target = target, .flags = PMWAL_OPEN_READONLY};

	atomic_store(&final_lsn, 0);
	if ((rc = pmwal_open(&ro, &r)) != 0) {
		fprintf(stderr, "stress_threads: open %s read-only: %s\n", target,
			pmwal_strerror(rc));
		return 1;
	}
	for (int i = 0; i < FOLLOWERS; i++)
		pthread_create(&ft[i], NULL, follower, NULL);
	atomic_store(&appenders_left, 1);
	pthread_create(&st, NULL, syncer, NULL);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, appender, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	atomic_store(&appenders_left, 0);
	pthread_join(st, NULL);
	if ((rc = pmwal_sync(w)) != 0) /* the async ones too */
		fail("sync", rc);
	uint64_t durable = pmwal_durable_lsn(w);

	atomic_store(&final_lsn, durable);
	for (int i = 0; i < FOLLOWERS; i++)
		pthread_join(ft[i], NULL);
	pmwal_close(r);

	if ((rc = pmwal_close(w)) != 0)
		fail("close", rc);
	int expect_async = THREADS * (EACH / 10);

	printf("%s: %d threads, %u groups in flight, durable LSN %llu, %d async callbacks "
	       "ok, %d failed\n",
	       target, THREADS, groups_in_flight ? groups_in_flight : 1,
	       (unsigned long long)durable, atomic_load(&async_ok),
	       atomic_load(&async_failed));
	if (durable != (uint64_t)THREADS * EACH ||
	    atomic_load(&async_ok) != expect_async || atomic_load(&failures))
		return 1;
	return check(target);
}

int main(void)
{
	char *disk = tu_mkdtemp(), *shm = tu_mkdtemp_shm();
	char file[512], pmem[512], fake[512];
	int bad = 0;

	if (!disk || !shm) {
		fprintf(stderr, "stress_threads: no temporary directory\n");
		return 1;
	}
	snprintf(file, sizeof(file), "%s/log", disk);
	snprintf(pmem, sizeof(pmem), "pmem:%s/log", shm);
	snprintf(fake, sizeof(fake), "fakepmr:%s/fake", shm);
	bad |= run(file, 1);
	bad |= run(file, 4); /* several group writes at once, acks in order */
	setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 1);
	bad |= run(pmem, 0);
	unsetenv("PMEM2_FORCE_GRANULARITY");
	bad |= run(fake, 0);
	tu_rmdir(disk);
	tu_rmdir(shm);
	printf("stress_threads: %s\n", bad ? "FAILED" : "all passed");
	return bad;
}
