// SPDX-License-Identifier: MIT
/*
 * test_sim.c - the simulated media of pmwal_sim_* (wal/sim.c) on their own:
 * what a barrier or flush makes durable, what a crash image may keep, that
 * every subset is enumerated when few units are pending, that faults do what
 * they say, and that a log opened through "sim:NAME" survives a crash with
 * its acked records.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "format.h"
#include "pmwal.h"
#include "testutil.h"

#define MEDIUM_BYTES (64u * 4096u)

static struct pmwal_sim *make(uint32_t medium, uint32_t flags, uint32_t atomic)
{
	struct pmwal_sim_options o = {.medium = medium,
				      .flags = flags,
				      .size_bytes = MEDIUM_BYTES,
				      .seed = 42,
				      .atomic_write_bytes = atomic};
	struct pmwal_sim *s;

	cr_assert_eq(pmwal_sim_new(&o, &s), 0);
	return s;
}

static struct wal_dev *open_dev(struct pmwal_sim *s)
{
	struct wal_dev_params p = {.target = pmwal_sim_target(s)};
	struct wal_dev *d;
	char err[256];

	cr_assert_eq(wal_dev_open(&p, &d, err, sizeof(err)), 0, "%s", err);
	return d;
}

Test(sim, options_are_validated_and_names_are_unique)
{
	struct pmwal_sim_options o = {.medium = PMWAL_SIM_PMEM, .size_bytes = 4096,
				      .name = "dup"};
	struct pmwal_sim *a, *b;

	cr_assert_eq(pmwal_sim_new(&o, &a), 0);
	cr_assert_str_eq(pmwal_sim_target(a), "sim:dup");
	cr_assert_eq(pmwal_sim_new(&o, &b), -EEXIST);
	cr_assert_null(b);
	o.name = "other";
	o.size_bytes = 1000;
	cr_assert_eq(pmwal_sim_new(&o, &b), -EINVAL);
	o.size_bytes = 4096;
	o.reserved[0] = 1;
	cr_assert_eq(pmwal_sim_new(&o, &b), -EINVAL);
	pmwal_sim_free(a);
	pmwal_sim_free(NULL);
}

Test(sim, an_unknown_name_is_enoent)
{
	struct wal_dev_params p = {.target = "sim:nobody"};
	struct wal_dev *d;
	char err[256];

	cr_assert_eq(wal_dev_open(&p, &d, err, sizeof(err)), -ENOENT);
	cr_assert(strstr(err, "sim:nobody"));
}

Test(sim, pmem_stores_are_visible_at_once_and_durable_only_after_a_barrier)
{
	struct pmwal_sim *s = make(PMWAL_SIM_PMEM, 0, 0);
	struct wal_dev *d = open_dev(s);
	uint8_t buf[200];
	struct wal_io io = {buf, sizeof(buf), 100};

	memset(buf, 0xab, sizeof(buf));
	cr_assert_not_null(d->ops->map);
	cr_assert_eq(d->ops->store(d, &io, 1), 0);
	cr_assert_eq(d->ops->map(d)[150], 0xab);
	cr_assert_eq(pmwal_sim_durable(s)[150], 0);
	cr_assert_eq(pmwal_sim_pending(s), 4); /* lines 1..4 */
	cr_assert_eq(d->ops->barrier(d), 0);
	cr_assert_eq(pmwal_sim_durable(s)[150], 0xab);
	cr_assert_eq(pmwal_sim_pending(s), 0);
	cr_assert_eq(pmwal_sim_events(s), 2);
	d->ops->close(d);
	pmwal_sim_free(s);
}

Test(sim, pmem_crash_enumerates_every_subset_of_pending_lines)
{
	struct pmwal_sim *s = make(PMWAL_SIM_PMEM, 0, 0);
	struct wal_dev *d = open_dev(s);
	uint8_t buf[192];
	struct wal_io io = {buf, sizeof(buf), 0};
	struct pmwal_sim_crash_info ci;
	unsigned seen = 0;

	memset(buf, 0x5a, sizeof(buf));
	pmwal_sim_crash_at(s, 1); /* the barrier */
	cr_assert_eq(d->ops->store(d, &io, 1), 0);
	cr_assert_eq(d->ops->barrier(d), -EIO);
	cr_assert_eq(d->ops->store(d, &io, 1), -EIO);
	cr_assert(pmwal_sim_crashed(s));
	cr_assert_eq(pmwal_sim_crash_images(s, &ci), 8 + 16);
	cr_assert_eq(ci.pending, 3);
	cr_assert(ci.exhaustive);
	d->ops->close(d);
	for (uint64_t i = 0; i < ci.subsets; i++) {
		cr_assert_eq(pmwal_sim_apply_image(s, i), 0);
		unsigned mask = 0;

		for (unsigned l = 0; l < 3; l++) {
			uint8_t b = pmwal_sim_durable(s)[l * 64 + 7];

			cr_assert(b == 0 || b == 0x5a);
			mask |= (b ? 1u : 0u) << l;
		}
		seen |= 1u << mask;
	}
	cr_assert_eq(seen, 0xff, "every subset once: %x", seen);
	cr_assert_eq(pmwal_sim_apply_image(s, 24), -ERANGE);
	cr_assert_not(pmwal_sim_crashed(s));
	pmwal_sim_free(s);
}

Test(sim, pmem_torn_images_tear_only_at_8_byte_words)
{
	struct pmwal_sim *s = make(PMWAL_SIM_PMEM, 0, 0);
	struct wal_dev *d = open_dev(s);
	uint8_t buf[64];
	struct wal_io io = {buf, sizeof(buf), 4096};
	struct pmwal_sim_crash_info ci;
	int torn = 0;

	memset(buf, 0x77, sizeof(buf));
	cr_assert_eq(d->ops->store(d, &io, 1), 0);
	pmwal_sim_crash(s);
	uint64_t n = pmwal_sim_crash_images(s, &ci);

	for (uint64_t i = ci.subsets; i < n; i++) {
		cr_assert_eq(pmwal_sim_apply_image(s, i), 0);
		const uint8_t *p = pmwal_sim_durable(s) + 4096;
		bool mixed = false;

		for (int w = 0; w < 8; w++) {
			for (int b = 1; b < 8; b++)
				if (p[w * 8] == 0x77 || p[w * 8] == 0)
					cr_assert_eq(p[w * 8 + b], p[w * 8],
						     "word %d torn inside", w);
			mixed |= p[w * 8] != p[0];
		}
		torn += mixed;
	}
	cr_assert_gt(torn, 0, "some variant tears the line");
	d->ops->close(d);
	pmwal_sim_free(s);
}

Test(sim, nvme_writes_need_a_flush_and_count_one_event_per_4k)
{
	struct pmwal_sim *s = make(PMWAL_SIM_NVME, 0, 0);
	struct wal_dev *d = open_dev(s);
	uint8_t *buf = calloc(1, 3 * 4096);
	struct wal_io io = {buf, 3 * 4096, 8192};

	memset(buf, 0x33, 3 * 4096);
	cr_assert_null(d->ops->map);
	cr_assert_eq(d->ops->commit(d, &io, 1, NULL), 0);
	cr_assert_eq(pmwal_sim_events(s), 4); /* three writes, one flush */
	cr_assert_eq(pmwal_sim_durable(s)[8192 + 3 * 4096 - 1], 0x33);
	/* Crash at the flush: all three writes are pending. */
	pmwal_sim_crash_at(s, 7);
	memset(buf, 0x44, 3 * 4096);
	cr_assert_eq(d->ops->commit(d, &io, 1, NULL), -EIO);
	struct pmwal_sim_crash_info ci;

	cr_assert_eq(pmwal_sim_crash_images(s, &ci), 8 + 16);
	cr_assert_eq(ci.pending, 3);
	cr_assert_eq(pmwal_sim_apply_image(s, 0), 0);
	cr_assert_eq(pmwal_sim_durable(s)[8192], 0x33, "image 0 keeps nothing");
	cr_assert_eq(pmwal_sim_apply_image(s, 7), 0);
	cr_assert_eq(pmwal_sim_durable(s)[8192 + 2 * 4096], 0x44, "image 7 keeps all");
	d->ops->close(d);
	free(buf);
	pmwal_sim_free(s);
}

Test(sim, nvme_with_atomic_4k_writes_has_no_torn_images)
{
	struct pmwal_sim *s = make(PMWAL_SIM_NVME, 0, 4096);
	struct wal_dev *d = open_dev(s);
	uint8_t *buf = calloc(1, 4096);
	struct wal_io io = {buf, 4096, 8192};
	struct pmwal_sim_crash_info ci;

	pmwal_sim_crash_at(s, 1);
	cr_assert_eq(d->ops->commit(d, &io, 1, NULL), -EIO);
	cr_assert_eq(pmwal_sim_crash_images(s, &ci), 2);
	cr_assert_eq(ci.torn, 0);
	d->ops->close(d);
	free(buf);
	pmwal_sim_free(s);
}

Test(sim, nvme_faults_lose_misdirect_fail_and_refuse_reads)
{
	struct pmwal_sim *s = make(PMWAL_SIM_NVME, 0, 0);
	struct wal_dev *d = open_dev(s);
	uint8_t *buf = calloc(1, 4096), back[512];
	struct wal_io io = {buf, 4096, 8192};

	memset(buf, 0x99, 4096);
	cr_assert_eq(pmwal_sim_fault(s, &(struct pmwal_sim_fault){.kind = PMWAL_SIM_LOST,
								  .event = 0}),
		     0);
	cr_assert_eq(pmwal_sim_fault(s, &(struct pmwal_sim_fault){
					    .kind = PMWAL_SIM_MISDIRECT,
					    .event = 2,
					    .off = 16384}),
		     0);
	cr_assert_eq(pmwal_sim_fault(s, &(struct pmwal_sim_fault){.kind = PMWAL_SIM_FAIL,
								  .event = 5,
								  .err = -ENOSPC}),
		     0);
	cr_assert_eq(pmwal_sim_fault(s, &(struct pmwal_sim_fault){
					    .kind = PMWAL_SIM_READ_ERROR,
					    .off = 40960,
					    .len = 1}),
		     0);
	cr_assert_eq(d->ops->commit(d, &io, 1, NULL), 0); /* events 0, 1: lost */
	cr_assert_eq(pmwal_sim_durable(s)[8192], 0);
	cr_assert_eq(d->ops->commit(d, &io, 1, NULL), 0); /* events 2, 3: misdirected */
	cr_assert_eq(pmwal_sim_durable(s)[8192], 0);
	cr_assert_eq(pmwal_sim_durable(s)[16384], 0x99);
	cr_assert_eq(d->ops->commit(d, &io, 1, NULL), -ENOSPC); /* event 5: the flush */
	cr_assert_eq(d->ops->read(d, back, 512, 40960), -EIO);
	cr_assert_eq(d->ops->read(d, back, 512, 40448), 0);
	d->ops->close(d);
	free(buf);
	pmwal_sim_free(s);
}

Test(sim, damage_changes_the_durable_image)
{
	struct pmwal_sim *s = make(PMWAL_SIM_FAKEPMR, 0, 0);

	cr_assert_eq(pmwal_sim_damage(s, 10, 2, PMWAL_SIM_FLIP), 0);
	cr_assert_eq(pmwal_sim_durable(s)[10], 0x10);
	cr_assert_eq(pmwal_sim_damage(s, 10, 1, PMWAL_SIM_ZERO), 0);
	cr_assert_eq(pmwal_sim_durable(s)[10], 0);
	cr_assert_eq(pmwal_sim_damage(s, MEDIUM_BYTES - 1, 2, PMWAL_SIM_ZERO), -EINVAL);
	cr_assert_eq(pmwal_sim_damage(s, 0, 1, 9), -EINVAL);
	pmwal_sim_free(s);
}

/* A log through "sim:NAME" on each medium: crash in the middle of a run, every
 * image keeps every acked record. */
static void crash_keeps_acked(uint32_t medium)
{
	struct pmwal_sim *s = make(medium, 0, 0);
	struct pmwal_options o = {.target = pmwal_sim_target(s),
				  .capacity_bytes = MEDIUM_BYTES,
				  .flags = PMWAL_OPEN_CREATE,
				  .group_bytes_max = 65536};
	struct pmwal *w;
	uint8_t rec[3000];
	uint64_t acked = 0, lsn;

	cr_assert_eq(pmwal_open(&o, &w), 0, "%s", pmwal_strerror(-1));
	pmwal_sim_crash_at(s, pmwal_sim_events(s) + 40);
	for (uint64_t k = 1; k <= 100; k++) {
		tu_fill(rec, 1 + k * 29 % sizeof(rec), k);
		if (pmwal_append(w, rec, 1 + k * 29 % sizeof(rec), &lsn))
			break;
		acked = lsn;
	}
	cr_assert(pmwal_sim_crashed(s));
	cr_assert_eq(pmwal_append(w, rec, 1, &lsn), PMWAL_EFAILED);
	pmwal_close(w);
	cr_assert_gt(acked, 0);
	uint64_t n = pmwal_sim_crash_images(s, NULL);

	cr_assert_geq(n, 1);
	o.flags = 0;
	for (uint64_t i = 0; i < n; i++) {
		struct pmwal_iter *it;
		const void *data;
		size_t len;
		uint64_t next = 1;

		cr_assert_eq(pmwal_sim_apply_image(s, i), 0);
		cr_assert_eq(pmwal_open(&o, &w), 0, "image %llu", (unsigned long long)i);
		cr_assert_eq(pmwal_iter_open(w, 0, &it), 0);
		while (pmwal_iter_next(it, &lsn, &data, &len) == 1) {
			cr_assert_eq(lsn, next++);
			cr_assert(tu_check(data, len, lsn));
		}
		cr_assert_geq(next - 1, acked, "image %llu lost acked records",
			      (unsigned long long)i);
		pmwal_iter_close(it);
		cr_assert_eq(pmwal_close(w), 0);
	}
	pmwal_sim_free(s);
}

Test(sim, a_log_on_pmem_keeps_every_acked_record_in_every_image)
{
	crash_keeps_acked(PMWAL_SIM_PMEM);
}

Test(sim, a_log_on_nvme_keeps_every_acked_record_in_every_image)
{
	crash_keeps_acked(PMWAL_SIM_NVME);
}

Test(sim, a_log_on_fakepmr_keeps_every_acked_record_in_every_image)
{
	crash_keeps_acked(PMWAL_SIM_FAKEPMR);
}

/* A medium freed while a log is open on it lives until the log closes; every
 * call takes NULL without a crash. */
Test(sim, free_while_a_log_is_open_waits_for_its_close_and_null_is_refused)
{
	struct pmwal_sim *s = make(PMWAL_SIM_NVME, 0, 0);
	struct pmwal_options o = {.target = pmwal_sim_target(s),
				  .flags = PMWAL_OPEN_CREATE,
				  .capacity_bytes = MEDIUM_BYTES};
	struct pmwal *w;
	uint64_t lsn;

	cr_assert_eq(pmwal_open(&o, &w), 0);
	pmwal_sim_free(s);
	cr_assert_eq(pmwal_append(w, "a", 1, &lsn), 0);
	cr_assert_eq(pmwal_close(w), 0);

	cr_assert_null(pmwal_sim_target(NULL));
	cr_assert_eq(pmwal_sim_events(NULL), 0);
	cr_assert_eq(pmwal_sim_pending(NULL), 0);
	pmwal_sim_crash_at(NULL, 1);
	pmwal_sim_crash(NULL);
	pmwal_sim_reset(NULL);
	cr_assert_eq(pmwal_sim_crashed(NULL), 0);
	cr_assert_eq(pmwal_sim_crash_images(NULL, NULL), 0);
	cr_assert_eq(pmwal_sim_apply_image(NULL, 0), -EINVAL);
	cr_assert_eq(pmwal_sim_damage(NULL, 0, 1, PMWAL_SIM_FLIP), -EINVAL);
	cr_assert_eq(pmwal_sim_fault(NULL, NULL), -EINVAL);
	cr_assert_null(pmwal_sim_durable(NULL));
}

/* A log whose superblock copy 1 was torn by a crash (copy 0 holds the state),
 * built afresh for each try; 0 when the crash at release event @k leaves no
 * such image. */
static int torn_copy1_log(struct pmwal_sim *s, const struct pmwal_options *create, uint64_t k,
			  uint64_t *image)
{
	struct pmwal *w;
	uint64_t lsn;

	pmwal_sim_reset(s);
	cr_assert_eq(pmwal_open(create, &w), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(pmwal_append(w, "abc", 3, &lsn), 0);
	pmwal_sim_crash_at(s, pmwal_sim_events(s) + k);
	pmwal_release(w, 2);
	pmwal_close(w);
	if (!pmwal_sim_crashed(s))
		return -1;
	uint64_t n = pmwal_sim_crash_images(s, NULL);
	for (uint64_t i = *image; i < n; i++) {
		struct wal_sb a, b;
		cr_assert_eq(pmwal_sim_apply_image(s, i), 0);
		const uint8_t *d = pmwal_sim_durable(s);
		if (wal_sb_decode(d, &a) == 0 && wal_sb_decode(d + WAL_SB_BYTES, &b) != 0) {
			*image = i;
			return 1;
		}
	}
	return 0;
}

/* Found by `pmwal crashtest --mode exhaustive --medium pmem` (point 233):
 * with copy 1 torn by a crash, recovery's superblock update overwrote copy 0,
 * the only valid one, first; a second power loss inside that write left no
 * valid copy and a log that no longer opened. The torn copy is written first. */
Test(sim, a_crash_in_recovery_superblock_write_after_a_torn_copy_keeps_a_valid_copy)
{
	struct pmwal_sim *s = make(PMWAL_SIM_PMEM, 0, 0);
	struct pmwal_options o = {.target = pmwal_sim_target(s),
				  .capacity_bytes = MEDIUM_BYTES,
				  .flags = PMWAL_OPEN_CREATE};
	uint64_t k, image = 0;
	int found = 0;

	for (k = 0; k < 64 && found <= 0; k++)
		if ((found = torn_copy1_log(s, &o, k, &image)) < 0)
			break;
	cr_assert_eq(found, 1, "no crash point in a release tears copy 1 alone");
	k--;
	o.flags = 0;
	int crashed = 1;
	for (uint64_t j = 0; crashed && j < 64; j++) {
		struct pmwal *w;
		uint64_t im = image;

		cr_assert_eq(torn_copy1_log(s, &(struct pmwal_options){.target = o.target,
									.capacity_bytes = MEDIUM_BYTES,
									.flags = PMWAL_OPEN_CREATE},
					    k, &im),
			     1);
		cr_assert_eq(im, image);
		pmwal_sim_crash_at(s, pmwal_sim_events(s) + j);
		if (pmwal_open(&o, &w) == 0)
			pmwal_close(w);
		crashed = pmwal_sim_crashed(s);
		if (!crashed)
			break;
		uint64_t n = pmwal_sim_crash_images(s, NULL);
		for (uint64_t i = 0; i < n; i++) {
			char err[256] = "";
			o.errmsg_buf = err;
			o.errmsg_len = sizeof(err);
			cr_assert_eq(pmwal_sim_apply_image(s, i), 0);
			cr_assert_eq(pmwal_open(&o, &w), 0,
				     "recovery crash at its event %llu, image %llu: %s",
				     (unsigned long long)j, (unsigned long long)i, err);
			cr_assert_geq(pmwal_durable_lsn(w) + 1, 4);
			pmwal_close(w);
			o.errmsg_buf = NULL;
		}
	}
	cr_assert_eq(crashed, 0, "recovery made more than 64 events");
	pmwal_sim_free(s);
}

/* Found by `pmwal crashtest --mode random` (nvme, seed 9): options with the
 * buffered commit policy made a read-only open (and so pmwal_verify) start
 * the background committer, which a read-only close never stopped: the close
 * hung forever destroying the condition variable the committer waited on. */
Test(sim, verify_and_read_only_opens_with_the_buffered_policy_return, .timeout = 20)
{
	struct pmwal_sim *s = make(PMWAL_SIM_NVME, 0, 0);
	struct pmwal_options o = {.target = pmwal_sim_target(s),
				  .capacity_bytes = MEDIUM_BYTES,
				  .flags = PMWAL_OPEN_CREATE,
				  .commit_policy = PMWAL_COMMIT_BUFFERED};
	struct pmwal_report rep;
	struct pmwal *w;
	uint64_t lsn;

	cr_assert_eq(pmwal_open(&o, &w), 0);
	cr_assert_eq(pmwal_append(w, "abc", 3, &lsn), 0);
	cr_assert_eq(pmwal_close(w), 0);
	o.flags = 0;
	for (int i = 0; i < 20; i++)
		cr_assert_eq(pmwal_verify(&o, &rep), 0);
	cr_assert_eq(rep.records, 1);
	o.flags = PMWAL_OPEN_READONLY;
	cr_assert_eq(pmwal_open(&o, &w), 0);
	cr_assert_eq(pmwal_close(w), 0);
	pmwal_sim_free(s);
}

/*
 * A write the medium acknowledged but lost, in the last group: nothing on the
 * medium shows it until a release's search reads that block back. Then the
 * handle must fail stop (nothing more acknowledged), and the superblock must
 * be made to attest what was durable, so that recovery calls the damage
 * CORRUPT at its LSN instead of cutting the acked record off as a torn tail
 * (found by `pmwal crashtest --mode faults --seed 11`: CLEAN, LSN 61 gone).
 */
static void lost_tail_write_found_by_release(uint32_t medium)
{
	struct pmwal_sim *s = make(medium, 0, 0);
	struct pmwal_options o = {.target = pmwal_sim_target(s),
				  .capacity_bytes = MEDIUM_BYTES,
				  .flags = PMWAL_OPEN_CREATE};
	struct pmwal *w;
	uint64_t lsn;

	cr_assert_eq(pmwal_open(&o, &w), 0);
	for (int k = 1; k <= 5; k++)
		cr_assert_eq(pmwal_append(w, "record", 6, &lsn), 0);
	struct pmwal_sim_fault f = {.kind = PMWAL_SIM_LOST, .event = pmwal_sim_events(s)};

	cr_assert_eq(pmwal_sim_fault(s, &f), 0);
	cr_assert_eq(pmwal_append(w, "lost!!", 6, &lsn), 0, "the device said done");
	cr_assert_eq(lsn, 6);
	/* The search for LSN 6 reads the lost block back. */
	int rc = pmwal_release(w, 6);

	cr_assert(rc == PMWAL_ECORRUPT || rc == -EIO, "release over a lost write: %s",
		  pmwal_strerror(rc));
	cr_assert(strstr(pmwal_errmsg(w), "closed for writing"), "%s", pmwal_errmsg(w));
	rc = pmwal_append(w, "after", 5, &lsn);
	cr_assert_neq(rc, 0, "LSN %llu acknowledged after the log was found damaged",
		      (unsigned long long)lsn);
	cr_assert_neq(pmwal_sync(w), 0);
	pmwal_close(w);

	struct pmwal_report rep;

	o.flags = 0;
	cr_assert_eq(pmwal_verify(&o, &rep), 0);
	cr_assert_eq(rep.verdict, PMWAL_CORRUPT,
		     "verdict %d with records %llu..%llu: acked LSN 6 cut off quietly",
		     rep.verdict, (unsigned long long)rep.first_lsn,
		     (unsigned long long)rep.last_lsn);
	cr_assert_eq(rep.corrupt_lsn, 6);
	cr_assert_eq(pmwal_open(&o, &w), PMWAL_ECORRUPT);
	pmwal_sim_free(s);
}

Test(sim, a_lost_tail_write_found_by_release_fails_stop_and_reads_corrupt_on_pmem)
{
	lost_tail_write_found_by_release(PMWAL_SIM_PMEM);
}

Test(sim, a_lost_tail_write_found_by_release_fails_stop_and_reads_corrupt_on_nvme)
{
	lost_tail_write_found_by_release(PMWAL_SIM_NVME);
}

/* PMWAL_SIM_PROTECT: the seam's own stores land, a store past it faults. */
#if defined(__SANITIZE_ADDRESS__)
#define PMWAL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PMWAL_ASAN 1
#endif
#endif

Test(sim, a_store_that_bypasses_the_seam_faults_under_protect, .signal = SIGSEGV)
{
#ifdef PMWAL_ASAN
	/* ASan would take the SIGSEGV itself and abort: let it kill us. */
	signal(SIGSEGV, SIG_DFL);
#endif
	struct pmwal_sim *s = make(PMWAL_SIM_PMEM, PMWAL_SIM_PROTECT, 0);
	struct wal_dev *d = open_dev(s);
	uint8_t buf[64] = {7};
	struct wal_io io = {buf, sizeof(buf), 128};

	cr_assert_eq(d->ops->store(d, &io, 1), 0);
	cr_assert_eq(d->ops->map(d)[128], 7, "the seam's store is visible");
	pmwal_sim_damage(s, 0, 8, PMWAL_SIM_ZERO);
	cr_assert_eq(pmwal_sim_apply_image(s, 0) == -EINVAL, 1); /* no crash yet */
	((volatile uint8_t *)d->ops->map(d))[256] = 1; /* a stray store: SIGSEGV here */
	cr_assert_fail("a store outside the seam landed");
}
