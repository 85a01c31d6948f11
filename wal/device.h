/* SPDX-License-Identifier: MIT */
/*
 * device.h - the one interface between the log engine and storage.
 *
 * The engine knows blocks, LSNs and durability; a device knows bytes,
 * alignment and barriers and never parses a block (as SQLite's
 * sqlite3_io_methods). Implementations: io_uring and psync on files and block
 * devices (dev_file.c), mapped persistent regions through pmr/ (dev_pmem.c),
 * and simulated devices for crash and fault testing (tests/support/sim_dev.c).
 *
 * commit() is called by at most dev.commit_lanes threads at once (the
 * leaders of groups in flight; 0 or 1: one at a time), and by release and
 * close alone (the engine's io_lock held for writing); read() may run on any
 * thread at any time, beside a commit, and must be safe for that.
 */
#ifndef PMWAL_DEVICE_H
#define PMWAL_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Capability word: what the medium guarantees. */
enum wal_dev_caps {
	WAL_CAP_ATOMIC_BLOCK = 1u << 0, /* a 4 KiB block write is never torn */
	/* 1u << 1 was WAL_CAP_MAPPED: a mapped device has ops->map */
	WAL_CAP_EMULATED = 1u << 2,	/* not real persistent media: label results */
	WAL_CAP_DIRECT = 1u << 3,	/* O_DIRECT: no page cache between */
	WAL_CAP_NOT_DURABLE = 1u << 4,	/* no durability guarantee at all */
};

/* One contiguous piece of a group write: @len bytes from @buf to @off. */
struct wal_io {
	const void *buf;
	size_t len;
	uint64_t off;
};

struct wal_dev;

/*
 * What the engine runs once a commit's writes are submitted, before the
 * device waits for them (the appenders of the group before can then run
 * while this one is in flight). A device that waits calls
 * wal_commit_submitted(); one that never waits need not: the engine runs
 * what was not run when commit() returns.
 */
struct wal_submitted {
	void (*fn)(void *arg);
	void *arg;
	bool done;
};

static inline void wal_commit_submitted(struct wal_submitted *s)
{
	if (s && !s->done) {
		s->done = true;
		s->fn(s->arg);
	}
}

struct wal_dev_ops {
	/*
	 * Write every piece and return only once all of them are durable
	 * (FUA writes, or writes then a flush issued after their completions,
	 * or non-temporal stores then a drain/barrier). Pieces are block
	 * aligned. On failure nothing may be assumed durable; returns -errno.
	 * @submitted may be NULL.
	 */
	int (*commit)(struct wal_dev *dev, const struct wal_io *ios, int count,
		      struct wal_submitted *submitted);
	/* Read @len bytes at @off into @buf (block aligned). Returns 0 or -errno. */
	int (*read)(struct wal_dev *dev, void *buf, size_t len, uint64_t off);
	/* Release everything; the device is freed. */
	void (*close)(struct wal_dev *dev);
	/*
	 * Mapped devices only (NULL elsewhere): commit() in two halves, so the
	 * engine can store a group piece by piece from where its bytes already
	 * are. store() copies with non-temporal stores and no drain, at any
	 * alignment; barrier() makes every store before it durable.
	 */
	int (*store)(struct wal_dev *dev, const struct wal_io *ios, int count);
	int (*barrier)(struct wal_dev *dev);
	/*
	 * Optional (NULL: use read): the same as read() of @count * @piece bytes
	 * at @off, issued as @count reads in flight at once, as a deep-queue
	 * sequential reader would (recovery's scan). Not concurrent with commit().
	 */
	int (*read_many)(struct wal_dev *dev, void *buf, size_t piece, uint64_t off,
			 int count);
	/*
	 * Optional: the descriptor of the open file the writes go through. The
	 * writer lock is taken on a duplicate of it, so that it lives as long as
	 * that open file: when a writer is killed, the kernel releases the file
	 * (and the lock) only after the writes it still had in flight are done,
	 * so a process that takes over can never be overwritten by them.
	 */
	int (*file_fd)(struct wal_dev *dev);
	/*
	 * Optional (NULL: not mapped): the medium's mapping, where loads read
	 * the medium (persistent memory, PMR). Recovery and iterators read
	 * blocks there instead of copying them.
	 */
	const uint8_t *(*map)(struct wal_dev *dev);
	/*
	 * Optional: buffers the engine will write from (io_uring fixed
	 * buffers). Returns 0; a device that cannot register them still
	 * writes from them.
	 */
	int (*register_buffers)(struct wal_dev *dev, void *const *bufs,
				const size_t *lens, int count);
	/*
	 * Optional: read again what this process keeps a copy of (the fake
	 * PMR's shadow), before recovery reads a log another process wrote
	 * since the device was opened (a standby, a writer breaking a lock).
	 */
	int (*reload)(struct wal_dev *dev);
};

/* Fields every device fills at open. */
struct wal_dev {
	const struct wal_dev_ops *ops;
	uint64_t size_bytes;	     /* usable bytes from offset 0 */
	uint32_t sector_bytes;	     /* alignment of I/O (<= 4096, divides it) */
	uint32_t atomic_write_bytes; /* device atomic write unit in use, 0 if none */
	uint32_t caps;		     /* enum wal_dev_caps */
	uint32_t commit_lanes;	     /* commit() calls that may run at once (0: 1) */
	char medium[16];      /* "file", "blockdev", "pmem", "pmr", ... */
	char io_path[16];     /* "io_uring", "psync", "mapped", "sim" */
	char durability[64];  /* for pmwal info */
	char granularity[16]; /* mapped media only */
};

/* How a device should be opened (from pmwal_options). */
struct wal_dev_params {
	const char *target;
	uint64_t create_bytes; /* > 0: create/extend a file to this size, zero-filled */
	bool create_excl;
	bool readonly;
	bool buffered_io;
	bool no_uring;
	bool fdatasync; /* flush with fdatasync even when FUA is possible */
	uint32_t queue_depth;
	uint32_t commit_lanes; /* groups the writer may have in flight (0: 1) */
};

/*
 * Device constructors. Each returns 0 and *out, or -errno / PMWAL_E* with a
 * message in @err (what is wrong and what to do).
 */
int wal_dev_open_file(const struct wal_dev_params *p, struct wal_dev **out, char *err,
		      size_t errlen);
int wal_dev_open_pmem(const struct wal_dev_params *p, struct wal_dev **out, char *err,
		      size_t errlen);

/*
 * What the io_uring path of a file device did with flushes (invariant I8 of
 * docs/reliability.md; tests read it, nothing else does): a flush whose completion
 * came while a write of its commit had not completed covers nothing.
 */
struct wal_dev_flush_order {
	uint64_t commits;		/* commit() calls */
	uint64_t flushes;		/* fdatasyncs they completed */
	uint64_t flushes_before_writes; /* ...while a write of theirs had not */
};

/* Fills @out for a file device on the io_uring path; -EINVAL for any other. */
int wal_dev_file_flush_order(const struct wal_dev *dev, struct wal_dev_flush_order *out);

/* The pmr/ region under a mapped device (crash tests inject power loss). */
struct pmr_region *wal_dev_pmem_region(struct wal_dev *dev);

/* Picks the constructor from the target's form (pmwal_target_parse() in
 * target.c, the one parser of targets; see pmwal_options.target). */
int wal_dev_open(const struct wal_dev_params *p, struct wal_dev **out, char *err,
		 size_t errlen);

/* A block device's writable open (O_EXCL) found it claimed: 1 with @err
 * saying by whom, as far as can be told, when to give up (a live holder
 * named, or @waited_ms past the wait for one that exited), else 0: look
 * again in a few ms (lock.c). */
int wal_busy_device(const char *target, long waited_ms, char *err, size_t errlen);

#endif /* PMWAL_DEVICE_H */
