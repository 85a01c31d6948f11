// SPDX-License-Identifier: MIT
/*
 * fuzz_faults.c - structured input: a seed that chooses a real log
 * (fuzz_log.c), then a short fault script applied to its image. pmwal's
 * recovery of the damaged image is held to the reference reader (fuzz_check).
 *
 * Input: 8 bytes of seed (little-endian), then up to FAULT_OPS_MAX ops of 8
 * bytes: kind, flags, unit (u16: 4 KiB unit of the image, superblocks are 0
 * and 1), offset (u16), arg (u16). Flag RESEAL recomputes the unit's checksum
 * after the op (a block with its slot as seed, a superblock with its seed);
 * RECHAIN also rewrites prev_checksum of the ring blocks after it, so damage
 * reaches the parser, not only the checksum. The custom mutator edits ops
 * field by field and keeps the input well-formed.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "fuzz_faults.h"
#include "fuzz_log.h"
#include "xxh.h"

enum { OP_FLIP, OP_ZERO, OP_GARBAGE, OP_COPY, OP_TRUNCATE, OP_SET16, OP_KINDS };
#define F_RESEAL  1u
#define F_RECHAIN 2u

static void reseal(uint8_t *img, size_t units, size_t u)
{
	if (u < WAL_SB_COPIES) {
		uint8_t *p = img + u * WAL_SB_BYTES;

		wal_put64(p, wal_xxh3(p + 8, WAL_SB_BYTES - 8, WAL_SB_SEED));
	} else if (u < units) {
		wal_block_seal(img + u * WAL_BLOCK_BYTES, u - WAL_SB_COPIES);
	}
}

/* Ring blocks after slot @from, in slot order to the end of the ring. */
static void rechain(uint8_t *img, size_t units, size_t u)
{
	for (; u + 1 < units; u++) {
		uint8_t *b = img + (u + 1) * WAL_BLOCK_BYTES;

		wal_put64(b + 32, wal_get64(img + u * WAL_BLOCK_BYTES));
		wal_block_seal(b, u + 1 - WAL_SB_COPIES);
	}
}

/* Applies one op; @size may shrink (truncate). Marks ring slots changed. */
static void apply(uint8_t *img, size_t *size, const uint8_t *op, bool *touched)
{
	size_t units = *size / WAL_BLOCK_BYTES;
	size_t u = wal_get16(op + 2) % units;
	uint32_t off = wal_get16(op + 4) % WAL_BLOCK_BYTES, arg = wal_get16(op + 6);
	uint8_t *p = img + u * WAL_BLOCK_BYTES;
	uint32_t len = 1 + arg % (WAL_BLOCK_BYTES - off);

	switch (op[0] % OP_KINDS) {
	case OP_FLIP:
		p[off] ^= (uint8_t)(1u << (arg % 8));
		break;
	case OP_ZERO:
		memset(p + off, 0, len);
		break;
	case OP_GARBAGE: {
		uint64_t x = arg * 0x9e3779b97f4a7c15ull + 1;

		for (uint32_t i = 0; i < len; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			p[off + i] = (uint8_t)x;
		}
		break;
	}
	case OP_COPY:
		memcpy(p, img + (size_t)(arg % units) * WAL_BLOCK_BYTES, WAL_BLOCK_BYTES);
		break;
	case OP_TRUNCATE:
		*size = (size_t)(u ? u : 1) * WAL_BLOCK_BYTES;
		return;
	case OP_SET16:
		if (off + 2 <= WAL_BLOCK_BYTES)
			wal_put16(p + off, (uint16_t)arg);
		break;
	}
	if (op[1] & F_RESEAL)
		reseal(img, units, u);
	if ((op[1] & F_RECHAIN) && u >= WAL_SB_COPIES)
		rechain(img, units, u);
	if (u >= WAL_SB_COPIES)
		for (size_t s = u - WAL_SB_COPIES; s < units - WAL_SB_COPIES; s++) {
			touched[s] = true;
			if (!(op[1] & F_RECHAIN))
				break;
		}
}

int fuzz_faults_one(const uint8_t *data, size_t size)
{
	struct fuzz_log log;
	uint64_t seed = 0;
	int bad = 0;

	if (size < 8)
		return 0;
	memcpy(&seed, data, 8);
	seed = le64toh(seed);
	if (fuzz_log_build(seed, &log)) {
		fuzz_log_free(&log);
		return -1;
	}
	uint8_t *img = malloc(log.size);
	bool *touched = calloc(log.ring_blocks, sizeof(bool));
	size_t img_size = log.size;

	if (!img || !touched)
		goto out;
	memcpy(img, log.image, log.size);
	for (size_t i = 8, n = 0; i + 8 <= size && n < FAULT_OPS_MAX; i += 8, n++)
		apply(img, &img_size, data + i, touched);
	if (img_size < log.size) /* truncated: everything past the end is gone */
		for (uint64_t s = 0; s < log.ring_blocks; s++)
			if (WAL_RING_OFFSET + (s + 1) * WAL_BLOCK_BYTES > img_size)
				touched[s] = true;
	struct ref_result ref;
	struct fuzz_seen seen;

	if (ref_parse(img, img_size, &ref) == 0 && fuzz_seen_read(img, img_size, &seen) == 0) {
		bad = fuzz_check(&log, touched, &ref, &seen);
		fuzz_seen_free(&seen);
	}
	ref_free(&ref);
out:
	free(touched);
	free(img);
	fuzz_log_free(&log);
	return bad;
}

#ifdef PMWAL_LIBFUZZER
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (fuzz_faults_one(data, size))
		abort();
	return 0;
}

/* Edits the script as ops: a field, a new op (checksums resealed by
 * default), a dropped op, or libFuzzer's byte mutation of one op. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t cap = 8 + 8 * FAULT_OPS_MAX;

	if (max_size < cap)
		cap = max_size / 8 * 8;
	if (size < 8 || cap < 16) {
		size = size < 8 ? 8 : size;
		return LLVMFuzzerMutate(data, size, max_size);
	}
	size = size / 8 * 8;
	if (size > cap)
		size = cap;
	x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	size_t ops = (size - 8) / 8;
	uint8_t *op = data + 8 + 8 * (ops ? x % ops : 0);

	switch ((x >> 32) % 6) {
	case 0: /* another log */
		if (x & 0x100)
			data[(x >> 40) % 8] ^= (uint8_t)(1u << ((x >> 48) % 8));
		else
			LLVMFuzzerMutate(data, 8, 8);
		break;
	case 1: /* a new op */
		if (size + 8 <= cap) {
			op = data + size;
			size += 8;
			for (int i = 0; i < 8; i++)
				op[i] = (uint8_t)(x >> (8 * i));
			op[1] = (x >> 60) % 4 ? F_RESEAL : (uint8_t)(x >> 56) & 3;
			break;
		}
		/* fall through: full */
	case 2: /* drop one */
		if (ops) {
			memmove(op, op + 8, (size_t)(data + size - (op + 8)));
			size -= 8;
		}
		break;
	case 3: /* small change to the offset or arg */
		if (ops)
			wal_put16(op + 4 + 2 * ((x >> 20) & 1),
				  (uint16_t)(wal_get16(op + 4 + 2 * ((x >> 20) & 1)) +
					     (int)((x >> 24) % 17) - 8));
		break;
	case 4: /* kind, flags or unit */
		if (ops)
			op[(x >> 20) % 4] = (uint8_t)(x >> 40);
		break;
	default:
		if (ops)
			LLVMFuzzerMutate(op, 8, 8);
	}
	return size;
}
#endif
