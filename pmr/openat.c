// SPDX-License-Identifier: MIT
/*
 * openat.c - the path rule (openat.h): how pmwal reaches a file or directory
 * it will write when the name may lie in a place other users can change
 * (/tmp, /dev/shm, /var/tmp, another user's directory).
 *
 * The kernel has rules for part of this (fs.protected_symlinks,
 * protected_hardlinks and protected_regular), but they are switched off on
 * some machines and in some containers, and pmwal runs as root services.
 * So every open that may write applies its own, walking the path one name at
 * a time (links included, however many):
 *   - a symbolic link in a directory another user controls (writable by
 *     others, or owned by another user than this one or root) is followed
 *     only in a sticky directory and only when its owner is this user, or
 *     the directory's owner where that is this user or root: anyone else may
 *     have planted it, to make us write where they chose;
 *   - the file itself is never in a directory others can write that is not
 *     sticky (they could swap it at any time);
 *   - an existing file in a directory others can write, or owned by another
 *     user, is written only when it is a regular file with one link and,
 *     in a sticky directory, is ours or the directory owner's (otherwise
 *     another user planted it, or a hard link to a file of ours).
 *
 * The walk holds a descriptor of each directory and opens the next name
 * relative to it without following anything (O_PATH|O_NOFOLLOW): what is
 * judged is what the descriptor is, and what is opened last is opened in the
 * directory judged. A name swapped meanwhile (rename, RENAME_EXCHANGE of a
 * directory and a link) is either what the walk saw, or is seen and judged
 * in its turn; it never sends an open through a link nobody judged. A link
 * allowed is read from the descriptor judged (readlinkat) and its text
 * walked the same way. openat2()'s RESOLVE_NO_SYMLINKS would refuse every
 * link, the allowed ones too, and a single name opened with O_NOFOLLOW is
 * already followed by nothing, so plain openat() serves on every kernel.
 * The working directory a relative path starts from is taken as it is: the
 * user chose it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "openat.h"

#define WAL_LINKS_MAX 40 /* as the kernel's MAXSYMLINKS */

/* A directory whose names someone other than this user and root can change:
 * writable by others (world, or a group not ours), or another user's. */
static bool others_control(const struct stat *d)
{
	return (d->st_mode & S_IWOTH) ||
	       ((d->st_mode & S_IWGRP) && d->st_gid != getegid()) ||
	       (d->st_uid != geteuid() && d->st_uid != 0);
}

static bool writable_by_others(const struct stat *d)
{
	return (d->st_mode & S_IWOTH) ||
	       ((d->st_mode & S_IWGRP) && d->st_gid != getegid());
}

/* Whether the link @l found in directory @d may be followed for writing. */
static bool link_allowed(const struct stat *d, const struct stat *l)
{
	/* The directory owner's link counts as ours only where the directory
	 * is ours or root's: in another user's directory, sticky or not,
	 * their link is theirs to point anywhere. */
	bool owner_ours = d->st_uid == geteuid() || d->st_uid == 0;

	return !others_control(d) ||
	       ((d->st_mode & S_ISVTX) &&
		(l->st_uid == geteuid() || (l->st_uid == d->st_uid && owner_ours)));
}

void pmr_user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char scratch[1024];

	if (getpwuid_r(uid, &pw, scratch, sizeof(scratch), &res) == 0 && res)
		snprintf(buf, len, "user %s (uid %u)", pw.pw_name, (unsigned)uid);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

/* @dir/@name, as messages name it. */
static void join(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
}

/* @dirpath with @name walked into it ("..": one up). */
static void descend(char *dirpath, size_t len, const char *name)
{
	if (!strcmp(name, "..")) {
		char *up = strrchr(dirpath, '/');

		if (up && up != dirpath)
			*up = 0;
		else if (up)
			up[1] = 0;
		return;
	}
	char next[4096];

	join(next, sizeof(next), dirpath, name);
	snprintf(dirpath, len, "%s", next);
}

void pmr_walk_end(struct pmr_walk *w)
{
	if (w->dirfd >= 0)
		close(w->dirfd);
	w->dirfd = -1;
}

/* Refuses the link @name (descriptor @lfd, stat @l) in the walk's directory. */
static int refuse_link(const struct pmr_walk *w, const char *path, const char *name,
		       int lfd, const struct stat *l, char *err, size_t errlen)
{
	char at[4400], to[4096] = "?", who[160];
	ssize_t k = readlinkat(lfd, "", to, sizeof(to) - 1);

	if (k >= 0)
		to[k] = 0;
	join(at, sizeof(at), w->dirpath, name);
	pmr_user_name(l->st_uid, who, sizeof(who));
	snprintf(err, errlen,
		 "%s: a symbolic link on its path, %s, made by %s in a directory other "
		 "users control, is not followed for writing (another user may have "
		 "planted it; it leads to %s): use a directory only you can write",
		 path, at, who, to);
	errno = EPERM;
	return -1;
}

/*
 * A magic link of /proc (/proc/PID/root, cwd, fd/N, map_files: its text
 * absolute, or "pipe:[N]") is not a name the kernel follows by its text: it
 * leads into a process's own view (its mount namespace, a deleted
 * directory), and its text ("/", "/tmp/x (deleted)") names something else
 * here. Refused by name: walked by its text, a path through another
 * process's root reached the host's. /proc's plain links (self, mounts:
 * relative text) are followed as any other.
 */
#define PMR_PROC_MAGIC 0x9fa0 /* PROC_SUPER_MAGIC, <linux/magic.h> */

static int refuse_proc_link(const struct pmr_walk *w, const char *path, const char *name,
			    char *err, size_t errlen)
{
	char at[4400];

	join(at, sizeof(at), w->dirpath, name);
	snprintf(err, errlen,
		 "%s: %s is a link of /proc, which leads into a process's own view of "
		 "the files (its root, working directory or open files), not to the "
		 "path its text names here: give the file's path as this process sees "
		 "it",
		 path, at);
	errno = EPERM;
	return -1;
}

int pmr_walk(const char *path, const char *label, unsigned flags, struct pmr_walk *w,
	     char *err, size_t errlen)
{
	char rest[8192], link[4096], tail[8192], name[256];
	int links = 0, e;

	w->dirfd = -1;
	w->name[0] = 0;
	if (!path[0])
		return errno = ENOENT, -1;
	if ((size_t)snprintf(rest, sizeof(rest), "%s", path) >= sizeof(rest))
		return errno = ENAMETOOLONG, -1;
	w->dirfd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0)
		return -1;
	if (path[0] == '/' || !getcwd(w->dirpath, sizeof(w->dirpath)))
		snprintf(w->dirpath, sizeof(w->dirpath), "%s",
			 path[0] == '/' ? "/" : ".");
	/* Each round takes one name off @rest; a link puts its text back in
	 * front, at most WAL_LINKS_MAX times, and @rest is bounded. */
	for (char *r = rest;;) {
		while (*r == '/')
			r++;
		if (!*r) { /* the path names the directory itself */
			snprintf(w->name, sizeof(w->name), ".");
			break;
		}
		size_t n = strcspn(r, "/");

		if (n >= sizeof(name)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(name, r, n);
		name[n] = 0;
		r += n;
		bool last = !r[strspn(r, "/")];
		/* The file's own name: a name, last, not "dir/" nor "..". */
		bool file_name =
		    last && !*r && !(flags & PMR_WALK_DIR) && strcmp(name, "..");

		if (!strcmp(name, "."))
			continue;
		int fd = openat(w->dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;

		if (fd < 0 && errno == ENOENT && file_name) {
			snprintf(w->name, sizeof(w->name), "%s", name); /* to be made */
			break;
		}
		if (fd < 0 || fstat(fd, &st)) {
			if (fd >= 0)
				close(fd);
			goto fail;
		}
		if (file_name && (!S_ISLNK(st.st_mode) || (flags & PMR_WALK_NOFOLLOW))) {
			close(fd);
			snprintf(w->name, sizeof(w->name), "%s", name);
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			close(w->dirfd);
			w->dirfd = fd;
			descend(w->dirpath, sizeof(w->dirpath), name);
			continue;
		}
		if (!S_ISLNK(st.st_mode)) {
			close(fd);
			errno = ENOTDIR;
			goto fail;
		}
		struct stat d;

		if (fstat(w->dirfd, &d)) {
			close(fd);
			goto fail;
		}
		if (!link_allowed(&d, &st)) {
			refuse_link(w, label ? label : path, name, fd, &st, err, errlen);
			close(fd);
			goto fail;
		}

		ssize_t k = ++links > WAL_LINKS_MAX
				? (errno = ELOOP, -1)
				: readlinkat(fd, "", link, sizeof(link) - 1);

		close(fd);
		if (k <= 0) {
			if (k == 0)
				errno = ENOENT;
			goto fail;
		}
		link[k] = 0;
		struct statfs fs;

		if ((link[0] == '/' || strchr(link, ':')) && fstatfs(w->dirfd, &fs) == 0 &&
		    fs.f_type == PMR_PROC_MAGIC) {
			refuse_proc_link(w, label ? label : path, name, err, errlen);
			goto fail;
		}
		if (link[0] == '/') {
			fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				goto fail;
			close(w->dirfd);
			w->dirfd = fd;
			snprintf(w->dirpath, sizeof(w->dirpath), "/");
		}
		/* The link's text, then what was left of the path. */
		if ((size_t)snprintf(tail, sizeof(tail), "%s%s", link, r) >=
		    sizeof(tail)) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(rest, tail, strlen(tail) + 1);
		r = rest;
	}
	if (fstat(w->dirfd, &w->dir))
		goto fail;
	return 0;
fail:
	e = errno;
	pmr_walk_end(w);
	errno = e;
	return -1;
}

static int refuse(char *err, size_t errlen, const char *fmt, const char *path,
		  const char *dir, unsigned uid)
{
	snprintf(err, errlen, fmt, path, uid, dir);
	errno = EPERM;
	return -1;
}

int pmr_walk_open(const struct pmr_walk *w, const char *path, int flags, mode_t mode,
		  char *err, size_t errlen)
{
	const struct stat *d = &w->dir;
	struct stat st;
	bool writes = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));

	if (writes && writable_by_others(d) && !(d->st_mode & S_ISVTX))
		return refuse(
		    err, errlen,
		    "%s: in a directory other users can write that is not sticky "
		    "(of uid %u: %s): they could replace the file at any time; keep "
		    "it in a directory only you can write (chmod go-w, or chmod +t)",
		    path, w->dirpath, (unsigned)d->st_uid);
	int fd = openat(w->dirfd, w->name, flags | O_NOFOLLOW, mode);

	if (fd < 0 && errno == ELOOP) {
		/* The walk saw no link there (or one it followed): one was put
		 * in since. Not followed, and said. */
		snprintf(
		    err, errlen,
		    "%s: a symbolic link appeared at its name in %s while it was "
		    "opened: not followed for writing (another user may have planted "
		    "it); remove it, or use a directory only you can write",
		    path, w->dirpath);
		errno = EPERM;
		return -1;
	}
	if (fd < 0 || !writes || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    !others_control(d))
		return fd; /* not there, a device, or only ours to change */
	if (st.st_nlink != 1 || ((d->st_mode & S_ISVTX) && st.st_uid != geteuid() &&
				 st.st_uid != d->st_uid)) {
		close(fd);
		return refuse(
		    err, errlen,
		    "%s: a file of uid %u in %s, a directory other users control, "
		    "not written: another user may have planted it (or a second "
		    "link to it), and could read or change what is written; remove "
		    "it, or keep it in a directory only you can write",
		    path, w->dirpath, (unsigned)st.st_uid);
	}
	return fd;
}

int pmr_open_shared_safe(const char *path, int flags, mode_t mode, char *err,
			 size_t errlen)
{
	struct pmr_walk w;

	if ((flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC)))
		return open(path, flags, mode);
	if (pmr_walk(path, NULL, 0, &w, err, errlen))
		return -1;
	int fd = pmr_walk_open(&w, path, flags, mode, err, errlen), e = errno;

	pmr_walk_end(&w);
	errno = e;
	return fd;
}

int pmr_open_dir_walked(const char *path, const char *label, struct stat *st, char *err,
			size_t errlen)
{
	struct pmr_walk w;

	if (pmr_walk(path, label, PMR_WALK_DIR, &w, err, errlen))
		return -1;
	int fd = openat(w.dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), e = errno;

	if (fd >= 0 && st && fstat(fd, st)) {
		e = errno;
		close(fd);
		fd = -1;
	}
	pmr_walk_end(&w);
	errno = e;
	return fd;
}

/*
 * Whether a missing @path would be made in the filesystem that holds the
 * device nodes (devtmpfs), told by the filesystem of its directory, not by
 * its name: the directory is on /dev's filesystem (same st_dev), or, where
 * /dev is a plain directory of the root filesystem, it is /dev itself.
 * devtmpfs reports tmpfs's magic to statfs, so the device number is what
 * tells /dev from /dev/shm, a tmpfs mounted below it.
 */
bool pmr_in_dev_fs(const char *path)
{
	char dir[4096];
	struct stat d, dev, root;

	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir] = 0;
	if (stat(dir, &d) || stat("/dev", &dev) || stat("/", &root))
		return false; /* no such directory: open() says so */
	if (dev.st_dev != root.st_dev)
		return d.st_dev == dev.st_dev;
	return d.st_dev == dev.st_dev && d.st_ino == dev.st_ino;
}
