/* SPDX-License-Identifier: MIT */
/*
 * openat.h - the one rule for a path pmwal writes through when other users
 * may be able to change names on it (/tmp, /dev/shm, their own directories),
 * walked by descriptors (openat.c states the rule). libpmwal opens its logs
 * and status pages with it, bench and the CLI their outputs and targets, the
 * example store its directory and socket. Needs nothing but libc, so a
 * program that sees only libpmwal's public header (the examples) may build
 * openat.c into itself.
 */
#ifndef PMWAL_PMR_OPENAT_H
#define PMWAL_PMR_OPENAT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* pmr_walk() flags. */
enum {
	/* The whole path names a directory: its last name is walked like
	 * the others (an allowed link followed) and ends in @name ".". */
	PMR_WALK_DIR = 1u << 0,
	/* The last name is not followed even where it is a link the rule
	 * allows: the caller judges what is there (replaces it, refuses it). */
	PMR_WALK_NOFOLLOW = 1u << 1,
};

/* Where a walk ended: the directory the last name is in, held open. */
struct pmr_walk {
	int dirfd;	    /* O_PATH descriptor of the directory, or -1 */
	struct stat dir;    /* its fstat */
	char name[256];	    /* the last name in it; "." for the directory itself */
	char dirpath[4096]; /* the directory as reached (links resolved), for messages */
};

/*
 * Walks @path one name at a time from "/" (or the working directory), each
 * name opened relative to the directory before it without following a link
 * (O_PATH|O_NOFOLLOW), so nothing another user renames meanwhile can send the
 * walk anywhere that was not judged. A symbolic link met is judged by the
 * directory it lies in (openat.c), read from the descriptor judged, and the
 * walk goes on from where it leads, up to 40 links (ELOOP). The last name is
 * looked at only: it may be missing (to be made), and it is followed when it
 * is an allowed link unless @flags has PMR_WALK_NOFOLLOW. A refusal's
 * message starts with @label ("--json PATH"), or @path where it is NULL.
 * Returns 0 with @w filled (release with pmr_walk_end()), or -1 with errno:
 * EPERM for a link the rule refuses, then @err names the path, the link,
 * its owner and what to do; otherwise (ENOENT, ENOTDIR, ELOOP, EACCES,
 * ENAMETOOLONG, EMFILE) @err is left alone for the caller's usual message.
 */
int pmr_walk(const char *path, const char *label, unsigned flags, struct pmr_walk *w,
	     char *err, size_t errlen);

/* Closes what pmr_walk() holds; accepts a walk that failed. */
void pmr_walk_end(struct pmr_walk *w);

/*
 * The last step, for a file a walk reached: openat(@w->dirfd, @w->name,
 * @flags | O_NOFOLLOW, @mode), with the rule for the file itself when the open
 * may write (not in a directory others can write that is not sticky; an
 * existing file there, or in another user's directory, only a regular file
 * with one link and, in a sticky one, ours or the directory owner's). @path
 * names it in messages. The descriptor, or -1 with errno (EPERM with @err, as
 * pmr_walk()).
 */
int pmr_walk_open(const struct pmr_walk *w, const char *path, int flags, mode_t mode,
		  char *err, size_t errlen);

/*
 * open(2) for a file pmwal may write in a place others may share: pmr_walk()
 * then pmr_walk_open(). An open that only reads is a plain open(). The
 * descriptor, or -1 with errno; for a refusal errno is EPERM and @err says
 * why and what to do (otherwise @err is left alone: the caller names open's
 * error).
 */
int pmr_open_shared_safe(const char *path, int flags, mode_t mode, char *err,
			 size_t errlen);

/*
 * Opens directory @path for making files in, walked as pmr_walk() does (@label
 * as there): an
 * O_RDONLY|O_DIRECTORY descriptor of the directory reached, with *@st its
 * fstat when @st is given, or -1 with errno (EPERM with @err). The caller
 * applies its own rule to the directory itself (who owns it, who can write).
 */
int pmr_open_dir_walked(const char *path, const char *label, struct stat *st, char *err,
			size_t errlen);

/* Whether a missing @path would be made on /dev's own filesystem (devtmpfs,
 * not a filesystem mounted below it such as /dev/shm): there a missing name is
 * a missing device, never a file to create. */
bool pmr_in_dev_fs(const char *path);

/* "user NAME (uid N)", or "uid N" where the user has no name, as the
 * refusals name the owner of a link or a file. */
void pmr_user_name(uid_t uid, char *buf, size_t len);

#endif
