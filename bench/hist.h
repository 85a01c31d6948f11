/* SPDX-License-Identifier: MIT */
/*
 * hist.h - the latency histogram every pmwal bench result is read from.
 *
 * Log-linear, like HdrHistogram: each power of two is split into
 * HIST_SUB_COUNT linear buckets, so a bucket is never wider than 1/128 of the
 * values it holds. Percentiles are reported as the bucket's midpoint, hence
 * within HIST_REL_ERROR (1/256, 0.39%) of the true order statistic; values
 * below 256 ns are exact, min and max are exact. Fixed size (no allocation),
 * so each thread records into its own and they are merged at the end.
 */
#ifndef PMWAL_BENCH_HIST_H
#define PMWAL_BENCH_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS  7
#define HIST_SUB_COUNT (1u << HIST_SUB_BITS)
/* Values are clamped below 2^48 ns (~3 days): 42 powers of two above 128. */
#define HIST_MAX_SHIFT 41
#define HIST_BUCKETS   ((HIST_MAX_SHIFT + 1) * HIST_SUB_COUNT)
#define HIST_VALUE_MAX ((UINT64_C(1) << 48) - 1)
/* Bound on |reported - true| / true for any percentile. */
#define HIST_REL_ERROR (1.0 / (2.0 * HIST_SUB_COUNT))

struct hist {
	uint64_t count;
	uint64_t min;
	uint64_t max;
	double sum;
	double sumsq;
	uint64_t bucket[HIST_BUCKETS];
};

void hist_init(struct hist *h);
void hist_record(struct hist *h, uint64_t value);
void hist_merge(struct hist *dst, const struct hist *src);
double hist_mean(const struct hist *h);
double hist_stddev(const struct hist *h);
/* Value at percentile @pct (0..100]; 0 for an empty histogram. */
uint64_t hist_percentile(const struct hist *h, double pct);

/* Bucket arithmetic, exposed for the tests. */
unsigned hist_index(uint64_t value);
uint64_t hist_bucket_low(unsigned idx);
uint64_t hist_bucket_high(unsigned idx);

#endif
