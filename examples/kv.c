// SPDX-License-Identifier: MIT
/*
 * kv.c - the example store's engine: how a database embeds pmwal (kv.h).
 *
 * A write: the record ("P" KEY NUL VALUE, or "D" KEY) is appended with
 * pmwal_append(), which returns once it is durable; concurrent writers share
 * group writes (group commit). Then the writer applies it to the table and
 * returns. Writers of one group return in any order, so records are applied
 * out of LSN order, and each slot keeps the LSN of the record that wrote it:
 * an older record for a key is ignored (last writer wins, by LSN), and a
 * delete leaves a dead slot with its LSN while an older put may still come.
 * Applying any set of records in any order so gives what applying them in
 * LSN order gives, which is what a restart rebuilds. A get sees only durable
 * records, and never waits for a slower writer. (Two designs measured worse
 * with 32 clients, kvbench, docs/performance.md: applying in pmwal_append_async()'s
 * durability callbacks, which pmwal runs in LSN order, woke a committer
 * thread per record; applying in LSN order after pmwal_append() made each
 * writer wait for its predecessor, mostly one that had been preempted.)
 *
 * A checkpoint takes the frontier L (every record up to L is applied; the
 * table may hold some above it too) and writes the table, dead slots above L
 * included, to DIR/snapshot the way a file must be replaced to survive a
 * crash (a temporary file, fsync, rename over the old one, fsync of the
 * directory); only then does it release the log below L + 1. A restart loads
 * the snapshot and replays the log from L + 1: records it already holds apply
 * again to the same result. The checkpoint holds the table while it writes
 * (gets and writers wait; the log's writes go on); a larger store would
 * snapshot copy-on-write. A full log (PMWAL_EFULL) is checkpointed and the
 * write retried. An automatic checkpoint (checkpoint_every) that fails does
 * not fail the write that triggered it: that write is durable and applied.
 * The failure is counted (kv_stats()) and said on stderr; while checkpoints
 * keep failing the log fills, and then writes are refused, not made, with
 * "log full: checkpoint failing: REASON".
 */
#include "kv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <pmwal.h>

#include "openat.h" /* pmr/: the path rule, built into the example */

#define KEY_MAX 1024
#define VALUE_MAX (1u << 20)
#define SNAP_MAGIC "PMKVSNP4"
#define SNAP_END "PMKVEND4"
#define SNAP_DEAD UINT32_MAX
#define KV_RING 4096 /* records applied ahead of the frontier, at most */

struct slot {
	char *key;   /* NULL: empty; FREED: free again (open addressing) */
	char *value; /* NULL: dead: deleted at lsn, kept while an older put may come */
	uint64_t lsn; /* the record that wrote it */
};

static char freed;
#define FREED (&freed)

struct kv {
	struct pmwal *w;
	pthread_mutex_t mu; /* the table, the frontier */
	struct slot *slots;
	size_t nslots, used, live;
	/* The frontier: every record up to it is applied. done[] holds LSNs
	 * applied above it, at LSN % KV_RING. */
	uint64_t applied_lsn;
	uint64_t *done;
	pthread_cond_t ring_cv; /* a writer KV_RING ahead of the frontier waits */
	int ring_waiters, failed;
	pthread_mutex_t ckpt_mu; /* one checkpoint at a time */
	uint64_t checkpoint_every;
	uint64_t log_id;      /* the log's, from pmwal_stat(): the snapshot names it */
	uint64_t snap_log_id; /* what the loaded snapshot names */
	bool have_snap;	      /* a snapshot was loaded */
	int lock_fd;	      /* DIR/lock: one store per directory */
	int dir_fd;	      /* DIR: its files are opened relative to it */
	char snap_path[4096], snap_tmp[4096], dir_path[4096];
	/* Checkpoints: how many succeeded and failed, the last failure's
	 * message (under stat_mu). */
	pthread_mutex_t stat_mu;
	uint64_t checkpoints, checkpoint_failures, failures_in_a_row;
	char checkpoint_error[512];
};

static _Thread_local char errbuf[1024];

const char *kv_errmsg(void)
{
	return errbuf;
}

static int fail(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	return rc;
}

struct pmwal *kv_log(struct kv *kv)
{
	return kv->w;
}

int kv_failed(struct kv *kv)
{
	return __atomic_load_n(&kv->failed, __ATOMIC_ACQUIRE);
}

/* A log error that leaves the log failed (a write or flush failed, another
 * process took it over): the store acknowledges nothing more. Full, too big
 * and bad requests are the caller's, not the store's. */
static int log_failed(struct kv *kv, int rc)
{
	if (rc != PMWAL_EFULL && rc != PMWAL_ETOOBIG && rc != -EINVAL && rc != PMWAL_ERANGE)
		__atomic_store_n(&kv->failed, rc, __ATOMIC_RELEASE);
	return rc;
}

/* ---- the table: open addressing, linear probing (under kv->mu) ---------- */

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

static struct slot *find(struct kv *kv, const char *key, bool for_insert)
{
	struct slot *tombstone = NULL;
	size_t mask = kv->nslots - 1;

	for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
		struct slot *s = &kv->slots[i];

		if (!s->key)
			return for_insert ? (tombstone ? tombstone : s) : NULL;
		if (s->key == FREED) {
			if (!tombstone)
				tombstone = s;
		} else if (!strcmp(s->key, key)) {
			return s;
		}
	}
}

static uint64_t prune_dead(struct kv *kv, uint64_t upto);

/* Rebuilds the table when its slots are used up (kv->mu held): at twice the
 * size when at least half of them hold a key, live or dead; else at the same
 * size, which drops the freed slots. Dead slots no older record can come
 * for go first: a store that deletes more than it puts fills its table with
 * them between checkpoints otherwise. */
static int grow(struct kv *kv)
{
	size_t n = kv->nslots, held = 0;

	if (n)
		prune_dead(kv, kv->applied_lsn);
	for (size_t i = 0; i < n; i++)
		held += kv->slots[i].key && kv->slots[i].key != FREED;
	struct slot *old = kv->slots;
	size_t want = held * 10 >= n * 5 || !n ? (n ? n * 2 : 1024) : n;
	struct slot *fresh = calloc(want, sizeof(*fresh));

	if (!fresh)
		return -ENOMEM;
	kv->slots = fresh;
	kv->nslots = want;
	kv->used = 0;
	for (size_t i = 0; i < n; i++)
		if (old[i].key && old[i].key != FREED) {
			*find(kv, old[i].key, true) = old[i];
			kv->used++;
		}
	free(old);
	return 0;
}

static void slot_free(struct kv *kv, struct slot *s)
{
	if (s->value)
		kv->live--;
	free(s->key);
	free(s->value);
	*s = (struct slot){.key = FREED};
}

/*
 * Sets @key to @value (NULL: deletes it) as of record @lsn, unless the slot
 * holds a later record's result. Takes ownership of @key and @value
 * (malloc()ed). A delete leaves a dead slot only while records below @lsn
 * are still to come (@lsn above the frontier + 1).
 */
static int table_set(struct kv *kv, char *key, char *value, uint64_t lsn)
{
	if ((kv->used + 1) * 10 >= kv->nslots * 7 && grow(kv)) {
		free(key);
		free(value);
		return -ENOMEM;
	}
	struct slot *s = find(kv, key, true);
	bool existed = s->key && s->key != FREED;

	if (existed && s->lsn > lsn) { /* a later record was applied first */
		free(key);
		free(value);
		return 0;
	}
	if (!value && lsn <= kv->applied_lsn + 1) { /* nothing older can come */
		if (existed)
			slot_free(kv, s);
		free(key);
		return 0;
	}
	if (existed) {
		free(key);
		if (s->value)
			kv->live--;
		free(s->value);
	} else {
		if (!s->key)
			kv->used++;
		s->key = key;
	}
	s->value = value;
	s->lsn = lsn;
	if (value)
		kv->live++;
	return 0;
}

/* Frees the dead slots at or below @upto (no older record can come for
 * them); returns how many dead slots remain. */
static uint64_t prune_dead(struct kv *kv, uint64_t upto)
{
	uint64_t left = 0;

	for (size_t i = 0; i < kv->nslots; i++) {
		struct slot *s = &kv->slots[i];

		if (!s->key || s->key == FREED || s->value)
			continue;
		if (s->lsn <= upto)
			slot_free(kv, s);
		else
			left++;
	}
	return left;
}

/* ---- records: "P" KEY "\0" VALUE, or "D" KEY ----------------------------- */

static int apply(struct kv *kv, uint64_t lsn, const void *rec, size_t len)
{
	const char *r = rec;
	const char *nul = len > 1 ? memchr(r + 1, 0, len - 1) : NULL;

	if (len >= 2 && r[0] == 'P' && nul && nul > r + 1) {
		size_t kl = (size_t)(nul - r - 1), vl = len - kl - 2;
		char *k = strndup(r + 1, kl), *v = malloc(vl + 1);

		if (!k || !v) {
			free(k);
			free(v);
			return -ENOMEM;
		}
		memcpy(v, nul + 1, vl);
		v[vl] = 0;
		return table_set(kv, k, v, lsn);
	}
	if (len >= 2 && r[0] == 'D' && !nul) {
		char *k = strndup(r + 1, len - 1);

		return k ? table_set(kv, k, NULL, lsn) : -ENOMEM;
	}
	return -EINVAL;
}

/* Records @lsn as applied and moves the frontier over what is done. */
static void mark_applied(struct kv *kv, uint64_t lsn)
{
	kv->done[lsn % KV_RING] = lsn;
	while (kv->done[(kv->applied_lsn + 1) % KV_RING] == kv->applied_lsn + 1)
		kv->applied_lsn++;
	if (kv->ring_waiters)
		pthread_cond_broadcast(&kv->ring_cv);
}

/* ---- the store's own files ---------------------------------------------- */

/*
 * The store's files live in DIR and are opened relative to it, never through
 * a symbolic link, and only when this user owns them: in a directory another
 * user can write (a sticky one: kv_open refuses others), a link or a file
 * planted there must not be written through or loaded.
 */
static int own_file(int fd, const char *path)
{
	struct stat st;

	if (fstat(fd, &st))
		return fail(-errno, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail(-EINVAL, "%s: not a regular file: move it away", path);
	if (st.st_uid != geteuid())
		return fail(-EPERM,
			    "%s: owned by uid %u, not by this store's user (uid %u): another "
			    "user's file; not using it (move it away)",
			    path, (unsigned)st.st_uid, (unsigned)geteuid());
	return 0;
}

/* openat() under DIR without following a link; names the path on failure. */
static int open_own(struct kv *kv, const char *name, const char *path, int flags)
{
	int fd = openat(kv->dir_fd, name, flags | O_NOFOLLOW | O_CLOEXEC, 0640);
	struct stat st;

	/* (The kernel's protected_symlinks may refuse it first: EACCES.) */
	if (fd < 0 && (errno == ELOOP || (!fstatat(kv->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) &&
					  S_ISLNK(st.st_mode))))
		return fail(-ELOOP, "%s: a symbolic link: not following it (another user's? "
				    "remove it)",
			    path);
	if (fd < 0)
		return fail(-errno, "%s: %s", path, strerror(errno));
	int rc = own_file(fd, path);

	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/* Creates DIR/@name as a new file. A leftover of this user's (a killed
 * checkpoint) is removed first; anything else there is refused. */
static int create_tmp(struct kv *kv, const char *name, const char *path)
{
	for (int tries = 0;; tries++) {
		int fd =
		    openat(kv->dir_fd, name,
			   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);

		if (fd >= 0 || errno != EEXIST || tries)
			return fd >= 0 ? fd : fail(-errno, "%s: %s", path, strerror(errno));
		struct stat st;

		if (fstatat(kv->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
			return fail(-EEXIST,
				    "%s: exists and is %s: not writing through it (another "
				    "user's? remove it)",
				    path, S_ISLNK(st.st_mode) ? "a symbolic link"
				    : S_ISREG(st.st_mode)   ? "another user's file"
							    : "not a regular file");
		if (unlinkat(kv->dir_fd, name, 0) && errno != ENOENT)
			return fail(-errno, "%s: %s", path, strerror(errno));
	}
}

/* DIR must be a directory no other user can plant files in: not writable
 * by group or others unless sticky, and owned by this user or root. */
static int check_dir(int fd, const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(err, errlen,
			 "%s: writable by other users (mode %04o) and not sticky: they could "
			 "replace the store's files; chmod go-w it (or +t)",
			 dir, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(err, errlen,
			 "%s: owned by uid %u, not by this store's user (uid %u) or root: its "
			 "owner could replace the store's files",
			 dir, (unsigned)st.st_uid, (unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

/* ---- the snapshot -------------------------------------------------------- */

static int write_all(int fd, const void *p, size_t n)
{
	for (const char *c = p; n;) {
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

/* The table as of the frontier @lsn (kv->mu held), replacing the old
 * snapshot only once it is durable. Buffered: one write per 64 KiB.
 * Format (native byte order: the example's own file): "PMKVSNP4", the log's
 * id, the frontier and the entry count (u64 each); per entry the key length
 * (u32), the value length (u32; SNAP_DEAD: a dead slot), the LSN (u64), the
 * key, the value; then "PMKVEND4" and the XXH3-64 of every byte before it. */
static int snapshot_write(struct kv *kv, uint64_t lsn)
{
	int fd = create_tmp(kv, "snapshot.tmp", kv->snap_tmp);
	int rc = fd < 0 ? fd : 0;
	bool made = fd >= 0; /* snapshot.tmp is this checkpoint's */
	size_t cap = 64 << 10, used = 0;
	char *buf = malloc(cap);
	uint64_t n = kv->live;

	XXH3_state_t *st = XXH3_createState();

	if (!buf || !st)
		rc = -ENOMEM;
	if (!rc)
		XXH3_64bits_reset(st);
#define PUT(p, len)                                                                      \
	do {                                                                             \
		size_t l_ = (len);                                                       \
		if (!rc)                                                                 \
			XXH3_64bits_update(st, (p), l_);                                 \
		if (!rc && used + l_ > cap) {                                            \
			rc = write_all(fd, buf, used);                                   \
			used = 0;                                                        \
		}                                                                        \
		if (!rc && l_ > cap)                                                     \
			rc = write_all(fd, (p), l_);                                     \
		else if (!rc) {                                                          \
			memcpy(buf + used, (p), l_);                                     \
			used += l_;                                                      \
		}                                                                        \
	} while (0)
	n += prune_dead(kv, lsn);
	PUT(SNAP_MAGIC, 8);
	PUT(&kv->log_id, 8);
	PUT(&lsn, 8);
	PUT(&n, 8);
	for (size_t i = 0; !rc && i < kv->nslots; i++) {
		struct slot *s = &kv->slots[i];

		if (!s->key || s->key == FREED)
			continue;
		uint32_t kl = (uint32_t)strlen(s->key);
		uint32_t vl = s->value ? (uint32_t)strlen(s->value) : SNAP_DEAD;

		PUT(&kl, 4);
		PUT(&vl, 4);
		PUT(&s->lsn, 8);
		PUT(s->key, kl);
		if (s->value)
			PUT(s->value, vl);
	}
	if (!rc) {
		uint64_t sum = XXH3_64bits_digest(st);

		PUT(SNAP_END, 8);
		PUT(&sum, 8);
	}
#undef PUT
	if (!rc && used)
		rc = write_all(fd, buf, used);
	free(buf);
	XXH3_freeState(st);
	if (!rc && fsync(fd))
		rc = -errno;
	if (fd >= 0 && close(fd) && !rc)
		rc = -errno;
	if (!rc && renameat(kv->dir_fd, "snapshot.tmp", kv->dir_fd, "snapshot"))
		rc = -errno;
	if (!rc && fsync(kv->dir_fd)) /* the rename itself, durable */
		rc = -errno;
	if (rc && !made) { /* create_tmp() said why */
		char why[sizeof(errbuf)];

		snprintf(why, sizeof(why), "%s", errbuf);
		fail(rc, "checkpoint: %s (the snapshot before it stands)", why);
	} else if (rc)
		fail(rc, "checkpoint: %s: %s (the snapshot before it stands)", kv->snap_tmp,
		     strerror(-rc));
	if (rc && made)
		unlinkat(kv->dir_fd, "snapshot.tmp", 0);
	return rc;
}

/* Takes @n bytes at *@pos of the @len-byte image into @out; false past the end. */
static bool take(const char *img, size_t len, size_t *pos, void *out, size_t n)
{
	if (n > len - *pos)
		return false;
	memcpy(out, img + *pos, n);
	*pos += n;
	return true;
}

/* Loads the snapshot; *@lsn is what it covers (0: none). The whole file is
 * checked (its checksum, every length against the file's) before the table
 * takes anything from it. */
static int snapshot_load(struct kv *kv, uint64_t *lsn)
{
	int fd = openat(kv->dir_fd, "snapshot", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	char *img = NULL;
	size_t len = 0, pos = 0;
	int rc = 0;

	*lsn = 0;
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 && (errno == ELOOP || (!fstatat(kv->dir_fd, "snapshot", &st,
						   AT_SYMLINK_NOFOLLOW) &&
					  S_ISLNK(st.st_mode))))
		return fail(-ELOOP, "%s: a symbolic link: not following it (move it away)",
			    kv->snap_path);
	if (fd < 0)
		return fail(-errno, "%s: %s", kv->snap_path, strerror(errno));
	if ((rc = own_file(fd, kv->snap_path)) != 0)
		;
	else if (fstat(fd, &st))
		rc = fail(-errno, "%s: %s", kv->snap_path, strerror(errno));
	else if ((len = (size_t)st.st_size) < 48 || !(img = malloc(len)))
		rc = fail(len < 48 ? -EINVAL : -ENOMEM, "%s: %s", kv->snap_path,
			  len < 48 ? "too short to be a snapshot" : "out of memory");
	for (size_t got = 0; !rc && got < len;) {
		ssize_t r = read(fd, img + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			rc = fail(r ? -errno : -EINVAL, "%s: %s", kv->snap_path,
				  r ? strerror(errno) : "shorter than its size");
		else
			got += (size_t)r;
	}
	close(fd);
	uint64_t sum, n = 0;

	if (!rc && (memcmp(img, SNAP_MAGIC, 8) || memcmp(img + len - 16, SNAP_END, 8)))
		rc = fail(-EINVAL, "%s: not a snapshot of this store's format (%.8s)", kv->snap_path,
			  SNAP_MAGIC);
	if (!rc && (memcpy(&sum, img + len - 8, 8), sum != XXH3_64bits(img, len - 16)))
		rc = fail(-EINVAL, "%s: damaged (its checksum does not match): restore it from a "
				   "backup, or move it away to rebuild from the log alone if the "
				   "log still starts at LSN 1",
			  kv->snap_path);
	/* Errors so far have their message; from here on, the layout's. */
	bool layout_checked = rc != 0;

	pos = 8;
	len -= 16; /* the entries end where the trailer begins */
	if (!rc && !(take(img, len, &pos, &kv->snap_log_id, 8) && take(img, len, &pos, lsn, 8) &&
		     take(img, len, &pos, &n, 8)))
		rc = -EINVAL;
	kv->applied_lsn = *lsn; /* the snapshot's frontier */
	for (uint64_t i = 0; !rc && i < n; i++) {
		uint32_t kl, vl;
		uint64_t at;

		if (!take(img, len, &pos, &kl, 4) || !take(img, len, &pos, &vl, 4) ||
		    !take(img, len, &pos, &at, 8) || !kl || kl > KEY_MAX ||
		    (vl > VALUE_MAX && vl != SNAP_DEAD)) {
			rc = -EINVAL;
			break;
		}
		bool dead = vl == SNAP_DEAD;
		char *k = malloc(kl + 1), *v = dead ? NULL : malloc(vl + 1);

		if (!k || (!dead && !v)) {
			free(k);
			free(v);
			rc = -ENOMEM;
		} else if (!take(img, len, &pos, k, kl) || (!dead && !take(img, len, &pos, v, vl))) {
			free(k);
			free(v);
			rc = -EINVAL;
		} else {
			k[kl] = 0;
			if (v)
				v[vl] = 0;
			rc = table_set(kv, k, v, at);
		}
	}
	if (!rc && pos != len)
		rc = -EINVAL;
	kv->have_snap = !rc;
	free(img);
	if (rc == -EINVAL && !layout_checked)
		fail(rc, "%s: its entries do not add up to its size", kv->snap_path);
	else if (rc == -ENOMEM && !layout_checked)
		fail(rc, "%s: out of memory", kv->snap_path);
	return rc;
}

/* ---- writes ------------------------------------------------------------- */

static int log_write(struct kv *kv, const void *rec, size_t len, uint64_t *lsn_out)
{
	uint64_t lsn = 0;
	int rc;

	for (int tries = 0;; tries++) {
		rc = pmwal_append(kv->w, rec, len, &lsn); /* durable when it returns */
		if (rc != PMWAL_EFULL || tries == 50)
			break;
		/* The log holds what no snapshot does: take one, then retry.
		 * Other writers may fill what it freed first; and what the
		 * frontier has not passed yet cannot be freed, so wait a little
		 * when a checkpoint frees nothing. */
		uint64_t at, before = pmwal_durable_lsn(kv->w);

		if ((rc = kv_checkpoint(kv, &at)) != 0) {
			char why[sizeof(errbuf)];

			snprintf(why, sizeof(why), "%s", errbuf);
			if (kv_failed(kv))
				return fail(rc, "%s", why);
			return fail(PMWAL_EFULL, "log full: checkpoint failing: %s (this write "
						 "was not made)",
				    why);
		}
		if (at + 1 < before)
			usleep(1000);
	}
	if (rc == PMWAL_EFULL)
		return fail(rc, "the log is full of records no checkpoint can free yet (a "
				"record of %zu bytes; a larger log, or smaller values)",
			    len);
	if (rc == PMWAL_ETOOBIG)
		return fail(rc, "a record of %zu bytes is larger than the log takes: %s", len,
			    pmwal_errmsg(kv->w));
	if (rc)
		return fail(log_failed(kv, rc), "append: %s", pmwal_errmsg(kv->w));
	pthread_mutex_lock(&kv->mu);
	/* done[] has room for KV_RING records above the frontier. */
	while (lsn - kv->applied_lsn > KV_RING && !kv->failed) {
		kv->ring_waiters++;
		pthread_cond_wait(&kv->ring_cv, &kv->mu);
		kv->ring_waiters--;
	}
	if (!kv->failed && (rc = apply(kv, lsn, rec, len)) != 0) {
		kv->failed = rc; /* out of memory: nothing more is acknowledged */
		pthread_cond_broadcast(&kv->ring_cv);
	}
	if (!kv->failed)
		mark_applied(kv, lsn);
	rc = kv->failed;
	pthread_mutex_unlock(&kv->mu);
	if (rc)
		return fail(rc, "apply LSN %" PRIu64 ": %s", lsn, strerror(-rc));
	if (lsn_out)
		*lsn_out = lsn;
	/* The write is durable and applied: that is its answer. A checkpoint
	 * that fails here is the store's trouble, not this write's: it is
	 * counted (kv_stats()) and said on stderr; the log is released once one
	 * succeeds, and a log that fills meanwhile refuses writes by name. */
	if (kv->checkpoint_every && lsn % kv->checkpoint_every == 0) {
		uint64_t at;

		(void)kv_checkpoint(kv, &at); /* a failed log refuses the next write */
	}
	return 0;
}

static bool key_ok(const char *key)
{
	size_t n = key ? strlen(key) : 0;

	return n && n <= KEY_MAX && !strpbrk(key, " \t\r\n");
}

int kv_put(struct kv *kv, const char *key, const char *value, uint64_t *lsn)
{
	if (!key_ok(key) || !value || strlen(value) > VALUE_MAX || strchr(value, '\n'))
		return fail(-EINVAL, "put: a key is 1..%d bytes without blanks, a value at most "
				     "%u bytes without a newline",
			    KEY_MAX, VALUE_MAX);
	size_t kl = strlen(key), vl = strlen(value);
	char *rec = malloc(kl + vl + 2);

	if (!rec)
		return fail(-ENOMEM, "put: out of memory");
	rec[0] = 'P';
	memcpy(rec + 1, key, kl + 1);
	memcpy(rec + 2 + kl, value, vl);
	int rc = log_write(kv, rec, kl + vl + 2, lsn);

	free(rec);
	return rc;
}

int kv_del(struct kv *kv, const char *key, uint64_t *lsn)
{
	if (!key_ok(key))
		return fail(-EINVAL, "del: a key is 1..%d bytes without blanks", KEY_MAX);
	size_t kl = strlen(key);
	char *rec = malloc(kl + 1);

	if (!rec)
		return fail(-ENOMEM, "del: out of memory");
	rec[0] = 'D';
	memcpy(rec + 1, key, kl);
	int rc = log_write(kv, rec, kl + 1, lsn);

	free(rec);
	return rc;
}

int kv_get(struct kv *kv, const char *key, char **value, uint64_t *lsn)
{
	int found = 0;

	*value = NULL;
	if (!key_ok(key))
		return 0;
	pthread_mutex_lock(&kv->mu);
	struct slot *s = find(kv, key, false);

	if (s && s->value) {
		*value = strdup(s->value);
		if (lsn)
			*lsn = s->lsn;
		found = *value ? 1 : fail(-ENOMEM, "get: out of memory");
	}
	pthread_mutex_unlock(&kv->mu);
	return found;
}

int kv_dump(struct kv *kv, char **buf, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);

	if (!b)
		return fail(-ENOMEM, "dump: out of memory");
	pthread_mutex_lock(&kv->mu);
	for (size_t i = 0; i < kv->nslots; i++) {
		struct slot *s = &kv->slots[i];

		if (!s->key || s->key == FREED || !s->value)
			continue;
		size_t kl = strlen(s->key), vl = strlen(s->value);

		while (n + kl + vl + 2 > cap) {
			char *nb = realloc(b, cap *= 2);

			if (!nb) {
				pthread_mutex_unlock(&kv->mu);
				free(b);
				return fail(-ENOMEM, "dump: out of memory");
			}
			b = nb;
		}
		memcpy(b + n, s->key, kl);
		b[n + kl] = ' ';
		memcpy(b + n + kl + 1, s->value, vl);
		b[n + kl + 1 + vl] = '\n';
		n += kl + vl + 2;
	}
	pthread_mutex_unlock(&kv->mu);
	*buf = b;
	*len = n;
	return 0;
}

/* Counts a checkpoint's outcome; says on stderr when checkpoints start
 * failing (then at the 10th, 100th, ... failure in a row) and when they
 * work again. */
static void checkpoint_done(struct kv *kv, uint64_t lsn, int rc)
{
	pthread_mutex_lock(&kv->stat_mu);
	if (rc) {
		uint64_t n = ++kv->failures_in_a_row;

		kv->checkpoint_failures++;
		snprintf(kv->checkpoint_error, sizeof(kv->checkpoint_error), "%s", errbuf);
		while (n % 10 == 0)
			n /= 10;
		if (n == 1)
			fprintf(stderr,
				"kv: checkpoint at LSN %" PRIu64 " failed (%" PRIu64 " in a row; "
				"acknowledged writes stay durable in the log, which is released "
				"only once a checkpoint succeeds): %s\n",
				lsn, kv->failures_in_a_row, errbuf);
	} else {
		if (kv->failures_in_a_row)
			fprintf(stderr, "kv: checkpoint at LSN %" PRIu64 " succeeded after %" PRIu64
					" failed\n",
				lsn, kv->failures_in_a_row);
		kv->checkpoints++;
		kv->failures_in_a_row = 0;
	}
	pthread_mutex_unlock(&kv->stat_mu);
}

int kv_checkpoint(struct kv *kv, uint64_t *lsn)
{
	int rc;

	pthread_mutex_lock(&kv->ckpt_mu);
	pthread_mutex_lock(&kv->mu);
	*lsn = kv->applied_lsn; /* every record up to it is in the table */
	rc = snapshot_write(kv, *lsn);
	pthread_mutex_unlock(&kv->mu);
	/* Only now: the snapshot holds them. */
	if (!rc && (rc = pmwal_release(kv->w, *lsn + 1)) != 0)
		fail(log_failed(kv, rc), "release: %s", pmwal_errmsg(kv->w));
	checkpoint_done(kv, *lsn, rc);
	pthread_mutex_unlock(&kv->ckpt_mu);
	return rc;
}

void kv_stats(struct kv *kv, struct kv_stats *s)
{
	pthread_mutex_lock(&kv->mu);
	s->applied_lsn = kv->applied_lsn;
	pthread_mutex_unlock(&kv->mu);
	pthread_mutex_lock(&kv->stat_mu);
	s->checkpoints = kv->checkpoints;
	s->checkpoint_failures = kv->checkpoint_failures;
	s->failures_in_a_row = kv->failures_in_a_row;
	snprintf(s->checkpoint_error, sizeof(s->checkpoint_error), "%s", kv->checkpoint_error);
	pthread_mutex_unlock(&kv->stat_mu);
}

/* ---- open and close ----------------------------------------------------- */

static int replay(struct kv *kv, uint64_t snap_lsn)
{
	struct pmwal_info info;
	struct pmwal_iter *it;
	uint64_t lsn;
	const void *data;
	size_t len;
	int rc;

	pmwal_stat(kv->w, &info);
	kv->applied_lsn = snap_lsn;
	if (info.head_lsn > snap_lsn + 1)
		return fail(-EINVAL,
			    "the log starts at LSN %" PRIu64 " but the snapshot covers only "
			    "up to %" PRIu64 ": the records between are gone",
			    info.head_lsn, snap_lsn);
	if (info.next_lsn <= snap_lsn)
		return fail(-EINVAL,
			    "the snapshot covers LSN %" PRIu64 " but the log ends at %" PRIu64
			    ": it is not this snapshot's log",
			    snap_lsn, info.next_lsn - 1);
	uint64_t from = snap_lsn + 1 > info.head_lsn ? snap_lsn + 1 : info.head_lsn;

	if (from >= info.next_lsn)
		return 0;
	if ((rc = pmwal_iter_open(kv->w, from, &it)) != 0)
		return fail(rc, "replay: %s", pmwal_errmsg(kv->w));
	while ((rc = pmwal_iter_next(it, &lsn, &data, &len)) == 1) {
		if (lsn <= snap_lsn)
			continue;
		if (apply(kv, lsn, data, len)) {
			pmwal_iter_close(it);
			return fail(-EINVAL, "LSN %" PRIu64 " is not a record of this store", lsn);
		}
		kv->applied_lsn = lsn;
	}
	pmwal_iter_close(it);
	if (rc < 0)
		return fail(rc, "replay: %s", pmwal_errmsg(kv->w));
	prune_dead(kv, kv->applied_lsn);
	/* The next append's LSN must follow what the table holds. */
	return kv->applied_lsn + 1 == info.next_lsn
		   ? 0
		   : fail(-EINVAL, "replay ended at LSN %" PRIu64 ", but the log's next is %" PRIu64,
			  kv->applied_lsn, info.next_lsn);
}

int kv_open(const struct kv_options *o, struct kv **out, char *err, size_t errlen)
{
	struct kv *kv = calloc(1, sizeof(*kv));
	char target[4096], perr[512] = "";
	uint64_t snap_lsn = 0;
	int rc;

	*out = NULL;
	if (!kv) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	kv->lock_fd = kv->dir_fd = -1;
	pthread_mutex_init(&kv->mu, NULL);
	pthread_mutex_init(&kv->ckpt_mu, NULL);
	pthread_mutex_init(&kv->stat_mu, NULL);
	pthread_cond_init(&kv->ring_cv, NULL);
	kv->done = calloc(KV_RING, sizeof(*kv->done));
	if (!kv->done) {
		free(kv);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	kv->checkpoint_every = o->checkpoint_every;
	snprintf(kv->dir_path, sizeof(kv->dir_path), "%s", o->dir);
	snprintf(kv->snap_path, sizeof(kv->snap_path), "%s/snapshot", o->dir);
	snprintf(kv->snap_tmp, sizeof(kv->snap_tmp), "%s/snapshot.tmp", o->dir);
	snprintf(target, sizeof(target), "%s", o->target ? o->target : "");
	if (!o->target)
		snprintf(target, sizeof(target), "%s/log", o->dir);
	/* One store per directory: a second would replace the first's snapshot. */
	char lock_path[4200];

	snprintf(lock_path, sizeof(lock_path), "%s/lock", o->dir);
	/* The way to DIR walked by descriptors (pmr/openat.h): a link another
	 * user planted on it is refused, not followed. */
	kv->dir_fd = pmr_open_dir_walked(o->dir, NULL, NULL, err, errlen);
	if (kv->dir_fd < 0 && errno == EPERM) {
		rc = -EPERM;
		goto out;
	}
	if (kv->dir_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s (DIR must be a writable directory)", o->dir,
			 strerror(errno));
		goto out;
	}
	if ((rc = check_dir(kv->dir_fd, o->dir, err, errlen)) != 0)
		goto out;
	kv->lock_fd = open_own(kv, "lock", lock_path, O_RDWR | O_CREAT);
	if (kv->lock_fd < 0) {
		rc = kv->lock_fd;
		snprintf(err, errlen, "%s (DIR must be a writable directory)", errbuf);
		goto out;
	}
	if (flock(kv->lock_fd, LOCK_EX | LOCK_NB)) {
		rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		snprintf(err, errlen, "%s: %s", o->dir,
			 rc == -EBUSY ? "another store has this directory open" : strerror(errno));
		goto out;
	}
	if ((rc = grow(kv)) != 0 || (rc = snapshot_load(kv, &snap_lsn)) != 0) {
		snprintf(err, errlen, "%s", rc == -ENOMEM ? "out of memory" : errbuf);
		goto out;
	}
	struct pmwal_options po = {.target = target,
				   .group_window_us = o->group_window_us,
				   .groups_in_flight = o->groups_in_flight,
				   .errmsg_buf = perr,
				   .errmsg_len = sizeof(perr)};

	if (o->create && kv->have_snap) {
		rc = -EEXIST;
		snprintf(err, errlen, "%s: a snapshot exists: not creating a new log under it",
			 kv->snap_path);
		goto out;
	}
	if (o->create) {
		po.flags = PMWAL_OPEN_FORMAT;
		po.capacity_bytes = o->capacity_bytes;
	}
	rc = pmwal_open(&po, &kv->w);
	if (rc == -ENOENT && !kv->have_snap && !o->create) {
		po.flags = PMWAL_OPEN_CREATE | PMWAL_OPEN_EXCL;
		po.capacity_bytes = o->capacity_bytes ? o->capacity_bytes : 64u << 20;
		rc = pmwal_open(&po, &kv->w);
	}
	if (rc) {
		snprintf(err, errlen, "%s: %s", target, perr[0] ? perr : pmwal_strerror(rc));
		goto out;
	}
	struct pmwal_info info;

	pmwal_stat(kv->w, &info);
	kv->log_id = info.log_id;
	if (kv->have_snap && kv->snap_log_id != kv->log_id) {
		rc = -EINVAL;
		snprintf(err, errlen,
			 "%s belongs to the log with id %016" PRIx64 ", but %s is the log %016" PRIx64
			 ": another store's snapshot or log",
			 kv->snap_path, kv->snap_log_id, target, kv->log_id);
		goto out;
	}
	if ((rc = replay(kv, snap_lsn)) != 0)
		snprintf(err, errlen, "%s: %s", target, errbuf);
out:
	if (rc)
		kv_close(kv);
	else
		*out = kv;
	return rc;
}

int kv_close(struct kv *kv)
{
	int rc = 0;

	if (!kv)
		return 0;
	if (kv->w && (rc = pmwal_close(kv->w)) != 0)
		fail(rc, "close: %s", pmwal_strerror(rc));
	for (size_t i = 0; i < kv->nslots; i++)
		if (kv->slots[i].key && kv->slots[i].key != FREED) {
			free(kv->slots[i].key);
			free(kv->slots[i].value);
		}
	free(kv->slots);
	pthread_mutex_destroy(&kv->mu);
	pthread_mutex_destroy(&kv->ckpt_mu);
	pthread_mutex_destroy(&kv->stat_mu);
	pthread_cond_destroy(&kv->ring_cv);
	free(kv->done);
	if (kv->lock_fd >= 0)
		close(kv->lock_fd); /* after the log: the next store finds it closed */
	if (kv->dir_fd >= 0)
		close(kv->dir_fd);
	free(kv);
	return rc;
}
