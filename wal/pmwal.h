/* SPDX-License-Identifier: MIT */
/*
 * pmwal.h - the whole public API of libpmwal, a write-ahead log for NVMe flash,
 * files, block devices and persistent memory (libpmem2, NVMe PMR).
 *
 * This header is the manual. A database links libpmwal, opens one log, appends
 * records from any number of threads, and is told each record's LSN and when it
 * is durable. After a crash, opening the log again runs recovery, which returns
 * every acknowledged record and says exactly what it found (see
 * struct pmwal_report). The on-disk format is specified in wal/format.c.
 *
 * Conventions (as in liburing and LMDB):
 *  - 0 is success; failures are negative: -errno for operating-system errors,
 *    PMWAL_E* codes (a reserved range below -1000) for library errors.
 *    pmwal_strerror() names any of them; pmwal_errmsg() says what happened
 *    on a handle and where (path, LSN, byte offset).
 *  - Handles are opaque. Constructors return them through an out-parameter and
 *    leave it NULL on failure; destructors accept NULL.
 *  - A failed write, flush or sync is sticky: after it, every call that would
 *    acknowledge durability fails with PMWAL_EFAILED until the log is closed
 *    and opened again (which runs recovery). pmwal never retries a flush and
 *    then acknowledges. A writer another process took the log from
 *    (PMWAL_OPEN_BREAK_LOCK) fails the same way with PMWAL_EFENCED.
 *  - Several processes: one writer at a time (a lock), any number of
 *    read-only followers (pmwal_iter_wait), standbys that take over when the
 *    writer dies (PMWAL_OPEN_WAIT_LOCK). docs/followers.md.
 *  - Thread safety: every function taking a struct pmwal may be called from
 *    any number of threads at once, except pmwal_close(), which must be the
 *    last call on the handle. An iterator belongs to one thread at a time.
 */
#ifndef PMWAL_H
#define PMWAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Library version; the on-disk format has its own (PMWAL_FORMAT_VERSION). */
#define PMWAL_VERSION_MAJOR 0
#define PMWAL_VERSION_MINOR 1
#define PMWAL_VERSION_PATCH 0
/* The on-disk format version this library writes and reads. */
#define PMWAL_FORMAT_VERSION 2
/* Every log is made of blocks of this many bytes, on every medium. */
#define PMWAL_BLOCK_BYTES 4096

/*
 * Library error codes. One table (PMWAL_ERRORS) produces the enum and
 * pmwal_strerror(), so they cannot drift apart.
 */
#define PMWAL_ERRORS(X)                                                                  \
	X(PMWAL_ECORRUPT, -1001, "log is corrupt: damage to durable data")               \
	X(PMWAL_EFULL, -1002, "log full: release records before appending more")         \
	X(PMWAL_EBADOPT, -1003, "invalid option")                                        \
	X(PMWAL_EFORMAT, -1004, "not a pmwal log, or an unsupported format version")     \
	X(PMWAL_EFAILED, -1005, "log failed earlier (write or sync error); reopen")      \
	X(PMWAL_ETOOBIG, -1006, "record larger than the log's maximum record size")      \
	X(PMWAL_ERANGE, -1007, "LSN outside the log")                                    \
	X(PMWAL_EUNSUPPORTED, -1008, "the medium or kernel refuses a needed feature")    \
	X(PMWAL_EREADONLY, -1009, "log was opened read-only")                            \
	X(PMWAL_ENOTDURABLE, -1010, "medium cannot guarantee durability")                \
	X(PMWAL_ECLOSED, -1011, "log is closing")                                        \
	X(PMWAL_EFENCED, -1012, "another writer took the log over; this handle may not write")

enum pmwal_error {
#define PMWAL_X_ENUM(name, value, text) name = value,
	PMWAL_ERRORS(PMWAL_X_ENUM)
#undef PMWAL_X_ENUM
};

/* When pmwal_append() returns. */
enum pmwal_commit_policy {
	/* Default: pmwal_append() returns once the record is durable. */
	PMWAL_COMMIT_DURABLE = 0,
	/*
	 * pmwal_append() returns once the record is staged in memory; it becomes
	 * durable within group_window_us (a background committer writes it), or
	 * at once on pmwal_wait()/pmwal_sync(). Nothing is acknowledged early:
	 * pmwal_durable_lsn() only moves after the medium confirmed durability.
	 */
	PMWAL_COMMIT_BUFFERED = 1,
};

/* pmwal_options.flags */
enum pmwal_open_flags {
	/*
	 * Create the log if there is none, else open the one there (as
	 * open(2)'s O_CREAT, LMDB's MDB_CREATE, RocksDB's create_if_missing).
	 * "None" is a missing file (made, capacity_bytes long), an empty one,
	 * or a file, device, region or simulated medium whose superblock area
	 * (bytes 0..8191) is all zero (new, blank, or an interrupted create).
	 * A log found is opened and recovered as without CREATE; non-zero
	 * capacity_bytes and record_bytes_max must match it (0: whatever it
	 * is), or the open fails PMWAL_EBADOPT naming the field, the log's value
	 * and the value asked. Anything else is refused and nothing written:
	 * data that is not a pmwal log PMWAL_EFORMAT; a pmwal log whose
	 * superblocks cannot be read (both damaged, two logs' copies)
	 * PMWAL_ECORRUPT, as a plain open, so that salvage can still read it; a
	 * log of another format version PMWAL_EFORMAT. An existing file is
	 * never grown or shrunk by CREATE.
	 */
	PMWAL_OPEN_CREATE = 1u << 0,
	/*
	 * With CREATE: fail -EEXIST unless a new log is made: where the file
	 * exists (even empty; a missing one is made with O_EXCL), or the
	 * device, region or simulated medium holds anything (a pmwal log,
	 * damaged or not, or other data: its superblock area is not zero).
	 */
	PMWAL_OPEN_EXCL = 1u << 1,
	PMWAL_OPEN_READONLY = 1u << 2, /* no writes at all, not even recovery's */
	PMWAL_OPEN_SALVAGE = 1u << 3,  /* skip corruption instead of failing; reported */
	PMWAL_OPEN_BUFFERED_IO = 1u << 4, /* no O_DIRECT (page cache + fdatasync) */
	PMWAL_OPEN_NO_URING = 1u << 5,	  /* pwritev/fdatasync instead of io_uring */
	PMWAL_OPEN_FDATASYNC = 1u << 6,	  /* flush with fdatasync, not FUA writes */
	/*
	 * Standby: when another process holds the writer lock, wait until it
	 * lets go (closes, exits or is killed), then recover and continue the
	 * log as its writer (takeover). Without it such an open fails -EBUSY.
	 * The wait lasts up to options.lock_wait_ms (0: no limit; a signal
	 * does not end it); it starts within 10 ms of the release. What survives a takeover: every record the
	 * old writer acknowledged; records it wrote whose group is whole on
	 * the medium though never acknowledged (recovery keeps them, so the
	 * first LSN the new writer hands out may lie beyond the old writer's
	 * last acknowledgement); not its staged records, its callbacks, or its
	 * releases that had not returned.
	 */
	PMWAL_OPEN_WAIT_LOCK = 1u << 7,
	/*
	 * An operator's decision: open for writing although another process
	 * holds the writer lock, because that process is hung or stopped and
	 * will not let go. The holder is fenced: it begins no write after this
	 * open claims the log and acknowledges nothing, failing with
	 * PMWAL_EFENCED; a write it began before the claim is waited for, and
	 * if it is stopped in the middle of one the open fails -EBUSY saying so
	 * (continue or kill it, then open again). Refused -EBUSY too where the
	 * log's status page does not name the holder (no page, another
	 * PMWAL_STATUS_DIR or path, another breaker first): the fence would
	 * hold nobody. Same host only (docs/followers.md). While the old holder
	 * lives it keeps the lock, so a third opener is refused; once it exits,
	 * this handle takes the lock at its next group write.
	 */
	PMWAL_OPEN_BREAK_LOCK = 1u << 8,
	/*
	 * Format a new log (a new log id, LSNs from 1), replacing whatever
	 * pmwal log the target holds, valid or damaged, of any format version:
	 * its records are gone. A missing file is made as with CREATE, and an
	 * existing one grown to capacity_bytes (0: its size). Refused
	 * (PMWAL_EFORMAT, nothing written) where the target holds data that is
	 * not a pmwal log, unless PMWAL_OPEN_FORCE is set too. Not with EXCL
	 * or READONLY; CREATE beside it changes nothing.
	 */
	PMWAL_OPEN_FORMAT = 1u << 9,
	/* With FORMAT: overwrite even data that is not a pmwal log (a user's
	 * file, a filesystem): `pmwal create --force`. */
	PMWAL_OPEN_FORCE = 1u << 10,
};

/*
 * Options for pmwal_open(). Zero means "default" for every field; reserved
 * fields must be zero. Validated once at open; an invalid option fails with
 * PMWAL_EBADOPT and a message naming the field.
 */
struct pmwal_options {
	/*
	 * What to log to:
	 *   PATH            a file (preallocated at create) or a block device,
	 *                   written through io_uring with O_DIRECT;
	 *   /dev/daxX.Y     a device-DAX region through libpmem2;
	 *   pmem:PATH       a DAX file, or any file mapped through libpmem2
	 *                   (a file on a non-DAX filesystem is "emulated");
	 *   pmr:BDF         the Persistent Memory Region of the NVMe controller
	 *                   at PCI address BDF (e.g. pmr:0000:00:04.0);
	 *   fakepmr:PATH    a file-backed simulated PMR (for tests; emulated).
	 */
	const char *target;
	/* Create: bytes of the log, superblocks included; 0 = the target's size
	 * (block devices, regions, existing files). Rounded down to blocks. */
	uint64_t capacity_bytes;
	uint32_t flags;		   /* enum pmwal_open_flags */
	uint32_t commit_policy;	   /* enum pmwal_commit_policy */
	uint32_t group_window_us;  /* leader waits this long to gather (0: none) */
	uint32_t group_bytes_max;  /* payload bytes in one group write; 0 = 1 MiB */
	uint32_t record_bytes_max; /* create: largest record; 0 = 16 MiB */
	uint32_t queue_depth;	   /* io_uring entries; 0 = 64 */
	/* Flash (files, block devices): groups written at once, each acked
	 * only once it and every earlier one are durable; 0 = default (1),
	 * at most 4. Mapped media write one group at a time. Cost: after a
	 * crash, media damage to the last W acked groups (not one) reads as
	 * a torn tail, not corruption (wal/format.c, RECOVERY DECISION TABLE). */
	uint32_t groups_in_flight;
	/* With PMWAL_OPEN_WAIT_LOCK: give up after this many milliseconds
	 * with -EBUSY (0: wait without limit). Must be 0 without it. */
	uint32_t lock_wait_ms;
	/* Where pmwal_open() writes a message if it fails (may be NULL). */
	char *errmsg_buf;
	size_t errmsg_len;
	uint64_t reserved[7]; /* must be zero */
};

/* Recovery verdicts (docs/reliability.md). */
enum pmwal_verdict {
	PMWAL_CLEAN = 0,     /* the log ends where its last write group ended */
	PMWAL_TORN_TAIL = 1, /* an unacknowledged tail was cut off */
	PMWAL_CORRUPT = 2,   /* damage to data that was, or may have been, acked */
};

/* What recovery (or pmwal_verify()) found. */
struct pmwal_report {
	int verdict;		  /* enum pmwal_verdict */
	uint64_t records;	  /* records recovered */
	uint64_t payload_bytes;	  /* their payload bytes */
	uint64_t blocks;	  /* valid blocks from head to end */
	uint64_t first_lsn;	  /* first record recovered (0 if none) */
	uint64_t last_lsn;	  /* last record recovered (0 if none) */
	uint64_t end_offset;	  /* byte offset where the valid log ends */
	uint64_t corrupt_lsn;	  /* CORRUPT: first LSN in the damaged block */
	uint64_t corrupt_offset;  /* CORRUPT: byte offset of the damaged block */
	uint64_t torn_blocks;	  /* TORN_TAIL: blocks of the unacked group cut off */
	uint64_t skipped_blocks;  /* SALVAGE: damaged blocks skipped */
	uint64_t skipped_records; /* SALVAGE: records lost with them */
	uint64_t durable_hint;	  /* highest acked LSN the log itself attests */
	uint64_t elapsed_ns;	  /* time the scan took */
	char detail[256];	  /* one line for people */
};

/* What a log is and how it is written (pmwal_stat()). */
struct pmwal_info {
	char target[256];
	char medium[16];      /* "file", "blockdev", "pmem", "devdax", "pmr", "fakepmr" */
	char io_path[16];     /* "io_uring", "psync", "mapped" */
	char durability[64];  /* how a group is made durable, e.g. "fua (RWF_DSYNC)" */
	char granularity[16]; /* mapped media: "byte", "cache-line", "page" */
	int emulated;	      /* 1: not real persistent media; label results */
	int direct_io;	      /* 1: O_DIRECT */
	uint32_t block_bytes;
	uint32_t sector_bytes;	     /* device logical sector / alignment */
	uint32_t atomic_write_bytes; /* device atomic write unit in use (0: none) */
	uint32_t format_version;
	uint32_t epoch;
	uint32_t record_bytes_max;
	uint64_t log_id;
	uint64_t capacity_bytes;
	uint64_t capacity_blocks; /* ring blocks (superblocks not counted) */
	uint64_t head_lsn;	  /* oldest record kept */
	uint64_t next_lsn;	  /* LSN the next append gets */
	uint64_t durable_lsn;	  /* highest durable LSN (0: none) */
	uint64_t used_blocks;	  /* ring blocks holding live records */
	uint64_t groups_written;  /* group-commit writes since open */
	uint64_t records_written; /* records appended since open */
};

struct pmwal;
struct pmwal_iter;

/*
 * Open the log described by @opt; with PMWAL_OPEN_CREATE, create it first
 * if the target holds none; with PMWAL_OPEN_FORMAT, replace what it holds
 * (enum pmwal_open_flags says exactly when each writes).
 * On open, recovery runs: *@out gets a handle only if the verdict is CLEAN or
 * TORN_TAIL (the unacknowledged tail is cut off and will be overwritten), or
 * with PMWAL_OPEN_SALVAGE set. pmwal_recovery_report() returns the details.
 *
 * @opt: in; not kept after return (target is copied). NULL: PMWAL_EBADOPT.
 * @out: out; the handle, or NULL on failure. NULL: -EINVAL.
 * Returns 0, or PMWAL_EBADOPT (also: CREATE found a log of another
 * capacity_bytes or record_bytes_max), PMWAL_EFORMAT (not a pmwal log; with
 * CREATE or FORMAT without FORCE: data that is not a log, left as it was),
 * PMWAL_ECORRUPT (strict mode,
 * damage to durable data: nothing was changed on the medium), -EEXIST
 * (EXCL: a log, a file or data is there already),
 * PMWAL_EUNSUPPORTED (io_uring or O_DIRECT refused; the message says what to
 * do), PMWAL_ENOTDURABLE, -EBUSY (another process or handle has the log
 * open for writing: the message names its pid), -ENOLCK (a process that can
 * read the log holds a read lock on it, which keeps writers out: the message
 * names it where the kernel does), -EPERM (a writer's status page cannot be
 * had: another user's file, link or directory at its name, a status
 * directory another user controls, or another user's link or file at the
 * log's name in a sticky shared directory such as /tmp; the message names
 * it and what to do), -ENOSPC (no room for the status page), or -errno
 * (ENOENT, EACCES, EIO, ENOMEM...).
 * One writer at a time: an open for writing takes an exclusive lock on the
 * file or device node the log lives in (for pmr:BDF, a lock file in
 * /run/lock), which the kernel drops when the holder closes the log or dies,
 * however it dies. Read-only opens take no lock and never conflict. A forked
 * child shares its parent's lock until it exits or execs.
 * Durability: creating a log makes its superblocks durable before returning.
 */
int pmwal_open(const struct pmwal_options *opt, struct pmwal **out);

/*
 * Close the log. Appends staged but not yet durable are made durable first
 * (unless the log has failed). Accepts NULL.
 * Returns 0, or the error of that last flush (the records are then not acked).
 */
int pmwal_close(struct pmwal *w);

/*
 * Append one record of @len bytes (1 .. record_bytes_max).
 * @lsn_out: out, may be NULL; the record's LSN (LSNs start at 1, increase by
 * one per record, are never reused).
 * With PMWAL_COMMIT_DURABLE it returns once the record is durable; with
 * PMWAL_COMMIT_BUFFERED once it is staged. Concurrent callers are gathered into
 * group writes by one leader (group commit).
 * Returns 0, PMWAL_ETOOBIG (len above record_bytes_max), PMWAL_EFULL
 * (nothing overwritten; release records), PMWAL_EFAILED (sticky),
 * PMWAL_EREADONLY, or -EINVAL: @w NULL, len 0, or @data NULL (with len > 0);
 * pmwal_errmsg() names the argument.
 */
int pmwal_append(struct pmwal *w, const void *data, size_t len, uint64_t *lsn_out);

/*
 * Append @count records at once, one per iovec, with consecutive LSNs; they
 * go to the medium in one group. @first_lsn_out gets the first LSN.
 * All or nothing: on failure none of them was appended.
 * Returns as pmwal_append(), and -EINVAL for @recs NULL, @count < 1, a
 * record with iov_len 0, or iov_base NULL (pmwal_errmsg() names the
 * argument and the record's index); PMWAL_ETOOBIG for a record above
 * record_bytes_max, or a batch larger than one group write holds. @count is
 * not limited by IOV_MAX; the lengths' sum cannot overflow.
 */
int pmwal_appendv(struct pmwal *w, const struct iovec *recs, int count,
		  uint64_t *first_lsn_out);

/*
 * Called once the record is durable (status 0) or can never be (status < 0:
 * PMWAL_EFAILED, or PMWAL_ECLOSED at close). Callbacks run one at a time, in
 * LSN order, on a thread that completed a group (a pmwal thread or an
 * appender), with no pmwal lock and no group leadership held. A callback may
 * call anything on the log except pmwal_close() (refused with -EDEADLK):
 * appends, waits and syncs lead their own groups, whose callbacks run after
 * this one returns. A callback that blocks delays the callbacks behind it,
 * not the log's writes.
 */
typedef void (*pmwal_durable_fn)(void *arg, uint64_t lsn, int status);

/*
 * Append one record without waiting; @cb runs once it is durable. Whatever
 * the commit policy, the call returns after staging. Returns as pmwal_append(),
 * and -EINVAL for @cb NULL (on failure @cb is never called).
 */
int pmwal_append_async(struct pmwal *w, const void *data, size_t len, pmwal_durable_fn cb,
		       void *arg, uint64_t *lsn_out);

/*
 * Append @count records (one per iovec, consecutive LSNs) without waiting;
 * all or nothing, as pmwal_appendv(). @cb runs once, with the last record's
 * LSN, when every one of them is durable (or, status < 0, can never be).
 * @first_lsn_out gets the first LSN. Returns as pmwal_appendv(), and -EINVAL
 * for @cb NULL.
 */
int pmwal_appendv_async(struct pmwal *w, const struct iovec *recs, int count,
			pmwal_durable_fn cb, void *arg, uint64_t *first_lsn_out);

/*
 * Wait until every record up to @lsn is durable, writing staged records if
 * needed. Returns 0, PMWAL_ERANGE (@lsn never appended), PMWAL_EFAILED, or
 * -EINVAL (@w NULL).
 */
int pmwal_wait(struct pmwal *w, uint64_t lsn);

/* Make every record appended so far durable. Returns as pmwal_wait(). */
int pmwal_sync(struct pmwal *w);

/* The highest durable LSN (0 if none yet). Never ahead of the medium. */
uint64_t pmwal_durable_lsn(struct pmwal *w);

/*
 * Release every record with an LSN below @lsn (the caller has checkpointed
 * them): their blocks may be overwritten. The new head is made durable before
 * returning. Releasing below the current head is a no-op.
 * Returns 0, PMWAL_ERANGE (@lsn beyond durable_lsn + 1), PMWAL_EFAILED,
 * PMWAL_EREADONLY, -EINVAL (@w NULL), or -errno from the superblock write.
 * PMWAL_ECORRUPT or
 * -EIO: finding @lsn read back damaged durable blocks (a write the device
 * acknowledged but lost); the handle has failed stop (nothing more is
 * acknowledged) and the superblock records how far the log was durable, so
 * that the next open reports CORRUPT there. Close it and run pmwal_verify().
 */
int pmwal_release(struct pmwal *w, uint64_t lsn);

/*
 * An iterator over durable records in LSN order, from @from_lsn (0 = the
 * head). It follows the log: when it reaches the end, pmwal_iter_next()
 * returns 0, and a later call returns records made durable since.
 * Returns 0, PMWAL_ERANGE (@from_lsn released or beyond next_lsn), -ENOMEM,
 * or -EINVAL (@w or @out NULL).
 */
int pmwal_iter_open(struct pmwal *w, uint64_t from_lsn, struct pmwal_iter **out);

/*
 * Next record: 1 and *@lsn, *@data, *@len set (the data stays valid until the
 * next call on this iterator); 0 at the durable end; or < 0: PMWAL_ECORRUPT
 * (a block changed under the reader), PMWAL_ERANGE (the reader fell behind a
 * pmwal_release() and its records were overwritten), -EIO, -EINVAL (@it,
 * @lsn, @data or @len NULL; pmwal_errmsg() names it). On a handle
 * opened with PMWAL_OPEN_SALVAGE, damage is skipped instead: iteration goes
 * on with the next group that starts with a valid block, and the records lost
 * with the damage show as a gap in the LSNs returned.
 */
int pmwal_iter_next(struct pmwal_iter *it, uint64_t *lsn, const void **data, size_t *len);

/*
 * Sleep until pmwal_iter_next() has something new to say (a record made
 * durable since, or an error), or @timeout_ms pass (-1: no limit, 0: just
 * look). Returns 1 (call pmwal_iter_next(); it may still return 0 when what
 * woke the wait holds no record past the iterator), 0 on timeout, or
 * -EINVAL (@it NULL, @timeout_ms below -1). No core spins meanwhile.
 *
 * Following a log another process writes (docs/followers.md): open it with
 * PMWAL_OPEN_READONLY, then loop pmwal_iter_next() and, at 0,
 * pmwal_iter_wait(). Such a follower sees only what its writer published
 * durable on the log's status page (a 4 KiB file in /dev/shm named after
 * the log's id, or in $PMWAL_STATUS_DIR), wakes within microseconds of each
 * group through a futex there, and never blocks the writer. It follows
 * across a takeover (a new writer's recovery, a new epoch) without losing or
 * repeating a record, and across the writer's close and a new writer's open.
 * A follower that falls behind pmwal_release() gets PMWAL_ERANGE from
 * pmwal_iter_next(), whose message names the LSN the log starts at now:
 * resume from a checkpoint at or after it. Processes on one host only: a
 * follower on another host sees no page and waits forever.
 */
int pmwal_iter_wait(struct pmwal_iter *it, int timeout_ms);

/* Free an iterator. Accepts NULL. */
void pmwal_iter_close(struct pmwal_iter *it);

/* Fill @info. Returns 0, or -EINVAL (@w or @info NULL). */
int pmwal_stat(struct pmwal *w, struct pmwal_info *info);

/*
 * Who holds the writer lock of the log at @target now, without taking it
 * (any process may ask, a reader or a standby; no handle needed). *@pid gets
 * the holder's pid (> 0, this PID namespace's), -1 for a holder whose pid
 * cannot be told here (another PID namespace, a pmwal that leaves no mark, or
 * a writer that has exited while something it left still holds the log and
 * whose pid is now another process's), or 0 when nobody holds it. For a loop device the files below it
 * count too. The answer may be stale as soon as it is given: a writer may
 * open or die right after. Returns 0, -EINVAL (@target or @pid NULL, or not a
 * target string), or -errno opening what is locked (ENOENT: no such log).
 * Simulated media (sim:NAME) have no lock: always 0 and *@pid 0.
 */
int pmwal_writer_pid(const char *target, long *pid);

/* What recovery found when this handle was opened. Never NULL. */
const struct pmwal_report *pmwal_recovery_report(struct pmwal *w);

/*
 * Scan the log at @opt->target read-only (nothing is written, not even the
 * recovery epoch) and fill @rep. A corrupt log is a successful scan with
 * verdict PMWAL_CORRUPT. Returns 0, or as pmwal_open() when the target cannot
 * be read or is not a pmwal log, and -EINVAL for @opt or @rep NULL.
 */
int pmwal_verify(const struct pmwal_options *opt, struct pmwal_report *rep);

/* Log2 buckets of struct pmwal_stats' latency histogram. */
#define PMWAL_STATS_BUCKETS 32

/*
 * The live counters of a log's writer (pmwal_stats()). They count from the
 * writer's open. A writer keeps them in its memory and copies them to the
 * log's status page with each group it makes durable, so that another
 * process reads them with no system call on the writer's path and without
 * disturbing it: `pmwal stat` is such a process.
 */
struct pmwal_stats {
	uint32_t writer_pid;	  /* the writer counted (0: none has the log open) */
	uint32_t epoch;		  /* its epoch (+1 per open for writing) */
	uint64_t appends;	  /* records accepted by append calls */
	uint64_t append_bytes;	  /* their payload bytes */
	uint64_t groups;	  /* group writes made durable */
	uint64_t group_blocks;	  /* ring blocks those groups took */
	uint64_t group_records;	  /* records in those groups (per group: / groups) */
	uint64_t errors;	  /* group writes that failed (the writer stops at one) */
	uint64_t head_lsn;	  /* oldest record kept */
	uint64_t durable_lsn;	  /* highest durable LSN (0: none) */
	uint64_t capacity_blocks; /* ring blocks */
	uint64_t used_blocks;	  /* ring blocks holding live records */
	/* A group write's time from its first store to durable (stores and
	 * barrier, or write and flush), timed for one group in 64: bucket i
	 * counts samples of 2^i to 2^(i+1)-1 ns (bucket 0 also 0 ns, the last
	 * also anything longer). */
	uint64_t latency_samples;
	uint64_t latency_ns[PMWAL_STATS_BUCKETS];
};

/*
 * Fill the first @size bytes of @stats (pass sizeof(struct pmwal_stats);
 * a program built against an older, shorter struct gets its part). On the
 * writer's handle: its own counters now. On a read-only handle: what the
 * log's writer last published on its status page (the counters of the last
 * writer that had it open, writer_pid 0 once it closed), with head,
 * durable end and space as published; counters all zero where the reader
 * has no status page (another user's log whose page it may not read, or
 * simulated media). Returns 0, -EINVAL (@w or @stats NULL, @size 0), or
 * -EAGAIN (the page was being rewritten by a writer that died mid-update:
 * ask again).
 */
int pmwal_stats(struct pmwal *w, struct pmwal_stats *stats, size_t size);

/* What a target string (pmwal_options.target) names, by its form. */
enum pmwal_target_kind {
	PMWAL_TARGET_FILE,    /* PATH or file:PATH: a file or block device */
	PMWAL_TARGET_PMEM,    /* pmem:PATH: a file mapped through libpmem2 */
	PMWAL_TARGET_DEVDAX,  /* /dev/daxX.Y (also written pmem: or file:/dev/daxX.Y) */
	PMWAL_TARGET_PMR,     /* pmr:BDF[,opts]: an NVMe PMR, in no file */
	PMWAL_TARGET_FAKEPMR, /* fakepmr:PATH[,opts]: a simulated PMR in a file */
	PMWAL_TARGET_SIM,     /* sim:NAME: a simulated medium in this process */
};

/* Longest path (or PCI address, or medium name) a target may carry, NUL included. */
#define PMWAL_TARGET_PATH_MAX 256

/* A target string taken apart by pmwal_target_parse(). */
struct pmwal_target {
	enum pmwal_target_kind kind;
	/*
	 * What follows the prefix (for PATH, the whole string), options
	 * included: points into the string parsed, so it lives as long as that.
	 * pmr:BDF and fakepmr:PATH take options after a ','; no other form does
	 * (there a ',' is part of the path).
	 */
	const char *rest;
	int has_file; /* 1: path names the file or device node the log lives in */
	/* The file or device node; the PCI address for pmr:; the medium's name
	 * for sim:. Options cut off. "" when parsing failed. */
	char path[PMWAL_TARGET_PATH_MAX];
};

/*
 * Take @spec apart: which medium it names and the path after the prefix
 * (pmem:, file:, pmr:, fakepmr:, sim:; a PATH beginning /dev/dax is
 * device-DAX with or without one). This is the library's only parser of
 * targets: pmwal_open() and pmwal_verify() decide by it, and a tool that
 * must know what a target is (look at its file before formatting it, or pick
 * how to measure it) should too. Options are not checked here: the device
 * that opens the target names a bad one.
 *
 * Returns 0, or PMWAL_EBADOPT for a NULL or empty @spec, no path after a
 * prefix (pmem:, file:, fakepmr:,wbm=1, pmr:,enable), or a path of
 * PMWAL_TARGET_PATH_MAX bytes or more: pmwal_open() refuses all of these
 * (sim: with no name is its to refuse: no medium has that name), or -EINVAL
 * for @out NULL. Even then @out->kind and @out->rest
 * say what the prefix named (kind PMWAL_TARGET_FILE and rest "" for a NULL
 * @spec), so that a caller can say what is wrong with it.
 */
int pmwal_target_parse(const char *spec, struct pmwal_target *out);

/*
 * The file or device node the log at @target lives in (pmem:PATH, fakepmr:
 * PATH[,opts], file:PATH, PATH, /dev/daxX.Y all name one), so that a tool can
 * look at it before formatting it. Returns 1 and the path in @buf, 0 for a
 * target that lives in no file (pmr:BDF, sim:NAME), PMWAL_EBADOPT for a
 * malformed target (as pmwal_target_parse()), -EINVAL for @buf NULL, or
 * -ENAMETOOLONG when @len is too small.
 */
int pmwal_target_path(const char *target, char *buf, size_t len);

/* Text for any pmwal or errno code. Never NULL. */
const char *pmwal_strerror(int err);

/*
 * The handle's last error message (path, LSN, offset), set by whichever
 * thread met it; "" if none. Safe from any thread: the text is the calling
 * thread's own copy and stays valid until its next pmwal_errmsg() call.
 */
const char *pmwal_errmsg(struct pmwal *w);

/* Library version as "MAJOR.MINOR.PATCH". */
const char *pmwal_version(void);


/* ---- simulated media for crash testing (pmwal_sim_*) ---------------------
 *
 * A simulated medium lives in this process under a name; the target string
 * "sim:NAME" opens a log on it through the same engine and recovery code as
 * a real device. It counts every durability event (each store or write, each
 * barrier or flush), can make any one of them the power loss, and then
 * enumerates the images a reboot could find: the durable image plus any
 * subset of what was stored or written since the last barrier or flush
 * (every subset when few are pending, a seeded sample otherwise), and torn,
 * zeroed or garbage variants. One of them is installed as the new durable
 * content and the log is opened again. The medium outlives every handle on
 * it. docs/crashtest.md describes the models.
 *
 * A database's own test suite, crashing its log at every event:
 *
 *	struct pmwal_sim_options so = {.medium = PMWAL_SIM_PMEM,
 *				       .size_bytes = 1 << 20};
 *	struct pmwal_sim *sim;
 *	pmwal_sim_new(&so, &sim);
 *	struct pmwal_options o = {.target = pmwal_sim_target(sim),
 *				  .capacity_bytes = 1 << 20,
 *				  .flags = PMWAL_OPEN_CREATE};
 *	run_workload(&o);			// counts events, no crash
 *	uint64_t events = pmwal_sim_events(sim);
 *	for (uint64_t n = 0; n < events; n++) {
 *		pmwal_sim_reset(sim);		// blank medium, event count 0
 *		pmwal_sim_crash_at(sim, n);	// event n is the power loss
 *		run_workload(&o);		// fails with PMWAL_EFAILED there
 *		for (uint64_t i = 0; i < pmwal_sim_crash_images(sim, NULL); i++) {
 *			pmwal_sim_apply_image(sim, i);
 *			check_recovery(pmwal_sim_target(sim)); // pmwal_open, iterate
 *		}
 *	}
 *	pmwal_sim_free(sim);
 *
 * Thread safety: every call may come from any thread; one mutex per medium
 * orders them against the engine's device calls.
 *
 * A NULL @sim is refused, never followed: functions returning int return
 * -EINVAL (pmwal_sim_crashed() 0), counts are 0, pointers NULL, and the void
 * ones do nothing.
 */

/* What a simulated medium models. */
enum pmwal_sim_medium {
	/* Persistent memory: mapped; stores land in 64-byte lines that become
	 * durable at the next barrier; aligned 8-byte words never tear. */
	PMWAL_SIM_PMEM = 1,
	/* NVMe SSD with a volatile write cache: writes complete in a random
	 * order and become durable at the next completed flush (or at once with
	 * PMWAL_SIM_FUA); a cached write can be lost, torn at 512-byte sectors,
	 * zeroed or garbage unless atomic_write_bytes >= 4096. */
	PMWAL_SIM_NVME = 2,
	/* An NVMe PMR as the fake PMR models it: mapped, 64-byte lines, the
	 * barrier (PMRSTS read) commits pending stores; no word atomicity over
	 * PCIe, so a pending line tears at 4-byte dwords. */
	PMWAL_SIM_FAKEPMR = 3,
};

/* pmwal_sim_options.flags */
enum pmwal_sim_flags {
	PMWAL_SIM_FUA = 1u << 0, /* nvme: every write is FUA, commit needs no flush */
	/* Debug: the mapping is read-only except inside the medium's own store,
	 * so a store that bypasses the seam faults (SIGSEGV) where it happens. */
	PMWAL_SIM_PROTECT = 1u << 1,
};

/* Options for pmwal_sim_new(); zero means default, reserved must be zero. */
struct pmwal_sim_options {
	uint32_t medium;	     /* enum pmwal_sim_medium (required) */
	uint32_t flags;		     /* enum pmwal_sim_flags */
	uint64_t size_bytes;	     /* bytes, a multiple of 4096 (required) */
	uint64_t seed;		     /* drives completion order and sampling */
	const char *name;	     /* NULL: "simN"; at most 63 bytes */
	uint32_t atomic_write_bytes; /* nvme: advertised atomic write unit */
	uint32_t exhaustive_max;     /* all subsets up to this many pending (0: 10) */
	uint32_t sample_images;	     /* subsets sampled above it (0: 256) */
	uint32_t torn_images;	     /* torn/zero/garbage variants (0: 16) */
	uint64_t reserved[4];	     /* must be zero */
};

struct pmwal_sim;

/*
 * Create a simulated medium of @opt->size_bytes zero bytes and register it
 * under its name. Returns 0 and *@out, -EINVAL (a bad option; reserved not
 * zero), -EEXIST (the name is taken), or -ENOMEM.
 */
int pmwal_sim_new(const struct pmwal_sim_options *opt, struct pmwal_sim **out);

/* Unregister and free the medium. No log may be open on it. Accepts NULL. */
void pmwal_sim_free(struct pmwal_sim *sim);

/* "sim:NAME", for pmwal_options.target; valid until pmwal_sim_free(). */
const char *pmwal_sim_target(const struct pmwal_sim *sim);

/* Zero the medium, forget faults, crash state and the event count. */
void pmwal_sim_reset(struct pmwal_sim *sim);

/* Durability events so far: every store or write piece, barrier and flush. */
uint64_t pmwal_sim_events(struct pmwal_sim *sim);

/* Units (lines or writes) stored or written and not yet durable. */
uint64_t pmwal_sim_pending(struct pmwal_sim *sim);

/*
 * Make event @n (0-based, as counted by pmwal_sim_events()) the power loss:
 * it and every later device call fail with -EIO, so the log fails stop.
 * UINT64_MAX disarms. pmwal_sim_crash() loses power now instead.
 */
void pmwal_sim_crash_at(struct pmwal_sim *sim, uint64_t n);
void pmwal_sim_crash(struct pmwal_sim *sim);

/* 1 once the power loss happened (until pmwal_sim_apply_image()). */
int pmwal_sim_crashed(struct pmwal_sim *sim);

/* The crash images the last power loss left, split by kind. */
struct pmwal_sim_crash_info {
	uint64_t event;	      /* the event that was the power loss */
	uint64_t pending;     /* lines or writes pending at the crash */
	uint64_t subsets;     /* images that keep a subset of them whole */
	uint64_t torn;	      /* images with torn, zeroed or garbage units */
	int exhaustive;	      /* 1: subsets are every subset */
};

/*
 * Number of crash images (subsets + torn), 0 before any power loss; fills
 * @info when not NULL. Image i < subsets keeps subset i (bit k: unit k);
 * sampled and torn images are drawn from (seed, i), so an index replays.
 */
uint64_t pmwal_sim_crash_images(struct pmwal_sim *sim, struct pmwal_sim_crash_info *info);

/*
 * Install crash image @index as the durable content (the medium works again,
 * events go on counting). May be called for every index in turn: each starts
 * from the state at the power loss. Returns 0, -ERANGE, or -EINVAL (no crash).
 */
int pmwal_sim_apply_image(struct pmwal_sim *sim, uint64_t index);

/* At-rest damage to durable bytes (pmwal_sim_damage). */
enum pmwal_sim_damage_kind {
	PMWAL_SIM_FLIP = 1,    /* invert one bit of each byte */
	PMWAL_SIM_ZERO = 2,    /* zero the bytes */
	PMWAL_SIM_GARBAGE = 3, /* seeded random bytes */
};

/* Damage [@off, @off + @len) of the durable image (and what loads see).
 * Returns 0 or -EINVAL (out of range, unknown kind). */
int pmwal_sim_damage(struct pmwal_sim *sim, uint64_t off, uint64_t len, int kind);

/* At rest: put @len bytes of @buf at [@off, @off + @len) of the durable image
 * (and what loads see), e.g. a block of another log or an earlier lap,
 * resealed so that its checksum is valid. Returns 0 or -EINVAL. */
int pmwal_sim_overwrite(struct pmwal_sim *sim, uint64_t off, const void *buf, uint64_t len);

/* Faults a device can produce (pmwal_sim_fault). */
enum pmwal_sim_fault_kind {
	PMWAL_SIM_FAIL = 1,	  /* event @event fails with @err; the medium lives */
	PMWAL_SIM_LOST = 2,	  /* write event @event is acked but never lands */
	PMWAL_SIM_MISDIRECT = 3,  /* write event @event lands at @off instead */
	PMWAL_SIM_READ_ERROR = 4, /* reads touching [@off, @off+@len) fail -EIO */
};

struct pmwal_sim_fault {
	int kind; /* enum pmwal_sim_fault_kind */
	int err;  /* FAIL: the negative errno returned (0: -EIO) */
	uint64_t event;
	uint64_t off;
	uint64_t len;
};

/* Arm one fault (up to 8 at once, until pmwal_sim_reset()). LOST and
 * MISDIRECT apply to write and store events only. Returns 0, -EINVAL (an
 * unknown kind, a positive err, a MISDIRECT target or READ_ERROR range that
 * is empty or not inside the medium), -ENOSPC (8 armed already). */
int pmwal_sim_fault(struct pmwal_sim *sim, const struct pmwal_sim_fault *f);

/* Disarm every fault that has not fired (what one did stays done). */
void pmwal_sim_clear_faults(struct pmwal_sim *sim);

/* The durable image (size_bytes), for checks; valid until the next call. */
const uint8_t *pmwal_sim_durable(struct pmwal_sim *sim);

#ifdef __cplusplus
}
#endif
#endif /* PMWAL_H */
