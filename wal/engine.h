/* SPDX-License-Identifier: MIT */
/*
 * engine.h - internals shared by the engine's files and by the tests that
 * drive it on simulated devices. Not installed.
 */
#ifndef PMWAL_ENGINE_H
#define PMWAL_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"
#include "format.h"
#include "pmwal.h"

/* Where the valid log ends, as recovery found it: where the writer resumes. */
struct wal_tail {
	uint64_t next_seq;	/* seq of the first block to write */
	uint64_t next_lsn;	/* LSN the next record gets */
	uint64_t prev_checksum; /* checksum of block next_seq-1 */
	uint64_t durable_lsn;	/* last recovered LSN (0: none) */
};

/* Reads both superblock copies and picks the valid newer one. */
int wal_read_sb(struct wal_dev *dev, struct wal_sb *sb, char *err, size_t errlen);

/*
 * Recovery's scan (format.c has the decision table). Reads only, writes
 * nothing. Fills @rep and @tail. Returns 0 (whatever the verdict) or -errno
 * for an I/O error.
 */
int wal_recover_scan(struct wal_dev *dev, const struct wal_sb *sb, bool salvage,
		     struct pmwal_report *rep, struct wal_tail *tail);

/*
 * Finds the block holding the start of record @lsn among durable blocks
 * [head_seq, end_seq). Returns 0 and *@seq, PMWAL_ERANGE, or -errno.
 */
int wal_locate(struct wal_dev *dev, const struct wal_sb *sb, uint64_t head_seq,
	       uint64_t end_seq, uint64_t lsn, uint64_t *seq);

/* Opens a log on a device the caller made (tests: simulated devices). Takes
 * ownership of @dev, also on failure. */
int wal_open_dev(const struct pmwal_options *opt, struct wal_dev *dev,
		 struct pmwal **out);

/*
 * Takes the writer lock of the log at @target (lock.c): 0 and @fd_out (-1 for
 * targets that need none; a loop device also holds its backing files'), -EBUSY naming the holder's pid in @err, or -errno.
 * With @dev_fd >= 0 (the device's open file, wal_dev_ops.file_fd) the lock is
 * taken on a duplicate of it, so it lasts as long as that open file does.
 * Closing @fd_out and the device releases it.
 */
#define WAL_LOCK_FDS 8 /* the device and up to 7 loop backing files below it */
int wal_lock_writer(const char *target, int dev_fd, int fd_out[WAL_LOCK_FDS], char *err,
		    size_t errlen);

/* Aligned buffer for device I/O (O_DIRECT); free with free(). */
void *wal_alloc_io(size_t bytes);

#endif /* PMWAL_ENGINE_H */
