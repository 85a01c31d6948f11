/* SPDX-License-Identifier: MIT */
/*
 * bench_cmd.h - what bench/ gives the `pmwal` tool: its two subcommands. Each
 * takes the arguments after its name (argv[0] is the subcommand) and returns
 * the exit status (0 success, 1 a run failed, 2 bad usage). The rest of
 * bench/ (bench.h) is its own.
 */
#ifndef PMWAL_BENCH_CMD_H
#define PMWAL_BENCH_CMD_H

int cmd_bench(int argc, char **argv);  /* cmd.c */
int cmd_report(int argc, char **argv); /* report.c */

/* Their option tables (cli/opttab.h), for pmwal --help, the man pages and
 * the bash completion. */
struct cli_cmd;
extern const struct cli_cmd cli_bench, cli_report;

#endif
