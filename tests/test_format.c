// SPDX-License-Identifier: MIT
/*
 * test_format.c - the on-disk format: encode/decode round trips and every
 * rule that makes a superblock or a block valid (format.c's specification).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "xxh.h"

static struct wal_sb sample_sb(void)
{
	struct wal_sb sb = {
	    .format_version = PMWAL_FORMAT_VERSION,
	    .block_bytes = WAL_BLOCK_BYTES,
	    .log_id = 0x1122334455667788ull,
	    .sb_seq = 7,
	    .capacity_blocks = 100,
	    .epoch = 3,
	    .record_bytes_max = 1 << 20,
	    .head_seq = 42,
	    .head_lsn = 1000,
	    .group_blocks_max = 20,
	    .create_time_ns = 123456789,
	    .end_seq = 50,
	    .end_lsn = 1200,
	};
	return sb;
}

Test(format, superblock_round_trips)
{
	uint8_t buf[WAL_SB_BYTES];
	struct wal_sb a = sample_sb(), b;

	wal_sb_encode(&a, buf);
	cr_assert_eq(wal_sb_decode(buf, &b), 0);
	cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0);
	/* Little-endian at the documented offsets. */
	cr_assert_eq(buf[24], 0x88);
	cr_assert_eq(buf[31], 0x11);
	cr_assert_eq(wal_get64(buf + 56), 42);
}

Test(format, superblock_with_any_flipped_bit_is_rejected)
{
	uint8_t buf[WAL_SB_BYTES];
	struct wal_sb a = sample_sb(), b;

	wal_sb_encode(&a, buf);
	for (size_t bit = 0; bit < WAL_SB_USED_BYTES * 8; bit += 7) {
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		cr_assert_neq(wal_sb_decode(buf, &b), 0, "bit %zu", bit);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
}

Test(format, newer_valid_superblock_copy_wins_and_a_damaged_one_is_ignored)
{
	uint8_t copies[2 * WAL_SB_BYTES];
	struct wal_sb a = sample_sb(), out;
	char why[256];

	wal_sb_encode(&a, copies);
	a.sb_seq = 8;
	a.head_lsn = 1100;
	wal_sb_encode(&a, copies + WAL_SB_BYTES);
	cr_assert_eq(wal_sb_pick(copies, &out, why, sizeof(why)), 0);
	cr_assert_eq(out.head_lsn, 1100);
	copies[WAL_SB_BYTES + 100] ^= 1; /* torn second copy */
	cr_assert_eq(wal_sb_pick(copies, &out, why, sizeof(why)), 0);
	cr_assert_eq(out.head_lsn, 1000);
	copies[100] ^= 1;
	cr_assert_eq(wal_sb_pick(copies, &out, why, sizeof(why)), PMWAL_EFORMAT);
}

Test(format, superblock_copies_of_two_logs_are_corrupt_never_a_guess)
{
	uint8_t copies[2 * WAL_SB_BYTES];
	struct wal_sb a = sample_sb(), out;
	char why[256] = "";

	wal_sb_encode(&a, copies);
	a.log_id ^= 1;
	a.sb_seq = 99; /* "newer" */
	wal_sb_encode(&a, copies + WAL_SB_BYTES);
	cr_assert_eq(wal_sb_pick(copies, &out, why, sizeof(why)), PMWAL_ECORRUPT);
	cr_assert(strstr(why, "two logs"), "%s", why);
	/* Same update number, other contents: also refused. */
	a = sample_sb();
	wal_sb_encode(&a, copies);
	a.head_lsn = 1001;
	wal_sb_encode(&a, copies + WAL_SB_BYTES);
	cr_assert_eq(wal_sb_pick(copies, &out, why, sizeof(why)), PMWAL_ECORRUPT);
}

/* A copy whose checksum holds but whose version is not 2 is not a damaged
 * copy: the log is refused by that version, even beside a valid copy (a
 * newer one, or an older). */
Test(format, a_sealed_copy_of_another_version_is_refused_not_skipped)
{
	uint8_t copies[2 * WAL_SB_BYTES];
	struct wal_sb a = sample_sb(), out;
	char why[256];

	for (int copy = 0; copy < 2; copy++)
		for (uint32_t v = 1; v <= 3; v += 2) {
			struct wal_sb other = a;

			other.format_version = v;
			wal_sb_encode(&a, copies + (1 - copy) * WAL_SB_BYTES);
			wal_sb_encode(&other, copies + copy * WAL_SB_BYTES);
			why[0] = 0;
			cr_assert_eq(wal_sb_pick(copies, &out, why, sizeof(why)),
				     PMWAL_EFORMAT,
				     "copy %d version %u: the other copy "
				     "was chosen",
				     copy, v);
			char want[80];

			snprintf(want, sizeof(want),
				 "format version %u in the superblock copy at offset %d",
				 v, copy * WAL_SB_BYTES);
			cr_assert_not_null(strstr(why, want), "%s", why);
			cr_assert_not_null(strstr(why, "beside a version 2 copy"), "%s",
					   why);
			cr_assert_not_null(strstr(why, "supports version 2 only"), "%s",
					   why);
		}
	/* Version 3 alone (the other copy torn): still named by version. */
	struct wal_sb v3 = a;

	v3.format_version = 3;
	wal_sb_encode(&v3, copies);
	wal_sb_encode(&a, copies + WAL_SB_BYTES);
	copies[WAL_SB_BYTES + 100] ^= 1;
	cr_assert_eq(wal_sb_pick(copies, &out, why, sizeof(why)), PMWAL_EFORMAT);
	cr_assert_not_null(strstr(why, "format version 3"), "%s", why);
	/* A damaged copy whose version field was hit is still just damaged. */
	wal_sb_encode(&a, copies);
	wal_sb_encode(&a, copies + WAL_SB_BYTES);
	copies[WAL_SB_BYTES + 16] ^= 1; /* version 3, checksum not resealed */
	cr_assert_eq(wal_sb_pick(copies, &out, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(out.head_lsn, a.head_lsn);
}

/* Fields that pass the checksum but are out of range: each is refused. */
static const char *out_of_range(int i, struct wal_sb *sb)
{
	switch (i) {
	case 0:
		sb->capacity_blocks = UINT64_MAX / 4096;
		return "capacity wrapping 8192 + cap * 4096";
	case 1:
		sb->capacity_blocks = (1ull << 40) + 1;
		return "capacity 2^40 + 1";
	case 2:
		sb->capacity_blocks = 3;
		return "capacity 3";
	case 3:
		sb->group_blocks_max = 101;
		return "group_blocks_max above capacity";
	case 4:
		sb->group_blocks_max = UINT32_MAX;
		return "group_blocks_max huge";
	case 5:
		sb->group_blocks_max = 0;
		return "group_blocks_max 0";
	case 6:
		sb->epoch = 0;
		return "epoch 0";
	case 7:
		sb->epoch = UINT32_MAX;
		return "epoch at its maximum";
	case 8:
		sb->record_bytes_max = 0;
		return "record_bytes_max 0";
	case 9:
		sb->record_bytes_max = 2u << 30;
		return "record_bytes_max 2 GiB";
	case 10:
		sb->head_lsn = 0;
		return "head_lsn 0";
	case 11:
		sb->head_lsn = 1201;
		return "head_lsn past end_lsn";
	case 12:
		sb->end_seq = 41;
		return "end_seq below head_seq";
	case 13:
		sb->end_seq = 42 + 101;
		return "end_seq a lap past head_seq";
	case 14:
		sb->flags = 2;
		return "unknown flag";
	case 15:
		sb->block_bytes = 512;
		return "block_bytes 512";
	case 16:
		sb->log_id = 0;
		return "log_id 0";
	case 17:
		sb->sb_seq = 0;
		return "sb_seq 0";
	case 18:
		sb->format_version = 1;
		return "format version 1";
	case 19:
		sb->format_version = 3;
		return "format version 3";
	}
	return NULL;
}

Test(format, every_superblock_field_out_of_range_is_refused)
{

	uint8_t buf[WAL_SB_BYTES];
	struct wal_sb b;

	for (int i = 0;; i++) {
		struct wal_sb a = sample_sb();
		const char *what = out_of_range(i, &a);

		if (!what)
			break;
		wal_sb_encode(&a, buf);
		cr_assert_eq(wal_sb_decode(buf, &b), PMWAL_EFORMAT, "accepted: %s", what);
	}
	/* A nonzero byte in the reserved area, re-sealed. */
	struct wal_sb a = sample_sb();

	wal_sb_encode(&a, buf);
	buf[2000] = 1;
	wal_put64(buf, wal_xxh3(buf + 8, WAL_SB_BYTES - 8, WAL_SB_SEED));
	cr_assert_eq(wal_sb_decode(buf, &b), PMWAL_EFORMAT, "accepted reserved bytes");
}

/* A valid block at seq 57 of the sample log, with one record. */
static void make_block(uint8_t *block, uint64_t seq, const struct wal_sb *sb)
{
	struct wal_block_hdr h = {
	    .payload_bytes = 4 + 10,
	    .first_rec = 0,
	    .log_id = sb->log_id,
	    .seq = seq,
	    .prev_checksum = 99,
	    .first_lsn = 5000,
	    .durable_lsn = 4999,
	    .epoch = sb->epoch,
	    .group_index = 0,
	    .group_blocks = 1,
	};
	memset(block, 0, WAL_BLOCK_BYTES);
	wal_put32(block + WAL_HDR_BYTES, 10);
	memcpy(block + WAL_HDR_BYTES + 4, "0123456789", 10);
	wal_block_encode_hdr(&h, block);
	wal_block_seal(block, seq % sb->capacity_blocks);
}

Test(format, block_header_round_trips_and_validates)
{
	uint8_t block[WAL_BLOCK_BYTES];
	struct wal_sb sb = sample_sb();
	struct wal_block_hdr h;

	make_block(block, 57, &sb);
	cr_assert_eq(wal_block_check(block, 57, 57, &sb, NULL, &h), WAL_BLOCK_VALID);
	cr_assert_eq(h.seq, 57);
	cr_assert_eq(h.first_lsn, 5000);
	cr_assert_eq(h.prev_checksum, 99);
	cr_assert_eq(h.payload_bytes, 14);
}

Test(format, every_flipped_bit_of_header_or_payload_fails_the_checksum)
{
	uint8_t block[WAL_BLOCK_BYTES];
	struct wal_sb sb = sample_sb();
	struct wal_block_hdr h;
	size_t used_bits = (WAL_HDR_BYTES + 14) * 8;

	make_block(block, 57, &sb);
	for (size_t bit = 0; bit < used_bits; bit++) {
		block[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		cr_assert_neq(wal_block_check(block, 57, 57, &sb, NULL, &h), WAL_BLOCK_VALID,
			      "bit %zu", bit);
		block[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	/* Padding carries no record bytes: damage there changes nothing read. */
	block[WAL_BLOCK_BYTES - 1] ^= 0xff;
	cr_assert_eq(wal_block_check(block, 57, 57, &sb, NULL, &h), WAL_BLOCK_VALID);
}

Test(format, block_from_an_earlier_lap_is_stale)
{
	uint8_t block[WAL_BLOCK_BYTES];
	struct wal_sb sb = sample_sb();
	struct wal_block_hdr h;

	make_block(block, 57, &sb); /* lap 0, slot 57 */
	cr_assert_eq(wal_block_check(block, 57, 157, &sb, NULL, &h), WAL_BLOCK_STALE);
}

Test(format, block_copied_into_another_slot_is_rejected)
{
	uint8_t block[WAL_BLOCK_BYTES];
	struct wal_sb sb = sample_sb();
	struct wal_block_hdr h;

	make_block(block, 57, &sb);
	/* The slot seeds the checksum: a misdirected copy fails it. */
	cr_assert_eq(wal_block_check(block, 58, 58, &sb, NULL, &h), WAL_BLOCK_CHECKSUM);
}

Test(format, block_of_another_log_is_foreign)
{
	uint8_t block[WAL_BLOCK_BYTES];
	struct wal_sb sb = sample_sb(), other = sample_sb();
	struct wal_block_hdr h;

	other.log_id = 0xabcdef;
	make_block(block, 57, &other);
	cr_assert_eq(wal_block_check(block, 57, 57, &sb, NULL, &h), WAL_BLOCK_FOREIGN);
}

Test(format, out_of_range_header_fields_are_malformed)
{
	uint8_t block[WAL_BLOCK_BYTES];
	struct wal_sb sb = sample_sb();
	struct wal_block_hdr h;

	struct {
		size_t off;
		uint32_t value;
		int width;
	} cases[] = {
	    {14, 12, 16}, /* first_rec past the payload */
	    {60, 1, 32},  /* group_index >= group_blocks */
	    {64, 21, 32}, /* group_blocks > group_blocks_max */
	    {68, 1, 32},  /* reserved */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		make_block(block, 57, &sb);
		if (cases[i].width == 16)
			wal_put16(block + cases[i].off, (uint16_t)cases[i].value);
		else
			wal_put32(block + cases[i].off, cases[i].value);
		wal_block_seal(block, 57);
		cr_assert_eq(wal_block_check(block, 57, 57, &sb, NULL, &h), WAL_BLOCK_MALFORMED,
			     "case %zu", i);
	}
	/* An epoch the superblock never had: the superblock is the stale one. */
	make_block(block, 57, &sb);
	wal_put32(block + 56, 99);
	wal_block_seal(block, 57);
	cr_assert_eq(wal_block_check(block, 57, 57, &sb, NULL, &h), WAL_BLOCK_FUTURE);
}

Test(format, payload_length_past_the_block_is_refused_before_hashing)
{
	uint8_t block[WAL_BLOCK_BYTES];
	struct wal_sb sb = sample_sb();
	struct wal_block_hdr h;

	make_block(block, 57, &sb);
	wal_put16(block + 12, WAL_PAYLOAD_BYTES + 1);
	wal_block_seal(block, 57);
	cr_assert_neq(wal_block_check(block, 57, 57, &sb, NULL, &h), WAL_BLOCK_VALID);
}

Test(format, zero_filled_space_is_never_a_block)
{
	uint8_t block[WAL_BLOCK_BYTES] = {0};
	struct wal_sb sb = sample_sb();
	struct wal_block_hdr h;

	cr_assert_eq(wal_block_check(block, 0, 0, &sb, NULL, &h), WAL_BLOCK_CHECKSUM);
}

Test(format, blocks_for_bytes_covers_padding)
{
	cr_assert_eq(wal_blocks_for_bytes(1), 1);
	cr_assert_eq(wal_blocks_for_bytes(WAL_PAYLOAD_BYTES - 3), 1);
	cr_assert_eq(wal_blocks_for_bytes(WAL_PAYLOAD_BYTES), 2);
	cr_assert_geq(wal_blocks_for_bytes(16u << 20) * (uint64_t)WAL_PAYLOAD_BYTES,
		      16u << 20);
}

/* The engine checksums a block from where its pieces are (wal_xxh3v); it
 * must equal the hash of the same bytes in one buffer, for any split. */
Test(format, xxh3_over_pieces_equals_xxh3_over_one_buffer)
{
	static uint8_t buf[9000];
	uint64_t x = 0x9E3779B97F4A7C15ull;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (uint8_t)x;
	}
	for (int round = 0; round < 2000; round++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t len = round < 300 ? (size_t)round : x % sizeof(buf);
		struct iovec v[8];
		int n = 0;
		size_t at = 0;

		while (at < len && n < 7) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			size_t take = x % (len - at + 1);

			v[n++] = (struct iovec){buf + at, take};
			at += take;
		}
		v[n++] = (struct iovec){buf + at, len - at};
		uint64_t seed = round % 3 ? (uint64_t)round : 0;

		cr_assert_eq(wal_xxh3v(v, n, seed), wal_xxh3(buf, len, seed),
			     "len %zu in %d pieces, seed %llu", len, n,
			     (unsigned long long)seed);
	}
}

/*
 * The layout rule has one home (format.h): the O(1) count a writer sizes
 * groups by must land exactly where laying the bytes one piece at a time
 * does, for records at every boundary (a length that fits in the last 4
 * bytes or not, a record that ends a block exactly, records of many blocks).
 */
Test(format, layout_count_equals_laying_the_bytes)
{
	uint64_t x = 0x2545F4914F6CDD1Dull;
	const uint64_t edge[] = {1, 2, 3, 4, 5, WAL_PAYLOAD_BYTES - 8, WAL_PAYLOAD_BYTES - 5,
				 WAL_PAYLOAD_BYTES - 4, WAL_PAYLOAD_BYTES - 3,
				 WAL_PAYLOAD_BYTES, WAL_PAYLOAD_BYTES + 1,
				 2 * WAL_PAYLOAD_BYTES - 4, 3 * WAL_PAYLOAD_BYTES};

	for (int round = 0; round < 20000; round++) {
		struct wal_layout fast = {0, 0}, slow = {0, 0};
		int count = 1 + round % 7;

		for (int i = 0; i < count; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint64_t len = x % 3 ? edge[x % (sizeof(edge) / sizeof(edge[0]))]
					     : 1 + x % (5 * WAL_PAYLOAD_BYTES);

			wal_layout_add(&fast, len);
			bool nb = wal_layout_record(&slow);

			cr_assert(nb || slow.nblocks > 0);
			cr_assert_leq(slow.fill + WAL_REC_HDR_BYTES, WAL_PAYLOAD_BYTES,
				      "a length straddles blocks");
			slow.fill += WAL_REC_HDR_BYTES;
			for (uint64_t left = len; left > 0;) {
				uint32_t take = wal_layout_take(&slow, left, &nb);

				cr_assert_gt(take, 0);
				slow.fill += take;
				left -= take;
			}
			cr_assert_eq(fast.nblocks, slow.nblocks, "round %d record %d (%llu bytes)",
				     round, i, (unsigned long long)len);
			cr_assert_eq(fast.fill, slow.fill, "round %d record %d (%llu bytes)",
				     round, i, (unsigned long long)len);
		}
	}
}

/* A block sealed from pieces carries the checksum a whole image gets. */
Test(format, a_block_sealed_in_pieces_equals_one_sealed_whole)
{
	static uint8_t whole[WAL_BLOCK_BYTES], parts[WAL_BLOCK_BYTES];
	uint64_t x = 0x9E3779B97F4A7C15ull;

	for (int round = 0; round < 500; round++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t used = 1 + (uint32_t)(x % WAL_PAYLOAD_BYTES);

		wal_block_begin(whole, 7);
		wal_block_start_record(whole, 0, 7);
		for (uint32_t i = 0; i < used; i++)
			whole[WAL_HDR_BYTES + i] = (uint8_t)(x >> (i % 56));
		wal_block_set_used(whole, used);
		wal_block_place(whole, &(struct wal_block_pos){.log_id = 9, .seq = round,
							       .prev_checksum = x,
							       .durable_lsn = 6,
							       .epoch = 2,
							       .group_blocks = 1});
		memcpy(parts, whole, sizeof(parts));
		uint64_t sum = wal_block_seal(whole, round % 5);
		uint32_t head = WAL_HDR_BYTES + (uint32_t)(x % (used + 1));
		struct iovec rest[3];
		uint32_t at = head, left = WAL_HDR_BYTES + used - head;
		int n = 0;

		while (left && n < 2) {
			uint32_t take = 1 + (uint32_t)((x >> (8 * n)) % left);

			rest[n++] = (struct iovec){parts + at, take};
			at += take;
			left -= take;
		}
		if (left)
			rest[n++] = (struct iovec){parts + at, left};
		cr_assert_eq(wal_block_seal_pieces(parts, head, rest, n, round % 5), sum,
			     "round %d", round);
		cr_assert_eq(memcmp(parts, whole, sizeof(parts)), 0);
	}
}

/*
 * The recovery decision table is data (format.c): every one of the 2^11 sets
 * of facts recovery can meet selects exactly one row, every row is selected
 * by some set, and the rows say what the specification says.
 */
Test(format, every_set_of_recovery_facts_matches_exactly_one_row)
{
	int hits[WAL_ROWS] = {0};

	for (uint32_t facts = 0; facts < (1u << WAL_END_FACTS); facts++) {
		int matched = 0, which = -1;

		for (int r = 0; r < WAL_ROWS; r++) {
			const struct wal_end_row *row = &wal_end_table[r];

			if ((facts & row->all) == row->all && !(facts & row->none)) {
				matched++;
				which = r;
			}
		}
		cr_assert_eq(matched, 1, "facts 0x%x match %d rows", facts, matched);
		cr_assert_eq((int)wal_end_decide(facts), which, "facts 0x%x", facts);
		hits[which]++;
	}
	for (int r = 0; r < WAL_ROWS; r++) {
		cr_assert_gt(hits[r], 0, "row %d (%s) is never selected", r,
			     wal_end_table[r].why);
		cr_assert_not_null(wal_end_table[r].why);
		cr_assert(wal_end_table[r].verdict != PMWAL_CORRUPT ||
			      r <= WAL_ROW_HINT_ABOVE,
			  "row %d: only proven damage is CORRUPT", r);
	}
	/* The specification's rows, one fact at a time. */
	cr_assert_eq(wal_end_table[wal_end_decide(0)].verdict, PMWAL_CLEAN);
	cr_assert_eq(wal_end_table[wal_end_decide(WAL_END_BEFORE_END | WAL_END_GARBAGE)].verdict,
		     PMWAL_CORRUPT);
	/* A later group proves damage only when a hint attests the records
	 * (several groups in flight: one sealed beside q's attests nothing). */
	cr_assert_eq((int)wal_end_decide(WAL_END_LATER_GROUP | WAL_END_HINT_ABOVE | WAL_END_IN_GROUP),
		     WAL_ROW_LATER_GROUP);
	cr_assert_eq(wal_end_table[wal_end_decide(WAL_END_LATER_GROUP | WAL_END_IN_GROUP)].verdict,
		     PMWAL_TORN_TAIL);
	cr_assert_eq((int)wal_end_decide(WAL_END_LATER_GROUP), WAL_ROW_TORN_BESIDE);
	cr_assert_eq((int)wal_end_decide(WAL_END_LATER_GROUP | WAL_END_GARBAGE), WAL_ROW_TORN_BESIDE);
	cr_assert_eq(wal_end_table[wal_end_decide(WAL_END_IN_GROUP)].verdict, PMWAL_TORN_TAIL);
	cr_assert_eq(wal_end_table[wal_end_decide(WAL_END_GARBAGE)].verdict, PMWAL_TORN_TAIL);
	cr_assert_eq(wal_end_table[wal_end_decide(WAL_END_MALFORMED)].verdict, PMWAL_TORN_TAIL);
	cr_assert_eq(wal_end_table[wal_end_decide(WAL_END_HINT_ABOVE | WAL_END_GARBAGE)].verdict,
		     PMWAL_CORRUPT);
	cr_assert_eq(wal_end_table[wal_end_decide(WAL_END_CLOSED | WAL_END_GARBAGE)].verdict,
		     PMWAL_CLEAN);
	cr_assert_eq(wal_end_table[wal_end_decide(WAL_END_CLOSED | WAL_END_MISMATCH)].verdict,
		     PMWAL_CORRUPT);
	cr_assert(wal_end_table[WAL_ROW_LATER_GROUP].salvage);
	cr_assert_not(wal_end_table[WAL_ROW_HINT_ABOVE].salvage);
}

/* The chain rule: a block follows the one before it only if it names that
 * block's checksum and its epoch does not go back. */
Test(format, a_block_follows_only_the_block_its_chain_names)
{
	struct wal_block_hdr h = {.prev_checksum = 0x1234, .epoch = 5};

	cr_assert_eq(wal_block_follows(&h, 0x1234, 5), WAL_BLOCK_VALID);
	cr_assert_eq(wal_block_follows(&h, 0x1234, 4), WAL_BLOCK_VALID, "a new epoch");
	cr_assert_eq(wal_block_follows(&h, 0x1234, 6), WAL_BLOCK_STALE, "an older epoch");
	cr_assert_eq(wal_block_follows(&h, 0x9999, 6), WAL_BLOCK_STALE);
	cr_assert_eq(wal_block_follows(&h, 0x9999, 5), WAL_BLOCK_MISPLACED, "chain broken");
	cr_assert_eq(wal_block_follows(&h, 0x9999, 2), WAL_BLOCK_MISPLACED);
}

/* A batch may count past 2^32 blocks before it is refused: the count must
 * not wrap to something that fits (it wrapped to 3839 blocks of a batch of
 * 1,048,833 records of 4095 blocks each, and the staging copy overran). */
Test(format, a_layout_count_past_2_to_the_32_does_not_wrap)
{
	struct wal_layout l = {0, 0};
	const uint64_t len = 4095ull * WAL_PAYLOAD_BYTES - WAL_REC_HDR_BYTES;

	for (int i = 0; i < 1048833; i++)
		wal_layout_add(&l, len);
	cr_assert_eq(l.nblocks, 1048833ull * 4095, "%llu", (unsigned long long)l.nblocks);
}
