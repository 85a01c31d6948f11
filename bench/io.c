// SPDX-License-Identifier: MIT
/*
 * io.c - the raw I/O engine behind `pmwal bench io`: numjobs threads, each
 * with its own io_uring (registered buffers and file, optional SQPOLL and
 * IOPOLL) on a file or block device, or non-temporal copies plus a barrier on
 * a persistent region through pmr/.
 *
 * It exists so the raw medium is measured with the same clock, histogram and
 * time series as the log, and costs no more CPU per I/O than fio does: one
 * clock read per batch of submissions and one per batch of completions, no
 * allocation and no locks on the data path. Job j owns the j-th slice of the
 * target (fio: --size=slice --offset_increment=slice).
 */
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <linux/fs.h>
#include <unistd.h>

#include "pmr.h"

#define IO_DEFAULT_FILE_BYTES (UINT64_C(1) << 30)
#define IO_QD_MAX	      4096u
#define IO_JOBS_MAX	      256u
#define LAYOUT_CHUNK_BYTES    (UINT64_C(1) << 20)
#define IO_BUF_MAX_BYTES      (UINT64_C(4) << 30)

struct io_shared {
	const struct io_spec *spec;
	int fd;
	struct pmr_region *region;
	uint64_t target_bytes; /* bytes of the target in use */
	uint32_t sector_bytes;
	bool created; /* this run created (claimed) the target's file */
	pthread_barrier_t start;
	int abort; /* set by any job on error: all stop (atomic) */
	int done;  /* jobs finished (atomic) */
};

struct io_slot {
	uint64_t submit_ns;
	int dir;
};

struct io_job {
	struct io_shared *sh;
	int idx;
	pthread_t tid;
	struct io_uring ring;
	bool ring_ok;
	bool fixed;
	bool defer_taskrun;
	uint8_t *bufs;
	struct io_slot *slots;
	uint32_t *free_slots;
	uint32_t nfree;
	uint32_t inflight;
	uint64_t off0, slice_bytes, seq_pos;
	uint64_t ops_left; /* size-based runs: ops still to issue */
	uint64_t rng;
	uint64_t finish_ns; /* when this job stopped */
	struct limiter lim[DIR_COUNT];
	struct thread_stats st;
	int err;
	char errmsg[256];
};

void io_spec_defaults(struct io_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->rw = RW_RANDREAD;
	s->rwmixread = 50;
	s->bs_bytes = 4096;
	s->iodepth = 32;
	s->numjobs = 1;
	s->runtime_ns = 10000000000ull;
	s->interval_ns = 100000000ull;
	s->direct = true;
	s->batch_submit = 1;
}

static void job_fail(struct io_job *j, int err, const char *fmt, const char *what)
{
	if (!j->err) {
		j->err = err;
		snprintf(j->errmsg, sizeof(j->errmsg), fmt, what, strerror(-err));
	}
	__atomic_store_n(&j->sh->abort, 1, __ATOMIC_RELAXED);
}

/* Direction of the next I/O, or -1 with *wait_ns set when rate caps say
 * wait. A capped direction yields to the other so each runs at its cap. */
static int pick_dir(struct io_job *j, uint64_t now, uint64_t *wait_ns)
{
	const struct io_spec *s = j->sh->spec;
	int d;

	if (rw_has_dir(s->rw, DIR_READ) && rw_has_dir(s->rw, DIR_WRITE))
		d = (int)(rng_next(&j->rng) % 100) < s->rwmixread ? DIR_READ : DIR_WRITE;
	else
		d = rw_has_dir(s->rw, DIR_READ) ? DIR_READ : DIR_WRITE;
	uint64_t w = limiter_take(&j->lim[d], now, s->bs_bytes);
	if (!w)
		return d;
	int o = !d;
	bool other_ok = rw_has_dir(s->rw, o) &&
			(o == DIR_READ ? s->rwmixread > 0 : s->rwmixread < 100);
	if (other_ok) {
		uint64_t w2 = limiter_take(&j->lim[o], now, s->bs_bytes);
		if (!w2)
			return o;
		if (w2 < w)
			w = w2;
	}
	*wait_ns = w;
	return -1;
}

static uint64_t next_offset(struct io_job *j)
{
	const struct io_spec *s = j->sh->spec;
	uint64_t blocks = j->slice_bytes / s->bs_bytes;

	if (rw_is_random(s->rw))
		return j->off0 + (rng_next(&j->rng) % blocks) * s->bs_bytes;
	uint64_t off = j->off0 + j->seq_pos;
	j->seq_pos += s->bs_bytes;
	if (j->seq_pos + s->bs_bytes > j->slice_bytes)
		j->seq_pos = 0;
	return off;
}

static bool job_stopping(struct io_job *j, uint64_t now)
{
	return bench_stop || __atomic_load_n(&j->sh->abort, __ATOMIC_RELAXED) ||
	       (j->st.end_ns && now >= j->st.end_ns) ||
	       (!j->st.end_ns && j->ops_left == 0);
}

static void queue_one(struct io_job *j, int dir, uint64_t now)
{
	const struct io_spec *s = j->sh->spec;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&j->ring);
	uint32_t slot = j->free_slots[--j->nfree];
	uint8_t *buf = j->bufs + (size_t)slot * s->bs_bytes;
	uint64_t off = next_offset(j);
	int fd = j->fixed ? 0 : j->sh->fd;

	if (j->fixed && dir == DIR_READ)
		io_uring_prep_read_fixed(sqe, fd, buf, s->bs_bytes, off, (int)slot);
	else if (j->fixed)
		io_uring_prep_write_fixed(sqe, fd, buf, s->bs_bytes, off, (int)slot);
	else if (dir == DIR_READ)
		io_uring_prep_read(sqe, fd, buf, s->bs_bytes, off);
	else
		io_uring_prep_write(sqe, fd, buf, s->bs_bytes, off);
	if (j->fixed)
		sqe->flags |= IOSQE_FIXED_FILE;
	io_uring_sqe_set_data64(sqe, slot);
	j->slots[slot].submit_ns = now;
	j->slots[slot].dir = dir;
	j->inflight++;
	if (!j->st.end_ns && j->ops_left)
		j->ops_left--;
}

static int reap(struct io_job *j)
{
	const struct io_spec *s = j->sh->spec;
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;
	uint64_t t = now_ns();

	io_uring_for_each_cqe(&j->ring, head, cqe)
	{
		uint32_t slot = (uint32_t)cqe->user_data;
		int d = j->slots[slot].dir;
		if (cqe->res == -EOPNOTSUPP || (cqe->res == -EINVAL && s->direct)) {
			job_fail(j, cqe->res,
				 "%s refused: %s (O_DIRECT alignment, or polled "
				 "I/O not supported here)",
				 d == DIR_READ ? "read" : "write");
			j->err = PMWAL_BENCH_EUSAGE;
		} else if (cqe->res < 0)
			job_fail(j, cqe->res,
				 s->hipri
				     ? "%s failed: %s (polled completions need an NVMe "
				       "device with poll queues; drop --hipri)"
				     : "%s failed: %s",
				 d == DIR_READ ? "read" : "write");
		else if ((uint32_t)cqe->res != s->bs_bytes)
			job_fail(j, -EIO, "%s was short (end of target?): %s",
				 d == DIR_READ ? "read" : "write");
		else
			tstats_record(&j->st, d, s->bs_bytes,
				      t - j->slots[slot].submit_ns, t);
		j->free_slots[j->nfree++] = slot;
		j->inflight--;
		n++;
	}
	io_uring_cq_advance(&j->ring, n);
	return j->err;
}

static int uring_wait(struct io_job *j, bool queued, uint64_t wait_ns)
{
	struct io_uring_cqe *cqe;
	int ret;

	/* One io_uring_enter both submits and waits: a syscall saved per batch. */
	if (queued && !wait_ns)
		return io_uring_submit_and_wait(&j->ring, 1);
	if (queued) {
		ret = io_uring_submit(&j->ring);
		if (ret < 0)
			return ret;
	}
	if (wait_ns) {
		struct __kernel_timespec ts = {
		    .tv_sec = (long long)(wait_ns / 1000000000u),
		    .tv_nsec = (long long)(wait_ns % 1000000000u)};
		ret = io_uring_wait_cqe_timeout(&j->ring, &cqe, &ts);
		return ret == -ETIME ? 0 : ret;
	}
	ret = io_uring_wait_cqe(&j->ring, &cqe);
	return ret;
}

static void uring_loop(struct io_job *j)
{
	const struct io_spec *s = j->sh->spec;

	for (;;) {
		uint64_t now = now_ns(), wait = 0;
		bool stopping = job_stopping(j, now), queued = false;
		uint32_t pending = 0;
		while (!stopping && j->inflight < s->iodepth &&
		       (j->st.end_ns || j->ops_left)) {
			int d = pick_dir(j, now, &wait);
			if (d < 0)
				break;
			/* Stamp each I/O: with one submission per I/O, a stamp per batch
			 * would charge earlier ones for later syscalls. */
			now = now_ns();
			queue_one(j, d, now);
			queued = true;
			/* As fio's iodepth_batch_submit (default 1): each I/O reaches
			 * the device at once; batching costs a virtio disk ~20%. */
			/* The I/O that fills the queue goes with the wait (one
			 * syscall for both). */
			if (++pending >= s->batch_submit && j->inflight < s->iodepth) {
				int ret = io_uring_submit(&j->ring);
				if (ret < 0) {
					job_fail(j, ret, "%s: %s", "io_uring submit");
					break;
				}
				pending = 0;
			}
		}
		if (!j->inflight && !queued) {
			if (stopping)
				break;
			sleep_ns(wait < 1000000 ? wait : 1000000);
			continue;
		}
		int ret = uring_wait(j, pending > 0, wait);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN) {
			job_fail(j, ret, "%s: %s", "io_uring wait");
			break;
		}
		if (reap(j))
			break;
	}
	/* Drain what is in flight so buffers are not freed under the kernel. */
	while (j->inflight && j->ring_ok) {
		struct io_uring_cqe *cqe;
		if (io_uring_wait_cqe(&j->ring, &cqe) < 0)
			break;
		reap(j);
	}
}

static void region_loop(struct io_job *j)
{
	const struct io_spec *s = j->sh->spec;
	struct pmr_region *r = j->sh->region;
	uint64_t batch_ns[IO_QD_MAX];
	uint32_t nb = 0;

	for (;;) {
		uint64_t now = now_ns(), wait = 0;
		if (job_stopping(j, now))
			break;
		int d = pick_dir(j, now, &wait);
		if (d < 0) {
			sleep_ns(wait < 1000000 ? wait : 1000000);
			continue;
		}
		uint64_t off = next_offset(j);
		if (!j->st.end_ns)
			j->ops_left--;
		if (d == DIR_READ) {
			memcpy(j->bufs, pmr_base(r) + off, s->bs_bytes);
			uint64_t t = now_ns();
			tstats_record(&j->st, DIR_READ, s->bs_bytes, t - now, t);
			continue;
		}
		pmr_copy_nodrain(r, off, j->bufs, s->bs_bytes);
		batch_ns[nb++] = now;
		if (nb < s->iodepth)
			continue;
		int rc = pmr_barrier(r);
		uint64_t t = now_ns();
		if (rc) {
			job_fail(j, rc, "%s: %s", "region barrier");
			return;
		}
		for (uint32_t i = 0; i < nb; i++)
			tstats_record(&j->st, DIR_WRITE, s->bs_bytes, t - batch_ns[i], t);
		nb = 0;
	}
	if (nb && pmr_barrier(r) == 0)
		nb = 0;
}

static int ring_setup(struct io_job *j)
{
	const struct io_spec *s = j->sh->spec;
	struct io_uring_params p;
	int ret;

	memset(&p, 0, sizeof(p));
	if (s->sqpoll) {
		p.flags |= IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 2000;
	}
	if (s->hipri)
		p.flags |= IORING_SETUP_IOPOLL;
	unsigned entries = s->iodepth * 2 < 4096 ? s->iodepth * 2 : 4096;
	/* Completions run as task work when this thread waits, not as
	 * interrupts of it (one thread owns the ring); fall back where the
	 * kernel predates them (6.1 for DEFER_TASKRUN). */
	if (!s->sqpoll) {
		struct io_uring_params q = p;
		q.flags |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER |
			   IORING_SETUP_DEFER_TASKRUN;
		if (io_uring_queue_init_params(entries, &j->ring, &q) == 0) {
			j->defer_taskrun = true;
			goto registered;
		}
	}
	ret = io_uring_queue_init_params(entries, &j->ring, &p);
	if (ret < 0) {
		job_fail(j, ret,
			 "io_uring refused (%s): %s; check kernel.io_uring_disabled "
			 "and seccomp, or drop --sqthread-poll/--hipri",
			 s->sqpoll  ? "SQPOLL"
			 : s->hipri ? "IOPOLL"
				    : "setup");
		j->err = PMWAL_BENCH_EUSAGE;
		return ret;
	}
registered:
	j->ring_ok = true;
	if (s->no_fixed)
		return 0;
	struct iovec *iov = calloc(s->iodepth, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->iodepth; i++) {
		iov[i].iov_base = j->bufs + (size_t)i * s->bs_bytes;
		iov[i].iov_len = s->bs_bytes;
	}
	/* Fixed buffers and file save a pin and a fget per I/O; fall back
	 * quietly if refused (the engine string says which path ran). */
	j->fixed = io_uring_register_buffers(&j->ring, iov, s->iodepth) == 0 &&
		   io_uring_register_files(&j->ring, &j->sh->fd, 1) == 0;
	free(iov);
	return 0;
}

static int job_alloc(struct io_job *j)
{
	const struct io_spec *s = j->sh->spec;
	size_t bytes = (size_t)s->iodepth * s->bs_bytes;

	if (posix_memalign((void **)&j->bufs, 4096, bytes))
		return -ENOMEM;
	for (size_t i = 0; i < bytes; i += 8) {
		uint64_t v = rng_next(&j->rng);
		memcpy(j->bufs + i, &v, bytes - i < 8 ? bytes - i : 8);
	}
	j->slots = calloc(s->iodepth, sizeof(*j->slots));
	j->free_slots = calloc(s->iodepth, sizeof(*j->free_slots));
	if (!j->slots || !j->free_slots)
		return -ENOMEM;
	for (uint32_t i = 0; i < s->iodepth; i++)
		j->free_slots[j->nfree++] = s->iodepth - 1 - i;
	if (tstats_init(&j->st, s->interval_ns, s->runtime_ns))
		return -ENOMEM;
	for (int d = 0; d < DIR_COUNT; d++)
		limiter_init(&j->lim[d], s->rate[d].bytes_per_s / s->numjobs);
	return 0;
}

static void *job_main(void *arg)
{
	struct io_job *j = arg;
	const struct io_spec *s = j->sh->spec;
	int ret = job_alloc(j);

	if (ret)
		job_fail(j, ret, "%s: %s", "allocating job buffers");
	else if (!j->sh->region)
		ring_setup(j);
	pthread_barrier_wait(&j->sh->start);
	uint64_t t0 = now_ns();
	j->st.start_ns = t0 + s->ramp_ns;
	j->st.end_ns = s->runtime_ns ? j->st.start_ns + s->runtime_ns : 0;
	j->ops_left = j->slice_bytes / s->bs_bytes;
	if (!__atomic_load_n(&j->sh->abort, __ATOMIC_RELAXED) && !j->err)
		j->sh->region ? region_loop(j) : uring_loop(j);
	j->finish_ns = now_ns();
	tstats_finish(&j->st);
	__atomic_add_fetch(&j->sh->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void job_free(struct io_job *j)
{
	if (j->ring_ok)
		io_uring_queue_exit(&j->ring);
	free(j->bufs);
	free(j->slots);
	free(j->free_slots);
	tstats_free(&j->st);
}

/* Write the whole range once so reads hit allocated blocks, as fio does. */
static int layout_file(const char *path, const struct stat *want, uint64_t from,
		       uint64_t to, char *err, size_t errlen)
{
	err[0] = 0;
	int fd = pmr_open_shared_safe(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0,
				      err, errlen);
	bool refused = fd < 0 && errno == EPERM && err[0]; /* said why */
	struct stat st;

	/* The file that was checked, not one swapped in under its name since. */
	if (fd >= 0 &&
	    (fstat(fd, &st) || st.st_dev != want->st_dev || st.st_ino != want->st_ino)) {
		close(fd);
		fd = -1;
		errno = ESTALE;
	}
	uint8_t *buf = malloc(LAYOUT_CHUNK_BYTES);
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	int ret = 0;

	if (fd < 0 || !buf) {
		ret = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i + 8 <= LAYOUT_CHUNK_BYTES; i += 8) {
		uint64_t v = rng_next(&rng);
		memcpy(buf + i, &v, 8);
	}
	progress_begin("layout", 0);
	for (uint64_t off = from; off < to && !bench_stop; off += LAYOUT_CHUNK_BYTES) {
		size_t n = to - off < LAYOUT_CHUNK_BYTES ? to - off : LAYOUT_CHUNK_BYTES;
		if (pwrite(fd, buf, n, (off_t)off) != (ssize_t)n) {
			ret = -errno;
			break;
		}
		if ((off - from) % (64 * LAYOUT_CHUNK_BYTES) == 0)
			progress_fraction(off - from, to - from);
	}
	progress_end();
	if (!ret && fdatasync(fd))
		ret = -errno;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
out:
	if (refused)
		; /* the path rule's message stands */
	else if (ret == -ESTALE)
		snprintf(err, errlen,
			 "laying out %s: another file was put under its name during the "
			 "run, and is left alone; run again",
			 path);
	else if (ret)
		snprintf(err, errlen, "laying out %s: %s", path, strerror(-ret));
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

static int open_blockdev(struct io_shared *sh, const char *path, struct stat *st,
			 char *err, size_t errlen)
{
	uint64_t dev_bytes = 0;
	int lbs = 512;

	if (ioctl(sh->fd, BLKGETSIZE64, &dev_bytes) || ioctl(sh->fd, BLKSSZGET, &lbs)) {
		snprintf(err, errlen, "%s: cannot read the device size: %s", path,
			 strerror(errno));
		return -1;
	}
	sh->sector_bytes = (uint32_t)lbs;
	if (!sh->target_bytes)
		sh->target_bytes = dev_bytes;
	if (sh->target_bytes > dev_bytes) {
		snprintf(err, errlen,
			 "--size %" PRIu64 " is larger than %s (%" PRIu64 " bytes)",
			 sh->target_bytes, path, dev_bytes);
		return -1;
	}
	(void)st;
	return 0;
}

/*
 * A regular file that bench did not create (target_claim: the scratch mark)
 * is the user's, empty or not: a write workload refuses it without --force,
 * so a file name mistyped for a target is never lost. A file bench created
 * is written over by the next run of the same command.
 */
static int check_not_users_file(const char *target, const char *path,
				const struct stat *st, bool force, char *err,
				size_t errlen)
{
	if (force || !S_ISREG(st->st_mode) || target_is_scratch(target))
		return 0;
	snprintf(err, errlen,
		 "%s is a file pmwal bench did not create (%lld bytes); a write "
		 "workload would overwrite it (pass --force to write anyway, or name a "
		 "new file: bench creates it and reuses it on the next run)",
		 path, (long long)st->st_size);
	return -1;
}

/* Anything but a regular file or block device is refused by name before it
 * is opened (a FIFO would block the open, a character device never ends). */
static int check_file_kind(const char *path, mode_t mode, char *err, size_t errlen)
{
	const char *what = S_ISDIR(mode)    ? "a directory"
			   : S_ISFIFO(mode) ? "a FIFO"
			   : S_ISSOCK(mode) ? "a socket"
			   : S_ISCHR(mode)  ? "a character device"
					    : NULL;

	if (S_ISREG(mode) || S_ISBLK(mode))
		return 0;
	snprintf(err, errlen,
		 "%s is %s: bench measures a regular file, a block device or a "
		 "region (pmem:PATH, /dev/daxX.Y, pmr:, fakepmr:PATH)",
		 path, what ? what : "not a regular file");
	return -1;
}

/* A region's size as it maps (a fake PMR's file holds more than its data),
 * opened read-only: taking its measure writes nothing. */
static int region_size_now(const char *target, uint64_t *bytes, char *err, size_t errlen)
{
	struct pmr_params p = {.target = target, .readonly = true};
	struct pmr_region *r;

	if (pmr_open(&p, &r, err, errlen))
		return -1;
	*bytes = pmr_size(r);
	pmr_close(r);
	return 0;
}

/* The size @target has now, for --size N%: 0, or -1 with @err where it has
 * none to take a share of (missing, empty) or is no target at all. */
static int target_size_now(const char *target, uint32_t pct, uint64_t *bytes, char *err,
			   size_t errlen)
{
	char path[4096];
	struct stat st;
	int fd;

	/* A region without a file behind it (device DAX, pmr:) always exists. */
	if (target_path(target, path, sizeof(path)))
		return region_size_now(target, bytes, err, errlen);
	if (stat(path, &st)) {
		snprintf(err, errlen,
			 "--size %u%%: %s %s, so it has no size to take %u%% of; give "
			 "--size in bytes (e.g. --size 1g) and bench creates it",
			 pct, path, errno == ENOENT ? "does not exist" : strerror(errno),
			 pct);
		return -1;
	}
	/* As open_region_target: pmem: may name a character device. */
	if (!(S_ISCHR(st.st_mode) && target_kind(target) == PMWAL_TARGET_PMEM) &&
	    check_file_kind(path, st.st_mode, err, errlen))
		return -1;
	if (S_ISREG(st.st_mode) && st.st_size == 0) {
		snprintf(err, errlen,
			 "--size %u%%: %s is empty (0 bytes): %u%% of it is nothing to "
			 "measure; give --size in bytes",
			 pct, path, pct);
		return -1;
	}
	if (target_is_region(target))
		return region_size_now(target, bytes, err, errlen);
	if (S_ISREG(st.st_mode)) {
		*bytes = (uint64_t)st.st_size;
		return 0;
	}
	/* A block device's size is not in its inode: ask the device. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, bytes)) {
		snprintf(err, errlen, "--size %u%%: cannot read the size of %s: %s", pct,
			 path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int io_resolve_size(struct io_spec *spec, char *err, size_t errlen)
{
	uint64_t whole;

	/* sim: is io_run's to refuse, by name */
	if (!spec->size_pct || target_kind(spec->target) == PMWAL_TARGET_SIM)
		return 0;
	if (target_size_now(spec->target, spec->size_pct, &whole, err, errlen))
		return -1;
	if (!whole) { /* a device or region of no size */
		snprintf(err, errlen,
			 "--size %u%%: %s is empty (0 bytes): %u%% of it is nothing to "
			 "measure; give --size in bytes",
			 spec->size_pct, spec->target, spec->size_pct);
		return -1;
	}
	/* whole * pct / 100 without overflowing 64 bits */
	spec->size_bytes =
	    whole / 100 * spec->size_pct + whole % 100 * spec->size_pct / 100;
	if (!spec->size_bytes) {
		snprintf(err, errlen,
			 "--size %u%% of %s (%" PRIu64 " bytes) is less than a byte; "
			 "give a larger share or --size in bytes",
			 spec->size_pct, spec->target, whole);
		return -1;
	}
	return 0;
}

/* A read of a file bench did not create reads what is there: it is never
 * grown or laid out without --force. */
static int check_read_size(const char *path, const struct stat *st, uint64_t size,
			   char *err, size_t errlen)
{
	if (st->st_size == 0) {
		snprintf(err, errlen,
			 "%s is an empty file pmwal bench did not create: nothing to "
			 "read (name a new file and bench creates and lays it out, or "
			 "pass --force to let bench fill this one)",
			 path);
		return -1;
	}
	if (size > (uint64_t)st->st_size) {
		snprintf(err, errlen,
			 "--size %" PRIu64 " is larger than %s (%lld bytes), a file "
			 "pmwal bench did not create: a read reads what is there (give "
			 "--size %lld or less, or pass --force to let bench extend it)",
			 size, path, (long long)st->st_size, (long long)st->st_size);
		return -1;
	}
	return 0;
}

static int open_file_target(struct io_shared *sh, char *err, size_t errlen)
{
	const struct io_spec *s = sh->spec;
	const char *path = target_file(s->target); /* PATH or file:PATH */
	struct stat st;
	bool exists = stat(path, &st) == 0;
	bool writes = rw_has_dir(s->rw, DIR_WRITE);

	if (!exists && (errno != ENOENT || lstat(path, &st) == 0)) {
		snprintf(err, errlen, "%s: %s", path,
			 errno == ENOENT ? "a dangling symlink" : strerror(errno));
		return -1;
	}
	if (!exists && pmr_in_dev_fs(path)) { /* /dev//x, /dev/shm/../x too */
		snprintf(err, errlen, "%s: no such device", path);
		return -1;
	}
	if (exists && check_file_kind(path, st.st_mode, err, errlen))
		return -1;
	if (exists && writes && target_check_writable(path, s->force, err, errlen))
		return -1;
	/* A file this run creates is its scratch (marked), not the user's. */
	if (!exists) {
		if (target_place_check(s->target, err, errlen))
			return -1;
		if (!target_claim(s->target)) {
			snprintf(err, errlen, "%s: cannot create it: %s", path,
				 errno == EEXIST ? "something else created it meanwhile"
						 : strerror(errno));
			return -1;
		}
		sh->created = true;
	}
	/* Read-only workloads open read-only: a read benchmark of a device
	 * needs no write permission, and never dirties anything. O_NONBLOCK:
	 * a FIFO swapped in since the stat must not block the open. */
	int flags = (writes || sh->created ? O_RDWR : O_RDONLY) | O_NONBLOCK |
		    O_CLOEXEC | O_NOCTTY | (sh->created ? O_NOFOLLOW : 0) |
		    (s->direct ? O_DIRECT : 0);
	/* One that may write is reached by the path rule (pmr/openat.h): not
	 * through another user's link, nor one swapped in since the checks. */
	err[0] = 0;
	sh->fd = flags & O_RDWR ? pmr_open_shared_safe(path, flags, 0, err, errlen)
				: open(path, flags);
	if (sh->fd < 0 && errno == EPERM && err[0])
		return -1;
	if (sh->fd < 0 && errno == EINVAL && s->direct) {
		snprintf(err, errlen,
			 "%s: O_DIRECT refused by its filesystem (tmpfs?); put "
			 "the file on a disk filesystem or pass --direct=0",
			 path);
		return -1;
	}
	if (sh->fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(sh->fd, &st) || check_file_kind(path, st.st_mode, err, errlen))
		return -1;
	(void)fcntl(sh->fd, F_SETFL, fcntl(sh->fd, F_GETFL) & ~O_NONBLOCK);
	bool owned = sh->created || target_is_scratch(s->target);
	if (!sh->created && writes &&
	    check_not_users_file(s->target, path, &st, s->force, err, errlen))
		return -1;
	sh->target_bytes = s->size_bytes;
	sh->sector_bytes = 512;
	if (S_ISBLK(st.st_mode))
		return open_blockdev(sh, path, &st, err, errlen);
	if (!owned && !writes && !s->force &&
	    check_read_size(path, &st, s->size_bytes, err, errlen))
		return -1;
	if (!sh->target_bytes)
		sh->target_bytes =
		    st.st_size > 0 ? (uint64_t)st.st_size : IO_DEFAULT_FILE_BYTES;
	if ((uint64_t)st.st_size < sh->target_bytes) {
		struct statvfs vfs;
		uint64_t grow = sh->target_bytes - (uint64_t)st.st_size;
		if (fstatvfs(sh->fd, &vfs) == 0 &&
		    grow > (uint64_t)vfs.f_bavail * vfs.f_frsize) {
			snprintf(err, errlen,
				 "--size %" PRIu64 " is larger than %s can hold "
				 "(%" PRIu64 " bytes free)",
				 sh->target_bytes, path,
				 (uint64_t)vfs.f_bavail * vfs.f_frsize);
			return -1;
		}
		if (layout_file(path, &st, (uint64_t)st.st_size, sh->target_bytes, err,
				errlen))
			return -1;
	}
	return 0;
}

/* Touch every page of a new region once, as fio lays out a file: otherwise
 * the first pass measures page faults, not the medium. */
static void layout_region(struct pmr_region *r, uint64_t from)
{
	static const uint8_t zero[1u << 16];
	uint64_t size = pmr_size(r);

	for (uint64_t off = from; off < size; off += sizeof(zero))
		pmr_copy_nodrain(r, off, zero,
				 size - off < sizeof(zero) ? size - off : sizeof(zero));
	pmr_barrier(r);
}

static int open_region_target(struct io_shared *sh, struct run_result *r, char *err,
			      size_t errlen)
{
	const struct io_spec *s = sh->spec;
	struct pmr_params p = {.target = s->target, .create_bytes = s->size_bytes};
	struct pmr_info info;
	struct stat st;
	char file[4096];
	/* pmem: and fakepmr: are files too: one this run creates is its
	 * scratch, any other (with data) is the user's. */
	bool has_file = (target_kind(s->target) == PMWAL_TARGET_PMEM ||
			 target_kind(s->target) == PMWAL_TARGET_FAKEPMR) &&
			!target_path(s->target, file, sizeof(file));
	bool exists = has_file && stat(file, &st) == 0;
	uint64_t old_bytes = exists ? (uint64_t)st.st_size : 0;
	bool writes = rw_has_dir(s->rw, DIR_WRITE);

	if (has_file && !exists && (errno != ENOENT || lstat(file, &st) == 0)) {
		snprintf(err, errlen, "%s: %s", file,
			 errno == ENOENT ? "a dangling symlink" : strerror(errno));
		return -1;
	}
	if (exists && !S_ISREG(st.st_mode) &&
	    !(S_ISCHR(st.st_mode) && target_kind(s->target) == PMWAL_TARGET_PMEM) &&
	    check_file_kind(file, st.st_mode, err, errlen))
		return -1;
	if (exists && writes && target_check_writable(s->target, s->force, err, errlen))
		return -1;
	if (has_file && !exists && s->size_bytes) {
		if (target_place_check(s->target, err, errlen))
			return -1;
		if (!target_claim(s->target)) {
			snprintf(err, errlen, "%s: cannot create it: %s", file,
				 strerror(errno));
			return -1;
		}
		sh->created = true;
	}
	bool owned = sh->created || (exists && target_is_scratch(s->target));
	if (exists && !owned && !s->force) {
		/* The user's file: read what is there, never grow it. */
		if (!writes && check_read_size(file, &st, s->size_bytes, err, errlen))
			return -1;
		p.create_bytes = 0;
	}
	if (pmr_open(&p, &sh->region, err, errlen))
		return -1;
	if (has_file && (owned || s->force) && old_bytes < pmr_size(sh->region))
		layout_region(sh->region, old_bytes);
	pmr_get_info(sh->region, &info);
	/* pmr.h: a PMR (real or fake) is written by one thread at a time. */
	if ((info.kind == PMR_KIND_NVME || info.kind == PMR_KIND_FAKE) &&
	    s->numjobs > 1 && rw_has_dir(s->rw, DIR_WRITE)) {
		snprintf(err, errlen,
			 "%s: a PMR takes writes from one thread; use --numjobs 1 "
			 "and --iodepth for concurrency",
			 s->target);
		return -1;
	}
	sh->target_bytes = s->size_bytes ? s->size_bytes : pmr_size(sh->region);
	if (sh->target_bytes > pmr_size(sh->region)) {
		snprintf(err, errlen,
			 "--size %" PRIu64 " is larger than region %s (%" PRIu64
			 " bytes)",
			 sh->target_bytes, s->target, pmr_size(sh->region));
		return -1;
	}
	r->emulated = info.emulated;
	snprintf(r->engine, sizeof(r->engine), "%s nt-copy+%s/%u", info.kind_name,
		 info.barrier, s->iodepth);
	return 0;
}

static int check_spec(const struct io_spec *s, const struct io_shared *sh, char *err,
		      size_t errlen)
{
	if (!sh->region && s->direct && s->bs_bytes % sh->sector_bytes) {
		snprintf(err, errlen,
			 "--bs %u is not a multiple of the %u-byte sector "
			 "(O_DIRECT needs it)",
			 s->bs_bytes, sh->sector_bytes);
		return -1;
	}
	uint64_t slice = sh->target_bytes / s->numjobs;
	if (slice < s->bs_bytes) {
		char pct[32] = "";
		if (s->size_pct)
			snprintf(pct, sizeof(pct), "%u%% (", s->size_pct);
		snprintf(err, errlen,
			 "--size %s%" PRIu64 "%s leaves less than one --bs per job", pct,
			 sh->target_bytes, *pct ? " bytes)" : "");
		return -1;
	}
	return 0;
}

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

/* Waits out the ramp, takes CPU time over the measured window. */
static void supervise(const struct io_spec *s, struct io_job *jobs, struct run_result *r)
{
	struct rusage ru0, ru1;
	uint64_t t0 = now_ns(), total = s->ramp_ns + s->runtime_ns;
	bool ramped = !s->ramp_ns;

	getrusage(RUSAGE_SELF, &ru0);
	progress_begin("io", total);
	for (;;) {
		uint64_t el = now_ns() - t0;
		if (!ramped && el >= s->ramp_ns) {
			getrusage(RUSAGE_SELF, &ru0);
			ramped = true;
		}
		struct io_shared *sh = jobs[0].sh;
		if ((s->runtime_ns && el >= total) || bench_stop ||
		    __atomic_load_n(&sh->abort, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&sh->done, __ATOMIC_ACQUIRE) == (int)s->numjobs)
			break;
		progress_update(el);
		sleep_ns(s->runtime_ns ? 50000000 : 5000000);
	}
	for (uint32_t i = 0; i < s->numjobs; i++)
		pthread_join(jobs[i].tid, NULL);
	progress_end();
	getrusage(RUSAGE_SELF, &ru1);
	uint64_t el = now_ns() - t0;
	r->usr_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	r->sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	r->ctx_switches =
	    (uint64_t)(ru1.ru_nvcsw + ru1.ru_nivcsw - ru0.ru_nvcsw - ru0.ru_nivcsw);
	r->runtime_ns = el > s->ramp_ns ? el - s->ramp_ns : 0;
	if (s->runtime_ns && r->runtime_ns > s->runtime_ns)
		r->runtime_ns = s->runtime_ns;
	r->interrupted = bench_stop;
}

static void run_jobs(struct io_shared *sh, struct run_result *r)
{
	const struct io_spec *s = sh->spec;
	struct io_job *jobs = calloc(s->numjobs, sizeof(*jobs));
	uint64_t slice = sh->target_bytes / s->numjobs / s->bs_bytes * s->bs_bytes;

	if (!jobs) {
		r->err = -ENOMEM;
		snprintf(r->errmsg, sizeof(r->errmsg), "out of memory");
		return;
	}
	pthread_barrier_init(&sh->start, NULL, s->numjobs);
	for (uint32_t i = 0; i < s->numjobs; i++) {
		struct io_job *j = &jobs[i];
		j->sh = sh;
		j->idx = (int)i;
		j->rng = 0x2545F4914F6CDD1Dull * (i + 1) ^ now_ns();
		j->off0 = slice * i;
		j->slice_bytes = slice;
		j->ops_left = slice / s->bs_bytes;
		pthread_create(&j->tid, NULL, job_main, j);
	}
	supervise(s, jobs, r);
	if (!s->runtime_ns) {
		/* One pass: the jobs' own clocks, not the supervisor's polling. */
		uint64_t end = 0;
		for (uint32_t i = 0; i < s->numjobs; i++)
			end = jobs[i].finish_ns > end ? jobs[i].finish_ns : end;
		r->runtime_ns = end > jobs[0].st.start_ns ? end - jobs[0].st.start_ns : 0;
	}
	for (uint32_t i = 0; i < s->numjobs; i++) {
		if (jobs[i].err && !r->err) {
			r->err = jobs[i].err;
			snprintf(r->errmsg, sizeof(r->errmsg), "%s", jobs[i].errmsg);
		}
		result_merge_thread(r, &jobs[i].st);
		if (!sh->region)
			snprintf(r->engine, sizeof(r->engine), "io_uring%s%s%s%s%s",
				 jobs[i].fixed ? " fixed-bufs+files" : "",
				 jobs[i].defer_taskrun ? " defer-taskrun" : "",
				 s->sqpoll ? " sqpoll" : "", s->hipri ? " iopoll" : "",
				 s->direct ? " O_DIRECT" : " buffered");
		job_free(&jobs[i]);
	}
	pthread_barrier_destroy(&sh->start);
	free(jobs);
}

/* The I/O buffers of all jobs together: a quarter of RAM, at most 4 GiB. */
static uint64_t io_buf_cap(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t q = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 4
					  : IO_BUF_MAX_BYTES;

	return q < IO_BUF_MAX_BYTES ? q : IO_BUF_MAX_BYTES;
}

static int validate_spec(const struct io_spec *s, char *err, size_t errlen)
{
	if (!s->target || !*s->target)
		snprintf(err, errlen, "no target given");
	else if (target_kind(s->target) == PMWAL_TARGET_SIM)
		snprintf(err, errlen,
			 "%s: a simulated medium (sim:NAME) lives in the process that "
			 "made it; bench measures files, block devices and regions",
			 s->target);
	else if (!s->bs_bytes || s->bs_bytes > (64u << 20))
		snprintf(err, errlen, "--bs must be in 1..64M");
	else if (!s->iodepth || s->iodepth > IO_QD_MAX)
		snprintf(err, errlen, "--iodepth must be in 1..%u", IO_QD_MAX);
	else if (!s->numjobs || s->numjobs > IO_JOBS_MAX)
		snprintf(err, errlen, "--numjobs must be in 1..%u", IO_JOBS_MAX);
	else if (!s->batch_submit || s->batch_submit > s->iodepth)
		snprintf(err, errlen, "--iodepth_batch_submit must be in 1..iodepth");
	else if (s->rwmixread < 0 || s->rwmixread > 100)
		snprintf(err, errlen, "--rwmixread must be in 0..100");
	else if ((uint64_t)s->bs_bytes * s->iodepth * s->numjobs > io_buf_cap())
		snprintf(err, errlen,
			 "--bs %u x --iodepth %u x --numjobs %u needs %" PRIu64
			 " MiB of I/O buffers, more than the %" PRIu64
			 " MiB allowed (a quarter of RAM, at most 4 GiB): lower "
			 "--bs, --iodepth or --numjobs",
			 s->bs_bytes, s->iodepth, s->numjobs,
			 ((uint64_t)s->bs_bytes * s->iodepth * s->numjobs) >> 20,
			 io_buf_cap() >> 20);
	else
		return 0;
	return -1;
}

struct run_result *io_run(const struct io_spec *spec)
{
	struct run_result *r = result_new();
	struct io_spec sized;
	struct io_shared sh = {.spec = spec, .fd = -1};

	if (!r)
		return NULL;
	if (validate_spec(spec, r->errmsg, sizeof(r->errmsg)))
		goto usage;
	/* A share not taken yet (dual's clients): taken here, before the
	 * target is created or laid out. */
	if (spec->size_pct && !spec->size_bytes) {
		sized = *spec;
		if (io_resolve_size(&sized, r->errmsg, sizeof(r->errmsg)))
			goto usage;
		sh.spec = spec = &sized;
	}
	if (target_is_region(spec->target)) {
		if (open_region_target(&sh, r, r->errmsg, sizeof(r->errmsg)))
			goto usage;
	} else if (open_file_target(&sh, r->errmsg, sizeof(r->errmsg))) {
		goto usage;
	}
	if (check_spec(spec, &sh, r->errmsg, sizeof(r->errmsg)))
		goto usage;
	if (bench_stop)
		goto out;
	run_jobs(&sh, r);
	goto out;
usage:
	r->err = PMWAL_BENCH_EUSAGE;
out:
	if (sh.fd >= 0)
		close(sh.fd);
	pmr_close(sh.region);
	/* Refused: leave nothing behind that this run created. */
	if (sh.created && r->err == PMWAL_BENCH_EUSAGE)
		target_unclaim(spec->target);
	return r;
}
