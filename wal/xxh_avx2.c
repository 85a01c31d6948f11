// SPDX-License-Identifier: MIT
/*
 * xxh_avx2.c - XXH3 compiled for AVX2 (this file alone gets -mavx2); called
 * only where the CPU has AVX2 (xxh.c).
 */
#define XXH_INLINE_ALL
#include <xxhash.h>

#define WAL_XXH_SUFFIX avx2
#include "xxh_body.h"
