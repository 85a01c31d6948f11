/* SPDX-License-Identifier: MIT */
/*
 * kv.h - the example store's engine (examples/kv.c): a hash table whose every
 * put and delete is durable in a pmwal log before the call returns, with
 * checkpoints that let the log be released. Thread-safe: any number of
 * threads may put, delete and get at once; their log records are gathered
 * into group writes by pmwal (group commit), and the table applies them in
 * LSN order, the order a restart replays them in. A get sees only durable
 * writes.
 *
 * Used by examples/kvstore.c (the server: stdin and a Unix socket), the
 * benchmark examples/kvbench.c, and the simulated-media crash test
 * tests/kv_sim_crash.c.
 */
#ifndef PMWAL_EXAMPLE_KV_H
#define PMWAL_EXAMPLE_KV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct kv;

struct kv_options {
	const char *dir;	   /* the snapshot lives here (required) */
	const char *target;	   /* the log (NULL: DIR/log) */
	uint64_t capacity_bytes;   /* when the log is created (0: 64 MiB) */
	uint64_t checkpoint_every; /* records between automatic checkpoints (0: never) */
	uint32_t group_window_us;  /* pmwal_options.group_window_us */
	uint32_t groups_in_flight; /* pmwal_options.groups_in_flight */
	/* Format the target as a new log (a device, a simulated medium).
	 * Without it a log is created only where the target is a path that
	 * does not exist yet and there is no snapshot. */
	int create;
};

/* Opens (creates) the store: loads DIR/snapshot, opens the log (creates it
 * when neither exists) and replays what the snapshot does not hold. DIR
 * must not be writable by other users unless sticky, and must belong to
 * this user or root; the store's files in it (lock, snapshot,
 * snapshot.tmp) are never followed through a symbolic link, and one that
 * another user owns is refused.
 * Returns 0, or a negative errno / pmwal code with a message in @err. */
int kv_open(const struct kv_options *o, struct kv **out, char *err, size_t errlen);

/* Durable before return. *@lsn (may be NULL) gets the record's LSN.
 * Returns 0, -EINVAL (empty or oversized key, a key with a space, NUL or
 * newline, a value with a newline or NUL), PMWAL_ETOOBIG (larger than the
 * log's records), PMWAL_EFULL (full of what no checkpoint can free yet, or
 * full while checkpoints fail: "log full: checkpoint failing: REASON"), or
 * another log error: then kv_failed() (kv_errmsg() says why). On any error
 * the write was not made. A checkpoint_every checkpoint that fails after
 * the write is durable does not fail it (0): see kv_stats(). */
int kv_put(struct kv *kv, const char *key, const char *value, uint64_t *lsn);
int kv_del(struct kv *kv, const char *key, uint64_t *lsn);

/* 1 and a malloc()ed copy of the value in *@value, or 0 when missing.
 * *@lsn (may be NULL) gets the LSN of the record that wrote it. */
int kv_get(struct kv *kv, const char *key, char **value, uint64_t *lsn);

/* Writes the snapshot (the table as of *@lsn), then releases the log below
 * it. Returns 0 or an error (kv_errmsg()). */
int kv_checkpoint(struct kv *kv, uint64_t *lsn);

struct kv_stats {
	uint64_t applied_lsn;	      /* every record up to it is applied */
	uint64_t checkpoints;	      /* that succeeded */
	uint64_t checkpoint_failures; /* that failed, in all */
	uint64_t failures_in_a_row;   /* since the last success */
	char checkpoint_error[512];   /* the last failure's message ("": none) */
};

/* The store's counters. Thread-safe. */
void kv_stats(struct kv *kv, struct kv_stats *s);

/* Every live key as "KEY VALUE\n" into a malloc()ed buffer (*@len bytes). */
int kv_dump(struct kv *kv, char **buf, size_t *len);

/* Nonzero once the log has failed (an I/O error, a takeover): the store
 * acknowledges nothing more and should stop; a restart recovers. Other
 * errors (a full log, a record too big, a checkpoint's file) leave it
 * working. */
int kv_failed(struct kv *kv);

/* What the last failing call of this thread said. */
const char *kv_errmsg(void);

/* The log's handle, for statistics. */
struct pmwal *kv_log(struct kv *kv);

/* Closes the log (no call may be in progress) and frees the table. */
int kv_close(struct kv *kv);

#endif
