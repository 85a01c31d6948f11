// SPDX-License-Identifier: MIT
/*
 * xxh.c - XXH3 from Debian's libxxhash (see xxh.h). On x86-64 through its
 * run-time dispatching entry points (xxh_x86dispatch.h: AVX-512, AVX2, SSE2
 * as the CPU has), elsewhere through the portable ones.
 */
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "xxh.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xxh_x86dispatch.h>
#define WAL_XXH3_SEEDED XXH3_64bits_withSeed_dispatch
#define WAL_XXH3_UPDATE XXH3_64bits_update_dispatch
#else
#define WAL_XXH3_SEEDED XXH3_64bits_withSeed
#define WAL_XXH3_UPDATE XXH3_64bits_update
#endif

uint64_t wal_xxh3(const void *data, size_t len, uint64_t seed)
{
	return WAL_XXH3_SEEDED(data, len, seed);
}

/* Streaming XXH3 over the pieces: equal to the one-shot hash of them laid
 * end to end (xxhash defines both to agree). */
uint64_t wal_xxh3v(const struct iovec *v, int n, uint64_t seed)
{
	XXH3_state_t st;

	XXH3_INITSTATE(&st);
	XXH3_64bits_reset_withSeed(&st, seed);
	for (int i = 0; i < n; i++)
		WAL_XXH3_UPDATE(&st, v[i].iov_base, v[i].iov_len);
	return XXH3_64bits_digest(&st);
}
