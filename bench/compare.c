// SPDX-License-Identifier: MIT
/*
 * compare.c - `pmwal bench compare A B`: the same short list of workloads on
 * two targets, one after the other, printed side by side with B/A ratios (of
 * operations per second and of p99 latency) and stored under
 * pmwal.compare in the JSON, so "PMR versus flash" is one command.
 */
#include "ctx.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct cmp_io {
	int rw;
	uint32_t bs_bytes, iodepth;
};

static const struct cmp_io cmp_ios[] = {
    {RW_WRITE, 4096, 1},      {RW_RANDREAD, 4096, 32}, {RW_RANDWRITE, 4096, 32},
    {RW_WRITE, 128 << 10, 8}, {RW_READ, 128 << 10, 8},
};
static const uint32_t cmp_log_threads[] = {1, 8};
#define CMP_JOBS (sizeof(cmp_ios) / sizeof(cmp_ios[0]) + 3)

static double job_ops(json_t *job)
{
	return job ? json_real_value(
			 json_object_get(json_object_get(job, "pmwal"), "ops_per_s"))
		   : 0;
}

static double job_p99(json_t *job)
{
	double worst = 0;
	static const char *const dirs[] = {"read", "write"};

	for (int i = 0; job && i < 2; i++) {
		json_t *p = json_object_get(
		    json_object_get(json_object_get(job, dirs[i]), "clat_ns"),
		    "percentile");
		double v = (double)json_integer_value(json_object_get(p, "99.000000"));
		worst = v > worst ? v : worst;
	}
	return worst;
}

static void run_target(struct bench_ctx *c, const char *name, json_t **jobs,
		       uint64_t run_ns)
{
	char label[48], wlabel[48];
	const char *data = target_resolve(name, 0, label, sizeof(label));
	const char *wal = target_resolve(name, 1, wlabel, sizeof(wlabel));
	size_t k = 0;

	for (size_t i = 0; i < sizeof(cmp_ios) / sizeof(cmp_ios[0]) && !bench_stop; i++) {
		struct io_spec s = c->io;
		s.target = data;
		s.rw = cmp_ios[i].rw;
		s.bs_bytes = cmp_ios[i].bs_bytes;
		s.iodepth = cmp_ios[i].iodepth;
		s.runtime_ns = run_ns;
		if (!c->size_set)
			s.size_bytes = UINT64_C(256) << 20;
		jobs[k++] = run_io_job(c, &s, label);
	}
	for (size_t i = 0; i < 2 && !bench_stop; i++) {
		struct log_spec s = c->log;
		s.target = wal;
		s.threads = cmp_log_threads[i];
		s.runtime_ns = run_ns;
		jobs[k++] = run_log_job(c, &s, wlabel);
	}
	/* Recovery: operations/s is opens per second, so B/A is a speedup. */
	if (!bench_stop)
		jobs[k++] =
		    run_recovery(c, wal, wlabel,
				 c->size_set ? c->fill_bytes : UINT64_C(128) << 20, 4096);
	target_remove_owned(data);
}

int run_compare(struct bench_ctx *c)
{
	json_t *a[CMP_JOBS] = {0}, *b[CMP_JOBS] = {0};
	uint64_t run_ns = c->runtime_set ? c->io.runtime_ns
			  : c->quick	 ? 1000000000ull
					 : 3000000000ull;

	if (c->npos != 2) {
		snprintf(c->err, sizeof(c->err),
			 "compare needs two targets: compare A B");
		return -1;
	}
	run_target(c, c->pos[0], a, run_ns);
	run_target(c, c->pos[1], b, run_ns);
	json_t *cmp = json_array();
	printf("\n%-34s %12s %12s %8s %10s %10s %8s\n", "workload", "A ops/s", "B ops/s",
	       "B/A", "A p99", "B p99", "B/A");
	for (size_t i = 0; i < CMP_JOBS; i++) {
		if (!a[i] || !b[i])
			continue;
		double oa = job_ops(a[i]), ob = job_ops(b[i]), la = job_p99(a[i]),
		       lb = job_p99(b[i]);
		char pa[16], pb[16];
		fmt_ns(pa, sizeof(pa), la);
		fmt_ns(pb, sizeof(pb), lb);
		const char *name = json_string_value(json_object_get(a[i], "jobname"));
		printf("%-34s %12.0f %12.0f %8.2f %10s %10s %8.2f\n", name, oa, ob,
		       oa > 0 ? ob / oa : 0, pa, pb, la > 0 ? lb / la : 0);
		json_array_append_new(
		    cmp, json_pack("{s:s,s:f,s:f,s:f,s:f,s:f,s:f}", "workload", name,
				   "a_ops_per_s", oa, "b_ops_per_s", ob, "ops_ratio",
				   oa > 0 ? ob / oa : 0.0, "a_p99_ns", la, "b_p99_ns", lb,
				   "p99_ratio", la > 0 ? lb / la : 0.0));
	}
	json_object_set_new(
	    json_object_get(c->root, "pmwal"), "compare",
	    json_pack("{s:s,s:s,s:o}", "a", c->pos[0], "b", c->pos[1], "rows", cmp));
	return 0;
}
