// SPDX-License-Identifier: MIT
/*
 * dev.c - picks the device for a target string. Kept apart from the devices so
 * that each device file holds only its own medium.
 */
#include <string.h>

#include "device.h"

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int wal_dev_open(const struct wal_dev_params *p, struct wal_dev **out, char *err,
		 size_t errlen)
{
	const char *t = p->target;

	if (has_prefix(t, "pmem:") || has_prefix(t, "pmr:") ||
	    has_prefix(t, "fakepmr:") || has_prefix(t, "/dev/dax"))
		return wal_dev_open_pmem(p, out, err, errlen);
	if (has_prefix(t, "file:"))
		t += strlen("file:");
	struct wal_dev_params fp = *p;

	fp.target = t;
	return wal_dev_open_file(&fp, out, err, errlen);
}
