// SPDX-License-Identifier: MIT
/*
 * target.c - the one parser of target strings (pmwal_target_parse()): which
 * medium a target names and the path after its prefix. The engine (dev.c,
 * lock.c), pmr/, bench/ and the CLI all decide by it, so a form cannot mean
 * one thing to the log and another to the tool that formats or measures it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pmwal.h"

static const struct {
	const char *prefix;
	enum pmwal_target_kind kind;
} prefixes[] = {
    {"pmr:", PMWAL_TARGET_PMR},
    {"fakepmr:", PMWAL_TARGET_FAKEPMR},
    {"sim:", PMWAL_TARGET_SIM},
    {"pmem:", PMWAL_TARGET_PMEM},
    {"file:", PMWAL_TARGET_FILE},
};

int pmwal_target_parse(const char *spec, struct pmwal_target *out)
{
	size_t n;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->kind = PMWAL_TARGET_FILE;
	out->rest = spec ? spec : "";
	if (!spec || !*spec)
		return PMWAL_EBADOPT;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t k = strlen(prefixes[i].prefix);

		if (!strncmp(spec, prefixes[i].prefix, k)) {
			out->kind = prefixes[i].kind;
			out->rest = spec + k;
			break;
		}
	}
	switch (out->kind) {
	case PMWAL_TARGET_PMR:
	case PMWAL_TARGET_FAKEPMR:
		n = strcspn(out->rest, ","); /* options follow */
		break;
	case PMWAL_TARGET_SIM:
		n = strlen(out->rest);
		if (n >= sizeof(out->path))
			return PMWAL_EBADOPT;
		memcpy(out->path, out->rest, n + 1); /* "": pmwal_open names it */
		return 0;
	default:
		n = strlen(out->rest);
		if (!strncmp(out->rest, "/dev/dax", 8))
			out->kind = PMWAL_TARGET_DEVDAX;
		break;
	}
	if (n == 0 || n >= sizeof(out->path))
		return PMWAL_EBADOPT;
	memcpy(out->path, out->rest, n);
	out->path[n] = '\0';
	out->has_file = out->kind != PMWAL_TARGET_PMR;
	return 0;
}

int pmwal_target_path(const char *target, char *buf, size_t len)
{
	struct pmwal_target t;
	int rc = pmwal_target_parse(target, &t);

	if (rc)
		return rc;
	if (!t.has_file)
		return 0;
	if (!buf)
		return -EINVAL;
	if ((size_t)snprintf(buf, len, "%s", t.path) >= len)
		return -ENAMETOOLONG;
	return 1;
}
