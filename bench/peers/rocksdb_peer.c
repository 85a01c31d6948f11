// SPDX-License-Identifier: MIT
/*
 * rocksdb_peer.c - RocksDB through its C API with synchronous writes
 * (WriteOptions.sync = true: the WAL is fsynced before a put returns), which
 * is how databases make commits durable today. N threads put values of one
 * size for a fixed time; RocksDB groups concurrent writers itself.
 *
 * usage: pmwal_peer_rocksdb DIR VALUE_BYTES THREADS SECONDS
 */
#include <rocksdb/c.h>

#include "peer_common.h"

static rocksdb_t *db;
static rocksdb_writeoptions_t *wo;
static size_t val_bytes;
static char *val;

static int put_op(struct peer_thread *t, uint64_t seq)
{
	char key[48], *err = NULL;
	int n =
	    snprintf(key, sizeof(key), "k%03d-%012llu", t->idx, (unsigned long long)seq);

	rocksdb_put(db, wo, key, (size_t)n, val, val_bytes, &err);
	if (err) {
		fprintf(stderr, "put: %s\n", err);
		rocksdb_free(err);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char *err = NULL;

	if (argc != 5) {
		fprintf(stderr, "usage: %s DIR VALUE_BYTES THREADS SECONDS\n", argv[0]);
		return 2;
	}
	rocksdb_options_t *o = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(o, 1);
	db = rocksdb_open(o, argv[1], &err);
	if (err) {
		fprintf(stderr, "rocksdb_open %s: %s\n", argv[1], err);
		return 1;
	}
	wo = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(wo, 1);
	val_bytes = strtoull(argv[2], NULL, 0);
	val = malloc(val_bytes);
	if (!val)
		return 1;
	memset(val, 0x5a, val_bytes);
	peer_op = put_op;
	int ret = peer_run("rocksdb-sync", atoi(argv[3]), atof(argv[4]), val_bytes, NULL);
	rocksdb_writeoptions_destroy(wo);
	rocksdb_close(db);
	rocksdb_options_destroy(o);
	free(val);
	return ret;
}
