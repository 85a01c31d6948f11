// SPDX-License-Identifier: MIT
/*
 * xxh_avx512.c - XXH3 compiled for AVX-512 (this file alone gets -mavx512f); called
 * only where the CPU has AVX-512F (xxh.c).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define WAL_XXH_SUFFIX avx512
#include "xxh_body.h"
