// SPDX-License-Identifier: MIT
/*
 * util.c - number parsing for the command line: strict, so that "10x" or
 * "-1" is an error naming the option, never a silent zero.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "util.h"

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);

	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned int shift = 0;

	if (errno)
		return -1;
	switch (toupper((unsigned char)*end)) {
	case 0:
		break;
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return -1;
	}
	if (*end) {
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
		if (*end)
			return -1;
	}
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}
