// SPDX-License-Identifier: MIT
/*
 * csv.c - `--csv DIR`: the results as two flat tables for spreadsheets and
 * plotting scripts: jobs.csv (one row per job and direction) and series.csv
 * (one row per job and interval). Read from the same JSON as everything else.
 */
#include "bench.h"
#include "outfile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* CSV fields are quoted; a quote inside is doubled. */
static void put_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void jobs_rows(FILE *f, json_t *job)
{
	json_t *pm = json_object_get(job, "pmwal");
	static const char *const dirs[] = {"read", "write"};

	for (int i = 0; i < 2; i++) {
		json_t *d = json_object_get(job, dirs[i]),
		       *c = json_object_get(d, "clat_ns");
		json_t *p = json_object_get(c, "percentile");
		if (!json_integer_value(json_object_get(d, "total_ios")))
			continue;
		put_quoted(f, jstr(job, "jobname"));
		fputc(',', f);
		put_quoted(f, jstr(pm, "phase"));
		fputc(',', f);
		put_quoted(f, jstr(pm, "target"));
		fprintf(f,
			",%d,%s,%.1f,%" JSON_INTEGER_FORMAT ",%" JSON_INTEGER_FORMAT
			",%" JSON_INTEGER_FORMAT ",%" JSON_INTEGER_FORMAT
			",%" JSON_INTEGER_FORMAT ",%" JSON_INTEGER_FORMAT
			",%" JSON_INTEGER_FORMAT ",%.1f,%.1f\n",
			json_is_true(json_object_get(pm, "emulated")), dirs[i],
			json_real_value(json_object_get(d, "iops")),
			json_integer_value(json_object_get(d, "bw_bytes")),
			json_integer_value(json_object_get(p, "50.000000")),
			json_integer_value(json_object_get(p, "90.000000")),
			json_integer_value(json_object_get(p, "99.000000")),
			json_integer_value(json_object_get(p, "99.900000")),
			json_integer_value(json_object_get(p, "99.990000")),
			json_integer_value(json_object_get(c, "max")),
			json_real_value(json_object_get(c, "mean")),
			json_real_value(json_object_get(pm, "cpu_ns_per_io")));
	}
}

static void series_rows(FILE *f, json_t *job)
{
	json_t *s = json_object_get(json_object_get(job, "pmwal"), "series");
	json_t *pts = json_object_get(s, "points"), *pt;
	size_t i;

	json_array_foreach(pts, i, pt)
	{
		put_quoted(f, jstr(job, "jobname"));
		for (size_t k = 0; k < json_array_size(pt); k++)
			fprintf(f, ",%.6g", json_number_value(json_array_get(pt, k)));
		fputc('\n', f);
	}
}

static int open_csv(struct out_file *o, const char *opt, const char *dir,
		    const char *name, const char *header, char *err, size_t errlen)
{
	if (out_open_in(o, opt, dir, name, err, errlen))
		return -1;
	fprintf(o->f, "%s\n", header);
	return 0;
}

int csv_write(json_t *root, const char *opt, const char *dir, char *err, size_t errlen)
{
	json_t *jobs = json_object_get(root, "jobs"), *job;
	struct out_file o;
	size_t i;
	int dfd = out_dir_open(opt, dir, true, err, errlen);

	if (dfd < 0)
		return -1;
	close(dfd);
	if (open_csv(&o, opt, dir, "jobs.csv",
		     "job,phase,target,emulated,dir,iops,bw_bytes,p50_ns,p90_ns,p99_ns,"
		     "p99.9_ns,p99.99_ns,max_ns,mean_ns,cpu_ns_per_io",
		     err, errlen))
		return -1;
	json_array_foreach(jobs, i, job) jobs_rows(o.f, job);
	if (out_close(&o, err, errlen))
		return -1;
	if (open_csv(
		&o, opt, dir, "series.csv",
		"job,t_s,read_bw_bytes,write_bw_bytes,read_iops,write_iops,read_p99_ns,"
		"write_p99_ns,read_mean_ns,write_mean_ns",
		err, errlen))
		return -1;
	json_array_foreach(jobs, i, job) series_rows(o.f, job);
	return out_close(&o, err, errlen);
}
