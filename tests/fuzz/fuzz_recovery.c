// SPDX-License-Identifier: MIT
/*
 * fuzz_recovery.c - recovery and the iterator on arbitrary bytes (I5 in
 * docs/reliability.md: terminates in bounded time and memory, no crash, no
 * sanitizer report). Built into the replay test always, and into a libFuzzer
 * binary with -DPMWAL_FUZZ=ON (clang).
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fuzz_recovery.h"
#include "sim_dev.h"
#include "testutil.h"

void fuzz_make_sb(uint8_t *image, uint32_t epoch)
{
	struct wal_sb sb = {
	    .format_version = PMWAL_FORMAT_VERSION,
	    .block_bytes = WAL_BLOCK_BYTES,
	    .log_id = 0x70776d616c66757aull,
	    .sb_seq = 1,
	    .capacity_blocks = FUZZ_RING_BLOCKS,
	    .epoch = epoch,
	    .record_bytes_max = 3 * WAL_PAYLOAD_BYTES,
	    .head_seq = 0,
	    .head_lsn = 1,
	    .group_blocks_max = 5,
	    .end_seq = 0,
	    .end_lsn = 1,
	};
	wal_sb_encode(&sb, image);
}

long fuzz_recover_bytes(const uint8_t *data, size_t size, int reseal)
{
	const size_t bytes = WAL_RING_OFFSET + (size_t)FUZZ_RING_BLOCKS * WAL_BLOCK_BYTES;
	struct sim_dev *sim = sim_new(bytes);
	uint8_t *img;
	long n = 0;

	if (!sim)
		return 0;
	img = sim_image(sim);
	if (size)
		for (size_t off = WAL_RING_OFFSET, i = 0; off < bytes; off++, i++)
			img[off] = data[i % size];
	if (reseal)
		for (uint64_t slot = 0; slot < FUZZ_RING_BLOCKS; slot++)
			wal_block_seal(img + wal_slot_offset(slot), slot);
	/* Format 2 reads blocks past end_seq only from the superblock's own
	 * epoch: take the highest epoch the bytes hold, so that a real log's
	 * blocks are walked, not all refused as stale. */
	uint32_t epoch = 1;

	for (uint64_t slot = 0; slot < FUZZ_RING_BLOCKS; slot++) {
		struct wal_block_hdr h;

		wal_block_decode_hdr(img + wal_slot_offset(slot), &h);
		if (h.epoch > epoch && h.epoch < WAL_EPOCH_MAX)
			epoch = h.epoch;
	}
	fuzz_make_sb(img, epoch);
	struct pmwal *w;

	if (tu_open_sim(sim, PMWAL_OPEN_READONLY | PMWAL_OPEN_SALVAGE, &w) == 0) {
		struct pmwal_iter *it;
		uint64_t lsn;
		const void *rec;
		size_t len;

		if (pmwal_iter_open(w, 0, &it) == 0) {
			/* Bounded: a ring holds fewer records than it has bytes. */
			while (n < (long)bytes &&
			       pmwal_iter_next(it, &lsn, &rec, &len) == 1)
				n++;
			pmwal_iter_close(it);
		}
		pmwal_close(w);
	}
	sim_free(sim);
	return n;
}

#ifdef PMWAL_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The first byte chooses whether checksums are recomputed. */
	if (size == 0)
		return 0;
	fuzz_recover_bytes(data + 1, size - 1, data[0] & 1);
	return 0;
}
#endif
