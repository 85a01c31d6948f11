/* SPDX-License-Identifier: MIT */
/*
 * other_user.h - a second local user for the tests that attack pmwal as one:
 * made for the test (useradd, a name of its own: tests run side by side),
 * running code in a child of that user, and removed after. Plain C, no
 * Criterion calls (the suites assert on what these return), since a call in
 * a forked child would talk on the runner's channel.
 */
#ifndef PMWAL_OTHER_USER_H
#define PMWAL_OTHER_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TU_OTHER_HELD 4

struct tu_other {
	char name[48];
	uid_t uid;
	gid_t gid;
	pid_t held[TU_OTHER_HELD]; /* its processes still running */
};

/* Makes user PREFIX<pid> into @o, first removing users of that prefix whose
 * test process is gone (killed at its timeout: no clean-up ran). 0, or -1
 * with @why saying why not (not root, useradd failed): the caller skips. */
int tu_other_make(struct tu_other *o, const char *prefix, char *why, size_t why_len);

/* Runs @fn(@arg) as the user in a child with nothing of ours open but a
 * pipe, killed with its parent; the child says whether @fn succeeded, then
 * (@hold) waits to be killed (tu_other_end). Returns its pid, with *@ok set,
 * or -1 (pipe or fork failed). */
pid_t tu_as_other(struct tu_other *o, bool (*fn)(const char *), const char *arg, bool hold,
		  bool *ok);

/* Kills one of its held processes. */
void tu_other_end(struct tu_other *o, pid_t pid);

/* Kills what it still holds and removes the user (a no-op if none made). */
void tu_other_remove(struct tu_other *o);

#endif
