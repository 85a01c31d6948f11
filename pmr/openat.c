// SPDX-License-Identifier: MIT
/*
 * openat.c - opening the file a log or region lives in when the name may sit
 * in a directory other users can write (/tmp, /dev/shm, /var/tmp).
 *
 * The kernel has rules for exactly this (fs.protected_symlinks and
 * fs.protected_regular) but they are switched off on some machines and in
 * some containers, and a log is opened by root services. So the opener
 * applies them itself, for every open that may write:
 *   - a symbolic link in a sticky directory that others can write is
 *     followed only when its owner is this user or the directory's owner
 *     (otherwise another user planted it: we would write where they chose);
 *   - an existing file in such a directory is written only when it is ours
 *     or the directory owner's (otherwise another user planted it, kept a
 *     descriptor or can read what we write, and a log must not be theirs).
 * Everywhere else a link is followed, as users expect of a path they named.
 * The check reads what the open found (fstat of the descriptor, and an
 * O_NOFOLLOW open first), so a name swapped between a look and the open
 * cannot slip past it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmr.h"

/* The directory part of @path into @dir ("." for a bare name). */
static void dir_of(const char *path, char *dir, size_t len)
{
	snprintf(dir, len, "%s", path);
	char *slash = strrchr(dir, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else
		slash[slash == dir] = 0;
}

static bool shared_sticky(const struct stat *d)
{
	return S_ISDIR(d->st_mode) && (d->st_mode & S_ISVTX) &&
	       (d->st_mode & (S_IWOTH | S_IWGRP));
}

int pmr_open_shared_safe(const char *path, int flags, mode_t mode, char *err, size_t errlen)
{
	char dir[4096];
	struct stat d, st;
	bool writes = (flags & O_ACCMODE) != O_RDONLY;

	if (!writes)
		return open(path, flags, mode);
	dir_of(path, dir, sizeof(dir));
	if (stat(dir, &d) || !shared_sticky(&d))
		return open(path, flags, mode); /* not a shared directory: open() says the rest */

	/* A link is judged by its owner; anything else is opened without
	 * following, so a link swapped in after the look fails the open. */
	bool link = lstat(path, &st) == 0 && S_ISLNK(st.st_mode);

	if (link && st.st_uid != geteuid() && st.st_uid != d.st_uid) {
		snprintf(err, errlen,
			 "%s: a symbolic link of uid %u in %s, a directory other users "
			 "can write: not followed for writing (another user may have "
			 "planted it); name the file it leads to, or keep the log in a "
			 "directory only you can write",
			 path, (unsigned)st.st_uid, dir);
		errno = EPERM;
		return -1;
	}
	int fd = open(path, flags | (link ? 0 : O_NOFOLLOW), mode);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid != geteuid() &&
	    st.st_uid != d.st_uid) {
		close(fd);
		snprintf(err, errlen,
			 "%s: a file of uid %u in %s, a directory other users can write: "
			 "not written (another user may have planted it, and could read or "
			 "change what is written); remove it, or keep the log in a directory "
			 "only you can write",
			 path, (unsigned)st.st_uid, dir);
		errno = EPERM;
		return -1;
	}
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
