/* SPDX-License-Identifier: MIT */
/*
 * util.h - small helpers the log subcommands share: sizes with suffixes and
 * the open flags every log command accepts.
 */
#ifndef PMWAL_CLI_UTIL_H
#define PMWAL_CLI_UTIL_H

#include <stdbool.h>
#include <stdint.h>

/* Parses "4096", "64K", "16M", "1G", "2T" (binary units). 0 ok, -1 bad. */
int cli_parse_size(const char *s, uint64_t *out);
/* Parses a decimal unsigned number with no junk after it. 0 ok, -1 bad. */
int cli_parse_u64(const char *s, uint64_t *out);

#endif
