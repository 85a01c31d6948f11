/* SPDX-License-Identifier: MIT */
/*
 * format.h - decoded forms of the on-disk structures and their encoders and
 * decoders. The format itself is specified at the top of format.c; the writers
 * (commit.c: the staging buffer and the direct path on mapped media), the
 * iterators (iter.c) and recovery (recovery.c) all go through these: the
 * layout of records in blocks, the header fields by name, sealing whole or in
 * pieces, reading a record's length. A format change is one edit.
 */
#ifndef PMWAL_FORMAT_H
#define PMWAL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <endian.h>
#include <string.h>

#include "pmwal.h"
#include "seeded.h"

#define WAL_BLOCK_BYTES	       PMWAL_BLOCK_BYTES
#define WAL_SB_BYTES	       4096u
#define WAL_SB_COPIES	       2u
#define WAL_RING_OFFSET	       (WAL_SB_BYTES * WAL_SB_COPIES)
#define WAL_HDR_BYTES	       72u
#define WAL_PAYLOAD_BYTES      (WAL_BLOCK_BYTES - WAL_HDR_BYTES)
#define WAL_REC_HDR_BYTES      4u
#define WAL_NO_RECORD	       0xFFFFu
#define WAL_SB_MAGIC	       0x3142534c41574d50ull /* "PMWALSB1" */
#define WAL_BLOCK_MAGIC	       0x31425750u	     /* "PWB1" */
#define WAL_SB_SEED	       0x706d77616c5f7362ull /* "pmwal_sb" */
#define WAL_RECORD_MAX_LIMIT   (1u << 30) /* 1 GiB: groups stay < 2^32 blocks */
#define WAL_RECORD_MAX_DEFAULT (16u << 20)
#define WAL_MIN_RING_BLOCKS    4u
/* Groups a writer may have in flight at once (format.c, GROUPS AND
 * ACKNOWLEDGEMENT); recovery's look-ahead window is sized by it. */
#define WAL_INFLIGHT_MAX       4u

/* The superblock, decoded. */
struct wal_sb {
	uint32_t format_version;
	uint32_t block_bytes;
	uint64_t log_id;
	uint64_t sb_seq;
	uint64_t capacity_blocks;
	uint32_t epoch;
	uint32_t record_bytes_max;
	uint64_t head_seq;
	uint64_t head_lsn;
	uint32_t group_blocks_max;
	uint32_t flags; /* WAL_SB_CLOSED */
	uint64_t create_time_ns;
	uint64_t end_seq; /* blocks [head_seq, end_seq) were durable at this write */
	uint64_t end_lsn; /* the LSN after the last record in them */
};

#define WAL_SB_CLOSED	     1u /* written at close: the log ends at end_seq */
#define WAL_SB_USED_BYTES    104u
#define WAL_EPOCH_MAX	     (UINT32_MAX - 1)
#define WAL_CAPACITY_MAX     (1ull << 40) /* ring blocks: 4 PiB, and no overflow */
#define WAL_GROUP_BLOCKS_MAX (((256u << 20) + WAL_RECORD_MAX_LIMIT) / 4021u + 2u)

/* Block header fields, by byte offset (the table in format.c). */
#define WAL_BLK_CHECKSUM      0u
#define WAL_BLK_MAGIC	      8u
#define WAL_BLK_PAYLOAD_BYTES 12u
#define WAL_BLK_FIRST_REC     14u
#define WAL_BLK_LOG_ID	      16u
#define WAL_BLK_SEQ	      24u
#define WAL_BLK_PREV_CHECKSUM 32u
#define WAL_BLK_FIRST_LSN     40u
#define WAL_BLK_DURABLE_LSN   48u
#define WAL_BLK_EPOCH	      56u
#define WAL_BLK_GROUP_INDEX   60u
#define WAL_BLK_GROUP_BLOCKS  64u
#define WAL_BLK_RESERVED      68u

/* A block header, decoded. */
struct wal_block_hdr {
	uint64_t checksum;
	uint32_t magic;
	uint16_t payload_bytes;
	uint16_t first_rec;
	uint64_t log_id;
	uint64_t seq;
	uint64_t prev_checksum;
	uint64_t first_lsn;
	uint64_t durable_lsn;
	uint32_t epoch;
	uint32_t group_index;
	uint32_t group_blocks;
};

/* Why a block is not valid at the slot where it was read. */
enum wal_block_state {
	WAL_BLOCK_VALID = 0,
	WAL_BLOCK_CHECKSUM,  /* checksum mismatch: torn, garbage or damaged */
	WAL_BLOCK_FOREIGN,   /* valid checksum, another log or bad magic */
	WAL_BLOCK_STALE,     /* valid checksum, older sequence (earlier lap) */
	WAL_BLOCK_MISPLACED, /* valid checksum, belongs to another slot or a later lap */
	WAL_BLOCK_MALFORMED, /* valid checksum, fields out of range */
	WAL_BLOCK_FUTURE,    /* valid, but from an epoch the superblock never had */
};

/* Where a block's checksum starts covering: everything after it. */
#define WAL_SUM_FROM (PMWAL_BUG(CHECKSUM_PARTIAL) ? 56u : 8u)

static inline uint64_t wal_slot_offset(uint64_t slot)
{
	return WAL_RING_OFFSET + slot * WAL_BLOCK_BYTES;
}

/* Little-endian loads and stores: the format never depends on host order
 * (htole/letoh are no-ops on x86 and compile to one load or store). */
static inline void wal_put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}
static inline void wal_put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}
static inline void wal_put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}
static inline uint16_t wal_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}
static inline uint32_t wal_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}
static inline uint64_t wal_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

void wal_sb_encode(const struct wal_sb *sb, uint8_t out[WAL_SB_BYTES]);
/* Returns 0, or PMWAL_EFORMAT when the bytes are not a valid superblock. */
int wal_sb_decode(const uint8_t in[WAL_SB_BYTES], struct wal_sb *sb);
/*
 * Picks the copy to trust (format.c, SUPERBLOCK): 0, PMWAL_EFORMAT (neither
 * valid, or an unsupported version: @why says which), or PMWAL_ECORRUPT (two
 * valid copies that contradict each other). @why gets a line for people.
 */
int wal_sb_pick(const uint8_t copies[WAL_SB_COPIES * WAL_SB_BYTES], struct wal_sb *sb,
		char *why, size_t whylen);

/* The checksum of a block's bytes [8, 4096) seeded with its ring slot. */
uint64_t wal_block_checksum(const uint8_t *block, uint64_t slot);
/* Writes the header fields (all but checksum) into the first 72 bytes. */
void wal_block_encode_hdr(const struct wal_block_hdr *h, uint8_t *block);
/* Computes and stores the checksum; returns it. */
uint64_t wal_block_seal(uint8_t *block, uint64_t slot);
void wal_block_decode_hdr(const uint8_t *block, struct wal_block_hdr *h);
/* The block before the one checked: what its successor's chain must name. */
struct wal_chain {
	uint64_t checksum;
	uint32_t epoch;
};

/*
 * The VALID BLOCK rule (format.c) in one place: validates the block read at
 * @slot against the log's superblock, expecting sequence @seq, and, given
 * @prev (NULL at the head or where a walk resumes), that it continues the
 * hash chain from that block (wal_block_follows). Fills @h in every case
 * where the checksum matched.
 */
enum wal_block_state wal_block_check(const uint8_t *block, uint64_t slot, uint64_t seq,
				     const struct wal_sb *sb, const struct wal_chain *prev,
				     struct wal_block_hdr *h);
const char *wal_block_state_name(enum wal_block_state s);
/*
 * Whether valid block @h may follow the block before it in the log, whose
 * checksum and epoch are @prev_checksum and @prev_epoch (the VALID BLOCK
 * rule's chain): WAL_BLOCK_VALID, STALE (an older epoch's remains, or a
 * chain from an earlier lap) or MISPLACED (the chain broken at the same or a
 * later epoch: not the block written after that one).
 */
enum wal_block_state wal_block_follows(const struct wal_block_hdr *h,
				       uint64_t prev_checksum, uint32_t prev_epoch);

/* ---- laying records into a group's blocks: the one rule -------------------
 *
 * A group's payload is a stream of records, each a u32 length and its bytes.
 * A record starts in the current block unless fewer than 4 bytes are left
 * there (a length never straddles blocks); its bytes then fill blocks in
 * order. Every writer (the staging buffer, the direct path on mapped media)
 * and every block count goes through these, so a layout change is one edit.
 */
struct wal_layout {
	uint64_t nblocks; /* blocks started (the last one may be partial): 64 bits,
			   * as a batch of records may count past 2^32 before
			   * it is refused */
	uint32_t fill;	  /* payload bytes used in the last block */
};

/* Where the next record's length goes: starts a block first when needed
 * (returns true then); the length goes at payload offset l->fill of block
 * l->nblocks - 1, and the caller then adds WAL_REC_HDR_BYTES to l->fill. */
static inline bool wal_layout_record(struct wal_layout *l)
{
	if (l->nblocks && WAL_PAYLOAD_BYTES - l->fill >= WAL_REC_HDR_BYTES)
		return false;
	l->nblocks++;
	l->fill = 0;
	return true;
}

/* How many of the @left bytes still to lay go into the current block at
 * l->fill, starting a block first when it is full (*@new_block then). The
 * caller adds what it laid to l->fill. */
static inline uint32_t wal_layout_take(struct wal_layout *l, uint64_t left,
				       bool *new_block)
{
	*new_block = l->fill == WAL_PAYLOAD_BYTES;
	if (*new_block) {
		l->nblocks++;
		l->fill = 0;
	}
	uint32_t room = WAL_PAYLOAD_BYTES - l->fill;

	return left < room ? (uint32_t)left : room;
}

/* Advances @l past one record of @len bytes (> 0), without copying: the
 * same result as wal_layout_record and wal_layout_take over it. */
static inline void wal_layout_add(struct wal_layout *l, uint64_t len)
{
	wal_layout_record(l);
	l->fill += WAL_REC_HDR_BYTES;
	uint64_t room = WAL_PAYLOAD_BYTES - l->fill;

	if (len <= room) {
		l->fill += (uint32_t)len;
		return;
	}
	len -= room;
	uint64_t more = (len + WAL_PAYLOAD_BYTES - 1) / WAL_PAYLOAD_BYTES;

	l->nblocks += more;
	l->fill = (uint32_t)(len - (more - 1) * WAL_PAYLOAD_BYTES);
}

/* ---- building a block image ------------------------------------------------ */

/* Starts a block image whose first bytes continue record @lsn (or start it):
 * no record starts in it yet, nothing is used. */
static inline void wal_block_begin(uint8_t *block, uint64_t lsn)
{
	memset(block, 0, WAL_HDR_BYTES);
	wal_put16(block + WAL_BLK_FIRST_REC, WAL_NO_RECORD);
	wal_put64(block + WAL_BLK_FIRST_LSN, lsn);
}

/* Record @lsn starts at payload offset @fill: the first to start in the
 * block is the one its framing names. */
static inline void wal_block_start_record(uint8_t *block, uint32_t fill, uint64_t lsn)
{
	if (wal_get16(block + WAL_BLK_FIRST_REC) == WAL_NO_RECORD) {
		wal_put16(block + WAL_BLK_FIRST_REC, (uint16_t)fill);
		wal_put64(block + WAL_BLK_FIRST_LSN, lsn);
	}
}

/* A record's length, as it precedes its bytes. */
static inline void wal_record_len_put(uint8_t out[WAL_REC_HDR_BYTES], uint32_t len)
{
	wal_put32(out, len);
}

static inline void wal_block_set_used(uint8_t *block, uint32_t fill)
{
	wal_put16(block + WAL_BLK_PAYLOAD_BYTES, (uint16_t)fill);
}

static inline uint32_t wal_block_used(const uint8_t *block)
{
	return wal_get16(block + WAL_BLK_PAYLOAD_BYTES);
}

/* Where a block goes: what only the group's writer knows when it seals. */
struct wal_block_pos {
	uint64_t log_id;
	uint64_t seq;
	uint64_t prev_checksum;
	uint64_t durable_lsn;
	uint32_t epoch;
	uint32_t group_index;
	uint32_t group_blocks;
};

/* Fills in the header of a block image built by the functions above (its
 * framing: used bytes, first record, first LSN), all but the checksum. */
void wal_block_place(uint8_t *block, const struct wal_block_pos *pos);

/*
 * Seals a block whose bytes are in pieces (mapped media store payload from
 * where it already is): @block's first @head bytes (header, then the payload
 * that follows it in the image), then @pieces in order, are its bytes up to
 * 72 + payload_bytes. Computes the checksum over them as wal_block_seal()
 * does over a whole image, stores it in @block, and returns it.
 */
#define WAL_SEAL_PIECES_MAX 64
struct iovec;
uint64_t wal_block_seal_pieces(uint8_t *block, uint32_t head, const struct iovec *pieces,
			       int count, uint64_t slot);

/* ---- reading records out of a block ----------------------------------------- */

/*
 * The length of the record starting at payload offset @pos of a block whose
 * used payload is @end bytes: 0 when no length fits there or the length is 0
 * or above @max (the framing is damaged).
 */
static inline uint32_t wal_block_record_len(const uint8_t *block, uint32_t pos,
					    uint32_t end, uint32_t max)
{
	if (end < pos || end - pos < WAL_REC_HDR_BYTES)
		return 0;
	uint32_t len = wal_get32(block + WAL_HDR_BYTES + pos);

	return len > max && !PMWAL_BUG(TRUST_LENGTH) ? 0 : len;
}

/*
 * The record stream of consecutive blocks, walked a block at a time: the one
 * reader of the framing rule (format.c, BLOCK: first_rec, first_lsn and the
 * payload stream). Recovery counts records with it and iterators copy them.
 * wal_frame_enter() checks that a valid block continues the stream (or, with
 * @first, starts the walk there: the head, a resume point, after damage);
 * wal_frame_next() then gives the block's records piece by piece.
 */
struct wal_frame {
	uint64_t lsn_next;  /* LSN of the next record to start */
	uint32_t rec_left;  /* bytes of the current record not yet walked */
	uint32_t rec_bytes; /* the current record's length */
	uint32_t pos, end;  /* payload offset reached in the block, its used bytes */
	uint32_t rec_max;   /* the log's record_bytes_max */
};

/* Payload bytes [off, off + len) of the current block: part of record @lsn
 * (@rec_bytes long), its beginning if @first, its end if @last. */
struct wal_piece {
	uint64_t lsn;
	uint32_t rec_bytes;
	uint32_t off, len;
	bool first, last;
};

/* False if block @h contradicts the records before it (a damaged block). A
 * @first block that holds only the end of an earlier record has nothing to
 * walk; it is valid only if its group goes on (groups never end inside a
 * record), and the walk is not yet at a record boundary after it. */
bool wal_frame_enter(struct wal_frame *f, const struct wal_block_hdr *h, bool first);
/* 1 and the next piece, 0 at the end of the block, -1 if a record length is
 * damaged (0, above rec_max, or no room for it). */
int wal_frame_next(struct wal_frame *f, const uint8_t *block, struct wal_piece *p);

/* ---- the recovery decision table (format.c) ---------------------------------
 *
 * What recovery found where its walk stopped, as facts; the table's rows
 * (data, in format.c) say what each combination means. The scan computes
 * the facts and applies the one row they select; it decides nothing else.
 */
enum wal_end_fact {
	WAL_END_MISMATCH = 1u << 0,    /* at end_seq the LSN is not end_lsn, or a group is open */
	WAL_END_CLOSED = 1u << 1,      /* at end_seq of a cleanly closed log */
	WAL_END_RING_FULL = 1u << 2,   /* N blocks read, every one valid */
	WAL_END_BEFORE_END = 1u << 3,  /* invalid block q below end_seq */
	WAL_END_FUTURE = 1u << 4,      /* a block of an epoch above the superblock's */
	WAL_END_LATER_GROUP = 1u << 5, /* a valid block of a later group within the window */
	WAL_END_HINT_ABOVE = 1u << 6,  /* a durable_lsn read (walked blocks, or a later
					* group's) above the last recovered LSN */
	WAL_END_IN_GROUP = 1u << 7,    /* q is inside a group whose earlier blocks are valid */
	WAL_END_GROUP_SEEN = 1u << 8,  /* q starts a group and some block of it is valid */
	WAL_END_GARBAGE = 1u << 9,     /* q fails the checksum and is not all zero */
	WAL_END_MALFORMED = 1u << 10,  /* q is malformed, or misplaced (another slot) */
};
#define WAL_END_FACTS 11

enum wal_end_row_id {
	WAL_ROW_END_MISMATCH,
	WAL_ROW_CLOSED,
	WAL_ROW_RING_FULL,
	WAL_ROW_DAMAGED_BEFORE_END,
	WAL_ROW_FUTURE,
	WAL_ROW_LATER_GROUP,
	WAL_ROW_HINT_ABOVE,
	WAL_ROW_TORN_BESIDE,
	WAL_ROW_TORN_INSIDE,
	WAL_ROW_TORN_GROUP_SEEN,
	WAL_ROW_TORN_GARBAGE,
	WAL_ROW_TORN_MALFORMED,
	WAL_ROW_CLEAN_END,
	WAL_ROWS
};

struct wal_end_row {
	uint32_t all;	 /* facts that must hold */
	uint32_t none;	 /* facts that must not */
	int verdict;	 /* PMWAL_CLEAN, PMWAL_TORN_TAIL or PMWAL_CORRUPT */
	bool salvage;	 /* CORRUPT that salvage may resume past */
	const char *why; /* the finding, for people */
};

extern const struct wal_end_row wal_end_table[WAL_ROWS];

/* The row @facts select (exactly one does: test_format enumerates them). */
enum wal_end_row_id wal_end_decide(uint32_t facts);

/* Ring blocks a group of @payload_bytes (record headers included) needs
 * at most; used to size buffers and bound recovery's look-ahead. */
uint32_t wal_blocks_for_bytes(uint64_t payload_bytes);

#endif /* PMWAL_FORMAT_H */
