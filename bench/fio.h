/* SPDX-License-Identifier: MIT */
/*
 * fio.h - what makes pmwal bench's output readable by fio's own tools
 * (fio_jsonplus_clat2csv, fio2gnuplot, fio-plot style parsers) and lets a
 * fio job file drive `pmwal bench io`: fio's latency bin scheme, fio's
 * option and size spellings, the output formats, fio's log files, and the
 * job file reader (fiojob.c).
 *
 * fio 3.33 is the reference: its stat.h/stat.c for the bins and the json
 * keys, its iolog.c for the log line format, its parse.c for sizes.
 */
#ifndef PMWAL_BENCH_FIO_H
#define PMWAL_BENCH_FIO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "hist.h"

/* fio's stat.h: FIO_IO_U_PLAT_BITS 6, FIO_IO_U_PLAT_VAL 64, 29 groups. Each
 * power of two above 128 ns is split into 64 bins; below 128 every value
 * has its own bin. pmwal's histogram splits it into 128 (hist.h), aligned
 * on the same powers of two, so every pmwal bucket falls inside exactly one
 * fio bin and the conversion loses no count. */
#define FIO_PLAT_BITS	  6
#define FIO_PLAT_VAL	  (1u << FIO_PLAT_BITS)
#define FIO_PLAT_GROUP_NR 29
#define FIO_PLAT_NR	  (FIO_PLAT_GROUP_NR * FIO_PLAT_VAL)

/* The version of the "pmwal" block's layout, bench/schema/pmwal-bench.schema.json. */
#define PMWAL_BENCH_SCHEMA_VERSION 1

unsigned fio_plat_val_to_idx(uint64_t ns);
/* The value fio prints as the bin's key: the middle of the bin. */
uint64_t fio_plat_idx_to_val(unsigned idx);
/* clat_ns.bins as json+ writes it: {"ns": count} for non-empty bins. */
json_t *fio_bins_json(const struct hist *h);
/* latency_ns, latency_us and latency_ms (percent of I/Os per bucket) into
 * @job from @h, all directions merged, as fio's stat_calc_lat_* do. */
void fio_latency_buckets(json_t *job, const struct hist *h);
/* fio's spelling of a size: 4096 -> "4k", 1048576 -> "1m", 1000 -> "1000". */
void fio_size_str(char *buf, size_t len, uint64_t bytes);
/* "job options" as fio writes them (fio's names, string values) from the
 * options of any pmwal job (io, log, primitive, recovery): every job has rw,
 * bs and iodepth. */
json_t *fio_job_options(json_t *opts);

enum fio_output_format {
	FIO_OUT_NORMAL = 1,
	FIO_OUT_JSON = 2,
	FIO_OUT_JSON_PLUS = 4,
	FIO_OUT_TERSE = 8,
};
/* "normal", "json", "json+", "terse" or a comma list; -1 with @err. */
int fio_output_parse(const char *s, unsigned *formats, char *err, size_t errlen);
/* fio's terse v3 line per job, from the JSON (stat.c show_thread_status_terse):
 * 121 fields; pmwal has no disk utilisation to append. */
void fio_terse_write(json_t *root, FILE *f);
/* @root without the bins (plain json): a new reference. */
json_t *fio_root_without_bins(json_t *root);

struct fio_logs {
	const char *bw_prefix;	 /* --write_bw_log */
	const char *iops_prefix; /* --write_iops_log */
	const char *lat_prefix;	 /* --write_lat_log: PREFIX_{lat,clat,slat}.N.log */
	uint64_t avg_msec;	 /* --log_avg_msec (0: the series' interval) */
};
/* PREFIX_bw.N.log, PREFIX_iops.N.log for job N (1-based, in @root's order),
 * from each job's pmwal.series: "time_ms, value, ddir, 0, 0" per interval
 * and direction (bw in KiB/s), fio's format with log_avg_msec. */
int fio_logs_write(json_t *root, const struct fio_logs *l, char *err, size_t errlen);

/* Sizes as fio parses them (parse.c, kb_base=1024): 4k, 4K, 4kb, 4KiB and
 * 4096 are all 4096; the suffixes are k, m, g, t, p with optional b/ib;
 * case does not matter. Unlike pmwal's --size, "4KB" is 4096 too (fio
 * counts in powers of 2 unless kb_base=1000, which fiojob.c honours).
 * 0 or -1 with @err. */
int fio_parse_size(const char *s, unsigned kb_base, uint64_t *bytes, char *err,
		   size_t errlen);

/* Whether @path is a regular file whose first line that is not blank or a
 * comment is an ini section header ("[global]", "[job]"): a fio job file. */
bool fio_file_is_job_file(const char *path);

#endif
