// SPDX-License-Identifier: MIT
/*
 * recovery.c - the scan that tells a clean end from a torn tail from
 * corruption, by the decision table at the top of format.c; and the LSN to
 * block lookup that release and iterators use.
 *
 * Linear in the blocks between head and end (plus a bounded look-ahead window)
 * and bounded in memory: one read buffer of WAL_SCAN_CHUNK_BLOCKS blocks, or
 * none on mapped media, which are read in place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "seeded.h"

#define WAL_SCAN_CHUNK_BLOCKS 2048u /* 8 MiB a time... */
#define WAL_SCAN_PIECE_BLOCKS 256u  /* ...as 1 MiB reads in flight together */

/* Reads ring blocks by seq through a chunk cache (or the mapping). */
struct reader {
	struct wal_dev *dev;
	const struct wal_sb *sb;
	const uint8_t *map; /* the mapping (mapped media): blocks read in place */
	uint8_t *buf;
	uint64_t first_slot; /* slot of buf[0]; UINT64_MAX when empty */
	uint32_t nblocks;
};

void *wal_alloc_io(size_t bytes)
{
	void *p = NULL;

	if (posix_memalign(&p, WAL_BLOCK_BYTES, bytes ? bytes : WAL_BLOCK_BYTES))
		return NULL;
	return p;
}

static int reader_get(struct reader *r, uint64_t seq, const uint8_t **block)
{
	uint64_t n = r->sb->capacity_blocks;
	uint64_t slot = seq % n;

	if (r->map) {
		*block = r->map + wal_slot_offset(slot);
		return 0;
	}
	if (r->first_slot == UINT64_MAX || slot < r->first_slot ||
	    slot >= r->first_slot + r->nblocks) {
		uint64_t count =
		    n - slot < WAL_SCAN_CHUNK_BLOCKS ? n - slot : WAL_SCAN_CHUNK_BLOCKS;
		int rc;

		if (r->dev->ops->read_many && count % WAL_SCAN_PIECE_BLOCKS == 0 &&
		    count > WAL_SCAN_PIECE_BLOCKS)
			rc = r->dev->ops->read_many(
			    r->dev, r->buf,
			    WAL_SCAN_PIECE_BLOCKS * (size_t)WAL_BLOCK_BYTES,
			    wal_slot_offset(slot), (int)(count / WAL_SCAN_PIECE_BLOCKS));
		else
			rc = r->dev->ops->read(r->dev, r->buf, count * WAL_BLOCK_BYTES,
					       wal_slot_offset(slot));
		if (rc) {
			r->first_slot = UINT64_MAX;
			return rc;
		}
		r->first_slot = slot;
		r->nblocks = (uint32_t)count;
	}
	*block = r->buf + (slot - r->first_slot) * WAL_BLOCK_BYTES;
	return 0;
}

static bool all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* State of the walk through valid blocks. */
struct scan {
	struct reader rd;
	const struct wal_sb *sb;
	struct pmwal_report *rep;
	uint64_t seq;	   /* next block to read */
	uint64_t prev_sum; /* checksum of block seq-1 */
	bool have_prev;	   /* false at the head and after a salvage jump */
	uint32_t prev_epoch;
	bool in_group; /* the last valid block did not end its group */
	uint64_t group_start;
	uint32_t group_blocks;
	struct wal_frame fr; /* the record stream: next LSN, a record going on */
	uint64_t pend_records, pend_bytes, pend_first; /* current group, uncommitted */
	uint64_t last_lsn;			       /* last committed LSN, 0 if none */
	uint64_t tail_sum; /* checksum of the last block of the last complete group */
	uint64_t tail_seq; /* seq after the last complete group */
	uint64_t max_hint;
	bool at_end_checked; /* the walk passed end_seq and matched end_lsn */
	bool head_checked;   /* the head's group was walked and held head_lsn */
};

static void count_record(struct scan *s, uint64_t lsn, uint32_t len)
{
	if (lsn < s->sb->head_lsn)
		return; /* released: parsed for framing only */
	if (!s->pend_records)
		s->pend_first = lsn;
	s->pend_records++;
	s->pend_bytes += len;
}

/* Walks the records of a block whose header is valid; false if the framing
 * contradicts what came before (treated as a damaged block). */
static bool parse_block(struct scan *s, const uint8_t *block,
			const struct wal_block_hdr *h, bool first_of_walk)
{
	struct wal_piece p;
	int rc;

	if (!wal_frame_enter(&s->fr, h, first_of_walk))
		return false;
	while ((rc = wal_frame_next(&s->fr, block, &p)) > 0)
		if (p.first)
			count_record(s, p.lsn, p.rec_bytes);
	return rc == 0;
}

static void commit_group(struct scan *s, uint64_t last_block_sum)
{
	struct pmwal_report *rep = s->rep;

	if (s->pend_records) {
		if (!rep->first_lsn)
			rep->first_lsn = s->pend_first;
		rep->records += s->pend_records;
		rep->payload_bytes += s->pend_bytes;
		rep->last_lsn = s->fr.lsn_next - 1;
	}
	if (s->fr.lsn_next > 1 && s->fr.lsn_next - 1 >= s->sb->head_lsn)
		s->last_lsn = s->fr.lsn_next - 1;
	s->pend_records = s->pend_bytes = 0;
	s->tail_seq = s->seq + 1;
	s->tail_sum = last_block_sum;
}

/* Accepts block s->seq if it is valid and continues the chain and framing. */
static int step(struct scan *s, enum wal_block_state *state, bool *ok)
{
	const uint8_t *block;
	struct wal_block_hdr h;
	uint64_t slot = s->seq % s->sb->capacity_blocks;
	int rc = reader_get(&s->rd, s->seq, &block);

	*ok = false;
	if (rc)
		return rc;
	struct wal_chain prev = {s->prev_sum, s->prev_epoch};

	*state = wal_block_check(block, slot, s->seq, s->sb, s->have_prev ? &prev : NULL, &h);
	if (*state != WAL_BLOCK_VALID)
		return 0;
	/* The head (never chained: the walk starts there) holds head_lsn. */
	if (s->seq == s->sb->head_seq && !PMWAL_BUG(HEAD_UNCHECKED) &&
	    (h.first_lsn > s->sb->head_lsn ||
	     (s->seq == s->sb->end_seq && h.first_lsn != s->sb->head_lsn))) {
		*state = WAL_BLOCK_MISPLACED; /* does not hold the head's LSN */
		return 0;
	}
	bool first = !s->have_prev;

	if (first) {
		s->in_group = h.group_index > 0;
		s->group_start = s->seq - h.group_index;
		s->group_blocks = h.group_blocks;
	} else if (s->in_group != (h.group_index > 0) ||
		   (s->in_group && (s->seq - h.group_index != s->group_start ||
				    h.group_blocks != s->group_blocks))) {
		*state = WAL_BLOCK_MALFORMED;
		return 0;
	}
	if (!s->in_group) {
		s->group_start = s->seq;
		s->group_blocks = h.group_blocks;
	}
	if (!parse_block(s, block, &h, first)) {
		*state = WAL_BLOCK_MALFORMED;
		return 0;
	}
	s->rep->blocks++;
	if (h.durable_lsn > s->max_hint)
		s->max_hint = h.durable_lsn;
	s->prev_sum = h.checksum;
	s->prev_epoch = h.epoch;
	s->have_prev = true;
	if (h.group_index + 1 == h.group_blocks) {
		if (s->fr.rec_left) {
			*state = WAL_BLOCK_MALFORMED;
			return 0;
		}
		/* Release puts the head in the group where head_lsn starts: a
		 * head group that ends below it is a superblock that lies. */
		if (!s->head_checked && !PMWAL_BUG(HEAD_UNCHECKED) &&
		    s->fr.lsn_next <= s->sb->head_lsn) {
			*state = WAL_BLOCK_MISPLACED;
			return 0;
		}
		s->head_checked = true;
		commit_group(s, h.checksum);
		s->in_group = false;
	} else {
		s->in_group = true;
	}
	*ok = true;
	return 0;
}

/*
 * Looks past the first invalid block for a valid block of a group that
 * started after @group_start. Returns 0 and *@later_seq (0: none found);
 * *@same_group tells whether a block of @group_start's own group is valid;
 * *@later_hint is the largest durable_lsn among later groups' blocks. The
 * window reaches past WAL_INFLIGHT_MAX groups in flight beside q's: the
 * first group sealed after q's was acknowledged starts inside it. It stops
 * early once a later group attests more than @present.
 */
static int look_ahead(struct scan *s, uint64_t q, uint64_t group_start, uint64_t present,
		      uint64_t *later_seq, uint64_t *resume_seq, bool *same_group,
		      uint64_t *later_hint)
{
	uint64_t n = s->sb->capacity_blocks;
	uint64_t limit = q + (WAL_INFLIGHT_MAX + 1ull) * s->sb->group_blocks_max;

	if (limit > s->sb->head_seq + n - 1)
		limit = s->sb->head_seq + n - 1;
	*later_seq = *resume_seq = *later_hint = 0;
	*same_group = false;
	for (uint64_t t = q + 1; t <= limit; t++) {
		const uint8_t *block;
		struct wal_block_hdr h;
		int rc = reader_get(&s->rd, t, &block);

		if (rc)
			return rc;
		/* As in the walk, past end_seq only this epoch's blocks. */
		if (wal_block_check(block, t % n, t, s->sb, NULL, &h) != WAL_BLOCK_VALID)
			continue;
		if (h.epoch < s->prev_epoch && s->have_prev)
			continue; /* remains of an unacked tail cut off earlier */
		if (t - h.group_index == group_start)
			*same_group = true;
		if (t - h.group_index > group_start) {
			if (!*later_seq)
				*later_seq = t;
			if (h.group_index == 0 && !*resume_seq)
				*resume_seq = t;
			if (h.durable_lsn > *later_hint)
				*later_hint = h.durable_lsn;
			if (*resume_seq && *later_hint > present)
				break; /* proof found, and where salvage resumes */
		}
	}
	return 0;
}

/*
 * The LSN to name for damage at the block the scan is at: the first record
 * with bytes in it, or the head LSN when that record was released (the head
 * block and the next may begin inside records below the head, which are no
 * longer the log's; crashtest --mode faults --seed 35 named LSN 82 below head
 * 83 for one, while a damaged head block already named the head).
 */
static uint64_t damaged_lsn(const struct scan *s)
{
	uint64_t lsn = s->fr.rec_left ? s->fr.lsn_next - 1 : s->fr.lsn_next;

	return lsn > s->sb->head_lsn ? lsn : s->sb->head_lsn;
}

/*
 * Classifies the end at invalid block q by format.c's decision table: the
 * facts are gathered here, the verdict is the row's. *@resume tells whether
 * the scan goes on (salvage past proven damage).
 */
static int decide(struct scan *s, uint64_t q, enum wal_block_state state, bool salvage,
		  bool *resume)
{
	struct pmwal_report *rep = s->rep;
	uint64_t g0 = s->in_group ? s->group_start : q;
	uint64_t later, resume_seq, later_hint;
	const uint8_t *block;
	bool same;
	/* Records below the head were released: they count as present. */
	uint64_t present =
	    s->last_lsn > s->sb->head_lsn - 1 ? s->last_lsn : s->sb->head_lsn - 1;
	int rc = look_ahead(s, q, g0, present, &later, &resume_seq, &same, &later_hint);

	*resume = false;
	if (rc)
		return rc;
	rc = reader_get(&s->rd, q, &block);
	if (rc)
		return rc;
	if (PMWAL_BUG(STOP_AT_FIRST_BAD))
		later = later_hint = 0; /* nothing past the first bad block is looked at */
	if (PMWAL_BUG(ANY_LATER_GROUP_PROVES) && later && later_hint <= present)
		later_hint = present + 1; /* the one-group-in-flight rule */
	uint64_t hint = s->max_hint > later_hint ? s->max_hint : later_hint;
	bool zero = all_zero(block, WAL_BLOCK_BYTES);

	if (PMWAL_BUG(PARSE_ZERO_FILL) && state == WAL_BLOCK_CHECKSUM && zero)
		return 0; /* zero-filled space read as the clean end */
	uint32_t facts =
	    (q < s->sb->end_seq ? WAL_END_BEFORE_END : 0) |
	    (state == WAL_BLOCK_FUTURE ? WAL_END_FUTURE : 0) |
	    (later ? WAL_END_LATER_GROUP : 0) |
	    (hint > present ? WAL_END_HINT_ABOVE : 0) |
	    (s->in_group ? WAL_END_IN_GROUP : 0) | (same ? WAL_END_GROUP_SEEN : 0) |
	    (state == WAL_BLOCK_CHECKSUM && !zero ? WAL_END_GARBAGE : 0) |
	    (state == WAL_BLOCK_MALFORMED || state == WAL_BLOCK_MISPLACED ? WAL_END_MALFORMED
									 : 0);
	enum wal_end_row_id row = wal_end_decide(facts);
	const struct wal_end_row *r = &wal_end_table[row];
	uint64_t offset = wal_slot_offset(q % s->sb->capacity_blocks);

	if (rep->verdict == PMWAL_CORRUPT && !r->salvage)
		return 0; /* salvaging: the first damage is the one named */
	if (rep->verdict != PMWAL_CORRUPT) {
		rep->verdict = r->verdict;
		switch (row) {
		case WAL_ROW_DAMAGED_BEFORE_END:
		case WAL_ROW_FUTURE:
			rep->corrupt_lsn = damaged_lsn(s);
			rep->corrupt_offset = offset;
			snprintf(rep->detail, sizeof(rep->detail),
				 row == WAL_ROW_FUTURE
				     ? "block seq %llu (offset %llu): %s; the superblock "
				       "is older than the log (LSNs from %llu on would be "
				       "reused)"
				     : "block seq %llu (offset %llu) is damaged (%s) but "
				       "the superblock records the log durable up to LSN "
				       "%llu",
				 (unsigned long long)q, (unsigned long long)offset,
				 wal_block_state_name(state),
				 (unsigned long long)(row == WAL_ROW_FUTURE
							  ? rep->corrupt_lsn
							  : s->sb->end_lsn - 1));
			break;
		case WAL_ROW_LATER_GROUP:
			rep->corrupt_lsn = damaged_lsn(s);
			rep->corrupt_offset = offset;
			snprintf(rep->detail, sizeof(rep->detail),
				 "block seq %llu (offset %llu) is damaged (%s) but a later "
				 "group was written after it was acknowledged",
				 (unsigned long long)q, (unsigned long long)offset,
				 wal_block_state_name(state));
			break;
		case WAL_ROW_HINT_ABOVE:
			rep->corrupt_lsn = s->last_lsn + 1;
			rep->corrupt_offset = offset;
			snprintf(rep->detail, sizeof(rep->detail),
				 "LSN %llu was acknowledged (the log says so) but the log "
				 "ends at %llu",
				 (unsigned long long)hint,
				 (unsigned long long)s->last_lsn);
			break;
		case WAL_ROW_TORN_BESIDE:
		case WAL_ROW_TORN_INSIDE:
		case WAL_ROW_TORN_GROUP_SEEN:
		case WAL_ROW_TORN_GARBAGE:
		case WAL_ROW_TORN_MALFORMED:
			rep->torn_blocks = q - g0 + 1;
			snprintf(rep->detail, sizeof(rep->detail),
				 "unacknowledged group at block seq %llu cut off (%llu "
				 "block%s, %s: %s)",
				 (unsigned long long)g0,
				 (unsigned long long)rep->torn_blocks,
				 rep->torn_blocks == 1 ? "" : "s", wal_block_state_name(state),
				 r->why);
			break;
		default:
			if (q == 0 && row == WAL_ROW_CLEAN_END)
				snprintf(rep->detail, sizeof(rep->detail),
					 "clean: a new, empty log");
			else
				snprintf(rep->detail, sizeof(rep->detail),
					 "clean end at block seq %llu (%s)", (unsigned long long)q,
					 r->why);
			break;
		}
	}
	if (r->salvage && salvage && resume_seq) {
		struct wal_block_hdr h;

		rc = reader_get(&s->rd, resume_seq, &block);
		if (rc)
			return rc;
		wal_block_decode_hdr(block, &h);
		rep->skipped_blocks += resume_seq - g0;
		rep->skipped_records += h.first_lsn > s->last_lsn + 1
					    ? h.first_lsn - (s->last_lsn + 1)
					    : 0;
		s->seq = resume_seq;
		s->have_prev = false;
		s->in_group = false;
		s->pend_records = s->pend_bytes = 0;
		s->fr.rec_left = 0;
		*resume = true;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int wal_recover_scan(struct wal_dev *dev, const struct wal_sb *sb, bool salvage,
		     struct pmwal_report *rep, struct wal_tail *tail)
{
	struct scan s = {0};
	uint64_t t0 = now_ns();
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	s.rd = (struct reader){dev, sb, dev->ops->map ? dev->ops->map(dev) : NULL, NULL,
			       UINT64_MAX, 0};
	if (!s.rd.map) {
		s.rd.buf = wal_alloc_io((size_t)WAL_SCAN_CHUNK_BLOCKS * WAL_BLOCK_BYTES);
		if (!s.rd.buf)
			return -ENOMEM;
	}
	s.sb = sb;
	s.rep = rep;
	s.seq = s.tail_seq = sb->head_seq;
	s.fr.lsn_next = sb->head_lsn;
	s.fr.rec_max = sb->record_bytes_max;
	for (;;) {
		enum wal_block_state state = WAL_BLOCK_VALID;
		bool ok, resume;

		/* Where the walk stops before reading a block (the table's
		 * first rows). While salvaging past damage, a mismatch at the
		 * end is that damage's and is not named again. */
		uint32_t stop = 0;

		if (s.seq == sb->end_seq && rep->verdict != PMWAL_CORRUPT &&
		    (s.in_group || s.fr.lsn_next != sb->end_lsn))
			stop |= WAL_END_MISMATCH;
		if (s.seq == sb->end_seq && (sb->flags & WAL_SB_CLOSED))
			stop |= WAL_END_CLOSED;
		if (s.seq - sb->head_seq >= sb->capacity_blocks)
			stop |= WAL_END_RING_FULL;
		if (stop) {
			enum wal_end_row_id row = wal_end_decide(stop);

			if (rep->verdict == PMWAL_CORRUPT)
				break;
			rep->verdict = wal_end_table[row].verdict;
			if (row == WAL_ROW_END_MISMATCH) {
				rep->corrupt_lsn =
				    s.fr.lsn_next < sb->end_lsn ? s.fr.lsn_next : sb->end_lsn;
				rep->corrupt_offset =
				    wal_slot_offset(s.seq % sb->capacity_blocks);
				snprintf(rep->detail, sizeof(rep->detail),
					 "the superblock records LSNs up to %llu durable in "
					 "blocks before seq %llu, but the blocks hold LSNs up "
					 "to %llu",
					 (unsigned long long)(sb->end_lsn - 1),
					 (unsigned long long)sb->end_seq,
					 (unsigned long long)(s.fr.lsn_next - 1));
			} else if (row == WAL_ROW_CLOSED) {
				snprintf(rep->detail, sizeof(rep->detail),
					 "clean: closed at block seq %llu",
					 (unsigned long long)s.seq);
			} else {
				snprintf(rep->detail, sizeof(rep->detail),
					 "clean: ring full to capacity");
			}
			break;
		}
		rc = step(&s, &state, &ok);
		if (rc)
			goto out;
		if (ok) {
			s.seq++;
			continue;
		}
		rc = decide(&s, s.seq, state, salvage, &resume);
		if (rc || !resume)
			break;
	}
	rep->durable_hint = s.max_hint;
	rep->end_offset = wal_slot_offset(s.tail_seq % sb->capacity_blocks);
	tail->next_seq = s.tail_seq;
	tail->prev_checksum = s.tail_sum;
	/* Nothing live (all released): the durable end is just below the head. */
	tail->durable_lsn = s.last_lsn >= sb->head_lsn ? s.last_lsn : sb->head_lsn - 1;
	/* Records never reached (torn) keep no LSN: the next record follows the
	 * last recovered one, or the head when nothing is left. */
	tail->next_lsn = s.last_lsn ? s.last_lsn + 1 : sb->head_lsn;
	if (tail->next_lsn < sb->head_lsn)
		tail->next_lsn = sb->head_lsn;
out:
	free(s.rd.buf);
	rep->elapsed_ns = now_ns() - t0;
	return rc;
}

int wal_read_sb(struct wal_dev *dev, struct wal_sb *sb, char *err, size_t errlen)
{
	uint8_t *buf;
	int rc;

	if (dev->size_bytes < WAL_RING_OFFSET + WAL_MIN_RING_BLOCKS * WAL_BLOCK_BYTES) {
		snprintf(err, errlen,
			 "target is %llu bytes: too small to hold a pmwal log",
			 (unsigned long long)dev->size_bytes);
		return PMWAL_EFORMAT;
	}
	buf = wal_alloc_io(WAL_RING_OFFSET);
	if (!buf)
		return -ENOMEM;
	rc = dev->ops->read(dev, buf, WAL_RING_OFFSET, 0);
	if (rc) {
		snprintf(err, errlen, "reading the superblocks: %s", strerror(-rc));
		goto out;
	}
	char why[256] = "";

	rc = wal_sb_pick(buf, sb, why, sizeof(why));
	if (rc == PMWAL_EFORMAT && all_zero(buf, WAL_RING_OFFSET)) {
		snprintf(err, errlen,
			 "not a pmwal log: no superblock (bytes 0..8191 are zero); an "
			 "interrupted `pmwal create`? remove it, or create it again "
			 "with --force");
		goto out;
	}
	if (rc) {
		snprintf(err, errlen, "%s: %s", rc == PMWAL_EFORMAT ? "not a pmwal log" :
			 "corrupt superblock", why);
		goto out;
	}
	/* Overflow-safe: capacity_blocks is at most 2^40 (format.c). */
	if (sb->capacity_blocks > (dev->size_bytes - WAL_RING_OFFSET) / WAL_BLOCK_BYTES) {
		snprintf(
		    err, errlen,
		    "superblock says %llu blocks but the target holds only %llu bytes "
		    "(truncated file?)",
		    (unsigned long long)sb->capacity_blocks,
		    (unsigned long long)dev->size_bytes);
		rc = PMWAL_EFORMAT;
	}
out:
	free(buf);
	return rc;
}

#define WAL_SB_PROBE_BLOCKS 16u /* blocks from a copy's head that vouch for it */

/* How many of the blocks from @c's head (up to WAL_SB_PROBE_BLOCKS, the
 * ring's slots in order) carry @c's log id under a valid checksum. */
static int blocks_for_copy(struct wal_dev *dev, const struct wal_sb *c, uint8_t *block,
			   uint32_t *count)
{
	*count = 0;
	if (c->capacity_blocks > (dev->size_bytes - WAL_RING_OFFSET) / WAL_BLOCK_BYTES)
		return 0; /* another medium's geometry: none of its blocks are here */
	for (uint64_t k = 0; k < WAL_SB_PROBE_BLOCKS && k < c->capacity_blocks; k++) {
		uint64_t slot = (c->head_seq + k) % c->capacity_blocks;
		int rc = dev->ops->read(dev, block, WAL_BLOCK_BYTES, wal_slot_offset(slot));

		if (rc)
			return rc;
		if (wal_get64(block) == wal_block_checksum(block, slot) &&
		    wal_get64(block + WAL_BLK_LOG_ID) == c->log_id)
			(*count)++;
	}
	return 0;
}

int wal_read_sb_salvage(struct wal_dev *dev, struct wal_sb *sb, char *note, size_t notelen,
			uint64_t *bad_offset, char *err, size_t errlen)
{
	struct wal_sb c[WAL_SB_COPIES];
	uint32_t n[WAL_SB_COPIES] = {0, 0};
	uint8_t *buf;
	int rc = wal_read_sb(dev, sb, err, errlen);

	note[0] = 0;
	if (rc != PMWAL_ECORRUPT)
		return rc;
	buf = wal_alloc_io(WAL_RING_OFFSET);
	if (!buf)
		return -ENOMEM;
	int io = dev->ops->read(dev, buf, WAL_RING_OFFSET, 0);

	for (uint32_t k = 0; !io && k < WAL_SB_COPIES; k++)
		if (wal_sb_decode(buf + k * WAL_SB_BYTES, &c[k]) != 0)
			goto out; /* not two logs' copies: nothing to choose by */
	if (io || c[0].log_id == c[1].log_id)
		goto out;
	for (uint32_t k = 0; k < WAL_SB_COPIES; k++) {
		io = blocks_for_copy(dev, &c[k], buf, &n[k]); /* buf reused per block */
		if (io)
			goto out;
	}
	/* Blocks of both (a log formatted over the other's medium, with the old
	 * log's blocks left past the new one's): the newer log is the one on
	 * the medium now. Blocks of neither: nothing tells, CORRUPT stays. */
	uint32_t use = n[0] && n[1] ? (c[1].create_time_ns > c[0].create_time_ns)
		       : n[1] ? 1 : 0;

	if (!n[0] && !n[1])
		goto out;
	*sb = c[use];
	*bad_offset = (uint64_t)(1 - use) * WAL_SB_BYTES;
	snprintf(note, notelen,
		 "the superblock copy at offset %llu names log %016llx, but the ring's "
		 "blocks are log %016llx's%s: salvage used the copy at offset %llu",
		 (unsigned long long)*bad_offset, (unsigned long long)c[1 - use].log_id,
		 (unsigned long long)c[use].log_id,
		 n[0] && n[1] ? " (blocks of both; the newer log)" : "",
		 (unsigned long long)use * WAL_SB_BYTES);
	rc = 0;
out:
	if (io)
		rc = io;
	free(buf);
	return rc;
}

int wal_locate(struct wal_dev *dev, const struct wal_sb *sb, uint64_t head_seq,
	       uint64_t end_seq, uint64_t lsn, uint64_t *seq)
{
	struct reader rd = {dev, sb, dev->ops->map ? dev->ops->map(dev) : NULL, NULL,
			    UINT64_MAX, 0};
	struct wal_block_hdr h;
	uint64_t lo = head_seq, hi = end_seq; /* answer in [lo, hi) */
	int rc = 0;

	if (head_seq >= end_seq)
		return PMWAL_ERANGE;
	if (!rd.map) {
		rd.buf = wal_alloc_io(WAL_SCAN_CHUNK_BLOCKS * (size_t)WAL_BLOCK_BYTES);
		if (!rd.buf)
			return -ENOMEM;
	}
	/* Largest b with first_lsn(b) <= lsn: first_lsn never decreases. */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		const uint8_t *block;

		rc = reader_get(&rd, mid, &block);
		if (rc)
			goto out;
		if (wal_block_check(block, mid % sb->capacity_blocks, mid, sb, NULL, &h) !=
		    WAL_BLOCK_VALID) {
			rc = PMWAL_ECORRUPT;
			goto out;
		}
		if (h.first_lsn <= lsn)
			lo = mid;
		else
			hi = mid;
	}
	const uint8_t *block;

	rc = reader_get(&rd, lo, &block);
	if (rc)
		goto out;
	if (wal_block_check(block, lo % sb->capacity_blocks, lo, sb, NULL, &h) !=
	    WAL_BLOCK_VALID) {
		rc = PMWAL_ECORRUPT;
		goto out;
	}
	/* A block no record starts in continues one begun in its group. */
	*seq = h.first_rec == WAL_NO_RECORD ? lo - h.group_index : lo;
	if (*seq < head_seq)
		*seq = head_seq;
out:
	free(rd.buf);
	return rc;
}
