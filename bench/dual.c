// SPDX-License-Identifier: MIT
/*
 * dual.c - two (or more) clients on one device at once (seed 001 in docs/bench.md: two hosts
 * on a dual-port SSD): each client is a forked process running its own
 * workload, started together through a pipe; each is reported, and their sum,
 * beside each workload run alone first. Processes, not threads, so the
 * clients share nothing but the device, as two hosts would.
 */
#include "ctx.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define DUAL_CLIENTS_MAX 16
#define DUAL_JSON_MAX	 (4u << 20)

/* What a child hands back: its counters and histograms, and its job JSON. */
struct dual_slot {
	struct dir_result dir[DIR_COUNT];
	uint64_t runtime_ns;
	double usr_s, sys_s;
	int err;
	char json[DUAL_JSON_MAX];
};

/* Client i's spec: the base, and for i >= 1 the --b overrides if given. */
static int client_spec(struct bench_ctx *c, int i, struct io_spec *out)
{
	*out = c->io;
	if (i == 0 || !c->client_b)
		return 0;
	struct bench_ctx b = *c;
	char buf[1024], *save = NULL, *argv[64];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", c->client_b);
	argv[argc++] = "b";
	static char args[64][128];
	for (char *t = strtok_r(buf, " ", &save); t && argc < 63;
	     t = strtok_r(NULL, " ", &save)) {
		snprintf(args[argc], sizeof(args[0]), "%s%s",
			 strncmp(t, "--", 2) ? "--" : "", t);
		argv[argc] = args[argc];
		argc++;
	}
	argv[argc] = NULL;
	b.npos = 0;
	if (ctx_parse(&b, argc, argv)) {
		snprintf(c->err, sizeof(c->err), "--b: %.480s", b.err);
		return -1;
	}
	*out = b.io;
	out->target = c->io.target;
	return 0;
}

static void child(struct io_spec *s, int gate, struct dual_slot *slot, const char *label)
{
	char buf[1];
	char name[96];

	if (read(gate, buf, 1) < 0) { /* EOF when the parent opens the gate */
	}
	struct run_result *r = io_run(s);
	if (!r)
		_exit(1);
	memcpy(slot->dir, r->dir, sizeof(r->dir));
	slot->runtime_ns = r->runtime_ns;
	slot->usr_s = r->usr_s;
	slot->sys_s = r->sys_s;
	slot->err = r->err;
	io_jobname(s, name, sizeof(name));
	json_t *opts = io_options_json(s);
	json_t *job = result_job_json(name, "dual", s->target, label, r, opts);
	char *txt = json_dumps(job, JSON_COMPACT);
	if (txt && strlen(txt) < DUAL_JSON_MAX)
		strcpy(slot->json, txt);
	free(txt);
	_exit(0);
}

static int run_clients(struct bench_ctx *c, struct io_spec *specs, int n,
		       const char *label, struct dual_slot *slots)
{
	int gate[2];
	pid_t pid[DUAL_CLIENTS_MAX];

	if (pipe(gate))
		return -errno;
	fflush(NULL);
	for (int i = 0; i < n; i++) {
		pid[i] = fork();
		if (pid[i] == 0) {
			close(gate[1]);
			child(&specs[i], gate[0], &slots[i], label);
		}
	}
	close(gate[0]);
	close(gate[1]); /* all children start now */
	for (int i = 0; i < n; i++) {
		int st;
		while (waitpid(pid[i], &st, 0) < 0 && errno == EINTR)
			;
	}
	return 0;
}

static json_t *sum_job(struct dual_slot *slots, int n, const char *target,
		       const char *label)
{
	struct run_result *r = result_new();

	for (int i = 0; i < n; i++) {
		for (int d = 0; d < DIR_COUNT; d++) {
			r->dir[d].ops += slots[i].dir[d].ops;
			r->dir[d].bytes += slots[i].dir[d].bytes;
			hist_merge(&r->dir[d].lat, &slots[i].dir[d].lat);
		}
		if (slots[i].runtime_ns > r->runtime_ns)
			r->runtime_ns = slots[i].runtime_ns;
		r->usr_s += slots[i].usr_s;
		r->sys_s += slots[i].sys_s;
	}
	snprintf(r->engine, sizeof(r->engine), "sum of %d clients", n);
	json_t *job = result_job_json("sum of clients", "dual", target, label, r, NULL);
	result_free(r);
	return job;
}

static void add_client_job(struct bench_ctx *c, struct dual_slot *slot,
			   const char *prefix, int i)
{
	json_t *job = json_loads(slot->json, 0, NULL);
	char name[160];

	ctx_note_status(c, slot->err);
	if (!job)
		return;
	snprintf(name, sizeof(name), "c%d %s: %s", i, prefix,
		 json_string_value(json_object_get(job, "jobname")));
	json_object_set_new(job, "jobname", json_string(name));
	json_object_set_new(json_object_get(job, "pmwal"), "client", json_integer(i));
	if (!c->quiet)
		table_row(job);
	root_add_job(c->root, job);
}

int run_dual(struct bench_ctx *c)
{
	struct io_spec specs[DUAL_CLIENTS_MAX];
	char label[48];
	int n = c->clients > 1 ? (int)c->clients : 2;

	if (n > DUAL_CLIENTS_MAX)
		n = DUAL_CLIENTS_MAX;
	if (!c->io.target)
		c->io.target = target_resolve(c->npos ? c->pos[0] : "flash", 0, label,
					      sizeof(label));
	else
		target_resolve(c->io.target, 0, label, sizeof(label));
	/* --size N% is taken once, of the target as it is before any client
	 * writes it. */
	for (int i = 0; i < n; i++)
		if (client_spec(c, i, &specs[i]) ||
		    io_resolve_size(&specs[i], c->err, sizeof(c->err)))
			return -1;
	/* Percentages are of each workload's maximum alone, measured here
	 * once, not by the clients at the same time. */
	for (int i = 0; i < n && !bench_stop; i++)
		io_resolve_caps(&specs[i], NULL);
	struct dual_slot *slots =
	    mmap(NULL, sizeof(*slots) * (size_t)n, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED) {
		snprintf(c->err, sizeof(c->err), "mmap: %s", strerror(errno));
		return -1;
	}
	/* Each distinct workload alone first: the baseline the pair is read against. */
	int alone = c->client_b ? 2 : 1;
	for (int i = 0; i < alone && !bench_stop; i++) {
		run_clients(c, &specs[i], 1, label, &slots[i]);
		add_client_job(c, &slots[i], "alone", i);
	}
	if (!bench_stop) {
		run_clients(c, specs, n, label, slots);
		for (int i = 0; i < n; i++)
			add_client_job(c, &slots[i], "shared", i);
		json_t *sum = sum_job(slots, n, c->io.target, label);
		if (!c->quiet)
			table_row(sum);
		root_add_job(c->root, sum);
	}
	ctx_add_target(c, c->io.target);
	munmap(slots, sizeof(*slots) * (size_t)n);
	return 0;
}
