// SPDX-License-Identifier: MIT
/*
 * lock_holder.c - test_lock's second process: opens TARGET for writing,
 * appends one record, writes "x" to stdout and waits to be killed. A program
 * of its own (spawned, not forked from a Criterion worker) so that it shares
 * nothing with the test runner but the log.
 */
#include <stdio.h>
#include <unistd.h>

#include "pmwal.h"

int main(int argc, char **argv)
{
	char err[512] = "";
	struct pmwal_options o = {0};
	struct pmwal *w;

	if (argc != 2) {
		fprintf(stderr, "usage: lock_holder TARGET\n");
		return 2;
	}
	o.target = argv[1];
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
