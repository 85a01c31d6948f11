// SPDX-License-Identifier: MIT
/*
 * status.c - the status page: how the processes on one host that share a log
 * learn of each other's progress (docs/followers.md).
 *
 * A log's writer keeps a 4 KiB page in shared memory beside it, a file named
 * after the log's id and where it lives (/dev/shm/pmwal-<log_id>-<where>.status;
 * PMWAL_STATUS_DIR moves it). After each group it publishes there how far the log is durable and
 * where its head is, and bumps a futex word; followers (read-only handles in
 * other processes) read those to know what they may read, and sleep on the
 * word until it moves, so that no core spins while nothing happens and a
 * follower hears of a group within a wake-up. The writer makes the futex
 * call only when a follower sleeps (the waiters count).
 *
 * The page is also the fence. Its word `own` holds the epoch of the writer
 * that owns the log and the count of that writer's writes under way. An
 * open for writing claims the log there, with an epoch above any before,
 * before recovery reads anything, and only while no write of the last owner
 * is under way (it waits for them, or refuses to take a log from a writer
 * stopped in the middle of one); a writer begins each write (a group, a
 * superblock) by checking that the epoch is still its own and counting the
 * write, in one compare-and-swap, and publishes each group durable only
 * while it is. A writer taken over (PMWAL_OPEN_BREAK_LOCK) thus writes
 * nothing after the claim and acknowledges nothing: PMWAL_EFENCED.
 *
 * The other fields are a seqlock: gen is odd while one process updates them
 * (a publication, a claim); readers retry while it is odd or changed under
 * them. Every field is accessed atomically. A process that dies or stops
 * mid-update leaves gen odd: the next updater waits WAL_STATUS_STUCK_MS and
 * then takes it over. Nothing of the fence depends on gen.
 *
 * Every process that maps the page holds a shared byte lock on its file, and
 * only a writer that can take it exclusively removes the page (ofd_lock()).
 *
 * Who may do what (the directory, /dev/shm, is everyone's):
 * - Write: the writer's user alone. The page has mode 0600 plus the log's
 *   own group and other read bits as they are at each writer's open (a
 *   page kept is given them again); a writer uses a page only if it
 *   is its own user's, a regular file of one link and a page's size that no
 *   one else may write, in a directory no one else may replace it in (its
 *   user's or root's, not writable by others unless sticky; a symbolic link
 *   to it only if its user or root made it). Anything else at the page's
 *   name (a file, link, FIFO or directory of another user's, a page of
 *   another log) is replaced by a new page, renamed into place in exchange
 *   for what was judged there, never opened through the name; where that is
 *   not allowed (another user's, to a writer not root) the open fails
 *   naming it, its owner and what to do. A writer never runs without a page.
 * - Read: who may read the log. A follower trusts a page of its own user,
 *   of root or of the log's owner, and reads it read-only if it cannot
 *   write it (then it sleeps in short rounds, not on the futex). One of
 *   another user (the log's owner) is read with pread, never mapped: that
 *   user could truncate it under the mapping, which is SIGBUS.
 * - Lock: anyone who can read the page can take shared locks on its bytes.
 *   Nothing a writer does waits for one: the users' lock it takes shared
 *   (which only an exclusive lock, of a writer of its user, closing,
 *   holds off, and only for WAL_STATUS_LOCK_MS at most), it takes
 *   exclusively only to remove the page at close, without waiting.
 * So a hostile local user can at most keep a page from being removed or
 * delay a follower (one that trusts the page and reads it); it can never
 * hang a writer, make one run without its page, or have one write through
 * a link.
 *
 * Nothing here is durable and nothing here is trusted for correctness of
 * what is read: followers still check every block they read (format.c).
 * What the page says can only make a follower read less (a durable end not
 * yet published) or wait longer, never read what is not durable.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "openat.h"
#include "seeded.h"
#include "xxh.h"

#define WAL_STATUS_MAGIC    0x3154534c41574d50ull /* "PMWALST1" */
#define WAL_STATUS_VERSION  5u
#define WAL_STATUS_BYTES    4096u
#define WAL_STATUS_STUCK_MS 100 /* gen odd this long: its updater died or stopped */
#define WAL_STATUS_DRAIN_MS 5000 /* a broken writer's write may take this long */
#define WAL_STATUS_STOPPED_MS 50 /* ... unless it is stopped that long */

/* The page (all fields atomic; see above). Who writes what sits in its own
 * cache line: the fence (every write begins and ends there), what is
 * published (once per group), the futex word and its waiters (followers). */
struct wal_status_page {
	uint64_t magic;
	uint32_t version;
	uint32_t pid;	      /* the writer's pid (0: none open) */
	uint64_t log_id;
	uint32_t flags;	      /* WAL_STATUS_OPEN */
	uint32_t unused;
	uint64_t pid_start;   /* the writer's start time (/proc/PID/stat), so
			       * that its pid reused by another is told apart */
	/* The fence: the epoch of the writer that owns the log (high half) and
	 * the count of its writes under way (low half). */
	_Alignas(64) uint64_t own;
	_Alignas(64) uint32_t gen; /* seqlock: odd while updated */
	uint32_t epoch;	      /* superblock epoch the durable end is valid under */
	uint64_t durable_seq; /* blocks below it are durable */
	uint64_t durable_lsn; /* records up to it are durable (0: none) */
	/* The writer's counters since its open (pmwal_stats), updated with
	 * each group's publication under gen: the five every group changes
	 * fill this line, the line it writes anyway (one more line written
	 * per group cost about 6% of a 4 KiB append on emulated pmem); the
	 * rest follow, written when they change. */
	struct wal_stats stats;
	uint64_t head_seq; /* written when a release moved it */
	uint64_t head_lsn;
	_Alignas(64) uint32_t wake; /* futex word: +1 per publication */
	uint32_t waiters;	    /* followers asleep on wake */
};
_Static_assert(offsetof(struct wal_status_page, stats) + 5 * sizeof(uint64_t) ==
		   offsetof(struct wal_status_page, gen) + 64,
	       "the per-group counters share gen's line");
_Static_assert(sizeof(struct wal_status_page) <= WAL_STATUS_BYTES, "one page");

#define WAL_STATUS_OPEN 1u

#define LD(f)	 __atomic_load_n(&(f), __ATOMIC_RELAXED)
#define LDA(f)	 __atomic_load_n(&(f), __ATOMIC_ACQUIRE)
#define ST(f, v) __atomic_store_n(&(f), (v), __ATOMIC_RELAXED)

static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * The page's name: the log's id and where it lives on this host (the file's
 * device and inode, a block device's number, a PMR's PCI address), so that
 * two copies of one log (the same id) never share a page, nor a fence.
 */
int wal_status_path(const char *target, uint64_t log_id, char *buf, size_t len)
{
	const char *dir = getenv("PMWAL_STATUS_DIR");
	struct pmwal_target t;
	struct stat st;
	uint64_t where[3] = {0, 0, 0};
	int n;

	if (!dir || !dir[0])
		dir = "/dev/shm";
	if (pmwal_target_parse(target, &t))
		return PMWAL_EBADOPT;
	if (t.kind == PMWAL_TARGET_PMR) {
		where[0] = wal_xxh3(t.path, strlen(t.path), 0);
	} else {
		if (stat(t.path, &st))
			return -errno;
		if (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode))
			where[0] = st.st_rdev;
		else
			where[1] = st.st_dev, where[2] = st.st_ino;
	}
	n = snprintf(buf, len, "%s/pmwal-%016llx-%016llx.status", dir,
		     (unsigned long long)log_id,
		     (unsigned long long)wal_xxh3(where, sizeof(where), 0));
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/*
 * One byte lock on the page file (an open-file-description lock: it goes
 * with the descriptor, whichever process or thread holds it): LOCK_USERS,
 * held shared by every handle that maps the page, for as long as it does. A
 * closing writer removes the page only if it can take LOCK_USERS
 * exclusively: nobody else uses it. One that opens it takes LOCK_USERS
 * shared and then makes sure the name still leads to it (it was not removed
 * in between), or opens again. So every process using a log's page at one
 * time uses the same one: a writer taken over can never remove the page
 * that fences it.
 *
 * Anyone who can read the page can take a shared lock on any of its bytes,
 * so no lock a writer needs is ever waited for without bound: LOCK_USERS
 * exclusively is only tried (a reader keeps the page from being removed,
 * nothing more), and shared it conflicts only with a closing writer of this
 * user, for a moment (WAL_STATUS_LOCK_MS). No lock guards a page being
 * made: a writer makes a new page whole in a file of its own and renames
 * it into place (make_page), so nobody ever sees half of one.
 */
#define LOCK_USERS 1
#define WAL_STATUS_LOCK_MS 2000

static int ofd_lock(int fd, short type, off_t byte, bool wait)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1};

	if (!wait)
		return fcntl(fd, F_OFD_SETLK, &fl) ? -errno : 0;
	/* Bounded: F_OFD_SETLKW would wait for as long as a holder likes. */
	for (uint64_t t0 = now_ms();; usleep(1000)) {
		if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
			return 0;
		if ((errno != EAGAIN && errno != EACCES) || now_ms() - t0 > WAL_STATUS_LOCK_MS)
			return -errno;
	}
}

/* Maps @fd's page (@rw: writable): NULL on failure (errno set; ENODATA: not
 * a page of log @log_id, or not yet whole). */
static struct wal_status_page *map_page(int fd, uint64_t log_id, bool rw)
{
	struct stat st;
	struct wal_status_page *p;

	if (fstat(fd, &st))
		return NULL;
	/* /dev/shm is everyone's: a page is a regular file of one link and of
	 * its own size (attach checks who owns it), never a file of ours
	 * another user linked or planted there. */
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    (st.st_size != 0 && st.st_size != WAL_STATUS_BYTES)) {
		errno = EINVAL;
		return NULL;
	}
	if (st.st_size < WAL_STATUS_BYTES) {
		errno = ENODATA;
		return NULL;
	}
	p = mmap(NULL, WAL_STATUS_BYTES, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (__atomic_load_n(&p->magic, __ATOMIC_ACQUIRE) != WAL_STATUS_MAGIC ||
	    LD(p->version) != WAL_STATUS_VERSION || LD(p->log_id) != log_id) {
		munmap(p, WAL_STATUS_BYTES);
		errno = ENODATA;
		return NULL;
	}
	return p;
}

/* What @st is, for messages: "a symbolic link", "a file of 100 bytes"... */
static const char *describe(const struct stat *st, char *buf, size_t len)
{
	if (S_ISLNK(st->st_mode))
		return "a symbolic link";
	if (S_ISDIR(st->st_mode))
		return "a directory";
	if (S_ISFIFO(st->st_mode))
		return "a FIFO";
	if (!S_ISREG(st->st_mode))
		return "a special file";
	if (st->st_nlink != 1)
		snprintf(buf, len, "a file of %lu links", (unsigned long)st->st_nlink);
	else if (st->st_size != WAL_STATUS_BYTES)
		snprintf(buf, len, "a file of %lld bytes", (long long)st->st_size);
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		snprintf(buf, len, "a file others may write (mode %04o)",
			 (unsigned)(st->st_mode & 07777));
	else
		snprintf(buf, len, "a file");
	return buf;
}

/* A page this writer may use as it is: its own user's, writable by nobody
 * else, one link, a page's size (what it holds is checked once mapped). */
static bool page_usable(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() && st->st_nlink == 1 &&
	       st->st_size == WAL_STATUS_BYTES && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * The directory pages go in, opened for a writer into *@dfd. Whoever may
 * replace files in it may replace the page: it must be this user's or
 * root's, and writable by nobody else unless sticky (as /dev/shm is, where
 * others cannot remove or rename this user's files). A symbolic link to it
 * is followed only if this user or root made it.
 */
static int open_page_dir(struct pmwal *w, const char *dir, int *dfd)
{
	uid_t me = geteuid();
	struct stat st;
	int fd;

	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != me && st.st_uid != 0) {
		snprintf(w->st_err, sizeof(w->st_err),
			 "the status directory %s is a symbolic link of uid %u, who may point "
			 "it anywhere; remove it, or set PMWAL_STATUS_DIR to a directory only "
			 "you can write",
			 dir, (unsigned)st.st_uid);
		return -EPERM;
	}
	/* The way to it walked by descriptors (pmr/openat.h): no link of
	 * another user's on it is followed, nor one swapped in meanwhile. */
	char label[sizeof(w->st_err)], why[sizeof(w->st_err)];

	snprintf(label, sizeof(label), "the status directory %s (PMWAL_STATUS_DIR)", dir);
	fd = pmr_open_dir_walked(dir, label, NULL, why, sizeof(why));
	if (fd < 0 && errno == EPERM) {
		snprintf(w->st_err, sizeof(w->st_err), "%s", why);
		return -EPERM;
	}
	if (fd < 0) {
		int rc = -errno;

		snprintf(w->st_err, sizeof(w->st_err),
			 "the status directory %s: %s; create it (writable by you alone), or "
			 "set PMWAL_STATUS_DIR to a directory that is",
			 dir, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) || (st.st_uid != me && st.st_uid != 0) ||
	    ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
		snprintf(w->st_err, sizeof(w->st_err),
			 "the status directory %s (owner uid %u, mode %04o) lets %s replace "
			 "the status page in it; set PMWAL_STATUS_DIR to a directory of "
			 "yours that only you can write (or one with the sticky bit, as "
			 "/dev/shm)",
			 dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			 st.st_uid != me && st.st_uid != 0 ? "its owner" : "other users");
		close(fd);
		return -EPERM;
	}
	*dfd = fd;
	return 0;
}

/* The page's mode: this user's to write; readable by those who may read
 * the log (its group and other read bits), who may follow it. */
static mode_t page_mode(const struct pmwal *w)
{
	struct pmwal_target t;
	struct stat st;
	mode_t m = 0600;

	if (!pmwal_target_parse(w->target, &t) && t.kind != PMWAL_TARGET_PMR &&
	    stat(t.path, &st) == 0)
		m |= st.st_mode & (S_IRGRP | S_IROTH);
	return m;
}

/*
 * A new page for the writer @w, whole before anyone can see it: made in a
 * file of its own (a random name in the same directory, O_EXCL) and renamed
 * to @name, only where @name is free (@judged NULL), or else in exchange for
 * what is there (@judged: what the caller found there), which then goes only
 * if it is what was judged. Nothing is ever opened through @name here, so
 * nothing is written through a link. 0 with *@fd (holding LOCK_USERS) and
 * *@pp, or -errno: -EEXIST (@name taken meanwhile), -EPERM/-EACCES (what is
 * there is not this user's to replace).
 */
static int make_page(struct pmwal *w, int dfd, const char *name, const struct stat *judged,
		     int *fd_out, struct wal_status_page **pp)
{
	char tmp[160];
	uint64_t r = 0;
	int fd = -1, rc;
	struct wal_status_page *p;

	for (int tries = 0; fd < 0 && tries < 8; tries++) {
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r ^= now_ms() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 32;
		snprintf(tmp, sizeof(tmp), ".%.100s.%016llx", name, (unsigned long long)r);
		fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	/* Allocated, not only sized: a store to a page of a full tmpfs that
	 * has no memory behind it is SIGBUS, for the writer and every
	 * follower; a full directory must be an error message instead. */
	if (fchmod(fd, page_mode(w))) {
		rc = -errno;
		goto out_unlink;
	}
	if ((rc = posix_fallocate(fd, 0, WAL_STATUS_BYTES)) != 0) {
		rc = -rc;
		goto out_unlink;
	}
	p = mmap(NULL, WAL_STATUS_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		goto out_unlink;
	}
	ST(p->log_id, w->sb.log_id);
	ST(p->version, WAL_STATUS_VERSION);
	__atomic_store_n(&p->magic, WAL_STATUS_MAGIC, __ATOMIC_RELEASE);
	(void)ofd_lock(fd, F_RDLCK, LOCK_USERS, false); /* nobody else has it yet */
	rc = renameat2(dfd, tmp, dfd, name, judged ? RENAME_EXCHANGE : RENAME_NOREPLACE);
	if (rc && errno == EINVAL) /* a filesystem without them */
		rc = judged ? renameat(dfd, tmp, dfd, name)
			    : (linkat(dfd, tmp, dfd, name, 0) ? -1 : unlinkat(dfd, tmp, 0));
	else if (!rc && judged) {
		/* What was at @name is at @tmp now: removed if it is what was
		 * judged (whatever else someone put there in between is left). */
		int old = openat(dfd, tmp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat ost;

		if (old >= 0 && fstat(old, &ost) == 0 && ost.st_dev == judged->st_dev &&
		    ost.st_ino == judged->st_ino)
			(void)unlinkat(dfd, tmp, S_ISDIR(ost.st_mode) ? AT_REMOVEDIR : 0);
		if (old >= 0)
			close(old);
	}
	if (rc) {
		rc = -errno;
		munmap(p, WAL_STATUS_BYTES);
		goto out_unlink;
	}
	*fd_out = fd;
	*pp = p;
	return 0;
out_unlink:
	(void)unlinkat(dfd, tmp, 0);
	close(fd);
	return rc;
}

/*
 * A writer's page: the one at @name if it is this user's and whole, else a
 * new one in its place (make_page). What is there and cannot be replaced
 * (another user's, for a writer not root), or must not be (a
 * breaker uses the page its holder uses, or none), is refused with what it
 * is and what to do: a writer never runs without its page.
 */
static int attach_writer(struct pmwal *w, const char *path, int *fd_out,
			 struct wal_status_page **pp, struct stat *st)
{
	const char *name = strrchr(path, '/') + 1;
	char dir[sizeof(w->st_path)], what[64];
	int dfd = -1, rc = -EAGAIN;

	snprintf(dir, sizeof(dir), "%.*s", (int)(name - path - 1), path);
	if (!dir[0])
		snprintf(dir, sizeof(dir), "/");
	rc = open_page_dir(w, dir, &dfd);
	if (rc)
		return rc;
	for (int tries = 0; tries < 16; tries++) {
		int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0 && errno == ENOENT) {
			rc = make_page(w, dfd, name, NULL, fd_out, pp);
			if (rc == -EEXIST)
				continue; /* made meanwhile: look at it */
			if (rc)
				snprintf(w->st_err, sizeof(w->st_err),
					 "%s: cannot make it: %s; %sset PMWAL_STATUS_DIR to a "
					 "directory only you can write",
					 path, strerror(-rc),
					 rc == -ENOSPC ? "free space there, or " : "");
			break;
		}
		if (fd < 0 || fstat(fd, st)) {
			rc = -errno;
			snprintf(w->st_err, sizeof(w->st_err), "%s: %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			break;
		}
		close(fd);
		if (page_usable(st)) {
			struct stat now;

			fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
			if (fd < 0 || fstat(fd, &now) || now.st_ino != st->st_ino ||
			    now.st_dev != st->st_dev) {
				if (fd >= 0)
					close(fd);
				rc = -EAGAIN; /* replaced or removed meanwhile */
				continue;
			}
			/* Exclusively only by a writer of this user, closing. */
			rc = ofd_lock(fd, F_RDLCK, LOCK_USERS, true);
			if (rc) {
				close(fd);
				snprintf(w->st_err, sizeof(w->st_err),
					 "%s: its users' lock: %s after %d ms; is another "
					 "process of yours holding it?",
					 path, strerror(-rc), WAL_STATUS_LOCK_MS);
				break;
			}
			if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) ||
			    now.st_ino != st->st_ino) {
				close(fd);
				rc = -EAGAIN; /* removed by a closing writer meanwhile */
				continue;
			}
			/* One an older pmwal made was only sized (make_page). */
			int e = posix_fallocate(fd, 0, WAL_STATUS_BYTES);

			if (e) {
				close(fd);
				rc = -e;
				snprintf(w->st_err, sizeof(w->st_err),
					 "%s: cannot allocate it: %s; free space there, or set "
					 "PMWAL_STATUS_DIR to another directory",
					 path, strerror(e));
				break;
			}
			*pp = map_page(fd, w->sb.log_id, true);
			if (*pp) {
				/* Readable by those who may read the log now (its
				 * mode may have changed since the page was made). */
				if ((st->st_mode & 0777) != page_mode(w))
					(void)fchmod(fd, page_mode(w));
				*fd_out = fd;
				rc = 0;
				break;
			}
			close(fd); /* another log's, an older version's: a new one */
		}
		if (w->lock_broken) {
			rc = -EEXIST;
		} else {
			rc = make_page(w, dfd, name, st, fd_out, pp);
			if (rc == -EEXIST || rc == -ENOENT)
				continue; /* removed meanwhile: look again */
			if (!rc)
				break;
		}
		snprintf(w->st_err, sizeof(w->st_err),
			 "%s is %s of uid %u, not a status page of this user's%s%s; remove "
			 "it (as its owner or root), or set PMWAL_STATUS_DIR to a directory "
			 "only you can write",
			 path, describe(st, what, sizeof(what)), (unsigned)st->st_uid,
			 rc == -EEXIST ? "" : ", and cannot be replaced: ",
			 rc == -EEXIST ? "" : strerror(-rc));
		break;
	}
	if (rc == -EAGAIN)
		snprintf(w->st_err, sizeof(w->st_err),
			 "%s: replaced or removed each time it was opened; open again", path);
	if (!rc && fstat(*fd_out, st)) {
		rc = -errno;
		munmap(*pp, WAL_STATUS_BYTES);
		close(*fd_out);
	}
	close(dfd);
	return rc;
}

/*
 * Another user's page (the log's owner's, trusted by a follower) is read by
 * pread from its file, never mapped: its owner may truncate it. The handle
 * keeps a placeholder of its own in w->st (magic 0, the file's descriptor
 * in `unused`), which the readers below tell from a mapped page.
 */
static bool copy_page(const struct wal_status_page *p, struct wal_status_page *buf)
{
	if (LD(p->magic) == WAL_STATUS_MAGIC)
		return false; /* mapped: read it there */
	int fd = (int)LD(p->unused);

	if (pread(fd, buf, sizeof(*buf), 0) != (ssize_t)sizeof(*buf) ||
	    buf->magic != WAL_STATUS_MAGIC)
		memset(buf, 0, sizeof(*buf)); /* cut short: says nothing */
	return true;
}

static struct wal_status_page *copy_attach(int fd, uint64_t log_id, const struct stat *st)
{
	struct wal_status_page buf, *p;

	if (!S_ISREG(st->st_mode) || st->st_nlink != 1 || st->st_size != WAL_STATUS_BYTES) {
		errno = EINVAL;
		return NULL;
	}
	if (pread(fd, &buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
	    buf.magic != WAL_STATUS_MAGIC || buf.version != WAL_STATUS_VERSION ||
	    buf.log_id != log_id) {
		errno = ENODATA;
		return NULL;
	}
	p = mmap(NULL, WAL_STATUS_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	ST(p->unused, (uint32_t)fd);
	return p;
}

static int attach(struct pmwal *w, bool writer)
{
	char path[sizeof(w->st_path)];
	struct stat st;
	int fd, rc;
	struct pmwal_target t;
	struct wal_status_page *p = NULL;

	if (w->st)
		return 0;
	if (pmwal_target_parse(w->target, &t) || t.kind == PMWAL_TARGET_SIM) {
		snprintf(w->st_err, sizeof(w->st_err), "a simulated medium has none");
		return -ENOENT; /* simulated media live in one process */
	}
	rc = wal_status_path(w->target, w->sb.log_id, path, sizeof(path));
	if (rc) {
		snprintf(w->st_err, sizeof(w->st_err), "naming it: %s", strerror(-rc));
		return rc;
	}
	snprintf(w->st_path, sizeof(w->st_path), "%s", path);
	if (writer) {
		rc = attach_writer(w, path, &fd, &p, &st);
		if (rc)
			return rc == -EAGAIN ? -EBUSY : rc;
		goto attached;
	}
	/* Read-write to count ourselves among the waiters; a follower of
	 * another user reads it read-only and sleeps in short rounds instead.
	 * O_NONBLOCK: a FIFO planted there must not hang the open. */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && (errno == EACCES || errno == EROFS))
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		snprintf(w->st_err, sizeof(w->st_err), "%s: %s", path, strerror(errno));
		return rc;
	}
	/* Trusted only from the log's owner, this user or root (the writer may
	 * be another user than its followers). */
	struct stat lst;

	if (fstat(fd, &st) ||
	    (st.st_uid != geteuid() && st.st_uid != 0 &&
	     (pmwal_target_parse(w->target, &t) || t.kind == PMWAL_TARGET_PMR ||
	      stat(t.path, &lst) || lst.st_uid != st.st_uid))) {
		close(fd);
		snprintf(w->st_err, sizeof(w->st_err), "%s: owned by uid %u, not trusted", path,
			 (unsigned)st.st_uid);
		return -EPERM;
	}
	/* A user of the page, and of the one the name leads to now: a page
	 * removed between our open and our lock is not used (open again). */
	struct stat now;

	if ((rc = ofd_lock(fd, F_RDLCK, LOCK_USERS, true)) != 0 || stat(path, &now) ||
	    now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
		close(fd);
		snprintf(w->st_err, sizeof(w->st_err), "%s: %s", path,
			 rc ? strerror(-rc) : "removed while opened");
		return rc ? rc : -EAGAIN;
	}
	/* A page of the log's owner, another user, is never mapped: its owner
	 * may truncate it, and a store or load of a mapped page past its end
	 * is SIGBUS. It is read with pread (copy_page) instead. */
	if (st.st_uid != geteuid() && st.st_uid != 0)
		p = copy_attach(fd, w->sb.log_id, &st);
	else
		p = map_page(fd, w->sb.log_id, (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
	rc = p ? 0 : -errno;
	if (rc) {
		close(fd);
		snprintf(w->st_err, sizeof(w->st_err), "%s: %s", path,
			 rc == -EINVAL ? "not a status page (links, size or type)"
				       : strerror(-rc));
		return rc;
	}
attached:
	if (w->st_fd >= 0 && w->st_retired_fd_n < WAL_STATUS_RETIRED)
		w->st_retired_fd[w->st_retired_fd_n++] = w->st_fd;
	else if (w->st_fd >= 0)
		close(w->st_fd);
	w->st_fd = fd; /* holds LOCK_USERS while the page is used */
	w->st_ino = st.st_ino;
	w->st_waitable = (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR &&
			 LD(p->magic) == WAL_STATUS_MAGIC;
	w->st_err[0] = 0;
	__atomic_store_n(&w->st, p, __ATOMIC_RELEASE);
	return 0;
}

int wal_status_attach(struct pmwal *w, bool writer)
{
	int rc;

	/* A closing writer may remove the page between our open and our
	 * lock: a few tries, then without one. */
	for (int tries = 0; (rc = attach(w, writer)) == -EAGAIN && tries < 16; tries++)
		;
	w->st_rc = rc;
	return rc;
}

int wal_status_reattach(struct pmwal *w)
{
	/* Under mu: iterators of other threads may call this at once. The page
	 * replaced stays mapped until close (they may still be reading it). */
	pthread_mutex_lock(&w->mu);
	struct wal_status_page *old = w->st;
	int rc;

	if (old && w->st_retired_n == WAL_STATUS_RETIRED) {
		pthread_mutex_unlock(&w->mu);
		return -ENOSPC; /* replaced that often: stay on the last one */
	}
	w->st = NULL;
	rc = wal_status_attach(w, false);
	if (rc)
		w->st = old;
	else if (old)
		w->st_retired[w->st_retired_n++] = old;
	pthread_mutex_unlock(&w->mu);
	return rc;
}

void wal_status_detach(struct pmwal *w, bool unlink_it)
{
	if (!w->st) {
		while (w->st_retired_n)
			munmap(w->st_retired[--w->st_retired_n], WAL_STATUS_BYTES);
		while (w->st_retired_fd_n)
			close(w->st_retired_fd[--w->st_retired_fd_n]);
		if (w->st_fd >= 0)
			close(w->st_fd);
		w->st_fd = -1;
		return;
	}
	if (unlink_it && !wal_status_fenced(w) && w->st_fd >= 0 &&
	    ofd_lock(w->st_fd, F_WRLCK, LOCK_USERS, false) == 0) {
		struct stat st;

		/* Nobody else uses it (a follower, a standby claiming it, a
		 * writer that took over would hold LOCK_USERS), it is still
		 * ours, and the name still leads to it: it goes. */
		if (!wal_status_fenced(w) && stat(w->st_path, &st) == 0 &&
		    st.st_ino == w->st_ino)
			unlink(w->st_path);
	}
	munmap(w->st, WAL_STATUS_BYTES);
	w->st = NULL;
	while (w->st_retired_n)
		munmap(w->st_retired[--w->st_retired_n], WAL_STATUS_BYTES);
	if (w->st_fd >= 0)
		close(w->st_fd);
	w->st_fd = -1;
	while (w->st_retired_fd_n)
		close(w->st_retired_fd[--w->st_retired_fd_n]);
}

/* Takes the page's update lock: 0, or after WAL_STATUS_STUCK_MS of a gen
 * left odd (an updater that died mid-update) takes it anyway. */
static uint32_t gen_lock(struct wal_status_page *p)
{
	uint64_t t0 = 0;

	for (unsigned spins = 0;; spins++) {
		uint32_t g = __atomic_load_n(&p->gen, __ATOMIC_RELAXED);

		if (!(g & 1) && __atomic_compare_exchange_n(&p->gen, &g, g + 1, false,
							    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return g + 1;
		if (spins < 64)
			continue;
		if (!t0)
			t0 = now_ms();
		else if (now_ms() - t0 > WAL_STATUS_STUCK_MS &&
			 __atomic_compare_exchange_n(&p->gen, &g, g + 2, false,
						     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return g + 2; /* still odd: ours now */
		sched_yield();
	}
}

static void gen_unlock(struct wal_status_page *p, uint32_t g)
{
	/* Taken over meanwhile (we were stopped 100 ms): it is not ours to
	 * end, and gen never goes back. */
	(void)__atomic_compare_exchange_n(&p->gen, &g, g + 1, false, __ATOMIC_RELEASE,
					  __ATOMIC_RELAXED);
}

/* Wakes the followers asleep on the page (after a publication). */
static void wake_followers(struct wal_status_page *p)
{
	__atomic_fetch_add(&p->wake, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&p->waiters, __ATOMIC_SEQ_CST))
		futex(&p->wake, FUTEX_WAKE, INT_MAX, NULL);
}

static uint64_t pid_start_time(uint32_t pid)
{
	uint64_t t = 0;

	return wal_proc_stat(pid, NULL, &t) ? 0 : t;
}

/* Whether the process @pid that started at @start (0: unknown) lives: its
 * pid given to another process since does not count. */
static bool pid_alive(uint32_t pid, uint64_t start)
{
	if (!pid || (kill((pid_t)pid, 0) != 0 && errno == ESRCH))
		return false;
	/* A zombie, or a writer killed and still exiting: its writes are
	 * done once the writer lock is free (lock.c), and it begins none. */
	if (pid != (uint32_t)getpid() && wal_proc_exiting((long)pid))
		return false;
	uint64_t now = start ? pid_start_time(pid) : 0;

	return !start || !now || now == start;
}

/* Stopped (SIGSTOP) or traced. */
static bool pid_stopped(uint32_t pid)
{
	char state;

	return wal_proc_stat(pid, &state, NULL) == 0 && (state == 'T' || state == 't');
}

#define OWN_EPOCH(v)  ((uint32_t)((v) >> 32))
#define OWN_WRITES(v) ((uint32_t)(v))

/* An epoch on the page this far above the superblock's, with its owner gone,
 * is not one a writer of this log claimed: the page is damaged. */
#define WAL_STATUS_EPOCH_SLACK (1u << 16)

int wal_status_claim(struct pmwal *w, uint32_t want, long holder, char *err, size_t errlen)
{
	struct wal_status_page *p = w->st;
	uint32_t me = (uint32_t)getpid();
	bool broke = holder != 0;

	w->own_epoch = want;
	if (!p) {
		struct pmwal_target t;

		/* Never without a page: followers would learn of nothing until
		 * the close, and a lock could not be broken. */
		if (!broke && (pmwal_target_parse(w->target, &t) || t.kind == PMWAL_TARGET_SIM ||
			       w->lock_fd[0] < 0))
			return 0; /* a medium of this process alone (wal_open_dev) */
		if (!broke) {
			snprintf(err, errlen, "%s: no status page for the log's writer: %s", w->target,
				 w->st_err[0] ? w->st_err : "none");
			return w->st_rc < 0 ? w->st_rc : -EPERM;
		}
		snprintf(err, errlen,
			 "%s: cannot break the writer lock: there is no status page to fence "
			 "its holder with (%s); nothing was changed",
			 w->target, w->st_err[0] ? w->st_err : "none");
		return -EBUSY;
	}
	uint64_t my_start = pid_start_time(me); /* not cached: a fork has its own */
	uint64_t t0 = now_ms(), stopped_since = 0;

	for (;;) {
		/* Look without the update lock (waiting may take long), then take
		 * the log under it if nothing changed meanwhile: a second claimer
		 * sees the first's pid, never a stale one. */
		uint32_t old_pid = LDA(p->pid);
		uint64_t old_start = LDA(p->pid_start);
		/* This process too: another handle of it may be writing. */
		bool alive = old_pid && pid_alive(old_pid, old_start);

		/*
		 * Breaking: only the holder this page names is fenced by it. A
		 * page of another writer (another PMWAL_STATUS_DIR, another path
		 * to the log, a page removed and made anew) would fence nobody.
		 */
		if (broke && (holder < 0 || old_pid != (uint32_t)holder || !alive)) {
			char holder_s[48], page_s[48];

			snprintf(holder_s, sizeof(holder_s),
				 holder < 0 ? "a process this pmwal cannot name" : "pid %ld", holder);
			snprintf(page_s, sizeof(page_s), old_pid ? "pid %u" : "no writer", old_pid);
			if (old_pid && old_pid != (uint32_t)holder && alive)
				snprintf(err, errlen,
					 "%s: cannot break the writer lock of %s: pid %u took the "
					 "log over already (its status page %s); nothing was changed",
					 w->target, holder_s, old_pid, w->st_path);
			else
				snprintf(err, errlen,
					 "%s: cannot break the writer lock of %s: its status page %s "
					 "names %s, so breaking the lock would fence nobody (the "
					 "holder uses another PMWAL_STATUS_DIR or another path to the "
					 "log, or its page was removed); nothing was changed",
					 w->target, holder_s, w->st_path, page_s);
			return -EBUSY;
		}
		/*
		 * Take the log: the next epoch above any claimed before (a
		 * breaker's claim may be above the superblock's), once no write
		 * of the last owner's is under way, in one compare-and-swap with
		 * the count of writes (wal_status_begin_write increments it by the
		 * same), so that a write is either begun before the claim and
		 * waited for, or not begun at all. The last owner gone (dead, its
		 * pid reused): its writes are done (a lock holder's, by the lock;
		 * see docs/followers.md for a breaker's).
		 */
		uint64_t v = __atomic_load_n(&p->own, __ATOMIC_ACQUIRE);

		if (OWN_WRITES(v) && alive) {
			/* Stopped, it will not end its write until continued: say
			 * so soon, rather than wait as for a slow device. */
			bool stopped = pid_stopped(old_pid);

			if (!stopped)
				stopped_since = 0;
			else if (!stopped_since)
				stopped_since = now_ms();
			if ((stopped && now_ms() - stopped_since > WAL_STATUS_STOPPED_MS) ||
			    now_ms() - t0 > WAL_STATUS_DRAIN_MS) {
				snprintf(err, errlen,
					 "%s: the log's writer, pid %u, is %s in the middle of a "
					 "write to it; taking over now could let that write land "
					 "on the new writer's records. %s, then open again (its "
					 "status page is %s)",
					 w->target, old_pid, stopped ? "stopped (SIGSTOP)" : "stuck",
					 stopped ? "Continue it (kill -CONT) or kill it"
						 : "Kill it, or wait for its device",
					 w->st_path);
				return -EBUSY;
			}
			usleep(1000);
			continue;
		}
		uint32_t g = gen_lock(p);

		if (LD(p->pid) != old_pid || LD(p->pid_start) != old_start) {
			gen_unlock(p, g); /* another claimed meanwhile: look again */
			continue;
		}
		uint32_t base = OWN_EPOCH(v);

		if (!alive && (base >= WAL_EPOCH_MAX || base > want + WAL_STATUS_EPOCH_SLACK))
			base = 0; /* damaged: the superblock's epoch decides */
		uint32_t e = want > base ? want : base + 1;

		if (e > WAL_EPOCH_MAX) {
			gen_unlock(p, g);
			snprintf(err, errlen,
				 "%s: the epoch claimed on the status page %s (%u) is at its "
				 "maximum; a writer still runs (pid %u)",
				 w->target, w->st_path, base, old_pid);
			return PMWAL_EFULL;
		}
		if (!__atomic_compare_exchange_n(&p->own, &v, (uint64_t)e << 32, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
			gen_unlock(p, g); /* a write began: look again */
			continue;
		}
		ST(p->pid, me);
		ST(p->pid_start, my_start);
		ST(p->flags, LD(p->flags) | WAL_STATUS_OPEN);
		gen_unlock(p, g);
		wake_followers(p);
		w->own_epoch = e;
		return 0;
	}
}

/*
 * Every write of the log (a group, a superblock) happens between these two.
 * Beginning one checks that the log is still this writer's and counts the
 * write in the same compare-and-swap; a claim swaps the epoch only while no
 * write is counted. So a writer taken over either began its write before
 * the claim (and the claimer waited for it to end) or begins none: whether
 * it is stopped before, inside or after this call.
 */
int wal_status_begin_write(struct pmwal *w)
{
	struct wal_status_page *p = w->st;

	if (!p || PMWAL_BUG(NO_FENCE))
		return 0;
	uint64_t v = __atomic_load_n(&p->own, __ATOMIC_ACQUIRE);

	do {
		if (OWN_EPOCH(v) != w->own_epoch)
			return PMWAL_EFENCED;
	} while (!__atomic_compare_exchange_n(&p->own, &v, v + 1, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_ACQUIRE));
	return 0;
}

void wal_status_end_write(struct pmwal *w)
{
	struct wal_status_page *p = w->st;

	if (!p || PMWAL_BUG(NO_FENCE))
		return;
	uint64_t v = __atomic_load_n(&p->own, __ATOMIC_ACQUIRE);

	do {
		if (OWN_EPOCH(v) != w->own_epoch || !OWN_WRITES(v))
			return; /* claimed since by one that found us dead: void */
	} while (!__atomic_compare_exchange_n(&p->own, &v, v - 1, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_ACQUIRE));
}

bool wal_status_fenced(const struct pmwal *w)
{
	if (!w->st || PMWAL_BUG(NO_FENCE))
		return false;
	return OWN_EPOCH(__atomic_load_n(&w->st->own, __ATOMIC_ACQUIRE)) != w->own_epoch;
}

int wal_status_publish(struct pmwal *w, uint64_t durable_seq, uint64_t durable_lsn,
		       uint32_t flags_clear, const struct wal_stats *stats)
{
	struct wal_status_page *p = w->st;

	if (!p)
		return 0;
	uint32_t g = gen_lock(p);

	if (wal_status_fenced(w)) {
		gen_unlock(p, g);
		return PMWAL_EFENCED;
	}
	ST(p->epoch, w->sb.epoch);
	ST(p->durable_seq, durable_seq);
	ST(p->durable_lsn, durable_lsn);
	if (LD(p->head_seq) != w->head_seq || LD(p->head_lsn) != w->head_lsn) {
		ST(p->head_seq, w->head_seq);
		ST(p->head_lsn, w->head_lsn);
	}
	if (stats) {
		/* The five per-group counters; errors, samples and the
		 * histogram only when they changed. */
		const uint64_t *from = (const uint64_t *)stats;
		uint64_t *to = (uint64_t *)&p->stats;
		size_t words = LD(p->stats.latency_samples) == stats->latency_samples &&
					   LD(p->stats.errors) == stats->errors
				   ? offsetof(struct wal_stats, errors) / sizeof(uint64_t)
				   : sizeof(*stats) / sizeof(uint64_t);

		for (size_t i = 0; i < words; i++)
			ST(to[i], from[i]);
	}
	if (flags_clear && LD(p->pid) == (uint32_t)getpid()) {
		ST(p->flags, LD(p->flags) & ~flags_clear);
		ST(p->pid, 0);
		ST(p->pid_start, 0);
	}
	gen_unlock(p, g);
	wake_followers(p);
	/* Taken over while publishing (stopped inside, the update lock taken
	 * from us): acknowledge nothing; what was published is at most what
	 * was durable before the claim, which the new writer's recovery kept. */
	return wal_status_fenced(w) ? PMWAL_EFENCED : 0;
}

void wal_status_closed(struct pmwal *w)
{
	(void)wal_status_publish(w, w->next_seq, w->durable_lsn, WAL_STATUS_OPEN, NULL);
}

static struct wal_status_page *page(const struct pmwal *w)
{
	return __atomic_load_n(&w->st, __ATOMIC_ACQUIRE);
}

int wal_status_read(const struct pmwal *w, struct wal_status_snap *s)
{
	struct wal_status_page *p = page(w), copy[2];

	if (!p)
		return -ENOENT;
	if (copy_page(p, &copy[0])) {
		/* Two reads alike, gen even: what one publication left. */
		for (unsigned tries = 0;; tries++) {
			(void)copy_page(p, &copy[1]);
			struct wal_status_page *a = &copy[0], *b = &copy[1];

			if (!(b->gen & 1) && a->gen == b->gen && a->pid == b->pid &&
			    a->flags == b->flags && a->epoch == b->epoch &&
			    a->durable_seq == b->durable_seq && a->durable_lsn == b->durable_lsn &&
			    a->head_seq == b->head_seq && a->head_lsn == b->head_lsn)
				break;
			if (tries > 1000)
				return -EAGAIN;
			copy[0] = copy[1];
			sched_yield();
		}
		p = &copy[0];
	}
	for (unsigned tries = 0;; tries++) {
		uint32_t g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);

		if (!(g & 1)) {
			/* Acquire loads: the second look at gen comes after them
			 * (a fence would do, but ThreadSanitizer cannot see one). */
			s->epoch = LDA(p->epoch);
			s->pid = LDA(p->pid);
			s->live = s->pid &&
				  s->pid != __atomic_load_n(&w->st_dead_pid, __ATOMIC_RELAXED);
			s->open = LDA(p->flags) & WAL_STATUS_OPEN;
			s->durable_seq = LDA(p->durable_seq);
			s->durable_lsn = LDA(p->durable_lsn);
			s->head_seq = LDA(p->head_seq);
			s->head_lsn = LDA(p->head_lsn);
			if (__atomic_load_n(&p->gen, __ATOMIC_RELAXED) == g)
				return 0;
		}
		if (tries > 1000)
			return -EAGAIN; /* an updater died mid-update: next round */
		sched_yield();
	}
}

int wal_status_read_stats(const struct pmwal *w, struct wal_stats *out)
{
	struct wal_status_page *p = page(w), copy[2];
	enum { WORDS = sizeof(*out) / sizeof(uint64_t) };

	if (!p)
		return -ENOENT;
	if (copy_page(p, &copy[0])) {
		/* Another user's page, read with pread: two reads alike, gen
		 * even, as wal_status_read() takes them. */
		for (unsigned tries = 0;; tries++) {
			(void)copy_page(p, &copy[1]);
			if (!(copy[1].gen & 1) && copy[0].gen == copy[1].gen &&
			    !memcmp(&copy[0].stats, &copy[1].stats, sizeof(copy[0].stats)))
				break;
			if (tries > 1000)
				return -EAGAIN;
			copy[0] = copy[1];
			sched_yield();
		}
		*out = copy[0].stats;
		return 0;
	}
	for (unsigned tries = 0;; tries++) {
		uint32_t g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);

		if (!(g & 1)) {
			const uint64_t *from = (const uint64_t *)&p->stats;
			uint64_t *to = (uint64_t *)out;

			for (size_t i = 0; i < WORDS; i++)
				to[i] = LDA(from[i]);
			if (__atomic_load_n(&p->gen, __ATOMIC_RELAXED) == g)
				return 0;
		}
		if (tries > 1000)
			return -EAGAIN; /* an updater died mid-update */
		sched_yield();
	}
}

uint32_t wal_status_wake_word(const struct pmwal *w)
{
	struct wal_status_page *p = page(w), copy;

	if (p && copy_page(p, &copy))
		return copy.wake;
	return p ? __atomic_load_n(&p->wake, __ATOMIC_SEQ_CST) : 0;
}

void wal_status_sleep(struct pmwal *w, uint32_t seen, uint32_t ms)
{
	struct wal_status_page *p = page(w);
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};

	if (!p) {
		nanosleep(&ts, NULL);
		return;
	}
	if (!w->st_waitable) {
		/* Not counted among the waiters: the writer may not wake us. */
		struct timespec brief = {0, 2000000};

		nanosleep(ms < 2 ? &ts : &brief, NULL);
		return;
	}
	__atomic_fetch_add(&p->waiters, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&p->wake, __ATOMIC_SEQ_CST) == seen)
		futex(&p->wake, FUTEX_WAIT, seen, &ts);
	__atomic_fetch_sub(&p->waiters, 1, __ATOMIC_SEQ_CST);
}

bool wal_status_replaced(struct pmwal *w)
{
	struct stat st;
	bool replaced;

	if (!page(w))
		return true;
	pthread_mutex_lock(&w->mu);
	replaced = stat(w->st_path, &st) != 0 || st.st_ino != w->st_ino;
	pthread_mutex_unlock(&w->mu);
	return replaced;
}

bool wal_status_writer_gone(struct pmwal *w, uint32_t pid)
{
	/* A writer killed leaves its page saying it is open: what it says is
	 * not what the log's next writer will say (the tail it left is cut off
	 * or kept by recovery). Until that writer publishes, followers go by the
	 * superblock. Another PID namespace's pid is not ours to test: kept. */
	if (!pid || pid == __atomic_load_n(&w->st_dead_pid, __ATOMIC_RELAXED))
		return true;
	struct wal_status_page *p = page(w), copy;

	if (p && copy_page(p, &copy))
		p = &copy;
	if (pid_alive(pid, p && LD(p->pid) == pid ? LD(p->pid_start) : 0))
		return false;
	__atomic_store_n(&w->st_dead_pid, pid, __ATOMIC_RELAXED);
	return true;
}
