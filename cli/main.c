// SPDX-License-Identifier: MIT
/*
 * main.c - the `pmwal` command: dispatches to one subcommand. Exit codes are
 * the same everywhere: 0 success, 1 failure, 2 bad usage or unreadable
 * target, 3 a corrupt log.
 */
#include <stdio.h>
#include <string.h>

#include "bench_cmd.h"
#include "cli.h"
#include "pmwal.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
    {"create", cmd_create, "create (format) a log on a file, device or region"},
    {"append", cmd_append, "append records from stdin; exits 0 once they are durable"},
    {"dump", cmd_dump, "print records with their LSNs"},
    {"tail", cmd_tail, "print records as they become durable (--follow)"},
    {"verify", cmd_verify, "check a log read-only: clean, torn tail or corrupt"},
    {"recover", cmd_recover, "run recovery (cut off an unacknowledged torn tail)"},
    {"info", cmd_info, "show superblock, geometry and durability mode"},
    {"release", cmd_release, "release records below an LSN (after a checkpoint)"},
    {"crashtest", cmd_crashtest, "crash the log on simulated media and real writers; check"},
    {"probe", cmd_probe, "what a medium is and what it guarantees"},
    {"bench", cmd_bench, "device and log benchmarks (default suite without arguments)"},
    {"report", cmd_report, "HTML report with plots from bench JSON results"},
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmwal COMMAND [OPTIONS] [TARGET]\n\n"
		"pmwal %s: a write-ahead log for persistent memory and NVMe "
		"(on-disk format %d)\n\ncommands:\n",
		pmwal_version(), PMWAL_FORMAT_VERSION);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\ntargets: PATH (file or block device, io_uring + O_DIRECT), "
		   "pmem:PATH, /dev/daxX.Y,\n         pmr:BDF (NVMe PMR), "
		   "fakepmr:PATH (simulated PMR)\n"
		   "`pmwal COMMAND --help` shows a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("pmwal %s (format %d)\n", pmwal_version(), PMWAL_FORMAT_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "pmwal: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
