// SPDX-License-Identifier: MIT
/*
 * other_user.c - a second local user for the suites that attack pmwal as one
 * (other_user.h).
 */
#include "other_user.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int tu_other_make(struct tu_other *o, const char *prefix, char *why, size_t why_len)
{
	char cmd[200];
	size_t n = strlen(prefix);
	struct passwd *pw;

	memset(o, 0, sizeof(*o));
	if (geteuid() != 0) {
		snprintf(why, why_len, "a second local user needs root (useradd)");
		return -1;
	}
	setpwent();
	while ((pw = getpwent()))
		if (!strncmp(pw->pw_name, prefix, n) &&
		    kill((pid_t)atoi(pw->pw_name + n), 0) && errno == ESRCH) {
			snprintf(cmd, sizeof(cmd), "userdel %s >/dev/null 2>&1", pw->pw_name);
			if (system(cmd) == 0)
				setpwent(); /* the list changed: from the start */
		}
	endpwent();
	snprintf(o->name, sizeof(o->name), "%s%d", prefix, (int)getpid());
	snprintf(cmd, sizeof(cmd), "useradd -M -r -s /usr/sbin/nologin %s >/dev/null 2>&1",
		 o->name);
	if (system(cmd) != 0 || !(pw = getpwnam(o->name))) {
		o->name[0] = 0;
		snprintf(why, why_len, "useradd failed");
		return -1;
	}
	o->uid = pw->pw_uid;
	o->gid = pw->pw_gid;
	return 0;
}

pid_t tu_as_other(struct tu_other *o, bool (*fn)(const char *), const char *arg, bool hold,
		  bool *ok)
{
	int p[2];
	char c = 0;
	pid_t pid;

	*ok = false;
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		/* Nothing of ours but the pipe: a log's lock goes with its
		 * descriptors, which a fork shares. */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != p[1])
				close(fd);
		/* Nor the runner's output, and gone with the test (a test
		 * killed at its timeout runs no clean-up). */
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(5);
		/* The death signal after the change of user, which clears it. */
		if (setgroups(0, NULL) || setresgid(o->gid, o->gid, o->gid) ||
		    setresuid(o->uid, o->uid, o->uid) || prctl(PR_SET_PDEATHSIG, SIGKILL) ||
		    getppid() == 1)
			_exit(3);
		c = fn(arg) ? 'y' : 'n';
		if (write(p[1], &c, 1) != 1)
			_exit(4);
		while (hold)
			pause();
		_exit(0);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -1;
	}
	*ok = read(p[0], &c, 1) == 1 && c == 'y';
	close(p[0]);
	if (!hold) {
		waitpid(pid, NULL, 0);
		return pid;
	}
	for (int i = 0; i < TU_OTHER_HELD; i++)
		if (!o->held[i]) {
			o->held[i] = pid;
			break;
		}
	return pid;
}

void tu_other_end(struct tu_other *o, pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (int i = 0; i < TU_OTHER_HELD; i++)
		if (o->held[i] == pid)
			o->held[i] = 0;
}

void tu_other_remove(struct tu_other *o)
{
	char cmd[200];

	for (int i = 0; i < TU_OTHER_HELD; i++)
		if (o->held[i] > 0)
			tu_other_end(o, o->held[i]);
	if (o->name[0]) {
		snprintf(cmd, sizeof(cmd), "userdel %s >/dev/null 2>&1", o->name);
		if (system(cmd) != 0)
			fprintf(stderr, "userdel %s failed\n", o->name);
		o->name[0] = 0;
	}
}
