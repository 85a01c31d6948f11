// SPDX-License-Identifier: MIT
/*
 * main.c - the `pmwal` command: dispatches to one subcommand. Exit codes are
 * the same everywhere: 0 success, 1 failure, 2 bad usage or unreadable
 * target, 3 a corrupt log (each command's table lists its own, opttab.h).
 */
#include <stdio.h>
#include <string.h>

#include "bench_cmd.h"
#include "cli.h"
#include "pmwal.h"

struct command {
	const struct cli_cmd *tab; /* name, summary, options (opttab.h) */
	int (*fn)(int argc, char **argv);
};

static const struct command commands[] = {
    {&cli_create, cmd_create},	     {&cli_append, cmd_append},
    {&cli_dump, cmd_dump},	     {&cli_tail, cmd_tail},
    {&cli_verify, cmd_verify},	     {&cli_recover, cmd_recover},
    {&cli_info, cmd_info},	     {&cli_release, cmd_release},
    {&cli_stat, cmd_stat},
    {&cli_crashtest, cmd_crashtest}, {&cli_probe, cmd_probe},
    {&cli_bench, cmd_bench},	     {&cli_report, cmd_report},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmwal COMMAND [OPTIONS] [TARGET]\n\n"
		"pmwal %s: a write-ahead log for persistent memory and NVMe "
		"(on-disk format %d)\n\ncommands:\n",
		pmwal_version(), PMWAL_FORMAT_VERSION);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].tab->name,
			commands[i].tab->summary);
	fprintf(f, "\ntargets: PATH (file or block device, io_uring + O_DIRECT), "
		   "pmem:PATH, /dev/daxX.Y,\n         pmr:BDF (NVMe PMR), "
		   "fakepmr:PATH (simulated PMR)\n"
		   "`pmwal COMMAND --help` shows a command's options.\n");
}

int main(int argc, char **argv)
{
	const struct cli_cmd *tabs[NCOMMANDS];

	for (size_t i = 0; i < NCOMMANDS; i++)
		tabs[i] = commands[i].tab;
	cli_register(tabs, NCOMMANDS);
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
	/* Not in the usage: what man/man1.sh and the build read. */
	if (!strcmp(argv[1], "--dump-options")) {
		cli_dump_options(stdout);
		return fflush(stdout) ? 1 : 0;
	}
	if (!strcmp(argv[1], "--bash-completion")) {
		cli_bash_completion(stdout);
		return fflush(stdout) ? 1 : 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].tab->name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "pmwal: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
