// SPDX-License-Identifier: MIT
/*
 * engine.c - the log engine: open and create, the append path with group
 * commit, durability waits, release, iterators and close.
 *
 * The data path of one durable append reads as a straight line:
 *   pmwal_append -> stage_add (reserve LSN and blocks under the lock, copy the
 *   record into the open group's blocks) -> lead (one appender becomes leader,
 *   swaps the staging buffers, seals the group's headers and checksums outside
 *   the lock) -> dev->ops->commit (device write + durability) -> durable_lsn
 *   advances -> waiting appenders and callbacks are released.
 *
 * Two staging buffers: appenders fill one while the leader writes the other,
 * so at most one group is in flight (the format's acknowledgement rule needs
 * that) and there is no added delay at low load: a lone appender leads its own
 * group at once. Bounds: a group holds at most group_blocks_max blocks;
 * appenders that do not fit wait for the buffer swap.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "seeded.h"
#include "xxh.h"

#define WAL_GROUP_BYTES_DEFAULT (1u << 20)
#define WAL_QUEUE_DEPTH_MAX	4096u
#define WAL_WINDOW_US_MAX	1000000u
#define WAL_LEAD_CHAIN_MAX	4   /* groups one leader writes back to back */
#define WAL_ITER_CHUNK_BLOCKS	64u /* 256 KiB read ahead per iterator */

/* One announced record; a stage's list is in LSN order. */
struct async_cb {
	uint64_t lsn;
	pmwal_durable_fn fn;
	void *arg;
	int status;	      /* set when its group is done */
	struct async_cb *next;
};

/* One group being filled (or written). */
struct stage {
	uint8_t *buf;
	uint32_t cap_blocks;
	uint32_t nblocks; /* blocks started (the last one may be partial) */
	uint32_t fill;	  /* payload bytes used in the last block */
	uint64_t first_lsn;
	uint64_t last_lsn;
	uint64_t nrecords;
	struct async_cb *cbs, **cbs_tail; /* callbacks of this group's records */
	pthread_cond_t cv; /* appenders waiting for this stage's group */
};

struct pmwal {
	struct wal_dev *dev;
	int lock_fd[WAL_LOCK_FDS]; /* the writer lock (lock.c), -1 if none */
	struct wal_sb sb; /* as last written; head fields under mu */
	bool sb_same;	  /* both copies on the medium are sb (after a write_sb) */
	struct pmwal_report report;
	uint32_t flags;
	uint32_t policy;
	uint32_t window_us;
	uint32_t group_bytes_max;

	pthread_mutex_t mu;
	pthread_cond_t cv_done; /* a group finished: room, close, release */
	pthread_cond_t cv_work; /* committer: staged records wait */
	pthread_mutex_t io_mu;	/* one device writer at a time (leader, release) */
	/* Callbacks of finished groups, run in LSN order by one thread at a time
	 * (the runner), with no lock and no leadership held: see run_callbacks. */
	struct async_cb *done_cbs, **done_tail;
	bool cb_running;
	struct stage stage[2];
	int active;		/* the stage accepting records */
	uint8_t *dscratch;	/* mapped media: block images for direct groups */
	struct wal_io *dio;	/* and their pieces, stored all at once */
	uint32_t direct_blocks; /* blocks of the direct group in flight */
	bool leading;		/* a group is being written */
	bool closing;
	bool committer_started;
	pthread_t committer;
	uint64_t next_lsn;
	uint64_t durable_lsn;
	uint64_t next_seq;	/* seq of the next group's first block */
	uint64_t prev_checksum; /* checksum of block next_seq-1 */
	uint64_t head_seq, head_lsn;
	int failed;	     /* sticky: first write or flush error */
	uint64_t groups_written, records_written;
	uint8_t bug_word[8]; /* seeded bug TORN_COMMIT_WORD only */
	struct wal_io bug_io;
	char target[256];
	char errmsg[512];
};

struct pmwal_iter {
	struct pmwal *w;
	uint64_t seq;	   /* next block to read */
	uint64_t lsn_next; /* LSN of the next record to start */
	uint64_t from_lsn;
	const uint8_t *block; /* the current block, inside chunk */
	uint8_t *chunk;	      /* blocks read ahead, aligned for O_DIRECT */
	uint64_t chunk_seq;   /* seq of chunk's first block */
	uint32_t chunk_n;     /* blocks in chunk (0: empty) */
	uint8_t *rec;	      /* reassembly buffer */
	size_t rec_cap;
	size_t pos;   /* payload offset of the next record header in block */
	uint32_t end; /* payload_bytes of block */
	bool have_block;
	uint64_t last_lsn; /* the last record returned (0: none yet) */
};

static void set_err(struct pmwal *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int wal_lead(struct pmwal *w);

static void set_err(struct pmwal *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
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
			       PMWAL_OPEN_NO_URING | PMWAL_OPEN_FDATASYNC;

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
	if ((opt->flags & PMWAL_OPEN_CREATE) && (opt->flags & PMWAL_OPEN_READONLY)) {
		snprintf(err, errlen, "options.flags: CREATE and READONLY together");
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
	if ((opt->flags & PMWAL_OPEN_CREATE) && opt->capacity_bytes &&
	    opt->capacity_bytes <
		WAL_RING_OFFSET + WAL_MIN_RING_BLOCKS * WAL_BLOCK_BYTES) {
		snprintf(err, errlen,
			 "options.capacity_bytes: %llu is below the minimum of %u bytes",
			 (unsigned long long)opt->capacity_bytes,
			 WAL_RING_OFFSET + WAL_MIN_RING_BLOCKS * WAL_BLOCK_BYTES);
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
 * Writes @sb as the next superblock update (caller holds io_mu, or is the
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

		rc = w->dev->ops->commit(w->dev, &io, 1);
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

/* ---- staging ------------------------------------------------------------ */

static uint8_t *stage_block(struct stage *s, uint32_t i)
{
	return s->buf + (size_t)i * WAL_BLOCK_BYTES;
}

static void stage_reset(struct stage *s)
{
	s->nblocks = 0;
	s->fill = 0;
	s->first_lsn = s->last_lsn = 0;
	s->nrecords = 0;
	s->cbs = NULL;
	s->cbs_tail = &s->cbs;
}

/* Starts a fresh block. Its padding is never written out past the device's
 * sector (see wal_lead) and is covered by no checksum. */
static void stage_new_block(struct stage *s, uint64_t first_lsn)
{
	uint8_t *b = stage_block(s, s->nblocks);

	memset(b, 0, WAL_HDR_BYTES);
	wal_put16(b + 14, WAL_NO_RECORD);
	wal_put64(b + 40, first_lsn);
	s->nblocks++;
	s->fill = 0;
}

/* Blocks the stage would hold after adding records of @bytes payload. */
static uint32_t stage_blocks_after(const struct stage *s, uint64_t bytes)
{
	uint32_t n = s->nblocks;
	uint64_t fill = s->fill;

	if (n == 0) {
		n = 1;
		fill = 0;
	}
	if (WAL_PAYLOAD_BYTES - fill < WAL_REC_HDR_BYTES) {
		n++;
		fill = 0;
	}
	uint64_t room = WAL_PAYLOAD_BYTES - fill;

	if (bytes <= room)
		return n;
	return n + wal_blocks_for_bytes(bytes - room);
}

/* Copies one record into the stage, spanning blocks; the record header never
 * straddles two blocks. */
static void stage_copy(struct stage *s, uint64_t lsn, const void *data, size_t len)
{
	const uint8_t *src = data;

	if (s->nblocks == 0 || WAL_PAYLOAD_BYTES - s->fill < WAL_REC_HDR_BYTES)
		stage_new_block(s, lsn);
	uint8_t *b = stage_block(s, s->nblocks - 1);

	if (wal_get16(b + 14) == WAL_NO_RECORD) {
		wal_put16(b + 14, (uint16_t)s->fill);
		wal_put64(b + 40, lsn);
	}
	wal_put32(b + WAL_HDR_BYTES + s->fill, (uint32_t)len);
	s->fill += WAL_REC_HDR_BYTES;
	while (len > 0) {
		if (s->fill == WAL_PAYLOAD_BYTES) {
			wal_put16(b + 12, WAL_PAYLOAD_BYTES);
			stage_new_block(s, lsn);
			b = stage_block(s, s->nblocks - 1);
		}
		size_t take =
		    WAL_PAYLOAD_BYTES - s->fill < len ? WAL_PAYLOAD_BYTES - s->fill : len;

		memcpy(b + WAL_HDR_BYTES + s->fill, src, take);
		s->fill += (uint32_t)take;
		src += take;
		len -= take;
	}
	wal_put16(b + 12, (uint16_t)s->fill);
	if (!s->nrecords)
		s->first_lsn = lsn;
	s->last_lsn = lsn;
	s->nrecords++;
}

static uint32_t fill_of(const uint8_t *block)
{
	return wal_get16(block + 12);
}

static uint64_t staged_blocks(const struct pmwal *w)
{
	return (uint64_t)w->stage[0].nblocks + w->stage[1].nblocks + w->direct_blocks;
}

/*
 * Reserves LSNs and copies @count records into the active stage, waiting for
 * room (caller holds mu). All or nothing.
 */
static int stage_add(struct pmwal *w, const struct iovec *recs, int count,
		     uint64_t *first)
{
	uint64_t bytes = 0;

	for (int i = 0; i < count; i++) {
		if (recs[i].iov_len == 0)
			return -EINVAL;
		if (recs[i].iov_len > w->sb.record_bytes_max) {
			set_err(w, "%s: record of %zu bytes; this log's maximum is %u",
				w->target, recs[i].iov_len, w->sb.record_bytes_max);
			return PMWAL_ETOOBIG;
		}
		bytes += WAL_REC_HDR_BYTES + recs[i].iov_len;
	}
	uint32_t group_limit = w->group_bytes_max / WAL_PAYLOAD_BYTES;

	for (;;) {
		struct stage *s = &w->stage[w->active];

		if (w->failed)
			return PMWAL_EFAILED;
		if (w->closing)
			return PMWAL_ECLOSED;
		uint32_t after = stage_blocks_after(s, bytes);

		if (after > s->cap_blocks && s->nblocks == 0) {
			set_err(
			    w,
			    "%s: batch of %llu bytes is larger than one group can hold",
			    w->target, (unsigned long long)bytes);
			return PMWAL_ETOOBIG;
		}
		/* Staged blocks become live blocks one for one, so this is exact. */
		uint64_t live =
		    w->next_seq - w->head_seq + staged_blocks(w) - s->nblocks + after;

		if (live > w->sb.capacity_blocks) {
			set_err(
			    w,
			    "%s: log full (%llu of %llu blocks live or staged); release "
			    "records (pmwal_release) after a checkpoint",
			    w->target, (unsigned long long)(live - after + s->nblocks),
			    (unsigned long long)w->sb.capacity_blocks);
			return PMWAL_EFULL;
		}
		if (after <= s->cap_blocks && (s->nblocks == 0 || after <= group_limit))
			break;
		/* The open group is full: lead it out, or wait for the one in flight. */
		if (!w->leading)
			wal_lead(w);
		else
			pthread_cond_wait(&w->cv_done, &w->mu);
	}
	struct stage *s = &w->stage[w->active];

	*first = w->next_lsn;
	for (int i = 0; i < count; i++)
		stage_copy(s, w->next_lsn++, recs[i].iov_base, recs[i].iov_len);
	return 0;
}

/* ---- group commit -------------------------------------------------------- */

/* Fills in what only the leader knows: position, chain and group shape. */
static void seal_group(struct pmwal *w, struct stage *s, uint64_t durable_hint)
{
	uint64_t prev = w->prev_checksum;

	for (uint32_t i = 0; i < s->nblocks; i++) {
		uint8_t *b = stage_block(s, i);
		uint64_t seq = w->next_seq + i;
		struct wal_block_hdr h = {
		    .payload_bytes = wal_get16(b + 12),
		    .first_rec = wal_get16(b + 14),
		    .log_id = w->sb.log_id,
		    .seq = seq,
		    .prev_checksum = prev,
		    .first_lsn = wal_get64(b + 40),
		    .durable_lsn = durable_hint,
		    .epoch = w->sb.epoch,
		    .group_index = i,
		    .group_blocks = s->nblocks,
		};

		wal_block_encode_hdr(&h, b);
		prev = wal_block_seal(b, seq % w->sb.capacity_blocks);
	}
}

/*
 * Publishes a new durable end (mu held) with one 8-byte atomic store, after
 * the group's barrier or flush returned: pmwal_durable_lsn() reads it without
 * the lock, and every record up to it is durable once it is seen.
 */
static void publish_durable(struct pmwal *w, uint64_t lsn)
{
	__atomic_store_n(&w->durable_lsn, lsn, __ATOMIC_RELEASE);
}

/* Wakes every waiter, whatever it waits for: failure, close. */
static void wake_all(struct pmwal *w)
{
	pthread_cond_broadcast(&w->stage[0].cv);
	pthread_cond_broadcast(&w->stage[1].cv);
	pthread_cond_broadcast(&w->cv_done);
}

/*
 * Fails the handle stop with @rc (mu held): nothing more is acknowledged.
 * The one way to set w->failed, because every sleeper must hear of it: a
 * waiter woken to lead the next group that finds the handle failed returns
 * without passing the wake on, so the others would sleep forever (a hang:
 * crashtest --medium nvme-fua --mode random --seed 381000, a release whose
 * superblock write failed between a group's end and its successor's lead).
 */
static void fail_stop(struct pmwal *w, int rc)
{
	if (!w->failed)
		w->failed = rc;
	wake_all(w);
}

/*
 * Accounts for the group of @n blocks from @seq0 holding LSNs @first..@last
 * (mu held): durable with @last_sum as its last block's checksum, or failed
 * with @rc, which is sticky.
 */
static void group_done(struct pmwal *w, int rc, uint64_t seq0, uint64_t n, uint64_t first,
		       uint64_t last, uint64_t last_sum)
{
	if (rc) {
		fail_stop(w, rc);
		set_err(
		    w,
		    "%s: group write of blocks %llu..%llu (LSN %llu..%llu, offset %llu) "
		    "failed: %s; nothing more is acknowledged, reopen the log",
		    w->target, (unsigned long long)seq0,
		    (unsigned long long)(seq0 + n - 1), (unsigned long long)first,
		    (unsigned long long)last,
		    (unsigned long long)wal_slot_offset(seq0 % w->sb.capacity_blocks),
		    pmwal_strerror(rc));
		return;
	}
	w->next_seq += n;
	w->prev_checksum = last_sum;
	publish_durable(w, last);
	w->groups_written++;
	w->records_written += last - first + 1;
}

/* The thread running callbacks now, so that it can be told from others. */
static _Thread_local const struct pmwal *in_callback;

/* Moves stage @s's callbacks, with @status, to the queue of done ones (mu
 * held). Groups finish in order, so the queue stays in LSN order. */
static void queue_callbacks(struct pmwal *w, struct stage *s, int status)
{
	if (!s->cbs)
		return;
	for (struct async_cb *c = s->cbs; c; c = c->next)
		c->status = status;
	*w->done_tail = s->cbs;
	w->done_tail = s->cbs_tail;
	s->cbs = NULL;
	s->cbs_tail = &s->cbs;
}

/*
 * Runs queued callbacks (mu held; dropped while they run). One thread at a
 * time is the runner and runs them in LSN order; a callback that appends,
 * waits or syncs leads its own groups, whose callbacks join the queue and run
 * after it returns, on this thread. No leadership is held meanwhile, so
 * nothing a callback calls waits on itself (pmwal_close excepted: refused).
 */
static void run_callbacks(struct pmwal *w)
{
	if (w->cb_running || !w->done_cbs)
		return;
	w->cb_running = true;
	while (w->done_cbs) {
		struct async_cb *list = w->done_cbs;

		w->done_cbs = NULL;
		w->done_tail = &w->done_cbs;
		pthread_mutex_unlock(&w->mu);
		const struct pmwal *outer = in_callback;

		in_callback = w;
		while (list) {
			struct async_cb *c = list;

			list = c->next;
			c->fn(c->arg, c->lsn, c->status);
			free(c);
		}
		in_callback = outer;
		pthread_mutex_lock(&w->mu);
	}
	w->cb_running = false;
	pthread_cond_broadcast(&w->cv_done);
}

/*
 * Writes the active stage as one group and makes it durable. Called with mu
 * held and !leading; returns with mu held. Other appenders keep staging into
 * the other buffer meanwhile.
 */
static void wake_stage(void *arg)
{
	pthread_cond_broadcast(&((struct stage *)arg)->cv);
}

static int wal_lead(struct pmwal *w)
{
	int chain = 0;
	struct stage *done = NULL; /* a chained group's appenders, still asleep */

again:
	w->leading = true;
	if (done && w->window_us) {
		wake_stage(done);
		done = NULL;
	}
	if (w->window_us && w->stage[w->active].nblocks > 0) {
		/* Gather: wait for the window, or until the group is full. */
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)w->window_us * 1000;
		until.tv_sec += until.tv_nsec / 1000000000;
		until.tv_nsec %= 1000000000;
		while (!w->closing && !w->failed &&
		       (uint64_t)w->stage[w->active].nblocks * WAL_PAYLOAD_BYTES <
			   w->group_bytes_max)
			if (pthread_cond_timedwait(&w->cv_work, &w->mu, &until) ==
			    ETIMEDOUT)
				break;
	}
	struct stage *s = &w->stage[w->active];

	if (s->nblocks == 0 || w->failed) {
		w->leading = false;
		if (done)
			wake_stage(done);
		wake_all(w);
		return w->failed;
	}
	w->active ^= 1;
	uint64_t seq0 = w->next_seq;
	uint64_t hint = w->durable_lsn;

	if (PMWAL_BUG(TAIL_BEFORE_DURABLE))
		hint = w->next_lsn - 1; /* claims groups not yet written durable */
	if (PMWAL_BUG(ACK_BEFORE_FLUSH)) {
		publish_durable(w, s->last_lsn); /* acked before the write */
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&w->mu);

	seal_group(w, s, hint);
	uint64_t n = w->sb.capacity_blocks, slot = seq0 % n;
	uint64_t first_part = n - slot < s->nblocks ? n - slot : s->nblocks;
	struct wal_io ios[2] = {
	    {s->buf, first_part * WAL_BLOCK_BYTES, wal_slot_offset(slot)},
	    {stage_block(s, (uint32_t)first_part),
	     (s->nblocks - first_part) * WAL_BLOCK_BYTES, wal_slot_offset(0)},
	};
	int nio = first_part < s->nblocks ? 2 : 1;
	/* The last block goes out only up to the sector holding its last used
	 * byte: on persistent memory (64-byte sectors) a 4 KiB record then costs
	 * 4.1 KiB of stores, not 8 KiB. */
	uint32_t used = WAL_HDR_BYTES + fill_of(stage_block(s, s->nblocks - 1));
	uint32_t sector = w->dev->sector_bytes ? w->dev->sector_bytes : WAL_BLOCK_BYTES;

	ios[nio - 1].len -= WAL_BLOCK_BYTES - (used + sector - 1) / sector * sector;
	pthread_mutex_lock(&w->io_mu);
	if (done) {
		/* Wake the last group's appenders once this group's writes are
		 * submitted: woken earlier, they would run ahead of the leader. */
		w->dev->submitted = wake_stage;
		w->dev->submitted_arg = done;
	}
	int rc = w->dev->ops->commit(w->dev, ios, nio);

	if (PMWAL_BUG(IGNORE_FSYNC_ERROR))
		rc = 0;
	if (done && w->dev->submitted) { /* the device did not call it */
		w->dev->submitted = NULL;
		wake_stage(done);
	}
	done = NULL;
	pthread_mutex_unlock(&w->io_mu);

	pthread_mutex_lock(&w->mu);
	group_done(w, rc, seq0, s->nblocks, s->first_lsn, s->last_lsn,
		   wal_get64(stage_block(s, s->nblocks - 1)));
	bool announce = s->cbs != NULL;

	queue_callbacks(w, s, rc ? PMWAL_EFAILED : 0);
	stage_reset(s);
	if (PMWAL_BUG(CALLBACK_LEADING))
		run_callbacks(w); /* the old way: a callback that waits waits on itself */
	w->leading = false;
	pthread_cond_broadcast(&w->cv_done);
	if (!announce && !rc && !w->failed && w->stage[w->active].nblocks > 0 &&
	    w->policy == PMWAL_COMMIT_DURABLE && ++chain < WAL_LEAD_CHAIN_MAX) {
		/* The next group is waiting. Writing it at once keeps the device
		 * busy; a handoff would first have to wake a thread on a busy
		 * machine. Bounded, so one caller is not held for long. */
		done = s;
		goto again;
	}
	/* Wake only the appenders of this group (and room or close waiters);
	 * those of the next group sleep on until it is written. */
	pthread_cond_broadcast(&s->cv);
	if (w->failed) {
		wake_all(w);
	} else if (!rc && w->stage[w->active].nblocks > 0) {
		/* The next group is staged: one of its waiters leads, or the
		 * committer does (buffered and async records: nobody may wait
		 * for them, and the committer slept while this group was led
		 * by another thread; it was a hang: crashtest, nvme random
		 * seed 1, round 61). */
		pthread_cond_signal(&w->stage[w->active].cv);
		pthread_cond_signal(&w->cv_work);
	}
	/* Leadership is given up: the callbacks may append, wait and sync. */
	run_callbacks(w);
	return rc;
}

/* Waits until @lsn is durable, leading groups as needed (mu held). */
static int wait_durable(struct pmwal *w, uint64_t lsn)
{
	while (w->durable_lsn < lsn) {
		if (w->failed)
			return PMWAL_EFAILED;
		if (!w->leading) {
			if (!w->stage[w->active].nblocks) {
				/* Neither durable, in flight nor staged: a broken
				 * invariant, answered, never spun on. */
				set_err(w, "%s: LSN %llu is neither durable nor staged",
					w->target, (unsigned long long)lsn);
				return PMWAL_EFAILED;
			}
			wal_lead(w);
			continue;
		}
		/* In flight, or staged in the open group behind it. */
		struct stage *open = &w->stage[w->active];
		bool in_open = open->nrecords && lsn >= open->first_lsn;

		pthread_cond_wait(&w->stage[w->active ^ !in_open].cv, &w->mu);
	}
	return 0;
}

/* The background committer: writes staged records nobody waits for. */
static void *committer_main(void *arg)
{
	struct pmwal *w = arg;

	pthread_mutex_lock(&w->mu);
	while (!w->closing) {
		if (w->stage[w->active].nblocks > 0 && !w->leading && !w->failed) {
			wal_lead(w);
			continue;
		}
		pthread_cond_wait(&w->cv_work, &w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static int start_committer(struct pmwal *w)
{
	if (w->committer_started)
		return 0;
	int rc = pthread_create(&w->committer, NULL, committer_main, w);

	if (rc)
		return -rc;
	w->committer_started = true;
	return 0;
}

/* ---- direct groups on mapped media --------------------------------------- */

/*
 * On a mapped medium (pmem, PMR) a group that holds only the calling
 * appender's records skips the staging buffer. Payload runs of at least
 * WAL_DIRECT_RUN bytes are stored from the caller's buffer straight into the
 * mapping with non-temporal stores and no drain; block headers and short
 * pieces go through one scratch block image. Each block's checksum is
 * computed over the same pieces in order (wal_xxh3v), and one barrier makes
 * the whole group durable. The blocks are byte for byte those the staging
 * path writes: the layout rules are stage_copy's.
 */
#define WAL_DIRECT_RUN	  256u
#define WAL_DIRECT_SEGS	  48
#define WAL_DIRECT_BLOCKS 16u /* larger groups take the staging path */

struct dseg {
	const uint8_t *src;
	uint32_t off; /* from the start of the block */
	uint32_t len;
	bool scratch; /* src is in the scratch image, at off */
};

struct dblock {
	uint8_t *img;  /* scratch image: header and short pieces */
	uint32_t fill; /* payload bytes laid out */
	int nseg;
	struct dseg seg[WAL_DIRECT_SEGS]; /* payload, in order */
};

/* Blocks that @count records take as one group (stage_copy's rules), or 0 if
 * one of them is not a valid record for this log. */
static uint64_t layout_blocks(const struct pmwal *w, const struct iovec *recs, int count)
{
	uint64_t n = 0, fill = WAL_PAYLOAD_BYTES;

	for (int i = 0; i < count; i++) {
		uint64_t len = recs[i].iov_len;

		if (len == 0 || len > w->sb.record_bytes_max)
			return 0;
		if (WAL_PAYLOAD_BYTES - fill < WAL_REC_HDR_BYTES) {
			n++;
			fill = 0;
		}
		fill += WAL_REC_HDR_BYTES;
		while (len > 0) {
			if (fill == WAL_PAYLOAD_BYTES) {
				n++;
				fill = 0;
			}
			uint64_t take = WAL_PAYLOAD_BYTES - fill < len
					    ? WAL_PAYLOAD_BYTES - fill
					    : len;

			fill += take;
			len -= take;
		}
	}
	return n;
}

static void db_begin(struct dblock *d, uint64_t lsn)
{
	memset(d->img, 0, WAL_HDR_BYTES);
	wal_put16(d->img + 14, WAL_NO_RECORD);
	wal_put64(d->img + 40, lsn);
	d->fill = 0;
	d->nseg = 0;
}

/* Copies @len bytes into the image at @off, as a scratch piece. */
static void db_scratch(struct dblock *d, const void *src, uint32_t off, uint32_t len)
{
	struct dseg *last = d->nseg ? &d->seg[d->nseg - 1] : NULL;

	if (len == 0)
		return;
	memcpy(d->img + off, src, len);
	if (last && last->scratch) {
		last->len += len; /* scratch pieces are always contiguous */
		return;
	}
	d->seg[d->nseg++] = (struct dseg){d->img + off, off, len, true};
}

/*
 * Lays @len payload bytes from @src at the block's fill point. Only whole
 * cache lines go straight from @src: a partial line stored on its own would
 * need a flush of its own, and stores into the line next to it another.
 */
static void db_put(struct dblock *d, const void *src, uint32_t len)
{
	const uint8_t *p = src;
	uint32_t off = WAL_HDR_BYTES + d->fill;
	uint32_t a = (off + 63) & ~63u, b = (off + len) & ~63u;

	d->fill += len;
	/* A direct piece leaves room for one scratch piece after it. */
	if (b < a + WAL_DIRECT_RUN || d->nseg > WAL_DIRECT_SEGS - 3) {
		db_scratch(d, p, off, len);
		return;
	}
	db_scratch(d, p, off, a - off);
	d->seg[d->nseg++] = (struct dseg){p + (a - off), a, b - a, false};
	db_scratch(d, p + (b - off), b, off + len - b);
}

/* Seals the block laid out in @d as block @idx of @n at @seq, and appends
 * its pieces to @io (*nio of them so far). */
static void db_end(struct pmwal *w, struct dblock *d, uint64_t seq, uint32_t idx,
		   uint32_t n, uint64_t hint, uint64_t *prev, struct wal_io *io, int *nio)
{
	uint64_t slot = seq % w->sb.capacity_blocks, base = wal_slot_offset(slot);
	struct wal_block_hdr h = {
	    .payload_bytes = (uint16_t)d->fill,
	    .first_rec = wal_get16(d->img + 14),
	    .log_id = w->sb.log_id,
	    .seq = seq,
	    .prev_checksum = *prev,
	    .first_lsn = wal_get64(d->img + 40),
	    .durable_lsn = hint,
	    .epoch = w->sb.epoch,
	    .group_index = idx,
	    .group_blocks = n,
	};
	struct iovec hv[WAL_DIRECT_SEGS + 1];
	uint32_t head = WAL_HDR_BYTES;
	int first = 0, nh = 0;

	wal_block_encode_hdr(&h, d->img);
	if (d->nseg && d->seg[0].scratch) { /* follows the header in the image */
		head += d->seg[0].len;
		first = 1;
	}
	hv[nh++] = (struct iovec){d->img + WAL_SUM_FROM, head - WAL_SUM_FROM};
	for (int i = first; i < d->nseg; i++) {
		const struct dseg *g = &d->seg[i];

		hv[nh++] = (struct iovec){(void *)g->src, g->len};
		if (!g->scratch) {
			io[(*nio)++] = (struct wal_io){g->src, g->len, base + g->off};
			continue;
		}
		/* Whole lines of the image: their other bytes are the block's. */
		uint32_t lo = g->off & ~63u, hi = (g->off + g->len + 63) & ~63u;

		io[(*nio)++] = (struct wal_io){d->img + lo, hi - lo, base + lo};
	}
	*prev = wal_xxh3v(hv, nh, slot);
	wal_put64(d->img, *prev);
	io[(*nio)++] = (struct wal_io){d->img, (head + 63) & ~63u, base};
}

/*
 * Stores @count records from LSN @lsn as one group of @n blocks at @seq0. All
 * the cached work (layout, checksums) comes first and the non-temporal stores
 * after it, back to back: a cached store issued behind non-temporal ones
 * waits for them.
 */
static int direct_store(struct pmwal *w, const struct iovec *recs, int count,
			uint64_t lsn, uint64_t seq0, uint32_t n, uint64_t hint,
			uint64_t *prev)
{
	struct dblock d = {.img = w->dscratch, .fill = WAL_PAYLOAD_BYTES};
	uint32_t idx = 0;
	bool started = false;
	int nio = 0;

	for (int r = 0; r < count; r++, lsn++) {
		const uint8_t *src = recs[r].iov_base;
		size_t len = recs[r].iov_len;
		uint8_t rec_hdr[WAL_REC_HDR_BYTES];

		if (WAL_PAYLOAD_BYTES - d.fill < WAL_REC_HDR_BYTES) {
			if (started) {
				db_end(w, &d, seq0 + idx, idx, n, hint, prev, w->dio,
				       &nio);
				d.img = w->dscratch + (size_t)++idx * WAL_BLOCK_BYTES;
			}
			started = true;
			db_begin(&d, lsn);
		}
		if (wal_get16(d.img + 14) == WAL_NO_RECORD) {
			wal_put16(d.img + 14, (uint16_t)d.fill);
			wal_put64(d.img + 40, lsn);
		}
		wal_put32(rec_hdr, (uint32_t)len);
		db_put(&d, rec_hdr, WAL_REC_HDR_BYTES);
		while (len > 0) {
			if (d.fill == WAL_PAYLOAD_BYTES) {
				db_end(w, &d, seq0 + idx, idx, n, hint, prev, w->dio,
				       &nio);
				d.img = w->dscratch + (size_t)++idx * WAL_BLOCK_BYTES;
				db_begin(&d, lsn);
			}
			size_t take = WAL_PAYLOAD_BYTES - d.fill < len
					  ? WAL_PAYLOAD_BYTES - d.fill
					  : len;

			db_put(&d, src, (uint32_t)take);
			src += take;
			len -= take;
		}
	}
	assert(idx + 1 == n);
	db_end(w, &d, seq0 + idx, idx, n, hint, prev, w->dio, &nio);
	if (PMWAL_BUG(LAST_LINE_UNFLUSHED)) {
		/* The last piece (the last block's header line) by a plain store:
		 * visible in the mapping, never flushed. */
		struct wal_io *l = &w->dio[--nio];

		memcpy((uint8_t *)w->dev->base + l->off, l->buf, l->len);
	}
	if (PMWAL_BUG(COMMIT_WORD_FIRST)) {
		/* The last block's header (its checksum commits the group) made
		 * durable first, the payload after it and never drained. */
		int rc = w->dev->ops->store(w->dev, &w->dio[nio - 1], 1);

		if (!rc)
			rc = w->dev->ops->barrier(w->dev);
		if (!rc)
			rc = w->dev->ops->store(w->dev, w->dio, nio - 1);
		return rc;
	}
	if (PMWAL_BUG(TORN_COMMIT_WORD)) {
		/* The checksum as two 4-byte stores: the high half goes after
		 * the barrier (append_direct), the low half now. */
		struct wal_io *l = &w->dio[nio - 1];

		memcpy(w->bug_word, l->buf, 8);
		w->bug_io = (struct wal_io){w->bug_word + 4, 4, l->off + 4};
		wal_put32((uint8_t *)l->buf + 4, 0);
	}
	return w->dev->ops->store(w->dev, w->dio, nio);
}

/*
 * The caller's records as a group of their own, written straight into the
 * mapping (mu held; returns with mu held). -EAGAIN: not possible now (a
 * group in flight or staged, no room, a bad record): stage them instead,
 * which waits or reports exactly what is wrong.
 */
static int append_direct(struct pmwal *w, const struct iovec *recs, int count,
			 uint64_t *first)
{
	if (w->leading || w->stage[w->active].nblocks || w->failed || w->closing)
		return -EAGAIN;
	uint64_t n = layout_blocks(w, recs, count);

	if (n == 0 || n > WAL_DIRECT_BLOCKS || n > w->stage[0].cap_blocks ||
	    w->next_seq - w->head_seq + staged_blocks(w) + n > w->sb.capacity_blocks)
		return -EAGAIN;
	uint64_t lsn0 = w->next_lsn, seq0 = w->next_seq, hint = w->durable_lsn;

	if (PMWAL_BUG(TAIL_BEFORE_DURABLE))
		hint = lsn0 + (uint64_t)count - 1;
	uint64_t prev = w->prev_checksum;

	w->leading = true;
	w->direct_blocks = (uint32_t)n;
	w->next_lsn += (uint64_t)count;
	*first = lsn0;
	pthread_mutex_unlock(&w->mu);

	pthread_mutex_lock(&w->io_mu);
	if (PMWAL_BUG(ACK_BEFORE_FLUSH)) {
		pthread_mutex_lock(&w->mu);
		publish_durable(w, lsn0 + (uint64_t)count - 1);
		pthread_mutex_unlock(&w->mu);
	}
	int rc = direct_store(w, recs, count, lsn0, seq0, (uint32_t)n, hint, &prev);

	if (!rc && !PMWAL_BUG(NO_DRAIN_BEFORE_COMMIT) && !PMWAL_BUG(COMMIT_WORD_FIRST))
		rc = w->dev->ops->barrier(w->dev);
	if (!rc && PMWAL_BUG(TORN_COMMIT_WORD)) /* the word's second half, late */
		rc = w->dev->ops->store(w->dev, &w->bug_io, 1);
	if (PMWAL_BUG(IGNORE_FSYNC_ERROR))
		rc = 0;
	pthread_mutex_unlock(&w->io_mu);

	pthread_mutex_lock(&w->mu);
	w->direct_blocks = 0;
	w->leading = false;
	group_done(w, rc, seq0, n, lsn0, lsn0 + (uint64_t)count - 1, prev);
	if (rc) {
		wake_all(w);
		return PMWAL_EFAILED;
	}
	pthread_cond_broadcast(&w->cv_done);
	/* Appenders that came meanwhile staged their records: write them now. */
	if (w->stage[w->active].nblocks > 0)
		wal_lead(w);
	return 0;
}

/* ---- public append API -------------------------------------------------- */

static int append_common(struct pmwal *w, const struct iovec *recs, int count,
			 uint64_t *first, bool wait)
{
	uint64_t lsn = 0;
	int rc;

	if (!w || !recs || count < 1)
		return -EINVAL;
	if (w->flags & PMWAL_OPEN_READONLY)
		return PMWAL_EREADONLY;
	pthread_mutex_lock(&w->mu);
	if (wait && w->dscratch && !w->window_us) {
		rc = append_direct(w, recs, count, &lsn);
		if (rc != -EAGAIN) {
			if (!rc && first)
				*first = lsn;
			goto out;
		}
	}
	rc = stage_add(w, recs, count, &lsn);
	if (rc)
		goto out;
	if (first)
		*first = lsn;
	if (wait)
		rc = wait_durable(w, lsn + (uint64_t)count - 1);
	else
		pthread_cond_signal(&w->cv_work);
out:
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int pmwal_append(struct pmwal *w, const void *data, size_t len, uint64_t *lsn_out)
{
	struct iovec iov = {(void *)data, len};

	if (!data && len)
		return -EINVAL;
	return append_common(w, &iov, 1, lsn_out, w && w->policy == PMWAL_COMMIT_DURABLE);
}

int pmwal_appendv(struct pmwal *w, const struct iovec *recs, int count,
		  uint64_t *first_lsn_out)
{
	return append_common(w, recs, count, first_lsn_out,
			     w && w->policy == PMWAL_COMMIT_DURABLE);
}

int pmwal_append_async(struct pmwal *w, const void *data, size_t len, pmwal_durable_fn cb,
		       void *arg, uint64_t *lsn_out)
{
	struct iovec iov = {(void *)data, len};
	uint64_t lsn;
	int rc;

	if (!w || !cb || (!data && len))
		return -EINVAL;
	if (w->flags & PMWAL_OPEN_READONLY)
		return PMWAL_EREADONLY;
	/* Allocated before staging: a record is never staged unannounced. */
	struct async_cb *c = malloc(sizeof(*c));

	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&w->mu);
	rc = start_committer(w);
	if (!rc)
		rc = stage_add(w, &iov, 1, &lsn);
	if (!rc) {
		struct stage *s = &w->stage[w->active];

		*c = (struct async_cb){lsn, cb, arg, 0, NULL};
		*s->cbs_tail = c;
		s->cbs_tail = &c->next;
		c = NULL;
		if (lsn_out)
			*lsn_out = lsn;
		pthread_cond_signal(&w->cv_work);
	}
	pthread_mutex_unlock(&w->mu);
	free(c); /* not staged: never called */
	return rc;
}

int pmwal_wait(struct pmwal *w, uint64_t lsn)
{
	int rc;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->mu);
	if (lsn >= w->next_lsn) {
		set_err(w, "%s: wait for LSN %llu, but the next LSN is %llu", w->target,
			(unsigned long long)lsn, (unsigned long long)w->next_lsn);
		rc = PMWAL_ERANGE;
	} else {
		rc = wait_durable(w, lsn);
	}
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int pmwal_sync(struct pmwal *w)
{
	int rc;

	if (!w)
		return -EINVAL;
	pthread_mutex_lock(&w->mu);
	rc = w->failed ? PMWAL_EFAILED : wait_durable(w, w->next_lsn - 1);
	pthread_mutex_unlock(&w->mu);
	return rc;
}

uint64_t pmwal_durable_lsn(struct pmwal *w)
{
	/* Lock-free: see publish_durable(). */
	return w ? __atomic_load_n(&w->durable_lsn, __ATOMIC_ACQUIRE) : 0;
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
	pthread_mutex_lock(&w->io_mu);
	pthread_mutex_lock(&w->mu);
	rc = w->failed ? PMWAL_EFAILED : 0;
	if (!rc && lsn > w->durable_lsn + 1) {
		set_err(
		    w, "%s: release below LSN %llu, but only LSNs up to %llu are durable",
		    w->target, (unsigned long long)lsn,
		    (unsigned long long)w->durable_lsn);
		rc = PMWAL_ERANGE;
	}
	end_seq = w->next_seq; /* durable groups only: io_mu keeps the leader out */
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
			fail_stop(w, rc);
			pthread_mutex_unlock(&w->mu);
			set_err(w,
				"%s: finding LSN %llu to release: %s; the log is closed for "
				"writing, run `pmwal verify` on it",
				w->target, (unsigned long long)lsn, pmwal_strerror(rc));
			goto out;
		}
		if (rc) {
			set_err(w, "%s: finding LSN %llu to release: %s", w->target,
				(unsigned long long)lsn, pmwal_strerror(rc));
			goto out;
		}
	}
	struct wal_sb sb = w->sb;

	sb.head_seq = seq;
	sb.head_lsn = lsn;
	sb.end_seq = end_seq; /* io_mu: no group in flight, all durable */
	sb.end_lsn = end_lsn;
	rc = write_sb(w, &sb);
	pthread_mutex_lock(&w->mu);
	if (rc) {
		fail_stop(w, rc);
		set_err(w, "%s: superblock write for release to LSN %llu failed: %s",
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
		wake_all(w);
	}
	pthread_mutex_unlock(&w->mu);
out:
	pthread_mutex_unlock(&w->io_mu);
	return rc;
}

/* ---- open and close ----------------------------------------------------- */

static int alloc_stages(struct pmwal *w)
{
	uint32_t cap = w->sb.group_blocks_max;
	void *bufs[2];
	size_t lens[2];

	for (int i = 0; i < 2; i++) {
		w->stage[i].cap_blocks = cap;
		w->stage[i].buf = wal_alloc_io((size_t)cap * WAL_BLOCK_BYTES);
		if (!w->stage[i].buf)
			return -ENOMEM;
		bufs[i] = w->stage[i].buf;
		lens[i] = (size_t)cap * WAL_BLOCK_BYTES;
	}
	if (w->dev->register_buffers)
		w->dev->register_buffers(w->dev, bufs, lens, 2);
	if ((w->dev->caps & WAL_CAP_MAPPED) && w->dev->ops->store &&
	    w->dev->ops->barrier) {
		w->dscratch = wal_alloc_io((size_t)WAL_DIRECT_BLOCKS * WAL_BLOCK_BYTES);
		w->dio = calloc((size_t)WAL_DIRECT_BLOCKS * (WAL_DIRECT_SEGS + 1),
				sizeof(*w->dio));
		if (!w->dscratch || !w->dio)
			return -ENOMEM;
	}
	return 0;
}

static void free_handle(struct pmwal *w)
{
	if (!w)
		return;
	if (w->dev)
		w->dev->ops->close(w->dev);
	for (int i = 0; i < WAL_LOCK_FDS; i++)
		if (w->lock_fd[i] >= 0)
			close(w->lock_fd[i]); /* the last thing: the log is now free */
	for (int i = 0; i < 2; i++) {
		free(w->stage[i].buf);
		pthread_cond_destroy(&w->stage[i].cv);
	}
	free(w->dscratch);
	free(w->dio);
	pthread_mutex_destroy(&w->mu);
	pthread_mutex_destroy(&w->io_mu);
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

/* Recovery at open: scan, decide, and (writable) bump the epoch. */
static int recover(struct pmwal *w, char *err, size_t errlen)
{
	struct wal_tail tail;
	bool salvage = w->flags & PMWAL_OPEN_SALVAGE;
	int rc = wal_recover_scan(w->dev, &w->sb, salvage, &w->report, &tail);

	if (rc) {
		snprintf(err, errlen, "%s: recovery read failed: %s", w->target,
			 strerror(-rc));
		return rc;
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
	w->next_seq = tail.next_seq;
	w->next_lsn = tail.next_lsn;
	w->prev_checksum = tail.prev_checksum;
	w->durable_lsn = tail.durable_lsn;
	w->head_seq = w->sb.head_seq;
	w->head_lsn = w->sb.head_lsn;
	if (w->flags & PMWAL_OPEN_READONLY)
		return 0;
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
	sb.epoch++;
	sb.end_seq = tail.next_seq;
	sb.end_lsn = tail.next_lsn + (PMWAL_BUG(NOT_IDEMPOTENT) ? 1 : 0);
	sb.flags &= ~WAL_SB_CLOSED;
	rc = write_sb(w, &sb);
	if (rc) {
		snprintf(err, errlen,
			 "%s: writing the superblock after recovery (%s): %s", w->target,
			 verdict_name(w->report.verdict), strerror(-rc));
		return rc;
	}
	w->sb = sb;
	return 0;
}

static int open_locked(const struct pmwal_options *opt, struct wal_dev *dev,
		       const int lock_fd[WAL_LOCK_FDS], struct pmwal **out)
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
	memcpy(w->lock_fd, lock_fd, sizeof(w->lock_fd));
	pthread_mutex_init(&w->mu, NULL);
	pthread_mutex_init(&w->io_mu, NULL);
	w->done_tail = &w->done_cbs;
	pthread_cond_init(&w->cv_done, NULL);
	pthread_cond_init(&w->cv_work, NULL);
	for (int i = 0; i < 2; i++) {
		pthread_cond_init(&w->stage[i].cv, NULL);
		stage_reset(&w->stage[i]);
	}
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
	if (opt->flags & PMWAL_OPEN_CREATE) {
		rc = format_log(w, opt, err, sizeof(err));
		if (rc)
			goto fail;
	} else {
		rc = wal_read_sb(dev, &w->sb, err, sizeof(err));
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
		rc = start_committer(w);
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

	return open_locked(opt, dev, none, out);
}

int pmwal_open(const struct pmwal_options *opt, struct pmwal **out)
{
	char err[512] = "";
	struct wal_dev *dev;
	int rc;

	if (!out)
		return -EINVAL;
	*out = NULL;
	rc = check_options(opt, err, sizeof(err));
	if (rc) {
		open_err(opt, err);
		return rc;
	}
	struct wal_dev_params p = {
	    .target = opt->target,
	    .create_excl = opt->flags & PMWAL_OPEN_EXCL,
	    .readonly = opt->flags & PMWAL_OPEN_READONLY,
	    .buffered_io = opt->flags & PMWAL_OPEN_BUFFERED_IO,
	    .no_uring = opt->flags & PMWAL_OPEN_NO_URING,
	    .fdatasync = opt->flags & PMWAL_OPEN_FDATASYNC,
	    .queue_depth = opt->queue_depth,
	};
	if (opt->flags & PMWAL_OPEN_CREATE) {
		if (!opt->capacity_bytes && strncmp(opt->target, "/dev/", 5) != 0 &&
		    strncmp(opt->target, "pmr:", 4) != 0) {
			open_err(
			    opt,
			    "options.capacity_bytes: required to create a log in a file");
			return PMWAL_EBADOPT;
		}
		p.create_bytes = opt->capacity_bytes / WAL_BLOCK_BYTES * WAL_BLOCK_BYTES;
	}
	rc = wal_dev_open(&p, &dev, err, sizeof(err));
	if (rc) {
		open_err(opt, err[0] ? err : pmwal_strerror(rc));
		return rc;
	}
	/* Before the first write (format, recovery's epoch): one writer only. */
	int lock_fd[WAL_LOCK_FDS] = {-1, -1, -1, -1, -1, -1, -1, -1};

	if (!(opt->flags & PMWAL_OPEN_READONLY) && !PMWAL_BUG(NO_WRITER_LOCK)) {
		int dev_fd = dev->ops->file_fd ? dev->ops->file_fd(dev) : -1;

		rc = wal_lock_writer(opt->target, dev_fd, lock_fd, err, sizeof(err));
		if (rc) {
			dev->ops->close(dev);
			open_err(opt, err);
			return rc;
		}
	}
	return open_locked(opt, dev, lock_fd, out);
}

int pmwal_close(struct pmwal *w)
{
	int rc = 0;

	if (!w)
		return 0;
	if (in_callback == w) {
		set_err(w, "%s: pmwal_close called from a durability callback; close "
			   "after the callbacks return",
			w->target);
		return -EDEADLK;
	}
	if (!(w->flags & PMWAL_OPEN_READONLY)) {
		pthread_mutex_lock(&w->mu);
		if (!w->failed && w->next_lsn > w->durable_lsn + 1)
			rc = wait_durable(w, w->next_lsn - 1);
		w->closing = true;
		while (w->leading || w->cb_running)
			pthread_cond_wait(&w->cv_done, &w->mu);
		/* io_mu before mu, as release takes them. */
		pthread_mutex_unlock(&w->mu);
		pthread_mutex_lock(&w->io_mu);
		pthread_mutex_lock(&w->mu);
		if (!w->failed && !rc && !w->leading) {
			/* A clean close: the superblock attests the whole log. */
			struct wal_sb sb = w->sb;

			sb.end_seq = w->next_seq;
			sb.end_lsn = w->durable_lsn + 1;
			sb.flags |= WAL_SB_CLOSED;
			rc = write_sb(w, &sb);
			if (rc)
				set_err(w, "%s: writing the superblock at close: %s",
					w->target, pmwal_strerror(rc));
		}
		if (!rc && w->failed)
			rc = PMWAL_EFAILED; /* staged records were never made durable */
		pthread_cond_broadcast(&w->cv_work);
		wake_all(w);
		pthread_mutex_unlock(&w->mu);
		pthread_mutex_unlock(&w->io_mu);
		if (w->committer_started)
			pthread_join(w->committer, NULL);
		/* Callbacks of records that never became durable hear so once. */
		pthread_mutex_lock(&w->mu);
		for (int i = 0; i < 2; i++)
			queue_callbacks(w, &w->stage[i ^ w->active ^ 1],
					w->failed ? PMWAL_EFAILED : PMWAL_ECLOSED);
		run_callbacks(w);
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
	    (o.flags | PMWAL_OPEN_READONLY | PMWAL_OPEN_SALVAGE) & ~PMWAL_OPEN_CREATE;
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

const struct pmwal_report *pmwal_recovery_report(struct pmwal *w)
{
	static const struct pmwal_report none;

	return w ? &w->report : &none;
}

const char *pmwal_errmsg(struct pmwal *w)
{
	return w ? w->errmsg : "";
}

/* ---- iterators ---------------------------------------------------------- */

int pmwal_iter_open(struct pmwal *w, uint64_t from_lsn, struct pmwal_iter **out)
{
	struct pmwal_iter *it;
	uint64_t head_seq, end_seq, head_lsn, next_lsn;
	int rc;

	if (!w || !out)
		return -EINVAL;
	*out = NULL;
	pthread_mutex_lock(&w->mu);
	head_seq = w->head_seq;
	head_lsn = w->head_lsn;
	end_seq = w->next_seq;
	next_lsn = w->next_lsn;
	pthread_mutex_unlock(&w->mu);
	if (from_lsn == 0)
		from_lsn = head_lsn;
	if (from_lsn < head_lsn || from_lsn > next_lsn) {
		set_err(w, "%s: iterator from LSN %llu, but the log holds %llu..%llu",
			w->target, (unsigned long long)from_lsn,
			(unsigned long long)head_lsn, (unsigned long long)(next_lsn - 1));
		return PMWAL_ERANGE;
	}
	it = calloc(1, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->w = w;
	it->from_lsn = from_lsn;
	it->chunk = wal_alloc_io(WAL_ITER_CHUNK_BLOCKS * WAL_BLOCK_BYTES);
	if (!it->chunk) {
		free(it);
		return -ENOMEM;
	}
	it->seq = head_seq;
	if (from_lsn > head_lsn && end_seq > head_seq) {
		rc = wal_locate(w->dev, &w->sb, head_seq, end_seq, from_lsn, &it->seq);
		if (rc == PMWAL_ERANGE)
			it->seq = end_seq;
		else if (rc) {
			pmwal_iter_close(it);
			return rc;
		}
	}
	it->lsn_next = 0; /* taken from the first block read */
	*out = it;
	return 0;
}

/* Reads and checks block it->seq; 0 ok, 1 not durable yet, < 0 error. */
static int iter_load(struct pmwal_iter *it, struct wal_block_hdr *h)
{
	struct pmwal *w = it->w;
	uint64_t end_seq, head_seq;

	pthread_mutex_lock(&w->mu);
	end_seq = w->next_seq;
	head_seq = w->head_seq;
	pthread_mutex_unlock(&w->mu);
	if (it->seq >= end_seq)
		return 1;
	if (it->seq < head_seq)
		return PMWAL_ERANGE;
	uint64_t slot = it->seq % w->sb.capacity_blocks;

	if (it->seq < it->chunk_seq || it->seq >= it->chunk_seq + it->chunk_n) {
		/* Read ahead up to the durable end, within one pass of the ring. */
		uint64_t n = end_seq - it->seq;

		if (n > WAL_ITER_CHUNK_BLOCKS)
			n = WAL_ITER_CHUNK_BLOCKS;
		if (n > w->sb.capacity_blocks - slot)
			n = w->sb.capacity_blocks - slot;
		int rc = w->dev->ops->read(w->dev, it->chunk, n * WAL_BLOCK_BYTES,
					   wal_slot_offset(slot));

		if (rc) {
			it->chunk_n = 0;
			return rc;
		}
		it->chunk_seq = it->seq;
		it->chunk_n = (uint32_t)n;
	}
	it->block = it->chunk + (it->seq - it->chunk_seq) * WAL_BLOCK_BYTES;
	enum wal_block_state st = wal_block_check(it->block, slot, it->seq, &w->sb, h);

	if (st == WAL_BLOCK_MISPLACED) {
		/* A later lap overwrote it: the reader fell behind a release. */
		return PMWAL_ERANGE;
	}
	if (st != WAL_BLOCK_VALID) {
		set_err(w, "%s: block seq %llu at offset %llu: %s", w->target,
			(unsigned long long)it->seq,
			(unsigned long long)wal_slot_offset(slot),
			wal_block_state_name(st));
		return PMWAL_ECORRUPT;
	}
	return 0;
}

static int rec_reserve(struct pmwal_iter *it, size_t len)
{
	if (len <= it->rec_cap)
		return 0;
	uint8_t *n = realloc(it->rec, len);

	if (!n)
		return -ENOMEM;
	it->rec = n;
	it->rec_cap = len;
	return 0;
}

/*
 * Salvage: the iterator met damage at block it->seq. Move to the next group
 * after it that starts with a valid block, as recovery's salvage scan did, so
 * that iteration goes on with that group's first record. The records lost in
 * between show as a gap in the LSNs returned. 0: resumed (or the end: the
 * next call says so), < 0: an error other than damage.
 */
static int iter_skip_damage(struct pmwal_iter *it)
{
	struct wal_block_hdr h;

	for (;;) {
		it->seq++;
		it->have_block = false;
		int rc = iter_load(it, &h);

		if (rc == 1)
			return 0; /* nothing valid after the damage */
		if (rc == PMWAL_ECORRUPT)
			continue;
		if (rc)
			return rc;
		if (h.group_index == 0 && h.first_rec == 0 && h.first_lsn > it->last_lsn) {
			it->lsn_next = 0; /* taken from this block */
			return 0;
		}
	}
}

static int iter_next_raw(struct pmwal_iter *it, uint64_t *lsn, const void **data,
			 size_t *len);

int pmwal_iter_next(struct pmwal_iter *it, uint64_t *lsn, const void **data, size_t *len)
{
	if (!it)
		return -EINVAL;
	for (;;) {
		int rc = iter_next_raw(it, lsn, data, len);

		if (rc == 1)
			it->last_lsn = *lsn;
		if (rc != PMWAL_ECORRUPT || !(it->w->flags & PMWAL_OPEN_SALVAGE))
			return rc;
		rc = iter_skip_damage(it);
		if (rc)
			return rc;
	}
}

static int iter_next_raw(struct pmwal_iter *it, uint64_t *lsn, const void **data,
			 size_t *len)
{
	struct wal_block_hdr h;
	int rc;

	if (!it)
		return -EINVAL;
	for (;;) {
		if (!it->have_block) {
			rc = iter_load(it, &h);
			if (rc)
				return rc > 0 ? 0 : rc;
			it->have_block = true;
			it->end = h.payload_bytes;
			if (h.first_rec == WAL_NO_RECORD) {
				/* Only the tail of a record begun before our start. */
				it->have_block = false;
				it->seq++;
				continue;
			}
			it->pos = h.first_rec;
			if (it->lsn_next && it->lsn_next != h.first_lsn)
				return PMWAL_ECORRUPT;
			it->lsn_next = h.first_lsn;
		}
		if (it->pos + WAL_REC_HDR_BYTES > it->end) {
			it->have_block = false;
			it->seq++;
			continue;
		}
		const uint8_t *p = it->block + WAL_HDR_BYTES;
		uint32_t rlen = wal_get32(p + it->pos);
		uint64_t rec_lsn = it->lsn_next++;
		size_t got = 0;
		bool crossed = false;

		if (rlen == 0 ||
		    (rlen > it->w->sb.record_bytes_max && !PMWAL_BUG(TRUST_LENGTH)))
			return PMWAL_ECORRUPT;
		it->pos += WAL_REC_HDR_BYTES;
		rc = rec_reserve(it, rlen);
		if (rc)
			return rc;
		while (got < rlen) {
			if (it->pos == it->end) {
				it->seq++;
				rc = iter_load(it, &h);
				if (rc) {
					/* Durable groups never end inside a record. */
					it->have_block = false;
					return rc > 0 ? PMWAL_ECORRUPT : rc;
				}
				/* The length is only trusted inside its group: the
				 * next block must continue the record (format.c). */
				uint64_t cont_lsn =
				    h.first_rec == WAL_NO_RECORD ? rec_lsn : rec_lsn + 1;

				if (!PMWAL_BUG(TRUST_LENGTH) &&
				    (h.group_index == 0 || h.first_lsn != cont_lsn)) {
					it->have_block = false;
					set_err(
					    it->w,
					    "%s: record LSN %llu claims %u bytes, more "
					    "than its group holds (block seq %llu does "
					    "not continue it)",
					    it->w->target, (unsigned long long)rec_lsn,
					    rlen, (unsigned long long)it->seq);
					return PMWAL_ECORRUPT;
				}
				crossed = true;
				it->pos = 0;
				it->end = h.payload_bytes;
			}
			size_t take = it->end - it->pos < rlen - got ? it->end - it->pos
								     : rlen - got;

			/* it->block moves as blocks load: never a stale pointer. */
			memcpy(it->rec + got, it->block + WAL_HDR_BYTES + it->pos, take);
			got += take;
			it->pos += take;
		}
		/* A record continued into a block ends where that block says. */
		if (crossed && !PMWAL_BUG(TRUST_LENGTH) &&
		    it->pos != (h.first_rec == WAL_NO_RECORD ? it->end : h.first_rec)) {
			it->have_block = false;
			set_err(it->w,
				"%s: record LSN %llu (%u bytes) ends at payload "
				"byte %zu of block seq %llu, not where the block's "
				"next record starts",
				it->w->target, (unsigned long long)rec_lsn, rlen, it->pos,
				(unsigned long long)it->seq);
			return PMWAL_ECORRUPT;
		}
		if (rec_lsn < it->from_lsn)
			continue;
		*lsn = rec_lsn;
		*data = it->rec;
		*len = rlen;
		return 1;
	}
}

void pmwal_iter_close(struct pmwal_iter *it)
{
	if (!it)
		return;
	free(it->chunk);
	free(it->rec);
	free(it);
}
