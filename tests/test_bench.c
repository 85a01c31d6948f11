// SPDX-License-Identifier: MIT
/*
 * test_bench.c - the benchmark's own correctness: the histogram's stated
 * error bound, the rate limiter's accuracy, option parsing and its messages,
 * the fio shape of the JSON, cliff detection, the refusal to overwrite a
 * filesystem, the HTML report, and a short real run of `bench io` on a
 * temporary file (skipped, with the reason, where io_uring or O_DIRECT is
 * refused).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "bench_cmd.h"
#include "fio.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
	/* /var/tmp: a disk filesystem (O_DIRECT) even where /tmp is tmpfs. */
	snprintf(tmpdir, sizeof(tmpdir), "/var/tmp/pmwal-test-bench-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

Test(bench, histogram_percentiles_stay_within_the_stated_error_bound)
{
	enum { N = 200000 };
	static uint64_t v[N];
	static struct hist h;
	uint64_t rng = 12345;
	static const double pcts[] = {1, 10, 50, 90, 99, 99.9, 99.99};

	hist_init(&h);
	for (int i = 0; i < N; i++) {
		/* log-uniform from 1 ns to ~17 s: every bucket size is exercised */
		double e = (rng_next(&rng) % 1000000) / 1000000.0 * 34;
		v[i] = (uint64_t)pow(2, e);
		hist_record(&h, v[i]);
	}
	qsort(v, N, sizeof(v[0]), cmp_u64);
	for (size_t k = 0; k < sizeof(pcts) / sizeof(pcts[0]); k++) {
		size_t rank = (size_t)ceil(pcts[k] / 100 * N);
		double exact = (double)v[rank - 1],
		       got = (double)hist_percentile(&h, pcts[k]);
		cr_assert_leq(fabs(got - exact), exact * HIST_REL_ERROR + 0.5,
			      "p%g: got %.0f, exact %.0f", pcts[k], got, exact);
	}
	cr_assert_eq(hist_percentile(&h, 100), v[N - 1]);
	cr_assert_eq(h.min, v[0]);
	cr_assert_leq(HIST_REL_ERROR, 0.01, "the report promises under 1%%");
}

Test(bench, histogram_buckets_tile_the_range_with_bounded_width)
{
	for (unsigned i = 1; i < HIST_BUCKETS; i++) {
		cr_assert_eq(hist_bucket_low(i), hist_bucket_high(i - 1) + 1, "gap at %u",
			     i);
		cr_assert_eq(hist_index(hist_bucket_low(i)), i);
		cr_assert_eq(hist_index(hist_bucket_high(i)), i);
		double width = (double)(hist_bucket_high(i) - hist_bucket_low(i) + 1);
		cr_assert_leq(width, 1 + hist_bucket_low(i) / (double)HIST_SUB_COUNT);
	}
	cr_assert_eq(hist_index(UINT64_MAX), HIST_BUCKETS - 1, "huge values clamp");
}

Test(bench, rate_limiter_holds_the_rate_on_a_simulated_clock)
{
	struct limiter l;
	uint64_t now = 1000000000ull, bytes = 0, end = now + 2000000000ull;

	limiter_init(&l, 100u << 20);
	while (now < end) {
		uint64_t w = limiter_take(&l, now, 4096);
		if (w)
			now += w;
		else
			bytes += 4096;
	}
	double rate = bytes / 2.0;
	cr_assert_float_eq(rate, 100.0 * 1048576, 0.01 * 100 * 1048576, "rate %.0f",
			   rate);
	limiter_init(&l, 0);
	cr_assert_eq(limiter_take(&l, now, 1u << 30), 0, "0 means unlimited");
}

Test(bench, sizes_durations_rates_and_lists_parse_like_fio)
{
	char err[256];
	uint64_t v, vals[64];
	struct rate_cap cap;
	int n, rw;

	cr_assert_eq(parse_size("4k", &v, err, sizeof(err)), 0);
	cr_assert_eq(v, 4096);
	cr_assert_eq(parse_size("128KiB", &v, err, sizeof(err)), 0);
	cr_assert_eq(v, 131072);
	cr_assert_eq(parse_size("2g", &v, err, sizeof(err)), 0);
	cr_assert_eq(v, 2ull << 30);
	cr_assert_eq(parse_duration("500ms", &v, err, sizeof(err)), 0);
	cr_assert_eq(v, 500000000ull);
	cr_assert_eq(parse_duration("2m", &v, err, sizeof(err)), 0);
	cr_assert_eq(v, 120000000000ull);
	cr_assert_eq(parse_rate("20%", &cap, err, sizeof(err)), 0);
	cr_assert_float_eq(cap.pct, 20.0, 1e-9);
	cr_assert_eq(parse_rate("500M", &cap, err, sizeof(err)), 0);
	cr_assert_eq(cap.bytes_per_s, 500ull << 20);
	cr_assert_eq(parse_list("1,2,4..256", false, vals, 64, &n, err, sizeof(err)), 0);
	cr_assert_eq(n, 9);
	cr_assert_eq(vals[8], 256);
	cr_assert_eq(parse_list("512..1m", true, vals, 64, &n, err, sizeof(err)), 0);
	cr_assert_eq(n, 12);
	cr_assert_eq(parse_rw("randrw", &rw, err, sizeof(err)), 0);
	cr_assert_eq(rw, RW_RANDRW);
}

Test(bench, bad_values_are_rejected_with_a_message)
{
	char err[256];
	uint64_t v, vals[4];
	struct rate_cap cap;
	int n, rw;

	static const char *const bad_sizes[] = {"4x", "-1", "", "k", "1.8e30"};
	for (size_t i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
		err[0] = 0;
		cr_assert_eq(parse_size(bad_sizes[i], &v, err, sizeof(err)), -1, "%s",
			     bad_sizes[i]);
		cr_assert(strstr(err, "not a size"), "message: %s", err);
	}
	cr_assert_eq(parse_duration("10parsecs", &v, err, sizeof(err)), -1);
	cr_assert_eq(parse_rate("150%", &cap, err, sizeof(err)), -1);
	cr_assert(strstr(err, "percentage"));
	cr_assert_eq(parse_rate("fast", &cap, err, sizeof(err)), -1);
	cr_assert_eq(parse_list("8..2", false, vals, 4, &n, err, sizeof(err)), -1);
	cr_assert_eq(parse_list("1..1024", false, vals, 4, &n, err, sizeof(err)), -1);
	cr_assert(strstr(err, "at most"));
	cr_assert_eq(parse_rw("sideways", &rw, err, sizeof(err)), -1);
	cr_assert(strstr(err, "randrw"));
}

static int bench_argv(const char *const *args)
{
	char *argv[64];
	int argc = 0;

	for (; args[argc]; argc++)
		argv[argc] = (char *)args[argc];
	argv[argc] = NULL;
	return cmd_bench(argc, argv);
}

Test(bench, bad_command_lines_exit_2)
{
	static const char *const bs[] = {"bench", "io", "/var/tmp/x", "--bs", "4x", NULL};
	static const char *const qd[] = {"bench",     "io", "/var/tmp/x",
					 "--iodepth", "0",  NULL};
	static const char *const mode[] = {"bench", "sideways", NULL};
	static const char *const opt[] = {"bench", "io", "--frobnicate", NULL};
	static const char *const dev[] = {"bench",     "io", "/dev/pmwal-no-such-device",
					  "--runtime", "1s", NULL};
	static const char *const sweep[] = {"bench", "io", "--sweep", "colour=1,2", NULL};
	static const char *const cmp[] = {"bench", "compare", "flash", NULL};

	cr_assert_eq(bench_argv(bs), 2);
	cr_assert_eq(bench_argv(qd), 2);
	cr_assert_eq(bench_argv(mode), 2);
	cr_assert_eq(bench_argv(opt), 2);
	cr_assert_eq(bench_argv(dev), 2);
	cr_assert_eq(bench_argv(sweep), 2);
	cr_assert_eq(bench_argv(cmp), 2);
}

/* A missing name on /dev's filesystem is a missing device however it is
 * spelled: never a scratch file made in /dev's memory. */
Test(bench, a_missing_device_is_not_made_a_file_by_another_spelling)
{
	char name[64], spell[3][128];

	snprintf(name, sizeof(name), "pmwal-no-such-device-%d", (int)getpid());
	snprintf(spell[0], sizeof(spell[0]), "//dev/%s", name);
	snprintf(spell[1], sizeof(spell[1]), "/dev/shm/../%s", name);
	snprintf(spell[2], sizeof(spell[2]), "/dev/./%s", name);
	for (int i = 0; i < 3; i++) {
		const char *const argv[] = {"bench", "io",	  spell[i], "--size",
					    "1m",    "--runtime", "1s",	    NULL};
		char path[128];
		int rc = bench_argv(argv);

		snprintf(path, sizeof(path), "/dev/%s", name);
		bool made = access(path, F_OK) == 0;

		unlink(path);
		cr_expect_eq(rc, 2, "%s: exit %d, not 2", spell[i], rc);
		cr_expect(!made, "%s: a file was made in /dev", spell[i]);
	}
}

Test(bench, a_filesystem_superblock_is_never_overwritten_without_force,
     .init = make_tmpdir, .fini = remove_tmpdir)
{
	char path[512], err[256];
	uint8_t sb[4096] = {0};

	snprintf(path, sizeof(path), "%s/fs.img", tmpdir);
	sb[1080] = 0x53; /* ext4 s_magic 0xEF53, little-endian, at 1024 + 56 */
	sb[1081] = 0xEF;
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pwrite(fd, sb, sizeof(sb), 0), (ssize_t)sizeof(sb));
	cr_assert_eq(ftruncate(fd, 8 << 20), 0);
	close(fd);
	cr_assert_eq(target_check_writable(path, false, err, sizeof(err)), -1);
	cr_assert(strstr(err, "ext2/3/4") && strstr(err, "--force"), "message: %s", err);
	cr_assert_eq(target_check_writable(path, true, err, sizeof(err)), 0);
	const char *const args[] = {"bench", "io",	  path, "--rw",
				    "write", "--runtime", "1s", NULL};
	cr_assert_eq(bench_argv(args), 2);
}

/* A short real run; returns NULL (test skipped) where the kernel refuses. */
static struct run_result *short_run(int rw, uint64_t runtime_ns, struct rate_cap *wcap)
{
	static char path[512];
	struct io_spec s;

	snprintf(path, sizeof(path), "%s/io.dat", tmpdir);
	io_spec_defaults(&s);
	s.target = path;
	s.rw = rw;
	s.iodepth = 8;
	s.size_bytes = 16 << 20;
	s.runtime_ns = runtime_ns;
	s.interval_ns = 100000000ull;
	if (wcap)
		s.rate[DIR_WRITE] = *wcap;
	struct run_result *r = io_run(&s);
	cr_assert_not_null(r);
	if (r->err && (strstr(r->errmsg, "refused") || strstr(r->errmsg, "O_DIRECT"))) {
		char msg[300];
		snprintf(msg, sizeof(msg), "%s", r->errmsg);
		result_free(r);
		cr_skip_test("kernel or filesystem refuses: %s", msg);
	}
	cr_assert_eq(r->err, 0, "run failed: %s", r->errmsg);
	return r;
}

Test(bench, a_short_io_run_on_a_temp_file_measures_something, .init = make_tmpdir,
     .fini = remove_tmpdir)
{
	struct run_result *r = short_run(RW_RANDRW, 500000000ull, NULL);

	cr_assert_gt(r->dir[DIR_READ].ops, 100);
	cr_assert_gt(r->dir[DIR_WRITE].ops, 100);
	cr_assert_eq(r->dir[DIR_READ].lat.count, r->dir[DIR_READ].ops);
	cr_assert_geq(r->series.count, 4);
	cr_assert(strstr(r->engine, "io_uring"));
	result_free(r);
}

Test(bench, a_write_rate_cap_is_held_on_a_real_run, .init = make_tmpdir,
     .fini = remove_tmpdir)
{
	struct rate_cap cap = {.bytes_per_s = 8u << 20};
	struct run_result *r = short_run(RW_RANDWRITE, 1000000000ull, &cap);
	double rate = r->dir[DIR_WRITE].bytes / (r->runtime_ns / 1e9);

	/* The cap is a ceiling: a loaded machine may fall short of it, but
	 * the limiter must never let the run exceed it. */
	cr_assert_leq(rate, 1.1 * 8 * 1048576, "rate %.0f B/s over the cap", rate);
	cr_assert_gt(rate, 0);
	result_free(r);
}

Test(bench, json_output_has_fio_shape_and_pmwal_sections, .init = make_tmpdir,
     .fini = remove_tmpdir)
{
	char path[512], json[512], report[512], html[600];
	json_error_t je;

	snprintf(path, sizeof(path), "%s/io.dat", tmpdir);
	snprintf(json, sizeof(json), "%s/r.json", tmpdir);
	snprintf(report, sizeof(report), "%s/rep", tmpdir);
	const char *const args[] = {
	    "bench",  "io",	   path,    "--rw",	 "randrw", "--size",
	    "16m",    "--runtime", "500ms", "--iodepth", "4",	   "--quiet",
	    "--json", json,	   "-o",    report,	 NULL};
	int st = bench_argv(args);
	if (st == 2)
		cr_skip_test("bench io refused on this machine (io_uring or O_DIRECT)");
	cr_assert_eq(st, 0);
	json_t *root = json_load_file(json, 0, &je);
	cr_assert_not_null(root, "%s", je.text);
	cr_assert(json_is_string(json_object_get(root, "fio version")));
	json_t *job = json_array_get(json_object_get(root, "jobs"), 0);
	cr_assert(json_is_string(json_object_get(job, "jobname")));
	cr_assert(json_is_object(json_object_get(job, "job options")));
	static const char *const dirs[] = {"read", "write"};
	for (int d = 0; d < 2; d++) {
		json_t *o = json_object_get(job, dirs[d]);
		cr_assert(json_is_number(json_object_get(o, "iops")));
		cr_assert(json_is_integer(json_object_get(o, "bw_bytes")));
		cr_assert(json_is_integer(json_object_get(o, "io_bytes")));
		cr_assert(json_is_integer(json_object_get(o, "runtime")));
		json_t *c = json_object_get(o, "clat_ns");
		cr_assert(json_is_integer(json_object_get(c, "min")));
		cr_assert(json_is_integer(json_object_get(c, "max")));
		cr_assert(json_is_number(json_object_get(c, "mean")));
		cr_assert(json_is_integer(
		    json_object_get(json_object_get(c, "percentile"), "50.000000")));
		cr_assert(json_is_integer(
		    json_object_get(json_object_get(c, "percentile"), "99.990000")));
	}
	json_t *pm = json_object_get(job, "pmwal");
	cr_assert(strstr(json_string_value(json_object_get(pm, "fio_command")), "fio "));
	cr_assert_gt(
	    json_array_size(json_object_get(json_object_get(pm, "series"), "points")), 0);
	json_t *env = json_object_get(json_object_get(root, "pmwal"), "environment");
	cr_assert(json_is_string(json_object_get(env, "kernel")));
	json_decref(root);
	snprintf(html, sizeof(html), "%s/index.html", report);
	struct stat st_html;
	cr_assert_eq(stat(html, &st_html), 0, "report written");
	cr_assert_gt(st_html.st_size, 1000);
}

Test(bench, a_lasting_drop_is_reported_as_a_cliff)
{
	struct run_result *r = result_new();

	cr_assert_eq(series_init(&r->series, 1000000000ull, 20000000000ull), 0);
	cr_assert_eq(series_grow(&r->series, 20), 0);
	for (int i = 0; i < 20; i++) {
		r->series.pt[i].bytes[DIR_WRITE] = i < 12 ? 4000000000ull : 700000000ull;
		r->series.pt[i].ops[DIR_WRITE] = 1000;
	}
	r->dir[DIR_WRITE].bytes = 1;
	json_t *s = series_json(&r->series, r);
	json_t *cliff = json_object_get(s, "cliff");
	cr_assert(json_is_true(json_object_get(cliff, "detected")));
	cr_assert_float_eq(json_real_value(json_object_get(cliff, "at_s")), 12.0, 1e-9);
	cr_assert_eq(json_integer_value(json_object_get(cliff, "bytes_before")),
		     48000000000ll);
	cr_assert_float_eq(json_real_value(json_object_get(cliff, "after_over_before")),
			   0.175, 1e-6);
	cr_assert(json_is_object(json_object_get(s, "steady")));
	cr_assert(json_is_object(json_object_get(s, "burst")));
	json_decref(s);
	/* A flat series has no cliff. */
	for (int i = 0; i < 20; i++)
		r->series.pt[i].bytes[DIR_WRITE] = 1000;
	s = series_json(&r->series, r);
	cr_assert(
	    json_is_false(json_object_get(json_object_get(s, "cliff"), "detected")));
	json_decref(s);
	result_free(r);
}

Test(bench, report_refuses_a_file_that_is_not_a_result, .init = make_tmpdir,
     .fini = remove_tmpdir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/junk.json", tmpdir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"not\": \"a result\"}", f);
	fclose(f);
	char *argv[] = {"report", path, NULL};
	cr_assert_eq(cmd_report(2, argv), 2);
	char *none[] = {"report", "/nonexistent/r.json", NULL};
	cr_assert_eq(cmd_report(2, none), 2);
}

Test(bench, report_reads_plain_fio_json_too, .init = make_tmpdir, .fini = remove_tmpdir)
{
	char path[512], dir[512], html[600];
	struct stat st;

	snprintf(path, sizeof(path), "%s/fio.json", tmpdir);
	snprintf(dir, sizeof(dir), "%s/rep", tmpdir);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("{\"fio "
	      "version\":\"fio-3.33\",\"jobs\":[{\"jobname\":\"x\",\"read\":{\"iops\":"
	      "1000.5,\"bw_bytes\":4098000,\"total_ios\":1000,\"clat_ns\":{\"min\":1,"
	      "\"max\":"
	      "9,\"mean\":5.0,\"N\":1000,\"percentile\":{\"50.000000\":5}}},\"write\":{}}"
	      "]}",
	      f);
	fclose(f);
	char *argv[] = {"report", path, "-o", dir, NULL};
	cr_assert_eq(cmd_report(4, argv), 0);
	snprintf(html, sizeof(html), "%s/index.html", dir);
	cr_assert_eq(stat(html, &st), 0);
	cr_assert_gt(st.st_size, 500);
}

Test(bench, a_long_run_gets_longer_intervals_not_a_truncated_series)
{
	struct run_result *r = result_new();
	uint64_t ten_hours_ns = 36000ull * 1000000000ull;

	cr_assert_eq(series_init(&r->series, 100000000ull, ten_hours_ns), 0);
	cr_assert_geq(r->series.interval_ns, 1000000000ull);
	cr_assert_eq(
	    series_grow(&r->series, (uint32_t)(ten_hours_ns / r->series.interval_ns)), 0);
	for (uint32_t i = 0; i < r->series.count; i++)
		r->series.pt[i].bytes[DIR_WRITE] = i < r->series.count / 3 ? 4200 : 700;
	r->dir[DIR_WRITE].bytes = 1;
	json_t *s = series_json(&r->series, r); /* linear: must not take long */
	cr_assert(json_is_true(json_object_get(json_object_get(s, "cliff"), "detected")));
	json_decref(s);
	result_free(r);
}

/* fio's json+ bins: every pmwal bucket falls in one fio bin (the bins are
 * aligned on the same powers of two), so the conversion loses no count and
 * each value lands in the bin fio itself would put it in. */
Test(bench, histogram_converts_to_fio_bins_without_losing_a_count)
{
	static struct hist h;
	uint64_t rng = 7;

	hist_init(&h);
	for (int i = 0; i < 200000; i++) {
		uint64_t v = rng_next(&rng) >> (rng_next(&rng) % 64);
		hist_record(&h, v);
		uint64_t low = hist_bucket_low(hist_index(v));
		if (v <= HIST_VALUE_MAX)
			cr_assert_eq(
			    fio_plat_val_to_idx(v), fio_plat_val_to_idx(low),
			    "value %llu and its bucket's low %llu in two fio bins",
			    (unsigned long long)v, (unsigned long long)low);
	}
	json_t *bins = fio_bins_json(&h), *n;
	const char *k;
	uint64_t sum = 0;
	json_object_foreach(bins, k, n)
	{
		uint64_t v = strtoull(k, NULL, 10);
		cr_assert_eq(fio_plat_idx_to_val(fio_plat_val_to_idx(v)), v, "key %s", k);
		sum += (uint64_t)json_integer_value(n);
	}
	cr_assert_eq(sum, h.count);
	json_decref(bins);
	/* Keys fio 3.33 printed here for a 4k randwrite: 1864, 1880, ... */
	for (uint64_t v = 1856; v < 1872; v++)
		cr_assert_eq(fio_plat_idx_to_val(fio_plat_val_to_idx(v)), 1864);
	cr_assert_eq(fio_plat_idx_to_val(fio_plat_val_to_idx(127)), 127);
	cr_assert_eq(fio_plat_val_to_idx(UINT64_MAX), FIO_PLAT_NR - 1);
}

Test(bench, fio_sizes_follow_kb_base)
{
	static const struct {
		const char *s;
		unsigned kb_base;
		uint64_t bytes;
	} ok[] = {
	    {"4096", 1024, 4096},   {"4k", 1024, 4096},	   {"4K", 1024, 4096},
	    {"4kb", 1024, 4096},    {"4KB", 1024, 4096},   {"4KiB", 1024, 4000},
	    {"1mi", 1024, 1000000}, {"1m", 1024, 1048576}, {"1g", 1024, 1u << 30},
	    {"4KiB", 1000, 4096},   {"4k", 1000, 4000},	   {"1t", 1000, 1000000000000ull},
	    {"0x1000", 1024, 4096}, {"7b", 1024, 7},
	};
	static const char *const bad[] = {"",	    "-1",  "1.5g", "4x",
					  "k",	    "4kk", "4 k",  "99999999999999999999",
					  "16384p", NULL};
	char err[256];
	uint64_t v;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cr_assert_eq(fio_parse_size(ok[i].s, ok[i].kb_base, &v, err, sizeof(err)),
			     0, "%s: %s", ok[i].s, err);
		cr_assert_eq(v, ok[i].bytes, "%s (kb_base %u): %llu", ok[i].s,
			     ok[i].kb_base, (unsigned long long)v);
	}
	for (size_t i = 0; bad[i]; i++) {
		cr_assert_eq(fio_parse_size(bad[i], 1024, &v, err, sizeof(err)), -1, "%s",
			     bad[i]);
		cr_assert(strstr(err, "fio size"), "%s", err);
	}
	fio_size_str(err, sizeof(err), 4096);
	cr_assert_str_eq(err, "4k");
	fio_size_str(err, sizeof(err), 1000);
	cr_assert_str_eq(err, "1000");
}

Test(bench, a_fio_job_file_is_told_from_a_target, .init = make_tmpdir,
     .fini = remove_tmpdir)
{
	static const struct {
		const char *text;
		bool job;
	} cases[] = {
	    {"; comment\n\n[global]\nbs=4k\n", true},
	    {"# c\n  [job1]  ; trailing\nrw=read\n", true},
	    {"rw=read\n[job]\n", false},
	    {"[]\n", false},
	    {"[job] x\n", false},
	    {"\x01\x02[\xff]\n", false},
	    {"", false},
	};
	char path[512];

	snprintf(path, sizeof(path), "%s/f", tmpdir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = fopen(path, "w");
		cr_assert_not_null(f);
		fputs(cases[i].text, f);
		fclose(f);
		cr_assert_eq(fio_file_is_job_file(path), cases[i].job, "case %zu", i);
	}
	cr_assert(!fio_file_is_job_file(tmpdir), "a directory");
	cr_assert(!fio_file_is_job_file("/dev/null"), "a device");
}

/* --json - sends whatever else a mode prints to stderr while it runs; the
 * caller's stdout must be its own again afterwards, run or refused, and hold
 * the JSON. */
Test(bench, json_to_stdout_gives_stdout_back, .init = make_tmpdir, .fini = remove_tmpdir)
{
	char path[512], job[512], out[512];
	struct stat mine, after;

	snprintf(path, sizeof(path), "%s/io.dat", tmpdir);
	snprintf(job, sizeof(job), "%s/bad.fio", tmpdir);
	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	FILE *f = fopen(job, "w");
	cr_assert_not_null(f);
	fputs("[j]\nverify=md5\n", f);
	fclose(f);
	fflush(stdout);
	int saved = dup(STDOUT_FILENO),
	    fd = open(out, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	cr_assert(saved >= 0 && fd >= 0);
	cr_assert_eq(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	cr_assert_eq(fstat(fd, &mine), 0);
	const char *const run[] = {"bench",    "io",	    "--rw",  "randread", "--size",
				   "8m",       "--runtime", "100ms", "--json",	 "-",
				   "--target", path,	    NULL};
	const char *const bad[] = {"bench", "io", "--job", job, "--json", "-", NULL};
	int st = bench_argv(run);
	int st_bad = bench_argv(bad);
	printf("after\n");
	fflush(stdout);
	cr_assert_eq(fstat(STDOUT_FILENO, &after), 0);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(fd);
	cr_assert(st == 0 || st == 2, "status %d", st);
	cr_assert_eq(st_bad, 2);
	cr_assert(mine.st_dev == after.st_dev && mine.st_ino == after.st_ino,
		  "stdout is not the caller's after --json -");
	struct stat st_out;
	cr_assert_eq(stat(out, &st_out), 0);
	char *buf = calloc(1, (size_t)st_out.st_size + 1);
	f = fopen(out, "r");
	cr_assert(buf && f);
	size_t n = fread(buf, 1, (size_t)st_out.st_size, f);
	fclose(f);
	buf[n] = 0;
	cr_assert(st != 0 || strstr(buf, "\"fio version\""), "no JSON on stdout");
	cr_assert(n >= 6 && !strcmp(buf + n - 6, "after\n"), "stdout lost after the run");
	free(buf);
}

/* The equivalent fio command a user pastes: each argument one shell word,
 * quotes inside a path escaped ('\''), safe words left as they are. */
Test(bench, shell_quote_makes_one_word_of_any_path)
{
	char out[256];

	shell_quote("--filename=/var/tmp/x.wal.prim", out, sizeof(out));
	cr_assert_str_eq(out, "--filename=/var/tmp/x.wal.prim");
	shell_quote("--filename=/tmp/it's dir/t", out, sizeof(out));
	cr_assert_str_eq(out, "'--filename=/tmp/it'\\''s dir/t'");
	shell_quote("", out, sizeof(out));
	cr_assert_str_eq(out, "''");
	shell_quote("a;rm -rf $HOME`x`", out, sizeof(out));
	cr_assert_str_eq(out, "'a;rm -rf $HOME`x`'");
	shell_quote("'''", out, 6); /* truncated, never past the buffer */
	cr_assert_lt(strlen(out), 6);
}

/* --json PATH that a --write_*_log file would take is refused before the
 * run: the names fio gives its logs, however the path is spelled. */
Test(bench, a_json_path_a_log_would_take_is_found)
{
	make_tmpdir();
	char prefix[512], path[600];

	snprintf(prefix, sizeof(prefix), "%s/same", tmpdir);
	snprintf(path, sizeof(path), "%s/same_bw.1.log", tmpdir);
	cr_assert(fio_log_would_write(prefix, path));
	snprintf(path, sizeof(path), "%s/./same_slat.12.log", tmpdir);
	cr_assert(fio_log_would_write(prefix, path));
	snprintf(path, sizeof(path), "%s/same_bw.0.log", tmpdir);
	cr_assert_not(fio_log_would_write(prefix, path));
	snprintf(path, sizeof(path), "%s/same_bw.1.log.json", tmpdir);
	cr_assert_not(fio_log_would_write(prefix, path));
	snprintf(path, sizeof(path), "%s/same.json", tmpdir);
	cr_assert_not(fio_log_would_write(prefix, path));
	cr_assert_not(fio_log_would_write(NULL, path));
	remove_tmpdir();
}

/* fio cannot open a PMR, a fake PMR or a simulated medium: the equivalent
 * fio command is "none" with the reason, never a target string fio would
 * take for a file name (fakepmr:/dev/shm/x made fio create that file). */
Test(bench, the_fio_equivalent_of_a_target_fio_cannot_open_is_none)
{
	char why[256];
	const char *none[] = {"fakepmr:/dev/shm/x", "pmr:0000:00:04.0", "sim:a"};
	const char *some[] = {"/var/tmp/x", "pmem:/dev/shm/x", "file:/tmp/y"};

	for (size_t i = 0; i < 3; i++) {
		why[0] = 0;
		cr_assert(target_no_fio(none[i], why, sizeof(why)), "%s", none[i]);
		cr_assert(!strncmp(why, "none: ", 6), "%s: '%s'", none[i], why);
		cr_assert(!target_no_fio(some[i], why, sizeof(why)), "%s", some[i]);
	}
	struct io_spec s;

	io_spec_defaults(&s);
	s.target = "fakepmr:/dev/shm/x";
	cr_assert(!io_fio_command(&s, why, sizeof(why)));
	cr_assert_null(strstr(why, "fio --"), "%s", why);
	s.target = "pmem:/dev/shm/x";
	cr_assert(io_fio_command(&s, why, sizeof(why)));
	cr_assert_not_null(strstr(why, "--filename=/dev/shm/x"), "%s", why);
}
