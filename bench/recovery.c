// SPDX-License-Identifier: MIT
/*
 * recovery.c - `pmwal bench recovery`: fill a log of a given size through
 * the public API, close it, then time pmwal_open(), which runs recovery over
 * everything written. Reported as seconds per GiB with the verdict, beside
 * the raw sequential read bandwidth of the same file (the bound recovery is
 * measured against).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pmwal.h"

/* Records per appendv call while filling: one group write of ~1 MiB. */
#define FILL_BATCH_MAX 256
/* Room for superblocks and the ring's slack beyond the payload. */
#define FILL_MARGIN_BYTES (UINT64_C(64) << 20)

static const char *verdict_name(int v)
{
	return v == PMWAL_CLEAN	      ? "clean"
	       : v == PMWAL_TORN_TAIL ? "torn tail"
				      : "corrupt";
}

static int fill_log(const char *target, uint64_t fill_bytes, uint32_t rec_bytes,
		    uint64_t *written, char *err, size_t errlen)
{
	/* Whole MiB: every medium's alignment divides it. */
	uint64_t capacity = (fill_bytes + fill_bytes / 8 + FILL_MARGIN_BYTES) >> 20 << 20;
	struct pmwal_options o = {.target = target,
				  .capacity_bytes = capacity,
				  /* a new log, over what target_check_writable allowed */
				  .flags = PMWAL_OPEN_FORMAT | PMWAL_OPEN_FORCE,
				  .errmsg_buf = err,
				  .errmsg_len = errlen};
	struct pmwal *w = NULL;
	struct iovec iov[FILL_BATCH_MAX];
	uint8_t *rec = malloc(rec_bytes);
	int batch = (int)((1u << 20) / rec_bytes);
	int ret;

	batch = batch < 1 ? 1 : batch > FILL_BATCH_MAX ? FILL_BATCH_MAX : batch;
	if (!rec)
		return -ENOMEM;
	for (uint32_t i = 0; i < rec_bytes; i++)
		rec[i] = (uint8_t)(i * 131 + 7);
	for (int i = 0; i < batch; i++)
		iov[i] = (struct iovec){.iov_base = rec, .iov_len = rec_bytes};
	ret = pmwal_open(&o, &w);
	*written = 0;
	progress_begin("recovery fill", 0);
	while (!ret && *written < fill_bytes && !bench_stop) {
		ret = pmwal_appendv(w, iov, batch, NULL);
		if (!ret)
			*written += (uint64_t)batch * rec_bytes;
	}
	progress_end();
	if (ret == PMWAL_EFULL)
		ret = 0;
	if (ret && !*err)
		snprintf(err, errlen, "filling %s: %s %s", target, pmwal_strerror(ret),
			 w ? pmwal_errmsg(w) : "");
	int cret = pmwal_close(w);
	free(rec);
	return ret ? ret : cret;
}

static int time_open(const char *target, struct pmwal_report *rep, uint64_t *open_ns,
		     double *cpu_s, char *err, size_t errlen)
{
	struct pmwal_options o = {
	    .target = target, .errmsg_buf = err, .errmsg_len = errlen};
	struct pmwal *w = NULL;
	const char *path = target_file(target);
	/* The engine reads files with O_DIRECT; drop cached pages for buffered
	 * paths. Never under a mapping: there the pages are the medium, and on
	 * tmpfs dropping them hands the open a sparse file to allocate again. */
	int fd = path && target_kind(target) == PMWAL_TARGET_FILE ? open(path, O_RDONLY) : -1;

	if (fd >= 0) {
		fdatasync(fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
	struct rusage ru0, ru1;
	getrusage(RUSAGE_SELF, &ru0);
	uint64_t t0 = now_ns();
	int ret = pmwal_open(&o, &w);
	*open_ns = now_ns() - t0;
	getrusage(RUSAGE_SELF, &ru1);
	*cpu_s = ru1.ru_utime.tv_sec + ru1.ru_utime.tv_usec / 1e6 + ru1.ru_stime.tv_sec +
		 ru1.ru_stime.tv_usec / 1e6 -
		 (ru0.ru_utime.tv_sec + ru0.ru_utime.tv_usec / 1e6 + ru0.ru_stime.tv_sec +
		  ru0.ru_stime.tv_usec / 1e6);
	if (ret) {
		if (!*err)
			snprintf(err, errlen, "reopening %s: %s", target,
				 pmwal_strerror(ret));
		return ret;
	}
	*rep = *pmwal_recovery_report(w);
	pmwal_close(w);
	return 0;
}

/* Raw sequential read of the same bytes with the io engine: the bound. */
static double raw_read_bw(const char *target, uint64_t bytes)
{
	struct io_spec s;

	/* Files and pmem: mappings of files only (not device-DAX or a PMR). */
	if (target_kind(target) != PMWAL_TARGET_FILE &&
	    target_kind(target) != PMWAL_TARGET_PMEM)
		return 0;
	io_spec_defaults(&s);
	s.target = target;
	s.rw = RW_READ;
	s.bs_bytes = 1u << 20;
	s.iodepth = 8;
	s.size_bytes = bytes / (1u << 20) * (1u << 20);
	s.runtime_ns = 0;
	if (!s.size_bytes)
		return 0;
	struct run_result *r = io_run(&s);
	double bw = r && !r->err && r->runtime_ns
			? r->dir[DIR_READ].bytes / (r->runtime_ns / 1e9)
			: 0;
	result_free(r);
	return bw;
}

static json_t *recovery_job(const char *target, const char *label, uint64_t written,
			    const struct pmwal_report *rep, uint64_t open_ns,
			    double cpu_s, double raw_bw)
{
	struct run_result *r = result_new();
	uint64_t scanned = rep->blocks * PMWAL_BLOCK_BYTES;
	double gib = scanned / 1073741824.0, sec = open_ns / 1e9;

	if (!r)
		return NULL;
	r->runtime_ns = open_ns;
	r->usr_s = cpu_s; /* user + system: one figure for the whole open */
	r->dir[DIR_READ].ops = 1;
	r->dir[DIR_READ].bytes = scanned;
	hist_record(&r->dir[DIR_READ].lat, open_ns);
	snprintf(r->engine, sizeof(r->engine), "pmwal_open (recovery)");
	r->emulated = label && strstr(label, "emulated");
	json_t *opts =
	    json_pack("{s:s,s:I}", "target", target, "fill_bytes", (json_int_t)written);
	json_t *job = result_job_json("recovery", "recovery", target, label, r, opts);
	double bw = sec > 0 ? scanned / sec : 0;
	json_object_set_new(
	    json_object_get(job, "pmwal"), "recovery",
	    json_pack("{s:I,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:s,s:s}", "fill_bytes",
		      (json_int_t)written, "records", (json_int_t)rep->records,
		      "payload_bytes", (json_int_t)rep->payload_bytes, "scanned_bytes",
		      (json_int_t)scanned, "open_s", sec, "scan_s", rep->elapsed_ns / 1e9,
		      "s_per_gib", gib > 0 ? sec / gib : 0.0, "bw_bytes", bw,
		      "raw_read_bw_bytes", raw_bw, "verdict", verdict_name(rep->verdict),
		      "detail", rep->detail));
	if (raw_bw > 0)
		json_object_set_new(
		    json_object_get(json_object_get(job, "pmwal"), "recovery"),
		    "over_raw_read", json_real(bw / raw_bw));
	json_decref(opts);
	result_free(r);
	return job;
}

json_t *recovery_run(const char *target, const char *label, uint64_t fill_bytes,
		     uint32_t record_bytes, bool force, bool *usage, char *err,
		     size_t errlen)
{
	struct pmwal_report rep;
	uint64_t written = 0, open_ns = 0;

	*err = 0;
	*usage = true;
	if (target_check_writable(target, force, err, errlen))
		return NULL;
	int ret = fill_log(target, fill_bytes, record_bytes, &written, err, errlen);
	if (ret) {
		*usage = ret == PMWAL_EBADOPT || ret == PMWAL_EUNSUPPORTED ||
			 ret == -ENOENT || ret == -EACCES || ret == -ENOSPC ||
			 ret == -EINVAL;
		return NULL;
	}
	*usage = false;
	if (bench_stop)
		return NULL;
	progress_begin("recovery open", 0);
	double cpu_s = 0;
	ret = time_open(target, &rep, &open_ns, &cpu_s, err, errlen);
	progress_end();
	if (ret)
		return NULL;
	double raw = raw_read_bw(target, rep.end_offset);
	return recovery_job(target, label, written, &rep, open_ns, cpu_s, raw);
}
