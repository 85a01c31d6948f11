/* SPDX-License-Identifier: MIT */
/*
 * engine.h - internals shared by the engine's files and by the tests that
 * drive it on simulated devices. Not installed.
 */
#ifndef PMWAL_ENGINE_H
#define PMWAL_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "device.h"
#include "format.h"
#include "pmwal.h"

/* Where the valid log ends, as recovery found it: where the writer resumes. */
struct wal_tail {
	uint64_t next_seq;	/* seq of the first block to write */
	uint64_t next_lsn;	/* LSN the next record gets */
	uint64_t prev_checksum; /* checksum of block next_seq-1 */
	uint64_t durable_lsn;	/* last recovered LSN (0: none) */
};

/* Reads both superblock copies and picks the valid newer one. */
int wal_read_sb(struct wal_dev *dev, struct wal_sb *sb, char *err, size_t errlen);

/*
 * As wal_read_sb(), for a salvaging open: where the two copies name two logs
 * (one written over by another log's superblock), the copy whose log id the
 * ring's blocks carry is used, and @note (never empty then) says which and
 * why, with *@bad_offset the byte offset of the copy passed over. Otherwise
 * @note is "" and the result is wal_read_sb()'s.
 */
int wal_read_sb_salvage(struct wal_dev *dev, struct wal_sb *sb, char *note, size_t notelen,
			uint64_t *bad_offset, char *err, size_t errlen);

/*
 * Recovery's scan (format.c has the decision table). Reads only, writes
 * nothing. Fills @rep and @tail. Returns 0 (whatever the verdict) or -errno
 * for an I/O error.
 */
int wal_recover_scan(struct wal_dev *dev, const struct wal_sb *sb, bool salvage,
		     struct pmwal_report *rep, struct wal_tail *tail);

/*
 * Finds the block holding the start of record @lsn among durable blocks
 * [head_seq, end_seq). Returns 0 and *@seq, PMWAL_ERANGE, or -errno.
 */
int wal_locate(struct wal_dev *dev, const struct wal_sb *sb, uint64_t head_seq,
	       uint64_t end_seq, uint64_t lsn, uint64_t *seq);

/* Opens a log on a device the caller made (tests: simulated devices). Takes
 * ownership of @dev, also on failure. */
int wal_open_dev(const struct pmwal_options *opt, struct wal_dev *dev,
		 struct pmwal **out);

/*
 * Takes the writer lock of the log at @target (lock.c): 0 and @fd_out (-1 for
 * targets that need none; a loop device also holds its backing files'), -EBUSY naming the holder's pid in @err, or -errno.
 * With @dev_fd >= 0 (the device's open file, wal_dev_ops.file_fd) the lock is
 * taken on a duplicate of it, so it lasts as long as that open file does.
 * Closing @fd_out and the device releases it.
 */
#define WAL_LOCK_FDS 8 /* the device and up to 7 loop backing files below it */
int wal_lock_writer(const char *target, int dev_fd, int fd_out[WAL_LOCK_FDS], char *err,
		    size_t errlen);

/* /proc/@pid/stat (lock.c): its state letter and start time (0: unknown),
 * either may be NULL. 0 or -errno. */
int wal_proc_stat(long pid, char *state, uint64_t *start);
/* Whether process @pid is exiting or dead (lock.c): from its /proc texts. */
bool wal_proc_exiting(long pid);
bool wal_proc_exiting_text(const char *stat, const char *status);

/* Aligned buffer for device I/O (O_DIRECT); free with free(). */
void *wal_alloc_io(size_t bytes);

/* ---- the handle (engine.c: open, close, release; commit.c: the commit
 * pipeline; iter.c: iterators) ---------------------------------------------- */

#include <pthread.h>
#include <sys/uio.h>

#define WAL_LEAD_CHAIN_MAX 4 /* groups one leader writes back to back */

/* Direct groups on mapped media (commit.c): see there. */
#define WAL_DIRECT_RUN	  256u
#define WAL_DIRECT_SEGS	  48
#define WAL_DIRECT_BLOCKS 16u /* larger groups take the staging path */
#define WAL_DIRECT_GROUPS WAL_INFLIGHT_MAX /* direct groups in flight at once */
struct dgroup;

/* One announced record; a stage's list is in LSN order. */
struct async_cb {
	uint64_t lsn;
	pmwal_durable_fn fn;
	void *arg;
	int status;	      /* set when its group is done */
	struct async_cb *next;
};

/* One group being filled (or written). */
struct stage {
	uint8_t *buf;
	uint32_t cap_blocks;
	uint32_t nblocks; /* blocks started (the last one may be partial) */
	uint32_t fill;	  /* payload bytes used in the last block */
	uint64_t first_lsn;
	uint64_t last_lsn;
	uint64_t nrecords;
	struct async_cb *cbs, **cbs_tail; /* callbacks of this group's records */
	pthread_cond_t cv; /* appenders waiting for this stage's group */
	/* Once led (in flight): */
	uint64_t seq0;	 /* its first block */
	uint64_t ticket; /* its turn to be sealed (the hash chain's order) */
	int rc;		 /* what its commit returned, once done */
	bool done;	 /* its commit returned; retired in LSN order */
};

/* The writer's live counters, kept under mu and copied to its status page
 * with each group's publication (pmwal_stats() reads them from there). */
#define WAL_STATS_BUCKETS 32
#define WAL_STATS_SAMPLE 64 /* one group in 64 has its write timed */
struct wal_stats {
	uint64_t appends, append_bytes; /* records accepted by append calls */
	uint64_t groups, group_blocks;	/* group writes made durable */
	uint64_t records;		/* records in those groups */
	uint64_t errors;		/* group writes that failed */
	uint64_t latency_samples, latency_sum_ns;
	uint64_t latency_ns[WAL_STATS_BUCKETS]; /* log2 buckets */
};

struct pmwal {
	struct wal_dev *dev;
	int lock_fd[WAL_LOCK_FDS]; /* the writer lock (lock.c), -1 if none */
	bool lock_broken;	   /* opened with the lock held by another (BREAK_LOCK) */
	long broken_from;	   /* ... by this pid (-1: unknown) */
	uint32_t own_epoch;	   /* the epoch this writer claimed (status.c) */
	pthread_mutex_t lock_mu;   /* wal_retake_lock */
	uint64_t lock_tried_ms;
	struct wal_sb sb; /* as last written; head fields under mu */
	/* Salvage chose a superblock copy by the blocks (wal_read_sb_salvage):
	 * what it says, and the offset of the copy passed over. */
	char sb_note[200];
	uint64_t sb_bad_offset;
	bool sb_same;	  /* both copies on the medium are sb (after a write_sb) */
	struct pmwal_report report;
	uint32_t flags;
	uint32_t policy;
	uint32_t window_us;
	uint32_t group_bytes_max;

	pthread_mutex_t mu;
	pthread_cond_t cv_done; /* a group finished: room, close, release */
	pthread_cond_t cv_work; /* committer: staged records wait */
	/* Leaders hold it for reading around a group's commit (up to
	 * inflight_max at once); release and close for writing, alone. */
	pthread_rwlock_t io_lock;
	/* Callbacks of finished groups, run in LSN order by one thread at a time
	 * (the runner), with no lock and no leadership held: see run_callbacks. */
	struct async_cb *done_cbs, **done_tail;
	bool cb_running;
	/* A ring of inflight_max + 1 stages: the inflight groups led and not
	 * yet retired are the ones before active, oldest first. */
	struct stage stage[WAL_INFLIGHT_MAX + 1];
	uint32_t nstages;
	uint32_t inflight_max;	/* groups in flight at once (1 on mapped media) */
	uint32_t inflight;
	int active;		/* the stage accepting records */
	bool gathering;		/* a leader waits out the group window */
	uint64_t lead_seq;	/* seq the next group led starts at */
	/* Groups are sealed in the order they were led or reserved (each
	 * block carries the checksum of the one before): ticket order. The
	 * holder of the turn (seal_turn == its ticket) owns prev_checksum;
	 * seal_mu and seal_cv are for those that sleep for their turn. */
	pthread_mutex_t seal_mu;
	pthread_cond_t seal_cv;
	uint64_t tickets;    /* under mu */
	uint64_t seal_turn;  /* atomic; advanced under seal_mu */
	uint32_t seal_sleepers; /* under seal_mu */
	/* Mapped media: WAL_DIRECT_GROUPS direct groups (commit.c), reserved
	 * at dtail and retired at dhead in LSN order (under mu). */
	struct dgroup *dg;
	uint64_t dhead, dtail;
	uint32_t direct_max;    /* at once: one per core, at most WAL_DIRECT_GROUPS */
	uint32_t direct_blocks; /* blocks of the direct groups not retired */
	uint32_t spin_max;	/* waiters that may spin at once (commit.c) */
	uint32_t spinners;	/* spinning now (atomic) */
	uint32_t sleepers;	/* waiters asleep on a stage's cv */
	bool closing;
	uint32_t committers; /* started: one per group that may be in flight */
	pthread_t committer[WAL_INFLIGHT_MAX];
	uint64_t next_lsn;
	uint64_t durable_lsn;
	uint64_t next_seq;	/* seq after the last group retired durable */
	uint64_t prev_checksum; /* checksum of the last block sealed (the turn's
				 * holder, or mu with nothing in flight) */
	uint64_t head_seq, head_lsn;
	int failed;	     /* sticky: first write or flush error; set only by
			      * wal_fail_stop(), which wakes every sleeper */
	uint64_t groups_written, records_written;
	struct wal_stats stats; /* pmwal_stats(): mu held; published per group */
	char target[256];
	/* The status page (status.c): NULL where there is none (sim:; for a
	 * follower, one its writer has not made, or not one it trusts). */
	struct wal_status_page *st;
#define WAL_STATUS_RETIRED 8
	struct wal_status_page *st_retired[WAL_STATUS_RETIRED]; /* replaced, still mapped */
	uint32_t st_retired_n;
	int st_fd; /* the page's file, holding its users' lock (-1: none) */
	int st_retired_fd[WAL_STATUS_RETIRED];
	uint32_t st_retired_fd_n;
	bool st_waitable; /* mapped writable: may count itself a waiter */
	uint32_t st_dead_pid; /* a writer found dead: its page is not trusted */
	char st_err[480];     /* why there is no page, for messages */
	int st_rc;	      /* ... and its error (0: none, or not tried) */
	unsigned long st_ino;
	char st_path[320];
	pthread_mutex_t err_mu; /* errmsg: set and read from any thread */
	char errmsg[512];
};

/* engine.c */
void wal_retake_lock(struct pmwal *w); /* BREAK_LOCK: take it once it is free */
void wal_set_err(struct pmwal *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What a failed handle answers: PMWAL_EFENCED once another writer took the
 * log over, PMWAL_EFAILED after any other failure (mu held, or w->failed
 * read once). */
static inline int wal_failed_rc(const struct pmwal *w)
{
	return w->failed == PMWAL_EFENCED ? PMWAL_EFENCED : PMWAL_EFAILED;
}

/* commit.c: all with mu held. */
void wal_stage_reset(struct stage *s); /* empty, no callbacks */
void wal_wake_all(struct pmwal *w);
bool wal_busy(const struct pmwal *w); /* a group led, in flight or gathered */
void wal_fail_stop(struct pmwal *w, int rc);
int wal_wait_durable(struct pmwal *w, uint64_t lsn);
int wal_start_committer(struct pmwal *w);
void wal_queue_callbacks(struct pmwal *w, struct stage *s, int status);
void wal_run_callbacks(struct pmwal *w);
bool wal_in_callback(const struct pmwal *w); /* this thread runs @w's callbacks */
int wal_direct_init(struct pmwal *w); /* mapped media, at open: also the spin budget */
void wal_direct_free(struct pmwal *w);

/* status.c: the status page shared by a log's processes on one host. */
struct wal_status_page;
void wal_stats_latency(struct wal_stats *s, uint64_t ns);
/* The counters a log's writer last published (a reader's handle), with
 * the snapshot they go with: 0, -ENOENT (no page) or -EAGAIN. */
int wal_status_read_stats(const struct pmwal *w, struct wal_stats *out);
struct wal_status_snap {
	uint32_t epoch, pid;
	bool open; /* a writer has the log open */
	bool live; /* ... and is not known to have died (st_dead_pid) */
	uint64_t durable_seq, durable_lsn, head_seq, head_lsn;
};
int wal_status_path(const char *target, uint64_t log_id, char *buf, size_t len);
/* Maps the page of w->sb.log_id (a writer creates it): 0 or -errno. */
int wal_status_attach(struct pmwal *w, bool writer);
void wal_status_detach(struct pmwal *w, bool unlink_it);
/*
 * Open for writing: claims the log on the page, with the next epoch at or
 * above @want (w->own_epoch gets it), once the last owner's writes ended.
 * @holder: 0, or the pid of the lock holder being broken (-1: unknown),
 * which the page must name. 0, or -EBUSY / PMWAL_EFULL with @err saying why.
 */
int wal_status_claim(struct pmwal *w, uint32_t want, long holder, char *err, size_t errlen);
/* Around every write of the log: 0, or PMWAL_EFENCED (write nothing). */
int wal_status_begin_write(struct pmwal *w);
void wal_status_end_write(struct pmwal *w);
bool wal_status_fenced(const struct pmwal *w);	 /* another writer claimed it */
/* Publishes a durable end and w's head (mu held), unless another writer
 * claimed the log: 0, or PMWAL_EFENCED (nothing published). */
int wal_status_publish(struct pmwal *w, uint64_t durable_seq, uint64_t durable_lsn,
		       uint32_t flags_clear, const struct wal_stats *stats);
void wal_status_closed(struct pmwal *w);
int wal_status_read(const struct pmwal *w, struct wal_status_snap *s); /* 0, -ENOENT, -EAGAIN */
uint32_t wal_status_wake_word(const struct pmwal *w);
/* Sleeps until the wake word moves from @seen, or @ms pass. */
void wal_status_sleep(struct pmwal *w, uint32_t seen, uint32_t ms);
bool wal_status_replaced(struct pmwal *w); /* the path names another page now */
/* Whether writer @pid is gone (0, or dead: remembered in st_dead_pid). */
bool wal_status_writer_gone(struct pmwal *w, uint32_t pid);
int wal_status_reattach(struct pmwal *w); /* a follower maps the page its path names now */
/* Follower: adopts what the page says is durable (iter.c). 1: moved. */
int wal_follow_refresh(struct pmwal *w);

#endif /* PMWAL_ENGINE_H */
