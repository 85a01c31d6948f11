// SPDX-License-Identifier: MIT
/*
 * dev.c - which device opens a target. The target is taken apart by
 * pmwal_target_parse() (target.c, the one parser of targets). Kept apart
 * from the devices so that each device file holds only its own medium.
 */
#include <stdio.h>
#include <string.h>

#include "device.h"
#include "pmwal.h"
#include "sim.h"

int wal_dev_open(const struct wal_dev_params *p, struct wal_dev **out, char *err,
		 size_t errlen)
{
	struct pmwal_target t;
	struct wal_dev_params fp = *p;

	if (pmwal_target_parse(p->target, &t)) {
		snprintf(err, errlen, "%s: not a target (see pmwal_options.target)",
			 p->target);
		return PMWAL_EBADOPT;
	}
	switch (t.kind) {
	case PMWAL_TARGET_PMEM:
	case PMWAL_TARGET_DEVDAX:
	case PMWAL_TARGET_PMR:
	case PMWAL_TARGET_FAKEPMR:
		return wal_dev_open_pmem(p, out, err, errlen);
	case PMWAL_TARGET_SIM:
		return wal_dev_open_sim(p, t.path, out, err, errlen);
	case PMWAL_TARGET_FILE:
		break;
	}
	fp.target = t.path;
	return wal_dev_open_file(&fp, out, err, errlen);
}
