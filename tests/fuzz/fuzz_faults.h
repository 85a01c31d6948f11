/* SPDX-License-Identifier: MIT */
/*
 * fuzz_faults.h - entry points of the structured fuzz targets, shared by the
 * libFuzzer binaries and the Criterion replay (test_fuzz.c).
 */
#ifndef PMWAL_FUZZ_FAULTS_H
#define PMWAL_FUZZ_FAULTS_H

#include <stddef.h>
#include <stdint.h>

#define FAULT_OPS_MAX 8u

/* Seed + fault script (fuzz_faults.c). Returns 0, or -1 after printing the
 * rule pmwal broke. */
int fuzz_faults_one(const uint8_t *data, size_t size);

/* Superblock fields of both copies over a real log (fuzz_sb.c). The same. */
int fuzz_sb_one(const uint8_t *data, size_t size);

#endif
