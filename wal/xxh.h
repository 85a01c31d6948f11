/* SPDX-License-Identifier: MIT */
/*
 * xxh.h - XXH3 (libxxhash) with run-time dispatch: Debian's shared libxxhash is
 * built for baseline x86-64, about 2.5x slower on 4 KiB than its AVX2 path, and
 * the checksum is most of an append's CPU time on persistent memory. The same
 * header (xxhash.h) is compiled inline three times (baseline, AVX2, AVX-512)
 * and the CPU picks.
 * The result is bit-identical either way (XXH3 is defined independently of the
 * instruction set).
 */
#ifndef PMWAL_XXH_H
#define PMWAL_XXH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

uint64_t wal_xxh3(const void *data, size_t len, uint64_t seed);
/* The same hash over the concatenation of @n pieces (streaming XXH3): equal
 * to wal_xxh3() over one buffer holding them back to back. */
uint64_t wal_xxh3v(const struct iovec *v, int n, uint64_t seed);

#endif
