// SPDX-License-Identifier: MIT
/*
 * prim.c - the cost of each durability primitive measured alone on a target,
 * so a log's numbers can be read against the floor the medium sets. On a
 * file or block device it asks pg_test_fsync's questions: each way to make a
 * write durable (write then fdatasync, write then fsync, an O_DSYNC write, an
 * O_SYNC write, a RWF_DSYNC write: FUA where the device has it) against a
 * write not synced at all, for 4 KiB and 8 KiB writes, one and two writes
 * per sync, and 16 KiB written as 16 x 1 KiB, 8 x 2 KiB, 4 x 4 KiB, 2 x 8 KiB
 * and 1 x 16 KiB O_SYNC writes. On a persistent region the same with
 * non-temporal copies and the region's barrier (pmem: a drain; NVMe PMR: a
 * read of PMRSTS after the writes), the barrier alone, and copies with no
 * barrier. Writes are O_DIRECT, so each one reaches the device.
 *
 * The suite and `bench log` run the core of the list (one question each);
 * `bench primitives` runs it all. Each primitive runs at queue depth 1 for a
 * fixed time on a scratch area beside the target (never the target's own
 * bytes): "<path>.prim", a file bench creates (or a killed run left, marked
 * as bench's) and deletes after; any other file of that name is refused and
 * left alone; its latency is one whole group (all its writes and
 * the sync), with percentiles like every other job.
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

#define PRIM_BUF_BYTES	(16u << 10)
#define PRIM_AREA_BYTES (UINT64_C(64) << 20)

enum prim_method {
	M_NOSYNC,    /* O_DIRECT write, no sync: the baseline */
	M_FDATASYNC, /* write(s), then fdatasync */
	M_FSYNC,     /* write(s), then fsync */
	M_ODSYNC,    /* each write through an O_DSYNC descriptor */
	M_OSYNC,     /* each write through an O_SYNC descriptor */
	M_RWF_DSYNC, /* each write with pwritev2(RWF_DSYNC) */
	M_COPY,	     /* region: non-temporal copies, no barrier */
	M_BARRIER,   /* region: copies, then one barrier */
};

struct prim {
	enum prim_method m;
	uint32_t write_bytes; /* each write or copy; 0: the barrier alone */
	uint32_t writes;      /* per sync (per operation timed) */
	bool core;	      /* in the suite and bench log, not only bench primitives */
};

static const struct prim file_prims[] = {
    {M_NOSYNC, 4096, 1, true},
    {M_FDATASYNC, 4096, 1, true},
    {M_FSYNC, 4096, 1, true},
    {M_ODSYNC, 4096, 1, true},
    {M_OSYNC, 4096, 1, false},
    {M_RWF_DSYNC, 4096, 1, true},
    {M_NOSYNC, 8192, 1, false},
    {M_FDATASYNC, 8192, 1, false},
    {M_FSYNC, 8192, 1, false},
    {M_ODSYNC, 8192, 1, false},
    {M_OSYNC, 8192, 1, false},
    {M_RWF_DSYNC, 8192, 1, false},
    {M_FDATASYNC, 4096, 2, false},
    {M_FSYNC, 4096, 2, false},
    {M_ODSYNC, 4096, 2, false},
    {M_OSYNC, 4096, 2, false},
    {M_RWF_DSYNC, 4096, 2, false},
    {M_FDATASYNC, 8192, 2, false},
    {M_FSYNC, 8192, 2, false},
    {M_ODSYNC, 8192, 2, false},
    {M_OSYNC, 8192, 2, false},
    {M_RWF_DSYNC, 8192, 2, false},
    /* pg_test_fsync's write-size split: 16 KiB in each way (2 x 8K O_SYNC
     * is above) */
    {M_OSYNC, 1024, 16, false},
    {M_OSYNC, 2048, 8, false},
    {M_OSYNC, 4096, 4, false},
    {M_OSYNC, 16384, 1, false},
};

static const struct prim region_prims[] = {
    {M_COPY, 4096, 1, true},	  {M_BARRIER, 4096, 1, true},
    {M_BARRIER, 64, 1, true},	  {M_BARRIER, 0, 1, true},
    {M_BARRIER, 8192, 1, false},  {M_BARRIER, 4096, 2, false},
    {M_BARRIER, 1024, 16, false}, {M_BARRIER, 16384, 1, false},
};

struct prim_ctx {
	int fd;	      /* O_DIRECT */
	int fd_dsync; /* O_DIRECT | O_DSYNC */
	int fd_sync;  /* O_DIRECT | O_SYNC */
	struct pmr_region *region;
	char barrier[64]; /* what the region's barrier is */
	uint8_t *buf;
	uint64_t area_bytes;
};

static void fmt_size(char *buf, size_t len, uint32_t bytes)
{
	if (bytes >= 1024 && bytes % 1024 == 0)
		snprintf(buf, len, "%uK", bytes / 1024);
	else
		snprintf(buf, len, "%uB", bytes);
}

/* "4K write + fdatasync", "2 x 8K O_DSYNC writes", "4K nt-copy + barrier". */
static void prim_name(const struct prim *p, char *buf, size_t len)
{
	static const char *const how[] = {
	    [M_NOSYNC] = "write, no sync",    [M_FDATASYNC] = "write + fdatasync",
	    [M_FSYNC] = "write + fsync",      [M_ODSYNC] = "O_DSYNC write",
	    [M_OSYNC] = "O_SYNC write",	      [M_RWF_DSYNC] = "RWF_DSYNC write",
	    [M_COPY] = "nt-copy, no barrier", [M_BARRIER] = "nt-copy + barrier",
	};
	char sz[16], n[16] = "";

	if (p->m == M_BARRIER && !p->write_bytes) {
		snprintf(buf, len, "barrier alone");
		return;
	}
	fmt_size(sz, sizeof(sz), p->write_bytes);
	if (p->writes > 1)
		snprintf(n, sizeof(n), "%u x ", p->writes);
	bool per_write = p->m == M_ODSYNC || p->m == M_OSYNC || p->m == M_RWF_DSYNC;
	if (p->writes > 1 && per_write)
		snprintf(buf, len, "%s%s %ss", n, sz, how[p->m]);
	else if (p->writes > 1 && (p->m == M_FDATASYNC || p->m == M_FSYNC))
		snprintf(buf, len, "%s%s writes + %s", n, sz,
			 p->m == M_FSYNC ? "fsync" : "fdatasync");
	else if (p->writes > 1)
		snprintf(buf, len, "%s%s nt-copies + barrier", n, sz);
	else
		snprintf(buf, len, "%s %s", sz, how[p->m]);
}

static int write_at(int fd, const void *b, uint32_t len, uint64_t off)
{
	ssize_t n = pwrite(fd, b, len, (off_t)off);

	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

/* One timed operation: @p's writes at @off, then its sync. */
static int prim_once(struct prim_ctx *c, const struct prim *p, uint64_t off)
{
	struct iovec iov = {.iov_base = c->buf, .iov_len = p->write_bytes};
	int ret = 0;

	for (uint32_t i = 0; i < p->writes && !ret; i++) {
		uint64_t at = off + (uint64_t)i * p->write_bytes;
		switch (p->m) {
		case M_NOSYNC:
		case M_FDATASYNC:
		case M_FSYNC:
			ret = write_at(c->fd, c->buf, p->write_bytes, at);
			break;
		case M_ODSYNC:
			ret = write_at(c->fd_dsync, c->buf, p->write_bytes, at);
			break;
		case M_OSYNC:
			ret = write_at(c->fd_sync, c->buf, p->write_bytes, at);
			break;
		case M_RWF_DSYNC: {
			ssize_t n = pwritev2(c->fd, &iov, 1, (off_t)at, RWF_DSYNC);
			ret = n == (ssize_t)p->write_bytes ? 0 : n < 0 ? -errno : -EIO;
			break;
		}
		case M_COPY:
		case M_BARRIER:
			if (p->write_bytes)
				pmr_copy_nodrain(c->region, at, c->buf, p->write_bytes);
			break;
		}
	}
	if (ret)
		return ret;
	if (p->m == M_FDATASYNC)
		return fdatasync(c->fd) ? -errno : 0;
	if (p->m == M_FSYNC)
		return fsync(c->fd) ? -errno : 0;
	if (p->m == M_BARRIER)
		return pmr_barrier(c->region);
	return 0;
}

/* The fio job that measures the same primitive, for cross-checking. */
static bool prim_fio_command(const struct prim *p, const char *target, uint64_t each_ns,
			     char *buf, size_t len)
{
	static const char *const how[] = {
	    [M_NOSYNC] = "--ioengine=psync --direct=1",
	    [M_FDATASYNC] = "--ioengine=psync --direct=1 --fdatasync=%u",
	    [M_FSYNC] = "--ioengine=psync --direct=1 --fsync=%u",
	    [M_ODSYNC] = "--ioengine=psync --direct=1 --sync=dsync",
	    [M_OSYNC] = "--ioengine=psync --direct=1 --sync=sync",
	    [M_RWF_DSYNC] = "--ioengine=io_uring --direct=1 --iodepth=1 --sync=dsync",
	    [M_COPY] = "--ioengine=libpmem --direct=1",
	    [M_BARRIER] = "--ioengine=libpmem --direct=1 --fsync=%u",
	};
	const char *file = target_file(target), *path = file;
	char opts[128], sz[16], arg[4200], quoted[8500];

	if (target_no_fio(target, buf, len))
		return false;

	snprintf(opts, sizeof(opts), how[p->m], p->writes);
	fmt_size(sz, sizeof(sz), p->write_bytes ? p->write_bytes : 64);
	/* one shell word, whatever the path holds (spaces, quotes) */
	snprintf(arg, sizeof(arg), "--filename=%s.prim", path);
	shell_quote(arg, quoted, sizeof(quoted));
	snprintf(buf, len,
		 "%sfio --name=prim %s --size=64m --rw=write --bs=%s %s "
		 "--runtime=%.3g --time_based --output-format=json",
		 p->m >= M_COPY ? "PMEM_IS_PMEM_FORCE=1 " : "", quoted, sz, opts,
		 each_ns / 1e9);
	return true;
}

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static json_t *prim_measure(struct prim_ctx *c, const struct prim *p, const char *target,
			    const char *label, uint64_t each_ns)
{
	struct run_result *r = result_new();
	struct rusage ru0, ru1;
	uint64_t step = (uint64_t)p->write_bytes * p->writes;
	uint64_t off = 0, t0 = now_ns(), end = t0 + each_ns;
	char name[64];
	int ret = 0;

	if (!r)
		return NULL;
	prim_name(p, name, sizeof(name));
	step = step < 64 ? 64 : (step + 511) / 512 * 512;
	progress_begin(name, each_ns);
	getrusage(RUSAGE_SELF, &ru0);
	while (!bench_stop) {
		uint64_t a = now_ns();
		if (a >= end)
			break;
		if (off + step > c->area_bytes)
			off = 0;
		ret = prim_once(c, p, off);
		uint64_t b = now_ns();
		if (ret)
			break;
		hist_record(&r->dir[DIR_WRITE].lat, b - a);
		r->dir[DIR_WRITE].ops++;
		r->dir[DIR_WRITE].bytes += (uint64_t)p->write_bytes * p->writes;
		off += step;
	}
	getrusage(RUSAGE_SELF, &ru1);
	progress_end();
	r->runtime_ns = now_ns() - t0;
	r->usr_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	r->sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	r->interrupted = bench_stop;
	if (ret) {
		r->err = ret;
		snprintf(r->errmsg, sizeof(r->errmsg), "%s: %s%s", name, strerror(-ret),
			 ret == -EINVAL && p->write_bytes < 4096
			     ? " (an O_DIRECT write smaller than the device's logical "
			       "block)"
			     : "");
	}
	snprintf(r->engine, sizeof(r->engine), "%s",
		 c->region ? "pmr" : "psync O_DIRECT");
	r->emulated = label && strstr(label, "emulated");
	json_t *opts = json_pack("{s:s,s:s,s:i,s:i,s:i}", "target", target, "primitive",
				 name, "iodepth", 1, "write_bytes", (int)p->write_bytes,
				 "writes_per_sync", (int)p->writes);
	if (c->region)
		json_object_set_new(opts, "barrier", json_string(c->barrier));
	json_t *job = result_job_json(name, "primitive", target, label, r, opts);
	json_decref(opts);
	char fio[9000];
	bool has_fio = prim_fio_command(p, target, each_ns, fio, sizeof(fio));

	json_object_set_new(json_object_get(job, "pmwal"),
			    has_fio ? "fio_command" : "fio_equivalent", json_string(fio));
	if (c->region)
		json_object_set_new(json_object_get(job, "pmwal"), "barrier",
				    json_string(c->barrier));
	result_free(r);
	return job;
}

/* @scratch: bench's own file beside the target (never a link); else a block
 * device, opened as named. */
static int prim_open_file(struct prim_ctx *c, const char *path, bool scratch, char *err,
			  size_t errlen)
{
	int nofollow = scratch ? O_NOFOLLOW : 0;

	c->fd = open(path, O_RDWR | O_DIRECT | nofollow);
	c->fd_dsync = open(path, O_RDWR | O_DIRECT | O_DSYNC | nofollow);
	c->fd_sync = open(path, O_RDWR | O_DIRECT | O_SYNC | nofollow);
	if (c->fd < 0 || c->fd_dsync < 0 || c->fd_sync < 0) {
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
	for (uint64_t off = 0; off < PRIM_AREA_BYTES; off += PRIM_BUF_BYTES)
		if (pwrite(c->fd, c->buf, PRIM_BUF_BYTES, (off_t)off) != PRIM_BUF_BYTES)
			break;
	fdatasync(c->fd);
	c->area_bytes = PRIM_AREA_BYTES;
	return 0;
}

/*
 * The scratch file beside the target (@scratch: "PATH.prim" or
 * "pmem:PATH.prim") is bench's: created here (O_EXCL, marked as target.c
 * marks the files bench makes), or one a killed run left (marked, a plain
 * file). Anything else of that name -- the user's file, a link, a FIFO -- is
 * refused and left as it is, --force or not. 0, or -1 with @err.
 */
static int prim_claim_scratch(const char *scratch, char *err, size_t errlen)
{
	const char *file = target_file(scratch);
	struct stat st;

	if (target_place_check(scratch, err, errlen))
		return -1;
	if (target_claim(scratch))
		return 0;
	if (lstat(file, &st)) {
		int e = errno;
		char dir[4096];
		if (e == ENOENT && parent_dir_writable(file, dir, sizeof(dir)))
			e = errno;
		snprintf(err, errlen,
			 "cannot create the primitives' scratch file %s: %s (the "
			 "primitives write 64 MiB beside the target; name a target in a "
			 "directory this run can write to)",
			 file, strerror(e));
		return -1;
	}
	if (S_ISREG(st.st_mode) && target_is_scratch(scratch))
		return 0; /* a killed run's: ours */
	snprintf(err, errlen,
		 "%s already exists%s and bench did not create it; the primitives "
		 "write 64 MiB of scratch there and delete it: move it away, or "
		 "name a target whose .prim name is free (--force does not apply)",
		 file,
		 S_ISLNK(st.st_mode)	? " (a symbolic link)"
		 : S_ISDIR(st.st_mode)	? " (a directory)"
		 : S_ISFIFO(st.st_mode) ? " (a FIFO)"
		 : !S_ISREG(st.st_mode) ? " (not a regular file)"
					: "");
	return -1;
}

static bool is_blockdev(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISBLK(st.st_mode);
}

json_t *primitives_run(const char *target, const char *label, uint64_t each_ns, bool all,
		       bool force, char *err, size_t errlen)
{
	struct prim_ctx c = {.fd = -1, .fd_dsync = -1, .fd_sync = -1};
	char path[4096];
	bool region = target_is_region(target), scratch = false;
	bool pmem_file = target_kind(target) == PMWAL_TARGET_PMEM;
	const char *file = target_file(target);
	json_t *jobs = NULL;

	if (target_kind(target) == PMWAL_TARGET_SIM) {
		snprintf(err, errlen,
			 "a simulated medium (sim:NAME) lives in the process that made "
			 "it; bench measures files, block devices and regions");
		return NULL;
	}
	if (posix_memalign((void **)&c.buf, 4096, PRIM_BUF_BYTES))
		return NULL;
	memset(c.buf, 0x5a, PRIM_BUF_BYTES);
	/* Beside the target: pmem:PATH.prim (mapped), or PATH.prim. */
	snprintf(path, sizeof(path), "%s.prim", pmem_file || !file ? target : file);
	bool beside = pmem_file || (!region && !is_blockdev(file));
	if (beside && prim_claim_scratch(path, err, errlen))
		goto out;
	scratch = beside; /* claimed: deleted at the end */
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
		for (uint64_t off = 0; off + PRIM_BUF_BYTES <= c.area_bytes;
		     off += PRIM_BUF_BYTES)
			pmr_copy_nodrain(c.region, off, c.buf, PRIM_BUF_BYTES);
		pmr_barrier(c.region);
		struct pmr_info info;
		pmr_get_info(c.region, &info);
		snprintf(c.barrier, sizeof(c.barrier), "%s: %s", info.kind_name,
			 info.barrier);
	} else if (is_blockdev(file)) {
		/* A device has no beside: its first 64 MiB, with --force. */
		if (target_check_writable(target, force, err, errlen) ||
		    prim_open_file(&c, file, false, err, errlen))
			goto out;
	} else if (prim_open_file(&c, path, true, err, errlen)) {
		goto out;
	}
	jobs = json_array();
	const struct prim *list = region ? region_prims : file_prims;
	size_t n = region ? sizeof(region_prims) / sizeof(region_prims[0])
			  : sizeof(file_prims) / sizeof(file_prims[0]);
	for (size_t k = 0; k < n && !bench_stop; k++) {
		if (!all && !list[k].core)
			continue;
		/* A device with 4 KiB logical blocks refuses smaller O_DIRECT
		 * writes: that question has no answer there, and says so. */
		if (!region && list[k].write_bytes < 4096 &&
		    prim_once(&c, &list[k], 0) == -EINVAL) {
			char name[64];
			prim_name(&list[k], name, sizeof(name));
			fprintf(
			    stderr,
			    "pmwal bench: primitive '%s' left out: %s refuses O_DIRECT "
			    "writes of %u bytes (its logical block is larger)\n",
			    name, target, list[k].write_bytes);
			continue;
		}
		json_array_append_new(jobs,
				      prim_measure(&c, &list[k], target, label, each_ns));
	}
out:
	if (c.fd >= 0)
		close(c.fd);
	if (c.fd_dsync >= 0)
		close(c.fd_dsync);
	if (c.fd_sync >= 0)
		close(c.fd_sync);
	pmr_close(c.region);
	/* Only the scratch file this run claimed (and its marker). */
	if (scratch)
		target_unclaim(path);
	free(c.buf);
	return jobs;
}
