// SPDX-License-Identifier: MIT
/*
 * engine.c - the log handle: options, the superblock, create and open with
 * recovery, release, close, verify and stat. The commit pipeline is in
 * commit.c, iterators in iter.c; struct pmwal is in engine.h.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "seeded.h"
#include "xxh.h"

#define WAL_GROUP_BYTES_DEFAULT (1u << 20)
#define WAL_INFLIGHT_DEFAULT	1u /* groups in flight on flash (options) */

/* The groups in flight the options ask for. */
static uint32_t inflight_wanted(const struct pmwal_options *opt)
{
	return opt->groups_in_flight ? opt->groups_in_flight : WAL_INFLIGHT_DEFAULT;
}
#define WAL_QUEUE_DEPTH_MAX	4096u
#define WAL_WINDOW_US_MAX	1000000u

void wal_set_err(struct pmwal *w, const char *fmt, ...)
{
	char msg[sizeof(w->errmsg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&w->err_mu);
	memcpy(w->errmsg, msg, sizeof(msg));
	pthread_mutex_unlock(&w->err_mu);
}

static void open_err(const struct pmwal_options *opt, const char *msg)
{
	if (opt && opt->errmsg_buf && opt->errmsg_len)
		snprintf(opt->errmsg_buf, opt->errmsg_len, "%s", msg);
}

static uint64_t now_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/* ---- options ------------------------------------------------------------ */

static int check_options(const struct pmwal_options *opt, char *err, size_t errlen)
{
	const uint32_t known = PMWAL_OPEN_CREATE | PMWAL_OPEN_EXCL | PMWAL_OPEN_READONLY |
			       PMWAL_OPEN_SALVAGE | PMWAL_OPEN_BUFFERED_IO |
			       PMWAL_OPEN_NO_URING | PMWAL_OPEN_FDATASYNC |
			       PMWAL_OPEN_WAIT_LOCK | PMWAL_OPEN_BREAK_LOCK |
			       PMWAL_OPEN_FORMAT | PMWAL_OPEN_FORCE;
	const uint32_t makes = PMWAL_OPEN_CREATE | PMWAL_OPEN_FORMAT;

	if (!opt) {
		snprintf(err, errlen, "options: NULL");
		return PMWAL_EBADOPT;
	}
	for (size_t i = 0; i < sizeof(opt->reserved) / sizeof(opt->reserved[0]); i++)
		if (opt->reserved[i]) {
			snprintf(err, errlen, "options.reserved[%zu]: must be zero", i);
			return PMWAL_EBADOPT;
		}
	if (!opt->target || !opt->target[0]) {
		snprintf(err, errlen,
			 "options.target: empty; name a file, device or region");
		return PMWAL_EBADOPT;
	}
	if (strlen(opt->target) >= 256) {
		snprintf(err, errlen, "options.target: longer than 255 bytes");
		return PMWAL_EBADOPT;
	}
	if (opt->flags & ~known) {
		snprintf(err, errlen, "options.flags: unknown bits 0x%x",
			 opt->flags & ~known);
		return PMWAL_EBADOPT;
	}
	if ((opt->flags & makes) && (opt->flags & PMWAL_OPEN_READONLY)) {
		snprintf(err, errlen, "options.flags: %s and READONLY together",
			 opt->flags & PMWAL_OPEN_FORMAT ? "FORMAT" : "CREATE");
		return PMWAL_EBADOPT;
	}
	if ((opt->flags & PMWAL_OPEN_FORCE) && !(opt->flags & PMWAL_OPEN_FORMAT)) {
		snprintf(err, errlen, "options.flags: FORCE without FORMAT (FORCE lets "
				      "FORMAT overwrite data that is not a pmwal log)");
		return PMWAL_EBADOPT;
	}
	if ((opt->flags & PMWAL_OPEN_EXCL) && (opt->flags & PMWAL_OPEN_FORMAT)) {
		snprintf(err, errlen, "options.flags: EXCL and FORMAT together (EXCL refuses "
				      "an existing log, FORMAT replaces it)");
		return PMWAL_EBADOPT;
	}
	if ((opt->flags & (PMWAL_OPEN_WAIT_LOCK | PMWAL_OPEN_BREAK_LOCK)) &&
	    (opt->flags & PMWAL_OPEN_READONLY)) {
		snprintf(err, errlen, "options.flags: WAIT_LOCK or BREAK_LOCK with READONLY "
				      "(a read-only open takes no lock)");
		return PMWAL_EBADOPT;
	}
	if ((opt->flags & PMWAL_OPEN_WAIT_LOCK) && (opt->flags & PMWAL_OPEN_BREAK_LOCK)) {
		snprintf(err, errlen, "options.flags: WAIT_LOCK and BREAK_LOCK together "
				      "(wait for the writer, or fence it)");
		return PMWAL_EBADOPT;
	}
	if ((opt->flags & PMWAL_OPEN_EXCL) && !(opt->flags & PMWAL_OPEN_CREATE)) {
		snprintf(err, errlen, "options.flags: EXCL without CREATE");
		return PMWAL_EBADOPT;
	}
	if (opt->commit_policy > PMWAL_COMMIT_BUFFERED) {
		snprintf(err, errlen, "options.commit_policy: %u is not a policy",
			 opt->commit_policy);
		return PMWAL_EBADOPT;
	}
	if (opt->group_window_us > WAL_WINDOW_US_MAX) {
		snprintf(err, errlen, "options.group_window_us: %u is above 1 s",
			 opt->group_window_us);
		return PMWAL_EBADOPT;
	}
	if (opt->group_bytes_max && (opt->group_bytes_max < WAL_BLOCK_BYTES ||
				     opt->group_bytes_max > (256u << 20))) {
		snprintf(err, errlen,
			 "options.group_bytes_max: %u is outside 4 KiB .. 256 MiB",
			 opt->group_bytes_max);
		return PMWAL_EBADOPT;
	}
	if (opt->record_bytes_max > WAL_RECORD_MAX_LIMIT) {
		snprintf(err, errlen, "options.record_bytes_max: %u is above 1 GiB",
			 opt->record_bytes_max);
		return PMWAL_EBADOPT;
	}
	if ((opt->flags & makes) && opt->capacity_bytes &&
	    opt->capacity_bytes <
		WAL_RING_OFFSET + WAL_MIN_RING_BLOCKS * WAL_BLOCK_BYTES) {
		snprintf(err, errlen,
			 "options.capacity_bytes: %llu is below the minimum of %u bytes",
			 (unsigned long long)opt->capacity_bytes,
			 WAL_RING_OFFSET + WAL_MIN_RING_BLOCKS * WAL_BLOCK_BYTES);
		return PMWAL_EBADOPT;
	}
	if (opt->groups_in_flight > WAL_INFLIGHT_MAX) {
		snprintf(err, errlen, "options.groups_in_flight: %u is above %u",
			 opt->groups_in_flight, WAL_INFLIGHT_MAX);
		return PMWAL_EBADOPT;
	}
	if (opt->lock_wait_ms && !(opt->flags & PMWAL_OPEN_WAIT_LOCK)) {
		snprintf(err, errlen, "options.lock_wait_ms: only with WAIT_LOCK");
		return PMWAL_EBADOPT;
	}
	if (opt->queue_depth > WAL_QUEUE_DEPTH_MAX) {
		snprintf(err, errlen, "options.queue_depth: %u is above %u",
			 opt->queue_depth, WAL_QUEUE_DEPTH_MAX);
		return PMWAL_EBADOPT;
	}
	return 0;
}

/* ---- superblock --------------------------------------------------------- */

/*
 * Which copy write_sb() must write first: the one that does not hold the
 * newest valid state. Normally both copies are equal and copy 0 goes first,
 * but after a crash tore one copy the other is the only valid one, and
 * overwriting it first would leave no valid copy if power failed again
 * inside that write (found by `pmwal crashtest`, a crash during recovery).
 */
static uint32_t sb_first_copy(struct pmwal *w)
{
	uint8_t *buf;
	struct wal_sb a, b;
	uint32_t first = 0;

	if (w->sb_same || !(buf = wal_alloc_io(WAL_RING_OFFSET)))
		return 0;
	if (w->dev->ops->read(w->dev, buf, WAL_RING_OFFSET, 0) == 0 &&
	    wal_sb_decode(buf, &a) == 0 &&
	    (wal_sb_decode(buf + WAL_SB_BYTES, &b) != 0 || b.sb_seq < a.sb_seq))
		first = 1;
	free(buf);
	return first;
}

/*
 * Writes @sb as the next superblock update (caller holds io_lock to write, or is the
 * only thread): one copy made durable, then the other; the first is the one
 * that does not hold the newest valid state (sb_first_copy), so at every
 * moment one valid copy describes a state that was true. Only after both may
 * the caller use the new state (format.c, SUPERBLOCK).
 */
static int write_sb(struct pmwal *w, struct wal_sb *sb)
{
	uint8_t *buf = wal_alloc_io(WAL_SB_BYTES);
	uint32_t first = sb_first_copy(w);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	sb->sb_seq++;
	wal_sb_encode(sb, buf);
	w->sb_same = false;
	for (uint32_t k = 0; k < WAL_SB_COPIES && !rc; k++) {
		uint32_t copy = (first + k) % WAL_SB_COPIES;
		struct wal_io io = {buf, WAL_SB_BYTES, copy * WAL_SB_BYTES};

		rc = w->dev->ops->commit(w->dev, &io, 1, NULL);
	}
	w->sb_same = rc == 0;
	free(buf);
	return rc;
}

static int format_log(struct pmwal *w, const struct pmwal_options *opt, char *err,
		      size_t errlen)
{
	struct wal_sb *sb = &w->sb;
	/* Whole blocks only, as the header promises. */
	uint64_t cap = (opt->capacity_bytes ? opt->capacity_bytes : w->dev->size_bytes) /
		       WAL_BLOCK_BYTES * WAL_BLOCK_BYTES;
	uint32_t rec_max =
	    opt->record_bytes_max ? opt->record_bytes_max : WAL_RECORD_MAX_DEFAULT;

	if (cap > w->dev->size_bytes) {
		snprintf(
		    err, errlen,
		    "options.capacity_bytes: %llu is larger than the target (%llu bytes)",
		    (unsigned long long)cap, (unsigned long long)w->dev->size_bytes);
		return PMWAL_EBADOPT;
	}
	if (cap < WAL_RING_OFFSET + WAL_MIN_RING_BLOCKS * WAL_BLOCK_BYTES) {
		snprintf(err, errlen,
			 "options.capacity_bytes: %llu is below the minimum of %u bytes",
			 (unsigned long long)cap,
			 WAL_RING_OFFSET + WAL_MIN_RING_BLOCKS * WAL_BLOCK_BYTES);
		return PMWAL_EBADOPT;
	}
	/* Default: 16 MiB, or a quarter of a small log, so small logs just work. */
	if (!opt->record_bytes_max) {
		uint64_t quarter =
		    (cap - WAL_RING_OFFSET) / WAL_BLOCK_BYTES * WAL_PAYLOAD_BYTES / 4;

		if (quarter < rec_max)
			rec_max = quarter > WAL_REC_HDR_BYTES ? (uint32_t)quarter : 1;
	}
	memset(sb, 0, sizeof(*sb));
	sb->format_version = PMWAL_FORMAT_VERSION;
	sb->block_bytes = WAL_BLOCK_BYTES;
	while (sb->log_id == 0)
		if (getrandom(&sb->log_id, sizeof(sb->log_id), 0) != sizeof(sb->log_id))
			sb->log_id = now_realtime_ns() ^ (uint64_t)(uintptr_t)w;
	sb->capacity_blocks = (cap - WAL_RING_OFFSET) / WAL_BLOCK_BYTES;
	sb->epoch = 1;
	sb->record_bytes_max = rec_max;
	sb->head_seq = sb->end_seq = 0;
	sb->head_lsn = sb->end_lsn = 1;
	uint64_t group_payload = rec_max + WAL_REC_HDR_BYTES;

	uint64_t group_bytes = w->group_bytes_max;
	uint64_t ring_quarter = sb->capacity_blocks * WAL_PAYLOAD_BYTES / 4;

	if (group_bytes > ring_quarter)
		group_bytes =
		    ring_quarter > WAL_PAYLOAD_BYTES ? ring_quarter : WAL_PAYLOAD_BYTES;
	if (group_payload < group_bytes)
		group_payload = group_bytes;
	sb->group_blocks_max = wal_blocks_for_bytes(group_payload) + 1;
	if (sb->group_blocks_max > sb->capacity_blocks) {
		snprintf(err, errlen,
			 "options.capacity_bytes: %llu bytes cannot hold one group of a "
			 "%u-byte "
			 "record; make the log larger or record_bytes_max smaller",
			 (unsigned long long)cap, rec_max);
		return PMWAL_EBADOPT;
	}
	sb->create_time_ns = now_realtime_ns();
	int rc = write_sb(w, sb); /* both copies: an earlier log's never wins */

	if (rc)
		snprintf(err, errlen, "writing the superblocks: %s", strerror(-rc));
	return rc;
}
/*
 * What a target holds before anything is written to it: the one rule behind
 * PMWAL_OPEN_CREATE (format only where nothing is), PMWAL_OPEN_EXCL (refuse
 * where anything is) and PMWAL_OPEN_FORMAT (replace a pmwal log, never other
 * data unless forced). `pmwal create` decides by it too, through those flags.
 * Nothing: no bytes, or a first WAL_BLANK_PROBE_BYTES of zeros, as a new
 * file, a blank device or an interrupted create leaves it: the superblock
 * area, the ring's first blocks (a log whose superblocks were wiped still
 * has records there) and where filesystems keep their marks (btrfs at 64
 * KiB; ext4 and XFS in the first 2 KiB). A log: a
 * superblock the plain open accepts (@sb gets it). A damaged log: the
 * superblock magic in either copy, but no copy a plain open accepts (@err
 * says why, *@sb_rc is the plain open's error). Other: anything else.
 */
#define WAL_BLANK_PROBE_BYTES (68u << 10) /* past btrfs's mark at 0x10040 */
enum wal_holds { WAL_HOLDS_NOTHING, WAL_HOLDS_LOG, WAL_HOLDS_DAMAGED_LOG, WAL_HOLDS_OTHER };

static int target_holds(struct wal_dev *dev, struct wal_sb *sb, enum wal_holds *holds,
			int *sb_rc, char *err, size_t errlen)
{
	uint8_t *buf;
	bool zero = true, magic;
	int rc;

	*sb_rc = 0;
	if (dev->size_bytes == 0) {
		*holds = WAL_HOLDS_NOTHING;
		return 0;
	}
	if (dev->size_bytes < WAL_RING_OFFSET) {
		*holds = WAL_HOLDS_OTHER; /* too small to be read whole; never a log */
		return 0;
	}
	size_t probe = dev->size_bytes < WAL_BLANK_PROBE_BYTES
			       ? (size_t)(dev->size_bytes / WAL_BLOCK_BYTES * WAL_BLOCK_BYTES)
			       : WAL_BLANK_PROBE_BYTES;

	buf = wal_alloc_io(probe);
	if (!buf)
		return -ENOMEM;
	rc = dev->ops->read(dev, buf, probe, 0);
	if (rc) {
		snprintf(err, errlen, "reading the superblocks: %s", strerror(-rc));
		free(buf);
		return rc;
	}
	for (size_t i = 0; i < probe && zero; i++)
		zero = buf[i] == 0;
	magic = wal_get64(buf + 8) == WAL_SB_MAGIC ||
		wal_get64(buf + WAL_SB_BYTES + 8) == WAL_SB_MAGIC;
	free(buf);
	if (zero) {
		*holds = WAL_HOLDS_NOTHING;
		return 0;
	}
	if (!magic) {
		*holds = WAL_HOLDS_OTHER;
		return 0;
	}
	*sb_rc = wal_read_sb(dev, sb, err, errlen);
	if (*sb_rc == -ENOMEM)
		return -ENOMEM;
	*holds = *sb_rc ? WAL_HOLDS_DAMAGED_LOG : WAL_HOLDS_LOG;
	return 0;
}

/*
 * PMWAL_OPEN_CREATE found a log: zero options take what it is, others must
 * match it (a log is never reshaped or replaced by CREATE).
 */
static int check_geometry(struct pmwal *w, const struct pmwal_options *opt, char *err,
			  size_t errlen)
{
	uint64_t have = WAL_RING_OFFSET + w->sb.capacity_blocks * WAL_BLOCK_BYTES;
	uint64_t ask = opt->capacity_bytes / WAL_BLOCK_BYTES * WAL_BLOCK_BYTES;

	if (ask && ask != have) {
		snprintf(err, errlen,
			 "%s: options.capacity_bytes: the existing log (id %016llx) has "
			 "%llu bytes, %llu were asked; open it with 0 (whatever exists), "
			 "or replace it with PMWAL_OPEN_FORMAT",
			 w->target, (unsigned long long)w->sb.log_id,
			 (unsigned long long)have, (unsigned long long)ask);
		return PMWAL_EBADOPT;
	}
	if (opt->record_bytes_max && opt->record_bytes_max != w->sb.record_bytes_max) {
		snprintf(err, errlen,
			 "%s: options.record_bytes_max: the existing log (id %016llx) has "
			 "%u, %u was asked; open it with 0 (whatever exists), or replace "
			 "it with PMWAL_OPEN_FORMAT",
			 w->target, (unsigned long long)w->sb.log_id,
			 w->sb.record_bytes_max, opt->record_bytes_max);
		return PMWAL_EBADOPT;
	}
	return 0;
}

/*
 * CREATE, EXCL and FORMAT (pmwal.h): format the target, take the log it
 * holds (w->sb read), or refuse, writing nothing.
 * @file_existed: EXCL found the file there before opening it.
 */
static int create_or_take(struct pmwal *w, const struct pmwal_options *opt,
			  bool file_existed, char *err, size_t errlen)
{
	bool format = opt->flags & PMWAL_OPEN_FORMAT;
	bool excl = opt->flags & PMWAL_OPEN_EXCL;
	bool force = opt->flags & PMWAL_OPEN_FORCE;
	enum wal_holds holds;
	char why[400] = "";
	int sb_rc, rc;

	rc = target_holds(w->dev, &w->sb, &holds, &sb_rc, why, sizeof(why));
	if (rc) {
		snprintf(err, errlen, "%s: %s", w->target, why[0] ? why : strerror(-rc));
		return rc;
	}
	if (excl && (file_existed || holds != WAL_HOLDS_NOTHING)) {
		snprintf(err, errlen, "%s: already exists and holds %s", w->target,
			 holds == WAL_HOLDS_LOG		  ? "a pmwal log"
			 : holds == WAL_HOLDS_DAMAGED_LOG ? "a damaged pmwal log"
			 : holds == WAL_HOLDS_OTHER	  ? "data that is not a pmwal log"
							  : "no pmwal log (a superblock area of "
							    "zeros, as an interrupted create "
							    "leaves)");
		return -EEXIST;
	}
	if (holds == WAL_HOLDS_NOTHING || (format && holds != WAL_HOLDS_OTHER) ||
	    (format && force)) {
		return format_log(w, opt, err, errlen);
	}
	if (holds == WAL_HOLDS_OTHER) {
		snprintf(err, errlen,
			 "%s: holds data that is not a pmwal log; nothing was written "
			 "(PMWAL_OPEN_FORMAT with PMWAL_OPEN_FORCE, `pmwal create --force`, "
			 "overwrites it)",
			 w->target);
		return PMWAL_EFORMAT;
	}
	if (holds == WAL_HOLDS_DAMAGED_LOG) {
		/* Never formatted over by CREATE: the records may be salvaged. */
		snprintf(err, errlen,
			 "%s: %s; nothing was written (CREATE formats only a target that "
			 "holds nothing: inspect it with `pmwal verify`, salvage it, or "
			 "replace it with PMWAL_OPEN_FORMAT)",
			 w->target, why);
		return sb_rc == PMWAL_EFORMAT && !strstr(why, "format version")
			   ? PMWAL_ECORRUPT
			   : sb_rc;
	}
	return check_geometry(w, opt, err, errlen);
}
/* ---- release ------------------------------------------------------------ */

int pmwal_release(struct pmwal *w, uint64_t lsn)
{
	uint64_t seq, end_seq, end_lsn, head_lsn;
	int rc;

	if (!w)
		return -EINVAL;
	if (w->flags & PMWAL_OPEN_READONLY)
		return PMWAL_EREADONLY;
	pthread_rwlock_wrlock(&w->io_lock);
	pthread_mutex_lock(&w->mu);
	rc = w->failed ? wal_failed_rc(w) : 0;
	if (!rc && lsn > w->durable_lsn + 1) {
		wal_set_err(
		    w, "%s: release below LSN %llu, but only LSNs up to %llu are durable",
		    w->target, (unsigned long long)lsn,
		    (unsigned long long)w->durable_lsn);
		rc = PMWAL_ERANGE;
	}
	end_seq = w->next_seq; /* groups retired durable; those in flight (their
				* commits done: io_lock) lie past it */
	end_lsn = w->durable_lsn + 1;
	head_lsn = w->head_lsn;
	bool everything = lsn == w->durable_lsn + 1;
	pthread_mutex_unlock(&w->mu);
	if (rc || lsn <= head_lsn)
		goto out;
	if (everything) {
		seq = end_seq;
	} else {
		rc = wal_locate(w->dev, &w->sb, w->head_seq, end_seq, lsn, &seq);
		if (rc && rc != -ENOMEM) {
			/* Damage to durable blocks (a lost or misdirected write),
			 * or a device that cannot read them back. The handle fails
			 * stop: nothing more is acknowledged. The superblock is
			 * made to attest what was durable (head unchanged), so
			 * that recovery calls the damage CORRUPT instead of
			 * cutting the acked records off as a torn tail. */
			struct wal_sb sb = w->sb;

			sb.end_seq = end_seq;
			sb.end_lsn = end_lsn;
			int src = write_sb(w, &sb);

			pthread_mutex_lock(&w->mu);
			if (src == 0) {
				w->sb.sb_seq = sb.sb_seq;
				w->sb.end_seq = sb.end_seq;
				w->sb.end_lsn = sb.end_lsn;
			}
			wal_fail_stop(w, rc);
			pthread_mutex_unlock(&w->mu);
			wal_set_err(w,
				"%s: finding LSN %llu to release: %s; the log is closed for "
				"writing, run `pmwal verify` on it",
				w->target, (unsigned long long)lsn, pmwal_strerror(rc));
			goto out;
		}
		if (rc) {
			wal_set_err(w, "%s: finding LSN %llu to release: %s", w->target,
				(unsigned long long)lsn, pmwal_strerror(rc));
			goto out;
		}
	}
	if (wal_status_begin_write(w)) {
		pthread_mutex_lock(&w->mu);
		wal_fail_stop(w, PMWAL_EFENCED);
		pthread_mutex_unlock(&w->mu);
		wal_set_err(w, "%s: another writer took the log over; release to LSN %llu "
			       "not done, close this handle", w->target, (unsigned long long)lsn);
		rc = PMWAL_EFENCED;
		goto out;
	}
	struct wal_sb sb = w->sb;

	sb.head_seq = seq;
	sb.head_lsn = lsn;
	sb.end_seq = end_seq; /* all durable */
	sb.end_lsn = end_lsn;
	rc = write_sb(w, &sb);
	wal_status_end_write(w);
	pthread_mutex_lock(&w->mu);
	if (rc) {
		wal_fail_stop(w, rc);
		wal_set_err(w, "%s: superblock write for release to LSN %llu failed: %s",
			w->target, (unsigned long long)lsn, pmwal_strerror(rc));
	} else {
		/* Only now, with the new head durable, may the space be reused.
		 * The other superblock fields never change after open. */
		w->sb.sb_seq = sb.sb_seq;
		w->sb.head_seq = seq;
		w->sb.head_lsn = lsn;
		w->sb.end_seq = end_seq;
		w->sb.end_lsn = end_lsn;
		w->head_seq = seq;
		w->head_lsn = lsn;
		/* Before any group reuses the space (io_lock held): a follower
		 * that read a block below the new head learns it may be gone. */
		if (wal_status_publish(w, w->next_seq, w->durable_lsn, 0, NULL)) {
			wal_fail_stop(w, PMWAL_EFENCED);
			rc = PMWAL_EFENCED;
		}
		wal_wake_all(w);
	}
	pthread_mutex_unlock(&w->mu);
out:
	pthread_rwlock_unlock(&w->io_lock);
	return rc;
}
/* ---- open and close ----------------------------------------------------- */

static int alloc_stages(struct pmwal *w)
{
	uint32_t cap = w->sb.group_blocks_max;
	void *bufs[WAL_INFLIGHT_MAX + 1];
	size_t lens[WAL_INFLIGHT_MAX + 1];

	for (uint32_t i = 0; i < w->nstages; i++) {
		w->stage[i].cap_blocks = cap;
		w->stage[i].buf = wal_alloc_io((size_t)cap * WAL_BLOCK_BYTES);
		if (!w->stage[i].buf)
			return -ENOMEM;
		bufs[i] = w->stage[i].buf;
		lens[i] = (size_t)cap * WAL_BLOCK_BYTES;
	}
	if (w->dev->ops->register_buffers)
		w->dev->ops->register_buffers(w->dev, bufs, lens, (int)w->nstages);
	if (w->dev->ops->map && w->dev->ops->store && w->dev->ops->barrier) {
		if (wal_direct_init(w))
			return -ENOMEM;
	}
	return 0;
}

static void free_handle(struct pmwal *w)
{
	if (!w)
		return;
	wal_status_detach(w, false);
	if (w->dev)
		w->dev->ops->close(w->dev);
	for (int i = 0; i < WAL_LOCK_FDS; i++)
		if (w->lock_fd[i] >= 0)
			close(w->lock_fd[i]); /* the last thing: the log is now free */
	for (uint32_t i = 0; i < WAL_INFLIGHT_MAX + 1; i++) {
		free(w->stage[i].buf);
		pthread_cond_destroy(&w->stage[i].cv);
	}
	wal_direct_free(w);
	pthread_mutex_destroy(&w->mu);
	pthread_mutex_destroy(&w->lock_mu);
	pthread_rwlock_destroy(&w->io_lock);
	pthread_mutex_destroy(&w->seal_mu);
	pthread_cond_destroy(&w->seal_cv);
	pthread_mutex_destroy(&w->err_mu);
	pthread_cond_destroy(&w->cv_done);
	pthread_cond_destroy(&w->cv_work);
	free(w);
}

static const char *verdict_name(int v)
{
	return v == PMWAL_CLEAN	      ? "clean"
	       : v == PMWAL_TORN_TAIL ? "torn tail"
				      : "corrupt";
}

/* The superblock, as a salvaging open reads it where it must (w->sb_note). */
static int read_sb(struct pmwal *w, char *err, size_t errlen)
{
	if (!(w->flags & PMWAL_OPEN_SALVAGE))
		return wal_read_sb(w->dev, &w->sb, err, errlen);
	return wal_read_sb_salvage(w->dev, &w->sb, w->sb_note, sizeof(w->sb_note),
				   &w->sb_bad_offset, err, errlen);
}

/* Recovery at open: scan, decide, and (writable) bump the epoch. */
static int recover(struct pmwal *w, char *err, size_t errlen)
{
	struct wal_tail tail;
	bool salvage = w->flags & PMWAL_OPEN_SALVAGE;
	bool writer = !(w->flags & PMWAL_OPEN_READONLY);

	/*
	 * Followers and the fence (status.c). A writer claims the log before
	 * recovery reads a byte: a writer it takes over (PMWAL_OPEN_BREAK_LOCK)
	 * writes no group after this and acknowledges none it had written.
	 * A writer without a page is refused (wal_status_claim says why and
	 * what to do); only media of this process alone (sim:) have none.
	 */
	if (writer && w->sb.epoch >= WAL_EPOCH_MAX) {
		snprintf(err, errlen,
			 "%s: the log's epoch is at its maximum (%u opens for writing); "
			 "open it read-only and copy its records to a new log",
			 w->target, w->sb.epoch);
		return PMWAL_EFULL;
	}
	(void)wal_status_attach(w, writer);
	int rc = 0;

	if (writer)
		rc = wal_status_claim(w, w->sb.epoch + 1, w->lock_broken ? w->broken_from : 0,
				      err, errlen);
	/* Claimed (a lock taken after waiting, or broken and drained): what
	 * the last writer made durable is read now, not as the device was
	 * opened. */
	if (!rc && writer && w->dev->ops->reload && (rc = w->dev->ops->reload(w->dev)))
		snprintf(err, errlen, "%s: reading the medium again: %s", w->target,
			 strerror(-rc));
	if (rc)
		return rc;
	if (writer) {
		rc = read_sb(w, err, errlen); /* as that writer left it */
		if (rc)
			return rc;
		if (w->sb.epoch >= w->own_epoch) {
			/* Another open claimed and recovered the log since our
			 * first look: with a page, it owns the log now. */
			if (w->st) {
				snprintf(err, errlen,
					 "%s: another writer opened the log while this open "
					 "claimed it; nothing was written, open it again",
					 w->target);
				return PMWAL_EFENCED;
			}
			w->own_epoch = w->sb.epoch + 1;
		}
	}
	rc = wal_recover_scan(w->dev, &w->sb, salvage, &w->report, &tail);
	/*
	 * A reader beside a live writer reads the tail while it is written: a
	 * block read mid-write, then a later group read after that write had
	 * completed, reads as damage before a later group (a standby opening
	 * beside a fast primary did, in CI). Damage stays when read again; a
	 * read that raced a write does not.
	 */
	for (int again = 0; !rc && !writer && !salvage && again < 3 &&
			    w->report.verdict == PMWAL_CORRUPT;
	     again++) {
		usleep(10000);
		if (w->dev->ops->reload && (rc = w->dev->ops->reload(w->dev)) != 0)
			break;
		rc = wal_read_sb(w->dev, &w->sb, err, errlen);
		if (rc)
			return rc;
		rc = wal_recover_scan(w->dev, &w->sb, salvage, &w->report, &tail);
	}

	if (rc) {
		snprintf(err, errlen, "%s: recovery read failed: %s", w->target,
			 strerror(-rc));
		return rc;
	}
	if (w->sb_note[0]) {
		/* Salvage read past a superblock copy of another log: the log is
		 * damaged there, whatever its blocks say. */
		char scan[sizeof(w->report.detail)];

		snprintf(scan, sizeof(scan), "%s", w->report.detail);
		if (w->report.verdict != PMWAL_CORRUPT) {
			w->report.verdict = PMWAL_CORRUPT;
			w->report.corrupt_lsn = w->sb.head_lsn;
			w->report.corrupt_offset = w->sb_bad_offset;
		}
		snprintf(w->report.detail, sizeof(w->report.detail), "%s; %s", w->sb_note,
			 scan);
	}
	if (w->report.verdict == PMWAL_CORRUPT && !salvage) {
		snprintf(err, errlen,
			 "%s: corrupt at LSN %llu (byte offset %llu): %s; nothing was "
			 "changed. "
			 "Inspect with `pmwal verify`, or open with salvage (--salvage) "
			 "to skip it",
			 w->target, (unsigned long long)w->report.corrupt_lsn,
			 (unsigned long long)w->report.corrupt_offset, w->report.detail);
		return PMWAL_ECORRUPT;
	}
	w->next_seq = w->lead_seq = tail.next_seq;
	w->next_lsn = tail.next_lsn;
	w->prev_checksum = tail.prev_checksum;
	w->durable_lsn = tail.durable_lsn;
	w->head_seq = w->sb.head_seq;
	w->head_lsn = w->sb.head_lsn;
	if (!writer) {
		/* A live writer's last groups may be written but not yet durable:
		 * a follower starts at what it published durable. */
		(void)wal_follow_refresh(w);
		return 0;
	}
	/* New epoch: blocks of a tail cut off now are told apart from ours, and
	 * the superblock attests what recovery kept (format.c, end_seq). */
	struct wal_sb sb = w->sb;

	if (sb.epoch >= WAL_EPOCH_MAX) {
		snprintf(err, errlen,
			 "%s: the log's epoch is at its maximum (%u opens for writing); "
			 "open it read-only and copy its records to a new log",
			 w->target, sb.epoch);
		return PMWAL_EFULL;
	}
	sb.epoch = w->own_epoch; /* claimed: above the superblock's, and any claim's */
	sb.end_seq = tail.next_seq;
	sb.end_lsn = tail.next_lsn + (PMWAL_BUG(NOT_IDEMPOTENT) ? 1 : 0);
	sb.flags &= ~WAL_SB_CLOSED;
	rc = wal_status_begin_write(w);
	if (rc == PMWAL_EFENCED) {
		snprintf(err, errlen,
			 "%s: another writer opened the log while this open recovered it; "
			 "nothing was written, open it again",
			 w->target);
		return rc;
	}
	rc = write_sb(w, &sb);
	wal_status_end_write(w);
	if (rc) {
		snprintf(err, errlen,
			 "%s: writing the superblock after recovery (%s): %s", w->target,
			 verdict_name(w->report.verdict), strerror(-rc));
		return rc;
	}
	w->sb = sb;
	rc = wal_status_publish(w, w->next_seq, w->durable_lsn, 0, NULL);
	if (rc) {
		snprintf(err, errlen,
			 "%s: another writer opened the log while this open recovered it "
			 "(epoch %u is no longer the log's); open it again",
			 w->target, sb.epoch);
		return rc;
	}
	return 0;
}

static int open_locked(const struct pmwal_options *opt, struct wal_dev *dev,
		       const int lock_fd[WAL_LOCK_FDS], long broken_from, bool file_existed,
		       struct pmwal **out)
{
	char err[512] = "";
	struct pmwal *w = calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (!w) {
		dev->ops->close(dev);
		for (int i = 0; i < WAL_LOCK_FDS; i++)
			if (lock_fd[i] >= 0)
				close(lock_fd[i]);
		return -ENOMEM;
	}
	w->dev = dev;
	w->st_fd = -1;
	memcpy(w->lock_fd, lock_fd, sizeof(w->lock_fd));
	w->lock_broken = broken_from != 0;
	w->broken_from = broken_from;
	pthread_mutex_init(&w->mu, NULL);
	pthread_mutex_init(&w->lock_mu, NULL);
	pthread_rwlockattr_t rwa;

	/* Release and close must not starve behind a stream of groups. */
	pthread_rwlockattr_init(&rwa);
	pthread_rwlockattr_setkind_np(&rwa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&w->io_lock, &rwa);
	pthread_rwlockattr_destroy(&rwa);
	pthread_mutex_init(&w->seal_mu, NULL);
	pthread_cond_init(&w->seal_cv, NULL);
	pthread_mutex_init(&w->err_mu, NULL);
	w->done_tail = &w->done_cbs;
	pthread_cond_init(&w->cv_done, NULL);
	pthread_cond_init(&w->cv_work, NULL);
	for (uint32_t i = 0; i < WAL_INFLIGHT_MAX + 1; i++) {
		pthread_cond_init(&w->stage[i].cv, NULL);
		wal_stage_reset(&w->stage[i]);
	}
	/* Several groups in flight on flash only: on mapped media a group is a
	 * microsecond of stores and one barrier, nothing to overlap. */
	w->inflight_max = 1;
	if (!dev->ops->map) {
		uint32_t want = inflight_wanted(opt);
		uint32_t lanes = dev->commit_lanes ? dev->commit_lanes : 1;

		w->inflight_max = want < lanes ? want : lanes;
		if (w->inflight_max > WAL_INFLIGHT_MAX) /* wal_open_dev: unchecked */
			w->inflight_max = WAL_INFLIGHT_MAX;
	}
	w->nstages = w->inflight_max + 1;
	w->flags = opt->flags;
	w->policy = opt->commit_policy;
	w->window_us = opt->group_window_us;
	w->group_bytes_max =
	    opt->group_bytes_max ? opt->group_bytes_max : WAL_GROUP_BYTES_DEFAULT;
	snprintf(w->target, sizeof(w->target), "%s", opt->target);

	if ((dev->caps & WAL_CAP_NOT_DURABLE) && !(opt->flags & PMWAL_OPEN_READONLY)) {
		snprintf(err, sizeof(err),
			 "%s: the medium offers no way to make writes durable",
			 w->target);
		rc = PMWAL_ENOTDURABLE;
		goto fail;
	}
	if (opt->flags & (PMWAL_OPEN_CREATE | PMWAL_OPEN_FORMAT)) {
		/* What the target holds is judged as the last writer left it,
		 * not as the device read it before the lock was ours (a fake
		 * PMR's copy): a log made meanwhile is taken, not formatted. */
		if (dev->ops->reload && (rc = dev->ops->reload(dev)) != 0) {
			snprintf(err, sizeof(err), "%s: reading the medium again: %s",
				 w->target, strerror(-rc));
			goto fail;
		}
		rc = create_or_take(w, opt, file_existed, err, sizeof(err));
		if (rc)
			goto fail;
	} else {
		/* As in CREATE's case: the superblock as the last writer left
		 * it, not as read before a waited-for lock was ours. */
		rc = 0;
		if (!(opt->flags & PMWAL_OPEN_READONLY) && dev->ops->reload &&
		    (rc = dev->ops->reload(dev)) != 0)
			snprintf(err, sizeof(err), "%s: reading the medium again: %s",
				 w->target, strerror(-rc));
		if (!rc)
			rc = read_sb(w, err, sizeof(err));
		long pid = 0;

		/* No superblock yet while another writer holds the log: it is
		 * being created now, not left behind by an interrupted create.
		 * The holder found may be this open's own lock. */
		if (rc == PMWAL_EFORMAT && strstr(err, "no superblock") &&
		    pmwal_writer_pid(opt->target, &pid) == 0 && pid != 0 &&
		    pid != (long)getpid())
			snprintf(err, sizeof(err),
				 "%s: not a pmwal log yet: %s%ld holds it for writing with no "
				 "superblock written, as while it creates it; open it once that "
				 "create returned (do not remove it or create it again)",
				 w->target, pid > 0 ? "pid " : "a process pmwal cannot name",
				 pid > 0 ? pid : 0L);
		if (rc)
			goto fail;
	}
	rc = recover(w, err, sizeof(err));
	if (rc)
		goto fail;
	if (!(opt->flags & PMWAL_OPEN_READONLY)) {
		rc = alloc_stages(w);
		if (rc) {
			snprintf(err, sizeof(err), "%s: no memory for the group buffers",
				 w->target);
			goto fail;
		}
	}
	/* A read-only handle writes nothing: no committer (its close, which
	 * stops one, is the read-only path). */
	if (opt->commit_policy == PMWAL_COMMIT_BUFFERED && !(opt->flags & PMWAL_OPEN_READONLY)) {
		rc = wal_start_committer(w);
		if (rc)
			goto fail;
	}
	*out = w;
	return 0;
fail:
	open_err(opt, err[0] ? err : pmwal_strerror(rc));
	free_handle(w);
	return rc;
}

int wal_open_dev(const struct pmwal_options *opt, struct wal_dev *dev, struct pmwal **out)
{
	_Static_assert(WAL_LOCK_FDS == 8, "one -1 for each lock descriptor");
	static const int none[WAL_LOCK_FDS] = {-1, -1, -1, -1, -1, -1, -1, -1};

	return open_locked(opt, dev, none, 0, false, out);
}

int pmwal_open(const struct pmwal_options *opt, struct pmwal **out)
{
	char err[512] = "";
	struct wal_dev *dev;
	int rc;

	if (!out) {
		open_err(opt, "pmwal_open: out is NULL");
		return -EINVAL;
	}
	*out = NULL;
	rc = check_options(opt, err, sizeof(err));
	if (rc) {
		open_err(opt, err);
		return rc;
	}
	struct wal_dev_params p = {
	    .target = opt->target,
	    .readonly = opt->flags & PMWAL_OPEN_READONLY,
	    .buffered_io = opt->flags & PMWAL_OPEN_BUFFERED_IO,
	    .no_uring = opt->flags & PMWAL_OPEN_NO_URING,
	    .fdatasync = opt->flags & PMWAL_OPEN_FDATASYNC,
	    .queue_depth = opt->queue_depth,
	    .commit_lanes = inflight_wanted(opt),
	};
	bool file_existed = false;

	if (opt->flags & (PMWAL_OPEN_CREATE | PMWAL_OPEN_FORMAT)) {
		struct pmwal_target t;
		struct stat st;

		(void)pmwal_target_parse(opt->target, &t); /* malformed: wal_dev_open says so */
		bool there = t.has_file && stat(t.path, &st) == 0;
		/* A device node (a block device, device DAX) or a PMR has a size of
		 * its own; a file, even one under /dev (/dev/shm), needs one where
		 * it is made, or is empty. */
		bool node = there && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode));
		bool file = there && S_ISREG(st.st_mode);
		bool to_make = t.has_file && !node && (!there || (file && st.st_size == 0));

		if (!opt->capacity_bytes && to_make) {
			open_err(
			    opt,
			    "options.capacity_bytes: required to create a log in a file");
			return PMWAL_EBADOPT;
		}
		/* EXCL: a file that is not there is made with O_EXCL; one that
		 * is, and any other medium, is refused by what it holds. */
		p.create_excl = (opt->flags & PMWAL_OPEN_EXCL) && t.has_file && !there;
		file_existed = (opt->flags & PMWAL_OPEN_EXCL) && file;
		if (file_existed && st.st_size == 0) {
			snprintf(err, sizeof(err),
				 "%s: already exists (an empty file)",
				 opt->target);
			open_err(opt, err);
			return -EEXIST;
		}
		/* CREATE does not grow a file that may hold a log (it may find
		 * one there); FORMAT and a new or empty file are made whole. */
		if ((opt->flags & PMWAL_OPEN_FORMAT) || !file || st.st_size == 0)
			p.create_bytes =
			    opt->capacity_bytes / WAL_BLOCK_BYTES * WAL_BLOCK_BYTES;
	}
	rc = wal_dev_open(&p, &dev, err, sizeof(err));
	if (rc && file_existed && (rc <= PMWAL_ECORRUPT || rc == -EINVAL)) {
		/* EXCL on a file that is there, and cannot even be opened as one:
		 * what it holds is no log (a fake PMR file too small, a file of
		 * another kind). */
		char why[sizeof(err)];

		snprintf(why, sizeof(why), "%s", err[0] ? err : pmwal_strerror(rc));
		snprintf(err, sizeof(err),
			 "%s; it already exists and holds data that is not a pmwal log",
			 why);
		rc = -EEXIST;
	}
	if (rc) {
		open_err(opt, err[0] ? err : pmwal_strerror(rc));
		return rc;
	}
	/* Before the first write (format, recovery's epoch): one writer only. */
	int lock_fd[WAL_LOCK_FDS] = {-1, -1, -1, -1, -1, -1, -1, -1};
	long broken_from = 0;

	if (!(opt->flags & PMWAL_OPEN_READONLY) && !PMWAL_BUG(NO_WRITER_LOCK)) {
		int dev_fd = dev->ops->file_fd ? dev->ops->file_fd(dev) : -1;

		rc = wal_lock_writer(opt->target, dev_fd, lock_fd, err, sizeof(err));
		/* A standby waits for the writer to let go; 10 ms rounds, so a
		 * takeover starts within 10 ms of the lock's release. */
		struct timespec t0, now;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (rc == -EBUSY && (opt->flags & PMWAL_OPEN_WAIT_LOCK)) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			long waited = (now.tv_sec - t0.tv_sec) * 1000L +
				      (now.tv_nsec - t0.tv_nsec) / 1000000L;

			if (opt->lock_wait_ms && waited >= (long)opt->lock_wait_ms) {
				size_t n = strlen(err);

				snprintf(err + n, sizeof(err) - n,
					 " (waited %ld ms, options.lock_wait_ms)", waited);
				break;
			}
			usleep(10000);
			rc = wal_lock_writer(opt->target, dev_fd, lock_fd, err, sizeof(err));
		}
		if (rc == -EBUSY && (opt->flags & PMWAL_OPEN_BREAK_LOCK)) {
			/* Fenced instead: recover() claims the log from the
			 * holder, which the status page must name. */
			if (pmwal_writer_pid(opt->target, &broken_from) || broken_from == 0)
				broken_from = -1;
			rc = 0;
		}
		if (rc) {
			dev->ops->close(dev);
			open_err(opt, err);
			return rc;
		}
	}
	return open_locked(opt, dev, lock_fd, broken_from, file_existed, out);
}

/*
 * A writer that broke the lock takes it once its old holder lets go (exits),
 * so that the next opener is refused again. Tried before a group's write, at
 * most every WAL_LOCK_RETAKE_MS; one thread at a time.
 */
#define WAL_LOCK_RETAKE_MS 10
void wal_retake_lock(struct pmwal *w)
{
	struct timespec now;
	char err[256];
	int fds[WAL_LOCK_FDS];

	if (!__atomic_load_n(&w->lock_broken, __ATOMIC_ACQUIRE) ||
	    pthread_mutex_trylock(&w->lock_mu))
		return;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	uint64_t ms = (uint64_t)now.tv_sec * 1000u + (uint64_t)now.tv_nsec / 1000000u;

	if (w->lock_broken && ms - w->lock_tried_ms >= WAL_LOCK_RETAKE_MS) {
		w->lock_tried_ms = ms;
		int dev_fd = w->dev->ops->file_fd ? w->dev->ops->file_fd(w->dev) : -1;

		if (wal_lock_writer(w->target, dev_fd, fds, err, sizeof(err)) == 0) {
			memcpy(w->lock_fd, fds, sizeof(fds));
			__atomic_store_n(&w->lock_broken, false, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&w->lock_mu);
}

int pmwal_close(struct pmwal *w)
{
	int rc = 0;

	if (!w)
		return 0;
	if (wal_in_callback(w)) {
		wal_set_err(w, "%s: pmwal_close called from a durability callback; close "
			   "after the callbacks return",
			w->target);
		return -EDEADLK;
	}
	if (!(w->flags & PMWAL_OPEN_READONLY)) {
		pthread_mutex_lock(&w->mu);
		if (!w->failed && w->next_lsn > w->durable_lsn + 1)
			rc = wal_wait_durable(w, w->next_lsn - 1);
		w->closing = true;
		while (wal_busy(w) || w->cb_running)
			pthread_cond_wait(&w->cv_done, &w->mu);
		/* io_lock before mu, as release takes them. */
		pthread_mutex_unlock(&w->mu);
		pthread_rwlock_wrlock(&w->io_lock);
		pthread_mutex_lock(&w->mu);
		if (!w->failed && !rc && !w->inflight) {
			/* A clean close: the superblock attests the whole log. */
			struct wal_sb sb = w->sb;

			sb.end_seq = w->next_seq;
			sb.end_lsn = w->durable_lsn + 1;
			sb.flags |= WAL_SB_CLOSED;
			rc = wal_status_begin_write(w);
			if (!rc) {
				rc = write_sb(w, &sb);
				wal_status_end_write(w);
			}
			if (rc)
				wal_set_err(w, "%s: writing the superblock at close: %s",
					w->target, pmwal_strerror(rc));
		}
		/* The page goes with its writer (a follower goes by the superblock,
		 * and finds the next writer's page by its path), unless another
		 * writer took the log over: the page is its. */
		if (!wal_status_fenced(w)) {
			wal_status_closed(w);
			wal_status_detach(w, true);
		}
		if (!rc && w->failed)
			rc = wal_failed_rc(w); /* staged records were never made durable */
		pthread_cond_broadcast(&w->cv_work);
		wal_wake_all(w);
		pthread_mutex_unlock(&w->mu);
		pthread_rwlock_unlock(&w->io_lock);
		for (uint32_t i = 0; i < w->committers; i++)
			pthread_join(w->committer[i], NULL);
		/* Callbacks of records that never became durable hear so once. */
		pthread_mutex_lock(&w->mu);
		for (uint32_t i = 1; i <= w->nstages; i++) /* oldest first */
			wal_queue_callbacks(w, &w->stage[(w->active + i) % w->nstages],
					w->failed ? wal_failed_rc(w) : PMWAL_ECLOSED);
		wal_run_callbacks(w);
		pthread_mutex_unlock(&w->mu);
	}
	free_handle(w);
	return rc;
}

/* ---- verify, stat, errors ---------------------------------------------- */

int pmwal_verify(const struct pmwal_options *opt, struct pmwal_report *rep)
{
	struct pmwal_options o;
	struct pmwal *w;
	int rc;

	if (!opt || !rep)
		return -EINVAL;
	o = *opt;
	o.flags =
	    (o.flags | PMWAL_OPEN_READONLY | PMWAL_OPEN_SALVAGE) &
	    ~(PMWAL_OPEN_CREATE | PMWAL_OPEN_EXCL | PMWAL_OPEN_FORMAT | PMWAL_OPEN_FORCE);
	rc = pmwal_open(&o, &w);
	if (rc)
		return rc;
	*rep = w->report;
	pmwal_close(w);
	return 0;
}

int pmwal_stat(struct pmwal *w, struct pmwal_info *info)
{
	if (!w || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&w->mu);
	snprintf(info->target, sizeof(info->target), "%s", w->target);
	snprintf(info->medium, sizeof(info->medium), "%s", w->dev->medium);
	snprintf(info->io_path, sizeof(info->io_path), "%s", w->dev->io_path);
	snprintf(info->durability, sizeof(info->durability), "%s", w->dev->durability);
	snprintf(info->granularity, sizeof(info->granularity), "%s", w->dev->granularity);
	info->emulated = !!(w->dev->caps & WAL_CAP_EMULATED);
	info->direct_io = !!(w->dev->caps & WAL_CAP_DIRECT);
	info->block_bytes = WAL_BLOCK_BYTES;
	info->sector_bytes = w->dev->sector_bytes;
	info->atomic_write_bytes = w->dev->atomic_write_bytes;
	info->format_version = w->sb.format_version;
	info->epoch = w->sb.epoch;
	info->record_bytes_max = w->sb.record_bytes_max;
	info->log_id = w->sb.log_id;
	info->capacity_bytes = WAL_RING_OFFSET + w->sb.capacity_blocks * WAL_BLOCK_BYTES;
	info->capacity_blocks = w->sb.capacity_blocks;
	info->head_lsn = w->head_lsn;
	info->next_lsn = w->next_lsn;
	info->durable_lsn = w->durable_lsn;
	info->used_blocks = w->next_seq - w->head_seq;
	info->groups_written = w->groups_written;
	info->records_written = w->records_written;
	pthread_mutex_unlock(&w->mu);
	return 0;
}

static void stats_from(struct pmwal_stats *st, const struct wal_stats *s)
{
	_Static_assert(WAL_STATS_BUCKETS == PMWAL_STATS_BUCKETS, "one histogram");
	st->appends = s->appends;
	st->append_bytes = s->append_bytes;
	st->groups = s->groups;
	st->group_blocks = s->group_blocks;
	st->group_records = s->records;
	st->errors = s->errors;
	st->latency_samples = s->latency_samples;
	st->latency_sum_ns = s->latency_sum_ns;
	memcpy(st->latency_ns, s->latency_ns, sizeof(st->latency_ns));
}

int pmwal_stats(struct pmwal *w, struct pmwal_stats *stats, size_t size)
{
	struct pmwal_stats st;

	if (!w || !stats || size == 0)
		return -EINVAL;
	memset(&st, 0, sizeof(st));
	pthread_mutex_lock(&w->mu);
	st.capacity_blocks = w->sb.capacity_blocks;
	if (!(w->flags & PMWAL_OPEN_READONLY)) {
		st.writer_pid = (uint32_t)getpid();
		st.epoch = w->sb.epoch;
		st.head_lsn = w->head_lsn;
		st.durable_lsn = w->durable_lsn;
		st.used_blocks = w->next_seq - w->head_seq;
		stats_from(&st, &w->stats);
	}
	pthread_mutex_unlock(&w->mu);
	if (w->flags & PMWAL_OPEN_READONLY) {
		struct wal_status_snap snap;
		struct wal_stats s;
		int rc = wal_status_read(w, &snap);

		if (rc == -EAGAIN)
			return rc;
		if (!rc) {
			rc = wal_status_read_stats(w, &s);
			if (rc == -EAGAIN)
				return rc;
		}
		if (!rc) {
			st.writer_pid = snap.open && snap.live ? snap.pid : 0;
			st.epoch = snap.epoch;
			st.head_lsn = snap.head_lsn;
			st.durable_lsn = snap.durable_lsn;
			st.used_blocks = snap.durable_seq >= snap.head_seq
					     ? snap.durable_seq - snap.head_seq
					     : 0;
			stats_from(&st, &s);
		} else {
			/* No page: the log as this handle read it. */
			pthread_mutex_lock(&w->mu);
			st.epoch = w->sb.epoch;
			st.head_lsn = w->head_lsn;
			st.durable_lsn = w->durable_lsn;
			st.used_blocks = w->next_seq - w->head_seq;
			pthread_mutex_unlock(&w->mu);
		}
	}
	memcpy(stats, &st, size < sizeof(st) ? size : sizeof(st));
	return 0;
}

const struct pmwal_report *pmwal_recovery_report(struct pmwal *w)
{
	static const struct pmwal_report none;

	return w ? &w->report : &none;
}

const char *pmwal_errmsg(struct pmwal *w)
{
	/* Errors are set by any thread (an iterator, release, the committer's
	 * group write); each reader gets its own copy, whole, that stays put
	 * until its next call. */
	static _Thread_local char copy[sizeof(w->errmsg)];

	if (!w)
		return "";
	pthread_mutex_lock(&w->err_mu);
	memcpy(copy, w->errmsg, sizeof(copy));
	pthread_mutex_unlock(&w->err_mu);
	return copy;
}
