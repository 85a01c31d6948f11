/* SPDX-License-Identifier: MIT */
/*
 * A write-ahead log for NVMe flash, files, block devices and persistent memory.
 *
 * pmwal.h is the whole public API of libpmwal, and its manual: each
 * function's comment below is its page (pmwal_open(3), pmwal_append(3) ...),
 * and this one is pmwal(3). A database links libpmwal, opens one log,
 * appends records from any number of threads, and is told each record's LSN
 * and when it is durable. After a crash, opening the log again runs
 * recovery, which returns every acknowledged record and says exactly what it
 * found (pmwal_report(3)).
 *
 * Targets:
 * A log lives in a file, a block device, a device-DAX region, a file mapped
 * through libpmem2 (pmem:PATH), an NVMe controller's Persistent Memory
 * Region (pmr:BDF), a file-backed simulated PMR (fakepmr:PATH), or a
 * simulated medium in the process (sim:NAME). The target string of
 * pmwal_options(3) names it; pmwal_target_parse() takes one apart. Every
 * medium holds the same format: two superblocks, then a ring of 4 KiB
 * checksummed blocks.
 *
 * Opening and creating:
 * pmwal_open() opens an existing log and runs recovery. Flags of
 * pmwal_open_flags(3) say when it may write something new:
 *  - PMWAL_OPEN_CREATE makes a log where there is none (a missing or empty
 *    file, a blank device), and opens the one there otherwise; it never
 *    writes over anything else.
 *  - PMWAL_OPEN_EXCL, with CREATE, fails -EEXIST unless a new log is made.
 *  - PMWAL_OPEN_FORMAT replaces whatever pmwal log is there with a new,
 *    empty one; PMWAL_OPEN_FORCE with it overwrites even data that is not
 *    a pmwal log.
 *  - PMWAL_OPEN_READONLY writes nothing at all, not even recovery's epoch.
 *
 * Appending and acknowledgement:
 * pmwal_append() and pmwal_appendv() hand out consecutive LSNs from 1, and
 * with the default PMWAL_COMMIT_DURABLE return once the record is durable:
 * concurrent appenders are gathered into one group write (group commit).
 * With PMWAL_COMMIT_BUFFERED they return once the record is staged, and
 * pmwal_wait(), pmwal_sync() or the background committer make it durable;
 * pmwal_append_async() calls back once it is. Nothing is acknowledged before
 * the medium confirmed it: pmwal_durable_lsn() never runs ahead.
 *
 * Releasing space:
 * The log is a ring. Once the database has checkpointed the records below
 * an LSN, pmwal_release() lets their blocks be written again; until then a
 * full log refuses appends with PMWAL_EFULL and overwrites nothing.
 *
 * Reading, following and taking over:
 * pmwal_iter_open() and pmwal_iter_next() read durable records in LSN
 * order. Any number of processes may open the log PMWAL_OPEN_READONLY and
 * follow it as it grows (pmwal_iter_wait()); one process writes at a time,
 * holding a lock (pmwal_writer_pid()). A standby opened with
 * PMWAL_OPEN_WAIT_LOCK takes the log over when its writer dies; an operator
 * may take it from a hung writer with PMWAL_OPEN_BREAK_LOCK, which fences
 * that writer (PMWAL_EFENCED).
 *
 * Simulated media:
 * pmwal_sim(3) describes in-process media (sim:NAME) that count every
 * durability event, lose power at any of them and give every image a reboot
 * could find, so that a database's test suite can crash its log everywhere.
 *
 * Conventions:
 *  - 0 is success; failures are negative: -errno for operating-system
 *    errors, PMWAL_E* codes (a reserved range below -1000, pmwal_error(3))
 *    for library errors. pmwal_strerror() names any of them; pmwal_errmsg()
 *    says what happened on a handle and where (path, LSN, byte offset).
 *  - Handles are opaque. Constructors return them through an out-parameter
 *    and leave it NULL on failure; destructors accept NULL.
 *  - A failed write, flush or sync is sticky: after it, every call that
 *    would acknowledge durability fails with PMWAL_EFAILED until the log is
 *    closed and opened again (which runs recovery). pmwal never retries a
 *    flush and then acknowledges. A writer another process took the log
 *    from (PMWAL_OPEN_BREAK_LOCK) fails the same way with PMWAL_EFENCED.
 *  - Thread safety: every function taking a struct pmwal may be called from
 *    any number of threads at once, except pmwal_close(), which must be the
 *    last call on the handle. An iterator belongs to one thread at a time.
 *
 * Example:
 *	#include <pmwal.h>
 *	#include <stdio.h>
 *	#include <string.h>
 *
 *	int main(void)
 *	{
 *		char err[256] = "";
 *		struct pmwal_options o = {.target = "/var/tmp/app.wal",
 *					  .capacity_bytes = 64 << 20,
 *					  .flags = PMWAL_OPEN_CREATE,
 *					  .errmsg_buf = err, .errmsg_len = sizeof(err)};
 *		struct pmwal *w;
 *		uint64_t lsn;
 *		int rc = pmwal_open(&o, &w);	// creates or recovers
 *
 *		if (rc < 0) {
 *			fprintf(stderr, "%s: %s\n", pmwal_strerror(rc), err);
 *			return 1;
 *		}
 *		rc = pmwal_append(w, "put a 1", 7, &lsn);	// durable on return
 *		if (rc < 0)
 *			fprintf(stderr, "%s\n", pmwal_errmsg(w));
 *		return pmwal_close(w) < 0 || rc < 0;
 *	}
 *
 * See also: pmwal_open(3), pmwal_append(3), pmwal_iter_open(3),
 * pmwal_release(3), pmwal_sim(3), pmwal(1)
 */
#ifndef PMWAL_H
#define PMWAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Library version (pmwal_version()); the on-disk format has its own. */
#define PMWAL_VERSION_MAJOR 0
/* Library minor version. */
#define PMWAL_VERSION_MINOR 1
/* Library patch level. */
#define PMWAL_VERSION_PATCH 0
/* The on-disk format version this library writes and reads. */
#define PMWAL_FORMAT_VERSION 2
/* Every log is made of blocks of this many bytes, on every medium. */
#define PMWAL_BLOCK_BYTES 4096

/*
 * The library's error codes, in a reserved range below -1000.
 *
 * A function that returns int returns 0 (or a count: 1 for a record read)
 * on success and a negative code on failure: -errno for operating-system
 * errors, one of these for the library's own. One table (PMWAL_ERRORS)
 * produces the enum and pmwal_strerror(), so they cannot drift apart. Each
 * function's page lists the codes it returns, and when.
 *
 * See also: pmwal_strerror(3), pmwal_errmsg(3)
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

/*
 * When pmwal_append() returns: once durable, or once staged.
 *
 * Set in pmwal_options.commit_policy. Whichever is chosen, nothing is
 * acknowledged early: pmwal_durable_lsn() and the callbacks of
 * pmwal_append_async() move only after the medium confirmed durability.
 *
 * See also: pmwal_options(3), pmwal_append(3), pmwal_wait(3)
 */
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

/*
 * Flags of pmwal_options.flags: how pmwal_open() opens, creates or formats.
 *
 * Without CREATE or FORMAT an open never writes anything new: it opens the
 * log there, or fails. The flags may be or'ed together where each says so.
 *
 * See also: pmwal_open(3), pmwal_options(3)
 */
enum pmwal_open_flags {
	/*
	 * Create the log if there is none, else open the one there (as
	 * open(2)'s O_CREAT, LMDB's MDB_CREATE, RocksDB's create_if_missing).
	 * "None" is a missing file (made, capacity_bytes long), an empty one,
	 * or a file, device, region or simulated medium whose first 68 KiB
	 * (the superblocks and the first ring blocks) are all zero: new,
	 * blank, or an interrupted create.
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
	/* No writes at all, not even recovery's epoch; takes no lock. */
	PMWAL_OPEN_READONLY = 1u << 2,
	/* Skip corruption instead of failing; what was skipped is reported
	 * (pmwal_report(3): skipped_blocks, skipped_records). */
	PMWAL_OPEN_SALVAGE = 1u << 3,
	PMWAL_OPEN_BUFFERED_IO = 1u << 4, /* no O_DIRECT (page cache + fdatasync) */
	PMWAL_OPEN_NO_URING = 1u << 5,	  /* pwritev/fdatasync instead of io_uring */
	PMWAL_OPEN_FDATASYNC = 1u << 6,	  /* flush with fdatasync, not FUA writes */
	/*
	 * Standby: when another process holds the writer lock, wait until it
	 * lets go (closes, exits or is killed), then recover and continue the
	 * log as its writer (takeover). Without it such an open fails -EBUSY.
	 * The wait lasts up to options.lock_wait_ms (0: no limit; a signal
	 * does not end it); it starts within 10 ms of the release. What
	 * survives a takeover: every record the old writer acknowledged;
	 * records it wrote whose group is whole on the medium though never
	 * acknowledged (recovery keeps them, so the first LSN the new writer
	 * hands out may lie beyond the old writer's last acknowledgement); not
	 * its staged records, its callbacks, or its releases that had not
	 * returned.
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
	 * hold nobody. Same host only (pmwal_iter_wait(3)). While the old holder
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
 * The options of pmwal_open() and pmwal_verify(): what to open, and how.
 *
 * Zero means "default" for every field; reserved fields must be zero.
 * Validated once at open; an invalid option fails with PMWAL_EBADOPT and a
 * message naming the field. The structure is not kept after the call (the
 * target string is copied).
 *
 * See also: pmwal_open(3), pmwal_open_flags(3), pmwal_commit_policy(3)
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
	 *   fakepmr:PATH    a file-backed simulated PMR (for tests; emulated);
	 *   sim:NAME        a simulated medium of this process (pmwal_sim(3)).
	 */
	const char *target;
	/* Create: bytes of the log, superblocks included; 0 = the target's size
	 * (block devices, regions, existing files). Rounded down to blocks. */
	uint64_t capacity_bytes;
	uint32_t flags;		   /* or'ed pmwal_open_flags(3) */
	uint32_t commit_policy;	   /* enum pmwal_commit_policy (pmwal_commit_policy(3)) */
	uint32_t group_window_us;  /* leader waits this long to gather (0: none) */
	uint32_t group_bytes_max;  /* payload bytes in one group write; 0 = 1 MiB */
	uint32_t record_bytes_max; /* create: largest record; 0 = 16 MiB or ~1/4 of the ring */
	uint32_t queue_depth;	   /* io_uring entries; 0 = 64 */
	/* Flash (files, block devices): groups written at once, each acked
	 * only once it and every earlier one are durable; 0 = default (1),
	 * at most 4. Mapped media write one group at a time. Cost: after a
	 * crash, media damage to the last W acked groups (not one) reads as
	 * a torn tail, not corruption (recovery cannot tell the two apart). */
	uint32_t groups_in_flight;
	/* With PMWAL_OPEN_WAIT_LOCK: give up after this many milliseconds
	 * with -EBUSY (0: wait without limit). Must be 0 without it. */
	uint32_t lock_wait_ms;
	/* Where pmwal_open() writes a message if it fails (may be NULL). */
	char *errmsg_buf;
	size_t errmsg_len; /* bytes of errmsg_buf (the message is cut to fit) */
	uint64_t reserved[7]; /* must be zero */
};

/*
 * What recovery concluded about the end of the log.
 *
 * Found in pmwal_report.verdict. pmwal_open() opens a CLEAN or TORN_TAIL
 * log; a CORRUPT one only with PMWAL_OPEN_SALVAGE.
 *
 * See also: pmwal_report(3), pmwal_verify(3)
 */
enum pmwal_verdict {
	PMWAL_CLEAN = 0,     /* the log ends where its last write group ended */
	PMWAL_TORN_TAIL = 1, /* an unacknowledged tail was cut off */
	PMWAL_CORRUPT = 2,   /* damage to data that was, or may have been, acked */
};

/*
 * What recovery, or pmwal_verify(), found in a log.
 *
 * pmwal_recovery_report() returns the one made when the handle was opened;
 * pmwal_verify() fills one without opening the log for writing.
 *
 * See also: pmwal_verdict(3), pmwal_recovery_report(3), pmwal_verify(3)
 */
struct pmwal_report {
	int verdict;		  /* enum pmwal_verdict (pmwal_verdict(3)) */
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

/*
 * What a log is and how it is written, as pmwal_stat() tells.
 *
 * The strings are NUL-terminated. Counters are since the handle was opened.
 *
 * See also: pmwal_stat(3)
 */
struct pmwal_info {
	char target[256];     /* the target string the log was opened with */
	char medium[16];      /* "file", "blockdev", "pmem", "devdax", "pmr", "fakepmr" */
	char io_path[16];     /* "io_uring", "psync", "mapped" */
	char durability[64];  /* how a group is made durable, e.g. "fua (RWF_DSYNC)" */
	char granularity[16]; /* mapped media: "byte", "cache-line", "page" */
	int emulated;	      /* 1: not real persistent media; label results */
	int direct_io;	      /* 1: O_DIRECT */
	uint32_t block_bytes;	     /* PMWAL_BLOCK_BYTES */
	uint32_t sector_bytes;	     /* device logical sector / alignment */
	uint32_t atomic_write_bytes; /* device atomic write unit in use (0: none) */
	uint32_t format_version;     /* on-disk format version of the log */
	uint32_t epoch;		     /* 1 at create, +1 at every open for writing */
	uint32_t record_bytes_max;   /* largest record, set at create */
	uint64_t log_id;	     /* random identity, set at create */
	uint64_t capacity_bytes;     /* bytes of the log, superblocks included */
	uint64_t capacity_blocks; /* ring blocks (superblocks not counted) */
	uint64_t head_lsn;	  /* oldest record kept */
	uint64_t next_lsn;	  /* LSN the next append gets */
	uint64_t durable_lsn;	  /* highest durable LSN (0: none) */
	uint64_t used_blocks;	  /* ring blocks holding live records */
	uint64_t groups_written;  /* group-commit writes since open */
	uint64_t records_written; /* records appended since open */
};

/* The handle of an open log (pmwal(3)). */
struct pmwal;
/*
 * An iterator over a log's durable records, in LSN order.
 *
 * Made by pmwal_iter_open(), advanced by pmwal_iter_next(), put to sleep
 * until something new is durable by pmwal_iter_wait(), freed by
 * pmwal_iter_close(). It follows the log as it grows, on the writer's handle
 * or on a read-only one in another process.
 *
 * Notes: an iterator belongs to one thread at a time; several iterators on
 * one handle are independent. Close every iterator before its handle.
 *
 * See also: pmwal_iter_open(3), pmwal_iter_next(3), pmwal_iter_wait(3),
 * pmwal_iter_close(3)
 */
struct pmwal_iter;

/*
 * Open a log, creating or formatting it if asked, and recover it.
 *
 * Opens the log described by @opt; with PMWAL_OPEN_CREATE, creates it first
 * if the target holds none; with PMWAL_OPEN_FORMAT, replaces what it holds
 * (pmwal_open_flags(3) says exactly when each writes). On open, recovery
 * runs: *@out gets a handle only if the verdict is CLEAN or TORN_TAIL (the
 * unacknowledged tail is cut off and will be overwritten), or with
 * PMWAL_OPEN_SALVAGE set. pmwal_recovery_report() returns the details.
 *
 * @opt: in; not kept after return (target is copied).
 * @out: out; the handle, or NULL on failure.
 *
 * One writer at a time: an open for writing takes an exclusive lock on the
 * file or device node the log lives in (for pmr:BDF, a lock file in
 * /run/lock), which the kernel drops when the holder closes the log or dies,
 * however it dies. Read-only opens take no lock and never conflict.
 *
 * Returns: 0 and the handle in *@out, or a negative error code; *@out is
 * then NULL and, where @opt->errmsg_buf is set, a message there says what
 * is wrong and what to do.
 *
 * Errors:
 *   PMWAL_EBADOPT   @opt is NULL, an option is invalid (the message names
 *                   the field), or CREATE found a log of another
 *                   capacity_bytes or record_bytes_max.
 *   PMWAL_EFORMAT   the target is not a pmwal log or is of another format
 *                   version; with CREATE, or FORMAT without FORCE: data that
 *                   is not a log, left as it was.
 *   PMWAL_ECORRUPT  strict mode: damage to durable data (nothing was changed
 *                   on the medium; open with PMWAL_OPEN_SALVAGE to read
 *                   what is left).
 *   PMWAL_EUNSUPPORTED io_uring or O_DIRECT refused (the message says what
 *                   to do: PMWAL_OPEN_NO_URING, PMWAL_OPEN_BUFFERED_IO).
 *   PMWAL_ENOTDURABLE the medium cannot guarantee durability.
 *   -EEXIST         EXCL: a log, a file or data is there already.
 *   -EBUSY          another process or handle has the log open for writing
 *                   (the message names its pid); with WAIT_LOCK, none let
 *                   go within lock_wait_ms; with BREAK_LOCK, the holder is
 *                   stopped in the middle of a write, or the log's status
 *                   page does not name it.
 *   -ENOLCK         a process that can read the log holds a read lock on
 *                   it, which keeps writers out (the message names it where
 *                   the kernel does).
 *   -EPERM          a writer's status page cannot be had: another user's
 *                   file, link or directory at its name, a status directory
 *                   another user controls, or another user's link or file
 *                   at the log's name in a sticky shared directory such as
 *                   /tmp (the message names it and what to do).
 *   -ENOSPC         no room for the status page.
 *   -EINVAL         @out is NULL.
 *   -EAGAIN         the committer thread could not be started.
 *   -errno          opening, reading or writing the target: ENOENT,
 *                   EACCES, EIO, ENOMEM and others.
 *
 * Notes: creating a log makes its superblocks durable before returning. A
 * child forked while a log is open shares its parent's open file, and with
 * it the lock, until it exits or execs: it must not use the parent's
 * handle; it opens its own after fork (read-only, or after the parent
 * closed). A handle with PMWAL_COMMIT_BUFFERED starts its committer thread
 * here (-EAGAIN if it cannot); otherwise the first asynchronous append
 * starts it.
 *
 * See also: pmwal_close(3), pmwal_options(3), pmwal_open_flags(3),
 * pmwal_recovery_report(3), pmwal_writer_pid(3), pmwal_verify(3)
 */
int pmwal_open(const struct pmwal_options *opt, struct pmwal **out);

/*
 * Close a log: make staged records durable and free the handle.
 *
 * Appends staged but not yet durable are made durable first (unless the log
 * has failed); a clean close then records in the superblock that the whole
 * log is valid. Callbacks of records that never became durable run with
 * status PMWAL_ECLOSED (or PMWAL_EFAILED). The handle is freed in every case
 * but -EDEADLK. Accepts NULL.
 *
 * Returns: 0, or the error of that last flush or superblock write (the
 * records staged are then not acknowledged).
 *
 * Errors:
 *   PMWAL_EFAILED   the log had failed (or failed now): staged records were
 *                   never made durable.
 *   PMWAL_EFENCED   another writer took the log over.
 *   -EDEADLK        called from a durability callback; nothing was done.
 *   -errno          writing the superblock at close (EIO, ENOSPC...).
 *
 * Notes: must be the last call on the handle, after every other thread's
 * calls returned and every iterator was closed.
 *
 * See also: pmwal_open(3), pmwal_sync(3)
 */
int pmwal_close(struct pmwal *w);

/*
 * Append one record and get its LSN; by default, wait until it is durable.
 *
 * @data, @len: in; the record, 1 to record_bytes_max bytes, copied.
 * @lsn_out: out, may be NULL; the record's LSN (LSNs start at 1, increase
 * by one per record, are never reused).
 *
 * With PMWAL_COMMIT_DURABLE it returns once the record is durable; with
 * PMWAL_COMMIT_BUFFERED once it is staged (pmwal_wait() or pmwal_sync()
 * make it durable, or the committer within group_window_us). Concurrent
 * callers are gathered into group writes by one leader (group commit).
 *
 * Returns: 0, or a negative error code: the record is not acknowledged.
 * Where waiting for durability failed (PMWAL_EFAILED, PMWAL_EFENCED) it may
 * have been staged and even written: recovery, at the next open, says
 * whether it reached the medium.
 *
 * Errors:
 *   PMWAL_ETOOBIG   @len is above the log's record_bytes_max.
 *   PMWAL_EFULL     no room: nothing was overwritten; release records with
 *                   pmwal_release() after a checkpoint.
 *   PMWAL_EFAILED   an earlier write or flush failed (sticky): close, reopen.
 *   PMWAL_EFENCED   another writer took the log over (PMWAL_OPEN_BREAK_LOCK).
 *   PMWAL_ECLOSED   the log is closing.
 *   PMWAL_EREADONLY the log was opened read-only.
 *   -EINVAL         @w NULL, @len 0, or @data NULL; pmwal_errmsg() names
 *                   the argument.
 *
 * Notes: safe from any number of threads at once. With COMMIT_DURABLE a
 * return of 0 means the record survives a crash or power loss from then on
 * (as the medium promises: pmwal_stat(3) says how it flushes).
 *
 * See also: pmwal_appendv(3), pmwal_append_async(3), pmwal_wait(3),
 * pmwal_commit_policy(3), pmwal_release(3)
 */
int pmwal_append(struct pmwal *w, const void *data, size_t len, uint64_t *lsn_out);

/*
 * Append several records at once, in one group, with consecutive LSNs.
 *
 * @recs, @count: in; one record per iovec, each 1 to record_bytes_max
 * bytes. @count is not limited by IOV_MAX; the lengths' sum cannot
 * overflow. @first_lsn_out: out, may be NULL; the first record's LSN.
 * All or nothing: on failure none of them was appended. Waits as
 * pmwal_append() does under the commit policy.
 *
 * Returns: 0, or a negative error code.
 *
 * Errors:
 *   PMWAL_ETOOBIG   a record above record_bytes_max, or a batch larger than
 *                   one group write holds (group_bytes_max).
 *   PMWAL_EFULL     no room for the whole batch (nothing overwritten).
 *   PMWAL_EFAILED   an earlier write or flush failed (sticky).
 *   PMWAL_EFENCED   another writer took the log over.
 *   PMWAL_ECLOSED   the log is closing.
 *   PMWAL_EREADONLY the log was opened read-only.
 *   -EINVAL         @w NULL, @recs NULL, @count < 1, a record with iov_len
 *                   0, or iov_base NULL; pmwal_errmsg() names the argument
 *                   and the record's index.
 *
 * See also: pmwal_append(3), pmwal_appendv_async(3)
 */
int pmwal_appendv(struct pmwal *w, const struct iovec *recs, int count,
		  uint64_t *first_lsn_out);

/*
 * The callback of an asynchronous append, told when its record is durable.
 *
 * Called once with @arg as given to pmwal_append_async() or
 * pmwal_appendv_async(), the record's @lsn (a batch's last), and @status: 0
 * once durable, or < 0 when it can never be: PMWAL_EFAILED (a write or
 * flush failed), PMWAL_EFENCED (another writer took the log over), or
 * PMWAL_ECLOSED (the log closed first).
 *
 * Notes: callbacks run one at a time, in LSN order, on a thread that
 * completed a group (a pmwal committer thread or an appender), with no
 * pmwal lock and no group leadership held. A callback may call anything on
 * the log except pmwal_close() (refused with -EDEADLK): appends, waits and
 * syncs lead their own groups, whose callbacks run after this one returns.
 * A callback that blocks delays the callbacks behind it, not the log's
 * writes.
 *
 * See also: pmwal_append_async(3), pmwal_appendv_async(3)
 */
typedef void (*pmwal_durable_fn)(void *arg, uint64_t lsn, int status);

/*
 * Append one record without waiting, and be called back once it is durable.
 *
 * Whatever the commit policy, the call returns after staging; a committer
 * thread writes the record within group_window_us, and @cb(@arg, lsn, 0)
 * runs once it is durable (pmwal_durable_fn(3)). @lsn_out: out, may be
 * NULL.
 *
 * Returns: 0 (@cb will be called exactly once), or a negative error code
 * (@cb is never called).
 *
 * Errors:
 *   PMWAL_ETOOBIG   @len is above record_bytes_max.
 *   PMWAL_EFULL     no room (nothing overwritten).
 *   PMWAL_EFAILED   an earlier write or flush failed (sticky).
 *   PMWAL_EFENCED   another writer took the log over.
 *   PMWAL_ECLOSED   the log is closing.
 *   PMWAL_EREADONLY the log was opened read-only.
 *   -EINVAL         @w NULL, @cb NULL, @len 0, or @data NULL.
 *   -ENOMEM         no memory for the callback's entry.
 *   -EAGAIN         the committer thread could not be started.
 *
 * See also: pmwal_durable_fn(3), pmwal_appendv_async(3), pmwal_append(3)
 */
int pmwal_append_async(struct pmwal *w, const void *data, size_t len, pmwal_durable_fn cb,
		       void *arg, uint64_t *lsn_out);

/*
 * Append several records without waiting; one callback when all are durable.
 *
 * One record per iovec, consecutive LSNs, all or nothing, as
 * pmwal_appendv(). @cb runs once, with the last record's LSN, when every one
 * of them is durable (or, status < 0, can never be). @first_lsn_out: out,
 * may be NULL; the first LSN.
 *
 * Returns: 0 (@cb will be called exactly once), or a negative error code
 * (@cb is never called).
 *
 * Errors:
 *   PMWAL_ETOOBIG   a record above record_bytes_max, or a batch larger than
 *                   one group write holds.
 *   PMWAL_EFULL     no room for the batch (nothing overwritten).
 *   PMWAL_EFAILED   an earlier write or flush failed (sticky).
 *   PMWAL_EFENCED   another writer took the log over.
 *   PMWAL_ECLOSED   the log is closing.
 *   PMWAL_EREADONLY the log was opened read-only.
 *   -EINVAL         @w, @cb or @recs NULL, @count < 1, a record with iov_len
 *                   0 or iov_base NULL.
 *   -ENOMEM         no memory for the callback's entry.
 *   -EAGAIN         the committer thread could not be started.
 *
 * See also: pmwal_durable_fn(3), pmwal_append_async(3), pmwal_appendv(3)
 */
int pmwal_appendv_async(struct pmwal *w, const struct iovec *recs, int count,
			pmwal_durable_fn cb, void *arg, uint64_t *first_lsn_out);

/*
 * Wait until every record up to an LSN is durable.
 *
 * Writes staged records if needed (this thread may lead the group).
 * Returns at once for an @lsn already durable.
 *
 * Returns: 0 once every record up to @lsn is durable, or a negative error
 * code.
 *
 * Errors:
 *   PMWAL_ERANGE    @lsn was never appended (at or beyond the next LSN).
 *   PMWAL_EFAILED   a write or flush failed (sticky); nothing more is
 *                   acknowledged.
 *   PMWAL_EFENCED   another writer took the log over.
 *   -EINVAL         @w is NULL.
 *
 * See also: pmwal_sync(3), pmwal_durable_lsn(3), pmwal_commit_policy(3)
 */
int pmwal_wait(struct pmwal *w, uint64_t lsn);

/*
 * Make every record appended so far durable.
 *
 * Returns: 0 once every record appended before the call is durable, or a
 * negative error code.
 *
 * Errors:
 *   PMWAL_EFAILED   a write or flush failed (sticky).
 *   PMWAL_EFENCED   another writer took the log over.
 *   -EINVAL         @w is NULL.
 *
 * See also: pmwal_wait(3), pmwal_durable_lsn(3)
 */
int pmwal_sync(struct pmwal *w);

/*
 * The highest durable LSN.
 *
 * Never ahead of the medium: every record up to it is durable. On a
 * read-only handle, the durable end the handle last learned: at open, then
 * as its iterators follow the writer. Lock-free.
 *
 * Returns: the LSN, or 0 when no record is durable yet (or @w is NULL).
 *
 * Errors: none.
 *
 * See also: pmwal_wait(3), pmwal_stat(3)
 */
uint64_t pmwal_durable_lsn(struct pmwal *w);

/*
 * Release the records below an LSN, so that their space can be reused.
 *
 * Every record with an LSN below @lsn (the caller has checkpointed them)
 * is released: their blocks may be overwritten. The new head is made
 * durable before returning. Releasing below the current head is a no-op.
 *
 * Returns: 0, or a negative error code.
 *
 * Errors:
 *   PMWAL_ERANGE    @lsn is beyond durable_lsn + 1.
 *   PMWAL_EFAILED   the log failed earlier (sticky).
 *   PMWAL_EFENCED   another writer took the log over.
 *   PMWAL_EREADONLY the log was opened read-only.
 *   PMWAL_ECORRUPT  finding @lsn read back damaged durable blocks (a write
 *                   the device acknowledged but lost): see NOTES.
 *   -EIO            reading the log back failed: see NOTES.
 *   -ENOMEM         no memory to read the log back (nothing was released;
 *                   the handle stays usable).
 *   -EINVAL         @w is NULL.
 *   -errno          from the superblock write.
 *
 * Notes: after PMWAL_ECORRUPT or -EIO the handle has failed stop (nothing
 * more is acknowledged) and the superblock records how far the log was
 * durable, so that the next open reports CORRUPT there. Close it and run
 * pmwal_verify(). Followers that fall behind a release get PMWAL_ERANGE
 * from pmwal_iter_next().
 *
 * See also: pmwal_append(3), pmwal_iter_next(3), pmwal_stat(3)
 */
int pmwal_release(struct pmwal *w, uint64_t lsn);

/*
 * Open an iterator over the durable records, from an LSN on.
 *
 * The iterator (pmwal_iter(3)) starts at @from_lsn (0: the head) and reads
 * in LSN order. It follows the log: when it reaches the end,
 * pmwal_iter_next() returns 0, and a later call returns records made
 * durable since. @out: out; the iterator, or NULL on failure.
 *
 * Returns: 0 and the iterator in *@out, or a negative error code.
 *
 * Errors:
 *   PMWAL_ERANGE    @from_lsn was released, or lies beyond next_lsn.
 *   -ENOMEM         no memory for the iterator.
 *   -EINVAL         @w or @out is NULL.
 *
 * See also: pmwal_iter_next(3), pmwal_iter_wait(3), pmwal_iter_close(3)
 */
int pmwal_iter_open(struct pmwal *w, uint64_t from_lsn, struct pmwal_iter **out);

/*
 * Read the next durable record of an iterator.
 *
 * @lsn, @data, @len: out; the record's LSN, its bytes and their count. The
 * data stays valid until the next call on this iterator. On a handle
 * opened with PMWAL_OPEN_SALVAGE, damage is skipped instead of returned:
 * iteration goes on with the next group that starts with a valid block,
 * and the records lost with the damage show as a gap in the LSNs returned.
 *
 * Returns: 1 and the record, 0 at the durable end (call again later, or
 * pmwal_iter_wait()), or a negative error code.
 *
 * Errors:
 *   PMWAL_ECORRUPT  a block changed under the reader.
 *   PMWAL_ERANGE    the reader fell behind a pmwal_release() and its records
 *                   were overwritten; the message names the LSN the log
 *                   starts at now.
 *   -EIO            reading the medium failed.
 *   -EINVAL         @it, @lsn, @data or @len NULL; pmwal_errmsg() names it.
 *
 * See also: pmwal_iter_open(3), pmwal_iter_wait(3), pmwal_iter(3)
 */
int pmwal_iter_next(struct pmwal_iter *it, uint64_t *lsn, const void **data, size_t *len);

/*
 * Sleep until an iterator has something new to read, or a timeout passes.
 *
 * Wakes when pmwal_iter_next() has something new to say (a record made
 * durable since, or an error), or after @timeout_ms (-1: no limit, 0: just
 * look). No core spins meanwhile.
 *
 * Following a log another process writes: open it with
 * PMWAL_OPEN_READONLY, then loop pmwal_iter_next() and, at 0,
 * pmwal_iter_wait(). Such a follower sees only what its writer published
 * durable on the log's status page (a 4 KiB file in /dev/shm named after
 * the log's id, or in $PMWAL_STATUS_DIR), wakes within microseconds of each
 * group through a futex there, and never blocks the writer. It follows
 * across a takeover (a new writer's recovery, a new epoch) without losing
 * or repeating a record, and across the writer's close and a new writer's
 * open.
 *
 * Returns: 1 (call pmwal_iter_next(); it may still return 0 when what woke
 * the wait holds no record past the iterator), 0 on timeout, or a negative
 * error code.
 *
 * Errors:
 *   -EINVAL         @it is NULL, or @timeout_ms is below -1.
 *
 * Notes: a follower that falls behind pmwal_release() gets PMWAL_ERANGE
 * from pmwal_iter_next(), whose message names the LSN the log starts at
 * now: resume from a checkpoint at or after it. Processes on one host
 * only: a follower on another host sees no page and waits forever.
 *
 * Example:
 *	o.flags = PMWAL_OPEN_READONLY;
 *	pmwal_open(&o, &r);
 *	pmwal_iter_open(r, 1, &it);
 *	while ((rc = pmwal_iter_next(it, &lsn, &data, &len)) >= 0)
 *		if (rc == 0)
 *			pmwal_iter_wait(it, -1);
 *
 * See also: pmwal_iter_next(3), pmwal_open_flags(3), pmwal_writer_pid(3)
 */
int pmwal_iter_wait(struct pmwal_iter *it, int timeout_ms);

/*
 * Free an iterator.
 *
 * Accepts NULL. The data the last pmwal_iter_next() returned is gone with
 * it.
 *
 * Returns: nothing.
 *
 * Errors: none.
 *
 * See also: pmwal_iter_open(3)
 */
void pmwal_iter_close(struct pmwal_iter *it);

/*
 * Tell what a log is, how it is written, and how far it has come.
 *
 * Fills @info (pmwal_info(3)) with a consistent snapshot.
 *
 * Returns: 0, or a negative error code.
 *
 * Errors:
 *   -EINVAL         @w or @info is NULL.
 *
 * See also: pmwal_info(3), pmwal_durable_lsn(3)
 */
int pmwal_stat(struct pmwal *w, struct pmwal_info *info);

/*
 * Tell which process holds the writer lock of a log now.
 *
 * Looks without taking the lock (any process may ask, a reader or a
 * standby; no handle needed). *@pid gets the holder's pid (> 0, this PID
 * namespace's), -1 for a holder whose pid cannot be told here (another PID
 * namespace, a pmwal that leaves no mark, or a writer that has exited while
 * something it left still holds the log and whose pid is now another
 * process's), or 0 when nobody holds it. For a loop device the files below
 * it count too. Simulated media (sim:NAME) have no lock: always 0 and
 * *@pid 0.
 *
 * Returns: 0 and the answer in *@pid, or a negative error code.
 *
 * Errors:
 *   -EINVAL         @target or @pid NULL, or not a target string.
 *   -ENOENT         no such log.
 *   -errno          opening what is locked (EACCES...).
 *
 * Notes: the answer may be stale as soon as it is given: a writer may open
 * or die right after.
 *
 * See also: pmwal_open(3), pmwal_open_flags(3)
 */
int pmwal_writer_pid(const char *target, long *pid);

/*
 * Tell what recovery found when a handle was opened.
 *
 * Returns: the handle's report (pmwal_report(3)), valid until
 * pmwal_close(); never NULL (an all-zero report for a NULL @w).
 *
 * Errors: none.
 *
 * See also: pmwal_open(3), pmwal_verify(3), pmwal_report(3)
 */
const struct pmwal_report *pmwal_recovery_report(struct pmwal *w);

/*
 * Check a log read-only and report what recovery would find.
 *
 * Scans the log at @opt->target read-only (nothing is written, not even the
 * recovery epoch; CREATE, EXCL, FORMAT and FORCE are ignored) and fills
 * @rep. A corrupt log is a successful scan with verdict PMWAL_CORRUPT.
 *
 * Returns: 0 and the report in *@rep, or a negative error code.
 *
 * Errors:
 *   -EINVAL         @opt or @rep is NULL.
 *   PMWAL_EFORMAT   the target is not a pmwal log, or of another format
 *                   version.
 *   PMWAL_ECORRUPT  no superblock can be read, not even by salvage (both
 *                   copies damaged).
 *   PMWAL_EBADOPT   an invalid option, as pmwal_open().
 *   -errno          the target cannot be opened or read, as pmwal_open()
 *                   (ENOENT, EACCES, EIO...).
 *
 * See also: pmwal_open(3), pmwal_report(3), pmwal_verdict(3)
 */
int pmwal_verify(const struct pmwal_options *opt, struct pmwal_report *rep);

/* Log2 buckets of pmwal_stats(3)'s latency histogram. */
#define PMWAL_STATS_BUCKETS 32

/*
 * The live counters of a log's writer, as pmwal_stats() tells.
 *
 * They count from the writer's open. A writer keeps them in its memory and
 * copies them to the log's status page with each group it makes durable,
 * so another process reads them with no system call on the writer's path
 * and without disturbing it; pmwal-stat(1) is such a process.
 *
 * See also: pmwal_stats(3), pmwal_info(3)
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
	uint64_t latency_samples; /* group writes timed: one in 64 */
	uint64_t latency_sum_ns;  /* their times added up */
	/* Group write time, first store to durable, of those timed: bucket i
	 * counts 2^i to 2^(i+1)-1 ns (the last also anything longer). */
	uint64_t latency_ns[PMWAL_STATS_BUCKETS];
};

/*
 * Read the live counters of a log's writer.
 *
 * Fills the first @size bytes of @stats (pass sizeof(struct pmwal_stats):
 * a program built against an older, shorter struct gets its part). On the
 * writer's handle: its own counters now. On a read-only handle: what the
 * log's writer last published on its status page, with the head, durable
 * end and space as published. A writer's page goes with its clean close:
 * with no writer, writer_pid and the counters are 0 and the head and end
 * are the log's as this handle read it (a writer that died leaves its
 * last counters until the next writer opens, with writer_pid 0). The same
 * where the reader has no status page (simulated media, a page it may not
 * read).
 *
 * Returns: 0 and the counters in *@stats, or a negative error code.
 *
 * Errors:
 *   -EINVAL         @w or @stats is NULL, or @size is 0.
 *   -EAGAIN         the page was left mid-update by a writer that died
 *                   there; ask again.
 *
 * Notes: safe from any thread; takes the handle's mutex briefly on a
 * writer, nothing on the writer's side for a reader.
 *
 * See also: pmwal_stats(3), pmwal_stat(3), pmwal_iter_wait(3)
 */
int pmwal_stats(struct pmwal *w, struct pmwal_stats *stats, size_t size);

/*
 * What kind of medium a target string names, by its form.
 *
 * Set by pmwal_target_parse() in pmwal_target.kind.
 *
 * See also: pmwal_target_parse(3), pmwal_options(3)
 */
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

/*
 * A target string taken apart by pmwal_target_parse().
 *
 * See also: pmwal_target_parse(3), pmwal_target_kind(3)
 */
struct pmwal_target {
	enum pmwal_target_kind kind; /* which medium (pmwal_target_kind(3)) */
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
 * Take a target string apart: which medium it names, and its path.
 *
 * Parses @spec: the prefix (pmem:, file:, pmr:, fakepmr:, sim:; a PATH
 * beginning /dev/dax is device-DAX with or without one) and the path after
 * it, into @out (pmwal_target(3)). This is the library's only parser of
 * targets: pmwal_open() and pmwal_verify() decide by it, and a tool that
 * must know what a target is (look at its file before formatting it, or
 * pick how to measure it) should too. Options are not checked here: the
 * device that opens the target names a bad one.
 *
 * Returns: 0, or a negative error code. Even on PMWAL_EBADOPT, @out->kind
 * and @out->rest say what the prefix named (kind PMWAL_TARGET_FILE and rest
 * "" for a NULL @spec), so that a caller can say what is wrong with it.
 *
 * Errors:
 *   PMWAL_EBADOPT   @spec is NULL or empty, has no path after a prefix
 *                   (pmem:, file:, fakepmr:,wbm=1, pmr:,enable), or a path
 *                   of PMWAL_TARGET_PATH_MAX bytes or more: pmwal_open()
 *                   refuses all of these (sim: with no name is its to
 *                   refuse: no medium has that name).
 *   -EINVAL         @out is NULL.
 *
 * See also: pmwal_target_path(3), pmwal_target(3), pmwal_options(3)
 */
int pmwal_target_parse(const char *spec, struct pmwal_target *out);

/*
 * Tell which file or device node holds the log a target names.
 *
 * pmem:PATH, fakepmr:PATH[,opts], file:PATH, PATH and /dev/daxX.Y all name
 * one, so that a tool can look at it before formatting it. The path is
 * written to @buf, @len bytes long.
 *
 * Returns: 1 and the path in @buf; 0 for a target that lives in no file
 * (pmr:BDF, sim:NAME); or a negative error code.
 *
 * Errors:
 *   PMWAL_EBADOPT   a malformed target (as pmwal_target_parse()).
 *   -EINVAL         @buf is NULL.
 *   -ENAMETOOLONG   @len is too small for the path.
 *
 * See also: pmwal_target_parse(3)
 */
int pmwal_target_path(const char *target, char *buf, size_t len);

/*
 * Name any pmwal or errno code in words.
 *
 * @err: a PMWAL_E* code (pmwal_error(3)), a negative errno, or 0.
 *
 * Returns: a static string, never NULL: the text of a PMWAL_E* code,
 * strerror(3) of -@err for a negative errno, "success" for 0, "unknown
 * error" otherwise.
 *
 * Errors: none.
 *
 * See also: pmwal_errmsg(3), pmwal_error(3)
 */
const char *pmwal_strerror(int err);

/*
 * Tell what the last error on a handle was, and where.
 *
 * The message names the path, LSN or byte offset and what to do; it is set
 * by whichever thread met the error.
 *
 * Returns: the message, "" if none (or @w NULL). Never NULL.
 *
 * Errors: none.
 *
 * Notes: safe from any thread: the text is the calling thread's own copy
 * and stays valid until its next pmwal_errmsg() call. pmwal_open() has no
 * handle yet: its message goes to pmwal_options.errmsg_buf.
 *
 * See also: pmwal_strerror(3)
 */
const char *pmwal_errmsg(struct pmwal *w);

/*
 * Tell the library's version.
 *
 * Returns: the version of the libpmwal linked, as "MAJOR.MINOR.PATCH" (a
 * static string). PMWAL_VERSION_MAJOR and the other macros give the
 * header's.
 *
 * Errors: none.
 *
 * See also: pmwal(3)
 */
const char *pmwal_version(void);


/* ---- simulated media for crash testing (pmwal_sim_*): pmwal_sim(3) ---- */

/*
 * Which device a simulated medium models.
 *
 * Set in pmwal_sim_options.medium.
 *
 * See also: pmwal_sim_options(3), pmwal_sim(3)
 */
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

/*
 * Flags of pmwal_sim_options.flags.
 *
 * See also: pmwal_sim_options(3)
 */
enum pmwal_sim_flags {
	PMWAL_SIM_FUA = 1u << 0, /* nvme: every write is FUA, commit needs no flush */
	/* Debug: the mapping is read-only except inside the medium's own store,
	 * so a store that bypasses the seam faults (SIGSEGV) where it happens. */
	PMWAL_SIM_PROTECT = 1u << 1,
};

/*
 * The options of pmwal_sim_new(): what medium to simulate, and how.
 *
 * Zero means default; reserved fields must be zero.
 *
 * See also: pmwal_sim_new(3), pmwal_sim_medium(3), pmwal_sim_flags(3)
 */
struct pmwal_sim_options {
	uint32_t medium;	     /* pmwal_sim_medium(3) (required) */
	uint32_t flags;		     /* or'ed pmwal_sim_flags(3) */
	uint64_t size_bytes;	     /* bytes, a multiple of 4096 (required) */
	uint64_t seed;		     /* drives completion order and sampling */
	const char *name;	     /* NULL: "simN"; at most 63 bytes */
	uint32_t atomic_write_bytes; /* nvme: advertised atomic write unit */
	uint32_t exhaustive_max;     /* all subsets up to this many pending (0: 10) */
	uint32_t sample_images;	     /* subsets sampled above it (0: 256) */
	uint32_t torn_images;	     /* torn/zero/garbage variants (0: 16) */
	uint64_t reserved[4];	     /* must be zero */
};

/*
 * A simulated medium, to crash a log at every durability event.
 *
 * A simulated medium lives in this process under a name; the target string
 * "sim:NAME" opens a log on it through the same engine and recovery code as
 * a real device. It counts every durability event (each store or write,
 * each barrier or flush), can make any one of them the power loss, and then
 * enumerates the images a reboot could find: the durable image plus any
 * subset of what was stored or written since the last barrier or flush
 * (every subset when few are pending, a seeded sample otherwise), and torn,
 * zeroed or garbage variants. One of them is installed as the new durable
 * content and the log is opened again. The medium outlives every handle on
 * it. pmwal_sim_medium(3) describes the models.
 *
 * Notes: every call may come from any thread; one mutex per medium orders
 * them against the engine's device calls. A NULL @sim is refused, never
 * followed: functions returning int return -EINVAL (pmwal_sim_crashed() 0),
 * counts are 0, pointers NULL, and the void ones do nothing.
 *
 * Example:
 *	// A database's own test suite, crashing its log at every event:
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
 * See also: pmwal_sim_new(3), pmwal_sim_crash_at(3),
 * pmwal_sim_crash_images(3), pmwal_sim_apply_image(3), pmwal_sim_fault(3),
 * pmwal_sim_damage(3)
 */
struct pmwal_sim;

/*
 * Create a simulated medium and register it under its name.
 *
 * The medium holds @opt->size_bytes zero bytes; its target string is
 * pmwal_sim_target(). @out: out; the medium, or NULL on failure.
 *
 * Returns: 0 and the medium in *@out, or a negative error code.
 *
 * Errors:
 *   -EINVAL         @out or @opt NULL, or a bad option: medium unknown,
 *                   size_bytes 0 or not a multiple of 4096, an unknown
 *                   flag, exhaustive_max too large, a name empty or of 64
 *                   bytes or more, reserved not zero.
 *   -EEXIST         the name is taken.
 *   -ENOMEM         no memory for the medium.
 *
 * See also: pmwal_sim(3), pmwal_sim_options(3), pmwal_sim_free(3),
 * pmwal_sim_target(3)
 */
int pmwal_sim_new(const struct pmwal_sim_options *opt, struct pmwal_sim **out);

/*
 * Unregister and free a simulated medium.
 *
 * No log may be open on it. Accepts NULL.
 *
 * Returns: nothing.
 *
 * Errors: none.
 *
 * See also: pmwal_sim_new(3)
 */
void pmwal_sim_free(struct pmwal_sim *sim);

/*
 * Tell the target string that opens a log on a simulated medium.
 *
 * Returns: "sim:NAME", for pmwal_options.target, valid until
 * pmwal_sim_free(); NULL for a NULL @sim.
 *
 * Errors: none.
 *
 * See also: pmwal_sim_new(3), pmwal_options(3)
 */
const char *pmwal_sim_target(const struct pmwal_sim *sim);

/*
 * Zero a simulated medium and forget its faults, crash and event count.
 *
 * Returns: nothing.
 *
 * Errors: none (a NULL @sim is ignored).
 *
 * See also: pmwal_sim_crash_at(3), pmwal_sim_events(3)
 */
void pmwal_sim_reset(struct pmwal_sim *sim);

/*
 * Count the durability events of a simulated medium so far.
 *
 * Every store or write piece, barrier and flush is one event.
 *
 * Returns: the count since pmwal_sim_new() or pmwal_sim_reset(); 0 for a
 * NULL @sim.
 *
 * Errors: none.
 *
 * See also: pmwal_sim_crash_at(3), pmwal_sim_pending(3)
 */
uint64_t pmwal_sim_events(struct pmwal_sim *sim);

/*
 * Count what a simulated medium holds that is not yet durable.
 *
 * Returns: the units (lines or writes) stored or written and not yet
 * durable; 0 for a NULL @sim.
 *
 * Errors: none.
 *
 * See also: pmwal_sim_events(3), pmwal_sim_crash_images(3)
 */
uint64_t pmwal_sim_pending(struct pmwal_sim *sim);

/*
 * Make a given durability event of a simulated medium the power loss.
 *
 * Event @n (0-based, as counted by pmwal_sim_events()) and every later
 * device call fail with -EIO, so the log fails stop. UINT64_MAX disarms.
 *
 * Returns: nothing.
 *
 * Errors: none (a NULL @sim is ignored).
 *
 * See also: pmwal_sim_crash(3), pmwal_sim_crash_images(3), pmwal_sim(3)
 */
void pmwal_sim_crash_at(struct pmwal_sim *sim, uint64_t n);
/*
 * Lose power on a simulated medium now.
 *
 * Every later device call fails with -EIO, so a log open on it fails stop;
 * the crash images are those of this moment.
 *
 * Returns: nothing.
 *
 * Errors: none (a NULL @sim is ignored).
 *
 * See also: pmwal_sim_crash_at(3), pmwal_sim_crash_images(3)
 */
void pmwal_sim_crash(struct pmwal_sim *sim);

/*
 * Tell whether a simulated medium has lost power.
 *
 * Returns: 1 once the power loss happened (until pmwal_sim_apply_image()),
 * 0 before it or for a NULL @sim.
 *
 * Errors: none.
 *
 * See also: pmwal_sim_crash_at(3), pmwal_sim_apply_image(3)
 */
int pmwal_sim_crashed(struct pmwal_sim *sim);

/*
 * The crash images the last power loss left, split by kind.
 *
 * Filled by pmwal_sim_crash_images().
 *
 * See also: pmwal_sim_crash_images(3)
 */
struct pmwal_sim_crash_info {
	uint64_t event;	      /* the event that was the power loss */
	uint64_t pending;     /* lines or writes pending at the crash */
	uint64_t subsets;     /* images that keep a subset of them whole */
	uint64_t torn;	      /* images with torn, zeroed or garbage units */
	int exhaustive;	      /* 1: subsets are every subset */
};

/*
 * Count the crash images the last power loss of a simulated medium left.
 *
 * Fills @info (pmwal_sim_crash_info(3)) when not NULL. Image i < subsets
 * keeps subset i (bit k: unit k); sampled and torn images are drawn from
 * (seed, i), so an index replays.
 *
 * Returns: the number of crash images (subsets + torn), 0 before any power
 * loss or for a NULL @sim.
 *
 * Errors: none.
 *
 * See also: pmwal_sim_apply_image(3), pmwal_sim_crash_at(3)
 */
uint64_t pmwal_sim_crash_images(struct pmwal_sim *sim, struct pmwal_sim_crash_info *info);

/*
 * Install one crash image as the durable content of a simulated medium.
 *
 * Image @index becomes the durable content; the medium works again and
 * events go on counting. May be called for every index in turn: each
 * starts from the state at the power loss.
 *
 * Returns: 0, or a negative error code.
 *
 * Errors:
 *   -ERANGE         @index is not below pmwal_sim_crash_images().
 *   -EINVAL         @sim NULL, or no power loss happened.
 *
 * See also: pmwal_sim_crash_images(3), pmwal_sim(3)
 */
int pmwal_sim_apply_image(struct pmwal_sim *sim, uint64_t index);

/*
 * Kinds of at-rest damage pmwal_sim_damage() does to durable bytes.
 *
 * See also: pmwal_sim_damage(3)
 */
enum pmwal_sim_damage_kind {
	PMWAL_SIM_FLIP = 1,    /* invert one bit of each byte */
	PMWAL_SIM_ZERO = 2,    /* zero the bytes */
	PMWAL_SIM_GARBAGE = 3, /* seeded random bytes */
};

/*
 * Damage a range of a simulated medium's durable bytes, at rest.
 *
 * Damages [@off, @off + @len) of the durable image (and what loads see) as
 * @kind (pmwal_sim_damage_kind(3)) says.
 *
 * Returns: 0, or a negative error code.
 *
 * Errors:
 *   -EINVAL         @sim NULL, the range is not inside the medium, or
 *                   @kind is unknown.
 *
 * See also: pmwal_sim_overwrite(3), pmwal_sim_fault(3)
 */
int pmwal_sim_damage(struct pmwal_sim *sim, uint64_t off, uint64_t len, int kind);

/*
 * Put given bytes into a simulated medium's durable image, at rest.
 *
 * Writes @len bytes of @buf at [@off, @off + @len) of the durable image
 * (and what loads see): for instance a block of another log or of an
 * earlier lap, resealed so that its checksum is valid.
 *
 * Returns: 0, or a negative error code.
 *
 * Errors:
 *   -EINVAL         @sim NULL, @buf NULL with @len not 0, or the range is
 *                   not inside the medium.
 *
 * See also: pmwal_sim_damage(3)
 */
int pmwal_sim_overwrite(struct pmwal_sim *sim, uint64_t off, const void *buf, uint64_t len);

/*
 * Kinds of faults a simulated device can produce (pmwal_sim_fault()).
 *
 * See also: pmwal_sim_fault(3)
 */
enum pmwal_sim_fault_kind {
	PMWAL_SIM_FAIL = 1,	  /* event @event fails with @err; the medium lives */
	PMWAL_SIM_LOST = 2,	  /* write event @event is acked but never lands */
	PMWAL_SIM_MISDIRECT = 3,  /* write event @event lands at @off instead */
	PMWAL_SIM_READ_ERROR = 4, /* reads touching [@off, @off+@len) fail -EIO */
};

/*
 * One fault to arm on a simulated medium with pmwal_sim_fault().
 *
 * See also: pmwal_sim_fault(3), pmwal_sim_fault_kind(3)
 */
struct pmwal_sim_fault {
	int kind; /* enum pmwal_sim_fault_kind (pmwal_sim_fault_kind(3)) */
	int err;  /* FAIL: the negative errno returned (0: -EIO) */
	uint64_t event; /* FAIL, LOST, MISDIRECT: the event (as pmwal_sim_events()) */
	uint64_t off;	/* MISDIRECT: where the write lands; READ_ERROR: range start */
	uint64_t len;	/* READ_ERROR: bytes of the range */
};

/*
 * Arm one fault of a simulated device.
 *
 * Up to 8 faults at once, until pmwal_sim_reset() or
 * pmwal_sim_clear_faults(). LOST and MISDIRECT apply to write and store
 * events only.
 *
 * Returns: 0, or a negative error code.
 *
 * Errors:
 *   -EINVAL         @sim or @f NULL, an unknown kind, a positive err, a
 *                   MISDIRECT target or READ_ERROR range that is empty or
 *                   not inside the medium.
 *   -ENOSPC         8 faults are armed already.
 *
 * See also: pmwal_sim_fault_kind(3), pmwal_sim_clear_faults(3)
 */
int pmwal_sim_fault(struct pmwal_sim *sim, const struct pmwal_sim_fault *f);

/*
 * Disarm every fault of a simulated medium that has not fired.
 *
 * What a fault did stays done.
 *
 * Returns: nothing.
 *
 * Errors: none (a NULL @sim is ignored).
 *
 * See also: pmwal_sim_fault(3)
 */
void pmwal_sim_clear_faults(struct pmwal_sim *sim);

/*
 * Read a simulated medium's durable image, for checks.
 *
 * Returns: the durable image (size_bytes long), valid until the next call
 * on the medium; NULL for a NULL @sim.
 *
 * Errors: none.
 *
 * See also: pmwal_sim_damage(3), pmwal_sim_crash_images(3)
 */
const uint8_t *pmwal_sim_durable(struct pmwal_sim *sim);

#ifdef __cplusplus
}
#endif
#endif /* PMWAL_H */
