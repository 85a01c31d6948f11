// SPDX-License-Identifier: MIT
/*
 * pmwal_raft.c - raft's storage in a pmwal log (pmwal_raft.h, docs/raft.md).
 *
 * The log holds two kinds of record (little-endian, 24-byte header):
 *   'E' entry:    kind, 0, type (u16), 0 (u32), index (u64), term (u64), data
 *   'T' truncate: kind, 0, 0, 0, index: entries from index on are void
 * Load replays them in LSN order. An entry whose index is at or below the
 * last one replaces the entries from its index on (the log of an append
 * refused part-way).
 *
 * Term and vote live in one small file, DIR/meta, replaced atomically
 * (DIR/meta.tmp, fdatasync, rename, fsync of DIR): "PMRFMET2", term, vote,
 * the log's id (pmwal_info.log_id) (u64 each), XXH3-64 of the 32 bytes
 * before it. A crash leaves the old file or the new one, never a torn one, so
 * a meta that is there but does not check is damage and is refused (taking
 * an older term or vote would let the node vote twice). The log id ties the
 * directory to its log: a log of another node or cluster, or a log gone and
 * created again, is refused. They change at elections only, and kept out of
 * the log they never stand in the way of a release.
 *
 * The snapshot is one file, DIR/snapshot, replaced atomically: "PMRFSNP1",
 * index, term, configuration index (u64 each), the configuration (u32 count,
 * then per server id u64, role u32, address length u32, address), the data
 * length (u64) and data, then "PMRFEND1" and the XXH3-64 of all before it.
 *
 * Threads: every raft_io call runs on the loop's thread. pmwal runs append
 * callbacks on its own threads, in LSN order; they queue the request and wake
 * the loop (uv_async_t), which calls raft's callbacks in that order.
 */
#include "pmwal_raft.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <uv.h>
#include <xxhash.h>

#include <pmwal.h>

#include "openat.h" /* pmr/: the path rule, built in */

#define HDR 24
#define SNAP_MAGIC "PMRFSNP1"
#define SNAP_END "PMRFEND1"

struct praft;

struct done { /* an append whose records are durable (or failed) */
	struct praft *p;
	struct raft_io_append *req;
	raft_io_append_cb cb;
	int status;
	struct done *next;
};

struct praft {
	struct raft_io io; /* raft_uv's, with the storage calls replaced */
	struct uv_loop_s *loop;
	struct pmwal *w;
	char target[4096], dir[4096], snap_path[4200], snap_tmp[4200], uv_dir[4200];
	int create;
	bool own_log; /* the target is DIR/log, made by this storage */
	uint64_t capacity;
	/* What the log holds, kept as appended. */
	raft_term term;
	raft_id vote;
	bool have_meta;	     /* DIR/meta was there at start, or written since */
	uint64_t meta_log_id; /* the log DIR/meta belongs with */
	char meta_path[4200], meta_tmp[4200];
	raft_index first_index; /* the index of lsn_of[0] */
	uint64_t *lsn_of;	/* the LSN of each live entry */
	size_t n, cap;
	/* Durable appends, waiting for the loop. */
	uv_async_t async;
	bool async_open;
	pthread_mutex_t mu;
	struct done *head, **tail;
	/* raft_uv's own close, wrapped. */
	void (*uv_close)(struct raft_io *io, raft_io_close_cb cb);
	int (*uv_send)(struct raft_io *io, struct raft_io_send *req,
		       const struct raft_message *message, raft_io_send_cb cb);
	raft_io_close_cb close_cb;
	int failed; /* a raft error: nothing more is written */
	char fail_msg[512]; /* what stopped it (pmwal_raft_error()) */
	int lock_fd; /* DIR/lock: one node per directory */
	int dir_fd;  /* DIR: the storage's files are opened relative to it */
};

static struct praft *P(struct raft_io *io)
{
	return (struct praft *)io; /* io is the first member */
}

struct pmwal *pmwal_raft_log(struct raft_io *io)
{
	return P(io)->w;
}

static int errorf(struct praft *p, int rv, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->io.errmsg, sizeof(p->io.errmsg), fmt, ap);
	va_end(ap);
	return rv;
}

/* The storage fails stop with @rv, io->errmsg saying why: every later call
 * is refused with it, and pmwal_raft_error() names it. */
static int stop(struct praft *p, int rv)
{
	if (!p->failed) {
		p->failed = rv;
		snprintf(p->fail_msg, sizeof(p->fail_msg), "%s", p->io.errmsg);
	}
	return rv;
}

static int refuse_failed(struct praft *p)
{
	return errorf(p, p->failed, "the storage failed earlier: %s", p->fail_msg);
}

const char *pmwal_raft_error(struct raft_io *io)
{
	return io && P(io)->failed ? P(io)->fail_msg : NULL;
}

/* A pmwal code as raft's, with pmwal's message. */
static int log_error(struct praft *p, int rc, const char *what)
{
	int rv = rc == PMWAL_EFULL		  ? RAFT_NOSPACE
		 : rc == PMWAL_ETOOBIG		  ? RAFT_TOOBIG
		 : rc == PMWAL_ECORRUPT		  ? RAFT_CORRUPT
		 : rc == -ENOMEM		  ? RAFT_NOMEM
						  : RAFT_IOERR;

	errorf(p, rv, "%s: %s", what, p->w ? pmwal_errmsg(p->w) : pmwal_strerror(rc));
	if (rv == RAFT_IOERR || rv == RAFT_CORRUPT)
		stop(p, rv); /* the log failed stop: so does this storage */
	return rv;
}

static void put_hdr(uint8_t *h, char kind, unsigned type, uint64_t a, uint64_t b)
{
	memset(h, 0, HDR);
	h[0] = (uint8_t)kind;
	h[2] = (uint8_t)type;
	h[3] = (uint8_t)(type >> 8);
	memcpy(h + 8, &a, 8);
	memcpy(h + 16, &b, 8);
}

/* ---- the index -> LSN map ------------------------------------------------ */

static raft_index last_index(struct praft *p)
{
	return p->first_index + p->n - 1;
}

static int map_push(struct praft *p, uint64_t lsn)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 1024;
		uint64_t *m = realloc(p->lsn_of, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		p->lsn_of = m;
		p->cap = cap;
	}
	p->lsn_of[p->n++] = lsn;
	return 0;
}

/* Drops the entries before @index (they were released). */
static void map_drop_before(struct praft *p, raft_index index)
{
	if (index <= p->first_index)
		return;
	size_t k = index - p->first_index;

	if (k > p->n)
		k = p->n;
	memmove(p->lsn_of, p->lsn_of + k, (p->n - k) * sizeof(*p->lsn_of));
	p->n -= k;
	p->first_index += k;
}

/* ---- the storage's own files ---------------------------------------------- */

/*
 * The files live in DIR and are opened relative to it, never through a
 * symbolic link, and only when this user owns them: in a directory another
 * user can write (a sticky one: pmwal_raft_init refuses others) a link or a
 * file planted there must not be written through or loaded. Messages go to
 * @msg (the pool's threads must not write io->errmsg).
 */
static int open_own(int dir_fd, const char *name, const char *path, int flags, char *msg,
		    size_t msglen)
{
	int fd = openat(dir_fd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0640);
	struct stat st;

	/* (The kernel's protected_symlinks may refuse it first: EACCES.) */
	if (fd < 0 && errno != ENOENT &&
	    (errno == ELOOP ||
	     (!fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode)))) {
		snprintf(msg, msglen, "%s: a symbolic link: not following it (another user's? "
				      "remove it)", path);
		return -ELOOP;
	}
	if (fd < 0) {
		int e = errno;

		snprintf(msg, msglen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fd, &st)) {
		int e = errno;

		snprintf(msg, msglen, "%s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(msg, msglen,
			 !S_ISREG(st.st_mode) ? "%s: not a regular file: move it away"
					      : "%s: owned by uid %u, not by this node's user: "
						"another user's file; not using it (move it away)",
			 path, (unsigned)st.st_uid);
		close(fd);
		return S_ISREG(st.st_mode) ? -EPERM : -EINVAL;
	}
	return fd;
}

/* Creates DIR/@name as a new file. A leftover of this user's (a crash in
 * the middle of a write) is removed first; anything else there is refused. */
static int create_tmp(int dir_fd, const char *name, const char *path, char *msg,
		      size_t msglen)
{
	for (int tries = 0;; tries++) {
		int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0640);
		struct stat st;

		if (fd >= 0)
			return fd;
		int e = errno;

		if (e != EEXIST || tries || fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW)) {
			snprintf(msg, msglen, "%s: %s", path, strerror(e));
			return -e;
		}
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
			snprintf(msg, msglen,
				 "%s: exists and is %s: not writing through it (another user's? "
				 "remove it)",
				 path, S_ISLNK(st.st_mode)   ? "a symbolic link"
				       : S_ISREG(st.st_mode) ? "another user's file"
							     : "not a regular file");
			return -EEXIST;
		}
		if (unlinkat(dir_fd, name, 0) && errno != ENOENT) {
			snprintf(msg, msglen, "%s: %s", path, strerror(errno));
			return -errno;
		}
	}
}

/* DIR must be a directory no other user can plant files in: not writable
 * by group or others unless sticky, and owned by this user or root. */
static int check_dir(int fd, const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return RAFT_IOERR;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(err, errlen,
			 "%s: writable by other users (mode %04o) and not sticky: they could "
			 "replace the node's files; chmod go-w it (or +t)",
			 dir, (unsigned)(st.st_mode & 07777));
		return RAFT_INVALID;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(err, errlen,
			 "%s: owned by uid %u, not by this node's user (uid %u) or root: its "
			 "owner could replace the node's files",
			 dir, (unsigned)st.st_uid, (unsigned)geteuid());
		return RAFT_INVALID;
	}
	return 0;
}

/* ---- term and vote --------------------------------------------------------- */

/* Writes term, vote and the log id as DIR/meta, durable before it returns.
 * A failure before the rename leaves the old file as it was: the state in
 * memory goes back to it and nothing else stops. */
static int write_meta(struct praft *p, raft_term term, raft_id vote)
{
	uint8_t m[40];
	uint64_t sum;
	char msg[sizeof(p->io.errmsg)] = "";
	int fd = create_tmp(p->dir_fd, "meta.tmp", p->meta_tmp, msg, sizeof(msg)), rc;

	memcpy(m, "PMRFMET2", 8);
	memcpy(m + 8, &term, 8);
	memcpy(m + 16, &vote, 8);
	memcpy(m + 24, &p->meta_log_id, 8);
	sum = XXH3_64bits(m, 32);
	memcpy(m + 32, &sum, 8);
	rc = fd < 0 ? fd : 0;
	while (!rc) {
		ssize_t w = pwrite(fd, m, sizeof(m), 0);

		if (w == (ssize_t)sizeof(m))
			break;
		rc = w < 0 && errno == EINTR ? 0 : w < 0 ? -errno : -EIO;
	}
	if (!rc && fdatasync(fd))
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (!rc && renameat(p->dir_fd, "meta.tmp", p->dir_fd, "meta"))
		rc = -errno;
	if (rc && fd < 0)
		return errorf(p, RAFT_IOERR, "term and vote: %s (unchanged)", msg);
	if (rc) {
		unlinkat(p->dir_fd, "meta.tmp", 0);
		return errorf(p, RAFT_IOERR, "term and vote: %s: %s (unchanged)", p->meta_path,
			      strerror(-rc));
	}
	if (fsync(p->dir_fd)) {
		/* The new file is in place but its name may not be durable. */
		rc = errno;
		return stop(p, errorf(p, RAFT_IOERR, "term and vote: fsync %s: %s", p->dir,
				      strerror(rc)));
	}
	p->term = term;
	p->vote = vote;
	p->have_meta = true;
	return 0;
}

/* Reads DIR/meta: 0 with have_meta false where there is none, 0 with the
 * state loaded, or a raft error naming what is wrong. */
static int read_meta(struct praft *p, char *err, size_t errlen)
{
	uint8_t m[41];
	uint64_t sum;
	int fd = open_own(p->dir_fd, "meta", p->meta_path, O_RDONLY | O_NONBLOCK, err, errlen);

	p->have_meta = false;
	p->term = p->vote = 0;
	p->meta_log_id = 0;
	if (fd == -ENOENT)
		return 0;
	if (fd == -EINVAL) {
		snprintf(err, errlen, "%s: not a regular file: move it away (term and vote "
			 "are kept there)", p->meta_path);
		return RAFT_CORRUPT;
	}
	if (fd < 0) /* a link, another user's file; or the error's */
		return fd == -ELOOP || fd == -EPERM ? RAFT_INVALID : RAFT_IOERR;
	ssize_t r = pread(fd, m, sizeof(m), 0);

	close(fd);
	memcpy(&sum, m + 32, 8);
	if (r != 40 || memcmp(m, "PMRFMET2", 8) || sum != XXH3_64bits(m, 32)) {
		snprintf(err, errlen,
			 "%s: damaged (%zd bytes, checksum or magic wrong): the node's term and "
			 "vote are lost, and taking older ones could let it vote twice; remove "
			 "DIR and add the node back to the cluster as a new one",
			 p->meta_path, r);
		return RAFT_CORRUPT;
	}
	memcpy(&p->term, m + 8, 8);
	memcpy(&p->vote, m + 16, 8);
	memcpy(&p->meta_log_id, m + 24, 8);
	p->have_meta = true;
	return 0;
}

static int pr_set_term(struct raft_io *io, raft_term term)
{
	struct praft *p = P(io);

	if (p->failed)
		return refuse_failed(p);
	return write_meta(p, term, 0);
}

static int pr_set_vote(struct raft_io *io, raft_id id)
{
	struct praft *p = P(io);

	if (p->failed)
		return refuse_failed(p);
	return write_meta(p, p->term, id);
}

/* ---- appends --------------------------------------------------------------- */

/* pmwal's callback, on a pmwal thread: hand the request to the loop. */
static void on_durable(void *arg, uint64_t lsn, int status)
{
	struct done *d = arg;
	struct praft *p = d->p;

	(void)lsn;
	d->status = status ? RAFT_IOERR : 0;
	pthread_mutex_lock(&p->mu);
	*p->tail = d;
	p->tail = &d->next;
	pthread_mutex_unlock(&p->mu);
	uv_async_send(&p->async);
}

/* On the loop: raft's callbacks for every durable append, in order. */
static void deliver(struct praft *p)
{
	pthread_mutex_lock(&p->mu);
	struct done *d = p->head;

	p->head = NULL;
	p->tail = &p->head;
	pthread_mutex_unlock(&p->mu);
	while (d) {
		struct done *next = d->next;

		if (d->status) {
			errorf(p, d->status, "append: %s", pmwal_errmsg(p->w));
			stop(p, d->status);
		}
		d->cb(d->req, d->status);
		free(d);
		d = next;
	}
}

static void async_cb(uv_async_t *a)
{
	deliver(a->data);
}

static int pr_append(struct raft_io *io, struct raft_io_append *req,
		     const struct raft_entry entries[], unsigned n, raft_io_append_cb cb)
{
	struct praft *p = P(io);
	size_t bytes = 0;

	if (p->failed)
		return refuse_failed(p);
	if (!n || n > INT32_MAX)
		return errorf(p, RAFT_INVALID, "append of %u entries", n);
	for (unsigned i = 0; i < n; i++)
		bytes += HDR + entries[i].buf.len;
	uint8_t *buf = malloc(bytes);
	struct iovec *iov = malloc(n * sizeof(*iov));
	struct done *d = malloc(sizeof(*d));

	if (!buf || !iov || !d) {
		free(buf);
		free(iov);
		free(d);
		return errorf(p, RAFT_NOMEM, "append: out of memory");
	}
	raft_index index = last_index(p) + 1;
	uint8_t *at = buf;

	for (unsigned i = 0; i < n; i++) {
		put_hdr(at, 'E', entries[i].type, index + i, entries[i].term);
		if (entries[i].buf.len)
			memcpy(at + HDR, entries[i].buf.base, entries[i].buf.len);
		iov[i] = (struct iovec){at, HDR + entries[i].buf.len};
		at += HDR + entries[i].buf.len;
	}
	*d = (struct done){p, req, cb, 0, NULL};
	uint64_t first;
	int rc = pmwal_appendv_async(p->w, iov, (int)n, on_durable, d, &first);

	free(buf); /* staged: pmwal copied it */
	free(iov);
	if (rc) {
		free(d);
		return log_error(p, rc, "append");
	}
	for (unsigned i = 0; i < n; i++)
		if (map_push(p, first + i))
			return stop(p, errorf(p, RAFT_NOMEM, "append: out of memory"));
	return 0;
}

/* A record ordered after what was appended before it; durable with the next
 * durable group (and so before any later append is acknowledged). */
static void noop(void *arg, uint64_t lsn, int status)
{
	(void)arg, (void)lsn, (void)status;
}

static int pr_truncate(struct raft_io *io, raft_index index)
{
	struct praft *p = P(io);
	uint8_t rec[HDR];
	int rc;

	if (p->failed)
		return refuse_failed(p);
	if (index < p->first_index || index > last_index(p))
		return errorf(p, RAFT_INVALID,
			      "truncate at %llu: the log holds entries %llu to %llu", index,
			      (unsigned long long)p->first_index, last_index(p));
	put_hdr(rec, 'T', 0, index, 0);
	if ((rc = pmwal_append_async(p->w, rec, sizeof(rec), noop, NULL, NULL)) != 0)
		return log_error(p, rc, "truncate");
	p->n = index - p->first_index;
	return 0;
}

/* ---- the snapshot file ----------------------------------------------------- */

static int write_all(int fd, const void *b, size_t n)
{
	for (const char *c = b; n;) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The snapshot as one buffer (format at the top). */
static int snap_encode(const struct raft_snapshot *s, uint8_t **out, size_t *len)
{
	size_t n = 8 + 24 + 4 + 8 + 16;

	for (unsigned i = 0; i < s->configuration.n; i++)
		n += 16 + strlen(s->configuration.servers[i].address);
	for (unsigned i = 0; i < s->n_bufs; i++)
		n += s->bufs[i].len;
	uint8_t *b = malloc(n), *at = b;

	if (!b)
		return -ENOMEM;
#define PUT(p, l) (memcpy(at, (p), (l)), at += (l))
	uint64_t u;
	uint32_t c = s->configuration.n;

	PUT(SNAP_MAGIC, 8);
	PUT(&s->index, 8);
	PUT(&s->term, 8);
	PUT(&s->configuration_index, 8);
	PUT(&c, 4);
	for (unsigned i = 0; i < c; i++) {
		const struct raft_server *sv = &s->configuration.servers[i];
		uint32_t role = (uint32_t)sv->role, al = (uint32_t)strlen(sv->address);

		PUT(&sv->id, 8);
		PUT(&role, 4);
		PUT(&al, 4);
		PUT(sv->address, al);
	}
	u = 0;
	for (unsigned i = 0; i < s->n_bufs; i++)
		u += s->bufs[i].len;
	PUT(&u, 8);
	for (unsigned i = 0; i < s->n_bufs; i++)
		if (s->bufs[i].len)
			PUT(s->bufs[i].base, s->bufs[i].len);
	u = XXH3_64bits(b, (size_t)(at - b));
	PUT(SNAP_END, 8);
	PUT(&u, 8);
#undef PUT
	*out = b;
	*len = n;
	return 0;
}

static bool take(const uint8_t *img, size_t len, size_t *pos, void *out, size_t n)
{
	if (n > len - *pos)
		return false;
	memcpy(out, img + *pos, n);
	*pos += n;
	return true;
}

/* Reads DIR/snapshot into a raft_snapshot (raft_malloc()ed, one buffer).
 * Returns 0 and *@out (NULL: there is none), or a raft error. */
static int snap_load(struct praft *p, struct raft_snapshot **out)
{
	char msg[sizeof(p->io.errmsg)];
	int fd = open_own(p->dir_fd, "snapshot", p->snap_path, O_RDONLY | O_NONBLOCK, msg,
			  sizeof(msg));
	struct stat st;

	*out = NULL;
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return errorf(p, fd == -EINVAL ? RAFT_CORRUPT
				 : fd == -ELOOP || fd == -EPERM ? RAFT_INVALID
								 : RAFT_IOERR,
			      "%s", msg);
	if (fstat(fd, &st)) {
		close(fd);
		return errorf(p, RAFT_IOERR, "%s: %s", p->snap_path, strerror(errno));
	}
	if (st.st_size < 8 + 24 + 4 + 8 + 16) {
		close(fd);
		return errorf(p, RAFT_CORRUPT, "%s: too short to be a snapshot", p->snap_path);
	}
	size_t len = (size_t)st.st_size, pos = 8, got = 0;
	uint8_t *img = malloc(len);

	while (img && got < len) {
		ssize_t r = read(fd, img + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (!img)
		return errorf(p, RAFT_NOMEM, "%s: out of memory", p->snap_path);
	uint64_t sum;

	memcpy(&sum, img + len - 8, 8);
	if (got != len || memcmp(img, SNAP_MAGIC, 8) || memcmp(img + len - 16, SNAP_END, 8) ||
	    sum != XXH3_64bits(img, len - 16)) {
		free(img);
		return errorf(p, RAFT_CORRUPT,
			      "%s: damaged or not a snapshot of this format (%.8s): restore it "
			      "from another node",
			      p->snap_path, SNAP_MAGIC);
	}
	len -= 16;
	struct raft_snapshot *s = raft_calloc(1, sizeof(*s));
	uint32_t c = 0;
	uint64_t dl = 0;
	bool ok = s && take(img, len, &pos, &s->index, 8) && take(img, len, &pos, &s->term, 8) &&
		  take(img, len, &pos, &s->configuration_index, 8) && take(img, len, &pos, &c, 4);

	if (s)
		raft_configuration_init(&s->configuration);
	for (uint32_t i = 0; ok && i < c; i++) {
		uint64_t id;
		uint32_t role, al;
		char addr[1024];

		ok = take(img, len, &pos, &id, 8) && take(img, len, &pos, &role, 4) &&
		     take(img, len, &pos, &al, 4) && al < sizeof(addr) &&
		     take(img, len, &pos, addr, al);
		if (ok) {
			addr[al] = 0;
			ok = !raft_configuration_add(&s->configuration, id, addr, (int)role);
		}
	}
	ok = ok && take(img, len, &pos, &dl, 8) && dl == len - pos;
	if (ok) {
		s->bufs = raft_malloc(sizeof(*s->bufs));
		s->n_bufs = 1;
		ok = s->bufs && (s->bufs[0].base = raft_malloc(dl ? dl : 1)) != NULL;
		if (ok) {
			memcpy(s->bufs[0].base, img + pos, dl);
			s->bufs[0].len = dl;
		}
	}
	free(img);
	if (!ok) {
		if (s) {
			raft_configuration_close(&s->configuration);
			if (s->bufs)
				raft_free(s->bufs[0].base);
			raft_free(s->bufs);
			raft_free(s);
		}
		return errorf(p, RAFT_CORRUPT, "%s: its contents do not add up", p->snap_path);
	}
	*out = s;
	return 0;
}

static void snap_free(struct raft_snapshot *s)
{
	if (!s)
		return;
	raft_configuration_close(&s->configuration);
	for (unsigned i = 0; i < s->n_bufs; i++)
		raft_free(s->bufs[i].base);
	raft_free(s->bufs);
	raft_free(s);
}

struct snap_put {
	uv_work_t work;
	struct praft *p;
	struct raft_io_snapshot_put *req;
	raft_io_snapshot_put_cb cb;
	unsigned trailing;
	raft_index index;
	/* raft keeps the snapshot and its buffers until the callback, so the
	 * copy and its checksum are made on the pool's thread, not the loop's. */
	const struct raft_snapshot *snap;
	uint8_t *img;
	size_t len;
	int err; /* -errno from the thread */
	char msg[256]; /* its words, where it had more to say than errno */
};

/* On a thread of the loop's pool: the file, replaced atomically. */
static void snap_put_work(uv_work_t *work)
{
	struct snap_put *sp = work->data;
	struct praft *p = sp->p;

	if (snap_encode(sp->snap, &sp->img, &sp->len)) {
		sp->err = -ENOMEM;
		return;
	}
	int fd = create_tmp(p->dir_fd, "snapshot.tmp", p->snap_tmp, sp->msg, sizeof(sp->msg));
	int rc = fd < 0 ? fd : write_all(fd, sp->img, sp->len);

	if (!rc && fsync(fd))
		rc = -errno;
	if (fd >= 0 && close(fd) && !rc)
		rc = -errno;
	if (!rc && renameat(p->dir_fd, "snapshot.tmp", p->dir_fd, "snapshot"))
		rc = -errno;
	if (rc && fd >= 0) /* a full disk: the half-written copy does not stay to fill it */
		unlinkat(p->dir_fd, "snapshot.tmp", 0);
	else if (!rc && fsync(p->dir_fd))
		rc = -errno;
	sp->err = rc;
}

/* On the loop, once the file is durable: release the log behind it. */
static void snap_put_after(uv_work_t *work, int status)
{
	struct snap_put *sp = work->data;
	struct praft *p = sp->p;
	int rv = 0, rc;

	free(sp->img);
	if (status || sp->err) {
		/* Fail stop: a node that cannot store a snapshot (its disk full)
		 * would otherwise be sent it again and again, and stay behind
		 * for good with nothing said. */
		if (sp->msg[0])
			errorf(p, RAFT_IOERR, "snapshot: %s", sp->msg);
		else
			errorf(p, RAFT_IOERR, "snapshot %s: %s", p->snap_tmp,
			       strerror(sp->err ? -sp->err : ECANCELED));
		rv = stop(p, sp->err == -ENOMEM ? RAFT_NOMEM : RAFT_IOERR);
		goto out;
	}
	uint64_t release = 0;

	if (sp->trailing == 0) {
		/* An installed snapshot replaces the log: everything goes (a
		 * crash before leaves entries that load checks against it). */
		if ((rc = pmwal_sync(p->w)) != 0) {
			rv = log_error(p, rc, "snapshot install");
			goto out;
		}
		release = pmwal_durable_lsn(p->w) + 1;
		p->first_index = sp->index + 1;
		p->n = 0;
	} else if (sp->index > sp->trailing && sp->index - sp->trailing >= p->first_index &&
		   sp->index - sp->trailing <= last_index(p)) {
		release = p->lsn_of[sp->index - sp->trailing - p->first_index];
	}
	if (release) {
		if ((rc = pmwal_release(p->w, release)) != 0) {
			rv = log_error(p, rc, "release after the snapshot");
			goto out;
		}
		if (sp->trailing)
			map_drop_before(p, sp->index - sp->trailing);
	}
out:
	sp->cb(sp->req, rv);
	free(sp);
}

/*
 * raft_uv's send, refusing a message with no address. raft 0.15 answers an
 * installed snapshot to the leader it had when the install began; a node
 * that became a candidate meanwhile has none, and raft_uv's transport took
 * the NULL address's length (SIGSEGV, seen with installs cut short again and
 * again). Refused, the answer is dropped, as one to a leader that is gone.
 */
static int pr_send(struct raft_io *io, struct raft_io_send *req,
		   const struct raft_message *message, raft_io_send_cb cb)
{
	struct praft *p = P(io);

	if (!message->server_address)
		return errorf(p, RAFT_NOCONNECTION, "no address for server %llu",
			      (unsigned long long)message->server_id);
	return p->uv_send(io, req, message, cb);
}

static int pr_snapshot_put(struct raft_io *io, unsigned trailing,
			   struct raft_io_snapshot_put *req, const struct raft_snapshot *snapshot,
			   raft_io_snapshot_put_cb cb)
{
	struct praft *p = P(io);
	struct snap_put *sp = calloc(1, sizeof(*sp));

	if (p->failed) {
		free(sp);
		return refuse_failed(p);
	}
	if (!sp)
		return errorf(p, RAFT_NOMEM, "snapshot: out of memory");
	*sp = (struct snap_put){.p = p, .req = req, .cb = cb, .trailing = trailing,
				.index = snapshot->index, .snap = snapshot};
	sp->work.data = sp;
	int rv = uv_queue_work(p->loop, &sp->work, snap_put_work, snap_put_after);

	if (rv) {
		free(sp);
		return errorf(p, RAFT_IOERR, "snapshot: %s", uv_strerror(rv));
	}
	return 0;
}

struct snap_get {
	uv_work_t work;
	struct praft *p;
	struct raft_io_snapshot_get *req;
	raft_io_snapshot_get_cb cb;
	struct raft_snapshot *s;
	int rv;
};

static void snap_get_work(uv_work_t *work)
{
	struct snap_get *sg = work->data;

	sg->rv = snap_load(sg->p, &sg->s);
	if (!sg->rv && !sg->s)
		sg->rv = RAFT_NOTFOUND;
}

static void snap_get_after(uv_work_t *work, int status)
{
	struct snap_get *sg = work->data;

	if (status && !sg->rv)
		sg->rv = RAFT_CANCELED;
	if (sg->rv) {
		snap_free(sg->s);
		sg->s = NULL;
	}
	sg->cb(sg->req, sg->s, sg->rv);
	free(sg);
}

static int pr_snapshot_get(struct raft_io *io, struct raft_io_snapshot_get *req,
			   raft_io_snapshot_get_cb cb)
{
	struct praft *p = P(io);
	struct snap_get *sg = calloc(1, sizeof(*sg));

	if (!sg)
		return errorf(p, RAFT_NOMEM, "snapshot: out of memory");
	*sg = (struct snap_get){.p = p, .req = req, .cb = cb};
	sg->work.data = sg;
	int rv = uv_queue_work(p->loop, &sg->work, snap_get_work, snap_get_after);

	if (rv) {
		free(sg);
		return errorf(p, RAFT_IOERR, "snapshot: %s", uv_strerror(rv));
	}
	return 0;
}

/* ---- load, bootstrap, recover ------------------------------------------------ */

struct loaded { /* the entries read back */
	struct raft_entry *e;
	size_t n, cap;
};

static void loaded_cut(struct loaded *l, size_t keep)
{
	for (size_t i = keep; i < l->n; i++)
		raft_free(l->e[i].batch);
	if (keep < l->n)
		l->n = keep;
}

static int pr_load(struct raft_io *io, raft_term *term, raft_id *vote,
		   struct raft_snapshot **snapshot, raft_index *start_index,
		   struct raft_entry *entries[], size_t *n_entries)
{
	struct praft *p = P(io);
	struct loaded l = {0};
	struct pmwal_iter *it;
	struct pmwal_info info;
	const void *data;
	uint64_t lsn;
	size_t len;
	int rc, rv = 0;

	*snapshot = NULL;
	*entries = NULL;
	*n_entries = 0;
	if ((rv = snap_load(p, snapshot)) != 0)
		return rv;
	p->first_index = 1;
	p->n = 0;
	pmwal_stat(p->w, &info);
	/* Records are released only behind a durable snapshot. */
	if (!*snapshot && info.head_lsn > 1) {
		return errorf(p, RAFT_CORRUPT,
			      "%s: records up to LSN %" PRIu64 " were released behind a snapshot, "
			      "but there is no snapshot (%s): restore it from another node, or "
			      "remove DIR and add the node back as a new one",
			      p->target, info.head_lsn - 1, p->snap_path);
	}
	if (info.head_lsn < info.next_lsn) {
		if ((rc = pmwal_iter_open(p->w, info.head_lsn, &it)) != 0) {
			rv = log_error(p, rc, "load");
			goto fail;
		}
		while (!rv && (rc = pmwal_iter_next(it, &lsn, &data, &len)) == 1) {
			const uint8_t *r = data;
			uint64_t a, b;

			if (len < HDR) {
				rv = errorf(p, RAFT_CORRUPT, "%s: LSN %" PRIu64 " is not a raft record",
					    p->target, lsn);
				break;
			}
			memcpy(&a, r + 8, 8);
			memcpy(&b, r + 16, 8);
			if (r[0] == 'T') {
				if (a <= p->first_index) {
					loaded_cut(&l, 0);
					p->first_index = a;
					p->n = 0;
				} else if (a <= last_index(p)) {
					loaded_cut(&l, a - p->first_index);
					p->n = a - p->first_index;
				}
			} else if (r[0] == 'E') {
				if (p->n && a >= p->first_index && a <= last_index(p)) {
					/* Rewritten from here on (an append refused part-way). */
					loaded_cut(&l, a - p->first_index);
					p->n = a - p->first_index;
				}
				if (!p->n)
					p->first_index = a;
				else if (a != last_index(p) + 1) {
					rv = errorf(p, RAFT_CORRUPT,
						    "%s: LSN %" PRIu64 " holds entry %" PRIu64
						    " after entry %llu: entries are missing",
						    p->target, lsn, a, last_index(p));
					break;
				}
				if (l.n == l.cap) {
					size_t cap = l.cap ? l.cap * 2 : 256;
					struct raft_entry *e = realloc(l.e, cap * sizeof(*e));

					if (!e) {
						rv = errorf(p, RAFT_NOMEM, "load: out of memory");
						break;
					}
					l.e = e;
					l.cap = cap;
				}
				size_t dl = len - HDR;
				void *buf = raft_malloc(dl ? dl : 1);

				if (!buf || map_push(p, lsn)) {
					raft_free(buf);
					rv = errorf(p, RAFT_NOMEM, "load: out of memory");
					break;
				}
				memcpy(buf, r + HDR, dl);
				l.e[l.n++] = (struct raft_entry){
				    .term = b,
				    .type = (unsigned short)(r[2] | r[3] << 8),
				    .buf = {buf, dl},
				    .batch = buf};
			} else {
				rv = errorf(p, RAFT_CORRUPT, "%s: LSN %" PRIu64 " is not a raft record",
					    p->target, lsn);
			}
		}
		pmwal_iter_close(it);
		if (!rv && rc < 0)
			rv = log_error(p, rc, "load");
		if (rv)
			goto fail;
	}
	/* The entries against the snapshot: a gap between them is damage; a
	 * log that ends before it, or disagrees with it at its index (a crash
	 * between an installed snapshot and the release of the old log), is
	 * replaced by it. */
	struct raft_snapshot *s = *snapshot;

	if (s && l.n) {
		bool behind = last_index(p) < s->index;
		bool other = s->index >= p->first_index && s->index <= last_index(p) &&
			     l.e[s->index - p->first_index].term != s->term;

		if (behind || other) {
			loaded_cut(&l, 0);
			p->n = 0;
		} else if (p->first_index > s->index + 1) {
			rv = errorf(p, RAFT_CORRUPT,
				    "%s: the snapshot ends at entry %llu but the log starts at "
				    "%llu: entries are missing",
				    p->target, s->index, (unsigned long long)p->first_index);
			goto fail;
		}
	}
	if (!l.n)
		p->first_index = s ? s->index + 1 : (p->first_index ? p->first_index : 1);
	else if (!s && p->first_index != 1) {
		rv = errorf(p, RAFT_CORRUPT,
			    "%s: the log starts at entry %llu and there is no snapshot (%s)",
			    p->target, (unsigned long long)p->first_index, p->snap_path);
		goto fail;
	}
	/* raft makes a term durable before it appends or installs anything of
	 * it: a term behind the log's is a meta file of another time. */
	raft_term newest = l.n ? l.e[l.n - 1].term : 0;

	if (s && s->term > newest)
		newest = s->term;
	if (p->term < newest) {
		rv = errorf(p, RAFT_CORRUPT,
			    "%s: term %llu, but the log or snapshot holds term %llu: it is not "
			    "this log's metadata; the node's vote may be lost",
			    p->meta_path, (unsigned long long)p->term, (unsigned long long)newest);
		goto fail;
	}
	*term = p->term;
	*vote = p->vote;
	*start_index = p->first_index;
	if (l.n) {
		*entries = raft_malloc(l.n * sizeof(**entries));
		if (!*entries) {
			rv = errorf(p, RAFT_NOMEM, "load: out of memory");
			goto fail;
		}
		memcpy(*entries, l.e, l.n * sizeof(**entries));
	}
	*n_entries = l.n;
	free(l.e);
	return 0;
fail:
	loaded_cut(&l, 0);
	free(l.e);
	snap_free(*snapshot);
	*snapshot = NULL;
	return rv;
}

/* Appends one entry and waits for it (bootstrap, recover). */
static int append_now(struct praft *p, raft_index index, raft_term term, unsigned type,
		      const struct raft_buffer *buf)
{
	uint8_t *rec = malloc(HDR + buf->len);
	uint64_t lsn;
	int rc;

	if (!rec)
		return errorf(p, RAFT_NOMEM, "out of memory");
	put_hdr(rec, 'E', type, index, term);
	memcpy(rec + HDR, buf->base, buf->len);
	rc = pmwal_append(p->w, rec, HDR + buf->len, &lsn);
	free(rec);
	if (rc)
		return log_error(p, rc, "append");
	if (p->n == 0)
		p->first_index = index;
	return map_push(p, lsn) ? errorf(p, RAFT_NOMEM, "out of memory") : 0;
}

static int pr_bootstrap(struct raft_io *io, const struct raft_configuration *conf)
{
	struct praft *p = P(io);
	struct raft_buffer buf;
	struct pmwal_info info;
	struct stat st;
	int rv;

	pmwal_stat(p->w, &info);
	/* Term 1 and nothing else is a bootstrap a crash interrupted: the term
	 * is written first, so the entry is never ahead of it. */
	if (p->term > 1 || p->vote || info.next_lsn > 1 || !stat(p->snap_path, &st))
		return errorf(p, RAFT_CANTBOOTSTRAP, "%s already holds raft state", p->target);
	if ((rv = raft_configuration_encode(conf, &buf)) != 0)
		return errorf(p, rv, "bootstrap: %s", raft_strerror(rv));
	rv = write_meta(p, 1, 0);
	if (!rv)
		rv = append_now(p, 1, 1, RAFT_CHANGE, &buf);
	raft_free(buf.base);
	return rv;
}

static int pr_recover(struct raft_io *io, const struct raft_configuration *conf)
{
	struct praft *p = P(io);
	struct raft_snapshot *s;
	struct raft_entry *e;
	struct raft_buffer buf;
	raft_term term;
	raft_id vote;
	raft_index start;
	size_t n;
	int rv;

	/* Load to learn the last entry, then force the configuration after it. */
	if ((rv = pr_load(io, &term, &vote, &s, &start, &e, &n)) != 0)
		return rv;
	raft_term last_term = n ? e[n - 1].term : s ? s->term : 0;

	for (size_t i = 0; i < n; i++)
		raft_free(e[i].batch);
	raft_free(e);
	snap_free(s);
	if ((rv = raft_configuration_encode(conf, &buf)) != 0)
		return errorf(p, rv, "recover: %s", raft_strerror(rv));
	rv = append_now(p, last_index(p) + 1, last_term ? last_term : 1, RAFT_CHANGE, &buf);
	raft_free(buf.base);
	return rv;
}

/* ---- close ----------------------------------------------------------------- */

static void async_closed(uv_handle_t *h)
{
	struct praft *p = h->data;

	p->async_open = false;
	p->uv_close(&p->io, p->close_cb);
}

static void pr_close(struct raft_io *io, raft_io_close_cb cb)
{
	struct praft *p = P(io);

	/* Staged appends become durable (or fail) and queue their requests:
	 * raft hears of each before the close completes. */
	if (p->w) {
		pmwal_close(p->w);
		p->w = NULL;
	}
	deliver(p);
	p->close_cb = cb;
	uv_close((uv_handle_t *)&p->async, async_closed);
}

/* ---- setup ----------------------------------------------------------------- */

static int open_log(struct praft *p, char *err, size_t errlen)
{
	char perr[512] = "";
	struct pmwal_options po = {.target = p->target, .errmsg_buf = perr,
				   .errmsg_len = sizeof(perr)};
	struct stat st;
	int rc;

	bool past = p->have_meta || !stat(p->snap_path, &st);

	if (p->create) {
		if (past) {
			snprintf(err, errlen, "%s: the node has state (%s): not creating a new log "
				 "under it", p->dir, p->have_meta ? "meta" : "snapshot");
			return RAFT_INVALID;
		}
		po.flags = PMWAL_OPEN_FORMAT;
		po.capacity_bytes = p->capacity;
	}
	rc = pmwal_open(&po, &p->w);
	if (rc == -ENOENT && !p->create && past) {
		snprintf(err, errlen,
			 "%s: no such log, but %s holds this node's state (its log %016" PRIx64
			 "): the log is gone or --target is wrong; restore it, or remove %s "
			 "and add the node back as a new one",
			 p->target, p->have_meta ? p->meta_path : p->snap_path, p->meta_log_id,
			 p->dir);
		return RAFT_CORRUPT;
	}
	/* DIR/log of a node with no state yet whose creation was cut short (a
	 * kill before the superblock, a full disk): nothing was ever in it. */
	if (rc == PMWAL_EFORMAT && p->own_log && !p->create && !past &&
	    (strstr(perr, "no superblock") || strstr(perr, "too small"))) {
		if (unlink(p->target) == 0)
			rc = -ENOENT;
	}
	if (rc == -ENOENT && !p->create) {
		po.flags = PMWAL_OPEN_CREATE | PMWAL_OPEN_EXCL;
		po.capacity_bytes = p->capacity ? p->capacity : 256u << 20;
		perr[0] = 0;
		rc = pmwal_open(&po, &p->w);
		if (rc && p->own_log)
			unlink(p->target); /* a full disk: not left half made */
	}
	if (rc) {
		snprintf(err, errlen, "%s: %s", p->target, perr[0] ? perr : pmwal_strerror(rc));
		return rc == -EBUSY ? RAFT_BUSY : RAFT_IOERR;
	}
	return 0;
}

/* Ties the directory to its log: DIR/meta names the log's id. A new node
 * (no meta, an empty log, no snapshot) writes it now. */
static int bind_log(struct praft *p, char *err, size_t errlen)
{
	struct pmwal_info info;
	struct stat st;

	pmwal_stat(p->w, &info);
	if (p->have_meta && p->meta_log_id != info.log_id) {
		snprintf(err, errlen,
			 "%s is log %016" PRIx64 ", but %s belongs with log %016" PRIx64
			 ": another node's or another cluster's log, or one created again; "
			 "give this node its own log, or remove %s and add it back as a new one",
			 p->target, info.log_id, p->meta_path, p->meta_log_id, p->dir);
		return RAFT_CORRUPT;
	}
	if (p->have_meta)
		return 0;
	if (info.next_lsn > 1 || !stat(p->snap_path, &st)) {
		snprintf(err, errlen,
			 "%s is missing, but %s: the node's term and vote are lost, and "
			 "starting without them could let it vote twice; restore it, or remove "
			 "%s and add the node back as a new one",
			 p->meta_path,
			 info.next_lsn > 1 ? "the log holds records" : "a snapshot exists",
			 p->dir);
		return RAFT_CORRUPT;
	}
	p->meta_log_id = info.log_id;
	int rv = write_meta(p, 0, 0);

	if (rv)
		snprintf(err, errlen, "%s", p->io.errmsg);
	return rv;
}

int pmwal_raft_init(struct raft_io **io, struct uv_loop_s *loop,
		    struct raft_uv_transport *transport, const struct pmwal_raft_options *o,
		    char *err, size_t errlen)
{
	struct praft *p = calloc(1, sizeof(*p));
	int rv;

	*io = NULL;
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return RAFT_NOMEM;
	}
	if (!o || !o->dir || !o->dir[0] || strlen(o->dir) > 3000) {
		free(p);
		snprintf(err, errlen, "pmwal_raft_options.dir: required, at most 3000 bytes");
		return RAFT_INVALID;
	}
	snprintf(p->dir, sizeof(p->dir), "%s", o->dir);
	snprintf(p->snap_path, sizeof(p->snap_path), "%s/snapshot", o->dir);
	snprintf(p->snap_tmp, sizeof(p->snap_tmp), "%s/snapshot.tmp", o->dir);
	snprintf(p->uv_dir, sizeof(p->uv_dir), "%s/uv", o->dir);
	snprintf(p->meta_path, sizeof(p->meta_path), "%s/meta", o->dir);
	snprintf(p->meta_tmp, sizeof(p->meta_tmp), "%s/meta.tmp", o->dir);
	snprintf(p->target, sizeof(p->target), "%s", o->target ? o->target : "");
	if (!o->target)
		snprintf(p->target, sizeof(p->target), "%s/log", o->dir);
	p->own_log = !o->target;
	p->create = o->create;
	p->capacity = o->capacity_bytes;
	p->loop = loop;
	p->tail = &p->head;
	p->lock_fd = -1;
	/* The way to DIR walked by descriptors (pmr/openat.h): a link another
	 * user planted on it is refused (@err says so), not followed. */
	err[0] = 0;
	p->dir_fd = pmr_open_dir_walked(o->dir, NULL, NULL, err, errlen);
	if (p->dir_fd < 0) {
		if (errno != EPERM || !err[0])
			snprintf(err, errlen, "%s: %s", o->dir, strerror(errno));
		free(p);
		return RAFT_IOERR;
	}
	pthread_mutex_init(&p->mu, NULL);
	if ((rv = check_dir(p->dir_fd, o->dir, err, errlen)) != 0)
		goto close_dir;
	/* One node per directory: a second would write the same metadata and
	 * snapshot files (the log's own lock covers only the log). */
	char lock[4200];

	snprintf(lock, sizeof(lock), "%s/lock", o->dir);
	p->lock_fd = open_own(p->dir_fd, "lock", lock, O_RDWR | O_CREAT, err, errlen);
	if (p->lock_fd < 0) {
		rv = p->lock_fd == -ELOOP || p->lock_fd == -EPERM || p->lock_fd == -EINVAL
			     ? RAFT_INVALID
			     : RAFT_IOERR;
		goto close_dir;
	}
	if (flock(p->lock_fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", o->dir,
			 e == EWOULDBLOCK ? "another node has this directory open" : strerror(e));
		rv = e == EWOULDBLOCK ? RAFT_BUSY : RAFT_IOERR;
		goto close_dir;
	}
	/* raft_uv's directory: a directory of ours only we write, not a link. */
	struct stat ust;

	if (mkdirat(p->dir_fd, "uv", 0755) && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", p->uv_dir, strerror(errno));
		rv = RAFT_IOERR;
		goto close_dir;
	}
	if (fstatat(p->dir_fd, "uv", &ust, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(ust.st_mode) ||
	    ust.st_uid != geteuid() || (ust.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen,
			 "%s: not a directory of this node's user that only it writes (a link? "
			 "another user's?): move it away",
			 p->uv_dir);
		rv = RAFT_INVALID;
		goto close_dir;
	}
	if ((rv = raft_uv_init(&p->io, loop, p->uv_dir, transport)) != 0) {
		snprintf(err, errlen, "raft_uv_init %s: %s", p->uv_dir, raft_strerror(rv));
		goto close_dir;
	}
	if ((rv = read_meta(p, err, errlen)) != 0 || (rv = open_log(p, err, errlen)) != 0 ||
	    (rv = bind_log(p, err, errlen)) != 0)
		goto close_log;
	if ((rv = uv_async_init(loop, &p->async, async_cb)) != 0) {
		snprintf(err, errlen, "uv_async_init: %s", uv_strerror(rv));
		rv = RAFT_IOERR;
		goto close_log;
	}
	p->async.data = p;
	p->async_open = true;
	p->uv_close = p->io.close;
	p->io.close = pr_close;
	p->uv_send = p->io.send;
	p->io.send = pr_send;
	p->io.load = pr_load;
	p->io.bootstrap = pr_bootstrap;
	p->io.recover = pr_recover;
	p->io.set_term = pr_set_term;
	p->io.set_vote = pr_set_vote;
	p->io.append = pr_append;
	p->io.truncate = pr_truncate;
	p->io.snapshot_put = pr_snapshot_put;
	p->io.snapshot_get = pr_snapshot_get;
	*io = &p->io;
	return 0;
close_log:
	if (p->w)
		pmwal_close(p->w);
	raft_uv_close(&p->io);
close_dir:
	if (p->lock_fd >= 0)
		close(p->lock_fd);
	close(p->dir_fd);
	pthread_mutex_destroy(&p->mu);
	free(p);
	return rv;
}

void pmwal_raft_free(struct raft_io *io)
{
	struct praft *p;

	if (!io)
		return;
	p = P(io);
	if (p->w)
		pmwal_close(p->w);
	if (p->async_open) { /* never closed through raft: the loop must not run */
		uv_close((uv_handle_t *)&p->async, NULL);
		uv_run(p->loop, UV_RUN_NOWAIT);
	}
	raft_uv_close(&p->io);
	free(p->lsn_of);
	pthread_mutex_destroy(&p->mu);
	close(p->lock_fd); /* after the log: the next node finds it closed */
	close(p->dir_fd);
	free(p);
}
