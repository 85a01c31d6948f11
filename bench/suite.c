// SPDX-License-Identifier: MIT
/*
 * suite.c - running and recording jobs: one io, log, primitives or recovery
 * job at a time, sweeps as curves, and the default suite (`pmwal bench` with
 * no arguments) that answers, in about two minutes on two cores, how the raw
 * medium, each durability primitive, the log and recovery compare on flash
 * and on (emulated) persistent memory.
 */
#include "ctx.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmwal.h"

/* The suite's overall estimate, for the progress line's "suite ~Ns left":
 * what is left of the estimate, at least the targets still to come. */
static uint64_t suite_t0_ns, suite_total_ns, suite_later_ns;

static void suite_eta(uint64_t job_ns)
{
	if (!suite_total_ns)
		return;
	uint64_t el = now_ns() - suite_t0_ns + job_ns;
	uint64_t left = suite_total_ns > el ? suite_total_ns - el : 0;
	progress_suite_left_ns = left > suite_later_ns ? left : suite_later_ns;
}

static void record_job(struct bench_ctx *c, json_t *job)
{
	if (!c->quiet)
		table_row(job);
	root_add_job(c->root, job);
}

/* Bad input or a refused feature: a message and exit status 2, no job. */
static void usage_failed(struct bench_ctx *c, struct run_result *r)
{
	fprintf(stderr, "pmwal bench: %s\n", r ? r->errmsg : "out of memory");
	ctx_note_status(c, r ? PMWAL_BENCH_EUSAGE : -1);
	result_free(r);
}

/* Percentage caps: say what 100% was, before the row they apply to. */
static void print_caps(struct bench_ctx *c, json_t *notes)
{
	const char *dir;
	json_t *n;

	if (c->quiet)
		return;
	json_object_foreach(notes, dir, n)
	{
		char max[16], cap[16];
		fmt_bytes(max, sizeof(max),
			  json_real_value(json_object_get(n, "max_bw_bytes")));
		fmt_bytes(cap, sizeof(cap),
			  (double)json_integer_value(json_object_get(n, "cap_bw_bytes")));
		printf("%-9s %s capped at %.0f%% of its maximum alone (%s/s): %s/s\n", "",
		       dir, json_real_value(json_object_get(n, "pct")), max, cap);
	}
}

/*
 * --until-full (seed 000's cliff): write the whole file or device once, at
 * the rate caps given, so bandwidth over time shows where a drive's cache
 * runs out. A block device is written over only with --force (every byte of
 * it goes); a file is written to its size, or to --size when new.
 */
static int until_full_spec(struct bench_ctx *c, struct io_spec *s, char *err,
			   size_t errlen)
{
	const char *file = target_file(s->target);
	struct stat st;

	if (s->rw != RW_WRITE && s->rw != RW_RANDWRITE) {
		snprintf(err, errlen,
			 "--until-full writes the whole target once: give --rw write "
			 "(or randwrite), not %s",
			 rw_name(s->rw));
		return -1;
	}
	s->runtime_ns = 0; /* one pass over size_bytes */
	s->ramp_ns = 0;	   /* the first bytes are the burst the cliff ends */
	if (!file || target_is_region(s->target))
		return 0; /* a region: its size */
	if (stat(file, &st) == 0 && S_ISBLK(st.st_mode)) {
		if (!c->force) {
			snprintf(err, errlen,
				 "--until-full writes every byte of %s, destroying what "
				 "it holds: pass --force to write it",
				 file);
			return -1;
		}
		if (!c->size_set)
			s->size_bytes = 0; /* the whole device */
		return 0;
	}
	if (c->size_set)
		return 0;
	if (stat(file, &st) == 0 && st.st_size > 0) {
		s->size_bytes = (uint64_t)st.st_size;
		return 0;
	}
	snprintf(err, errlen,
		 "--until-full on a new file writes --size bytes: give --size (to see a "
		 "drive's cache run out, several times its cache, e.g. --size 200g)");
	return -1;
}

json_t *run_io_job(struct bench_ctx *c, struct io_spec *s, const char *label)
{
	char name[96], fio[1024];
	json_t *notes = json_object();

	if (c->until_full && until_full_spec(c, s, c->err, sizeof(c->err))) {
		fprintf(stderr, "pmwal bench: %s\n", c->err);
		ctx_note_status(c, PMWAL_BENCH_EUSAGE);
		json_decref(notes);
		return NULL;
	}

	io_jobname(s, name, sizeof(name));
	snprintf(progress_job, sizeof(progress_job), "%.60s @ %.32s", name,
		 *label ? label : s->target);
	suite_eta(s->ramp_ns + s->runtime_ns);
	/* Files bench io creates, it marks itself (io.c). */
	struct run_result *r = io_run_capped(s, notes);
	if (!r || r->err == PMWAL_BENCH_EUSAGE) {
		usage_failed(c, r);
		json_decref(notes);
		return NULL;
	}
	ctx_add_target(c, s->target);
	json_t *opts = io_options_json(s);
	json_t *job = result_job_json(name, "io", s->target, label, r, opts);
	json_t *pm = json_object_get(job, "pmwal");
	bool has_fio = io_fio_command(s, fio, sizeof(fio));

	json_object_set_new(pm, has_fio ? "fio_command" : "fio_equivalent", json_string(fio));
	if (c->until_full) {
		char full[128];
		snprintf(full, sizeof(full), "%s until full", name);
		json_object_set_new(job, "jobname", json_string(full));
		json_object_set_new(pm, "until_full", json_true());
	}
	if (json_object_size(notes))
		json_object_set(pm, "rate_calibration", notes);
	print_caps(c, notes);
	json_decref(notes);
	json_decref(opts);
	ctx_note_status(c, r->err);
	result_free(r);
	record_job(c, job);
	return job;
}

/* One log run as a job, not yet recorded; NULL for bad input. */
static json_t *log_job(struct bench_ctx *c, struct log_spec *s, const char *label)
{
	char name[96];
	json_t *extra = NULL;

	log_jobname(s, name, sizeof(name));
	snprintf(progress_job, sizeof(progress_job), "%.60s @ %.32s", name,
		 *label ? label : s->target);
	suite_eta(s->ramp_ns + s->runtime_ns);
	/* Nothing is removed or cut under a log another process writes. */
	char werr[512];

	if (log_check_no_writer(s->target, werr, sizeof(werr))) {
		fprintf(stderr, "pmwal bench: %s\n", werr);
		ctx_note_status(c, PMWAL_BENCH_EUSAGE);
		return NULL;
	}
	/* Default targets and files a run created are ours: start each run from
	 * a fresh log (a second run must not trip over the first one's log). */
	target_remove_owned(s->target);
	bool created = target_claim(s->target);
	if (!created)
		target_reset_scratch(s->target);
	struct run_result *r = log_run(s, &extra);
	if (!r || r->err == PMWAL_BENCH_EUSAGE) {
		if (created)
			target_unclaim(s->target);
		usage_failed(c, r);
		return NULL;
	}
	ctx_add_target(c, s->target);
	json_t *opts = log_options_json(s);
	json_t *job = result_job_json(name, "log", s->target, label, r, opts);
	if (extra)
		json_object_set_new(json_object_get(job, "pmwal"), "log", extra);
	json_decref(opts);
	ctx_note_status(c, r->err);
	result_free(r);
	target_remove_owned(s->target);
	return job;
}

/*
 * --followers N: the writer alone, then with N followers, same options, one
 * after the other; the second job carries the comparison and the lag
 * (pmwal.log.followers). Its jobname ends in " fol=N".
 */
static json_t *run_log_followers(struct bench_ctx *c, struct log_spec *s,
				 const char *label)
{
	struct log_spec alone = *s, with = *s;

	alone.followers = 0;
	json_t *base = log_job(c, &alone, label);
	if (!base)
		return NULL;
	record_job(c, base);
	if (bench_stop || json_object_get(json_object_get(base, "pmwal"), "error"))
		return base;
	with.force = true; /* the log there is the one the run alone just wrote */
	json_t *job = log_job(c, &with, label);
	if (!job)
		return NULL;
	followers_compare(job, base);
	record_job(c, job);
	if (!c->quiet)
		followers_print(job);
	return job;
}

json_t *run_log_job(struct bench_ctx *c, struct log_spec *s, const char *label)
{
	if (s->followers)
		return run_log_followers(c, s, label);
	json_t *job = log_job(c, s, label);
	if (job)
		record_job(c, job);
	return job;
}

void run_primitives(struct bench_ctx *c, const char *target, const char *label)
{
	char err[512] = "";
	/* A region has no room beside it: a missing fake PMR becomes ours. */
	bool created =
	    target_kind(target) == PMWAL_TARGET_FAKEPMR && target_claim(target);
	bool all = c->mode && !strcmp(c->mode, "primitives");
	snprintf(progress_job, sizeof(progress_job), "primitives @ %.32s",
		 *label ? label : target);
	suite_eta(0);
	json_t *jobs =
	    primitives_run(target, label, c->prim_ns, all, c->force, err, sizeof(err));
	json_t *job;
	size_t i;

	ctx_add_target(c, target);
	if (!jobs) {
		if (created)
			target_unclaim(target);
		fprintf(stderr, "pmwal bench: primitives on %s: %s\n", target, err);
		ctx_note_status(c, PMWAL_BENCH_EUSAGE);
		return;
	}
	json_array_foreach(jobs, i, job)
	{
		json_t *e = json_object_get(json_object_get(job, "pmwal"), "error");
		ctx_note_status(c, e ? -1 : 0);
		json_incref(job);
		record_job(c, job);
	}
	json_decref(jobs);
}

json_t *run_recovery(struct bench_ctx *c, const char *target, const char *label,
		     uint64_t fill_bytes, uint32_t record_bytes)
{
	char err[512] = "";

	snprintf(progress_job, sizeof(progress_job), "recovery @ %.32s",
		 *label ? label : target);
	suite_eta(0);
	if (log_check_no_writer(target, err, sizeof(err))) {
		fprintf(stderr, "pmwal bench: recovery on %s: %s\n", target, err);
		ctx_note_status(c, PMWAL_BENCH_EUSAGE);
		return NULL;
	}
	target_remove_owned(target);
	bool created = target_claim(target);
	if (!created)
		target_reset_scratch(target);
	bool usage = false;
	json_t *job = recovery_run(target, label, fill_bytes, record_bytes, c->force,
				   &usage, err, sizeof(err));
	ctx_add_target(c, target);
	if (!job) {
		if (!bench_stop) {
			fprintf(stderr, "pmwal bench: recovery on %s: %s\n", target, err);
			ctx_note_status(c, usage ? PMWAL_BENCH_EUSAGE : -1);
		}
		if (created && usage)
			target_unclaim(target);
		target_remove_owned(target);
		return NULL;
	}
	record_job(c, job);
	json_t *rec = json_object_get(json_object_get(job, "pmwal"), "recovery");
	if (!c->quiet) {
		double raw = json_real_value(json_object_get(rec, "raw_read_bw_bytes"));
		char rawtxt[48] = "not measured on this target";
		if (raw > 0)
			snprintf(rawtxt, sizeof(rawtxt), "%.0f MiB/s", raw / 1048576);
		printf("%-9s %.3f s/GiB, %.0f MiB/s, verdict %s, %" JSON_INTEGER_FORMAT
		       " records (raw read %s)\n",
		       "", json_real_value(json_object_get(rec, "s_per_gib")),
		       json_real_value(json_object_get(rec, "bw_bytes")) / 1048576,
		       json_string_value(json_object_get(rec, "verdict")),
		       json_integer_value(json_object_get(rec, "records")), rawtxt);
	}
	target_remove_owned(target);
	return job;
}

static void tag_sweep(json_t *job, const char *key, uint64_t v, const char *group)
{
	if (job)
		json_object_set_new(json_object_get(job, "pmwal"), "sweep",
				    json_pack("{s:s,s:I,s:s}", "key", key, "value",
					      (json_int_t)v, "group", group));
}

void run_sweep_io(struct bench_ctx *c, const struct io_spec *base, const char *label)
{
	char group[160], name[96];
	struct io_spec s = *base;

	io_jobname(base, name, sizeof(name));
	snprintf(group, sizeof(group), "%s sweep %s @ %s", rw_name(base->rw),
		 c->sweep_key, label && *label ? label : base->target);
	for (int i = 0; i < c->nsweep && !bench_stop; i++) {
		uint64_t v = c->sweep[i];
		s = *base;
		if (!strcmp(c->sweep_key, "iodepth"))
			s.iodepth = (uint32_t)v;
		else if (!strcmp(c->sweep_key, "numjobs") ||
			 !strcmp(c->sweep_key, "threads"))
			s.numjobs = (uint32_t)v;
		else
			s.bs_bytes = (uint32_t)v;
		tag_sweep(run_io_job(c, &s, label), c->sweep_key, v, group);
	}
}

void run_sweep_log(struct bench_ctx *c, const struct log_spec *base, const char *label)
{
	char group[160];
	struct log_spec s;

	snprintf(group, sizeof(group), "log sweep %s @ %s", c->sweep_key,
		 label && *label ? label : base->target);
	for (int i = 0; i < c->nsweep && !bench_stop; i++) {
		uint64_t v = c->sweep[i];
		s = *base;
		if (!strcmp(c->sweep_key, "threads") || !strcmp(c->sweep_key, "numjobs"))
			s.threads = (uint32_t)v;
		else if (!strcmp(c->sweep_key, "record") || !strcmp(c->sweep_key, "bs"))
			s.record_bytes = (uint32_t)v;
		else
			s.threads = (uint32_t)v; /* iodepth: appenders in flight */
		tag_sweep(run_log_job(c, &s, label), c->sweep_key, v, group);
	}
}

/* The suite's time budget per phase; --quick divides by 5, --runtime sets it. */
struct suite_time {
	uint64_t io_ns, ramp_ns, sweep_ns, log_ns, prim_ns, fill_bytes;
};

static void suite_io(struct bench_ctx *c, const char *target, const char *label, int rw,
		     uint32_t bs, uint32_t qd, const struct suite_time *t)
{
	struct io_spec s = c->io;

	s.target = target;
	s.rw = rw;
	s.bs_bytes = bs;
	s.iodepth = qd;
	s.numjobs = 1;
	s.runtime_ns = t->io_ns;
	s.ramp_ns = t->ramp_ns;
	run_io_job(c, &s, label);
}

static void suite_log(struct bench_ctx *c, const char *target, const char *label,
		      uint32_t threads, const struct suite_time *t)
{
	struct log_spec s = c->log;

	s.target = target;
	s.threads = threads;
	s.record_bytes = 4096;
	s.runtime_ns = t->log_ns;
	s.ramp_ns = t->ramp_ns;
	run_log_job(c, &s, label);
}

/* seed 000 (docs/bench.md): one direction flat out, the other at 20% of its own maximum.
 */
static void suite_capped(struct bench_ctx *c, const char *data, const char *label,
			 int capped_dir, const struct suite_time *t)
{
	struct io_spec s = c->io;

	s.target = data;
	s.rw = RW_RANDRW;
	s.bs_bytes = 4096;
	s.iodepth = 32;
	s.numjobs = 1;
	s.runtime_ns = t->io_ns;
	s.ramp_ns = t->ramp_ns;
	memset(s.rate, 0, sizeof(s.rate));
	s.rate[capped_dir].pct = 20;
	if (!bench_stop)
		run_io_job(c, &s, label);
}

static void suite_log_sweep(struct bench_ctx *c, const char *wal, const char *label,
			    const struct suite_time *t)
{
	static const uint64_t threads[] = {1, 4, 16, 64};
	struct log_spec s = c->log;

	s.target = wal;
	s.record_bytes = 4096;
	s.runtime_ns = t->sweep_ns;
	s.ramp_ns = t->ramp_ns / 2;
	snprintf(c->sweep_key, sizeof(c->sweep_key), "threads");
	memcpy(c->sweep, threads, sizeof(threads));
	c->nsweep = 4;
	if (!bench_stop)
		run_sweep_log(c, &s, label);
}

/* Seed 000's cliff, small: the data file written once from end to end, in
 * 20 ms intervals. On a real SSD, run `bench io DEV --rw write --bs 128k
 * --until-full --force` to see its cache run out (after tens of GB). */
static void suite_until_full(struct bench_ctx *c, const char *data, const char *label)
{
	struct io_spec s = c->io;
	bool was = c->until_full, size_set = c->size_set;

	if (bench_stop)
		return;
	s.target = data;
	s.rw = RW_WRITE;
	s.bs_bytes = 128 << 10;
	s.iodepth = 8;
	s.numjobs = 1;
	s.interval_ns = 20000000;
	memset(s.rate, 0, sizeof(s.rate));
	c->until_full = true;
	c->size_set = true; /* the data file's size, laid out already */
	run_io_job(c, &s, label);
	c->until_full = was;
	c->size_set = size_set;
}

/* Queue depth sweeps (seed 000) for reads, writes and the 50/50 mix: one
 * curve each, and latency against IOPS in the report. */
static void suite_qd_sweeps(struct bench_ctx *c, const char *data, const char *label,
			    const struct suite_time *t)
{
	static const uint64_t qds[] = {1, 4, 16, 64};
	static const int rws[] = {RW_RANDREAD, RW_RANDWRITE, RW_RANDRW};

	for (size_t i = 0; i < sizeof(rws) / sizeof(rws[0]) && !bench_stop; i++) {
		struct io_spec s = c->io;
		s.target = data;
		s.rw = rws[i];
		s.bs_bytes = 4096;
		s.numjobs = 1;
		s.runtime_ns = t->sweep_ns / 2;
		s.ramp_ns = t->ramp_ns / 4;
		memset(s.rate, 0, sizeof(s.rate));
		snprintf(c->sweep_key, sizeof(c->sweep_key), "iodepth");
		memcpy(c->sweep, qds, sizeof(qds));
		c->nsweep = 4;
		run_sweep_io(c, &s, label);
	}
}

static void suite_flash(struct bench_ctx *c, const char *data, const char *wal,
			const char *label, const struct suite_time *t)
{
	suite_io(c, data, label, RW_RANDREAD, 4096, 32, t);
	suite_io(c, data, label, RW_RANDWRITE, 4096, 32, t);
	suite_io(c, data, label, RW_RANDRW, 4096, 32, t);
	suite_capped(c, data, label, DIR_READ, t);  /* write-intensive */
	suite_capped(c, data, label, DIR_WRITE, t); /* read-intensive */
	suite_io(c, data, label, RW_WRITE, 128 << 10, 8, t);
	suite_io(c, data, label, RW_READ, 128 << 10, 8, t);
	suite_until_full(c, data, label);
	suite_qd_sweeps(c, data, label, t);
	if (!bench_stop)
		run_primitives(c, data, label);
	suite_log(c, wal, label, 1, t);
	suite_log(c, wal, label, 32, t);
	suite_log_sweep(c, wal, label, t);
	if (!bench_stop)
		run_recovery(c, wal, label, t->fill_bytes, 4096);
}

/*
 * A persistent region (emulated pmem, the fake PMR): the raw 4K workloads
 * flash runs too, at half the time (a region's rate settles in
 * milliseconds), so pmem, PMR and flash sit side by side in the report.
 */
static void suite_region(struct bench_ctx *c, const char *data, const char *wal,
			 const char *label, const struct suite_time *t)
{
	struct suite_time h = *t;
	uint64_t size = c->io.size_bytes, cap = c->log.capacity_bytes;

	h.io_ns /= 2;
	h.log_ns /= 2;
	h.ramp_ns /= 2;
	/* The fake PMR emulates every access (a store shadow, a register read
	 * per barrier): laying out 256 MiB costs more than measuring it. */
	if (target_kind(data) == PMWAL_TARGET_FAKEPMR) {
		if (!c->size_set)
			c->io.size_bytes = UINT64_C(64) << 20;
		if (!cap)
			c->log.capacity_bytes = UINT64_C(64) << 20;
		if (!c->size_set)
			h.fill_bytes /= 4;
	}
	suite_io(c, data, label, RW_WRITE, 4096, 1, &h);
	suite_io(c, data, label, RW_READ, 4096, 1, &h);
	suite_io(c, data, label, RW_RANDREAD, 4096, 32, &h);
	suite_io(c, data, label, RW_RANDWRITE, 4096, 32, &h);
	suite_io(c, data, label, RW_RANDRW, 4096, 32, &h);
	if (!bench_stop)
		run_primitives(c, data, label);
	suite_log(c, wal, label, 1, &h);
	suite_log(c, wal, label, 32, &h);
	if (!bench_stop)
		run_recovery(c, wal, label, h.fill_bytes, 4096);
	c->io.size_bytes = size;
	c->log.capacity_bytes = cap;
}

static void suite_times(const struct bench_ctx *c, struct suite_time *t)
{
	uint64_t div = c->quick ? 5 : 1;

	t->io_ns =
	    c->runtime_set && c->io.runtime_ns ? c->io.runtime_ns : 5000000000ull / div;
	t->ramp_ns = 1000000000ull / div;
	t->sweep_ns = t->io_ns * 2 / 5;
	t->log_ns = t->io_ns;
	t->prim_ns = c->prim_ns / div;
	t->fill_bytes = c->size_set ? c->fill_bytes : (UINT64_C(256) << 20) / div;
}

/* The progress line's estimate of one target's phases: runtime + ramp. */
static uint64_t suite_estimate_ns(const char *data, const struct suite_time *t)
{
	/* Layouts, recovery's fill and open: about 1.5 phases on a region
	 * (measured: the fake PMR's), 3 on flash with the capped phases'
	 * calibration runs. */
	if (target_is_region(data)) /* 5 io, 2 log at half time; 4 primitives */
		return 10 * (t->io_ns + t->ramp_ns) / 2 + 4 * t->prim_ns;
	/* 7 io and 2 log phases, 12 QD sweep points, 4 log sweep points, 5
	 * primitives */
	return 12 * (t->io_ns + t->ramp_ns) + 12 * (t->sweep_ns / 2 + t->ramp_ns / 4) +
	       4 * (t->sweep_ns + t->ramp_ns / 2) + 5 * t->prim_ns;
}

/* Which targets the suite runs on: flash, emulated pmem and the fake PMR
 * (its barrier protocol, emulated) unless named. */
int run_suite(struct bench_ctx *c)
{
	struct suite_time t;
	const char *names[3] = {"flash", "pmem", "pmr"};
	int n = 3;

	suite_times(c, &t);
	c->prim_ns = t.prim_ns;
	if (c->npos) {
		n = c->npos < 3 ? c->npos : 3;
		for (int i = 0; i < n; i++)
			names[i] = c->pos[i];
	}
	uint64_t est[3] = {0};
	suite_total_ns = 0;
	for (int i = 0; i < n; i++) {
		char l[48];
		est[i] = suite_estimate_ns(target_resolve(names[i], 0, l, sizeof(l)), &t);
		suite_total_ns += est[i];
	}
	suite_t0_ns = now_ns();
	for (int i = 0; i < n && !bench_stop; i++) {
		char label[48], wlabel[48];
		const char *data = target_resolve(names[i], 0, label, sizeof(label));
		const char *wal = target_resolve(names[i], 1, wlabel, sizeof(wlabel));
		suite_later_ns = 0;
		for (int k = i + 1; k < n; k++)
			suite_later_ns += est[k];
		if (!c->size_set)
			c->io.size_bytes = target_is_region(data) || c->quick
					       ? UINT64_C(256) << 20
					       : UINT64_C(1) << 30;
		if (target_is_region(data))
			suite_region(c, data, wal, label, &t);
		else
			suite_flash(c, data, wal, label, &t);
		target_remove_owned(data);
	}
	progress_suite_left_ns = suite_total_ns = 0;
	return 0;
}
