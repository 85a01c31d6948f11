// SPDX-License-Identifier: MIT
/*
 * lock_holder.c - test_lock's second process: opens TARGET for writing,
 * appends one record, writes "x" to stdout and waits to be killed. A program
 * of its own (spawned, not forked from a Criterion worker) so that it shares
 * nothing with the test runner but the log.
 *
 * With "flood" after TARGET it instead keeps large groups in flight (async
 * appends of 1 MiB records, never waiting), so that a SIGKILL finds writes
 * the kernel has not finished.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "pmwal.h"

static void on_durable(void *arg, uint64_t lsn, int status)
{
	(void)arg;
	(void)lsn;
	(void)status;
}

static int flood(struct pmwal_options *o, char *err)
{
	struct pmwal *w;
	size_t len = 1u << 20;
	uint8_t *rec = malloc(len);
	uint64_t lsn;
	int said = 0;

	o->group_bytes_max = 4u << 20;
	int rc = rec ? pmwal_open(o, &w) : -ENOMEM;

	if (rc) {
		fprintf(stderr, "lock_holder: %s: %s (%s)\n", o->target, pmwal_strerror(rc), err);
		return 1;
	}
	for (uint64_t i = 0;; i++) {
		memset(rec, (int)(i & 0xff), len);
		rc = pmwal_append_async(w, rec, len, on_durable, NULL, &lsn);
		if (rc == PMWAL_EFULL) {
			uint64_t d = pmwal_durable_lsn(w);
			rc = d ? pmwal_release(w, d + 1) : 0;
		}
		if (rc) {
			fprintf(stderr, "lock_holder: flood: %s (%s)\n", pmwal_strerror(rc),
				pmwal_errmsg(w));
			return 1;
		}
		if (!said && pmwal_durable_lsn(w) > 0) {
			said = 1;
			if (write(1, "x", 1) != 1)
				return 1;
		}
	}
}

/* Open, fork a child that keeps the inherited log descriptors (not stdout: a
 * reader waiting for its end would wait for the child) until it is killed or
 * 300 s pass, close the log, print the child's pid and exit: the child holds
 * the open file. */
static int fork_and_go(struct pmwal_options *o, char *err)
{
	struct pmwal *w;
	int rc = pmwal_open(o, &w);

	if (rc) {
		fprintf(stderr, "lock_holder: %s: %s (%s)\n", o->target, pmwal_strerror(rc), err);
		return 1;
	}
	pid_t child = fork();

	if (child == 0) {
		close(0);
		close(1);
		close(2);
		sleep(300);
		_exit(0);
	}
	pmwal_close(w);
	printf("%d\n", (int)child);
	return 0;
}

int main(int argc, char **argv)
{
	char err[512] = "";
	struct pmwal_options o = {0};
	struct pmwal *w;

	if (argc != 2 && !(argc == 3 && (!strcmp(argv[2], "flood") || !strcmp(argv[2], "fork")))) {
		fprintf(stderr, "usage: lock_holder TARGET [flood|fork]\n");
		return 2;
	}
	o.target = argv[1];
	if (argc == 3 && !strcmp(argv[2], "flood"))
		return flood(&o, err);
	if (argc == 3)
		return fork_and_go(&o, err);
	o.errmsg_buf = err;
	o.errmsg_len = sizeof(err);
	int rc = pmwal_open(&o, &w);

	if (!rc)
		rc = pmwal_append(w, "child", 5, NULL);
	if (rc) {
		fprintf(stderr, "lock_holder: %s: %s (%s)\n", argv[1], pmwal_strerror(rc), err);
		return 1;
	}
	if (write(1, "x", 1) != 1)
		return 1;
	for (;;)
		pause();
}
