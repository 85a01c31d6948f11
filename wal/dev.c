// SPDX-License-Identifier: MIT
/*
 * dev.c - the one place a target string is parsed: which device opens it
 * and which file or device node it lives in (the writer lock and the CLI's
 * "never overwrite a user's file" check both need that node). Kept apart
 * from the devices so that each device file holds only its own medium.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "pmwal.h"
#include "sim.h"

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int wal_target_parse(const char *target, struct wal_target *t)
{
	const char *p = target;
	size_t n;

	memset(t, 0, sizeof(*t));
	if (!target || !*target)
		return PMWAL_EBADOPT;
	if (has_prefix(p, "pmr:")) {
		t->kind = WAL_TARGET_PMR;
		p += 4;
		n = strcspn(p, ",");
		if (n == 0 || n >= sizeof(t->path))
			return PMWAL_EBADOPT;
		memcpy(t->path, p, n); /* the PCI address: the device has no file */
		return 0;
	}
	if (has_prefix(p, "sim:")) {
		t->kind = WAL_TARGET_SIM;
		snprintf(t->path, sizeof(t->path), "%s", p + 4);
		return 0;
	}
	if (has_prefix(p, "fakepmr:")) {
		t->kind = WAL_TARGET_FAKEPMR;
		p += 8;
		n = strcspn(p, ","); /* options follow the path */
	} else {
		if (has_prefix(p, "pmem:")) {
			t->kind = WAL_TARGET_PMEM;
			p += 5;
		} else if (has_prefix(p, "file:")) {
			t->kind = WAL_TARGET_FILE;
			p += 5;
		} else {
			t->kind = WAL_TARGET_FILE;
		}
		if (has_prefix(p, "/dev/dax"))
			t->kind = WAL_TARGET_DEVDAX;
		n = strlen(p);
	}
	if (n == 0 || n >= sizeof(t->path))
		return PMWAL_EBADOPT;
	memcpy(t->path, p, n);
	t->path[n] = 0;
	t->has_file = true;
	return 0;
}

int pmwal_target_path(const char *target, char *buf, size_t len)
{
	struct wal_target t;
	int rc = wal_target_parse(target, &t);

	if (rc)
		return rc;
	if (!t.has_file)
		return 0;
	if (!buf || snprintf(buf, len, "%s", t.path) >= (int)len)
		return -ENAMETOOLONG;
	return 1;
}

int wal_dev_open(const struct wal_dev_params *p, struct wal_dev **out, char *err,
		 size_t errlen)
{
	struct wal_target t;
	struct wal_dev_params fp = *p;

	if (wal_target_parse(p->target, &t)) {
		snprintf(err, errlen, "%s: not a target (see pmwal_options.target)",
			 p->target);
		return PMWAL_EBADOPT;
	}
	switch (t.kind) {
	case WAL_TARGET_PMEM:
	case WAL_TARGET_DEVDAX:
	case WAL_TARGET_PMR:
	case WAL_TARGET_FAKEPMR:
		return wal_dev_open_pmem(p, out, err, errlen);
	case WAL_TARGET_SIM:
		return wal_dev_open_sim(p, t.path, out, err, errlen);
	case WAL_TARGET_FILE:
		break;
	}
	fp.target = t.path;
	return wal_dev_open_file(&fp, out, err, errlen);
}
