// SPDX-License-Identifier: MIT
/*
 * raft_conformance.c - the storage contract raft relies on, checked on
 * libpmwal-raft (raft/pmwal_raft.h), written for this project:
 * - load after bootstrap, set_term/set_vote, append, truncate and
 *   snapshot_put (with and without trailing entries) in several orders,
 *   across close and reopen;
 * - an append's callback never runs inside append, only once its entries
 *   are durable, and in the order of the appends;
 * - a full log is RAFT_NOSPACE with pmwal's message; a damaged snapshot
 *   file is RAFT_CORRUPT;
 * - power lost at every durability event of a workload on simulated media
 *   (pmem, NVMe, fake PMR): load gives back every entry whose append was
 *   acknowledged, the last term and vote set, and only entries that were
 *   appended.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

#include <pmwal.h>

#include "pmwal_raft.h"

struct node {
	uv_loop_t loop;
	struct raft_uv_transport t;
	struct raft_io *io;
	char dir[256];
	char target[300];
	int closed;
	raft_term term; /* the last term set: raft sets a term before it appends in it */
};

static char base[256];

static void setup(void)
{
	snprintf(base, sizeof(base), "/var/tmp/pmwal-raftc-XXXXXX");
	cr_assert_not_null(mkdtemp(base));
	char st[300];

	snprintf(st, sizeof(st), "%s/status", base);
	mkdir(st, 0755);
	setenv("PMWAL_STATUS_DIR", st, 1);
}

static void teardown(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	cr_assert_eq(system(cmd), 0);
}

static int node_open(struct node *n, const char *target, uint64_t cap, int create, char *err)
{
	struct pmwal_raft_options o = {.dir = n->dir, .target = target, .capacity_bytes = cap,
				       .create = create};

	cr_assert_eq(uv_loop_init(&n->loop), 0);
	cr_assert_eq(raft_uv_tcp_init(&n->t, &n->loop), 0);
	int rv = pmwal_raft_init(&n->io, &n->loop, &n->t, &o, err, 512);

	if (rv) { /* nothing of the node is left */
		raft_uv_tcp_close(&n->t);
		uv_run(&n->loop, UV_RUN_DEFAULT);
		cr_assert_eq(uv_loop_close(&n->loop), 0);
		return rv;
	}
	cr_assert_eq(n->io->init(n->io, 1, "127.0.0.1:9901"), 0, "%s", n->io->errmsg);
	n->closed = 0;
	return 0;
}

static void on_closed(struct raft_io *io)
{
	struct node *n = io->data;

	n->closed = 1;
}

static void node_close(struct node *n)
{
	n->io->data = n;
	n->io->close(n->io, on_closed);
	while (!n->closed)
		uv_run(&n->loop, UV_RUN_ONCE);
	pmwal_raft_free(n->io);
	raft_uv_tcp_close(&n->t);
	uv_run(&n->loop, UV_RUN_DEFAULT);
	cr_assert_eq(uv_loop_close(&n->loop), 0);
}

static struct node *node_new(const char *name, const char *target, uint64_t cap, int create)
{
	struct node *n = calloc(1, sizeof(*n));
	char err[512] = "";

	snprintf(n->dir, sizeof(n->dir), "%s/%s", base, name);
	mkdir(n->dir, 0755);
	snprintf(n->target, sizeof(n->target), "%s", target ? target : "");
	cr_assert_eq(node_open(n, target, cap, create, err), 0, "%s", err);
	return n;
}

static void node_reopen(struct node *n)
{
	char err[512] = "";

	node_close(n);
	cr_assert_eq(node_open(n, n->target[0] ? n->target : NULL, 0, 0, err), 0, "%s", err);
}

/* ---- what load gives --------------------------------------------------------- */

struct state {
	raft_term term;
	raft_id vote;
	struct raft_snapshot *snap;
	raft_index start;
	struct raft_entry *e;
	size_t n;
};

static void free_snapshot(struct raft_snapshot *s)
{
	if (!s)
		return;
	raft_configuration_close(&s->configuration);
	for (unsigned i = 0; i < s->n_bufs; i++)
		raft_free(s->bufs[i].base);
	raft_free(s->bufs);
	raft_free(s);
}

static void state_free(struct state *s)
{
	for (size_t i = 0; i < s->n; i++)
		raft_free(s->e[i].batch);
	raft_free(s->e);
	free_snapshot(s->snap);
	memset(s, 0, sizeof(*s));
}

static int load(struct node *n, struct state *s)
{
	memset(s, 0, sizeof(*s));
	return n->io->load(n->io, &s->term, &s->vote, &s->snap, &s->start, &s->e, &s->n);
}

/* ---- appends ------------------------------------------------------------------ */

struct app {
	struct raft_io_append req;
	int done, status, order;
	struct node *n;
};

static int in_append, completions;

static void on_append(struct raft_io_append *req, int status)
{
	struct app *a = req->data;

	cr_assert_eq(in_append, 0, "an append callback ran inside append");
	a->done = 1;
	a->status = status;
	a->order = ++completions;
}

/* @count entries from @index, term @term, data "e<index>.<term>". */
static int append(struct node *n, struct app *a, raft_index index, unsigned count,
		  raft_term term)
{
	struct raft_entry *e = calloc(count, sizeof(*e));
	char (*data)[32] = calloc(count, 32);

	if (term > n->term) {
		cr_assert_eq(n->io->set_term(n->io, term), 0, "%s", n->io->errmsg);
		n->term = term;
	}

	for (unsigned i = 0; i < count; i++) {
		int len = snprintf(data[i], 32, "e%llu.%llu", index + i, term);

		e[i] = (struct raft_entry){.term = term, .type = RAFT_COMMAND,
					   .buf = {data[i], (size_t)len}};
	}
	*a = (struct app){.req = {.data = a}, .n = n};
	in_append = 1;
	int rv = n->io->append(n->io, &a->req, e, count, on_append);

	in_append = 0;
	cr_assert_eq(a->done, 0, "callback before append returned");
	free(e); /* pmwal staged a copy */
	free(data);
	return rv;
}

static void wait_for(struct node *n, struct app *a)
{
	for (int i = 0; !a->done && i < 100000; i++)
		uv_run(&n->loop, UV_RUN_ONCE);
	cr_assert(a->done, "append never completed");
}

static void check_entry(const struct raft_entry *e, raft_index index, raft_term term)
{
	char want[32];
	int len = snprintf(want, sizeof(want), "e%llu.%llu", index, term);

	cr_assert_eq(e->term, term, "entry %llu: term %llu, want %llu", index, e->term, term);
	cr_assert_eq(e->buf.len, (size_t)len, "entry %llu: %zu bytes", index, e->buf.len);
	cr_assert(!memcmp(e->buf.base, want, (size_t)len), "entry %llu: wrong data", index);
	cr_assert_not_null(e->batch, "entry %llu without a batch", index);
}

TestSuite(raft, .init = setup, .fini = teardown, .timeout = 300);

Test(raft, empty_then_bootstrap_then_term_and_vote_survive_reopen)
{
	struct node *n = node_new("a", NULL, 4 << 20, 0);
	struct state s;
	struct raft_configuration conf;

	cr_assert_eq(load(n, &s), 0, "%s", n->io->errmsg);
	cr_assert_eq(s.term, 0);
	cr_assert_eq(s.n, 0);
	cr_assert_eq(s.start, 1);
	cr_assert_null(s.snap);
	raft_configuration_init(&conf);
	raft_configuration_add(&conf, 1, "127.0.0.1:9901", RAFT_VOTER);
	raft_configuration_add(&conf, 2, "127.0.0.1:9902", RAFT_VOTER);
	cr_assert_eq(n->io->bootstrap(n->io, &conf), 0, "%s", n->io->errmsg);
	cr_assert_eq(n->io->bootstrap(n->io, &conf), RAFT_CANTBOOTSTRAP);
	raft_configuration_close(&conf);
	cr_assert_eq(n->io->set_term(n->io, 7), 0);
	n->term = 7;
	cr_assert_eq(n->io->set_vote(n->io, 2), 0);
	node_reopen(n);
	cr_assert_eq(load(n, &s), 0, "%s", n->io->errmsg);
	cr_assert_eq(s.term, 7);
	cr_assert_eq(s.vote, 2);
	cr_assert_eq(s.start, 1);
	cr_assert_eq(s.n, 1);
	cr_assert_eq(s.e[0].type, RAFT_CHANGE);
	cr_assert_eq(s.e[0].term, 1);
	state_free(&s);
	node_close(n);
	free(n);
}

Test(raft, appends_call_back_after_durability_in_order_and_come_back)
{
	struct node *n = node_new("a", NULL, 16 << 20, 0);
	struct state s;
	struct app a[50];

	cr_assert_eq(load(n, &s), 0);
	completions = 0;
	for (int i = 0; i < 50; i++) /* all in flight at once */
		cr_assert_eq(append(n, &a[i], 1 + (raft_index)i * 4, 4, 3), 0, "%s",
			     n->io->errmsg);
	for (int i = 0; i < 50; i++) {
		wait_for(n, &a[i]);
		cr_assert_eq(a[i].status, 0);
		cr_assert_eq(a[i].order, i + 1, "callbacks out of order");
	}
	cr_assert_geq(pmwal_durable_lsn(pmwal_raft_log(n->io)), 200);
	node_reopen(n);
	cr_assert_eq(load(n, &s), 0, "%s", n->io->errmsg);
	cr_assert_eq(s.n, 200);
	for (size_t i = 0; i < s.n; i++)
		check_entry(&s.e[i], i + 1, 3);
	state_free(&s);
	node_close(n);
	free(n);
}

Test(raft, truncate_is_ordered_between_appends_in_flight)
{
	struct node *n = node_new("a", NULL, 16 << 20, 0);
	struct state s;
	struct app a1, a2, a3;

	cr_assert_eq(load(n, &s), 0);
	cr_assert_eq(append(n, &a1, 1, 10, 1), 0);
	cr_assert_eq(n->io->truncate(n->io, 6), 0, "%s", n->io->errmsg); /* a1 in flight */
	cr_assert_eq(append(n, &a2, 6, 3, 2), 0);
	cr_assert_eq(n->io->truncate(n->io, 8), 0);
	cr_assert_eq(append(n, &a3, 8, 5, 3), 0);
	cr_assert_eq(n->io->truncate(n->io, 99), RAFT_INVALID, "beyond the last entry");
	wait_for(n, &a3);
	cr_assert(a1.done && a2.done);
	node_reopen(n);
	cr_assert_eq(load(n, &s), 0, "%s", n->io->errmsg);
	cr_assert_eq(s.n, 12);
	for (raft_index i = 1; i <= 12; i++)
		check_entry(&s.e[i - 1], i, i < 6 ? 1 : i < 8 ? 2 : 3);
	state_free(&s);
	node_close(n);
	free(n);
}

struct sput {
	struct raft_io_snapshot_put req;
	int done, status;
};

static void on_put(struct raft_io_snapshot_put *req, int status)
{
	struct sput *p = req->data;

	p->done = 1;
	p->status = status;
}

struct sget {
	struct raft_io_snapshot_get req;
	int done, status;
	struct raft_snapshot *s;
};

static void on_get(struct raft_io_snapshot_get *req, struct raft_snapshot *s, int status)
{
	struct sget *g = req->data;

	g->done = 1;
	g->status = status;
	g->s = s;
}

static int snapshot_put(struct node *n, raft_index index, raft_term term, unsigned trailing)
{
	struct raft_snapshot snap = {.index = index, .term = term, .configuration_index = 1};
	struct raft_buffer buf = {"state-of-the-fsm", 16};
	struct sput p = {.req = {.data = &p}};

	raft_configuration_init(&snap.configuration);
	raft_configuration_add(&snap.configuration, 1, "127.0.0.1:9901", RAFT_VOTER);
	snap.bufs = &buf;
	snap.n_bufs = 1;
	int rv = n->io->snapshot_put(n->io, trailing, &p.req, &snap, on_put);

	cr_assert_eq(rv, 0, "%s", n->io->errmsg);
	while (!p.done)
		uv_run(&n->loop, UV_RUN_ONCE);
	raft_configuration_close(&snap.configuration);
	return p.status;
}

Test(raft, snapshot_with_trailing_releases_the_log_behind_it_and_keeps_term_and_vote)
{
	/* A small log: without the releases behind each snapshot it fills. */
	struct node *n = node_new("a", NULL, 1 << 20, 0);
	struct state s;
	struct app a;
	raft_index next = 1;

	cr_assert_eq(load(n, &s), 0);
	cr_assert_eq(n->io->set_term(n->io, 5), 0);
	n->term = 5;
	cr_assert_eq(n->io->set_vote(n->io, 3), 0);
	for (int round = 0; round < 40; round++) {
		cr_assert_eq(append(n, &a, next, 50, 5), 0, "round %d: %s", round, n->io->errmsg);
		wait_for(n, &a);
		cr_assert_eq(a.status, 0);
		next += 50;
		cr_assert_eq(snapshot_put(n, next - 1, 5, 20), 0, "%s", n->io->errmsg);
	}
	node_reopen(n);
	cr_assert_eq(load(n, &s), 0, "%s", n->io->errmsg);
	cr_assert_eq(s.term, 5);
	cr_assert_eq(s.vote, 3);
	cr_assert_not_null(s.snap);
	cr_assert_eq(s.snap->index, next - 1);
	cr_assert_eq(s.start, next - 1 - 20, "start %llu", s.start);
	cr_assert_eq(s.n, 21);
	for (size_t i = 0; i < s.n; i++)
		check_entry(&s.e[i], s.start + i, 5);
	cr_assert_eq(s.snap->n_bufs, 1);
	cr_assert_eq(s.snap->bufs[0].len, 16);
	cr_assert(!memcmp(s.snap->bufs[0].base, "state-of-the-fsm", 16));
	cr_assert_eq(s.snap->configuration.n, 1);
	cr_assert_str_eq(s.snap->configuration.servers[0].address, "127.0.0.1:9901");
	state_free(&s);
	/* snapshot_get gives the same. */
	struct sget g = {.req = {.data = &g}};

	cr_assert_eq(n->io->snapshot_get(n->io, &g.req, on_get), 0);
	while (!g.done)
		uv_run(&n->loop, UV_RUN_ONCE);
	cr_assert_eq(g.status, 0);
	cr_assert_eq(g.s->index, next - 1);
	free_snapshot(g.s);
	node_close(n);
	free(n);
}

Test(raft, installed_snapshot_replaces_the_log)
{
	struct node *n = node_new("a", NULL, 4 << 20, 0);
	struct state s;
	struct app a;

	cr_assert_eq(load(n, &s), 0);
	cr_assert_eq(append(n, &a, 1, 30, 2), 0);
	wait_for(n, &a);
	cr_assert_eq(snapshot_put(n, 100, 4, 0), 0, "%s", n->io->errmsg);
	cr_assert_eq(append(n, &a, 101, 5, 4), 0, "%s", n->io->errmsg);
	wait_for(n, &a);
	/* The log after the install is indexed from the snapshot: a conflicting
	 * suffix is cut where raft says, in the same process. */
	cr_assert_eq(n->io->truncate(n->io, 104), 0, "%s", n->io->errmsg);
	cr_assert_eq(append(n, &a, 104, 3, 5), 0, "%s", n->io->errmsg);
	wait_for(n, &a);
	cr_assert_eq(n->io->truncate(n->io, 100), RAFT_INVALID, "below the snapshot's log");
	cr_assert_eq(n->io->truncate(n->io, 107), RAFT_INVALID, "beyond the last entry");
	node_reopen(n);
	cr_assert_eq(load(n, &s), 0, "%s", n->io->errmsg);
	cr_assert_eq(s.snap->index, 100);
	cr_assert_eq(s.start, 101);
	cr_assert_eq(s.n, 6);
	for (size_t i = 0; i < s.n; i++)
		check_entry(&s.e[i], 101 + i, i < 3 ? 4 : 5);
	state_free(&s);
	node_close(n);
	free(n);
}

Test(raft, a_full_log_is_nospace_with_the_reason_and_a_damaged_snapshot_is_corrupt)
{
	struct node *n = node_new("a", NULL, 256 << 10, 0);
	struct state s;
	struct app a;
	int rv = 0;
	raft_index next = 1;

	cr_assert_eq(load(n, &s), 0);
	for (int i = 0; i < 10000 && !rv; i++) {
		rv = append(n, &a, next, 20, 1);
		if (!rv) {
			wait_for(n, &a);
			next += 20;
		}
	}
	cr_assert_eq(rv, RAFT_NOSPACE, "%d: %s", rv, n->io->errmsg);
	cr_assert(strstr(n->io->errmsg, "append"), "%s", n->io->errmsg);
	cr_assert_eq(snapshot_put(n, next - 1, 1, 0), 0, "%s", n->io->errmsg);
	cr_assert_eq(append(n, &a, next, 20, 1), 0, "space again after the snapshot: %s",
		     n->io->errmsg);
	wait_for(n, &a);
	node_close(n);
	/* One byte of the snapshot flipped. */
	char path[400];

	snprintf(path, sizeof(path), "%s/snapshot", n->dir);
	FILE *f = fopen(path, "r+b");

	cr_assert_not_null(f);
	fseek(f, 40, SEEK_SET);
	int c = fgetc(f);

	fseek(f, 40, SEEK_SET);
	fputc(c ^ 0x10, f);
	fclose(f);
	char err[512];

	cr_assert_eq(node_open(n, NULL, 0, 0, err), 0, "%s", err);
	cr_assert_eq(load(n, &s), RAFT_CORRUPT);
	cr_assert(strstr(n->io->errmsg, "snapshot"), "%s", n->io->errmsg);
	node_close(n);
	free(n);
}

Test(raft, a_second_node_on_a_directory_too_big_entries_and_bad_options_are_refused)
{
	struct node *n = node_new("a", NULL, 1 << 20, 0);
	struct node m = {0};
	struct state s;
	struct app a;
	char err[512] = "";

	snprintf(m.dir, sizeof(m.dir), "%s", n->dir);
	cr_assert_eq(node_open(&m, NULL, 0, 0, err), RAFT_BUSY);
	cr_assert(strstr(err, "another node has this directory open"), "%s", err);
	/* The same log under another directory: the log's own lock. */
	snprintf(m.dir, sizeof(m.dir), "%s/b", base);
	mkdir(m.dir, 0755);
	char target[400];

	snprintf(target, sizeof(target), "%s/log", n->dir);
	cr_assert_eq(node_open(&m, target, 0, 0, err), RAFT_BUSY, "%s", err);
	snprintf(m.dir, sizeof(m.dir), "%s/missing", base);
	cr_assert_neq(node_open(&m, NULL, 0, 0, err), 0);
	cr_assert(strstr(err, "missing"), "%s", err);
	/* An entry larger than the log's records: refused whole, then more. */
	cr_assert_eq(load(n, &s), 0);
	struct raft_entry big[2] = {{.term = 1, .type = RAFT_COMMAND, .buf = {"x", 1}},
				    {.term = 1, .type = RAFT_COMMAND,
				     .buf = {calloc(1, 1 << 20), 1 << 20}}};

	a = (struct app){.req = {.data = &a}, .n = n};
	cr_assert_eq(n->io->append(n->io, &a.req, big, 2, on_append), RAFT_TOOBIG, "%s",
		     n->io->errmsg);
	free(big[1].buf.base);
	cr_assert_eq(append(n, &a, 1, 3, 1), 0, "%s", n->io->errmsg);
	wait_for(n, &a);
	node_reopen(n);
	cr_assert_eq(load(n, &s), 0);
	cr_assert_eq(s.n, 3, "the refused batch left nothing");
	state_free(&s);
	node_close(n);
	free(n);
}

/* Opens @n's directory again and wants @rv with @what in the message (from
 * init, or from load where init passed). */
static void refused(struct node *n, const char *target, int rv, const char *what,
		    const char *why)
{
	char err[512] = "";
	struct state s;
	int got = node_open(n, target, 0, 0, err);

	if (!got) {
		got = load(n, &s);
		snprintf(err, sizeof(err), "%s", n->io->errmsg);
		if (!got)
			state_free(&s);
		node_close(n);
	}
	cr_assert_eq(got, rv, "%s: %d (%s), want %d", why, got, err, rv);
	cr_assert(strstr(err, what), "%s: '%s' does not say '%s'", why, err, what);
}

static void copy_file(const char *from, const char *to)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cp -f '%s' '%s'", from, to);
	cr_assert_eq(system(cmd), 0);
}

/* Term and vote are never taken back: damage, loss or a file of another
 * time is refused, never read as an older term or no vote. */
Test(raft, damaged_lost_or_foreign_metadata_logs_and_snapshots_are_refused)
{
	struct node *n = node_new("a", NULL, 4 << 20, 0);
	struct node *b = node_new("b", NULL, 4 << 20, 0);
	struct state s;
	struct app a;
	char meta[400], saved[400], path[400];

	cr_assert_eq(load(n, &s), 0);
	cr_assert_eq(append(n, &a, 1, 5, 3), 0);
	wait_for(n, &a);
	cr_assert_eq(n->io->set_vote(n->io, 2), 0);
	cr_assert_eq(load(b, &s), 0);
	node_close(b);
	node_close(n);
	snprintf(meta, sizeof(meta), "%s/meta", n->dir);
	snprintf(saved, sizeof(saved), "%s/meta.saved", base);
	copy_file(meta, saved);
	for (int off = 0; off < 40; off++) { /* every byte */
		FILE *f = fopen(meta, "r+");

		fseek(f, off, SEEK_SET);
		int c = fgetc(f);

		fseek(f, off, SEEK_SET);
		fputc(c ^ 0x01, f);
		fclose(f);
		refused(n, NULL, RAFT_CORRUPT, "damaged", "a flipped bit in meta");
		copy_file(saved, meta);
	}
	cr_assert_eq(truncate(meta, 39), 0);
	refused(n, NULL, RAFT_CORRUPT, "damaged", "meta cut short");
	cr_assert_eq(truncate(meta, 0), 0);
	refused(n, NULL, RAFT_CORRUPT, "damaged", "meta emptied");
	unlink(meta);
	refused(n, NULL, RAFT_CORRUPT, "is missing, but the log holds records", "meta removed");
	cr_assert_eq(mkfifo(meta, 0644), 0);
	refused(n, NULL, RAFT_CORRUPT, "not a regular file", "meta a FIFO");
	unlink(meta);
	/* Another node's meta (its own log's id, term 0) with this log. */
	snprintf(path, sizeof(path), "%s/meta", b->dir);
	copy_file(path, meta);
	refused(n, NULL, RAFT_CORRUPT, "another node's", "b's meta in a's directory");
	copy_file(saved, meta);
	/* Another node's log under this directory. */
	snprintf(path, sizeof(path), "%s/log", b->dir);
	refused(n, path, RAFT_CORRUPT, "another node's", "b's log with a's meta");
	/* The log gone: not created again under the node's state. */
	snprintf(path, sizeof(path), "%s/log", n->dir);
	snprintf(saved, sizeof(saved), "%s/log.saved", base);
	cr_assert_eq(rename(path, saved), 0);
	refused(n, NULL, RAFT_CORRUPT, "no such log", "a's log removed");
	cr_assert(access(path, F_OK) != 0, "a new log was created in its place");
	cr_assert_eq(rename(saved, path), 0);
	/* Everything back: it loads as it was. */
	char err[512] = "";

	cr_assert_eq(node_open(n, NULL, 0, 0, err), 0, "%s", err);
	cr_assert_eq(load(n, &s), 0, "%s", n->io->errmsg);
	cr_assert_eq(s.term, 3);
	cr_assert_eq(s.vote, 2);
	cr_assert_eq(s.n, 5);
	state_free(&s);
	/* A snapshot installed (the log released whole), then lost. */
	cr_assert_eq(snapshot_put(n, 50, 3, 0), 0, "%s", n->io->errmsg);
	node_close(n);
	snprintf(path, sizeof(path), "%s/snapshot", n->dir);
	snprintf(saved, sizeof(saved), "%s/snapshot.saved", base);
	cr_assert_eq(rename(path, saved), 0);
	refused(n, NULL, RAFT_CORRUPT, "there is no snapshot", "the installed snapshot lost");
	cr_assert_eq(mkfifo(path, 0644), 0);
	refused(n, NULL, RAFT_CORRUPT, "not a regular file", "the snapshot a FIFO");
	unlink(path);
	cr_assert_eq(rename(saved, path), 0);
	/* A failed meta write changes nothing and stops nothing. */
	cr_assert_eq(node_open(n, NULL, 0, 0, err), 0, "%s", err);
	cr_assert_eq(load(n, &s), 0, "%s", n->io->errmsg);
	state_free(&s);
	snprintf(path, sizeof(path), "%s/meta.tmp", n->dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	cr_assert_eq(n->io->set_term(n->io, 9), RAFT_IOERR);
	cr_assert(strstr(n->io->errmsg, "unchanged"), "%s", n->io->errmsg);
	cr_assert_eq(rmdir(path), 0);
	cr_assert_eq(n->io->set_term(n->io, 9), 0, "%s", n->io->errmsg);
	node_reopen(n);
	cr_assert_eq(load(n, &s), 0, "%s", n->io->errmsg);
	cr_assert_eq(s.term, 9);
	cr_assert_eq(s.vote, 0);
	cr_assert_eq(s.snap->index, 50);
	state_free(&s);
	node_close(n);
	free(n);
	free(b);
}

static int sends_done;

static void on_send(struct raft_io_send *req, int status)
{
	(void)req;
	(void)status;
	sends_done++;
}

/*
 * raft 0.15 answers an installed snapshot to the leader it had when the
 * install began; a node that became a candidate meanwhile has none, and the
 * transport took the length of the NULL address (SIGSEGV). The storage's
 * send refuses a message without an address, and never calls back.
 */
Test(raft, a_message_without_an_address_is_refused_not_sent)
{
	struct node *n = node_new("a", NULL, 4u << 20, 1);
	struct raft_io_send req = {0};
	struct raft_message m = {.type = RAFT_IO_APPEND_ENTRIES_RESULT,
				 .server_id = 2,
				 .server_address = NULL};

	m.append_entries_result.term = 1;
	m.append_entries_result.last_log_index = 1;
	int rv = n->io->send(n->io, &req, &m, on_send);

	cr_expect_eq(rv, RAFT_NOCONNECTION, "send without an address: %d (%s)", rv,
		     n->io->errmsg);
	cr_expect(strstr(n->io->errmsg, "no address"), "%s", n->io->errmsg);
	uv_run(&n->loop, UV_RUN_NOWAIT);
	cr_expect_eq(sends_done, 0, "a refused send called back");
	node_close(n);
	free(n);
}

/* A node killed while it made DIR/log (or on a full disk) left a log with
 * no superblock or none at all: made again only while the node has no state. */
Test(raft, a_log_whose_creation_was_cut_short_is_made_again_only_for_a_new_node)
{
	struct node n = {0};
	struct state s;
	char path[400], meta[400], err[512] = "";

	snprintf(n.dir, sizeof(n.dir), "%s/a", base);
	mkdir(n.dir, 0755);
	snprintf(path, sizeof(path), "%s/log", n.dir);
	snprintf(meta, sizeof(meta), "%s/meta", n.dir);
	for (int size = 0; size < 2; size++) { /* 0 bytes, then 1 MiB of zeros */
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		cr_assert_geq(fd, 0);
		close(fd);
		cr_assert_eq(truncate(path, size << 20), 0);
		cr_assert_eq(node_open(&n, NULL, 0, 0, err), 0, "%d MiB: %s", size, err);
		cr_assert_eq(load(&n, &s), 0, "%s", n.io->errmsg);
		state_free(&s);
		node_close(&n);
		if (!size)
			cr_assert_eq(unlink(meta) | unlink(path), 0);
	}
	/* The node has state now: a log cut short is not made again. */
	cr_assert_eq(truncate(path, 0), 0);
	cr_assert_eq(truncate(path, 1 << 20), 0);
	cr_assert_neq(node_open(&n, NULL, 0, 0, err), 0, "a zeroed log under a meta opened");
	cr_assert(strstr(err, "no superblock"), "%s", err);
}

/* ---- power loss at every event ------------------------------------------------- */

struct model {
	raft_term term; /* the last set_term/set_vote that returned 0 */
	raft_id vote;
	raft_index acked;	 /* entries 1..acked acknowledged */
	raft_index max_appended; /* the highest index ever handed to append */
};

static raft_term term_of(raft_index i)
{
	return 1 + i / 7; /* a term per 7 entries */
}

/* Appends, a truncate of entries already acknowledged and their rewrite,
 * term and vote changes, snapshots with trailing entries; stops at the first
 * failure. Entry i is always "e<i>.<term_of(i)>", so a rewrite is the same. */
static void workload(struct node *n, struct model *m)
{
	struct state s;
	struct app a;
	bool rewound = false;

	memset(m, 0, sizeof(*m));
	if (load(n, &s))
		return;
	state_free(&s);
	for (raft_index next = 1; next <= 60;) {
		unsigned count = 1 + next % 4;
		raft_term t = term_of(next);

		if (count > 7 - next % 7) /* a batch within one term */
			count = (unsigned)(7 - next % 7);

		if (t > m->term) { /* terms only grow, as in raft */
			if (n->io->set_term(n->io, t))
				return;
			n->term = t;
			if (n->io->set_vote(n->io, t % 3))
				return;
			m->term = t;
			m->vote = t % 3;
		}
		if (append(n, &a, next, count, t))
			return;
		if (next + count - 1 > m->max_appended)
			m->max_appended = next + count - 1;
		bool cut = next >= 21 && !rewound; /* while the append is in flight */

		if (cut) { /* from here on, raft no longer asks for 19 and 20 */
			if (n->io->truncate(n->io, 19)) {
				wait_for(n, &a); /* its callback writes to a */
				return;
			}
			m->acked = 18;
		}
		wait_for(n, &a);
		if (a.status)
			return;
		if (cut) {
			rewound = true;
			m->acked = 18;
			next = 19;
			continue;
		}
		m->acked = next + count - 1;
		next += count;
		if (next > 40 && next < 48 && snapshot_put(n, next - 1, term_of(next - 1), 5))
			return;
	}
}

static void crash_all(int medium, const char *name)
{
	struct pmwal_sim_options so = {.medium = (uint32_t)medium, .size_bytes = 1 << 20,
				       .seed = 11};
	struct pmwal_sim *sim;
	struct model m;
	char dir[300], cmd[400], err[512];
	uint64_t points = 0, images = 0, acked = 0;

	cr_assert_eq(pmwal_sim_new(&so, &sim), 0);
	const char *target = pmwal_sim_target(sim);
	struct node n = {0};

	/* The metadata files and the snapshot in tmpfs where there is one: the
	 * power loss here is the log's medium's, and fsyncs on a disk would
	 * make the hundreds of runs slow. */
	snprintf(n.dir, sizeof(n.dir), "%s/pmwal-raftc-%d-%s",
		 access("/dev/shm", W_OK) ? base : "/dev/shm", (int)getpid(), name);
	snprintf(dir, sizeof(dir), "%s", n.dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", dir, dir);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(node_open(&n, target, 1 << 20, 1, err), 0, "%s", err);
	workload(&n, &m);
	node_close(&n);
	cr_assert_geq(m.acked, 60, "the workload without a crash acked %llu", m.acked);
	uint64_t events = pmwal_sim_events(sim);

	for (uint64_t e = 0; e < events; e++) {
		pmwal_sim_reset(sim);
		cr_assert_eq(system(cmd), 0);
		pmwal_sim_crash_at(sim, e);
		if (node_open(&n, target, 1 << 20, 1, err))
			continue; /* formatting lost power: no log */
		workload(&n, &m);
		node_close(&n);
		if (!pmwal_sim_crashed(sim))
			pmwal_sim_crash(sim);
		points++;
		acked += m.acked;
		uint64_t count = pmwal_sim_crash_images(sim, NULL);

		for (uint64_t i = 0; i < count && i < 6; i++) {
			uint64_t idx = count <= 6 ? i : i * count / 6;
			struct state s;

			cr_assert_eq(pmwal_sim_apply_image(sim, idx), 0);
			if (node_open(&n, target, 0, 0, err)) {
				/* Only a log whose creation lost power may not open. */
				cr_assert_eq(m.acked, 0, "%s: event %llu image %llu: %s", name,
					     (unsigned long long)e, (unsigned long long)idx, err);
				continue;
			}
			images++;
			int rv = load(&n, &s);

			cr_assert_eq(rv, 0, "%s: event %llu image %llu: %s", name,
				     (unsigned long long)e, (unsigned long long)idx, n.io->errmsg);
			cr_assert_geq(s.term, m.term, "%s: event %llu: term went back", name,
				      (unsigned long long)e);
			if (s.term == m.term)
				cr_assert_eq(s.vote, m.vote, "%s: event %llu: vote lost", name,
					     (unsigned long long)e);
			raft_index last = s.start + s.n - 1;

			if (!s.snap || s.snap->index < m.acked)
				cr_assert_geq(last, m.acked,
					      "%s: event %llu image %llu: entries up to %llu acked, "
					      "load ends at %llu",
					      name, (unsigned long long)e, (unsigned long long)idx,
					      m.acked, last);
			cr_assert_leq(last, m.max_appended, "%s: entries never appended", name);
			for (size_t k = 0; k < s.n; k++)
				check_entry(&s.e[k], s.start + k, term_of(s.start + k));
			state_free(&s);
			node_close(&n);
		}
	}
	cr_log_info("raft storage on %s: %llu events, %llu power losses, %llu images loaded, "
		    "%llu entries acknowledged before them; lost 0",
		    name, (unsigned long long)events, (unsigned long long)points,
		    (unsigned long long)images, (unsigned long long)acked);
	printf("raft_conformance: %s: %llu events, %llu power losses, %llu images loaded, "
	       "%llu entries acknowledged before them; lost 0\n",
	       name, (unsigned long long)events, (unsigned long long)points,
	       (unsigned long long)images, (unsigned long long)acked);
	pmwal_sim_free(sim);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

Test(raft, power_lost_at_every_event_on_pmem) { crash_all(PMWAL_SIM_PMEM, "pmem"); }
Test(raft, power_lost_at_every_event_on_nvme) { crash_all(PMWAL_SIM_NVME, "nvme"); }
Test(raft, power_lost_at_every_event_on_fakepmr) { crash_all(PMWAL_SIM_FAKEPMR, "fakepmr"); }
