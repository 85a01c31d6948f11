/* SPDX-License-Identifier: MIT */
/*
 * pmwal_raft.h - a pmwal log as the storage under Canonical raft (libraft):
 * a struct raft_io whose network half is raft_uv's (its TCP transport, its
 * timer) and whose storage half is a pmwal log on any pmwal target plus a
 * snapshot file. docs/raft.md describes the mapping and its crash rules.
 *
 *	struct raft_uv_transport t;
 *	struct raft_io *io;
 *	struct pmwal_raft_options o = {.dir = "/var/lib/node1",
 *				       .target = "pmem:/mnt/pmem/node1.log"};
 *	raft_uv_tcp_init(&t, loop);
 *	pmwal_raft_init(&io, loop, &t, &o, err, sizeof(err));
 *	raft_init(&raft, io, &fsm, id, address);	// then as with raft_uv
 *	...
 *	raft_close(&raft, on_closed);	// on_closed: pmwal_raft_free(io);
 *					//            raft_uv_tcp_close(&t);
 *
 * What raft relies on, and how it holds here:
 * - append: the callback runs only once every entry is durable in the log
 *   (pmwal_appendv_async), on the loop, never inside append;
 * - truncate: a record ordered after the appends before it and before the
 *   ones after it (the log's LSN order);
 * - set_term, set_vote: a record made durable before the call returns;
 * - snapshot_put: the snapshot file replaced atomically (temporary file,
 *   fsync, rename, fsync of the directory) before the log is released;
 * - load: term, vote, the snapshot and the entries exactly as made durable.
 * Errors map to RAFT_NOSPACE (the log is full), RAFT_TOOBIG, RAFT_CORRUPT,
 * RAFT_NOMEM and RAFT_IOERR, with pmwal's message in io->errmsg.
 * DIR must not be writable by other users unless sticky, and must belong to
 * this user or root; the storage's files in it (lock, meta, meta.tmp,
 * snapshot, snapshot.tmp, uv/) are never followed through a symbolic link,
 * and one that another user owns is refused.
 */
#ifndef PMWAL_RAFT_H
#define PMWAL_RAFT_H

#include <stddef.h>
#include <stdint.h>

#include <raft.h>
#include <raft/uv.h>

struct uv_loop_s;

struct pmwal_raft_options {
	/* The node's directory: the snapshot file, and raft_uv's own small
	 * metadata in DIR/uv (it still probes a directory). Required. */
	const char *dir;
	/* The log (any pmwal target; NULL: DIR/log, created when missing). */
	const char *target;
	/* When the log is created: its bytes (0: 256 MiB). */
	uint64_t capacity_bytes;
	/* 1: format the target as a new log (a device, a simulated medium);
	 * refused where the directory already holds a snapshot. */
	int create;
};

/*
 * Makes *@io, opening (or creating) the log. Returns 0, or a raft error code
 * with a message in @err. The handle goes to raft_init(); free it with
 * pmwal_raft_free() once its close callback has run (raft_close's).
 */
int pmwal_raft_init(struct raft_io **io, struct uv_loop_s *loop,
		    struct raft_uv_transport *transport, const struct pmwal_raft_options *o,
		    char *err, size_t errlen);

/* Frees the handle (after close; or, never started, at once). */
void pmwal_raft_free(struct raft_io *io);

/*
 * NULL while the storage works; once it has failed stop (an I/O error or
 * corruption in the log, a snapshot it could not store, a directory fsync
 * that failed) the message of that failure. A failed storage refuses every
 * later call, and raft may not notice: a follower whose snapshot install
 * failed stays a follower, behind for good. An application checks this
 * (raftkv does, five times a second), says why and stops the node.
 */
const char *pmwal_raft_error(struct raft_io *io);

/* The log under @io (statistics, tests). */
struct pmwal *pmwal_raft_log(struct raft_io *io);

#endif
