// SPDX-License-Identifier: MIT
/*
 * format.c - the pmwal on-disk format, version 2: its specification and the
 * only code that encodes and decodes it.
 *
 * LAYOUT
 *   A log is a fixed-capacity region (a preallocated file, a block device, or
 *   a persistent memory region) of 4096-byte units:
 *
 *     byte 0       superblock copy 0
 *     byte 4096    superblock copy 1
 *     byte 8192    ring slot 0, then slot 1, ... slot N-1 (N = capacity_blocks)
 *
 *   Every integer is little-endian. Block sequence numbers (seq) count every
 *   block ever written to the log from 0 and are never reused; block seq lives
 *   in ring slot seq % N. LSNs number records from 1 and are never reused.
 *
 * SUPERBLOCK (4096 bytes; two copies with the same content)
 *   off size field
 *     0    8 checksum          XXH3_64bits(bytes [8, 4096), seed WAL_SB_SEED)
 *     8    8 magic             "PMWALSB1" (0x3142534c41574d50)
 *    16    4 format_version    2 (any other version is refused by name)
 *    20    4 block_bytes       4096
 *    24    8 log_id            random, nonzero: the log's identity
 *    32    8 sb_seq            +1 on every superblock update (>= 1)
 *    40    8 capacity_blocks   N, ring slots (4 .. 2^40)
 *    48    4 epoch             +1 on every open for writing (1 .. 2^32-2)
 *    52    4 record_bytes_max  largest record (1 .. 1 GiB)
 *    56    8 head_seq          seq of the oldest live block
 *    64    8 head_lsn          oldest live LSN (records below it are released)
 *    72    4 group_blocks_max  most blocks one group write may span
 *                              (2 .. min(N, WAL_GROUP_BLOCKS_MAX))
 *    76    4 flags             bit 0 CLOSED: written by a clean close
 *    80    8 create_time_ns    CLOCK_REALTIME at creation
 *    88    8 end_seq           every block in [head_seq, end_seq) was durable
 *                              when this copy was written (head_seq <= end_seq
 *                              <= head_seq + N)
 *    96    8 end_lsn           the LSN after the last record in those blocks
 *                              (>= head_lsn)
 *   104 3992 zero              (checked)
 *
 *   An update writes one copy and makes it durable, then the other, and only
 *   then uses the new state (a new epoch, reusable space after a release).
 *   The copy written first is the one that does not hold the newest valid
 *   state (copy 0 when both are equal): after a crash tore one copy, the
 *   other is the only valid one and is never overwritten first. So a crash
 *   or one damaged copy always leaves a copy describing a state that was
 *   true: both valid -> the higher sb_seq; one valid -> that one (the
 *   damaged one's update never completed, or the other holds the same);
 *   two valid copies of different logs, or with one sb_seq but other
 *   contents -> CORRUPT, never a guess. Salvage (PMWAL_OPEN_SALVAGE)
 *   reads past two logs' copies by the ring: the copy whose log_id the
 *   blocks from its head_seq carry (checksum valid, up to 16 blocks) is
 *   used, the newer create_time_ns where blocks of both are there, none
 *   where neither's are; the report stays CORRUPT, naming the other copy. A copy whose magic and checksum
 *   hold but whose format_version is not 2 was written on purpose by
 *   another pmwal or tool, not torn: the log is refused by that version
 *   (EFORMAT), whatever the other copy holds, never read past it by
 *   choosing the other copy. Superblocks are written at create,
 *   after recovery (new epoch, end = what recovery kept), at release (new
 *   head, end = the durable end) and at a clean close (CLOSED).
 *
 * BLOCK (4096 bytes: a 72-byte header, then 4024 payload bytes)
 *   off size field
 *     0    8 checksum          XXH3_64bits(bytes [8, 72 + payload_bytes),
 *                              seed = ring slot): header and used payload
 *     8    4 magic             "PWB1" (0x31425750)
 *    12    2 payload_bytes     payload bytes used (0 .. 4024); the rest is padding,
 *                              written as zero and ignored by readers
 *    14    2 first_rec         payload offset of the first record header that
 *                              starts in this block; 0xFFFF if none does
 *    16    8 log_id            the superblock's log_id
 *    24    8 seq               block sequence number; seq % N == slot
 *    32    8 prev_checksum     checksum of block seq-1 (0 for seq 0): a hash chain
 *    40    8 first_lsn         LSN of the record at first_rec, or of the record
 *                              continued into this block when first_rec is 0xFFFF
 *    48    8 durable_lsn       highest LSN acknowledged when this was written
 *    56    4 epoch             the superblock epoch of the writer
 *    60    4 group_index       index of this block within its group write
 *    64    4 group_blocks      blocks in its group write (>= 1)
 *    68    4 reserved          zero
 *    72 4024 payload           a stream of records: u32 length, then the bytes;
 *                              a record may continue into the next block of the
 *                              same group, a 4-byte length never straddles
 *                              blocks, and a group never ends inside a record
 *
 *   The checksum covers the whole header (log_id, seq, epoch, position in the
 *   group, previous checksum, framing) and every payload byte in use (a value
 *   of payload_bytes above 4024 fails the check before hashing); its seed binds
 *   the slot. So a block from an earlier lap (older seq), from another log
 *   (log_id), or copied into another slot (seed, seq % N) is never valid.
 *
 * GROUPS AND ACKNOWLEDGEMENT
 *   Records are written in groups: group_blocks consecutive blocks written
 *   together and made durable together. At most WAL_INFLIGHT_MAX groups are
 *   in flight at once (written, not yet known durable), and they may become
 *   durable in any order; a record is acknowledged only once its group and
 *   every earlier group are durable, so acknowledgements go in LSN order. A
 *   group's durable_lsn is what was acknowledged when it was sealed: a group
 *   sealed while an earlier one was in flight does not attest it. A block is
 *   never rewritten while it is live: a group seals its last block (zero
 *   padding), so a torn write can only ever damage unacknowledged groups.
 *   (A writer with one group in flight, as every pmwal before several were
 *   allowed, writes logs this rule reads the same way: each group's
 *   durable_lsn attests every group before it.)
 *
 * VALID BLOCK (read at slot s while expecting seq q)
 *   checksum matches; magic and log_id match the superblock; seq == q;
 *   epoch <= superblock epoch (a higher one is FUTURE: the superblock is
 *   older than the blocks, which one valid copy never is); 1 <= payload_bytes
 *   <= 4024; first_rec is 0xFFFF or first_rec + 4 <= payload_bytes;
 *   group_index < group_blocks <=
 *   group_blocks_max; and, except for the head block, prev_checksum equals
 *   the checksum of block q-1. At seq >= end_seq the epoch must equal the
 *   superblock's (only the open that wrote it writes there; anything older is
 *   the unacknowledged remains of an earlier open). The head block's
 *   first_lsn is <= head_lsn (== head_lsn when head_seq == end_seq).
 *
 * RECOVERY DECISION TABLE
 *   Recovery walks seq = head_seq, head_seq+1, ... while blocks are valid and
 *   keeps the records of complete groups. It stops at end_seq when the
 *   superblock's end does not match or the log was closed there, after N
 *   valid blocks, or at the first block q that is not valid. What it found
 *   there is a set of facts (enum wal_end_fact) and the verdict is the one
 *   row of wal_end_table below that they select; the rows are data, in
 *   this order, each excluding every fact of the rows above it, so exactly
 *   one matches any set (test_format checks all 2^11):
 *
 *   finding                                                         verdict
 *   -------------------------------------------------------------  ---------
 *   at end_seq the LSN is not end_lsn, or a group is open            CORRUPT
 *   CLOSED and q == end_seq: the clean close's end (whatever the     CLEAN
 *     slot holds: zeros, garbage, an old log's bytes)
 *   N blocks read, all valid: the ring is full                       CLEAN
 *   q < end_seq: the superblock says block q was durable             CORRUPT
 *   a block of epoch above the superblock's (FUTURE)                 CORRUPT
 *   a valid block of a LATER group exists within the look-ahead     CORRUPT
 *     window (seq q+1 .. q + (WAL_INFLIGHT_MAX+1)*group_blocks_max)
 *     and a durable_lsn read (HINT) is above the last recovered LSN:
 *     block q's group was acknowledged before that group was written
 *   the largest durable_lsn in the blocks read is above the last     CORRUPT
 *     recovered LSN: the log itself attests an acked record is gone
 *   a LATER group exists but no HINT attests block q's records:      TORN_TAIL
 *     it was written while q's group was still in flight (several
 *     groups in flight), and it is cut off with q's
 *   q lies inside a group whose earlier blocks are valid             TORN_TAIL
 *   q starts a group, and some block of that group is valid          TORN_TAIL
 *   q starts a group and its block fails the checksum (not zero)     TORN_TAIL
 *   q starts a group and is malformed or misplaced                   TORN_TAIL
 *   q starts a group and its block is zero, stale (an earlier lap),  CLEAN
 *     of another log, or of an earlier epoch (remains of a tail cut
 *     off by an earlier recovery)
 *
 *   What no byte can prove: groups acknowledged since the last
 *   superblock write of a log that was not closed cleanly, with no group
 *   sealed after their acknowledgement. With one group in flight that is the
 *   last group; with W in flight, up to the last W groups, even with others
 *   written after them (a group sealed while they were in flight attests
 *   nothing about them: TORN_BESIDE). Damage that removes them whole (zeros,
 *   or a block of an earlier lap) reads as CLEAN or TORN_TAIL at the last
 *   group that survives; a changed byte in one reads TORN_TAIL. Everything
 *   up to end_seq, and everything of a cleanly closed log, is proven.
 *
 *   CORRUPT reports the first LSN whose bytes are in block q and q's byte
 *   offset. Open fails on CORRUPT unless salvage was asked for; salvage
 *   resumes at the later group found and reports the blocks and records it
 *   skipped. The records of an incomplete group are never returned: they were
 *   never acknowledged. Recovery reads at most head..q plus the window, holds
 *   one read buffer, and writes nothing; the engine then bumps the epoch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "format.h"
#include "seeded.h"
#include "xxh.h"

_Static_assert(WAL_HDR_BYTES == 72, "block header is 72 bytes");
_Static_assert(WAL_PAYLOAD_BYTES == 4024, "block payload is 4024 bytes");
_Static_assert(WAL_RING_OFFSET == 8192, "ring starts after two superblocks");
_Static_assert(WAL_PAYLOAD_BYTES < WAL_NO_RECORD, "first_rec fits 16 bits");
_Static_assert(PMWAL_BLOCK_BYTES == 4096, "4 KiB blocks");

void wal_sb_encode(const struct wal_sb *sb, uint8_t out[WAL_SB_BYTES])
{
	memset(out, 0, WAL_SB_BYTES);
	wal_put64(out + 8, WAL_SB_MAGIC);
	wal_put32(out + 16, sb->format_version);
	wal_put32(out + 20, sb->block_bytes);
	wal_put64(out + 24, sb->log_id);
	wal_put64(out + 32, sb->sb_seq);
	wal_put64(out + 40, sb->capacity_blocks);
	wal_put32(out + 48, sb->epoch);
	wal_put32(out + 52, sb->record_bytes_max);
	wal_put64(out + 56, sb->head_seq);
	wal_put64(out + 64, sb->head_lsn);
	wal_put32(out + 72, sb->group_blocks_max);
	wal_put32(out + 76, sb->flags);
	wal_put64(out + 80, sb->create_time_ns);
	wal_put64(out + 88, sb->end_seq);
	wal_put64(out + 96, sb->end_lsn);
	wal_put64(out, wal_xxh3(out + 8, WAL_SB_BYTES - 8, WAL_SB_SEED));
}

/* Every field in range, overflow-safely: a checksummed lie must not crash,
 * hang or allocate (the checksum proves only who wrote the bytes). */
static bool sb_fields_ok(const struct wal_sb *sb, const uint8_t *in)
{
	uint64_t n = sb->capacity_blocks;

	for (uint32_t i = WAL_SB_USED_BYTES; i < WAL_SB_BYTES; i++)
		if (in[i])
			return false;
	return sb->block_bytes == WAL_BLOCK_BYTES && sb->log_id != 0 && sb->sb_seq != 0 &&
	       n >= WAL_MIN_RING_BLOCKS && n <= WAL_CAPACITY_MAX && sb->epoch != 0 &&
	       sb->epoch <= WAL_EPOCH_MAX && sb->record_bytes_max != 0 &&
	       sb->record_bytes_max <= WAL_RECORD_MAX_LIMIT &&
	       sb->group_blocks_max >= 2 && sb->group_blocks_max <= n &&
	       sb->group_blocks_max <= WAL_GROUP_BLOCKS_MAX && sb->head_lsn != 0 &&
	       (sb->flags & ~WAL_SB_CLOSED) == 0 && sb->end_seq >= sb->head_seq &&
	       sb->end_seq - sb->head_seq <= n && sb->end_lsn >= sb->head_lsn &&
	       sb->end_seq <= UINT64_MAX - n && sb->end_lsn < UINT64_MAX / 2;
}

int wal_sb_decode(const uint8_t in[WAL_SB_BYTES], struct wal_sb *sb)
{
	if (wal_get64(in + 8) != WAL_SB_MAGIC)
		return PMWAL_EFORMAT;
	if (wal_get64(in) != wal_xxh3(in + 8, WAL_SB_BYTES - 8, WAL_SB_SEED))
		return PMWAL_EFORMAT;
	sb->format_version = wal_get32(in + 16);
	sb->block_bytes = wal_get32(in + 20);
	sb->log_id = wal_get64(in + 24);
	sb->sb_seq = wal_get64(in + 32);
	sb->capacity_blocks = wal_get64(in + 40);
	sb->epoch = wal_get32(in + 48);
	sb->record_bytes_max = wal_get32(in + 52);
	sb->head_seq = wal_get64(in + 56);
	sb->head_lsn = wal_get64(in + 64);
	sb->group_blocks_max = wal_get32(in + 72);
	sb->flags = wal_get32(in + 76);
	sb->create_time_ns = wal_get64(in + 80);
	sb->end_seq = wal_get64(in + 88);
	sb->end_lsn = wal_get64(in + 96);
	if (sb->format_version != PMWAL_FORMAT_VERSION || !sb_fields_ok(sb, in))
		return PMWAL_EFORMAT;
	return 0;
}

/* Whether a copy's magic and checksum hold: its bytes were written whole,
 * on purpose, by some pmwal or tool (its fields may still be anything). */
static bool sb_sealed(const uint8_t *in)
{
	return wal_get64(in + 8) == WAL_SB_MAGIC &&
	       wal_get64(in) == wal_xxh3(in + 8, WAL_SB_BYTES - 8, WAL_SB_SEED);
}

/* Why a format 1 log is refused, and what to do. */
static void format1_why(char *why, size_t whylen)
{
	snprintf(why, whylen,
		 "a format version 1 log (pmwal 0.1); this pmwal supports version %d only: "
		 "dump it with the old pmwal and append the records to a new log",
		 PMWAL_FORMAT_VERSION);
}

/*
 * A sealed copy of another format version is no torn copy to route around:
 * another pmwal (older or newer) or a tool wrote it, and what the log holds
 * is its to say. Refuse by version, naming it; returns 0 when neither copy
 * is such a one.
 */
static int sb_other_version(const uint8_t *copies, int ra, int rb, char *why,
			    size_t whylen)
{
	for (uint32_t c = 0; c < WAL_SB_COPIES; c++) {
		const uint8_t *in = copies + c * WAL_SB_BYTES;
		uint32_t v = wal_get32(in + 16);
		int other_rc = c == 0 ? rb : ra;

		if (!sb_sealed(in) || v == PMWAL_FORMAT_VERSION)
			continue;
		if (other_rc == 0)
			snprintf(why, whylen,
				 "format version %u in the superblock copy at offset %u "
				 "(valid checksum), beside a version %d copy: another "
				 "pmwal or tool wrote it; this pmwal supports version %d "
				 "only and refuses rather than choose a copy",
				 v, c * WAL_SB_BYTES, PMWAL_FORMAT_VERSION,
				 PMWAL_FORMAT_VERSION);
		else if (v == 1)
			format1_why(why, whylen);
		else
			snprintf(why, whylen,
				 "format version %u in the superblock copy at offset %u "
				 "(valid checksum); this pmwal supports version %d only: "
				 "open it with the pmwal that wrote it",
				 v, c * WAL_SB_BYTES, PMWAL_FORMAT_VERSION);
		return PMWAL_EFORMAT;
	}
	return 0;
}

int wal_sb_pick(const uint8_t copies[WAL_SB_COPIES * WAL_SB_BYTES], struct wal_sb *sb,
		char *why, size_t whylen)
{
	struct wal_sb a, b;
	int ra = wal_sb_decode(copies, &a);
	int rb = wal_sb_decode(copies + WAL_SB_BYTES, &b);
	int rc = sb_other_version(copies, ra, rb, why, whylen);

	if (rc)
		return rc;
	if (ra && rb) {
		uint32_t v0 = wal_get32(copies + 16), v1 = wal_get32(copies + WAL_SB_BYTES + 16);
		bool magic = wal_get64(copies + 8) == WAL_SB_MAGIC ||
			     wal_get64(copies + WAL_SB_BYTES + 8) == WAL_SB_MAGIC;

		if (magic && (v0 == 1 || v1 == 1))
			format1_why(why, whylen);
		else if (magic)
			snprintf(why, whylen,
				 "both superblock copies are damaged or out of range");
		else
			snprintf(why, whylen, "no pmwal superblock at offset 0 or "
					     "4096; create a log with `pmwal create`");
		return PMWAL_EFORMAT;
	}
	if (PMWAL_BUG(TRUST_OLD_SB) && ra == 0 && rb == 0) {
		*sb = a.sb_seq < b.sb_seq ? a : b;
		return 0;
	}
	if (ra == 0 && rb == 0) {
		if (a.log_id != b.log_id) {
			snprintf(why, whylen,
				 "the superblock copies name two logs (id %016llx at offset "
				 "0, %016llx at 4096): one was written over; salvage "
				 "(--salvage) reads the records by the copy their blocks "
				 "name, and a salvaging writer rewrites both",
				 (unsigned long long)a.log_id, (unsigned long long)b.log_id);
			return PMWAL_ECORRUPT;
		}
		if (a.sb_seq == b.sb_seq &&
		    memcmp(copies, copies + WAL_SB_BYTES, WAL_SB_BYTES) != 0) {
			snprintf(why, whylen,
				 "the superblock copies disagree at the same update %llu",
				 (unsigned long long)a.sb_seq);
			return PMWAL_ECORRUPT;
		}
		*sb = a.sb_seq >= b.sb_seq ? a : b;
		return 0;
	}
	*sb = ra == 0 ? a : b;
	return 0;
}

uint64_t wal_block_checksum(const uint8_t *block, uint64_t slot)
{
	uint32_t used = wal_block_used(block);

	if (used > WAL_PAYLOAD_BYTES)
		used = WAL_PAYLOAD_BYTES; /* damaged: the caller's check fails */
	/* Seeded bug CHECKSUM_PARTIAL: the header's lengths, ids, sequence and
	 * first LSN left out (WAL_SUM_FROM is where the sum starts). */
	return wal_xxh3(block + WAL_SUM_FROM, WAL_HDR_BYTES - WAL_SUM_FROM + used, slot);
}

void wal_block_place(uint8_t *block, const struct wal_block_pos *pos)
{
	wal_put32(block + WAL_BLK_MAGIC, WAL_BLOCK_MAGIC);
	wal_put64(block + WAL_BLK_LOG_ID, pos->log_id);
	wal_put64(block + WAL_BLK_SEQ, pos->seq);
	wal_put64(block + WAL_BLK_PREV_CHECKSUM, pos->prev_checksum);
	wal_put64(block + WAL_BLK_DURABLE_LSN, pos->durable_lsn);
	wal_put32(block + WAL_BLK_EPOCH, pos->epoch);
	wal_put32(block + WAL_BLK_GROUP_INDEX, pos->group_index);
	wal_put32(block + WAL_BLK_GROUP_BLOCKS, pos->group_blocks);
	wal_put32(block + WAL_BLK_RESERVED, 0);
}

void wal_block_encode_hdr(const struct wal_block_hdr *h, uint8_t *block)
{
	wal_put16(block + WAL_BLK_PAYLOAD_BYTES, h->payload_bytes);
	wal_put16(block + WAL_BLK_FIRST_REC, h->first_rec);
	wal_put64(block + WAL_BLK_FIRST_LSN, h->first_lsn);
	wal_block_place(block, &(struct wal_block_pos){
				   .log_id = h->log_id,
				   .seq = h->seq,
				   .prev_checksum = h->prev_checksum,
				   .durable_lsn = h->durable_lsn,
				   .epoch = h->epoch,
				   .group_index = h->group_index,
				   .group_blocks = h->group_blocks,
			       });
}

uint64_t wal_block_seal(uint8_t *block, uint64_t slot)
{
	uint64_t sum = wal_block_checksum(block, slot);

	wal_put64(block + WAL_BLK_CHECKSUM, sum);
	return sum;
}

uint64_t wal_block_seal_pieces(uint8_t *block, uint32_t head, const struct iovec *pieces,
			       int count, uint64_t slot)
{
	struct iovec v[WAL_SEAL_PIECES_MAX + 1];

	if (count > WAL_SEAL_PIECES_MAX)
		abort(); /* the callers' bound, checked at build time there */
	v[0] = (struct iovec){block + WAL_SUM_FROM, head - WAL_SUM_FROM};
	memcpy(v + 1, pieces, (size_t)count * sizeof(*pieces));
	uint64_t sum = wal_xxh3v(v, count + 1, slot);

	wal_put64(block + WAL_BLK_CHECKSUM, sum);
	return sum;
}

void wal_block_decode_hdr(const uint8_t *block, struct wal_block_hdr *h)
{
	h->checksum = wal_get64(block + WAL_BLK_CHECKSUM);
	h->magic = wal_get32(block + WAL_BLK_MAGIC);
	h->payload_bytes = wal_get16(block + WAL_BLK_PAYLOAD_BYTES);
	h->first_rec = wal_get16(block + WAL_BLK_FIRST_REC);
	h->log_id = wal_get64(block + WAL_BLK_LOG_ID);
	h->seq = wal_get64(block + WAL_BLK_SEQ);
	h->prev_checksum = wal_get64(block + WAL_BLK_PREV_CHECKSUM);
	h->first_lsn = wal_get64(block + WAL_BLK_FIRST_LSN);
	h->durable_lsn = wal_get64(block + WAL_BLK_DURABLE_LSN);
	h->epoch = wal_get32(block + WAL_BLK_EPOCH);
	h->group_index = wal_get32(block + WAL_BLK_GROUP_INDEX);
	h->group_blocks = wal_get32(block + WAL_BLK_GROUP_BLOCKS);
}

enum wal_block_state wal_block_check(const uint8_t *block, uint64_t slot, uint64_t seq,
				     const struct wal_sb *sb, const struct wal_chain *prev,
				     struct wal_block_hdr *h)
{
	wal_block_decode_hdr(block, h);
	if (h->payload_bytes > WAL_PAYLOAD_BYTES ||
	    h->checksum != wal_block_checksum(block, slot))
		return WAL_BLOCK_CHECKSUM;
	if (h->magic != WAL_BLOCK_MAGIC || h->log_id != sb->log_id)
		return WAL_BLOCK_FOREIGN;
	if (PMWAL_BUG(ACCEPT_STALE))
		h->seq = seq; /* any lap, any slot: taken as the one expected */
	if (h->seq % sb->capacity_blocks != slot || h->seq > seq)
		return WAL_BLOCK_MISPLACED;
	if (h->seq < seq)
		return WAL_BLOCK_STALE;
	if (h->payload_bytes == 0 || h->payload_bytes > WAL_PAYLOAD_BYTES ||
	    (h->first_rec != WAL_NO_RECORD &&
	     (uint32_t)h->first_rec + WAL_REC_HDR_BYTES > h->payload_bytes) ||
	    h->group_blocks == 0 || h->group_index >= h->group_blocks ||
	    h->group_blocks > sb->group_blocks_max || h->first_lsn == 0 ||
	    wal_get32(block + WAL_BLK_RESERVED) != 0)
		return WAL_BLOCK_MALFORMED;
	if (h->epoch > sb->epoch)
		return WAL_BLOCK_FUTURE;
	/* Past end_seq only the open that wrote the superblock writes: an
	 * older epoch there is the unacknowledged remains of an earlier open. */
	if (seq >= sb->end_seq && h->epoch != sb->epoch && !PMWAL_BUG(ACCEPT_STALE))
		return WAL_BLOCK_STALE;
	return prev ? wal_block_follows(h, prev->checksum, prev->epoch) : WAL_BLOCK_VALID;
}

enum wal_block_state wal_block_follows(const struct wal_block_hdr *h,
				       uint64_t prev_checksum, uint32_t prev_epoch)
{
	if (PMWAL_BUG(ACCEPT_STALE))
		return WAL_BLOCK_VALID;
	if (h->epoch < prev_epoch)
		return WAL_BLOCK_STALE; /* left by an earlier epoch */
	if (h->prev_checksum != prev_checksum)
		return WAL_BLOCK_MISPLACED;
	return WAL_BLOCK_VALID;
}

/* ---- framing ---------------------------------------------------------- */

bool wal_frame_enter(struct wal_frame *f, const struct wal_block_hdr *h, bool first)
{
	bool cont_only = h->first_rec == WAL_NO_RECORD;

	f->pos = 0;
	f->end = h->payload_bytes;
	if (first) {
		/* Skip the end of a record begun before the walk. */
		f->rec_left = 0;
		if (cont_only) {
			f->pos = f->end;
			return h->group_index + 1 < h->group_blocks;
		}
		f->pos = h->first_rec;
		f->lsn_next = h->first_lsn;
		return true;
	}
	if (!f->rec_left)
		return h->first_rec == 0 && h->first_lsn == f->lsn_next;
	if (PMWAL_BUG(TRUST_LENGTH))
		return true;
	/* The record begun before goes on here: only inside its group, and
	 * the block must say so and end it where its next record starts. */
	uint32_t take = f->rec_left < f->end ? f->rec_left : f->end;

	if (h->group_index == 0 || h->first_lsn != (cont_only ? f->lsn_next - 1 : f->lsn_next))
		return false;
	if (take < f->rec_left)
		return cont_only && f->end == WAL_PAYLOAD_BYTES;
	return cont_only ? take == f->end : h->first_rec == take;
}

int wal_frame_next(struct wal_frame *f, const uint8_t *block, struct wal_piece *p)
{
	if (f->rec_left) { /* the current record goes on in this block */
		if (f->pos >= f->end)
			return 0;
		uint32_t take = f->rec_left < f->end - f->pos ? f->rec_left : f->end - f->pos;

		*p = (struct wal_piece){f->lsn_next - 1, f->rec_bytes, f->pos, take, false,
					take == f->rec_left};
		f->pos += take;
		f->rec_left -= take;
		return 1;
	}
	if (f->pos >= f->end)
		return 0;
	uint32_t len = wal_block_record_len(block, f->pos, f->end, f->rec_max);

	if (len == 0)
		return -1;
	f->pos += WAL_REC_HDR_BYTES;
	uint32_t take = len < f->end - f->pos ? len : f->end - f->pos;

	*p = (struct wal_piece){f->lsn_next++, len, f->pos, take, true, take == len};
	f->pos += take;
	f->rec_left = len - take;
	f->rec_bytes = len;
	return 1;
}

const char *wal_block_state_name(enum wal_block_state s)
{
	switch (s) {
	case WAL_BLOCK_VALID:
		return "valid";
	case WAL_BLOCK_CHECKSUM:
		return "checksum mismatch";
	case WAL_BLOCK_FOREIGN:
		return "block of another log";
	case WAL_BLOCK_STALE:
		return "stale block from an earlier lap";
	case WAL_BLOCK_MISPLACED:
		return "block belongs to another slot";
	case WAL_BLOCK_MALFORMED:
		return "malformed header";
	case WAL_BLOCK_FUTURE:
		return "block of an epoch newer than the superblock";
	}
	return "?";
}

/* The decision table (RECOVERY DECISION TABLE above), one row per line. */
#define STOPS  (WAL_END_MISMATCH | WAL_END_CLOSED | WAL_END_RING_FULL)
#define DAMAGE (STOPS | WAL_END_BEFORE_END | WAL_END_FUTURE | WAL_END_LATER_GROUP)
#define PROVEN (DAMAGE | WAL_END_HINT_ABOVE)
#define TORN   (PROVEN | WAL_END_IN_GROUP | WAL_END_GROUP_SEEN | WAL_END_GARBAGE)

const struct wal_end_row wal_end_table[WAL_ROWS] = {
    [WAL_ROW_END_MISMATCH] = {WAL_END_MISMATCH, 0, PMWAL_CORRUPT, false,
			      "the blocks disagree with the superblock's durable end"},
    [WAL_ROW_CLOSED] = {WAL_END_CLOSED, WAL_END_MISMATCH, PMWAL_CLEAN, false,
			"the end of a cleanly closed log"},
    [WAL_ROW_RING_FULL] = {WAL_END_RING_FULL, WAL_END_MISMATCH | WAL_END_CLOSED,
			   PMWAL_CLEAN, false, "the ring is full to capacity"},
    [WAL_ROW_DAMAGED_BEFORE_END] = {WAL_END_BEFORE_END, STOPS, PMWAL_CORRUPT, true,
				    "a block the superblock records durable is damaged"},
    [WAL_ROW_FUTURE] = {WAL_END_FUTURE, STOPS | WAL_END_BEFORE_END, PMWAL_CORRUPT, true,
			"a block of an epoch the superblock never had"},
    [WAL_ROW_LATER_GROUP] = {WAL_END_LATER_GROUP | WAL_END_HINT_ABOVE,
			     STOPS | WAL_END_BEFORE_END | WAL_END_FUTURE, PMWAL_CORRUPT,
			     true, "a later group was written after this one was acknowledged"},
    [WAL_ROW_HINT_ABOVE] = {WAL_END_HINT_ABOVE, DAMAGE, PMWAL_CORRUPT, false,
			    "the log attests an acknowledged record that is gone"},
    [WAL_ROW_TORN_BESIDE] = {WAL_END_LATER_GROUP,
			     STOPS | WAL_END_BEFORE_END | WAL_END_FUTURE | WAL_END_HINT_ABOVE,
			     PMWAL_TORN_TAIL, false,
			     "groups written while an unacknowledged one was in flight"},
    [WAL_ROW_TORN_INSIDE] = {WAL_END_IN_GROUP, PROVEN, PMWAL_TORN_TAIL, false,
			     "a group torn after its first valid blocks"},
    [WAL_ROW_TORN_GROUP_SEEN] = {WAL_END_GROUP_SEEN, PROVEN | WAL_END_IN_GROUP,
				 PMWAL_TORN_TAIL, false,
				 "a group whose first block is torn and another is not"},
    [WAL_ROW_TORN_GARBAGE] = {WAL_END_GARBAGE,
			      PROVEN | WAL_END_IN_GROUP | WAL_END_GROUP_SEEN,
			      PMWAL_TORN_TAIL, false, "a torn first block of a group"},
    [WAL_ROW_TORN_MALFORMED] = {WAL_END_MALFORMED, TORN, PMWAL_TORN_TAIL, false,
				"a malformed or misplaced first block of a group"},
    [WAL_ROW_CLEAN_END] = {0, TORN | WAL_END_MALFORMED, PMWAL_CLEAN, false,
			   "zeros, an earlier lap, another log or an earlier epoch"},
};

enum wal_end_row_id wal_end_decide(uint32_t facts)
{
	for (int r = 0; r < WAL_ROWS; r++) {
		const struct wal_end_row *row = &wal_end_table[r];

		if ((facts & row->all) == row->all && !(facts & row->none))
			return (enum wal_end_row_id)r;
	}
	return WAL_ROW_CLEAN_END; /* unreachable: the last row takes the rest */
}

uint32_t wal_blocks_for_bytes(uint64_t payload_bytes)
{
	/* Each block may lose up to 3 bytes of padding before a record header. */
	const uint64_t usable = WAL_PAYLOAD_BYTES - (WAL_REC_HDR_BYTES - 1);
	uint64_t n = (payload_bytes + usable - 1) / usable;

	return (uint32_t)(n ? n : 1);
}
