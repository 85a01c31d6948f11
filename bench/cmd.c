// SPDX-License-Identifier: MIT
/*
 * cmd.c - `pmwal bench [MODE] [TARGET...] [OPTIONS]`: option parsing (names
 * follow fio's, so a fio user reads a command line at once), dispatch to the
 * modes, and writing the results: table as it goes, then --json, --csv and
 * the HTML report. Bad input is a message and exit status 2 before anything
 * is written; Ctrl-C stops the run and what was measured is still written.
 */
#include "ctx.h"
#include "outfile.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_cmd.h"
#include "opttab.h"
#include "pmwal.h"

enum {
	O_RW = 256,
	O_RWMIX,
	O_BS,
	O_IODEPTH,
	O_NUMJOBS,
	O_SIZE,
	O_RUNTIME,
	O_RAMP,
	O_SQPOLL,
	O_HIPRI,
	O_DIRECT,
	O_RATE_R,
	O_RATE_W,
	O_RATE,
	O_SWEEP,
	O_TARGET,
	O_INTERVAL,
	O_RECORD,
	O_THREADS,
	O_COMMIT,
	O_WINDOW,
	O_OUTSTANDING,
	O_INFLIGHT,
	O_CAPACITY,
	O_CLIENTS,
	O_CLIENT_B,
	O_JSON,
	O_CSV,
	O_FORCE,
	O_QUICK,
	O_NOFIXED,
	O_NOURING,
	O_FDATASYNC,
	O_PRIM_TIME,
	O_QUIET,
	O_BATCH,
	O_NOPRIM,
	O_FOLLOWERS,
	O_FOLLOWER_HOLD,
	O_OUTFMT,
	O_BW_LOG,
	O_IOPS_LOG,
	O_LAT_LOG,
	O_LOG_AVG,
	O_JOB,
	O_UNTIL_FULL,
};

static const struct cli_opt bench_opts[] = {
    {"rw", 0, "RW", O_RW, "io: read, write, randread, randwrite or randrw",
     "read write randread randwrite randrw", false},
    {"readwrite", 0, "RW", O_RW, "same as --rw (fio's name)",
     "read write randread randwrite randrw", true},
    {"rwmixread", 0, "N", O_RWMIX, "io --rw randrw: percent of reads", NULL, false},
    {"bs", 0, "SIZE", O_BS, "io: block size (default 4k)", NULL, false},
    {"blocksize", 0, "SIZE", O_BS, "same as --bs", NULL, true},
    {"iodepth", 0, "N", O_IODEPTH, "io: I/Os in flight per job (default 32)", NULL,
     false},
    {"numjobs", 0, "N", O_NUMJOBS, "io: jobs (threads) at once (default 1)", NULL, false},
    {"iodepth_batch_submit", 0, "N", O_BATCH,
     "io: I/Os per submission, as fio (default 1)", NULL, false},
    {"iodepth_batch", 0, "N", O_BATCH, "same as --iodepth_batch_submit", NULL, true},
    {"size", 0, "SIZE", O_SIZE,
     "bytes to work over (default 1g); io: N% of an existing file or device", NULL,
     false},
    {"runtime", 0, "TIME", O_RUNTIME, "how long each measurement runs (default 10s)",
     NULL, false},
    {"ramp", 0, "TIME", O_RAMP, "warm-up before measuring (default 1s)", NULL, false},
    {"ramp_time", 0, "TIME", O_RAMP, "same as --ramp (fio's name)", NULL, true},
    {"sqthread-poll", 0, NULL, O_SQPOLL,
     "io: io_uring with a kernel submission thread (SQPOLL)", NULL, false},
    {"sqthread_poll", 0, NULL, O_SQPOLL, "same as --sqthread-poll", NULL, true},
    {"hipri", 0, NULL, O_HIPRI, "io: polled completions (fio's hipri)", NULL, false},
    {"direct", 0, "0|1", O_DIRECT,
     "O_DIRECT (1, default) or the page cache (0; the log opens buffered)", "0 1", false},
    {"rate-read", 0, "RATE", O_RATE_R,
     "io: cap reads at bytes/s (500M) or a share of alone (20%)", NULL, false},
    {"rate-write", 0, "RATE", O_RATE_W,
     "io: cap writes at bytes/s (100M) or a share of alone (20%)", NULL, false},
    {"rate", 0, "R,W", O_RATE, "io: --rate R,W: both caps at once", NULL, false},
    {"sweep", 0, "KEY=LIST", O_SWEEP,
     "iodepth=1,2,4..256, numjobs=1..8, bs=512..1m, record=512..64k or threads=1..32 "
     "(a..b doubles)",
     NULL, false},
    {"filename", 0, "PATH", O_TARGET, "the target (fio's name for it)", NULL, true},
    {"target", 0, "PATH", O_TARGET, "the target, as a positional TARGET", NULL, false},
    {"interval", 0, "TIME", O_INTERVAL, "sample series interval (default 100ms)", NULL,
     false},
    {"record-size", 0, "SIZE", O_RECORD,
     "log, recovery: record size, 1..16M (default 4k)", NULL, false},
    {"threads", 0, "N", O_THREADS, "log: appender threads, 1..1024 (default 1)", NULL,
     false},
    {"commit", 0, "POLICY", O_COMMIT, "log: durable (each append waits) or buffered",
     "durable buffered", false},
    {"group-window-us", 0, "N", O_WINDOW, "log: group commit window in microseconds",
     NULL, false},
    {"outstanding", 0, "N", O_OUTSTANDING,
     "log --commit buffered: appends in flight per thread (4096)", NULL, false},
    {"groups-in-flight", 0, "N", O_INFLIGHT, "log on flash: group writes at once, 1..4",
     NULL, false},
    {"capacity", 0, "SIZE", O_CAPACITY, "log: the log's size (default 256m)", NULL,
     false},
    {"followers", 0, "N", O_FOLLOWERS,
     "log: then again with N processes following the log (0..16)", NULL, false},
    {"follower-hold", 0, NULL, O_FOLLOWER_HOLD,
     "log --followers: the log keeps what followers have to read", NULL, false},
    {"clients", 0, "N", O_CLIENTS, "io, dual: processes on the target at once", NULL,
     false},
    {"b", 0, "JOB", O_CLIENT_B, "dual: the second workload, e.g. \"rw=read bs=128k\"",
     NULL, false},
    {"json", 0, "FILE", O_JSON, "results as fio-shaped JSON (- is stdout)", NULL, false},
    {"csv", 0, "DIR", O_CSV, "results as CSV files in DIR", NULL, false},
    {"output", 'o', "DIR", 'o', "JSON, CSV and the HTML report in DIR", NULL, false},
    {"force", 0, NULL, O_FORCE,
     "write over a device or file that holds a filesystem or a pmwal log", NULL, false},
    {"quick", 0, NULL, O_QUICK, "every phase time divided by 5 (the quick suite)", NULL,
     false},
    {"until-full", 0, NULL, O_UNTIL_FULL,
     "io: write the whole file or device once; bandwidth over time", NULL, false},
    {"no-fixed", 0, NULL, O_NOFIXED, "io: no registered (fixed) files and buffers", NULL,
     false},
    {"no-uring", 0, NULL, O_NOURING, "log, recovery: pwritev2 instead of io_uring", NULL,
     false},
    {"fdatasync", 0, NULL, O_FDATASYNC,
     "log, recovery: flush with fdatasync, not FUA writes", NULL, false},
    {"prim-time", 0, "TIME", O_PRIM_TIME,
     "primitives: how long each one runs (default 1s)", NULL, false},
    {"quiet", 0, NULL, O_QUIET, "no results table on stdout", NULL, false},
    {"no-primitives", 0, NULL, O_NOPRIM,
     "log: skip timing each durability primitive alone", NULL, false},
    {"help", 'h', NULL, 'h', "this text", NULL, false},
    {"output-format", 0, "FMT", O_OUTFMT, "normal, json, json+ or terse (fio's)",
     "normal json json+ terse", false},
    {"write_bw_log", 0, "PREFIX", O_BW_LOG, "fio-style bandwidth log (PREFIX_bw.N.log)",
     NULL, false},
    {"write_iops_log", 0, "PREFIX", O_IOPS_LOG, "fio-style IOPS log", NULL, false},
    {"write_lat_log", 0, "PREFIX", O_LAT_LOG, "fio-style latency logs", NULL, false},
    {"log_avg_msec", 0, "MS", O_LOG_AVG,
     "average the fio-style logs over MS milliseconds", NULL, false},
    {"job", 0, "FILE", O_JOB, "io: run the jobs of a fio job file", NULL, false},
    {0},
};

const struct cli_cmd cli_bench = {
    .name = "bench",
    .summary = "device and log benchmarks (default suite without arguments)",
    .synopsis = "[MODE] [TARGET...] [OPTIONS]",
    .description =
	"modes:\n"
	"  (none)       default suite on 'flash' (a file here, O_DIRECT), 'pmem'\n"
	"               and 'fakepmr' (emulated regions in /dev/shm); report in\n"
	"               ./pmwal-report/\n"
	"  io           raw I/O: --rw read|write|randread|randwrite|randrw "
	"--rwmixread N\n"
	"               --bs 4k --iodepth 32 --numjobs 1 --size 1g --runtime 10s\n"
	"               (--size N%: that share of an existing file or device)\n"
	"               --ramp 1s --sqthread-poll --hipri --direct 0|1 --no-fixed\n"
	"               --iodepth_batch_submit 1 (I/Os per submission, as fio)\n"
	"               --rate-read 500M|20% --rate-write 100M|20% --clients 2\n"
	"               --until-full: write the whole file or device once (at\n"
	"               the rate caps), bandwidth over time, the cache cliff\n"
	"  log          durable appends: --record-size 4k --threads 1\n"
	"               --commit durable|buffered --group-window-us N --capacity "
	"256m\n"
	"               --outstanding N (buffered: appends in flight per thread, "
	"4096)\n"
	"               --groups-in-flight N (flash: group writes at once, 1..4)\n"
	"               --no-uring (pwritev2) --fdatasync (flush, not FUA)\n"
	"               --followers N (0..16): the writer alone, then with N\n"
	"               processes following the log read-only; their lag\n"
	"               (ack to delivery) and the writer's with/alone ratio;\n"
	"               the writer releases as alone, a follower behind a\n"
	"               release resumes at the head (counted), unless\n"
	"               --follower-hold: the log keeps what they have to read\n"
	"               then each durability primitive alone (--no-primitives)\n"
	"  recovery     fill a log (--size 1g, --record-size 4k), time pmwal_open\n"
	"  primitives   fdatasync / O_DSYNC / RWF_DSYNC / pmem barrier, each alone\n"
	"  dual         two processes on one target at once (--clients N, --b "
	"\"rw=read\n"
	"               bs=128k\" for a different second workload), vs one alone\n"
	"  compare A B  the quick suite on two targets side by side with ratios\n"
	"targets: PATH (file or block device), flash, pmem, pmem:PATH, /dev/daxX.Y,\n"
	"         pmr:BDF, fakepmr:PATH\n"
	"sweeps:  --sweep iodepth=1,2,4..256 | numjobs=1..8 | bs=512..1m |\n"
	"         record=512..64k | threads=1..32   (a..b doubles)\n"
	"output:  --json FILE (fio-shaped), --csv DIR, -o DIR (json+csv+html),\n"
	"         --runtime/--ramp/--interval 100ms, --quick, --force, --quiet\n"
	"fio:     --output-format normal|json|json+|terse (json to stdout, or --json\n"
	"         FILE; --json - is stdout), --write_bw_log P, --write_iops_log P\n"
	"         (P_bw.N.log), --log_avg_msec MS, bench io --job FILE.fio\n",
    .opts = bench_opts,
    .exit_status = "0\tevery run finished\n"
		   "1\ta run failed, or was interrupted (what was measured is written)\n"
		   "2\tbad usage, or a target or output that is refused\n",
    .args = CLI_ARGS_TARGET,
};

static int set_err(struct bench_ctx *c, const char *opt, const char *msg)
{
	snprintf(c->err, sizeof(c->err), "--%s: %s", opt, msg);
	return -1;
}

static int parse_sweep(struct bench_ctx *c, const char *arg)
{
	static const char *const keys[] = {"iodepth", "numjobs", "bs", "record",
					   "threads"};
	const char *eq = strchr(arg, '=');
	char msg[256];

	if (!eq || eq - arg >= (long)sizeof(c->sweep_key))
		return set_err(c, "sweep", "expected KEY=LIST, e.g. iodepth=1,2,4..256");
	snprintf(c->sweep_key, sizeof(c->sweep_key), "%.*s", (int)(eq - arg), arg);
	bool known = false,
	     sizes = !strcmp(c->sweep_key, "bs") || !strcmp(c->sweep_key, "record");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		known |= !strcmp(c->sweep_key, keys[i]);
	if (!known)
		return set_err(c, "sweep",
			       "key must be iodepth, numjobs, bs, record or threads");
	if (parse_list(eq + 1, sizes, c->sweep, SWEEP_POINTS_MAX, &c->nsweep, msg,
		       sizeof(msg)))
		return set_err(c, "sweep", msg);
	return 0;
}

static int parse_u32(struct bench_ctx *c, const char *name, const char *arg, uint64_t max,
		     uint32_t *out)
{
	uint64_t v;
	char msg[256];

	if (parse_uint(arg, 1, max, &v, msg, sizeof(msg)))
		return set_err(c, name, msg);
	*out = (uint32_t)v;
	return 0;
}

static int parse_sz(struct bench_ctx *c, const char *name, const char *arg, uint64_t *out)
{
	char msg[256];

	if (parse_size(arg, out, msg, sizeof(msg)))
		return set_err(c, name, msg);
	return 0;
}

static int parse_dur(struct bench_ctx *c, const char *name, const char *arg,
		     uint64_t *out)
{
	char msg[256];

	if (parse_duration(arg, out, msg, sizeof(msg)))
		return set_err(c, name, msg);
	return 0;
}

/* --size: bytes, or fio's N% (1..100): that share of the size the file or
 * device has when bench io opens it (io_resolve_size). */
static int parse_size_opt(struct bench_ctx *c, const char *arg)
{
	size_t n = strlen(arg);
	char num[32], msg[256];
	uint64_t v;

	c->io.size_pct = 0;
	if (n && arg[n - 1] == '%') {
		if (n - 1 >= sizeof(num))
			n = 1; /* too long to be 1..100: refused below */
		snprintf(num, sizeof(num), "%.*s", (int)(n - 1), arg);
		if (parse_uint(num, 1, 100, &v, msg, sizeof(msg))) {
			snprintf(msg, sizeof(msg),
				 "'%s': a share of the target's size is a whole "
				 "percentage in 1..100 (fio's size=N%%)",
				 arg);
			return set_err(c, "size", msg);
		}
		c->io.size_pct = (uint32_t)v;
		c->io.size_bytes = 0;
		return 0;
	}
	if (parse_sz(c, "size", arg, &v))
		return -1;
	if (!v)
		return set_err(c, "size", "must be above 0");
	c->io.size_bytes = c->fill_bytes = v;
	return 0;
}

/* fio's --rate=READ,WRITE (either may be empty). */
static int parse_rate_pair(struct bench_ctx *c, const char *arg)
{
	char buf[128], msg[256];
	snprintf(buf, sizeof(buf), "%s", arg);
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = 0;
	if (*buf && parse_rate(buf, &c->io.rate[DIR_READ], msg, sizeof(msg)))
		return set_err(c, "rate", msg);
	if (comma && comma[1] &&
	    parse_rate(comma + 1, &c->io.rate[DIR_WRITE], msg, sizeof(msg)))
		return set_err(c, "rate", msg);
	if (!comma)
		c->io.rate[DIR_WRITE] = c->io.rate[DIR_READ];
	return 0;
}

/* The workload and its timing (fio names); 1 if @opt is not one of them. */
static int parse_shape(struct bench_ctx *c, int opt, const char *arg)
{
	char msg[256];
	uint64_t v;

	switch (opt) {
	case O_RW:
		return parse_rw(arg, &c->io.rw, msg, sizeof(msg)) ? set_err(c, "rw", msg)
								  : 0;
	case O_RWMIX:
		if (parse_uint(arg, 0, 100, &v, msg, sizeof(msg)))
			return set_err(c, "rwmixread", msg);
		c->io.rwmixread = (int)v;
		return 0;
	case O_BS:
		if (parse_sz(c, "bs", arg, &v))
			return -1;
		if (!v || v > (64u << 20))
			return set_err(c, "bs", "must be in 1..64M");
		c->io.bs_bytes = (uint32_t)v;
		return 0;
	case O_IODEPTH:
		return parse_u32(c, "iodepth", arg, 4096, &c->io.iodepth);
	case O_NUMJOBS:
		return parse_u32(c, "numjobs", arg, 256, &c->io.numjobs);
	case O_BATCH:
		return parse_u32(c, "iodepth_batch_submit", arg, 4096,
				 &c->io.batch_submit);
	case O_SIZE:
		c->size_set = true;
		return parse_size_opt(c, arg);
	case O_RUNTIME:
		c->runtime_set = true;
		if (parse_dur(c, "runtime", arg, &v))
			return -1;
		c->io.runtime_ns = v;
		if (v)
			c->log.runtime_ns = v;
		return 0;
	case O_RAMP:
		if (parse_dur(c, "ramp", arg, &v))
			return -1;
		c->io.ramp_ns = c->log.ramp_ns = v;
		return 0;
	case O_INTERVAL:
		if (parse_dur(c, "interval", arg, &v))
			return -1;
		if (v < 1000000)
			return set_err(c, "interval", "must be at least 1ms");
		c->io.interval_ns = c->log.interval_ns = v;
		c->interval_set = true;
		return 0;
	default:
		return 1;
	}
}

/* How raw I/O is issued and capped; 1 if @opt is not one of them. */
static int parse_engine(struct bench_ctx *c, int opt, const char *arg)
{
	char msg[256];

	switch (opt) {
	case O_SQPOLL:
		c->io.sqpoll = true;
		return 0;
	case O_HIPRI:
		c->io.hipri = true;
		return 0;
	case O_NOFIXED:
		c->io.no_fixed = true;
		return 0;
	case O_NOURING:
		c->log.open_flags |= PMWAL_OPEN_NO_URING;
		return 0;
	case O_FDATASYNC:
		c->log.open_flags |= PMWAL_OPEN_FDATASYNC;
		return 0;
	case O_DIRECT:
		if (strcmp(arg, "0") && strcmp(arg, "1"))
			return set_err(c, "direct", "must be 0 or 1");
		c->io.direct = arg[0] == '1';
		if (!c->io.direct)
			c->log.open_flags |= PMWAL_OPEN_BUFFERED_IO;
		return 0;
	case O_RATE_R:
	case O_RATE_W:
		if (parse_rate(arg, &c->io.rate[opt == O_RATE_R ? DIR_READ : DIR_WRITE],
			       msg, sizeof(msg)))
			return set_err(c, opt == O_RATE_R ? "rate-read" : "rate-write",
				       msg);
		return 0;
	case O_RATE:
		return parse_rate_pair(c, arg);
	default:
		return 1;
	}
}

/* Log workload options; 1 if @opt is not one of them. */
static int parse_log(struct bench_ctx *c, int opt, const char *arg)
{
	char msg[256];
	uint64_t v;

	switch (opt) {
	case O_RECORD:
		if (parse_sz(c, "record-size", arg, &v))
			return -1;
		if (!v || v > (16u << 20))
			return set_err(c, "record-size", "must be in 1..16M");
		c->log.record_bytes = (uint32_t)v;
		return 0;
	case O_THREADS:
		return parse_u32(c, "threads", arg, 1024, &c->log.threads);
	case O_COMMIT:
		if (!strcmp(arg, "durable"))
			c->log.commit_policy = PMWAL_COMMIT_DURABLE;
		else if (!strcmp(arg, "buffered"))
			c->log.commit_policy = PMWAL_COMMIT_BUFFERED;
		else
			return set_err(c, "commit", "must be durable or buffered");
		return 0;
	case O_WINDOW:
		if (parse_uint(arg, 0, 1000000, &v, msg, sizeof(msg)))
			return set_err(c, "group-window-us", msg);
		c->log.group_window_us = (uint32_t)v;
		return 0;
	case O_OUTSTANDING:
		return parse_u32(c, "outstanding", arg, 4096, &c->log.outstanding);
	case O_INFLIGHT:
		return parse_u32(c, "groups-in-flight", arg, 4, &c->log.groups_in_flight);
	case O_CAPACITY:
		if (parse_sz(c, "capacity", arg, &v))
			return -1;
		if (v < (1u << 20))
			return set_err(c, "capacity", "must be at least 1M");
		c->log.capacity_bytes = v;
		return 0;
	case O_FOLLOWERS:
		if (parse_uint(arg, 0, BENCH_FOLLOWERS_MAX, &v, msg, sizeof(msg)))
			return set_err(c, "followers", msg);
		c->log.followers = (uint32_t)v;
		return 0;
	case O_FOLLOWER_HOLD:
		c->log.follower_hold = true;
		return 0;
	default:
		return 1;
	}
}

/* fio's output options (fio.h); 1 if @opt is not one of them. */
static int parse_fio(struct bench_ctx *c, int opt, const char *arg)
{
	char msg[256];
	uint64_t v;

	switch (opt) {
	case O_OUTFMT:
		if (fio_output_parse(arg, &c->output_formats, msg, sizeof(msg)))
			return set_err(c, "output-format", msg);
		return 0;
	case O_BW_LOG:
	case O_IOPS_LOG:
		if (!*arg)
			return set_err(c, opt == O_BW_LOG ? "write_bw_log" : "write_iops_log",
				       "needs a file name prefix");
		*(opt == O_BW_LOG ? &c->logs.bw_prefix : &c->logs.iops_prefix) = arg;
		return 0;
	case O_LAT_LOG:
		if (!*arg)
			return set_err(c, "write_lat_log", "needs a file name prefix");
		c->logs.lat_prefix = arg;
		return 0;
	case O_LOG_AVG:
		if (parse_uint(arg, 1, 3600000, &v, msg, sizeof(msg)))
			return set_err(c, "log_avg_msec", msg);
		c->logs.avg_msec = v;
		return 0;
	case O_JOB:
		c->job_file = arg;
		return 0;
	default:
		return 1;
	}
}

/* Targets, sweeps, clients and output; 1 if @opt is not one of them. */
static int parse_misc(struct bench_ctx *c, int opt, const char *arg)
{
	uint32_t u;

	switch (opt) {
	case O_SWEEP:
		return parse_sweep(c, arg);
	case O_TARGET:
		if (c->npos < 4)
			c->pos[c->npos++] = arg;
		return 0;
	case O_CLIENTS:
		if (parse_u32(c, "clients", arg, 16, &u))
			return -1;
		c->clients = u;
		return 0;
	case O_CLIENT_B:
		c->client_b = arg;
		return 0;
	case O_PRIM_TIME:
		return parse_dur(c, "prim-time", arg, &c->prim_ns);
	case O_JSON:
		c->json_path = arg;
		return 0;
	case O_CSV:
		c->csv_dir = arg;
		return 0;
	case 'o':
		c->report_dir = arg;
		return 0;
	case O_FORCE:
		c->force = c->io.force = c->log.force = true;
		return 0;
	case O_QUICK:
		c->quick = true;
		return 0;
	case O_UNTIL_FULL:
		c->until_full = true;
		return 0;
	case O_QUIET:
		c->quiet = true;
		return 0;
	case O_NOPRIM:
		c->no_primitives = true;
		return 0;
	default:
		return 1;
	}
}

static int parse_one(struct bench_ctx *c, int opt, const char *arg)
{
	int (*const groups[])(struct bench_ctx *, int, const char *) = {
	    parse_shape, parse_engine, parse_log, parse_misc, parse_fio};

	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		int ret = groups[i](c, opt, arg);
		if (ret != 1)
			return ret;
	}
	snprintf(c->err, sizeof(c->err), "unknown option (see pmwal bench --help)");
	return -1;
}

int ctx_parse(struct bench_ctx *c, int argc, char **argv)
{
	int opt;

	optind = 0; /* GNU: full re-initialisation, this parser runs more than once */
	while ((opt = cli_getopt(&cli_bench, argc, argv)) != -1) {
		if (opt == 'h') {
			cli_help(stdout, &cli_bench);
			snprintf(c->err, sizeof(c->err), "help");
			return -1;
		}
		if (opt == '?' || opt == ':') {
			cli_option_msg(&cli_bench, opt, argv, c->err, sizeof(c->err));
			return -1;
		}
		if (parse_one(c, opt, optarg))
			return -1;
	}
	for (; optind < argc; optind++) {
		if (c->npos >= 4) {
			snprintf(c->err, sizeof(c->err), "too many targets");
			return -1;
		}
		c->pos[c->npos++] = argv[optind];
	}
	return 0;
}

void ctx_note_status(struct bench_ctx *c, int err)
{
	int st = err == PMWAL_BENCH_EUSAGE ? BENCH_EXIT_USAGE : err ? BENCH_EXIT_FAIL : 0;

	if (st == BENCH_EXIT_USAGE || (st && c->status == 0))
		c->status = st;
}

void ctx_add_target(struct bench_ctx *c, const char *target)
{
	json_t *v;
	size_t i;

	/* Probed while the target exists: default targets are deleted later. */
	json_array_foreach(c->targets, i, v)
	{
		if (!strcmp(json_string_value(json_object_get(v, "target")), target))
			return;
	}
	json_array_append_new(c->targets, target_env_json(target));
}

static void ctx_init(struct bench_ctx *c)
{
	memset(c, 0, sizeof(*c));
	io_spec_defaults(&c->io);
	log_spec_defaults(&c->log);
	c->clients = 1;
	c->fill_bytes = UINT64_C(1) << 30;
	c->prim_ns = 1000000000ull;
	c->root = root_new();
	c->targets = json_array();
}

static const char *io_target(struct bench_ctx *c, int i, int role, char *label,
			     size_t len)
{
	return target_resolve(c->npos > i ? c->pos[i] : "flash", role, label, len);
}

/* A fio job file named as a target would be overwritten by a write
 * workload; the user meant --job. */
static int refuse_job_file_target(struct bench_ctx *c)
{
	if (c->npos && fio_file_is_job_file(c->pos[0])) {
		snprintf(c->err, sizeof(c->err),
			 "%s looks like a fio job file, not a target; to run its jobs: "
			 "pmwal bench io --job %s",
			 c->pos[0], c->pos[0]);
		return -1;
	}
	return 0;
}

/* A log another process is writing (another bench run?) is not touched:
 * not truncated, re-created or written over; -1 with c->err (exit 2). */
static int refuse_live_writer(struct bench_ctx *c, const char *target)
{
	return log_check_no_writer(target, c->err, sizeof(c->err)) ? -1 : 0;
}

static int mode_io(struct bench_ctx *c)
{
	char label[48];

	if (c->jobs)
		return fio_job_file_run(c);
	c->io.target = io_target(c, 0, 0, label, sizeof(label));
	if (refuse_live_writer(c, c->io.target))
		return -1;
	if (c->clients > 1 || c->client_b)
		return run_dual(c);
	if (c->nsweep)
		run_sweep_io(c, &c->io, label);
	else
		run_io_job(c, &c->io, label);
	return 0;
}

static int mode_log(struct bench_ctx *c)
{
	char label[48];

	c->log.target = io_target(c, 0, 1, label, sizeof(label));
	if (refuse_live_writer(c, c->log.target))
		return -1;
	if (c->nsweep)
		run_sweep_log(c, &c->log, label);
	else
		run_log_job(c, &c->log, label);
	/* The floor the medium sets: each durability primitive alone. */
	if (!c->no_primitives && !bench_stop)
		run_primitives(c, c->log.target, label);
	return 0;
}

static int mode_recovery(struct bench_ctx *c)
{
	char label[48];
	const char *t = io_target(c, 0, 1, label, sizeof(label));

	if (refuse_live_writer(c, t))
		return -1;
	run_recovery(c, t, label, c->fill_bytes, c->log.record_bytes);
	return 0;
}

static int mode_primitives(struct bench_ctx *c)
{
	char label[48];
	const char *t = io_target(c, 0, 0, label, sizeof(label));

	/* A region's primitives write its start (a file's write beside it). */
	if (target_is_region(t) && refuse_live_writer(c, t))
		return -1;
	run_primitives(c, t, label);
	return 0;
}

/* Modes whose jobs must not be mixed up with a target named like a mode. */
static const struct {
	const char *name;
	int (*run)(struct bench_ctx *c);
} modes[] = {
    {"io", mode_io},
    {"log", mode_log},
    {"recovery", mode_recovery},
    {"primitives", mode_primitives},
    {"dual", run_dual},
    {"compare", run_compare},
    {"suite", run_suite},
};

/* JSON as --output-format says: json+ keeps clat_ns.bins, json drops them;
 * "-" is stdout. */
static int json_write_format(struct bench_ctx *c, const char *opt, const char *path)
{
	bool plus = c->output_formats & FIO_OUT_JSON_PLUS;
	json_t *out = plus ? json_incref(c->root) : fio_root_without_bins(c->root);
	int ret = 0;

	if (!strcmp(path, "-")) {
		FILE *f = c->json_out ? c->json_out : stdout;
		if (json_dumpf(out, f, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) ||
		    fputc('\n', f) == EOF || fflush(f)) {
			snprintf(c->err, sizeof(c->err), "cannot write the JSON to stdout: %s",
				 strerror(errno));
			ret = -1;
		}
	} else {
		ret = json_write(out, opt, path, c->err, sizeof(c->err));
	}
	json_decref(out);
	return ret;
}

static int write_fio_outputs(struct bench_ctx *c)
{
	if (c->json_path && json_write_format(c, "--json", c->json_path))
		return -1;
	if (c->output_formats & FIO_OUT_TERSE) {
		FILE *f = c->json_out ? c->json_out : stdout;
		fio_terse_write(c->root, f);
		if (fflush(f)) {
			snprintf(c->err, sizeof(c->err), "cannot write to stdout: %s",
				 strerror(errno));
			return -1;
		}
	}
	if ((c->logs.bw_prefix || c->logs.iops_prefix || c->logs.lat_prefix) &&
	    fio_logs_write(c->root, &c->logs, c->err, sizeof(c->err)))
		return -1;
	return 0;
}

static void restore_stdout(struct bench_ctx *c)
{
	if (!c->json_out)
		return;
	fflush(stdout);
	dup2(fileno(c->json_out), STDOUT_FILENO);
	fclose(c->json_out);
	c->json_out = NULL;
}

/* A log file prefix whose directory cannot take files is bad input, said
 * before the run rather than after it. */
static int check_log_prefix(struct bench_ctx *c, const char *prefix, const char *opt)
{
	static const char *const lat[] = {"lat", "clat", "slat", NULL};
	static const char *const bw[] = {"bw", NULL}, *const iops[] = {"iops", NULL};
	const char *const *kinds = !strcmp(opt, "write_bw_log")	    ? bw
				   : !strcmp(opt, "write_iops_log") ? iops
								    : lat;
	char dir[4096], name[4200], o[32];

	if (!prefix)
		return 0;
	if (parent_dir_writable(prefix, dir, sizeof(dir))) {
		snprintf(c->err, sizeof(c->err),
			 "--%s %s: %s is not a directory this run can write to", opt,
			 prefix, dir);
		return -1;
	}
	/* The directory's rule (outfile.h), and no link or file of another
	 * user's under the first job's log names. */
	snprintf(o, sizeof(o), "--%s", opt);
	for (; *kinds; kinds++) {
		snprintf(name, sizeof(name), "%s_%s.1.log", prefix, *kinds);
		if (out_path_check(o, name, c->err, sizeof(c->err)))
			return -1;
	}
	return 0;
}

/* --json FILE, checked before the run (not after it, the results lost):
 * writable, a regular file, and not the name of one of the run's logs. */
static int check_json_path(struct bench_ctx *c)
{
	const char *p = c->json_path;
	const char *const pre[] = {c->logs.bw_prefix, c->logs.iops_prefix,
				   c->logs.lat_prefix};

	if (!p || !strcmp(p, "-"))
		return 0;
	if (output_file_check("--json", p, c->err, sizeof(c->err)))
		return -1;
	for (size_t i = 0; i < 3; i++)
		if (fio_log_would_write(pre[i], p)) {
			snprintf(
			    c->err, sizeof(c->err),
			    "--json %s is a name the run's log (prefix %s) would "
			    "write too, and one would replace the other; name another",
			    p, pre[i]);
			return -1;
		}
	return 0;
}

/* -o DIR and --csv DIR, checked before the run (as --json FILE): a run of
 * minutes must not end unable to write what it measured. */
static int check_output_dirs(struct bench_ctx *c)
{
	static const char *const report[] = {"result.json", "jobs.csv", "series.csv",
					     "index.html", NULL};
	static const char *const csv[] = {"jobs.csv", "series.csv", NULL};

	if (c->report_dir &&
	    output_dir_check("-o", c->report_dir, report, c->err, sizeof(c->err)))
		return -1;
	if (c->csv_dir &&
	    output_dir_check("--csv", c->csv_dir, csv, c->err, sizeof(c->err)))
		return -1;
	return 0;
}

/* fio's options, checked before anything runs: where JSON and terse go,
 * --log_avg_msec as the interval, a job file read (bad input: -1 with
 * c->err, exit 2). */
static int settle_fio_options(struct bench_ctx *c, int (*run)(struct bench_ctx *))
{
	bool json = c->output_formats & (FIO_OUT_JSON | FIO_OUT_JSON_PLUS);
	bool terse = c->output_formats & FIO_OUT_TERSE;

	if (json && !c->json_path)
		c->json_path = "-";
	if (terse && c->json_path && !strcmp(c->json_path, "-")) {
		snprintf(c->err, sizeof(c->err),
			 "--output-format terse and JSON would share stdout; give the "
			 "JSON a file (--json FILE)");
		return -1;
	}
	if (c->logs.avg_msec) {
		uint64_t ns = c->logs.avg_msec * 1000000ull;
		if (c->interval_set && c->io.interval_ns != ns) {
			snprintf(c->err, sizeof(c->err),
				 "--log_avg_msec and --interval give two intervals; "
				 "give one");
			return -1;
		}
		c->io.interval_ns = c->log.interval_ns = ns;
	}
	if ((run == mode_io || run == mode_log) && refuse_job_file_target(c))
		return -1;
	if (c->job_file && run != mode_io) {
		snprintf(c->err, sizeof(c->err), "--job: only bench io runs fio job files");
		return -1;
	}
	if (c->job_file && (c->nsweep || c->clients > 1 || c->client_b)) {
		snprintf(c->err, sizeof(c->err),
			 "--job runs the file's jobs as they are; --sweep, --clients and "
			 "--b do not apply (write one section per point instead)");
		return -1;
	}
	if (check_log_prefix(c, c->logs.bw_prefix, "write_bw_log") ||
	    check_log_prefix(c, c->logs.iops_prefix, "write_iops_log") ||
	    check_log_prefix(c, c->logs.lat_prefix, "write_lat_log") ||
	    check_json_path(c) || (c->job_file && fio_job_file_load(c, c->job_file)))
		return -1;
	if (terse || (c->json_path && !strcmp(c->json_path, "-"))) {
		/* stdout holds the JSON (or the terse lines) and nothing
		 * else: whatever a mode prints (the table with 'normal'
		 * too) goes to stderr until restore_stdout(). */
		int fd = dup(STDOUT_FILENO);
		fflush(stdout);
		if (fd < 0 || !(c->json_out = fdopen(fd, "w")) ||
		    dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			snprintf(c->err, sizeof(c->err), "--json -: %s", strerror(errno));
			if (fd >= 0 && !c->json_out)
				close(fd);
			restore_stdout(c);
			return -1;
		}
		c->quiet |= !(c->output_formats & FIO_OUT_NORMAL);
	}
	return 0;
}

static int write_outputs(struct bench_ctx *c)
{
	char path[4096];

	json_object_set_new(json_object_get(c->root, "pmwal"), "environment",
			    environment_json(NULL, 0, NULL));
	json_object_set_new(
	    json_object_get(json_object_get(c->root, "pmwal"), "environment"), "command",
	    json_string(c->command));
	json_t *env = json_object_get(json_object_get(c->root, "pmwal"), "environment");
	json_array_extend(json_object_get(env, "targets"), c->targets);
	if (write_fio_outputs(c))
		return -1;
	if (c->csv_dir && csv_write(c->root, "--csv", c->csv_dir, c->err, sizeof(c->err)))
		return -1;
	if (!c->report_dir)
		return 0;
	int dfd = out_dir_open("-o", c->report_dir, true, c->err, sizeof(c->err));
	if (dfd < 0)
		return -1;
	close(dfd);
	snprintf(path, sizeof(path), "%s/result.json", c->report_dir);
	if (json_write_format(c, "-o", path) ||
	    csv_write(c->root, "-o", c->report_dir, c->err, sizeof(c->err)) ||
	    report_html(&c->root, 1, c->report_dir, c->err, sizeof(c->err)))
		return -1;
	if (!c->quiet)
		printf("report: %s/index.html (result.json, jobs.csv, series.csv)\n",
		       c->report_dir);
	return 0;
}

/* Default targets (pmwal-bench.dat/.wal) are scratch files: never leave 1 GiB behind. */
static void remove_owned_targets(struct bench_ctx *c)
{
	json_t *v;
	size_t i;

	json_array_foreach(c->targets, i, v)
	{
		const char *t = json_string_value(json_object_get(v, "target"));
		if (t)
			target_remove_owned(t);
	}
}

int cmd_bench(int argc, char **argv)
{
	struct bench_ctx c;
	int (*run)(struct bench_ctx *) = run_suite;
	int first = 1;

	ctx_init(&c);
	if (argc > 1) {
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
			if (!strcmp(argv[1], modes[i].name)) {
				run = modes[i].run;
				c.mode = modes[i].name;
				first = 2;
			}
		}
	}
	if (!c.mode)
		c.mode = "suite";
	size_t at = (size_t)snprintf(c.command, sizeof(c.command), "pmwal");
	for (int i = 0; i < argc && at < sizeof(c.command); i++)
		at += (size_t)snprintf(c.command + at, sizeof(c.command) - at, " %s",
				       argv[i]);
	if (ctx_parse(&c, argc - first + 1, argv + first - 1)) {
		bool help = !strcmp(c.err, "help");
		if (!help)
			fprintf(stderr, "pmwal bench: %s\n", c.err);
		json_decref(c.root);
		json_decref(c.targets);
		return help ? 0 : BENCH_EXIT_USAGE;
	}
	if (run == run_suite && first == 1 && c.npos) {
		struct stat st;
		bool path = stat(c.pos[0], &st) == 0 || strchr(c.pos[0], '/');
		fprintf(stderr,
			"pmwal bench: unknown mode '%s' (modes: io, log, recovery, "
			"primitives, dual, compare, suite)%s%s\n",
			c.pos[0],
			path ? "; to measure a file or device: pmwal bench io " : "",
			path ? c.pos[0] : "");
		json_decref(c.root);
		json_decref(c.targets);
		return BENCH_EXIT_USAGE;
	}
	if (c.log.follower_hold && !c.log.followers) {
		fprintf(stderr, "pmwal bench: --follower-hold: give --followers N too\n");
		json_decref(c.root);
		json_decref(c.targets);
		return BENCH_EXIT_USAGE;
	}
	if (c.log.followers && run != mode_log) {
		fprintf(stderr,
			"pmwal bench: --followers: only bench log has followers\n");
		json_decref(c.root);
		json_decref(c.targets);
		return BENCH_EXIT_USAGE;
	}
	if (c.io.size_pct && run != mode_io && run != run_dual) {
		fprintf(stderr,
			"pmwal bench: --size %u%%: a share of an existing file's or "
			"device's size is for bench io and dual; give bench %s a size "
			"in bytes (e.g. --size 1g)\n",
			c.io.size_pct, c.mode);
		json_decref(c.root);
		json_decref(c.targets);
		return BENCH_EXIT_USAGE;
	}
	if (run == run_suite && !c.report_dir)
		c.report_dir = "pmwal-report";
	if (check_output_dirs(&c) || settle_fio_options(&c, run)) {
		fprintf(stderr, "pmwal bench: %s\n", c.err);
		json_decref(c.root);
		json_decref(c.targets);
		return BENCH_EXIT_USAGE;
	}
	bench_stop = 0;
	bench_install_sigint();
	(void)bench_clock_name(); /* calibrate before any thread reads the clock */
	if (!c.quiet) {
		int width = 0;

		for (int i = 0; i < c.npos; i++)
			if ((int)strlen(c.pos[i]) > width)
				width = (int)strlen(c.pos[i]);
		table_header(width);
	}
	if (run(&c) < 0) {
		fprintf(stderr, "pmwal bench: %s\n", c.err);
		ctx_note_status(&c, PMWAL_BENCH_EUSAGE);
	}
	if (bench_stop) {
		fprintf(stderr, "pmwal bench: interrupted; writing what was measured\n");
		json_object_set_new(json_object_get(c.root, "pmwal"), "interrupted",
				    json_true());
		ctx_note_status(&c, -EINTR);
	}
	if (json_array_size(json_object_get(c.root, "jobs")) && write_outputs(&c)) {
		fprintf(stderr, "pmwal bench: %s\n", c.err);
		ctx_note_status(&c, -EIO);
	}
	remove_owned_targets(&c);
	restore_stdout(&c);
	json_decref(c.root);
	json_decref(c.targets);
	return c.status;
}
