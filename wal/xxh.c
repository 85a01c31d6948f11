// SPDX-License-Identifier: MIT
/*
 * xxh.c - the baseline XXH3 and the dispatcher (see xxh.h).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "xxh.h"

uint64_t wal_xxh3_avx2(const void *data, size_t len, uint64_t seed);
uint64_t wal_xxh3_avx512(const void *data, size_t len, uint64_t seed);

static uint64_t xxh3_base(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}

#if defined(__x86_64__)
typedef uint64_t (*xxh3_fn)(const void *, size_t, uint64_t);

static xxh3_fn pick(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return wal_xxh3_avx512;
	return __builtin_cpu_supports("avx2") ? wal_xxh3_avx2 : xxh3_base;
}

uint64_t wal_xxh3(const void *data, size_t len, uint64_t seed)
{
	static xxh3_fn fn; /* races only ever store the same value */

	if (!__atomic_load_n(&fn, __ATOMIC_RELAXED))
		__atomic_store_n(&fn, pick(), __ATOMIC_RELAXED);
	return __atomic_load_n(&fn, __ATOMIC_RELAXED)(data, len, seed);
}
#else
uint64_t wal_xxh3(const void *data, size_t len, uint64_t seed)
{
	return xxh3_base(data, len, seed);
}
#endif
