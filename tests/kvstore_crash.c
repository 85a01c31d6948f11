// SPDX-License-Identifier: MIT
/*
 * kvstore_crash.c - the example store's crash test (issue 16): a driver that
 * runs examples/kvstore as a child process, sends it puts, deletes and
 * checkpoints drawn from a seed, records what was acknowledged, SIGKILLs it
 * at a drawn moment (a third of the time just after sending a checkpoint, so
 * that the kill lands in the snapshot's write, its rename or the release),
 * restarts it and compares its whole state with the model: every
 * acknowledged write is there, and nothing else (the one write sent and not
 * yet acknowledged when it died may or may not be).
 *
 *   kvstore_crash KVSTORE DIR [TARGET] [ROUNDS] [SEED]
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEYS 64

static char model[KEYS][64]; /* "" = absent */
static char *kv, *dir, *target;
static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct child {
	pid_t pid;
	FILE *in, *out;
};

static int spawn(struct child *c)
{
	int to[2], from[2];

	if (pipe(to) || pipe(from))
		return -1;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		if (target)
			execl(kv, kv, dir, "--target", target, (char *)NULL);
		else
			execl(kv, kv, dir, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = fdopen(to[1], "w");
	c->out = fdopen(from[0], "r");
	setvbuf(c->in, NULL, _IOLBF, 0);
	return c->pid > 0 ? 0 : -1;
}

static void reap(struct child *c, bool kill_it)
{
	if (kill_it)
		kill(c->pid, SIGKILL);
	fclose(c->in);
	fclose(c->out);
	waitpid(c->pid, NULL, 0);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: kvstore_crash KVSTORE DIR [TARGET] [ROUNDS] [SEED]\n");
		return 2;
	}
	kv = argv[1];
	dir = argv[2];
	target = argc > 3 && argv[3][0] ? argv[3] : NULL;
	int rounds = argc > 4 ? atoi(argv[4]) : 30;
	rng = argc > 5 ? strtoull(argv[5], NULL, 10) * 2654435761u + 1 : 88172645463325252ull;
	uint64_t acked = 0, kills = 0, in_checkpoint = 0, checkpoints = 0;
	uint64_t lost = 0, phantoms = 0, errors = 0;
	char line[512];

	signal(SIGPIPE, SIG_IGN);
	for (int r = 0; r < rounds; r++) {
		struct child c;
		int pending = -1; /* key of the write sent and not answered */
		char pending_val[64] = "";

		if (spawn(&c)) {
			perror("kvstore_crash: spawn");
			return 1;
		}
		int ops = 1 + (int)(rnd() % 400);
		bool kill_at_checkpoint = rnd() % 3 == 0;

		for (int i = 0; i < ops; i++) {
			int k = (int)(rnd() % KEYS);
			bool del = rnd() % 5 == 0;
			char val[64];

			if (rnd() % 50 == 0) {
				fprintf(c.in, "checkpoint\n");
				if (!fgets(line, sizeof(line), c.out) || strncmp(line, "checkpoint ", 11)) {
					fprintf(stderr, "kvstore_crash: checkpoint: %s", line);
					errors++;
					break;
				}
				checkpoints++;
				continue;
			}
			snprintf(val, sizeof(val), "v%d.%d.%" PRIu64, r, i, rnd() % 1000);
			if (del)
				fprintf(c.in, "del k%d\n", k);
			else
				fprintf(c.in, "put k%d %s\n", k, val);
			pending = k;
			snprintf(pending_val, sizeof(pending_val), "%s", del ? "" : val);
			if (!fgets(line, sizeof(line), c.out) || strncmp(line, "ok ", 3)) {
				fprintf(stderr, "kvstore_crash: round %d: %s", r, line);
				errors++;
				break;
			}
			snprintf(model[k], sizeof(model[k]), "%s", pending_val);
			pending = -1;
			acked++;
		}
		/* Die: after a last write sent (its answer unread), or in a checkpoint. */
		if (kill_at_checkpoint) {
			fprintf(c.in, "checkpoint\n");
			usleep((useconds_t)(rnd() % 3000));
			in_checkpoint++;
		} else {
			int k = (int)(rnd() % KEYS);

			snprintf(pending_val, sizeof(pending_val), "last%d", r);
			fprintf(c.in, "put k%d %s\n", k, pending_val);
			pending = k;
			usleep((useconds_t)(rnd() % 300));
		}
		reap(&c, true);
		kills++;
		/* Restart; the whole state must be the model's. */
		if (spawn(&c)) {
			perror("kvstore_crash: spawn");
			return 1;
		}
		fprintf(c.in, "dump\n");
		char seen[KEYS][64];
		bool got[KEYS] = {false};

		while (fgets(line, sizeof(line), c.out) && strcmp(line, "end\n")) {
			int k;
			char v[64];

			if (sscanf(line, "k%d %63s", &k, v) != 2 || k < 0 || k >= KEYS) {
				fprintf(stderr, "kvstore_crash: restart after kill %" PRIu64 ": %s", kills,
					line);
				errors++;
				break;
			}
			got[k] = true;
			snprintf(seen[k], sizeof(seen[k]), "%s", v);
		}
		for (int k = 0; k < KEYS; k++) {
			const char *have = got[k] ? seen[k] : "";

			if (!strcmp(have, model[k]))
				continue;
			if (k == pending && !strcmp(have, pending_val)) {
				/* The write it died in was durable: it counts. */
				snprintf(model[k], sizeof(model[k]), "%s", have);
				continue;
			}
			fprintf(stderr,
				"kvstore_crash: after kill %" PRIu64 ": k%d is '%s', acknowledged '%s'\n",
				kills, k, have, model[k]);
			if (model[k][0])
				lost++;
			else
				phantoms++;
		}
		fprintf(c.in, "quit\n");
		reap(&c, false);
	}
	printf("kvstore_crash: %s: %d rounds, %" PRIu64 " kills (%" PRIu64
	       " during a checkpoint), %" PRIu64 " writes acknowledged, %" PRIu64
	       " checkpoints; lost %" PRIu64 ", phantoms %" PRIu64 ", errors %" PRIu64 "\n",
	       target ? target : "file", rounds, kills, in_checkpoint, acked, checkpoints, lost,
	       phantoms, errors);
	return lost || phantoms || errors ? 1 : 0;
}
