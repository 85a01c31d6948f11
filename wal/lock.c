// SPDX-License-Identifier: MIT
/*
 * lock.c - at most one writer per log (docs/reliability.md I9).
 *
 * Opening a log for writing takes an exclusive open-file-description lock
 * (F_OFD_SETLK) on byte 0 of the file or device node the log lives in; for a
 * PMR, which has no node of its own, on a lock file named after its PCI
 * address. The kernel drops the lock when its holder dies, however it dies,
 * so a crashed writer never blocks the next one; read-only opens take no
 * lock. OFD locks hide their owner (F_OFD_GETLK reports pid -1), so the
 * holder also locks byte WAL_LOCK_PID_BASE + its pid, byte
 * WAL_LOCK_NS_BASE + its PID namespace's inode and byte WAL_LOCK_START_BASE
 * + its start time, and a refused opener reads them back from those locks'
 * offsets to say who holds the log. The start time tells the holder from a
 * later process given the same pid: pids wrap (32768 on a small machine),
 * and CI once saw a dead writer's pid reused within the seconds its lock
 * outlived it, so the next opener named a stranger as the writer and
 * refused the log. Start times are kept as the first time namespace's clock
 * reads them: /proc shows them shifted by the reader's boot-time offset,
 * which each side takes off. They count clock ticks (10 ms): a pid given out
 * again within the tick its holder started in would pass for the holder.
 *
 * On a file or block device the lock is taken on a duplicate of the
 * descriptor the device writes through, not on a second open of the path:
 * a SIGKILLed writer's descriptors close at once, but the kernel finishes
 * the io_uring writes it had in flight later and lets go of their open file
 * only then, so the lock is free only once nothing of the dead writer can
 * still land. A block device is also opened for writing with O_EXCL, the
 * kernel's claim on the device itself (dev_file.c): one device may have
 * several nodes (a container's own /dev, a mknod copy), each an inode of its
 * own, and the claim meets them all, in every mount namespace, and a
 * partition and its disk too; it lasts as long as the open file, so it
 * fences a takeover as the lock does. (A lock file per device number did
 * not: any user could create or hold it in /run/lock, root followed a
 * symlink put there, and it went with the dead writer at once.) A loop
 * device also locks its backing file, the same storage under another inode,
 * and claims a backing block device.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

#define WAL_LOCK_PID_BASE (1ull << 40)
#define WAL_LOCK_PID_SPAN (1ull << 23) /* above PID_MAX_LIMIT (2^22) */
#define WAL_LOCK_NS_BASE  (1ull << 44)
#define WAL_LOCK_NS_SPAN  (1ull << 32) /* namespace inode numbers fit 32 bits */
#define WAL_LOCK_START_BASE (1ull << 48)
#define WAL_LOCK_START_SPAN (1ull << 40) /* clock ticks since boot: centuries */
#define WAL_LOCK_WAIT_MS  3000	       /* for a holder that has exited */
#define WAL_LOCK_READER_MS 1000	       /* for a read lock on byte 0 to go */

static int ofd_lock(int fd, short type, uint64_t start, uint64_t len, int cmd,
		    struct flock *fl)
{
	*fl = (struct flock){.l_type = type,
			     .l_whence = SEEK_SET,
			     .l_start = (off_t)start,
			     .l_len = (off_t)len};
	return fcntl(fd, cmd, fl);
}

/* A byte write-locked by another description in [@base, @base + @span), as
 * an offset from @base, or -1. Read locks are skipped: a writer marks with
 * write locks, and anyone who can read the file can take read locks there
 * (to name a stranger as the writer, or hide it); a few at most. */
static long long lock_mark(int fd, uint64_t base, uint64_t span)
{
	struct flock fl;
	uint64_t from = base;

	for (int skipped = 0; skipped < 8 && from < base + span; skipped++) {
		if (ofd_lock(fd, F_WRLCK, from, base + span - from, F_OFD_GETLK, &fl))
			return -1;
		if (fl.l_type == F_UNLCK || (uint64_t)fl.l_start < from ||
		    (uint64_t)fl.l_start >= base + span)
			return -1;
		if (fl.l_type == F_WRLCK)
			return (long long)((uint64_t)fl.l_start - base);
		from = (uint64_t)fl.l_start + (fl.l_len > 0 ? (uint64_t)fl.l_len : span);
	}
	return -1;
}

/* Whether what keeps a writer out of @fd's byte 0 is a read lock (and its
 * pid into @pid where the kernel names one: a POSIX lock's, not an OFD's). */
static bool read_locked(int fd, long *pid)
{
	struct flock fl;

	if (ofd_lock(fd, F_WRLCK, 0, 1, F_OFD_GETLK, &fl) || fl.l_type != F_RDLCK)
		return false;
	*pid = fl.l_pid > 0 ? (long)fl.l_pid : 0;
	return true;
}

/* This process's namespace of @kind ("pid", "time"), as the inode of
 * /proc/self/ns/KIND (0: unknown, or a kernel without that kind). */
static uint64_t self_ns(const char *kind)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino % WAL_LOCK_NS_SPAN : 0;
}

static uint64_t pid_ns(void)
{
	return self_ns("pid");
}

/* The state letter and start time (clock ticks since boot) of process @pid,
 * 0 for this one, from /proc: 0 or -errno. This process reads its own
 * through /proc/self, which is right even where /proc is another PID
 * namespace's (there /proc/PID would be some other process). */
int wal_proc_stat(long pid, char *state, uint64_t *start)
{
	char path[64], buf[1024];
	unsigned long long t = 0;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);

	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the name may hold spaces and ')' */

	if (!p || !p[1] || !p[2])
		return -EINVAL;
	if (state)
		*state = p[2];
	if (start) {
		if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
				  "%*d %*d %*d %*d %*d %llu",
			   &t) != 1)
			t = 0;
		*start = t;
	}
	return 0;
}

/*
 * Whether the process whose /proc/PID/stat line is @stat and /proc/PID/status
 * text is @status is on its way out: a zombie or dead (state Z, X), already
 * in exit (PF_EXITING) or on the fatal-signal path (PF_SIGNALED: a thread
 * took the signal that kills the process), or with SIGKILL pending, to the
 * process or to its first thread (SIGKILL sent to a process stays pending
 * for the process until its last thread is gone). A writer SIGKILLed with
 * io_uring writes in flight lives on, so, for as long as the kernel
 * finishes them: it is no live holder.
 */
#define WAL_PF_EXITING	0x00000004u
#define WAL_PF_SIGNALED 0x00000400u

bool wal_proc_exiting_text(const char *stat, const char *status)
{
	const char *p = stat ? strrchr(stat, ')') : NULL;
	unsigned long long flags = 0;
	char state = 0;

	if (p && sscanf(p + 1, " %c %*d %*d %*d %*d %*d %llu", &state, &flags) >= 1 &&
	    (state == 'Z' || state == 'X' || (flags & (WAL_PF_EXITING | WAL_PF_SIGNALED))))
		return true;
	for (const char *line = status; line && *line;) {
		unsigned long long mask;

		if ((!strncmp(line, "SigPnd:", 7) || !strncmp(line, "ShdPnd:", 7)) &&
		    sscanf(line + 7, "%llx", &mask) == 1 && (mask & (1ull << (SIGKILL - 1))))
			return true;
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	return false;
}

static bool read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return true;
}

bool wal_proc_exiting(long pid)
{
	char path[64], stat[1024], status[4096];

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (!read_text(path, stat, sizeof(stat)))
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	if (!read_text(path, status, sizeof(status)))
		status[0] = 0;
	return wal_proc_exiting_text(stat, status);
}

/* This process's boot-time offset (its time namespace's), in clock ticks. */
static long long boottime_offset(void)
{
	FILE *f = fopen("/proc/self/timens_offsets", "re");
	char name[32];
	long long sec, nsec, off = 0, hz = sysconf(_SC_CLK_TCK);

	if (!f)
		return 0; /* no time namespaces: no offset */
	while (fscanf(f, "%31s %lld %lld", name, &sec, &nsec) == 3)
		if (!strcmp(name, "boottime") && hz > 0)
			off = sec * hz + nsec / (1000000000LL / hz);
	fclose(f);
	return off;
}

/* A start time /proc showed this process, as the first time namespace's
 * clock reads it (0: unknown). */
static uint64_t start_as_root(uint64_t t)
{
	long long r = t ? (long long)t - boottime_offset() : 0;

	return r > 0 ? (uint64_t)r : 0;
}

/* The start time of process @pid (0: this one) in clock ticks since boot as
 * the first time namespace counts them, 0 if unknown. */
static uint64_t proc_start(long pid)
{
	uint64_t t = 0;

	return wal_proc_stat(pid, NULL, &t) ? 0 : start_as_root(t);
}

/* Who holds a lock, from its marks (-1: no mark). */
struct holder {
	long long pid, ns, start;
};

enum holder_state {
	HOLDER_UNKNOWN, /* no pid mark, or another PID namespace's pid */
	HOLDER_SELF,	/* this process (another handle, or a child it forked) */
	HOLDER_LIVE,	/* that pid, alive: the writer */
	HOLDER_EXITED,	/* gone, exiting (killed), or its pid now another process's */
};

static void read_holder(int fd, struct holder *h)
{
	h->pid = lock_mark(fd, WAL_LOCK_PID_BASE, WAL_LOCK_PID_SPAN);
	h->ns = lock_mark(fd, WAL_LOCK_NS_BASE, WAL_LOCK_NS_SPAN);
	h->start = lock_mark(fd, WAL_LOCK_START_BASE, WAL_LOCK_START_SPAN);
}

static bool holder_here(const struct holder *h)
{
	uint64_t ns = pid_ns();

	return h->pid > 0 && ns && h->ns >= 0 && (uint64_t)h->ns == ns;
}

/*
 * What the holder @h is: its start mark against what /proc says of its pid
 * now, both as the first time namespace's clock reads them. kill()
 * answering EPERM (another user's process) is no answer: /proc still is.
 */
static enum holder_state holder_state(const struct holder *h)
{
	char state;
	uint64_t t = 0;
	bool self = h->pid == (long long)getpid();

	if (!holder_here(h))
		return HOLDER_UNKNOWN;
	if (!self && kill((pid_t)h->pid, 0) != 0 && errno == ESRCH)
		return HOLDER_EXITED;
	if (wal_proc_stat(self ? 0 : (long)h->pid, &state, &t) != 0) {
		/* Reaped between the two looks (its /proc entry gone, or read
		 * empty): exited. Still there to kill() but not in /proc: a
		 * /proc that hides other users' processes (hidepid). */
		if (!self && kill((pid_t)h->pid, 0) != 0 && errno == ESRCH)
			return HOLDER_EXITED;
		return self ? HOLDER_SELF : HOLDER_LIVE;
	}
	if (state == 'Z' || state == 'X' || (!self && wal_proc_exiting((long)h->pid)))
		return HOLDER_EXITED;
	t = start_as_root(t);
	if (h->start > 0 && t && t != (uint64_t)h->start)
		return HOLDER_EXITED;
	return self ? HOLDER_SELF : HOLDER_LIVE;
}

/* A lock file named @name where one can live: 0, or -ENOENT. */
static int lock_file_path(const char *name, char *path, size_t len)
{
	static const char *const dirs[] = {"/run/lock", "/run", "/tmp"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct stat st;

		if (stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(path, len, "%s/%s", dirs[i], name);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The file to lock for @t into @node: 0 for the target's own file or node, 1
 * for a lock file (a PMR has no file of its own: one per controller, named
 * after its address written one way, DDDD:BB:DD.F, however the target spells
 * it: pmr:00:04.0, pmr:0000:00:04.0,enable and pmr:0:0:4.0 are one PMR).
 */
static int lock_node(const struct pmwal_target *t, char *node, size_t len)
{
	unsigned dom = 0, bus, dev, fn;
	char addr[64], name[96], tail;

	if (t->kind != PMWAL_TARGET_PMR) {
		snprintf(node, len, "%s", t->path);
		return 0;
	}
	snprintf(addr, sizeof(addr), "%s", t->path);
	addr[strcspn(addr, ",")] = 0;
	if (sscanf(addr, "%4x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) == 4 ||
	    (dom = 0, sscanf(addr, "%2x:%2x.%1x%c", &bus, &dev, &fn, &tail) == 3))
		snprintf(addr, sizeof(addr), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	snprintf(name, sizeof(name), "pmwal-pmr-%s.lock", addr);
	return lock_file_path(name, node, len) ? -ENOENT : 1;
}

/*
 * The file behind a loop device @fd, into @buf; false if it is none, or if
 * it is a regular file deleted since (nothing can open it there to write it,
 * or attach another loop device to it). A deleted device node is returned
 * as it reads (" (deleted)" at the end): opening it fails, and is refused.
 */
static bool loop_backing(int fd, char *buf, size_t len)
{
	struct stat st;
	struct loop_info64 li;
	char path[96];

	if (fstat(fd, &st) || !S_ISBLK(st.st_mode))
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/loop/backing_file",
		 major(st.st_rdev), minor(st.st_rdev));
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	bool ok = fgets(buf, (int)len, f) != NULL;

	fclose(f);
	if (!ok)
		return false;
	buf[strcspn(buf, "\n")] = 0;
	size_t n = strlen(buf);
	static const char deleted[] = " (deleted)";

	if (n >= sizeof(deleted) - 1 && !strcmp(buf + n - (sizeof(deleted) - 1), deleted) &&
	    ioctl(fd, LOOP_GET_STATUS64, &li) == 0 && li.lo_rdevice == 0)
		return false;
	return buf[0] == '/';
}

/* Is @bk (opened from the path a loop device @fd gave) the file the loop
 * device reads? A file put at that path since is not: it is left alone. */
static bool is_loop_backing(int fd, int bk)
{
	struct loop_info64 li;
	struct stat st;

	if (ioctl(fd, LOOP_GET_STATUS64, &li) || fstat(bk, &st))
		return true; /* cannot tell: lock it, as before */
	return st.st_ino == li.lo_inode;
}

/*
 * Take the lock on @fd (which this call owns: closed on failure), waiting
 * for a holder of this PID namespace that has exited. 0 or -EBUSY/-errno
 * with @err naming who holds it; @what names the file for messages.
 */
static int lock_fd_for(int fd, const char *target, const char *what, char *err,
		       size_t errlen)
{
	struct flock fl;
	uint64_t ns = pid_ns();
	struct timespec t0, now;

	/* The bounds below are wall-clock milliseconds, not rounds of the loop:
	 * on a loaded machine a round took far longer than its 5 ms sleep, the
	 * 3 s wait for a forked holder lasted past its 30 s, and the open that
	 * should have been refused succeeded (test_lock in CI). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	now = t0;
	long nomark_from = -1; /* when the holder's marks went missing */
	for (long waited = 0;; waited = (now.tv_sec - t0.tv_sec) * 1000L +
					(now.tv_nsec - t0.tv_nsec) / 1000000L) {
		if (ofd_lock(fd, F_WRLCK, 0, 1, F_OFD_SETLK, &fl) == 0)
			break;
		int rc = errno == EAGAIN || errno == EACCES ? -EBUSY : -errno;

		if (rc != -EBUSY) {
			snprintf(err, errlen, "%s: locking %s for writing: %s", target, what,
				 strerror(-rc));
			close(fd);
			return rc;
		}
		/*
		 * A read lock on byte 0 is no pmwal writer's (writers lock it for
		 * writing, readers not at all): any process that can read the log
		 * can take one, and it keeps every writer out for as long as it
		 * likes. Waited for briefly (a tool reading the log), then refused
		 * with what it is, never waited for without end (a standby would).
		 */
		long rpid = 0;

		if (read_locked(fd, &rpid)) {
			if (waited < WAL_LOCK_READER_MS) {
				usleep(5000);
				clock_gettime(CLOCK_MONOTONIC, &now);
				continue;
			}
			char by[32] = "";

			if (rpid)
				snprintf(by, sizeof(by), " (pid %ld)", rpid);
			snprintf(err, errlen,
				 "%s: a process that can read the log%s holds a read lock on "
				 "its first byte (%s), which keeps every writer out; it is no "
				 "pmwal writer (those lock it for writing, readers not at all). "
				 "Find it (lslocks), stop it, and keep the log unreadable to "
				 "other users (chmod 600 or 640)",
				 target, by, what);
			close(fd);
			return -ENOLCK;
		}
		struct holder h;

		read_holder(fd, &h);
		long long pid = h.pid, hns = h.ns;
		enum holder_state hs = holder_state(&h);
		bool exited = hs == HOLDER_EXITED;

		/*
		 * A holder (of our namespace, where its pid means something) that
		 * has exited still holds the lock while the kernel finishes the
		 * writes it had in flight and lets go of its file: milliseconds.
		 * Waiting for that is the fence a takeover needs.
		 */
		if (exited && waited < WAL_LOCK_WAIT_MS) {
			usleep(5000);
			clock_gettime(CLOCK_MONOTONIC, &now);
			continue;
		}
		/* No mark at all: the holder may have let go between our two
		 * looks (its file released just now: a takeover right after the
		 * writer died was refused so, naming no one). Look again, briefly;
		 * a holder that leaves no mark is still refused within 20 ms of
		 * its marks going (not of the first look: an exiting holder may
		 * have been waited for longer than that already). */
		/* Marks are read one by one: a holder letting go between two of
		 * those reads leaves its pid without its namespace (or the
		 * reverse), which names no one either. */
		bool marked = pid >= 0 && hns >= 0;

		if (marked)
			nomark_from = -1;
		else if (nomark_from < 0)
			nomark_from = waited;
		if (!marked && waited - nomark_from < 20) {
			usleep(5000);
			clock_gettime(CLOCK_MONOTONIC, &now);
			continue;
		}
		if (pid > 0 && !holder_here(&h) && hns >= 0)
			snprintf(err, errlen,
				 "%s: log is open for writing by pid %lld of another PID "
				 "namespace (a container?); one writer at a time",
				 target, pid);
		else if (exited)
			snprintf(err, errlen,
				 "%s: log is still locked for writing %ld ms after its writer, "
				 "pid %lld, exited: a process it forked while the log was open "
				 "still holds the open file (stop it), or writes of the dead "
				 "writer are still in flight to a stalled device",
				 target, waited, pid);
		else if (hs == HOLDER_SELF)
			snprintf(err, errlen,
				 "%s: log is open for writing by pid %lld (this process: "
				 "another pmwal handle, or a child forked while one was open, "
				 "holds it); one writer at a time, close that handle first",
				 target, pid);
		else if (pid > 0)
			snprintf(err, errlen,
				 "%s: log is open for writing by pid %lld; one writer at a "
				 "time (open it read-only to read it, or stop that process)",
				 target, pid);
		else
			snprintf(err, errlen,
				 "%s: log is open for writing by another process or handle%s%s; "
				 "one writer at a time",
				 target, strcmp(what, target) ? " through " : "",
				 strcmp(what, target) ? what : "");
		close(fd);
		return -EBUSY;
	}
	/* Best effort: only used to name us to a refused opener. */
	(void)ofd_lock(fd, F_WRLCK, WAL_LOCK_PID_BASE + (uint64_t)getpid(), 1, F_OFD_SETLK,
		       &fl);
	if (ns)
		(void)ofd_lock(fd, F_WRLCK, WAL_LOCK_NS_BASE + ns, 1, F_OFD_SETLK, &fl);
	uint64_t start = proc_start(0);

	if (start && start < WAL_LOCK_START_SPAN)
		(void)ofd_lock(fd, F_WRLCK, WAL_LOCK_START_BASE + start, 1, F_OFD_SETLK, &fl);
	return 0;
}

int wal_lock_writer(const char *target, int dev_fd, int fd_out[WAL_LOCK_FDS], char *err,
		    size_t errlen)
{
	struct pmwal_target t;
	char node[300], backing[4096];
	int bk[WAL_LOCK_FDS]; /* the backing files of a loop device, top down */
	int fd, rc, n = 0;

	for (int i = 0; i < WAL_LOCK_FDS; i++)
		fd_out[i] = -1;
	if (pmwal_target_parse(target, &t) || t.kind == PMWAL_TARGET_SIM)
		return 0; /* simulated media live in this process only */
	rc = lock_node(&t, node, sizeof(node));
	if (rc < 0) {
		snprintf(err, errlen,
			 "%s: no directory for the writer lock file (/run/lock, /run or "
			 "/tmp)",
			 target);
		return rc;
	}
	/*
	 * On the device's own open file where it has one (a duplicate shares
	 * it). O_NONBLOCK: opening a FIFO must not hang (the device refuses it).
	 */
	bool lock_file = rc > 0;

	if (dev_fd >= 0 && !rc)
		fd = fcntl(dev_fd, F_DUPFD_CLOEXEC, 0);
	else
		fd = open(node, O_RDWR | O_NONBLOCK | O_CLOEXEC | (rc ? O_CREAT | O_NOFOLLOW : 0),
			  0600);
	if (fd < 0) {
		struct stat lst;

		rc = -errno;
		/* A lock file's directory is everyone's: say whose it is. */
		if (rc != -ENOENT && lock_file && lstat(node, &lst) == 0 &&
		    (S_ISLNK(lst.st_mode) || (lst.st_uid != geteuid() && lst.st_uid != 0)))
			snprintf(err, errlen,
				 "%s: the writer lock file %s is %s of uid %u, not this user's "
				 "or root's: another user may have made it to keep writers out "
				 "or to be followed; remove it",
				 target, node, S_ISLNK(lst.st_mode) ? "a symbolic link" : "a file",
				 (unsigned)lst.st_uid);
		else
			snprintf(err, errlen, "%s: opening %s to lock it for writing: %s",
				 target, node, strerror(-rc));
		return rc;
	}
	/* A lock file lives in a directory everyone can write (/run/lock): one
	 * another user made first could be held by that user for ever. */
	struct stat lst = {0};

	if (lock_file && (fstat(fd, &lst) || !S_ISREG(lst.st_mode) ||
		       (lst.st_uid != geteuid() && lst.st_uid != 0))) {
		snprintf(err, errlen,
			 "%s: the writer lock file %s is not this user's or root's (owner uid "
			 "%u): another user may have made it to keep writers out; remove it",
			 target, node, (unsigned)lst.st_uid);
		close(fd);
		return -EPERM;
	}
	/* Readable by this user alone: whoever can read it can read-lock its
	 * byte 0 and so keep every writer out (one an older pmwal made 0644). */
	if (lock_file && lst.st_uid == geteuid() && (lst.st_mode & 077))
		(void)fchmod(fd, 0600);
	/*
	 * A loop device's storage is its backing file too, and that may be a
	 * loop device in turn: every level down to the file is locked, so that
	 * a writer on any of them meets a writer on any other (every chain ends
	 * at the file). A backing block device is claimed (O_EXCL) as the
	 * device itself is: a writer through another node of it is refused.
	 */
	rc = 0;
	for (int cur = fd; loop_backing(cur, backing, sizeof(backing)); cur = bk[n - 1]) {
		if (n == WAL_LOCK_FDS - 1) {
			snprintf(err, errlen,
				 "%s: loop devices stacked more than %d deep; open the log "
				 "through its backing file",
				 target, WAL_LOCK_FDS - 1);
			rc = -ELOOP;
			break;
		}
		struct stat bst;
		bool blk = stat(backing, &bst) == 0 && S_ISBLK(bst.st_mode);

		bk[n] = open(backing, O_RDWR | O_NONBLOCK | O_CLOEXEC | (blk ? O_EXCL : 0));
		if (bk[n] < 0 && blk && errno == EBUSY) {
			rc = -EBUSY;
			snprintf(err, errlen,
				 "%s: the loop device's backing device %s is in use: a writer "
				 "through another node of it, or the kernel (mounted, swap, "
				 "md or dm); one writer at a time",
				 target, backing);
			break;
		}
		if (bk[n] < 0) {
			rc = -errno;
			snprintf(err, errlen,
				 "%s: opening the loop device's backing file %s to lock it for "
				 "writing: %s",
				 target, backing, strerror(errno));
			break;
		}
		if (!is_loop_backing(cur, bk[n])) { /* replaced since: not ours */
			close(bk[n]);
			break;
		}
		n++;
	}
	/* Deepest first: the file every chain ends at decides. lock_fd_for
	 * closes the descriptor it fails on. */
	for (int i = n - 1; i >= 0 && !rc; i--) {
		rc = lock_fd_for(bk[i], target, backing, err, errlen);
		if (rc)
			bk[i] = -1;
	}
	if (!rc) {
		rc = lock_fd_for(fd, target, node, err, errlen);
		if (rc)
			fd = -1;
	}
	if (rc) {
		for (int i = 0; i < n; i++)
			if (bk[i] >= 0)
				close(bk[i]);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	fd_out[0] = fd;
	for (int i = 0; i < n; i++)
		fd_out[1 + i] = bk[i];
	return 0;
}

/*
 * The holder of the lock on @fd: its pid, -1 for one that cannot be named
 * here (another PID namespace, no mark, or a writer that has exited while
 * something it left holds the log), 0 none (or -errno).
 */
static long probe_fd(int fd)
{
	struct flock fl;
	struct holder h;

	if (ofd_lock(fd, F_WRLCK, 0, 1, F_OFD_GETLK, &fl))
		return -errno;
	if (fl.l_type == F_UNLCK || fl.l_type == F_RDLCK)
		return 0; /* a read lock is never a writer's (lock_fd_for) */
	read_holder(fd, &h);
	enum holder_state hs = holder_state(&h);

	return hs == HOLDER_LIVE || hs == HOLDER_SELF ? (long)h.pid : -1;
}

int wal_busy_device(const char *target, long waited_ms, char *err, size_t errlen)
{
	long pid = 0;

	if (pmwal_writer_pid(target, &pid) == 0 && pid > 0) {
		if (pid == (long)getpid())
			snprintf(err, errlen,
				 "%s: log is open for writing by pid %ld (this process: "
				 "another pmwal handle, or a child forked while one was open, "
				 "holds it); one writer at a time, close that handle first",
				 target, pid);
		else
			snprintf(err, errlen,
				 "%s: log is open for writing by pid %ld; one writer at a "
				 "time (open it read-only to read it, or stop that process)",
				 target, pid);
		return 1;
	}
	if (waited_ms < WAL_LOCK_WAIT_MS)
		return 0;
	snprintf(err, errlen,
		 "%s: the block device is in use (still after %ld ms): a writer through "
		 "another node of it (a mknod copy, another namespace's /dev), of a "
		 "partition of it or of the disk it is a partition of; a writer that "
		 "has exited, while a process it forked or its writes to a stalled "
		 "device hold it; or the kernel (a mounted filesystem, swap, md or dm). "
		 "One writer at a time",
		 target, waited_ms);
	return 1;
}

int pmwal_writer_pid(const char *target, long *pid)
{
	struct pmwal_target t;
	char node[300], backing[4096];
	int fd, rc;

	if (!target || !pid)
		return -EINVAL;
	*pid = 0;
	if (pmwal_target_parse(target, &t))
		return -EINVAL;
	if (t.kind == PMWAL_TARGET_SIM)
		return 0;
	rc = lock_node(&t, node, sizeof(node));
	if (rc < 0)
		return rc;
	fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) /* a PMR's lock file not made yet: no writer since boot */
		return rc > 0 && errno == ENOENT ? 0 : -errno;
	/* The node, then each loop device's backing file below it: the first
	 * holder found is the writer (every chain ends at the same file). */
	for (int depth = 0; depth < WAL_LOCK_FDS; depth++) {
		long p = probe_fd(fd);
		bool more = p == 0 && loop_backing(fd, backing, sizeof(backing));

		close(fd);
		if (p != 0) {
			if (p < -1)
				return (int)p;
			*pid = p;
			return 0;
		}
		if (!more)
			return 0;
		fd = open(backing, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	}
	return 0;
}
