// SPDX-License-Identifier: MIT
/*
 * result.c - a measured run as fio-shaped JSON, and what is read back from
 * that JSON: the terminal table, the CSV files, the JSON file itself.
 *
 * The job object follows fio 3.33's json output (jobs[].read/write with
 * io_bytes, bw_bytes, bw in KiB/s, iops, runtime in ms, total_ios, clat_ns
 * with min/max/mean/stddev/N and percentile{"99.000000": ns}) so fio tooling
 * reads it; everything fio has no word for goes under "pmwal".
 */
#include "bench.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "fio.h"
#include "pmwal.h"

/* fio's default percentile list, plus 99.999 for the deep tail. */
static const double pct_list[] = {1,  5,  10, 20, 30,	40,   50,    60,    70,
				  80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999};

struct run_result *result_new(void)
{
	struct run_result *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	for (int d = 0; d < DIR_COUNT; d++)
		hist_init(&r->dir[d].lat);
	return r;
}

void result_free(struct run_result *r)
{
	if (!r)
		return;
	series_free(&r->series);
	free(r);
}

json_t *clat_json(const struct hist *h)
{
	json_t *pct = json_object();
	char key[32];

	for (size_t i = 0; i < sizeof(pct_list) / sizeof(pct_list[0]); i++) {
		snprintf(key, sizeof(key), "%f", pct_list[i]);
		json_object_set_new(
		    pct, key, json_integer((json_int_t)hist_percentile(h, pct_list[i])));
	}
	return json_pack("{s:I,s:I,s:f,s:f,s:I,s:o}", "min",
			 (json_int_t)(h->count ? h->min : 0), "max", (json_int_t)h->max,
			 "mean", hist_mean(h), "stddev", hist_stddev(h), "N",
			 (json_int_t)h->count, "percentile", pct);
}

/* fio's per-direction clat_ns: percentile and (json+) bins only when
 * something completed, as fio writes them. */
static json_t *fio_clat_json(const struct hist *h)
{
	json_t *c = clat_json(h);

	if (!h->count)
		json_object_del(c, "percentile");
	else
		json_object_set_new(c, "bins", fio_bins_json(h));
	return c;
}

/* Intervals of the series inside the measured window (the last, partial
 * one is left out unless it is all there is). */
static uint32_t full_intervals(const struct series *s, uint64_t runtime_ns)
{
	uint64_t n = s->interval_ns ? runtime_ns / s->interval_ns : 0;

	if (n > s->count)
		n = s->count;
	return n ? (uint32_t)n : s->count;
}

/*
 * fio's bw_min/max/mean/dev/samples (KiB/s) and iops_min/max/mean/stddev/
 * samples: fio samples every bw_avg_time (500 ms); pmwal's samples are the
 * series' intervals (--interval or --log_avg_msec, 100 ms by default).
 */
static void sample_stats(json_t *o, const struct series *s, uint32_t n, int dir,
			 bool has_io)
{
	double bw[2] = {0}, io[2] = {0}, bmin = 0, bmax = 0, imin = 0, imax = 0;
	double sec = s->interval_ns / 1e9;

	if (!has_io)
		n = 0;
	for (uint32_t i = 0; i < n; i++) {
		double b = s->pt[i].bytes[dir] / sec / 1024.0,
		       p = s->pt[i].ops[dir] / sec;
		bmin = i && bmin < b ? bmin : b;
		bmax = bmax > b ? bmax : b;
		imin = i && imin < p ? imin : p;
		imax = imax > p ? imax : p;
		bw[0] += b;
		bw[1] += b * b;
		io[0] += p;
		io[1] += p * p;
	}
	double bmean = n ? bw[0] / n : 0, imean = n ? io[0] / n : 0;
	/* fio's sample standard deviation (n - 1). */
	double bvar = n > 1 ? (bw[1] - n * bmean * bmean) / (n - 1) : 0;
	double ivar = n > 1 ? (io[1] - n * imean * imean) / (n - 1) : 0;
	json_object_set_new(o, "bw_min", json_integer((json_int_t)bmin));
	json_object_set_new(o, "bw_max", json_integer((json_int_t)bmax));
	/* This job's share of its group's bandwidth: every job is its own group. */
	json_object_set_new(o, "bw_agg", json_real(n ? 100.0 : 0.0));
	json_object_set_new(o, "bw_mean", json_real(bmean));
	json_object_set_new(o, "bw_dev", json_real(bvar > 0 ? sqrt(bvar) : 0));
	json_object_set_new(o, "bw_samples", json_integer(n));
	json_object_set_new(o, "iops_min", json_integer((json_int_t)imin));
	json_object_set_new(o, "iops_max", json_integer((json_int_t)imax));
	json_object_set_new(o, "iops_mean", json_real(imean));
	json_object_set_new(o, "iops_stddev", json_real(ivar > 0 ? sqrt(ivar) : 0));
	json_object_set_new(o, "iops_samples", json_integer(n));
}

static json_t *dir_json(const struct dir_result *d, const struct run_result *r, int dir)
{
	uint64_t runtime_ns = r->runtime_ns;
	double sec = runtime_ns / 1e9;
	double bw = sec > 0 ? d->bytes / sec : 0, iops = sec > 0 ? d->ops / sec : 0;
	json_t *lat = fio_clat_json(&d->lat);

	json_t *o =
	    json_pack("{s:I,s:I,s:I,s:I,s:f,s:I,s:I,s:i,s:i}", "io_bytes",
		      (json_int_t)d->bytes, "io_kbytes", (json_int_t)(d->bytes / 1024),
		      "bw_bytes", (json_int_t)bw, "bw", (json_int_t)(bw / 1024), "iops",
		      iops, "runtime", (json_int_t)(runtime_ns / 1000000), "total_ios",
		      (json_int_t)d->ops, "short_ios", 0, "drop_ios", 0);
	/* Submission is not timed apart: slat is 0 and lat equals clat. */
	json_object_set_new(o, "slat_ns",
			    json_pack("{s:i,s:i,s:f,s:f,s:i}", "min", 0, "max", 0, "mean",
				      0.0, "stddev", 0.0, "N", 0));
	json_object_set(o, "clat_ns", lat);
	json_t *l = json_deep_copy(lat);
	json_object_del(l, "percentile");
	json_object_del(l, "bins");
	json_object_set_new(o, "lat_ns", l);
	json_decref(lat);
	if (dir >= 0)
		sample_stats(o, &r->series, full_intervals(&r->series, runtime_ns), dir,
			     d->ops > 0);
	else
		sample_stats(o, &r->series, 0, 0, false);
	/* fio's runtime is 0 in a direction that did nothing. */
	if (!d->ops)
		json_object_set_new(o, "runtime", json_integer(0));
	return o;
}

static json_t *zero_lat(void)
{
	return json_pack("{s:i,s:i,s:f,s:f,s:i}", "min", 0, "max", 0, "mean", 0.0,
			 "stddev", 0.0, "N", 0);
}

/*
 * The job-level keys fio 3.33 writes that pmwal does not measure, with the
 * values fio itself writes when there is nothing to count (docs/bench.md):
 * no separate sync calls, no queue depth distribution.
 */
static void fio_job_extras(json_t *job, const struct run_result *r, json_t *fopts)
{
	static const char *const lvl[] = {"1", "2", "4", "8", "16", "32", ">=64"};
	static const char *const sub[] = {"0", "4", "8", "16", "32", "64", ">=64"};
	json_t *level = json_object(), *submit = json_object(), *complete = json_object();

	json_object_set_new(job, "sync",
			    json_pack("{s:i,s:o}", "total_ios", 0, "lat_ns", zero_lat()));
	for (int i = 0; i < 7; i++) {
		json_object_set_new(level, lvl[i], json_real(0));
		json_object_set_new(submit, sub[i], json_real(0));
		json_object_set_new(complete, sub[i], json_real(0));
	}
	json_object_set_new(job, "iodepth_level", level);
	json_object_set_new(job, "iodepth_submit", submit);
	json_object_set_new(job, "iodepth_complete", complete);
	struct hist all;
	hist_init(&all);
	hist_merge(&all, &r->dir[DIR_READ].lat);
	hist_merge(&all, &r->dir[DIR_WRITE].lat);
	fio_latency_buckets(job, &all);
	const char *qd = json_string_value(json_object_get(fopts, "iodepth"));
	json_object_set_new(job, "latency_depth", json_integer(qd ? atoi(qd) : 1));
	json_object_set_new(job, "latency_target", json_integer(0));
	json_object_set_new(job, "latency_percentile", json_real(100.0));
	json_object_set_new(job, "latency_window", json_integer(0));
}

json_t *result_job_json(const char *jobname, const char *phase, const char *target,
			const char *label, const struct run_result *r, json_t *options)
{
	double sec = r->runtime_ns / 1e9;
	uint64_t ops = r->dir[0].ops + r->dir[1].ops;
	json_t *job = json_pack("{s:s,s:i,s:i,s:i,s:I}", "jobname", jobname, "groupid", 0,
				"error", r->err ? (r->err < 0 ? -r->err : r->err) : 0,
				"eta", 0, "elapsed", (json_int_t)(sec + 0.5));
	json_t *fopts = fio_job_options(options);
	json_object_set_new(job, "job options", fopts);
	json_object_set_new(job, "read", dir_json(&r->dir[DIR_READ], r, DIR_READ));
	json_object_set_new(job, "write", dir_json(&r->dir[DIR_WRITE], r, DIR_WRITE));
	struct dir_result none = {0};
	hist_init(&none.lat);
	json_object_set_new(job, "trim", dir_json(&none, r, -1));
	json_object_set_new(job, "job_runtime",
			    json_integer((json_int_t)(r->runtime_ns / 1000000)));
	json_object_set_new(job, "usr_cpu",
			    json_real(sec > 0 ? 100 * r->usr_s / sec : 0));
	json_object_set_new(job, "sys_cpu",
			    json_real(sec > 0 ? 100 * r->sys_s / sec : 0));
	json_object_set_new(job, "ctx", json_integer((json_int_t)r->ctx_switches));
	json_object_set_new(job, "majf", json_integer(0));
	json_object_set_new(job, "minf", json_integer(0));
	fio_job_extras(job, r, fopts);

	bool emulated = r->emulated || (label && strstr(label, "emulated"));
	char emu_label[300];
	/* Emulated media say so wherever the label is shown. */
	if (emulated && !(label && strstr(label, "emulated"))) {
		snprintf(emu_label, sizeof(emu_label), "emulated %s",
			 label && *label ? label
			 : target	 ? target
					 : "");
		label = emu_label;
	}
	json_t *pm =
	    json_pack("{s:s,s:s,s:s,s:b,s:s,s:f,s:f,s:b,s:f}", "phase", phase, "target",
		      target ? target : "", "label", label ? label : "", "emulated",
		      emulated, "engine", r->engine, "cpu_ns_per_io",
		      ops ? (r->usr_s + r->sys_s) * 1e9 / ops : 0.0, "ops_per_s",
		      sec > 0 ? ops / sec : 0.0, "interrupted", r->interrupted,
		      "hist_rel_error", HIST_REL_ERROR);
	if (r->err)
		json_object_set_new(pm, "error", json_string(r->errmsg));
	if (options)
		json_object_set(pm, "options", options);
	if (r->series.count)
		json_object_set_new(pm, "series", series_json(&r->series, r));
	json_object_set_new(job, "pmwal", pm);
	return job;
}

json_t *root_new(void)
{
	struct utsname u;
	char host[300];
	time_t t = time(NULL);

	struct tm tm;
	char when[64];

	uname(&u);
	snprintf(host, sizeof(host), "%s %s", u.sysname, u.release);
	/* fio writes ctime() without its newline: "Sat Dec  5 01:22:57 2026". */
	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", &tm);
	return json_pack("{s:s,s:I,s:I,s:s,s:[],s:[],s:{s:i,s:s,s:s,s:f}}", "fio version",
			 "pmwal-bench-"
			 "0.1.0",
			 "timestamp", (json_int_t)t, "timestamp_ms", (json_int_t)t * 1000,
			 "time", when, "jobs", "disk_util", "pmwal", "schema_version",
			 PMWAL_BENCH_SCHEMA_VERSION, "version", pmwal_version(), "kernel",
			 host, "hist_rel_error", HIST_REL_ERROR);
}

void root_add_job(json_t *root, json_t *job)
{
	json_array_append_new(json_object_get(root, "jobs"), job);
}

void shell_quote(const char *s, char *out, size_t len)
{
	if (!len)
		return;
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_-./:=,+@%") == strlen(s)) {
		snprintf(out, len, "%s", s);
		return;
	}
	/* 'it'\''s': a single quote closes, is escaped, and reopens */
	char *end = out + len - 1, *o = out;
	if (o < end)
		*o++ = '\'';
	for (const char *p = s; *p && o < end; p++) {
		if (*p != '\'') {
			*o++ = *p;
			continue;
		}
		for (const char *e = "'\\''"; *e && o < end; e++)
			*o++ = *e;
	}
	if (o < end)
		*o++ = '\'';
	*o = 0;
}

int output_file_check(const char *opt, const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (!strcmp(path, "/dev/null"))
		return 0; /* the results thrown away, as asked */
	/* A link is refused by outfile.c, which names it as one. */
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		snprintf(err, errlen,
			 "%s %s is %s: name a regular file (or - for stdout)%s", opt,
			 path, file_kind(st.st_mode),
			 S_ISDIR(st.st_mode) ? ", e.g. a .json inside it" : "");
		return -1;
	}
	return out_path_check(opt, path, err, errlen);
}

int output_dir_check(const char *opt, const char *dir, const char *const *names,
		     char *err, size_t errlen)
{
	return out_dir_check(opt, dir, names, err, errlen);
}

int json_write(json_t *root, const char *opt, const char *path, char *err, size_t errlen)
{
	struct out_file o;

	if (out_open(&o, opt, path, err, errlen))
		return -1;
	if (json_dumpf(root, o.f, JSON_INDENT(1) | JSON_REAL_PRECISION(10))) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		out_abort(&o);
		return -1;
	}
	return out_close(&o, err, errlen);
}

/* The target column: wide enough for the targets named (table_header), a
 * longer one widens its own row rather than being cut. */
static int target_col = 16;

void table_header(int target_width)
{
	if (target_width > target_col)
		target_col = target_width;
	printf("%-9s %-*s %-36s %-5s %10s %10s %9s %9s %9s %9s %8s\n", "phase",
	       target_col, "target", "workload", "dir", "IOPS", "BW/s", "p50", "p99",
	       "p99.9", "max", "cpu/op");
}

static void table_dir(json_t *job, const char *dirname)
{
	json_t *d = json_object_get(job, dirname), *pm = json_object_get(job, "pmwal");
	json_t *clat = json_object_get(d, "clat_ns"),
	       *pct = json_object_get(clat, "percentile");
	char bw[16], p50[16], p99[16], p999[16], mx[16], cpu[16], name[37];

	if (!json_integer_value(json_object_get(d, "total_ios")))
		return;
	const char *label = json_string_value(json_object_get(pm, "label"));
	const char *tgt =
	    label && *label ? label : json_string_value(json_object_get(pm, "target"));
	snprintf(name, sizeof(name), "%s",
		 json_string_value(json_object_get(job, "jobname")));
	fmt_bytes(bw, sizeof(bw),
		  (double)json_integer_value(json_object_get(d, "bw_bytes")));
	fmt_ns(p50, sizeof(p50),
	       (double)json_integer_value(json_object_get(pct, "50.000000")));
	fmt_ns(p99, sizeof(p99),
	       (double)json_integer_value(json_object_get(pct, "99.000000")));
	fmt_ns(p999, sizeof(p999),
	       (double)json_integer_value(json_object_get(pct, "99.900000")));
	fmt_ns(mx, sizeof(mx), (double)json_integer_value(json_object_get(clat, "max")));
	fmt_ns(cpu, sizeof(cpu), json_real_value(json_object_get(pm, "cpu_ns_per_io")));
	printf("%-9s %-*s %-36s %-5s %10.0f %10s %9s %9s %9s %9s %8s\n",
	       json_string_value(json_object_get(pm, "phase")), target_col,
	       tgt ? tgt : "", name, dirname, json_real_value(json_object_get(d, "iops")),
	       bw, p50, p99, p999, mx, cpu);
}

/* A mix also gets its total, as seed 000's "total performance" (docs/bench.md). */
static void table_sum(json_t *job)
{
	json_t *r = json_object_get(job, "read"), *w = json_object_get(job, "write");
	char bw[16];

	if (!json_integer_value(json_object_get(r, "total_ios")) ||
	    !json_integer_value(json_object_get(w, "total_ios")))
		return;
	fmt_bytes(bw, sizeof(bw),
		  (double)(json_integer_value(json_object_get(r, "bw_bytes")) +
			   json_integer_value(json_object_get(w, "bw_bytes"))));
	printf("%-9s %-*s %-36s %-5s %10.0f %10s\n", "", target_col, "", "", "sum",
	       json_real_value(json_object_get(r, "iops")) +
		   json_real_value(json_object_get(w, "iops")),
	       bw);
}

void table_row(json_t *job)
{
	json_t *pm = json_object_get(job, "pmwal");
	const char *e = json_string_value(json_object_get(pm, "error"));

	table_dir(job, "read");
	table_dir(job, "write");
	table_sum(job);
	if (e)
		printf("%-9s error: %s\n",
		       json_string_value(json_object_get(pm, "phase")), e);
	json_t *cl = json_object_get(json_object_get(pm, "series"), "cliff");
	if (json_is_true(json_object_get(cl, "detected")))
		printf("%-9s cliff at %.1fs after %.0f MiB: bandwidth x%.2f\n", "",
		       json_real_value(json_object_get(cl, "at_s")),
		       json_integer_value(json_object_get(cl, "bytes_before")) /
			   1048576.0,
		       json_real_value(json_object_get(cl, "after_over_before")));
	fflush(stdout);
}
