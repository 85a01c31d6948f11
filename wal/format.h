/* SPDX-License-Identifier: MIT */
/*
 * format.h - decoded forms of the on-disk structures and their encoders and
 * decoders. The format itself is specified at the top of format.c; the writer
 * (engine.c) and recovery (recovery.c) both go through these functions, so a
 * format change is one edit.
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
/*
 * Validates the block read at @slot against the log's superblock, expecting
 * sequence @seq. Fills @h in every case where the checksum matched.
 */
enum wal_block_state wal_block_check(const uint8_t *block, uint64_t slot, uint64_t seq,
				     const struct wal_sb *sb, struct wal_block_hdr *h);
const char *wal_block_state_name(enum wal_block_state s);

/* Ring blocks a group of @payload_bytes (record headers included) needs
 * at most; used to size buffers and bound recovery's look-ahead. */
uint32_t wal_blocks_for_bytes(uint64_t payload_bytes);

#endif /* PMWAL_FORMAT_H */
