// SPDX-License-Identifier: MIT
/*
 * iospec.c - how a raw I/O run is named and described: its job name, its
 * options as JSON, the fio command line that repeats it (so anyone can
 * cross-check a number with fio), and percentage rate caps, which need the
 * maximum of each direction measured first (seed 000 in docs/bench.md: write 100% + read 20%).
 */
#include "bench.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void size_str(char *buf, size_t len, uint64_t bytes)
{
	static const char *const sfx[] = {"", "k", "m", "g", "t"};
	int u = 0;

	while (bytes && bytes % 1024 == 0 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 "%s", bytes, sfx[u]);
}

void io_jobname(const struct io_spec *s, char *buf, size_t len)
{
	char bs[32];
	size_t at;

	size_str(bs, sizeof(bs), s->bs_bytes);
	if (s->rw == RW_RANDRW || s->rw == RW_RW)
		snprintf(buf, len, "%s%d bs=%s qd=%u jobs=%u", rw_name(s->rw),
			 s->rwmixread, bs, s->iodepth, s->numjobs);
	else
		snprintf(buf, len, "%s bs=%s qd=%u jobs=%u", rw_name(s->rw), bs,
			 s->iodepth, s->numjobs);
	/* Caps are part of the workload: "r=20%" or "w=100m/s". */
	for (int d = 0; d < DIR_COUNT; d++) {
		char cap[32];
		at = strlen(buf);
		if (s->rate[d].pct > 0)
			snprintf(cap, sizeof(cap), "%g%%", s->rate[d].pct);
		else if (s->rate[d].bytes_per_s)
			size_str(cap, sizeof(cap) - 2, s->rate[d].bytes_per_s);
		else
			continue;
		snprintf(buf + at, len - at, " %c=%s%s", d == DIR_READ ? 'r' : 'w', cap,
			 s->rate[d].pct > 0 ? "" : "/s");
	}
}

json_t *io_options_json(const struct io_spec *s)
{
	json_t *o = json_pack(
	    "{s:s,s:s,s:i,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:b,s:b,s:b,s:I,s:I,s:f,s:f}",
	    "target", s->target, "rw", rw_name(s->rw), "rwmixread", s->rwmixread, "bs",
	    (json_int_t)s->bs_bytes, "iodepth", (json_int_t)s->iodepth, "numjobs",
	    (json_int_t)s->numjobs, "iodepth_batch_submit", (json_int_t)s->batch_submit,
	    "size", (json_int_t)s->size_bytes, "runtime_s", s->runtime_ns / 1e9, "ramp_s",
	    s->ramp_ns / 1e9, "direct", s->direct, "sqthread_poll", s->sqpoll, "hipri",
	    s->hipri, "rate_read", (json_int_t)s->rate[DIR_READ].bytes_per_s,
	    "rate_write", (json_int_t)s->rate[DIR_WRITE].bytes_per_s, "rate_read_pct",
	    s->rate[DIR_READ].pct, "rate_write_pct", s->rate[DIR_WRITE].pct);

	/* --size N%: "size" holds the bytes it came to. */
	if (o && s->size_pct)
		json_object_set_new(o, "size_percent", json_integer(s->size_pct));
	return o;
}

static size_t cat(char *buf, size_t len, size_t at, const char *fmt, const char *arg)
{
	if (at >= len)
		return at;
	int n = snprintf(buf + at, len - at, fmt, arg);
	return n > 0 ? at + (size_t)n : at;
}

bool io_fio_command(const struct io_spec *s, char *buf, size_t len)
{
	char v[64], slice[32];
	size_t at = 0;
	bool region = target_is_region(s->target);
	const char *file = target_file(s->target), *path = file;

	if (target_no_fio(s->target, buf, len))
		return false;

	if (region)
		at = cat(buf, len, at, "%s", "PMEM_IS_PMEM_FORCE=1 ");
	char arg[4200], quoted[8500];

	/* Pasted into a shell, a path with spaces or ';' stays one argument. */
	snprintf(arg, sizeof(arg), "--filename=%s", path);
	shell_quote(arg, quoted, sizeof(quoted));
	at = cat(buf, len, at, "fio --name=pmwal %s", quoted);
	at = cat(buf, len, at, " --ioengine=%s", region ? "libpmem" : "io_uring");
	at = cat(buf, len, at, " --direct=%s", s->direct || region ? "1" : "0");
	at = cat(buf, len, at, " --rw=%s", rw_name(s->rw));
	if (s->rw == RW_RANDRW || s->rw == RW_RW) {
		snprintf(v, sizeof(v), "%d", s->rwmixread);
		at = cat(buf, len, at, " --rwmixread=%s", v);
	}
	size_str(v, sizeof(v), s->bs_bytes);
	at = cat(buf, len, at, " --bs=%s", v);
	snprintf(v, sizeof(v), "%u", s->iodepth);
	at = cat(buf, len, at, region ? " --fsync=%s" : " --iodepth=%s", v);
	snprintf(v, sizeof(v), "%u", s->numjobs);
	at = cat(buf, len, at, " --numjobs=%s", v);
	if (s->size_bytes) {
		size_str(slice, sizeof(slice),
			 s->size_bytes / s->numjobs / s->bs_bytes * s->bs_bytes);
		at = cat(buf, len, at, " --size=%s", slice);
		if (s->numjobs > 1)
			at = cat(buf, len, at, " --offset_increment=%s", slice);
	}
	if (s->runtime_ns) {
		snprintf(v, sizeof(v), "%.3g", s->runtime_ns / 1e9);
		at = cat(buf, len, at, " --runtime=%s --time_based", v);
	}
	if (s->ramp_ns) {
		snprintf(v, sizeof(v), "%.3g", s->ramp_ns / 1e9);
		at = cat(buf, len, at, " --ramp_time=%s", v);
	}
	if (!region && !s->no_fixed)
		at = cat(buf, len, at, "%s", " --fixedbufs --registerfiles");
	if (s->batch_submit > 1) {
		snprintf(v, sizeof(v), "%u", s->batch_submit);
		at = cat(buf, len, at, " --iodepth_batch_submit=%s", v);
	}
	if (s->sqpoll)
		at = cat(buf, len, at, "%s", " --sqthread_poll");
	if (s->hipri)
		at = cat(buf, len, at, "%s", " --hipri");
	if (s->rate[0].bytes_per_s || s->rate[1].bytes_per_s) {
		snprintf(v, sizeof(v), "%" PRIu64 ",%" PRIu64,
			 s->rate[0].bytes_per_s / s->numjobs,
			 s->rate[1].bytes_per_s / s->numjobs);
		at = cat(buf, len, at, " --rate=%s", v);
	}
	cat(buf, len, at, "%s", " --group_reporting --output-format=json");
	return true;
}

/* Measure one direction alone, uncapped, briefly: its maximum. */
static double calibrate(const struct io_spec *spec, int dir)
{
	struct io_spec c = *spec;
	bool rnd = rw_is_random(spec->rw);

	c.rw = dir == DIR_READ ? (rnd ? RW_RANDREAD : RW_READ)
			       : (rnd ? RW_RANDWRITE : RW_WRITE);
	memset(c.rate, 0, sizeof(c.rate));
	c.runtime_ns = spec->runtime_ns && spec->runtime_ns < 3000000000ull
			   ? spec->runtime_ns
			   : 3000000000ull;
	c.ramp_ns = spec->ramp_ns < 500000000ull ? spec->ramp_ns : 500000000ull;
	struct run_result *r = io_run(&c);
	double bw = 0;
	if (r && !r->err && r->runtime_ns)
		bw = r->dir[dir].bytes / (r->runtime_ns / 1e9);
	result_free(r);
	return bw;
}

void io_resolve_caps(struct io_spec *spec, json_t *notes)
{
	for (int d = 0; d < DIR_COUNT; d++) {
		if (!(spec->rate[d].pct > 0) || !rw_has_dir(spec->rw, d))
			continue;
		double max = calibrate(spec, d);
		if (bench_stop)
			break;
		spec->rate[d].bytes_per_s = (uint64_t)(max * spec->rate[d].pct / 100.0);
		if (!spec->rate[d].bytes_per_s)
			spec->rate[d].bytes_per_s = 1;
		if (notes)
			json_object_set_new(
			    notes, d == DIR_READ ? "read" : "write",
			    json_pack("{s:f,s:f,s:I}", "max_bw_bytes", max, "pct",
				      spec->rate[d].pct, "cap_bw_bytes",
				      (json_int_t)spec->rate[d].bytes_per_s));
	}
}

struct run_result *io_run_capped(struct io_spec *spec, json_t *notes)
{
	/* Taken first: the caps are measured on the same bytes, and the
	 * options and fio command of the job give the size it came to. */
	char err[256];

	if (io_resolve_size(spec, err, sizeof(err))) {
		struct run_result *r = result_new();
		if (r) {
			r->err = PMWAL_BENCH_EUSAGE;
			snprintf(r->errmsg, sizeof(r->errmsg), "%s", err);
		}
		return r;
	}
	io_resolve_caps(spec, notes);
	return io_run(spec);
}
