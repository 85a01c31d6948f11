/* SPDX-License-Identifier: MIT */
/*
 * sim.h - internals of the simulated media (sim.c): the device constructor
 * that wal_dev_open() calls for a "sim:NAME" target. The API is pmwal_sim_*
 * in pmwal.h.
 */
#ifndef PMWAL_SIM_H
#define PMWAL_SIM_H

#include <stddef.h>

#include "device.h"

/* Opens a device on the registered medium named @name. Returns 0 and *@out,
 * -ENOENT (no such medium) or -ENOSPC (create_bytes larger than it), with a
 * message in @err. */
int wal_dev_open_sim(const struct wal_dev_params *p, const char *name,
		     struct wal_dev **out, char *err, size_t errlen);

#endif /* PMWAL_SIM_H */
