/* SPDX-License-Identifier: MIT */
/*
 * outfile.h - how pmwal's tools write the files they make (reports, results,
 * CSV, fio logs, bench's markers, crashtest's logs): never through a link,
 * never over a file that is not theirs, never in a directory another user
 * could swap things in. bench and the CLI share it (the CLI links
 * pmwal_bench); paths are walked by pmr/openat.h's rule.
 *
 * The rule, in one place:
 * - The way to a directory is walked by descriptors with pmr_walk()
 *   (another user's link on it is refused, pmr/openat.h); the directory
 *   itself is opened with O_DIRECTORY|O_NOFOLLOW (a symbolic link in its
 *   place is refused) and every file in it is reached relative to that
 *   descriptor, never by its path again.
 * - The directory must be owned by this user or by root, and be writable by
 *   no one else (group: only this process's group), unless it is sticky
 *   (/tmp, /dev/shm): there the file itself must be ours or absent.
 * - A file is written under a fresh name in the same directory (O_CREAT|
 *   O_EXCL|O_NOFOLLOW) and renamed over its name at the end, which is
 *   allowed only where the name is free or a regular file this user owns: a
 *   reader sees the old file or the new one, and nothing is written into a
 *   file someone else made.
 * Every refusal is a message naming the path, why, and what to do.
 */
#ifndef PMWAL_OUTFILE_H
#define PMWAL_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One output file being written: out_open() fills it, out_close() or
 * out_abort() ends it. */
struct out_file {
	FILE *f;	 /* where to write */
	int dirfd;	 /* the directory, as checked */
	bool direct;	 /* /dev/null: written in place, nothing renamed */
	const char *opt; /* the option that named it, for messages */
	char dir[4096];	 /* its directory, as named */
	char path[4096]; /* as the user named it, for messages */
	char name[256];	 /* its name in the directory */
	char tmp[280];	 /* the fresh name written first */
};

/*
 * Opens directory @dir for writing files into, as the rule above says; with
 * @create a missing @dir is made (0755) in a parent that passes the same
 * rule. @opt ("-o", "--dir") starts each message. A descriptor, or -1 with
 * @err naming the directory, why, and what to do.
 */
int out_dir_open(const char *opt, const char *dir, bool create, char *err, size_t errlen);

/*
 * The directory rule alone, on @dir as the path resolves (links the path
 * rule allows followed: the rule is on the directory reached), writable or
 * not: for a file a user names to be written in place (a bench target). 0,
 * or -1 with @err.
 */
int out_dir_trusted(const char *opt, const char *dir, char *err, size_t errlen);

/*
 * For a file the user names to be written in place (a bench target, a log
 * pmwal create makes): the way to it passes the path rule, its directory
 * passes out_dir_trusted() (a missing one passes: opening the file says so),
 * and the file is not a link another user made (one of ours is judged where
 * it leads), nor, in a sticky shared directory, another user's file. 0, or
 * -1 with @err. A check, not an open: open the file with
 * pmr_open_shared_safe() (or pmr_walk()) too.
 */
int out_place_check(const char *opt, const char *file, char *err, size_t errlen);

/*
 * Whether name @name in directory @dirfd (@dir for messages) may be replaced:
 * free, or a regular file this user owns. 0, or -1 with @err.
 */
int out_name_check(const char *opt, int dirfd, const char *dir, const char *name,
		   char *err, size_t errlen);

/*
 * Checks, before a run, that @path could be written at its end: its
 * directory passes the rule and its name may be replaced. "/dev/null"
 * passes. 0, or -1 with @err.
 */
int out_path_check(const char *opt, const char *path, char *err, size_t errlen);

/*
 * Checks, before a run, directory @dir that the run writes @names
 * (NULL-terminated) into: it passes the rule and each name may be replaced,
 * or it is missing and its parent passes the rule (out_dir_open() creates it
 * then). 0, or -1 with @err.
 */
int out_dir_check(const char *opt, const char *dir, const char *const *names, char *err,
		  size_t errlen);
/* Opens @path for writing a new version of it (see the rule). 0, or -1 with
 * @err; then @o holds nothing to close. */
int out_open(struct out_file *o, const char *opt, const char *path, char *err,
	     size_t errlen);
/* out_open() for @name inside directory @dir. */
int out_open_in(struct out_file *o, const char *opt, const char *dir, const char *name,
		char *err, size_t errlen);

/* Flushes, syncs and renames the new version over the old: 0, or -1 with
 * @err (the old file, if any, is then as it was). Ends @o either way. */
int out_close(struct out_file *o, char *err, size_t errlen);

/* Ends @o without touching its name: the fresh file is removed. */
void out_abort(struct out_file *o);

#endif
