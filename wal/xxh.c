// SPDX-License-Identifier: MIT
/*
 * xxh.c - the baseline XXH3 and the dispatcher (see xxh.h).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "xxh.h"

#define WAL_XXH_SUFFIX base
#include "xxh_body.h"

uint64_t wal_xxh3_avx2(const void *data, size_t len, uint64_t seed);
uint64_t wal_xxh3_avx512(const void *data, size_t len, uint64_t seed);
uint64_t wal_xxh3v_avx2(const struct iovec *v, int n, uint64_t seed);
uint64_t wal_xxh3v_avx512(const struct iovec *v, int n, uint64_t seed);

#if defined(__x86_64__)
typedef uint64_t (*xxh3_fn)(const void *, size_t, uint64_t);

static xxh3_fn pick(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return wal_xxh3_avx512;
	return __builtin_cpu_supports("avx2") ? wal_xxh3_avx2 : wal_xxh3_base;
}

uint64_t wal_xxh3(const void *data, size_t len, uint64_t seed)
{
	static xxh3_fn fn; /* races only ever store the same value */

	if (!__atomic_load_n(&fn, __ATOMIC_RELAXED))
		__atomic_store_n(&fn, pick(), __ATOMIC_RELAXED);
	return __atomic_load_n(&fn, __ATOMIC_RELAXED)(data, len, seed);
}

typedef uint64_t (*xxh3v_fn)(const struct iovec *, int, uint64_t);

static xxh3v_fn pickv(void)
{
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		return wal_xxh3v_avx512;
	return __builtin_cpu_supports("avx2") ? wal_xxh3v_avx2 : wal_xxh3v_base;
}

uint64_t wal_xxh3v(const struct iovec *v, int n, uint64_t seed)
{
	static xxh3v_fn fn;

	if (!__atomic_load_n(&fn, __ATOMIC_RELAXED))
		__atomic_store_n(&fn, pickv(), __ATOMIC_RELAXED);
	return __atomic_load_n(&fn, __ATOMIC_RELAXED)(v, n, seed);
}
#else
uint64_t wal_xxh3(const void *data, size_t len, uint64_t seed)
{
	return wal_xxh3_base(data, len, seed);
}

uint64_t wal_xxh3v(const struct iovec *v, int n, uint64_t seed)
{
	return wal_xxh3v_base(v, n, seed);
}
#endif
