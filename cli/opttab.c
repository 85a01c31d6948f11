// SPDX-License-Identifier: MIT
/*
 * opttab.c - the option tables of opttab.h turned into getopt_long()
 * parsing, --help, the lines man/man1.sh makes section-1 pages from, and the
 * bash completion script. Nothing here knows a command: each command's file
 * owns its table.
 */
#include "opttab.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define CLI_OPTS_MAX 128 /* options of one command; bench has the most */

static const struct cli_cmd *const *registered;
static unsigned nregistered;

void cli_register(const struct cli_cmd *const *cmds, unsigned n)
{
	registered = cmds;
	nregistered = n;
}

/* getopt_long()'s view of @cmd, built once per command (parsing is
 * single-threaded: one command runs per process). */
static const struct cli_cmd *built;
static struct option longopts[CLI_OPTS_MAX + 1];
static char optstring[2 * CLI_OPTS_MAX + 2];

static void build(const struct cli_cmd *cmd)
{
	size_t n = 0, s = 0;

	if (built == cmd)
		return;
	optstring[s++] = ':'; /* a missing value is ':', not '?' */
	for (const struct cli_opt *o = cmd->opts; o->name; o++) {
		if (n == CLI_OPTS_MAX)
			abort(); /* a programmer's error: raise CLI_OPTS_MAX */
		longopts[n++] = (struct option){
		    o->name, o->arg ? required_argument : no_argument, NULL, o->id};
		if (o->short_name) {
			optstring[s++] = (char)o->short_name;
			if (o->arg)
				optstring[s++] = ':';
		}
	}
	longopts[n] = (struct option){0};
	optstring[s] = 0;
	built = cmd;
}

/* An abbreviation getopt_long() took ("--b" for --buffered): refused, so
 * that a command takes exactly the names it lists. */
static const char *abbreviated;

int cli_getopt(const struct cli_cmd *cmd, int argc, char **argv)
{
	int li = -1;

	build(cmd);
	opterr = 0; /* one line of ours, quoting what was wrong */
	abbreviated = NULL;
	int c = getopt_long(argc, argv, optstring, longopts, &li);

	if (c == -1 || c == '?' || c == ':')
		return c;
	if (li >= 0) {
		/* The option's own word: before its value when that is apart. */
		const char *word = argv[optind - 1];

		if (optarg && optarg == argv[optind - 1] && optind >= 2)
			word = argv[optind - 2];
		size_t n = strlen(longopts[li].name);

		if (strncmp(word, "--", 2) || strncmp(word + 2, longopts[li].name, n) ||
		    (word[2 + n] && word[2 + n] != '=')) {
			abbreviated = longopts[li].name;
			optopt = 0;
			return '?';
		}
	}
	for (const struct cli_opt *o = cmd->opts; o->name; o++)
		if (o->short_name && o->short_name == c)
			return o->id;
	return c;
}

bool cli_wants_json(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--json"))
			return true;
	}
	return false;
}

static int usage_errorv(const char *cmd, bool json, const char *target, const char *fmt,
			va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	for (size_t n = strlen(msg); n && msg[n - 1] == '\n';)
		msg[--n] = 0;
	fprintf(stderr, "pmwal %s: %s (see pmwal %s --help)\n", cmd, msg, cmd);
	if (json) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:i}", "command", cmd, "target",
				      target ? target : "", "error", msg, "exit", 2);

		if (o) {
			json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			fputc('\n', stdout);
			json_decref(o);
		}
		fflush(stdout);
	}
	return 2;
}

int cli_usage_error(const char *cmd, bool json, const char *target, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int rc = usage_errorv(cmd, json, target, fmt, ap);

	va_end(ap);
	return rc;
}

/* The commands other than @cmd that take option @name, as "a, b and c". */
static void others_taking(const struct cli_cmd *cmd, const char *name, size_t len,
			  char *buf, size_t buflen)
{
	const char *found[64];
	unsigned n = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < nregistered && n < 64; i++) {
		if (registered[i] == cmd)
			continue;
		for (const struct cli_opt *o = registered[i]->opts; o->name; o++)
			if (strlen(o->name) == len && !strncmp(o->name, name, len)) {
				found[n++] = registered[i]->name;
				break;
			}
	}
	size_t at = 0;

	for (unsigned i = 0; i < n && at < buflen; i++)
		at += (size_t)snprintf(buf + at, buflen - at, "%s%s",
				       i == 0	    ? ""
				       : i == n - 1 ? " and "
						    : ", ",
				       found[i]);
}

void cli_option_msg(const struct cli_cmd *cmd, int opt, char **argv, char *buf,
		    size_t len)
{
	const char *arg = argv[optind - 1];

	if (opt == ':') {
		snprintf(buf, len, "option '%s' needs a value", arg);
		return;
	}
	if (abbreviated) {
		const char *word = arg;

		if (strncmp(word, "--", 2) && optind >= 2)
			word = argv[optind - 2]; /* arg was the option's value */
		snprintf(buf, len,
			 "unknown option '%.*s' (options are not abbreviated: --%s?)",
			 (int)strcspn(word, "="), word, abbreviated);
		return;
	}
	if (optopt && strncmp(arg, "--", 2)) {
		snprintf(buf, len, "unknown option '-%c'", optopt);
		return;
	}
	if (!strncmp(arg, "--", 2)) {
		char others[512];
		const char *name = arg + 2;
		int n = (int)strcspn(name, "=");

		others_taking(cmd, name, (size_t)n, others, sizeof(others));
		if (others[0]) {
			snprintf(
			    buf, len,
			    "--%.*s is not an option of pmwal %s (pmwal %s take%s it)", n,
			    name, cmd->name, others, strchr(others, ' ') ? "" : "s");
			return;
		}
	}
	snprintf(buf, len, "unknown option '%s'", arg);
}

int cli_bad_option(const struct cli_cmd *cmd, int opt, int argc, char **argv)
{
	char msg[1024];

	cli_option_msg(cmd, opt, argv, msg, sizeof(msg));
	return cli_usage_error(cmd->name, cli_wants_json(argc, argv), NULL, "%s", msg);
}

/* "-s, --size BYTES" or "    --json" */
static int opt_label(const struct cli_opt *o, char *buf, size_t len)
{
	return snprintf(buf, len, "%c%c%c --%s%s%s", o->short_name ? '-' : ' ',
			o->short_name ? o->short_name : ' ', o->short_name ? ',' : ' ',
			o->name, o->arg ? " " : "", o->arg ? o->arg : "");
}

/* Prints @text from column @col on, wrapped at word boundaries before column
 * 80; continuation lines start at column @indent. */
static void wrap(FILE *f, int col, int indent, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t word = strcspn(p, " ");

		if (col > indent && col + 1 + (int)word > 79) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent || p != text) {
			if (p != text) {
				fputc(' ', f);
				col++;
			}
		}
		fprintf(f, "%.*s", (int)word, p);
		col += (int)word;
		p += word;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

void cli_help(FILE *f, const struct cli_cmd *cmd)
{
	int width = 0;
	char label[128];

	fprintf(f, "usage: pmwal %s %s\n", cmd->name, cmd->synopsis);
	if (cmd->description && cmd->description[0])
		fprintf(f, "%s%s", cmd->description,
			cmd->description[strlen(cmd->description) - 1] == '\n' ? ""
									       : "\n");
	for (const struct cli_opt *o = cmd->opts; o->name; o++) {
		int w = opt_label(o, label, sizeof(label));

		if (!o->hidden && w > width && w <= 24)
			width = w;
	}
	fprintf(f, "\noptions:\n");
	for (const struct cli_opt *o = cmd->opts; o->name; o++) {
		if (o->hidden)
			continue;
		int w = opt_label(o, label, sizeof(label));

		if (w > width) {
			fprintf(f, "  %s\n%*s", label, width + 4, "");
			wrap(f, width + 4, width + 4, o->help);
		} else {
			fprintf(f, "  %-*s  ", width, label);
			wrap(f, width + 4, width + 4, o->help);
		}
	}
	if (cmd->exit_status) {
		int cw = 1;

		for (const char *l = cmd->exit_status; *l; l += strcspn(l, "\n") + 1) {
			int k = (int)strcspn(l, "\t\n");

			if (k > cw)
				cw = k;
			if (!l[strcspn(l, "\n")])
				break;
		}
		fprintf(f, "\nexit status:\n");
		for (const char *l = cmd->exit_status; *l;) {
			size_t n = strcspn(l, "\n");
			const char *tab = memchr(l, '\t', n);
			int k = tab ? (int)(tab - l) : 0;

			fprintf(f, "  %-*.*s  %.*s\n", cw, k, l,
				(int)(n - (size_t)(tab ? k + 1 : 0)), tab ? tab + 1 : l);
			l += n + (l[n] == '\n');
		}
	}
}

/* Prints @s with tabs and newlines as spaces: a field of one TSV line. */
static void field(FILE *f, const char *s)
{
	fputc('\t', f);
	for (; s && *s; s++)
		fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
}

void cli_dump_options(FILE *f)
{
	static const char *const args[] = {"none", "target", "files"};

	for (unsigned i = 0; i < nregistered; i++) {
		const struct cli_cmd *c = registered[i];

		fprintf(f, "command");
		field(f, c->name);
		field(f, c->summary);
		field(f, c->synopsis);
		field(f, args[c->args]);
		fputc('\n', f);
		for (const char *l = c->description; l && *l;) {
			size_t n = strcspn(l, "\n");

			fprintf(f, "description\t%s\t%.*s\n", c->name, (int)n, l);
			l += n + (l[n] == '\n');
		}
		for (const struct cli_opt *o = c->opts; o->name; o++) {
			char s[2] = {(char)o->short_name, 0};

			if (o->hidden)
				continue;
			fprintf(f, "option");
			field(f, c->name);
			field(f, o->name);
			field(f, s);
			field(f, o->arg);
			field(f, o->help);
			fputc('\n', f);
		}
		for (const char *l = c->exit_status; l && *l;) {
			size_t n = strcspn(l, "\n");

			fprintf(f, "exit\t%s\t%.*s\n", c->name, (int)n, l);
			l += n + (l[n] == '\n');
		}
	}
}

/* The `case $prev` arms for @c's options that take a value. */
static void complete_values(FILE *f, const struct cli_cmd *c)
{
	for (const struct cli_opt *o = c->opts; o->name; o++) {
		if (!o->arg)
			continue;
		fprintf(f, "\t\t--%s", o->name);
		if (o->short_name)
			fprintf(f, "|-%c", o->short_name);
		if (o->values)
			fprintf(
			    f,
			    ") COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return 0 ;;\n",
			    o->values);
		else if (!strcmp(o->arg, "DIR"))
			fprintf(f,
				") COMPREPLY=($(compgen -d -- \"$cur\")); return 0 ;;\n");
		else if (strstr(o->arg, "FILE") || strstr(o->arg, "PATH"))
			fprintf(f,
				") COMPREPLY=($(compgen -f -- \"$cur\")); return 0 ;;\n");
		else
			fprintf(
			    f,
			    ") return 0 ;;\n"); /* a number or size: nothing to offer */
	}
}

void cli_bash_completion(FILE *f)
{
	static const char *const args[] = {"none", "target", "files"};

	fprintf(f, "# bash completion for pmwal, made by `pmwal --bash-completion` from\n"
		   "# the option table of each command.\n"
		   "_pmwal()\n{\n"
		   "\tlocal cur prev cword words opts= args=none\n"
		   "\tif declare -F _get_comp_words_by_ref >/dev/null; then\n"
		   "\t\t_get_comp_words_by_ref -n : cur prev words cword\n"
		   "\telse\n"
		   "\t\twords=(\"${COMP_WORDS[@]}\") cword=$COMP_CWORD\n"
		   "\t\tcur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
		   "\tfi\n"
		   "\tCOMPREPLY=()\n"
		   "\tif [ \"$cword\" -le 1 ]; then\n"
		   "\t\tCOMPREPLY=($(compgen -W '");
	for (unsigned i = 0; i < nregistered; i++)
		fprintf(f, "%s ", registered[i]->name);
	fprintf(f, "--help --version' -- \"$cur\"))\n"
		   "\t\treturn 0\n"
		   "\tfi\n"
		   "\tcase ${words[1]} in\n");
	for (unsigned i = 0; i < nregistered; i++) {
		const struct cli_cmd *c = registered[i];

		fprintf(f, "\t%s)\n\t\topts='", c->name);
		for (const struct cli_opt *o = c->opts; o->name; o++)
			if (!o->hidden)
				fprintf(f, "%s--%s", o == c->opts ? "" : " ", o->name);
		fprintf(f, "' args=%s\n\t\tcase $prev in\n", args[c->args]);
		complete_values(f, c);
		fprintf(f, "\t\tesac ;;\n");
	}
	fprintf(f, "\t*) return 0 ;;\n"
		   "\tesac\n"
		   "\tif [[ $cur == -* ]]; then\n"
		   "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
		   "\t\treturn 0\n"
		   "\tfi\n"
		   "\tcase $args in\n"
		   "\ttarget)\n"
		   "\t\t# Without bash-completion's helpers, ':' splits words:\n"
		   "\t\t# after 'pmem' ':' the path alone is completed.\n"
		   "\t\tif [[ $cur == : || $prev == : ]]; then\n"
		   "\t\t\t[[ $cur == : ]] && cur=\n"
		   "\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
		   "\t\t\treturn 0\n"
		   "\t\tfi\n"
		   "\t\tcase $cur in\n"
		   "\t\tpmr:*)\n"
		   "\t\t\tlocal bdf\n"
		   "\t\t\tfor bdf in /sys/bus/pci/devices/*; do\n"
		   "\t\t\t\t[ -e \"$bdf\" ] && COMPREPLY+=(\"pmr:${bdf##*/}\")\n"
		   "\t\t\tdone\n"
		   "\t\t\tCOMPREPLY=($(compgen -W \"${COMPREPLY[*]}\" -- \"$cur\")) ;;\n"
		   "\t\tpmem:*|fakepmr:*|file:*|sim:*)\n"
		   "\t\t\tlocal pre=${cur%%%%:*}: f\n"
		   "\t\t\tfor f in $(compgen -f -- \"${cur#*:}\"); do\n"
		   "\t\t\t\tCOMPREPLY+=(\"$pre$f\")\n"
		   "\t\t\tdone ;;\n"
		   "\t\t*)\n"
		   "\t\t\tCOMPREPLY=($(compgen -W 'file: pmem: pmr: fakepmr: sim:' -- "
		   "\"$cur\") $(compgen -f -- \"$cur\"))\n"
		   "\t\t\t[[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *: ]] &&\n"
		   "\t\t\t\tcompopt -o nospace 2>/dev/null ;;\n"
		   "\t\tesac\n"
		   "\t\tdeclare -F __ltrim_colon_completions >/dev/null &&\n"
		   "\t\t\t__ltrim_colon_completions \"$cur\" ;;\n"
		   "\tfiles) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
		   "\tesac\n"
		   "\treturn 0\n"
		   "}\n"
		   "complete -o filenames -F _pmwal pmwal\n");
}
