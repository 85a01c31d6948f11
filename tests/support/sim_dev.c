// SPDX-License-Identifier: MIT
/*
 * sim_dev.c - the simulated device of sim_dev.h. Real code held to the same
 * standard as the other devices: every fault it injects is one a real device
 * can produce (docs/reliability.md F1-F4, F8, F9).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_dev.h"

struct sim_dev {
	struct wal_dev dev;
	uint8_t *image;
	uint64_t commits;
	uint64_t crash_at, fail_at;
	enum sim_tear tear;
	uint64_t tear_arg;
	int fail_err;
	int dead;
	uint64_t crash_sectors;
	uint64_t bad_off, bad_len;
};

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Lands part of a crashing commit, sector by sector in commit order. */
static void land_partial(struct sim_dev *s, const struct wal_io *ios, int count)
{
	uint64_t rng = s->tear_arg, k = 0;

	for (int i = 0; i < count; i++)
		for (size_t off = 0; off < ios[i].len; off += SIM_SECTOR_BYTES, k++) {
			uint8_t *dst = s->image + ios[i].off + off;
			const uint8_t *src = (const uint8_t *)ios[i].buf + off;
			bool land = s->tear == SIM_TEAR_ALL ||
				    (s->tear == SIM_TEAR_PREFIX && k < s->tear_arg) ||
				    ((s->tear == SIM_TEAR_RANDOM ||
				      s->tear == SIM_TEAR_GARBAGE) &&
				     (splitmix(&rng) & 1));

			if (!land)
				continue;
			if (s->tear == SIM_TEAR_GARBAGE)
				for (unsigned j = 0; j < SIM_SECTOR_BYTES; j += 8) {
					uint64_t g = splitmix(&rng);

					memcpy(dst + j, &g, 8);
				}
			else
				memcpy(dst, src, SIM_SECTOR_BYTES);
		}
	s->crash_sectors = k;
}

static int sim_commit(struct wal_dev *dev, const struct wal_io *ios, int count,
		      struct wal_submitted *submitted)
{
	(void)submitted;
	struct sim_dev *s = (struct sim_dev *)dev;
	uint64_t n = s->commits++;

	if (s->dead)
		return -EIO;
	for (int i = 0; i < count; i++)
		if (ios[i].off + ios[i].len > s->dev.size_bytes ||
		    ios[i].off % SIM_SECTOR_BYTES || ios[i].len % SIM_SECTOR_BYTES)
			return -EINVAL;
	if (n == s->fail_at)
		return s->fail_err;
	if (n == s->crash_at) {
		land_partial(s, ios, count);
		s->dead = 1;
		return -EIO;
	}
	for (int i = 0; i < count; i++)
		memcpy(s->image + ios[i].off, ios[i].buf, ios[i].len);
	return 0;
}

static int sim_read(struct wal_dev *dev, void *buf, size_t len, uint64_t off)
{
	struct sim_dev *s = (struct sim_dev *)dev;

	if (off + len > s->dev.size_bytes)
		return -EIO;
	if (s->bad_len && off < s->bad_off + s->bad_len && s->bad_off < off + len)
		return -EIO;
	memcpy(buf, s->image + off, len);
	return 0;
}

static void sim_close(struct wal_dev *dev)
{
	(void)dev; /* the test owns the sim and its image */
}

static const struct wal_dev_ops sim_ops = {
    .commit = sim_commit, .read = sim_read, .close = sim_close};

struct sim_dev *sim_new(uint64_t size_bytes)
{
	struct sim_dev *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->image = calloc(1, size_bytes);
	if (!s->image) {
		free(s);
		return NULL;
	}
	s->dev.ops = &sim_ops;
	s->dev.size_bytes = size_bytes;
	s->dev.sector_bytes = SIM_SECTOR_BYTES;
	strcpy(s->dev.medium, "sim");
	strcpy(s->dev.io_path, "sim");
	strcpy(s->dev.durability, "simulated write-through");
	s->crash_at = s->fail_at = UINT64_MAX;
	return s;
}

struct sim_dev *sim_from_image(const uint8_t *image, uint64_t size_bytes)
{
	struct sim_dev *s = sim_new(size_bytes);

	if (s)
		memcpy(s->image, image, size_bytes);
	return s;
}

void sim_free(struct sim_dev *s)
{
	if (!s)
		return;
	free(s->image);
	free(s);
}

struct wal_dev *sim_wal_dev(struct sim_dev *s)
{
	return &s->dev;
}

uint8_t *sim_image(struct sim_dev *s)
{
	return s->image;
}

uint64_t sim_size(const struct sim_dev *s)
{
	return s->dev.size_bytes;
}

uint64_t sim_commits(const struct sim_dev *s)
{
	return s->commits;
}

void sim_crash_at(struct sim_dev *s, uint64_t n, enum sim_tear tear, uint64_t arg)
{
	s->crash_at = n;
	s->tear = tear;
	s->tear_arg = arg;
}

void sim_fail_at(struct sim_dev *s, uint64_t n, int err)
{
	s->fail_at = n;
	s->fail_err = err;
}

void sim_read_error(struct sim_dev *s, uint64_t off, uint64_t len)
{
	s->bad_off = off;
	s->bad_len = len;
}

uint64_t sim_crash_sectors(const struct sim_dev *s)
{
	return s->crash_sectors;
}

int sim_dead(const struct sim_dev *s)
{
	return s->dead;
}
