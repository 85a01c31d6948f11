/* SPDX-License-Identifier: MIT */
/*
 * sim_dev.h - a simulated block device for crash and fault testing: an
 * in-memory durable image behind the engine's device interface. A commit can
 * be made to crash part-way (nothing, everything, a prefix of its 512-byte
 * sectors, or a seeded random subset lands) or to fail with an error; reads can
 * fail. The image that survives is what recovery is then run on.
 */
#ifndef PMWAL_SIM_DEV_H
#define PMWAL_SIM_DEV_H

#include <stdint.h>

#include "device.h"

#define SIM_SECTOR_BYTES 512u

enum sim_tear {
	SIM_TEAR_NONE = 0, /* nothing of the commit lands */
	SIM_TEAR_ALL,	   /* every byte lands, but no ack is given */
	SIM_TEAR_PREFIX,   /* the first `arg` sectors of the commit land */
	SIM_TEAR_RANDOM,   /* a subset of sectors chosen by seed `arg` lands */
	SIM_TEAR_GARBAGE,  /* sectors chosen by seed `arg` get garbage */
};

struct sim_dev;

struct sim_dev *sim_new(uint64_t size_bytes);
/* A device whose durable contents start as a copy of @image. */
struct sim_dev *sim_from_image(const uint8_t *image, uint64_t size_bytes);
void sim_free(struct sim_dev *s);
/* The engine's view; the engine's close() leaves the sim alive. */
struct wal_dev *sim_wal_dev(struct sim_dev *s);
uint8_t *sim_image(struct sim_dev *s);
uint64_t sim_size(const struct sim_dev *s);
/* Commits so far (superblock writes included). */
uint64_t sim_commits(const struct sim_dev *s);
/* The commit numbered @n (0-based) crashes: part lands, then the device is dead. */
void sim_crash_at(struct sim_dev *s, uint64_t n, enum sim_tear tear, uint64_t arg);
/* The commit numbered @n fails with @err and nothing lands; later ones work. */
void sim_fail_at(struct sim_dev *s, uint64_t n, int err);
/* Reads overlapping [off, off+len) fail with -EIO. */
void sim_read_error(struct sim_dev *s, uint64_t off, uint64_t len);
/* Sectors (512 B) the crashed commit covered, 0 if none crashed yet. */
uint64_t sim_crash_sectors(const struct sim_dev *s);
int sim_dead(const struct sim_dev *s);

#endif
