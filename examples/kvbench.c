// SPDX-License-Identifier: MIT
/*
 * kvbench.c - the example store (examples/kv.c) against RocksDB with
 * synchronous writes (WriteOptions.sync: its WAL is fsynced before a put
 * returns), side by side in one run: the same directory and file system,
 * key and value sizes, keys and client threads. Each client thread puts
 * random keys for the run's time; puts/s, p50 and p99 of each, and the
 * ratios. For every client count the two run alternately, RocksDB first
 * on even rounds, so that a drifting disk favours neither.
 *
 *   kvbench [--dir DIR] [--clients N[,N...]] [--seconds S] [--value-bytes B]
 *           [--keys K] [--rounds R] [--target file|pmem|fakepmr]
 *           [--group-window-us US] [--groups-in-flight G]
 *           [--checkpoint-every N] [--no-peer]
 *
 *   DIR      where both stores live (default: the current directory; a disk
 *            file system: a tmpfs makes RocksDB's fsync free)
 *   --target where the example store's log lives: file (DIR, io_uring with
 *            O_DIRECT, the default: the like-for-like peer), pmem (a file in
 *            /dev/shm through libpmem2: emulated) or fakepmr (emulated)
 *
 *   --checkpoint-every N   the example store checkpoints every N records
 *   --no-peer              the example store alone (e.g. under ThreadSanitizer)
 *
 * Built with RocksDB's C API when librocksdb-dev is installed; without it
 * the peer's rows say so.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pmwal.h>

#include "../bench/hist.h"
#include "kv.h"

#ifdef KVBENCH_ROCKSDB
#include <rocksdb/c.h>
#endif

#define CLIENTS_MAX 256

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct result {
	double puts_per_s;
	uint64_t p50, p99, puts;
	int err;
	char why[256];
};

/* One store under test: a put and what it is called. */
struct store {
	const char *name;
	int (*put)(void *h, const char *key, size_t kl, const char *val, size_t vl, char *why,
		   size_t whylen);
	void *h;
};

static size_t value_bytes = 128;
static uint32_t window_us, groups_in_flight;
static uint64_t checkpoint_every;
static bool no_peer;
static uint64_t nkeys = 100000;

struct worker {
	struct store *s;
	uint64_t end_ns, seed, puts;
	struct hist lat;
	int err;
	char why[256];
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char key[32], *val = malloc(value_bytes + 1);
	uint64_t r = w->seed | 1;

	if (!val) {
		w->err = -ENOMEM;
		return NULL;
	}
	memset(val, 'v', value_bytes);
	val[value_bytes] = 0;
	while (now_ns() < w->end_ns) {
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		int kl = snprintf(key, sizeof(key), "key%017" PRIu64, r % nkeys);
		uint64_t t0 = now_ns();

		w->err = w->s->put(w->s->h, key, (size_t)kl, val, value_bytes, w->why,
				   sizeof(w->why));
		if (w->err)
			break;
		hist_record(&w->lat, now_ns() - t0);
		w->puts++;
	}
	free(val);
	return NULL;
}

static struct result run(struct store *s, int clients, double seconds)
{
	static struct worker w[CLIENTS_MAX];
	pthread_t tid[CLIENTS_MAX];
	struct hist all;
	struct result res = {0};
	uint64_t t0 = now_ns();

	hist_init(&all);
	for (int i = 0; i < clients; i++) {
		w[i] = (struct worker){.s = s, .end_ns = t0 + (uint64_t)(seconds * 1e9),
				       .seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1)};
		hist_init(&w[i].lat);
		pthread_create(&tid[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < clients; i++) {
		pthread_join(tid[i], NULL);
		hist_merge(&all, &w[i].lat);
		res.puts += w[i].puts;
		if (w[i].err && !res.err) {
			res.err = w[i].err;
			snprintf(res.why, sizeof(res.why), "%s", w[i].why);
		}
	}
	res.puts_per_s = (double)res.puts / ((double)(now_ns() - t0) / 1e9);
	res.p50 = hist_percentile(&all, 50);
	res.p99 = hist_percentile(&all, 99);
	return res;
}

/* Adds round @r to @sum: the mean puts/s, the worst p50 and p99. Returns 1
 * when the round failed. */
static int add_round(struct result *sum, const struct result *r, int rounds, const char *who)
{
	sum->puts_per_s += r->puts_per_s / rounds;
	sum->p50 = r->p50 > sum->p50 ? r->p50 : sum->p50;
	sum->p99 = r->p99 > sum->p99 ? r->p99 : sum->p99;
	if (r->err)
		fprintf(stderr, "kvbench: %s: %s\n", who, r->why);
	return r->err ? 1 : 0;
}

/* ---- the example store ---------------------------------------------------- */

static int kv_bench_put(void *h, const char *key, size_t kl, const char *val, size_t vl,
			char *why, size_t whylen)
{
	(void)kl, (void)vl;
	int rc = kv_put(h, key, val, NULL);

	if (rc)
		snprintf(why, whylen, "%s", kv_errmsg());
	return rc;
}

/* ---- RocksDB, sync writes --------------------------------------------------- */

#ifdef KVBENCH_ROCKSDB
static rocksdb_writeoptions_t *rocks_wo;

static int rocks_put(void *h, const char *key, size_t kl, const char *val, size_t vl,
		     char *why, size_t whylen)
{
	char *err = NULL;

	rocksdb_put(h, rocks_wo, key, kl, val, vl, &err);
	if (!err)
		return 0;
	snprintf(why, whylen, "%s", err);
	rocksdb_free(err);
	return -EIO;
}
#endif

static void usage(void)
{
	fprintf(stderr, "usage: kvbench [--dir DIR] [--clients N[,N...]] [--seconds S] "
			"[--value-bytes B] [--keys K] [--rounds R] [--target file|pmem|fakepmr]\n"
			"               [--group-window-us US] [--groups-in-flight G]\n"
			"               [--checkpoint-every N] [--no-peer]\n");
	exit(2);
}

static uint64_t number(const char *opt, const char *s, uint64_t lo, uint64_t hi)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "kvbench: %s: '%s' is not a number from %" PRIu64 " to %" PRIu64 "\n",
			opt, s, lo, hi);
		exit(2);
	}
	return v;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path) && errno != ENOENT ? -1 : 0;
}

/* Removes @dir and what is in it (no shell: any name is safe). */
static void rm_store(const char *dir)
{
	if (nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) && errno != ENOENT)
		fprintf(stderr, "kvbench: could not remove %s: %s\n", dir, strerror(errno));
}

int main(int argc, char **argv)
{
	const char *dir = ".", *kind = "file";
	char clients_arg[256] = "1,8,32";
	double seconds = 5;
	int rounds = 2;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--no-peer")) {
			no_peer = true;
			continue;
		}
		if (!v)
			usage();
		if (!strcmp(a, "--dir"))
			dir = v;
		else if (!strcmp(a, "--clients"))
			snprintf(clients_arg, sizeof(clients_arg), "%s", v);
		else if (!strcmp(a, "--seconds"))
			seconds = (double)number(a, v, 1, 3600);
		else if (!strcmp(a, "--value-bytes"))
			value_bytes = number(a, v, 1, 1u << 20);
		else if (!strcmp(a, "--keys"))
			nkeys = number(a, v, 1, 1ull << 32);
		else if (!strcmp(a, "--group-window-us"))
			window_us = (uint32_t)number(a, v, 0, 100000);
		else if (!strcmp(a, "--groups-in-flight"))
			groups_in_flight = (uint32_t)number(a, v, 1, 4);
		else if (!strcmp(a, "--checkpoint-every"))
			checkpoint_every = number(a, v, 1, UINT64_MAX);
		else if (!strcmp(a, "--rounds"))
			rounds = (int)number(a, v, 1, 100);
		else if (!strcmp(a, "--target") &&
			 (!strcmp(v, "file") || !strcmp(v, "pmem") || !strcmp(v, "fakepmr")))
			kind = v;
		else
			usage();
		i++;
	}
	int counts[16], ncounts = 0;

	for (char *save, *t = strtok_r(clients_arg, ",", &save); t && ncounts < 16;
	     t = strtok_r(NULL, ",", &save))
		counts[ncounts++] = (int)number("--clients", t, 1, CLIENTS_MAX);
	if (!ncounts)
		usage();
	char base[4096], kvdir[4200], rdir[4200], target[4300] = "";

	snprintf(base, sizeof(base), "%s/kvbench.XXXXXX", dir);
	if (!mkdtemp(base)) {
		fprintf(stderr, "kvbench: %s: %s (--dir names where to run)\n", dir, strerror(errno));
		return 1;
	}
	snprintf(kvdir, sizeof(kvdir), "%s/kv", base);
	snprintf(rdir, sizeof(rdir), "%s/rocksdb", base);
	printf("kvbench: %s, %zu-byte values, 20-byte keys out of %" PRIu64 ", %.0f s per run, "
	       "%d rounds; example store's log: %s%s\n",
	       base, value_bytes, nkeys, seconds, rounds, kind,
	       strcmp(kind, "file") ? " (emulated: not the same medium as RocksDB's)" : "");
	printf("%8s  %-28s %12s %10s %10s\n", "clients", "store", "puts/s", "p50 us", "p99 us");
	int status = 0;

	for (int c = 0; c < ncounts; c++) {
		struct result mine = {0}, peer = {0};
		bool have_peer = false;

		for (int round = 0; round < rounds; round++) {
			for (int turn = 0; turn < 2; turn++) {
				bool rocks = (turn == 0) == (round % 2 == 0);
				struct result r;

				if (rocks && no_peer)
					continue;
				if (!rocks) {
					struct kv *kv;
					char err[1024];

					if (!strcmp(kind, "pmem"))
						snprintf(target, sizeof(target), "pmem:/dev/shm/kvbench.%d.log",
							 (int)getpid());
					else if (!strcmp(kind, "fakepmr"))
						snprintf(target, sizeof(target),
							 "fakepmr:/dev/shm/kvbench.%d.fake", (int)getpid());
					mkdir(kvdir, 0755);
					struct kv_options o = {.dir = kvdir,
							       .target = target[0] ? target : NULL,
							       .capacity_bytes = 256u << 20,
							       .group_window_us = window_us,
							       .checkpoint_every = checkpoint_every,
							       .groups_in_flight = groups_in_flight};

					if (kv_open(&o, &kv, err, sizeof(err))) {
						fprintf(stderr, "kvbench: the example store: %s\n", err);
						rm_store(base);
						return 1;
					}
					struct store s = {"example store (pmwal)", kv_bench_put, kv};

					r = run(&s, counts[c], seconds);
					kv_close(kv);
					rm_store(kvdir);
					if (target[0]) {
						char p[4300];

						pmwal_target_path(target, p, sizeof(p));
						unlink(p);
					}
					status |= add_round(&mine, &r, rounds, "the example store");
					continue;
				}
#ifdef KVBENCH_ROCKSDB
				char *err = NULL;
				rocksdb_options_t *ro = rocksdb_options_create();

				rocksdb_options_set_create_if_missing(ro, 1);
				rocksdb_t *db = rocksdb_open(ro, rdir, &err);

				if (err) {
					fprintf(stderr, "kvbench: rocksdb_open %s: %s\n", rdir, err);
					rocksdb_free(err);
					rocksdb_options_destroy(ro);
					status = 1;
					continue;
				}
				rocks_wo = rocksdb_writeoptions_create();
				rocksdb_writeoptions_set_sync(rocks_wo, 1);
				struct store s = {"RocksDB, sync writes", rocks_put, db};

				r = run(&s, counts[c], seconds);
				rocksdb_close(db);
				rocksdb_writeoptions_destroy(rocks_wo);
				rocksdb_options_destroy(ro);
				rm_store(rdir);
				have_peer = true;
				status |= add_round(&peer, &r, rounds, "RocksDB");
#endif
			}
		}
		printf("%8d  %-28s %12.0f %10.1f %10.1f\n", counts[c], "example store (pmwal)",
		       mine.puts_per_s, mine.p50 / 1e3, mine.p99 / 1e3);
		if (have_peer) {
			printf("%8d  %-28s %12.0f %10.1f %10.1f\n", counts[c], "RocksDB, sync writes",
			       peer.puts_per_s, peer.p50 / 1e3, peer.p99 / 1e3);
			printf("%8d  %-28s %11.2fx %9.2fx %9.2fx\n", counts[c], "ratio (pmwal / RocksDB)",
			       mine.puts_per_s / peer.puts_per_s, (double)mine.p50 / (double)peer.p50,
			       (double)mine.p99 / (double)peer.p99);
		} else {
			printf("%8d  %-28s %12s\n", counts[c], "RocksDB, sync writes",
			       no_peer ? "skipped: --no-peer" : "skipped: built without librocksdb-dev");
		}
		fflush(stdout);
	}
	printf("puts/s: the mean of the rounds; p50, p99: the worst round's. Latency ratios "
	       "below 1 are better for pmwal.\n");
	rm_store(base);
	return status;
}
