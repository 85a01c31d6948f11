// SPDX-License-Identifier: MIT
/*
 * xxh_avx512.c - XXH3 compiled for AVX-512 (this file alone gets -mavx512f); called
 * only where the CPU has AVX-512F (xxh.c).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdint.h>

uint64_t wal_xxh3_avx512(const void *data, size_t len, uint64_t seed);

uint64_t wal_xxh3_avx512(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}
