/* SPDX-License-Identifier: MIT */
/*
 * opttab.h - one table per `pmwal` subcommand describing its options, from
 * which everything a user reads about them is made: the getopt_long()
 * parsing (so a command accepts exactly what it lists), `pmwal CMD --help`,
 * the section-1 man page (man/man1.sh reads `pmwal --dump-options`) and the
 * bash completion (`pmwal --bash-completion`, installed by CMake). A
 * description that lives in one place cannot disagree with itself.
 */
#ifndef PMWAL_OPTTAB_H
#define PMWAL_OPTTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* What a command's positional arguments complete to in bash. */
enum cli_args {
	CLI_ARGS_NONE,	 /* no positional arguments */
	CLI_ARGS_TARGET, /* a log target: the prefixes, or files */
	CLI_ARGS_FILES,	 /* plain files (bench report inputs) */
};

struct cli_opt {
	const char *name;   /* long name without "--"; NULL ends a table */
	int short_name;	    /* 0: none */
	const char *arg;    /* the value's name (NULL: the option takes none) */
	int id;		    /* what cli_getopt() returns for it */
	const char *help;   /* one line for --help and the man page */
	const char *values; /* words a value completes to, space-separated, or NULL */
	bool hidden;	    /* accepted (an alias) but not listed */
};

struct cli_cmd {
	const char *name;
	const char *summary;	 /* one line: pmwal --help, the man page's NAME */
	const char *synopsis;	 /* after "pmwal NAME ", e.g. "TARGET [OPTIONS]" */
	const char *description; /* paragraphs, lines of at most 79 columns */
	const struct cli_opt *opts;
	const char *exit_status; /* lines "CODE<TAB>meaning\n" */
	enum cli_args args;
};

/*
 * getopt_long() over @cmd's table: returns the id of the next option, -1 at
 * the end, '?' for an option the command does not take and ':' for one
 * missing its value (optind/optarg/optopt as getopt leaves them). The first
 * call for an argv must come with optind set as getopt wants (1, or 0 to
 * re-initialise).
 */
int cli_getopt(const struct cli_cmd *cmd, int argc, char **argv);
/* The --help text: usage, description, options, exit status. */
void cli_help(FILE *f, const struct cli_cmd *cmd);
/*
 * Refuses what cli_getopt() could not take: "unknown option '--x'", or, for
 * an option another command has, "--x is not an option of pmwal CMD (it is
 * pmwal OTHER's)"; ':' says the value is missing. Abbreviations ("--siz")
 * are refused: a command takes the names it lists, whole. Reports as
 * cli_usage_error() does and returns 2.
 */
int cli_bad_option(const struct cli_cmd *cmd, int opt, int argc, char **argv);
/* cli_bad_option()'s message, for a command that reports errors its own way. */
void cli_option_msg(const struct cli_cmd *cmd, int opt, char **argv, char *buf,
		    size_t len);
/*
 * A usage error: "pmwal CMD: MESSAGE (see pmwal CMD --help)" on stderr and,
 * when @json, the object every pmwal command prints for an error on stdout:
 * {"command", "target", "error", "exit": 2}. Returns 2.
 */
int cli_usage_error(const char *cmd, bool json, const char *target, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Whether "--json" is among @argv's options (before any "--"), so that an
 * error met before getopt reaches it is printed as JSON too. */
bool cli_wants_json(int argc, char **argv);

/* Every command, in the order pmwal --help lists them: main.c registers
 * them, so that an option of another command is named as such. */
void cli_register(const struct cli_cmd *const *cmds, unsigned n);

/* `pmwal --dump-options`: one tab-separated line per command and option,
 * what man/man1.sh reads. */
void cli_dump_options(FILE *f);
/* `pmwal --bash-completion`: the completion script. */
void cli_bash_completion(FILE *f);

#endif
