// SPDX-License-Identifier: MIT
/*
 * testutil.c - helpers of testutil.h.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "testutil.h"

static char *mkdtemp_in(const char *base)
{
	char *dir = malloc(512);

	snprintf(dir, 512, "%s/pmwal-test-XXXXXX", base);
	if (!mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

char *tu_mkdtemp(void)
{
	const char *base = getenv("PMWAL_TEST_DIR");

	/* /var/tmp: on a disk filesystem even where /tmp is tmpfs. */
	return mkdtemp_in(base ? base : "/var/tmp");
}

char *tu_mkdtemp_shm(void)
{
	return mkdtemp_in("/dev/shm");
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void tu_rmdir(char *dir)
{
	if (!dir)
		return;
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

char *tu_path(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

void tu_fill(void *buf, size_t len, uint64_t key)
{
	uint8_t *p = buf;
	uint64_t s = mix(key + 1);

	for (size_t i = 0; i < len; i++) {
		if (i % 8 == 0)
			s = mix(s + i);
		p[i] = (uint8_t)(s >> (8 * (i % 8)));
	}
}

int tu_check(const void *buf, size_t len, uint64_t key)
{
	const uint8_t *p = buf;
	uint64_t s = mix(key + 1);

	for (size_t i = 0; i < len; i++) {
		if (i % 8 == 0)
			s = mix(s + i);
		if (p[i] != (uint8_t)(s >> (8 * (i % 8))))
			return 0;
	}
	return 1;
}

struct pmwal_options tu_sim_opts(uint32_t flags, uint64_t capacity_bytes)
{
	struct pmwal_options o = {0};

	o.target = "sim";
	o.flags = flags;
	o.capacity_bytes = capacity_bytes;
	return o;
}

int tu_open_sim(struct sim_dev *sim, uint32_t flags, struct pmwal **out)
{
	struct pmwal_options o = tu_sim_opts(flags, 0);

	return wal_open_dev(&o, sim_wal_dev(sim), out);
}

int tu_verify_image(struct sim_dev *sim, struct pmwal_report *rep)
{
	struct sim_dev *copy = sim_from_image(sim_image(sim), sim_size(sim));
	struct pmwal *w;
	int rc = tu_open_sim(copy, PMWAL_OPEN_READONLY | PMWAL_OPEN_SALVAGE, &w);

	if (rc == 0) {
		*rep = *pmwal_recovery_report(w);
		pmwal_close(w);
	}
	sim_free(copy);
	return rc;
}
