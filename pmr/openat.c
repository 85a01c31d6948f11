// SPDX-License-Identifier: MIT
/*
 * openat.c - opening the file a log or region lives in when the name may sit
 * in a directory other users can write (/tmp, /dev/shm, /var/tmp).
 *
 * The kernel has rules for part of this (fs.protected_symlinks,
 * protected_hardlinks and protected_regular), but they are switched off on
 * some machines and in some containers, and a log is opened by root
 * services. So the opener applies its own, for every open that may write,
 * walking the path one name at a time (links included, however many):
 *   - a symbolic link in a directory another user controls (writable by
 *     others, or owned by another user than this one or root) is followed
 *     only in a sticky directory and only when its owner is this user, or
 *     the directory's owner where that is root: anyone else may have planted
 *     it, to make us write where they chose;
 *   - the file itself is never in a directory others can write that is not
 *     sticky (they could swap it at any time);
 *   - an existing file in a directory others can write, or owned by another
 *     user, is written only when it is a regular file with one link and,
 *     in a sticky directory, is ours or the directory owner's (otherwise
 *     another user planted it, or a hard link to a file of ours).
 * After the walk every name on the path is one only this user, root or the
 * directory's owner can change, so the path cannot be swapped under us; the
 * file is then opened without following a link and judged by what the open
 * found (fstat of the descriptor).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmr.h"

#define WAL_LINKS_MAX 40 /* as the kernel's MAXSYMLINKS */

/* A directory whose names someone other than this user and root can change:
 * writable by others (world, or a group not ours), or another user's. */
static bool others_control(const struct stat *d)
{
	return (d->st_mode & S_IWOTH) || ((d->st_mode & S_IWGRP) && d->st_gid != getegid()) ||
	       (d->st_uid != geteuid() && d->st_uid != 0);
}

static bool writable_by_others(const struct stat *d)
{
	return (d->st_mode & S_IWOTH) || ((d->st_mode & S_IWGRP) && d->st_gid != getegid());
}

static int refuse(char *err, size_t errlen, const char *fmt, const char *path, const char *dir,
		  unsigned uid)
{
	snprintf(err, errlen, fmt, path, uid, dir);
	errno = EPERM;
	return -1;
}

/*
 * @path resolved into @out (absolute, no links, no "." or ".."), each link
 * judged where it lies; @dir gets the directory of the last name, @dst its
 * stat. 0, or -1 with errno (EPERM with @err said; ENOENT, ENOTDIR, ELOOP,
 * ENAMETOOLONG from the walk, for the caller's usual message).
 */
static int resolve(const char *path, char *out, size_t len, char *dir, struct stat *dst,
		   char *err, size_t errlen)
{
	char rest[8192], link[4096];
	int links = 0;

	if (path[0] != '/') {
		if (!getcwd(out, len))
			return -1;
		if (!strcmp(out, "/"))
			out[0] = 0;
	} else {
		out[0] = 0;
	}
	if ((size_t)snprintf(rest, sizeof(rest), "%s", path) >= sizeof(rest))
		return errno = ENAMETOOLONG, -1;
	for (char *r = rest;;) {
		while (*r == '/')
			r++;
		if (!*r)
			break;
		char *slash = strchr(r, '/'), name[256];
		size_t n = slash ? (size_t)(slash - r) : strlen(r);

		if (n >= sizeof(name))
			return errno = ENAMETOOLONG, -1;
		memcpy(name, r, n);
		name[n] = 0;
		r += n;
		if (!strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {
			char *up = strrchr(out, '/');

			if (up)
				*up = 0;
			continue;
		}
		size_t have = strlen(out);
		struct stat st;

		snprintf(dir, len, "%s", have ? out : "/");
		if (stat(dir, dst))
			return -1;
		if (have + 1 + n >= len)
			return errno = ENAMETOOLONG, -1;
		snprintf(out + have, len - have, "/%s", name);
		if (lstat(out, &st)) {
			if (errno == ENOENT && !r[strspn(r, "/")])
				return 0; /* the last name, to be made */
			return -1;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		out[have] = 0;
		/* The directory owner's link counts as ours only where the
		 * directory is ours or root's: in another user's directory,
		 * sticky or not, their link is theirs to point anywhere. */
		bool owner_ours = dst->st_uid == geteuid() || dst->st_uid == 0;

		if (others_control(dst) &&
		    !((dst->st_mode & S_ISVTX) &&
		      (st.st_uid == geteuid() || (st.st_uid == dst->st_uid && owner_ours))))
			return refuse(err, errlen,
				      "%s: a symbolic link on its path, of uid %u in %s, a "
				      "directory other users control: not followed for writing "
				      "(another user may have planted it); name the file it "
				      "leads to, or keep the log in a directory only you can "
				      "write",
				      path, dir, (unsigned)st.st_uid);
		if (++links > WAL_LINKS_MAX)
			return errno = ELOOP, -1;
		char at[4400];

		snprintf(at, sizeof(at), "%s/%s", have ? dir : "", name);
		ssize_t k = readlink(at, link, sizeof(link) - 1);

		if (k < 0)
			return -1;
		link[k] = 0;
		if (link[0] == '/')
			out[0] = 0;
		/* The link's text, then what was left of the path. */
		char tail[8192];

		if ((size_t)snprintf(tail, sizeof(tail), "%s%s", link, r) >= sizeof(tail))
			return errno = ENAMETOOLONG, -1;
		snprintf(rest, sizeof(rest), "%s", tail);
		r = rest;
	}
	if (!out[0])
		snprintf(out, len, "/");
	return 0;
}

int pmr_open_shared_safe(const char *path, int flags, mode_t mode, char *err, size_t errlen)
{
	char real[4096], dir[4096];
	struct stat d, st;
	bool writes = (flags & O_ACCMODE) != O_RDONLY;

	if (!writes)
		return open(path, flags, mode);
	if (resolve(path, real, sizeof(real), dir, &d, err, errlen))
		return -1;
	if (writable_by_others(&d) && !(d.st_mode & S_ISVTX))
		return refuse(err, errlen,
			      "%s: in a directory other users can write that is not sticky "
			      "(of uid %u: %s): they could replace the file at any time; keep "
			      "the log in a directory only you can write (chmod go-w, or "
			      "chmod +t)",
			      path, dir, (unsigned)d.st_uid);
	int fd = open(real, flags | O_NOFOLLOW, mode);

	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || !others_control(&d))
		return fd; /* not there, a device, or only ours to change */
	if (st.st_nlink != 1 ||
	    ((d.st_mode & S_ISVTX) && st.st_uid != geteuid() && st.st_uid != d.st_uid)) {
		close(fd);
		return refuse(err, errlen,
			      "%s: a file of uid %u in %s, a directory other users control, "
			      "not written: another user may have planted it (or a second "
			      "link to it), and could read or change what is written; remove "
			      "it, or keep the log in a directory only you can write",
			      path, dir, (unsigned)st.st_uid);
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
