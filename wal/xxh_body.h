/* SPDX-License-Identifier: MIT */
/*
 * xxh_body.h - the XXH3 entry points, once, for each instruction set that
 * includes it (xxh.c baseline, xxh_avx2.c, xxh_avx512.c): the same inline
 * xxhash.h code, compiled under that file's target flags. Include after
 * <xxhash.h> with XXH_INLINE_ALL; WAL_XXH_SUFFIX names the variant.
 */
#ifndef WAL_XXH_SUFFIX
#error "define WAL_XXH_SUFFIX before including xxh_body.h"
#endif

#include <stdint.h>
#include <sys/uio.h>

#define WAL_XXH_CAT_(a, b) a##b
#define WAL_XXH_CAT(a, b)  WAL_XXH_CAT_(a, b)

uint64_t WAL_XXH_CAT(wal_xxh3_, WAL_XXH_SUFFIX)(const void *data, size_t len,
						uint64_t seed);
uint64_t WAL_XXH_CAT(wal_xxh3v_, WAL_XXH_SUFFIX)(const struct iovec *v, int n,
						 uint64_t seed);

uint64_t WAL_XXH_CAT(wal_xxh3_, WAL_XXH_SUFFIX)(const void *data, size_t len,
						uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}

/* Streaming XXH3 over the pieces: equal to the one-shot hash of them laid
 * end to end (xxhash defines both to agree). */
uint64_t WAL_XXH_CAT(wal_xxh3v_, WAL_XXH_SUFFIX)(const struct iovec *v, int n,
						 uint64_t seed)
{
	XXH3_state_t st;

	XXH3_INITSTATE(&st);
	st.extSecret = NULL;
	XXH3_64bits_reset_withSeed(&st, seed);
	for (int i = 0; i < n; i++)
		XXH3_64bits_update(&st, v[i].iov_base, v[i].iov_len);
	return XXH3_64bits_digest(&st);
}
