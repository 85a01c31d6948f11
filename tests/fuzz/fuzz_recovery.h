/* SPDX-License-Identifier: MIT */
/*
 * fuzz_recovery.h - one entry point shared by the libFuzzer target and the
 * Criterion replay: recover and read a log image built from arbitrary bytes.
 */
#ifndef PMWAL_FUZZ_RECOVERY_H
#define PMWAL_FUZZ_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

/* Ring blocks of the fuzzed log. */
#define FUZZ_RING_BLOCKS 24u

/* Writes the fuzzed log's superblock (with @epoch) at the start of @image. */
void fuzz_make_sb(uint8_t *image, uint32_t epoch);

/*
 * Lays @data over the ring of a log with a valid superblock and recovers it
 * (read-only, salvage), then iterates every record. When @reseal is set, every
 * block's checksum is recomputed first, so the parser sees adversarial headers
 * and framing that pass the checksum. Returns records read; never crashes.
 */
long fuzz_recover_bytes(const uint8_t *data, size_t size, int reseal);

#endif
