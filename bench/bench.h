/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what the pieces of `pmwal bench` and `pmwal report` share: the
 * description of one run (struct io_spec, struct log_spec), its raw result
 * (struct run_result, per direction histograms and a time series), the
 * parsers for fio-style option values, and the stop flag set by SIGINT.
 *
 * Every result is turned into one fio-shaped JSON job (result.c) as soon as
 * it is measured; the terminal table, CSV, HTML report, compare and dual
 * modes all read that JSON, so there is one description of a result.
 */
#ifndef PMWAL_BENCH_H
#define PMWAL_BENCH_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "pmwal.h"

#define BENCH_EXIT_OK	 0
#define BENCH_EXIT_FAIL	 1
#define BENCH_EXIT_USAGE 2
/* run_result.err for bad input or a refused feature: exit status 2. */
#define PMWAL_BENCH_EUSAGE (-2000)

enum { DIR_READ = 0, DIR_WRITE = 1, DIR_COUNT = 2 };

enum io_rw {
	RW_READ,
	RW_WRITE,
	RW_RANDREAD,
	RW_RANDWRITE,
	RW_RANDRW,
	RW_RW, /* sequential mix */
};

/* A per-direction cap: absolute bytes/s, or a percentage of the maximum
 * measured first with the same workload in that direction alone. */
struct rate_cap {
	uint64_t bytes_per_s;
	double pct;
};

/* One raw I/O run (fio's job with numjobs copies). */
struct io_spec {
	const char *target;
	char label[48]; /* "flash", "emulated pmem", or "" */
	int rw;		/* enum io_rw */
	int rwmixread;	/* percent of reads in a mix */
	uint32_t bs_bytes;
	uint32_t iodepth;
	uint32_t numjobs;
	uint32_t batch_submit; /* submit after this many queued (fio's default: 1) */
	uint64_t size_bytes;   /* bytes of the target used; 0: its size / default */
	uint32_t size_pct;     /* 1..100: size_bytes is that share of the existing
				* target's size (fio's size=N%), set by
				* io_resolve_size(); 0: size_bytes as given */
	uint64_t runtime_ns;   /* 0: one pass over size_bytes */
	uint64_t ramp_ns;
	uint64_t interval_ns; /* time-series interval */
	bool direct;
	bool sqpoll;
	bool hipri;
	bool force;
	bool no_fixed; /* no registered buffers/files (for comparison) */
	struct rate_cap rate[DIR_COUNT];
};

/* One pmwal log run (bench log). */
struct log_spec {
	const char *target;
	char label[48];
	uint32_t record_bytes;
	uint32_t threads;
	uint32_t commit_policy; /* enum pmwal_commit_policy */
	uint32_t group_window_us;
	uint32_t outstanding; /* buffered: appends awaiting durability per thread
			       * (0: the default, 4096) */
	uint32_t groups_in_flight; /* options.groups_in_flight (0: the default) */
	uint64_t capacity_bytes;
	uint64_t runtime_ns;
	uint64_t ramp_ns;
	uint64_t interval_ns;
	uint32_t open_flags; /* extra PMWAL_OPEN_* */
	uint32_t followers;  /* processes following the log (follow.c), 0..16 */
	bool follower_hold;  /* the log keeps what a follower has yet to read */
	bool force;
};

/* One interval of a time series. p99 of the interval: the largest of the
 * per-thread p99s (an upper bound; exact with one thread). */
struct series_point {
	uint64_t bytes[DIR_COUNT];
	uint64_t ops[DIR_COUNT];
	uint64_t p99_ns[DIR_COUNT];
	uint64_t lat_sum_ns[DIR_COUNT]; /* the mean is lat_sum_ns / ops */
};

struct series {
	uint64_t interval_ns;
	uint32_t count;
	uint32_t cap;
	struct series_point *pt;
};

struct dir_result {
	uint64_t ops;
	uint64_t bytes;
	struct hist lat;
};

struct run_result {
	struct dir_result dir[DIR_COUNT];
	uint64_t runtime_ns;
	double usr_s;
	double sys_s;
	uint64_t ctx_switches;
	struct series series;
	bool interrupted;
	int err; /* 0, -errno or PMWAL_E*: the run failed */
	char errmsg[1024]; /* paths and who owns them: room for a few */
	char engine[96]; /* how the I/O was done, e.g. "io_uring fixed" */
	bool emulated;
};

/* --- util.c ------------------------------------------------------------- */
extern volatile sig_atomic_t bench_stop;
void bench_install_sigint(void);
uint64_t now_ns(void);
const char *bench_clock_name(void); /* what now_ns() reads */
void sleep_ns(uint64_t ns);
uint64_t rng_next(uint64_t *state);

/* Parsers: 0 on success, -1 with a message in @err (what and why). */
int parse_size(const char *s, uint64_t *bytes, char *err, size_t errlen);
int parse_duration(const char *s, uint64_t *ns, char *err, size_t errlen);
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err,
	       size_t errlen);
int parse_rate(const char *s, struct rate_cap *cap, char *err, size_t errlen);
int parse_rw(const char *s, int *rw, char *err, size_t errlen);
const char *rw_name(int rw);
bool rw_is_random(int rw);
bool rw_has_dir(int rw, int dir);
/* "1,2,4..256": a list; "a..b" doubles from a up to b. At most @max values. */
int parse_list(const char *s, bool sizes, uint64_t *vals, int max, int *count, char *err,
	       size_t errlen);
void fmt_bytes(char *buf, size_t len, double bytes);
/* What a file of mode @m is, for messages ("a directory", "a FIFO", ...). */
const char *file_kind(mode_t m);
/* The directory @path's file is or would be in, into @dir ("." for a bare
 * name, "/" for one in the root); 0 when it is a directory this process can
 * create files in, else -1 with errno set. */
int parent_dir_writable(const char *path, char *dir, size_t len);
void fmt_ns(char *buf, size_t len, double ns);

/* Token bucket (GCRA) for one direction; not thread safe (one per job). */
struct limiter {
	double ns_per_byte; /* 0: unlimited */
	uint64_t next_ns;
};
void limiter_init(struct limiter *l, uint64_t bytes_per_s);
/* 0 if @bytes may go now (and charges them); else ns to wait. */
uint64_t limiter_take(struct limiter *l, uint64_t now, uint64_t bytes);

/* Progress line on a TTY only. */
void progress_begin(const char *phase, uint64_t total_ns);
void progress_update(uint64_t elapsed_ns);
void progress_end(void);
/* Work of known size (laying out a file): percent done instead of time. */
void progress_fraction(uint64_t done, uint64_t total);
extern uint64_t progress_suite_left_ns;
/* Operations and bytes measured so far (series.c adds each closed interval;
 * atomic): the progress line shows their rate. */
extern uint64_t progress_ops, progress_bytes;
extern char progress_job[96]; /* what runs now, shown after the phase */

/* --- series.c ----------------------------------------------------------- */
int series_init(struct series *s, uint64_t interval_ns, uint64_t runtime_ns);
void series_free(struct series *s);
int series_grow(struct series *s, uint32_t count);
void series_merge(struct series *dst, const struct series *src);
json_t *series_json(const struct series *s, const struct run_result *r);

/* Per-thread accounting shared by io.c and log.c. */
struct thread_stats {
	struct dir_result dir[DIR_COUNT];
	struct hist ival[DIR_COUNT];
	struct series series;
	uint32_t cur;	   /* current interval index */
	uint64_t start_ns; /* measured window start (after ramp) */
	uint64_t end_ns;   /* measured window end (0: open) */
};
int tstats_init(struct thread_stats *t, uint64_t interval_ns, uint64_t runtime_ns);
void tstats_free(struct thread_stats *t);
/* Record one completed op; ignored outside [start_ns, end_ns). */
void tstats_record(struct thread_stats *t, int dir, uint64_t bytes, uint64_t lat_ns,
		   uint64_t done_ns);
void tstats_finish(struct thread_stats *t);
void result_merge_thread(struct run_result *r, const struct thread_stats *t);

/* --- result.c ----------------------------------------------------------- */
struct run_result *result_new(void);
void result_free(struct run_result *r);
/* A fio-shaped job: read/write with iops, bw_bytes, clat_ns... and a
 * "pmwal" section (series, cliff, cpu per I/O, label). Caller owns it. */
json_t *result_job_json(const char *jobname, const char *phase, const char *target,
			const char *label, const struct run_result *r, json_t *options);
/* The results table: @target_width, the longest target named (16 at least). */
void table_header(int target_width);
void table_row(json_t *job);
json_t *clat_json(const struct hist *h);
/* Write @root's CSV files (jobs.csv, series.csv) into @dir, made if missing,
 * and the JSON to @path, by outfile.h's rule; @opt names the option for
 * messages. 0, or -1 with @err. */
int csv_write(json_t *root, const char *opt, const char *dir, char *err, size_t errlen);
int json_write(json_t *root, const char *opt, const char *path, char *err, size_t errlen);
/* An output file named by @opt ("--json"), checked before the run: a regular
 * file (or /dev/null) this run can write, or a free name in a writable
 * directory; -1 with @err naming what is wrong (a FIFO, a directory). */
int output_file_check(const char *opt, const char *path, char *err, size_t errlen);
/* A directory named by @opt ("-o", "--csv") that the run writes @names
 * (NULL-terminated: "result.json", ...) into, checked before the run: an
 * existing directory this run can write, whose @names are free or regular
 * files, or a free name in a writable directory (created after the run);
 * -1 with @err naming the path and what is wrong. */
int output_dir_check(const char *opt, const char *dir, const char *const *names,
		     char *err, size_t errlen);
/* @s as one shell word: as it is when it holds only safe characters, else in
 * single quotes, each ' written '\'' (a command a user pastes). */
void shell_quote(const char *s, char *out, size_t len);
/* Whether a fio log under @prefix (PREFIX_bw.N.log, _iops, _lat, _clat,
 * _slat) would be @path, so one output would replace the other. */
bool fio_log_would_write(const char *prefix, const char *path);
json_t *root_new(void);
void root_add_job(json_t *root, json_t *job);

/* --- io.c --------------------------------------------------------------- */
void io_spec_defaults(struct io_spec *s);
/* Run @spec; returns a result (check ->err) or NULL on allocation failure. */
struct run_result *io_run(const struct io_spec *spec);
/* --size N%: @spec->size_bytes = N% of the size its target has now (a
 * regular file's length, a block device's, a region's). 0 (nothing to do
 * without a percentage), or -1 with @err where there is no size to take a
 * share of: a file that does not exist yet, an empty one. */
int io_resolve_size(struct io_spec *spec, char *err, size_t errlen);
/* Turn percentage caps into bytes/s, measuring each direction's maximum
 * alone first; @notes (may be NULL) gets what was measured. */
void io_resolve_caps(struct io_spec *spec, json_t *notes);
/* Same as io_run, but resolves percentage rate caps first. */
struct run_result *io_run_capped(struct io_spec *spec, json_t *notes);
json_t *io_options_json(const struct io_spec *s);
/* The fio command that runs the same job, in @buf; false, with why not in
 * @buf, for a target fio cannot open (target_no_fio). */
bool io_fio_command(const struct io_spec *s, char *buf, size_t len);
/* Why fio has no equivalent for @target (a PMR, a fake PMR, sim:), in @buf;
 * false where it has one (a file, a block device, pmem, device-DAX). */
bool target_no_fio(const char *target, char *buf, size_t len);
void io_jobname(const struct io_spec *s, char *buf, size_t len);

/* --- target.c ----------------------------------------------------------- */
/* What @target names, by pmwal_target_parse() (the library's one parser of
 * targets); a malformed target keeps the kind its prefix names. */
enum pmwal_target_kind target_kind(const char *target);
/* The file or device node bench reaches @target through: PATH, or the path
 * after file: or pmem: (/dev/daxX.Y too); NULL for pmr:, fakepmr: and sim:. */
const char *target_file(const char *target);
/* A persistent region (pmem:, /dev/dax, pmr:, fakepmr:): measured through pmr/. */
bool target_is_region(const char *target);
/* Refuse (-1, message) a file target in a directory another user controls
 * (outfile.h's rule), or a link another user made: --force does not apply. */
int target_place_check(const char *t, char *err, size_t errlen);
/* Refuse (-1, message) to write to a filesystem or pmwal log without force;
 * target_place_check() first. */
int target_check_writable(const char *path, bool force, char *err, size_t errlen);
/* Resolve "flash"/"pmem"/"emulated" to the default targets; fills @label. */
/* @role: 0 raw I/O data file, 1 log. */
const char *target_resolve(const char *t, int role, char *label, size_t labellen);
/* Deletes @t's file when it has a default name (pmwal-bench.{dat,wal},
 * pmwal-bench-pmr.{dat,wal}) and bench's mark: never leave 1 GiB behind, and
 * never delete a user's file of that name. */
void target_remove_owned(const char *t);
/* The file behind @t (PATH, file:, pmem:, fakepmr: without its options): 0,
 * or -1 where @t has none (a device-DAX, pmr:, sim:). */
int target_path(const char *t, char *buf, size_t len);
/* A run owns only the file it creates (O_EXCL, never through a symlink),
 * marked on creation (xattr user.pmwal.bench, or PATH.pmwal-bench where the
 * filesystem has no user xattrs): target_claim creates @t's file if the name
 * is free (true: created, claimed; false with errno set);
 * a claimed file is written over without --force, by this run or the next;
 * target_unclaim deletes a claimed file and its marker; target_reset_scratch
 * empties a claimed file (a log run starts from a fresh log). */
bool target_claim(const char *t);
bool target_is_scratch(const char *t);
void target_unclaim(const char *t);
void target_reset_scratch(const char *t);
/* One target's facts (kind, sector sizes, model, probe). */
json_t *target_env_json(const char *t);
json_t *environment_json(const char **targets, int ntargets, json_t *options);

/* --- log.c / recovery.c ------------------------------------------------- */
void log_spec_defaults(struct log_spec *s);
struct run_result *log_run(const struct log_spec *spec, json_t **extra);
json_t *log_options_json(const struct log_spec *s);
/* PMWAL_BENCH_EUSAGE with @err when a live writer (pmwal_writer_pid) holds
 * the log at @target (another run: bench must not truncate or write it),
 * else 0. Checked before anything is created, emptied or written. */
int log_check_no_writer(const char *target, char *err, size_t errlen);
void log_jobname(const struct log_spec *s, char *buf, size_t len);
/* Cost of each durability primitive alone on @target; array of jobs. @all:
 * pg_test_fsync's whole list (bench primitives), else its core. */
json_t *primitives_run(const char *target, const char *label, uint64_t each_ns,
		       bool all, bool force, char *err, size_t errlen);
/* Returns the job, or NULL with @err and *@usage (true: bad input, exit 2). */
json_t *recovery_run(const char *target, const char *label, uint64_t fill_bytes,
		     uint32_t record_bytes, bool force, bool *usage, char *err,
		     size_t errlen);

/* --- follow.c ----------------------------------------------------------- */
#define BENCH_FOLLOWERS_MAX 16
struct followers;
/* Fork @s->followers processes that wait for the log at @s->target to
 * exist; 0 or -errno with @err. */
int followers_fork(const struct log_spec *s, struct followers **out, char *err,
		   size_t errlen);
/* The log is open for writing and its first record will be @first_lsn: the
 * followers open it read-only; returns once each follows it (0), or the
 * first follower's error with @err. */
int followers_open(struct followers *f, uint64_t first_lsn, char *err, size_t errlen);
/* Lag counts for deliveries from @start_ns on (the end of the ramp). */
void followers_window(struct followers *f, uint64_t start_ns);
/* The writer learned @lsn durable at @ack_ns. Any thread. */
void followers_ack(struct followers *f, uint64_t lsn, uint64_t ack_ns);
/* The lowest LSN a follower has yet to read (UINT64_MAX: none follows). */
uint64_t followers_needed_lsn(struct followers *f);
/* Whether a follower failed (any thread), or also reaping those that
 * exited or died (the thread that forked them only). */
bool followers_failed(struct followers *f);
bool followers_poll(struct followers *f);
/* The writer stopped at @end_lsn: wait (bounded) until each follower
 * delivered it, check what each delivered, and describe it in *@section
 * (pmwal.log.followers). 0, or the first follower's error with @err. */
int followers_stop(struct followers *f, uint64_t end_lsn, json_t **section, char *err,
		   size_t errlen);
/* The bytes every appender appends (followers check each delivery). */
const uint8_t *followers_record(const struct followers *f);
/* Kills and reaps followers still running. Accepts NULL. */
void followers_free(struct followers *f);
/* Into @job's pmwal.log.followers: the writer's ops/s alone (@alone), with
 * the followers, and the ratio. */
void followers_compare(json_t *job, json_t *alone);
void followers_print(json_t *job);

/* --- report.c ----------------------------------------------------------- */
int report_html(json_t **roots, int nroots, const char *dir, char *err, size_t errlen);

#endif
