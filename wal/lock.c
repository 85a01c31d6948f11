// SPDX-License-Identifier: MIT
/*
 * lock.c - at most one writer per log (RELIABILITY.md I9).
 *
 * Opening a log for writing takes an exclusive open-file-description lock
 * (F_OFD_SETLK) on byte 0 of the file or device node the log lives in; for a
 * PMR, which has no node of its own, on a lock file named after its PCI
 * address. The kernel drops the lock when its holder dies, however it dies,
 * so a crashed writer never blocks the next one; read-only opens take no
 * lock. OFD locks hide their owner (F_OFD_GETLK reports pid -1), so the
 * holder also locks byte WAL_LOCK_PID_BASE + its pid, and a refused opener
 * reads the pid back from that lock's offset to say who holds the log.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"

#define WAL_LOCK_PID_BASE (1ull << 40)
#define WAL_LOCK_PID_SPAN (1ull << 23) /* above PID_MAX_LIMIT (2^22) */

static int ofd_lock(int fd, short type, uint64_t start, uint64_t len, int cmd,
		    struct flock *fl)
{
	*fl = (struct flock){.l_type = type,
			     .l_whence = SEEK_SET,
			     .l_start = (off_t)start,
			     .l_len = (off_t)len};
	return fcntl(fd, cmd, fl);
}

/* The pid holding the log's lock, or 0 if it cannot be told. */
static long lock_holder(int fd)
{
	struct flock fl;

	if (ofd_lock(fd, F_WRLCK, WAL_LOCK_PID_BASE, WAL_LOCK_PID_SPAN, F_OFD_GETLK, &fl))
		return 0;
	if (fl.l_type == F_UNLCK || (uint64_t)fl.l_start < WAL_LOCK_PID_BASE)
		return 0;
	return (long)((uint64_t)fl.l_start - WAL_LOCK_PID_BASE);
}

/* Has @pid exited (gone, or a zombie not yet reaped)? */
static bool holder_exited(long pid)
{
	char path[64], buf[256];
	FILE *f;

	if (kill((pid_t)pid, 0) != 0)
		return errno == ESRCH;
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);

	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the state follows the name */

	return p && (p[2] == 'Z' || p[2] == 'X');
}

static int lock_node(const struct wal_target *t, char *node, size_t len)
{
	if (t->kind != WAL_TARGET_PMR) {
		snprintf(node, len, "%s", t->path);
		return 0;
	}
	/* A PMR has no file: a lock file per controller, where one can live. */
	static const char *const dirs[] = {"/run/lock", "/run", "/tmp"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct stat st;

		if (stat(dirs[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			snprintf(node, len, "%s/pmwal-pmr-%s.lock", dirs[i], t->path);
			return 1;
		}
	}
	return -ENOENT;
}

int wal_lock_writer(const char *target, int dev_fd, int *fd_out, char *err, size_t errlen)
{
	struct wal_target t;
	char node[300];
	struct flock fl;
	int fd, rc;

	*fd_out = -1;
	if (wal_target_parse(target, &t) || t.kind == WAL_TARGET_SIM)
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
	 * On the device's own open file where it has one (a duplicate shares it),
	 * so that the lock outlives a killed writer's writes in flight: the
	 * kernel lets go of that file only once they are done. O_NONBLOCK:
	 * opening a FIFO must not hang (the device refuses it).
	 */
	if (dev_fd >= 0 && !rc)
		fd = fcntl(dev_fd, F_DUPFD_CLOEXEC, 0);
	else
		fd = open(node, O_RDWR | O_NONBLOCK | O_CLOEXEC | (rc ? O_CREAT : 0), 0644);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: opening %s to lock it for writing: %s", target,
			 node, strerror(errno));
		return rc;
	}
	long gone = 0; /* a holder that has exited, waited for */

	while (ofd_lock(fd, F_WRLCK, 0, 1, F_OFD_SETLK, &fl) != 0) {
		rc = errno == EAGAIN || errno == EACCES ? -EBUSY : -errno;
		if (rc == -EBUSY) {
			long pid = lock_holder(fd);

			/*
			 * A holder that has exited still holds the lock while the
			 * kernel finishes the writes it had in flight and lets go
			 * of its file (milliseconds). Waiting for that is the
			 * fence a takeover needs; give up after about 10 s.
			 */
			if (pid > 0 && pid != (long)getpid() && holder_exited(pid) &&
			    gone < 2000) {
				gone++;
				usleep(5000);
				continue;
			}
			if (pid > 0 && gone >= 2000)
				snprintf(err, errlen,
					 "%s: log is still locked for writing by pid %ld, "
					 "which has exited: the kernel has not let go of its "
					 "open file after 10 s (writes still in flight to a "
					 "stalled device?); try again later",
					 target, pid);
			else if (pid > 0 && pid == (long)getpid())
				snprintf(err, errlen,
					 "%s: log is open for writing by pid %ld (this "
					 "process: another pmwal handle holds it); one "
					 "writer at a time, close that handle first",
					 target, pid);
			else if (pid > 0)
				snprintf(err, errlen,
					 "%s: log is open for writing by pid %ld; one "
					 "writer at a time (open it read-only to read "
					 "it, or stop that process)",
					 target, pid);
			else
				snprintf(err, errlen,
					 "%s: log is open for writing by another process "
					 "or handle; one writer at a time",
					 target);
		} else {
			snprintf(err, errlen, "%s: locking %s for writing: %s", target,
				 node, strerror(-rc));
		}
		close(fd);
		return rc;
	}
	/* Best effort: only used to name us to a refused opener. */
	(void)ofd_lock(fd, F_WRLCK, WAL_LOCK_PID_BASE + (uint64_t)getpid(), 1,
		       F_OFD_SETLK, &fl);
	*fd_out = fd;
	return 0;
}
