// SPDX-License-Identifier: MIT
/*
 * prim.c - the cost of each durability primitive measured alone on a target,
 * so a log's numbers can be read against the floor the medium sets: on a file
 * or block device a 4 KiB write then fdatasync, an O_DSYNC write and a
 * RWF_DSYNC (FUA where the device has it) write; on a persistent region a
 * non-temporal 4 KiB copy then a barrier, and a barrier after one cache line.
 *
 * Each primitive runs at queue depth 1 for a fixed time on a scratch area
 * beside the target (never the target's own bytes): "<path>.prim".
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pmr.h"

#define PRIM_BYTES	4096u
#define PRIM_AREA_BYTES (UINT64_C(64) << 20)

enum prim_kind { PRIM_FDATASYNC, PRIM_ODSYNC, PRIM_RWF_DSYNC, PRIM_PMR_4K, PRIM_PMR_64 };

static const char *const prim_names[] = {
    [PRIM_FDATASYNC] = "4K write + fdatasync", [PRIM_ODSYNC] = "4K O_DSYNC write",
    [PRIM_RWF_DSYNC] = "4K RWF_DSYNC write",   [PRIM_PMR_4K] = "4K nt-copy + barrier",
    [PRIM_PMR_64] = "64B nt-copy + barrier",
};

struct prim_ctx {
	int fd;	      /* O_DIRECT */
	int fd_dsync; /* O_DIRECT | O_DSYNC */
	struct pmr_region *region;
	uint8_t *buf;
	uint64_t area_bytes;
};

static int prim_once(struct prim_ctx *c, int kind, uint64_t off)
{
	struct iovec iov = {.iov_base = c->buf, .iov_len = PRIM_BYTES};

	switch (kind) {
	case PRIM_FDATASYNC:
		if (pwrite(c->fd, c->buf, PRIM_BYTES, (off_t)off) != PRIM_BYTES)
			return -errno ? -errno : -EIO;
		return fdatasync(c->fd) ? -errno : 0;
	case PRIM_ODSYNC:
		return pwrite(c->fd_dsync, c->buf, PRIM_BYTES, (off_t)off) == PRIM_BYTES
			   ? 0
			   : -EIO;
	case PRIM_RWF_DSYNC:
		return pwritev2(c->fd, &iov, 1, (off_t)off, RWF_DSYNC) == PRIM_BYTES
			   ? 0
			   : -errno;
	case PRIM_PMR_4K:
		pmr_copy_nodrain(c->region, off, c->buf, PRIM_BYTES);
		return pmr_barrier(c->region);
	default:
		pmr_copy_nodrain(c->region, off, c->buf, 64);
		return pmr_barrier(c->region);
	}
}

/* The fio job that measures the same primitive, for cross-checking. */
static void prim_fio_command(int kind, const char *target, uint64_t each_ns, char *buf,
			     size_t len)
{
	static const char *const how[] = {
	    [PRIM_FDATASYNC] = "--ioengine=psync --direct=1 --bs=4k --fdatasync=1",
	    [PRIM_ODSYNC] = "--ioengine=psync --direct=1 --bs=4k --sync=dsync",
	    [PRIM_RWF_DSYNC] = "--ioengine=io_uring --direct=1 --bs=4k --iodepth=1 "
			       "--sync=dsync",
	    [PRIM_PMR_4K] = "--ioengine=libpmem --direct=1 --bs=4k --fsync=1",
	    [PRIM_PMR_64] = "--ioengine=libpmem --direct=1 --bs=64 --fsync=1",
	};
	const char *file = target_file(target), *path = file ? file : target;

	snprintf(buf, len,
		 "%sfio --name=prim --filename=%s.prim --size=64m --rw=write %s "
		 "--runtime=%.3g --time_based --output-format=json",
		 kind >= PRIM_PMR_4K ? "PMEM_IS_PMEM_FORCE=1 " : "", path, how[kind],
		 each_ns / 1e9);
}

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static json_t *prim_measure(struct prim_ctx *c, int kind, const char *target,
			    const char *label, uint64_t each_ns)
{
	struct run_result *r = result_new();
	struct rusage ru0, ru1;
	uint64_t off = 0, t0 = now_ns(), end = t0 + each_ns;
	int ret = 0;

	if (!r)
		return NULL;
	progress_begin(prim_names[kind], each_ns);
	getrusage(RUSAGE_SELF, &ru0);
	while (!bench_stop) {
		uint64_t a = now_ns();
		if (a >= end)
			break;
		ret = prim_once(c, kind, off);
		uint64_t b = now_ns();
		if (ret)
			break;
		hist_record(&r->dir[DIR_WRITE].lat, b - a);
		r->dir[DIR_WRITE].ops++;
		r->dir[DIR_WRITE].bytes += kind == PRIM_PMR_64 ? 64 : PRIM_BYTES;
		off = (off + PRIM_BYTES) % c->area_bytes;
	}
	getrusage(RUSAGE_SELF, &ru1);
	progress_end();
	r->runtime_ns = now_ns() - t0;
	r->usr_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	r->sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	r->interrupted = bench_stop;
	if (ret) {
		r->err = ret;
		snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s", prim_names[kind],
			 strerror(-ret));
	}
	snprintf(r->engine, sizeof(r->engine), "%s",
		 c->region ? "pmr" : "psync O_DIRECT");
	r->emulated = label && strstr(label, "emulated");
	json_t *opts = json_pack("{s:s,s:s,s:i}", "target", target, "primitive",
				 prim_names[kind], "iodepth", 1);
	json_t *job =
	    result_job_json(prim_names[kind], "primitive", target, label, r, opts);
	json_decref(opts);
	char fio[1024];
	prim_fio_command(kind, target, each_ns, fio, sizeof(fio));
	json_object_set_new(json_object_get(job, "pmwal"), "fio_command",
			    json_string(fio));
	result_free(r);
	return job;
}

static int prim_open_file(struct prim_ctx *c, const char *path, char *err, size_t errlen)
{
	c->fd = open(path, O_RDWR | O_CREAT | O_DIRECT, 0644);
	c->fd_dsync = open(path, O_RDWR | O_DIRECT | O_DSYNC);
	if (c->fd < 0 || c->fd_dsync < 0) {
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == EINVAL ? " (O_DIRECT refused by the filesystem)" : "");
		return -1;
	}
	struct stat st;
	if (fstat(c->fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    ftruncate(c->fd, (off_t)PRIM_AREA_BYTES)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* Write the area once so no primitive pays for block allocation. */
	for (uint64_t off = 0; off < PRIM_AREA_BYTES; off += PRIM_BYTES)
		if (pwrite(c->fd, c->buf, PRIM_BYTES, (off_t)off) != PRIM_BYTES)
			break;
	fdatasync(c->fd);
	c->area_bytes = PRIM_AREA_BYTES;
	return 0;
}

static bool is_blockdev(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISBLK(st.st_mode);
}

json_t *primitives_run(const char *target, const char *label, uint64_t each_ns,
		       bool force, char *err, size_t errlen)
{
	struct prim_ctx c = {.fd = -1, .fd_dsync = -1};
	char path[4096];
	bool region = target_is_region(target), blockdev = false;
	bool pmem_file = target_kind(target) == PMWAL_TARGET_PMEM;
	const char *file = target_file(target);
	json_t *jobs = NULL;

	if (target_kind(target) == PMWAL_TARGET_SIM) {
		snprintf(err, errlen,
			 "a simulated medium (sim:NAME) lives in the process that made "
			 "it; bench measures files, block devices and regions");
		return NULL;
	}
	if (posix_memalign((void **)&c.buf, 4096, PRIM_BYTES))
		return NULL;
	memset(c.buf, 0x5a, PRIM_BYTES);
	/* Beside the target: pmem:PATH.prim (mapped), or PATH.prim. */
	snprintf(path, sizeof(path), "%s.prim", pmem_file || !file ? target : file);
	if (region) {
		struct pmr_params p = {.target = path, .create_bytes = PRIM_AREA_BYTES};
		if (!pmem_file) {
			/* A PMR or devdax has no beside: use its start, if allowed. */
			p.target = target;
			p.create_bytes = target_is_scratch(target) ? PRIM_AREA_BYTES : 0;
			if (target_check_writable(target, force, err, errlen))
				goto out;
		}
		if (pmr_open(&p, &c.region, err, errlen))
			goto out;
		c.area_bytes = pmr_size(c.region) < PRIM_AREA_BYTES ? pmr_size(c.region)
								    : PRIM_AREA_BYTES;
		/* Fault the scratch pages in first: page faults are not a barrier's cost.
		 */
		for (uint64_t off = 0; off < c.area_bytes; off += PRIM_BYTES)
			pmr_copy_nodrain(c.region, off, c.buf, PRIM_BYTES);
		pmr_barrier(c.region);
	} else if (is_blockdev(file)) {
		/* A device has no beside: its first 64 MiB, with --force. */
		if (target_check_writable(target, force, err, errlen) ||
		    prim_open_file(&c, file, err, errlen))
			goto out;
		blockdev = true;
	} else if (prim_open_file(&c, path, err, errlen)) {
		goto out;
	}
	jobs = json_array();
	int first = region ? PRIM_PMR_4K : PRIM_FDATASYNC;
	int last = region ? PRIM_PMR_64 : PRIM_RWF_DSYNC;
	for (int k = first; k <= last && !bench_stop; k++)
		json_array_append_new(jobs, prim_measure(&c, k, target, label, each_ns));
out:
	if (c.fd >= 0)
		close(c.fd);
	if (c.fd_dsync >= 0)
		close(c.fd_dsync);
	pmr_close(c.region);
	if (pmem_file)
		unlink(target_file(path));
	else if (!region && !blockdev)
		unlink(path);
	free(c.buf);
	return jobs;
}
