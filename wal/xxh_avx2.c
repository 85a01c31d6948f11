// SPDX-License-Identifier: MIT
/*
 * xxh_avx2.c - XXH3 compiled for AVX2 (this file alone gets -mavx2); called
 * only where the CPU has AVX2 (xxh.c).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <stdint.h>
#include <sys/uio.h>

uint64_t wal_xxh3_avx2(const void *data, size_t len, uint64_t seed);
uint64_t wal_xxh3v_avx2(const struct iovec *v, int n, uint64_t seed);

uint64_t wal_xxh3_avx2(const void *data, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, len, seed);
}

uint64_t wal_xxh3v_avx2(const struct iovec *v, int n, uint64_t seed)
{
	XXH3_state_t st;

	XXH3_INITSTATE(&st);
	st.extSecret = NULL;
	XXH3_64bits_reset_withSeed(&st, seed);
	for (int i = 0; i < n; i++)
		XXH3_64bits_update(&st, v[i].iov_base, v[i].iov_len);
	return XXH3_64bits_digest(&st);
}
