// SPDX-License-Identifier: MIT
/*
 * report.c - `pmwal report RESULT.json... -o DIR`: one self-contained HTML
 * page (inline CSS and SVG, nothing fetched) from any number of result files:
 * the summary table, bandwidth over time per job with its cliff, sweeps as
 * curves, latency distributions, and PMR versus flash side by side. Emulated
 * targets are labelled wherever they appear.
 */
#include "bench.h"
#include "outfile.h"
#include "svg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_cmd.h"
#include "opttab.h"

#define REPORT_CURVES_MAX  8
#define SERIES_PLOT_POINTS 1500

/* All jobs of all roots, flattened: as many as the results hold (a fixed
 * table once dropped every job after the 4096th without a word). */
struct jobs {
	json_t **job;
	const char **names; /* room for one name per job (dist_section) */
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
	      ".trio{display:flex;gap:6px;max-width:1700px}.trio svg{flex:1 1 0;"
	      "min-width:0;height:auto}"
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
	      "in /dev/shm with the cache-line path forced, or the fake PMR: NVMe PMR's "
	      "registers and barrier protocol over such a file): they measure CPU "
	      "cost, not durability.</p>\n",
	      f);
}

/* Column @col of every point (t_s, read_bw_bytes, write_bw_bytes, read_iops,
 * write_iops, read_p99_ns, write_p99_ns), averaged into at most
 * SERIES_PLOT_POINTS buckets so a long run keeps the page light (the CSV
 * keeps every interval); @scale divides. Returns the points written. */
static int series_column(json_t *pts, int col, double scale, double *out)
{
	int n = (int)json_array_size(pts), per = n / SERIES_PLOT_POINTS + 1, m = 0;

	for (int i = 0; i < n; i += per, m++) {
		double sum = 0;
		int k = 0;
		for (; k < per && i + k < n; k++)
			sum += json_number_value(json_array_get(
			    json_array_get(pts, (size_t)(i + k)), (size_t)col));
		out[m] = sum / k / scale;
	}
	return m;
}

/* One measure over time, a line per direction that ran. */
static void series_plot(FILE *f, json_t *job, const char *what, int col0, double scale,
			const char *unit, double mark)
{
	json_t *s = json_object_get(pm(job), "series"),
	       *pts = json_object_get(s, "points");
	size_t n = json_array_size(pts) + 1;
	double *x = calloc(n, sizeof(double)), *y0 = calloc(n, sizeof(double)),
	       *y1 = calloc(n, sizeof(double));
	char title[256], t[128], names[2][64];
	struct curve c[2];
	int nc = 0;

	if (!x || !y0 || !y1)
		goto out;
	int m = series_column(pts, 0, 1, x);
	series_column(pts, col0, scale, y0);
	series_column(pts, col0 + 1, scale, y1);
	for (int d = 0; d < 2; d++)
		if (json_integer_value(json_object_get(
			json_object_get(job, d ? "write" : "read"), "total_ios"))) {
			snprintf(names[nc], sizeof(names[nc]), "%s %s",
				 d ? "write" : "read", unit);
			c[nc] = (struct curve){names[nc], m, x, d ? y1 : y0};
			nc++;
		}
	target_label(job, t, sizeof(t));
	snprintf(title, sizeof(title), "%s: %s, %s", t, js(job, "jobname"), what);
	svg_lines(f, title, c, nc, false, false, "seconds", unit, mark, NULL);
out:
	free(x);
	free(y0);
	free(y1);
}

static void series_chart(FILE *f, json_t *job)
{
	json_t *s = json_object_get(pm(job), "series");
	json_t *cl = json_object_get(s, "cliff");
	double mark = json_is_true(json_object_get(cl, "detected"))
			  ? json_real_value(json_object_get(cl, "at_s"))
			  : NAN;

	fputs("<figure style='margin:0 0 8px 0'><div class='trio'>", f);
	series_plot(f, job, "bandwidth", 1, 1048576, "MiB/s", mark);
	series_plot(f, job, "IOPS", 3, 1, "IOPS", mark);
	series_plot(f, job, "p99 per interval", 5, 1000, "p99 us", mark);
	json_t *st = json_object_get(s, "steady"), *bu = json_object_get(s, "burst");
	fprintf(f,
		"</div><figcaption style='font-size:12px'>steady %.1f MiB/s over %.1f s",
		json_real_value(json_object_get(st, "bw_bytes")) / 1048576,
		json_real_value(json_object_get(st, "seconds")));
	if (bu)
		fprintf(f,
			"; <b>cliff</b>: burst %.1f MiB/s for %.1f s, then x%.2f after "
			"%.0f MiB",
			json_real_value(json_object_get(bu, "bw_bytes")) / 1048576,
			json_real_value(json_object_get(bu, "seconds")),
			json_real_value(json_object_get(cl, "after_over_before")),
			json_integer_value(json_object_get(cl, "bytes_before")) /
			    1048576.0);
	fputs("</figcaption></figure>\n", f);
}

static void series_section(FILE *f, struct jobs *J)
{
	fputs("<h2>Bandwidth, IOPS and p99 over time</h2>\n<p>Bandwidth, IOPS and p99 "
	      "latency per interval and "
	      "direction (sweep points left out; series.csv has them); a dashed line "
	      "marks a cliff (a lasting drop to under 60% of the bandwidth before "
	      "it).</p>\n",
	      f);
	for (int i = 0; i < J->n; i++)
		if (!json_object_get(pm(J->job[i]), "sweep") &&
		    json_array_size(json_object_get(
			json_object_get(pm(J->job[i]), "series"), "points")) > 1)
			series_chart(f, J->job[i]);
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
	/* Where queueing stops buying throughput: the knee of each curve. */
	if (strcmp(key, "bs") && strcmp(key, "record")) {
		struct curve c3[REPORT_CURVES_MAX];
		for (int g = 0; g < ng; g++)
			c3[g] = (struct curve){groups[g], cnt[g], ops[g], lat[g]};
		snprintf(t, sizeof(t), "p99 latency against ops/s (points: %s)", key);
		svg_lines(f, t, c3, ng, true, true, "ops/s", "p99 (us)", NAN, NULL);
	}
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

/*
 * Latency histograms and CDFs per workload. The distribution comes from
 * clat_ns.bins where a result has them (fio's json+ shape: latency in ns ->
 * count), else from the percentile list (min, p1 .. p99.999, max), which is
 * exact at those points; between points the CDF is interpolated linearly in
 * log(latency), and the histogram is the CDF's rise over each of 10 buckets
 * per decade.
 */
#define CDF_POINTS_MAX		64
#define HIST_BUCKETS_PER_DECADE 10
#define HIST_BUCKETS_MAX	80

struct cdf {
	int n;
	double lat_us[CDF_POINTS_MAX], frac[CDF_POINTS_MAX];
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* From bins: merged into at most CDF_POINTS_MAX steps of equal count. */
static bool cdf_from_bins(json_t *bins, struct cdf *c)
{
	size_t nb = json_object_size(bins), i = 0;
	double(*kv)[2] = nb ? calloc(nb, sizeof(*kv)) : NULL;
	double total = 0, run = 0;
	const char *k;
	json_t *v;

	if (!kv)
		return false;
	json_object_foreach(bins, k, v)
	{
		kv[i][0] = atof(k);
		kv[i][1] = (double)json_integer_value(v);
		total += kv[i++][1];
	}
	qsort(kv, nb, sizeof(*kv), cmp_double);
	c->n = 0;
	for (i = 0; i < nb && total > 0; i++) {
		run += kv[i][1];
		double fr = run / total;
		if (c->n && fr < c->frac[c->n - 1] + 1.0 / CDF_POINTS_MAX && i + 1 < nb)
			continue;
		if (c->n == CDF_POINTS_MAX)
			break;
		c->lat_us[c->n] = kv[i][0] / 1000;
		c->frac[c->n++] = fr;
	}
	free(kv);
	return c->n > 1;
}

static void cdf_of(json_t *job, const char *dir, struct cdf *c)
{
	json_t *cl = json_object_get(json_object_get(job, dir), "clat_ns");
	json_t *pct = json_object_get(cl, "percentile");
	double kv[CDF_POINTS_MAX][2];
	const char *k;
	json_t *v;
	int n = 0;

	if (cdf_from_bins(json_object_get(cl, "bins"), c))
		return;
	/* (fraction, latency) pairs, sorted by fraction: json objects keep no
	 * order a reader may rely on. */
	kv[n][0] = 0;
	kv[n++][1] = (double)json_integer_value(json_object_get(cl, "min"));
	json_object_foreach(pct, k, v)
	{
		if (n >= CDF_POINTS_MAX - 1)
			break;
		kv[n][0] = atof(k) / 100;
		kv[n++][1] = (double)json_integer_value(v);
	}
	kv[n][0] = 1;
	kv[n++][1] = (double)json_integer_value(json_object_get(cl, "max"));
	qsort(kv + 1, (size_t)n - 2, sizeof(kv[0]), cmp_double);
	c->n = 0;
	for (int i = 0; i < n; i++) {
		if (kv[i][1] <= 0)
			continue;
		/* A histogram's percentile is a bucket's bound: keep it rising. */
		double us = kv[i][1] / 1000;
		if (c->n && us < c->lat_us[c->n - 1])
			us = c->lat_us[c->n - 1];
		c->lat_us[c->n] = us;
		c->frac[c->n++] = kv[i][0];
	}
}

/* The CDF at @us: linear in log(latency) between its points. */
static double cdf_at(const struct cdf *c, double us)
{
	if (!c->n || us < c->lat_us[0])
		return 0;
	for (int i = 1; i < c->n; i++)
		if (us < c->lat_us[i]) {
			double a = log(c->lat_us[i - 1]), b = log(c->lat_us[i]);
			double t = b > a ? (log(us) - a) / (b - a) : 1;
			return c->frac[i - 1] + t * (c->frac[i] - c->frac[i - 1]);
		}
	return 1;
}

static void dist_charts(FILE *f, const char *workload, json_t **jobs, const char **dirs,
			int n)
{
	static struct cdf cd[REPORT_CURVES_MAX];
	static double cx[REPORT_CURVES_MAX][CDF_POINTS_MAX],
	    cy[REPORT_CURVES_MAX][CDF_POINTS_MAX],
	    hx[REPORT_CURVES_MAX][HIST_BUCKETS_MAX],
	    hy[REPORT_CURVES_MAX][HIST_BUCKETS_MAX];
	static char names[REPORT_CURVES_MAX][160];
	struct curve cc[REPORT_CURVES_MAX], hc[REPORT_CURVES_MAX];
	double lo = INFINITY, hi = 0;
	char t[160];

	for (int i = 0; i < n; i++) {
		cdf_of(jobs[i], dirs[i], &cd[i]);
		for (int k = 0; k < cd[i].n; k++) {
			cx[i][k] = cd[i].lat_us[k];
			cy[i][k] = 100 * cd[i].frac[k];
		}
		if (cd[i].n) {
			lo = cd[i].lat_us[0] < lo ? cd[i].lat_us[0] : lo;
			hi = cd[i].lat_us[cd[i].n - 1] > hi ? cd[i].lat_us[cd[i].n - 1]
							    : hi;
		}
		char tl[128];
		target_label(jobs[i], tl, sizeof(tl));
		snprintf(names[i], sizeof(names[i]), "%s %s", tl, dirs[i]);
		cc[i] = (struct curve){names[i], cd[i].n, cx[i], cy[i]};
	}
	if (!(hi > 0))
		return;
	double e0 = floor(log10(lo) * HIST_BUCKETS_PER_DECADE);
	int nb = (int)ceil(log10(hi) * HIST_BUCKETS_PER_DECADE - e0);
	nb = nb < 1 ? 1 : nb > HIST_BUCKETS_MAX - 1 ? HIST_BUCKETS_MAX - 1 : nb;
	for (int i = 0; i < n; i++) {
		for (int b = 0; b < nb; b++) {
			double a = pow(10, (e0 + b) / HIST_BUCKETS_PER_DECADE),
			       z = pow(10, (e0 + b + 1) / HIST_BUCKETS_PER_DECADE);
			hx[i][b] = sqrt(a * z);
			hy[i][b] = 100 * (cdf_at(&cd[i], z) - cdf_at(&cd[i], a));
		}
		hc[i] = (struct curve){names[i], nb, hx[i], hy[i]};
	}
	snprintf(t, sizeof(t), "%s: latency histogram", workload);
	svg_lines(f, t, hc, n, true, false, "latency (us), 10 buckets per decade",
		  "% of operations", NAN, NULL);
	snprintf(t, sizeof(t), "%s: latency CDF", workload);
	svg_lines(f, t, cc, n, true, false, "latency (us)", "% at or below", NAN, NULL);
}

/* One pair of charts per workload (jobname), a curve per target and
 * direction; sweep points and recovery left out. */
static void dist_section(FILE *f, struct jobs *J)
{
	const char **done = J->names;
	int nd = 0;

	fputs("<h2>Latency histograms and CDFs per workload</h2>\n<div class='grid'>\n",
	      f);
	for (int i = 0; i < J->n; i++) {
		const char *w = js(J->job[i], "jobname");
		const char *ph = js(pm(J->job[i]), "phase");
		bool seen = false;
		if (json_object_get(pm(J->job[i]), "sweep") || !strcmp(ph, "recovery"))
			continue;
		for (int k = 0; k < nd && !seen; k++)
			seen = !strcmp(done[k], w);
		if (seen)
			continue;
		done[nd++] = w;
		json_t *jobs[REPORT_CURVES_MAX];
		const char *dirs[REPORT_CURVES_MAX];
		int n = 0;
		for (int k = i; k < J->n && n < REPORT_CURVES_MAX; k++) {
			json_t *j = J->job[k];
			if (strcmp(js(j, "jobname"), w) ||
			    json_object_get(pm(j), "sweep") ||
			    strcmp(js(pm(j), "phase"), ph))
				continue;
			for (int d = 0; d < 2 && n < REPORT_CURVES_MAX; d++) {
				const char *dn = d ? "write" : "read";
				if (!json_integer_value(json_object_get(
					json_object_get(j, dn), "total_ios")))
					continue;
				jobs[n] = j;
				dirs[n++] = dn;
			}
		}
		if (n)
			dist_charts(f, w, jobs, dirs, n);
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

/* The category a job is compared in: its workload, except that the
 * durability primitives differ by medium (fdatasync on a file, a barrier on
 * a region), so every durable 4K write meets in one category. */
static const char *side_category(json_t *job, const char *phase)
{
	const char *name = js(job, "jobname");

	if (!strcmp(phase, "primitive") && !strncmp(name, "4K ", 3) &&
	    !strstr(name, ", no ") && !strstr(name, "x ") && !strstr(name, "two"))
		return "durable 4K write (the fastest primitive of each target)";
	if (!strcmp(phase, "recovery"))
		return "recovery: open and validate the log";
	return name;
}

/* Rate and cost of @job: ops/s and p99 us, or recovery's GiB/s and s/GiB. */
static void side_values(json_t *job, const char *phase, double *rate, double *cost)
{
	json_t *rc = json_object_get(pm(job), "recovery");

	if (!strcmp(phase, "recovery")) {
		*rate = json_real_value(json_object_get(rc, "bw_bytes")) /
			(1024.0 * 1024 * 1024);
		*cost = json_real_value(json_object_get(rc, "s_per_gib"));
		return;
	}
	*rate = json_real_value(json_object_get(pm(job), "ops_per_s"));
	*cost = job_p99(job) / 1000;
}

/* Workloads of @phase measured on more than one target, as grouped bars. */
static void side_phase(FILE *f, struct jobs *J, const char *phase)
{
	static char labels[REPORT_CURVES_MAX][128];
	const char *cats[SIDE_CATS_MAX], *sers[REPORT_CURVES_MAX];
	double ops[SIDE_CATS_MAX * REPORT_CURVES_MAX] = {0},
				   lat[SIDE_CATS_MAX * REPORT_CURVES_MAX] = {0};
	int nl = 0, nc = 0;
	bool rec = !strcmp(phase, "recovery");

	for (int i = 0; i < J->n; i++) {
		json_t *job = J->job[i];
		char t[128];
		if (json_object_get(pm(job), "sweep") ||
		    json_object_get(pm(job), "error") ||
		    strcmp(js(pm(job), "phase"), phase))
			continue;
		target_label(job, t, sizeof(t));
		int l = label_index(labels, &nl, t), c;
		const char *cat = side_category(job, phase);
		for (c = 0; c < nc && strcmp(cats[c], cat); c++)
			;
		if (l < 0 || (c == nc && nc == SIDE_CATS_MAX))
			continue;
		if (c == nc)
			cats[nc++] = cat;
		double r, k;
		side_values(job, phase, &r, &k);
		/* Several jobs in one category: the fastest stands for it. */
		if (r > ops[c * REPORT_CURVES_MAX + l]) {
			ops[c * REPORT_CURVES_MAX + l] = r;
			lat[c * REPORT_CURVES_MAX + l] = k;
		}
	}
	if (nl < 2)
		return;
	/* Keep only workloads seen on at least two targets. */
	const char *keep[SIDE_CATS_MAX];
	double kops[SIDE_CATS_MAX * REPORT_CURVES_MAX],
	    klat[SIDE_CATS_MAX * REPORT_CURVES_MAX];
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
			klat[nk * nl + l] = lat[c * REPORT_CURVES_MAX + l];
		}
		nk++;
	}
	for (int l = 0; l < nl; l++)
		sers[l] = labels[l];
	if (!nk)
		return;
	char t[96];
	snprintf(t, sizeof(t), "%s: %s, each target", phase,
		 rec ? "GiB/s read back and validated" : "operations/s");
	svg_bars(f, t, keep, nk, sers, nl, kops, rec ? "GiB/s" : "ops/s");
	snprintf(t, sizeof(t), "%s: %s, each target", phase,
		 rec ? "seconds per GiB" : "p99 latency (us)");
	svg_bars(f, t, keep, nk, sers, nl, klat, rec ? "s/GiB" : "p99 us");
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

/* One value of a compare row with its ratio to A. */
static void compare_cell(FILE *f, double v, double ratio, bool first, bool ns, bool secs)
{
	char num[32];

	if (ns)
		fmt_ns(num, sizeof(num), v);
	else if (secs)
		snprintf(num, sizeof(num), "%.3gs", v);
	else if (v < 10)
		snprintf(num, sizeof(num), "%.3g", v);
	else
		svg_num(num, sizeof(num), v);
	fprintf(f, "<td>%s", num);
	if (!first) {
		char rat[32];
		svg_ratio(rat, sizeof(rat), ratio);
		fprintf(f, " <b>%s</b>", rat);
	}
	fputs("</td>", f);
}

/* pmwal.compare: rows of two or three targets with ratios to A (results
 * before three targets carry a_/b_ keys only). */
static void compare_section(FILE *f, json_t **roots, int n)
{
	for (int i = 0; i < n; i++) {
		json_t *cmp =
			   json_object_get(json_object_get(roots[i], "pmwal"), "compare"),
		       *row, *tg = json_object_get(cmp, "targets");
		size_t k, nt = json_array_size(tg);
		if (!cmp)
			continue;
		if (!nt) {
			tg = json_pack("[s,s]", js(cmp, "a"), js(cmp, "b"));
			nt = 2;
		} else {
			json_incref(tg);
		}
		fputs("<h2>Compare, each target against A</h2>\n<table><tr><th>workload"
		      "</th>",
		      f);
		for (size_t t = 0; t < nt; t++) {
			fprintf(f, "<th>%c = ", (int)('A' + t));
			svg_esc(f, json_string_value(json_array_get(tg, t)));
			fputs(" rate</th>", f);
		}
		for (size_t t = 0; t < nt; t++)
			fprintf(f, "<th>%c p99 or s/GiB</th>", (int)('A' + t));
		fputs("</tr>\n", f);
		json_array_foreach(json_object_get(cmp, "rows"), k, row)
		{
			json_t *vals = json_object_get(row, "values");
			bool rec = !strcmp(js(row, "rate_unit"), "GiB/s");
			fputs("<tr><td>", f);
			svg_esc(f, js(row, "workload"));
			if (!strchr(js(row, "workload"), '('))
				fprintf(f, " (%s)",
					*js(row, "rate_unit") ? js(row, "rate_unit")
							      : "ops/s");
			fputs("</td>", f);
			for (size_t t = 0; t < nt; t++) {
				json_t *v = json_array_get(vals, t);
				double rate =
				    v ? json_real_value(json_object_get(v, "rate"))
				      : json_real_value(json_object_get(
					    row, t ? "b_ops_per_s" : "a_ops_per_s"));
				double ratio =
				    v ? json_real_value(json_object_get(v, "rate_ratio"))
				      : json_real_value(
					    json_object_get(row, "ops_ratio"));
				compare_cell(f, rate, ratio, t == 0, false, false);
			}
			for (size_t t = 0; t < nt; t++) {
				json_t *v = json_array_get(vals, t);
				double cost =
				    v ? json_real_value(json_object_get(v, "cost"))
				      : json_real_value(json_object_get(
					    row, t ? "b_p99_ns" : "a_p99_ns"));
				double ratio =
				    v ? json_real_value(json_object_get(v, "cost_ratio"))
				      : json_real_value(
					    json_object_get(row, "p99_ratio"));
				compare_cell(f, cost, ratio, t == 0, !rec, rec);
			}
			fputs("</tr>\n", f);
		}
		fputs("</table>\n<p>Rates: operations/s (recovery: GiB/s), higher is "
		      "better; p99 latency (recovery: seconds per GiB), lower is better; "
		      "x: the ratio to A.</p>\n",
		      f);
		json_decref(tg);
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
		} else if (*js(p, "fio_equivalent")) {
			fputs("<li>", f);
			svg_esc(f, t);
			fputs(" fio equivalent: ", f);
			svg_esc(f, js(p, "fio_equivalent"));
			fputs("</li>\n", f);
		}
	}
	fputs("</ul>\n", f);
}

/* Every job of every root into @J (allocated); 0, or -1 with @err. */
static int jobs_collect(struct jobs *J, json_t **roots, int nroots, char *err,
			size_t errlen)
{
	size_t total = 0, k;
	json_t *job;

	for (int i = 0; i < nroots; i++)
		total += json_array_size(json_object_get(roots[i], "jobs"));
	if (total > INT_MAX) {
		snprintf(err, errlen, "%zu jobs are more than one report holds (%d)",
			 total, INT_MAX);
		return -1;
	}
	J->n = 0;
	J->job = calloc(total ? total : 1, sizeof(*J->job));
	J->names = calloc(total ? total : 1, sizeof(*J->names));
	if (!J->job || !J->names) {
		snprintf(err, errlen, "out of memory for the %zu jobs' report", total);
		return -1;
	}
	for (int i = 0; i < nroots; i++)
		json_array_foreach(json_object_get(roots[i], "jobs"), k, job)
		    J->job[J->n++] = job;
	return 0;
}

int report_html(json_t **roots, int nroots, const char *dir, char *err, size_t errlen)
{
	struct jobs J = {0};
	struct out_file o;
	int ret = -1;
	FILE *f;

	if (jobs_collect(&J, roots, nroots, err, errlen))
		goto out;
	int dfd = out_dir_open("-o", dir, true, err, errlen);
	if (dfd < 0)
		goto out;
	close(dfd);
	if (out_open_in(&o, "-o", dir, "index.html", err, errlen))
		goto out;
	f = o.f;
	head(f);
	env_section(f, roots, nroots);
	summary_section(f, &J);
	side_section(f, &J);
	compare_section(f, roots, nroots);
	sweep_section(f, &J);
	latency_section(f, &J);
	dist_section(f, &J);
	series_section(f, &J);
	extras_section(f, &J);
	fputs("</body></html>\n", f);
	if (out_close(&o, err, errlen))
		goto out;
	ret = 0;
out:
	free(J.job);
	free(J.names);
	return ret;
}

/* A result to read is a regular file: a FIFO would block the read forever,
 * a directory reads as nothing ("'[' or '{' expected"). 0, or -1 said. */
static int report_input_check(const char *path)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO with no writer must not block either */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		fprintf(stderr, "pmwal report: %s: %s\n", path, strerror(errno));
		return -1;
	}
	int ret = fstat(fd, &st);
	close(fd);
	if (ret == 0 && S_ISREG(st.st_mode))
		return 0;
	if (ret == 0 && S_ISDIR(st.st_mode))
		fprintf(stderr,
			"pmwal report: %s is a directory: pass the result JSON files "
			"(e.g. %s/result.json, or %s/*.json)\n",
			path, path, path);
	else
		fprintf(
		    stderr,
		    "pmwal report: %s is %s: pass result JSON files (regular files)\n",
		    path,
		    ret			   ? strerror(errno)
		    : S_ISFIFO(st.st_mode) ? "a FIFO"
		    : S_ISSOCK(st.st_mode) ? "a socket"
					   : "a device, not a regular file");
	return -1;
}

static const struct cli_opt report_opts[] = {
    {"output", 'o', "DIR", 'o', "where index.html goes (default ./pmwal-report)", NULL,
     false},
    {"help", 'h', NULL, 'h', "this text", NULL, false},
    {0},
};

const struct cli_cmd cli_report = {
    .name = "report",
    .summary = "HTML report with plots from bench JSON results",
    .synopsis = "RESULT.json... [-o DIR]",
    .description =
	"Makes one HTML page (index.html in DIR) with tables and plots from the\n"
	"JSON results of pmwal bench (--json FILE), several runs side by side.\n",
    .opts = report_opts,
    .exit_status =
	"0\tthe report was written\n"
	"1\tfailure (writing the report)\n"
	"2\tbad usage, an input that is not a bench result, or a refused DIR\n",
    .args = CLI_ARGS_FILES,
};

int cmd_report(int argc, char **argv)
{
	static const char *const outputs[] = {"index.html", NULL};
	/* one per argument at most: no count of result files is refused */
	json_t **roots = calloc((size_t)argc, sizeof(*roots));
	int n = 0, status = 0;
	const char *dir = "pmwal-report";
	char err[512];

	if (!roots) {
		fprintf(stderr, "pmwal report: out of memory\n");
		return BENCH_EXIT_FAIL;
	}
	/* -o first: checked before any result is read, however many. */
	int inputs = 0;
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) &&
		    i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cli_help(stdout, &cli_report);
			goto out;
		} else {
			inputs++;
		}
	}
	if (!inputs) {
		cli_usage_error("report", false, NULL, "no RESULT.json given");
		status = BENCH_EXIT_USAGE;
		goto out;
	}
	if (output_dir_check("-o", dir, outputs, err, sizeof(err))) {
		fprintf(stderr, "pmwal report: %s\n", err);
		status = BENCH_EXIT_USAGE;
		goto out;
	}
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) &&
		    i + 1 < argc) {
			i++;
			continue;
		}
		json_error_t je;
		if (argv[i][0] == '-') {
			fprintf(stderr, "pmwal report: unexpected '%s'\n", argv[i]);
			status = BENCH_EXIT_USAGE;
			goto out;
		}
		if (report_input_check(argv[i])) {
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
	if (report_html(roots, n, dir, err, sizeof(err))) {
		fprintf(stderr, "pmwal report: %s\n", err);
		status = BENCH_EXIT_FAIL;
	} else {
		printf("%s/index.html\n", dir);
	}
out:
	for (int i = 0; i < n; i++)
		json_decref(roots[i]);
	free(roots);
	return status;
}
