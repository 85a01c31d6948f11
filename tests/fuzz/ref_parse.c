// SPDX-License-Identifier: MIT
/*
 * ref_parse.c - the reference reader of ref_parse.h. Written from the text of
 * the format specification (wal/format.c), not from recovery.c, in the
 * plainest code that can state the rules: one pass over the blocks from the
 * head, one function per rule of the spec. Slow and simple on purpose; it only
 * reads images of a few hundred blocks.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "pmwal.h"
#include "ref_parse.h"

#define BLOCK	     4096u
#define SB_BYTES     4096u
#define RING_OFF     8192u
#define HDR	     72u
#define PAYLOAD	     4024u
#define NO_REC	     0xFFFFu
#define SB_MAGIC     0x3142534c41574d50ull
#define BLOCK_MAGIC  0x31425750u
#define SB_SEED	     0x706d77616c5f7362ull
#define CLOSED	     1u

static uint64_t le(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* SUPERBLOCK: checksum, magic, version 2, every field in its stated range. */
static bool sb_read(const uint8_t *p, struct ref_sb *sb)
{
	if (le(p + 8, 8) != SB_MAGIC || le(p, 8) != XXH3_64bits_withSeed(p + 8, SB_BYTES - 8, SB_SEED))
		return false;
	for (unsigned i = 104; i < SB_BYTES; i++)
		if (p[i])
			return false;
	sb->log_id = le(p + 24, 8);
	sb->sb_seq = le(p + 32, 8);
	sb->capacity = le(p + 40, 8);
	sb->epoch = (uint32_t)le(p + 48, 4);
	sb->record_max = (uint32_t)le(p + 52, 4);
	sb->head_seq = le(p + 56, 8);
	sb->head_lsn = le(p + 64, 8);
	sb->group_max = (uint32_t)le(p + 72, 4);
	sb->flags = (uint32_t)le(p + 76, 4);
	sb->end_seq = le(p + 88, 8);
	sb->end_lsn = le(p + 96, 8);
	uint64_t group_limit = ((256ull << 20) + (1ull << 30)) / 4021 + 2;

	if (le(p + 16, 4) != 2 || le(p + 20, 4) != BLOCK || sb->log_id == 0 ||
	    sb->sb_seq == 0)
		return false;
	if (sb->capacity < 4 || sb->capacity > (1ull << 40))
		return false;
	if (sb->epoch == 0 || sb->epoch > UINT32_MAX - 1)
		return false;
	if (sb->record_max == 0 || sb->record_max > (1u << 30))
		return false;
	if (sb->group_max < 2 || sb->group_max > sb->capacity || sb->group_max > group_limit)
		return false;
	if (sb->head_lsn == 0 || (sb->flags & ~CLOSED))
		return false;
	if (sb->end_seq < sb->head_seq || sb->end_seq - sb->head_seq > sb->capacity)
		return false;
	/* No overflow in seq or LSN arithmetic (format.c's range checks). */
	if (sb->end_seq > UINT64_MAX - sb->capacity || sb->end_lsn < sb->head_lsn ||
	    sb->end_lsn >= UINT64_MAX / 2)
		return false;
	return true;
}

/* Magic and checksum hold, but the version is not 2: another pmwal or tool
 * wrote this copy on purpose; the log is refused by it (not a torn copy). */
static bool sb_other_version(const uint8_t *p)
{
	return le(p + 8, 8) == SB_MAGIC &&
	       le(p, 8) == XXH3_64bits_withSeed(p + 8, SB_BYTES - 8, SB_SEED) &&
	       le(p + 16, 4) != 2;
}

/* A copy of another version refuses the log, whatever the other holds. Both
 * valid: same log, and one sb_seq means the same bytes; then the newer. */
static int sb_pick(const uint8_t *img, size_t size, struct ref_sb *sb)
{
	struct ref_sb a, b;
	bool va, vb;

	if (size < RING_OFF + 4 * BLOCK)
		return REF_NOT_A_LOG;
	if (sb_other_version(img) || sb_other_version(img + SB_BYTES))
		return REF_NOT_A_LOG;
	va = sb_read(img, &a);
	vb = sb_read(img + SB_BYTES, &b);
	if (!va && !vb)
		return REF_NOT_A_LOG;
	if (va && vb) {
		if (a.log_id != b.log_id)
			return REF_SB_CORRUPT;
		if (a.sb_seq == b.sb_seq && memcmp(img, img + SB_BYTES, SB_BYTES))
			return REF_SB_CORRUPT;
		*sb = a.sb_seq >= b.sb_seq ? a : b;
	} else {
		*sb = va ? a : b;
	}
	if (sb->capacity > (size - RING_OFF) / BLOCK)
		return REF_NOT_A_LOG; /* truncated */
	return REF_OK;
}

struct hdr {
	uint64_t checksum, log_id, seq, prev, first_lsn, durable_lsn;
	uint32_t magic, payload, first_rec, epoch, index, blocks, reserved;
};

static void hdr_read(const uint8_t *p, struct hdr *h)
{
	h->checksum = le(p, 8);
	h->magic = (uint32_t)le(p + 8, 4);
	h->payload = (uint32_t)le(p + 12, 2);
	h->first_rec = (uint32_t)le(p + 14, 2);
	h->log_id = le(p + 16, 8);
	h->seq = le(p + 24, 8);
	h->prev = le(p + 32, 8);
	h->first_lsn = le(p + 40, 8);
	h->durable_lsn = le(p + 48, 8);
	h->epoch = (uint32_t)le(p + 56, 4);
	h->index = (uint32_t)le(p + 60, 4);
	h->blocks = (uint32_t)le(p + 64, 4);
	h->reserved = (uint32_t)le(p + 68, 4);
}

enum why { OK, BAD_SUM, ZERO, FOREIGN, STALE, MISPLACED, MALFORMED, FUTURE, OLD_EPOCH };

/* VALID BLOCK, the rules that need only the block, its slot and the sb. */
static enum why block_alone(const struct ref_sb *sb, const uint8_t *p, uint64_t q,
			    struct hdr *h)
{
	uint64_t slot = q % sb->capacity;

	hdr_read(p, h);
	if (h->payload > PAYLOAD ||
	    h->checksum != XXH3_64bits_withSeed(p + 8, HDR - 8 + h->payload, slot)) {
		for (unsigned i = 0; i < BLOCK; i++)
			if (p[i])
				return BAD_SUM;
		return ZERO;
	}
	if (h->magic != BLOCK_MAGIC || h->log_id != sb->log_id)
		return FOREIGN;
	if (h->seq < q && h->seq % sb->capacity == slot)
		return STALE;
	if (h->seq != q)
		return MISPLACED;
	if (h->payload < 1 || (h->first_rec != NO_REC && h->first_rec + 4 > h->payload))
		return MALFORMED;
	if (h->blocks < 1 || h->index >= h->blocks || h->blocks > sb->group_max)
		return MALFORMED;
	if (h->first_lsn == 0 || h->reserved != 0)
		return MALFORMED;
	if (h->epoch > sb->epoch)
		return FUTURE;
	if (q >= sb->end_seq && h->epoch != sb->epoch)
		return OLD_EPOCH;
	return OK;
}

/* The walk's state: where it is in the chain, the group, and the records. */
struct walk {
	const uint8_t *img;
	struct ref_sb sb;
	struct ref_result *r;
	uint64_t q;
	bool first;	    /* the next block is the head (nothing before it) */
	uint64_t prev_sum;
	bool in_group;	    /* the last block accepted did not end its group */
	uint64_t group_start;
	uint32_t group_blocks;
	uint64_t next_lsn;  /* LSN the next record header gets */
	uint64_t left;	    /* bytes of the current record still to come */
	struct ref_record cur;
	XXH3_state_t *hash;
	struct ref_record *pend; /* records of the open group */
	size_t npend, cap_pend, cap_rec;
	bool head_done;	    /* the head's group ended above head_lsn */
	uint64_t max_durable;
	uint64_t last_lsn;  /* last LSN of a complete group (0: none) */
};

static int push(struct ref_record **v, size_t *n, size_t *cap, const struct ref_record *x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		struct ref_record *nv = realloc(*v, c * sizeof(**v));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *x;
	return 0;
}

/* The record bytes [from, to) of the payload belong to the current record. */
static int take(struct walk *w, const uint8_t *pay, uint64_t n)
{
	XXH3_64bits_update(w->hash, pay, n);
	w->left -= n;
	w->cur.last_seq = w->q;
	if (w->left)
		return 0;
	w->cur.hash = XXH3_64bits_digest(w->hash);
	if (w->cur.lsn < w->sb.head_lsn)
		return 0; /* released: framing only */
	return push(&w->pend, &w->npend, &w->cap_pend, &w->cur);
}

/* PAYLOAD: records in a stream; false if the framing breaks a rule. */
static bool framing(struct walk *w, const uint8_t *p, const struct hdr *h, int *err)
{
	const uint8_t *pay = p + HDR;
	uint32_t pos = 0;

	if (w->first) {
		/* Bytes before the first record header continue one begun before
		 * the head: not ours to read. */
		w->left = 0;
		if (h->first_rec == NO_REC)
			return h->index + 1 < h->blocks;
		pos = h->first_rec;
		w->next_lsn = h->first_lsn;
	} else if (w->left) {
		/* The block continues the current record. */
		uint32_t n = w->left < h->payload ? (uint32_t)w->left : h->payload;
		bool ends_here = n == w->left;

		if (h->first_rec == NO_REC) {
			if (h->first_lsn != w->cur.lsn)
				return false;
			if (!ends_here && h->payload != PAYLOAD)
				return false; /* a record continues only from a full block */
			if (ends_here && n != h->payload)
				return false; /* bytes after it but no record starts */
		} else {
			if (!ends_here || h->first_rec != n || h->first_lsn != w->next_lsn)
				return false;
		}
		*err = take(w, pay, n);
		pos = n;
	} else {
		if (h->first_rec != 0 || h->first_lsn != w->next_lsn)
			return false;
	}
	while (pos < h->payload) {
		if (h->payload - pos < 4)
			return false; /* a length never straddles blocks */
		uint64_t len = le(pay + pos, 4);

		if (len == 0 || len > w->sb.record_max)
			return false;
		pos += 4;
		w->cur = (struct ref_record){.lsn = w->next_lsn++, .len = len, .first_seq = w->q};
		w->left = len;
		XXH3_64bits_reset(w->hash);
		uint32_t n = h->payload - pos < len ? h->payload - pos : (uint32_t)len;

		*err = take(w, pay + pos, n);
		pos += n;
	}
	return *err == 0;
}

/* Accepts block q, or says why it is not valid here. */
static enum why accept(struct walk *w, int *err)
{
	const uint8_t *p = w->img + RING_OFF + (w->q % w->sb.capacity) * BLOCK;
	struct hdr h;
	enum why why = block_alone(&w->sb, p, w->q, &h);

	if (why != OK)
		return why;
	if (w->q == w->sb.head_seq &&
	    (h.first_lsn > w->sb.head_lsn ||
	     (w->sb.head_seq == w->sb.end_seq && h.first_lsn != w->sb.head_lsn)))
		return MISPLACED; /* the head block does not hold head_lsn */
	if (!w->first && h.prev != w->prev_sum)
		return MISPLACED; /* the hash chain is broken */
	if (w->first) {
		w->in_group = h.index > 0;
		w->group_start = w->q - h.index;
		w->group_blocks = h.blocks;
	} else if (w->in_group) {
		if (w->q - h.index != w->group_start || h.blocks != w->group_blocks)
			return MALFORMED; /* not the next block of the open group */
	} else {
		if (h.index != 0)
			return MALFORMED;
		w->group_start = w->q;
		w->group_blocks = h.blocks;
	}
	if (!framing(w, p, &h, err))
		return MALFORMED;
	w->first = false;
	w->prev_sum = h.checksum;
	if (h.durable_lsn > w->max_durable)
		w->max_durable = h.durable_lsn;
	w->in_group = h.index + 1 < h.blocks;
	if (w->in_group)
		return OK;
	/* The group ends: no record may be left open, and the head's group
	 * must reach past head_lsn. */
	if (w->left)
		return MALFORMED;
	if (!w->head_done && w->next_lsn <= w->sb.head_lsn)
		return MISPLACED;
	w->head_done = true;
	for (size_t i = 0; i < w->npend && !*err; i++)
		*err = push(&w->r->rec, &w->r->nrec, &w->cap_rec, &w->pend[i]);
	w->npend = 0;
	if (w->next_lsn > 1 && w->next_lsn - 1 >= w->sb.head_lsn)
		w->last_lsn = w->next_lsn - 1;
	return OK;
}

/* The look-ahead window after q (room for WAL_INFLIGHT_MAX groups in flight
 * beside q's, and the first one sealed after): a valid block of group @g0
 * (*same) or of a group that started after it (*later), and the largest
 * durable_lsn among the latter (*hint). */
static void look_ahead(struct walk *w, uint64_t g0, bool *same, bool *later, uint64_t *hint)
{
	uint64_t last = w->q + 5ull * w->sb.group_max;

	if (last > w->sb.head_seq + w->sb.capacity - 1)
		last = w->sb.head_seq + w->sb.capacity - 1;
	*same = *later = false;
	*hint = 0;
	for (uint64_t t = w->q + 1; t <= last; t++) {
		struct hdr h;
		const uint8_t *p = w->img + RING_OFF + (t % w->sb.capacity) * BLOCK;

		if (block_alone(&w->sb, p, t, &h) != OK)
			continue;
		if (t - h.index == g0)
			*same = true;
		if (t - h.index > g0) {
			*later = true;
			if (h.durable_lsn > *hint)
				*hint = h.durable_lsn;
		}
	}
}

/* RECOVERY DECISION TABLE, row by row, at the first block q not valid. */
static void decide(struct walk *w, enum why why)
{
	struct ref_result *r = w->r;
	uint64_t g0 = w->in_group ? w->group_start : w->q;
	uint64_t present = w->last_lsn > w->sb.head_lsn - 1 ? w->last_lsn : w->sb.head_lsn - 1;
	bool same, later;
	uint64_t hint;

	look_ahead(w, g0, &same, &later, &hint);
	if (w->max_durable > hint)
		hint = w->max_durable;
	r->verdict = PMWAL_CORRUPT;
	if (w->q < w->sb.end_seq)
		snprintf(r->why, sizeof(r->why), "block %llu before end_seq (%d)",
			 (unsigned long long)w->q, why);
	else if (why == FUTURE)
		snprintf(r->why, sizeof(r->why), "future epoch at %llu",
			 (unsigned long long)w->q);
	else if (hint > present)
		snprintf(r->why, sizeof(r->why), "durable_lsn %llu above %llu (later: %d)",
			 (unsigned long long)hint, (unsigned long long)present, later);
	else if (later || w->in_group || same || why == BAD_SUM || why == MALFORMED ||
		 why == MISPLACED) {
		r->verdict = PMWAL_TORN_TAIL;
		snprintf(r->why, sizeof(r->why), "torn at %llu (%d)", (unsigned long long)w->q,
			 why);
	} else {
		r->verdict = PMWAL_CLEAN; /* zero, stale, foreign, older epoch */
		snprintf(r->why, sizeof(r->why), "clean at %llu (%d)", (unsigned long long)w->q,
			 why);
	}
}

int ref_parse(const uint8_t *img, size_t size, struct ref_result *r)
{
	struct walk w = {.img = img, .r = r, .first = true};
	int err = 0;

	memset(r, 0, sizeof(*r));
	r->status = sb_pick(img, size, &w.sb);
	if (r->status != REF_OK)
		return 0;
	r->sb = w.sb;
	w.hash = XXH3_createState();
	if (!w.hash)
		return -ENOMEM;
	w.q = w.sb.head_seq;
	w.next_lsn = w.sb.head_lsn;
	for (;;) {
		if (w.q == w.sb.end_seq) {
			if (w.in_group || w.next_lsn != w.sb.end_lsn) {
				r->verdict = PMWAL_CORRUPT;
				snprintf(r->why, sizeof(r->why), "end_lsn %llu, blocks say %llu",
					 (unsigned long long)w.sb.end_lsn,
					 (unsigned long long)w.next_lsn);
				break;
			}
			if (w.sb.flags & CLOSED) {
				r->verdict = PMWAL_CLEAN;
				snprintf(r->why, sizeof(r->why), "closed");
				break;
			}
		}
		if (w.q - w.sb.head_seq == w.sb.capacity) {
			r->verdict = PMWAL_CLEAN;
			snprintf(r->why, sizeof(r->why), "ring full");
			break;
		}
		enum why why = accept(&w, &err);

		if (err)
			break;
		if (why != OK) {
			decide(&w, why);
			break;
		}
		w.q++;
	}
	r->end_seq = w.q;
	XXH3_freeState(w.hash);
	free(w.pend);
	return err;
}

void ref_free(struct ref_result *r)
{
	free(r->rec);
	r->rec = NULL;
	r->nrec = 0;
}
