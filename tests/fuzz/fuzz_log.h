/* SPDX-License-Identifier: MIT */
/*
 * fuzz_log.h - what the structured fuzz targets (fuzz_sb, fuzz_faults) share:
 * a real log written by the engine on a simulated device, its records derived
 * from a seed (sessions that close cleanly or crash with a torn commit,
 * releases that wrap the ring), the ground truth of what was acknowledged, and
 * the checks that hold pmwal's recovery to the reference reader (ref_parse.h).
 */
#ifndef PMWAL_FUZZ_LOG_H
#define PMWAL_FUZZ_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ref_parse.h"

#define FUZZ_LOG_RECORDS_MAX 1024u /* LSNs a built log can reach */

/* One LSN as last acknowledged by the engine. */
struct fuzz_truth {
	bool acked;
	uint64_t len;
	uint64_t hash; /* XXH3_64bits of its bytes */
};

struct fuzz_log {
	uint8_t *image; /* malloc'd; superblocks at 0 */
	size_t size;
	uint64_t ring_blocks;
	uint64_t next_lsn; /* truth[] covers [1, next_lsn) */
	struct fuzz_truth truth[FUZZ_LOG_RECORDS_MAX];
	struct ref_result ref; /* the reference reading of the undamaged image */
};

/*
 * Writes a log chosen by @seed. Returns 0, or -1 if the image breaks the
 * engine's own promise (an acknowledged record missing or changed, as the
 * reference reads it): a bug, reported on stderr.
 */
int fuzz_log_build(uint64_t seed, struct fuzz_log *log);
void fuzz_log_free(struct fuzz_log *log);

/* What pmwal made of an image: its open's result and the records it read. */
struct fuzz_seen {
	int rc;	     /* pmwal open, read-only, strict */
	int verdict; /* rc == 0: the recovery report's verdict */
	uint64_t head_lsn;
	size_t nrec;
	struct ref_record *rec; /* lsn, len, hash; seqs unset */
};

/* Recovers @img read-only (strict, then with salvage for coverage) and reads
 * every record. Returns 0 or -ENOMEM. */
int fuzz_seen_read(const uint8_t *img, size_t size, struct fuzz_seen *seen);
void fuzz_seen_free(struct fuzz_seen *seen);

/*
 * The checks both structured targets make; returns 0 or -1 with a line on
 * stderr naming the rule broken:
 *   - pmwal's open fails exactly as the reference says the superblocks fail;
 *   - CLEAN from pmwal iff CLEAN from the reference; CORRUPT refuses the open;
 *   - pmwal's records are a prefix of the reference's (LSN, length, bytes);
 *   - with @log: every record pmwal returns is one the engine wrote at that
 *     LSN, and every acknowledged record that lies before the picked
 *     superblock's end_seq (untouched by @touched, when given) is returned
 *     unless the verdict is CORRUPT.
 * @touched: per ring slot, true if the damage changed it (NULL: none did).
 */
int fuzz_check(const struct fuzz_log *log, const bool *touched, const struct ref_result *ref,
	       const struct fuzz_seen *seen);

#endif
