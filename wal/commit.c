// SPDX-License-Identifier: MIT
/*
 * commit.c - the commit pipeline: staging records into groups, group commit
 * with one leader at a time, durability waits, callbacks, the background
 * committer, and direct groups on mapped media.
 *
 * The data path of one durable append reads as a straight line:
 *   pmwal_append -> stage_add (reserve LSN and blocks under the lock, copy the
 *   record into the open group's blocks) -> lead (one appender becomes leader,
 *   swaps the staging buffers, seals the group's headers and checksums outside
 *   the lock) -> dev->ops->commit (device write + durability) -> durable_lsn
 *   advances -> waiting appenders and callbacks are released.
 *
 * A ring of inflight_max + 1 staging buffers: appenders fill one while up to
 * inflight_max groups are written, each by its own leader, concurrently on
 * flash (format.c, GROUPS AND ACKNOWLEDGEMENT; one staged group at a time on
 * mapped media, where blocking appenders write direct groups of their own
 * instead, one per core at once: see "direct groups" below). Groups are
 * sealed in the order they were led or reserved (a ticket: the hash chain)
 * and retired in that order: a record is acknowledged only once its group and
 * every earlier one are durable. There is no added delay at low load: a lone
 * appender leads its own group at once. Bounds: a group holds at most
 * group_blocks_max blocks; appenders that do not fit wait for a buffer.
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

static int wal_lead(struct pmwal *w);

/* ---- staging ------------------------------------------------------------ */

static uint8_t *stage_block(struct stage *s, uint32_t i)
{
	return s->buf + (size_t)i * WAL_BLOCK_BYTES;
}

void wal_stage_reset(struct stage *s)
{
	s->nblocks = 0;
	s->fill = 0;
	s->first_lsn = s->last_lsn = 0;
	s->nrecords = 0;
	s->cbs = NULL;
	s->cbs_tail = &s->cbs;
}

/* Blocks the stage would hold after adding @count records (format.h's
 * layout: exact, so staged blocks become live blocks one for one). */
static uint64_t stage_blocks_after(const struct stage *s, const struct iovec *recs,
				   int count)
{
	struct wal_layout l = {s->nblocks, s->fill};

	for (int i = 0; i < count; i++)
		wal_layout_add(&l, recs[i].iov_len);
	return l.nblocks;
}

/* Copies one record into the stage, laid out by format.h's rule. A block's
 * padding is never written out past the device's sector (see wal_lead) and
 * is covered by no checksum. */
static void stage_copy(struct stage *s, uint64_t lsn, const void *data, size_t len)
{
	struct wal_layout l = {s->nblocks, s->fill};
	const uint8_t *src = data;

	if (wal_layout_record(&l))
		wal_block_begin(stage_block(s, (uint32_t)l.nblocks - 1), lsn);
	uint8_t *b = stage_block(s, (uint32_t)l.nblocks - 1);

	wal_block_start_record(b, l.fill, lsn);
	wal_record_len_put(b + WAL_HDR_BYTES + l.fill, (uint32_t)len);
	l.fill += WAL_REC_HDR_BYTES;
	while (len > 0) {
		bool new_block;
		uint32_t take = wal_layout_take(&l, len, &new_block);

		if (new_block) {
			wal_block_set_used(b, WAL_PAYLOAD_BYTES);
			b = stage_block(s, (uint32_t)l.nblocks - 1);
			wal_block_begin(b, lsn);
		}
		memcpy(b + WAL_HDR_BYTES + l.fill, src, take);
		l.fill += take;
		src += take;
		len -= take;
	}
	wal_block_set_used(b, l.fill);
	s->nblocks = (uint32_t)l.nblocks; /* stage_add checked it fits */
	s->fill = l.fill;
	if (!s->nrecords)
		s->first_lsn = lsn;
	s->last_lsn = lsn;
	s->nrecords++;
}

static uint64_t staged_blocks(const struct pmwal *w)
{
	uint64_t n = w->direct_blocks;

	for (uint32_t i = 0; i < w->nstages; i++)
		n += w->stage[i].nblocks;
	return n;
}

/* Whether a group is being led, written or gathered (mu held). */
bool wal_busy(const struct pmwal *w)
{
	return w->inflight || w->direct_blocks || w->gathering;
}

/*
 * Whether another group may be led now (mu held). Beside groups in flight,
 * only once the open one holds WAL_INFLIGHT_MIN_BLOCKS (or is full): groups
 * stay large, which is what the device and the CPU both want; a lone
 * appender still leads its own group at once.
 */
#define WAL_INFLIGHT_MIN_BLOCKS 16u /* 64 KiB */

static bool can_lead(const struct pmwal *w)
{
	if (w->direct_blocks || w->gathering || w->inflight >= w->inflight_max)
		return false;
	if (w->inflight == 0)
		return true;
	uint32_t want = w->group_bytes_max / WAL_PAYLOAD_BYTES;

	if (want > WAL_INFLIGHT_MIN_BLOCKS)
		want = WAL_INFLIGHT_MIN_BLOCKS;
	return w->stage[w->active].nblocks >= want;
}

/*
 * Reserves LSNs and copies @count records into the active stage, waiting for
 * room (caller holds mu). All or nothing.
 */
static int stage_add(struct pmwal *w, const struct iovec *recs, int count,
		     uint64_t *first)
{
	uint64_t bytes = 0; /* for the message only */

	for (int i = 0; i < count; i++) {
		if (recs[i].iov_len == 0)
			return -EINVAL;
		if (recs[i].iov_len > w->sb.record_bytes_max) {
			wal_set_err(w,
				    "%s: record of %zu bytes; this log's maximum is %u",
				    w->target, recs[i].iov_len, w->sb.record_bytes_max);
			return PMWAL_ETOOBIG;
		}
		bytes += WAL_REC_HDR_BYTES + recs[i].iov_len;
	}
	uint32_t group_limit = w->group_bytes_max / WAL_PAYLOAD_BYTES;

	for (;;) {
		struct stage *s = &w->stage[w->active];

		if (w->failed)
			return wal_failed_rc(w);
		if (w->closing)
			return PMWAL_ECLOSED;
		uint64_t after = stage_blocks_after(s, recs, count);

		if (after > s->cap_blocks && s->nblocks == 0) {
			wal_set_err(
			    w,
			    "%s: batch of %llu bytes is larger than one group can hold",
			    w->target, (unsigned long long)bytes);
			return PMWAL_ETOOBIG;
		}
		/* Staged blocks become live blocks one for one, so this is exact. */
		uint64_t live =
		    w->next_seq - w->head_seq + staged_blocks(w) - s->nblocks + after;

		if (live > w->sb.capacity_blocks) {
			/* A writer taken over that only ever finds its log full
			 * would never hear so from a write: it hears here. */
			if (wal_status_fenced(w)) {
				wal_fail_stop(w, PMWAL_EFENCED);
				wal_set_err(w, "%s: another writer took the log over; close this "
					       "handle", w->target);
				return PMWAL_EFENCED;
			}
			wal_set_err(
			    w,
			    "%s: log full (%llu of %llu blocks live or staged); release "
			    "records (pmwal_release) after a checkpoint",
			    w->target, (unsigned long long)(live - after + s->nblocks),
			    (unsigned long long)w->sb.capacity_blocks);
			return PMWAL_EFULL;
		}
		if (after <= s->cap_blocks && (s->nblocks == 0 || after <= group_limit))
			break;
		/* The open group is full: lead it out, or wait for room. */
		if (can_lead(w))
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

/* ---- waiting without sleeping ------------------------------------------ */

/*
 * On mapped media a group takes about a microsecond, while a sleep on a
 * condition variable and the wake-up cost several: two appenders then ran
 * slower than one (0.76x). A waiter first spins on the word it waits for
 * (the published durable LSN, the seal turn) for a few microseconds, no lock
 * held, and sleeps only if that was not enough. At most one spinner per
 * spare core. Returns true if *@word reached @want.
 */
#define WAL_SPIN_NS 8000

static bool spin_until(struct pmwal *w, const uint64_t *word, uint64_t want)
{
	bool reached = false;

	if (!w->spin_max)
		return false;
	if (__atomic_fetch_add(&w->spinners, 1, __ATOMIC_RELAXED) >= w->spin_max) {
		__atomic_fetch_sub(&w->spinners, 1, __ATOMIC_RELAXED);
		return false;
	}
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 1;; i++) {
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) >= want) {
			reached = true;
			break;
		}
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		if (i % 16 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >
			    WAL_SPIN_NS)
				break;
		}
	}
	__atomic_fetch_sub(&w->spinners, 1, __ATOMIC_RELAXED);
	return reached;
}

/* Spins for @lsn to become durable, mu released meanwhile; none while others
 * sleep (more appenders than cores: a spinner would take the core the
 * writer needs). Returns with mu held; true if it spun. */
static bool spin_for_durable(struct pmwal *w, uint64_t lsn)
{
	if (!w->spin_max || w->sleepers ||
	    __atomic_load_n(&w->spinners, __ATOMIC_RELAXED) >= w->spin_max)
		return false;
	pthread_mutex_unlock(&w->mu);
	(void)spin_until(w, &w->durable_lsn, lsn);
	pthread_mutex_lock(&w->mu);
	return true;
}

/* Waits for the seal turn of @ticket (no lock held): then the caller owns
 * prev_checksum until turn_pass. */
static void turn_wait(struct pmwal *w, uint64_t ticket)
{
	if (__atomic_load_n(&w->seal_turn, __ATOMIC_ACQUIRE) == ticket ||
	    spin_until(w, &w->seal_turn, ticket))
		return;
	pthread_mutex_lock(&w->seal_mu);
	w->seal_sleepers++;
	while (__atomic_load_n(&w->seal_turn, __ATOMIC_ACQUIRE) != ticket)
		pthread_cond_wait(&w->seal_cv, &w->seal_mu);
	w->seal_sleepers--;
	pthread_mutex_unlock(&w->seal_mu);
}

/* Hands the seal turn to the next ticket. */
static void turn_pass(struct pmwal *w)
{
	pthread_mutex_lock(&w->seal_mu);
	__atomic_store_n(&w->seal_turn, w->seal_turn + 1, __ATOMIC_RELEASE);
	if (w->seal_sleepers)
		pthread_cond_broadcast(&w->seal_cv);
	pthread_mutex_unlock(&w->seal_mu);
}

/* ---- group commit -------------------------------------------------------- */

/* Fills in what only the leader knows: position, chain and group shape.
 * Called holding the seal turn: it continues the chain. */
static void seal_group(struct pmwal *w, struct stage *s, uint64_t durable_hint)
{
	uint64_t prev = w->prev_checksum;

	for (uint32_t i = 0; i < s->nblocks; i++) {
		uint8_t *b = stage_block(s, i);
		uint64_t seq = s->seq0 + i;

		wal_block_place(b, &(struct wal_block_pos){
				       .log_id = w->sb.log_id,
				       .seq = seq,
				       .prev_checksum = prev,
				       .durable_lsn = durable_hint,
				       .epoch = w->sb.epoch,
				       .group_index = i,
				       .group_blocks = s->nblocks,
				   });
		prev = wal_block_seal(b, seq % w->sb.capacity_blocks);
	}
	w->prev_checksum = prev;
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
void wal_wake_all(struct pmwal *w)
{
	for (uint32_t i = 0; i < w->nstages; i++)
		pthread_cond_broadcast(&w->stage[i].cv);
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
static void fail_staged(struct pmwal *w);

void wal_fail_stop(struct pmwal *w, int rc)
{
	if (!w->failed)
		w->failed = rc;
	wal_wake_all(w);
	fail_staged(w);
}

/*
 * A failed handle writes nothing more, so the callbacks of records staged
 * and not in flight can only fail: they hear so now (mu held), not at close
 * (an application waiting for them before it closes would wait forever:
 * raft_conformance's power losses on simulated NVMe). Only once no group is
 * in flight, so that they run after the callbacks of every group before
 * them (LSN order). The committer runs them if no one else does.
 */
static void fail_staged(struct pmwal *w)
{
	if (!w->failed || w->inflight || !w->stage[w->active].cbs)
		return;
	wal_queue_callbacks(w, &w->stage[w->active], wal_failed_rc(w));
	pthread_cond_broadcast(&w->cv_work);
}

/*
 * Accounts for the group of @n blocks from @seq0 holding LSNs @first..@last
 * (mu held), the oldest in flight: durable, or failed with @rc, which is
 * sticky.
 */
static void group_done(struct pmwal *w, int rc, uint64_t seq0, uint64_t n, uint64_t first,
		       uint64_t last)
{
	/* Followers hear of it first; a writer taken over hears so here,
	 * atomically with the publication it is refused (status.c). */
	if (!rc) {
		w->stats.groups++;
		w->stats.group_blocks += n;
		w->stats.records += last - first + 1;
		rc = wal_status_publish(w, seq0 + n, last > w->durable_lsn ? last : w->durable_lsn, 0,
					&w->stats);
	}
	if (rc)
		w->stats.errors++;
	if (rc == PMWAL_EFENCED) {
		wal_fail_stop(w, rc);
		wal_set_err(w,
			    "%s: another writer took the log over (epoch %u is no longer "
			    "the log's); LSN %llu..%llu and everything after are not "
			    "acknowledged by this handle: close it",
			    w->target, w->sb.epoch, (unsigned long long)first,
			    (unsigned long long)last);
		return;
	}
	if (rc) {
		wal_fail_stop(w, rc);
		wal_set_err(
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
	assert(seq0 == w->next_seq);
	w->next_seq += n;
	if (last > w->durable_lsn) /* ACK_OUT_OF_ORDER may have run ahead */
		publish_durable(w, last);
	w->groups_written++;
	w->records_written += last - first + 1;
}

/* Records accepted by an append call (mu held): pmwal_stats(). */
static void count_appends(struct pmwal *w, int count, uint64_t bytes)
{
	w->stats.appends += (uint64_t)count;
	w->stats.append_bytes += bytes;
}

/* Nanoseconds for the sampled group timings: never 0 (0 means "not timed"). */
static uint64_t stats_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1;
}

void wal_stats_latency(struct wal_stats *s, uint64_t ns)
{
	uint32_t b = ns ? 63u - (uint32_t)__builtin_clzll(ns) : 0;

	s->latency_ns[b < WAL_STATS_BUCKETS ? b : WAL_STATS_BUCKETS - 1]++;
	s->latency_samples++;
	s->latency_sum_ns += ns;
}

/* The thread running callbacks now, so that it can be told from others. */
static _Thread_local const struct pmwal *in_callback;

bool wal_in_callback(const struct pmwal *w)
{
	return in_callback == w;
}

/* Moves stage @s's callbacks, with @status, to the queue of done ones (mu
 * held). Groups finish in order, so the queue stays in LSN order. */
void wal_queue_callbacks(struct pmwal *w, struct stage *s, int status)
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
void wal_run_callbacks(struct pmwal *w)
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

static void wake_stage(void *arg)
{
	pthread_cond_broadcast(&((struct stage *)arg)->cv);
}

/* The group in flight @back places behind the open stage (mu held):
 * w->inflight is the oldest, 1 the newest. */
static struct stage *in_flight(struct pmwal *w, uint32_t back)
{
	return &w->stage[(w->active + w->nstages - back) % w->nstages];
}

/*
 * Retires, oldest first, every group in flight whose commit returned, up to
 * the first that has not (mu held): durable_lsn moves only over groups all of
 * whose predecessors are durable. A failed group fails the handle; the groups
 * after it are then never acknowledged, durable or not. Wakes each retired
 * group's appenders except @keep's (a chaining leader wakes those itself).
 */
static void retire(struct pmwal *w, struct stage *keep)
{
	while (w->inflight) {
		struct stage *o = in_flight(w, w->inflight);

		if (!o->done)
			break;
		if (o->rc || !w->failed)
			group_done(w, o->rc, o->seq0, o->nblocks, o->first_lsn, o->last_lsn);
		wal_queue_callbacks(w, o, o->rc || w->failed ? wal_failed_rc(w) : 0);
		wal_stage_reset(o);
		o->done = false;
		w->inflight--;
		if (o != keep)
			pthread_cond_broadcast(&o->cv);
	}
	fail_staged(w);
}

/*
 * Writes the active stage as one group and makes it durable. Called with mu
 * held and can_lead(); returns with mu held. Other appenders keep staging
 * into the next buffer meanwhile, and up to inflight_max leaders write at
 * once.
 */
static int wal_lead(struct pmwal *w)
{
	int chain = 0;
	struct stage *done = NULL; /* a chained group's appenders, still asleep */

again:
	if (done && w->window_us) {
		wake_stage(done);
		done = NULL;
	}
	if (w->window_us && w->stage[w->active].nblocks > 0) {
		/* Gather: wait for the window, or until the group is full. */
		struct timespec until;

		w->gathering = true;
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
		w->gathering = false;
	}
	struct stage *s = &w->stage[w->active];

	if (s->nblocks == 0 || w->failed) {
		if (done)
			wake_stage(done);
		wal_wake_all(w);
		return w->failed;
	}
	w->active = (int)((uint32_t)(w->active + 1) % w->nstages);
	w->inflight++;
	s->seq0 = w->lead_seq;
	w->lead_seq += s->nblocks;
	s->ticket = w->tickets++;
	uint64_t hint = w->durable_lsn;

	if (PMWAL_BUG(TAIL_BEFORE_DURABLE))
		hint = w->next_lsn - 1; /* claims groups not yet written durable */
	if (PMWAL_BUG(ACK_BEFORE_FLUSH)) {
		publish_durable(w, s->last_lsn); /* acked before the write */
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&w->mu);

	turn_wait(w, s->ticket);
	seal_group(w, s, hint);
	turn_pass(w);

	uint64_t n = w->sb.capacity_blocks, slot = s->seq0 % n;
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
	uint32_t used = WAL_HDR_BYTES + wal_block_used(stage_block(s, s->nblocks - 1));
	uint32_t sector = w->dev->sector_bytes ? w->dev->sector_bytes : WAL_BLOCK_BYTES;

	ios[nio - 1].len -= WAL_BLOCK_BYTES - (used + sector - 1) / sector * sector;
	/* Wake the last group's appenders once this group's writes are
	 * submitted: woken earlier, they would run ahead of the leader. */
	struct wal_submitted wake_done = {wake_stage, done, false};

	pthread_rwlock_rdlock(&w->io_lock);
	/* A writer taken over writes nothing more (status.c). */
	wal_retake_lock(w);
	uint64_t t0 = s->ticket % WAL_STATS_SAMPLE ? 0 : stats_clock();
	int rc = wal_status_begin_write(w);

	if (!rc) {
		rc = w->dev->ops->commit(w->dev, ios, nio, done ? &wake_done : NULL);
		wal_status_end_write(w);
	}
	uint64_t took = t0 && !rc ? stats_clock() - t0 : 0;

	if (PMWAL_BUG(IGNORE_FSYNC_ERROR))
		rc = 0;
	if (done)
		wal_commit_submitted(&wake_done); /* if the device did not */
	done = NULL;
	pthread_rwlock_unlock(&w->io_lock);

	pthread_mutex_lock(&w->mu);
	if (took)
		wal_stats_latency(&w->stats, took);
	s->rc = rc;
	s->done = true;
	if (PMWAL_BUG(ACK_OUT_OF_ORDER) && !rc && !w->failed &&
	    s->last_lsn > w->durable_lsn) {
		publish_durable(w, s->last_lsn); /* earlier groups may be in flight */
		pthread_cond_broadcast(&s->cv);
	}
	bool announce = s->cbs != NULL;
	/* The next group is waiting. Writing it at once keeps the device busy;
	 * a handoff would first have to wake a thread on a busy machine.
	 * Bounded, so one caller is not held for long. */
	bool chaining = !announce && !rc && !w->failed && w->stage[w->active].nblocks > 0 &&
			w->policy == PMWAL_COMMIT_DURABLE && chain + 1 < WAL_LEAD_CHAIN_MAX;

	retire(w, chaining ? s : NULL);
	bool retired = !s->done; /* else an earlier group is still in flight */

	if (PMWAL_BUG(CALLBACK_LEADING))
		wal_run_callbacks(
		    w); /* the old way: a callback that waits waits on itself */
	pthread_cond_broadcast(&w->cv_done);
	if (chaining && can_lead(w)) {
		chain++;
		done = retired ? s : NULL;
		goto again;
	}
	if (chaining && retired)
		pthread_cond_broadcast(&s->cv); /* kept asleep for a chain not taken */
	if (w->failed) {
		wal_wake_all(w);
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
	wal_run_callbacks(w);
	return rc;
}

/* The group in flight that holds @lsn, or NULL (mu held). */
static struct stage *stage_holding(struct pmwal *w, uint64_t lsn)
{
	for (uint32_t i = w->inflight; i > 0; i--) {
		struct stage *st = in_flight(w, i);

		if (st->nrecords && lsn >= st->first_lsn && lsn <= st->last_lsn)
			return st;
	}
	return NULL;
}

/* Waits until @lsn is durable, leading groups as needed (mu held). */
int wal_wait_durable(struct pmwal *w, uint64_t lsn)
{
	bool spun = false;

	while (w->durable_lsn < lsn) {
		if (w->failed)
			return wal_failed_rc(w);
		struct stage *open = &w->stage[w->active];
		bool in_open = open->nrecords && lsn >= open->first_lsn;

		if (in_open && can_lead(w)) {
			wal_lead(w);
			continue;
		}
		struct stage *at = in_open ? open : stage_holding(w, lsn);

		if (!at && !w->inflight && !w->direct_blocks) {
			/* Neither durable, in flight nor staged: a broken
			 * invariant, answered, never spun on. */
			wal_set_err(w, "%s: LSN %llu is neither durable nor staged",
				    w->target, (unsigned long long)lsn);
			return wal_failed_rc(w);
		}
		if (!spun) {
			spun = true;
			if (spin_for_durable(w, lsn))
				continue;
		}
		/* In a group in flight (woken when it retires), staged in the
		 * open group (woken to lead it, or when it retires), or in a
		 * direct group (cv_done). */
		w->sleepers++;
		pthread_cond_wait(at ? &at->cv : &w->cv_done, &w->mu);
		w->sleepers--;
	}
	return 0;
}

/*
 * Records nobody waits for were staged (mu held): wake a committer if one
 * could lead them now, or the leader gathering them. Otherwise the end of a
 * group in flight wakes one (wal_lead); waking a committer that cannot lead
 * cost a futex round trip per append (4 committers: 2.5x the CPU per append).
 */
static void wake_committer(struct pmwal *w)
{
	if (can_lead(w) || w->gathering)
		pthread_cond_signal(&w->cv_work);
}

/* The background committer: writes staged records nobody waits for. */
static void *committer_main(void *arg)
{
	struct pmwal *w = arg;

	pthread_mutex_lock(&w->mu);
	while (!w->closing) {
		if (w->stage[w->active].nblocks > 0 && can_lead(w) && !w->failed) {
			wal_lead(w);
			continue;
		}
		if (w->done_cbs && !w->cb_running) { /* failed ones nobody ran */
			wal_run_callbacks(w);
			continue;
		}
		pthread_cond_wait(&w->cv_work, &w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* One committer per group that may be in flight: records nobody waits for
 * (buffered, async) fill several group writes at once too. Fewer than that
 * (a thread refused) still work, with fewer groups in flight. */
int wal_start_committer(struct pmwal *w)
{
	while (w->committers < w->inflight_max) {
		int rc = pthread_create(&w->committer[w->committers], NULL, committer_main, w);

		if (rc)
			return w->committers ? 0 : -rc;
		w->committers++;
	}
	return 0;
}

/* ---- direct groups on mapped media --------------------------------------- */

/*
 * On a mapped medium (pmem, PMR) a blocking appender that finds no staged
 * group writes its records as a group of its own, straight into the mapping,
 * and up to WAL_DIRECT_GROUPS appenders do so at once. Each one:
 *
 *   1. reserves LSNs, blocks and a seal ticket under mu (a few loads and
 *      stores), and lets go of it;
 *   2. lays its blocks out (format.h's wal_layout): block headers and short
 *      pieces into its own scratch images, payload runs of at least
 *      WAL_DIRECT_RUN bytes left in the caller's buffer;
 *   3. in ticket order, seals: each block's checksum over the same pieces
 *      (wal_block_seal_pieces), continuing the hash chain from the group
 *      before (the only serial step: a 4 KiB hash, no lock held, waited for
 *      by spinning on a spare core);
 *   4. stores every piece with non-temporal stores and issues its own
 *      barrier: a barrier covers the stores of the thread that issues it;
 *   5. retires, under mu, every finished group in LSN order: a record is
 *      acknowledged only once its group and every earlier one are durable.
 *
 * So appenders copy and flush concurrently and sleep only when their
 * predecessor was preempted. The blocks are byte for byte those the staging
 * path writes. Direct groups and staged groups never overlap: a direct group
 * starts only while no staged group is open or in flight, and a staged group
 * is led only once every direct group is retired. Several direct groups in
 * flight are what format.c's GROUPS AND ACKNOWLEDGEMENT allows (at most
 * WAL_INFLIGHT_MAX, each carrying the durable_lsn of its reservation).
 */

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

/* One appender's direct group, from reservation to retirement. */
struct dgroup {
	uint8_t *img; /* WAL_DIRECT_BLOCKS scratch images */
	struct dblock blk[WAL_DIRECT_BLOCKS];
	struct wal_io io[WAL_DIRECT_BLOCKS * (WAL_DIRECT_SEGS + 1)];
	int nio;
	uint64_t seq0, first, last, ticket, hint;
	uint32_t n;
	int rc;
	bool done; /* its barrier returned (or failed): rc is final */
	uint8_t bug_word[8]; /* seeded bug TORN_COMMIT_WORD only */
	struct wal_io bug_io;
};

_Static_assert(WAL_DIRECT_SEGS <= WAL_SEAL_PIECES_MAX, "a block's pieces fit the sealer");
_Static_assert(WAL_DIRECT_GROUPS <= WAL_INFLIGHT_MAX,
	       "direct groups in flight stay inside recovery's look-ahead");

int wal_direct_init(struct pmwal *w)
{
	/* Groups of a microsecond: waiters spin first, one per spare core.
	 * Direct groups one per core: an appender beyond that finds every core
	 * busy and would sleep for its turn, a futex round trip per append (4
	 * threads on 2 cores with 4 direct groups: 0.8M appends/s, with 2:
	 * 1.3M). It stages instead, and its group is written by one leader. */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	w->spin_max = cpus > 1 ? (uint32_t)(cpus - 1) : 0;
	w->direct_max = cpus < 1 ? 1 : cpus > (long)WAL_DIRECT_GROUPS ? WAL_DIRECT_GROUPS
								: (uint32_t)cpus;
	w->dg = calloc(WAL_DIRECT_GROUPS, sizeof(*w->dg));
	if (!w->dg)
		return -ENOMEM;
	for (int i = 0; i < (int)WAL_DIRECT_GROUPS; i++) {
		w->dg[i].img = wal_alloc_io((size_t)WAL_DIRECT_BLOCKS * WAL_BLOCK_BYTES);
		if (!w->dg[i].img)
			return -ENOMEM;
	}
	return 0;
}

void wal_direct_free(struct pmwal *w)
{
	if (!w->dg)
		return;
	for (int i = 0; i < (int)WAL_DIRECT_GROUPS; i++)
		free(w->dg[i].img);
	free(w->dg);
	w->dg = NULL;
}

/* Blocks that @count records take as one group, or 0 if one of them is not
 * a valid record for this log. */
static uint64_t layout_blocks(const struct pmwal *w, const struct iovec *recs, int count)
{
	struct wal_layout l = {0, 0};

	for (int i = 0; i < count; i++) {
		if (recs[i].iov_len == 0 || recs[i].iov_len > w->sb.record_bytes_max)
			return 0;
		wal_layout_add(&l, recs[i].iov_len);
	}
	return l.nblocks;
}

static void db_begin(struct dblock *d, uint8_t *img, uint64_t lsn)
{
	d->img = img;
	wal_block_begin(d->img, lsn);
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

/* Bytes of the image the checksum's head covers: the header and a scratch
 * piece right after it. */
static uint32_t db_head(const struct dblock *d)
{
	return WAL_HDR_BYTES + (d->nseg && d->seg[0].scratch ? d->seg[0].len : 0);
}

/* Ends the layout of block @d in ring slot @slot: appends its pieces to
 * @g's stores, the header's line last. */
static void db_end(struct dgroup *g, struct dblock *d, uint64_t slot)
{
	uint64_t base = wal_slot_offset(slot);
	int first = d->nseg && d->seg[0].scratch; /* stored with the header */

	wal_block_set_used(d->img, d->fill);
	for (int i = first; i < d->nseg; i++) {
		const struct dseg *s = &d->seg[i];

		if (!s->scratch) {
			g->io[g->nio++] = (struct wal_io){s->src, s->len, base + s->off};
			continue;
		}
		/* Whole lines of the image: their other bytes are the block's. */
		uint32_t lo = s->off & ~63u, hi = (s->off + s->len + 63) & ~63u;

		g->io[g->nio++] = (struct wal_io){d->img + lo, hi - lo, base + lo};
	}
	g->io[g->nio++] = (struct wal_io){d->img, (db_head(d) + 63) & ~63u, base};
}

/* Places and seals block @d as block @idx of @g after the block whose
 * checksum is @prev; returns its checksum. */
static uint64_t db_seal(const struct pmwal *w, const struct dgroup *g, struct dblock *d,
			uint32_t idx, uint64_t prev)
{
	uint64_t seq = g->seq0 + idx;
	struct iovec pv[WAL_DIRECT_SEGS];
	int first = d->nseg && d->seg[0].scratch, np = 0;

	wal_block_place(d->img, &(struct wal_block_pos){
				    .log_id = w->sb.log_id,
				    .seq = seq,
				    .prev_checksum = prev,
				    .durable_lsn = g->hint,
				    .epoch = w->sb.epoch,
				    .group_index = idx,
				    .group_blocks = g->n,
				});
	for (int i = first; i < d->nseg; i++)
		pv[np++] = (struct iovec){(void *)d->seg[i].src, d->seg[i].len};
	return wal_block_seal_pieces(d->img, db_head(d), pv, np, seq % w->sb.capacity_blocks);
}

/* Step 2: lays @count records from LSN g->first out as g's blocks. */
static void direct_layout(struct pmwal *w, struct dgroup *g, const struct iovec *recs,
			  int count)
{
	struct wal_layout lay = {0, 0}; /* d->fill follows lay.fill */
	struct dblock *d = NULL;
	uint64_t lsn = g->first, cap = w->sb.capacity_blocks;
	uint32_t idx = 0;

	g->nio = 0;
	for (int r = 0; r < count; r++, lsn++) {
		const uint8_t *src = recs[r].iov_base;
		size_t len = recs[r].iov_len;
		uint8_t rec_hdr[WAL_REC_HDR_BYTES];

		if (wal_layout_record(&lay)) {
			if (d)
				db_end(g, d, (g->seq0 + idx++) % cap);
			d = &g->blk[idx];
			db_begin(d, g->img + (size_t)idx * WAL_BLOCK_BYTES, lsn);
		}
		wal_block_start_record(d->img, lay.fill, lsn);
		wal_record_len_put(rec_hdr, (uint32_t)len);
		db_put(d, rec_hdr, WAL_REC_HDR_BYTES);
		lay.fill += WAL_REC_HDR_BYTES;
		while (len > 0) {
			bool new_block;
			uint32_t take = wal_layout_take(&lay, len, &new_block);

			if (new_block) {
				db_end(g, d, (g->seq0 + idx++) % cap);
				d = &g->blk[idx];
				db_begin(d, g->img + (size_t)idx * WAL_BLOCK_BYTES, lsn);
			}
			db_put(d, src, take);
			lay.fill += take;
			src += take;
			len -= take;
		}
	}
	assert(idx + 1 == g->n);
	db_end(g, d, (g->seq0 + idx) % cap);
}

/* Step 4: stores g's pieces (the seeded bugs break exactly this). */
static int direct_store(struct pmwal *w, struct dgroup *g)
{
	int nio = g->nio;

	if (PMWAL_BUG(LAST_LINE_UNFLUSHED)) {
		/* The last piece (the last block's header line) by a plain store:
		 * visible in the mapping, never flushed. */
		struct wal_io *l = &g->io[--nio];

		memcpy((uint8_t *)w->dev->ops->map(w->dev) + l->off, l->buf, l->len);
	}
	if (PMWAL_BUG(COMMIT_WORD_FIRST)) {
		/* The last block's header (its checksum commits the group) made
		 * durable first, the payload after it and never drained. */
		int rc = w->dev->ops->store(w->dev, &g->io[nio - 1], 1);

		if (!rc)
			rc = w->dev->ops->barrier(w->dev);
		if (!rc)
			rc = w->dev->ops->store(w->dev, g->io, nio - 1);
		return rc;
	}
	if (PMWAL_BUG(TORN_COMMIT_WORD)) {
		/* The checksum as two 4-byte stores: the high half goes after
		 * the barrier (append_direct), the low half now. */
		struct wal_io *l = &g->io[nio - 1];

		memcpy(g->bug_word, l->buf, 8);
		g->bug_io = (struct wal_io){g->bug_word + 4, 4, l->off + 4};
		wal_put32((uint8_t *)l->buf + 4, 0);
	}
	return w->dev->ops->store(w->dev, g->io, nio);
}

/*
 * Step 5 (mu held): retires, oldest first, every direct group whose barrier
 * returned, up to the first that has not. A failed one fails the handle, and
 * the groups after it are never acknowledged, durable or not.
 */
static void retire_direct(struct pmwal *w)
{
	bool any = false;

	while (w->dhead != w->dtail) {
		struct dgroup *g = &w->dg[w->dhead % WAL_DIRECT_GROUPS];

		if (!g->done)
			break;
		if (g->rc || !w->failed)
			group_done(w, g->rc, g->seq0, g->n, g->first, g->last);
		w->direct_blocks -= g->n;
		w->dhead++;
		any = true;
	}
	/* Whoever waits for these records (a later direct group, pmwal_sync,
	 * pmwal_wait, close) sleeps on cv_done: no stage holds them. */
	if (any)
		pthread_cond_broadcast(&w->cv_done);
}

/*
 * The caller's records as a direct group (mu held; returns with mu held).
 * -EAGAIN: not possible now (a staged group open or in flight, all direct
 * groups taken, no room, a bad record): stage them instead, which waits or
 * reports exactly what is wrong.
 */
static int append_direct(struct pmwal *w, const struct iovec *recs, int count,
			 uint64_t bytes, uint64_t *first)
{
	if (w->inflight || w->gathering || w->stage[w->active].nblocks || w->failed ||
	    w->closing || w->dtail - w->dhead >= w->direct_max)
		return -EAGAIN;
	uint64_t n = layout_blocks(w, recs, count);

	if (n == 0 || n > WAL_DIRECT_BLOCKS || n > w->stage[0].cap_blocks ||
	    w->next_seq - w->head_seq + staged_blocks(w) + n > w->sb.capacity_blocks)
		return -EAGAIN;
	/* 1. Reserve. */
	struct dgroup *g = &w->dg[w->dtail++ % WAL_DIRECT_GROUPS];

	g->n = (uint32_t)n;
	g->seq0 = w->lead_seq;
	g->first = w->next_lsn;
	g->last = g->first + (uint64_t)count - 1;
	g->ticket = w->tickets++;
	g->hint = PMWAL_BUG(TAIL_BEFORE_DURABLE) ? g->last : w->durable_lsn;
	g->rc = 0;
	g->done = false;
	w->direct_blocks += g->n;
	w->lead_seq += n;
	w->next_lsn += (uint64_t)count;
	count_appends(w, count, bytes);
	*first = g->first;
	uint64_t last = g->last; /* g is reused once retired */

	pthread_mutex_unlock(&w->mu);

	/* 2. Lay out; 3. seal, in ticket order. */
	direct_layout(w, g, recs, count);
	turn_wait(w, g->ticket);
	uint64_t prev = w->prev_checksum;

	for (uint32_t i = 0; i < g->n; i++)
		prev = db_seal(w, g, &g->blk[i], i, prev);
	w->prev_checksum = prev;
	turn_pass(w);

	/* 4. Store and make durable. */
	pthread_rwlock_rdlock(&w->io_lock);
	if (PMWAL_BUG(ACK_BEFORE_FLUSH)) {
		pthread_mutex_lock(&w->mu);
		publish_durable(w, last);
		pthread_mutex_unlock(&w->mu);
	}
	wal_retake_lock(w);
	/* One group in WAL_STATS_SAMPLE has its write timed (pmwal_stats). */
	uint64_t t0 = g->ticket % WAL_STATS_SAMPLE ? 0 : stats_clock();
	int rc = wal_status_begin_write(w); /* a writer taken over writes nothing */
	bool began = !rc;

	if (!rc)
		rc = direct_store(w, g);

	/* A later group's barrier would not do: it covers only the stores of
	 * the thread that issues it. */
	bool lean = PMWAL_BUG(SHARED_BARRIER) &&
		    __atomic_load_n(&w->tickets, __ATOMIC_RELAXED) > g->ticket + 1;

	if (!rc && !lean && !PMWAL_BUG(NO_DRAIN_BEFORE_COMMIT) &&
	    !PMWAL_BUG(COMMIT_WORD_FIRST))
		rc = w->dev->ops->barrier(w->dev);
	if (!rc && PMWAL_BUG(TORN_COMMIT_WORD)) /* the word's second half, late */
		rc = w->dev->ops->store(w->dev, &g->bug_io, 1);
	if (PMWAL_BUG(IGNORE_FSYNC_ERROR))
		rc = 0;
	if (began)
		wal_status_end_write(w);
	pthread_rwlock_unlock(&w->io_lock);
	uint64_t took = t0 && !rc ? stats_clock() - t0 : 0;

	/* 5. Retire in LSN order; wait for the groups before this one. */
	pthread_mutex_lock(&w->mu);
	if (took)
		wal_stats_latency(&w->stats, took);
	g->rc = rc;
	g->done = true;
	if (PMWAL_BUG(ACK_OUT_OF_ORDER) && !rc && !w->failed && last > w->durable_lsn)
		publish_durable(w, last); /* earlier direct groups may be in flight */
	retire_direct(w);
	if (w->durable_lsn < last && !w->failed && w->spin_max) {
		/* Only the groups just before this one: they are written by
		 * at most direct_max - 1 running threads, so spin for them
		 * even while others sleep (those wait for all of us). Refused
		 * that, two appenders fell into sleeping for each other on
		 * every append, for good (0.8M appends/s instead of 1.9M). */
		pthread_mutex_unlock(&w->mu);
		(void)spin_until(w, &w->durable_lsn, last);
		pthread_mutex_lock(&w->mu);
	}
	while (w->durable_lsn < last && !w->failed) {
		w->sleepers++;
		pthread_cond_wait(&w->cv_done, &w->mu);
		w->sleepers--;
	}
	if (w->failed && w->durable_lsn < last) {
		wal_wake_all(w);
		return wal_failed_rc(w);
	}
	/* Appenders that came meanwhile staged their records: write them now. */
	if (w->stage[w->active].nblocks > 0 && can_lead(w))
		wal_lead(w);
	return 0;
}

/* ---- public append API -------------------------------------------------- */

/*
 * The arguments of every append, checked before anything is staged: -EINVAL
 * or PMWAL_ETOOBIG with a message naming the argument. @count is not bounded
 * by IOV_MAX (the iovecs are records, not one writev's pieces): a batch is
 * bounded by what one group holds (stage_add, PMWAL_ETOOBIG). With count
 * below 2^31 and each record at most 1 GiB, the sum of the lengths fits in
 * 64 bits. @fn names the caller's entry point.
 */
static int check_recs(struct pmwal *w, const char *fn, const struct iovec *recs, int count,
		      uint64_t *bytes)
{
	*bytes = 0;
	if (!recs) {
		wal_set_err(w, "%s: recs is NULL", fn);
		return -EINVAL;
	}
	if (count < 1) {
		wal_set_err(w, "%s: count %d; at least one record", fn, count);
		return -EINVAL;
	}
	for (int i = 0; i < count; i++) {
		if (recs[i].iov_len == 0) {
			wal_set_err(w, "%s: record %d is empty (iov_len 0); a record is 1 .. "
				       "%u bytes",
				    fn, i, w->sb.record_bytes_max);
			return -EINVAL;
		}
		if (!recs[i].iov_base) {
			wal_set_err(w, "%s: record %d: iov_base is NULL with iov_len %zu", fn,
				    i, recs[i].iov_len);
			return -EINVAL;
		}
		if (recs[i].iov_len > w->sb.record_bytes_max) {
			wal_set_err(w, "%s: %s: record %d of %zu bytes; this log's maximum is %u",
				    fn, w->target, i, recs[i].iov_len, w->sb.record_bytes_max);
			return PMWAL_ETOOBIG;
		}
		*bytes += recs[i].iov_len;
	}
	return 0;
}

static int append_common(struct pmwal *w, const char *fn, const struct iovec *recs,
			 int count, uint64_t *first, bool wait)
{
	uint64_t lsn = 0, bytes;
	int rc;

	if (!w)
		return -EINVAL;
	if (w->flags & PMWAL_OPEN_READONLY)
		return PMWAL_EREADONLY;
	rc = check_recs(w, fn, recs, count, &bytes);
	if (rc)
		return rc;
	pthread_mutex_lock(&w->mu);
	if (wait && w->dg && !w->window_us) {
		rc = append_direct(w, recs, count, bytes, &lsn);
		if (rc != -EAGAIN) {
			if (!rc && first)
				*first = lsn;
			goto out;
		}
	}
	rc = stage_add(w, recs, count, &lsn);
	if (rc)
		goto out;
	count_appends(w, count, bytes);
	if (first)
		*first = lsn;
	if (wait)
		rc = wal_wait_durable(w, lsn + (uint64_t)count - 1);
	else
		wake_committer(w);
out:
	pthread_mutex_unlock(&w->mu);
	return rc;
}

int pmwal_append(struct pmwal *w, const void *data, size_t len, uint64_t *lsn_out)
{
	struct iovec iov = {(void *)data, len};

	return append_common(w, "pmwal_append", &iov, 1, lsn_out,
			     w && w->policy == PMWAL_COMMIT_DURABLE);
}

int pmwal_appendv(struct pmwal *w, const struct iovec *recs, int count,
		  uint64_t *first_lsn_out)
{
	return append_common(w, "pmwal_appendv", recs, count, first_lsn_out,
			     w && w->policy == PMWAL_COMMIT_DURABLE);
}

static int appendv_async(struct pmwal *w, const char *fn, const struct iovec *recs,
			 int count, pmwal_durable_fn cb, void *arg, uint64_t *first_lsn_out);

int pmwal_append_async(struct pmwal *w, const void *data, size_t len, pmwal_durable_fn cb,
		       void *arg, uint64_t *lsn_out)
{
	struct iovec iov = {(void *)data, len};

	return appendv_async(w, "pmwal_append_async", &iov, 1, cb, arg, lsn_out);
}

int pmwal_appendv_async(struct pmwal *w, const struct iovec *recs, int count,
			pmwal_durable_fn cb, void *arg, uint64_t *first_lsn_out)
{
	return appendv_async(w, "pmwal_appendv_async", recs, count, cb, arg, first_lsn_out);
}

static int appendv_async(struct pmwal *w, const char *fn, const struct iovec *recs,
			 int count, pmwal_durable_fn cb, void *arg, uint64_t *first_lsn_out)
{
	uint64_t lsn, bytes;
	int rc;

	if (!w)
		return -EINVAL;
	if (w->flags & PMWAL_OPEN_READONLY)
		return PMWAL_EREADONLY;
	if (!cb) {
		wal_set_err(w, "%s: cb is NULL; the callback is required", fn);
		return -EINVAL;
	}
	rc = check_recs(w, fn, recs, count, &bytes);
	if (rc)
		return rc;
	/* Allocated before staging: a record is never staged unannounced. */
	struct async_cb *c = malloc(sizeof(*c));

	if (!c)
		return -ENOMEM;
	pthread_mutex_lock(&w->mu);
	rc = wal_start_committer(w);
	if (!rc)
		rc = stage_add(w, recs, count, &lsn);
	if (!rc) {
		struct stage *s = &w->stage[w->active];

		/* Called with the last LSN: it durable, the batch is. */
		*c = (struct async_cb){lsn + (uint64_t)count - 1, cb, arg, 0, NULL};
		*s->cbs_tail = c;
		s->cbs_tail = &c->next;
		c = NULL;
		count_appends(w, count, bytes);
		if (first_lsn_out)
			*first_lsn_out = lsn;
		wake_committer(w);
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
		wal_set_err(w, "%s: wait for LSN %llu, but the next LSN is %llu",
			    w->target, (unsigned long long)lsn,
			    (unsigned long long)w->next_lsn);
		rc = PMWAL_ERANGE;
	} else {
		rc = wal_wait_durable(w, lsn);
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
	rc = w->failed ? wal_failed_rc(w) : wal_wait_durable(w, w->next_lsn - 1);
	pthread_mutex_unlock(&w->mu);
	return rc;
}

uint64_t pmwal_durable_lsn(struct pmwal *w)
{
	/* Lock-free: see publish_durable(). */
	return w ? __atomic_load_n(&w->durable_lsn, __ATOMIC_ACQUIRE) : 0;
}
