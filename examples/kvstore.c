// SPDX-License-Identifier: MIT
/*
 * kvstore.c - how a database embeds pmwal: a key-value store server whose
 * every put and delete is durable in the log before it is acknowledged, with
 * checkpoints that let the log be released. The engine is examples/kv.c.
 *
 *   kvstore DIR [--target TARGET] [--socket PATH] [--checkpoint-every N]
 *
 *   TARGET   the log (default DIR/log; e.g. pmem:/dev/shm/kv.log,
 *            fakepmr:PATH, /dev/nvme0n1)
 *   PATH     also serve clients on this Unix socket, each on its own thread:
 *            their writes share group commits. Without it, stdin is the one
 *            client and end of input stops the store. With it, stdin is
 *            not read; SIGINT or SIGTERM stops the store.
 *   N        checkpoint after every N records (default 0: only on the
 *            checkpoint command and when the log is full)
 *
 * One command per line, one answer per line:
 *   put KEY VALUE   ok LSN          (durable before the answer)
 *   del KEY         ok LSN
 *   get KEY         value VALUE | missing   (only durable writes are seen)
 *   lsn KEY         lsn N VALUE | missing  (a get with the LSN of the
 *                                    record that wrote the value)
 *   checkpoint      checkpoint LSN  (the snapshot covers LSN; the log below
 *                                    LSN + 1 is released)
 *   dump            KEY VALUE lines, then "end"
 *   quit            ends this client's session
 * KEY is one word; VALUE the rest of the line (a \r before the newline is
 * dropped). A bad line gets "error ..."; so does a request the log refuses
 * (a value larger than its records, a log full of what no checkpoint can
 * free yet), and the store goes on. A last line without its newline (a
 * client that died sending it) is never executed.
 * When the log fails (an I/O error, a full log no checkpoint can free), the
 * store answers "error ..." and exits 1 without acknowledging anything more;
 * a restart recovers. Crash-only: a kill at any moment loses nothing that
 * was acknowledged.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <pmwal.h>

#include "kv.h"

static struct kv *kv;

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int reply(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	va_end(ap);
	if (n < 0)
		return -1;
	if (n >= (int)sizeof(buf)) { /* cut, but still one line */
		n = (int)sizeof(buf) - 1;
		buf[n - 1] = '\n';
	}
	return write_all(fd, buf, (size_t)n);
}

/* The longest line a client may send: a put of the largest key and value. */
#define LINE_MAX_BYTES ((1u << 20) + 1024 + 16)

/* Reads one line into *@line (without its newline, or a \r before it).
 * Returns its length, -1 at the end of input (a last line without its
 * newline is a client that died while sending it: never executed), -2 for a
 * line longer than LINE_MAX_BYTES, -3 for one with a NUL byte. */
static ssize_t read_line(FILE *in, char **line, size_t *cap)
{
	size_t n = 0;
	bool nul = false;
	int c;

	while ((c = getc(in)) != EOF && c != '\n') {
		nul |= c == 0;
		if (n + 1 >= *cap) {
			if (*cap >= LINE_MAX_BYTES)
				return -2;
			size_t ncap = *cap ? *cap * 2 : 256;
			char *l = realloc(*line, ncap);

			if (!l)
				return -2;
			*line = l;
			*cap = ncap;
		}
		(*line)[n++] = (char)c;
	}
	if (c == EOF)
		return -1;
	if (n && (*line)[n - 1] == '\r')
		n--;
	(*line)[n] = 0;
	return nul ? -3 : (ssize_t)n;
}

/* One client: lines from @in, answers to @out. Returns when it quits, its
 * input ends, or it sends a line too long to be a command. */
static void serve(FILE *in, int out)
{
	char *line = malloc(256);
	size_t cap = line ? 256 : 0;
	ssize_t n;

	while ((n = read_line(in, &line, &cap)) >= 0 || n < -1) {
		if (n == -2) {
			reply(out, "error: a line longer than %u bytes: closing\n", LINE_MAX_BYTES);
			break;
		}
		if (n == -3) {
			if (reply(out, "error: a NUL byte in the line\n"))
				break;
			continue;
		}
		char *cmd = line, *key = strchr(line, ' '), *value = NULL, *v;
		uint64_t lsn;
		int rc = 0, wr = 0;

		if (key) {
			*key++ = 0;
			value = strchr(key, ' ');
			if (value)
				*value++ = 0;
		}
		if (!strcmp(cmd, "put") && key && *key && value) {
			if (!(rc = kv_put(kv, key, value, &lsn)))
				wr = reply(out, "ok %" PRIu64 "\n", lsn);
		} else if (!strcmp(cmd, "del") && key && *key && !value) {
			if (!(rc = kv_del(kv, key, &lsn)))
				wr = reply(out, "ok %" PRIu64 "\n", lsn);
		} else if (!strcmp(cmd, "get") && key && *key && !value) {
			if (kv_get(kv, key, &v, NULL) == 1) {
				wr = write_all(out, "value ", 6) || write_all(out, v, strlen(v)) ||
				     write_all(out, "\n", 1);
				free(v);
			} else {
				wr = reply(out, "missing\n");
			}
		} else if (!strcmp(cmd, "lsn") && key && *key && !value) {
			if (kv_get(kv, key, &v, &lsn) == 1) {
				wr = reply(out, "lsn %" PRIu64 " ", lsn) ||
				     write_all(out, v, strlen(v)) || write_all(out, "\n", 1);
				free(v);
			} else {
				wr = reply(out, "missing\n");
			}
		} else if (!strcmp(cmd, "checkpoint") && !key) {
			if (!(rc = kv_checkpoint(kv, &lsn)))
				wr = reply(out, "checkpoint %" PRIu64 "\n", lsn);
		} else if (!strcmp(cmd, "dump") && !key) {
			char *buf;
			size_t len;

			if (!(rc = kv_dump(kv, &buf, &len))) {
				wr = write_all(out, buf, len) || reply(out, "end\n");
				free(buf);
			}
		} else if (!strcmp(cmd, "quit") && !key) {
			break;
		} else {
			wr = reply(out, "error: unknown command or arguments: %s\n", cmd);
		}
		if (rc && kv_failed(kv)) {
			/* The log failed: nothing more is acknowledged, the store
			 * stops (a failed log is sticky; a restart recovers). */
			reply(out, "error %s: %s\n", pmwal_strerror(rc), kv_errmsg());
			fprintf(stderr, "kvstore: %s\n", kv_errmsg());
			_exit(1);
		} else if (rc) { /* this request failed; the store goes on */
			wr = reply(out, "error: %s\n", kv_errmsg());
		}
		if (wr) /* the client went away */
			break;
	}
	free(line);
}

/* ---- the Unix socket: one thread per client ------------------------------ */

#define CLIENTS_MAX 1024

static struct client {
	pthread_t tid;
	int fd;
	bool used, finished;
} clients[CLIENTS_MAX];
static pthread_mutex_t clients_mu = PTHREAD_MUTEX_INITIALIZER;

static void *client_main(void *arg)
{
	struct client *c = arg;
	FILE *in = fdopen(dup(c->fd), "r");

	if (in) {
		serve(in, c->fd);
		fclose(in);
	}
	pthread_mutex_lock(&clients_mu);
	c->finished = true;
	pthread_mutex_unlock(&clients_mu);
	return NULL;
}

/* Joins clients that finished; with @all, ends every session first. */
static void reap_clients(bool all)
{
	for (int i = 0; i < CLIENTS_MAX; i++) {
		pthread_mutex_lock(&clients_mu);
		bool used = clients[i].used, done = clients[i].finished;

		pthread_mutex_unlock(&clients_mu);
		if (!used || (!done && !all))
			continue;
		if (!done)
			shutdown(clients[i].fd, SHUT_RDWR); /* its read or write ends */
		pthread_join(clients[i].tid, NULL);
		close(clients[i].fd);
		clients[i].used = clients[i].finished = false;
	}
}

static int serve_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	sigset_t stop;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path); /* main() checked its length */
	/* SIGINT and SIGTERM arrive through a descriptor, only on this thread. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	int sfd = signalfd(-1, &stop, SFD_CLOEXEC);
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (sfd < 0 || lfd < 0) {
		perror("kvstore: socket");
		return 1;
	}
	struct stat st;

	if (!lstat(path, &st)) { /* only a socket nobody serves is replaced */
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		bool live = S_ISSOCK(st.st_mode) && probe >= 0 &&
			    !connect(probe, (struct sockaddr *)&sa, sizeof(sa));

		if (probe >= 0)
			close(probe);
		if (!S_ISSOCK(st.st_mode) || live) {
			fprintf(stderr, "kvstore: %s: %s\n", path,
				live ? "another process serves this socket"
				     : "exists and is not a socket: not replacing it");
			return 1;
		}
		unlink(path); /* a socket left by a killed store */
	}
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 128)) {
		fprintf(stderr, "kvstore: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(stderr, "kvstore: serving on %s\n", path);
	int warned = 0;

	for (;;) {
		struct pollfd p[2] = {{.fd = lfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};

		if (poll(p, 2, 1000) < 0 && errno != EINTR)
			break;
		reap_clients(false);
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			/* Out of descriptors: let clients finish first. */
			if (!warned++)
				fprintf(stderr, "kvstore: %s: new clients wait (raise ulimit -n)\n",
					strerror(errno));
			poll(NULL, 0, 50);
			continue;
		}
		if (fd < 0)
			continue;
		/* A client that stops reading its answers cannot hold the store. */
		struct timeval tv = {.tv_sec = 10};

		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		int i = 0;

		while (i < CLIENTS_MAX && clients[i].used)
			i++;
		if (i == CLIENTS_MAX) {
			reply(fd, "error: too many clients (%d)\n", CLIENTS_MAX);
			close(fd);
			continue;
		}
		clients[i] = (struct client){.fd = fd, .used = true};
		if (pthread_create(&clients[i].tid, NULL, client_main, &clients[i])) {
			reply(fd, "error: no thread for this client\n");
			close(fd);
			clients[i].used = false;
		}
	}
	close(lfd);
	unlink(path);
	reap_clients(true);
	return 0;
}

int main(int argc, char **argv)
{
	struct kv_options o = {0};
	const char *sock = NULL;
	char err[1024];

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--target") && i + 1 < argc)
			o.target = argv[++i];
		else if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			sock = argv[++i];
		else if (!strcmp(argv[i], "--checkpoint-every") && i + 1 < argc) {
			char *end;

			errno = 0;
			o.checkpoint_every = strtoull(argv[++i], &end, 10);
			if (errno || *end || argv[i][0] < '0' || argv[i][0] > '9')
				argc = 0;
		} else
			argc = 0;
	}
	if (argc < 2 || argv[1][0] == '-' || !argv[1][0]) {
		fprintf(stderr, "usage: kvstore DIR [--target TARGET] [--socket PATH] "
				"[--checkpoint-every N]\n");
		return 2;
	}
	o.dir = argv[1];
	if (sock && strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fprintf(stderr, "kvstore: socket path too long (at most %zu bytes): %s\n",
			sizeof(((struct sockaddr_un *)0)->sun_path) - 1, sock);
		return 2;
	}
	/* Two descriptors per client: as many as the hard limit allows. */
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	if (kv_open(&o, &kv, err, sizeof(err))) {
		fprintf(stderr, "kvstore: %s\n", err);
		return 1;
	}
	int rc = 0;

	if (sock)
		rc = serve_socket(sock);
	else
		serve(stdin, STDOUT_FILENO);
	if (kv_close(kv)) {
		fprintf(stderr, "kvstore: %s\n", kv_errmsg());
		rc = 1;
	}
	return rc;
}
