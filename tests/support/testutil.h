/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - what the test suites share: temporary directories, logs on
 * simulated devices, and records whose bytes are a function of a key so any
 * recovered record can be checked byte-exact.
 */
#ifndef PMWAL_TESTUTIL_H
#define PMWAL_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "pmwal.h"
#include "sim_dev.h"

/* A fresh directory on a disk filesystem (O_DIRECT works); removed by tu_rmdir. */
char *tu_mkdtemp(void);
/* The same on tmpfs (/dev/shm): emulated persistent memory lives there. */
char *tu_mkdtemp_shm(void);
void tu_rmdir(char *dir);
/* dir + "/" + name, malloc'd. */
char *tu_path(const char *dir, const char *name);

/* Fills @buf with @len bytes determined by @key. */
void tu_fill(void *buf, size_t len, uint64_t key);
/* 1 if @buf holds what tu_fill(@key) would write. */
int tu_check(const void *buf, size_t len, uint64_t key);

/* Options for a log on a simulated device (target "sim"). */
struct pmwal_options tu_sim_opts(uint32_t flags, uint64_t capacity_bytes);
/* Opens (or creates) a log on @sim; returns the error code. */
int tu_open_sim(struct sim_dev *sim, uint32_t flags, struct pmwal **out);
/* Recovers a copy of @sim's image read-only; fills @rep. */
int tu_verify_image(struct sim_dev *sim, struct pmwal_report *rep);

#endif
