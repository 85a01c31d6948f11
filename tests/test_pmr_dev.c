// SPDX-License-Identifier: MIT
/*
 * test_pmr_dev.c - the mapped device (wal/dev_pmem.c) the engine logs
 * through: the fields it fills, a group commit as copies plus one barrier,
 * bounds and read-only refusals, failed barriers reaching the engine, and
 * the refusal to log to a PMR that cannot be made durable (PMRWBM none).
 */
#include "device.h"
#include "format.h"
#include "pmr.h"
#include "pmwal.h"

#include "testutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* wal/dev_pmem.c; to be declared in device.h */
struct pmr_region *wal_dev_pmem_region(struct wal_dev *dev);

static char *dir; /* per test, on tmpfs: the emulated-pmem case */
static char err[1024];
static char target[256];

static void setup(void)
{
	dir = tu_mkdtemp_shm();
	cr_assert_not_null(dir, "mkdtemp: %s", strerror(errno));
	unsetenv("PMEM2_FORCE_GRANULARITY");
}

static void teardown(void)
{
	tu_rmdir(dir);
	dir = NULL;
}

TestSuite(dev_pmem, .init = setup, .fini = teardown);

static int open_dev(const char *fmt, bool readonly, struct wal_dev **dev)
{
	struct wal_dev_params p = {
	    .target = target,
	    .create_bytes = readonly ? 0 : 1u << 20,
	    .readonly = readonly,
	};

	snprintf(target, sizeof(target), fmt, dir);
	err[0] = '\0';
	return wal_dev_open_pmem(&p, dev, err, sizeof(err));
}

Test(dev_pmem, emulated_pmem_fills_every_field)
{
	struct wal_dev *dev;

	cr_assert_eq(open_dev("pmem:%s/log", false, &dev), 0, "%s", err);
	cr_assert_str_eq(dev->medium, "pmem");
	cr_assert_str_eq(dev->io_path, "mapped");
	cr_assert_str_eq(dev->granularity, "page");
	cr_assert_str_eq(dev->durability, "msync (emulated)");
	cr_assert_eq(dev->caps, WAL_CAP_EMULATED);
	cr_assert_not_null(dev->ops->map);
	cr_assert_eq(dev->sector_bytes, 64);
	cr_assert_eq(dev->size_bytes, 1u << 20);
	cr_assert_not_null(dev->ops->map(dev));
	dev->ops->close(dev);
}

Test(dev_pmem, group_commit_then_read_back)
{
	static uint8_t a[4096], b[8192], back[8192];
	struct wal_dev *dev;
	struct wal_io ios[2];

	memset(a, 0xa5, sizeof(a));
	memset(b, 0x5a, sizeof(b));
	ios[0] = (struct wal_io){.buf = a, .len = sizeof(a), .off = 0};
	ios[1] = (struct wal_io){.buf = b, .len = sizeof(b), .off = 65536};
	cr_assert_eq(open_dev("fakepmr:%s/pmr", false, &dev), 0, "%s", err);
	cr_assert_str_eq(dev->medium, "fakepmr");
	cr_assert_str_eq(dev->durability, "sfence + PMRSTS read (emulated)");
	cr_assert_eq(dev->caps, WAL_CAP_EMULATED);
	cr_assert_not_null(dev->ops->map);
	cr_assert_eq(dev->ops->commit(dev, ios, 2, NULL), 0);
	/* committed means barriered: a power loss now loses nothing */
	cr_assert_eq(pmr_fake_power_loss(wal_dev_pmem_region(dev), 3, PMR_LOSS_DROP_ALL),
		     0);
	cr_assert_eq(dev->ops->read(dev, back, sizeof(b), 65536), 0);
	cr_assert_arr_eq(back, b, sizeof(b));
	cr_assert_eq(dev->ops->read(dev, back, sizeof(a), 0), 0);
	cr_assert_arr_eq(back, a, sizeof(a));
	dev->ops->close(dev);
}

Test(dev_pmem, out_of_bounds_pieces_are_refused)
{
	static uint8_t a[4096];
	struct wal_dev *dev;
	struct wal_io io = {.buf = a, .len = sizeof(a), .off = (1u << 20) - 64};

	cr_assert_eq(open_dev("fakepmr:%s/pmr", false, &dev), 0, "%s", err);
	cr_assert_eq(dev->ops->commit(dev, &io, 1, NULL), -EINVAL);
	cr_assert_eq(dev->ops->read(dev, a, sizeof(a), (1u << 20) - 64), -EINVAL);
	cr_assert_eq(pmr_fake_pending_bytes(wal_dev_pmem_region(dev)), 0,
		     "nothing was stored");
	dev->ops->close(dev);
}

Test(dev_pmem, failed_barrier_fails_the_commit)
{
	static uint8_t a[4096];
	struct wal_dev *dev;
	struct wal_io io = {.buf = a, .len = sizeof(a), .off = 0};

	cr_assert_eq(open_dev("fakepmr:%s/pmr", false, &dev), 0, "%s", err);
	cr_assert_eq(pmr_fake_set_hsts(wal_dev_pmem_region(dev), 3), 0);
	cr_assert_eq(dev->ops->commit(dev, &io, 1, NULL), -EIO);
	dev->ops->close(dev);
}

Test(dev_pmem, pmr_without_barrier_is_not_logged_to)
{
	struct wal_dev *dev = (struct wal_dev *)1;

	cr_assert_eq(open_dev("fakepmr:%s/pmr,wbm=0", false, &dev), PMWAL_ENOTDURABLE);
	cr_assert_null(dev);
	cr_assert_not_null(strstr(err, "PMRWBM=0"), "%s", err);
	cr_assert_not_null(strstr(err, "read-only"), "%s", err);
}

Test(dev_pmem, pmr_without_barrier_opens_read_only)
{
	struct wal_dev *dev;
	uint8_t a[64] = {0};
	struct wal_io io = {.buf = a, .len = sizeof(a), .off = 0};

	/* create it first (read-only opens do not create) */
	cr_assert_eq(open_dev("fakepmr:%s/pmr", false, &dev), 0, "%s", err);
	dev->ops->close(dev);
	cr_assert_eq(open_dev("fakepmr:%s/pmr,wbm=0", true, &dev), 0, "%s", err);
	cr_assert_eq(dev->caps, WAL_CAP_EMULATED | WAL_CAP_NOT_DURABLE);
	cr_assert_eq(dev->ops->commit(dev, &io, 1, NULL), -EROFS);
	dev->ops->close(dev);
}

Test(dev_pmem, region_of_another_device_is_null)
{
	cr_assert_null(wal_dev_pmem_region(NULL));
}

/* Appends the same records to @target, one thread, single and batched. */
static void append_mix(const char *tgt, uint32_t window_us, uint64_t *nrec)
{
	static const size_t sizes[] = {1,     3,     4,	   60,	 61,   255,  256,  257,
				       1000,  4019,  4020, 4021, 4096, 8040, 8048, 20000,
				       65000, 70000, 3,	   300,	 4000, 1};
	static uint8_t buf[70000 * 2];
	struct pmwal_options o = {.target = tgt,
				  .capacity_bytes = 4u << 20,
				  .flags = PMWAL_OPEN_CREATE,
				  .group_window_us = window_us,
				  .errmsg_buf = err,
				  .errmsg_len = sizeof(err)};
	struct pmwal *w;
	uint64_t lsn;

	memset(buf, 0, sizeof(buf)); /* both logs see the same bytes */
	cr_assert_eq(pmwal_open(&o, &w), 0, "%s", err);
	*nrec = 0;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		tu_fill(buf, sizes[i], i);
		cr_assert_eq(pmwal_append(w, buf, sizes[i], &lsn), 0, "%s",
			     pmwal_errmsg(w));
		(*nrec)++;
		/* and as a batch with a neighbour */
		struct iovec v[3] = {
		    {buf, sizes[i]}, {buf + 70000, 1 + i * 37}, {buf, 5}};

		tu_fill(buf + 70000, v[1].iov_len, ~i);
		cr_assert_eq(pmwal_appendv(w, v, 3, &lsn), 0, "%s", pmwal_errmsg(w));
		*nrec += 3;
	}
	cr_assert_eq(pmwal_close(w), 0);
}

/*
 * On a mapped medium a lone appender's group goes straight from its buffer
 * into the mapping (engine.c, direct groups); a gather window sends the same
 * records through the staging buffer. Both must lay out every block alike:
 * the same framing and payload bytes; only the log id and checksums differ.
 */
Test(dev_pmem, direct_groups_lay_out_blocks_as_staged_ones)
{
	char a[256], b[256], pa[256], pb[256];
	uint64_t na, nb;
	struct pmwal_report ra, rb;

	snprintf(a, sizeof(a), "pmem:%s/direct", dir);
	snprintf(b, sizeof(b), "pmem:%s/staged", dir);
	append_mix(a, 0, &na);
	append_mix(b, 1, &nb);
	cr_assert_eq(na, nb);
	struct pmwal_options oa = {.target = a, .flags = PMWAL_OPEN_READONLY},
			     ob = {.target = b, .flags = PMWAL_OPEN_READONLY};

	cr_assert_eq(pmwal_verify(&oa, &ra), 0);
	cr_assert_eq(pmwal_verify(&ob, &rb), 0);
	cr_assert_eq(ra.verdict, PMWAL_CLEAN);
	cr_assert_eq(ra.records, na);
	cr_assert_eq(rb.records, nb);

	snprintf(pa, sizeof(pa), "%s/direct", dir);
	snprintf(pb, sizeof(pb), "%s/staged", dir);
	FILE *fa = fopen(pa, "rb"), *fb = fopen(pb, "rb");
	static uint8_t ba[WAL_BLOCK_BYTES], bb[WAL_BLOCK_BYTES];
	int blocks = 0;

	cr_assert(fa && fb);
	fseek(fa, WAL_RING_OFFSET, SEEK_SET);
	fseek(fb, WAL_RING_OFFSET, SEEK_SET);
	while (fread(ba, 1, sizeof(ba), fa) == sizeof(ba) &&
	       fread(bb, 1, sizeof(bb), fb) == sizeof(bb)) {
		uint32_t used = ba[12] | ba[13] << 8;

		if (memcmp(ba + 8, "PWB1", 4) != 0)
			break; /* past the end of the log */
		cr_assert_arr_eq(ba + 8, bb + 8, 8, "block %d: magic, size, first record",
				 blocks);
		cr_assert_arr_eq(ba + 24, bb + 24, 8, "block %d: seq", blocks);
		cr_assert_arr_eq(ba + 40, bb + 40, 8, "block %d: first LSN", blocks);
		cr_assert_arr_eq(ba + 56, bb + 56, 16, "block %d: epoch, group shape",
				 blocks);
		cr_assert_arr_eq(ba + WAL_HDR_BYTES, bb + WAL_HDR_BYTES, used,
				 "block %d: payload", blocks);
		blocks++;
	}
	cr_assert_gt(blocks, 100);
	fclose(fa);
	fclose(fb);
}

#define MT_THREADS 4
#define MT_EACH	   1500

struct mt_arg {
	struct pmwal *w;
	int id;
	uint64_t lsns[MT_EACH];
};

static size_t mt_len(int id, int i)
{
	/* mostly short, some spanning up to 3 blocks */
	return i % 9 == 0 ? 4000 + (size_t)((id * 131 + i * 977) % 8000)
			  : 1 + (size_t)((id * 7919 + i * 104729) % 700);
}

static void *mt_appender(void *p)
{
	struct mt_arg *a = p;
	static __thread uint8_t buf[12000];

	for (int i = 0; i < MT_EACH; i++) {
		size_t len = mt_len(a->id, i);

		tu_fill(buf, len, (uint64_t)a->id << 32 | (uint64_t)i);
		if (pmwal_append(a->w, buf, len, &a->lsns[i]))
			return (void *)1;
	}
	return NULL;
}

/*
 * Appenders racing on a mapped medium: some groups go straight into the
 * mapping, others are staged while one is in flight and written after it.
 * Every acked record comes back, byte-exact, at its LSN, in order.
 */
static void many_threads_on(const char *fmt)
{
	static struct mt_arg args[MT_THREADS];
	struct pmwal_options o = {.target = target,
				  .capacity_bytes = 64u << 20,
				  .flags = PMWAL_OPEN_CREATE,
				  .errmsg_buf = err,
				  .errmsg_len = sizeof(err)};
	uint64_t total = (uint64_t)MT_THREADS * MT_EACH, lsn, n = 0;
	uint64_t *owner = calloc(total + 1, sizeof(*owner));
	pthread_t t[MT_THREADS];
	struct pmwal_iter *it;
	const void *data;
	size_t len;
	struct pmwal *w;

	snprintf(target, sizeof(target), fmt, dir);
	cr_assert_eq(pmwal_open(&o, &w), 0, "%s", err);
	for (int i = 0; i < MT_THREADS; i++) {
		args[i] = (struct mt_arg){.w = w, .id = i};
		pthread_create(&t[i], NULL, mt_appender, &args[i]);
	}
	for (int i = 0; i < MT_THREADS; i++) {
		void *ret;

		pthread_join(t[i], &ret);
		cr_assert_null(ret, "thread %d: %s", i, pmwal_errmsg(w));
	}
	for (int i = 0; i < MT_THREADS; i++)
		for (int j = 0; j < MT_EACH; j++) {
			uint64_t l = args[i].lsns[j];

			cr_assert(l >= 1 && l <= total && owner[l] == 0);
			owner[l] = (uint64_t)i << 32 | (uint64_t)j | 1ull << 63;
		}
	cr_assert_eq(pmwal_close(w), 0);

	o.flags = 0;
	cr_assert_eq(pmwal_open(&o, &w), 0, "%s", err);
	cr_assert_eq(pmwal_recovery_report(w)->verdict, PMWAL_CLEAN);
	cr_assert_eq(pmwal_iter_open(w, 0, &it), 0);
	while (pmwal_iter_next(it, &lsn, &data, &len) == 1) {
		uint64_t key = owner[lsn] & ~(1ull << 63);
		int id = (int)(key >> 32), i = (int)(key & 0xffffffffu);

		n++;
		if (lsn != n || !(owner[lsn] >> 63) || len != mt_len(id, i) ||
		    !tu_check(data, len, key))
			cr_assert_fail("%s: LSN %llu is not the record acked for it",
				       target, (unsigned long long)lsn);
	}
	cr_assert_eq(n, total);
	pmwal_iter_close(it);
	cr_assert_eq(pmwal_close(w), 0);
	free(owner);
}

Test(dev_pmem, many_threads_on_pmem_get_every_acked_record_back)
{
	setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 1);
	many_threads_on("pmem:%s/mt");
	unsetenv("PMEM2_FORCE_GRANULARITY");
}

Test(dev_pmem, many_threads_on_a_fake_pmr_get_every_acked_record_back)
{
	many_threads_on("fakepmr:%s/mt");
}
