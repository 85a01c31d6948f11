// SPDX-License-Identifier: MIT
/*
 * dev_file.c - files and block devices: io_uring with O_DIRECT, registered
 * buffers and file, and durability by FUA writes (RWF_DSYNC) or by writes
 * followed by fdatasync issued only after every write completed. The same file
 * also holds the psync fallback (pwritev2), chosen only on request, for
 * kernels or sandboxes that refuse io_uring.
 *
 * Up to dev.commit_lanes leaders call commit() at once (several groups in
 * flight): each takes a lane, an io_uring of its own, for the whole commit.
 * read() is a plain pread and may run on any thread at the same time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "device.h"
#include "seeded.h"
#include "format.h"
#include "pmr.h"

/* Newer than Debian 12's headers: guarded, with the kernel's values. */
#ifndef RWF_ATOMIC
#define RWF_ATOMIC 0x00000040
#endif
#define WAL_STATX_WRITE_ATOMIC	 0x00010000u
#define WAL_STATX_ATOMIC_MIN_OFF 0xa8
#define WAL_STATX_ATOMIC_MAX_OFF 0xac
#define WAL_ZERO_CHUNK_BYTES	 (1u << 20)
#define WAL_MAX_FIXED_BUFS	 ((int)WAL_INFLIGHT_MAX + 1)

/* One io_uring and what one commit at a time does on it. */
struct lane {
	struct io_uring ring;
	bool ready;	      /* ring set up */
	bool fixed_file;      /* the file is registered on this ring */
	bool busy;	      /* a commit holds it */
	uint32_t writes_open; /* writes of its commit not yet seen complete */
};

struct file_dev {
	struct wal_dev dev; /* first: a struct wal_dev * is a struct file_dev * */
	int fd;
	bool uring;
	bool fua;
	bool atomic;
	struct lane lane[WAL_INFLIGHT_MAX]; /* commits */
	int nlanes;
	pthread_mutex_t lane_mu;
	pthread_cond_t lane_cv;
	/* Reads many in flight (recovery's scan, and wal_locate for iterators
	 * and release, which run beside commits): a ring of their own, one
	 * reader at a time. On a commit's ring they took its completions (an
	 * iterator beside appenders hung, or read a clean log as corrupt). */
	struct lane rd;
	pthread_mutex_t rd_mu;
	unsigned int queue_depth;
	int nbufs; /* registered on every lane */
	const uint8_t *buf_base[WAL_MAX_FIXED_BUFS];
	size_t buf_len[WAL_MAX_FIXED_BUFS];
	/* Ordering evidence (wal_dev_file_flush_order): flushes whose completion
	 * came while a write of their commit had not. Atomic: lanes share it. */
	struct wal_dev_flush_order order;
};

static struct lane *lane_take(struct file_dev *f)
{
	pthread_mutex_lock(&f->lane_mu);
	for (;;) {
		for (int i = 0; i < f->nlanes; i++)
			if (!f->lane[i].busy) {
				f->lane[i].busy = true;
				pthread_mutex_unlock(&f->lane_mu);
				return &f->lane[i];
			}
		pthread_cond_wait(&f->lane_cv, &f->lane_mu);
	}
}

static void lane_give(struct file_dev *f, struct lane *l)
{
	pthread_mutex_lock(&f->lane_mu);
	l->busy = false;
	pthread_cond_signal(&f->lane_cv);
	pthread_mutex_unlock(&f->lane_mu);
}

/* Sets up @l's ring, with the file registered where the kernel allows it. */
static int lane_init(struct file_dev *f, struct lane *l)
{
	int rc = io_uring_queue_init(f->queue_depth, &l->ring, 0);

	if (rc < 0)
		return rc;
	l->ready = true;
	l->fixed_file = io_uring_register_files(&l->ring, &f->fd, 1) == 0;
	return 0;
}

/* A ring lets go of a registered file only in its teardown, which the kernel
 * finishes later; unregistering waits for it here, so that the writer lock
 * (on this open file) is free once pmwal_close() returns. */
static void lane_exit(struct lane *l)
{
	if (!l->ready)
		return;
	if (l->fixed_file)
		io_uring_unregister_files(&l->ring);
	io_uring_queue_exit(&l->ring);
	l->ready = false;
}

static void count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* A write still to be done (short writes leave a remainder). */
struct pending {
	const uint8_t *buf;
	size_t len;
	uint64_t off;
};

static int fixed_index(const struct file_dev *f, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	for (int i = 0; i < f->nbufs; i++)
		if (p >= f->buf_base[i] && p + len <= f->buf_base[i] + f->buf_len[i])
			return i;
	return -1;
}

static void prep_write(struct file_dev *f, struct lane *l, struct io_uring_sqe *sqe,
		       const struct pending *w, int idx)
{
	int fd = l->fixed_file ? 0 : f->fd;
	int bi = fixed_index(f, w->buf, w->len);

	if (bi >= 0)
		io_uring_prep_write_fixed(sqe, fd, w->buf, (unsigned int)w->len, w->off,
					  bi);
	else
		io_uring_prep_write(sqe, fd, w->buf, (unsigned int)w->len, w->off);
	if (l->fixed_file)
		sqe->flags |= IOSQE_FIXED_FILE;
	sqe->rw_flags = (f->fua ? RWF_DSYNC : 0) | (f->atomic ? RWF_ATOMIC : 0);
	io_uring_sqe_set_data64(sqe, (uint64_t)idx);
}

/* Splits the group into writes the device takes whole: 4 KiB pieces when
 * atomic writes are on (RWF_ATOMIC wants one unit per write), else <= 1 MiB. */
static int split_ios(const struct file_dev *f, const struct wal_io *ios, int count,
		     struct pending **out)
{
	size_t piece = f->atomic ? WAL_BLOCK_BYTES : (1u << 20);
	size_t n = 0;

	for (int i = 0; i < count; i++)
		n += (ios[i].len + piece - 1) / piece;
	struct pending *w = calloc(n ? n : 1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	n = 0;
	for (int i = 0; i < count; i++)
		for (size_t done = 0; done < ios[i].len; done += piece) {
			size_t len =
			    ios[i].len - done < piece ? ios[i].len - done : piece;

			w[n++] = (struct pending){(const uint8_t *)ios[i].buf + done, len,
						  ios[i].off + done};
		}
	*out = w;
	return (int)n;
}

static int uring_flush(struct file_dev *f, struct lane *l)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
	struct io_uring_cqe *cqe;
	int rc;

	io_uring_prep_fsync(sqe, l->fixed_file ? 0 : f->fd, IORING_FSYNC_DATASYNC);
	if (l->fixed_file)
		sqe->flags |= IOSQE_FIXED_FILE;
	rc = io_uring_submit_and_wait(&l->ring, 1);
	if (rc < 0)
		return rc;
	rc = io_uring_wait_cqe(&l->ring, &cqe);
	if (rc < 0)
		return rc;
	rc = cqe->res;
	io_uring_cqe_seen(&l->ring, cqe);
	count(&f->order.flushes);
	if (l->writes_open)
		count(&f->order.flushes_before_writes);
	return rc < 0 ? rc : 0;
}

static int lane_commit(struct file_dev *f, struct lane *l, const struct wal_io *ios,
		       int nios, struct wal_submitted *submitted)
{
	struct pending *w;
	int n = split_ios(f, ios, nios, &w);
	int next = 0, inflight = 0, rc = 0;

	if (n < 0)
		return n;
	count(&f->order.commits);
	l->writes_open = (uint32_t)n;
	if (PMWAL_BUG(FLUSH_BEFORE_WRITES) && !f->fua)
		rc = uring_flush(f, l); /* the flush goes first: it covers nothing */
	while ((next < n || inflight > 0) && rc == 0) {
		while (next < n && inflight < (int)f->queue_depth) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);

			if (!sqe)
				break;
			prep_write(f, l, sqe, &w[next], next);
			next++;
			inflight++;
		}
		if (submitted && !submitted->done) {
			/* Submit first, let the engine work, then wait. */
			int s = io_uring_submit(&l->ring);

			if (s < 0) {
				rc = s;
				break;
			}
			wal_commit_submitted(submitted);
		}
		int s = io_uring_submit_and_wait(&l->ring, 1);

		if (s < 0) {
			rc = s;
			break;
		}
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;

		io_uring_for_each_cqe(&l->ring, head, cqe)
		{
			struct pending *p = &w[io_uring_cqe_get_data64(cqe)];

			seen++;
			inflight--;
			if (cqe->res < 0) {
				rc = cqe->res;
			} else if ((size_t)cqe->res < p->len) {
				if (cqe->res == 0) {
					rc = -EIO;
					continue;
				}
				/* Short write: the rest goes again at the right offset.
				 */
				p->buf += cqe->res;
				p->len -= (size_t)cqe->res;
				p->off += (uint64_t)cqe->res;
				struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);

				if (!sqe) {
					rc = -EBUSY;
					continue;
				}
				prep_write(f, l, sqe, p, (int)(p - w));
				inflight++;
			} else {
				l->writes_open--; /* this piece is written whole */
			}
		}
		io_uring_cq_advance(&l->ring, seen);
	}
	/* Never leave writes in flight behind an error: drain them. */
	while (inflight > 0) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&l->ring, &cqe) < 0)
			break;
		io_uring_cqe_seen(&l->ring, cqe);
		inflight--;
	}
	free(w);
	/* Another lane's writes may still be in flight: this flush covers
	 * this commit's, which all completed (and whatever else did). */
	if (rc == 0 && !f->fua && !PMWAL_BUG(FLUSH_BEFORE_WRITES))
		rc = uring_flush(f, l);
	return rc;
}

/*
 * Keeps up to queue_depth writes in flight on a lane of its own; a short
 * write is resubmitted for its remainder. Completions arrive in any order: we
 * only count them, and the flush (if any) is issued after the last one.
 */
static int uring_commit(struct wal_dev *dev, const struct wal_io *ios, int nios,
			struct wal_submitted *submitted)
{
	struct file_dev *f = (struct file_dev *)dev;

	if (f->nlanes == 0)
		return -EROFS; /* opened to read: no ring to write on */
	struct lane *l = lane_take(f);
	int rc = lane_commit(f, l, ios, nios, submitted);

	lane_give(f, l);
	return rc;
}

static int psync_commit(struct wal_dev *dev, const struct wal_io *ios, int count,
			struct wal_submitted *submitted)
{
	struct file_dev *f = (struct file_dev *)dev;

	(void)submitted; /* each write waits as it goes: nothing to overlap */
	for (int i = 0; i < count; i++) {
		const uint8_t *p = ios[i].buf;
		size_t left = ios[i].len;
		uint64_t off = ios[i].off;

		while (left > 0) {
			struct iovec iov = {(void *)p, left};
			ssize_t n =
			    pwritev2(f->fd, &iov, 1, (off_t)off, f->fua ? RWF_DSYNC : 0);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				return -EIO;
			p += n;
			left -= (size_t)n;
			off += (uint64_t)n;
		}
	}
	if (!f->fua && fdatasync(f->fd) < 0)
		return -errno;
	return 0;
}

static int file_read(struct wal_dev *dev, void *buf, size_t len, uint64_t off)
{
	struct file_dev *f = (struct file_dev *)dev;
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pread(f->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* past the end: the file was truncated under us */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int rd_many(struct file_dev *f, struct lane *l, void *buf, size_t piece,
		   uint64_t off, int count);

static int uring_read_many(struct wal_dev *dev, void *buf, size_t piece, uint64_t off,
			   int count)
{
	struct file_dev *f = (struct file_dev *)dev;

	if (count < 1 || count > 64 || (unsigned)count > f->queue_depth || !f->rd.ready)
		return file_read(dev, buf, piece * (size_t)count, off);
	pthread_mutex_lock(&f->rd_mu);
	int rc = rd_many(f, &f->rd, buf, piece, off, count);

	pthread_mutex_unlock(&f->rd_mu);
	return rc;
}

static int rd_many(struct file_dev *f, struct lane *l, void *buf, size_t piece,
		   uint64_t off, int count)
{
	struct wal_dev *dev = &f->dev;
	int fd = l->fixed_file ? 0 : f->fd, inflight = 0, rc = 0;
	uint64_t shorts = 0; /* pieces that came back short: read again below */

	for (int i = 0; i < count; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);

		if (!sqe) {
			rc = -EBUSY;
			break;
		}
		io_uring_prep_read(sqe, fd, (uint8_t *)buf + (size_t)i * piece,
				   (unsigned int)piece, off + (uint64_t)i * piece);
		if (l->fixed_file)
			sqe->flags |= IOSQE_FIXED_FILE;
		io_uring_sqe_set_data64(sqe, (uint64_t)i);
		inflight++;
	}
	/* Wait only for what the kernel took: waiting for more would hang. */
	for (int queued = inflight, s; queued > 0; queued -= s) {
		s = io_uring_submit(&l->ring);
		if (s == -EINTR) {
			s = 0;
			continue;
		}
		if (s <= 0) {
			inflight -= queued;
			if (!rc)
				rc = s ? s : -EIO;
			break;
		}
	}
	while (inflight > 0) {
		struct io_uring_cqe *cqe;
		int w = io_uring_wait_cqe(&l->ring, &cqe);

		if (w < 0) {
			if (w == -EINTR)
				continue;
			return w; /* cannot happen with reads submitted; do not hang */
		}
		if (cqe->res < 0 && !rc)
			rc = cqe->res;
		else if (cqe->res >= 0 && (size_t)cqe->res < piece)
			shorts |= 1ull << io_uring_cqe_get_data64(cqe);
		io_uring_cqe_seen(&l->ring, cqe);
		inflight--;
	}
	for (int i = 0; i < count && !rc; i++)
		if (shorts >> i & 1)
			rc = file_read(dev, (uint8_t *)buf + (size_t)i * piece, piece,
				       off + (uint64_t)i * piece);
	return rc;
}

static void file_close(struct wal_dev *dev)
{
	struct file_dev *f = (struct file_dev *)dev;

	if (!f)
		return;
	for (int i = 0; i < f->nlanes; i++)
		lane_exit(&f->lane[i]);
	lane_exit(&f->rd);
	pthread_mutex_destroy(&f->rd_mu);
	if (f->fd >= 0)
		close(f->fd);
	pthread_mutex_destroy(&f->lane_mu);
	pthread_cond_destroy(&f->lane_cv);
	free(f);
}

static int file_register_buffers(struct wal_dev *dev, void *const *bufs,
				 const size_t *lens, int count)
{
	struct file_dev *f = (struct file_dev *)dev;
	struct iovec iov[WAL_MAX_FIXED_BUFS] = {{0}};

	if (!f->uring || count > WAL_MAX_FIXED_BUFS)
		return 0;
	for (int i = 0; i < count; i++)
		iov[i] = (struct iovec){bufs[i], lens[i]};
	/* Registration pins memory; where the limit refuses, plain writes do
	 * (on every lane, or on none). */
	for (int l = 0; l < f->nlanes; l++)
		if (io_uring_register_buffers(&f->lane[l].ring, iov, (unsigned int)count) <
		    0) {
			while (l-- > 0)
				io_uring_unregister_buffers(&f->lane[l].ring);
			return 0;
		}
	for (int i = 0; i < count; i++) {
		f->buf_base[i] = bufs[i];
		f->buf_len[i] = lens[i];
	}
	f->nbufs = count;
	return 0;
}

static int file_fd(struct wal_dev *dev)
{
	return ((struct file_dev *)dev)->fd;
}

static const struct wal_dev_ops uring_ops = {.commit = uring_commit,
					     .read = file_read,
					     .close = file_close,
					     .read_many = uring_read_many,
					     .file_fd = file_fd,
					     .register_buffers = file_register_buffers};
static const struct wal_dev_ops psync_ops = {
    .commit = psync_commit, .read = file_read, .close = file_close, .file_fd = file_fd};

int wal_dev_file_flush_order(const struct wal_dev *dev, struct wal_dev_flush_order *out)
{
	const struct file_dev *f = (const struct file_dev *)dev;

	if (!dev || dev->ops != &uring_ops)
		return -EINVAL;
	out->commits = __atomic_load_n(&f->order.commits, __ATOMIC_RELAXED);
	out->flushes = __atomic_load_n(&f->order.flushes, __ATOMIC_RELAXED);
	out->flushes_before_writes =
	    __atomic_load_n(&f->order.flushes_before_writes, __ATOMIC_RELAXED);
	return 0;
}

/* The device's atomic write unit from statx, raw because glibc 2.36 predates it. */
static void probe_atomic(struct file_dev *f, uint32_t *unit_min, uint32_t *unit_max)
{
	_Alignas(8) uint8_t stx[256] = {0};

	*unit_min = *unit_max = 0;
	if (syscall(SYS_statx, f->fd, "", AT_EMPTY_PATH, WAL_STATX_WRITE_ATOMIC, stx) !=
	    0)
		return;
	if (!(wal_get32(stx) & WAL_STATX_WRITE_ATOMIC))
		return;
	*unit_min = wal_get32(stx + WAL_STATX_ATOMIC_MIN_OFF);
	*unit_max = wal_get32(stx + WAL_STATX_ATOMIC_MAX_OFF);
}

static void size_unlock(int fd)
{
	struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};

	fcntl(fd, F_OFD_SETLK, &fl);
}

/* Zero-fills a new file so the log never writes into unwritten extents (each
 * such write would need a metadata commit before it is durable). */
static int zero_fill(int fd, uint64_t from, uint64_t to)
{
	void *zero;
	int rc = 0;

	if (posix_memalign(&zero, WAL_BLOCK_BYTES, WAL_ZERO_CHUNK_BYTES))
		return -ENOMEM;
	memset(zero, 0, WAL_ZERO_CHUNK_BYTES);
	/* O_DIRECT: from a block boundary (a file of odd size, created over
	 * with --force, has its last partial block zeroed too). */
	from &= ~(uint64_t)(WAL_BLOCK_BYTES - 1);
	for (uint64_t off = from; off < to && rc == 0;) {
		size_t len = to - off < WAL_ZERO_CHUNK_BYTES ? (size_t)(to - off)
							     : WAL_ZERO_CHUNK_BYTES;
		ssize_t n = pwrite(fd, zero, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = n < 0 ? -errno : -EIO;
		else
			off += (uint64_t)n;
	}
	free(zero);
	if (rc == 0 && fdatasync(fd) < 0)
		rc = -errno;
	return rc;
}

static int open_fd(const struct wal_dev_params *p, char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO swapped in after the stat must not block the
	 * open (setup_geometry refuses it); cleared before any I/O. */
	int flags = (p->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;

	struct stat st;

	/* Name what the target is before O_DIRECT's EINVAL could blur it. */
	if (stat(p->target, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		snprintf(err, errlen,
			 "%s: %s; a log lives in a regular file or on a block device",
			 p->target,
			 S_ISDIR(st.st_mode) ? "is a directory"
					     : "not a regular file or block device");
		return -EINVAL;
	}
	if (!p->buffered_io)
		flags |= O_DIRECT;
	bool exists = stat(p->target, &st) == 0, blk = exists && S_ISBLK(st.st_mode);

	/* A device node that is not there (a partition not yet scanned, a
	 * mistyped name) must not become a file in /dev's memory; a file on a
	 * filesystem of its own mounted below /dev (/dev/shm) is a file. */
	if (!exists && p->create_bytes && pmr_in_dev_fs(p->target)) {
		snprintf(err, errlen,
			 "%s: no such device; pmwal does not create a log as a file under "
			 "/dev (check the name: lsblk)",
			 p->target);
		return -ENOENT;
	}

	if (p->create_bytes && !(blk && !p->create_excl))
		flags |= O_CREAT | (p->create_excl ? O_EXCL : 0);
	/*
	 * A writer claims a block device (O_EXCL without O_CREAT): the claim is
	 * the device's, not the node's, so a writer through another node of it
	 * is refused, and it lasts as long as this open file, in-flight writes
	 * included (lock.c). Claimed already: name the holder, or wait up to
	 * lock.c's bound for one that has exited.
	 */
	if (blk && !p->readonly && !p->create_excl)
		flags |= O_EXCL;
	struct timespec t0, now;
	int fd;

	err[0] = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		fd = pmr_open_shared_safe(p->target, flags, 0640, err, errlen);
		if (fd < 0 && errno == EPERM && err[0])
			return -EPERM; /* another user's link or file; said why */
		if (fd >= 0 || !blk || p->readonly || errno != EBUSY)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long waited = (now.tv_sec - t0.tv_sec) * 1000L +
			      (now.tv_nsec - t0.tv_nsec) / 1000000L;

		if (wal_busy_device(p->target, waited, err, errlen))
			return -EBUSY;
		usleep(5000);
	}
	if (fd >= 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == 0)
		return fd;
	int e = errno;

	if (fd >= 0)
		close(fd);

	if (e == EINVAL && !p->buffered_io) {
		snprintf(
		    err, errlen,
		    "%s: the filesystem refuses O_DIRECT (EINVAL, tmpfs does); put the "
		    "log on "
		    "a filesystem or block device with direct I/O, or open it buffered "
		    "(--buffered, PMWAL_OPEN_BUFFERED_IO)",
		    p->target);
		return PMWAL_EUNSUPPORTED;
	}
	if (e == ENOENT)
		snprintf(err, errlen, "%s: no such file or device%s", p->target,
			 p->create_bytes ? " (its directory is missing)"
					 : "; create the log first (pmwal create)");
	else if (e == EEXIST)
		snprintf(err, errlen,
			 "%s: already exists; remove it or open without EXCL", p->target);
	else if (e == EACCES || e == EPERM || e == EROFS)
		snprintf(err, errlen,
			 "%s: %s; check permissions (block devices need root)", p->target,
			 strerror(e));
	else
		snprintf(err, errlen, "%s: open: %s", p->target, strerror(e));
	return -e;
}

/*
 * A file is sized and zero-filled under an exclusive lock on byte 0, the
 * byte the writer lock takes (lock.c), and only while it is still short: two
 * programs that create one missing log at the same moment (a program started
 * twice) both see it short, and the slower one's zero-fill must not run over
 * the superblock and records the faster one has written since, under the
 * writer lock. Returns 0 with the lock held (size it, then size_unlock), 1
 * when the file is whole already (another opener sized it; @st updated), or
 * -EBUSY when another process has held the byte for WAL_SIZE_WAIT_MS (a
 * writer of a log still short, or a process that can read the file and
 * holds a lock on it).
 */
#define WAL_SIZE_WAIT_MS 3000
static int size_locked(int fd, const struct wal_dev_params *p, struct stat *st, char *err,
		       size_t errlen)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};

	for (int waited_ms = 0; fcntl(fd, F_OFD_SETLK, &fl) < 0; waited_ms += 5) {
		if (errno != EAGAIN && errno != EACCES)
			return -errno;
		if (fstat(fd, st) == 0 && (uint64_t)st->st_size >= p->create_bytes)
			return 1;
		if (waited_ms >= WAL_SIZE_WAIT_MS) {
			snprintf(err, errlen,
				 "%s: another process holds a lock on the log while it is "
				 "still being made; start one writer at a time (pmwal info "
				 "names a writer)",
				 p->target);
			return -EBUSY;
		}
		usleep(5000);
	}
	if (fstat(fd, st) < 0) {
		int e = errno;

		size_unlock(fd);
		return -e;
	}
	if ((uint64_t)st->st_size >= p->create_bytes) {
		size_unlock(fd);
		return 1;
	}
	return 0;
}

static int setup_geometry(struct file_dev *f, const struct wal_dev_params *p, char *err,
			  size_t errlen)
{
	struct stat st;

	if (fstat(f->fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes = 0;
		int lbs = 512;

		if (ioctl(f->fd, BLKGETSIZE64, &bytes) < 0 ||
		    ioctl(f->fd, BLKSSZGET, &lbs) < 0)
			return -errno;
		if (lbs > (int)WAL_BLOCK_BYTES || WAL_BLOCK_BYTES % (unsigned int)lbs) {
			snprintf(err, errlen,
				 "%s: logical sector of %d bytes; pmwal needs one that "
				 "divides "
				 "4096 (reformat the namespace to 512 or 4096)",
				 p->target, lbs);
			return PMWAL_EUNSUPPORTED;
		}
		f->dev.size_bytes = bytes;
		f->dev.sector_bytes = (uint32_t)lbs;
		snprintf(f->dev.medium, sizeof(f->dev.medium), "blockdev");
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file or block device",
			 p->target);
		return -EINVAL;
	}
	if (p->create_bytes && (uint64_t)st.st_size < p->create_bytes) {
		int rc = size_locked(f->fd, p, &st, err, errlen);

		if (rc < 0)
			return rc;
		if (rc == 1)
			goto sized; /* another opener made it whole first */
		rc = posix_fallocate(f->fd, 0, (off_t)p->create_bytes);
		if (rc) {
			size_unlock(f->fd);
			snprintf(err, errlen, "%s: cannot allocate %llu bytes: %s",
				 p->target, (unsigned long long)p->create_bytes,
				 strerror(rc));
			return -rc;
		}
		rc = zero_fill(f->fd, (uint64_t)st.st_size, p->create_bytes);
		size_unlock(f->fd);
		if (rc) {
			snprintf(err, errlen, "%s: zero-filling the new log: %s",
				 p->target, strerror(-rc));
			return rc;
		}
		st.st_size = (off_t)p->create_bytes;
	}
sized:
	f->dev.size_bytes = (uint64_t)st.st_size;
	f->dev.sector_bytes = WAL_BLOCK_BYTES;
	snprintf(f->dev.medium, sizeof(f->dev.medium), "file");
	return 0;
}

static int setup_uring(struct file_dev *f, const struct wal_dev_params *p, char *err,
		       size_t errlen)
{
	f->queue_depth = p->queue_depth ? p->queue_depth : 64;
	/* A ring for reads (recovery's scan, wal_locate), and a writer one per
	 * group it may have in flight. */
	int lanes = p->readonly ? 0 : p->commit_lanes < 1 ? 1 : (int)p->commit_lanes;
	int rc = lane_init(f, &f->rd);

	if (rc < 0)
		goto refused;

	if (lanes > (int)WAL_INFLIGHT_MAX)
		lanes = (int)WAL_INFLIGHT_MAX;
	for (f->nlanes = 0; f->nlanes < lanes; f->nlanes++)
		if ((rc = lane_init(f, &f->lane[f->nlanes])) < 0)
			break;
	if (rc < 0 && f->nlanes > 0) {
		rc = 0; /* fewer lanes than asked (a ring limit): fewer in flight */
	} else if (rc < 0) {
		lane_exit(&f->rd);
refused:
		snprintf(
		    err, errlen,
		    "%s: io_uring refused (%s): the kernel has it disabled "
		    "(sysctl kernel.io_uring_disabled) or a seccomp filter blocks it; "
		    "allow it, or use the pwritev fallback (--no-uring, "
		    "PMWAL_OPEN_NO_URING)",
		    p->target, strerror(-rc));
		return PMWAL_EUNSUPPORTED;
	}
	f->uring = true;
	f->dev.commit_lanes = (uint32_t)f->nlanes;
	return 0;
}

int wal_dev_open_file(const struct wal_dev_params *p, struct wal_dev **out, char *err,
		      size_t errlen)
{
	struct file_dev *f = calloc(1, sizeof(*f));
	int rc;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	pthread_mutex_init(&f->lane_mu, NULL);
	pthread_cond_init(&f->lane_cv, NULL);
	pthread_mutex_init(&f->rd_mu, NULL);
	f->fd = open_fd(p, err, errlen);
	if (f->fd < 0) {
		rc = f->fd;
		goto err_free;
	}
	rc = setup_geometry(f, p, err, errlen);
	if (rc)
		goto err_close;
	if (!p->no_uring) {
		rc = setup_uring(f, p, err, errlen);
		/* Readers (verify, dump) need no ring: report the path a writer
		 * would take, but never refuse a read over it. */
		if (rc && !p->readonly)
			goto err_close;
		rc = 0;
	}
	uint32_t amin, amax;

	probe_atomic(f, &amin, &amax);
	f->atomic =
	    !p->buffered_io && amin && amin <= WAL_BLOCK_BYTES && amax >= WAL_BLOCK_BYTES;
	f->fua = !p->fdatasync;
	f->dev.ops = f->uring ? &uring_ops : &psync_ops;
	if (!f->uring) /* pwritev2 and fdatasync: any number at once */
		f->dev.commit_lanes = p->commit_lanes > WAL_INFLIGHT_MAX ? WAL_INFLIGHT_MAX
									: p->commit_lanes;
	f->dev.atomic_write_bytes = f->atomic ? WAL_BLOCK_BYTES : 0;
	f->dev.caps = (f->atomic ? WAL_CAP_ATOMIC_BLOCK : 0) |
		      (p->buffered_io ? 0 : WAL_CAP_DIRECT);
	snprintf(f->dev.io_path, sizeof(f->dev.io_path), "%s",
		 f->uring ? "io_uring" : "psync");
	snprintf(f->dev.durability, sizeof(f->dev.durability), "%s%s",
		 f->fua ? "fua (RWF_DSYNC writes)" : "fdatasync after write completion",
		 f->atomic ? ", RWF_ATOMIC 4 KiB" : ", no atomic write unit");
	*out = &f->dev;
	return 0;
err_close:
	close(f->fd);
err_free:
	free(f);
	return rc;
}
