/* SPDX-License-Identifier: MIT */
/*
 * ctx.h - the state of one `pmwal bench` invocation, shared by the command
 * parser (cmd.c), the suite and sweeps (suite.c), two-client runs (dual.c)
 * and compare (compare.c): parsed options, the JSON root results go into and
 * the exit status so far.
 */
#ifndef PMWAL_BENCH_CTX_H
#define PMWAL_BENCH_CTX_H

#include <stdio.h>

#include "bench.h"
#include "fio.h"

#define SWEEP_POINTS_MAX 64

struct bench_ctx {
	const char *mode;
	struct io_spec io;
	struct log_spec log;
	const char *pos[4];
	int npos;
	const char *json_path;
	const char *csv_dir;
	const char *report_dir;
	char sweep_key[16];
	uint64_t sweep[SWEEP_POINTS_MAX];
	int nsweep;
	uint32_t clients;
	const char *client_b; /* dual: option overrides for the second client */
	uint64_t fill_bytes;  /* recovery */
	uint64_t prim_ns;     /* primitives: time each */
	bool quick;
	bool until_full; /* bench io: write the whole target once (suite.c) */
	bool force;
	bool runtime_set;
	bool size_set;
	char command[1024]; /* the command line, for the environment record */
	bool quiet;
	bool no_primitives; /* bench log: skip the primitives */
	unsigned output_formats; /* --output-format (fio.h), 0: not given */
	bool interval_set;
	struct fio_logs logs;  /* --write_bw_log, --log_avg_msec (fio.h) */
	const char *job_file;  /* bench io --job FILE.fio (fiojob.c) */
	struct fio_file *jobs; /* its jobs, read before anything runs */
	FILE *json_out;	       /* --json -: the real stdout, for the JSON alone */
	json_t *root;
	json_t *targets; /* targets used, for the environment record */
	int status;	 /* worst exit status so far */
	char err[512];
};

/* Parse options after the mode word; 0 or -1 with ctx->err set. */
int ctx_parse(struct bench_ctx *c, int argc, char **argv);
void ctx_note_status(struct bench_ctx *c, int err);
void ctx_add_target(struct bench_ctx *c, const char *target);

/* Run and record one job of each kind (prints its table row). */
json_t *run_io_job(struct bench_ctx *c, struct io_spec *s, const char *label);
json_t *run_log_job(struct bench_ctx *c, struct log_spec *s, const char *label);
void run_primitives(struct bench_ctx *c, const char *target, const char *label);
json_t *run_recovery(struct bench_ctx *c, const char *target, const char *label,
		     uint64_t fill_bytes, uint32_t record_bytes);
/* The sweep in ctx (key and values) over @io or @log. */
void run_sweep_io(struct bench_ctx *c, const struct io_spec *base, const char *label);
void run_sweep_log(struct bench_ctx *c, const struct log_spec *base, const char *label);

int run_suite(struct bench_ctx *c);
int run_dual(struct bench_ctx *c);
int run_compare(struct bench_ctx *c);
/* fiojob.c: read a fio job file into c->jobs (0, or -1 with c->err: bad
 * input, nothing run), then run each of its jobs (and free them). */
struct fio_file;
int fio_job_file_load(struct bench_ctx *c, const char *path);
int fio_job_file_run(struct bench_ctx *c);

#endif
