// SPDX-License-Identifier: MIT
/*
 * hist.c - log-linear latency histogram (see hist.h for the error bound).
 *
 * Index of v >= 128: shift = msb(v) - 7, the top 8 bits of v pick the
 * sub-bucket, and (shift + 1) picks the power of two; values below 128 index
 * themselves. A bucket at shift s is 2^s wide and holds values >= 2^(s+7),
 * which is where the 1/128 relative width comes from.
 */
#include "hist.h"

#include <math.h>
#include <string.h>

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned hist_index(uint64_t value)
{
	if (value > HIST_VALUE_MAX)
		value = HIST_VALUE_MAX;
	if (value < HIST_SUB_COUNT)
		return (unsigned)value;
	unsigned msb = 63u - (unsigned)__builtin_clzll(value);
	unsigned shift = msb - HIST_SUB_BITS;
	unsigned top = (unsigned)(value >> shift); /* in [128, 256) */
	return (shift + 1) * HIST_SUB_COUNT + (top - HIST_SUB_COUNT);
}

uint64_t hist_bucket_low(unsigned idx)
{
	if (idx < HIST_SUB_COUNT)
		return idx;
	unsigned shift = idx / HIST_SUB_COUNT - 1;
	uint64_t top = idx % HIST_SUB_COUNT + HIST_SUB_COUNT;
	return top << shift;
}

uint64_t hist_bucket_high(unsigned idx)
{
	if (idx < HIST_SUB_COUNT)
		return idx;
	unsigned shift = idx / HIST_SUB_COUNT - 1;
	return hist_bucket_low(idx) + (UINT64_C(1) << shift) - 1;
}

void hist_record(struct hist *h, uint64_t value)
{
	h->bucket[hist_index(value)]++;
	h->count++;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
	h->sum += (double)value;
	h->sumsq += (double)value * (double)value;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	if (!src->count)
		return;
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double hist_mean(const struct hist *h)
{
	return h->count ? h->sum / (double)h->count : 0.0;
}

double hist_stddev(const struct hist *h)
{
	if (h->count < 2)
		return 0.0;
	double mean = hist_mean(h);
	double var = h->sumsq / (double)h->count - mean * mean;
	return var > 0 ? sqrt(var) : 0.0;
}

uint64_t hist_percentile(const struct hist *h, double pct)
{
	if (!h->count)
		return 0;
	if (pct >= 100.0)
		return h->max;
	uint64_t rank = (uint64_t)ceil(pct / 100.0 * (double)h->count);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < HIST_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen < rank)
			continue;
		uint64_t lo = hist_bucket_low(i), hi = hist_bucket_high(i);
		uint64_t mid = lo + (hi - lo) / 2;
		if (mid < h->min)
			mid = h->min;
		if (mid > h->max)
			mid = h->max;
		return mid;
	}
	return h->max;
}
