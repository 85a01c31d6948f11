/* SPDX-License-Identifier: MIT */
/*
 * seeded.h - deliberately broken behaviours, one of which a build may compile
 * in (cmake -DPMWAL_SEEDED_BUG=NAME) to prove that the tests and the crash
 * harness catch it (scripts/seeded-bugs.sh builds each and names the lane
 * that caught it). A normal build has none: PMWAL_BUG() is a constant 0 and
 * the compiler removes the broken branch.
 *
 * The list is docs/reliability.md's (1-14), plus four found by the outside attack, two
 * of several groups in flight, one of concurrent direct groups on mapped media,
 * and one of several processes on one log (fencing).
 */
#ifndef PMWAL_SEEDED_H
#define PMWAL_SEEDED_H

#define PMWAL_BUG_ACK_BEFORE_FLUSH	 1  /* ack before the flush completes */
#define PMWAL_BUG_FLUSH_BEFORE_WRITES	 2  /* flush not ordered after its writes */
#define PMWAL_BUG_LAST_LINE_UNFLUSHED	 3  /* last payload line never flushed */
#define PMWAL_BUG_NO_DRAIN_BEFORE_COMMIT 4  /* no drain between payload and commit word */
#define PMWAL_BUG_COMMIT_WORD_FIRST	 5  /* commit word before payload durable */
#define PMWAL_BUG_CHECKSUM_PARTIAL	 6  /* checksum not covering header/LSN/length */
#define PMWAL_BUG_ACCEPT_STALE		 7  /* stale or misplaced block accepted */
#define PMWAL_BUG_STOP_AT_FIRST_BAD	 8  /* cut off at the first bad block */
#define PMWAL_BUG_TRUST_LENGTH		 9  /* a length field trusted past the buffer */
#define PMWAL_BUG_TORN_COMMIT_WORD	 10 /* commit word written as two 4-byte stores */
#define PMWAL_BUG_IGNORE_FSYNC_ERROR	 11 /* fsync error ignored */
#define PMWAL_BUG_PARSE_ZERO_FILL	 12 /* zero-filled space parsed as a record */
#define PMWAL_BUG_TAIL_BEFORE_DURABLE	 13 /* tail pointer moved before durable */
#define PMWAL_BUG_NOT_IDEMPOTENT	 14 /* recovery not idempotent */
#define PMWAL_BUG_NO_WRITER_LOCK	 15 /* no writer lock */
#define PMWAL_BUG_TRUST_OLD_SB		 16 /* older superblock copy trusted blindly */
#define PMWAL_BUG_HEAD_UNCHECKED	 17 /* head block not checked against head_lsn */
#define PMWAL_BUG_CALLBACK_LEADING	 18 /* callback run while holding leadership */
#define PMWAL_BUG_ANY_LATER_GROUP_PROVES 19 /* a later group proves damage without a hint */
#define PMWAL_BUG_ACK_OUT_OF_ORDER	 20 /* a group acked before an earlier one is durable */
#define PMWAL_BUG_SHARED_BARRIER	 21 /* a direct group leans on a later one's barrier */
#define PMWAL_BUG_NO_FENCE		 22 /* a taken-over writer still acknowledges */

#ifdef PMWAL_SEEDED_BUG
#define PMWAL_BUG(name) (PMWAL_SEEDED_BUG == PMWAL_BUG_##name)
#else
#define PMWAL_BUG(name) 0
#endif

#endif /* PMWAL_SEEDED_H */
