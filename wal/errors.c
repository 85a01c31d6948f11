// SPDX-License-Identifier: MIT
/*
 * errors.c - the text of every error code, from the one table in pmwal.h, and
 * the library version. OS errors are -errno and are named by strerror().
 */
#include <string.h>

#include "pmwal.h"

const char *pmwal_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
#define PMWAL_X_CASE(name, value, text)                                                  \
	case name:                                                                       \
		return text;
		PMWAL_ERRORS(PMWAL_X_CASE)
#undef PMWAL_X_CASE
	default:
		break;
	}
	if (err < 0 && err > -4096)
		return strerror(-err);
	return "unknown error";
}

const char *pmwal_version(void)
{
	return PMWAL_VERSION_STRING;
}
