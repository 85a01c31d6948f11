// SPDX-License-Identifier: MIT
/*
 * fuzz_seeds.c - writes the seed corpora of the three fuzz targets from real
 * logs and crash images: fuzz_seeds DIR writes DIR/corpus_raw (ring bytes of
 * logs written by the engine, and of the same logs after a crash inside a
 * commit with each of sim_dev's tear kinds), DIR/corpus_sb (each real log
 * unchanged, and with one superblock field or mode changed) and
 * DIR/corpus_faults (log seeds alone, and with one or two faults). scripts/
 * fuzz.sh minimizes them with libFuzzer's -merge=1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine.h"
#include "fuzz/fuzz_recovery.h"
#include "testutil.h"

static const char *dir;

static void put(const char *corpus, const char *name, const uint8_t *data, size_t len)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, corpus);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, corpus, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len) {
		perror(path);
		exit(1);
	}
	fclose(f);
}

/* A log on fuzz_recovery's superblock, crashing at commit @crash (or never). */
static void raw_log(int k, uint64_t crash, enum sim_tear tear)
{
	const size_t bytes = WAL_RING_OFFSET + (size_t)FUZZ_RING_BLOCKS * WAL_BLOCK_BYTES;
	struct sim_dev *sim = sim_new(bytes);
	static uint8_t buf[1 + FUZZ_RING_BLOCKS * WAL_BLOCK_BYTES];
	struct pmwal *w;
	char name[64];

	fuzz_make_sb(sim_image(sim), 1);
	if (tu_open_sim(sim, 0, &w))
		exit(1);
	if (crash != UINT64_MAX)
		sim_crash_at(sim, sim_commits(sim) + crash, tear, (uint64_t)k);
	for (uint64_t i = 1; i <= 12; i++) {
		size_t n = 1 + (size_t)((i * 997 + (uint64_t)k * 31) % (i % 4 ? 400 : 9000));

		tu_fill(buf, n, i);
		if (pmwal_append(w, buf, n, NULL))
			break;
	}
	pmwal_close(w);
	buf[0] = 0; /* checksums as written */
	memcpy(buf + 1, sim_image(sim) + WAL_RING_OFFSET, bytes - WAL_RING_OFFSET);
	snprintf(name, sizeof(name), "log%d_%s%d", k, crash == UINT64_MAX ? "clean" : "tear",
		 (int)tear);
	put("corpus_raw", name, buf, sizeof(buf));
	sim_free(sim);
}

static void sb_seeds(void)
{
	uint8_t in[1 + 2 * 89];
	char name[64];

	for (int k = 0; k < 4; k++) {
		memset(in, 0, sizeof(in));
		in[0] = (uint8_t)k;
		in[1] = in[90] = 1; /* both copies as written */
		snprintf(name, sizeof(name), "log%d", k);
		put("corpus_sb", name, in, sizeof(in));
		in[1] = 1 | 4; /* copy 0 damaged */
		snprintf(name, sizeof(name), "log%d_copy0_bad", k);
		put("corpus_sb", name, in, sizeof(in));
		/* One field of copy 0 moved by one, for each 8-byte field slot. */
		for (int f = 0; f < 88; f += 4) {
			in[1] = 1 | 2;
			memset(in + 2, 0, 88);
			in[2 + f] = 1;
			snprintf(name, sizeof(name), "log%d_field%d", k, f + 16);
			put("corpus_sb", name, in, sizeof(in));
		}
		/* One copy sealed with version 1 or 3 beside a valid one: the log
		 * is refused by version, not read through the other copy. */
		for (int c = 0; c < 2; c++)
			for (int v = 1; v <= 3; v += 2) {
				memset(in + 1, 0, sizeof(in) - 1);
				in[1] = in[90] = 1;
				/* XORed onto the version field, 2 */
				in[2 + c * 89] = (uint8_t)(v ^ 2);
				snprintf(name, sizeof(name), "log%d_copy%d_version%d", k,
					 c, v);
				put("corpus_sb", name, in, sizeof(in));
			}
	}
}

static void fault_seeds(void)
{
	uint8_t in[8 + 2 * 8];
	char name[64];
	uint64_t x = 0x2545f4914f6cdd1dull;

	for (uint64_t seed = 1; seed <= 24; seed++) {
		memset(in, 0, sizeof(in));
		wal_put64(in, seed);
		snprintf(name, sizeof(name), "seed%llu", (unsigned long long)seed);
		put("corpus_faults", name, in, 8);
		for (int kind = 0; kind < 6; kind++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			in[8] = (uint8_t)kind;
			in[9] = (uint8_t)(x & 3);
			wal_put16(in + 10, (uint16_t)(2 + (x >> 8) % 40));
			wal_put16(in + 12, (uint16_t)((x >> 20) % 4096));
			wal_put16(in + 14, (uint16_t)(x >> 40));
			snprintf(name, sizeof(name), "seed%llu_op%d", (unsigned long long)seed, kind);
			put("corpus_faults", name, in, 16);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_seeds DIR (writes DIR/corpus_{raw,sb,faults})\n");
		return 2;
	}
	dir = argv[1];
	for (int k = 0; k < 2; k++) {
		raw_log(k, UINT64_MAX, SIM_TEAR_NONE);
		for (int tear = SIM_TEAR_NONE; tear <= SIM_TEAR_GARBAGE; tear++)
			raw_log(k, 3 + (uint64_t)k * 4, (enum sim_tear)tear);
	}
	sb_seeds();
	fault_seeds();
	return 0;
}
