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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "seeded.h"
#include "xxh.h"

#define WAL_STATUS_MAGIC    0x3154534c41574d50ull /* "PMWALST1" */
#define WAL_STATUS_VERSION  4u
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
	uint64_t head_seq;
	uint64_t head_lsn;
	_Alignas(64) uint32_t wake; /* futex word: +1 per publication */
	uint32_t waiters;	    /* followers asleep on wake */
};
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
 * Two byte locks on the page file (open-file-description locks: they go with
 * the descriptor, whichever process or thread holds it): LOCK_INIT, held by
 * a writer while it initialises a new page; LOCK_USERS, held shared by every
 * handle that maps the page, for as long as it does. A closing writer
 * removes the page only if it can take LOCK_USERS exclusively: nobody else
 * uses it. One that opens it takes LOCK_USERS shared and then makes sure the
 * name still leads to it (it was not removed in between), or opens again.
 * So every process using a log's page at one time uses the same one: a
 * writer taken over can never remove the page that fences it.
 */
#define LOCK_INIT  0
#define LOCK_USERS 1

static int ofd_lock(int fd, short type, off_t byte, bool wait)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1};

	return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) ? -errno : 0;
}

/* Maps @fd's page (@rw: writable); a writer (@init) initialises it under
 * LOCK_INIT when it is new or another log's. NULL on failure (errno set). */
static struct wal_status_page *map_page(int fd, uint64_t log_id, bool rw, bool init)
{
	bool writable = init;

	struct stat st;
	struct wal_status_page *p;

	if (fstat(fd, &st))
		return NULL;
	/* /dev/shm is everyone's: a page is a regular file of one link, of
	 * its own size, owned by whoever it must be (wal_status_attach), never
	 * a file of ours another user linked or planted there. */
	if (!S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    (st.st_size != 0 && st.st_size != WAL_STATUS_BYTES)) {
		errno = EINVAL;
		return NULL;
	}
	if (writable) {
		if (ofd_lock(fd, F_WRLCK, LOCK_INIT, true))
			return NULL;
		if (st.st_size < WAL_STATUS_BYTES && ftruncate(fd, WAL_STATUS_BYTES)) {
			int e = errno;

			ofd_lock(fd, F_UNLCK, LOCK_INIT, false);
			errno = e;
			return NULL;
		}
	} else if (st.st_size < WAL_STATUS_BYTES) {
		errno = ENODATA; /* its writer is making it */
		return NULL;
	}
	p = mmap(NULL, WAL_STATUS_BYTES, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED) {
		int e = errno;

		if (writable)
			ofd_lock(fd, F_UNLCK, LOCK_INIT, false);
		errno = e;
		return NULL;
	}
	bool ours = LD(p->magic) == WAL_STATUS_MAGIC && LD(p->version) == WAL_STATUS_VERSION &&
		    LD(p->log_id) == log_id;

	if (writable && !ours) {
		memset(p, 0, WAL_STATUS_BYTES);
		ST(p->log_id, log_id);
		ST(p->version, WAL_STATUS_VERSION);
		__atomic_store_n(&p->magic, WAL_STATUS_MAGIC, __ATOMIC_RELEASE);
		ours = true;
	}
	if (writable)
		ofd_lock(fd, F_UNLCK, LOCK_INIT, false);
	if (!ours) {
		munmap(p, WAL_STATUS_BYTES);
		errno = ENODATA;
		return NULL;
	}
	return p;
}

static int attach(struct pmwal *w, bool writer)
{
	char path[sizeof(w->st_path)];
	struct stat st;
	int fd, rc;
	struct pmwal_target t;

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
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	} else {
		/* Read-write to count ourselves among the waiters; a follower
		 * of another user sleeps in short rounds instead. */
		fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && (errno == EACCES || errno == EROFS))
			fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	}
	if (fd < 0) {
		rc = -errno;
		snprintf(w->st_err, sizeof(w->st_err), "%s: %s", path, strerror(errno));
		return rc;
	}
	/* Trusted only from this user (a writer), or from the log's owner, this
	 * user or root (a follower, who may be another user than its writer). */
	struct stat lst;

	if (fstat(fd, &st) ||
	    (st.st_uid != geteuid() &&
	     (writer || (st.st_uid != 0 && (pmwal_target_parse(w->target, &t) ||
					    t.kind == PMWAL_TARGET_PMR || stat(t.path, &lst) ||
					    lst.st_uid != st.st_uid))))) {
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
	int acc = fcntl(fd, F_GETFL) & O_ACCMODE;
	struct wal_status_page *p = map_page(fd, w->sb.log_id, acc == O_RDWR, writer);

	rc = p ? 0 : -errno;
	if (rc) {
		close(fd);
		snprintf(w->st_err, sizeof(w->st_err), "%s: %s", path,
			 rc == -EINVAL ? "not a status page (links, size or type)"
				       : strerror(-rc));
		return rc;
	}
	if (w->st_fd >= 0 && w->st_retired_fd_n < WAL_STATUS_RETIRED)
		w->st_retired_fd[w->st_retired_fd_n++] = w->st_fd;
	else if (w->st_fd >= 0)
		close(w->st_fd);
	w->st_fd = fd; /* holds LOCK_USERS while the page is used */
	w->st_ino = st.st_ino;
	w->st_waitable = acc == O_RDWR;
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
		if (!broke)
			return 0;
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
		       uint32_t flags_clear)
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
	ST(p->head_seq, w->head_seq);
	ST(p->head_lsn, w->head_lsn);
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
	(void)wal_status_publish(w, w->next_seq, w->durable_lsn, WAL_STATUS_OPEN);
}

static struct wal_status_page *page(const struct pmwal *w)
{
	return __atomic_load_n(&w->st, __ATOMIC_ACQUIRE);
}

int wal_status_read(const struct pmwal *w, struct wal_status_snap *s)
{
	struct wal_status_page *p = page(w);

	if (!p)
		return -ENOENT;
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

uint32_t wal_status_wake_word(const struct pmwal *w)
{
	struct wal_status_page *p = page(w);

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
	struct wal_status_page *p = page(w);

	if (pid_alive(pid, p && LD(p->pid) == pid ? LD(p->pid_start) : 0))
		return false;
	__atomic_store_n(&w->st_dead_pid, pid, __ATOMIC_RELAXED);
	return true;
}
