// SPDX-License-Identifier: MIT
/*
 * series.c - per-interval accounting (bandwidth, IOPS, p99 per interval) and
 * what is read from it: the cliff (a drop in write bandwidth that lasts, as a
 * consumer SSD shows once its cache is full) and steady state versus burst.
 *
 * Each thread records into its own struct thread_stats with no sharing; the
 * runner merges them after the threads are joined.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

/* Bound on the points kept: an hour at 100 ms. */
#define SERIES_POINTS_MAX 36000u

int series_init(struct series *s, uint64_t interval_ns, uint64_t runtime_ns)
{
	memset(s, 0, sizeof(*s));
	s->interval_ns = interval_ns ? interval_ns : 100000000u;
	/* A long run gets longer intervals rather than a truncated series. */
	if (runtime_ns / s->interval_ns + 2 > SERIES_POINTS_MAX)
		s->interval_ns = runtime_ns / (SERIES_POINTS_MAX - 2) + 1;
	uint64_t want = runtime_ns ? runtime_ns / s->interval_ns + 2 : 64;
	if (series_grow(s,
			(uint32_t)(want < SERIES_POINTS_MAX ? want : SERIES_POINTS_MAX)))
		return -1;
	s->count = 0; /* capacity reserved, no point yet */
	return 0;
}

void series_free(struct series *s)
{
	free(s->pt);
	s->pt = NULL;
	s->count = s->cap = 0;
}

int series_grow(struct series *s, uint32_t count)
{
	if (count > SERIES_POINTS_MAX)
		return -1;
	if (count > s->cap) {
		uint32_t cap = s->cap ? s->cap : 16;
		while (cap < count)
			cap *= 2;
		if (cap > SERIES_POINTS_MAX)
			cap = SERIES_POINTS_MAX;
		struct series_point *p = realloc(s->pt, cap * sizeof(*p));
		if (!p)
			return -1;
		memset(p + s->cap, 0, (cap - s->cap) * sizeof(*p));
		s->pt = p;
		s->cap = cap;
	}
	if (count > s->count)
		s->count = count;
	return 0;
}

void series_merge(struct series *dst, const struct series *src)
{
	if (!dst->interval_ns)
		dst->interval_ns = src->interval_ns;
	if (series_grow(dst, src->count))
		return;
	for (uint32_t i = 0; i < src->count; i++) {
		for (int d = 0; d < DIR_COUNT; d++) {
			struct series_point *p = &dst->pt[i];
			const struct series_point *q = &src->pt[i];
			p->bytes[d] += q->bytes[d];
			p->ops[d] += q->ops[d];
			p->lat_sum_ns[d] += q->lat_sum_ns[d];
			if (q->p99_ns[d] > p->p99_ns[d])
				p->p99_ns[d] = q->p99_ns[d];
		}
	}
}

int tstats_init(struct thread_stats *t, uint64_t interval_ns, uint64_t runtime_ns)
{
	memset(t, 0, sizeof(*t));
	for (int d = 0; d < DIR_COUNT; d++) {
		hist_init(&t->dir[d].lat);
		hist_init(&t->ival[d]);
	}
	return series_init(&t->series, interval_ns, runtime_ns);
}

void tstats_free(struct thread_stats *t)
{
	series_free(&t->series);
}

static void close_interval(struct thread_stats *t)
{
	if (series_grow(&t->series, t->cur + 1))
		return;
	struct series_point *p = &t->series.pt[t->cur];
	/* The progress line's live rate: once per interval and thread. */
	__atomic_fetch_add(&progress_ops, p->ops[0] + p->ops[1], __ATOMIC_RELAXED);
	__atomic_fetch_add(&progress_bytes, p->bytes[0] + p->bytes[1], __ATOMIC_RELAXED);
	for (int d = 0; d < DIR_COUNT; d++) {
		if (!t->ival[d].count)
			continue;
		p->p99_ns[d] = hist_percentile(&t->ival[d], 99.0);
		hist_init(&t->ival[d]);
	}
}

void tstats_record(struct thread_stats *t, int dir, uint64_t bytes, uint64_t lat_ns,
		   uint64_t done_ns)
{
	if (done_ns < t->start_ns || (t->end_ns && done_ns >= t->end_ns))
		return;
	uint32_t idx = (uint32_t)((done_ns - t->start_ns) / t->series.interval_ns);
	if (idx != t->cur) {
		close_interval(t);
		t->cur = idx;
	}
	t->dir[dir].ops++;
	t->dir[dir].bytes += bytes;
	hist_record(&t->dir[dir].lat, lat_ns);
	hist_record(&t->ival[dir], lat_ns);
	if (series_grow(&t->series, idx + 1) == 0) {
		t->series.pt[idx].bytes[dir] += bytes;
		t->series.pt[idx].ops[dir]++;
		t->series.pt[idx].lat_sum_ns[dir] += lat_ns;
	}
}

void tstats_finish(struct thread_stats *t)
{
	close_interval(t);
}

void result_merge_thread(struct run_result *r, const struct thread_stats *t)
{
	for (int d = 0; d < DIR_COUNT; d++) {
		r->dir[d].ops += t->dir[d].ops;
		r->dir[d].bytes += t->dir[d].bytes;
		hist_merge(&r->dir[d].lat, &t->dir[d].lat);
	}
	series_merge(&r->series, &t->series);
}

static double seg_mean(const double *v, uint32_t from, uint32_t to)
{
	double sum = 0;

	for (uint32_t i = from; i < to; i++)
		sum += v[i];
	return to > from ? sum / (to - from) : 0;
}

/*
 * A cliff: the split k (both sides at least 3 intervals) with the lowest
 * after/before mean ratio, kept if after < 0.6 x before. A short stall is not
 * a cliff because the whole tail must stay low. Prefix sums keep it O(n).
 */
static json_t *cliff_json(const double *bw, uint32_t n, uint64_t interval_ns,
			  uint32_t *split)
{
	double total = 0, before_sum = 0, best_ratio = 1.0;
	uint32_t best = 0;

	*split = 0;
	for (uint32_t i = 0; i < n; i++)
		total += bw[i];
	for (uint32_t k = 1; k + 3 <= n; k++) {
		before_sum += bw[k - 1];
		if (k < 3)
			continue;
		double before = before_sum / k, after = (total - before_sum) / (n - k);
		if (before > 0 && after / before < best_ratio) {
			best_ratio = after / before;
			best = k;
		}
	}
	if (!best || best_ratio >= 0.6)
		return json_pack("{s:b}", "detected", 0);
	double bytes_before = 0;
	for (uint32_t i = 0; i < best; i++)
		bytes_before += bw[i] * interval_ns / 1e9;
	*split = best;
	return json_pack("{s:b,s:f,s:I,s:f,s:f,s:f}", "detected", 1, "at_s",
			 best * interval_ns / 1e9, "bytes_before",
			 (json_int_t)bytes_before, "bw_before_bytes",
			 seg_mean(bw, 0, best), "bw_after_bytes", seg_mean(bw, best, n),
			 "after_over_before", best_ratio);
}

static json_t *window_json(const double *bw, const double *iops, uint32_t from,
			   uint32_t to, uint64_t interval_ns)
{
	return json_pack("{s:f,s:f,s:f}", "seconds", (to - from) * interval_ns / 1e9,
			 "bw_bytes", seg_mean(bw, from, to), "iops",
			 seg_mean(iops, from, to));
}

/* The direction that carries the most bytes decides cliffs and windows. */
static int main_dir(const struct run_result *r)
{
	return r->dir[DIR_WRITE].bytes >= r->dir[DIR_READ].bytes ? DIR_WRITE : DIR_READ;
}

json_t *series_json(const struct series *s, const struct run_result *r)
{
	uint32_t n = s->count;
	double sec = s->interval_ns / 1e9;
	double *bw = calloc(n + 1, sizeof(double)), *iops = calloc(n + 1, sizeof(double));
	json_t *pts = json_array();
	int md = main_dir(r);

	if (!bw || !iops || !pts) {
		free(bw);
		free(iops);
		json_decref(pts);
		return json_null();
	}
	for (uint32_t i = 0; i < n; i++) {
		const struct series_point *p = &s->pt[i];
		bw[i] = p->bytes[md] / sec;
		iops[i] = p->ops[md] / sec;
		json_array_append_new(
		    pts, json_pack("[f,f,f,f,f,I,I,I,I]", i * sec, p->bytes[0] / sec,
				   p->bytes[1] / sec, p->ops[0] / sec, p->ops[1] / sec,
				   (json_int_t)p->p99_ns[0], (json_int_t)p->p99_ns[1],
				   (json_int_t)(p->ops[0] ? p->lat_sum_ns[0] / p->ops[0] : 0),
				   (json_int_t)(p->ops[1] ? p->lat_sum_ns[1] / p->ops[1] : 0)));
	}
	uint32_t split;
	json_t *cliff = cliff_json(bw, n, s->interval_ns, &split);
	json_t *out =
	    json_pack("{s:f,s:[s,s,s,s,s,s,s,s,s],s:o,s:s,s:o}", "interval_s", sec, "columns",
		      "t_s", "read_bw_bytes", "write_bw_bytes", "read_iops", "write_iops",
		      "read_p99_ns", "write_p99_ns", "read_mean_ns", "write_mean_ns", "points",
		      pts, "direction",
		      md ? "write" : "read", "cliff", cliff);
	if (split) {
		json_object_set_new(out, "burst",
				    window_json(bw, iops, 0, split, s->interval_ns));
		json_object_set_new(out, "steady",
				    window_json(bw, iops, split, n, s->interval_ns));
	} else {
		/* No cliff: the first 10% is warm-up, the rest is steady state. */
		uint32_t from = n / 10;
		json_object_set_new(out, "steady",
				    window_json(bw, iops, from, n, s->interval_ns));
	}
	free(bw);
	free(iops);
	return out;
}
