// SPDX-License-Identifier: MIT
/*
 * test_fuzz.c - replays the recovery fuzz target as an ordinary test: the
 * corpus in tests/fuzz/corpus/, then seeded mutations of a real log image
 * (bit flips, byte runs, copied blocks, header fields) with checksums
 * recomputed so the parser itself is exercised, not only the checksum.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fuzz/fuzz_recovery.h"
#include "testutil.h"

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

Test(fuzz, corpus_replays_without_a_crash)
{
	DIR *d = opendir(PMWAL_SOURCE_DIR "/tests/fuzz/corpus");
	struct dirent *e;
	int files = 0;

	cr_assert_not_null(d);
	while ((e = readdir(d))) {
		char path[1024];
		uint8_t data[1 << 16];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/%s", PMWAL_SOURCE_DIR,
			 e->d_name);
		FILE *f = fopen(path, "rb");

		cr_assert_not_null(f, "%s", path);
		size_t n = fread(data, 1, sizeof(data), f);

		fclose(f);
		for (int reseal = 0; reseal < 2; reseal++)
			fuzz_recover_bytes(data, n, reseal);
		files++;
	}
	closedir(d);
	cr_assert_gt(files, 0);
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
