// SPDX-License-Identifier: MIT
/*
 * cmd_probe.c - `pmwal probe [TARGET] [--json]`: what a storage target is
 * and what it promises (sector sizes, write cache, FUA, atomic write unit,
 * DAX and store granularity, PMR registers), or with no target, what this
 * machine has. The facts come from pmr/probe.c, shared with the benchmark's
 * environment record, so the CLI and a bench report never disagree.
 */
#include "cli.h"
#include "opttab.h"
#include "probe.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum { OPT_JSON = 'j', OPT_HELP = 'h' };

static const struct cli_opt probe_opts[] = {
    {"json", 'j', NULL, OPT_JSON, "print one JSON object (errors too)", NULL, false},
    {"help", 'h', NULL, OPT_HELP, "this text", NULL, false},
    {0},
};

const struct cli_cmd cli_probe = {
    .name = "probe",
    .summary = "what a medium is and what it guarantees",
    .synopsis = "[TARGET] [OPTIONS]",
    .description = "TARGET: /dev/nvmeXnY, /dev/nvmeX, any block device, /dev/daxX.Y,\n"
		   "a file or directory (pmem:PATH too), pmr:BDF, fakepmr:PATH.\n"
		   "Without a TARGET: the NVMe controllers, PMRs, DAX and pmem devices\n"
		   "this machine has.\n",
    .opts = probe_opts,
    .exit_status = "0\tprobed\n"
		   "1\tfailure (out of memory, writing the output)\n"
		   "2\tbad usage, or a target that is missing or cannot be read\n",
    .args = CLI_ARGS_TARGET,
};

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

	int opt;

	optind = 1;
	while ((opt = cli_getopt(&cli_probe, argc, argv)) != -1) {
		if (opt == OPT_JSON) {
			json = true;
		} else if (opt == OPT_HELP) {
			cli_help(stdout, &cli_probe);
			return 0;
		} else {
			return cli_bad_option(&cli_probe, opt, argc, argv);
		}
	}
	if (optind < argc)
		target = argv[optind++];
	if (optind < argc)
		return cli_usage_error("probe", json, target,
				       "one target at a time (got %s and %s)", target,
				       argv[optind]);
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
