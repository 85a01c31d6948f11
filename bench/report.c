// SPDX-License-Identifier: MIT
/*
 * report.c - `pmwal report RESULT.json... -o DIR`: one self-contained HTML
 * page (inline CSS and SVG, nothing fetched) from any number of result files:
 * the summary table, bandwidth over time per job with its cliff, sweeps as
 * curves, latency distributions, and PMR versus flash side by side. Emulated
 * targets are labelled wherever they appear.
 */
#include "bench.h"
#include "svg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_cmd.h"

#define REPORT_CURVES_MAX  8
#define SERIES_PLOT_POINTS 1500
#define REPORT_JOBS_MAX	   4096

/* All jobs of all roots, flattened, with the file each came from. */
struct jobs {
	json_t *job[REPORT_JOBS_MAX];
	int n;
};

static const char *js(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static json_t *pm(json_t *job)
{
	return json_object_get(job, "pmwal");
}

static void target_label(json_t *job, char *buf, size_t len)
{
	const char *l = js(pm(job), "label");

	snprintf(buf, len, "%s%s", *l ? l : js(pm(job), "target"),
		 json_is_true(json_object_get(pm(job), "emulated")) &&
			 !strstr(l, "emulated")
		     ? " (emulated)"
		     : "");
}

static void head(FILE *f)
{
	fputs("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>pmwal bench "
	      "report</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222}"
	      "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;"
	      "padding:3px 6px;text-align:right}td:nth-child(-n+4){text-align:left}"
	      "th{background:#eee}.emu{background:#fff3cd}.grid{display:flex;flex-wrap:"
	      "wrap;"
	      "gap:8px}.err{color:#b00}code{font-size:11px}li{overflow-wrap:anywhere;"
	      "font-size:12px}h2{border-bottom:1px solid #ccc}"
	      "</style></head><body>\n<h1>pmwal bench report</h1>\n",
	      f);
}

/* One line of facts per target; the whole record (probe included) folded. */
static void target_facts(FILE *f, json_t *t)
{
	static const char *const keys[] = {
	    "kind",	  "model",    "logical_block_size", "physical_block_size",
	    "rotational", "scheduler"};

	fputs("<li><details><summary><code>", f);
	svg_esc(f, js(t, "target"));
	fputs("</code>", f);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = js(t, keys[i]);
		if (!*v)
			continue;
		fprintf(f, ", %s ", keys[i]);
		svg_esc(f, v);
	}
	static const char *const probe_keys[] = {"filesystem", "pmem2_granularity",
						 "pmem2_barrier", "o_direct"};
	json_t *probe = json_object_get(t, "probe");
	for (size_t i = 0;
	     json_is_object(probe) && i < sizeof(probe_keys) / sizeof(probe_keys[0]);
	     i++) {
		json_t *v = json_object_get(probe, probe_keys[i]);
		if (json_is_string(v)) {
			fprintf(f, ", %s ", probe_keys[i]);
			svg_esc(f, json_string_value(v));
		} else if (json_is_boolean(v))
			fprintf(f, ", %s %s", probe_keys[i],
				json_is_true(v) ? "yes" : "no");
	}
	if (json_is_true(json_object_get(t, "emulated")))
		fputs(" <b class='emu'>EMULATED</b>", f);
	fputs("</summary><pre style='font-size:11px;white-space:pre-wrap'>", f);
	char *txt = json_dumps(t, JSON_INDENT(1));
	svg_esc(f, txt ? txt : "");
	free(txt);
	fputs("</pre></details></li>\n", f);
}

static void env_section(FILE *f, json_t **roots, int n)
{
	fputs("<h2>Environment</h2>\n", f);
	for (int i = 0; i < n; i++) {
		json_t *env =
		    json_object_get(json_object_get(roots[i], "pmwal"), "environment");
		json_t *cpu = json_object_get(env, "cpu"), *t;
		size_t k;
		fprintf(f, "<p>kernel <b>");
		svg_esc(f, js(env, "kernel"));
		fputs("</b>, CPU <b>", f);
		svg_esc(f, js(cpu, "model"));
		fprintf(f, "</b> x%d, liburing ",
			(int)json_integer_value(json_object_get(cpu, "online")));
		svg_esc(f, js(env, "liburing"));
		fprintf(f, ", histogram relative error &le; %.2f%%",
			100 * json_real_value(json_object_get(
				  json_object_get(env, "histogram"), "rel_error_bound")));
		if (json_object_get(env, "clock")) { /* results before it lack it */
			fputs(", clock ", f);
			svg_esc(f, js(env, "clock"));
		}
		if (json_is_true(json_object_get(json_object_get(roots[i], "pmwal"),
						 "interrupted")))
			fputs(" <span class='err'>(interrupted: partial results)</span>",
			      f);
		fputs("</p><ul>\n", f);
		json_array_foreach(json_object_get(env, "targets"), k, t)
		{
			target_facts(f, t);
		}
		fputs("</ul>\n", f);
	}
}

static void fmt_pct(char *buf, size_t len, json_t *clat, const char *key)
{
	fmt_ns(buf, len,
	       (double)json_integer_value(
		   json_object_get(json_object_get(clat, "percentile"), key)));
}

static void summary_row(FILE *f, json_t *job, const char *dir)
{
	json_t *d = json_object_get(job, dir), *c = json_object_get(d, "clat_ns");
	char t[128], bw[16], p[6][16];

	if (!json_integer_value(json_object_get(d, "total_ios")))
		return;
	target_label(job, t, sizeof(t));
	fmt_bytes(bw, sizeof(bw),
		  (double)json_integer_value(json_object_get(d, "bw_bytes")));
	fmt_pct(p[0], 16, c, "50.000000");
	fmt_pct(p[1], 16, c, "90.000000");
	fmt_pct(p[2], 16, c, "99.000000");
	fmt_pct(p[3], 16, c, "99.900000");
	fmt_pct(p[4], 16, c, "99.990000");
	fmt_ns(p[5], 16, (double)json_integer_value(json_object_get(c, "max")));
	fprintf(f, "<tr%s><td>",
		json_is_true(json_object_get(pm(job), "emulated")) ? " class='emu'" : "");
	svg_esc(f, js(pm(job), "phase"));
	fputs("</td><td>", f);
	svg_esc(f, t);
	fputs("</td><td>", f);
	svg_esc(f, js(job, "jobname"));
	fprintf(f, "</td><td>%s</td><td>%.0f</td><td>%s/s</td>", dir,
		json_real_value(json_object_get(d, "iops")), bw);
	for (int i = 0; i < 6; i++)
		fprintf(f, "<td>%s</td>", p[i]);
	char cpu[16];
	fmt_ns(cpu, sizeof(cpu),
	       json_real_value(json_object_get(pm(job), "cpu_ns_per_io")));
	fprintf(f, "<td>%s</td></tr>\n", cpu);
}

static void summary_section(FILE *f, struct jobs *J)
{
	fputs(
	    "<h2>Results</h2>\n<table><tr><th>phase</th><th>target</th><th>workload</th>"
	    "<th>dir</th><th>IOPS</th><th>BW</th><th>p50</th><th>p90</th><th>p99</th>"
	    "<th>p99.9</th><th>p99.99</th><th>max</th><th>CPU/op</th></tr>\n",
	    f);
	for (int i = 0; i < J->n; i++) {
		summary_row(f, J->job[i], "read");
		summary_row(f, J->job[i], "write");
		const char *e = js(pm(J->job[i]), "error");
		if (*e) {
			fputs("<tr><td colspan='13' class='err'>", f);
			svg_esc(f, js(J->job[i], "jobname"));
			fputs(": ", f);
			svg_esc(f, e);
			fputs("</td></tr>\n", f);
		}
	}
	fputs("</table>\n<p>Rows shaded yellow ran on emulated persistent memory (a file "
	      "in "
	      "/dev/shm with the cache-line path forced): they measure CPU cost, not "
	      "durability.</p>\n",
	      f);
}

static void series_chart(FILE *f, json_t *job)
{
	json_t *s = json_object_get(pm(job), "series"),
	       *pts = json_object_get(s, "points");
	int n = (int)json_array_size(pts);
	double *x = calloc((size_t)n + 1, sizeof(double)), *y[2];
	char title[256], t[128];
	struct curve c[2];
	int nc = 0;

	y[0] = calloc((size_t)n + 1, sizeof(double));
	y[1] = calloc((size_t)n + 1, sizeof(double));
	if (!x || !y[0] || !y[1])
		goto out;
	/* At most SERIES_PLOT_POINTS per line: a long run is averaged into
	 * buckets, so the page stays light (the CSV keeps every interval). */
	int per = n / SERIES_PLOT_POINTS + 1, m = 0;
	for (int i = 0; i < n; i += per, m++) {
		double sx = 0, s0 = 0, s1 = 0;
		int k = 0;
		for (; k < per && i + k < n; k++) {
			json_t *p = json_array_get(pts, (size_t)(i + k));
			sx += json_number_value(json_array_get(p, 0));
			s0 += json_number_value(json_array_get(p, 1));
			s1 += json_number_value(json_array_get(p, 2));
		}
		x[m] = sx / k;
		y[0][m] = s0 / k / 1048576;
		y[1][m] = s1 / k / 1048576;
	}
	n = m;
	for (int d = 0; d < 2; d++)
		if (json_integer_value(json_object_get(
			json_object_get(job, d ? "write" : "read"), "total_ios")))
			c[nc++] =
			    (struct curve){d ? "write MiB/s" : "read MiB/s", n, x, y[d]};
	target_label(job, t, sizeof(t));
	snprintf(title, sizeof(title), "%s: %s", t, js(job, "jobname"));
	json_t *cl = json_object_get(s, "cliff");
	double mark = json_is_true(json_object_get(cl, "detected"))
			  ? json_real_value(json_object_get(cl, "at_s"))
			  : NAN;
	fputs("<figure style='margin:0'>", f);
	svg_lines(f, title, c, nc, false, false, "seconds", "MiB/s", mark, NULL);
	json_t *st = json_object_get(s, "steady"), *bu = json_object_get(s, "burst");
	fprintf(f, "<figcaption style='font-size:11px'>steady %.1f MiB/s over %.1f s",
		json_real_value(json_object_get(st, "bw_bytes")) / 1048576,
		json_real_value(json_object_get(st, "seconds")));
	if (bu)
		fprintf(f, "; burst %.1f MiB/s for %.1f s, then x%.2f after %.0f MiB",
			json_real_value(json_object_get(bu, "bw_bytes")) / 1048576,
			json_real_value(json_object_get(bu, "seconds")),
			json_real_value(json_object_get(cl, "after_over_before")),
			json_integer_value(json_object_get(cl, "bytes_before")) /
			    1048576.0);
	fputs("</figcaption></figure>\n", f);
out:
	free(x);
	free(y[0]);
	free(y[1]);
}

static void series_section(FILE *f, struct jobs *J)
{
	fputs(
	    "<h2>Bandwidth over time</h2>\n<p>Per interval; a dashed line marks a cliff "
	    "(lasting drop to under 60% of the bandwidth before it).</p><div "
	    "class='grid'>\n",
	    f);
	for (int i = 0; i < J->n; i++)
		if (json_array_size(json_object_get(
			json_object_get(pm(J->job[i]), "series"), "points")) > 1)
			series_chart(f, J->job[i]);
	fputs("</div>\n", f);
}

static double job_p99(json_t *job)
{
	double w = 0;

	for (int d = 0; d < 2; d++) {
		json_t *p = json_object_get(
		    json_object_get(json_object_get(job, d ? "write" : "read"),
				    "clat_ns"),
		    "percentile");
		double v = (double)json_integer_value(json_object_get(p, "99.000000"));
		w = v > w ? v : w;
	}
	return w;
}

/* One chart per sweep key; one curve per group (target and workload). */
static void sweep_key_charts(FILE *f, struct jobs *J, const char *key)
{
	const char *groups[REPORT_CURVES_MAX];
	static double xs[REPORT_CURVES_MAX][64], ops[REPORT_CURVES_MAX][64],
	    lat[REPORT_CURVES_MAX][64];
	struct curve c1[REPORT_CURVES_MAX], c2[REPORT_CURVES_MAX];
	int ng = 0, cnt[REPORT_CURVES_MAX] = {0};

	for (int i = 0; i < J->n; i++) {
		json_t *sw = json_object_get(pm(J->job[i]), "sweep");
		if (!sw || strcmp(js(sw, "key"), key))
			continue;
		int g;
		for (g = 0; g < ng && strcmp(groups[g], js(sw, "group")); g++)
			;
		if (g == ng) {
			if (ng == REPORT_CURVES_MAX)
				continue;
			groups[ng++] = js(sw, "group");
		}
		if (cnt[g] >= 64)
			continue;
		xs[g][cnt[g]] = (double)json_integer_value(json_object_get(sw, "value"));
		ops[g][cnt[g]] =
		    json_real_value(json_object_get(pm(J->job[i]), "ops_per_s"));
		lat[g][cnt[g]++] = job_p99(J->job[i]) / 1000;
	}
	for (int g = 0; g < ng; g++) {
		c1[g] = (struct curve){groups[g], cnt[g], xs[g], ops[g]};
		c2[g] = (struct curve){groups[g], cnt[g], xs[g], lat[g]};
	}
	char t[64];
	/* Ticks at the swept values (powers of two read better than 2.83). */
	struct svg_ticks xt = {.n = ng ? cnt[0] : 0, .at = xs[0]};
	snprintf(t, sizeof(t), "operations/s by %s", key);
	svg_lines(f, t, c1, ng, true, false, key, "ops/s", NAN, &xt);
	snprintf(t, sizeof(t), "p99 latency by %s", key);
	svg_lines(f, t, c2, ng, true, true, key, "p99 (us)", NAN, &xt);
}

static void sweep_section(FILE *f, struct jobs *J)
{
	static const char *const keys[] = {"iodepth", "numjobs", "bs", "record",
					   "threads"};
	bool header = false;

	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		bool any = false;
		for (int i = 0; i < J->n && !any; i++)
			any = !strcmp(js(json_object_get(pm(J->job[i]), "sweep"), "key"),
				      keys[k]);
		if (!any)
			continue;
		if (!header)
			fputs("<h2>Sweeps</h2>\n<div class='grid'>\n", f);
		header = true;
		sweep_key_charts(f, J, keys[k]);
	}
	if (header)
		fputs("</div>\n", f);
}

static const char *const pct_keys[] = {"1.000000",  "10.000000", "50.000000",
				       "90.000000", "99.000000", "99.900000",
				       "99.990000", "99.999000"};
#define NPCT (sizeof(pct_keys) / sizeof(pct_keys[0]))

/* Latency by percentile for up to 8 job directions of one phase. */
static void latency_chart(FILE *f, const char *phase, json_t **jobs, const char **dirs,
			  int n)
{
	static double x[REPORT_CURVES_MAX][NPCT], y[REPORT_CURVES_MAX][NPCT];
	static char names[REPORT_CURVES_MAX][160];
	struct curve c[REPORT_CURVES_MAX];
	char title[96], t[128];

	for (int i = 0; i < n; i++) {
		json_t *p = json_object_get(
		    json_object_get(json_object_get(jobs[i], dirs[i]), "clat_ns"),
		    "percentile");
		for (size_t k = 0; k < NPCT; k++) {
			double pc = atof(pct_keys[k]);
			x[i][k] = 1.0 / (1.0 - pc / 100.0); /* 10 = p90, 1000 = p99.9 */
			y[i][k] =
			    (double)json_integer_value(json_object_get(p, pct_keys[k])) /
			    1000;
		}
		target_label(jobs[i], t, sizeof(t));
		snprintf(names[i], sizeof(names[i]), "%s %s %s", t,
			 js(jobs[i], "jobname"), dirs[i]);
		c[i] = (struct curve){names[i], (int)NPCT, x[i], y[i]};
	}
	static const double at[] = {2, 10, 100, 1000, 10000, 100000};
	static const char *const lab[] = {"p50",   "p90",    "p99",
					  "p99.9", "p99.99", "p99.999"};
	struct svg_ticks xt = {.n = 6, .at = at, .label = lab};
	snprintf(title, sizeof(title), "%s latency distribution", phase);
	svg_lines(f, title, c, n, true, true, "percentile", "latency (us)", NAN, &xt);
}

static void latency_section(FILE *f, struct jobs *J)
{
	static const char *const phases[] = {"io", "log", "primitive", "dual",
					     "recovery"};

	fputs("<h2>Latency distributions</h2>\n<div class='grid'>\n", f);
	for (size_t ph = 0; ph < 4; ph++) {
		json_t *jobs[REPORT_CURVES_MAX];
		const char *dirs[REPORT_CURVES_MAX];
		int n = 0;
		for (int i = 0; i < J->n; i++) {
			if (strcmp(js(pm(J->job[i]), "phase"), phases[ph]))
				continue;
			for (int d = 0; d < 2; d++) {
				const char *dn = d ? "write" : "read";
				if (!json_integer_value(json_object_get(
					json_object_get(J->job[i], dn), "total_ios")))
					continue;
				jobs[n] = J->job[i];
				dirs[n++] = dn;
				if (n == REPORT_CURVES_MAX) {
					latency_chart(f, phases[ph], jobs, dirs, n);
					n = 0;
				}
			}
		}
		if (n)
			latency_chart(f, phases[ph], jobs, dirs, n);
	}
	fputs("</div>\n", f);
}

#define SIDE_CATS_MAX 12

static int label_index(char labels[][128], int *n, const char *l)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(labels[i], l))
			return i;
	if (*n == REPORT_CURVES_MAX)
		return -1;
	snprintf(labels[*n], 128, "%s", l);
	return (*n)++;
}

static double job_p50(json_t *job)
{
	for (int d = 1; d >= 0; d--) {
		json_t *c = json_object_get(json_object_get(job, d ? "write" : "read"),
					    "clat_ns");
		if (json_integer_value(json_object_get(c, "N")))
			return (double)json_integer_value(json_object_get(
			    json_object_get(c, "percentile"), "50.000000"));
	}
	return 0;
}

/* Workloads of @phase measured on more than one target, as grouped bars. */
static void side_phase(FILE *f, struct jobs *J, const char *phase)
{
	static char labels[REPORT_CURVES_MAX][128];
	const char *cats[SIDE_CATS_MAX], *sers[REPORT_CURVES_MAX];
	double ops[SIDE_CATS_MAX * REPORT_CURVES_MAX] = {0},
				   p50[SIDE_CATS_MAX * REPORT_CURVES_MAX] = {0};
	int nl = 0, nc = 0;

	for (int i = 0; i < J->n; i++) {
		json_t *job = J->job[i];
		char t[128];
		if (json_object_get(pm(job), "sweep") ||
		    strcmp(js(pm(job), "phase"), phase))
			continue;
		target_label(job, t, sizeof(t));
		int l = label_index(labels, &nl, t), c;
		for (c = 0; c < nc && strcmp(cats[c], js(job, "jobname")); c++)
			;
		if (l < 0 || (c == nc && nc == SIDE_CATS_MAX))
			continue;
		if (c == nc)
			cats[nc++] = js(job, "jobname");
		ops[c * REPORT_CURVES_MAX + l] =
		    json_real_value(json_object_get(pm(job), "ops_per_s"));
		p50[c * REPORT_CURVES_MAX + l] = job_p50(job) / 1000;
	}
	if (nl < 2)
		return;
	/* Keep only workloads seen on at least two targets. */
	const char *keep[SIDE_CATS_MAX];
	double kops[SIDE_CATS_MAX * REPORT_CURVES_MAX],
	    kp50[SIDE_CATS_MAX * REPORT_CURVES_MAX];
	int nk = 0;
	for (int c = 0; c < nc; c++) {
		int seen = 0;
		for (int l = 0; l < nl; l++)
			seen += ops[c * REPORT_CURVES_MAX + l] > 0;
		if (seen < 2)
			continue;
		keep[nk] = cats[c];
		for (int l = 0; l < nl; l++) {
			kops[nk * nl + l] = ops[c * REPORT_CURVES_MAX + l];
			kp50[nk * nl + l] = p50[c * REPORT_CURVES_MAX + l];
		}
		nk++;
	}
	for (int l = 0; l < nl; l++)
		sers[l] = labels[l];
	if (!nk)
		return;
	char t[96];
	snprintf(t, sizeof(t), "%s: operations/s, each target", phase);
	svg_bars(f, t, keep, nk, sers, nl, kops, "ops/s");
	snprintf(t, sizeof(t), "%s: p50 latency (us), each target", phase);
	svg_bars(f, t, keep, nk, sers, nl, kp50, "us");
}

static void side_section(FILE *f, struct jobs *J)
{
	static const char *const phases[] = {"log", "primitive", "io", "recovery"};

	fputs("<h2>Targets side by side</h2>\n<p>Each workload that ran on more than one "
	      "target (PMR or pmem versus flash).</p><div class='grid'>\n",
	      f);
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		side_phase(f, J, phases[i]);
	fputs("</div>\n", f);
}

static void compare_section(FILE *f, json_t **roots, int n)
{
	for (int i = 0; i < n; i++) {
		json_t *cmp =
			   json_object_get(json_object_get(roots[i], "pmwal"), "compare"),
		       *row;
		size_t k;
		if (!cmp)
			continue;
		fputs("<h2>Compare: B = ", f);
		svg_esc(f, js(cmp, "b"));
		fputs(", A = ", f);
		svg_esc(f, js(cmp, "a"));
		fputs(
		    "</h2>\n<table><tr><th>workload</th><th>A ops/s</th><th>B ops/s</th>"
		    "<th>B/A</th><th>A p99 ns</th><th>B p99 ns</th><th>B/A</th></tr>\n",
		    f);
		json_array_foreach(json_object_get(cmp, "rows"), k, row)
		{
			fputs("<tr><td>", f);
			svg_esc(f, js(row, "workload"));
			fprintf(
			    f,
			    "</td><td>%.0f</td><td>%.0f</td><td>%.2f</td><td>%.0f</td>"
			    "<td>%.0f</td><td>%.2f</td></tr>\n",
			    json_real_value(json_object_get(row, "a_ops_per_s")),
			    json_real_value(json_object_get(row, "b_ops_per_s")),
			    json_real_value(json_object_get(row, "ops_ratio")),
			    json_real_value(json_object_get(row, "a_p99_ns")),
			    json_real_value(json_object_get(row, "b_p99_ns")),
			    json_real_value(json_object_get(row, "p99_ratio")));
		}
		fputs("</table>\n", f);
	}
}

/* bench log --followers: the writer's ratio and the lag, after the log line. */
static void followers_item(FILE *f, json_t *fl)
{
	json_t *lag = json_object_get(fl, "lag_us");

	if (!fl)
		return;
	if (!json_is_true(json_object_get(fl, "verified"))) {
		fputs("; followers FAILED", f);
		return;
	}
	fprintf(f,
		"; %" JSON_INTEGER_FORMAT " followers: writer x%.3f of alone, lag "
		"p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us",
		json_integer_value(json_object_get(fl, "count")),
		json_real_value(json_object_get(fl, "ratio")),
		json_real_value(json_object_get(lag, "p50")),
		json_real_value(json_object_get(lag, "p99")),
		json_real_value(json_object_get(lag, "p99.9")),
		json_real_value(json_object_get(lag, "max")));
}

static void extras_section(FILE *f, struct jobs *J)
{
	fputs("<h2>Log, recovery and cross-checks</h2>\n<ul>\n", f);
	for (int i = 0; i < J->n; i++) {
		json_t *p = pm(J->job[i]), *lg = json_object_get(p, "log");
		json_t *rc = json_object_get(p, "recovery");
		const char *fio = js(p, "fio_command");
		char t[128];
		target_label(J->job[i], t, sizeof(t));
		if (lg) {
			fputs("<li>", f);
			svg_esc(f, t);
			fputs(" ", f);
			svg_esc(f, js(J->job[i], "jobname"));
			fprintf(
			    f,
			    ": %.0f appends/s, %.1f MiB/s, %.1f records/group, "
			    "durability ",
			    json_real_value(json_object_get(lg, "appends_per_s")),
			    json_real_value(json_object_get(lg, "bytes_per_s")) / 1048576,
			    json_real_value(json_object_get(lg, "records_per_group")));
			svg_esc(f, js(lg, "durability"));
			followers_item(f, json_object_get(lg, "followers"));
			fputs("</li>\n", f);
		}
		if (rc) {
			fputs("<li>", f);
			svg_esc(f, t);
			fprintf(
			    f,
			    " recovery: %.3f s/GiB (%.0f MiB/s; raw read %.0f MiB/s), "
			    "verdict ",
			    json_real_value(json_object_get(rc, "s_per_gib")),
			    json_real_value(json_object_get(rc, "bw_bytes")) / 1048576,
			    json_real_value(json_object_get(rc, "raw_read_bw_bytes")) /
				1048576);
			svg_esc(f, js(rc, "verdict"));
			fputs("</li>\n", f);
		}
		if (*fio) {
			fputs("<li><code>", f);
			svg_esc(f, fio);
			fputs("</code></li>\n", f);
		}
	}
	fputs("</ul>\n", f);
}

int report_html(json_t **roots, int nroots, const char *dir, char *err, size_t errlen)
{
	static struct jobs J;
	char path[4096];
	json_t *job;
	size_t k;

	J.n = 0;
	for (int i = 0; i < nroots; i++)
		json_array_foreach(json_object_get(roots[i], "jobs"), k,
				   job) if (J.n < REPORT_JOBS_MAX) J.job[J.n++] = job;
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/index.html", dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	head(f);
	env_section(f, roots, nroots);
	summary_section(f, &J);
	side_section(f, &J);
	compare_section(f, roots, nroots);
	sweep_section(f, &J);
	latency_section(f, &J);
	series_section(f, &J);
	extras_section(f, &J);
	fputs("</body></html>\n", f);
	if (fclose(f)) {
		snprintf(err, errlen, "writing %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	json_t *roots[64];
	int n = 0, status = 0;
	const char *dir = "pmwal-report";
	char err[512];

	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) &&
		    i + 1 < argc) {
			dir = argv[++i];
			continue;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: pmwal report RESULT.json... [-o DIR]\n");
			goto out;
		}
		json_error_t je;
		if (n == 64 || argv[i][0] == '-') {
			fprintf(stderr, "pmwal report: unexpected '%s'\n", argv[i]);
			status = BENCH_EXIT_USAGE;
			goto out;
		}
		roots[n] = json_load_file(argv[i], 0, &je);
		if (!roots[n] || !json_is_array(json_object_get(roots[n], "jobs"))) {
			fprintf(stderr, "pmwal report: %s: %s\n", argv[i],
				roots[n]
				    ? "not a pmwal bench or fio JSON result (no jobs[])"
				    : je.text);
			json_decref(roots[n]);
			status = BENCH_EXIT_USAGE;
			goto out;
		}
		n++;
	}
	if (!n) {
		fprintf(stderr, "usage: pmwal report RESULT.json... [-o DIR]\n");
		return BENCH_EXIT_USAGE;
	}
	if (report_html(roots, n, dir, err, sizeof(err))) {
		fprintf(stderr, "pmwal report: %s\n", err);
		status = BENCH_EXIT_FAIL;
	} else {
		printf("%s/index.html\n", dir);
	}
out:
	for (int i = 0; i < n; i++)
		json_decref(roots[i]);
	return status;
}
