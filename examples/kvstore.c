// SPDX-License-Identifier: MIT
/*
 * kvstore.c - how a database embeds pmwal: a key-value store server whose
 * every put and delete is durable in the log before it is acknowledged, with
 * checkpoints that let the log be released. The engine is examples/kv.c.
 *
 *   kvstore DIR [--target TARGET] [--socket PATH] [--checkpoint-every N]
 *           [--socket-mode MODE] [--max-clients N] [--max-clients-per-uid N]
 *           [--idle-timeout SECONDS]
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
 * DIR, and the directory PATH is in, must not be writable by other users
 * unless sticky (as /tmp is), and must belong to this user or root: another
 * user could plant or replace files there. The store never writes through a
 * symbolic link in DIR, and never replaces at PATH anything but a stale
 * socket of its own user. The socket is made with mode MODE (octal, default
 * 0600: this user and root connect; 0660: the group too).
 *
 * Clients on the socket: at most --max-clients at once (default 1024), and
 * at most --max-clients-per-uid of one user (SO_PEERCRED; default 256). A
 * client that sends nothing for --idle-timeout seconds (default 300; 0:
 * never) is told so and closed. When the store (or a user's share) is full,
 * a new client takes the place of the client idle longest, which is closed;
 * only when every client is in the middle of a request is the new one told
 * "error: too many clients" and closed. So idle connections, however many,
 * never lock others out.
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
 *   stats           stats applied LSN checkpoints N checkpoint_failures N
 *                   [failing N last_checkpoint_error MESSAGE]
 *   quit            ends this client's session
 * KEY is one word; VALUE the rest of the line (a \r before the newline is
 * dropped). A bad line gets "error ..."; so does a request the log refuses
 * (a value larger than its records, a log full of what no checkpoint can
 * free yet), and the store goes on. A last line without its newline (a
 * client that died sending it) is never executed.
 * A checkpoint of --checkpoint-every that fails (its filesystem full) does
 * not fail the write that triggered it, which is durable: that write is
 * answered "ok", the failure is said on stderr and counted in "stats". While
 * checkpoints keep failing the log fills; then writes are refused, and not
 * made, with "error: log full: checkpoint failing: REASON".
 * When the log fails (an I/O error, a full log no checkpoint can free), the
 * store answers "error ..." and exits 1 without acknowledging anything more;
 * a restart recovers. Crash-only: a kill at any moment loses nothing that
 * was acknowledged.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <pmwal.h>

#include "kv.h"
#include "openat.h" /* pmr/: the path rule, built into the example */

static struct kv *kv;

/* Limits on socket clients (main() sets them from the options). */
static unsigned clients_max = 1024, clients_per_uid_max = 256, idle_timeout_s = 300;
static mode_t socket_mode = 0600;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A socket client, as its thread and the accepting thread see it. */
struct client {
	pthread_t tid;
	int fd;
	uid_t uid;
	bool used, finished;
	bool idle;	  /* waiting for its next line (atomic) */
	uint64_t last_ms; /* when it last sent a line or was answered (atomic) */
};

static void set_idle(struct client *c, bool idle)
{
	if (!c)
		return;
	__atomic_store_n(&c->last_ms, now_ms(), __ATOMIC_RELAXED);
	__atomic_store_n(&c->idle, idle, __ATOMIC_RELEASE);
}

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
 * line longer than LINE_MAX_BYTES, -3 for one with a NUL byte, -4 when the
 * client sent nothing for the idle timeout (SO_RCVTIMEO). */
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
		return ferror(in) && (errno == EAGAIN || errno == EWOULDBLOCK) ? -4 : -1;
	if (n && (*line)[n - 1] == '\r')
		n--;
	(*line)[n] = 0;
	return nul ? -3 : (ssize_t)n;
}

/* One client: lines from @in, answers to @out; @self is its slot (NULL:
 * stdin). Returns when it quits, its input ends, it sends a line too long
 * to be a command, or it is idle too long. */
static void serve(FILE *in, int out, struct client *self)
{
	char *line = malloc(256);
	size_t cap = line ? 256 : 0;
	ssize_t n;

	for (;;) {
		set_idle(self, true);
		n = read_line(in, &line, &cap);
		set_idle(self, false);
		if (n == -1)
			break;
		if (n == -4) {
			reply(out, "error: idle for %u s: closing\n", idle_timeout_s);
			break;
		}
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
		} else if (!strcmp(cmd, "stats") && !key) {
			struct kv_stats st;

			kv_stats(kv, &st);
			wr = reply(out,
				   "stats applied %" PRIu64 " checkpoints %" PRIu64
				   " checkpoint_failures %" PRIu64,
				   st.applied_lsn, st.checkpoints, st.checkpoint_failures);
			if (!wr && st.failures_in_a_row)
				wr = reply(out, " failing %" PRIu64 " last_checkpoint_error %s",
					   st.failures_in_a_row, st.checkpoint_error);
			if (!wr)
				wr = reply(out, "\n");
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

static struct client *clients; /* clients_max slots */
static pthread_mutex_t clients_mu = PTHREAD_MUTEX_INITIALIZER;

static void *client_main(void *arg)
{
	struct client *c = arg;
	FILE *in = fdopen(dup(c->fd), "r");

	if (in) {
		serve(in, c->fd, c);
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
	for (unsigned i = 0; i < clients_max; i++) {
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

/* Closes client @i, which was idle, to make room for a new one: its
 * thread's read ends; a request it just began still completes. */
static void evict(unsigned i)
{
	shutdown(clients[i].fd, SHUT_RDWR);
	pthread_join(clients[i].tid, NULL);
	close(clients[i].fd);
	clients[i].used = clients[i].finished = false;
}

/* The slot for a new client of @uid, making room by closing the client idle
 * longest (of @uid, when @uid has its share); -1 with the reason in @why
 * when every candidate is in the middle of a request. */
static int admit(uid_t uid, char *why, size_t whylen)
{
	unsigned mine = 0, free_slot = clients_max, victim = clients_max;
	uint64_t oldest = UINT64_MAX;

	reap_clients(false);
	for (unsigned i = 0; i < clients_max; i++)
		if (clients[i].used && clients[i].uid == uid)
			mine++;
		else if (!clients[i].used && free_slot == clients_max)
			free_slot = i;
	bool uid_full = mine >= clients_per_uid_max;

	if (!uid_full && free_slot < clients_max)
		return (int)free_slot;
	for (unsigned i = 0; i < clients_max; i++) {
		uint64_t t = __atomic_load_n(&clients[i].last_ms, __ATOMIC_RELAXED);

		if (clients[i].used && (!uid_full || clients[i].uid == uid) &&
		    __atomic_load_n(&clients[i].idle, __ATOMIC_ACQUIRE) && t < oldest) {
			oldest = t;
			victim = i;
		}
	}
	if (victim == clients_max) {
		if (uid_full)
			snprintf(why, whylen, "too many clients of uid %u (at most %u), all busy",
				 (unsigned)uid, clients_per_uid_max);
		else
			snprintf(why, whylen, "too many clients (at most %u), all busy",
				 clients_max);
		return -1;
	}
	evict(victim);
	return (int)victim;
}

/* The directory of the socket (@d, reached as @dir) must not let another
 * user replace it. */
static int check_socket_dir(const struct stat *d, const char *dir)
{
	if ((d->st_mode & (S_IWGRP | S_IWOTH)) && !(d->st_mode & S_ISVTX)) {
		fprintf(stderr,
			"kvstore: %s: writable by other users (mode %04o) and not sticky: they "
			"could replace the socket; put it in a directory only this user writes "
			"(or a sticky one)\n",
			dir, (unsigned)(d->st_mode & 07777));
		return -1;
	}
	if (d->st_uid != geteuid() && d->st_uid != 0) {
		fprintf(stderr,
			"kvstore: %s: owned by uid %u, not by this store's user or root: its "
			"owner could replace the socket\n",
			dir, (unsigned)d->st_uid);
		return -1;
	}
	return 0;
}

/*
 * @sa for the socket's name in the directory the walk reached, through
 * /proc/self/fd, so that bind() and connect() go where the walk judged and
 * not through a link swapped in on the path since; the path itself where
 * /proc is missing or that name would be too long for sun_path.
 */
static void socket_addr(struct sockaddr_un *sa, const struct pmr_walk *w, const char *path)
{
	char via[sizeof(sa->sun_path) + 300];
	struct stat st;
	int n = snprintf(via, sizeof(via), "/proc/self/fd/%d/%s", w->dirfd, w->name);

	if (n > 0 && (size_t)n < sizeof(sa->sun_path) && stat("/proc/self/fd", &st) == 0)
		snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", via);
	else
		snprintf(sa->sun_path, sizeof(sa->sun_path), "%s", path); /* main() checked */
}

static int serve_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	sigset_t stop;
	struct pmr_walk w;
	char walk_err[1024];

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
	if (!(clients = calloc(clients_max, sizeof(*clients)))) {
		fprintf(stderr, "kvstore: out of memory\n");
		return 1;
	}
	/* The way to the socket's directory, walked by descriptors (pmr/openat.h):
	 * no link another user planted on it is followed. The socket's own name
	 * is never followed (bind() does not). */
	if (pmr_walk(path, NULL, PMR_WALK_NOFOLLOW, &w, walk_err, sizeof(walk_err))) {
		if (errno == EPERM)
			fprintf(stderr, "kvstore: %s\n", walk_err);
		else
			fprintf(stderr, "kvstore: %s: its directory: %s\n", path, strerror(errno));
		return 1;
	}
	if (!strcmp(w.name, ".")) {
		fprintf(stderr, "kvstore: %s: names a directory, not a socket\n", path);
		return 1;
	}
	if (check_socket_dir(&w.dir, w.dirpath))
		return 1;
	socket_addr(&sa, &w, path);
	struct stat st;

	if (!fstatat(w.dirfd, w.name, &st, AT_SYMLINK_NOFOLLOW)) {
		/* only a socket nobody serves is replaced */
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
		if (st.st_uid != geteuid()) {
			fprintf(stderr,
				"kvstore: %s: a socket of uid %u, not this store's user: not "
				"replacing another user's socket (remove it)\n",
				path, (unsigned)st.st_uid);
			return 1;
		}
		unlinkat(w.dirfd, w.name, 0); /* a socket left by a killed store */
	}
	/* Made with no permission for others, then opened up to the mode:
	 * never wider than asked, not even for a moment. (bind() fails on a
	 * name that appeared meanwhile, a link included.) */
	mode_t old_umask = umask(0177);
	int brc = bind(lfd, (struct sockaddr *)&sa, sizeof(sa));
	int berr = errno;

	umask(old_umask);
	if (brc ||
	    (socket_mode != 0600 &&
	     fchmodat(w.dirfd, w.name, socket_mode, AT_SYMLINK_NOFOLLOW)) ||
	    listen(lfd, 128)) {
		fprintf(stderr, "kvstore: %s: %s\n", path, strerror(brc ? berr : errno));
		return 1;
	}
	fprintf(stderr, "kvstore: serving on %s (mode %04o; at most %u clients, %u per uid, "
			"idle timeout %u s)\n",
		path, (unsigned)socket_mode, clients_max, clients_per_uid_max, idle_timeout_s);
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
		/* A client that stops reading its answers cannot hold the store;
		 * nor can one that stops sending. */
		struct timeval tv = {.tv_sec = 10}, idle = {.tv_sec = idle_timeout_s};

		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (idle_timeout_s)
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, sizeof(idle));
		struct ucred cred = {.uid = (uid_t)-1};
		socklen_t credlen = sizeof(cred);
		char why[128];

		getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen);
		int i = admit(cred.uid, why, sizeof(why));

		if (i < 0) {
			reply(fd, "error: %s\n", why);
			close(fd);
			continue;
		}
		clients[i] = (struct client){.fd = fd, .uid = cred.uid, .used = true,
					     .last_ms = now_ms()};
		if (pthread_create(&clients[i].tid, NULL, client_main, &clients[i])) {
			reply(fd, "error: no thread for this client\n");
			close(fd);
			clients[i].used = false;
		}
	}
	close(lfd);
	unlinkat(w.dirfd, w.name, 0);
	pmr_walk_end(&w);
	reap_clients(true);
	free(clients);
	return 0;
}

/* An option's number in @base, at most @max; ULONG_MAX when it is not one. */
static unsigned long number(const char *v, int base, unsigned long max)
{
	char *end;

	errno = 0;
	unsigned long n = strtoul(v, &end, base);

	return errno || end == v || *end || v[0] < '0' || v[0] > '9' || n > max ? ULONG_MAX : n;
}

int main(int argc, char **argv)
{
	struct kv_options o = {0};
	const char *sock = NULL;
	bool per_uid_set = false;
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
		} else if (!strcmp(argv[i], "--socket-mode") && i + 1 < argc) {
			unsigned long m = number(argv[++i], 8, 0777);

			socket_mode = (mode_t)m;
			if (m == ULONG_MAX || !(m & 0200))
				argc = 0; /* the store's own user must connect */
		} else if (!strcmp(argv[i], "--max-clients") && i + 1 < argc) {
			unsigned long n = number(argv[++i], 10, 65536);

			clients_max = (unsigned)n;
			if (n == ULONG_MAX || !n)
				argc = 0;
		} else if (!strcmp(argv[i], "--max-clients-per-uid") && i + 1 < argc) {
			unsigned long n = number(argv[++i], 10, 65536);

			clients_per_uid_max = (unsigned)n;
			if (n == ULONG_MAX || !n)
				argc = 0;
			per_uid_set = true;
		} else if (!strcmp(argv[i], "--idle-timeout") && i + 1 < argc) {
			unsigned long n = number(argv[++i], 10, 86400);

			idle_timeout_s = (unsigned)n;
			if (n == ULONG_MAX)
				argc = 0;
		} else
			argc = 0;
	}
	if (argc < 2 || argv[1][0] == '-' || !argv[1][0]) {
		fprintf(stderr,
			"usage: kvstore DIR [--target TARGET] [--socket PATH] [--checkpoint-every N]\n"
			"               [--socket-mode MODE] [--max-clients N] "
			"[--max-clients-per-uid N] [--idle-timeout SECONDS]\n"
			"  --socket-mode MODE        the socket's permissions, octal (default 0600)\n"
			"  --max-clients N           socket clients at once, 1..65536 (default 1024)\n"
			"  --max-clients-per-uid N   of one user, 1..65536 (default 256; at most "
			"--max-clients)\n"
			"  --idle-timeout SECONDS    a client silent this long is closed (default "
			"300; 0: never)\n"
			"  When full, a new client takes the place of the one idle longest.\n");
		return 2;
	}
	if (!per_uid_set && clients_per_uid_max > clients_max)
		clients_per_uid_max = clients_max;
	if (clients_per_uid_max > clients_max) {
		fprintf(stderr, "kvstore: --max-clients-per-uid %u is above --max-clients %u\n",
			clients_per_uid_max, clients_max);
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
		serve(stdin, STDOUT_FILENO, NULL);
	if (kv_close(kv)) {
		fprintf(stderr, "kvstore: %s\n", kv_errmsg());
		rc = 1;
	}
	return rc;
}
