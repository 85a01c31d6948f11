// SPDX-License-Identifier: MIT
/*
 * fuzz_log.c - the real logs the structured fuzz targets start from, and the
 * checks of fuzz_log.h. A log is a function of its seed (up to the random
 * log_id the engine draws at create): ring size, sessions, record sizes,
 * batches, releases, and how each session ends: a clean close, a stop without
 * close, or a crash inside a commit with one of sim_dev's tear kinds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <xxhash.h>

#include "engine.h"
#include "fuzz_log.h"
#include "sim_dev.h"
#include "testutil.h"

static uint64_t next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int open_sim(struct sim_dev *sim, uint32_t flags, struct pmwal **w)
{
	struct pmwal_options o = tu_sim_opts(flags, 0);

	o.record_bytes_max = 3 * WAL_PAYLOAD_BYTES;
	return wal_open_dev(&o, sim_wal_dev(sim), w);
}

/* Appends one batch (1..3 records); records what was attempted and acked. */
static int append_batch(struct pmwal *w, struct fuzz_log *log, uint64_t *x, uint8_t *buf)
{
	struct iovec iov[3];
	int count = next(x) % 4 == 0 ? 2 + (int)(next(x) % 2) : 1;
	struct pmwal_info info;
	size_t off = 0;

	pmwal_stat(w, &info);
	if (info.next_lsn + (uint64_t)count >= FUZZ_LOG_RECORDS_MAX)
		return -1;
	for (int i = 0; i < count; i++) {
		uint64_t r = next(x);
		size_t len = r % 8 == 0 ? 1 + (size_t)(r >> 8) % 12000 : 1 + (size_t)(r >> 8) % 300;
		struct fuzz_truth *t = &log->truth[info.next_lsn + (uint64_t)i];

		tu_fill(buf + off, len, r);
		iov[i] = (struct iovec){buf + off, len};
		*t = (struct fuzz_truth){false, len, XXH3_64bits(buf + off, len)};
		off += len;
	}
	if (info.next_lsn + (uint64_t)count > log->next_lsn)
		log->next_lsn = info.next_lsn + (uint64_t)count;
	int rc = pmwal_appendv(w, iov, count, NULL);

	if (rc == 0)
		for (int i = 0; i < count; i++)
			log->truth[info.next_lsn + (uint64_t)i].acked = true;
	return rc;
}

/* One session: open, a few batches and releases, then the chosen end. */
static struct sim_dev *session(struct sim_dev *sim, struct fuzz_log *log, uint64_t *x,
			       bool create, uint8_t *buf)
{
	struct pmwal *w;
	int batches = (int)(next(x) % 24);
	int end = (int)(next(x) % 4); /* 0-1 close, 2 stop, 3 crash in a commit */

	if (open_sim(sim, create ? PMWAL_OPEN_CREATE : 0, &w))
		return sim;
	if (end == 3) {
		/* One draw a statement: the order of a call's arguments is
		 * unspecified (gcc and clang differ), and the log must not be. */
		uint64_t at = next(x) % (uint64_t)(batches + 1);
		enum sim_tear tear = (enum sim_tear)(next(x) % 5);
		uint64_t arg = next(x) % 16;

		sim_crash_at(sim, sim_commits(sim) + at, tear, arg);
	}
	for (int i = 0; i < batches; i++) {
		int rc = append_batch(w, log, x, buf);

		if (rc == PMWAL_EFULL || (rc == 0 && next(x) % 6 == 0)) {
			uint64_t durable = pmwal_durable_lsn(w);

			rc = pmwal_release(w, durable - durable / 4 + 1);
		}
		if (rc && rc != PMWAL_EFULL)
			break;
	}
	if (end == 2 && !sim_dead(sim))
		sim_crash_at(sim, sim_commits(sim), SIM_TEAR_NONE, 0); /* close writes nothing */
	pmwal_close(w);
	if (!sim_dead(sim))
		return sim;
	struct sim_dev *fresh = sim_from_image(sim_image(sim), sim_size(sim));

	sim_free(sim);
	return fresh;
}

/* The engine's promise on an image with no damage but crashes: every
 * acknowledged record from the head on is there, byte for byte. */
static int check_promise(const struct fuzz_log *log)
{
	const struct ref_result *r = &log->ref;
	size_t i = 0;

	if (r->status != REF_OK || r->verdict == PMWAL_CORRUPT) {
		fprintf(stderr, "fuzz_log: undamaged log reads as %s (%s)\n",
			r->status != REF_OK ? "no log" : "CORRUPT", r->why);
		return -1;
	}
	for (uint64_t lsn = r->sb.head_lsn; lsn < log->next_lsn; lsn++) {
		const struct fuzz_truth *t = &log->truth[lsn];

		while (i < r->nrec && r->rec[i].lsn < lsn)
			i++;
		bool found = i < r->nrec && r->rec[i].lsn == lsn;

		if (t->acked && (!found || r->rec[i].len != t->len || r->rec[i].hash != t->hash)) {
			fprintf(stderr, "fuzz_log: acknowledged LSN %llu %s\n",
				(unsigned long long)lsn, found ? "changed" : "missing");
			return -1;
		}
	}
	return 0;
}

int fuzz_log_build(uint64_t seed, struct fuzz_log *log)
{
	uint64_t x = seed;
	uint64_t ring = 12 + next(&x) % 36;
	int sessions = 1 + (int)(next(&x) % 4);
	uint8_t *buf = malloc(3 * 12000);
	struct sim_dev *sim;

	memset(log, 0, sizeof(*log));
	log->ring_blocks = ring;
	log->size = WAL_RING_OFFSET + ring * WAL_BLOCK_BYTES;
	log->next_lsn = 1;
	sim = sim_new(log->size);
	if (!sim || !buf) {
		free(buf);
		sim_free(sim);
		return -ENOMEM;
	}
	for (int s = 0; s < sessions && sim; s++)
		sim = session(sim, log, &x, s == 0, buf);
	free(buf);
	if (!sim)
		return -ENOMEM;
	log->image = malloc(log->size);
	if (log->image)
		memcpy(log->image, sim_image(sim), log->size);
	sim_free(sim);
	if (!log->image || ref_parse(log->image, log->size, &log->ref))
		return -ENOMEM;
	return check_promise(log);
}

void fuzz_log_free(struct fuzz_log *log)
{
	free(log->image);
	log->image = NULL;
	ref_free(&log->ref);
}

static int read_records(struct pmwal *w, size_t limit, struct fuzz_seen *seen)
{
	struct pmwal_iter *it;
	uint64_t lsn;
	const void *data;
	size_t len;

	if (pmwal_iter_open(w, 0, &it))
		return 0;
	while (seen->nrec < limit && pmwal_iter_next(it, &lsn, &data, &len) == 1) {
		seen->rec[seen->nrec++] =
		    (struct ref_record){.lsn = lsn, .len = len, .hash = XXH3_64bits(data, len)};
	}
	pmwal_iter_close(it);
	return 0;
}

int fuzz_seen_read(const uint8_t *img, size_t size, struct fuzz_seen *seen)
{
	/* A ring holds fewer records than a fifth of its bytes (4-byte length,
	 * one byte at least). */
	size_t limit = size / 5 + 1;
	struct sim_dev *sim = sim_from_image(img, size);
	struct pmwal *w;

	memset(seen, 0, sizeof(*seen));
	seen->rec = malloc(limit * sizeof(*seen->rec));
	if (!sim || !seen->rec) {
		sim_free(sim);
		return -ENOMEM;
	}
	seen->rc = open_sim(sim, PMWAL_OPEN_READONLY, &w);
	if (seen->rc == 0) {
		const struct pmwal_report *rep = pmwal_recovery_report(w);
		struct pmwal_info info;

		seen->verdict = rep->verdict;
		pmwal_stat(w, &info);
		seen->head_lsn = info.head_lsn;
		read_records(w, limit, seen);
		pmwal_close(w);
	} else if (seen->rc == PMWAL_ECORRUPT) {
		/* Salvage goes past the damage: it must not crash either. */
		struct fuzz_seen salvaged = {.rec = malloc(limit * sizeof(*seen->rec))};

		if (salvaged.rec && open_sim(sim, PMWAL_OPEN_READONLY | PMWAL_OPEN_SALVAGE, &w) == 0) {
			read_records(w, limit, &salvaged);
			pmwal_close(w);
		}
		free(salvaged.rec);
	}
	sim_free(sim);
	return 0;
}

void fuzz_seen_free(struct fuzz_seen *seen)
{
	free(seen->rec);
	seen->rec = NULL;
}

static const char *verdict_name(int v)
{
	return v == PMWAL_CLEAN ? "CLEAN" : v == PMWAL_TORN_TAIL ? "TORN_TAIL" : "CORRUPT";
}

static bool span_touched(const struct fuzz_log *log, const bool *touched, uint64_t first,
			 uint64_t last)
{
	if (!touched)
		return false;
	for (uint64_t s = first; s <= last && s - first < log->ring_blocks; s++)
		if (touched[s % log->ring_blocks])
			return true;
	return false;
}

static int fail(const char *what, const struct ref_result *ref, const struct fuzz_seen *seen)
{
	fprintf(stderr,
		"fuzz_check: %s (pmwal: rc %d verdict %s, %zu records; reference: status %d "
		"verdict %s, %zu records: %s)\n",
		what, seen->rc, seen->rc ? "-" : verdict_name(seen->verdict), seen->nrec,
		ref->status, verdict_name(ref->verdict), ref->nrec, ref->why);
	return -1;
}

/* Every acknowledged record in [head, end_seq) whose blocks are untouched. */
static int check_proven(const struct fuzz_log *log, const bool *touched,
			const struct ref_result *ref, const struct fuzz_seen *seen)
{
	const struct ref_result *orig = &log->ref;
	size_t j = 0;

	for (size_t i = 0; i < orig->nrec; i++) {
		const struct ref_record *o = &orig->rec[i];
		const struct fuzz_truth *t = &log->truth[o->lsn];

		if (!t->acked || o->lsn < ref->sb.head_lsn || o->last_seq >= ref->sb.end_seq ||
		    o->first_seq < ref->sb.head_seq ||
		    span_touched(log, touched, o->first_seq, o->last_seq))
			continue;
		while (j < seen->nrec && seen->rec[j].lsn < o->lsn)
			j++;
		if (j == seen->nrec || seen->rec[j].lsn != o->lsn || seen->rec[j].hash != t->hash) {
			char what[96];

			snprintf(what, sizeof(what),
				 "acknowledged LSN %llu before end_seq %s without CORRUPT",
				 (unsigned long long)o->lsn,
				 j < seen->nrec && seen->rec[j].lsn == o->lsn ? "changed" : "dropped");
			return fail(what, ref, seen);
		}
	}
	return 0;
}

int fuzz_check(const struct fuzz_log *log, const bool *touched, const struct ref_result *ref,
	       const struct fuzz_seen *seen)
{
	if (ref->status == REF_NOT_A_LOG)
		return seen->rc == PMWAL_EFORMAT ? 0 : fail("not a log, but pmwal opens it", ref, seen);
	if (ref->status == REF_SB_CORRUPT)
		return seen->rc == PMWAL_ECORRUPT ? 0
						  : fail("superblocks contradict, pmwal disagrees",
							 ref, seen);
	if (seen->rc != 0 && seen->rc != PMWAL_ECORRUPT)
		return fail("open failed with a valid superblock", ref, seen);
	if ((seen->rc == 0 && seen->verdict == PMWAL_CLEAN) != (ref->verdict == PMWAL_CLEAN))
		return fail("verdicts disagree on CLEAN", ref, seen);
	if (seen->rc != 0)
		return 0;
	if (seen->nrec > ref->nrec)
		return fail("pmwal returns more records than the blocks hold", ref, seen);
	for (size_t i = 0; i < seen->nrec; i++) {
		const struct ref_record *a = &seen->rec[i], *b = &ref->rec[i];

		if (a->lsn != b->lsn || a->len != b->len || a->hash != b->hash) {
			char what[96];

			snprintf(what, sizeof(what), "record %zu (LSN %llu) is not the reference's",
				 i, (unsigned long long)a->lsn);
			return fail(what, ref, seen);
		}
		if (!log || span_touched(log, touched, b->first_seq, b->last_seq))
			continue;
		if (a->lsn >= log->next_lsn || log->truth[a->lsn].hash != a->hash) {
			char what[96];

			snprintf(what, sizeof(what), "LSN %llu was never written with these bytes",
				 (unsigned long long)a->lsn);
			return fail(what, ref, seen);
		}
	}
	return log ? check_proven(log, touched, ref, seen) : 0;
}
