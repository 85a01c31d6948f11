// SPDX-License-Identifier: MIT
/*
 * cmd_probe.c - `pmwal probe [TARGET] [--json]`: what a storage target is
 * and what it promises (sector sizes, write cache, FUA, atomic write unit,
 * DAX and store granularity, PMR registers), or with no target, what this
 * machine has. The facts come from pmr/probe.c, shared with the benchmark's
 * environment record, so the CLI and a bench report never disagree.
 */
#include "cli.h"
#include "probe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmwal probe [TARGET] [--json]\n"
		"  TARGET: /dev/nvmeXnY, /dev/nvmeX, any block device, /dev/daxX.Y,\n"
		"          a file or directory (pmem:PATH too), pmr:BDF, fakepmr:PATH\n"
		"  no TARGET: list NVMe controllers, PMRs, DAX and pmem devices\n"
		"  --json: print one JSON object\n");
}

/*
 * Reports a refused target and returns @exit_code: one line on stderr and,
 * with --json, one object on stdout as the log commands give, so that a
 * script parsing stdout sees it.
 */
static int probe_fail(const char *target, bool json, int exit_code, const char *msg)
{
	fprintf(stderr, "pmwal probe: %s\n", msg);
	if (json) {
		json_t *o =
		    json_pack("{s:s, s:s, s:s, s:i}", "command", "probe", "target",
			      target ? target : "", "error", msg, "exit", exit_code);

		if (o) {
			json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			fputc('\n', stdout);
			json_decref(o);
		}
	}
	return exit_code;
}

int cmd_probe(int argc, char **argv)
{
	const char *target = NULL;
	bool json = false;
	char err[1024] = "";
	json_t *o;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			fprintf(stderr, "pmwal probe: unknown option %s\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (!target) {
			target = argv[i];
		} else {
			fprintf(stderr,
				"pmwal probe: one target at a time (got %s and %s)\n",
				target, argv[i]);
			return 2;
		}
	}
	rc = pmr_probe(target, &o, err, sizeof(err));
	if (rc) {
		/* An unreadable or missing target is the user's to fix (2);
		 * running out of memory is ours (1). */
		int code = rc == -ENOMEM ? 1 : 2;

		return probe_fail(target, json, code, err[0] ? err : strerror(-rc));
	}
	if (json) {
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
	} else {
		pmr_probe_print(stdout, o);
	}
	json_decref(o);
	return fflush(stdout) == 0 ? 0 : 1;
}
