// SPDX-License-Identifier: MIT
/*
 * outfile.c - the one way pmwal's tools create and replace their output
 * files (outfile.h states the rule). A run as root must not be turned, by a
 * link or a directory another user planted, into a write over a system
 * file: every file is made fresh (O_EXCL, no link followed) in a directory
 * opened without following a link and checked for who can write it, then
 * renamed over its name.
 */
#include "outfile.h"

#include "openat.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* An option's name and the space after it, or nothing for none. */
#define OPT(opt) (opt), (*(opt) ? " " : "")

/* Tries at a free temporary name; another process taking 64 in a row means
 * something is wrong with the directory, not bad luck. */
#define OUT_TMP_TRIES 64

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISLNK(m)  ? "a symbolic link"
	       : S_ISREG(m)  ? "a regular file"
			     : "not a regular file";
}

/* The directory rule of outfile.h on @dfd; @need_write: and this process
 * may create files in it. 0, or -1 with @err. */
static int dir_rule(int dfd, const char *opt, const char *dir, bool need_write, char *err,
		    size_t errlen)
{
	uid_t me = geteuid();
	struct stat st;
	char who[160];

	if (fstat(dfd, &st)) {
		snprintf(err, errlen, "%s%s%s: %s", OPT(opt), dir, strerror(errno));
		return -1;
	}
	bool others =
	    (st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && st.st_gid != getegid());
	if (st.st_uid != me && st.st_uid != 0) {
		pmr_user_name(st.st_uid, who, sizeof(who));
		snprintf(err, errlen,
			 "%s%s%s: the directory belongs to %s, who could swap a link to "
			 "any file%s in for what pmwal writes there; %s",
			 OPT(opt), dir, who, me == 0 ? " of root's" : " of yours",
			 me == 0 ? "name a directory root owns (e.g. mkdir a new one), "
				   "or run the command as that user"
				 : "name a directory of your own");
		return -1;
	}
	if (others && !(st.st_mode & S_ISVTX)) {
		snprintf(err, errlen,
			 "%s%s%s: the directory is writable by other users (mode %04o) "
			 "and not sticky, so another user could swap a link in for what "
			 "pmwal writes there; name a directory only you can write "
			 "(or: chmod go-w %s)",
			 OPT(opt), dir, (unsigned)(st.st_mode & 07777), dir);
		return -1;
	}
	if (need_write && faccessat(dfd, ".", W_OK | X_OK, AT_EACCESS)) {
		snprintf(err, errlen,
			 "%s%s%s: a directory this run cannot write to (%s); name one "
			 "it can",
			 OPT(opt), dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* @path without trailing slashes into @buf; its parent into @parent and its
 * last component into @name. -1 where @path is empty or too long. */
static int split_path(const char *path, char *buf, size_t len, char *parent, size_t plen,
		      const char **name)
{
	size_t n = strlen(path);

	if (!n || n >= len)
		return -1;
	memcpy(buf, path, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	char *slash = strrchr(buf, '/');
	if (!slash) {
		snprintf(parent, plen, ".");
		*name = buf;
	} else if (slash == buf) {
		snprintf(parent, plen, "/");
		*name = buf[1] ? buf + 1 : ".";
	} else {
		snprintf(parent, plen, "%.*s", (int)(slash - buf), buf);
		*name = slash + 1;
	}
	return 0;
}

/* What is at @name in @pfd where a directory was wanted, as a refusal. */
static void not_a_dir(int pfd, const char *name, const char *opt, const char *dir, int e,
		      char *err, size_t errlen)
{
	struct stat st;

	if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		snprintf(err, errlen,
			 "%s%s%s is a symbolic link: pmwal writes only into a directory "
			 "itself, never through a link (one another user could point "
			 "elsewhere); name the directory it points to",
			 OPT(opt), dir);
	else if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		 !S_ISDIR(st.st_mode))
		snprintf(err, errlen,
			 "%s%s%s is %s: name a directory (a missing one is created)",
			 OPT(opt), dir, kind_of(st.st_mode));
	else
		snprintf(err, errlen, "%s%s%s: %s", OPT(opt), dir, strerror(e));
}

/* out_dir_open() with @missing_ok: a missing @dir whose parent passes the rule
 * gives -2 (nothing made). @named: the path the user named (@dir, or a file
 * in it), for messages. The way to @dir is walked by descriptors
 * (pmr/openat.h): another user's link on it is refused, and nothing renamed
 * meanwhile sends the open anywhere that was not judged. */
static int dir_open(const char *opt, const char *dir, const char *named, bool create,
		    bool missing_ok, char *err, size_t errlen)
{
	char buf[4096], parent[4096], label[4400];
	const char *name;
	int pfd, dfd, e;

	if (split_path(dir, buf, sizeof(buf), parent, sizeof(parent), &name)) {
		snprintf(err, errlen, "%s: needs a directory name", opt);
		return -1;
	}
	snprintf(label, sizeof(label), "%s%s%s", OPT(opt), named);
	pfd = pmr_open_dir_walked(parent, label, NULL, err, errlen);
	if (pfd < 0 && errno == EPERM)
		return -1; /* another user's link on the way: said */
	if (pfd < 0) {
		snprintf(
		    err, errlen,
		    "%s%s%s: %s is not a directory this run can write to (%s), so %s "
		    "cannot be created in it",
		    OPT(opt), dir, parent, strerror(errno), dir);
		return -1;
	}
	dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 && errno == ENOENT && (create || missing_ok)) {
		char perr[1024];
		if (dir_rule(pfd, opt, parent, true, perr, sizeof(perr))) {
			snprintf(err, errlen, "%s (%s would be created in it)", perr,
				 dir);
			close(pfd);
			return -1;
		}
		if (!create) {
			close(pfd);
			return -2;
		}
		if (mkdirat(pfd, name, 0755) && errno != EEXIST) {
			snprintf(err, errlen, "%s%s%s: cannot create it: %s", OPT(opt),
				 dir, strerror(errno));
			close(pfd);
			return -1;
		}
		dfd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	e = errno;
	if (dfd < 0) {
		not_a_dir(pfd, name, opt, dir, e, err, errlen);
		close(pfd);
		return -1;
	}
	close(pfd);
	if (dir_rule(dfd, opt, dir, true, err, errlen)) {
		close(dfd);
		return -1;
	}
	return dfd;
}

int out_dir_trusted(const char *opt, const char *dir, char *err, size_t errlen)
{
	char label[4400];

	snprintf(label, sizeof(label), "%s%s%s", OPT(opt), dir);
	int dfd = pmr_open_dir_walked(dir, label, NULL, err, errlen);

	if (dfd < 0 && errno == EPERM)
		return -1;
	if (dfd < 0) {
		snprintf(err, errlen, "%s%s%s: %s", OPT(opt), dir, strerror(errno));
		return -1;
	}
	int ret = dir_rule(dfd, opt, dir, false, err, errlen);
	close(dfd);
	return ret;
}

int out_dir_open(const char *opt, const char *dir, bool create, char *err, size_t errlen)
{
	return dir_open(opt, dir, dir, create, false, err, errlen);
}

int out_name_check(const char *opt, int dirfd, const char *dir, const char *name,
		   char *err, size_t errlen)
{
	struct stat st;
	char who[160];

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "%s%s%s/%s: %s", OPT(opt), dir, name,
			 strerror(errno));
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		snprintf(err, errlen,
			 "%s%s%s/%s is a symbolic link: pmwal neither writes through a "
			 "link nor replaces one; remove it, or name another place",
			 OPT(opt), dir, name);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen,
			 "%s%s%s/%s is %s, where the run writes its %s; move it away or "
			 "name another place",
			 OPT(opt), dir, name, kind_of(st.st_mode), name);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		pmr_user_name(st.st_uid, who, sizeof(who));
		snprintf(err, errlen,
			 "%s%s%s/%s belongs to %s: pmwal replaces only its own user's "
			 "files; remove it, or name another place",
			 OPT(opt), dir, name, who);
		return -1;
	}
	return 0;
}

/* @path split into its directory (@dir) and the name in it; -1 said. */
static int file_parts(const char *opt, const char *path, char *dir, size_t dlen,
		      const char **name, char *buf, size_t blen, char *err, size_t errlen)
{
	size_t n = strlen(path);

	if (!n || path[n - 1] == '/') {
		snprintf(err, errlen, "%s%s%s: needs a file name%s", OPT(opt), path,
			 n ? " (it names a directory)" : "");
		return -1;
	}
	if (split_path(path, buf, blen, dir, dlen, name)) {
		snprintf(err, errlen, "%s: the path is too long", opt);
		return -1;
	}
	if (!strcmp(*name, ".") || !strcmp(*name, "..") || strlen(*name) > 200) {
		snprintf(err, errlen, "%s%s%s: needs a file name (of at most 200 bytes)",
			 OPT(opt), path);
		return -1;
	}
	return 0;
}

int out_path_check(const char *opt, const char *path, char *err, size_t errlen)
{
	char dir[4096], buf[4096];
	const char *name;

	if (!strcmp(path, "/dev/null"))
		return 0;
	if (file_parts(opt, path, dir, sizeof(dir), &name, buf, sizeof(buf), err, errlen))
		return -1;
	struct stat st;
	const char *why = stat(dir, &st)	 ? strerror(errno)
			  : !S_ISDIR(st.st_mode) ? kind_of(st.st_mode)
						 : NULL;
	if (why) {
		snprintf(err, errlen,
			 "%s%s%s: %s is not a directory this run can write to (%s)",
			 OPT(opt), path, dir, why);
		return -1;
	}
	int dfd = dir_open(opt, dir, path, false, false, err, errlen);
	if (dfd < 0)
		return -1;
	int ret = out_name_check(opt, dfd, dir, name, err, errlen);
	close(dfd);
	return ret;
}

int out_dir_check(const char *opt, const char *dir, const char *const *names, char *err,
		  size_t errlen)
{
	int dfd = dir_open(opt, dir, dir, false, true, err, errlen);

	if (dfd == -2)
		return 0; /* missing: made at the end, in a parent that passes */
	if (dfd < 0)
		return -1;
	for (; names && *names; names++)
		if (out_name_check(opt, dfd, dir, *names, err, errlen)) {
			close(dfd);
			return -1;
		}
	close(dfd);
	return 0;
}

int out_place_check(const char *opt, const char *file, char *err, size_t errlen)
{
	char label[4400], who[160];
	struct pmr_walk w;
	struct stat st;

	snprintf(label, sizeof(label), "%s%s%s", OPT(opt), file);
	/* The way to its directory, walked by descriptors; a missing or odd
	 * one is said where the file is opened. */
	if (pmr_walk(file, label, PMR_WALK_NOFOLLOW, &w, err, errlen))
		return errno == EPERM ? -1 : 0;
	int ret = dir_rule(w.dirfd, opt, w.dirpath, false, err, errlen);

	if (ret || fstatat(w.dirfd, w.name, &st, AT_SYMLINK_NOFOLLOW))
		goto out;
	/* A link of the user's own (or root's: /dev/disk/by-id) is followed as
	 * the user meant; one another user made is not. */
	if (S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0) {
		pmr_user_name(st.st_uid, who, sizeof(who));
		snprintf(err, errlen,
			 "%s%s%s is a symbolic link made by %s: pmwal does not write "
			 "through another user's link (--force or not); remove it, or "
			 "name another place",
			 OPT(opt), file, who);
		ret = -1;
		goto out;
	}
	if (S_ISLNK(st.st_mode)) {
		/* Ours: where it leads is judged as the rest of the way was. */
		struct pmr_walk to;

		if (pmr_walk(file, label, 0, &to, err, errlen) == 0)
			pmr_walk_end(&to);
		else if (errno == EPERM)
			ret = -1;
		goto out;
	}
	if (S_ISREG(st.st_mode) && st.st_uid != geteuid() && (w.dir.st_mode & S_ISVTX)) {
		pmr_user_name(st.st_uid, who, sizeof(who));
		snprintf(
		    err, errlen,
		    "%s%s%s belongs to %s, in a directory others share: pmwal writes "
		    "only its own user's files there (--force or not); name another "
		    "place",
		    OPT(opt), file, who);
		ret = -1;
	}
out:
	pmr_walk_end(&w);
	return ret;
}

static uint64_t tmp_salt(void)
{
	uint64_t v = 0;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_sec;
}

static int open_in(struct out_file *o, const char *opt, int dfd, const char *dir,
		   const char *name, char *err, size_t errlen)
{
	struct stat old;
	int fd = -1;

	memset(o, 0, sizeof(*o));
	o->dirfd = dfd;
	o->opt = opt;
	snprintf(o->dir, sizeof(o->dir), "%s", dir);
	snprintf(o->path, sizeof(o->path), "%s/%s", dir, name);
	snprintf(o->name, sizeof(o->name), "%s", name);
	if (out_name_check(opt, dfd, dir, name, err, errlen))
		goto fail;
	uint64_t salt = tmp_salt();
	for (int i = 0; i < OUT_TMP_TRIES && fd < 0; i++) {
		snprintf(o->tmp, sizeof(o->tmp), ".%s.%08x", name,
			 (unsigned)((salt >> (i % 32)) ^ (uint64_t)i * 0x9e3779b9u));
		fd = openat(dfd, o->tmp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		snprintf(err, errlen, "%s%s%s: cannot create a file in %s: %s", OPT(opt),
			 o->path, dir, strerror(errno));
		goto fail;
	}
	/* A replaced file keeps its permissions (the new one is ours too). */
	if (fstatat(dfd, name, &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(old.st_mode))
		(void)fchmod(fd, old.st_mode & 07777);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		snprintf(err, errlen, "%s%s%s: %s", OPT(opt), o->path, strerror(errno));
		close(fd);
		unlinkat(dfd, o->tmp, 0);
		goto fail;
	}
	return 0;
fail:
	close(dfd);
	o->dirfd = -1;
	return -1;
}

/* out_open_in(), @named the path as the user named it, for messages. */
static int open_in_named(struct out_file *o, const char *opt, const char *dir,
			 const char *name, const char *named, char *err, size_t errlen)
{
	int dfd = dir_open(opt, dir, named, false, false, err, errlen);

	if (dfd < 0) {
		memset(o, 0, sizeof(*o));
		o->dirfd = -1;
		return -1;
	}
	return open_in(o, opt, dfd, dir, name, err, errlen);
}

int out_open_in(struct out_file *o, const char *opt, const char *dir, const char *name,
		char *err, size_t errlen)
{
	char named[4400];

	snprintf(named, sizeof(named), "%s/%s", dir, name);
	return open_in_named(o, opt, dir, name, named, err, errlen);
}

int out_open(struct out_file *o, const char *opt, const char *path, char *err,
	     size_t errlen)
{
	char dir[4096], buf[4096];
	const char *name;

	if (!strcmp(path, "/dev/null")) {
		memset(o, 0, sizeof(*o));
		o->dirfd = -1;
		o->direct = true;
		snprintf(o->path, sizeof(o->path), "%s", path);
		int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
			snprintf(err, errlen, "%s%s%s: %s", OPT(opt), path,
				 strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		return 0;
	}
	if (file_parts(opt, path, dir, sizeof(dir), &name, buf, sizeof(buf), err,
		       errlen)) {
		memset(o, 0, sizeof(*o));
		o->dirfd = -1;
		return -1;
	}
	return open_in_named(o, opt, dir, name, path, err, errlen);
}

void out_abort(struct out_file *o)
{
	if (o->f)
		fclose(o->f);
	if (o->dirfd >= 0) {
		unlinkat(o->dirfd, o->tmp, 0);
		close(o->dirfd);
	}
	o->f = NULL;
	o->dirfd = -1;
}

int out_close(struct out_file *o, char *err, size_t errlen)
{
	int bad = ferror(o->f) || fflush(o->f) == EOF;
	int e = errno;

	if (o->direct) {
		if (fclose(o->f) || bad) {
			snprintf(err, errlen, "cannot write %s: %s", o->path,
				 strerror(bad ? e : errno));
			return -1;
		}
		return 0;
	}
	if (!bad && fdatasync(fileno(o->f))) {
		bad = 1;
		e = errno;
	}
	if (fclose(o->f) && !bad) {
		bad = 1;
		e = errno;
	}
	o->f = NULL;
	if (bad) {
		snprintf(err, errlen, "cannot write %s: %s", o->path, strerror(e));
		out_abort(o);
		return -1;
	}
	/* Checked again: a link put there during the run is not replaced either. */
	if (out_name_check(o->opt, o->dirfd, o->dir, o->name, err, errlen)) {
		out_abort(o);
		return -1;
	}
	if (renameat(o->dirfd, o->tmp, o->dirfd, o->name)) {
		snprintf(err, errlen, "cannot write %s: %s", o->path, strerror(errno));
		out_abort(o);
		return -1;
	}
	close(o->dirfd);
	o->dirfd = -1;
	return 0;
}
