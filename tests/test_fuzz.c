// SPDX-License-Identifier: MIT
/*
 * test_fuzz.c - replays the three fuzz targets' corpora as ordinary tests
 * (tests/fuzz/corpus_raw, corpus_sb, corpus_faults: every input must pass the
 * same checks the libFuzzer binaries make), then seeded mutations of a real
 * log image (bit flips, byte runs, copied blocks, header fields) with
 * checksums recomputed so the parser itself is exercised, not only the
 * checksum.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fuzz/fuzz_faults.h"
#include "fuzz/fuzz_log.h"
#include "fuzz/fuzz_recovery.h"
#include "testutil.h"

#define INPUT_MAX (1 + FUZZ_RING_BLOCKS * WAL_BLOCK_BYTES)

/* Runs @one on every file of the corpus; returns how many files. */
static int replay(const char *corpus, int (*one)(const uint8_t *, size_t))
{
	char dirpath[1024];
	DIR *d;
	struct dirent *e;
	int files = 0;
	uint8_t *data = malloc(INPUT_MAX);

	snprintf(dirpath, sizeof(dirpath), "%s/tests/fuzz/%s", PMWAL_SOURCE_DIR, corpus);
	d = opendir(dirpath);
	cr_assert_not_null(d, "%s", dirpath);
	while ((e = readdir(d))) {
		char path[2048];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirpath, e->d_name);
		FILE *f = fopen(path, "rb");

		cr_assert_not_null(f, "%s", path);
		size_t n = fread(data, 1, INPUT_MAX, f);

		fclose(f);
		cr_expect_eq(one(data, n), 0, "%s breaks a rule (stderr says which)", path);
		files++;
	}
	closedir(d);
	free(data);
	return files;
}

static int raw_one(const uint8_t *data, size_t size)
{
	if (size)
		fuzz_recover_bytes(data + 1, size - 1, data[0] & 1);
	return 0;
}

Test(fuzz, raw_corpus_replays_without_a_crash)
{
	cr_assert_gt(replay("corpus_raw", raw_one), 0);
}

Test(fuzz, superblock_corpus_recovers_as_the_reference_reads_it)
{
	cr_assert_gt(replay("corpus_sb", fuzz_sb_one), 0);
}

Test(fuzz, fault_corpus_recovers_as_the_reference_reads_it)
{
	cr_assert_gt(replay("corpus_faults", fuzz_faults_one), 0);
}

/* The reference reader and the checks are not vacuous: a log with records
 * reads back whole, and a record changed under a valid checksum, or a block
 * past end_seq dropped, is caught. */
Test(fuzz, the_checks_catch_a_changed_record_and_a_dropped_one)
{
	struct fuzz_log log;
	struct fuzz_seen seen;
	uint64_t seed;

	/* A log whose superblock attests records (a closed or reopened one). */
	for (seed = 1; seed < 200; seed++) {
		cr_assert_eq(fuzz_log_build(seed, &log), 0, "seed %llu", (unsigned long long)seed);
		if (log.ref.nrec > 2 && log.ref.rec[1].last_seq < log.ref.sb.end_seq)
			break;
		fuzz_log_free(&log);
	}
	cr_assert_lt(seed, 200);
	cr_assert_eq(fuzz_seen_read(log.image, log.size, &seen), 0);
	cr_assert_eq(seen.rc, 0);
	cr_assert_eq(seen.nrec, log.ref.nrec);
	cr_assert_eq(fuzz_check(&log, NULL, &log.ref, &seen), 0);
	/* pmwal "returns" a changed record: the check must fail. */
	seen.rec[1].hash ^= 1;
	cr_assert_neq(fuzz_check(&log, NULL, &log.ref, &seen), 0);
	seen.rec[1].hash ^= 1;
	/* pmwal "drops" an acknowledged record the superblock attests. */
	seen.nrec = 1;
	cr_assert_neq(fuzz_check(&log, NULL, &log.ref, &seen), 0);
	/* A verdict that disagrees on CLEAN. */
	seen.nrec = log.ref.nrec;
	seen.verdict = log.ref.verdict == PMWAL_CLEAN ? PMWAL_TORN_TAIL : PMWAL_CLEAN;
	cr_assert_neq(fuzz_check(&log, NULL, &log.ref, &seen), 0);
	fuzz_seen_free(&seen);
	fuzz_log_free(&log);
}

Test(fuzz, logs_from_many_seeds_read_back_as_the_reference_reads_them)
{
	uint8_t in[8];

	for (uint64_t seed = 1000; seed < 1060; seed++) {
		wal_put64(in, seed);
		cr_expect_eq(fuzz_faults_one(in, sizeof(in)), 0, "seed %llu",
			     (unsigned long long)seed);
	}
}

/* A real log's ring bytes: records of many sizes and groups. */
static uint8_t *real_ring(size_t *len)
{
	const size_t bytes = WAL_RING_OFFSET + (size_t)FUZZ_RING_BLOCKS * WAL_BLOCK_BYTES;
	struct sim_dev *sim = sim_new(bytes);
	struct pmwal *w;
	uint8_t buf[9000];

	fuzz_make_sb(sim_image(sim), 3);
	cr_assert_eq(tu_open_sim(sim, 0, &w), 0);
	for (uint64_t k = 1; k <= 40; k++) {
		size_t n = 1 + (size_t)(k * 997 % (k % 7 ? 300 : 9000));

		tu_fill(buf, n, k);
		if (pmwal_append(w, buf, n, NULL))
			break;
	}
	pmwal_close(w);
	*len = bytes - WAL_RING_OFFSET;
	uint8_t *ring = malloc(*len);

	memcpy(ring, sim_image(sim) + WAL_RING_OFFSET, *len);
	sim_free(sim);
	return ring;
}

static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

Test(fuzz, mutated_real_logs_with_valid_checksums_never_crash_recovery)
{
	size_t len;
	uint8_t *ring = real_ring(&len);
	uint8_t *m = malloc(len);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	long clean = fuzz_recover_bytes(ring, len, 0);

	cr_assert_gt(clean, 20, "the unmutated log reads back (%ld records)", clean);
	for (int round = 0; round < 3000; round++) {
		memcpy(m, ring, len);
		int edits = 1 + (int)(rng_next(&x) % 4);

		for (int i = 0; i < edits; i++) {
			uint64_t r = rng_next(&x);
			size_t blk = (size_t)(r % FUZZ_RING_BLOCKS) * WAL_BLOCK_BYTES;

			switch ((r >> 8) % 4) {
			case 0: /* a header field: framing, lengths, LSNs, group shape */
				m[blk + 8 + (r >> 16) % (WAL_HDR_BYTES - 8)] =
				    (uint8_t)(r >> 40);
				break;
			case 1: /* a record length inside the payload */
				wal_put32(m + blk + WAL_HDR_BYTES + (r >> 16) % 64,
					  (uint32_t)(r >> 32));
				break;
			case 2: /* a block copied over another */
				memcpy(m + blk,
				       ring +
					   (size_t)((r >> 20) % FUZZ_RING_BLOCKS) * 4096,
				       4096);
				break;
			default: /* a bit anywhere */
				m[(r >> 16) % len] ^= (uint8_t)(1u << (r >> 60) % 8);
			}
		}
		fuzz_recover_bytes(m, len, (int)(round & 1));
	}
	free(m);
	free(ring);
}
