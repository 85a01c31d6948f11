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
		rc = wal_locate(w->dev, &w->sb, head_seq, end_seq, from_lsn, &it->seq);
		if (rc == PMWAL_ERANGE)
			it->seq = end_seq;
		else if (rc) {
			pmwal_iter_close(it);
			return rc;
		}
	}
	it->fr.rec_max = w->sb.record_bytes_max;
	it->synced = false; /* the first block read starts the walk */
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
	enum wal_block_state st = wal_block_check(it->block, slot, it->seq, &w->sb, NULL, h);

	if (st == WAL_BLOCK_MISPLACED) {
		/* A later lap overwrote it: the reader fell behind a release. */
		return PMWAL_ERANGE;
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

void pmwal_iter_close(struct pmwal_iter *it)
{
	if (!it)
		return;
	free(it->chunk);
	free(it->rec);
	free(it);
}
