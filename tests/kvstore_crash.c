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
 * With CLIENTS > 0 the store serves a Unix socket and CLIENTS threads write
 * the same few keys at once (their writes share group commits), read them
 * back, and now and then checkpoint, while the store also checkpoints every
 * few records on its own; the store is SIGKILLed after a drawn time. Then,
 * per key, the state after the restart must be the acknowledged write with
 * the highest LSN, or a write sent and never answered whose LSN (asked with
 * "lsn KEY") is higher: an older acknowledged value is lost, anything else is
 * a phantom. The clients read with "lsn KEY" too, and what a read saw counts
 * as acknowledged, though its writer may not have had the answer yet: a
 * read sees only durable writes. A read that returns an older LSN than the
 * key's top acknowledged one when it was sent is a stale read, an error.
 *
 *   kvstore_crash KVSTORE DIR [TARGET] [ROUNDS] [SEED] [CLIENTS]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
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

static int concurrent(int rounds, int nclients);

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
	if (argc > 6 && atoi(argv[6]) > 0)
		return concurrent(rounds, atoi(argv[6]));
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

/* ---- several clients at once over the socket ------------------------------ */

#define CKEYS 8
#define CLIENTS_MAX 64
#define VAL_MAX 48

struct op { /* a write: value "" for a delete */
	char val[VAL_MAX];
	uint64_t lsn; /* 0: not acknowledged */
};

static struct {
	pthread_mutex_t mu;
	struct op acked[CKEYS];		  /* the acknowledged write with the top LSN */
	bool has_acked[CKEYS];
	struct op unacked[CLIENTS_MAX];	  /* per client: sent, not answered */
	int unacked_key[CLIENTS_MAX];	  /* -1: none */
	uint64_t writes, gets, seen_ahead, stale, checkpoints, errors;
	char sock[4096];
	bool stop;
} cs = {.mu = PTHREAD_MUTEX_INITIALIZER};

static int connect_store(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", cs.sock);
	/* Up to 10 s for the store to listen, unless it was killed first. */
	for (int i = 0; i < 1000 && !__atomic_load_n(&cs.stop, __ATOMIC_ACQUIRE); i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		if (fd >= 0)
			close(fd);
		usleep(10000);
	}
	return -1;
}

struct client_arg {
	int id, round;
	uint64_t seed;
};

static void *client_main(void *arg)
{
	struct client_arg *a = arg;
	uint64_t r = a->seed | 1;
	int fd = connect_store();
	FILE *in = fd >= 0 ? fdopen(dup(fd), "r") : NULL;
	char line[512], cmd[128];

	if (!in && __atomic_load_n(&cs.stop, __ATOMIC_ACQUIRE)) {
		if (fd >= 0)
			close(fd);
		return NULL; /* the store died before this client began */
	}
	if (!in) {
		pthread_mutex_lock(&cs.mu);
		cs.errors++;
		pthread_mutex_unlock(&cs.mu);
		fprintf(stderr, "kvstore_crash: client %d: cannot connect to %s\n", a->id, cs.sock);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (uint64_t i = 0;; i++) {
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		int k = (int)(r % CKEYS), what = (int)(r >> 8) % 20;
		struct op op = {.lsn = 0};

		uint64_t floor = 0; /* a read must not see older than this */

		if (what == 0 && a->id == 0) {
			snprintf(cmd, sizeof(cmd), "checkpoint\n");
		} else if (what < 6) {
			snprintf(cmd, sizeof(cmd), "lsn k%d\n", k);
			pthread_mutex_lock(&cs.mu);
			floor = cs.has_acked[k] ? cs.acked[k].lsn : 0;
			pthread_mutex_unlock(&cs.mu);
		} else {
			if (what > 8)
				snprintf(op.val, sizeof(op.val), "k%d=c%d.%d.%" PRIu64, k, a->id,
					 a->round, i);
			if (op.val[0])
				snprintf(cmd, sizeof(cmd), "put k%d %s\n", k, op.val);
			else
				snprintf(cmd, sizeof(cmd), "del k%d\n", k);
			pthread_mutex_lock(&cs.mu);
			cs.unacked[a->id] = op;
			cs.unacked_key[a->id] = k;
			pthread_mutex_unlock(&cs.mu);
		}
		/* Killed: no answer, or half of one (a line without its end). */
		if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd) ||
		    !fgets(line, sizeof(line), in) || !strchr(line, '\n'))
			break;
		pthread_mutex_lock(&cs.mu);
		unsigned long long lsn;
		char v[VAL_MAX + 8];

		if (!strncmp(cmd, "checkpoint", 10)) {
			if (strncmp(line, "checkpoint ", 11))
				goto bad;
			cs.checkpoints++;
		} else if (!strncmp(cmd, "lsn", 3)) {
			char want[16];

			snprintf(want, sizeof(want), "k%d=", k);
			cs.gets++;
			if (!strcmp(line, "missing\n"))
				goto next;
			if (sscanf(line, "lsn %llu %55s", &lsn, v) != 2 ||
			    strncmp(v, want, strlen(want)))
				goto bad; /* a value never written to this key */
			if (lsn < floor) { /* older than what was acknowledged before it */
				fprintf(stderr, "kvstore_crash: client %d: stale read: %s", a->id, line);
				cs.stale++;
			}
			if (!cs.has_acked[k] || lsn > cs.acked[k].lsn) { /* seen: durable */
				snprintf(cs.acked[k].val, sizeof(cs.acked[k].val), "%s", v);
				cs.acked[k].lsn = lsn;
				cs.has_acked[k] = true;
				cs.seen_ahead++;
			}
		} else {
			if (sscanf(line, "ok %llu", &lsn) != 1)
				goto bad;
			op.lsn = lsn;
			if (!cs.has_acked[k] || lsn > cs.acked[k].lsn)
				cs.acked[k] = op;
			cs.has_acked[k] = true;
			cs.unacked_key[a->id] = -1;
			cs.writes++;
		}
next:
		pthread_mutex_unlock(&cs.mu);
		continue;
bad:
		fprintf(stderr, "kvstore_crash: client %d: %s -> %s", a->id, cmd, line);
		cs.errors++;
		pthread_mutex_unlock(&cs.mu);
		break;
	}
	fclose(in);
	close(fd);
	return NULL;
}

/* Asks the restarted store @c for @k's LSN; 0 when missing or unreadable. */
static uint64_t ask_lsn(struct child *c, int k)
{
	char line[128];
	unsigned long long lsn = 0;

	fprintf(c->in, "lsn k%d\n", k);
	if (!fgets(line, sizeof(line), c->out) || sscanf(line, "lsn %llu ", &lsn) != 1)
		return 0;
	return lsn;
}

static int concurrent(int rounds, int nclients)
{
	uint64_t kills = 0, lost = 0, phantoms = 0, durable_unacked = 0;
	char line[512];

	if (nclients > CLIENTS_MAX)
		nclients = CLIENTS_MAX;
	snprintf(cs.sock, sizeof(cs.sock), "%s/sock", dir);
	signal(SIGPIPE, SIG_IGN);
	for (int round = 0; round < rounds; round++) {
		char every[32];
		unlink(cs.sock); /* connect only to this round's store */
		pid_t pid = fork();

		snprintf(every, sizeof(every), "%d", 20 + (int)(rnd() % 200));
		if (pid == 0) {
			int null = open("/dev/null", O_RDONLY);

			dup2(null, 0);
			if (target)
				execl(kv, kv, dir, "--target", target, "--socket", cs.sock,
				      "--checkpoint-every", every, (char *)NULL);
			else
				execl(kv, kv, dir, "--socket", cs.sock, "--checkpoint-every", every,
				      (char *)NULL);
			_exit(127);
		}
		pthread_t tid[CLIENTS_MAX];
		struct client_arg args[CLIENTS_MAX];
		__atomic_store_n(&cs.stop, false, __ATOMIC_RELEASE);
		int probe = connect_store(); /* the kill is timed from here */

		if (probe < 0) {
			fprintf(stderr, "kvstore_crash: the store did not start on %s\n", cs.sock);
			cs.errors++;
		} else {
			close(probe);
		}

		for (int i = 0; i < nclients; i++) {
			cs.unacked_key[i] = -1;
			args[i] = (struct client_arg){i, round, rnd()};
			pthread_create(&tid[i], NULL, client_main, &args[i]);
		}
		struct timespec ts = {0, (long)(20 + rnd() % 400) * 1000000L};

		nanosleep(&ts, NULL);
		__atomic_store_n(&cs.stop, true, __ATOMIC_RELEASE);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		kills++;
		for (int i = 0; i < nclients; i++)
			pthread_join(tid[i], NULL);
		/* Restart on stdin; every key against the model. */
		struct child c;

		if (spawn(&c)) {
			perror("kvstore_crash: spawn");
			return 1;
		}
		fprintf(c.in, "dump\n");
		char seen[CKEYS][VAL_MAX + 8];
		bool got[CKEYS] = {false};

		while (fgets(line, sizeof(line), c.out) && strcmp(line, "end\n")) {
			int k;
			char v[VAL_MAX + 8];

			if (sscanf(line, "k%d %55s", &k, v) != 2 || k < 0 || k >= CKEYS) {
				fprintf(stderr, "kvstore_crash: restart after kill %" PRIu64 ": %s",
					kills, line);
				cs.errors++;
				break;
			}
			got[k] = true;
			snprintf(seen[k], sizeof(seen[k]), "%s", v);
		}
		for (int k = 0; k < CKEYS; k++) {
			const char *have = got[k] ? seen[k] : "";
			uint64_t lsn = got[k] ? ask_lsn(&c, k) : 0;
			struct op *a = cs.has_acked[k] ? &cs.acked[k] : NULL;
			bool ok = false;

			if (a && !strcmp(have, a->val) && (!got[k] || lsn == a->lsn))
				ok = true;
			else if (!a && !got[k])
				ok = true;
			for (int i = 0; !ok && i < nclients; i++) {
				/* A write that died unanswered, durable after all; its
				 * LSN must be above every acknowledged one. */
				if (cs.unacked_key[i] != k || strcmp(cs.unacked[i].val, have))
					continue;
				if (got[k] && a && lsn <= a->lsn)
					continue;
				ok = true;
				durable_unacked++;
				cs.acked[k] = cs.unacked[i];
				cs.acked[k].lsn = got[k] ? lsn : (a ? a->lsn : 0);
				cs.has_acked[k] = true;
			}
			if (ok)
				continue;
			fprintf(stderr,
				"kvstore_crash: after kill %" PRIu64 ": k%d is '%s' (LSN %" PRIu64
				"), acknowledged '%s' (LSN %" PRIu64 ")\n",
				kills, k, have, lsn, a ? a->val : "", a ? a->lsn : 0);
			if (a && a->val[0])
				lost++;
			else
				phantoms++;
		}
		fprintf(c.in, "quit\n");
		reap(&c, false);
	}
	printf("kvstore_crash: %s, %d clients: %d rounds, %" PRIu64 " kills, %" PRIu64
	       " writes acknowledged, %" PRIu64 " reads (%" PRIu64 " ahead of the writer's answer), %" PRIu64
	       " checkpoints asked, %" PRIu64
	       " unanswered writes found durable; lost %" PRIu64 ", phantoms %" PRIu64
	       ", stale reads %" PRIu64 ", errors %" PRIu64 "\n",
	       target ? target : "file", nclients, rounds, kills, cs.writes, cs.gets, cs.seen_ahead,
	       cs.checkpoints, durable_unacked, lost, phantoms, cs.stale, cs.errors);
	return lost || phantoms || cs.stale || cs.errors ? 1 : 0;
}
