// SPDX-License-Identifier: MIT
/*
 * pmem.c - regions mapped through libpmem2: files on a DAX filesystem,
 * device-DAX (/dev/daxX.Y), and ordinary files as emulated persistent memory.
 * libpmem2 tells us the store granularity the mapping really has, and the
 * code path follows it: BYTE/CACHE_LINE use non-temporal copies and one drain
 * per group (the cheap path docs/pmr.md describes); PAGE means msync is what makes
 * data durable, so copies are plain and the barrier msyncs exactly the pages
 * written since the last one (libpmem2's own PAGE persist aborts on msync
 * failure, and an I/O error must be a return value here).
 */
#include "pmr_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libpmem2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

struct pmr_pmem {
	struct pmr_region r;
	int fd;
	struct pmem2_map *map;
	enum pmem2_granularity gran;
	pmem2_memcpy_fn memcpy_fn;
	pmem2_drain_fn drain_fn;
	uint64_t page_bytes;
	/* PAGE granularity: bytes [dirty_lo, dirty_hi) written since the last
	 * barrier; dirty_hi == 0 when clean. The lock lets several threads copy
	 * and barrier (bench runs numjobs writers on one region); it is held
	 * across the msync, so a barrier that finds the range clean knows any
	 * msync covering its copies has completed. */
	pthread_mutex_t lock;
	uint64_t dirty_lo, dirty_hi;
	int failed; /* sticky msync error */
};

static struct pmr_pmem *to_pmem(struct pmr_region *r)
{
	return (struct pmr_pmem *)r;
}

static void pmem_copy_nodrain(struct pmr_region *r, uint64_t off, const void *src,
			      size_t len)
{
	struct pmr_pmem *m = to_pmem(r);

	m->memcpy_fn(r->base + off, src, len,
		     PMEM2_F_MEM_NONTEMPORAL | PMEM2_F_MEM_NODRAIN);
}

static int pmem_barrier(struct pmr_region *r)
{
	to_pmem(r)->drain_fn();
	return 0;
}

static void page_copy_nodrain(struct pmr_region *r, uint64_t off, const void *src,
			      size_t len)
{
	struct pmr_pmem *m = to_pmem(r);

	/* libpmem2's PAGE memcpy msyncs on every call; one msync per barrier
	 * over the union of the copies is what a group commit wants. */
	memcpy(r->base + off, src, len);
	pthread_mutex_lock(&m->lock);
	if (m->dirty_hi == 0) {
		m->dirty_lo = off;
		m->dirty_hi = off + len;
	} else {
		if (off < m->dirty_lo)
			m->dirty_lo = off;
		if (off + len > m->dirty_hi)
			m->dirty_hi = off + len;
	}
	pthread_mutex_unlock(&m->lock);
}

static int page_barrier(struct pmr_region *r)
{
	struct pmr_pmem *m = to_pmem(r);
	uint64_t lo, hi;
	int rc = 0;

	pthread_mutex_lock(&m->lock);
	if (m->failed || m->dirty_hi == 0)
		goto unlock;
	lo = m->dirty_lo - m->dirty_lo % m->page_bytes;
	hi = m->dirty_hi;
	if (msync(r->base + lo, hi - lo, MS_SYNC) != 0) {
		/* Sticky: the kernel may have dropped the dirty pages with the
		 * error, so a retry could "succeed" without the data. */
		m->failed = -errno;
		goto unlock;
	}
	m->dirty_lo = m->dirty_hi = 0;
unlock:
	rc = m->failed;
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static void pmem_close(struct pmr_region *r)
{
	struct pmr_pmem *m = to_pmem(r);

	pthread_mutex_destroy(&m->lock);
	if (m->map)
		pmem2_map_delete(&m->map);
	if (m->fd >= 0)
		close(m->fd);
	free(m);
}

static const struct pmr_region_ops pmem_ops = {
    .copy_nodrain = pmem_copy_nodrain,
    .barrier = pmem_barrier,
    .close = pmem_close,
};

static const struct pmr_region_ops page_ops = {
    .copy_nodrain = page_copy_nodrain,
    .barrier = page_barrier,
    .close = pmem_close,
};

/* libpmem2 returns -errno or its own PMEM2_E_* codes; callers get -errno. */
static int pmem2_rc(int ret)
{
	return ret < 0 && ret > -4096 ? ret : -EINVAL;
}

static bool file_is_dax(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) != 0)
		return false;
	return (stx.stx_attributes_mask & STATX_ATTR_DAX) &&
	       (stx.stx_attributes & STATX_ATTR_DAX);
}

static const char *gran_name(enum pmem2_granularity g)
{
	switch (g) {
	case PMEM2_GRANULARITY_BYTE:
		return "byte";
	case PMEM2_GRANULARITY_CACHE_LINE:
		return "cache-line";
	default:
		return "page";
	}
}

/* Open (and for files: create or extend) the target; returns the fd. */
/*
 * Allocates the holes of the first @bytes of @fd (0 or an errno). Only the
 * holes: on tmpfs allocating a range walks every page of it, allocated or
 * not, which was up to 0.3 s of a 1 GiB log's open. Holes are found with
 * SEEK_HOLE only on filesystems known to report every hole (they may report
 * more: allocated but never written ranges, which are cheap to allocate
 * again); elsewhere (NFS, FUSE: "no holes" may be a guess) the whole range
 * is allocated, as is a file being extended. Blocks a file holds past its
 * end prove nothing, so st_blocks is never trusted for this (a full tmpfs
 * made a store into a hole SIGBUS).
 */
static int allocate_holes(int fd, const struct stat *st, uint64_t bytes)
{
	off_t end = (off_t)bytes, at = 0;
	struct statfs fs;

	if ((uint64_t)st->st_size < bytes || fstatfs(fd, &fs) != 0 ||
	    (fs.f_type != TMPFS_MAGIC && fs.f_type != EXT4_SUPER_MAGIC &&
	     fs.f_type != XFS_SUPER_MAGIC && fs.f_type != BTRFS_SUPER_MAGIC))
		return posix_fallocate(fd, 0, end);
	while (at < end) {
		off_t hole = lseek(fd, at, SEEK_HOLE);

		if (hole < 0)
			return posix_fallocate(fd, 0, end);
		if (hole >= end)
			return 0;
		off_t data = lseek(fd, hole, SEEK_DATA);

		if (data < 0 && errno != ENXIO)
			return posix_fallocate(fd, 0, end);
		if (data < 0 || data > end)
			data = end; /* a hole to the end of the file */
		if (data <= hole) {
			/* Another process opening the log filled it between our
			 * two looks (standbys opening at once): look again. */
			at = hole + 1;
			continue;
		}
		int rc = posix_fallocate(fd, hole, data - hole);

		if (rc)
			return rc;
		at = data;
	}
	return 0;
}

int pmr_open_file(const struct pmr_params *p, const char *path, bool devdax, char *err,
		  size_t errlen)
{
	/* O_NONBLOCK: opening a FIFO must not block; cleared below. */
	int flags = (p->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
	struct stat st;
	uint64_t bytes;
	int fd, rc;

	if (!devdax && p->create_bytes && !p->readonly)
		flags |= O_CREAT | (p->create_excl ? O_EXCL : 0);
	if (err && errlen)
		err[0] = 0;
	/* A device node that is not there must not become a file in /dev's
	 * memory (a file below /dev/shm is a file). */
	if ((flags & O_CREAT) && stat(path, &st) != 0 && errno == ENOENT &&
	    pmr_in_dev_fs(path))
		return pmr_errf(err, errlen, -ENOENT,
				"%s: no such device; pmwal does not create a log as a "
				"file under /dev (check the name: ls /dev)",
				path);
	fd = pmr_open_shared_safe(path, flags, 0640, err, errlen);
	if (fd < 0) {
		rc = -errno;
		if (err && errlen && err[0])
			return rc; /* refused as another user's; said why */
		if (rc == -ENOENT)
			return pmr_errf(err, errlen, rc, "%s: no such file%s", path,
					p->create_bytes ? " (its directory is missing)"
							: "; create the log first (pmwal "
							  "create), or give a size");
		if (rc == -EACCES || rc == -EPERM)
			return pmr_errf(
			    err, errlen, rc,
			    "%s: permission denied: run as a user who may %s it "
			    "(device-DAX usually needs root)",
			    path, p->readonly ? "read" : "write");
		if (rc == -EEXIST)
			return pmr_errf(err, errlen, rc,
					"%s: already exists (exclusive create asked)",
					path);
		return pmr_errf(err, errlen, rc, "%s: open: %s", path, strerror(-rc));
	}
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		close(fd);
		return pmr_errf(err, errlen, rc, "%s: fstat: %s", path, strerror(-rc));
	}
	/* Mapped, a file is its owner's to truncate under us: a load or store
	 * past its new end is SIGBUS, which no error return can turn into a
	 * message. So only this user's files, or root's, are mapped. */
	if (S_ISREG(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0) {
		close(fd);
		return pmr_errf(err, errlen, -EPERM,
				"%s: a file of uid %u: a mapped log or region is opened only in "
				"a file of this user or root, since its owner could truncate it "
				"under this process (SIGBUS); run as uid %u, or copy the file",
				path, (unsigned)st.st_uid, (unsigned)st.st_uid);
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return pmr_errf(err, errlen, -EISDIR,
				"%s: is a directory: name a file inside it", path);
	}
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode)) {
		close(fd);
		return pmr_errf(err, errlen, -EINVAL,
				"%s is %s, not a regular file or device-DAX", path,
				S_ISFIFO(st.st_mode)   ? "a FIFO"
				: S_ISSOCK(st.st_mode) ? "a socket"
				: S_ISBLK(st.st_mode)  ? "a block device (use PATH, "
							 "not pmem:PATH)"
						       : "not a file");
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
		rc = -errno;
		close(fd);
		return pmr_errf(err, errlen, rc, "%s: fcntl: %s", path, strerror(-rc));
	}
	if (devdax && !S_ISCHR(st.st_mode)) {
		close(fd);
		return pmr_errf(err, errlen, -ENODEV,
				"%s: not a device-DAX character device", path);
	}
	/* A mapped store to a hole the filesystem has no room for is SIGBUS:
	 * a writable file is allocated whole here (holes included, as in a
	 * sparse copy), where running out of room is an error message. */
	bytes = p->create_bytes > (uint64_t)st.st_size ? p->create_bytes
						       : (uint64_t)st.st_size;
	if (S_ISREG(st.st_mode) && bytes > 0 && !p->readonly) {
		rc = allocate_holes(fd, &st, bytes);
		if (rc) {
			close(fd);
			return pmr_errf(err, errlen, -rc,
					"%s: cannot allocate %llu bytes: %s", path,
					(unsigned long long)bytes, strerror(rc));
		}
	} else if (S_ISREG(st.st_mode) && st.st_size == 0) {
		close(fd);
		return pmr_errf(err, errlen, -EINVAL,
				"%s: empty file: give a size to create or extend it",
				path);
	}
	return fd;
}

static int map_region(struct pmr_pmem *m, const struct pmr_params *p, const char *path,
		      char *err, size_t errlen)
{
	struct pmem2_config *cfg = NULL;
	struct pmem2_source *src = NULL;
	size_t size = 0, align = 0;
	int ret;

	ret = pmem2_config_new(&cfg);
	if (ret)
		goto fail;
	ret = pmem2_source_from_fd(&src, m->fd);
	if (ret)
		goto fail;
	ret = pmem2_source_size(src, &size);
	if (ret)
		goto fail;
	ret = pmem2_source_alignment(src, &align);
	if (ret)
		goto fail;
	/* Map whole alignment units: a file whose size is not a multiple is
	 * used up to the last full unit rather than refused. */
	if (align)
		size -= size % align;
	if (size == 0) {
		ret = pmr_errf(
		    err, errlen, -EINVAL,
		    "%s: smaller than one mapping unit (%zu bytes): make it larger", path,
		    align);
		goto cleanup_src;
	}
	/* PAGE is the weakest: every file maps, and the mapping reports what
	 * it really offers. */
	ret = pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);
	if (!ret)
		ret = pmem2_config_set_length(cfg, size);
	if (!ret && p->readonly)
		ret = pmem2_config_set_protection(cfg, PMEM2_PROT_READ);
	if (!ret)
		ret = pmem2_map_new(&m->map, cfg, src);
	if (ret)
		goto fail;
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	return 0;
fail:
	/* libpmem2 leaves its message empty for some refusals (a character
	 * device that is not device-DAX): never print an empty reason. */
	ret = pmr_errf(err, errlen, pmem2_rc(ret), "%s: libpmem2 cannot map it: %s", path,
		       pmem2_errormsg()[0] ? pmem2_errormsg() : strerror(-pmem2_rc(ret)));
cleanup_src:
	if (src)
		pmem2_source_delete(&src);
	if (cfg)
		pmem2_config_delete(&cfg);
	return ret;
}

int pmr_pmem_open(const struct pmr_params *p, const char *path, bool devdax,
		  struct pmr_region **out, char *err, size_t errlen)
{
	struct pmr_pmem *m;
	struct pmr_info *info;
	long page = sysconf(_SC_PAGESIZE);
	int rc;

	m = calloc(1, sizeof(*m));
	if (!m)
		return pmr_errf(err, errlen, -ENOMEM, "out of memory");
	pthread_mutex_init(&m->lock, NULL);
	m->fd = pmr_open_file(p, path, devdax, err, errlen);
	if (m->fd < 0) {
		rc = m->fd;
		goto cleanup_m;
	}
	rc = map_region(m, p, path, err, errlen);
	if (rc)
		goto cleanup_fd;

	m->page_bytes = page > 0 ? (uint64_t)page : 4096u;
	m->gran = pmem2_map_get_store_granularity(m->map);
	m->memcpy_fn = pmem2_get_memcpy_fn(m->map);
	m->drain_fn = pmem2_get_drain_fn(m->map);
	m->r.ops = m->gran == PMEM2_GRANULARITY_PAGE ? &page_ops : &pmem_ops;
	m->r.base = pmem2_map_get_address(m->map);
	m->r.size_bytes = pmem2_map_get_size(m->map);
	m->r.readonly = p->readonly;

	info = &m->r.info;
	info->kind = devdax ? PMR_KIND_DEVDAX : PMR_KIND_PMEM;
	info->size_bytes = m->r.size_bytes;
	snprintf(info->kind_name, sizeof(info->kind_name), "%s",
		 devdax ? "devdax" : "pmem");
	snprintf(info->granularity, sizeof(info->granularity), "%s", gran_name(m->gran));
	snprintf(info->barrier, sizeof(info->barrier), "%s",
		 m->gran == PMEM2_GRANULARITY_PAGE ? "msync" : "pmem2 drain");
	/* A forced granularity on a file that is not DAX makes libpmem2 use
	 * the pmem instructions on page cache: right for measuring their CPU
	 * cost, wrong for any durability claim. */
	info->emulated =
	    m->gran == PMEM2_GRANULARITY_PAGE ||
	    (!devdax && getenv("PMEM2_FORCE_GRANULARITY") && !file_is_dax(m->fd));
	info->durable = true;
	info->pmrwbm = 0;
	*out = &m->r;
	return 0;

cleanup_fd:
	close(m->fd);
cleanup_m:
	pthread_mutex_destroy(&m->lock);
	free(m);
	return rc;
}
