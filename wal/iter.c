// SPDX-License-Identifier: MIT
/*
 * iter.c - iterators: read the durable records of an open log in LSN order,
 * following the log as it grows, and past damage when salvaging.
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

#define WAL_ITER_CHUNK_BLOCKS 64u /* 256 KiB read ahead per iterator */

struct pmwal_iter {
	struct pmwal *w;
	uint64_t seq;	   /* next block to read */
	struct wal_frame fr; /* the record stream (format.h) */
	bool synced;	     /* fr.lsn_next is known: the next block continues it */
	uint64_t from_lsn;
	const uint8_t *block; /* the current block, inside chunk */
	uint8_t *chunk;	      /* blocks read ahead, aligned for O_DIRECT */
	uint64_t chunk_seq;   /* seq of chunk's first block */
	uint32_t chunk_n;     /* blocks in chunk (0: empty) */
	uint8_t *rec;	      /* reassembly buffer */
	size_t rec_cap;
	size_t got; /* bytes of the current record in rec */
	bool have_block;
	uint64_t last_lsn; /* the last record returned (0: none yet) */
};
/* ---- iterators ---------------------------------------------------------- */

static int follow_refresh(struct pmwal *w, bool at_open);

int pmwal_iter_open(struct pmwal *w, uint64_t from_lsn, struct pmwal_iter **out)
{
	struct pmwal_iter *it;
	uint64_t head_seq, end_seq, head_lsn, next_lsn;
	struct wal_sb sb;
	int rc;

	if (!w || !out)
		return -EINVAL;
	*out = NULL;
	(void)follow_refresh(w, false); /* a follower: where its writer is now */
	pthread_mutex_lock(&w->mu);
	head_seq = w->head_seq;
	head_lsn = w->head_lsn;
	end_seq = w->next_seq;
	next_lsn = w->next_lsn;
	sb = w->sb; /* a follower's is replaced at a takeover */
	pthread_mutex_unlock(&w->mu);
	if (from_lsn == 0)
		from_lsn = head_lsn;
	if (from_lsn < head_lsn || from_lsn > next_lsn) {
		wal_set_err(w, "%s: iterator from LSN %llu, but the log holds %llu..%llu",
			    w->target, (unsigned long long)from_lsn,
			    (unsigned long long)head_lsn,
			    (unsigned long long)(next_lsn - 1));
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
		rc = wal_locate(w->dev, &sb, head_seq, end_seq, from_lsn, &it->seq);
		if (rc == PMWAL_ERANGE)
			it->seq = end_seq;
		else if (rc) {
			pmwal_iter_close(it);
			return rc;
		}
	}
	it->fr.rec_max = sb.record_bytes_max;
	it->synced = false; /* the first block read starts the walk */
	*out = it;
	return 0;
}

/* ---- following a writer in another process ------------------------------ */

/*
 * A read-only handle adopts what its log's writer published durable on the
 * status page (status.c): a later durable end, a later head, and after a
 * takeover the new writer's superblock, once that is written (its blocks
 * carry an epoch the old superblock never had). Only forward; at open
 * (@at_open) it also cuts the end recovery found back to the published one:
 * a live writer's last group may be written and not yet durable.
 * 1: the durable end or head moved, 0: not.
 */
/*
 * Without a writer publishing (none open, or one that closed and took its
 * page along), the superblock says how far the log is durable: a clean
 * close, a recovery and a release each write its end (format.c, end_seq).
 */
static int follow_superblock(struct pmwal *w)
{
	struct wal_sb sb;
	char err[256];
	int moved = 0;

	if (wal_read_sb(w->dev, &sb, err, sizeof(err)))
		return 0;
	pthread_mutex_lock(&w->mu); /* w->sb is another thread's to replace too */
	if (sb.log_id == w->sb.log_id && sb.epoch >= w->sb.epoch && sb.sb_seq > w->sb.sb_seq) {
		w->sb = sb;
		if (sb.head_seq > w->head_seq) {
			w->head_seq = sb.head_seq;
			w->head_lsn = sb.head_lsn;
			moved = 1;
		}
		if (sb.end_seq > w->next_seq && sb.end_lsn >= w->next_lsn) {
			w->next_seq = sb.end_seq;
			w->next_lsn = sb.end_lsn;
			w->durable_lsn = sb.end_lsn - 1;
			moved = 1;
		}
	}
	pthread_mutex_unlock(&w->mu);
	return moved;
}

static int follow_refresh(struct pmwal *w, bool at_open)
{
	struct wal_status_snap s;
	int moved = 0;

	if (!(w->flags & PMWAL_OPEN_READONLY) || wal_status_read(w, &s))
		return 0;
	if (at_open && s.open && s.live && wal_status_writer_gone(w, s.pid))
		s.live = false; /* a killed writer's page, or another log's copy's */
	if (s.epoch == 0 || !s.live)
		return 0; /* claimed, nothing published yet; or no live writer */
	pthread_mutex_lock(&w->mu);
	uint32_t epoch = w->sb.epoch;

	pthread_mutex_unlock(&w->mu);
	if (s.epoch > epoch) {
		struct wal_sb sb;
		char err[256];

		if (wal_read_sb(w->dev, &sb, err, sizeof(err)) || sb.epoch < s.epoch)
			return 0; /* its superblock is not written yet: later */
		pthread_mutex_lock(&w->mu);
		bool same = sb.log_id == w->sb.log_id;

		if (same && sb.epoch > w->sb.epoch)
			w->sb = sb;
		pthread_mutex_unlock(&w->mu);
		if (!same)
			return 0;
		epoch = sb.epoch;
	}
	if (s.epoch != epoch)
		return 0;
	pthread_mutex_lock(&w->mu);
	if (at_open && s.open && s.durable_seq >= w->head_seq && s.durable_seq < w->next_seq &&
	    s.durable_lsn < w->next_lsn) {
		w->next_seq = s.durable_seq;
		w->durable_lsn = s.durable_lsn;
		w->next_lsn = s.durable_lsn + 1;
	}
	if (s.head_seq > w->head_seq) {
		w->head_seq = s.head_seq;
		w->head_lsn = s.head_lsn;
		moved = 1;
	}
	if (s.durable_seq > w->next_seq && s.durable_lsn + 1 >= w->next_lsn) {
		w->next_seq = s.durable_seq;
		w->durable_lsn = s.durable_lsn;
		w->next_lsn = s.durable_lsn + 1;
		moved = 1;
	}
	pthread_mutex_unlock(&w->mu);
	return moved;
}

int wal_follow_refresh(struct pmwal *w)
{
	return follow_refresh(w, true);
}

/* The reader fell behind a release: say where the log starts now. */
static int behind_release(struct pmwal_iter *it, uint64_t head_lsn)
{
	wal_set_err(it->w,
		    "%s: the iterator's next block (seq %llu) was released and may be "
		    "overwritten: the log now starts at LSN %llu; resume from a "
		    "checkpoint at or after it",
		    it->w->target, (unsigned long long)it->seq, (unsigned long long)head_lsn);
	return PMWAL_ERANGE;
}

/* Reads and checks block it->seq; 0 ok, 1 not durable yet, < 0 error. */
static int iter_load(struct pmwal_iter *it, struct wal_block_hdr *h)
{
	struct pmwal *w = it->w;
	uint64_t end_seq, head_seq, head_lsn;
	struct wal_sb sb;

	pthread_mutex_lock(&w->mu);
	end_seq = w->next_seq;
	pthread_mutex_unlock(&w->mu);
	if (it->seq >= end_seq && follow_refresh(w, false)) {
		pthread_mutex_lock(&w->mu);
		end_seq = w->next_seq;
		pthread_mutex_unlock(&w->mu);
	}
	pthread_mutex_lock(&w->mu);
	head_seq = w->head_seq;
	head_lsn = w->head_lsn;
	sb = w->sb; /* a follower's changes at a takeover */
	pthread_mutex_unlock(&w->mu);
	if (it->seq < head_seq)
		return behind_release(it, head_lsn);
	if (it->seq >= end_seq)
		return 1;
	uint64_t slot = it->seq % sb.capacity_blocks;

	if (it->seq < it->chunk_seq || it->seq >= it->chunk_seq + it->chunk_n) {
		/* Read ahead up to the durable end, within one pass of the ring. */
		uint64_t n = end_seq - it->seq;

		if (n > WAL_ITER_CHUNK_BLOCKS)
			n = WAL_ITER_CHUNK_BLOCKS;
		if (n > sb.capacity_blocks - slot)
			n = sb.capacity_blocks - slot;
		int rc = w->dev->ops->read(w->dev, it->chunk, n * WAL_BLOCK_BYTES,
					   wal_slot_offset(slot));

		/* A release publishes its head before any group reuses the
		 * space: if the head is still at or below the first block read
		 * now, no block of the chunk was overwritten while it was read. */
		(void)follow_refresh(w, false);
		pthread_mutex_lock(&w->mu);
		head_seq = w->head_seq;
		head_lsn = w->head_lsn;
		pthread_mutex_unlock(&w->mu);
		if (it->seq < head_seq) {
			it->chunk_n = 0;
			return behind_release(it, head_lsn);
		}
		if (rc) {
			it->chunk_n = 0;
			return rc;
		}
		it->chunk_seq = it->seq;
		it->chunk_n = (uint32_t)n;
	}
	it->block = it->chunk + (it->seq - it->chunk_seq) * WAL_BLOCK_BYTES;
	enum wal_block_state st = wal_block_check(it->block, slot, it->seq, &sb, NULL, h);

	if (st == WAL_BLOCK_MISPLACED) {
		/* A later lap overwrote it: the reader fell behind a release. */
		return behind_release(it, head_lsn);
	}
	if (st != WAL_BLOCK_VALID) {
		wal_set_err(w, "%s: block seq %llu at offset %llu: %s", w->target,
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

	it->synced = false; /* whatever comes next starts a new walk */
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
		if (h.group_index == 0 && h.first_rec == 0 &&
		    h.first_lsn > it->last_lsn) {
			it->synced = false; /* the walk starts again here */
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
	if (!lsn || !data || !len) {
		wal_set_err(it->w, "pmwal_iter_next: %s is NULL", !lsn ? "lsn" : !data ? "data" : "len");
		return -EINVAL;
	}
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
	struct wal_piece p;
	int rc;

	if (!it)
		return -EINVAL;
	for (;;) {
		if (!it->have_block) {
			bool first = !it->synced;

			rc = iter_load(it, &h);
			if (rc > 0 && it->synced && it->fr.rec_left) {
				/* Durable groups never end inside a record. */
				wal_set_err(it->w,
					    "%s: record LSN %llu claims %u bytes, more than "
					    "the durable log holds",
					    it->w->target,
					    (unsigned long long)(it->fr.lsn_next - 1),
					    it->fr.rec_bytes);
				it->synced = false; /* said once */
				return PMWAL_ECORRUPT;
			}
			if (rc)
				return rc > 0 ? 0 : rc;
			if (!wal_frame_enter(&it->fr, &h, first)) {
				wal_set_err(it->w,
					    "%s: block seq %llu does not continue the records "
					    "before it (LSN %llu%s): its framing is damaged",
					    it->w->target, (unsigned long long)it->seq,
					    (unsigned long long)it->fr.lsn_next,
					    it->fr.rec_left ? ", a record going on" : "");
				return PMWAL_ECORRUPT;
			}
			/* A first block holding only the end of an earlier record
			 * leaves the walk where it was: the next one starts it. */
			it->synced = !first || h.first_rec != WAL_NO_RECORD;
			it->have_block = true;
		}
		rc = wal_frame_next(&it->fr, it->block, &p);
		if (rc < 0) {
			it->have_block = false;
			wal_set_err(it->w, "%s: block seq %llu: a record length is damaged",
				    it->w->target, (unsigned long long)it->seq);
			return PMWAL_ECORRUPT;
		}
		if (rc == 0) {
			it->have_block = false;
			it->seq++;
			continue;
		}
		if (p.first) {
			rc = rec_reserve(it, p.rec_bytes);
			if (rc)
				return rc;
			it->got = 0;
		}
		/* it->block moves as blocks load: copied now, never held. */
		memcpy(it->rec + it->got, it->block + WAL_HDR_BYTES + p.off, p.len);
		it->got += p.len;
		if (!p.last || p.lsn < it->from_lsn)
			continue;
		*lsn = p.lsn;
		*data = it->rec;
		*len = p.rec_bytes;
		return 1;
	}
}

/* Whether pmwal_iter_next() has something to say: a record, or an error. */
static bool iter_ready(struct pmwal_iter *it)
{
	struct pmwal *w = it->w;
	bool ready;

	if (it->have_block)
		return true;
	(void)follow_refresh(w, false);
	pthread_mutex_lock(&w->mu);
	ready = it->seq < w->next_seq || it->seq < w->head_seq || w->failed || w->closing;
	pthread_mutex_unlock(&w->mu);
	return ready;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#define WAL_FOLLOW_ROUND_MS 100 /* a follower looks for a new page this often */

int pmwal_iter_wait(struct pmwal_iter *it, int timeout_ms)
{
	if (!it)
		return -EINVAL;
	if (timeout_ms < -1) {
		wal_set_err(it->w, "pmwal_iter_wait: timeout_ms %d; -1 (no limit) or more",
			    timeout_ms);
		return -EINVAL;
	}
	struct pmwal *w = it->w;
	bool follower = w->flags & PMWAL_OPEN_READONLY;
	uint64_t t0 = mono_ms();

	for (;;) {
		uint32_t seen = wal_status_wake_word(w);

		if (iter_ready(it))
			return 1;
		uint64_t waited = mono_ms() - t0;

		if (timeout_ms >= 0 && waited >= (uint64_t)timeout_ms)
			return 0;
		uint32_t ms = WAL_FOLLOW_ROUND_MS;

		if (timeout_ms >= 0 && (uint64_t)timeout_ms - waited < ms)
			ms = (uint32_t)((uint64_t)timeout_ms - waited);
		if (ms == 0)
			ms = 1;
		if (w->st) {
			wal_status_sleep(w, seen, ms);
		} else if (!follower) {
			/* No page (sim:): this process's own groups wake us. */
			struct timespec until;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += (long)ms * 1000000;
			until.tv_sec += until.tv_nsec / 1000000000;
			until.tv_nsec %= 1000000000;
			pthread_mutex_lock(&w->mu);
			if (it->seq >= w->next_seq && !w->failed && !w->closing)
				pthread_cond_timedwait(&w->cv_done, &w->mu, &until);
			pthread_mutex_unlock(&w->mu);
		} else {
			wal_status_sleep(w, seen, ms < 10 ? ms : 10);
		}
		/* A follower whose writer closed (and removed its page) or never
		 * opened: the next writer's page is found by its path. */
		if (follower && wal_status_wake_word(w) == seen) {
			struct wal_status_snap snap;

			if (!w->st || wal_status_replaced(w))
				(void)wal_status_reattach(w);
			if (wal_status_read(w, &snap) || !snap.live ||
			    wal_status_writer_gone(w, snap.pid))
				(void)follow_superblock(w);
		}
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
