/* SPDX-License-Identifier: MIT */
/*
 * peer_common.h - what the peer programs share: a clock, a run loop over N
 * threads for a fixed time, and one result line (`key=value ...`) that
 * bench/peers.sh parses. The peers measure other logs (libpmemlog, RocksDB
 * with sync writes) with the same histogram as pmwal bench, so the ratios
 * peers.sh prints compare like with like.
 */
#ifndef PMWAL_PEER_COMMON_H
#define PMWAL_PEER_COMMON_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../hist.h"

#define PEER_THREADS_MAX 256

static inline uint64_t peer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct peer_thread {
	int idx;
	uint64_t end_ns;
	uint64_t ops;
	int err;
	struct hist lat;
	void *ctx;
};

/* One operation of thread @t; returns 0 or an error. */
typedef int (*peer_op_fn)(struct peer_thread *t, uint64_t seq);

static peer_op_fn peer_op;

static void *peer_thread_main(void *arg)
{
	struct peer_thread *t = arg;

	for (uint64_t seq = 0;; seq++) {
		uint64_t a = peer_now_ns();
		if (a >= t->end_ns)
			break;
		if ((t->err = peer_op(t, seq)))
			break;
		hist_record(&t->lat, peer_now_ns() - a);
		t->ops++;
	}
	return NULL;
}

/* Run @threads threads for @seconds, print the result line. Returns 0/1. */
static int peer_run(const char *name, int threads, double seconds, uint64_t bytes_per_op,
		    void *ctx)
{
	static struct peer_thread th[PEER_THREADS_MAX];
	pthread_t tid[PEER_THREADS_MAX];
	struct hist all;
	uint64_t ops = 0, t0 = peer_now_ns();
	int err = 0;

	if (threads < 1 || threads > PEER_THREADS_MAX)
		return 1;
	hist_init(&all);
	for (int i = 0; i < threads; i++) {
		th[i] = (struct peer_thread){
		    .idx = i, .end_ns = t0 + (uint64_t)(seconds * 1e9), .ctx = ctx};
		hist_init(&th[i].lat);
		pthread_create(&tid[i], NULL, peer_thread_main, &th[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		hist_merge(&all, &th[i].lat);
		ops += th[i].ops;
		err = err ? err : th[i].err;
	}
	double sec = (peer_now_ns() - t0) / 1e9;
	printf("peer=%s threads=%d ops=%llu ops_per_s=%.1f bw_bytes=%.0f p50_ns=%llu "
	       "p99_ns=%llu max_ns=%llu err=%d\n",
	       name, threads, (unsigned long long)ops, ops / sec,
	       ops * bytes_per_op / sec, (unsigned long long)hist_percentile(&all, 50),
	       (unsigned long long)hist_percentile(&all, 99), (unsigned long long)all.max,
	       err);
	return err ? 1 : 0;
}

#endif
