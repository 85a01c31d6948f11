// SPDX-License-Identifier: MIT
/*
 * test_fakepmr.c - the simulated NVMe PMR (pmr/fake.c) and, through it, the
 * PMR protocol in pmr/ctrl.c that real controllers run: each PMRWBM value
 * (none refuses durability), the barrier each one selects, what a power loss
 * drops, keeps or tears, and every open error a PMR can produce (no PMR,
 * disabled, not ready in time, bad health), and crash points (crash_at).
 */
#include "pmr.h"

#include "testutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#define REGION_BYTES (64u * 1024u)

static char *dir; /* per test, on tmpfs: the emulated-pmem case */
static char err[1024];

static void setup(void)
{
	dir = tu_mkdtemp_shm();
	cr_assert_not_null(dir, "mkdtemp: %s", strerror(errno));
}

static void teardown(void)
{
	tu_rmdir(dir);
	dir = NULL;
}

TestSuite(fakepmr, .init = setup, .fini = teardown);

/* Open "fakepmr:<dir>/pmr<opts>"; returns pmr_open's result. */
static int open_fake(const char *opts, bool enable, bool readonly, struct pmr_region **r)
{
	char target[256];
	struct pmr_params p = {
	    .target = target,
	    .create_bytes = readonly ? 0 : REGION_BYTES,
	    .enable = enable,
	    .readonly = readonly,
	};

	snprintf(target, sizeof(target), "fakepmr:%s/pmr%s", dir, opts);
	err[0] = '\0';
	return pmr_open(&p, r, err, sizeof(err));
}

static void fill(uint8_t *buf, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7u + 1u);
}

static bool all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

static void check_wbm(const char *opts, const char *barrier, unsigned wbm)
{
	struct pmr_region *r;
	struct pmr_info info;
	uint8_t buf[4096], back[4096];

	cr_assert_eq(open_fake(opts, false, false, &r), 0, "%s", err);
	pmr_get_info(r, &info);
	cr_assert_eq(info.kind, PMR_KIND_FAKE);
	cr_assert_str_eq(info.kind_name, "fakepmr");
	cr_assert_str_eq(info.barrier, barrier);
	cr_assert(info.durable);
	cr_assert(info.emulated, "a fake PMR is never real media");
	cr_assert_eq(info.pmrwbm, wbm);
	cr_assert_eq(pmr_size(r), REGION_BYTES);

	fill(buf, sizeof(buf), 3);
	pmr_copy_nodrain(r, 8192, buf, sizeof(buf));
	cr_assert_eq(pmr_fake_pending_bytes(r), sizeof(buf));
	cr_assert_eq(pmr_barrier(r), 0);
	cr_assert_eq(pmr_fake_pending_bytes(r), 0, "the barrier's read commits");
	cr_assert_eq(pmr_fake_power_loss(r, 1, PMR_LOSS_DROP_ALL), 0);
	cr_assert_arr_eq(pmr_base(r) + 8192, buf, sizeof(buf));
	pmr_close(r);

	cr_assert_eq(open_fake(opts, false, true, &r), 0, "%s", err);
	memcpy(back, pmr_base(r) + 8192, sizeof(back));
	cr_assert_arr_eq(back, buf, sizeof(buf), "barriered data survives reopen");
	pmr_close(r);
}

/*
 * A barrier commits every pending line however the stores scatter: runs
 * across a bitmap word's edge and across the summary's (64 words, 4096
 * lines: byte 262 144), a store of one byte, the region's last line, and
 * 300 random ones; the durable image is then exactly what was stored. The summary bitmap lets a commit skip empty words; a bit of it
 * lost would leave its word's stores out of the image.
 */
Test(fakepmr, a_barrier_commits_stores_scattered_over_the_region)
{
	enum { BYTES = 4u << 20 };
	char target[256];
	struct pmr_region *r;
	struct pmr_params p = {.target = target, .create_bytes = BYTES};
	static uint8_t model[BYTES];
	uint8_t buf[8192];
	uint64_t rng = 42;

	snprintf(target, sizeof(target), "fakepmr:%s/big", dir);
	cr_assert_eq(pmr_open(&p, &r, err, sizeof(err)), 0, "%s", err);
	memcpy(model, pmr_base(r), BYTES);
	static const uint64_t at[][2] = {
	    {262144 - 64, 128}, {262144 - 1, 2}, {4096 - 8, 16}, {100, 1},
	    {BYTES - 64, 64},	{BYTES - 1, 1},	 {512 * 1024 - 4096, 8192},
	};
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
			fill(buf, at[i][1], (uint8_t)(i + 17 * round));
			pmr_copy_nodrain(r, at[i][0], buf, at[i][1]);
			memcpy(model + at[i][0], buf, at[i][1]);
		}
		for (int i = 0; i < 300; i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			uint64_t len = 1 + (rng >> 33) % 4096;
			uint64_t off = (rng >> 11) % (BYTES - len);

			fill(buf, len, (uint8_t)(i + round));
			pmr_copy_nodrain(r, off, buf, len);
			memcpy(model + off, buf, len);
		}
		cr_assert_eq(pmr_barrier(r), 0);
		cr_assert_eq(pmr_fake_pending_bytes(r), 0, "round %d: lines left pending",
			     round);
	}
	/* The durable image, as another process maps it, while the writer is
	 * still open (closing would commit what is pending). */
	struct pmr_region *ro;
	struct pmr_params rp = {.target = target, .readonly = true};

	cr_assert_eq(pmr_open(&rp, &ro, err, sizeof(err)), 0, "%s", err);
	cr_assert(memcmp(pmr_base(ro), model, BYTES) == 0,
		  "a barriered store is missing from the durable image");
	pmr_close(ro);
	pmr_close(r);
}

Test(fakepmr, pmrsts_read_barrier_with_wbm_2)
{
	check_wbm(",wbm=2", "sfence + PMRSTS read", 2);
}

Test(fakepmr, pmr_read_barrier_with_wbm_1)
{
	check_wbm(",wbm=1", "sfence + PMR read", 1);
}

Test(fakepmr, wbm_3_prefers_the_pmrsts_read)
{
	check_wbm(",wbm=3", "sfence + PMRSTS read", 3);
}

Test(fakepmr, default_is_what_qemu_reports)
{
	check_wbm("", "sfence + PMRSTS read", 2);
}

Test(fakepmr, wbm_0_refuses_durability)
{
	struct pmr_region *r;
	struct pmr_info info;
	uint8_t buf[256];

	cr_assert_eq(open_fake(",wbm=0", false, false, &r), 0, "%s", err);
	pmr_get_info(r, &info);
	cr_assert_not(info.durable, "no barrier mechanism: nothing is durable");
	cr_assert_eq(info.pmrwbm, 0);
	cr_assert_str_eq(info.barrier, "none (PMRWBM=0)");
	fill(buf, sizeof(buf), 9);
	pmr_copy_nodrain(r, 0, buf, sizeof(buf));
	cr_assert_eq(pmr_barrier(r), -ENOTSUP);
	cr_assert_eq(pmr_fake_pending_bytes(r), sizeof(buf), "nothing was committed");
	cr_assert_eq(pmr_fake_power_loss(r, 5, PMR_LOSS_DROP_ALL), 4);
	cr_assert(all_zero(pmr_base(r), sizeof(buf)));
	pmr_close(r);
}

Test(fakepmr, reserved_wbm_bits_alone_give_no_barrier)
{
	struct pmr_region *r;
	struct pmr_info info;

	cr_assert_eq(open_fake(",wbm=4", false, false, &r), 0, "%s", err);
	pmr_get_info(r, &info);
	cr_assert_not(info.durable);
	cr_assert_eq(pmr_barrier(r), -ENOTSUP);
	pmr_close(r);
}

Test(fakepmr, power_loss_drops_only_unbarriered_stores)
{
	struct pmr_region *r;
	uint8_t a[1024], b[1024];

	cr_assert_eq(open_fake("", false, false, &r), 0, "%s", err);
	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	pmr_copy_nodrain(r, 0, a, sizeof(a));
	cr_assert_eq(pmr_barrier(r), 0);
	pmr_copy_nodrain(r, 4096, b, sizeof(b));
	cr_assert_arr_eq(pmr_base(r) + 4096, b, sizeof(b), "loads see pending stores");
	cr_assert_eq(pmr_fake_power_loss(r, 7, PMR_LOSS_DROP_ALL), 16);
	cr_assert_arr_eq(pmr_base(r), a, sizeof(a));
	cr_assert(all_zero(pmr_base(r) + 4096, sizeof(b)));
	pmr_close(r);

	cr_assert_eq(open_fake("", false, true, &r), 0, "%s", err);
	cr_assert_arr_eq(pmr_base(r), a, sizeof(a));
	cr_assert(all_zero(pmr_base(r) + 4096, sizeof(b)));
	pmr_close(r);
}

/* Write 64 pending lines over barriered ones, lose power with @mode, and
 * check each line is old, new, or (tearing) a word-wise mix. */
static void lose_and_check(int mode, uint64_t seed, unsigned *kept, unsigned *dropped,
			   unsigned *torn, uint8_t *image)
{
	enum { LINES = 64 };
	static uint8_t old[LINES * 64], new[LINES * 64];
	struct pmr_region *r;
	const uint8_t *p;
	char path[128];

	cr_assert_eq(open_fake("", false, false, &r), 0, "%s", err);
	fill(old, sizeof(old), 11);
	fill(new, sizeof(new), 99);
	pmr_copy_nodrain(r, 0, old, sizeof(old));
	cr_assert_eq(pmr_barrier(r), 0);
	pmr_copy_nodrain(r, 0, new, sizeof(new));
	cr_assert_eq(pmr_fake_power_loss(r, seed, mode), LINES);
	cr_assert_eq(pmr_fake_pending_bytes(r), 0);
	p = pmr_base(r);
	*kept = *dropped = *torn = 0;
	for (unsigned l = 0; l < LINES; l++) {
		const uint8_t *line = p + l * 64;

		if (memcmp(line, new + l * 64, 64) == 0) {
			(*kept)++;
		} else if (memcmp(line, old + l * 64, 64) == 0) {
			(*dropped)++;
		} else if (mode == PMR_LOSS_ZERO_LINES ||
			   mode == PMR_LOSS_GARBAGE_LINES) {
			bool zero = true;

			for (unsigned i = 0; i < 64; i++)
				zero = zero && line[i] == 0;
			cr_assert(zero || mode == PMR_LOSS_GARBAGE_LINES,
				  "line %u is neither old, new nor zero", l);
			(*torn)++;
		} else {
			cr_assert_eq(mode, PMR_LOSS_TEAR_WORDS,
				     "line %u is neither old nor new", l);
			for (unsigned w = 0; w < 8; w++) {
				size_t o = l * 64 + w * 8;

				cr_assert(memcmp(p + o, new + o, 8) == 0 ||
					      memcmp(p + o, old + o, 8) == 0,
					  "word %u of line %u is neither old nor new", w,
					  l);
			}
			(*torn)++;
		}
	}
	memcpy(image, p, sizeof(old));
	pmr_close(r);

	/* What the region showed is what a reboot finds. */
	cr_assert_eq(open_fake("", false, true, &r), 0, "%s", err);
	cr_assert_arr_eq(pmr_base(r), image, sizeof(old));
	pmr_close(r);
	snprintf(path, sizeof(path), "%s/pmr", dir);
	unlink(path);
}

Test(fakepmr, power_loss_keeps_a_seeded_subset_of_lines)
{
	static uint8_t img1[4096], img2[4096];
	unsigned kept, dropped, torn;

	lose_and_check(PMR_LOSS_KEEP_SUBSET, 42, &kept, &dropped, &torn, img1);
	cr_assert_gt(kept, 0);
	cr_assert_gt(dropped, 0);
	cr_assert_eq(torn, 0);
	lose_and_check(PMR_LOSS_KEEP_SUBSET, 42, &kept, &dropped, &torn, img2);
	cr_assert_arr_eq(img1, img2, sizeof(img1), "the same seed gives the same image");
}

Test(fakepmr, power_loss_tears_at_8_byte_words)
{
	static uint8_t img[4096];
	unsigned kept, dropped, torn;

	lose_and_check(PMR_LOSS_TEAR_WORDS, 1234, &kept, &dropped, &torn, img);
	cr_assert_gt(torn, 0, "some lines are torn");
}

Test(fakepmr, power_loss_zeroes_or_garbles_some_lines)
{
	static uint8_t img[4096];
	unsigned kept, dropped, damaged;

	lose_and_check(PMR_LOSS_ZERO_LINES, 77, &kept, &dropped, &damaged, img);
	cr_assert(kept && dropped && damaged, "%u kept, %u dropped, %u zeroed", kept,
		  dropped, damaged);
	lose_and_check(PMR_LOSS_GARBAGE_LINES, 78, &kept, &dropped, &damaged, img);
	cr_assert(kept && dropped && damaged, "%u kept, %u dropped, %u garbled", kept,
		  dropped, damaged);
}

Test(fakepmr, power_loss_rejects_other_regions_and_modes)
{
	struct pmr_region *r;

	cr_assert_eq(open_fake("", false, false, &r), 0, "%s", err);
	cr_assert_eq(pmr_fake_power_loss(r, 1, 17), -EINVAL);
	pmr_close(r);
}

Test(fakepmr, close_is_not_a_power_loss)
{
	struct pmr_region *r;
	uint8_t buf[512];

	cr_assert_eq(open_fake("", false, false, &r), 0, "%s", err);
	fill(buf, sizeof(buf), 5);
	pmr_copy_nodrain(r, 100, buf, sizeof(buf));
	pmr_close(r);
	cr_assert_eq(open_fake("", false, true, &r), 0, "%s", err);
	cr_assert_arr_eq(pmr_base(r) + 100, buf, sizeof(buf), "posted writes still land");
	pmr_close(r);
}

Test(fakepmr, no_pmr_is_named_with_its_fix)
{
	struct pmr_region *r = (struct pmr_region *)1;

	cr_assert_eq(open_fake(",pmrs=0", true, false, &r), -ENODEV);
	cr_assert_null(r);
	cr_assert_not_null(strstr(err, "CAP.PMRS=0"), "%s", err);
	cr_assert_not_null(strstr(err, "block device"), "%s", err);
}

Test(fakepmr, disabled_pmr_needs_the_enable_option)
{
	struct pmr_region *r;

	cr_assert_eq(open_fake(",en=0", false, false, &r), -ENXIO);
	cr_assert_not_null(strstr(err, "PMRCTL.EN=0"), "%s", err);
	cr_assert_not_null(strstr(err, "--enable-pmr"), "%s", err);
	cr_assert_eq(open_fake(",en=0", true, false, &r), 0, "%s", err);
	pmr_close(r);
	cr_assert_eq(open_fake(",en=0,enable", false, false, &r), 0, "%s", err);
	pmr_close(r);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

Test(fakepmr, enable_waits_for_nrdy)
{
	struct pmr_region *r;
	uint64_t t0 = now_ms();

	cr_assert_eq(open_fake(",en=0,nrdy_ms=150", true, false, &r), 0, "%s", err);
	cr_assert_geq(now_ms() - t0, 150);
	cr_assert_eq(pmr_barrier(r), 0);
	pmr_close(r);
}

Test(fakepmr, nrdy_past_pmrto_times_out)
{
	struct pmr_region *r;
	uint64_t t0 = now_ms(), took;

	/* PMRTO=1 in 500 ms units: give up after half a second */
	cr_assert_eq(open_fake(",en=0,nrdy_ms=3000,pmrto=1", true, false, &r),
		     -ETIMEDOUT);
	took = now_ms() - t0;
	cr_assert_geq(took, 500);
	cr_assert_lt(took, 2500);
	cr_assert_not_null(strstr(err, "not ready after 500 ms"), "%s", err);
	cr_assert_not_null(strstr(err, "NRDY"), "%s", err);
}

Test(fakepmr, bad_health_is_refused)
{
	struct pmr_region *r;

	cr_assert_eq(open_fake(",hsts=1", false, false, &r), -EIO);
	cr_assert_not_null(strstr(err, "restore error"), "%s", err);
	cr_assert_eq(open_fake(",hsts=3", false, false, &r), -EIO);
	cr_assert_not_null(strstr(err, "unreliable"), "%s", err);
	cr_assert_eq(open_fake(",hsts=2", false, false, &r), -EROFS);
	cr_assert_not_null(strstr(err, "read-only"), "%s", err);
	cr_assert_eq(open_fake(",hsts=2", false, true, &r), 0,
		     "read-only health allows reading: %s", err);
	pmr_close(r);
}

Test(fakepmr, health_error_fails_barriers_for_good)
{
	struct pmr_region *r;
	uint8_t buf[64] = {1};

	cr_assert_eq(open_fake("", false, false, &r), 0, "%s", err);
	pmr_copy_nodrain(r, 0, buf, sizeof(buf));
	cr_assert_eq(pmr_barrier(r), 0);
	cr_assert_eq(pmr_fake_set_hsts(r, 3), 0);
	pmr_copy_nodrain(r, 64, buf, sizeof(buf));
	cr_assert_eq(pmr_barrier(r), -EIO);
	cr_assert_eq(pmr_fake_set_hsts(r, 0), 0);
	cr_assert_eq(pmr_barrier(r), -EIO, "a failed barrier is sticky");
	pmr_close(r);
}

Test(fakepmr, crash_at_kills_at_that_barrier_and_drops_its_stores)
{
	struct pmr_region *r;
	uint8_t a[256], b[256];
	int status;
	pid_t pid;

	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	cr_assert_eq(open_fake("", false, false, &r), 0, "%s", err);
	pmr_close(r);
	pid = fork();
	if (pid == 0) { /* no Criterion calls in the child */
		if (open_fake(",crash_at=2", false, false, &r) != 0)
			_exit(3);
		pmr_copy_nodrain(r, 0, a, sizeof(a));
		pmr_barrier(r); /* 1st with stores pending: commits */
		pmr_barrier(r); /* nothing pending: not counted */
		pmr_copy_nodrain(r, 4096, b, sizeof(b));
		pmr_barrier(r); /* 2nd: the power fails here */
		_exit(0);
	}
	cr_assert_geq(pid, 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	cr_assert_eq(open_fake("", false, true, &r), 0, "%s", err);
	cr_assert_arr_eq(pmr_base(r), a, sizeof(a));
	cr_assert(all_zero(pmr_base(r) + 4096, sizeof(b)), "crash_mode 0 drops them all");
	pmr_close(r);
}

Test(fakepmr, bad_options_are_named)
{
	struct pmr_region *r;

	cr_assert_eq(open_fake(",wbm=16", false, false, &r), -EINVAL);
	cr_assert_not_null(strstr(err, "wbm=0..15"), "%s", err);
	cr_assert_eq(open_fake(",colour=blue", false, false, &r), -EINVAL);
}

Test(fakepmr, query_decodes_the_registers)
{
	char target[256];
	struct pmr_caps k;

	snprintf(target, sizeof(target), "fakepmr:%s/pmr,wbm=1,pmrto=4,en=0,hsts=2", dir);
	cr_assert_eq(pmr_query_caps(target, &k, err, sizeof(err)), 0, "%s", err);
	cr_assert(k.pmrs);
	cr_assert(k.rds && k.wds);
	cr_assert_eq(k.bir, 4);
	cr_assert_eq(k.pmrwbm, 1);
	cr_assert_eq(k.pmrto, 4);
	cr_assert_eq(k.timeout_ms, 2000);
	cr_assert_not(k.enabled);
	cr_assert(k.nrdy, "a disabled PMR is not ready");
	cr_assert_eq(k.hsts, 2);
	cr_assert_str_eq(pmr_hsts_name(k.hsts), "read only");
	cr_assert_str_eq(pmr_wbm_name(k.pmrwbm), "PMR read");
	cr_assert_str_eq(pmr_wbm_name(3), "PMR read or PMRSTS read");
	cr_assert_str_eq(pmr_wbm_name(0), "none");
}

/*
 * Barriers are shared (pmr/ctrl.c): a thread's barrier may return on
 * another thread's read, but only on one that started after the thread's
 * stores, never on a read already in flight. Eight threads each store a
 * line and barrier, over and over, and look in the durable image (the file,
 * mapped as another process would) for what they stored the moment their
 * barrier returns: a store a barrier let pass uncommitted is missing there.
 */
enum { SB_THREADS = 8, SB_ROUNDS = 4000, SB_LINES = 16 };

struct sb_arg {
	struct pmr_region *w;
	const volatile uint8_t *image;
	int id;
	int missing, failed;
};

static void *sb_thread(void *p)
{
	struct sb_arg *a = p;

	for (int i = 1; i <= SB_ROUNDS; i++) {
		uint64_t off = ((uint64_t)a->id * SB_LINES + (uint64_t)(i % SB_LINES)) * 64u;
		uint8_t line[64];

		memset(line, 0, sizeof(line));
		memcpy(line, &i, sizeof(i));
		line[8] = (uint8_t)a->id;
		pmr_copy_nodrain(a->w, off, line, sizeof(line));
		if (pmr_barrier(a->w) != 0) {
			a->failed++;
			return NULL;
		}
		int seen;

		memcpy(&seen, (const void *)(a->image + off), sizeof(seen));
		if (seen != i || a->image[off + 8] != (uint8_t)a->id)
			a->missing++;
	}
	return NULL;
}

Test(fakepmr, a_shared_barrier_returns_only_once_a_later_read_committed_the_stores)
{
	struct pmr_region *w, *ro;
	pthread_t th[SB_THREADS];
	struct sb_arg args[SB_THREADS];
	int missing = 0, failed = 0;

	cr_assert_eq(open_fake("", false, false, &w), 0, "%s", err);
	cr_assert_eq(open_fake("", false, true, &ro), 0, "%s", err);
	for (int t = 0; t < SB_THREADS; t++) {
		args[t] = (struct sb_arg){.w = w, .image = pmr_base(ro), .id = t};
		cr_assert_eq(pthread_create(&th[t], NULL, sb_thread, &args[t]), 0);
	}
	for (int t = 0; t < SB_THREADS; t++) {
		pthread_join(th[t], NULL);
		missing += args[t].missing;
		failed += args[t].failed;
	}
	pmr_close(ro);
	pmr_close(w);
	cr_assert_eq(failed, 0, "a barrier failed");
	cr_assert_eq(missing, 0,
		     "%d stores were not in the durable image when their barrier returned",
		     missing);
}
