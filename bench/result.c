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

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

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

static json_t *dir_json(const struct dir_result *d, uint64_t runtime_ns)
{
	double sec = runtime_ns / 1e9;
	double bw = sec > 0 ? d->bytes / sec : 0, iops = sec > 0 ? d->ops / sec : 0;
	json_t *lat = clat_json(&d->lat);

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
	json_object_set_new(o, "lat_ns", l);
	json_decref(lat);
	return o;
}

/* fio writes job options as strings. */
static json_t *options_as_strings(json_t *opts)
{
	json_t *o = json_object(), *v;
	const char *k;
	char buf[64];

	json_object_foreach(opts, k, v)
	{
		if (json_is_string(v)) {
			json_object_set(o, k, v);
			continue;
		}
		if (json_is_integer(v))
			snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
				 json_integer_value(v));
		else if (json_is_real(v))
			snprintf(buf, sizeof(buf), "%g", json_real_value(v));
		else if (json_is_boolean(v))
			snprintf(buf, sizeof(buf), "%d", json_is_true(v));
		else
			continue;
		json_object_set_new(o, k, json_string(buf));
	}
	return o;
}

json_t *result_job_json(const char *jobname, const char *phase, const char *target,
			const char *label, const struct run_result *r, json_t *options)
{
	double sec = r->runtime_ns / 1e9;
	uint64_t ops = r->dir[0].ops + r->dir[1].ops;
	json_t *job = json_pack("{s:s,s:i,s:i,s:i,s:I}", "jobname", jobname, "groupid", 0,
				"error", r->err ? (r->err < 0 ? -r->err : r->err) : 0,
				"eta", 0, "elapsed", (json_int_t)(sec + 0.5));
	json_object_set_new(job, "job options",
			    options ? options_as_strings(options) : json_object());
	json_object_set_new(job, "read", dir_json(&r->dir[DIR_READ], r->runtime_ns));
	json_object_set_new(job, "write", dir_json(&r->dir[DIR_WRITE], r->runtime_ns));
	struct dir_result none = {0};
	hist_init(&none.lat);
	json_object_set_new(job, "trim", dir_json(&none, r->runtime_ns));
	json_object_set_new(job, "job_runtime",
			    json_integer((json_int_t)(r->runtime_ns / 1000000)));
	json_object_set_new(job, "usr_cpu",
			    json_real(sec > 0 ? 100 * r->usr_s / sec : 0));
	json_object_set_new(job, "sys_cpu",
			    json_real(sec > 0 ? 100 * r->sys_s / sec : 0));
	json_object_set_new(job, "ctx", json_integer((json_int_t)r->ctx_switches));
	json_object_set_new(job, "majf", json_integer(0));
	json_object_set_new(job, "minf", json_integer(0));

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

	uname(&u);
	snprintf(host, sizeof(host), "%s %s", u.sysname, u.release);
	return json_pack("{s:s,s:I,s:I,s:I,s:[],s:{s:s,s:s,s:f}}", "fio version",
			 "pmwal-bench-"
			 "0.1.0",
			 "timestamp", (json_int_t)t, "timestamp_ms", (json_int_t)t * 1000,
			 "time", (json_int_t)t, "jobs", "pmwal", "version",
			 pmwal_version(), "kernel", host, "hist_rel_error",
			 HIST_REL_ERROR);
}

void root_add_job(json_t *root, json_t *job)
{
	json_array_append_new(json_object_get(root, "jobs"), job);
}

int json_write(json_t *root, const char *path, char *err, size_t errlen)
{
	if (json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(10))) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

void table_header(void)
{
	printf("%-9s %-16s %-36s %-5s %10s %10s %9s %9s %9s %9s %8s\n", "phase", "target",
	       "workload", "dir", "IOPS", "BW/s", "p50", "p99", "p99.9", "max", "cpu/op");
}

static void table_dir(json_t *job, const char *dirname)
{
	json_t *d = json_object_get(job, dirname), *pm = json_object_get(job, "pmwal");
	json_t *clat = json_object_get(d, "clat_ns"),
	       *pct = json_object_get(clat, "percentile");
	char bw[16], p50[16], p99[16], p999[16], mx[16], cpu[16], tgt[17], name[37];

	if (!json_integer_value(json_object_get(d, "total_ios")))
		return;
	const char *label = json_string_value(json_object_get(pm, "label"));
	snprintf(tgt, sizeof(tgt), "%s",
		 label && *label ? label
				 : json_string_value(json_object_get(pm, "target")));
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
	printf("%-9s %-16s %-36s %-5s %10.0f %10s %9s %9s %9s %9s %8s\n",
	       json_string_value(json_object_get(pm, "phase")), tgt, name, dirname,
	       json_real_value(json_object_get(d, "iops")), bw, p50, p99, p999, mx, cpu);
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
	printf("%-9s %-16s %-36s %-5s %10.0f %10s\n", "", "", "", "sum",
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
