/* SPDX-License-Identifier: MIT */
/*
 * xxh.h - XXH3, the checksum of every block and superblock, from Debian's
 * libxxhash. Its plain entry points are built for baseline x86-64, about
 * 2.5x slower on 4 KiB than AVX2, and the checksum is most of an append's CPU
 * on persistent memory; its dispatching ones (xxh_x86dispatch.h) pick
 * AVX-512, AVX2 or SSE2 at run time, as the private per-ISA copy this
 * replaced did. Measured equal here, in one run (4 KiB one-shot 81-93 ns
 * private, 85-88 ns the library's; 72 + 4024 bytes streamed 96-122 and
 * 107-111 ns), and on the append path (bench log pmem, 1 thread, alternated
 * 4 s runs: private 1.39-1.46 M, library 1.36-1.54 M appends/s).
 * The result is bit-identical either way (XXH3 is defined independently of
 * the instruction set).
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
