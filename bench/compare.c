// SPDX-License-Identifier: MIT
/*
 * compare.c - `pmwal bench compare [A B [C]]`: the same short list of
 * workloads on two or three targets (flash, the fake PMR and emulated pmem
 * when none is named), one target after the other, printed side by side with
 * each target's ratio to A, and stored under pmwal.compare in the JSON, so
 * "PMR versus flash" is one command. Rows: raw 4K random write, read and
 * 50/50 mix, sequential writes and reads, the cheapest durable 4K write
 * among the target's durability primitives, the log at 1 and 8 threads, and
 * recovery in GiB/s (with s/GiB in place of a latency).
 */
#include "ctx.h"
#include "svg.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CMP_TARGETS_MAX 3

struct cmp_io {
	int rw;
	uint32_t bs_bytes, iodepth;
};

static const struct cmp_io cmp_ios[] = {
    {RW_RANDWRITE, 4096, 32}, {RW_RANDREAD, 4096, 32},	{RW_RANDRW, 4096, 32},
    {RW_WRITE, 4096, 1},      {RW_WRITE, 128 << 10, 8}, {RW_READ, 128 << 10, 8},
};
#define CMP_IOS (sizeof(cmp_ios) / sizeof(cmp_ios[0]))
static const uint32_t cmp_log_threads[] = {1, 8};
/* Row order: the raw workloads, the durable 4K write, the logs, recovery. */
#define CMP_ROW_PRIM (CMP_IOS)
#define CMP_ROW_LOG  (CMP_IOS + 1)
#define CMP_ROW_REC  (CMP_IOS + 3)
#define CMP_ROWS     (CMP_IOS + 4)

static json_t *pmw(json_t *job)
{
	return json_object_get(job, "pmwal");
}

/* @o's string @key, "" when missing. */
static const char *jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static double job_ops(json_t *job)
{
	return job ? json_real_value(json_object_get(pmw(job), "ops_per_s")) : 0;
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

static json_t *job_recovery(json_t *job)
{
	return json_object_get(pmw(job), "recovery");
}

/* The row's rate: operations/s, or recovery's GiB/s. */
static double row_rate(size_t row, json_t *job)
{
	if (row == CMP_ROW_REC)
		return json_real_value(json_object_get(job_recovery(job), "bw_bytes")) /
		       (1024.0 * 1024 * 1024);
	return job_ops(job);
}

/* The row's cost: p99 latency in ns, or recovery's seconds per GiB. */
static double row_cost(size_t row, json_t *job)
{
	if (row == CMP_ROW_REC)
		return json_real_value(json_object_get(job_recovery(job), "s_per_gib"));
	return job_p99(job);
}

/* The fastest durable 4K write among the primitive jobs recorded from
 * index @from on (fdatasync, O_DSYNC, RWF_DSYNC; copy + barrier). */
static json_t *best_durable_4k(struct bench_ctx *c, size_t from)
{
	json_t *jobs = json_object_get(c->root, "jobs"), *best = NULL;

	for (size_t i = from; i < json_array_size(jobs); i++) {
		json_t *j = json_array_get(jobs, i);
		const char *name = jstr(j, "jobname");
		if (strcmp(jstr(pmw(j), "phase"), "primitive") ||
		    strncmp(name, "4K ", 3) || strstr(name, ", no ") ||
		    json_object_get(pmw(j), "error"))
			continue;
		if (!best || job_ops(j) > job_ops(best))
			best = j;
	}
	return best;
}

static void run_target(struct bench_ctx *c, const char *name, json_t **jobs,
		       uint64_t run_ns)
{
	char label[48], wlabel[48];
	const char *data = target_resolve(name, 0, label, sizeof(label));
	const char *wal = target_resolve(name, 1, wlabel, sizeof(wlabel));

	for (size_t i = 0; i < CMP_IOS && !bench_stop; i++) {
		struct io_spec s = c->io;
		s.target = data;
		s.rw = cmp_ios[i].rw;
		s.bs_bytes = cmp_ios[i].bs_bytes;
		s.iodepth = cmp_ios[i].iodepth;
		s.runtime_ns = run_ns;
		if (!c->size_set)
			s.size_bytes = UINT64_C(256) << 20;
		jobs[i] = run_io_job(c, &s, label);
	}
	if (!bench_stop) {
		size_t from = json_array_size(json_object_get(c->root, "jobs"));
		run_primitives(c, data, label);
		jobs[CMP_ROW_PRIM] = best_durable_4k(c, from);
	}
	for (size_t i = 0; i < 2 && !bench_stop; i++) {
		struct log_spec s = c->log;
		s.target = wal;
		s.threads = cmp_log_threads[i];
		s.runtime_ns = run_ns;
		jobs[CMP_ROW_LOG + i] = run_log_job(c, &s, wlabel);
	}
	if (!bench_stop)
		jobs[CMP_ROW_REC] =
		    run_recovery(c, wal, wlabel,
				 c->size_set ? c->fill_bytes : UINT64_C(128) << 20, 4096);
	target_remove_owned(data);
}

static void row_name(size_t row, json_t *job, char *buf, size_t len)
{
	if (row == CMP_ROW_PRIM)
		snprintf(buf, len, "durable 4K write (best primitive)");
	else if (row == CMP_ROW_REC)
		snprintf(buf, len, "recovery (GiB/s; s/GiB)");
	else
		snprintf(buf, len, "%s", jstr(job, "jobname"));
}

static void print_header(struct bench_ctx *c, int n)
{
	printf("\n%-34s", "workload (ratios: each / A)");
	for (int t = 0; t < n; t++)
		printf(" %c=%-19s", 'A' + t, c->pos[t]);
	printf(" | p99 latency (recovery: s/GiB)\n");
}

/* One row of the table and of pmwal.compare.rows. */
static json_t *compare_row(size_t row, json_t **jobs, int n)
{
	char name[96];
	double rate[CMP_TARGETS_MAX] = {0}, cost[CMP_TARGETS_MAX] = {0};
	json_t *vals = json_array();

	row_name(row, jobs[0], name, sizeof(name));
	printf("%-34.34s", name);
	for (int t = 0; t < n; t++) {
		char v[16];
		rate[t] = row_rate(row, jobs[t]);
		cost[t] = row_cost(row, jobs[t]);
		if (row == CMP_ROW_REC)
			snprintf(v, sizeof(v), "%.3g", rate[t]);
		else
			svg_num(v, sizeof(v), rate[t]);
		char rat[32];
		svg_ratio(rat, sizeof(rat), rate[0] > 0 ? rate[t] / rate[0] : 0);
		if (t)
			printf(" %9s %-10s", v, rat);
		else
			printf(" %9s %-10s", v, row == CMP_ROW_REC ? "GiB/s" : "ops/s");
	}
	printf(" |");
	for (int t = 0; t < n; t++) {
		char v[16];
		if (row == CMP_ROW_REC)
			snprintf(v, sizeof(v), "%.3gs", cost[t]);
		else
			fmt_ns(v, sizeof(v), cost[t]);
		char rat[32];
		svg_ratio(rat, sizeof(rat), cost[0] > 0 ? cost[t] / cost[0] : 0);
		if (t)
			printf(" %s (%s)", v, rat);
		else
			printf(" %s", v);
	}
	printf("\n");
	for (int t = 0; t < n; t++) {
		json_t *v =
		    json_pack("{s:s,s:f,s:f,s:f,s:f}", "jobname",
			      jstr(jobs[t], "jobname"), "rate", rate[t], "cost", cost[t],
			      "rate_ratio", rate[0] > 0 ? rate[t] / rate[0] : 0.0,
			      "cost_ratio", cost[0] > 0 ? cost[t] / cost[0] : 0.0);
		json_object_set_new(v, "emulated",
				    json_boolean(json_is_true(
					json_object_get(pmw(jobs[t]), "emulated"))));
		json_array_append_new(vals, v);
	}
	bool rec = row == CMP_ROW_REC;
	/* a_ and b_ keys: what results before three targets carried. */
	return json_pack(
	    "{s:s,s:s,s:s,s:o,s:f,s:f,s:f,s:f,s:f,s:f}", "workload", name, "rate_unit",
	    rec ? "GiB/s" : "ops/s", "cost_unit", rec ? "s/GiB" : "p99 ns", "values",
	    vals, "a_ops_per_s", rate[0], "b_ops_per_s", rate[1], "ops_ratio",
	    rate[0] > 0 ? rate[1] / rate[0] : 0.0, "a_p99_ns", cost[0], "b_p99_ns",
	    cost[1], "p99_ratio", cost[0] > 0 ? cost[1] / cost[0] : 0.0);
}

int run_compare(struct bench_ctx *c)
{
	json_t *jobs[CMP_TARGETS_MAX][CMP_ROWS] = {{0}};
	uint64_t run_ns = c->runtime_set ? c->io.runtime_ns
			  : c->quick	 ? 1000000000ull
					 : 3000000000ull;

	if (c->npos == 0) { /* PMR versus flash, and pmem */
		c->pos[0] = "flash";
		c->pos[1] = "pmr";
		c->pos[2] = "pmem";
		c->npos = 3;
	}
	if (c->npos < 2 || c->npos > CMP_TARGETS_MAX) {
		snprintf(c->err, sizeof(c->err),
			 "compare takes two or three targets (compare A B [C]; none: "
			 "flash pmr pmem), not %d",
			 c->npos);
		return -1;
	}
	for (int t = 0; t < c->npos && !bench_stop; t++)
		run_target(c, c->pos[t], jobs[t], run_ns);
	json_t *rows = json_array(), *targets = json_array();
	for (int t = 0; t < c->npos; t++)
		json_array_append_new(targets, json_string(c->pos[t]));
	print_header(c, c->npos);
	for (size_t r = 0; r < CMP_ROWS; r++) {
		json_t *col[CMP_TARGETS_MAX];
		bool all = true;
		for (int t = 0; t < c->npos; t++)
			all = all && (col[t] = jobs[t][r]);
		if (all)
			json_array_append_new(rows, compare_row(r, col, c->npos));
	}
	json_object_set_new(json_object_get(c->root, "pmwal"), "compare",
			    json_pack("{s:s,s:s,s:o,s:o}", "a", c->pos[0], "b", c->pos[1],
				      "targets", targets, "rows", rows));
	return 0;
}
