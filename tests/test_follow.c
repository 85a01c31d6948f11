// SPDX-License-Identifier: MIT
/*
 * test_follow.c - several handles on one log (issue 15): a read-only handle
 * follows what a writer makes durable, across its release, its close and
 * the next writer's open; a standby waits on the lock and takes over; a
 * writer whose lock another breaks is fenced. On a file (io_uring), on
 * emulated pmem and on a fake PMR. Processes killed and stopped at random
 * points are `pmwal crashtest --mode takeover` (crashtest_takeover).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "other_user.h"
#include "testutil.h"

static char *dir;
static char target[512];
static char errbuf[512];

enum kind { K_FILE, K_PMEM, K_FAKEPMR };

static void use(enum kind k)
{
	dir = k == K_FILE ? tu_mkdtemp() : tu_mkdtemp_shm();
	cr_assert_not_null(dir);
	/* Each test its own status pages: what it finds there is its own. */
	char *st = tu_path(dir, "status");

	cr_assert_eq(mkdir(st, 0755), 0);
	setenv("PMWAL_STATUS_DIR", st, 1);
	free(st);
	snprintf(target, sizeof(target), "%s%s/log", k == K_PMEM ? "pmem:" : k == K_FAKEPMR ? "fakepmr:" : "", dir);
}

static void teardown(void)
{
	if (dir)
		tu_rmdir(dir);
	dir = NULL;
}

static struct pmwal_options opts(uint32_t flags, uint64_t cap)
{
	struct pmwal_options o = {0};

	o.target = target;
	o.flags = flags;
	o.capacity_bytes = cap;
	o.errmsg_buf = errbuf;
	o.errmsg_len = sizeof(errbuf);
	return o;
}

static struct pmwal *open_log(uint32_t flags, uint64_t cap)
{
	struct pmwal_options o = opts(flags, cap);
	struct pmwal *w = NULL;
	int rc = pmwal_open(&o, &w);

	cr_assert_eq(rc, 0, "open %s (flags 0x%x): %s (%s)", target, flags, pmwal_strerror(rc),
		     errbuf);
	return w;
}

/* Record @lsn: 1 to 3000 bytes that say which LSN they are. */
static size_t rec_len(uint64_t lsn)
{
	return 1 + (size_t)((lsn * 2654435761u) % 3000);
}

static void append_n(struct pmwal *w, uint64_t n)
{
	static uint8_t buf[3000];

	for (uint64_t i = 0; i < n; i++) {
		struct pmwal_info info;
		uint64_t lsn;

		pmwal_stat(w, &info);
		tu_fill(buf, rec_len(info.next_lsn), info.next_lsn);
		int rc = pmwal_append(w, buf, rec_len(info.next_lsn), &lsn);

		cr_assert_eq(rc, 0, "append: %s (%s)", pmwal_strerror(rc), pmwal_errmsg(w));
		cr_assert_eq(lsn, info.next_lsn);
	}
}

/* Reads what @it has now; checks each record's bytes and that LSNs follow
 * *@last. Returns how many it read; the last call's rc in *@rc. */
static uint64_t drain(struct pmwal_iter *it, uint64_t *last, int *rc_out)
{
	uint64_t lsn, n = 0;
	const void *data;
	size_t len;
	int rc;

	while ((rc = pmwal_iter_next(it, &lsn, &data, &len)) == 1) {
		cr_assert_eq(lsn, *last + 1, "LSN %llu after %llu", (unsigned long long)lsn,
			     (unsigned long long)*last);
		cr_assert_eq(len, rec_len(lsn));
		cr_assert(tu_check(data, len, lsn), "LSN %llu: wrong bytes", (unsigned long long)lsn);
		*last = lsn;
		n++;
	}
	*rc_out = rc;
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* ---- a reader follows the writer ------------------------------------------ */

static void reader_follows(enum kind k)
{
	use(k);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4u << 20);
	struct pmwal *r = open_log(PMWAL_OPEN_READONLY, 0);
	struct pmwal_iter *it;
	uint64_t last = 0;
	int rc;

	cr_assert_eq(pmwal_iter_open(r, 0, &it), 0);
	cr_assert_eq(drain(it, &last, &rc), 0);
	cr_assert_eq(rc, 0);
	/* Nothing new: the wait times out, and sleeps meanwhile. */
	double t0 = now_s(), c0 = cpu_s();

	cr_assert_eq(pmwal_iter_wait(it, 300), 0);
	double waited = now_s() - t0, cpu = cpu_s() - c0;

	cr_assert(waited >= 0.29, "returned after %.3f s of a 0.3 s wait", waited);
	cr_assert(cpu < 0.1, "used %.3f s of CPU waiting 0.3 s: it spins", cpu);
	cr_assert_eq(pmwal_iter_wait(it, 0), 0);
	for (uint64_t round = 1; round <= 50; round++) {
		append_n(w, round % 7 + 1);
		cr_assert_eq(pmwal_iter_wait(it, 5000), 1, "round %llu: not woken",
			     (unsigned long long)round);
		drain(it, &last, &rc);
		cr_assert_eq(rc, 0);
		cr_assert_eq(last, pmwal_durable_lsn(w), "round %llu: read to %llu of %llu",
			     (unsigned long long)round, (unsigned long long)last,
			     (unsigned long long)pmwal_durable_lsn(w));
	}
	/* The writer closes; the reader has everything and waits for more. */
	cr_assert_eq(pmwal_close(w), 0);
	cr_assert_eq(pmwal_iter_wait(it, 50), 0);
	/* The next writer's records reach it too. */
	w = open_log(0, 0);
	append_n(w, 5);
	cr_assert_eq(pmwal_iter_wait(it, 5000), 1, "not woken by the next writer");
	drain(it, &last, &rc);
	cr_assert_eq(rc, 0);
	cr_assert_eq(last, pmwal_durable_lsn(w));
	cr_assert_eq(pmwal_close(w), 0);
	/* And those of a writer opened and closed while it was not looking,
	 * which leaves only the superblock to say so. */
	w = open_log(0, 0);
	append_n(w, 3);
	uint64_t end = pmwal_durable_lsn(w);

	cr_assert_eq(pmwal_close(w), 0);
	cr_assert_eq(pmwal_iter_wait(it, 5000), 1, "a closed writer's records not seen");
	drain(it, &last, &rc);
	cr_assert_eq(rc, 0);
	cr_assert_eq(last, end);
	pmwal_iter_close(it);
	pmwal_close(r);
}

Test(follow, file_reader_follows_the_writer_and_the_next, .fini = teardown)
{
	reader_follows(K_FILE);
}
Test(follow, pmem_reader_follows_the_writer_and_the_next, .fini = teardown)
{
	reader_follows(K_PMEM);
}
Test(follow, fakepmr_reader_follows_the_writer_and_the_next, .fini = teardown)
{
	reader_follows(K_FAKEPMR);
}

/* ---- a reader behind a release ------------------------------------------- */

static void reader_behind_release(enum kind k)
{
	use(k);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 66 * 4096); /* 64 ring blocks */
	struct pmwal *r = open_log(PMWAL_OPEN_READONLY, 0);
	struct pmwal_iter *it;
	uint64_t last = 0, lsn;
	const void *data;
	size_t len;
	int rc;

	append_n(w, 10);
	cr_assert_eq(pmwal_iter_open(r, 0, &it), 0);
	cr_assert_eq(pmwal_iter_next(it, &lsn, &data, &len), 1);
	last = lsn;
	/* The writer releases past it and wraps the ring over its blocks. */
	for (int lap = 0; lap < 3; lap++) {
		cr_assert_eq(pmwal_release(w, pmwal_durable_lsn(w) + 1), 0, "%s", pmwal_errmsg(w));
		append_n(w, 40);
	}
	drain(it, &last, &rc);
	cr_assert_eq(rc, PMWAL_ERANGE, "a reader behind a release got %s, not ERANGE",
		     pmwal_strerror(rc));
	struct pmwal_info info;

	pmwal_stat(w, &info);
	char want[64];

	snprintf(want, sizeof(want), "starts at LSN %llu", (unsigned long long)info.head_lsn);
	cr_assert(strstr(pmwal_errmsg(r), "resume from a checkpoint"), "%s", pmwal_errmsg(r));
	cr_assert(strstr(pmwal_errmsg(r), want), "'%s' does not say '%s'", pmwal_errmsg(r), want);
	/* From the head it names, it reads on. */
	pmwal_iter_close(it);
	cr_assert_eq(pmwal_iter_open(r, info.head_lsn, &it), 0, "%s", pmwal_errmsg(r));
	last = info.head_lsn - 1;
	drain(it, &last, &rc);
	cr_assert_eq(rc, 0, "%s", pmwal_errmsg(r));
	cr_assert_eq(last, pmwal_durable_lsn(w));
	pmwal_iter_close(it);
	pmwal_close(r);
	pmwal_close(w);
}

Test(follow, file_reader_behind_a_release_is_told_where_to_resume, .fini = teardown)
{
	reader_behind_release(K_FILE);
}
Test(follow, pmem_reader_behind_a_release_is_told_where_to_resume, .fini = teardown)
{
	reader_behind_release(K_PMEM);
}
Test(follow, fakepmr_reader_behind_a_release_is_told_where_to_resume, .fini = teardown)
{
	reader_behind_release(K_FAKEPMR);
}

/* ---- a writer whose lock is broken is fenced -------------------------------- */

static void fenced(enum kind k)
{
	use(k);
	struct pmwal *a = open_log(PMWAL_OPEN_CREATE, 4u << 20);

	append_n(a, 10);
	/* A second writer is refused; one that breaks the lock is not. */
	struct pmwal_options o = opts(0, 0);
	struct pmwal *b = NULL;

	cr_assert_eq(pmwal_open(&o, &b), -EBUSY);
	b = open_log(PMWAL_OPEN_BREAK_LOCK, 0);
	uint8_t buf[16] = {0};
	uint64_t lsn;

	/* The old writer acknowledges nothing more, and says why. */
	cr_assert_eq(pmwal_append(a, buf, sizeof(buf), &lsn), PMWAL_EFENCED);
	cr_assert(strstr(pmwal_errmsg(a), "took the log over"), "%s", pmwal_errmsg(a));
	cr_assert_eq(pmwal_sync(a), PMWAL_EFENCED);
	cr_assert_eq(pmwal_release(a, 5), PMWAL_EFENCED);
	cr_assert_eq(pmwal_durable_lsn(a), 10);
	/* The new one continues its LSNs. */
	append_n(b, 5);
	cr_assert_eq(pmwal_durable_lsn(b), 15);
	cr_assert_eq(pmwal_close(a), PMWAL_EFENCED);
	/* Its old holder gone, the breaker takes the lock at its next group
	 * (tried every 10 ms at most): others are refused again. */
	usleep(20000);
	append_n(b, 1);
	cr_assert_eq(pmwal_open(&o, &a), -EBUSY, "the lock was not taken back: %s", errbuf);
	cr_assert_eq(pmwal_close(b), 0);
	struct pmwal_report rep;

	o = opts(0, 0);
	cr_assert_eq(pmwal_verify(&o, &rep), 0);
	cr_assert_eq(rep.verdict, PMWAL_CLEAN, "%s", rep.detail);
	cr_assert_eq(rep.records, 16);
	struct pmwal *r = open_log(PMWAL_OPEN_READONLY, 0);
	struct pmwal_iter *it;
	uint64_t last = 0;
	int rc;

	cr_assert_eq(pmwal_iter_open(r, 0, &it), 0);
	drain(it, &last, &rc);
	cr_assert_eq(rc, 0);
	cr_assert_eq(last, 16);
	pmwal_iter_close(it);
	pmwal_close(r);
}

Test(follow, file_a_writer_whose_lock_is_broken_is_fenced, .fini = teardown)
{
	fenced(K_FILE);
}
Test(follow, pmem_a_writer_whose_lock_is_broken_is_fenced, .fini = teardown)
{
	fenced(K_PMEM);
}
Test(follow, fakepmr_a_writer_whose_lock_is_broken_is_fenced, .fini = teardown)
{
	fenced(K_FAKEPMR);
}

/* ---- a standby takes over ------------------------------------------------ */

struct standby {
	struct pmwal *w;
	int rc;
	double opened_at;
};

static void *standby_main(void *arg)
{
	struct standby *s = arg;
	struct pmwal_options o = opts(PMWAL_OPEN_WAIT_LOCK, 0);
	static char err[512];

	o.errmsg_buf = err;
	o.errmsg_len = sizeof(err);
	s->rc = pmwal_open(&o, &s->w);
	s->opened_at = now_s();
	return NULL;
}

static void standby_takes_over(enum kind k)
{
	use(k);
	struct pmwal *a = open_log(PMWAL_OPEN_CREATE, 4u << 20);
	struct standby s = {0};
	pthread_t t;

	append_n(a, 7);
	cr_assert_eq(pthread_create(&t, NULL, standby_main, &s), 0);
	usleep(100000);
	cr_assert_null(s.w, "the standby opened while the writer held the log");
	append_n(a, 3);
	double closed_at = now_s();

	cr_assert_eq(pmwal_close(a), 0);
	pthread_join(t, NULL);
	cr_assert_eq(s.rc, 0, "standby: %s", pmwal_strerror(s.rc));
	cr_assert(s.opened_at - closed_at < 1.0, "took %.3f s to take over",
		  s.opened_at - closed_at);
	cr_assert_eq(pmwal_durable_lsn(s.w), 10);
	append_n(s.w, 2);
	cr_assert_eq(pmwal_durable_lsn(s.w), 12);
	cr_assert_eq(pmwal_close(s.w), 0);
}

Test(follow, file_a_standby_waits_for_the_lock_and_continues, .fini = teardown)
{
	standby_takes_over(K_FILE);
}
Test(follow, pmem_a_standby_waits_for_the_lock_and_continues, .fini = teardown)
{
	standby_takes_over(K_PMEM);
}
Test(follow, fakepmr_a_standby_waits_for_the_lock_and_continues, .fini = teardown)
{
	standby_takes_over(K_FAKEPMR);
}

/* ---- the status page attacked ---------------------------------------------- */

/* The status page of the log in the test's directory ("" if none). */
static void page_path(char *buf, size_t len)
{
	char *st = tu_path(dir, "status");
	DIR *d = opendir(st);
	struct dirent *e;

	buf[0] = 0;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "pmwal-", 6))
			snprintf(buf, len, "%s/%s", st, e->d_name);
	if (d)
		closedir(d);
	free(st);
}

/* A writer never runs without its page: followers would learn of nothing
 * until it closed, and its lock could not be broken. A follower without one
 * goes by the superblock. */
Test(follow, no_status_page_refuses_the_writer_by_name_and_leaves_followers_the_superblock,
     .fini = teardown)
{
	use(K_FILE);
	/* Where pages go is not a directory: none is made. */
	char *st = tu_path(dir, "status"), *good = tu_path(dir, "status2");
	struct pmwal_options o = opts(PMWAL_OPEN_CREATE, 4u << 20);
	struct pmwal *w = NULL;

	rmdir(st);
	cr_assert_eq(mkfifo(st, 0644), 0);
	cr_assert_neq(pmwal_open(&o, &w), 0, "a writer ran without its status page");
	cr_assert_null(w);
	cr_assert(strstr(errbuf, "status directory") && strstr(errbuf, st) &&
		      strstr(errbuf, "PMWAL_STATUS_DIR"),
		  "%s", errbuf);
	cr_assert_eq(mkdir(good, 0700), 0);
	setenv("PMWAL_STATUS_DIR", good, 1);
	w = open_log(PMWAL_OPEN_CREATE, 4u << 20);
	setenv("PMWAL_STATUS_DIR", st, 1); /* the follower finds none */
	struct pmwal *r = open_log(PMWAL_OPEN_READONLY, 0);
	struct pmwal_iter *it;
	uint64_t last = 0;
	int rc;

	cr_assert_eq(pmwal_iter_open(r, 0, &it), 0);
	append_n(w, 20);
	/* Unfollowed while it writes (nothing says what is durable) ... */
	cr_assert_eq(pmwal_iter_wait(it, 100), 0);
	cr_assert_eq(pmwal_close(w), 0);
	/* ... and all of it once its close wrote the superblock. */
	cr_assert_eq(pmwal_iter_wait(it, 5000), 1);
	drain(it, &last, &rc);
	cr_assert_eq(rc, 0);
	cr_assert_eq(last, 20);
	pmwal_iter_close(it);
	pmwal_close(r);
	unlink(st);
	free(st);
	free(good);
}

Test(follow, a_damaged_status_page_never_makes_a_reader_return_wrong_records,
     .fini = teardown)
{
	use(K_FILE);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4u << 20);
	struct pmwal *r = open_log(PMWAL_OPEN_READONLY, 0);
	struct pmwal_iter *it;
	char path[1024];
	uint64_t last = 0;
	int rc;

	append_n(w, 5);
	cr_assert_eq(pmwal_iter_open(r, 0, &it), 0);
	drain(it, &last, &rc);
	cr_assert_eq(last, 5);
	page_path(path, sizeof(path));
	cr_assert(path[0], "no status page");
	/* Every byte of the page, one at a time, set to 0xff then back: the
	 * reader may stall, wait or fail, but whatever it returns is right. */
	int fd = open(path, O_RDWR);

	cr_assert(fd >= 0);
	for (off_t off = 0; off < 128; off++) {
		uint8_t old, ff = 0xff;

		cr_assert_eq(pread(fd, &old, 1, off), 1);
		cr_assert_eq(pwrite(fd, &ff, 1, off), 1);
		(void)pmwal_iter_wait(it, 0);
		uint64_t l = last;

		drain(it, &l, &rc); /* checks bytes and order */
		cr_assert(rc == 0 || rc == PMWAL_ECORRUPT || rc == PMWAL_ERANGE,
			  "byte %lld: %s", (long long)off, pmwal_strerror(rc));
		cr_assert_eq(pwrite(fd, &old, 1, off), 1);
	}
	close(fd);
	pmwal_iter_close(it);
	pmwal_close(r);
	/* The writer was never disturbed by what it does not read back. */
	append_n(w, 5);
	cr_assert_eq(pmwal_close(w), 0);
}

/* A follower trusts a page of the log's owner, who may be another user than
 * the follower (root following a user's log): that user may truncate the
 * page under it at any time. The follower must never die of SIGBUS. */
Test(follow, a_page_its_owner_truncates_never_kills_a_follower_of_another_user,
     .fini = teardown)
{
	if (geteuid() != 0)
		cr_skip_test("SKIP: giving the log to another uid needs root");
	use(K_FILE);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4u << 20);
	struct pmwal_iter *it;
	char path[1024], log[600];
	uint64_t last = 0;
	int rc;

	append_n(w, 5);
	snprintf(log, sizeof(log), "%s/log", dir);
	page_path(path, sizeof(path));
	cr_assert(path[0], "no status page");
	/* The log and its page another user's (uid 4242), as if that user wrote it. */
	cr_assert_eq(chown(log, 4242, 4242), 0);
	cr_assert_eq(chown(path, 4242, 4242), 0);
	struct pmwal *r = open_log(PMWAL_OPEN_READONLY, 0);

	cr_assert_eq(pmwal_iter_open(r, 0, &it), 0);
	drain(it, &last, &rc);
	cr_assert_eq(last, 5);
	cr_assert_eq(truncate(path, 0), 0); /* what the page's owner may do */
	for (int i = 0; i < 3; i++) {
		(void)pmwal_iter_wait(it, 5);
		drain(it, &last, &rc);
	}
	cr_assert_eq(last, 5);
	pmwal_iter_close(it);
	pmwal_close(r);
	cr_assert_eq(truncate(path, 4096), 0); /* this test's writer maps it too */
	(void)pmwal_close(w);
}

/* The page's read bits are the log's as they are when a writer opens it, not
 * as they were when the page was made: a log made private since is not
 * followed through its page by those who may no longer read it. */
Test(follow, a_writer_gives_the_page_the_logs_read_bits_of_now, .fini = teardown)
{
	use(K_FILE);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4u << 20);
	char path[1024], log[600];
	struct stat st;

	snprintf(log, sizeof(log), "%s/log", dir);
	cr_assert_eq(pmwal_close(w), 0);
	cr_assert_eq(chmod(log, 0644), 0);
	w = open_log(0, 0);
	struct pmwal *r = open_log(PMWAL_OPEN_READONLY, 0); /* keeps the page */

	page_path(path, sizeof(path));
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0644);
	cr_assert_eq(pmwal_close(w), 0);
	cr_assert_eq(chmod(log, 0600), 0);
	w = open_log(0, 0);
	cr_assert_eq(stat(path, &st), 0, "the page was not kept");
	cr_expect_eq(st.st_mode & 0777, 0600, "page mode %04o for a log of mode 0600",
		     (unsigned)(st.st_mode & 0777));
	pmwal_close(r);
	cr_assert_eq(pmwal_close(w), 0);
}

/* ---- options and arguments -------------------------------------------------- */

Test(follow, contradictory_options_are_refused_by_name, .fini = teardown)
{
	use(K_FILE);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4u << 20);

	cr_assert_eq(pmwal_close(w), 0);
	struct pmwal_options o = opts(PMWAL_OPEN_READONLY | PMWAL_OPEN_WAIT_LOCK, 0);

	cr_assert_eq(pmwal_open(&o, &w), PMWAL_EBADOPT);
	cr_assert(strstr(errbuf, "WAIT_LOCK"), "%s", errbuf);
	o = opts(PMWAL_OPEN_READONLY | PMWAL_OPEN_BREAK_LOCK, 0);
	cr_assert_eq(pmwal_open(&o, &w), PMWAL_EBADOPT);
	o = opts(PMWAL_OPEN_WAIT_LOCK | PMWAL_OPEN_BREAK_LOCK, 0);
	cr_assert_eq(pmwal_open(&o, &w), PMWAL_EBADOPT);
	cr_assert(strstr(errbuf, "together"), "%s", errbuf);
	cr_assert_eq(pmwal_iter_wait(NULL, 0), -EINVAL);
}

/* On a simulated medium (no status page) a writer's own iterator waits. */
struct later {
	struct pmwal *w;
};

static void *append_later(void *arg)
{
	struct later *l = arg;

	usleep(50000);
	append_n(l->w, 1);
	return NULL;
}

Test(follow, an_iterator_of_the_writers_handle_waits_for_its_appends)
{
	struct sim_dev *sim = sim_new(1 << 20);
	struct pmwal *w;
	struct pmwal_iter *it;
	pthread_t t;

	cr_assert_eq(tu_open_sim(sim, PMWAL_OPEN_CREATE, &w), 0);
	cr_assert_eq(w != NULL, 1);
	cr_assert_eq(pmwal_iter_open(w, 0, &it), 0);
	struct later l = {w};

	cr_assert_eq(pthread_create(&t, NULL, append_later, &l), 0);
	cr_assert_eq(pmwal_iter_wait(it, 5000), 1);
	pthread_join(t, NULL);
	uint64_t last = 0;
	int rc;

	drain(it, &last, &rc);
	cr_assert_eq(last, 1);
	pmwal_iter_close(it);
	pmwal_close(w);
	sim_free(sim);
}

/* What is planted where a page goes is never written through: the writer
 * puts a page of its own in its place. */
Test(follow, a_file_planted_at_the_status_page_path_is_replaced_never_written_through,
     .fini = teardown)
{
	use(K_FILE);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4u << 20);
	char path[1024];

	page_path(path, sizeof(path));
	cr_assert(path[0], "no status page");
	cr_assert_eq(pmwal_close(w), 0);
	cr_assert(access(path, F_OK) != 0, "a closed writer left its page");
	char *victim = tu_path(dir, "victim");
	const char text[] = "a file of the user's, not a page";
	int fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	struct stat vst, pst;

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, sizeof(text)), (ssize_t)sizeof(text));
	close(fd);
	cr_assert_eq(stat(victim, &vst), 0);
	for (int how = 0; how < 4; how++) {
		unlink(path);
		if (how == 0)
			cr_assert_eq(symlink(victim, path), 0);
		else if (how == 1)
			cr_assert_eq(link(victim, path), 0);
		else if (how == 2)
			cr_assert_eq(mkfifo(path, 0644), 0);
		else {
			/* One link, but not a page's size: not ours to reshape. */
			char x[100];

			memset(x, 'x', sizeof(x));
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
			cr_assert(fd >= 0);
			cr_assert_eq(write(fd, x, sizeof(x)), (ssize_t)sizeof(x));
			close(fd);
		}
		w = open_log(0, 0);
		cr_assert_eq(lstat(path, &pst), 0);
		cr_assert(S_ISREG(pst.st_mode) && pst.st_nlink == 1 && pst.st_size == 4096 &&
			      pst.st_ino != vst.st_ino,
			  "way %d: the writer has no page of its own", how);
		append_n(w, 3);
		cr_assert_eq(pmwal_close(w), 0);
		char buf[200] = {0};

		fd = open(victim, O_RDONLY);
		cr_assert(fd >= 0);
		ssize_t n = read(fd, buf, sizeof(buf));

		close(fd);
		cr_assert(n == (ssize_t)sizeof(text) && !memcmp(buf, text, sizeof(text)),
			  "way %d: the planted file was written through", how);
	}
	unlink(path);
	free(victim);
}

Test(follow, a_standby_gives_up_after_lock_wait_ms, .fini = teardown)
{
	use(K_FILE);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4u << 20), *s = NULL;
	struct pmwal_options o = opts(PMWAL_OPEN_WAIT_LOCK, 0);

	o.lock_wait_ms = 150;
	double t0 = now_s();

	cr_assert_eq(pmwal_open(&o, &s), -EBUSY);
	double waited = now_s() - t0;

	cr_assert(waited >= 0.14 && waited < 5, "gave up after %.3f s", waited);
	cr_assert(strstr(errbuf, "lock_wait_ms") && strstr(errbuf, "pid"), "%s", errbuf);
	cr_assert_null(s);
	o = opts(0, 0);
	o.lock_wait_ms = 10;
	cr_assert_eq(pmwal_open(&o, &s), PMWAL_EBADOPT);
	cr_assert(strstr(errbuf, "lock_wait_ms"), "%s", errbuf);
	cr_assert_eq(pmwal_close(w), 0);
}

/* A writer taken over closes: the page fences its successor, so it stays. */
Test(follow, a_taken_over_writer_closing_leaves_the_fencing_page, .fini = teardown)
{
	use(K_PMEM);
	struct pmwal *a = open_log(PMWAL_OPEN_CREATE, 4u << 20), *b;
	char path[1024], after[1024];
	struct stat st0, st1;

	append_n(a, 3);
	page_path(path, sizeof(path));
	cr_assert(path[0] && stat(path, &st0) == 0);
	b = open_log(PMWAL_OPEN_BREAK_LOCK, 0);
	cr_assert_eq(pmwal_close(a), PMWAL_EFENCED);
	page_path(after, sizeof(after));
	cr_assert(stat(path, &st1) == 0 && st1.st_ino == st0.st_ino,
		  "the fenced writer's close removed the page that fences it");
	append_n(b, 2);
	cr_assert_eq(pmwal_close(b), 0);
	cr_assert(access(path, F_OK) != 0, "the last writer's close left its page");
}

/* A page whose fence epoch is near the maximum, its writer gone, is damage:
 * the log opens with the superblock's next epoch, not at the maximum. */
Test(follow, a_damaged_fence_epoch_does_not_lock_the_log_out, .fini = teardown)
{
	use(K_FILE);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4u << 20);
	char path[1024];

	append_n(w, 2);
	page_path(path, sizeof(path));
	cr_assert(path[0]);
	/* Keep the page: a second handle maps it while the writer closes. */
	struct pmwal *r = open_log(PMWAL_OPEN_READONLY, 0);

	cr_assert_eq(pmwal_close(w), 0);
	int fd = open(path, O_RDWR);
	uint64_t own = (uint64_t)0xfffffffeu << 32 | 1; /* and a write "under way" */
	uint32_t pid = 999999;				 /* nobody */

	cr_assert(fd >= 0, "the page went: %s", path);
	cr_assert_eq(pwrite(fd, &own, 8, 64), 8);
	cr_assert_eq(pwrite(fd, &pid, 4, 12), 4);
	close(fd);
	w = open_log(0, 0);
	struct pmwal_info info;

	pmwal_stat(w, &info);
	cr_assert(info.epoch < 100, "the epoch jumped to %u", info.epoch);
	append_n(w, 1);
	cr_assert_eq(pmwal_close(w), 0);
	pmwal_close(r);
}

/* ---- the status page and a hostile second user ------------------------------ */

static struct tu_other ou; /* a second local user, made for the test */
#define other_uid ou.uid
#define other_gid ou.gid

static void other_user(void)
{
	char why[128];

	if (tu_other_make(&ou, "pmwal-t-shared-", why, sizeof(why)))
		cr_skip_test("SKIP: %s", why);
}

static void end(pid_t pid)
{
	tu_other_end(&ou, pid);
}

static void teardown_other(void)
{
	tu_other_remove(&ou);
	teardown();
}

/* Runs @fn(@arg) as the second user (tu_as_other), which must succeed. */
static pid_t as_other(bool (*fn)(const char *), const char *arg, bool hold)
{
	bool ok;
	pid_t pid = tu_as_other(&ou, fn, arg, hold, &ok);

	cr_assert_gt(pid, 0, "fork: %s", strerror(errno));
	cr_assert(ok, "the second user could not do it (%s)", arg);
	return pid;
}

/* A read lock on bytes 0 and 1 of @path: what a user who can only read it
 * can take. */
static bool read_lock(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 2};

	return fd >= 0 && fcntl(fd, F_OFD_SETLK, &fl) == 0; /* kept open */
}

static char victim[1024];

static bool plant_symlink(const char *path)
{
	return symlink(victim, path) == 0;
}

static bool plant_file(const char *path)
{
	char x[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);

	memset(x, 'x', sizeof(x)); /* a page's size, but not one */
	bool ok = fd >= 0 && write(fd, x, sizeof(x)) == (ssize_t)sizeof(x) &&
		  fchmod(fd, 0666) == 0;

	if (fd >= 0)
		close(fd);
	return ok;
}

static bool plant_fifo(const char *path)
{
	return mkfifo(path, 0666) == 0 && chmod(path, 0666) == 0;
}

static bool plant_dir(const char *path)
{
	return mkdir(path, 0777) == 0;
}

static bool make_dir(const char *path)
{
	return mkdir(path, 0700) == 0;
}

static bool make_link(const char *path)
{
	char to[1100];

	snprintf(to, sizeof(to), "%s.real", path);
	return mkdir(to, 0755) == 0 && symlink(to, path) == 0;
}

/* The test's directories open to the second user: it plants in status/,
 * sticky and writable by all as /dev/shm is. */
static void share_dirs(void)
{
	char *st = tu_path(dir, "status");

	cr_assert_eq(chmod(dir, 0755), 0);
	cr_assert_eq(chmod(st, 01777), 0);
	free(st);
}

/*
 * Any user who can read the page can read-lock its bytes. A writer's open
 * then never waits without bound (once, every later writer hung in a
 * blocking lock on byte 0), and its followers still follow.
 */
Test(follow, a_read_lock_on_the_page_by_another_user_never_hangs_a_writer,
     .init = other_user, .fini = teardown_other, .timeout = 30)
{
	use(K_FILE);
	share_dirs();
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4u << 20), *r;
	char path[1024];

	/* A log its owner lets everyone read (logs are made 0640): its page
	 * is readable by everyone too, and so open to their read locks. */
	cr_assert_eq(pmwal_close(w), 0);
	cr_assert_eq(chmod(target, 0644), 0);
	w = open_log(0, 0);
	page_path(path, sizeof(path));
	cr_assert(path[0], "no status page");
	pid_t holder = as_other(read_lock, path, true);

	cr_assert_eq(pmwal_close(w), 0); /* the page stays: someone uses it */
	for (int round = 0; round < 2; round++) {
		w = open_log(0, 0); /* hung here, for ever, once */
		r = open_log(PMWAL_OPEN_READONLY, 0);
		struct pmwal_iter *it;
		uint64_t last = 0;
		int rc;

		cr_assert_eq(pmwal_iter_open(r, 0, &it), 0);
		append_n(w, 3);
		cr_assert_eq(pmwal_iter_wait(it, 5000), 1, "the follower heard nothing");
		drain(it, &last, &rc);
		cr_assert_eq(rc, 0);
		cr_assert_eq(last, 3 * (round + 1));
		pmwal_iter_close(it);
		pmwal_close(r);
		cr_assert_eq(pmwal_close(w), 0);
	}
	end(holder);
}

/*
 * What another user plants at the page's name before the writer starts (the
 * name shows in the directory while any earlier writer runs) is replaced
 * (root may, in a sticky directory) without writing through it, or refused
 * by name: the writer never runs without its page.
 */
Test(follow, what_another_user_plants_at_the_page_name_is_replaced_or_refused,
     .init = other_user, .fini = teardown_other, .timeout = 60)
{
	use(K_FILE);
	share_dirs();
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4u << 20);
	char path[1024], name[32];
	const char text[] = "root's file, not a page";
	struct stat st;

	page_path(path, sizeof(path));
	cr_assert(path[0], "no status page");
	cr_assert_eq(pmwal_close(w), 0);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	int fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, sizeof(text)), (ssize_t)sizeof(text));
	close(fd);
	bool (*plant[])(const char *) = {plant_symlink, plant_file, plant_fifo, plant_dir};
	const char *what[] = {"symlink", "file", "FIFO", "directory"};

	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "%s", what[i]);
		as_other(plant[i], path, false);
		cr_assert_eq(lstat(path, &st), 0);
		cr_assert_eq(st.st_uid, other_uid);
		struct pmwal_options o = opts(0, 0);
		int rc = pmwal_open(&o, &w);

		cr_assert_eq(rc, 0, "%s planted: %s (%s)", name, pmwal_strerror(rc), errbuf);
		cr_assert_eq(lstat(path, &st), 0);
		cr_assert(S_ISREG(st.st_mode) && st.st_uid == 0 && st.st_nlink == 1 &&
			      st.st_size == 4096 && !(st.st_mode & 022),
			  "%s planted: the writer has no page of its own (mode %o uid %u)", name,
			  (unsigned)st.st_mode, (unsigned)st.st_uid);
		struct pmwal *r = open_log(PMWAL_OPEN_READONLY, 0);
		struct pmwal_iter *it;
		uint64_t last = 0;

		cr_assert_eq(pmwal_iter_open(r, 0, &it), 0);
		drain(it, &last, &rc);
		append_n(w, 1);
		cr_assert_eq(pmwal_iter_wait(it, 5000), 1, "%s planted: not followed", name);
		pmwal_iter_close(it);
		pmwal_close(r);
		cr_assert_eq(pmwal_close(w), 0);
		char buf[64] = {0};

		fd = open(victim, O_RDONLY);
		cr_assert(fd >= 0);
		cr_assert_eq(read(fd, buf, sizeof(buf)), (ssize_t)sizeof(text));
		close(fd);
		cr_assert(!memcmp(buf, text, sizeof(text)), "%s planted: written through", name);
	}
	/* Nothing is left behind but what the second user made elsewhere. */
	DIR *d = opendir(dir);
	struct dirent *e;
	char *stdir = tu_path(dir, "status");

	closedir(d);
	d = opendir(stdir);
	while (d && (e = readdir(d)))
		cr_assert(e->d_name[0] != '.' || !strcmp(e->d_name, ".") ||
			      !strcmp(e->d_name, ".."),
			  "left behind: %s", e->d_name);
	if (d)
		closedir(d);
	free(stdir);
}

/*
 * PMWAL_STATUS_DIR where another user could replace the page: a symbolic
 * link of theirs, a directory of theirs, one all may write that is not
 * sticky. The writer is refused, naming it; it never writes through it.
 */
Test(follow, a_status_dir_another_user_controls_is_refused_by_name,
     .init = other_user, .fini = teardown_other, .timeout = 30)
{
	use(K_FILE);
	share_dirs();
	char *st = tu_path(dir, "status"), sub[1100];
	bool (*make[])(const char *) = {make_link, make_dir};
	struct pmwal *w = NULL;

	for (int i = 0; i < 3; i++) {
		snprintf(sub, sizeof(sub), "%s/d%d", st, i);
		if (i < 2) {
			as_other(make[i], sub, false);
		} else {
			cr_assert_eq(mkdir(sub, 0777), 0);
			cr_assert_eq(chmod(sub, 0777), 0);
		}
		setenv("PMWAL_STATUS_DIR", sub, 1);
		struct pmwal_options o = opts(i == 0 ? PMWAL_OPEN_CREATE : 0, 4u << 20);
		int rc = pmwal_open(&o, &w);

		cr_assert_neq(rc, 0, "dir %d: a writer used a directory another user controls",
			      i);
		cr_assert_null(w);
		cr_assert(strstr(errbuf, sub) && strstr(errbuf, "PMWAL_STATUS_DIR"), "dir %d: %s",
			  i, errbuf);
		if (i == 0) {
			char real[1200];
			DIR *d;
			struct dirent *e;

			snprintf(real, sizeof(real), "%s.real", sub);
			d = opendir(real);
			while (d && (e = readdir(d)))
				cr_assert(e->d_name[0] == '.', "written through the link: %s",
					  e->d_name);
			if (d)
				closedir(d);
		}
	}
	free(st);
}

/*
 * pmwal_stats(): the writer's counters on its handle, the same as a reader
 * reads them from the status page, and none claimed once the writer closed.
 * 130 appends one by one are 130 groups: groups 0, 64 and 128 are timed.
 */
static void stats_case(enum kind k)
{
	use(k);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 8u << 20);
	struct pmwal *r = open_log(PMWAL_OPEN_READONLY, 0);
	struct pmwal_stats ws, rs;
	char rec[100];

	memset(rec, 'x', sizeof(rec));
	for (int i = 0; i < 130; i++)
		cr_assert_eq(pmwal_append(w, rec, sizeof(rec), NULL), 0, "%s", pmwal_errmsg(w));
	cr_assert_eq(pmwal_stats(w, &ws, sizeof(ws)), 0);
	cr_assert_eq(ws.writer_pid, (uint32_t)getpid());
	cr_assert_eq(ws.appends, 130);
	cr_assert_eq(ws.append_bytes, 130 * sizeof(rec));
	cr_assert_eq(ws.groups, 130, "one group per synchronous append: %llu",
		     (unsigned long long)ws.groups);
	cr_assert_eq(ws.group_records, 130);
	cr_assert_geq(ws.group_blocks, 130);
	cr_assert_eq(ws.errors, 0);
	cr_assert_eq(ws.durable_lsn, 130);
	cr_assert_eq(ws.head_lsn, 1);
	cr_assert_eq(ws.used_blocks, ws.group_blocks);
	cr_assert_eq(ws.latency_samples, 3);
	uint64_t sum = 0;

	for (int i = 0; i < PMWAL_STATS_BUCKETS; i++)
		sum += ws.latency_ns[i];
	cr_assert_eq(sum, 3, "every sample in a bucket");

	cr_assert_eq(pmwal_stats(r, &rs, sizeof(rs)), 0);
	cr_assert_eq(rs.writer_pid, (uint32_t)getpid(), "the reader names the live writer");
	cr_assert_eq(rs.appends, 130, "published with the last group");
	cr_assert_eq(rs.groups, 130);
	cr_assert_eq(rs.durable_lsn, 130);
	cr_assert_eq(rs.used_blocks, ws.used_blocks);
	cr_assert_eq(rs.capacity_blocks, ws.capacity_blocks);
	cr_assert_arr_eq(rs.latency_ns, ws.latency_ns, sizeof(ws.latency_ns));

	/* An older program's shorter struct: only its part is written. */
	struct pmwal_stats part;

	memset(&part, 0xAB, sizeof(part));
	cr_assert_eq(pmwal_stats(w, &part, offsetof(struct pmwal_stats, groups)), 0);
	cr_assert_eq(part.appends, 130);
	cr_assert_eq(part.groups, 0xABABABABABABABABull, "written past the size given");
	cr_assert_eq(pmwal_stats(w, NULL, sizeof(ws)), -EINVAL);
	cr_assert_eq(pmwal_stats(NULL, &ws, sizeof(ws)), -EINVAL);
	cr_assert_eq(pmwal_stats(w, &ws, 0), -EINVAL);

	cr_assert_eq(pmwal_close(w), 0);
	cr_assert_eq(pmwal_stats(r, &rs, sizeof(rs)), 0);
	cr_assert_eq(rs.writer_pid, 0, "a closed writer is not named");
	cr_assert_eq(rs.durable_lsn, 130);
	pmwal_close(r);
}

Test(follow, file_stats_of_the_writer_are_read_by_a_reader, .fini = teardown)
{
	stats_case(K_FILE);
}

Test(follow, pmem_stats_of_the_writer_are_read_by_a_reader, .fini = teardown)
{
	stats_case(K_PMEM);
}

Test(follow, fakepmr_stats_of_the_writer_are_read_by_a_reader, .fini = teardown)
{
	stats_case(K_FAKEPMR);
}
