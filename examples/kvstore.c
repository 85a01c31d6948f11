// SPDX-License-Identifier: MIT
/*
 * kvstore.c - how a database embeds pmwal: a key-value store whose every put
 * and delete is durable in the log before it is acknowledged, with
 * checkpoints that let the log be released.
 *
 *   kvstore DIR [--target TARGET]      TARGET: the log (default DIR/log; e.g.
 *                                      pmem:/dev/shm/kv.log, fakepmr:PATH)
 *
 * One command per line on stdin, one answer per line on stdout:
 *   put KEY VALUE   ok LSN          (durable before the answer)
 *   del KEY         ok LSN
 *   get KEY         value VALUE | missing
 *   checkpoint      checkpoint LSN  (the snapshot covers LSN; the log below
 *                                    LSN + 1 is released)
 *   dump            KEY VALUE lines, then "end"
 *   quit
 * KEY is one word; VALUE the rest of the line. A bad line gets "error ...".
 *
 * State: a hash table in memory. A checkpoint writes it to DIR/snapshot the
 * way a file must be replaced to survive a crash (write a temporary file,
 * fsync it, rename it over the old one, fsync the directory), and only then
 * releases the records it covers (pmwal_release). At start: the snapshot
 * (the LSN it covers), then the log's records after that LSN.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmwal.h>

/* ---- the table: open addressing, linear probing ------------------------ */

struct slot {
	char *key; /* NULL: empty; TOMB: deleted */
	char *value;
};

static char tomb;
#define TOMB (&tomb)

static struct slot *slots;
static size_t nslots, used, live;

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

static struct slot *find(const char *key, bool for_insert)
{
	struct slot *tombstone = NULL;

	for (size_t i = hash(key) & (nslots - 1);; i = (i + 1) & (nslots - 1)) {
		struct slot *s = &slots[i];

		if (!s->key)
			return for_insert ? (tombstone ? tombstone : s) : NULL;
		if (s->key == TOMB) {
			if (!tombstone)
				tombstone = s;
		} else if (!strcmp(s->key, key)) {
			return s;
		}
	}
}

static void grow(void)
{
	struct slot *old = slots;
	size_t n = nslots;

	nslots = n ? n * 2 : 1024;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots) {
		perror("kvstore");
		exit(1);
	}
	used = live = 0;
	for (size_t i = 0; i < n; i++)
		if (old[i].key && old[i].key != TOMB) {
			*find(old[i].key, true) = old[i];
			used++;
			live++;
		}
	free(old);
}

static void table_put(const char *key, const char *value)
{
	if ((used + 1) * 10 >= nslots * 7)
		grow();
	struct slot *s = find(key, true);

	if (s->key && s->key != TOMB) {
		free(s->value);
	} else {
		if (!s->key)
			used++;
		live++;
		s->key = strdup(key);
	}
	s->value = strdup(value);
	if (!s->key || !s->value) {
		perror("kvstore");
		exit(1);
	}
}

static void table_del(const char *key)
{
	struct slot *s = find(key, false);

	if (!s)
		return;
	free(s->key);
	free(s->value);
	s->key = TOMB;
	s->value = NULL;
	live--;
}

/* ---- records: "P" KEY "\0" VALUE, or "D" KEY ---------------------------- */

static int apply(const void *rec, size_t len)
{
	const char *r = rec;
	char *buf = malloc(len + 1);

	if (!buf)
		return -ENOMEM;
	memcpy(buf, r, len);
	buf[len] = 0;
	int rc = 0;

	if (len >= 2 && buf[0] == 'P' && strlen(buf + 1) + 1 < len)
		table_put(buf + 1, buf + 1 + strlen(buf + 1) + 1);
	else if (len >= 2 && buf[0] == 'D')
		table_del(buf + 1);
	else
		rc = -EINVAL;
	free(buf);
	return rc;
}

/* ---- the snapshot ------------------------------------------------------ */

#define SNAP_MAGIC "PMKVSNP1"

static char snap_path[4096], snap_tmp[4096], dir_path[4096];

static int write_all(int fd, const void *p, size_t n)
{
	for (const char *c = p; n;) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The table as of @lsn, replacing the old snapshot only once it is durable. */
static int snapshot_write(uint64_t lsn)
{
	int fd = open(snap_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = fd < 0 ? -errno : 0;
	uint64_t n = live;

	if (!rc)
		rc = write_all(fd, SNAP_MAGIC, 8);
	if (!rc)
		rc = write_all(fd, &lsn, 8);
	if (!rc)
		rc = write_all(fd, &n, 8);
	for (size_t i = 0; !rc && i < nslots; i++) {
		struct slot *s = &slots[i];

		if (!s->key || s->key == TOMB)
			continue;
		uint32_t kl = (uint32_t)strlen(s->key), vl = (uint32_t)strlen(s->value);

		rc = write_all(fd, &kl, 4);
		if (!rc)
			rc = write_all(fd, &vl, 4);
		if (!rc)
			rc = write_all(fd, s->key, kl);
		if (!rc)
			rc = write_all(fd, s->value, vl);
	}
	if (!rc && fsync(fd))
		rc = -errno;
	if (fd >= 0 && close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(snap_tmp, snap_path))
		rc = -errno;
	if (!rc) { /* the rename itself, durable */
		int d = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		rc = d < 0 || fsync(d) ? -errno : 0;
		if (d >= 0)
			close(d);
	}
	return rc;
}

/* Loads the snapshot; *@lsn is what it covers (0: none). */
static int snapshot_load(uint64_t *lsn)
{
	FILE *f = fopen(snap_path, "rbe");
	char magic[8];
	uint64_t n;

	*lsn = 0;
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	int rc = fread(magic, 8, 1, f) == 1 && !memcmp(magic, SNAP_MAGIC, 8) &&
			 fread(lsn, 8, 1, f) == 1 && fread(&n, 8, 1, f) == 1
		     ? 0
		     : -EINVAL;

	for (uint64_t i = 0; !rc && i < n; i++) {
		uint32_t kl, vl;

		if (fread(&kl, 4, 1, f) != 1 || fread(&vl, 4, 1, f) != 1 || kl > (1u << 20) ||
		    vl > (1u << 24)) {
			rc = -EINVAL;
			break;
		}
		char *k = malloc(kl + 1), *v = malloc(vl + 1);

		if (!k || !v || fread(k, 1, kl, f) != kl || fread(v, 1, vl, f) != vl) {
			rc = -EINVAL;
		} else {
			k[kl] = v[vl] = 0;
			table_put(k, v);
		}
		free(k);
		free(v);
	}
	fclose(f);
	return rc;
}

/* ---- the store ------------------------------------------------------- */

static struct pmwal *w;
static int checkpoint(uint64_t *lsn);

static int log_append(char op, const char *key, const char *value, uint64_t *lsn)
{
	size_t kl = strlen(key), vl = value ? strlen(value) : 0;
	size_t len = 1 + kl + (value ? 1 + vl : 0);
	char *rec = malloc(len);

	if (!rec)
		return -ENOMEM;
	rec[0] = op;
	memcpy(rec + 1, key, kl);
	if (value) {
		rec[1 + kl] = 0;
		memcpy(rec + 2 + kl, value, vl);
	}
	int rc = pmwal_append(w, rec, len, lsn); /* durable when it returns */

	if (rc == PMWAL_EFULL) { /* the log holds what no snapshot does: take one */
		uint64_t at;

		rc = checkpoint(&at);
		if (!rc)
			rc = pmwal_append(w, rec, len, lsn);
	}
	free(rec);
	return rc;
}

static int checkpoint(uint64_t *lsn)
{
	int rc;

	*lsn = pmwal_durable_lsn(w); /* everything applied is durable */
	if ((rc = snapshot_write(*lsn)) != 0)
		return rc;
	return pmwal_release(w, *lsn + 1); /* only now: the snapshot holds them */
}

static int start(const char *target)
{
	char err[512] = "";
	struct pmwal_options o = {.target = target, .errmsg_buf = err, .errmsg_len = sizeof(err)};
	uint64_t snap_lsn;
	int rc = snapshot_load(&snap_lsn);

	if (rc) {
		fprintf(stderr, "kvstore: %s: %s\n", snap_path, strerror(-rc));
		return 1;
	}
	rc = pmwal_open(&o, &w);
	if (rc == -ENOENT && !snap_lsn) {
		o.flags = PMWAL_OPEN_CREATE | PMWAL_OPEN_EXCL;
		o.capacity_bytes = 64u << 20;
		rc = pmwal_open(&o, &w);
	}
	if (rc) {
		fprintf(stderr, "kvstore: %s: %s\n", target, err[0] ? err : pmwal_strerror(rc));
		return 1;
	}
	struct pmwal_info info;
	struct pmwal_iter *it;
	uint64_t lsn;
	const void *data;
	size_t len;

	pmwal_stat(w, &info);
	if (info.head_lsn > snap_lsn + 1) {
		fprintf(stderr,
			"kvstore: the log starts at LSN %" PRIu64 " but the snapshot covers "
			"only up to %" PRIu64 ": records between are gone\n",
			info.head_lsn, snap_lsn);
		return 1;
	}
	/* Replay what the snapshot does not hold. */
	uint64_t from = snap_lsn + 1 > info.head_lsn ? snap_lsn + 1 : info.head_lsn;

	if (from < info.next_lsn) {
		if ((rc = pmwal_iter_open(w, from, &it)) != 0) {
			fprintf(stderr, "kvstore: replay: %s\n", pmwal_errmsg(w));
			return 1;
		}
		while ((rc = pmwal_iter_next(it, &lsn, &data, &len)) == 1)
			if (lsn > snap_lsn && apply(data, len)) {
				fprintf(stderr, "kvstore: LSN %" PRIu64 " is not a record of ours\n",
					lsn);
				return 1;
			}
		pmwal_iter_close(it);
		if (rc < 0) {
			fprintf(stderr, "kvstore: replay: %s\n", pmwal_errmsg(w));
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	char target[4096], *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (argc != 2 && !(argc == 4 && !strcmp(argv[2], "--target"))) {
		fprintf(stderr, "usage: kvstore DIR [--target TARGET]\n");
		return 2;
	}
	snprintf(dir_path, sizeof(dir_path), "%s", argv[1]);
	snprintf(snap_path, sizeof(snap_path), "%s/snapshot", argv[1]);
	snprintf(snap_tmp, sizeof(snap_tmp), "%s/snapshot.tmp", argv[1]);
	snprintf(target, sizeof(target), "%s", argc == 4 ? argv[3] : "");
	if (argc == 2)
		snprintf(target, sizeof(target), "%s/log", argv[1]);
	grow();
	if (start(target))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = 0;
		char *cmd = line, *key = strchr(line, ' '), *value = NULL;
		uint64_t lsn;
		int rc = 0;

		if (key) {
			*key++ = 0;
			value = strchr(key, ' ');
			if (value)
				*value++ = 0;
		}
		if (!strcmp(cmd, "put") && key && *key && value) {
			if (!(rc = log_append('P', key, value, &lsn))) {
				table_put(key, value);
				printf("ok %" PRIu64 "\n", lsn);
			}
		} else if (!strcmp(cmd, "del") && key && *key && !value) {
			if (!(rc = log_append('D', key, NULL, &lsn))) {
				table_del(key);
				printf("ok %" PRIu64 "\n", lsn);
			}
		} else if (!strcmp(cmd, "get") && key && *key && !value) {
			struct slot *s = find(key, false);

			if (s)
				printf("value %s\n", s->value);
			else
				printf("missing\n");
		} else if (!strcmp(cmd, "checkpoint") && !key) {
			if (!(rc = checkpoint(&lsn)))
				printf("checkpoint %" PRIu64 "\n", lsn);
		} else if (!strcmp(cmd, "dump") && !key) {
			for (size_t i = 0; i < nslots; i++)
				if (slots[i].key && slots[i].key != TOMB)
					printf("%s %s\n", slots[i].key, slots[i].value);
			printf("end\n");
		} else if (!strcmp(cmd, "quit") && !key) {
			break;
		} else {
			printf("error: unknown command or arguments: %s\n", cmd);
		}
		if (rc) {
			/* Nothing acknowledged: the store stops (a failed log is
			 * sticky; a restart runs recovery). */
			printf("error %s: %s\n", pmwal_strerror(rc), pmwal_errmsg(w));
			fprintf(stderr, "kvstore: %s\n", pmwal_errmsg(w));
			pmwal_close(w);
			return 1;
		}
	}
	free(line);
	int rc = pmwal_close(w);

	if (rc)
		fprintf(stderr, "kvstore: close: %s\n", pmwal_strerror(rc));
	return rc ? 1 : 0;
}
