// SPDX-License-Identifier: MIT
/*
 * xxh_avx2.c - XXH3 compiled for AVX2 (this file alone gets -mavx2); called
 * only where the CPU has AVX2 (xxh.c).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdint.h>

uint64_t wal_xxh3_avx2(const void *data, size_t len, uint64_t seed);

uint64_t wal_xxh3_avx2(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}
