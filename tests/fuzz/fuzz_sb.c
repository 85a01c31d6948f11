// SPDX-License-Identifier: MIT
/*
 * fuzz_sb.c - the superblock as the attacker writes it: over one of a few
 * real logs (fuzz_log.c, built once per process), the input chooses every
 * field of both copies, which are then sealed with valid checksums. Recovery
 * must not crash, hang or allocate by what the fields claim, and what it
 * returns is held to the reference reader and to what the engine wrote
 * (fuzz_check).
 *
 * Input: 1 byte choosing the log, then per copy 1 mode byte and the 88 bytes
 * of fields [16, 104). Mode bit 0: the bytes are XORed onto the real copy
 * (zeros keep it), else they replace it; bit 1: copy 1 is copy 0 verbatim;
 * bit 2: the copy is left with a wrong checksum.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fuzz_faults.h"
#include "fuzz_log.h"
#include "xxh.h"

#define SB_LOGS	   4u
#define SB_FIELDS  (WAL_SB_USED_BYTES - 16u)
#define SB_INPUT   (1u + WAL_SB_COPIES * (1u + SB_FIELDS))

static struct fuzz_log logs[SB_LOGS];
static bool built[SB_LOGS];

/* Seeds whose logs cover: closed, crashed, wrapped (chosen by fuzz_seeds). */
static const uint64_t sb_seeds[SB_LOGS] = {1, 2, 3, 4};

static struct fuzz_log *log_for(unsigned k)
{
	k %= SB_LOGS;
	if (!built[k]) {
		if (fuzz_log_build(sb_seeds[k], &logs[k]))
			abort(); /* the engine broke its promise on an undamaged log */
		built[k] = true;
	}
	return &logs[k];
}

int fuzz_sb_one(const uint8_t *data, size_t size)
{
	uint8_t in[SB_INPUT] = {0};
	struct fuzz_log *log;
	int bad = 0;

	memcpy(in, data, size < SB_INPUT ? size : SB_INPUT);
	log = log_for(in[0]);
	uint8_t *img = malloc(log->size);

	if (!img)
		return 0;
	memcpy(img, log->image, log->size);
	for (unsigned c = 0; c < WAL_SB_COPIES; c++) {
		const uint8_t *f = in + 1 + c * (1 + SB_FIELDS);
		uint8_t *sb = img + c * WAL_SB_BYTES;

		if (c == 1 && (in[1] & 2)) {
			memcpy(sb, img, WAL_SB_BYTES);
			continue;
		}
		for (unsigned i = 0; i < SB_FIELDS; i++)
			sb[16 + i] = (f[0] & 1) ? sb[16 + i] ^ f[1 + i] : f[1 + i];
		wal_put64(sb, wal_xxh3(sb + 8, WAL_SB_BYTES - 8, WAL_SB_SEED) ^
				  ((f[0] & 4) ? 1 : 0));
	}
	struct ref_result ref;
	struct fuzz_seen seen;

	if (ref_parse(img, log->size, &ref) == 0 && fuzz_seen_read(img, log->size, &seen) == 0) {
		bad = fuzz_check(log, NULL, &ref, &seen);
		fuzz_seen_free(&seen);
	}
	ref_free(&ref);
	free(img);
	return bad;
}

#ifdef PMWAL_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_sb_one(data, size))
		abort();
	return 0;
}
#endif
