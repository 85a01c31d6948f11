// SPDX-License-Identifier: MIT
/*
 * cmd_log.c - the log subcommands of `pmwal`: create, append, dump, verify,
 * recover, info and release. They use only the public API (pmwal.h), as any
 * database would. Output is for people by default and JSON with --json.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cli.h"
#include "outfile.h"
#include "pmwal.h"
#include "probe.h"
#include "opttab.h"
#include "util.h"

#define APPEND_BATCH_RECORDS 256

/* Options every log command shares. */
struct common {
	const char *target;
	uint32_t flags;
	bool json;
	bool enable_pmr;
	char target_buf[512];
	char err[512];
};

enum {
	OPT_BUFFERED = 1000,
	OPT_NO_URING,
	OPT_FDATASYNC,
	OPT_SALVAGE,
	OPT_JSON,
	OPT_ENABLE_PMR,
	OPT_TAIL,	/* append only */
	OPT_WAIT_LOCK,	/* append only */
	OPT_BREAK_LOCK, /* append only */
};

/*
 * The shared options, as rows of each command's table (opttab.h). A command
 * lists those it uses: --fdatasync where it writes, --salvage where damage
 * could otherwise stop it (verify and info always read past it).
 */
/* clang-format off */
#define ROW_BUFFERED {"buffered", 0, NULL, OPT_BUFFERED, \
	"no O_DIRECT (page cache + fdatasync), e.g. on tmpfs", NULL, false}
#define ROW_NO_URING {"no-uring", 0, NULL, OPT_NO_URING, \
	"pwritev instead of io_uring (where io_uring is refused)", NULL, false}
#define ROW_FDATASYNC {"fdatasync", 0, NULL, OPT_FDATASYNC, \
	"make groups durable with fdatasync instead of FUA writes", NULL, false}
#define ROW_SALVAGE {"salvage", 0, NULL, OPT_SALVAGE, \
	"skip corruption instead of failing (reports what was skipped)", NULL, false}
#define ROW_JSON {"json", 0, NULL, OPT_JSON, \
	"machine-readable output (errors too: a JSON object on stdout)", NULL, false}
#define ROW_ENABLE_PMR {"enable-pmr", 0, NULL, OPT_ENABLE_PMR, \
	"pmr:/fakepmr: targets: enable a disabled PMR (PMRCTL.EN)", NULL, false}
#define ROW_HELP {"help", 'h', NULL, 'h', "this text", NULL, false}
#define ROW_END {0}
/* clang-format on */

#define EXIT_USAGE_LINE	  "2\tbad usage, or a target that cannot be read or is not a log\n"
#define EXIT_CORRUPT_LINE "3\tthe log is corrupt (LSN and byte offset named)\n"

/* Handles a shared option; returns 1 if it was one. */
static int common_opt(struct common *c, int opt)
{
	switch (opt) {
	case OPT_BUFFERED:
		c->flags |= PMWAL_OPEN_BUFFERED_IO;
		return 1;
	case OPT_NO_URING:
		c->flags |= PMWAL_OPEN_NO_URING;
		return 1;
	case OPT_FDATASYNC:
		c->flags |= PMWAL_OPEN_FDATASYNC;
		return 1;
	case OPT_SALVAGE:
		c->flags |= PMWAL_OPEN_SALVAGE;
		return 1;
	case OPT_JSON:
		c->json = true;
		return 1;
	case OPT_ENABLE_PMR:
		c->enable_pmr = true;
		return 1;
	}
	return 0;
}

/* Whether this run's usage errors are JSON too (--json anywhere on the
 * command line: an error may come before getopt reaches it). */
static bool usage_json;

static void parse_start(int argc, char **argv)
{
	optind = 1;
	usage_json = cli_wants_json(argc, argv);
}

static int bad_usage(const char *cmd, const char *what)
{
	return cli_usage_error(cmd, usage_json, NULL, "%s", what);
}

/* bad_usage() for an option's value, quoting the value as given. */
static int bad_value(const char *cmd, const char *opt, const char *val, const char *want)
{
	char what[600];

	snprintf(what, sizeof(what), "%s: '%s': expected %s", opt, val, want);
	return bad_usage(cmd, what);
}

/* Refuses the first positional argument past those a command takes. */
static int no_more_args(const char *cmd, int argc, char **argv)
{
	char what[600];

	if (optind >= argc)
		return 0;
	snprintf(what, sizeof(what), "unexpected argument '%s'", argv[optind]);
	return bad_usage(cmd, what);
}

/*
 * @s as a JSON string can carry it (malloc'd; NULL without memory): JSON is
 * UTF-8, and jansson refuses anything else (json_pack then makes nothing at
 * all), so a byte that is not part of a valid UTF-8 character, as in a file
 * name of another encoding, is written as U+FFFD.
 */
static char *json_text(const char *s)
{
	json_t *t = json_string(s);
	char *out, *o;

	if (t) {
		json_decref(t);
		return strdup(s);
	}
	out = o = malloc(strlen(s) * 3 + 1);
	while (out && *s) {
		unsigned char b = (unsigned char)*s;
		size_t k = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;

		t = strnlen(s, k) == k ? json_stringn(s, k) : NULL;
		if (t) {
			json_decref(t);
			memcpy(o, s, k);
			o += k;
			s += k;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			s++;
		}
	}
	if (out)
		*o = 0;
	return out;
}

/* json_text() of a command's one target, kept for the run (a command
 * prints its target in at most a couple of objects). */
static const char *json_target(const char *t)
{
	static char *text;
	static const char *of;

	if (!text || of != t) {
		free(text);
		text = json_text(t);
		of = t;
	}
	return text ? text : "";
}

/*
 * Reports a failure and returns @exit_code: one line on stderr and, with
 * --json, one object on stdout so that a script parsing stdout sees it.
 */
static int cli_fail(const struct common *c, const char *cmd, int exit_code,
		    const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pmwal %s: %s\n", cmd, msg);
	if (c->json) {
		char *target = json_text(c->target ? c->target : ""),
		     *text = json_text(msg);
		json_t *o = json_pack("{s:s, s:s?, s:s?, s:i}", "command", cmd, "target",
				      target, "error", text, "exit", exit_code);

		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(o);
		free(target);
		free(text);
	}
	return exit_code;
}

/* Device-DAX is a character device of the "dax" class. */
static bool is_devdax(const struct stat *st)
{
	char link[128], dest[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/sys/dev/char/%u:%u/subsystem", major(st->st_rdev),
		 minor(st->st_rdev));
	n = readlink(link, dest, sizeof(dest) - 1);
	if (n <= 0)
		return false;
	dest[n] = 0;
	const char *base = strrchr(dest, '/');

	return !strcmp(base ? base + 1 : dest, "dax");
}

/*
 * Looks at the node a target lives in before the library opens it: a FIFO
 * would block the open forever, a socket or another character device is no
 * medium. Opened with O_NONBLOCK, so the look itself never hangs. Returns 0
 * to go on (a missing file is the library's to report), else the exit code.
 */
static int check_node(const struct common *c, const char *cmd)
{
	struct pmwal_target t;
	struct stat st;
	const char *what;
	int rc = pmwal_target_parse(c->target, &t);

	if (rc < 0)
		return cli_fail(c, cmd, 2, "%s: not a target (%s)", c->target,
				pmwal_strerror(rc));
	if (!t.has_file)
		return 0; /* pmr:BDF lives in no file */
	const char *path = t.path;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	rc = fd >= 0 ? fstat(fd, &st) : stat(path, &st);
	if (fd >= 0)
		close(fd);
	if (rc != 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return 0;
	/* Where sysfs is hidden (containers), the library's own rule: a node
	 * named /dev/daxX.Y is device-DAX, and libpmem2 checks it on open. */
	if (S_ISCHR(st.st_mode) && (is_devdax(&st) || t.kind == PMWAL_TARGET_DEVDAX))
		return 0;
	what = S_ISFIFO(st.st_mode)   ? "a FIFO"
	       : S_ISSOCK(st.st_mode) ? "a socket"
	       : S_ISDIR(st.st_mode)  ? "a directory"
	       : S_ISCHR(st.st_mode)  ? "a character device"
				      : "not a file";
	return cli_fail(c, cmd, 2,
			"%s is %s, not a regular file or block device (nor device-DAX)",
			path, what);
}

/* Takes the one positional TARGET; returns 0 or the usage exit code. */
static int take_target(struct common *c, const char *cmd, int argc, char **argv)
{
	if (optind >= argc)
		return bad_usage(cmd, "missing TARGET");
	c->target = argv[optind++];
	return 0;
}

/* Closes the log and says so if the close failed (its last flush or
 * superblock write); returns pmwal_close()'s result. */
static int close_log(const struct common *c, const char *cmd, struct pmwal *w)
{
	int rc = pmwal_close(w);

	if (rc)
		fprintf(stderr, "pmwal %s: %s: closing the log failed: %s\n", cmd,
			c->target, pmwal_strerror(rc));
	return rc;
}

/*
 * Parses a command that takes only the shared options and TARGET. Returns -1
 * to go on, or the exit code (help printed, or bad usage).
 */
static int parse_simple(struct common *c, const struct cli_cmd *cmd, int argc,
			char **argv)
{
	int opt, rc;

	parse_start(argc, argv);
	while ((opt = cli_getopt(cmd, argc, argv)) != -1) {
		if (common_opt(c, opt))
			continue;
		if (opt == 'h') {
			cli_help(stdout, cmd);
			return 0;
		}
		return cli_bad_option(cmd, opt, argc, argv);
	}
	if ((rc = take_target(c, cmd->name, argc, argv)))
		return rc;
	if (strcmp(cmd->name, "release") && (rc = no_more_args(cmd->name, argc, argv)))
		return rc;
	if ((rc = check_node(c, cmd->name)))
		return rc;
	return -1;
}

static void init_opts(struct pmwal_options *o, struct common *c)
{
	struct pmwal_target t;

	memset(o, 0, sizeof(*o));
	o->target = c->target;
	(void)pmwal_target_parse(c->target, &t); /* malformed: pmwal_open says so */
	/* pmr/ takes the enable request as a target option. */
	if (c->enable_pmr &&
	    (t.kind == PMWAL_TARGET_PMR || t.kind == PMWAL_TARGET_FAKEPMR)) {
		snprintf(c->target_buf, sizeof(c->target_buf), "%s,enable", c->target);
		o->target = c->target_buf;
	}
	o->flags = c->flags;
	o->errmsg_buf = c->err;
	o->errmsg_len = sizeof(c->err);
}

/* Whether @msg names @path as "PATH:" or "PATH " (a bare substring would
 * match "z" in "zero"). */
static bool names(const char *msg, const char *path)
{
	size_t n = strlen(path);

	for (const char *p = strstr(msg, path); p; p = strstr(p + 1, path))
		if (p[n] == ':' || p[n] == ' ')
			return true;
	return false;
}

/* The library's message for a failed open or verify, led by the target when
 * the message does not name it (some superblock findings do not). */
static const char *open_msg(struct common *c, int rc)
{
	char path[512];
	const char *name =
	    pmwal_target_path(c->target, path, sizeof(path)) == 1 ? path : c->target;

	if (!c->err[0])
		snprintf(c->err, sizeof(c->err), "%s: %s", c->target, pmwal_strerror(rc));
	else if (!names(c->err, name)) {
		char tmp[sizeof(c->err)];

		snprintf(tmp, sizeof(tmp), "%s", c->err);
		snprintf(c->err, sizeof(c->err), "%s: %.*s", c->target,
			 (int)(sizeof(c->err) - strlen(c->target) - 3), tmp);
	}
	return c->err;
}

/* Exit code for a failed open: corrupt 3, unreadable or not a log 2, else 1. */
static int open_failed(const char *cmd, struct common *c, int rc)
{
	int code = 1;

	if (rc == PMWAL_ECORRUPT)
		code = 3;
	else if (rc == PMWAL_EFORMAT || rc == PMWAL_EBADOPT || rc == -ENOENT ||
		 rc == -EACCES || rc == -EPERM || rc == PMWAL_EUNSUPPORTED ||
		 rc == -EINVAL || rc == -EISDIR || rc == -ENODEV || rc == -ENXIO)
		code = 2;
	return cli_fail(c, cmd, code, "%s", open_msg(c, rc));
}

static const char *verdict_str(int v)
{
	return v == PMWAL_CLEAN	      ? "clean"
	       : v == PMWAL_TORN_TAIL ? "torn_tail"
				      : "corrupt";
}

/*
 * A scan's report as JSON, with where the log stands (@i: head and next LSN).
 * With no records there is no first or last LSN: they are null, not 0 (no
 * record has LSN 0), and next_lsn says where appends go on.
 */
static json_t *report_json(const char *target, const struct pmwal_report *r,
			   const struct pmwal_info *i)
{
	json_t *o = json_pack(
	    "{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:s}", "target", target,
	    "verdict", verdict_str(r->verdict), "records", (json_int_t)r->records,
	    "payload_bytes", (json_int_t)r->payload_bytes, "blocks",
	    (json_int_t)r->blocks, "first_lsn", (json_int_t)r->first_lsn, "last_lsn",
	    (json_int_t)r->last_lsn, "end_offset", (json_int_t)r->end_offset,
	    "durable_hint", (json_int_t)r->durable_hint, "elapsed_s", r->elapsed_ns / 1e9,
	    "detail", r->detail);

	if (r->records == 0) {
		json_object_set_new(o, "first_lsn", json_null());
		json_object_set_new(o, "last_lsn", json_null());
	}
	json_object_set_new(o, "head_lsn", json_integer((json_int_t)i->head_lsn));
	json_object_set_new(o, "next_lsn", json_integer((json_int_t)i->next_lsn));
	if (r->verdict == PMWAL_CORRUPT) {
		json_object_set_new(o, "corrupt_lsn",
				    json_integer((json_int_t)r->corrupt_lsn));
		json_object_set_new(o, "corrupt_offset",
				    json_integer((json_int_t)r->corrupt_offset));
	}
	if (r->verdict == PMWAL_TORN_TAIL)
		json_object_set_new(o, "torn_blocks",
				    json_integer((json_int_t)r->torn_blocks));
	if (r->skipped_blocks) {
		json_object_set_new(o, "skipped_blocks",
				    json_integer((json_int_t)r->skipped_blocks));
		json_object_set_new(o, "skipped_records",
				    json_integer((json_int_t)r->skipped_records));
	}
	return o;
}

static void print_json(json_t *o)
{
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(o);
}

/* "s" after a count other than one. */
static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

static void print_report(const char *target, const struct pmwal_report *r,
			 const struct pmwal_info *i)
{
	printf("%s: %s\n", target, verdict_str(r->verdict));
	if (r->records)
		printf("  records      %llu (LSN %llu..%llu), %llu payload byte%s, %llu "
		       "block%s\n",
		       (unsigned long long)r->records, (unsigned long long)r->first_lsn,
		       (unsigned long long)r->last_lsn,
		       (unsigned long long)r->payload_bytes, plural(r->payload_bytes),
		       (unsigned long long)r->blocks, plural(r->blocks));
	else /* released, never written, or (corrupt) hidden by the damage */
		printf("  records      none: the log holds no %srecords\n",
		       r->verdict == PMWAL_CORRUPT ? "readable " : "");
	printf("  next LSN     %llu (head LSN %llu)\n", (unsigned long long)i->next_lsn,
	       (unsigned long long)i->head_lsn);
	printf("  ends at      byte offset %llu\n", (unsigned long long)r->end_offset);
	if (r->verdict == PMWAL_CORRUPT)
		printf("  corrupt at   LSN %llu, byte offset %llu\n",
		       (unsigned long long)r->corrupt_lsn,
		       (unsigned long long)r->corrupt_offset);
	if (r->skipped_blocks)
		printf("  skipped      %llu block%s, %llu record%s (salvage)\n",
		       (unsigned long long)r->skipped_blocks, plural(r->skipped_blocks),
		       (unsigned long long)r->skipped_records,
		       plural(r->skipped_records));
	printf("  detail       %s\n", r->detail);
	printf("  scan time    %.3f ms\n", r->elapsed_ns / 1e6);
}

/* ---- create ------------------------------------------------------------- */

/*
 * A create that is interrupted (Ctrl-C, kill) while it zero-fills a large new
 * file would leave it behind, to read later as "not a pmwal log". While a
 * create runs on a file it made, these signals remove the file and then take
 * their default action. Only async-signal-safe calls in the handler.
 */
static char create_made_path[512];
static const int create_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void create_interrupted(int sig)
{
	unlink(create_made_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void create_guard(const char *path, bool on)
{
	if (on)
		snprintf(create_made_path, sizeof(create_made_path), "%s", path);
	for (size_t i = 0; i < sizeof(create_signals) / sizeof(create_signals[0]); i++)
		signal(create_signals[i], on ? create_interrupted : SIG_DFL);
}

static const struct cli_opt create_opts[] = {
    {"size", 's', "BYTES", 's',
     "the log's size (64M, 1G, ...); a device: default its whole size", NULL, false},
    {"record-max", 'r', "BYTES", 'r',
     "largest record, 1 .. 1G (default 16M, or a quarter of a small log)", NULL, false},
    {"force", 'f', NULL, 'f',
     "overwrite what the target holds (a log, a filesystem, data)", NULL, false},
    ROW_BUFFERED,
    ROW_NO_URING,
    ROW_FDATASYNC,
    ROW_JSON,
    ROW_ENABLE_PMR,
    ROW_HELP,
    ROW_END,
};

const struct cli_cmd cli_create = {
    .name = "create",
    .summary = "create (format) a log on a file, device or region",
    .synopsis = "TARGET --size BYTES [--record-max BYTES] [--force] [OPTIONS]",
    .description =
	"Formats a new log. A file is created and zero-filled; a block device or region\n"
	"uses --size or its whole size. An existing pmwal log, or any other data, is\n"
	"only overwritten with --force.\n",
    .opts = create_opts,
    .exit_status =
	"0\tthe log was created\n"
	"1\tfailure (an I/O error, a full disk)\n"
	"2\tbad usage, or a target that cannot be written or holds data (without\n"
	"\t--force)\n",
    .args = CLI_ARGS_TARGET,
};

/*
 * The library names the pmwal_options field a value was wrong in; a user of
 * the tool gave an option. "options.capacity_bytes: 4096 is below ..."
 * becomes "--size 4k: below ...", as typed (@given NULL: the option was not
 * typed, and @absent says what the value was instead).
 */
static void name_option(char *msg, size_t len, const char *field, const char *opt,
			const char *given, const char *absent)
{
	char *at = strstr(msg, field);

	if (!at)
		return;
	char out[1024], *rest = at + strlen(field);
	size_t digits = strspn(rest, ": 0123456789");

	if (given && !strncmp(rest + digits, "is ", 3) && digits > 2)
		rest += digits + 3; /* "options.X: 4096 is below": the value, then "is" */
	else if (!strncmp(rest, ": ", 2))
		rest += 2;
	if (given)
		snprintf(out, sizeof(out), "%.*s%s %s: %s", (int)(at - msg), msg, opt,
			 given, rest);
	else
		snprintf(out, sizeof(out), "%.*s%s (no %s given): %s", (int)(at - msg),
			 msg, absent, opt, rest);
	snprintf(msg, len, "%s", out);
}

/* Replaces the first @word in @msg with @by. */
static void replace_word(char *msg, size_t len, const char *word, const char *by)
{
	char *at = strstr(msg, word), out[1024];

	if (!at)
		return;
	snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - msg), msg, by,
		 at + strlen(word));
	snprintf(msg, len, "%s", out);
}

int cmd_create(int argc, char **argv)
{
	struct common c = {0};
	struct pmwal_options o;
	uint64_t size = 0, rec_max = 0;
	const char *size_arg = NULL, *rec_max_arg = NULL;
	bool force = false;
	int opt, rc;

	parse_start(argc, argv);
	while ((opt = cli_getopt(&cli_create, argc, argv)) != -1) {
		if (common_opt(&c, opt))
			continue;
		switch (opt) {
		case 's':
			if (cli_parse_size(optarg, &size) || size == 0)
				return bad_value("create", "--size", optarg,
						 "bytes such as 64M");
			size_arg = optarg;
			break;
		case 'r':
			if (cli_parse_size(optarg, &rec_max) || rec_max == 0 ||
			    rec_max > (1u << 30))
				return bad_value("create", "--record-max", optarg,
						 "1 .. 1G bytes");
			rec_max_arg = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			cli_help(stdout, &cli_create);
			return 0;
		default:
			return cli_bad_option(&cli_create, opt, argc, argv);
		}
	}
	if ((rc = take_target(&c, "create", argc, argv)) ||
	    (rc = no_more_args("create", argc, argv)))
		return rc;
	struct pmwal_target t;

	(void)pmwal_target_parse(c.target, &t); /* check_node names a malformed one */
	/* As pmwal_open decides: a device node (a block device, device DAX) or
	 * a PMR has a size of its own; a file, even under /dev, needs one. */
	struct stat node;

	if (!size && t.kind != PMWAL_TARGET_PMR &&
	    !(stat(t.path, &node) == 0 && (S_ISBLK(node.st_mode) || S_ISCHR(node.st_mode))))
		return bad_usage("create",
				 "--size BYTES is required for a log in a file");
	if ((rc = check_node(&c, "create")))
		return rc;
	/* The file the log lives in, whatever the prefix (pmem:, fakepmr:, file:). */
	const char *path = t.path;
	struct stat st = {0};
	bool has_file = t.has_file;
	char perr[1024];

	/* Not through another user's link, nor in a directory another user
	 * controls, --force or not (bench/outfile.h): a device node is not a
	 * file this makes. */
	if (has_file &&
	    !(stat(path, &st) == 0 && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode))) &&
	    out_place_check("", path, perr, sizeof(perr)))
		return cli_fail(&c, "create", 2, "%s", perr);
	bool existed = !has_file || stat(path, &st) == 0 || errno != ENOENT;

	/*
	 * What may be overwritten is the library's rule (pmwal.h, enum
	 * pmwal_open_flags): a new file or an empty one is created; anything
	 * else only with --force (FORMAT, FORCE), so EXCL refuses it and says
	 * what it holds. A file we make is ours to remove if the create fails:
	 * EXCL proves that nobody made it between the stat and the open.
	 */
	init_opts(&o, &c);
	if (!existed || (!force && !(S_ISREG(st.st_mode) && st.st_size == 0)))
		o.flags |= PMWAL_OPEN_CREATE | PMWAL_OPEN_EXCL;
	else if (force)
		o.flags |= PMWAL_OPEN_FORMAT | PMWAL_OPEN_FORCE;
	else
		o.flags |= PMWAL_OPEN_CREATE;
	o.capacity_bytes = size;
	o.record_bytes_max = (uint32_t)rec_max;
	struct pmwal *w;

	c.err[0] = 0;
	if (!existed)
		create_guard(path, true);
	rc = pmwal_open(&o, &w);
	if (!existed)
		create_guard(path, false);
	if (rc == -EEXIST && existed) {
		const char *fs = has_file ? pmr_probe_fs_magic(path) : NULL;

		return cli_fail(&c, "create", 2, "%s%s%s; pass --force to destroy it",
				open_msg(&c, rc), fs ? ": it is " : "", fs ? fs : "");
	}
	if (rc == PMWAL_EBADOPT) {
		name_option(c.err, sizeof(c.err), "options.capacity_bytes", "--size",
			    size_arg, "the target's size");
		name_option(c.err, sizeof(c.err), "options.record_bytes_max",
			    "--record-max", rec_max_arg, "the default record maximum");
		replace_word(c.err, sizeof(c.err), "record_bytes_max", "--record-max");
	}
	if (rc) {
		int code = open_failed("create", &c, rc);

		if (!existed && rc != -EEXIST && unlink(path) == 0)
			fprintf(stderr,
				"pmwal create: removed %s, which this create made\n",
				path);
		return code;
	}
	struct pmwal_info info;

	pmwal_stat(w, &info);
	rc = close_log(&c, "create", w);
	if (rc)
		return 1;
	if (c.json)
		print_json(json_pack("{s:s, s:I, s:I, s:s, s:s}", "target",
				     json_target(c.target), "capacity_bytes",
				     (json_int_t)info.capacity_bytes, "log_id",
				     (json_int_t)info.log_id, "medium", info.medium,
				     "durability", info.durability));
	else
		printf("created %s: %llu bytes, %llu blocks of 4096, log id %016llx, %s, "
		       "%s\n",
		       c.target, (unsigned long long)info.capacity_bytes,
		       (unsigned long long)info.capacity_blocks,
		       (unsigned long long)info.log_id, info.medium, info.durability);
	return 0;
}

/* ---- append ------------------------------------------------------------- */

#define READ_EOF    (-1)
#define READ_FAILED (-2) /* out of memory or a read error: errno says which */

/* Reads the next record: a line without its newline, or @fixed bytes (at the
 * end of the input, what is left: fewer bytes). A line is read up to one
 * byte past @limit, the largest record: a longer one is refused as it is
 * (appending its first @limit + 1 bytes fails), instead of reading an endless
 * line (< /dev/zero) into memory until there is none. Returns its length,
 * READ_EOF or READ_FAILED. */
static ssize_t read_record(FILE *in, size_t fixed, size_t limit, char **buf, size_t *cap)
{
	if (!fixed) {
		size_t n = 0;
		int ch = 0;

		while (n <= limit && (ch = getc_unlocked(in)) != EOF && ch != '\n') {
			if (n == *cap) {
				size_t more = *cap ? *cap * 2 : 256;
				char *nb = realloc(*buf, more);

				if (!nb) {
					errno = ENOMEM;
					return READ_FAILED;
				}
				*buf = nb;
				*cap = more;
			}
			(*buf)[n++] = (char)ch;
		}
		if (ch == EOF && ferror(in))
			return READ_FAILED;
		return ch == EOF && n == 0 ? READ_EOF : (ssize_t)n;
	}
	if (*cap < fixed) {
		char *nb = realloc(*buf, fixed);

		if (!nb) {
			errno = ENOMEM;
			return READ_FAILED;
		}
		*buf = nb;
		*cap = fixed;
	}
	size_t n = fread(*buf, 1, fixed, in);

	if (n < fixed && ferror(in)) /* a short read is the end, not an error */
		return READ_FAILED;
	if (n == 0)
		return READ_EOF;
	return (ssize_t)n;
}

/*
 * What --record-size N does with an input whose length is not a multiple of
 * N: the bytes after the last whole record are its tail.
 */
enum append_tail {
	TAIL_REFUSE, /* not appended, and the command fails (the default) */
	TAIL_PAD,    /* appended as a record of N bytes, zero-filled */
	TAIL_SHORT,  /* appended as a shorter record */
};

/* What one append run did: LSNs first..last were accepted (0: none). */
struct append_run {
	uint64_t first, last, skipped;
	enum append_tail tail_mode;
	size_t tail_bytes; /* input bytes after the last whole record, 0: none */
	struct iovec iov[APPEND_BATCH_RECORDS];
	int n;
	uint64_t batch_bytes; /* records plus their 4-byte headers */
};

static int flush_batch(struct pmwal *w, struct append_run *a)
{
	uint64_t lsn;
	int rc;

	if (a->n == 0)
		return 0;
	rc = pmwal_appendv(w, a->iov, a->n, &lsn);
	for (int i = 0; i < a->n; i++)
		free(a->iov[i].iov_base);
	if (rc == 0) {
		if (!a->first)
			a->first = lsn;
		a->last = lsn + (uint64_t)a->n - 1;
	}
	a->n = 0;
	a->batch_bytes = 0;
	return rc;
}

/* Which of this run's records are durable, as "LSN a..b" or "nothing". */
static void durable_range(const struct append_run *a, uint64_t durable, char *buf,
			  size_t len, uint64_t *lo, uint64_t *hi)
{
	*lo = *hi = 0;
	if (a->first && durable >= a->first) {
		*lo = a->first;
		*hi = durable < a->last ? durable : a->last;
		snprintf(buf, len, "durable: LSN %llu..%llu", (unsigned long long)*lo,
			 (unsigned long long)*hi);
	} else {
		snprintf(buf, len, "nothing durable");
	}
}

/*
 * Whether more input is there now, read ahead in @f's buffer or readable
 * without waiting: while it is not, a batch goes out rather than waiting
 * for a slow producer (`producer | pmwal append` makes each line durable
 * as it comes, not 256 lines later).
 */
static bool input_ready(FILE *f)
{
#ifdef __GLIBC__
	if (f->_IO_read_ptr < f->_IO_read_end)
		return true;
#endif
	struct pollfd p = {.fd = fileno(f), .events = POLLIN};

	return poll(&p, 1, 0) > 0;
}

/* Reads stdin into batches that each fit one group: together at most one
 * largest record (the engine sizes a group to hold that), each sent once
 * the input pauses. */
static int append_all(struct pmwal *w, struct append_run *a, size_t fixed,
		      uint32_t rec_max)
{
	char *buf = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	while ((len = read_record(stdin, fixed, rec_max, &buf, &cap)) >= 0) {
		if (len == 0) {
			a->skipped++;
			continue;
		}
		if (fixed && (size_t)len < fixed) { /* the input's tail */
			a->tail_bytes = (size_t)len;
			if (a->tail_mode == TAIL_REFUSE)
				break;
			if (a->tail_mode == TAIL_PAD) { /* buf holds @fixed bytes */
				memset(buf + len, 0, fixed - (size_t)len);
				len = (ssize_t)fixed;
			}
		}
		uint64_t bytes = (uint64_t)len + 4;

		if (a->n == APPEND_BATCH_RECORDS ||
		    (a->n > 0 && a->batch_bytes + bytes > (uint64_t)rec_max + 4)) {
			rc = flush_batch(w, a);
			if (rc)
				break;
		}
		a->iov[a->n].iov_base = malloc((size_t)len);
		if (!a->iov[a->n].iov_base) {
			rc = -ENOMEM;
			break;
		}
		memcpy(a->iov[a->n].iov_base, buf, (size_t)len);
		a->iov[a->n++].iov_len = (size_t)len;
		a->batch_bytes += bytes;
		if (!input_ready(stdin) && (rc = flush_batch(w, a)))
			break;
	}
	if (len == READ_FAILED && !rc)
		rc = errno ? -errno : -EIO;
	if (!rc)
		rc = flush_batch(w, a);
	for (int i = 0; i < a->n; i++)
		free(a->iov[i].iov_base);
	a->n = 0;
	free(buf);
	return rc;
}

/*
 * The bytes left over after whole @fixed-byte records when stdin is a regular
 * file (known before anything is read); 0 when none or when stdin is a pipe.
 */
static uint64_t input_tail_bytes(uint64_t fixed, uint64_t *input_bytes)
{
	struct stat st;
	off_t off;

	*input_bytes = 0;
	if (fstat(STDIN_FILENO, &st) || !S_ISREG(st.st_mode))
		return 0;
	off = lseek(STDIN_FILENO, 0, SEEK_CUR);
	if (off < 0 || off > st.st_size)
		return 0;
	*input_bytes = (uint64_t)(st.st_size - off);
	return *input_bytes % fixed;
}

/* The success line: how many records, their sizes, and what became of the
 * input's tail. */
static void print_appended(const struct append_run *a, uint64_t fixed)
{
	unsigned long long n = a->first ? a->last - a->first + 1 : 0;
	unsigned long long first = a->first, last = a->last;
	const char *recs = n == 1 ? "record" : "records";

	if (!n)
		fprintf(stderr, "appended 0 records: the input held none\n");
	else if (!fixed)
		fprintf(stderr, "appended %llu %s (LSN %llu..%llu), durable\n", n, recs,
			first, last);
	else if (!a->tail_bytes)
		fprintf(stderr,
			"appended %llu %s of %llu bytes (LSN %llu..%llu), "
			"durable\n",
			n, recs, (unsigned long long)fixed, first, last);
	else if (a->tail_mode == TAIL_PAD)
		fprintf(stderr,
			"appended %llu %s of %llu bytes (LSN %llu..%llu), durable; "
			"the last (LSN %llu) holds the input's last %zu bytes and %llu "
			"zero bytes of padding (--tail pad)\n",
			n, recs, (unsigned long long)fixed, first, last, last,
			a->tail_bytes, (unsigned long long)(fixed - a->tail_bytes));
	else
		fprintf(stderr,
			"appended %llu %s (LSN %llu..%llu), durable: %llu bytes each "
			"but the last (LSN %llu), which is %zu bytes (--tail short)\n",
			n, recs, first, last, (unsigned long long)fixed, last,
			a->tail_bytes);
}

static const struct cli_opt append_opts[] = {
    {"record-size", 'n', "N", 'n',
     "records of exactly N bytes (1 .. 1G) instead of lines", NULL, false},
    {"tail", 0, "MODE", OPT_TAIL,
     "input past the last whole record: refuse (default), pad or short",
     "refuse pad short", false},
    {"wait-lock", 0, NULL, OPT_WAIT_LOCK,
     "standby: wait while another process writes the log, then take it over", NULL,
     false},
    {"break-lock", 0, NULL, OPT_BREAK_LOCK,
     "take the log from a hung or stopped writer, which is fenced", NULL, false},
    ROW_BUFFERED,
    ROW_NO_URING,
    ROW_FDATASYNC,
    ROW_SALVAGE,
    ROW_JSON,
    ROW_ENABLE_PMR,
    ROW_HELP,
    ROW_END,
};

const struct cli_cmd cli_append = {
    .name = "append",
    .summary = "append records from stdin; exits 0 once they are durable",
    .synopsis = "TARGET [--record-size N [--tail refuse|pad|short]] [OPTIONS] < records",
    .description =
	"Appends one record per input line (newline removed; empty lines are skipped),\n"
	"or with --record-size, records of exactly N bytes. Input that does not end on\n"
	"a whole record is refused (--tail refuse, the default): from a file before\n"
	"anything is appended (exit 2), from a pipe once the whole records before\n"
	"the tail are durable (exit 1). --tail pad zero-fills the last record to N\n"
	"bytes; --tail short appends it shorter; the output says which was done.\n"
	"Exits 0 only once every record is durable; on failure it says which records\n"
	"are (\"durable: LSN a..b\" or \"nothing durable\"). Records are sent as the\n"
	"input comes: what arrived before a pause is one group, made durable then (a\n"
	"group takes at least one 4 KiB block of the log: one line at a time from a\n"
	"slow producer fills a log 4 KiB per line).\n"
	"--wait-lock waits while another process writes the log, then takes it over\n"
	"(recovery, then these records continue its LSNs). --break-lock takes the log\n"
	"from a writer that is hung or stopped; it is fenced (it acknowledges nothing\n"
	"more): an operator's decision.\n",
    .opts = append_opts,
    .exit_status =
	"0\tevery record is durable\n"
	"1\tfailure; the message says which records are durable\n"
	"2\tbad usage, a target that cannot be read or is not a log, or input\n"
	"\tfrom a file that does not end on a whole record\n" EXIT_CORRUPT_LINE,
    .args = CLI_ARGS_TARGET,
};

int cmd_append(int argc, char **argv)
{
	struct common c = {0};
	struct pmwal_options o;
	struct append_run a = {0};
	uint64_t fixed = 0;
	const char *tail_opt = NULL, *fixed_arg = NULL;
	int opt, rc;

	parse_start(argc, argv);
	while ((opt = cli_getopt(&cli_append, argc, argv)) != -1) {
		if (common_opt(&c, opt))
			continue;
		switch (opt) {
		case 'n':
			if (cli_parse_size(optarg, &fixed) || fixed == 0 ||
			    fixed > (1u << 30))
				return bad_value("append", "--record-size", optarg,
						 "1 .. 1G bytes");
			fixed_arg = optarg;
			break;
		case OPT_TAIL:
			tail_opt = optarg;
			if (!strcmp(optarg, "refuse"))
				a.tail_mode = TAIL_REFUSE;
			else if (!strcmp(optarg, "pad"))
				a.tail_mode = TAIL_PAD;
			else if (!strcmp(optarg, "short"))
				a.tail_mode = TAIL_SHORT;
			else
				return bad_value("append", "--tail", optarg,
						 "refuse, pad or short");
			break;
		case OPT_WAIT_LOCK:
			c.flags |= PMWAL_OPEN_WAIT_LOCK;
			break;
		case OPT_BREAK_LOCK:
			c.flags |= PMWAL_OPEN_BREAK_LOCK;
			break;
		case 'h':
			cli_help(stdout, &cli_append);
			return 0;
		default:
			return cli_bad_option(&cli_append, opt, argc, argv);
		}
	}
	if ((rc = take_target(&c, "append", argc, argv)) ||
	    (rc = no_more_args("append", argc, argv)))
		return rc;
	if ((c.flags & PMWAL_OPEN_WAIT_LOCK) && (c.flags & PMWAL_OPEN_BREAK_LOCK))
		return bad_usage("append", "--wait-lock and --break-lock together (wait "
					   "for the writer, or fence it)");
	if (tail_opt && !fixed)
		return bad_usage("append", "--tail needs --record-size (lines have no "
					   "tail)");
	if ((rc = check_node(&c, "append")))
		return rc;
	uint64_t input_bytes, over = fixed ? input_tail_bytes(fixed, &input_bytes) : 0;

	if (over && a.tail_mode == TAIL_REFUSE)
		return cli_fail(&c, "append", 2,
				"the input is %llu bytes, not a whole number of "
				"%llu-byte records (%llu bytes over); nothing appended: "
				"pass --tail pad to zero-fill the last record to %llu "
				"bytes, or --tail short to append it as a %llu-byte "
				"record",
				(unsigned long long)input_bytes,
				(unsigned long long)fixed, (unsigned long long)over,
				(unsigned long long)fixed, (unsigned long long)over);
	init_opts(&o, &c);
	o.commit_policy = PMWAL_COMMIT_BUFFERED;
	struct pmwal *w;

	rc = pmwal_open(&o, &w);
	if (rc)
		return open_failed("append", &c, rc);
	struct pmwal_info info;

	pmwal_stat(w, &info);
	if (fixed > info.record_bytes_max) {
		char what[300];

		snprintf(what, sizeof(what),
			 "--record-size %s: larger than the log's maximum record "
			 "(%u bytes)",
			 fixed_arg, info.record_bytes_max);
		close_log(&c, "append", w);
		return bad_usage("append", what);
	}
	rc = append_all(w, &a, (size_t)fixed, info.record_bytes_max);
	if (rc) {
		char msg[600];

		snprintf(msg, sizeof(msg), "%s", pmwal_errmsg(w));
		fprintf(stderr, "pmwal append: %s%s%s\n", pmwal_strerror(rc),
			msg[0] ? ": " : "", msg);
		/* What was accepted before the failure is made durable if the log
		 * can still do it, so the range below is all there is. */
		(void)pmwal_sync(w);
	} else {
		rc = pmwal_sync(w);
		if (rc)
			fprintf(stderr, "pmwal append: %s: %s\n", pmwal_strerror(rc),
				pmwal_errmsg(w));
	}
	uint64_t lo_lsn, hi_lsn;
	char range[96];

	durable_range(&a, pmwal_durable_lsn(w), range, sizeof(range), &lo_lsn, &hi_lsn);
	int crc = close_log(&c, "append", w);
	/* From a pipe the tail shows only at the end, after the whole records
	 * before it were appended: they stay, the tail is refused. */
	bool tail_refused = a.tail_bytes && a.tail_mode == TAIL_REFUSE;
	char tail_msg[300];

	snprintf(tail_msg, sizeof(tail_msg),
		 "the input's last %zu bytes are not a whole %llu-byte record and were "
		 "not appended (pass --tail pad or --tail short to keep them)",
		 a.tail_bytes, (unsigned long long)fixed);
	if (tail_refused && !rc && !crc)
		fprintf(stderr, "pmwal append: %s\n", tail_msg);
	if (rc || crc || tail_refused) {
		if (c.json) {
			json_t *j = json_pack(
			    "{s:s, s:I, s:I, s:I, s:s}", "error",
			    rc || crc ? pmwal_strerror(rc ? rc : crc) : tail_msg,
			    "durable_records",
			    (json_int_t)(lo_lsn ? hi_lsn - lo_lsn + 1 : 0),
			    "durable_first_lsn", (json_int_t)lo_lsn, "durable_last_lsn",
			    (json_int_t)hi_lsn, "target", json_target(c.target));

			if (tail_refused)
				json_object_set_new(
				    j, "tail_bytes_not_appended",
				    json_integer((json_int_t)a.tail_bytes));
			print_json(j);
		}
		fprintf(stderr, "pmwal append: failed; %s\n", range);
		return 1;
	}
	if (c.json) {
		json_t *j =
		    json_pack("{s:I, s:I, s:I, s:I}", "records",
			      (json_int_t)(a.first ? a.last - a.first + 1 : 0),
			      "first_lsn", (json_int_t)a.first, "last_lsn",
			      (json_int_t)a.last, "skipped_empty", (json_int_t)a.skipped);

		if (!a.first) { /* nothing appended: no LSN range */
			json_object_set_new(j, "first_lsn", json_null());
			json_object_set_new(j, "last_lsn", json_null());
		}

		if (fixed) {
			size_t last_bytes = a.tail_bytes && a.tail_mode == TAIL_SHORT
						? a.tail_bytes
						: (size_t)fixed;

			json_object_set_new(j, "record_bytes",
					    json_integer((json_int_t)fixed));
			json_object_set_new(j, "last_record_bytes",
					    json_integer((json_int_t)last_bytes));
			json_object_set_new(
			    j, "padded_bytes",
			    json_integer(a.tail_bytes && a.tail_mode == TAIL_PAD
					     ? (json_int_t)(fixed - a.tail_bytes)
					     : 0));
		}
		print_json(j);
	} else {
		print_appended(&a, fixed);
	}
	return 0;
}

/* ---- dump --------------------------------------------------------------- */

static void print_text_record(uint64_t lsn, const unsigned char *p, size_t len)
{
	printf("%llu\t", (unsigned long long)lsn);
	for (size_t i = 0; i < len; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\')
			putchar(p[i]);
		else
			printf("\\x%02x", p[i]);
	}
	putchar('\n');
}

static void print_json_record(uint64_t lsn, const void *p, size_t len)
{
	json_t *o =
	    json_pack("{s:I, s:I}", "lsn", (json_int_t)lsn, "len", (json_int_t)len);
	json_t *s = json_stringn(p, len); /* NULL unless valid UTF-8 */

	if (s) {
		json_object_set_new(o, "data", s);
	} else {
		char *hex = malloc(len * 2 + 1);

		for (size_t i = 0; hex && i < len; i++)
			sprintf(hex + 2 * i, "%02x", ((const unsigned char *)p)[i]);
		if (hex) {
			hex[len * 2] = 0;
			json_object_set_new(o, "data_hex", json_string(hex));
		}
		free(hex);
	}
	json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(o);
}

static volatile sig_atomic_t follow_stop;

static void on_stop(int sig)
{
	(void)sig;
	follow_stop = 1;
}

static const struct cli_opt dump_opts[] = {
    {"from", 'f', "LSN", 'f', "start at this LSN (default: the head)", NULL, false},
    ROW_BUFFERED,
    ROW_NO_URING,
    ROW_SALVAGE,
    ROW_JSON,
    ROW_ENABLE_PMR,
    ROW_HELP,
    ROW_END,
};

static const struct cli_opt tail_opts[] = {
    {"from", 'f', "LSN|end", 'f',
     "start at this LSN, or 'end': only records made durable from now", "end", false},
    {"follow", 'F', NULL, 'F',
     "keep printing records as they become durable, until interrupted", NULL, false},
    ROW_BUFFERED,
    ROW_NO_URING,
    ROW_SALVAGE,
    ROW_JSON,
    ROW_ENABLE_PMR,
    ROW_HELP,
    ROW_END,
};

#define EXIT_DUMP                                                                        \
	"0\tevery record was printed\n"                                                  \
	"1\tfailure (reading the log, writing stdout, closing it)\n" EXIT_USAGE_LINE   \
	"3\tthe log is corrupt, or --salvage read past damage: the output is\n"          \
	"\tincomplete\n"

const struct cli_cmd cli_dump = {
    .name = "dump",
    .summary = "print records with their LSNs",
    .synopsis = "TARGET [--from LSN] [OPTIONS]",
    .description =
	"Prints each durable record: LSN, a tab, the bytes (non-printable as \\xNN).\n"
	"--json prints one object per line: lsn, len, data (or data_hex).\n",
    .opts = dump_opts,
    .exit_status = EXIT_DUMP,
    .args = CLI_ARGS_TARGET,
};

const struct cli_cmd cli_tail = {
    .name = "tail",
    .summary = "print records as they become durable (--follow)",
    .synopsis = "TARGET [--from LSN|end] [--follow] [OPTIONS]",
    .description =
	"Prints each durable record as pmwal dump does, from LSN (default: the head;\n"
	"'end': only records made durable from now on). --follow (-F) keeps\n"
	"printing records as the log's writer, in this or another process on this\n"
	"host, makes them durable, across its takeover by another writer, until\n"
	"interrupted (SIGINT/SIGTERM: exit 0). A follower that falls behind a\n"
	"release exits 4 naming the LSN to resume from.\n",
    .opts = tail_opts,
    .exit_status =
	EXIT_DUMP "4\t--follow fell behind a release: the message names the LSN to "
		  "resume\n\tfrom\n",
    .args = CLI_ARGS_TARGET,
};

/* pmwal dump, and pmwal tail (@cmd "tail"), which can also follow. */
static int dump_or_tail(int argc, char **argv, const char *cmd)
{
	bool tail = !strcmp(cmd, "tail"), follow = false, from_end = false;
	const struct cli_cmd *tab = tail ? &cli_tail : &cli_dump;
	struct common c = {0};
	struct pmwal_options o;
	uint64_t from = 0;
	int opt, rc;

	parse_start(argc, argv);
	while ((opt = cli_getopt(tab, argc, argv)) != -1) {
		if (common_opt(&c, opt))
			continue;
		switch (opt) {
		case 'f':
			if (tail && !strcmp(optarg, "end"))
				from_end = true;
			else if (cli_parse_u64(optarg, &from))
				return bad_value(cmd, "--from", optarg,
						 tail ? "an LSN or 'end'" : "an LSN");
			break;
		case 'F':
			follow = true;
			break;
		case 'h':
			cli_help(stdout, tab);
			return 0;
		default:
			return cli_bad_option(tab, opt, argc, argv);
		}
	}
	if ((rc = take_target(&c, cmd, argc, argv)) || (rc = no_more_args(cmd, argc, argv)) ||
	    (rc = check_node(&c, cmd)))
		return rc;
	init_opts(&o, &c);
	o.flags |= PMWAL_OPEN_READONLY;
	struct pmwal *w;

	rc = pmwal_open(&o, &w);
	if (rc)
		return open_failed(cmd, &c, rc);
	struct pmwal_iter *it;

	if (from_end) {
		struct pmwal_info info;

		pmwal_stat(w, &info);
		from = info.next_lsn;
	}
	rc = pmwal_iter_open(w, from, &it);
	if (rc) {
		cli_fail(&c, cmd, 2, "%s",
			 pmwal_errmsg(w)[0] ? pmwal_errmsg(w) : pmwal_strerror(rc));
		close_log(&c, cmd, w);
		return 2;
	}
	if (follow) {
		struct sigaction sa = {.sa_handler = on_stop};

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	uint64_t lsn;
	const void *data;
	size_t len;

	uint64_t last = 0, skipped = 0;
	int werr = 0; /* errno of a failed write to stdout */

	for (;;) {
		rc = pmwal_iter_next(it, &lsn, &data, &len);
		if (rc == 0 && follow && !follow_stop) {
			if ((werr = fflush(stdout) ? errno : 0) || ferror(stdout))
				break; /* its reader gone: said below */
			(void)pmwal_iter_wait(it, 200); /* and look at follow_stop */
			continue;
		}
		if (rc != 1)
			break;
		/* Salvage reads past damage: the records lost with it are a gap. */
		if (last && lsn > last + 1) {
			fprintf(stderr,
				"pmwal dump: %s: skipped LSN %llu..%llu (damaged; --salvage "
				"read on past them)\n",
				c.target, (unsigned long long)(last + 1),
				(unsigned long long)(lsn - 1));
			skipped += lsn - last - 1;
		}
		last = lsn;
		if (c.json)
			print_json_record(lsn, data, len);
		else
			print_text_record(lsn, data, len);
	}
	if (rc < 0)
		fprintf(stderr, "pmwal %s: %s: %s\n", cmd, pmwal_strerror(rc),
			pmwal_errmsg(w));
	/* Records that did not reach stdout (a full disk, a closed pipe with
	 * SIGPIPE ignored) are not a dump: never exit 0 after them. */
	if (fflush(stdout))
		werr = errno;
	if (werr || ferror(stdout)) {
		fprintf(stderr, "pmwal %s: %s: writing the records to stdout: %s\n", cmd,
			c.target, werr ? strerror(werr) : "a write failed");
		pmwal_iter_close(it);
		close_log(&c, cmd, w);
		return 1;
	}
	pmwal_iter_close(it);
	if (rc == PMWAL_ERANGE && follow) {
		close_log(&c, cmd, w);
		return 4;
	}
	struct pmwal_info info;

	pmwal_stat(w, &info);
	/* An empty dump is not an error; say why it is empty (stderr: stdout
	 * holds only records, in both formats). */
	if (rc == 0 && !last && info.next_lsn <= info.head_lsn && !follow)
		fprintf(stderr,
			"pmwal dump: %s: the log holds no records (next LSN %llu, head "
			"LSN %llu)\n",
			c.target, (unsigned long long)info.next_lsn,
			(unsigned long long)info.head_lsn);
	/* Salvage opened a damaged log and read past the damage: say what was
	 * lost rather than exit 0 as if the dump were the whole log. */
	const struct pmwal_report *r = pmwal_recovery_report(w);
	int salvaged = rc >= 0 && (r->verdict == PMWAL_CORRUPT || skipped);

	uint64_t lost = skipped > r->skipped_records ? skipped : r->skipped_records;

	/* Records the log attests durable past the last one read are lost too. */
	if (r->durable_hint > last && r->durable_hint - last > lost)
		lost = r->durable_hint - last;
	if (salvaged && lost)
		fprintf(stderr,
			"pmwal dump: %s: %s; the dump is incomplete: %llu record%s "
			"skipped with the damage, the last record dumped is LSN %llu\n",
			c.target, r->detail, (unsigned long long)lost,
			lost == 1 ? " was" : "s were", (unsigned long long)last);
	else if (salvaged)
		fprintf(stderr,
			"pmwal dump: %s: %s; the dump holds the records it could read, to "
			"LSN %llu, and counted none lost with the damage (pmwal recover "
			"--salvage repairs the log)\n",
			c.target, r->detail, (unsigned long long)last);
	if (close_log(&c, cmd, w) && rc >= 0)
		return 1;
	if (salvaged)
		return 3;
	return rc < 0 ? (rc == PMWAL_ECORRUPT ? 3 : 1) : 0;
}

int cmd_dump(int argc, char **argv)
{
	return dump_or_tail(argc, argv, "dump");
}

int cmd_tail(int argc, char **argv)
{
	return dump_or_tail(argc, argv, "tail");
}

/* ---- verify and recover ------------------------------------------------- */

static const struct cli_opt verify_opts[] = {
    ROW_BUFFERED, ROW_NO_URING, ROW_JSON, ROW_ENABLE_PMR, ROW_HELP, ROW_END,
};

const struct cli_cmd cli_verify = {
    .name = "verify",
    .summary = "check a log read-only: clean, torn tail or corrupt",
    .synopsis = "TARGET [OPTIONS]",
    .description =
	"Scans the log read-only (nothing is written) and prints the verdict: clean,\n"
	"torn_tail (an unacknowledged tail would be cut off) or corrupt (LSN, offset).\n",
    .opts = verify_opts,
    .exit_status = "0\tclean, or a torn tail\n" EXIT_USAGE_LINE EXIT_CORRUPT_LINE,
    .args = CLI_ARGS_TARGET,
};

static const struct cli_opt recover_opts[] = {
    ROW_BUFFERED, ROW_NO_URING,	  ROW_FDATASYNC, ROW_SALVAGE,
    ROW_JSON,	  ROW_ENABLE_PMR, ROW_HELP,	 ROW_END,
};

const struct cli_cmd cli_recover = {
    .name = "recover",
    .summary = "run recovery (cut off an unacknowledged torn tail)",
    .synopsis = "TARGET [--salvage] [OPTIONS]",
    .description =
	"Runs recovery as an opening database would: a torn tail is cut off (the next\n"
	"append overwrites it). A corrupt log is left untouched (exit 3) unless\n"
	"--salvage.\n",
    .opts = recover_opts,
    .exit_status =
	"0\tclean, or a torn tail cut off\n"
	"1\tfailure (an I/O error, closing the log)\n" EXIT_USAGE_LINE
	"3\tthe log is corrupt (left untouched, or salvaged past the damage)\n",
    .args = CLI_ARGS_TARGET,
};

int cmd_verify(int argc, char **argv)
{
	struct common c = {0};
	struct pmwal_options o;
	struct pmwal_report rep;
	int rc = parse_simple(&c, &cli_verify, argc, argv);

	if (rc >= 0)
		return rc;
	init_opts(&o, &c);
	/* What pmwal_verify() does (a read-only salvage open: nothing is
	 * written), keeping the handle to name the head and next LSN. */
	o.flags |= PMWAL_OPEN_READONLY | PMWAL_OPEN_SALVAGE;
	struct pmwal *w;
	struct pmwal_info info;

	rc = pmwal_open(&o, &w);
	if (rc)
		return cli_fail(&c, "verify", 2, "%s", open_msg(&c, rc));
	rep = *pmwal_recovery_report(w);
	pmwal_stat(w, &info);
	(void)pmwal_close(w); /* read-only: nothing to make durable */
	if (c.json)
		print_json(report_json(json_target(c.target), &rep, &info));
	else
		print_report(c.target, &rep, &info);
	return rep.verdict == PMWAL_CORRUPT ? 3 : 0;
}

int cmd_recover(int argc, char **argv)
{
	struct common c = {0};
	struct pmwal_options o;
	int rc = parse_simple(&c, &cli_recover, argc, argv);

	if (rc >= 0)
		return rc;
	init_opts(&o, &c);
	struct pmwal *w;

	rc = pmwal_open(&o, &w);
	if (rc)
		return open_failed("recover", &c, rc);
	struct pmwal_report rep = *pmwal_recovery_report(w);
	struct pmwal_info info;

	pmwal_stat(w, &info);
	rc = close_log(&c, "recover", w);
	if (c.json)
		print_json(report_json(json_target(c.target), &rep, &info));
	else
		print_report(c.target, &rep, &info);
	if (rc)
		return 1;
	return rep.verdict == PMWAL_CORRUPT ? 3 : 0;
}

/* ---- info and release --------------------------------------------------- */

static const struct cli_opt info_opts[] = {
    ROW_BUFFERED, ROW_NO_URING, ROW_JSON, ROW_ENABLE_PMR, ROW_HELP, ROW_END,
};

const struct cli_cmd cli_info = {
    .name = "info",
    .summary = "show superblock, geometry and durability mode",
    .synopsis = "TARGET [OPTIONS]",
    .description =
	"Shows the superblock, geometry, how groups are made durable on this medium,\n"
	"and which process holds the log open for writing, if one does.\n",
    .opts = info_opts,
    .exit_status = "0\tshown\n"
		   "1\tfailure (closing the log)\n" EXIT_USAGE_LINE EXIT_CORRUPT_LINE,
    .args = CLI_ARGS_TARGET,
};

static const struct cli_opt release_opts[] = {
    ROW_BUFFERED, ROW_NO_URING,	  ROW_FDATASYNC, ROW_SALVAGE,
    ROW_JSON,	  ROW_ENABLE_PMR, ROW_HELP,	 ROW_END,
};

const struct cli_cmd cli_release = {
    .name = "release",
    .summary = "release records below an LSN (after a checkpoint)",
    .synopsis = "TARGET LSN [OPTIONS]",
    .description =
	"Releases every record below LSN (after the database checkpointed them);\n"
	"their space is reused.\n",
    .opts = release_opts,
    .exit_status =
	"0\treleased\n"
	"1\tfailure (an I/O error, closing the log)\n"
	"2\tbad usage, a target that cannot be read or is not a log, or an LSN\n"
	"\tpast the log's end\n" EXIT_CORRUPT_LINE,
    .args = CLI_ARGS_TARGET,
};

int cmd_info(int argc, char **argv)
{
	struct common c = {0};
	struct pmwal_options o;
	struct pmwal_info i;
	int rc = parse_simple(&c, &cli_info, argc, argv);

	if (rc >= 0)
		return rc;
	init_opts(&o, &c);
	o.flags |= PMWAL_OPEN_READONLY | PMWAL_OPEN_SALVAGE;
	struct pmwal *w;

	rc = pmwal_open(&o, &w);
	if (rc)
		return open_failed("info", &c, rc);
	pmwal_stat(w, &i);
	const struct pmwal_report *r = pmwal_recovery_report(w);
	long writer = 0;
	int wrc = pmwal_writer_pid(c.target, &writer);

	if (c.json) {
		json_t *j = json_pack(
		    "{s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:i, s:i, s:i, s:i, s:i, s:i, "
		    "s:s, "
		    "s:I, s:I, s:I, s:I, s:I, s:I, s:s}",
		    "target", json_target(i.target), "medium", i.medium, "io_path", i.io_path,
		    "durability", i.durability, "granularity", i.granularity, "emulated",
		    i.emulated, "direct_io", i.direct_io, "block_bytes", i.block_bytes,
		    "sector_bytes", i.sector_bytes, "atomic_write_bytes",
		    i.atomic_write_bytes, "format_version", i.format_version, "epoch",
		    i.epoch, "record_bytes_max", i.record_bytes_max, "log_id", "",
		    "capacity_bytes", (json_int_t)i.capacity_bytes, "capacity_blocks",
		    (json_int_t)i.capacity_blocks, "head_lsn", (json_int_t)i.head_lsn,
		    "next_lsn", (json_int_t)i.next_lsn, "durable_lsn",
		    (json_int_t)i.durable_lsn, "used_blocks", (json_int_t)i.used_blocks,
		    "verdict", verdict_str(r->verdict));
		char id[17];

		snprintf(id, sizeof(id), "%016llx", (unsigned long long)i.log_id);
		json_object_set_new(j, "log_id", json_string(id));
		/* 0: no writer; -1: one whose pid cannot be told here */
		if (!wrc)
			json_object_set_new(j, "writer_pid", json_integer(writer));
		print_json(j);
	} else {
		printf("%s\n", i.target);
		printf("  format         version %u, %u-byte blocks, log id %016llx, "
		       "epoch %u\n",
		       i.format_version, i.block_bytes, (unsigned long long)i.log_id,
		       i.epoch);
		printf("  capacity       %llu bytes, %llu ring blocks (%llu live)\n",
		       (unsigned long long)i.capacity_bytes,
		       (unsigned long long)i.capacity_blocks,
		       (unsigned long long)i.used_blocks);
		if (i.durable_lsn >= i.head_lsn)
			printf("  records        LSN %llu..%llu live",
			       (unsigned long long)i.head_lsn,
			       (unsigned long long)i.durable_lsn);
		else
			printf("  records        none live (head LSN %llu)",
			       (unsigned long long)i.head_lsn);
		printf(", next LSN %llu, max record %u bytes\n",
		       (unsigned long long)i.next_lsn, i.record_bytes_max);
		printf("  medium         %s%s, I/O path %s%s, sector %u bytes\n",
		       i.medium, i.emulated ? " (emulated)" : "", i.io_path,
		       i.direct_io ? " with O_DIRECT" : "", i.sector_bytes);
		if (i.granularity[0])
			printf("  granularity    %s\n", i.granularity);
		printf("  durability     %s\n", i.durability);
		if (i.atomic_write_bytes)
			printf("  atomic writes  %u bytes%s\n", i.atomic_write_bytes,
			       strcmp(i.io_path, "mapped")
				   ? " (RWF_ATOMIC on every block)"
				   : " (aligned stores)");
		else
			printf("  atomic writes  none: torn blocks are detected by "
			       "checksum\n");
		printf("  state          %s (%s)\n", verdict_str(r->verdict), r->detail);
		if (wrc)
			printf("  writer         unknown (%s)\n", strerror(-wrc));
		else if (writer > 0)
			printf("  writer         pid %ld, open for writing (epoch %u is its "
			       "open's); what is shown may change as it appends\n",
			       writer, i.epoch);
		else if (writer < 0)
			printf("  writer         held open for writing by a process whose "
			       "pid cannot be told here: one of another PID namespace, or "
			       "what a writer that has exited left (a process it forked, "
			       "or its writes still in flight)\n");
		else
			printf("  writer         none\n");
	}
	return close_log(&c, "info", w) ? 1 : 0;
}

int cmd_release(int argc, char **argv)
{
	struct common c = {0};
	struct pmwal_options o;
	uint64_t lsn;
	int rc = parse_simple(&c, &cli_release, argc, argv);

	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return bad_usage("release", "missing LSN");
	if (cli_parse_u64(argv[optind], &lsn))
		return bad_value("release", "LSN", argv[optind], "a decimal LSN");
	optind++;
	if ((rc = no_more_args("release", argc, argv)))
		return rc;
	init_opts(&o, &c);
	struct pmwal *w;

	rc = pmwal_open(&o, &w);
	if (rc)
		return open_failed("release", &c, rc);
	rc = pmwal_release(w, lsn);
	if (rc)
		fprintf(stderr, "pmwal release: %s\n",
			pmwal_errmsg(w)[0] ? pmwal_errmsg(w) : pmwal_strerror(rc));
	int crc = close_log(&c, "release", w);

	return rc ? (rc == PMWAL_ERANGE ? 2 : 1) : crc ? 1 : 0;
}

/* ---- stat: a running writer's counters ---------------------------------- */

enum { OPT_INTERVAL = 1100, OPT_COUNT, OPT_OPENMETRICS };

static const struct cli_opt stat_opts[] = {
    {"follow", 'f', "SECONDS", OPT_INTERVAL,
     "print a line of rates every SECONDS (like iostat), until interrupted", NULL, false},
    {"count", 'n', "N", OPT_COUNT, "with --follow: stop after N lines", NULL, false},
    {"openmetrics", 0, NULL, OPT_OPENMETRICS,
     "print the counters as OpenMetrics text (Prometheus, node_exporter's textfile "
     "collector)",
     NULL, false},
    ROW_JSON,
    ROW_ENABLE_PMR,
    ROW_HELP,
    ROW_END,
};

const struct cli_cmd cli_stat = {
    .name = "stat",
    .summary = "show a running writer's counters (appends, groups, latency)",
    .synopsis = "TARGET [OPTIONS]",
    .description =
	"Reads the counters the log's writer publishes on its status page with each\n"
	"group it makes durable: records and bytes appended, groups and the records\n"
	"and blocks they took, failed writes, the head and durable end, ring space in\n"
	"use, and a histogram of group write latency (one group in 64 is timed).\n"
	"Opens the log read-only and never disturbs the writer. Without a writer\n"
	"there are no counters (a writer's page goes with its clean close; one\n"
	"that died leaves its last ones until the next writer opens).\n",
    .opts = stat_opts,
    .exit_status = "0\tshown\n"
		   "1\tfailure (the status page could not be read, stdout not written)\n" EXIT_USAGE_LINE
			   EXIT_CORRUPT_LINE,
    .args = CLI_ARGS_TARGET,
};

/* The upper bound, in ns, of latency bucket @i (2^(i+1)). */
static double bucket_le_ns(int i)
{
	return (double)(UINT64_C(1) << (i + 1));
}

/* The latency under which a fraction @q of the samples fell, by bucket
 * bounds (an upper bound: the histogram is log2), or 0 with no samples. */
static double latency_q(const struct pmwal_stats *s, double q)
{
	uint64_t want = (uint64_t)(q * (double)s->latency_samples + 0.999999), seen = 0;

	if (!s->latency_samples)
		return 0;
	for (int i = 0; i < PMWAL_STATS_BUCKETS; i++) {
		seen += s->latency_ns[i];
		if (seen >= want)
			return bucket_le_ns(i);
	}
	return bucket_le_ns(PMWAL_STATS_BUCKETS - 1);
}

static void fmt_ns(char *buf, size_t len, double ns)
{
	if (ns <= 0)
		snprintf(buf, len, "-");
	else if (ns < 1e3)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.0fus", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.0fms", ns / 1e6);
	else
		snprintf(buf, len, "%.1fs", ns / 1e9);
}

/* A label value as OpenMetrics escapes it: \\, \" and \n. */
static void om_label(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void om_metric(FILE *f, const char *target, const char *name, const char *type,
		      const char *unit, const char *help, uint64_t v)
{
	bool counter = !strcmp(type, "counter");

	fprintf(f, "# TYPE %s %s\n", name, type);
	if (unit)
		fprintf(f, "# UNIT %s %s\n", name, unit);
	fprintf(f, "# HELP %s %s\n", name, help);
	fprintf(f, "%s%s{log=\"", name, counter ? "_total" : "");
	om_label(f, target);
	fprintf(f, "\"} %llu\n", (unsigned long long)v);
}

static void stat_openmetrics(FILE *f, const char *target, const struct pmwal_stats *s)
{
	om_metric(f, target, "pmwal_writer_open", "gauge", NULL,
		  "1 while a writer has the log open", s->writer_pid != 0);
	om_metric(f, target, "pmwal_epoch", "gauge", NULL,
		  "the writer's epoch (+1 per open for writing)", s->epoch);
	om_metric(f, target, "pmwal_appends", "counter", NULL,
		  "records accepted by append calls since the writer opened", s->appends);
	om_metric(f, target, "pmwal_append_bytes", "counter", "bytes",
		  "payload bytes of those records", s->append_bytes);
	om_metric(f, target, "pmwal_groups", "counter", NULL,
		  "group writes made durable since the writer opened", s->groups);
	om_metric(f, target, "pmwal_group_records", "counter", NULL,
		  "records in those groups", s->group_records);
	om_metric(f, target, "pmwal_group_blocks", "counter", NULL,
		  "ring blocks those groups took", s->group_blocks);
	om_metric(f, target, "pmwal_write_errors", "counter", NULL,
		  "group writes that failed (the writer stops at the first)", s->errors);
	om_metric(f, target, "pmwal_head_lsn", "gauge", NULL, "oldest record kept",
		  s->head_lsn);
	om_metric(f, target, "pmwal_durable_lsn", "gauge", NULL,
		  "highest durable LSN (0: none)", s->durable_lsn);
	om_metric(f, target, "pmwal_capacity_blocks", "gauge", NULL,
		  "ring blocks of 4096 bytes", s->capacity_blocks);
	om_metric(f, target, "pmwal_used_blocks", "gauge", NULL,
		  "ring blocks holding live records", s->used_blocks);
	fprintf(f, "# TYPE pmwal_group_write_seconds histogram\n"
		   "# UNIT pmwal_group_write_seconds seconds\n"
		   "# HELP pmwal_group_write_seconds a group's time from its first store "
		   "to durable, one group in 64 timed\n");
	/* Cumulative, never falling, and the count is the +Inf bucket, as a
	 * parser demands, even from a page its writer's user garbled (a
	 * scraper drops the whole text over one histogram out of order). */
	uint64_t cum = 0;

	for (int i = 0; i < PMWAL_STATS_BUCKETS; i++) {
		cum = s->latency_ns[i] > UINT64_MAX - cum ? UINT64_MAX : cum + s->latency_ns[i];
		if (i < PMWAL_STATS_BUCKETS - 1) {
			fprintf(f, "pmwal_group_write_seconds_bucket{log=\"");
			om_label(f, target);
			fprintf(f, "\",le=\"%.9g\"} %llu\n", bucket_le_ns(i) / 1e9,
				(unsigned long long)cum);
		}
	}
	fprintf(f, "pmwal_group_write_seconds_bucket{log=\"");
	om_label(f, target);
	fprintf(f, "\",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
	fprintf(f, "pmwal_group_write_seconds_count{log=\"");
	om_label(f, target);
	fprintf(f, "\"} %llu\n", (unsigned long long)cum);
	fprintf(f, "pmwal_group_write_seconds_sum{log=\"");
	om_label(f, target);
	fprintf(f, "\"} %.9f\n", (double)s->latency_sum_ns / 1e9);
	fprintf(f, "# EOF\n");
}

static json_t *stat_json(const char *target, const struct pmwal_stats *s)
{
	json_t *h = json_array();

	for (int i = 0; i < PMWAL_STATS_BUCKETS; i++)
		json_array_append_new(h, json_integer((json_int_t)s->latency_ns[i]));
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
			 "s:I, s:I, s:o, s:f, s:f}",
			 "target", target, "writer_pid", (json_int_t)s->writer_pid, "epoch",
			 (json_int_t)s->epoch, "appends", (json_int_t)s->appends,
			 "append_bytes", (json_int_t)s->append_bytes, "groups",
			 (json_int_t)s->groups, "group_records", (json_int_t)s->group_records,
			 "group_blocks", (json_int_t)s->group_blocks, "errors",
			 (json_int_t)s->errors, "head_lsn", (json_int_t)s->head_lsn,
			 "durable_lsn", (json_int_t)s->durable_lsn, "capacity_blocks",
			 (json_int_t)s->capacity_blocks, "used_blocks",
			 (json_int_t)s->used_blocks, "latency_samples",
			 (json_int_t)s->latency_samples, "latency_sum_ns",
			 (json_int_t)s->latency_sum_ns, "latency_log2_ns", h,
			 "latency_p50_ns_max", latency_q(s, 0.5), "latency_p99_ns_max",
			 latency_q(s, 0.99));
}

static void stat_text(const char *target, const struct pmwal_stats *s)
{
	char p50[16], p99[16];

	fmt_ns(p50, sizeof(p50), latency_q(s, 0.5));
	fmt_ns(p99, sizeof(p99), latency_q(s, 0.99));
	printf("%s\n", target);
	if (s->writer_pid)
		printf("  writer         pid %u, epoch %u\n", s->writer_pid, s->epoch);
	else if (s->groups)
		printf("  writer         none (the counters are those a writer that died left)\n");
	if (!s->writer_pid && !s->groups) {
		printf("  writer         none: no counters (a writer publishes them while it "
		       "has the log open)\n");
		printf("  LSN            head %llu, durable %llu\n", (unsigned long long)s->head_lsn,
		       (unsigned long long)s->durable_lsn);
		return;
	}
	printf("  appends        %llu %s, %llu bytes\n", (unsigned long long)s->appends,
	       s->appends == 1 ? "record" : "records", (unsigned long long)s->append_bytes);
	printf("  groups         %llu durable", (unsigned long long)s->groups);
	if (s->groups)
		printf(", %.2f records and %.2f blocks per group",
		       (double)s->group_records / (double)s->groups,
		       (double)s->group_blocks / (double)s->groups);
	printf("\n  write errors   %llu\n", (unsigned long long)s->errors);
	printf("  LSN            head %llu, durable %llu\n", (unsigned long long)s->head_lsn,
	       (unsigned long long)s->durable_lsn);
	printf("  space          %llu of %llu ring blocks in use (%.1f%%)\n",
	       (unsigned long long)s->used_blocks, (unsigned long long)s->capacity_blocks,
	       s->capacity_blocks ? 100.0 * (double)s->used_blocks / (double)s->capacity_blocks
				  : 0.0);
	printf("  group write    p50 <= %s, p99 <= %s (%llu %s timed, log2 buckets)\n", p50,
	       p99, (unsigned long long)s->latency_samples,
	       s->latency_samples == 1 ? "group" : "groups");
}

static volatile sig_atomic_t stat_stop;

static void stat_on_signal(int sig)
{
	(void)sig;
	stat_stop = 1;
}

/* One line per interval: the rates since the line before. */
static int stat_follow(struct pmwal *w, const char *target, double secs, long count, bool json)
{
	struct pmwal_stats a, b;
	struct sigaction sa = {.sa_handler = stat_on_signal};

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (pmwal_stats(w, &a, sizeof(a)))
		return 1;
	if (!json)
		printf("%8s %12s %10s %10s %9s %14s %6s %8s %8s\n", "time", "appends/s", "MiB/s",
		       "groups/s", "rec/grp", "durable LSN", "used", "p50<=", "p99<=");
	for (long n = 0; !stat_stop && (count <= 0 || n < count); n++) {
		struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};

		while (nanosleep(&ts, &ts) && errno == EINTR && !stat_stop)
			;
		if (stat_stop)
			break;
		int rc = pmwal_stats(w, &b, sizeof(b));

		if (rc == -EAGAIN)
			continue;
		if (rc)
			return 1;
		/* A new writer counts from zero: its rates start from there. */
		if (b.epoch != a.epoch || b.appends < a.appends)
			memset(&a, 0, sizeof(a));
		struct pmwal_stats d = b;

		d.appends -= a.appends;
		d.append_bytes -= a.append_bytes;
		d.groups -= a.groups;
		d.group_records -= a.group_records;
		d.latency_samples -= a.latency_samples;
		d.latency_sum_ns -= a.latency_sum_ns;
		for (int i = 0; i < PMWAL_STATS_BUCKETS; i++)
			d.latency_ns[i] -= a.latency_ns[i];
		time_t now = time(NULL);
		struct tm tm;
		char hms[16], p50[16], p99[16];

		localtime_r(&now, &tm);
		strftime(hms, sizeof(hms), "%H:%M:%S", &tm);
		fmt_ns(p50, sizeof(p50), latency_q(&d, 0.5));
		fmt_ns(p99, sizeof(p99), latency_q(&d, 0.99));
		if (json) {
			json_t *j = stat_json(target, &b);

			json_object_set_new(j, "time", json_string(hms));
			json_object_set_new(j, "appends_per_s", json_real((double)d.appends / secs));
			json_object_set_new(j, "bytes_per_s",
					    json_real((double)d.append_bytes / secs));
			json_object_set_new(j, "groups_per_s", json_real((double)d.groups / secs));
			char *txt = json_dumps(j, JSON_COMPACT);

			json_decref(j);
			if (txt) {
				printf("%s\n", txt);
				free(txt);
			}
		} else {
			printf("%8s %12.0f %10.1f %10.0f %9.2f %14llu %5.1f%% %8s %8s\n", hms,
			       (double)d.appends / secs,
			       (double)d.append_bytes / secs / 1048576.0,
			       (double)d.groups / secs,
			       d.groups ? (double)d.group_records / (double)d.groups : 0.0,
			       (unsigned long long)b.durable_lsn,
			       b.capacity_blocks ? 100.0 * (double)b.used_blocks /
						       (double)b.capacity_blocks
						 : 0.0,
			       p50, p99);
		}
		/* The reader gone (a closed pipe, SIGPIPE ignored as under
		 * systemd): stop rather than print into nothing forever. */
		int werr = fflush(stdout) ? errno : 0;

		if (werr || ferror(stdout)) {
			fprintf(stderr, "pmwal stat: writing to stdout: %s\n",
				werr ? strerror(werr) : "a write failed");
			return 1;
		}
		a = b;
	}
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct common c = {0};
	struct pmwal_options o;
	double secs = 0;
	long count = 0;
	bool om = false;
	int opt, rc;

	parse_start(argc, argv);
	while ((opt = cli_getopt(&cli_stat, argc, argv)) != -1) {
		char *end;

		if (common_opt(&c, opt))
			continue;
		switch (opt) {
		case 'h':
			cli_help(stdout, &cli_stat);
			return 0;
		case OPT_INTERVAL:
			errno = 0;
			secs = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(secs >= 0.01 && secs <= 86400))
				return bad_value("stat", "--follow", optarg,
						 "seconds between lines, 0.01 to 86400");
			break;
		case OPT_COUNT:
			errno = 0;
			count = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || count < 1)
				return bad_value("stat", "--count", optarg,
						 "a number of lines, 1 or more");
			break;
		case OPT_OPENMETRICS:
			om = true;
			break;
		default:
			return cli_bad_option(&cli_stat, opt, argc, argv);
		}
	}
	if ((rc = take_target(&c, "stat", argc, argv)) || (rc = no_more_args("stat", argc, argv)))
		return rc;
	if (om && (c.json || secs > 0))
		return bad_usage("stat", "--openmetrics prints one snapshot as text; it takes "
					 "neither --json nor --follow (a scraper asks again)");
	if (count && secs == 0)
		return bad_usage("stat", "--count 1 or more needs --follow SECONDS");
	if ((rc = check_node(&c, "stat")))
		return rc;
	init_opts(&o, &c);
	o.flags |= PMWAL_OPEN_READONLY | PMWAL_OPEN_SALVAGE;
	struct pmwal *w;

	rc = pmwal_open(&o, &w);
	if (rc)
		return open_failed("stat", &c, rc);
	struct pmwal_stats s;

	rc = pmwal_stats(w, &s, sizeof(s));
	if (rc) {
		pmwal_close(w);
		return cli_fail(&c, "stat", 1, "%s: reading the writer's counters: %s", c.target,
				pmwal_strerror(rc));
	}
	/* A writer holds the log, but its page is not one this process reads
	 * (another PMWAL_STATUS_DIR, a page this user may not read): say so,
	 * rather than "no writer". */
	long holder = 0;

	if (!s.writer_pid && pmwal_writer_pid(c.target, &holder) == 0 && holder != 0) {
		char pid[32] = "";

		if (holder > 0)
			snprintf(pid, sizeof(pid), " (pid %ld)", holder);
		fprintf(stderr,
			"pmwal stat: %s: a writer%s holds the log, but its status page is not "
			"one this process can read (another PMWAL_STATUS_DIR, or a page this "
			"user may not read): no counters\n",
			c.target, pid);
	}
	/* JSON and OpenMetrics are UTF-8: the name as they can carry it. */
	char *name = c.json || om ? json_text(c.target) : NULL;

	if ((c.json || om) && !name)
		rc = cli_fail(&c, "stat", 1, "%s: out of memory", c.target);
	else if (secs > 0)
		rc = stat_follow(w, c.json ? name : c.target, secs, count, c.json);
	else if (om)
		stat_openmetrics(stdout, name, &s);
	else if (c.json)
		print_json(stat_json(name, &s));
	else
		stat_text(c.target, &s);
	free(name);
	if (close_log(&c, "stat", w))
		rc = 1;
	if (fflush(stdout) && !rc)
		rc = 1;
	return rc;
}
