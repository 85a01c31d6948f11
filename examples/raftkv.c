// SPDX-License-Identifier: MIT
/*
 * raftkv.c - a replicated key-value store: Canonical raft, with its log on
 * pmwal (raft/pmwal_raft.h), and a line protocol for clients on TCP.
 *
 *   raftkv --id N --peers HOST:PORT,HOST:PORT,... --dir DIR [--target TARGET]
 *          [--storage pmwal|uv] [--snapshot-threshold N] [--snapshot-trailing N]
 *          [--install-snapshot-timeout MS] [--max-clients N]
 *          [--max-clients-per-peer N] [--idle-timeout SECONDS]
 *
 * Node N (1-based) talks raft on the N-th address of --peers and serves
 * clients on the same host at that port + 1000. Every node starts with the
 * same peers; a node without state bootstraps the cluster with all of them
 * as voters (raft accepts the same bootstrap on every node). SIGINT or
 * SIGTERM stops the node cleanly; SIGKILL is a crash it recovers from.
 * --storage uv keeps the log in raft_uv's own segment files instead (the
 * peer of examples/raftkv_bench.py).
 *
 * One command per line, one answer per line:
 *   put KEY VALUE  ok INDEX          once committed and applied (on the
 *                                    leader; elsewhere "redirect ID HOST:PORT"
 *                                    with the leader's client address, or
 *                                    "error no leader")
 *                  unknown: REASON   the put was handed to raft, but the node
 *                                    lost leadership (or stopped, or its
 *                                    storage failed) before its commit was
 *                                    known: it may or may not be applied; a
 *                                    get on the leader tells
 *                  error REASON      refused: not applied
 *   get KEY        value VALUE | missing   (the leader's state; a follower,
 *                                    which may be behind, answers "redirect"
 *                                    or "error no leader" as for a put)
 *   dump           KEY INDEX COUNT VALUE lines (COUNT: how many times the
 *                  key was applied), then "end" (this node's state, however
 *                  far behind)
 *   status         state ROLE leader ID applied INDEX [error REASON]
 * KEY is one word; VALUE the rest of the line.
 *
 * Clients: at most --max-clients at once (default 1024, lowered to what the
 * descriptor limit allows), and at most --max-clients-per-peer from one IP
 * address (default half of --max-clients). A client that sends nothing for
 * --idle-timeout seconds (default 300; 0: never) while no put of its own is
 * in flight is told "error idle for N s: closing" and closed. When the node
 * (or an address's share) is full, a new client takes the place of the
 * client idle longest, which is told so and closed; only when every
 * candidate has a put in flight is the new one told "error too many
 * clients ..." and closed. So idle connections, however many, never lock
 * others out. The clients on this host all connect from one address
 * (127.0.0.1, or the address the node listens on), and so do all clients
 * behind one NAT: together they get one address's share. In exchange, one
 * address that floods the node holds at most its share, and the idle
 * clients of other addresses keep the rest. Where all clients come from one
 * address, set --max-clients-per-peer to --max-clients.
 *
 * A node whose raft cannot go on (raft unavailable, or its storage failed
 * stop: an I/O error, a snapshot from the leader it could not store for
 * want of space) says why on stderr and exits 1, so that whatever
 * supervises it sees it and restarts it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <uv.h>

#include <pmwal.h>

#include "pmwal_raft.h"

#define PEERS_MAX 9

/* ---- the state machine: key -> (value, index, times applied) ------------ */

struct entry {
	char *key, *value;
	raft_index index;
	unsigned count;
	struct entry *next;
};

static struct entry *table[4096];
static struct raft raft;

static unsigned bucket(const char *k)
{
	unsigned h = 2166136261u;

	while (*k)
		h = (h ^ (unsigned char)*k++) * 16777619u;
	return h % 4096;
}

static struct entry *lookup(const char *k)
{
	for (struct entry *e = table[bucket(k)]; e; e = e->next)
		if (!strcmp(e->key, k))
			return e;
	return NULL;
}

static int set(const char *k, const char *v, raft_index index, unsigned count)
{
	struct entry *e = lookup(k);

	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || !(e->key = strdup(k)))
			return RAFT_NOMEM;
		e->next = table[bucket(k)];
		table[bucket(k)] = e;
	}
	char *nv = strdup(v);

	if (!nv)
		return RAFT_NOMEM;
	free(e->value);
	e->value = nv;
	e->index = index;
	e->count = count ? count : e->count + 1;
	return 0;
}

static void clear(void)
{
	for (int i = 0; i < 4096; i++)
		while (table[i]) {
			struct entry *e = table[i];

			table[i] = e->next;
			free(e->key);
			free(e->value);
			free(e);
		}
}

/* A command is KEY NUL VALUE NUL, padded with NULs to 8 bytes. */
static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result)
{
	const char *c = buf->base;
	const char *nul = memchr(c, 0, buf->len);

	(void)fsm;
	*result = NULL;
	if (!nul || nul == c || !memchr(nul + 1, 0, buf->len - (size_t)(nul - c) - 1))
		return RAFT_MALFORMED;
	char *v = strdup(nul + 1);

	if (!v)
		return RAFT_NOMEM;
	/* raft applies entries in index order, one at a time. */
	int rv = set(c, v, raft_last_applied(&raft) + 1, 0);

	free(v);
	return rv;
}

/* The table as one buffer: per entry index u64, count u32, key NUL value NUL. */
static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n)
{
	size_t len = 0;

	(void)fsm;
	for (int i = 0; i < 4096; i++)
		for (struct entry *e = table[i]; e; e = e->next)
			len += 12 + strlen(e->key) + strlen(e->value) + 2;
	*bufs = raft_malloc(sizeof(**bufs));
	char *b = raft_malloc(len ? len : 1), *at = b;

	if (!*bufs || !b)
		return RAFT_NOMEM;
	for (int i = 0; i < 4096; i++)
		for (struct entry *e = table[i]; e; e = e->next) {
			uint32_t cnt = e->count;

			memcpy(at, &e->index, 8);
			memcpy(at + 8, &cnt, 4);
			at += 12;
			at = stpcpy(at, e->key) + 1;
			at = stpcpy(at, e->value) + 1;
		}
	(*bufs)[0] = (struct raft_buffer){b, len};
	*n = 1;
	return 0;
}

/* Set once raft_start() returns: a restore after that is a snapshot the
 * leader sent, which the cluster test counts from stderr. */
static bool started;

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
	const char *at = buf->base, *end = at + buf->len;
	size_t keys = 0;

	(void)fsm;
	clear();
	while (at < end) {
		raft_index index;
		uint32_t cnt;

		if (end - at < 14)
			return RAFT_MALFORMED;
		memcpy(&index, at, 8);
		memcpy(&cnt, at + 8, 4);
		const char *k = at + 12, *kend = memchr(k, 0, (size_t)(end - k));
		const char *v = kend ? kend + 1 : NULL;
		const char *vend = v && v < end ? memchr(v, 0, (size_t)(end - v)) : NULL;

		if (!vend)
			return RAFT_MALFORMED;
		if (set(k, v, index, cnt))
			return RAFT_NOMEM;
		at = vend + 1;
		keys++;
	}
	raft_free(buf->base);
	if (started)
		fprintf(stderr, "raftkv: installed a snapshot from the leader: %zu keys\n", keys);
	return 0;
}

/* ---- clients ---------------------------------------------------------------- */

static char peers[PEERS_MAX][64];
static int npeers;
static struct raft_io *io;

static bool uv_storage; /* --storage uv: raft_uv's own storage */

/* Limits on clients (main() sets them from the options). */
static unsigned clients_max = 1024, clients_per_peer_max, idle_timeout_s = 300;

struct client {
	uv_tcp_t tcp;
	struct client *prev, *next; /* in the list of open clients */
	uint64_t last_ms;	    /* uv_now() when it last sent or was answered */
	int family;		    /* its IP address: AF_INET or AF_INET6, ... */
	unsigned char addr[16];	    /* ... and the address's bytes */
	size_t used;
	bool closing;	    /* uv_close() called ... */
	bool handle_closed; /* ... and its callback run */
	int pending;	    /* applies in flight: freed once they answer */
	char buf[1 << 16];
};

/*
 * The open clients, least recently active first: the one a new client
 * replaces when the node is full, and the ones the idle timeout closes,
 * are found from the head. At most clients_max long.
 */
static struct client *clients_head, *clients_tail;
static unsigned nclients;

static void unlink_client(struct client *c)
{
	*(c->prev ? &c->prev->next : &clients_head) = c->next;
	*(c->next ? &c->next->prev : &clients_tail) = c->prev;
	c->prev = c->next = NULL;
}

static void append_client(struct client *c)
{
	c->prev = clients_tail;
	c->next = NULL;
	*(clients_tail ? &clients_tail->next : &clients_head) = c;
	clients_tail = c;
}

/* @c sent something or was answered: it is the most recently active. */
static void touch(struct client *c)
{
	if (c->closing)
		return;
	c->last_ms = uv_now(c->tcp.loop);
	unlink_client(c);
	append_client(c);
}

struct put {
	struct raft_apply req;
	struct client *c;
};

struct wreq {
	uv_write_t w;
	char text[];
};

static void closed(uv_handle_t *h)
{
	struct client *c = (struct client *)h;

	c->handle_closed = true;
	if (!c->pending)
		free(c);
}

static void close_client(struct client *c)
{
	if (!c->closing) {
		c->closing = true;
		if (c->prev || clients_head == c) { /* admitted */
			unlink_client(c);
			nclients--;
		}
		uv_close((uv_handle_t *)&c->tcp, closed);
	}
}

static void written(uv_write_t *w, int status)
{
	(void)status;
	free(w);
}

/* A client that does not read its answers is closed once this much waits
 * to be sent to it: answers never pile up without bound. */
#define CLIENT_QUEUE_MAX (4u << 20)

static void say(struct client *c, const char *fmt, ...)
{
	va_list ap;

	if (c->closing)
		return;
	if (uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > CLIENT_QUEUE_MAX) {
		close_client(c);
		return;
	}
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);

	va_end(ap);
	if (n < 0)
		return;
	struct wreq *r = malloc(sizeof(*r) + (size_t)n + 1);

	if (!r) {
		close_client(c); /* an answer cannot be dropped silently */
		return;
	}
	va_start(ap, fmt);
	vsnprintf(r->text, (size_t)n + 1, fmt, ap);
	va_end(ap);
	uv_buf_t b = uv_buf_init(r->text, (unsigned)n);

	if (uv_write(&r->w, (uv_stream_t *)&c->tcp, &b, 1, written)) {
		free(r);
		close_client(c);
	}
}

static void applied(struct raft_apply *req, int status, void *result)
{
	struct put *p = (struct put *)req;
	struct client *c = p->c;

	(void)result;
	/* A storage error carries the storage's own message (raft 0.15's
	 * raft_strerror() has no words for RAFT_NOSPACE). */
	bool storage = status == RAFT_NOSPACE || status == RAFT_IOERR ||
		       status == RAFT_CORRUPT || status == RAFT_TOOBIG;

	/* raft took the entry and may have sent it to followers: whatever
	 * ended its wait here, a new leader may still commit it. */
	if (status == RAFT_LEADERSHIPLOST)
		say(c, "unknown: leadership lost before commit was known; the put may or may "
		       "not have been applied\n");
	else if (status)
		say(c, "unknown: %s%s%s; the put may or may not have been applied\n",
		    status == RAFT_NOSPACE ? "the log is full" : raft_strerror(status),
		    storage && io->errmsg[0] ? ": " : "", storage ? io->errmsg : "");
	else
		say(c, "ok %llu\n", (unsigned long long)req->index);
	touch(c);
	free(p);
	/* Freed by whichever comes last: its handle's close or its last put's
	 * answer (both can happen in one turn of the loop). */
	if (--c->pending == 0 && c->handle_closed)
		free(c);
}

static void leader_redirect(struct client *c)
{
	raft_id id;
	const char *addr;

	raft_leader(&raft, &id, &addr);
	if (!id || !addr) {
		say(c, "error no leader\n");
		return;
	}
	char host[64];
	int port;

	if (sscanf(addr, "%63[^:]:%d", host, &port) != 2)
		say(c, "error no leader\n");
	else
		say(c, "redirect %llu %s:%d\n", id, host, port + 1000);
}

static void command(struct client *c, char *line)
{
	char *key = strchr(line, ' '), *value = NULL;

	if (key) {
		*key++ = 0;
		value = strchr(key, ' ');
		if (value)
			*value++ = 0;
	}
	if (!strcmp(line, "put") && key && *key && value) {
		if (raft_state(&raft) != RAFT_LEADER) {
			leader_redirect(c);
			return;
		}
		/* KEY NUL VALUE, NUL-padded to a multiple of 8 bytes: raft_uv's
		 * transport sends an entry's bytes as they are, and its receiver
		 * steps over each entry as if padded to 8 (libraft 0.15,
		 * uv_encoding.c): unpadded entries arrive shifted. */
		size_t kl = strlen(key), vl = strlen(value), len = (kl + vl + 2 + 7) & ~(size_t)7;
		struct raft_buffer buf = {raft_calloc(1, len), len};
		struct put *p = calloc(1, sizeof(*p));

		if (!buf.base || !p) {
			raft_free(buf.base);
			free(p);
			say(c, "error out of memory\n");
			return;
		}
		memcpy(buf.base, key, kl);
		memcpy((char *)buf.base + kl + 1, value, vl);
		p->c = c;
		int rv = raft_apply(&raft, &p->req, &buf, 1, applied);

		if (rv) {
			raft_free(buf.base);
			free(p);
			say(c, "error %s%s%s\n",
			    rv == RAFT_NOSPACE ? "the log is full" : raft_strerror(rv),
			    raft_errmsg(&raft)[0] ? ": " : "", raft_errmsg(&raft));
			return;
		}
		c->pending++;
	} else if (!strcmp(line, "get") && key && *key && !value) {
		/* A follower may be any distance behind (cut off, or unable to
		 * take the leader's snapshot): it does not answer as if current. */
		if (raft_state(&raft) != RAFT_LEADER) {
			leader_redirect(c);
			return;
		}
		struct entry *e = lookup(key);

		if (e)
			say(c, "value %s\n", e->value);
		else
			say(c, "missing\n");
	} else if (!strcmp(line, "dump") && !key) {
		for (int i = 0; i < 4096; i++)
			for (struct entry *e = table[i]; e; e = e->next)
				say(c, "%s %llu %u %s\n", e->key, (unsigned long long)e->index,
				    e->count, e->value);
		say(c, "end\n");
	} else if (!strcmp(line, "status") && !key) {
		static const char *roles[] = {"unavailable", "follower", "candidate", "leader"};
		raft_id id;
		const char *addr;
		int st = raft_state(&raft);

		const char *failed = uv_storage ? NULL : pmwal_raft_error(io);

		raft_leader(&raft, &id, &addr);
		say(c, "state %s leader %llu applied %llu%s%s\n", st >= 0 && st < 4 ? roles[st] : "?",
		    id, (unsigned long long)raft_last_applied(&raft),
		    st == RAFT_UNAVAILABLE || failed ? " error " : "",
		    failed ? failed : st == RAFT_UNAVAILABLE ? io->errmsg : "");
	} else {
		say(c, "error unknown command: %s\n", line);
	}
}

static void alloc_cb(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct client *c = (struct client *)h;

	(void)hint;
	*b = uv_buf_init(c->buf + c->used, (unsigned)(sizeof(c->buf) - c->used));
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct client *c = (struct client *)s;

	(void)b;
	if (n < 0) { /* a half line left at the end is never a command */
		close_client(c);
		return;
	}
	if (n > 0)
		touch(c);
	c->used += (size_t)n;
	char *start = c->buf, *nl;

	while ((nl = memchr(start, '\n', c->used - (size_t)(start - c->buf)))) {
		*nl = 0;
		if (nl > start && nl[-1] == '\r')
			nl[-1] = 0;
		command(c, start);
		start = nl + 1;
	}
	c->used -= (size_t)(start - c->buf);
	memmove(c->buf, start, c->used);
	if (c->used == sizeof(c->buf)) {
		say(c, "error a line longer than %zu bytes\n", sizeof(c->buf));
		close_client(c);
	}
}

static bool same_peer(const struct client *a, const struct client *b)
{
	return a->family == b->family && !memcmp(a->addr, b->addr, sizeof(a->addr));
}

static void peer_name(const struct client *c, char *name, size_t len)
{
	if (!inet_ntop(c->family, c->addr, name, (socklen_t)len))
		snprintf(name, len, "?");
}

/*
 * Makes room for @nc, not yet in the list: when the node, or @nc's
 * address, has its share of clients, the client idle longest (of that
 * address, when the address has its share) is told so and closed. Returns
 * -1 with the reason in @why when every such client has a put in flight.
 */
static int make_room(const struct client *nc, char *why, size_t whylen)
{
	unsigned mine = 0;
	char name[INET6_ADDRSTRLEN];

	for (struct client *c = clients_head; c; c = c->next)
		mine += same_peer(c, nc);
	bool peer_full = mine >= clients_per_peer_max;

	if (!peer_full && nclients < clients_max)
		return 0;
	for (struct client *c = clients_head; c; c = c->next)
		if (!c->pending && (!peer_full || same_peer(c, nc))) {
			say(c, "error closed for a new client: this client was idle longest and "
			       "the node serves at most %u clients, %u per address\n",
			    clients_max, clients_per_peer_max);
			close_client(c);
			return 0;
		}
	peer_name(nc, name, sizeof(name));
	if (peer_full)
		snprintf(why, whylen, "too many clients from %s (at most %u), all with a put in "
				      "flight", name, clients_per_peer_max);
	else
		snprintf(why, whylen, "too many clients (at most %u), all with a put in flight",
			 clients_max);
	return -1;
}

/* Closes the clients silent for the idle timeout (none with a put in
 * flight: it waits for its answer). */
static void close_idle_clients(uv_loop_t *loop)
{
	uint64_t timeout_ms = (uint64_t)idle_timeout_s * 1000, now = uv_now(loop);

	if (!idle_timeout_s)
		return;
	for (struct client *c = clients_head, *next; c && now - c->last_ms >= timeout_ms;
	     c = next) {
		next = c->next;
		if (c->pending)
			continue;
		say(c, "error idle for %u s: closing\n", idle_timeout_s);
		close_client(c);
	}
}

static void on_connect(uv_stream_t *server, int status)
{
	struct client *c = status ? NULL : calloc(1, sizeof(*c));
	struct sockaddr_storage sa;
	int salen = sizeof(sa);
	char why[160];

	if (!c)
		return;
	uv_tcp_init(server->loop, &c->tcp);
	c->last_ms = uv_now(server->loop);
	if (uv_accept(server, (uv_stream_t *)&c->tcp) ||
	    uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&sa, &salen)) {
		close_client(c);
		return;
	}
	c->family = sa.ss_family;
	if (sa.ss_family == AF_INET6)
		memcpy(c->addr, &((struct sockaddr_in6 *)&sa)->sin6_addr, 16);
	else
		memcpy(c->addr, &((struct sockaddr_in *)&sa)->sin_addr, 4);
	/* Descriptors are shared with raft's connections and files: the
	 * node never holds more clients than the cap. */
	int room = make_room(c, why, sizeof(why));

	append_client(c);
	nclients++;
	if (room) {
		say(c, "error %s\n", why);
		close_client(c);
		return;
	}
	if (uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb))
		close_client(c);
}

/* ---- the node -------------------------------------------------------------- */

static uv_loop_t loop;
static uv_signal_t sigint, sigterm;
static uv_tcp_t server;
static struct raft_uv_transport transport;

static uv_timer_t watchdog;

/* raft goes unavailable for good when its storage fails (a full log on a
 * follower, an I/O error): the node says why and exits, so that whatever
 * supervises it sees it and restarts it, instead of a process that is up
 * and answers nothing. Idle clients are closed here too. */
static void watch(uv_timer_t *t)
{
	const char *failed = uv_storage ? NULL : pmwal_raft_error(io);

	close_idle_clients(t->loop);
	/* raft 0.15 does not stop on every storage failure: a follower whose
	 * snapshot install failed stays a follower, behind for good. */
	if (failed) {
		fprintf(stderr, "raftkv: the storage failed: %s; exiting\n", failed);
		_exit(1); /* fail stop: raft's requests in flight are not unwound */
	}
	if (raft_state(&raft) != RAFT_UNAVAILABLE)
		return;
	fprintf(stderr, "raftkv: raft is unavailable: %s%s%s; exiting\n", raft_errmsg(&raft),
		raft_errmsg(&raft)[0] && io->errmsg[0] ? "; storage: " : "", io->errmsg);
	_exit(1);
}

static void raft_closed(struct raft *r)
{
	(void)r;
	if (uv_storage) {
		raft_uv_close(io);
		free(io);
	} else {
		pmwal_raft_free(io);
	}
	raft_uv_tcp_close(&transport);
	uv_close((uv_handle_t *)&server, NULL);
	/* The clients' open connections would keep the loop, and the node,
	 * running. */
	while (clients_head)
		close_client(clients_head);
	uv_close((uv_handle_t *)&sigint, NULL);
	uv_close((uv_handle_t *)&sigterm, NULL);
	uv_close((uv_handle_t *)&watchdog, NULL);
}

static void on_signal(uv_signal_t *s, int sig)
{
	(void)s, (void)sig;
	uv_signal_stop(&sigint);
	uv_signal_stop(&sigterm);
	uv_timer_stop(&watchdog); /* a closing raft is unavailable too */
	raft_close(&raft, raft_closed);
}

static void usage(int rc);

/* A number option from @min to @max, or exit 2 saying so. */
static unsigned uint_arg(const char *opt, const char *v, unsigned min, unsigned max)
{
	char *end;

	errno = 0;
	unsigned long n = strtoul(v, &end, 10);

	if (errno || end == v || *end || v[0] < '0' || v[0] > '9' || n < min || n > max) {
		fprintf(stderr, "raftkv: %s %s: want a number from %u to %u\n", opt, v, min, max);
		exit(2);
	}
	return (unsigned)n;
}

/* A count option: 1..2^31, or usage. */
static unsigned count_arg(const char *opt, const char *v)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (end == v || *end || n < 1 || n > (1ul << 31) || v[0] == '-') {
		fprintf(stderr, "raftkv: %s %s: want a count from 1 to 2147483648\n", opt, v);
		exit(2);
	}
	return (unsigned)n;
}

static void usage(int rc)
{
	fprintf(rc ? stderr : stdout,
		"usage: raftkv --id N --peers HOST:PORT,HOST:PORT,... --dir DIR [--target TARGET]\n"
		"              [--storage pmwal|uv] [--snapshot-threshold N] [--snapshot-trailing N]\n"
		"              [--install-snapshot-timeout MS] [--max-clients N]\n"
		"              [--max-clients-per-peer N] [--idle-timeout SECONDS]\n"
		"  Clients connect to this node's --peers port + 1000.\n"
		"  --max-clients N           clients at once, 1..65536 (default 1024, or what\n"
		"                            the descriptor limit allows)\n"
		"  --max-clients-per-peer N  from one IP address, 1..65536 (default half of\n"
		"                            --max-clients; this host's clients all count as\n"
		"                            127.0.0.1, a NAT's as one address)\n"
		"  --idle-timeout SECONDS    a client silent this long is closed (default 300;\n"
		"                            0: never)\n"
		"  When full, a new client takes the place of the one idle longest; it is\n"
		"  refused only while every client has a put in flight.\n");
	exit(rc);
}

/* Descriptors the node keeps for raft's connections, its log, snapshots
 * and the loop, beside its clients'. */
#define FDS_RESERVED 64

/*
 * Sets the client limits: raises the descriptor limit as far as it goes
 * and fits --max-clients under it (a client past it would be dropped by
 * the loop's accept without a word). Returns 0, or 2 after saying why.
 */
static int client_limits(bool max_set, bool per_peer_set)
{
	struct rlimit rl;
	rlim_t fit = 65536 + FDS_RESERVED;

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < fit)
			fit = rl.rlim_cur;
	}
	fit = fit > FDS_RESERVED ? fit - FDS_RESERVED : 0;
	if (clients_max > fit && (max_set || !fit)) {
		fprintf(stderr,
			"raftkv: --max-clients %u: the descriptor limit (ulimit -n %llu) leaves "
			"room for %llu clients; raise the limit or lower --max-clients\n",
			clients_max, (unsigned long long)(fit + FDS_RESERVED),
			(unsigned long long)fit);
		return 2;
	}
	if (clients_max > fit)
		clients_max = (unsigned)fit;
	if (!per_peer_set)
		clients_per_peer_max = clients_max > 1 ? clients_max / 2 : 1;
	if (clients_per_peer_max > clients_max) {
		fprintf(stderr, "raftkv: --max-clients-per-peer %u is above --max-clients %u\n",
			clients_per_peer_max, clients_max);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *target = NULL, *peer_arg = NULL;
	int id = 0;
	unsigned threshold = 2048, trailing = 512;
	/*
	 * How long a leader waits to hear that a snapshot it sent was installed
	 * before it tries again. raft 0.15 waits 30 s by default, and while it
	 * waits it takes no other answer from that follower: a follower killed
	 * with the snapshot on its way (or restarted as it was sent) came back
	 * and stayed behind for those 30 s (the cluster test in CI). A snapshot
	 * this store sends goes over in well under a second, so 5 s.
	 */
	unsigned snapshot_timeout = 5000;
	bool max_set = false, per_peer_set = false;
	char err[1024];
	int rv;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			usage(0);
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--id"))
			id = (int)count_arg(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--peers"))
			peer_arg = argv[i + 1];
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--target"))
			target = argv[i + 1];
		else if (!strcmp(argv[i], "--storage") && !strcmp(argv[i + 1], "uv"))
			uv_storage = true;
		else if (!strcmp(argv[i], "--storage") && !strcmp(argv[i + 1], "pmwal"))
			uv_storage = false;
		else if (!strcmp(argv[i], "--snapshot-threshold"))
			threshold = count_arg(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--snapshot-trailing"))
			trailing = count_arg(argv[i], argv[i + 1]);
		else if (!strcmp(argv[i], "--install-snapshot-timeout")) {
			snapshot_timeout = count_arg(argv[i], argv[i + 1]);
			/* Below the election timeout a leader cuts off each send of
			 * a large snapshot and starts it again, on and on: the
			 * cluster stalled, and a follower crashed in raft (with
			 * 1 ms and 100 MB snapshots). */
			if (snapshot_timeout < 1000) {
				fprintf(stderr,
					"raftkv: --install-snapshot-timeout %s: want at "
					"least 1000 ms (raft's election timeout); set it "
					"above the time a snapshot takes to send\n",
					argv[i + 1]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--max-clients")) {
			clients_max = uint_arg(argv[i], argv[i + 1], 1, 65536);
			max_set = true;
		} else if (!strcmp(argv[i], "--max-clients-per-peer")) {
			clients_per_peer_max = uint_arg(argv[i], argv[i + 1], 1, 65536);
			per_peer_set = true;
		} else if (!strcmp(argv[i], "--idle-timeout")) {
			idle_timeout_s = uint_arg(argv[i], argv[i + 1], 0, 86400);
		} else {
			usage(2);
		}
	}
	if (argc % 2 == 0 || !dir || !peer_arg || id < 1)
		usage(2);
	if ((rv = client_limits(max_set, per_peer_set)) != 0)
		return rv;
	char list[1024];

	snprintf(list, sizeof(list), "%s", peer_arg);
	for (char *s, *t = strtok_r(list, ",", &s); t && npeers < PEERS_MAX;
	     t = strtok_r(NULL, ",", &s))
		snprintf(peers[npeers++], sizeof(peers[0]), "%s", t);
	for (int i = 0; i < npeers; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(peers[i], peers[j])) {
				fprintf(stderr, "raftkv: --peers names %s twice\n", peers[i]);
				return 2;
			}
	if (id > npeers) {
		fprintf(stderr, "raftkv: --id %d but only %d peers\n", id, npeers);
		return 2;
	}
	char host[64];
	int port;

	if (sscanf(peers[id - 1], "%63[^:]:%d", host, &port) != 2 || port < 1 || port > 64535) {
		fprintf(stderr, "raftkv: %s is not HOST:PORT\n", peers[id - 1]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	uv_loop_init(&loop);
	struct raft_fsm fsm = {.version = 1, .apply = fsm_apply, .snapshot = fsm_snapshot,
			       .restore = fsm_restore};
	struct pmwal_raft_options o = {.dir = dir, .target = target};
	rv = raft_uv_tcp_init(&transport, &loop);

	if (!rv && uv_storage) {
		io = calloc(1, sizeof(*io));
		if (!io || (rv = raft_uv_init(io, &loop, dir, &transport)) != 0) {
			fprintf(stderr, "raftkv: raft_uv_init %s: %s\n", dir, raft_strerror(rv));
			return 1;
		}
	} else if (!rv && (rv = pmwal_raft_init(&io, &loop, &transport, &o, err, sizeof(err))) != 0) {
		fprintf(stderr, "raftkv: %s\n", err);
		return 1;
	}
	if (!rv)
		rv = raft_init(&raft, io, &fsm, (raft_id)id, peers[id - 1]);
	if (rv) {
		fprintf(stderr, "raftkv: raft_init: %s%s%s\n", raft_strerror(rv),
			io && io->errmsg[0] ? ": " : "", io ? io->errmsg : "");
		return 1;
	}
	struct raft_configuration conf;

	raft_configuration_init(&conf);
	for (int i = 0; i < npeers; i++)
		raft_configuration_add(&conf, (raft_id)i + 1, peers[i], RAFT_VOTER);
	rv = raft_bootstrap(&raft, &conf);
	raft_configuration_close(&conf);
	if (rv && rv != RAFT_CANTBOOTSTRAP) {
		fprintf(stderr, "raftkv: bootstrap: %s\n", raft_errmsg(&raft));
		return 1;
	}
	raft_set_snapshot_threshold(&raft, threshold);
	raft_set_snapshot_trailing(&raft, trailing);
	raft_set_install_snapshot_timeout(&raft, snapshot_timeout);
	if ((rv = raft_start(&raft)) != 0) {
		fprintf(stderr, "raftkv: start: %s: %s%s%s\n", raft_strerror(rv), raft_errmsg(&raft),
			raft_errmsg(&raft)[0] ? "; " : "", io->errmsg);
		return 1;
	}
	started = true;
	struct sockaddr_in sa;

	uv_ip4_addr(host, port + 1000, &sa);
	uv_tcp_init(&loop, &server);
	if ((rv = uv_tcp_bind(&server, (struct sockaddr *)&sa, 0)) != 0 ||
	    (rv = uv_listen((uv_stream_t *)&server, 128, on_connect)) != 0) {
		fprintf(stderr, "raftkv: clients on %s:%d: %s\n", host, port + 1000, uv_strerror(rv));
		return 1;
	}
	uv_timer_init(&loop, &watchdog);
	uv_timer_start(&watchdog, watch, 200, 200);
	uv_signal_init(&loop, &sigint);
	uv_signal_init(&loop, &sigterm);
	uv_signal_start(&sigint, on_signal, SIGINT);
	uv_signal_start(&sigterm, on_signal, SIGTERM);
	fprintf(stderr,
		"raftkv: node %d: raft on %s, clients on %s:%d (at most %u, %u per address; "
		"idle timeout %u s), log %s\n",
		id, peers[id - 1], host, port + 1000, clients_max, clients_per_peer_max,
		idle_timeout_s, uv_storage ? "raft_uv segments in DIR" : target ? target : "DIR/log");
	uv_run(&loop, UV_RUN_DEFAULT);
	clear();
	uv_loop_close(&loop);
	return 0;
}
