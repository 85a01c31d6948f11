// SPDX-License-Identifier: MIT
/*
 * region.c - the front door of pmr/: turns a target string into the right
 * kind of region and forwards the generic calls to its ops table. Kept apart
 * from the kinds so that adding one touches a table here and nothing else.
 * The target is taken apart by pmwal_target_parse() (libpmwal's public API,
 * the one parser of targets), so the engine, bench, probe and pmr/ read every
 * target the same way.
 */
#include "pmr_internal.h"
#include "pmwal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int pmr_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

bool pmr_parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

int pmr_read_file(const char *path, char *buf, size_t buflen)
{
	int fd;
	ssize_t n;

	if (!buflen)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, buflen - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

uint64_t pmr_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int pmr_open(const struct pmr_params *p, struct pmr_region **out, char *err,
	     size_t errlen)
{
	struct pmwal_target t;

	if (out)
		*out = NULL;
	if (!p || !out || !p->target || !*p->target)
		return pmr_errf(err, errlen, -EINVAL, "no target given");
	/* A malformed target still has its kind: each kind names what is wrong. */
	(void)pmwal_target_parse(p->target, &t);
	switch (t.kind) {
	case PMWAL_TARGET_PMR:
		return pmr_nvme_open(p, t.rest, out, err, errlen);
	case PMWAL_TARGET_FAKEPMR:
		return pmr_fake_open(p, t.rest, out, err, errlen);
	case PMWAL_TARGET_SIM:
		return pmr_errf(err, errlen, -EINVAL,
				"%s: a simulated medium (sim:NAME) is no region: use "
				"pmem:PATH, /dev/daxX.Y, pmr:BDF or fakepmr:PATH",
				p->target);
	case PMWAL_TARGET_FILE:
	case PMWAL_TARGET_PMEM:
	case PMWAL_TARGET_DEVDAX:
		break;
	}
	if (!*t.rest)
		return pmr_errf(err, errlen, -EINVAL, "%s: no path after \"%.*s\"",
				p->target, (int)(t.rest - p->target), p->target);
	return pmr_pmem_open(p, t.rest, t.kind == PMWAL_TARGET_DEVDAX, out, err, errlen);
}

int pmr_query_caps(const char *target, struct pmr_caps *caps, char *err, size_t errlen)
{
	struct pmwal_target t;

	if (!target || !caps)
		return pmr_errf(err, errlen, -EINVAL, "no target given");
	memset(caps, 0, sizeof(*caps));
	(void)pmwal_target_parse(target, &t); /* as pmr_open() */
	if (t.kind == PMWAL_TARGET_PMR)
		return pmr_nvme_query(t.rest, caps, err, errlen);
	if (t.kind == PMWAL_TARGET_FAKEPMR)
		return pmr_fake_query(t.rest, caps, err, errlen);
	return pmr_errf(err, errlen, -EINVAL,
			"%s: not an NVMe PMR target (use pmr:BDF or fakepmr:PATH)",
			target);
}

void pmr_close(struct pmr_region *r)
{
	if (r)
		r->ops->close(r);
}

uint8_t *pmr_base(const struct pmr_region *r)
{
	return r->base;
}

uint64_t pmr_size(const struct pmr_region *r)
{
	return r->size_bytes;
}

void pmr_get_info(const struct pmr_region *r, struct pmr_info *info)
{
	*info = r->info;
}

void pmr_copy_nodrain(struct pmr_region *r, uint64_t off, const void *src, size_t len)
{
	/* Callers own the bounds (the device checks each wal_io): a copy past
	 * the end is a programmer error, never an I/O error. */
	assert(off <= r->size_bytes && len <= r->size_bytes - off);
	assert(!r->readonly);
	if (len == 0 || off > r->size_bytes || len > r->size_bytes - off || r->readonly)
		return;
	r->ops->copy_nodrain(r, off, src, len);
}

int pmr_barrier(struct pmr_region *r)
{
	if (r->readonly)
		return -EROFS;
	return r->ops->barrier(r);
}

int pmr_reload(struct pmr_region *r)
{
	return r->ops->reload ? r->ops->reload(r) : 0;
}
