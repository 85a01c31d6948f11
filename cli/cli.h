/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the subcommands of the `pmwal` command line tool that cli/ holds
 * (bench and report come from bench/, bench_cmd.h). Each takes the arguments
 * after its name (argv[0] is the subcommand) and returns the exit status: 0
 * success, 1 failure, 2 bad usage or unreadable target, 3 corrupt.
 */
#ifndef PMWAL_CLI_H
#define PMWAL_CLI_H

#include "opttab.h"

int cmd_create(int argc, char **argv);
int cmd_append(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_tail(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_release(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_crashtest(int argc, char **argv); /* cmd_crashtest.c */
int cmd_probe(int argc, char **argv);	  /* cmd_probe.c, over pmr/probe.c */

/* Their option tables (opttab.h), beside each command. */
extern const struct cli_cmd cli_create, cli_append, cli_dump, cli_tail, cli_verify,
    cli_recover, cli_info, cli_release, cli_stat, cli_crashtest, cli_probe;

#endif
