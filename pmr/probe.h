/* SPDX-License-Identifier: MIT */
/*
 * probe.h - what a storage target is, as facts: NVMe identify data, block
 * queue limits, filesystem, DAX, libpmem2 granularity, O_DIRECT and atomic
 * write support, NVMe PMR registers. `pmwal probe` prints them; the benchmark
 * stores the same object in its environment record, so a result always says
 * what it was measured on.
 */
#ifndef PMWAL_PMR_PROBE_H
#define PMWAL_PMR_PROBE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Probe @target (NULL or "": list NVMe controllers, DAX devices, pmem block
 * devices and PMRs found on this machine). Targets: a block device, an NVMe
 * controller or namespace, /dev/daxX.Y, a file or directory (pmem:PATH too),
 * pmr:BDF, fakepmr:PATH[,opts]. Facts that cannot be read (e.g. NVMe
 * identify without root) are reported as a "*_error" string, not a failure.
 *
 * Returns 0 and a new object in *out (caller owns it; json_decref), or -errno
 * with @err naming the cause and the fix: -ENOENT (no such target), -EACCES /
 * -EPERM (permission: run as root), -EINVAL (malformed target), -ENODEV (not
 * the kind of device the target names), -ENOMEM.
 */
int pmr_probe(const char *target, json_t **out, char *err, size_t errlen);

/* The same, returning the object or NULL (with @err) for callers that only
 * want the record. */
json_t *pmr_probe_json(const char *target, char *err, size_t errlen);

/* Print a probe object as indented "key: value" lines (what `pmwal probe`
 * shows without --json). */
void pmr_probe_print(FILE *f, const json_t *obj);

/*
 * What the first bytes of @target (PATH, file:PATH or pmem:PATH) hold when
 * they are a filesystem's superblock: "an ext2/3/4 filesystem", "an XFS
 * filesystem", "a btrfs filesystem"; else NULL, also when it cannot be read
 * and for device-DAX, PMRs and simulated media. Never blocks (a FIFO is
 * opened non-blocking). `pmwal create` and bench refuse to write over one
 * without --force.
 */
const char *pmr_probe_fs_magic(const char *target);

#endif /* PMWAL_PMR_PROBE_H */
