// SPDX-License-Identifier: MIT
/*
 * pmemlog_peer.c - PMDK libpmemlog, the older persistent-memory log, doing
 * what `pmwal bench log` does on a pmem target: appends of one record size
 * from N threads for a fixed time. pmemlog_append() is durable on return (it
 * persists the data, then the write offset: two barriers per append). When
 * the pool fills it is rewound, as a log that is checkpointed would be.
 *
 * usage: pmwal_peer_pmemlog PATH POOL_BYTES RECORD_BYTES THREADS SECONDS
 * (set PMEM_IS_PMEM_FORCE=1 for a file in /dev/shm, as fio's libpmem engine)
 */
#include <errno.h>
#include <libpmemlog.h>
#include <unistd.h>

#include "peer_common.h"

static PMEMlogpool *plp;
static size_t rec_bytes;
static char *rec;

static int append_op(struct peer_thread *t, uint64_t seq)
{
	(void)t;
	(void)seq;
	if (pmemlog_append(plp, rec, rec_bytes) == 0)
		return 0;
	if (errno != ENOSPC)
		return errno;
	pmemlog_rewind(plp);
	return pmemlog_append(plp, rec, rec_bytes) ? errno : 0;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr,
			"usage: %s PATH POOL_BYTES RECORD_BYTES THREADS SECONDS\n",
			argv[0]);
		return 2;
	}
	unlink(argv[1]);
	plp = pmemlog_create(argv[1], strtoull(argv[2], NULL, 0), 0644);
	if (!plp) {
		fprintf(stderr, "pmemlog_create %s: %s\n", argv[1], pmemlog_errormsg());
		return 1;
	}
	rec_bytes = strtoull(argv[3], NULL, 0);
	rec = malloc(rec_bytes);
	if (!rec)
		return 1;
	memset(rec, 0x5a, rec_bytes);
	peer_op = append_op;
	int ret = peer_run("pmemlog", atoi(argv[4]), atof(argv[5]), rec_bytes, NULL);
	pmemlog_close(plp);
	unlink(argv[1]);
	free(rec);
	return ret;
}
