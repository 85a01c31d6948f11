// SPDX-License-Identifier: MIT
/*
 * fio.c - fio's words for what pmwal bench measures: the json+ latency bins,
 * the latency_ns/us/ms buckets, "job options" under fio's names, the output
 * formats, fio's size units, and fio's bw/iops log files.
 *
 * Kept apart from result.c so the one place that knows fio's conventions
 * (and cites where in fio 3.33 each comes from) is this file; result.c calls
 * it while building a job, cmd.c when writing the outputs.
 */
#include "fio.h"
#include "outfile.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* fio stat.c plat_val_to_idx(). */
unsigned fio_plat_val_to_idx(uint64_t ns)
{
	unsigned msb = ns ? 63u - (unsigned)__builtin_clzll(ns) : 0;

	if (msb <= FIO_PLAT_BITS)
		return (unsigned)ns;
	unsigned error_bits = msb - FIO_PLAT_BITS;
	unsigned base = (error_bits + 1) << FIO_PLAT_BITS;
	unsigned offset = (unsigned)((FIO_PLAT_VAL - 1) & (ns >> error_bits));
	unsigned idx = base + offset;
	return idx < FIO_PLAT_NR - 1 ? idx : FIO_PLAT_NR - 1;
}

/* fio stat.c plat_idx_to_val(). */
uint64_t fio_plat_idx_to_val(unsigned idx)
{
	if (idx < (FIO_PLAT_VAL << 1))
		return idx;
	unsigned error_bits = (idx >> FIO_PLAT_BITS) - 1;
	uint64_t base = UINT64_C(1) << (error_bits + FIO_PLAT_BITS);
	uint64_t k = idx % FIO_PLAT_VAL;
	return base + (uint64_t)((k + 0.5) * (double)(UINT64_C(1) << error_bits));
}

json_t *fio_bins_json(const struct hist *h)
{
	static uint64_t bins[FIO_PLAT_NR];
	json_t *o = json_object();
	char key[32];

	memset(bins, 0, sizeof(bins));
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		if (h->bucket[i])
			bins[fio_plat_val_to_idx(hist_bucket_low(i))] += h->bucket[i];
	for (unsigned i = 0; i < FIO_PLAT_NR; i++) {
		if (!bins[i])
			continue;
		snprintf(key, sizeof(key), "%" PRIu64, fio_plat_idx_to_val(i));
		json_object_set_new(o, key, json_integer((json_int_t)bins[i]));
	}
	return o;
}

/*
 * fio io_u.c io_u_mark_lat_{nsec,usec,msec}: key K holds latencies below K
 * and at or above the key before it; ms has a last ">=2000". A pmwal bucket
 * is counted where its lower edge falls (within HIST_REL_ERROR of exact).
 * stat.c stat_calc_lat(): a non-zero share below 0.01% is written as 0.01.
 */
void fio_latency_buckets(json_t *job, const struct hist *h)
{
	static const unsigned edges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};
	static const char *const names[] = {"latency_ns", "latency_us", "latency_ms"};
	double pct[3][12] = {{0}};
	char key[16];

	for (unsigned i = 0; i < HIST_BUCKETS && h->count; i++) {
		if (!h->bucket[i])
			continue;
		uint64_t v = hist_bucket_low(i);
		int unit = v < 1000 ? 0 : v < 1000000 ? 1 : 2;
		uint64_t u = unit == 0 ? v : unit == 1 ? v / 1000 : v / 1000000;
		int k = 0;
		while (k < 10 && u >= edges[k])
			k++;
		if (unit == 2 && k == 10)
			k = u < 2000 ? 10 : 11;
		pct[unit][k] += 100.0 * (double)h->bucket[i] / (double)h->count;
	}
	for (int unit = 0; unit < 3; unit++) {
		json_t *o = json_object();
		int n = unit == 2 ? 12 : 10;
		for (int k = 0; k < n; k++) {
			double p = pct[unit][k];
			if (p > 0 && p < 0.01)
				p = 0.01;
			if (k < 10)
				snprintf(key, sizeof(key), "%u", edges[k]);
			else
				snprintf(key, sizeof(key), "%s",
					 k == 10 ? "2000" : ">=2000");
			json_object_set_new(o, key, json_real(p));
		}
		json_object_set_new(job, names[unit], o);
	}
}

void fio_size_str(char *buf, size_t len, uint64_t bytes)
{
	static const char *const sfx[] = {"", "k", "m", "g", "t", "p"};
	int u = 0;

	while (bytes && bytes % 1024 == 0 && u < 5) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 "%s", bytes, sfx[u]);
}

/* "10" for whole seconds, "500ms" otherwise: both fio time values. */
static void time_str(char *buf, size_t len, double s)
{
	if (s == (double)(uint64_t)s)
		snprintf(buf, len, "%" PRIu64, (uint64_t)s);
	else
		snprintf(buf, len, "%" PRIu64 "ms", (uint64_t)(s * 1000.0 + 0.5));
}

static void set_str(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, json_string(v));
}

static void set_int(json_t *o, const char *k, json_int_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, v);
	set_str(o, k, buf);
}

static void set_size(json_t *o, const char *k, json_t *v)
{
	char buf[32];
	fio_size_str(buf, sizeof(buf), (uint64_t)json_integer_value(v));
	set_str(o, k, buf);
}

/* The raw I/O job's options (iospec.c io_options_json) under fio's names. */
static void io_options(json_t *o, json_t *opts)
{
	const char *rw = json_string_value(json_object_get(opts, "rw"));
	char buf[64];

	set_str(o, "rw", rw ? rw : "randread");
	if (rw && (!strcmp(rw, "randrw") || !strcmp(rw, "rw")))
		set_int(o, "rwmixread",
			json_integer_value(json_object_get(opts, "rwmixread")));
	set_size(o, "bs", json_object_get(opts, "bs"));
	set_int(o, "iodepth", json_integer_value(json_object_get(opts, "iodepth")));
	set_int(o, "numjobs", json_integer_value(json_object_get(opts, "numjobs")));
	json_int_t batch =
	    json_integer_value(json_object_get(opts, "iodepth_batch_submit"));
	if (batch > 1)
		set_int(o, "iodepth_batch_submit", batch);
	/* fio writes size=N% as it was given, not the bytes it came to */
	json_int_t pct = json_integer_value(json_object_get(opts, "size_percent"));
	if (pct) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT "%%", pct);
		set_str(o, "size", buf);
	} else if (json_integer_value(json_object_get(opts, "size"))) {
		set_size(o, "size", json_object_get(opts, "size"));
	}
	double rt = json_number_value(json_object_get(opts, "runtime_s"));
	if (rt > 0) {
		time_str(buf, sizeof(buf), rt);
		set_str(o, "runtime", buf);
		set_str(o, "time_based", "1");
	}
	double ramp = json_number_value(json_object_get(opts, "ramp_s"));
	if (ramp > 0) {
		time_str(buf, sizeof(buf), ramp);
		set_str(o, "ramp_time", buf);
	}
	set_str(o, "direct", json_is_true(json_object_get(opts, "direct")) ? "1" : "0");
	if (json_is_true(json_object_get(opts, "sqthread_poll")))
		set_str(o, "sqthread_poll", "1");
	if (json_is_true(json_object_get(opts, "hipri")))
		set_str(o, "hipri", "1");
	json_int_t rr = json_integer_value(json_object_get(opts, "rate_read"));
	json_int_t rwr = json_integer_value(json_object_get(opts, "rate_write"));
	if (rr || rwr) {
		snprintf(buf, sizeof(buf),
			 "%" JSON_INTEGER_FORMAT ",%" JSON_INTEGER_FORMAT, rr, rwr);
		set_str(o, "rate", buf);
	}
}

json_t *fio_job_options(json_t *opts)
{
	json_t *o = json_object();
	const char *t = json_string_value(json_object_get(opts, "target"));

	if (t)
		set_str(o, "filename", t);
	if (json_object_get(opts, "bs")) {
		io_options(o, opts);
	} else if (json_object_get(opts, "record_size")) {
		/* A log: appends of record_size, one thread = one job;
		 * durable appends wait for each, so one is in flight. */
		bool buffered = !strcmp(
		    json_string_value(json_object_get(opts, "commit")) ?: "", "buffered");
		json_int_t out = json_integer_value(json_object_get(opts, "outstanding"));
		set_str(o, "rw", "write");
		set_size(o, "bs", json_object_get(opts, "record_size"));
		set_int(o, "iodepth", buffered ? (out ? out : 4096) : 1);
		set_int(o, "numjobs",
			json_integer_value(json_object_get(opts, "threads")));
	} else if (json_object_get(opts, "primitive")) {
		/* One synchronous write and its durability primitive at a time. */
		json_t *wb = json_object_get(opts, "write_bytes");
		set_str(o, "rw", "write");
		if (json_integer_value(wb))
			set_size(o, "bs", wb);
		else
			set_str(o, "bs", "4k");
		set_str(o, "iodepth", "1");
		set_str(o, "numjobs", "1");
	} else if (json_object_get(opts, "fill_bytes")) {
		/* Recovery: one I/O, the open that reads the whole log back. */
		json_t *fill = json_object_get(opts, "fill_bytes");
		set_str(o, "rw", "read");
		set_size(o, "bs", fill);
		set_str(o, "iodepth", "1");
		set_str(o, "numjobs", "1");
		set_size(o, "size", fill);
	}
	return o;
}

int fio_output_parse(const char *s, unsigned *formats, char *err, size_t errlen)
{
	char buf[128];
	char *save = NULL;

	*formats = 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "normal"))
			*formats |= FIO_OUT_NORMAL;
		else if (!strcmp(tok, "json"))
			*formats |= FIO_OUT_JSON;
		else if (!strcmp(tok, "json+"))
			*formats |= FIO_OUT_JSON_PLUS;
		else if (!strcmp(tok, "terse"))
			*formats |= FIO_OUT_TERSE;
		else {
			snprintf(err, errlen,
				 "'%s' is not an output format (normal, json, json+, "
				 "terse)",
				 tok);
			return -1;
		}
	}
	if (!*formats) {
		snprintf(err, errlen, "empty (normal, json, json+, terse)");
		return -1;
	}
	return 0;
}

static void strip_bins(json_t *dir)
{
	json_object_del(json_object_get(dir, "clat_ns"), "bins");
}

json_t *fio_root_without_bins(json_t *root)
{
	json_t *copy = json_deep_copy(root), *job;
	size_t i;

	json_array_foreach(json_object_get(copy, "jobs"), i, job)
	{
		strip_bins(json_object_get(job, "read"));
		strip_bins(json_object_get(job, "write"));
		strip_bins(json_object_get(job, "trim"));
	}
	return copy;
}

/* @path's directory made absolute (links resolved) with its last name. */
static bool canonical(const char *path, char *out, size_t len)
{
	char dir[4096], real[4096];
	const char *slash = strrchr(path, '/');

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path + 1) : 1,
		 slash ? path : ".");
	if (!realpath(dir, real))
		return false;
	snprintf(out, len, "%s/%s", real, slash ? slash + 1 : path);
	return true;
}

bool fio_log_would_write(const char *prefix, const char *path)
{
	static const char *const kinds[] = {"bw", "iops", "lat", "clat", "slat"};
	char p[8400], want[8400], pre[8400];
	size_t n;

	if (!prefix || !path || !canonical(path, p, sizeof(p)) ||
	    !canonical(prefix, pre, sizeof(pre)))
		return false;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		n = (size_t)snprintf(want, sizeof(want), "%s_%s.", pre, kinds[k]);
		if (strncmp(p, want, n))
			continue;
		const char *q = p + n;
		size_t digits = strspn(q, "0123456789");
		if (digits && q[0] != '0' && !strcmp(q + digits, ".log"))
			return true;
	}
	return false;
}

/* The option that named a log of @kind, for messages. */
static const char *log_opt(const char *kind)
{
	return !strcmp(kind, "bw")     ? "--write_bw_log"
	       : !strcmp(kind, "iops") ? "--write_iops_log"
				       : "--write_lat_log";
}

/* One log: for each interval and each direction the job did, one line. */
static int write_log(json_t *job, const char *prefix, const char *kind, size_t jobno,
		     char *err, size_t errlen)
{
	json_t *s = json_object_get(json_object_get(job, "pmwal"), "series");
	json_t *pts = json_object_get(s, "points"), *pt;
	double ival_s = json_number_value(json_object_get(s, "interval_s"));
	bool iops = !strcmp(kind, "iops");
	/* lat and clat: the mean completion latency of the interval in ns,
	 * as fio logs it; pmwal does not time submission apart, so the slat
	 * log is empty, as fio's is for a synchronous engine. */
	bool lat = !strcmp(kind, "lat") || !strcmp(kind, "clat"), slat = !strcmp(kind, "slat");
	bool has[2] = {json_integer_value(json_object_get(json_object_get(job, "read"),
							  "total_ios")) > 0,
		       json_integer_value(json_object_get(json_object_get(job, "write"),
							  "total_ios")) > 0};
	char path[4096];
	size_t i;

	snprintf(path, sizeof(path), "%s_%s.%zu.log", prefix, kind, jobno);
	struct out_file o;
	if (out_open(&o, log_opt(kind), path, err, errlen))
		return -1;
	FILE *f = o.f;
	/* points: [t_s, read_bw_bytes, write_bw_bytes, read_iops, write_iops,
	 * read_p99_ns, write_p99_ns, read_mean_ns, write_mean_ns] */
	json_array_foreach(pts, i, pt)
	{
		if (slat)
			break;
		uint64_t t_ms = (uint64_t)((double)(i + 1) * ival_s * 1000.0 + 0.5);
		for (int d = 0; d < 2; d++) {
			if (!has[d])
				continue;
			double v = json_number_value(
			    json_array_get(pt, (size_t)(lat ? 7 + d : iops ? 3 + d : 1 + d)));

			if (lat && !json_number_value(json_array_get(pt, (size_t)(3 + d))))
				continue; /* no I/O completed in the interval */
			fprintf(f, "%" PRIu64 ", %" PRIu64 ", %d, 0, 0\n", t_ms,
				(uint64_t)(iops || lat ? v + 0.5 : v / 1024.0 + 0.5), d);
		}
	}
	return out_close(&o, err, errlen);
}

int fio_logs_write(json_t *root, const struct fio_logs *l, char *err, size_t errlen)
{
	json_t *job;
	size_t i;

	json_array_foreach(json_object_get(root, "jobs"), i, job)
	{
		if (l->bw_prefix &&
		    write_log(job, l->bw_prefix, "bw", i + 1, err, errlen))
			return -1;
		if (l->iops_prefix &&
		    write_log(job, l->iops_prefix, "iops", i + 1, err, errlen))
			return -1;
		for (int k = 0; l->lat_prefix && k < 3; k++)
			if (write_log(job, l->lat_prefix, (const char *[]){"lat", "clat", "slat"}[k],
				      i + 1, err, errlen))
				return -1;
	}
	return 0;
}

/* parse.c get_mult_bytes(): with kb_base 1024, k/m/g... are powers of 2 and
 * ki/mi/gi... powers of 10; kb_base 1000 the other way round. */
static int size_mult(const char *p, unsigned kb_base, uint64_t *mult)
{
	static const char units[] = "kmgtp";
	const char *u;
	char sfx[8];
	size_t n = 0;

	*mult = 1;
	while (*p && n + 1 < sizeof(sfx))
		sfx[n++] = (char)tolower((unsigned char)*p++);
	sfx[n] = 0;
	if (*p)
		return -1;
	if (!n || !strcmp(sfx, "b"))
		return 0;
	u = strchr(units, sfx[0]);
	if (!u || !sfx[0])
		return -1;
	bool iec = sfx[1] == 'i';
	const char *rest = sfx + 1 + iec;
	if (*rest && strcmp(rest, "b"))
		return -1;
	unsigned base = (kb_base == 1000) == iec ? 1024 : 1000;
	for (const char *q = units; q <= u; q++)
		*mult *= base;
	return 0;
}

int fio_parse_size(const char *s, unsigned kb_base, uint64_t *bytes, char *err,
		   size_t errlen)
{
	char *end;
	uint64_t mult;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		goto bad;
	errno = 0;
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	unsigned long long v = strtoull(s, &end, hex ? 16 : 10);
	if (errno || end == s || size_mult(end, kb_base, &mult))
		goto bad;
	if (mult > 1 && v > UINT64_MAX / mult)
		goto bad;
	*bytes = (uint64_t)v * mult;
	return 0;
bad:
	snprintf(err, errlen,
		 "'%s' is not a fio size (a whole number with k, m, g, t or p; "
		 "examples: 4k, 128k, 1m, 2g)",
		 s ? s : "");
	return -1;
}

/* "[name]" and nothing after it but blanks or a comment; name printable. */
static bool section_header(const char *p)
{
	const char *q = p + 1;

	if (*p != '[')
		return false;
	while (*q && *q != ']' && isprint((unsigned char)*q))
		q++;
	if (*q != ']' || q == p + 1)
		return false;
	for (q++; *q && *q != ';' && *q != '#'; q++)
		if (!isspace((unsigned char)*q))
			return false;
	return true;
}

bool fio_file_is_job_file(const char *path)
{
	struct stat st;
	char line[512];
	bool job = false;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	/* The first 64 lines are enough: a job file opens with its sections. */
	for (int n = 0; n < 64 && fgets(line, sizeof(line), f); n++) {
		char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == ';' || *p == '#')
			continue;
		job = section_header(p);
		break;
	}
	fclose(f);
	return job;
}

static double jnum(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* One direction of terse v3 (stat.c show_ddir_status_terse): latencies in
 * usec, 20 percentile fields (the unused ones "0%=0"). */
static void terse_dir(FILE *f, json_t *d)
{
	static const char *const lats[] = {"slat_ns", "clat_ns", "lat_ns"};
	json_t *pct = json_object_get(json_object_get(d, "clat_ns"), "percentile"), *v;
	const char *k;
	int n = 0;

	fprintf(f, ";%.0f;%.0f;%.0f;%.0f", jnum(d, "io_kbytes"), jnum(d, "bw"),
		jnum(d, "iops"), jnum(d, "runtime"));
	for (int i = 0; i < 3; i++) {
		json_t *l = json_object_get(d, lats[i]);
		fprintf(f, ";%" PRIu64 ";%" PRIu64 ";%f;%f",
			(uint64_t)jnum(l, "min") / 1000, (uint64_t)jnum(l, "max") / 1000,
			jnum(l, "mean") / 1000.0, jnum(l, "stddev") / 1000.0);
		if (i != 1)
			continue;
		if (pct) {
			json_object_foreach(pct, k, v)
			{
				if (n++ < 20)
					fprintf(f, ";%s%%=%" PRIu64, k,
						(uint64_t)json_integer_value(v) / 1000);
			}
		} else {
			/* fio writes its list with zeros for an idle direction. */
			static const char *const list[] = {
			    "1.000000",	 "5.000000",  "10.000000", "20.000000",
			    "30.000000", "40.000000", "50.000000", "60.000000",
			    "70.000000", "80.000000", "90.000000", "95.000000",
			    "99.000000", "99.500000", "99.900000", "99.950000",
			    "99.990000"};
			for (; n < 17; n++)
				fprintf(f, ";%s%%=0", list[n]);
		}
		for (; n < 20; n++)
			fprintf(f, ";0%%=0");
	}
	fprintf(f, ";%.0f;%.0f;%f%%;%f;%f", jnum(d, "bw_min"), jnum(d, "bw_max"),
		jnum(d, "bw_agg"), jnum(d, "bw_mean"), jnum(d, "bw_dev"));
}

static void terse_buckets(FILE *f, json_t *o, const char *const *keys, int n,
			  const char *fmt)
{
	for (int i = 0; i < n; i++)
		fprintf(f, fmt, jnum(o, keys[i]));
}

void fio_terse_write(json_t *root, FILE *f)
{
	static const char *const depth[] = {"1", "2", "4", "8", "16", "32", ">=64"};
	static const char *const lat[] = {"2",	 "4",	"10",  "20",   "50",   "100",
					  "250", "500", "750", "1000", "2000", ">=2000"};
	json_t *job;
	size_t i;

	json_array_foreach(json_object_get(root, "jobs"), i, job)
	{
		const char *name = json_string_value(json_object_get(job, "jobname"));
		fprintf(f, "3;%s;%s;%.0f;%.0f",
			json_string_value(json_object_get(root, "fio version")),
			name ? name : "", jnum(job, "groupid"), jnum(job, "error"));
		terse_dir(f, json_object_get(job, "read"));
		terse_dir(f, json_object_get(job, "write"));
		fprintf(f, ";%f%%;%f%%;%.0f;%.0f;%.0f", jnum(job, "usr_cpu"),
			jnum(job, "sys_cpu"), jnum(job, "ctx"), jnum(job, "majf"),
			jnum(job, "minf"));
		terse_buckets(f, json_object_get(job, "iodepth_level"), depth, 7,
			      ";%.1f%%");
		terse_buckets(f, json_object_get(job, "latency_us"), lat, 10, ";%.2f%%");
		terse_buckets(f, json_object_get(job, "latency_ms"), lat, 12, ";%.2f%%");
		fputc('\n', f);
	}
}
