// SPDX-License-Identifier: MIT
/*
 * kv_sim_crash.c - the example store (examples/kv.c) on simulated media
 * (pmwal_sim_*, the way a database's own tests use them): a fixed workload
 * of puts, deletes and checkpoints (each checkpoint releases the log, and the
 * small log wraps) is run once to count the medium's durability events, then
 * again with each chosen event as the power loss. For every crash image the
 * medium can then hold (spread over the subsets and torn images, up to IMAGES per event), the store is opened
 * again and its whole state compared with what was acknowledged: every
 * acknowledged put and delete is there, and nothing else (the one write in
 * progress at the power loss may or may not be). The reopened store then
 * takes more writes and is opened once more, so a recovery that leaves the
 * log and the snapshot disagreeing about LSNs is caught too.
 *
 *   kv_sim_crash [MEDIUM...]   pmem, nvme, nvme-fua, fakepmr (default: all)
 *   STRIDE=N  every Nth event (default: chosen so each medium runs about
 *             400 crash points); IMAGES=N  images per event (default 16)
 *
 * The snapshot lives in a real directory: the simulated power loss takes
 * back what the log's medium had not made durable, not the file system's
 * fsynced files, so the lane checks the log and the checkpoint protocol's
 * ordering (snapshot durable before the release), not the file system.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmwal.h>

#include "kv.h"

#define KEYS 16
#define OPS 160
#define LOG_BYTES (192u << 10) /* 48 blocks: the workload wraps it */

static char dir[256];
static char model[KEYS][48];  /* acknowledged: "" = absent */
static int pending_key;	      /* the write in progress at the power loss */
static char pending_val[48];
static uint64_t acked, checkpoints;
static bool created; /* the workload's store was created before the power loss */

static void remove_snapshot(void)
{
	char p[300];

	snprintf(p, sizeof(p), "%s/snapshot", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/snapshot.tmp", dir);
	unlink(p);
}

/* The workload; stops at the first failure (the power loss). */
static void workload(const char *target, uint64_t seed)
{
	struct kv_options o = {
	    .dir = dir, .target = target, .capacity_bytes = LOG_BYTES, .create = 1};
	struct kv *kv;
	char err[1024], key[16], val[48];
	uint64_t r = seed | 1, lsn;

	memset(model, 0, sizeof(model));
	pending_key = -1;
	created = false;
	if (kv_open(&o, &kv, err, sizeof(err)))
		return;
	created = true;
	for (int i = 0; i < OPS; i++) {
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		int k = (int)(r % KEYS);
		int rc;

		snprintf(key, sizeof(key), "k%d", k);
		if (i % 23 == 22) {
			if (kv_checkpoint(kv, &lsn))
				break;
			checkpoints++;
			continue;
		}
		pending_key = k;
		if ((r >> 20) % 5 == 0) {
			pending_val[0] = 0;
			rc = kv_del(kv, key, NULL);
		} else {
			/* Values of a few sizes: records of one and of several lines. */
			snprintf(val, sizeof(val), "v%d.%.*s", i, (int)((r >> 30) % 30),
				 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
			snprintf(pending_val, sizeof(pending_val), "%s", val);
			rc = kv_put(kv, key, val, NULL);
		}
		if (rc)
			break;
		snprintf(model[k], sizeof(model[k]), "%s", pending_val);
		pending_key = -1;
		acked++;
	}
	kv_close(kv);
}

/* Opens the store on what the medium holds and compares every key.
 * Returns the number of keys that differ; -1 when it does not open. */
static int check(const char *target, const char *when, char model_now[KEYS][48])
{
	struct kv_options o = {.dir = dir, .target = target, .capacity_bytes = LOG_BYTES};
	struct kv *kv;
	char err[1024], key[16];
	int bad = 0;

	if (kv_open(&o, &kv, err, sizeof(err))) {
		fprintf(stderr, "kv_sim_crash: %s: open: %s\n", when, err);
		return -1;
	}
	for (int k = 0; k < KEYS; k++) {
		char *v = NULL;

		snprintf(key, sizeof(key), "k%d", k);
		int found = kv_get(kv, key, &v, NULL);
		const char *have = found == 1 ? v : "";

		if (strcmp(have, model_now[k])) {
			if (k == pending_key && !strcmp(have, pending_val)) {
				/* The write in progress was durable: it counts. */
				snprintf(model_now[k], 48, "%s", have);
			} else {
				fprintf(stderr, "kv_sim_crash: %s: k%d is '%s', acknowledged '%s'\n",
					when, k, have, model_now[k]);
				bad++;
			}
		}
		free(v);
	}
	/* Go on writing after the recovery, then open once more. */
	for (int k = 0; !bad && k < 4; k++) {
		char val[32];

		snprintf(key, sizeof(key), "k%d", k);
		snprintf(val, sizeof(val), "after%d", k);
		if (kv_put(kv, key, val, NULL)) {
			fprintf(stderr, "kv_sim_crash: %s: put after recovery: %s\n", when,
				kv_errmsg());
			bad++;
		} else {
			snprintf(model_now[k], 48, "%s", val);
		}
	}
	kv_close(kv);
	if (bad)
		return bad;
	if (kv_open(&o, &kv, err, sizeof(err))) {
		fprintf(stderr, "kv_sim_crash: %s: second open: %s\n", when, err);
		return -1;
	}
	for (int k = 0; k < KEYS; k++) {
		char *v = NULL;

		snprintf(key, sizeof(key), "k%d", k);
		int found = kv_get(kv, key, &v, NULL);

		if (strcmp(found == 1 ? v : "", model_now[k])) {
			fprintf(stderr, "kv_sim_crash: %s, second open: k%d is '%s', expected '%s'\n",
				when, k, found == 1 ? v : "", model_now[k]);
			bad++;
		}
		free(v);
	}
	kv_close(kv);
	return bad;
}

static int run_medium(const char *name)
{
	struct pmwal_sim_options so = {.size_bytes = LOG_BYTES, .seed = 7};
	struct pmwal_sim *sim;

	if (!strcmp(name, "pmem"))
		so.medium = PMWAL_SIM_PMEM;
	else if (!strcmp(name, "fakepmr"))
		so.medium = PMWAL_SIM_FAKEPMR;
	else if (!strcmp(name, "nvme"))
		so.medium = PMWAL_SIM_NVME;
	else if (!strcmp(name, "nvme-fua"))
		so.medium = PMWAL_SIM_NVME, so.flags = PMWAL_SIM_FUA;
	else {
		fprintf(stderr, "kv_sim_crash: unknown medium '%s' (pmem, nvme, nvme-fua, "
				"fakepmr)\n",
			name);
		return 2;
	}
	int rc = pmwal_sim_new(&so, &sim);

	if (rc) {
		fprintf(stderr, "kv_sim_crash: pmwal_sim_new: %s\n", strerror(-rc));
		return 1;
	}
	const char *target = pmwal_sim_target(sim);
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	acked = checkpoints = 0;
	remove_snapshot();
	workload(target, seed);
	uint64_t events = pmwal_sim_events(sim), full_acked = acked;
	uint64_t stride = getenv("STRIDE") ? strtoull(getenv("STRIDE"), NULL, 10) : 0;
	uint64_t per = getenv("IMAGES") ? strtoull(getenv("IMAGES"), NULL, 10) : 16;

	if (!stride)
		stride = events / 400 + 1;
	uint64_t points = 0, images = 0, lost = 0, unopened = 0, durable_pending = 0, uncreated = 0;

	acked = checkpoints = 0;
	for (uint64_t n = 0; n < events; n += stride) {
		pmwal_sim_reset(sim);
		remove_snapshot();
		pmwal_sim_crash_at(sim, n);
		workload(target, seed);
		if (!pmwal_sim_crashed(sim))
			pmwal_sim_crash(sim); /* past the workload's end: power off now */
		points++;
		uint64_t count = pmwal_sim_crash_images(sim, NULL);

		for (uint64_t i = 0; i < count && i < per; i++) {
			/* Spread the sample over the subsets and the torn images. */
			uint64_t idx = per >= count ? i : i * count / per;
			char when[128], model_now[KEYS][48];

			if (pmwal_sim_apply_image(sim, idx))
				continue;
			memcpy(model_now, model, sizeof(model));
			snprintf(when, sizeof(when), "%s: power loss at event %" PRIu64 ", image %" PRIu64,
				 name, n, idx);
			images++;
			if (!created) { /* formatting lost power: no store to open */
				uncreated++;
				continue;
			}
			int bad = check(target, when, model_now);

			if (bad < 0)
				unopened++;
			else
				lost += (uint64_t)bad;
			if (pending_key >= 0 && bad == 0 && !strcmp(model_now[pending_key], pending_val) &&
			    strcmp(model[pending_key], pending_val))
				durable_pending++;
		}
	}
	printf("kv_sim_crash: %s: %" PRIu64 " events in the workload (%" PRIu64
	       " writes, %d ops), %" PRIu64 " power losses, %" PRIu64 " images opened, %" PRIu64
	       " writes acknowledged before them, %" PRIu64 " checkpoints, %" PRIu64
	       " unanswered writes found durable, %" PRIu64 " in the log's creation; lost %" PRIu64
	       ", not opened %" PRIu64 "\n",
	       name, events, full_acked, OPS, points, images, acked, checkpoints,
	       durable_pending, uncreated, lost, unopened);
	pmwal_sim_free(sim);
	return lost || unopened || !full_acked ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *all[] = {"pmem", "nvme", "nvme-fua", "fakepmr"};
	int rc = 0;

	snprintf(dir, sizeof(dir), "%s/pmwal-kvsim-XXXXXX",
		 access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
	if (!mkdtemp(dir)) {
		perror("kv_sim_crash: mkdtemp");
		return 1;
	}
	if (argc > 1)
		for (int i = 1; i < argc; i++)
			rc |= run_medium(argv[i]);
	else
		for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++)
			rc |= run_medium(all[i]);
	remove_snapshot();
	char lock[300];

	snprintf(lock, sizeof(lock), "%s/lock", dir); /* the store's, kv.c */
	unlink(lock);
	if (rmdir(dir))
		fprintf(stderr, "kv_sim_crash: %s left behind: %s\n", dir, strerror(errno));
	return rc;
}
