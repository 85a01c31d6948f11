// SPDX-License-Identifier: MIT
/*
 * test_wal.c - the engine through the public API on real files (io_uring,
 * O_DIRECT): round trips from 1 byte to 16 MiB, many appending threads, ring
 * full, release and reuse, iterators that follow, async appends, and every
 * bad option.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "testutil.h"

static char *dir;
static char *logpath;
static char errbuf[512];

static void setup(void)
{
	dir = tu_mkdtemp();
	cr_assert_not_null(dir);
	logpath = tu_path(dir, "log");
}

static void teardown(void)
{
	free(logpath);
	tu_rmdir(dir);
}

static struct pmwal_options file_opts(uint32_t flags, uint64_t capacity)
{
	struct pmwal_options o = {0};

	o.target = logpath;
	o.flags = flags;
	o.capacity_bytes = capacity;
	o.errmsg_buf = errbuf;
	o.errmsg_len = sizeof(errbuf);
	return o;
}

static struct pmwal *open_log(uint32_t flags, uint64_t capacity)
{
	struct pmwal_options o = file_opts(flags, capacity);
	struct pmwal *w = NULL;
	int rc = pmwal_open(&o, &w);

	if (rc == PMWAL_EUNSUPPORTED)
		cr_skip_test("io_uring or O_DIRECT refused here: %s", errbuf);
	cr_assert_eq(rc, 0, "open: %s (%s)", pmwal_strerror(rc), errbuf);
	return w;
}

/* Reads every record from @from and checks it against its key (the LSN). */
static uint64_t check_all(struct pmwal *w, uint64_t from, uint64_t expect_first)
{
	struct pmwal_iter *it;
	uint64_t lsn, n = 0, want = expect_first;
	const void *data;
	size_t len;
	int rc;

	cr_assert_eq(pmwal_iter_open(w, from, &it), 0);
	while ((rc = pmwal_iter_next(it, &lsn, &data, &len)) == 1) {
		cr_assert_eq(lsn, want, "LSN %llu, expected %llu",
			     (unsigned long long)lsn, (unsigned long long)want);
		cr_assert(tu_check(data, len, lsn), "record %llu damaged",
			  (unsigned long long)lsn);
		want++;
		n++;
	}
	cr_assert_eq(rc, 0, "iterator: %s", pmwal_strerror(rc));
	pmwal_iter_close(it);
	return n;
}

TestSuite(wal, .init = setup, .fini = teardown);

Test(wal, records_from_1_byte_to_16_mib_round_trip_across_reopen)
{
	static const size_t sizes[] = {1,    2,	    3,	     4,	      4019,
				       4020, 4021,  4024,    4025,    8047,
				       8048, 65536, 1 << 20, 3000001, 16u << 20};
	size_t n = sizeof(sizes) / sizeof(sizes[0]);
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 96ull << 20);
	uint8_t *buf = malloc(16u << 20);
	uint64_t lsn;

	for (size_t i = 0; i < n; i++) {
		tu_fill(buf, sizes[i], i + 1);
		cr_assert_eq(pmwal_append(w, buf, sizes[i], &lsn), 0, "size %zu: %s",
			     sizes[i], pmwal_errmsg(w));
		cr_assert_eq(lsn, i + 1);
		cr_assert_geq(pmwal_durable_lsn(w), lsn);
	}
	cr_assert_eq(check_all(w, 0, 1), n);
	cr_assert_eq(pmwal_close(w), 0);
	w = open_log(0, 0);
	const struct pmwal_report *r = pmwal_recovery_report(w);

	cr_assert_eq(r->verdict, PMWAL_CLEAN, "%s", r->detail);
	cr_assert_eq(r->records, n);
	cr_assert_eq(check_all(w, 0, 1), n);
	cr_assert_eq(check_all(w, 12, 12), n - 11);
	free(buf);
	pmwal_close(w);
}

Test(wal, record_over_the_maximum_is_refused)
{
	struct pmwal_options o = file_opts(PMWAL_OPEN_CREATE, 1 << 20);
	struct pmwal *w;
	char rec[200] = {0};

	o.record_bytes_max = 100;
	cr_assert_eq(pmwal_open(&o, &w), 0, "%s", errbuf);
	cr_assert_eq(pmwal_append(w, rec, 101, NULL), PMWAL_ETOOBIG);
	cr_assert_eq(pmwal_append(w, rec, 0, NULL), -EINVAL);
	cr_assert_eq(pmwal_append(w, rec, 100, NULL), 0);
	pmwal_close(w);
}

#define THREADS	   8
#define PER_THREAD 1500

struct thread_arg {
	struct pmwal *w;
	int id;
	uint64_t lsns[PER_THREAD];
};

/* Each record's key is its thread and index; the LSN map checks the order. */
static void *appender(void *p)
{
	struct thread_arg *a = p;
	uint8_t buf[600];

	for (int i = 0; i < PER_THREAD; i++) {
		size_t len = 1 + (size_t)((a->id * 7919 + i * 104729) % 599);

		tu_fill(buf, len, (uint64_t)a->id << 32 | (uint64_t)i);
		if (pmwal_append(a->w, buf, len, &a->lsns[i]))
			return (void *)1;
	}
	return NULL;
}

Test(wal, many_threads_appending_get_every_acked_record_back_in_order)
{
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 64 << 20);
	static struct thread_arg args[THREADS];
	pthread_t t[THREADS];
	uint64_t total = (uint64_t)THREADS * PER_THREAD;
	struct {
		int id, i;
	} *owner = calloc(total + 1, sizeof(*owner));

	for (int i = 0; i < THREADS; i++) {
		args[i].w = w;
		args[i].id = i;
		pthread_create(&t[i], NULL, appender, &args[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		cr_assert_null(ret, "thread %d failed: %s", i, pmwal_errmsg(w));
	}
	for (int i = 0; i < THREADS; i++)
		for (int j = 0; j < PER_THREAD; j++) {
			uint64_t lsn = args[i].lsns[j];

			cr_assert(lsn >= 1 && lsn <= total);
			cr_assert_eq(owner[lsn].id, 0, "LSN %llu handed out twice",
				     (unsigned long long)lsn);
			owner[lsn].id = i + 1;
			owner[lsn].i = j;
			if (j)
				cr_assert_gt(lsn, args[i].lsns[j - 1]);
		}
	struct pmwal_info info;

	pmwal_stat(w, &info);
	cr_assert_lt(info.groups_written, total, "group commit gathered nothing");
	pmwal_close(w);

	w = open_log(0, 0);
	struct pmwal_iter *it;
	uint64_t lsn, n = 0;
	const void *data;
	size_t len;

	cr_assert_eq(pmwal_iter_open(w, 0, &it), 0);
	while (pmwal_iter_next(it, &lsn, &data, &len) == 1) {
		n++;
		cr_assert_eq(lsn, n);
		uint64_t key =
		    (uint64_t)(owner[lsn].id - 1) << 32 | (uint64_t)owner[lsn].i;

		cr_assert(tu_check(data, len, key), "LSN %llu has the wrong bytes",
			  (unsigned long long)lsn);
	}
	cr_assert_eq(n, total);
	pmwal_iter_close(it);
	pmwal_close(w);
	free(owner);
}

Test(wal, full_ring_refuses_appends_and_never_overwrites_then_release_reuses_space)
{
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 8192 + 64 * 4096);
	uint8_t buf[3000];
	uint64_t lsn = 0, acked = 0;
	int rc;

	for (;;) {
		tu_fill(buf, sizeof(buf), acked + 1);
		rc = pmwal_append(w, buf, sizeof(buf), &lsn);
		if (rc)
			break;
		acked = lsn;
	}
	cr_assert_eq(rc, PMWAL_EFULL, "got %s", pmwal_strerror(rc));
	cr_assert(strstr(pmwal_errmsg(w), "log full"), "%s", pmwal_errmsg(w));
	cr_assert_gt(acked, 40);
	cr_assert_eq(check_all(w, 0, 1), acked);

	cr_assert_eq(pmwal_release(w, acked / 2), 0, "%s", pmwal_errmsg(w));
	uint64_t more = 0;

	for (;;) {
		tu_fill(buf, sizeof(buf), acked + more + 1);
		if (pmwal_append(w, buf, sizeof(buf), &lsn))
			break;
		more++;
	}
	cr_assert_gt(more, 10, "released space was not reused");
	pmwal_close(w);

	w = open_log(0, 0);
	struct pmwal_info info;

	pmwal_stat(w, &info);
	cr_assert_eq(info.head_lsn, acked / 2);
	cr_assert_eq(info.durable_lsn, acked + more);
	cr_assert_eq(check_all(w, 0, acked / 2), acked + more - acked / 2 + 1);
	/* Released records are gone for readers. */
	struct pmwal_iter *it;

	cr_assert_eq(pmwal_iter_open(w, 1, &it), PMWAL_ERANGE);
	pmwal_close(w);
}

Test(wal, release_everything_then_reopen_keeps_lsns_monotonic)
{
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 1 << 20);
	uint64_t lsn;

	for (int i = 0; i < 10; i++)
		cr_assert_eq(pmwal_append(w, "abc", 3, &lsn), 0);
	cr_assert_eq(pmwal_release(w, 11), 0, "%s", pmwal_errmsg(w));
	cr_assert_eq(pmwal_release(w, 12), PMWAL_ERANGE);
	pmwal_close(w);
	w = open_log(0, 0);
	cr_assert_eq(pmwal_append(w, "def", 3, &lsn), 0);
	cr_assert_eq(lsn, 11);
	pmwal_close(w);
}

Test(wal, iterator_follows_the_log_as_it_grows)
{
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4 << 20);
	struct pmwal_iter *it;
	uint8_t buf[100];
	uint64_t lsn, got;
	const void *data;
	size_t len;

	cr_assert_eq(pmwal_iter_open(w, 0, &it), 0);
	cr_assert_eq(pmwal_iter_next(it, &got, &data, &len), 0);
	for (uint64_t k = 1; k <= 30; k++) {
		tu_fill(buf, sizeof(buf), k);
		cr_assert_eq(pmwal_append(w, buf, sizeof(buf), &lsn), 0);
		cr_assert_eq(pmwal_iter_next(it, &got, &data, &len), 1);
		cr_assert_eq(got, k);
		cr_assert(tu_check(data, len, k));
		cr_assert_eq(pmwal_iter_next(it, &got, &data, &len), 0);
	}
	pmwal_iter_close(it);
	pmwal_close(w);
}

static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t cb_count, cb_max_lsn;

static void on_durable(void *arg, uint64_t lsn, int status)
{
	struct pmwal *w = arg;

	cr_assert_eq(status, 0);
	cr_assert_geq(pmwal_durable_lsn(w), lsn, "callback before durability");
	pthread_mutex_lock(&cb_mu);
	cb_count++;
	if (lsn > cb_max_lsn)
		cb_max_lsn = lsn;
	pthread_mutex_unlock(&cb_mu);
}

Test(wal, async_append_calls_back_once_durable)
{
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4 << 20);
	uint64_t lsn = 0;

	cb_count = cb_max_lsn = 0;
	for (int i = 0; i < 500; i++)
		cr_assert_eq(pmwal_append_async(w, "record", 6, on_durable, w, &lsn), 0);
	cr_assert_eq(pmwal_wait(w, lsn), 0);
	cr_assert_eq(pmwal_wait(w, lsn + 1), PMWAL_ERANGE);
	pmwal_close(w);
	cr_assert_eq(cb_count, 500);
	cr_assert_eq(cb_max_lsn, 500);
}

Test(wal, appendv_async_calls_back_once_for_the_batch_all_or_nothing)
{
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4 << 20);
	struct iovec v[3] = {{"a", 1}, {"bb", 2}, {"ccc", 3}};
	uint64_t first = 0, last = 0;

	cb_count = cb_max_lsn = 0;
	for (int i = 0; i < 100; i++) {
		cr_assert_eq(pmwal_appendv_async(w, v, 3, on_durable, w, &first), 0);
		cr_assert_eq(first, (uint64_t)i * 3 + 1);
	}
	/* One record too big: none of the batch is staged, no callback. */
	char *big = calloc(1, (16u << 20) + 1);
	struct iovec bad[2] = {{"ok", 2}, {big, (16u << 20) + 1}};

	cr_assert_eq(pmwal_appendv_async(w, bad, 2, on_durable, w, &last), PMWAL_ETOOBIG);
	free(big);
	cr_assert_eq(pmwal_appendv_async(w, v, 0, on_durable, w, NULL), -EINVAL);
	cr_assert_eq(pmwal_appendv_async(w, v, 3, NULL, w, NULL), -EINVAL);
	cr_assert_eq(pmwal_sync(w), 0);
	pmwal_close(w);
	cr_assert_eq(cb_count, 100, "one callback per batch");
	cr_assert_eq(cb_max_lsn, 300, "called with the batch's last LSN");
}

static int failed_cbs, ok_cbs;

static int calls_back_ok; /* calls made from a failed record's callback that succeeded */

/* A failed record's callback calls back into the failed log: every call is
 * refused (nothing staged, nothing acknowledged), none hangs. */
static void count_cb(void *arg, uint64_t lsn, int status)
{
	struct pmwal *w = arg;

	(void)lsn;
	if (status && w) {
		if (!pmwal_append_async(w, "again", 5, count_cb, NULL, NULL))
			__atomic_add_fetch(&calls_back_ok, 1, __ATOMIC_SEQ_CST);
		if (!pmwal_sync(w))
			__atomic_add_fetch(&calls_back_ok, 1, __ATOMIC_SEQ_CST);
		if (pmwal_close(w) != -EDEADLK)
			__atomic_add_fetch(&calls_back_ok, 1, __ATOMIC_SEQ_CST);
	}
	__atomic_add_fetch(status ? &failed_cbs : &ok_cbs, 1, __ATOMIC_SEQ_CST);
}

Test(wal, a_failed_log_calls_back_every_staged_record_before_close, .timeout = 120)
{
	/* Power lost at each event in turn while async records are staged
	 * behind groups in flight: every callback runs, without a close. */
	int failed_total = 0;

	for (uint64_t event = 2; event < 40; event += 3) {
		struct pmwal_sim_options so = {.medium = PMWAL_SIM_NVME, .size_bytes = 1 << 20,
					       .seed = event};
		struct pmwal_sim *sim;

		cr_assert_eq(pmwal_sim_new(&so, &sim), 0);
		struct pmwal_options o = {.target = pmwal_sim_target(sim),
					  .capacity_bytes = 1 << 20,
					  .flags = PMWAL_OPEN_CREATE};
		struct pmwal *w;

		cr_assert_eq(pmwal_open(&o, &w), 0);
		pmwal_sim_crash_at(sim, pmwal_sim_events(sim) + event);
		failed_cbs = ok_cbs = calls_back_ok = 0;
		int staged = 0;

		for (int i = 0; i < 2000; i++) {
			if (pmwal_append_async(w, "record", 6, count_cb, w, NULL))
				break;
			staged++;
		}
		for (int t = 0; t < 5000; t++) {
			if (__atomic_load_n(&failed_cbs, __ATOMIC_SEQ_CST) +
				__atomic_load_n(&ok_cbs, __ATOMIC_SEQ_CST) ==
			    staged)
				break;
			usleep(1000);
		}
		cr_assert_eq(failed_cbs + ok_cbs, staged,
			     "power lost at event +%llu: %d of %d callbacks before close",
			     (unsigned long long)event, failed_cbs + ok_cbs, staged);
		cr_assert_eq(calls_back_ok, 0, "a failed log took a call from a callback");
		failed_total += failed_cbs;
		pmwal_close(w);
		pmwal_sim_free(sim);
	}
	cr_assert_gt(failed_total, 0, "no power loss failed a staged record");
}

Test(wal, buffered_policy_acks_nothing_before_sync)
{
	struct pmwal_options o = file_opts(PMWAL_OPEN_CREATE, 4 << 20);
	struct pmwal *w;
	uint64_t lsn;

	o.commit_policy = PMWAL_COMMIT_BUFFERED;
	o.group_window_us = 200000;
	cr_assert_eq(pmwal_open(&o, &w), 0, "%s", errbuf);
	cr_assert_eq(pmwal_append(w, "x", 1, &lsn), 0);
	cr_assert_eq(pmwal_append(w, "y", 1, &lsn), 0);
	cr_assert_eq(pmwal_sync(w), 0);
	cr_assert_eq(pmwal_durable_lsn(w), 2);
	pmwal_close(w);
}

Test(wal, appendv_gets_consecutive_lsns_in_one_group)
{
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 4 << 20);
	uint8_t a[10], b[5000], c[1];
	struct iovec iov[3] = {{a, sizeof(a)}, {b, sizeof(b)}, {c, sizeof(c)}};
	uint64_t first;
	struct pmwal_info info;

	tu_fill(a, sizeof(a), 1);
	tu_fill(b, sizeof(b), 2);
	tu_fill(c, sizeof(c), 3);
	cr_assert_eq(pmwal_appendv(w, iov, 3, &first), 0);
	cr_assert_eq(first, 1);
	pmwal_stat(w, &info);
	cr_assert_eq(info.groups_written, 1);
	cr_assert_eq(check_all(w, 0, 1), 3);
	cr_assert_eq(pmwal_appendv(w, iov, 0, &first), -EINVAL);
	pmwal_close(w);
}

static void set_bad(struct pmwal_options *o, int which)
{
	switch (which) {
	case 0:
		o->reserved[3] = 1;
		break;
	case 1:
		o->target = "";
		break;
	case 2:
		o->flags |= 1u << 20;
		break;
	case 3:
		o->flags |= PMWAL_OPEN_READONLY;
		break;
	case 4:
		o->commit_policy = 7;
		break;
	case 5:
		o->group_window_us = 5000000;
		break;
	case 6:
		o->group_bytes_max = 100;
		break;
	case 7:
		o->record_bytes_max = 2u << 30;
		break;
	case 8:
		o->queue_depth = 100000;
		break;
	case 9:
		o->capacity_bytes = 100;
		break;
	case 10:
		o->capacity_bytes = 0;
		break;
	}
}

Test(wal, every_bad_option_is_refused_naming_the_field)
{
	static const char *const field[] = {
	    "reserved",	     "target",		"flags",	   "flags",
	    "commit_policy", "group_window_us", "group_bytes_max", "record_bytes_max",
	    "queue_depth",   "capacity_bytes",	"capacity_bytes",
	};
	for (int i = 0; i < (int)(sizeof(field) / sizeof(field[0])); i++) {
		struct pmwal_options o = file_opts(PMWAL_OPEN_CREATE, 1 << 20);
		struct pmwal *w = (struct pmwal *)1;

		errbuf[0] = 0;
		set_bad(&o, i);
		cr_assert_eq(pmwal_open(&o, &w), PMWAL_EBADOPT, "case %d", i);
		cr_assert_null(w, "case %d left a handle", i);
		cr_assert(strstr(errbuf, field[i]), "case %d: '%s' does not name %s", i,
			  errbuf, field[i]);
	}
	cr_assert_eq(pmwal_open(NULL, NULL), -EINVAL);
}

Test(wal, opening_what_is_not_a_log_says_so)
{
	struct pmwal_options o = file_opts(0, 0);
	struct pmwal *w;
	int fd;

	cr_assert_eq(pmwal_open(&o, &w), -ENOENT);
	cr_assert(strstr(errbuf, "no such file"), "%s", errbuf);
	fd = open(logpath, O_CREAT | O_WRONLY, 0644);
	cr_assert(fd >= 0);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	close(fd);
	cr_assert_eq(pmwal_open(&o, &w), PMWAL_EFORMAT);
	cr_assert(strstr(errbuf, "superblock"), "%s", errbuf);
	cr_assert_eq(ftruncate(open(logpath, O_WRONLY), 100), 0);
	cr_assert_eq(pmwal_open(&o, &w), PMWAL_EFORMAT);
	cr_assert(strstr(errbuf, "too small"), "%s", errbuf);
}

Test(wal, tmpfs_refusing_o_direct_gets_a_clear_error_and_buffered_works)
{
	struct pmwal_options o = file_opts(PMWAL_OPEN_CREATE, 1 << 20);
	struct pmwal *w;
	char path[] = "/dev/shm/pmwal-test-XXXXXX";
	int fd = mkstemp(path);

	cr_assert(fd >= 0);
	close(fd);
	o.target = path;
	int rc = pmwal_open(&o, &w);

	if (rc == 0) {
		pmwal_close(w);
		unlink(path);
		cr_skip_test("/dev/shm accepts O_DIRECT on this kernel");
	}
	cr_assert_eq(rc, PMWAL_EUNSUPPORTED, "%s", pmwal_strerror(rc));
	cr_assert(strstr(errbuf, "O_DIRECT") && strstr(errbuf, "--buffered"), "%s",
		  errbuf);
	o.flags |= PMWAL_OPEN_BUFFERED_IO;
	cr_assert_eq(pmwal_open(&o, &w), 0, "%s", errbuf);
	cr_assert_eq(pmwal_append(w, "x", 1, NULL), 0);
	pmwal_close(w);
	unlink(path);
}

Test(wal, psync_fallback_and_fdatasync_mode_round_trip)
{
	uint32_t modes[] = {PMWAL_OPEN_NO_URING, PMWAL_OPEN_FDATASYNC,
			    PMWAL_OPEN_NO_URING | PMWAL_OPEN_FDATASYNC};

	for (int m = 0; m < 3; m++) {
		struct pmwal *w = open_log(PMWAL_OPEN_FORMAT | modes[m], 2 << 20);
		uint8_t buf[5000];
		struct pmwal_info info;

		for (uint64_t k = 1; k <= 20; k++) {
			tu_fill(buf, sizeof(buf), k);
			cr_assert_eq(pmwal_append(w, buf, sizeof(buf), NULL), 0);
		}
		pmwal_stat(w, &info);
		cr_assert_str_eq(info.io_path,
				 modes[m] & PMWAL_OPEN_NO_URING ? "psync" : "io_uring");
		cr_assert(strstr(info.durability,
				 modes[m] & PMWAL_OPEN_FDATASYNC ? "fdatasync" : "fua"));
		pmwal_close(w);
		w = open_log(modes[m], 0);
		cr_assert_eq(check_all(w, 0, 1), 20);
		pmwal_close(w);
	}
}

Test(wal, capacity_that_is_not_whole_blocks_is_rounded_down)
{
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 1000001);
	struct pmwal_info info;

	pmwal_stat(w, &info);
	cr_assert_eq(info.capacity_bytes, 1000001 / 4096 * 4096);
	cr_assert_eq(pmwal_append(w, "odd", 3, NULL), 0);
	pmwal_close(w);
}

/*
 * io_uring refused, as a seccomp filter or kernel.io_uring_disabled does: a
 * child installs a filter that fails io_uring_setup with EPERM, then opens.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static int refuse_io_uring(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

Test(wal, refused_io_uring_says_so_and_the_pwritev_fallback_works)
{
	struct pmwal *w = open_log(PMWAL_OPEN_CREATE, 1 << 20);

	pmwal_close(w);
	pid_t pid = fork();

	if (pid == 0) {
		/* No Criterion calls in the child: exit codes carry the verdict. */
		struct pmwal_options o = file_opts(0, 0);

		if (refuse_io_uring())
			_exit(10);
		if (pmwal_open(&o, &w) != PMWAL_EUNSUPPORTED)
			_exit(11);
		if (!strstr(errbuf, "io_uring refused") || !strstr(errbuf, "--no-uring"))
			_exit(12);
		o.flags = PMWAL_OPEN_NO_URING;
		if (pmwal_open(&o, &w) || pmwal_append(w, "fallback", 8, NULL))
			_exit(13);
		pmwal_close(w);
		/* Read-only tools (verify) never need a ring. */
		struct pmwal_report rep;

		o.flags = 0;
		if (pmwal_verify(&o, &rep) || rep.records != 1)
			_exit(14);
		_exit(0);
	}
	int status;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "child died");
	if (WEXITSTATUS(status) == 10)
		cr_skip_test("seccomp filters are not available here");
	cr_assert_eq(WEXITSTATUS(status), 0, "child step %d failed", WEXITSTATUS(status));
}

/*
 * Invariant I8 on the real io_uring path: the fdatasync a commit issues
 * completes after every write of that commit (seeded bug FLUSH_BEFORE_WRITES
 * flushes first, so it covers nothing); with FUA writes there is no flush.
 * Groups of one block up to a 3 MiB record (several writes in one commit).
 */
Test(wal, io_uring_flush_completes_after_every_write_of_its_commit)
{
	static uint8_t buf[3u << 20];

	for (int fdatasync = 1; fdatasync >= 0; fdatasync--) {
		struct wal_dev_params p = {
		    .target = logpath, .create_bytes = 32u << 20, .fdatasync = fdatasync};
		struct pmwal_options o =
		    file_opts(PMWAL_OPEN_CREATE | (fdatasync ? PMWAL_OPEN_FDATASYNC : 0),
			      32u << 20);
		struct wal_dev_flush_order ord;
		const char *policy = fdatasync ? "fdatasync" : "fua";
		struct wal_dev *dev;
		struct pmwal *w;
		int rc = wal_dev_open_file(&p, &dev, errbuf, sizeof(errbuf));

		if (rc == PMWAL_EUNSUPPORTED)
			cr_skip_test("io_uring or O_DIRECT refused here: %s", errbuf);
		cr_assert_eq(rc, 0, "%s: %s", policy, errbuf);
		cr_assert_str_eq(dev->io_path, "io_uring");
		cr_assert_eq(wal_open_dev(&o, dev, &w), 0, "%s: %s", policy, errbuf);
		for (uint64_t k = 1; k <= 40; k++) {
			size_t len =
			    k == 40 ? sizeof(buf) : 1 + (size_t)(k * 997 % 20000);

			tu_fill(buf, len, k);
			cr_assert_eq(pmwal_append(w, buf, len, NULL), 0, "%s", policy);
		}
		cr_assert_eq(wal_dev_file_flush_order(dev, &ord), 0);
		cr_assert_geq(ord.commits, 40, "%s", policy);
		cr_assert_eq(ord.flushes, fdatasync ? ord.commits : 0,
			     "%s: %llu flushes for %llu commits", policy,
			     (unsigned long long)ord.flushes,
			     (unsigned long long)ord.commits);
		cr_assert_eq(ord.flushes_before_writes, 0,
			     "%s: %llu of %llu flushes completed before the writes of "
			     "their commit (I8: ordering_violations)",
			     policy, (unsigned long long)ord.flushes_before_writes,
			     (unsigned long long)ord.flushes);
		cr_assert_eq(check_all(w, 0, 1), 40, "%s", policy);
		pmwal_close(w);
		unlink(logpath);
	}
}

/* ---- a group led by one thread while the next one is staged ------------------ */

/* A device whose next commit, once armed, waits at a gate the test opens. */
struct gate_dev {
	struct wal_dev dev; /* first */
	struct wal_dev *inner;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool armed, blocked;
	pthread_t leader; /* the thread blocked at the gate */
};

static int gate_commit(struct wal_dev *d, const struct wal_io *ios, int count,
		       struct wal_submitted *submitted)
{
	struct gate_dev *g = (struct gate_dev *)d;

	pthread_mutex_lock(&g->mu);
	if (g->armed) {
		g->armed = false;
		g->blocked = true;
		g->leader = pthread_self();
		pthread_cond_broadcast(&g->cv);
		while (g->blocked)
			pthread_cond_wait(&g->cv, &g->mu);
	}
	pthread_mutex_unlock(&g->mu);
	return g->inner->ops->commit(g->inner, ios, count, submitted);
}

static int gate_read(struct wal_dev *d, void *buf, size_t len, uint64_t off)
{
	struct gate_dev *g = (struct gate_dev *)d;

	return g->inner->ops->read(g->inner, buf, len, off);
}

static void gate_close(struct wal_dev *d)
{
	(void)d; /* the test owns it */
}

static const struct wal_dev_ops gate_ops = {
    .commit = gate_commit, .read = gate_read, .close = gate_close};

struct leader_arg {
	struct pmwal *w;
	struct gate_dev *g;
	int rc;
	bool done; /* under g->mu */
};

static void *append_and_sync(void *arg)
{
	struct leader_arg *a = arg;

	a->rc = pmwal_append(a->w, "first", 5, NULL);
	if (!a->rc)
		a->rc = pmwal_sync(a->w);
	/* Finished, through the gate or not (an error writes nothing). */
	pthread_mutex_lock(&a->g->mu);
	a->done = true;
	pthread_cond_broadcast(&a->g->cv);
	pthread_mutex_unlock(&a->g->mu);
	return NULL;
}

struct waiter_arg {
	struct pmwal *w;
	uint64_t lsn;
	int rc;
	volatile int done;
};

static void *wait_for(void *arg)
{
	struct waiter_arg *a = arg;

	a->rc = pmwal_wait(a->w, a->lsn);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Buffered policy: a thread that is not the committer leads a group (a sync)
 * while another appender's record is staged behind it and that appender
 * waits for it. When the group is done, someone must write the staged one: it
 * hung forever before (the committer slept, the waiter slept; crashtest, nvme
 * random, seed 1, round 61). Repeated until that interleaving was met 5 times.
 */
Test(commit, a_group_staged_behind_another_threads_lead_is_written, .timeout = 120)
{
	/* 16 MiB: 400 rounds of up to two 4 KiB groups never fill it (a full
	 * log made t1 fail without writing, and this test wait forever). */
	struct sim_dev *sim = sim_new(16u << 20);
	struct gate_dev g = {.inner = sim_wal_dev(sim)};
	struct pmwal_options o = tu_sim_opts(PMWAL_OPEN_CREATE, 0);
	struct pmwal *w;
	int met = 0;

	g.dev = *g.inner;
	g.dev.ops = &gate_ops;
	pthread_mutex_init(&g.mu, NULL);
	pthread_cond_init(&g.cv, NULL);
	o.commit_policy = PMWAL_COMMIT_BUFFERED;
	cr_assert_eq(wal_open_dev(&o, &g.dev, &w), 0);
	for (int round = 0; round < 400 && met < 5; round++) {
		struct leader_arg la = {.w = w, .g = &g};
		pthread_t t1;

		pthread_mutex_lock(&g.mu);
		g.armed = true;
		pthread_mutex_unlock(&g.mu);
		pthread_create(&t1, NULL, append_and_sync, &la);
		pthread_mutex_lock(&g.mu);
		while (!g.blocked && !la.done)
			pthread_cond_wait(&g.cv, &g.mu);
		bool through_gate = g.blocked;
		bool ours = through_gate && pthread_equal(g.leader, t1);
		g.armed = false;
		pthread_mutex_unlock(&g.mu);
		if (!through_gate) { /* t1 wrote nothing: it can only have failed */
			pthread_join(t1, NULL);
			cr_assert_neq(la.rc, 0, "round %d: a sync returned without a write", round);
			cr_assert_fail("round %d: the append or sync failed: %s", round,
				       pmwal_strerror(la.rc));
		}
		struct waiter_arg wa = {.w = w};
		pthread_t t2;

		if (ours) {
			/* t1 leads (not the committer): stage one more and wait for it. */
			cr_assert_eq(pmwal_append(w, "second", 6, &wa.lsn), 0);
			pthread_create(&t2, NULL, wait_for, &wa);
			usleep(20000); /* t2 asleep on the staged group */
		}
		pthread_mutex_lock(&g.mu);
		g.blocked = false;
		pthread_cond_broadcast(&g.cv);
		pthread_mutex_unlock(&g.mu);
		pthread_join(t1, NULL);
		cr_assert_eq(la.rc, 0, "%s", pmwal_strerror(la.rc));
		if (!ours)
			continue;
		met++;
		for (int i = 0; i < 500 && !__atomic_load_n(&wa.done, __ATOMIC_ACQUIRE); i++)
			usleep(10000);
		cr_assert(__atomic_load_n(&wa.done, __ATOMIC_ACQUIRE),
			  "round %d: the wait for staged LSN %llu never returned (nobody wrote "
			  "its group)",
			  round, (unsigned long long)wa.lsn);
		pthread_join(t2, NULL);
		cr_assert_eq(wa.rc, 0);
	}
	cr_assert_geq(met, 1, "the interleaving was never met");
	cr_assert_eq(pmwal_close(w), 0);
	sim_free(sim);
}

/* ---- a waiter beside a lone appender on mapped media ---------------------- */

struct sync_race {
	struct pmwal *w;
	volatile int appender_done;
	volatile unsigned long syncs;
	int wait_instead; /* pmwal_wait for the next LSN rather than pmwal_sync */
};

static void *lone_appender(void *arg)
{
	struct sync_race *r = arg;
	char rec[64] = "x";

	for (int i = 0; i < 12000; i++) /* each a group of one block */
		if (pmwal_append(r->w, rec, sizeof(rec), NULL))
			break;
	__atomic_store_n(&r->appender_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *syncer(void *arg)
{
	struct sync_race *r = arg;

	while (!__atomic_load_n(&r->appender_done, __ATOMIC_ACQUIRE)) {
		if (r->wait_instead)
			pmwal_wait(r->w, pmwal_durable_lsn(r->w) + 1);
		else
			pmwal_sync(r->w);
		r->syncs++;
	}
	return NULL;
}

/*
 * On mapped media a lone appender writes its records straight into the
 * mapping; a pmwal_sync or pmwal_wait beside it sleeps on the in-flight
 * group's condition variable, which nothing broadcast when a direct group
 * ended: the syncer slept forever once the appends stopped (the attack of
 * this stop; every run).
 */
Test(commit, a_sync_beside_a_lone_mapped_appender_returns, .timeout = 120)
{
	char *shm = tu_mkdtemp_shm();

	cr_assert_not_null(shm);
	for (int mode = 0; mode < 2; mode++) {
		char target[256];
		struct pmwal_options o = {.capacity_bytes = 64u << 20, .flags = PMWAL_OPEN_CREATE};
		struct sync_race r = {.wait_instead = mode};
		pthread_t a, s;

		snprintf(target, sizeof(target), "pmem:%s/log%d", shm, mode);
		o.target = target;
		cr_assert_eq(pmwal_open(&o, &r.w), 0);
		pthread_create(&a, NULL, lone_appender, &r);
		pthread_create(&s, NULL, syncer, &r);
		pthread_join(a, NULL);
		uint64_t durable = pmwal_durable_lsn(r.w);
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 10;
		cr_assert_eq(pthread_timedjoin_np(s, NULL, &until), 0,
			     "%s: every append durable (LSN %llu), but the %s beside them "
			     "sleeps on after %lu calls",
			     target, (unsigned long long)durable,
			     mode ? "pmwal_wait" : "pmwal_sync", r.syncs);
		cr_assert_eq(pmwal_close(r.w), 0);
	}
	tu_rmdir(shm);
}

/* The same batch through the API: refused as too big for a group, never a
 * staging buffer overrun (a heap overflow before). */
Test(wal, a_batch_of_more_than_2_to_the_32_blocks_is_too_big)
{
	struct sim_dev *sim = sim_new(64u << 20);
	struct pmwal_options o = tu_sim_opts(PMWAL_OPEN_CREATE, 0);
	const size_t len = 4095ull * WAL_PAYLOAD_BYTES - WAL_REC_HDR_BYTES, n = 1048833;
	struct iovec *v = calloc(n, sizeof(*v));
	void *rec = calloc(1, len);
	struct pmwal *w;

	cr_assert(v && rec);
	for (size_t i = 0; i < n; i++)
		v[i] = (struct iovec){rec, len};
	cr_assert_eq(wal_open_dev(&o, sim_wal_dev(sim), &w), 0);
	cr_assert_eq(pmwal_appendv(w, v, (int)n, NULL), PMWAL_ETOOBIG, "%s", pmwal_errmsg(w));
	cr_assert_eq(pmwal_durable_lsn(w), 0);
	cr_assert_eq(pmwal_close(w), 0);
	sim_free(sim);
	free(v);
	free(rec);
}

/* Iterators opened beside appenders on a file (attack on groups in flight):
 * wal_locate's deep reads ran on a commit's io_uring and took its
 * completions: a hang, a clean log read as corrupt, a failed group write. */
struct iter_race {
	struct pmwal *w;
	atomic_int stop, bad;
	atomic_ulong appended, located;
};

static void *iter_race_append(void *p)
{
	struct iter_race *r = p;
	static const uint8_t rec[2900];
	unsigned seed = (unsigned)(uintptr_t)&seed;

	while (!atomic_load(&r->stop)) {
		uint64_t lsn;
		int rc = pmwal_append(r->w, rec, 100 + rand_r(&seed) % 2800, &lsn);

		if (rc == PMWAL_EFULL)
			rc = pmwal_release(r->w, pmwal_durable_lsn(r->w) + 1);
		if (rc)
			atomic_fetch_add(&r->bad, 1), atomic_store(&r->stop, 1);
		atomic_fetch_add(&r->appended, 1);
	}
	return NULL;
}

static void *iter_race_locate(void *p)
{
	struct iter_race *r = p;
	unsigned seed = 7;

	while (!atomic_load(&r->stop)) {
		struct pmwal_info info;
		struct pmwal_iter *it;
		uint64_t lsn, d = pmwal_durable_lsn(r->w);
		const void *data;
		size_t len;

		pmwal_stat(r->w, &info);
		if (d <= info.head_lsn + 2)
			continue;
		uint64_t from = info.head_lsn + 1 + rand_r(&seed) % (d - info.head_lsn - 1);
		int rc = pmwal_iter_open(r->w, from, &it);

		if (rc == PMWAL_ERANGE) /* released meanwhile */
			continue;
		if (rc) {
			atomic_fetch_add(&r->bad, 1), atomic_store(&r->stop, 1);
			break;
		}
		if (pmwal_iter_next(it, &lsn, &data, &len) < 0)
			atomic_fetch_add(&r->bad, 1);
		pmwal_iter_close(it);
		atomic_fetch_add(&r->located, 1);
	}
	return NULL;
}

Test(wal, iterators_opened_beside_appenders_on_a_file_never_disturb_them, .timeout = 120)
{
	for (uint32_t gif = 1; gif <= 4; gif += 3) {
		char *tmp = tu_mkdtemp(), *path = tu_path(tmp, "log");
		/* 32 MiB: wal_locate reads 8 MiB chunks as deep reads. */
		struct pmwal_options o = {.target = path,
					  .capacity_bytes = 32u << 20,
					  .flags = PMWAL_OPEN_CREATE,
					  .groups_in_flight = gif};
		struct iter_race r = {0};
		pthread_t t[6];
		struct timespec t0, now;

		cr_assert_eq(pmwal_open(&o, &r.w), 0);
		for (int i = 0; i < 6; i++)
			pthread_create(&t[i], NULL, i < 4 ? iter_race_append : iter_race_locate,
				       &r);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do { /* 3 s, or until a thread saw an error (a hang times out) */
			usleep(10000);
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while (now.tv_sec - t0.tv_sec < 3 && !atomic_load(&r.stop));
		atomic_store(&r.stop, 1);
		for (int i = 0; i < 6; i++)
			pthread_join(t[i], NULL);
		cr_assert_eq(atomic_load(&r.bad), 0, "groups in flight %u: %s", gif,
			     pmwal_errmsg(r.w));
		cr_assert_gt(atomic_load(&r.located), 10);
		cr_assert_eq(pmwal_close(r.w), 0);
		o.flags = 0;
		cr_assert_eq(pmwal_open(&o, &r.w), 0);
		cr_assert_neq(pmwal_recovery_report(r.w)->verdict, PMWAL_CORRUPT);
		pmwal_close(r.w);
		free(path);
		tu_rmdir(tmp);
	}
}

/* ---- CREATE opens what is there; EXCL and FORMAT ---------------------------- */

/* The media a log can be created on here: a file, a mapped file in /dev/shm,
 * a fake PMR, a simulated medium. */
enum { MED_FILE, MED_PMEM, MED_FAKEPMR, MED_SIM, MED_COUNT };
static const char *const med_name[MED_COUNT] = {"file", "pmem", "fakepmr", "sim"};

struct medium {
	char target[512];
	char path[512]; /* the file the log lives in ("" for sim) */
	char *shm;
	struct pmwal_sim *sim;
};

static void medium_setup(int k, struct medium *m)
{
	memset(m, 0, sizeof(*m));
	switch (k) {
	case MED_FILE:
		snprintf(m->path, sizeof(m->path), "%s/m.log", dir);
		snprintf(m->target, sizeof(m->target), "%s", m->path);
		break;
	case MED_PMEM:
		m->shm = tu_mkdtemp_shm();
		cr_assert_not_null(m->shm);
		snprintf(m->path, sizeof(m->path), "%s/m.log", m->shm);
		snprintf(m->target, sizeof(m->target), "pmem:%s", m->path);
		break;
	case MED_FAKEPMR:
		snprintf(m->path, sizeof(m->path), "%s/m.pmr", dir);
		snprintf(m->target, sizeof(m->target), "fakepmr:%s", m->path);
		break;
	default: {
		struct pmwal_sim_options so = {.medium = PMWAL_SIM_PMEM, .size_bytes = 1 << 20};

		cr_assert_eq(pmwal_sim_new(&so, &m->sim), 0);
		snprintf(m->target, sizeof(m->target), "%s", pmwal_sim_target(m->sim));
	}
	}
}

static void medium_teardown(struct medium *m)
{
	if (m->path[0])
		unlink(m->path);
	if (m->shm)
		tu_rmdir(m->shm); /* frees it */
	pmwal_sim_free(m->sim);
}

static struct pmwal_options medium_opts(const struct medium *m, uint32_t flags,
					uint64_t capacity)
{
	struct pmwal_options o = file_opts(flags | PMWAL_OPEN_BUFFERED_IO, capacity);

	o.target = m->target;
	return o;
}

static uint64_t log_id_of(struct pmwal *w)
{
	struct pmwal_info info;

	cr_assert_eq(pmwal_stat(w, &info), 0);
	return info.log_id;
}

/* The first record of the log at @w is "first", LSN 1. */
static void assert_first_record(struct pmwal *w, const char *what)
{
	struct pmwal_iter *it;
	const void *data;
	size_t len;
	uint64_t lsn;

	cr_assert_eq(pmwal_iter_open(w, 0, &it), 0, "%s", what);
	cr_assert_eq(pmwal_iter_next(it, &lsn, &data, &len), 1, "%s: the record is gone",
		     what);
	cr_assert_eq(lsn, 1, "%s", what);
	cr_assert(len == 5 && !memcmp(data, "first", 5), "%s: another record", what);
	pmwal_iter_close(it);
}

/* A program that opens its log with CREATE at every start keeps its records:
 * the second start opens the log the first made. */
Test(wal, create_twice_opens_the_log_the_first_create_made_on_every_medium)
{
	for (int k = 0; k < MED_COUNT; k++) {
		struct medium m;
		struct pmwal *w;
		uint64_t lsn, id;

		medium_setup(k, &m);
		struct pmwal_options o = medium_opts(&m, PMWAL_OPEN_CREATE, 1 << 20);

		cr_assert_eq(pmwal_open(&o, &w), 0, "%s: %s", med_name[k], errbuf);
		cr_assert_eq(pmwal_append(w, "first", 5, &lsn), 0);
		cr_assert_eq(lsn, 1);
		cr_assert_eq(pmwal_durable_lsn(w), 1); /* acknowledged */
		id = log_id_of(w);
		cr_assert_eq(pmwal_close(w), 0);
		for (int again = 0; again < 2; again++) {
			/* The same options, then zero ones: "whatever exists". */
			o = medium_opts(&m, PMWAL_OPEN_CREATE, again ? 0 : 1 << 20);
			cr_assert_eq(pmwal_open(&o, &w), 0, "%s: %s", med_name[k], errbuf);
			cr_assert_eq(log_id_of(w), id, "%s: CREATE made a new log", med_name[k]);
			assert_first_record(w, med_name[k]);
			cr_assert_eq(pmwal_append(w, "more", 4, &lsn), 0);
			cr_assert_eq(lsn, 2 + (uint64_t)again, "%s", med_name[k]);
			cr_assert_eq(pmwal_close(w), 0);
		}
		medium_teardown(&m);
	}
}

Test(wal, excl_refuses_an_existing_log_on_every_medium)
{
	for (int k = 0; k < MED_COUNT; k++) {
		struct medium m;
		struct pmwal *w;

		medium_setup(k, &m);
		struct pmwal_options o =
		    medium_opts(&m, PMWAL_OPEN_CREATE | PMWAL_OPEN_EXCL, 1 << 20);

		cr_assert_eq(pmwal_open(&o, &w), 0, "%s: %s", med_name[k], errbuf);
		cr_assert_eq(pmwal_append(w, "first", 5, NULL), 0);
		uint64_t id = log_id_of(w);

		cr_assert_eq(pmwal_close(w), 0);
		cr_assert_eq(pmwal_open(&o, &w), -EEXIST, "%s: EXCL did not refuse (%s)",
			     med_name[k], errbuf);
		cr_assert_null(w);
		cr_assert(strstr(errbuf, "already exists and holds a pmwal log"), "%s: %s",
			  med_name[k], errbuf);
		o = medium_opts(&m, 0, 0);
		cr_assert_eq(pmwal_open(&o, &w), 0, "%s: %s", med_name[k], errbuf);
		cr_assert_eq(log_id_of(w), id, "%s", med_name[k]);
		assert_first_record(w, med_name[k]);
		pmwal_close(w);
		medium_teardown(&m);
	}
}

Test(wal, format_replaces_a_log_and_refuses_other_data_unless_forced)
{
	for (int k = 0; k < MED_COUNT; k++) {
		struct medium m;
		struct pmwal *w;
		uint64_t lsn;

		medium_setup(k, &m);
		struct pmwal_options o = medium_opts(&m, PMWAL_OPEN_CREATE, 1 << 20);

		cr_assert_eq(pmwal_open(&o, &w), 0, "%s: %s", med_name[k], errbuf);
		cr_assert_eq(pmwal_append(w, "first", 5, NULL), 0);
		uint64_t id = log_id_of(w);

		cr_assert_eq(pmwal_close(w), 0);
		o = medium_opts(&m, PMWAL_OPEN_FORMAT, 1 << 20);
		cr_assert_eq(pmwal_open(&o, &w), 0, "%s: %s", med_name[k], errbuf);
		cr_assert_neq(log_id_of(w), id, "%s: FORMAT kept the log", med_name[k]);
		cr_assert_eq(pmwal_append(w, "new", 3, &lsn), 0);
		cr_assert_eq(lsn, 1, "%s", med_name[k]);
		cr_assert_eq(pmwal_close(w), 0);

		/* Data that is not a pmwal log: a user's text over both
		 * superblock copies. */
		static char precious[8192];

		for (size_t i = 0; i < sizeof(precious); i++)
			precious[i] = "precious user data\n"[i % 19];
		if (m.sim) {
			cr_assert_eq(pmwal_sim_overwrite(m.sim, 0, precious, sizeof(precious)), 0);
		} else {
			int fd = open(m.path, O_WRONLY);

			cr_assert_geq(fd, 0);
			cr_assert_eq(pwrite(fd, precious, sizeof(precious), 0),
				     (ssize_t)sizeof(precious));
			close(fd);
		}
		for (int f = 0; f < 3; f++) {
			static const uint32_t flags[] = {PMWAL_OPEN_CREATE, PMWAL_OPEN_FORMAT,
							 PMWAL_OPEN_FORMAT | PMWAL_OPEN_CREATE};

			o = medium_opts(&m, flags[f], 1 << 20);
			cr_assert_eq(pmwal_open(&o, &w), PMWAL_EFORMAT, "%s: %s", med_name[k],
				     errbuf);
			cr_assert(strstr(errbuf, "not a pmwal log"), "%s: %s", med_name[k],
				  errbuf);
		}
		static char head[sizeof(precious)];

		if (m.sim) {
			memcpy(head, pmwal_sim_durable(m.sim), sizeof(head));
		} else {
			int fd = open(m.path, O_RDONLY);

			cr_assert_eq(pread(fd, head, sizeof(head), 0), (ssize_t)sizeof(head));
			close(fd);
		}
		cr_assert_eq(memcmp(head, precious, sizeof(head)), 0,
			     "%s: a refused open wrote", med_name[k]);
		o = medium_opts(&m, PMWAL_OPEN_FORMAT | PMWAL_OPEN_FORCE, 1 << 20);
		cr_assert_eq(pmwal_open(&o, &w), 0, "%s: %s", med_name[k], errbuf);
		pmwal_close(w);
		medium_teardown(&m);
	}
}

Test(wal, create_over_a_log_of_other_geometry_names_the_field_and_both_values)
{
	struct pmwal_options o = file_opts(PMWAL_OPEN_CREATE | PMWAL_OPEN_BUFFERED_IO, 1 << 20);
	struct pmwal *w;

	o.record_bytes_max = 4096;
	cr_assert_eq(pmwal_open(&o, &w), 0, "%s", errbuf);
	cr_assert_eq(pmwal_append(w, "first", 5, NULL), 0);
	cr_assert_eq(pmwal_close(w), 0);
	o.capacity_bytes = 2 << 20;
	cr_assert_eq(pmwal_open(&o, &w), PMWAL_EBADOPT);
	cr_assert(strstr(errbuf, "options.capacity_bytes") && strstr(errbuf, "1048576") &&
		      strstr(errbuf, "2097152"),
		  "%s", errbuf);
	o.capacity_bytes = 0;
	o.record_bytes_max = 8192;
	cr_assert_eq(pmwal_open(&o, &w), PMWAL_EBADOPT);
	cr_assert(strstr(errbuf, "options.record_bytes_max") && strstr(errbuf, "4096") &&
		      strstr(errbuf, "8192"),
		  "%s", errbuf);
	o.record_bytes_max = 0;
	cr_assert_eq(pmwal_open(&o, &w), 0, "%s", errbuf);
	assert_first_record(w, "after the refusals");
	pmwal_close(w);
}

/* Both superblock copies damaged: CREATE refuses as CORRUPT, writing nothing,
 * so that salvage may still read the records. */
Test(wal, create_over_a_damaged_log_is_refused_as_corrupt_and_writes_nothing)
{
	struct pmwal_options o = file_opts(PMWAL_OPEN_CREATE | PMWAL_OPEN_BUFFERED_IO, 1 << 20);
	struct pmwal *w;
	static uint8_t before[1 << 20], after[1 << 20];

	cr_assert_eq(pmwal_open(&o, &w), 0, "%s", errbuf);
	cr_assert_eq(pmwal_append(w, "first", 5, NULL), 0);
	cr_assert_eq(pmwal_close(w), 0);
	int fd = open(logpath, O_RDWR);

	cr_assert_geq(fd, 0);
	for (int copy = 0; copy < 2; copy++) { /* checksums broken, magic kept */
		uint8_t b;

		cr_assert_eq(pread(fd, &b, 1, copy * 4096 + 100), 1);
		b ^= 0xff;
		cr_assert_eq(pwrite(fd, &b, 1, copy * 4096 + 100), 1);
	}
	cr_assert_eq(pread(fd, before, sizeof(before), 0), (ssize_t)sizeof(before));
	cr_assert_eq(pmwal_open(&o, &w), PMWAL_ECORRUPT, "%s", errbuf);
	cr_assert(strstr(errbuf, "nothing was written"), "%s", errbuf);
	cr_assert_eq(pread(fd, after, sizeof(after), 0), (ssize_t)sizeof(after));
	close(fd);
	cr_assert_eq(memcmp(before, after, sizeof(before)), 0, "CREATE wrote");
}

/*
 * A program started several times at once, each creating the same missing
 * log: one writes at a time, the others are refused or open it after, and
 * no opener's making of the file (its zero-fill) runs over records another
 * has had acknowledged. Every acknowledged record is there at the end.
 */
Test(wal, programs_creating_one_log_at_once_lose_no_acknowledged_record)
{
	for (int round = 0; round < 6; round++) {
		enum { KIDS = 4, RECS = 64 };
		int go[2], done[2];
		pid_t kid[KIDS];

		unlink(logpath);
		cr_assert_eq(pipe(go), 0);
		cr_assert_eq(pipe(done), 0);
		for (int k = 0; k < KIDS; k++) {
			kid[k] = fork();
			if (kid[k]) {
				cr_assert_gt(kid[k], 0); /* never in a child: */
				continue; /* no Criterion calls there */
			}
			char c;
			uint32_t acked = 0;
			struct pmwal_options o =
			    file_opts(PMWAL_OPEN_CREATE | PMWAL_OPEN_WAIT_LOCK, 64u << 20);
			struct pmwal *w = NULL;

			close(go[1]);
			o.lock_wait_ms = 20000;
			if (read(go[0], &c, 1) == 0 && pmwal_open(&o, &w) == 0) { /* EOF: go */
				for (int i = 0; i < RECS; i++)
					if (pmwal_append(w, "rec", 3, NULL) == 0)
						acked++;
				pmwal_close(w);
			}
			if (write(done[1], &acked, sizeof(acked)) != sizeof(acked))
				_exit(2);
			_exit(0);
		}
		close(go[0]);
		close(done[1]);
		close(go[1]); /* all start at once */
		uint32_t total = 0, n;

		while (read(done[0], &n, sizeof(n)) == sizeof(n))
			total += n;
		close(done[0]);
		for (int k = 0; k < KIDS; k++)
			waitpid(kid[k], NULL, 0);
		cr_assert_eq(total, KIDS * RECS, "round %d: %u acknowledged", round, total);

		struct pmwal *w = open_log(PMWAL_OPEN_READONLY, 0);
		struct pmwal_iter *it = NULL;
		const void *data;
		size_t len;
		uint64_t lsn, count = 0;

		cr_assert_eq(pmwal_iter_open(w, 1, &it), 0, "%s", errbuf);
		while (pmwal_iter_next(it, &lsn, &data, &len) == 1)
			count++;
		pmwal_iter_close(it);
		pmwal_close(w);
		cr_assert_eq(count, total, "round %d: %llu of %u acknowledged records", round,
			     (unsigned long long)count, total);
	}
}

/*
 * CREATE formats only what is blank: a superblock area of zeros is not
 * enough when a filesystem's mark lies further in (btrfs at 64 KiB) or when
 * records remain in the ring (a log whose superblocks were wiped: salvage
 * may still read them). Both are refused and left as they were.
 */
Test(wal, create_leaves_a_filesystem_or_wiped_log_beyond_the_superblocks_alone)
{
	for (int c = 0; c < 2; c++) {
		struct pmwal_options o = file_opts(PMWAL_OPEN_CREATE, 1 << 20);
		struct pmwal *w = NULL;
		int fd;

		unlink(logpath);
		if (c == 0) { /* a btrfs mark, zeros before it */
			fd = open(logpath, O_RDWR | O_CREAT | O_EXCL, 0600);
			cr_assert_geq(fd, 0);
			cr_assert_eq(ftruncate(fd, 1 << 20), 0);
			cr_assert_eq(pwrite(fd, "_BHRfS_M", 8, 0x10040), 8);
			close(fd);
		} else { /* a log with records whose superblocks were wiped */
			w = open_log(PMWAL_OPEN_CREATE, 1 << 20);
			for (int i = 0; i < 20; i++)
				cr_assert_eq(pmwal_append(w, "record", 6, NULL), 0);
			pmwal_close(w);
			w = NULL;
			static char zero[8192];
			fd = open(logpath, O_RDWR);
			cr_assert_eq(pwrite(fd, zero, sizeof(zero), 0), (ssize_t)sizeof(zero));
			close(fd);
		}
		struct stat before, after;

		cr_assert_eq(stat(logpath, &before), 0);
		int rc = pmwal_open(&o, &w);

		cr_assert_eq(rc, PMWAL_EFORMAT, "case %d: %s (%s)", c, pmwal_strerror(rc), errbuf);
		cr_assert_null(w);
		cr_assert_eq(stat(logpath, &after), 0);
		cr_assert_eq(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
		cr_assert_eq(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec, "case %d: written", c);
	}
}
