// SPDX-License-Identifier: MIT
/*
 * test_attack.c - the outside attack's cases on the format and the engine
 * (issue 13 classes 2-5), each one a test that failed before its fix:
 * superblock damage and choice, release and the head, damage at the tail,
 * and callbacks that call back. On the simulated device, so every byte is
 * the test's to damage.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "format.h"
#include "testutil.h"
#include "xxh.h"

#define LOG_BYTES (4u << 20)

static struct pmwal *open_sim(struct sim_dev *sim, uint32_t flags)
{
	struct pmwal *w = NULL;
	struct pmwal_options o = tu_sim_opts(flags, LOG_BYTES);
	int rc = wal_open_dev(&o, sim_wal_dev(sim), &w);

	cr_assert_eq(rc, 0, "open: %s", pmwal_strerror(rc));
	return w;
}

static void append_keyed(struct pmwal *w, int n, size_t len)
{
	char buf[9000];

	for (int i = 0; i < n; i++) {
		uint64_t lsn = pmwal_durable_lsn(w) + 1;

		tu_fill(buf, len, lsn);
		cr_assert_eq(pmwal_append(w, buf, len, &lsn), 0);
	}
}

/* Two opens' worth of records: 10 then 10 more, closed cleanly each time. */
static struct sim_dev *two_opens(void)
{
	struct sim_dev *sim = sim_new(LOG_BYTES);
	struct pmwal *w = open_sim(sim, PMWAL_OPEN_CREATE);

	append_keyed(w, 10, 100);
	cr_assert_eq(pmwal_close(w), 0);
	w = open_sim(sim, 0);
	append_keyed(w, 10, 100);
	cr_assert_eq(pmwal_close(w), 0);
	return sim;
}

static struct pmwal_report verify(struct sim_dev *sim, int want_rc)
{
	struct pmwal_report rep = {0};
	int rc = tu_verify_image(sim, &rep);

	cr_assert_eq(rc, want_rc, "verify: %s", pmwal_strerror(rc));
	return rep;
}

/* Class 2: one changed byte in either superblock copy loses nothing. */
Test(attack, one_damaged_byte_in_either_superblock_copy_loses_no_record)
{
	for (int copy = 0; copy < 2; copy++) {
		struct sim_dev *sim = two_opens();

		sim_image(sim)[copy * WAL_SB_BYTES + 60] ^= 0x10; /* head_seq */
		struct pmwal_report rep = verify(sim, 0);

		cr_assert_eq(rep.verdict, PMWAL_CLEAN, "copy %d: %s", copy, rep.detail);
		cr_assert_eq(rep.records, 20, "copy %d damaged: %llu records", copy,
			     (unsigned long long)rep.records);
		/* And the next append continues after LSN 20. */
		struct pmwal *w = open_sim(sim, 0);
		uint64_t lsn;

		cr_assert_eq(pmwal_append(w, "x", 1, &lsn), 0);
		cr_assert_eq(lsn, 21, "copy %d: LSN %llu reused", copy,
			     (unsigned long long)lsn);
		pmwal_close(w);
		sim_free(sim);
	}
}

/* Class 2: a foreign log's (newer) superblock in one slot is no reason to
 * drop this log's records. */
Test(attack, a_foreign_superblock_in_one_slot_is_refused_not_trusted)
{
	struct sim_dev *sim = two_opens(), *other = two_opens();

	/* The other log has its own id; make its copy "newer" and re-seal. */
	uint8_t *sb = sim_image(other) + WAL_SB_BYTES;

	wal_put64(sb + 32, 1000);
	wal_put64(sb, wal_xxh3(sb + 8, WAL_SB_BYTES - 8, WAL_SB_SEED));
	memcpy(sim_image(sim) + WAL_SB_BYTES, sb, WAL_SB_BYTES);
	struct pmwal_report rep;
	int rc = tu_verify_image(sim, &rep);

	cr_assert(rc == PMWAL_ECORRUPT || (rc == 0 && rep.records == 20),
		  "a foreign superblock was trusted: rc %d, %llu records", rc,
		  (unsigned long long)rep.records);
	sim_free(sim);
	sim_free(other);
}

/* Class 2: a copy resealed with another format version is no damaged copy
 * to route around: another pmwal or tool wrote it. Read-only or for writing,
 * the open is refused by that version (named, with the one supported), and
 * nothing is written. */
Test(attack, a_superblock_copy_of_another_format_version_refuses_the_log)
{
	static const uint32_t versions[] = {1, 3, 0, UINT32_MAX};

	for (int copy = 0; copy < 2; copy++)
		for (size_t k = 0; k < sizeof(versions) / sizeof(versions[0]); k++) {
			struct sim_dev *sim = two_opens();
			uint8_t *sb = sim_image(sim) + copy * WAL_SB_BYTES;
			uint32_t v = versions[k];

			wal_put32(sb + 16, v);
			wal_put64(sb, wal_xxh3(sb + 8, WAL_SB_BYTES - 8, WAL_SB_SEED));
			uint8_t *before = malloc(sim_size(sim));

			cr_assert_not_null(before);
			memcpy(before, sim_image(sim), sim_size(sim));
			for (int ro = 0; ro < 2; ro++) {
				char err[512] = "", want[64];
				struct pmwal_options o = tu_sim_opts(
				    ro ? PMWAL_OPEN_READONLY | PMWAL_OPEN_SALVAGE : 0, 0);
				struct pmwal *w = NULL;

				o.errmsg_buf = err;
				o.errmsg_len = sizeof(err);
				int rc = wal_open_dev(&o, sim_wal_dev(sim), &w);

				cr_assert_eq(rc, PMWAL_EFORMAT,
					     "copy %d version %u (%s): rc %d, the other "
					     "copy was chosen",
					     copy, v, ro ? "read-only" : "writing", rc);
				cr_assert_null(w);
				snprintf(want, sizeof(want), "format version %u", v);
				cr_assert_not_null(strstr(err, want), "%s", err);
				cr_assert_not_null(strstr(err, "supports version 2 only"),
						   "%s", err);
			}
			cr_assert_eq(memcmp(before, sim_image(sim), sim_size(sim)), 0,
				     "copy %d version %u: the refused open wrote", copy,
				     v);
			free(before);
			sim_free(sim);
		}
}

/* Class 2: fields that pass the checksum but lie are refused or caught,
 * never a crash, a hang or a quiet loss. */
Test(attack, checksummed_lies_in_the_superblock_never_lose_records_quietly, .timeout = 30)
{
	static const struct {
		uint32_t off, width;
		uint64_t value;
	} lies[] = {
	    {40, 8, UINT64_MAX / 4096},	 /* capacity: 8192 + cap * 4096 wraps */
	    {40, 8, 300},		 /* capacity below what the blocks use */
	    {72, 4, UINT32_MAX},	 /* group_blocks_max huge */
	    {72, 4, 2000},		 /* group_blocks_max above capacity */
	    {48, 4, UINT32_MAX},	 /* epoch at its maximum */
	    {48, 4, UINT32_MAX - 1},	 /* epoch one below: read-only is fine */
	    {64, 8, 15},		 /* head_lsn past ... */
	    {96, 8, 15},		 /* ... and end_lsn short of the records */
	    {88, 8, 1},			 /* end_seq short of the blocks */
	    {56, 8, 3},			 /* head_seq inside the log */
	};
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		struct sim_dev *sim = two_opens();

		for (int copy = 0; copy < 2; copy++) {
			uint8_t *sb = sim_image(sim) + copy * WAL_SB_BYTES;

			if (lies[i].width == 8)
				wal_put64(sb + lies[i].off, lies[i].value);
			else
				wal_put32(sb + lies[i].off, (uint32_t)lies[i].value);
			wal_put64(sb, wal_xxh3(sb + 8, WAL_SB_BYTES - 8, WAL_SB_SEED));
		}
		struct pmwal_report rep = {0};
		int rc = tu_verify_image(sim, &rep);

		if (rc == 0 && rep.verdict != PMWAL_CORRUPT)
			cr_assert_eq(rep.records, 20,
				     "lie %zu: %s with %llu of 20 records (%s)", i,
				     rep.verdict ? "torn tail" : "clean",
				     (unsigned long long)rep.records, rep.detail);
		sim_free(sim);
	}
}

/* Class 3: releasing everything, then reopening: nothing spins, the
 * durable LSN is not below the head, LSNs go on. */
Test(attack, release_everything_then_reopen_close_and_append_do_not_hang, .timeout = 20)
{
	struct sim_dev *sim = sim_new(LOG_BYTES);
	struct pmwal *w = open_sim(sim, PMWAL_OPEN_CREATE);

	append_keyed(w, 5, 100);
	cr_assert_eq(pmwal_release(w, 6), 0);
	cr_assert_eq(pmwal_close(w), 0);
	w = open_sim(sim, 0);
	cr_assert_geq(pmwal_durable_lsn(w), 5, "durable LSN %llu below the head",
		      (unsigned long long)pmwal_durable_lsn(w));
	cr_assert_eq(pmwal_sync(w), 0);
	cr_assert_eq(pmwal_release(w, 6), 0);
	cr_assert_eq(pmwal_close(w), 0); /* spun forever before */
	w = open_sim(sim, 0);
	uint64_t lsn;

	cr_assert_eq(pmwal_append(w, "y", 1, &lsn), 0);
	cr_assert_eq(lsn, 6);
	cr_assert_eq(pmwal_close(w), 0);
	sim_free(sim);
}

/* Class 3: a torn group cut off, then everything released: the head must
 * not point at the cut-off blocks and read them as records. */
Test(attack, release_all_after_a_cut_off_tail_resurrects_nothing)
{
	for (uint64_t prefix = 1; prefix <= 16; prefix++) {
		struct sim_dev *sim = sim_new(LOG_BYTES);
		struct pmwal *w = open_sim(sim, PMWAL_OPEN_CREATE);
		char big[9000];

		append_keyed(w, 3, 100);
		/* The next group: a 3-block record, torn after @prefix sectors. */
		sim_crash_at(sim, sim_commits(sim), SIM_TEAR_PREFIX, prefix);
		tu_fill(big, sizeof(big), 4);
		cr_assert_neq(pmwal_append(w, big, sizeof(big), NULL), 0);
		pmwal_close(w);
		struct sim_dev *after = sim_from_image(sim_image(sim), LOG_BYTES);

		w = open_sim(after, 0);
		cr_assert_eq(pmwal_durable_lsn(w), 3);
		cr_assert_eq(pmwal_release(w, 4), 0);
		cr_assert_eq(pmwal_close(w), 0);
		struct pmwal_report rep = verify(after, 0);

		cr_assert_eq(rep.records, 0, "prefix %llu: %llu never-acked records back (%s)",
			     (unsigned long long)prefix, (unsigned long long)rep.records,
			     rep.detail);
		w = open_sim(after, 0);
		uint64_t lsn;

		cr_assert_eq(pmwal_append(w, "z", 1, &lsn), 0);
		cr_assert_eq(lsn, 4);
		pmwal_close(w);
		sim_free(after);
		sim_free(sim);
	}
}

/* Class 4: zeroing the last groups of a cleanly closed log is corruption,
 * not a clean end whose LSNs the next append reuses. */
Test(attack, zeroed_last_groups_of_a_closed_log_are_corrupt)
{
	for (int groups = 1; groups <= 3; groups++) {
		struct sim_dev *sim = two_opens();
		struct pmwal_report rep = verify(sim, 0);
		uint64_t end = (rep.end_offset - WAL_RING_OFFSET) / WAL_BLOCK_BYTES;

		/* Each record was its own one-block group. */
		memset(sim_image(sim) + wal_slot_offset(end - (uint64_t)groups), 0,
		       (size_t)groups * WAL_BLOCK_BYTES);
		rep = verify(sim, 0);
		cr_assert_eq(rep.verdict, PMWAL_CORRUPT, "%d groups zeroed: %s (%llu records)",
			     groups, rep.detail, (unsigned long long)rep.records);
		cr_assert_eq(rep.corrupt_lsn, 21 - (uint64_t)groups);
		struct pmwal *w = NULL;
		struct pmwal_options o = tu_sim_opts(0, 0);

		cr_assert_eq(wal_open_dev(&o, sim_wal_dev(sim), &w), PMWAL_ECORRUPT);
		sim_free(sim);
	}
}

/* Class 4: one changed byte in the last block of a closed log is CORRUPT. */
Test(attack, one_changed_byte_in_the_last_block_of_a_closed_log_is_corrupt)
{
	struct sim_dev *sim = two_opens();
	struct pmwal_report rep = verify(sim, 0);
	uint64_t end = (rep.end_offset - WAL_RING_OFFSET) / WAL_BLOCK_BYTES;

	sim_image(sim)[wal_slot_offset(end - 1) + 30] ^= 1;
	rep = verify(sim, 0);
	cr_assert_eq(rep.verdict, PMWAL_CORRUPT, "%s", rep.detail);
	sim_free(sim);
}

/* Class 4: a clean log created over old bytes (or garbage) reads clean. */
Test(attack, a_closed_log_created_over_garbage_reads_clean)
{
	struct sim_dev *sim = sim_new(LOG_BYTES);

	memset(sim_image(sim), 0xA5, LOG_BYTES);
	struct pmwal *w = open_sim(sim, PMWAL_OPEN_FORMAT | PMWAL_OPEN_FORCE);

	append_keyed(w, 7, 300);
	cr_assert_eq(pmwal_close(w), 0);
	struct pmwal_report rep = verify(sim, 0);

	cr_assert_eq(rep.verdict, PMWAL_CLEAN, "%s", rep.detail);
	cr_assert_eq(rep.records, 7);
	w = open_sim(sim, 0);
	pmwal_close(w);
	rep = verify(sim, 0);
	cr_assert_eq(rep.verdict, PMWAL_CLEAN, "after a second open: %s", rep.detail);
	sim_free(sim);
}

/* Class 5: a durability callback that appends, async and blocking, until
 * groups fill, and syncs: nothing deadlocks, every record is acked. */
struct cb_state {
	struct pmwal *w;
	int calls;
	int status_bad;
	uint64_t last_lsn; /* callbacks come one at a time, in LSN order */
	int out_of_order, close_not_refused;
};

static void cb_appending(void *arg, uint64_t lsn, int status)
{
	struct cb_state *st = arg;
	char rec[3000];

	if (status)
		st->status_bad++;
	if (lsn <= st->last_lsn)
		st->out_of_order++;
	st->last_lsn = lsn;
	if (st->calls == 7 && pmwal_close(st->w) != -EDEADLK)
		st->close_not_refused++;
	if (__atomic_add_fetch(&st->calls, 1, __ATOMIC_SEQ_CST) > 400)
		return;
	memset(rec, 'c', sizeof(rec));
	/* Fill groups from inside the callback: async, then a blocking one. */
	for (int i = 0; i < 4; i++)
		pmwal_append_async(st->w, rec, sizeof(rec), cb_appending, st, NULL);
	if (st->calls % 50 == 0) {
		if (pmwal_append(st->w, rec, sizeof(rec), NULL))
			st->status_bad++;
		if (pmwal_sync(st->w))
			st->status_bad++;
	}
}

Test(attack, a_callback_that_appends_and_syncs_never_deadlocks, .timeout = 60)
{
	struct sim_dev *sim = sim_new(64u << 20);
	struct pmwal *w = NULL;
	struct pmwal_options o = tu_sim_opts(PMWAL_OPEN_CREATE, 64u << 20);

	o.group_bytes_max = 16384; /* small groups fill fast */
	cr_assert_eq(wal_open_dev(&o, sim_wal_dev(sim), &w), 0);
	struct cb_state st = {.w = w};

	cr_assert_eq(pmwal_append_async(w, "go", 2, cb_appending, &st, NULL), 0);
	while (__atomic_load_n(&st.calls, __ATOMIC_SEQ_CST) < 400)
		cr_assert_eq(pmwal_sync(w), 0);
	cr_assert_eq(pmwal_close(w), 0);
	cr_assert_eq(st.status_bad, 0);
	cr_assert_eq(st.out_of_order, 0, "callbacks ran out of LSN order");
	cr_assert_eq(st.close_not_refused, 0, "pmwal_close inside a callback was not refused");
	sim_free(sim);
}

/* Class 4 (and seeded bug STOP_AT_FIRST_BAD): in a log still open for writing,
 * blocks past the superblock's end_seq are proven only by what follows them.
 * A damaged block with later groups behind it is CORRUPT at its LSN, never the
 * torn end of the log. */
Test(attack, damage_before_later_groups_of_an_open_log_is_corrupt)
{
	struct sim_dev *sim = sim_new(LOG_BYTES);
	struct pmwal *w = open_sim(sim, PMWAL_OPEN_CREATE);

	append_keyed(w, 10, 100); /* ten groups, blocks 0..9, LSN k in block k-1 */
	/* The image as a crash now would leave it: never closed. */
	struct sim_dev *crash = sim_from_image(sim_image(sim), sim_size(sim));

	cr_assert_eq(pmwal_close(w), 0);
	sim_image(crash)[wal_slot_offset(3) + WAL_HDR_BYTES + 10] ^= 0x01;
	struct pmwal_report rep = verify(crash, 0);

	cr_assert_eq(rep.verdict, PMWAL_CORRUPT, "damage before later groups read as %s (%s)",
		     rep.verdict == PMWAL_CLEAN ? "clean" : "a torn tail", rep.detail);
	cr_assert_eq(rep.corrupt_lsn, 4, "corrupt at LSN %llu, not 4",
		     (unsigned long long)rep.corrupt_lsn);
	sim_free(crash);
	sim_free(sim);
}

/* Every record of the log at @w, LSNs 1..@n with tu_fill(lsn) bytes. */
static void assert_keyed(struct pmwal *w, uint64_t n, const char *what)
{
	struct pmwal_iter *it;
	const void *data;
	size_t len;
	uint64_t lsn, seen = 0;

	cr_assert_eq(pmwal_iter_open(w, 0, &it), 0, "%s", what);
	while (pmwal_iter_next(it, &lsn, &data, &len) == 1) {
		seen++;
		cr_assert_eq(lsn, seen, "%s", what);
		cr_assert(tu_check(data, len, lsn), "%s: LSN %llu damaged", what,
			  (unsigned long long)lsn);
	}
	pmwal_iter_close(it);
	cr_assert_eq(seen, n, "%s: %llu of %llu records", what, (unsigned long long)seen,
		     (unsigned long long)n);
}

/* One superblock copy overwritten by another log's: a plain open refuses
 * (CORRUPT, two logs), salvage uses the copy whose log id the blocks carry
 * and returns every record; a salvaging writer's superblock repairs it. */
Test(attack, salvage_reads_past_a_superblock_copy_of_another_log)
{
	for (int copy = 0; copy < 2; copy++) {
		struct sim_dev *sim = sim_new(LOG_BYTES), *other = sim_new(LOG_BYTES);
		struct pmwal *w;
		char err[512] = "";

		w = open_sim(sim, PMWAL_OPEN_CREATE);
		append_keyed(w, 50, 300);
		cr_assert_eq(pmwal_close(w), 0);
		w = open_sim(other, PMWAL_OPEN_CREATE);
		append_keyed(w, 3, 100);
		cr_assert_eq(pmwal_close(w), 0);
		memcpy(sim_image(sim) + copy * WAL_SB_BYTES,
		       sim_image(other) + copy * WAL_SB_BYTES, WAL_SB_BYTES);

		struct pmwal_options o = tu_sim_opts(0, LOG_BYTES);

		o.errmsg_buf = err;
		o.errmsg_len = sizeof(err);
		cr_assert_eq(wal_open_dev(&o, sim_wal_dev(sim), &w), PMWAL_ECORRUPT,
			     "copy %d: %s", copy, err);
		cr_assert(strstr(err, "name two logs"), "%s", err);
		for (int ro = 1; ro >= 0; ro--) {
			o.flags = PMWAL_OPEN_SALVAGE | (ro ? PMWAL_OPEN_READONLY : 0);
			cr_assert_eq(wal_open_dev(&o, sim_wal_dev(sim), &w), 0,
				     "copy %d, salvage%s: %s", copy, ro ? " read-only" : "",
				     err);
			const struct pmwal_report *r = pmwal_recovery_report(w);

			cr_assert_eq(r->verdict, PMWAL_CORRUPT, "%s", r->detail);
			cr_assert_eq(r->corrupt_offset, (uint64_t)copy * WAL_SB_BYTES);
			cr_assert(strstr(r->detail, "salvage used the copy at offset"), "%s",
				  r->detail);
			assert_keyed(w, 50, ro ? "salvage read-only" : "salvage");
			cr_assert_eq(pmwal_close(w), 0);
		}
		/* The salvaging writer wrote both copies: a plain open reads it. */
		o.flags = 0;
		cr_assert_eq(wal_open_dev(&o, sim_wal_dev(sim), &w), 0, "%s", err);
		assert_keyed(w, 50, "after the salvaging writer");
		pmwal_close(w);
		sim_free(other);
		sim_free(sim);
	}
}

/* ---- every public entry point with NULL, 0, the maximum and one past it ---- */

#define API_REC_MAX 4096u

struct api_ctx {
	struct pmwal *w, *ro, *spare;
	struct pmwal_iter *it;
	struct pmwal_sim *sim;
	struct pmwal_options o;
	uint8_t buf[2 * API_REC_MAX];
	struct iovec many[IOV_MAX + 1];
	struct pmwal_info info;
	struct pmwal_report rep;
	struct pmwal_target t;
	struct pmwal_sim_fault f;
	char path[64];
	uint64_t lsn;
	const void *data;
	size_t len;
	long pid;
};

static void api_cb(void *arg, uint64_t lsn, int status)
{
	(void)arg, (void)lsn, (void)status;
}

static struct iovec api_iov[2];

/* Two records: @a then @b (NULL: only one). */
static const struct iovec *iov2(const void *a, size_t alen, const void *b, size_t blen)
{
	api_iov[0] = (struct iovec){(void *)a, alen};
	api_iov[1] = (struct iovec){(void *)b, blen};
	return api_iov;
}

/*
 * NAME, the result wanted, what pmwal_errmsg(c->w) must then contain (NULL:
 * not checked), the call. Rows that returned before anything was checked
 * (iov_base NULL: SIGSEGV in the stage copy) would crash this test.
 */
#define API_CASES(X)                                                                          \
	X(open_null_options, PMWAL_EBADOPT, NULL, pmwal_open(NULL, &c->spare))                   \
	X(open_null_out, -EINVAL, NULL, pmwal_open(&c->o, NULL))                                \
	X(close_null, 0, NULL, pmwal_close(NULL))                                               \
	X(append_null_handle, -EINVAL, NULL, pmwal_append(NULL, "x", 1, NULL))                  \
	X(append_null_data, -EINVAL, "iov_base is NULL", pmwal_append(c->w, NULL, 5, NULL))     \
	X(append_null_data_len_0, -EINVAL, "empty", pmwal_append(c->w, NULL, 0, NULL))          \
	X(append_len_0, -EINVAL, "empty", pmwal_append(c->w, "x", 0, NULL))                     \
	X(append_max, 0, NULL, pmwal_append(c->w, c->buf, API_REC_MAX, &c->lsn))                \
	X(append_max_plus_1, PMWAL_ETOOBIG, "maximum is 4096",                                  \
	  pmwal_append(c->w, c->buf, API_REC_MAX + 1, NULL))                                    \
	X(append_size_max, PMWAL_ETOOBIG, "maximum", pmwal_append(c->w, c->buf, SIZE_MAX, NULL)) \
	X(append_null_lsn_out, 0, NULL, pmwal_append(c->w, "x", 1, NULL))                       \
	X(append_read_only, PMWAL_EREADONLY, NULL, pmwal_append(c->ro, NULL, 5, NULL))          \
	X(appendv_null_handle, -EINVAL, NULL, pmwal_appendv(NULL, iov2("x", 1, 0, 0), 1, NULL)) \
	X(appendv_null_iov, -EINVAL, "recs is NULL", pmwal_appendv(c->w, NULL, 1, NULL))        \
	X(appendv_count_0, -EINVAL, "count 0", pmwal_appendv(c->w, iov2("x", 1, 0, 0), 0, NULL)) \
	X(appendv_count_negative, -EINVAL, "count -1",                                          \
	  pmwal_appendv(c->w, iov2("x", 1, 0, 0), -1, NULL))                                    \
	X(appendv_count_int_min, -EINVAL, "count", pmwal_appendv(c->w, api_iov, INT_MIN, NULL)) \
	X(appendv_null_base, -EINVAL, "record 0: iov_base is NULL",                             \
	  pmwal_appendv(c->w, iov2(NULL, 1, 0, 0), 1, NULL))                                    \
	X(appendv_second_null_base, -EINVAL, "record 1: iov_base is NULL",                      \
	  pmwal_appendv(c->w, iov2("x", 1, NULL, 7), 2, NULL))                                  \
	X(appendv_null_base_len_0, -EINVAL, "record 0 is empty",                                \
	  pmwal_appendv(c->w, iov2(NULL, 0, 0, 0), 1, NULL))                                    \
	X(appendv_lengths_overflow, PMWAL_ETOOBIG, "record 0 of",                               \
	  pmwal_appendv(c->w, iov2(c->buf, SIZE_MAX, c->buf, 2), 2, NULL))                      \
	X(appendv_max, 0, NULL,                                                                  \
	  pmwal_appendv(c->w, iov2(c->buf, API_REC_MAX, c->buf, API_REC_MAX), 2, NULL))         \
	X(appendv_max_plus_1, PMWAL_ETOOBIG, "record 1 of 4097",                                \
	  pmwal_appendv(c->w, iov2(c->buf, API_REC_MAX, c->buf, API_REC_MAX + 1), 2, NULL))     \
	X(appendv_iov_max_plus_1, 0, NULL, pmwal_appendv(c->w, c->many, IOV_MAX + 1, NULL))     \
	X(append_async_null_handle, -EINVAL, NULL,                                              \
	  pmwal_append_async(NULL, "x", 1, api_cb, NULL, NULL))                                 \
	X(append_async_null_data, -EINVAL, "iov_base is NULL",                                  \
	  pmwal_append_async(c->w, NULL, 5, api_cb, NULL, NULL))                                \
	X(append_async_null_cb, -EINVAL, "cb is NULL",                                          \
	  pmwal_append_async(c->w, "x", 1, NULL, NULL, NULL))                                   \
	X(append_async_max_plus_1, PMWAL_ETOOBIG, "maximum",                                    \
	  pmwal_append_async(c->w, c->buf, API_REC_MAX + 1, api_cb, NULL, NULL))                \
	X(appendv_async_null_iov, -EINVAL, "recs is NULL",                                      \
	  pmwal_appendv_async(c->w, NULL, 1, api_cb, NULL, NULL))                               \
	X(appendv_async_null_base, -EINVAL, "record 0: iov_base is NULL",                       \
	  pmwal_appendv_async(c->w, iov2(NULL, 1, 0, 0), 1, api_cb, NULL, NULL))                \
	X(appendv_async_count_0, -EINVAL, "count 0",                                            \
	  pmwal_appendv_async(c->w, iov2("x", 1, 0, 0), 0, api_cb, NULL, NULL))                 \
	X(appendv_async_null_cb, -EINVAL, "cb is NULL",                                         \
	  pmwal_appendv_async(c->w, iov2("x", 1, 0, 0), 1, NULL, NULL, NULL))                   \
	X(appendv_async_null_handle, -EINVAL, NULL,                                             \
	  pmwal_appendv_async(NULL, iov2("x", 1, 0, 0), 1, api_cb, NULL, NULL))                 \
	X(appendv_async_max, 0, NULL,                                                            \
	  pmwal_appendv_async(c->w, iov2(c->buf, API_REC_MAX, 0, 0), 1, api_cb, NULL, NULL))    \
	X(wait_null, -EINVAL, NULL, pmwal_wait(NULL, 1))                                        \
	X(wait_lsn_max, PMWAL_ERANGE, NULL, pmwal_wait(c->w, UINT64_MAX))                       \
	X(wait_lsn_0, 0, NULL, pmwal_wait(c->w, 0))                                             \
	X(sync_null, -EINVAL, NULL, pmwal_sync(NULL))                                           \
	X(durable_lsn_null, 0, NULL, (int)pmwal_durable_lsn(NULL))                              \
	X(release_null, -EINVAL, NULL, pmwal_release(NULL, 1))                                  \
	X(release_lsn_max, PMWAL_ERANGE, NULL, pmwal_release(c->w, UINT64_MAX))                 \
	X(release_lsn_0, 0, NULL, pmwal_release(c->w, 0))                                       \
	X(iter_open_null_handle, -EINVAL, NULL, pmwal_iter_open(NULL, 0, &c->it))               \
	X(iter_open_null_out, -EINVAL, NULL, pmwal_iter_open(c->w, 0, NULL))                    \
	X(iter_open_lsn_max, PMWAL_ERANGE, NULL, pmwal_iter_open(c->w, UINT64_MAX, &c->it))     \
	X(iter_next_null_iter, -EINVAL, NULL, pmwal_iter_next(NULL, &c->lsn, &c->data, &c->len)) \
	X(iter_next_null_lsn, -EINVAL, "lsn is NULL", pmwal_iter_next(c->it, NULL, &c->data, &c->len)) \
	X(iter_next_null_data, -EINVAL, "data is NULL", pmwal_iter_next(c->it, &c->lsn, NULL, &c->len)) \
	X(iter_next_null_len, -EINVAL, "len is NULL", pmwal_iter_next(c->it, &c->lsn, &c->data, NULL)) \
	X(iter_next, 1, NULL, pmwal_iter_next(c->it, &c->lsn, &c->data, &c->len))               \
	X(iter_wait_null, -EINVAL, NULL, pmwal_iter_wait(NULL, 0))                              \
	X(iter_wait_minus_2, -EINVAL, "timeout_ms -2", pmwal_iter_wait(c->it, -2))              \
	X(iter_wait_int_min, -EINVAL, "timeout_ms", pmwal_iter_wait(c->it, INT_MIN))            \
	X(iter_close_null, 0, NULL, (pmwal_iter_close(NULL), 0))                                \
	X(stat_null_handle, -EINVAL, NULL, pmwal_stat(NULL, &c->info))                          \
	X(stat_null_info, -EINVAL, NULL, pmwal_stat(c->w, NULL))                                \
	X(writer_pid_null_target, -EINVAL, NULL, pmwal_writer_pid(NULL, &c->pid))               \
	X(writer_pid_null_pid, -EINVAL, NULL, pmwal_writer_pid(c->o.target, NULL))              \
	X(writer_pid_empty_target, -EINVAL, NULL, pmwal_writer_pid("", &c->pid))                \
	X(recovery_report_null, 0, NULL, pmwal_recovery_report(NULL) ? 0 : -1)                  \
	X(verify_null_options, -EINVAL, NULL, pmwal_verify(NULL, &c->rep))                      \
	X(verify_null_report, -EINVAL, NULL, pmwal_verify(&c->o, NULL))                         \
	X(target_parse_null_spec, PMWAL_EBADOPT, NULL, pmwal_target_parse(NULL, &c->t))         \
	X(target_parse_null_out, -EINVAL, NULL, pmwal_target_parse("/x", NULL))                 \
	X(target_path_null_target, PMWAL_EBADOPT, NULL,                                         \
	  pmwal_target_path(NULL, c->path, sizeof(c->path)))                                    \
	X(target_path_null_buf, -EINVAL, NULL, pmwal_target_path("/x", NULL, 64))               \
	X(target_path_len_0, -ENAMETOOLONG, NULL, pmwal_target_path("/x", c->path, 0))          \
	X(target_path_len_max, 1, NULL, pmwal_target_path("/x", c->path, SIZE_MAX))             \
	X(strerror_int_min, 0, NULL, pmwal_strerror(INT_MIN) ? 0 : -1)                          \
	X(errmsg_null, 0, NULL, *pmwal_errmsg(NULL))                                            \
	X(version, 0, NULL, pmwal_version() ? 0 : -1)                                           \
	X(sim_new_null_options, -EINVAL, NULL, pmwal_sim_new(NULL, &c->sim))                    \
	X(sim_new_null_out, -EINVAL, NULL,                                                      \
	  pmwal_sim_new(&(struct pmwal_sim_options){.medium = 1, .size_bytes = 1 << 20}, NULL)) \
	X(sim_new_size_0, -EINVAL, NULL,                                                        \
	  pmwal_sim_new(&(struct pmwal_sim_options){.medium = 1}, &c->sim))                     \
	X(sim_free_null, 0, NULL, (pmwal_sim_free(NULL), 0))                                    \
	X(sim_target_null, 0, NULL, pmwal_sim_target(NULL) ? -1 : 0)                            \
	X(sim_reset_null, 0, NULL, (pmwal_sim_reset(NULL), 0))                                  \
	X(sim_events_null, 0, NULL, (int)pmwal_sim_events(NULL))                                \
	X(sim_pending_null, 0, NULL, (int)pmwal_sim_pending(NULL))                              \
	X(sim_crash_at_null, 0, NULL, (pmwal_sim_crash_at(NULL, 0), 0))                         \
	X(sim_crash_null, 0, NULL, (pmwal_sim_crash(NULL), 0))                                  \
	X(sim_crashed_null, 0, NULL, pmwal_sim_crashed(NULL))                                   \
	X(sim_crash_images_null, 0, NULL, (int)pmwal_sim_crash_images(NULL, NULL))              \
	X(sim_apply_image_null, -EINVAL, NULL, pmwal_sim_apply_image(NULL, 0))                  \
	X(sim_damage_null, -EINVAL, NULL, pmwal_sim_damage(NULL, 0, 1, PMWAL_SIM_FLIP))         \
	X(sim_damage_wraps, -EINVAL, NULL,                                                      \
	  pmwal_sim_damage(c->sim, UINT64_MAX, 2, PMWAL_SIM_FLIP))                              \
	X(sim_overwrite_null_buf, -EINVAL, NULL, pmwal_sim_overwrite(c->sim, 0, NULL, 5))       \
	X(sim_overwrite_null, -EINVAL, NULL, pmwal_sim_overwrite(NULL, 0, "x", 1))              \
	X(sim_fault_null, -EINVAL, NULL, pmwal_sim_fault(NULL, &c->f))                          \
	X(sim_fault_null_fault, -EINVAL, NULL, pmwal_sim_fault(c->sim, NULL))                   \
	X(sim_clear_faults_null, 0, NULL, (pmwal_sim_clear_faults(NULL), 0))                    \
	X(sim_durable_null, 0, NULL, pmwal_sim_durable(NULL) ? -1 : 0)

#define API_FN(name, want, msg, call)                                                         \
	static int api_##name(struct api_ctx *c)                                                \
	{                                                                                        \
		return (call);                                                                   \
	}
API_CASES(API_FN)

static const struct {
	const char *name;
	int (*call)(struct api_ctx *c);
	int want;
	const char *msg;
} api_cases[] = {
#define API_ROW(name, want, msg, call) {#name, api_##name, want, msg},
    API_CASES(API_ROW)
};

Test(attack, every_entry_point_refuses_null_zero_and_too_big_arguments_by_name)
{
	static struct api_ctx ctx;
	struct api_ctx *c = &ctx;
	struct pmwal_sim_options so = {.medium = PMWAL_SIM_PMEM, .size_bytes = 4u << 20};

	cr_assert_eq(pmwal_sim_new(&so, &c->sim), 0);
	c->o = (struct pmwal_options){.target = pmwal_sim_target(c->sim),
				      .capacity_bytes = 4u << 20,
				      .record_bytes_max = API_REC_MAX,
				      .flags = PMWAL_OPEN_CREATE};
	cr_assert_eq(pmwal_open(&c->o, &c->w), 0);
	c->o.flags = PMWAL_OPEN_READONLY;
	cr_assert_eq(pmwal_open(&c->o, &c->ro), 0);
	cr_assert_eq(pmwal_append(c->w, "first", 5, NULL), 0);
	cr_assert_eq(pmwal_iter_open(c->w, 0, &c->it), 0);
	for (int i = 0; i <= IOV_MAX; i++)
		c->many[i] = (struct iovec){c->buf, 1};
	for (size_t i = 0; i < sizeof(api_cases) / sizeof(api_cases[0]); i++) {
		struct pmwal_iter *it = c->it; /* a row that opens one keeps this one */
		int rc = api_cases[i].call(c);

		if (c->it != it) {
			pmwal_iter_close(c->it);
			c->it = it;
		}
		cr_assert_eq(rc, api_cases[i].want, "%s: %d (%s), wanted %d: %s",
			     api_cases[i].name, rc, pmwal_strerror(rc), api_cases[i].want,
			     pmwal_errmsg(c->w));
		if (api_cases[i].msg)
			cr_assert(strstr(pmwal_errmsg(c->w), api_cases[i].msg),
				  "%s: the message names no argument: %s", api_cases[i].name,
				  pmwal_errmsg(c->w));
	}
	/* Nothing refused was appended: the log holds exactly what was accepted. */
	cr_assert_eq(pmwal_sync(c->w), 0);
	pmwal_iter_close(c->it);
	cr_assert_eq(pmwal_close(c->ro), 0);
	cr_assert_eq(pmwal_close(c->w), 0);
	pmwal_sim_free(c->sim);
}
