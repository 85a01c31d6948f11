// SPDX-License-Identifier: MIT
/*
 * fiojob.c - `pmwal bench io --job FILE.fio`: a fio job file (fio's ini
 * format) read for the options pmwal bench io supports, each job run and
 * reported as one job under its section's name.
 *
 * The syntax is fio's: [global] sections give defaults to the jobs after
 * them, any other [name] is a job, "key=value" or a bare "key" (a boolean
 * set), whole-line comments start with ';' or '#'. Values follow fio's
 * rules, sizes included (fio.h fio_parse_size, kb_base). An option pmwal
 * does not support is refused by name, with its line, before anything runs:
 * a job file that means something else must not run as something it is not.
 */
#include "ctx.h"
#include "fio.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIOJOB_JOBS_MAX	 64
#define FIOJOB_LINE_MAX	 1024
#define FIOJOB_LINES_MAX 100000

struct fio_section {
	char name[64];
	struct io_spec spec;
	char target[1024];
	unsigned kb_base;
	uint64_t rate_per_job[DIR_COUNT]; /* fio's rate is per job; pmwal's total */
};

struct fio_file {
	const char *path;
	int line;
	struct fio_section global;
	struct fio_section jobs[FIOJOB_JOBS_MAX];
	int njobs;
	json_t *global_opts; /* as written, for the root's "global options" */
	char *err;
	size_t errlen;
};

/* @in with each byte that is not printable ASCII written \xNN: a binary
 * job file's bytes must not reach the terminal raw. */
static void escape(const char *in, char *out, size_t len)
{
	size_t at = 0;

	for (; *in && at + 5 < len; in++) {
		unsigned char ch = (unsigned char)*in;
		if (ch >= 0x20 && ch < 0x7f)
			out[at++] = (char)ch;
		else
			at += (size_t)snprintf(out + at, len - at, "\\x%02x", ch);
	}
	out[at] = 0;
}

static int bad(struct fio_file *f, const char *key, const char *fmt, const char *v)
{
	char msg[512], safe[1024], k[256] = "";

	snprintf(msg, sizeof(msg), fmt, v);
	escape(msg, safe, sizeof(safe));
	if (key)
		escape(key, k, sizeof(k));
	snprintf(f->err, f->errlen, "%s:%d: %s%s%s", f->path, f->line, k, key ? ": " : "",
		 safe);
	return -1;
}

static int set_bool(struct fio_file *f, const char *key, const char *v, bool *out)
{
	if (!v || !strcmp(v, "1") || !strcmp(v, "true"))
		*out = true;
	else if (!strcmp(v, "0") || !strcmp(v, "false"))
		*out = false;
	else
		return bad(f, key, "'%s' is not 0 or 1", v);
	return 0;
}

static int set_size(struct fio_file *f, struct fio_section *s, const char *key,
		    const char *v, uint64_t *out)
{
	char msg[256];

	if (!v)
		return bad(f, key, "%s", "needs a value");
	if (fio_parse_size(v, s->kb_base, out, msg, sizeof(msg)))
		return bad(f, key, "%s", msg);
	return 0;
}

/* fio's size=N%: a share (1..100) of the size the file or device has when
 * its job opens it (io_resolve_size). */
static int set_size_pct(struct fio_file *f, const char *key, const char *v,
			struct io_spec *o)
{
	size_t n = strlen(v);
	char num[32], msg[256];
	uint64_t u;

	if (n < 2 || n - 1 >= sizeof(num) || v[n - 1] != '%')
		goto refuse;
	snprintf(num, sizeof(num), "%.*s", (int)(n - 1), v);
	if (parse_uint(num, 1, 100, &u, msg, sizeof(msg)))
		goto refuse;
	o->size_pct = (uint32_t)u;
	o->size_bytes = 0;
	return 0;
refuse:
	return bad(f, key,
		   "'%s': a share of the file's size is a whole percentage in 1..100", v);
}

static int set_uint(struct fio_file *f, const char *key, const char *v, uint64_t min,
		    uint64_t max, uint64_t *out)
{
	char msg[256];

	if (!v)
		return bad(f, key, "%s", "needs a value");
	if (parse_uint(v, min, max, out, msg, sizeof(msg)))
		return bad(f, key, "%s", msg);
	return 0;
}

/* fio's time: seconds by default; d, h, m, s/sec, ms/msec, us/usec. */
static int set_time(struct fio_file *f, const char *key, const char *v, uint64_t *ns)
{
	char buf[64], msg[256];
	char *end;

	if (!v)
		return bad(f, key, "%s", "needs a value");
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *p = buf; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	errno = 0;
	unsigned long long n = strtoull(buf, &end, 10);
	if (end != buf && !strcmp(end, "d") && !errno && n < 10000) {
		*ns = n * 86400ull * 1000000000ull;
		return 0;
	}
	if (!strcmp(end, "msec"))
		strcpy(end, "ms");
	else if (!strcmp(end, "usec"))
		strcpy(end, "us");
	else if (!strcmp(end, "sec"))
		strcpy(end, "s");
	if (end == buf || strchr(buf, '.') || parse_duration(buf, ns, msg, sizeof(msg)))
		return bad(f, key,
			   "'%s' is not a fio time (a whole number with d, h, m, s, "
			   "ms or us; seconds without one)",
			   v);
	return 0;
}

/* fio's rate=READ[,WRITE]: one value caps both. */
static int set_rate(struct fio_file *f, struct fio_section *s, const char *v)
{
	char buf[128];

	if (!v)
		return bad(f, "rate", "%s", "needs a value");
	snprintf(buf, sizeof(buf), "%s", v);
	char *comma = strchr(buf, ',');
	if (comma)
		*comma = 0;
	if (comma && strchr(comma + 1, ','))
		return bad(f, "rate", "'%s': trim rates are not supported (READ,WRITE)",
			   v);
	if (*buf && set_size(f, s, "rate", buf, &s->rate_per_job[DIR_READ]))
		return -1;
	if (!comma)
		s->rate_per_job[DIR_WRITE] = s->rate_per_job[DIR_READ];
	else if (comma[1] &&
		 set_size(f, s, "rate", comma + 1, &s->rate_per_job[DIR_WRITE]))
		return -1;
	return 0;
}

static int set_ioengine(struct fio_file *f, const char *v)
{
	/* bench io drives io_uring on files and devices and its own
	 * non-temporal copies on regions; fio's libpmem names the latter. */
	if (v && (!strcmp(v, "io_uring") || !strcmp(v, "libpmem")))
		return 0;
	return bad(f, "ioengine",
		   "'%s' is not supported: pmwal bench io drives io_uring (files, "
		   "devices) or its own pmem path (regions, fio's libpmem)",
		   v ? v : "");
}

/* Options that change nothing in how pmwal runs a job (each job is run
 * alone, one after the other, with threads and registered buffers). */
static const char *const accepted[] = {
    "group_reporting", "thread",	"stonewall", "wait_for_previous",
    "fixedbufs",       "registerfiles", "name",	     "description",
};

static int set_shape(struct fio_file *f, struct fio_section *s, const char *k,
		     const char *v, bool *known)
{
	struct io_spec *o = &s->spec;
	char msg[256];
	uint64_t u;

	*known = true;
	if (!strcmp(k, "rw") || !strcmp(k, "readwrite")) {
		if (!v || parse_rw(v, &o->rw, msg, sizeof(msg)))
			return bad(f, k, "%s", v ? msg : "needs a value");
	} else if (!strcmp(k, "rwmixread") || !strcmp(k, "rwmixwrite")) {
		if (set_uint(f, k, v, 0, 100, &u))
			return -1;
		o->rwmixread = (int)(k[5] == 'r' ? u : 100 - u);
	} else if (!strcmp(k, "bs") || !strcmp(k, "blocksize")) {
		if (set_size(f, s, k, v, &u))
			return -1;
		if (!u || u > (64u << 20))
			return bad(f, k, "'%s' must be in 1..64m", v);
		o->bs_bytes = (uint32_t)u;
	} else if (!strcmp(k, "size")) {
		o->size_pct = 0;
		if (v && strchr(v, '%'))
			return set_size_pct(f, k, v, o);
		if (set_size(f, s, k, v, &o->size_bytes))
			return -1;
		if (!o->size_bytes)
			return bad(f, k, "%s", "must be above 0");
	} else if (!strcmp(k, "iodepth")) {
		if (set_uint(f, k, v, 1, 4096, &u))
			return -1;
		o->iodepth = (uint32_t)u;
	} else if (!strcmp(k, "numjobs")) {
		if (set_uint(f, k, v, 1, 256, &u))
			return -1;
		o->numjobs = (uint32_t)u;
	} else if (!strcmp(k, "iodepth_batch_submit") || !strcmp(k, "iodepth_batch")) {
		if (set_uint(f, k, v, 1, 4096, &u))
			return -1;
		o->batch_submit = (uint32_t)u;
	} else {
		*known = false;
	}
	return 0;
}

static int set_option(struct fio_file *f, struct fio_section *s, const char *k,
		      const char *v)
{
	struct io_spec *o = &s->spec;
	bool known;
	uint64_t u;

	int ret = set_shape(f, s, k, v, &known);
	if (ret || known)
		return ret;
	if (!strcmp(k, "filename")) {
		if (!v || !*v)
			return bad(f, k, "%s", "needs a value");
		if (strchr(v, ':') && strncmp(v, "pmem:", 5) && strncmp(v, "file:", 5) &&
		    strncmp(v, "pmr:", 4) && strncmp(v, "fakepmr:", 8))
			return bad(f, k,
				   "'%s': several files (fio's ':' list) are not "
				   "supported, one target per job",
				   v);
		snprintf(s->target, sizeof(s->target), "%s", v);
	} else if (!strcmp(k, "runtime")) {
		return set_time(f, k, v, &o->runtime_ns);
	} else if (!strcmp(k, "ramp_time")) {
		return set_time(f, k, v, &o->ramp_ns);
	} else if (!strcmp(k, "time_based")) {
		bool b;
		return set_bool(f, k, v, &b);
	} else if (!strcmp(k, "direct")) {
		return set_bool(f, k, v, &o->direct);
	} else if (!strcmp(k, "buffered")) {
		bool b;
		if (set_bool(f, k, v, &b))
			return -1;
		o->direct = !b;
	} else if (!strcmp(k, "sqthread_poll")) {
		return set_bool(f, k, v, &o->sqpoll);
	} else if (!strcmp(k, "hipri")) {
		return set_bool(f, k, v, &o->hipri);
	} else if (!strcmp(k, "ioengine")) {
		return set_ioengine(f, v);
	} else if (!strcmp(k, "rate")) {
		return set_rate(f, s, v);
	} else if (!strcmp(k, "kb_base")) {
		if (set_uint(f, k, v, 1000, 1024, &u) || (u != 1000 && u != 1024))
			return bad(f, k, "'%s' must be 1000 or 1024", v ? v : "");
		s->kb_base = (unsigned)u;
	} else {
		for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++)
			if (!strcmp(k, accepted[i]))
				return 0;
		return bad(f, NULL,
			   "option '%s' is not supported by pmwal bench io (supported: "
			   "filename, rw, rwmixread, rwmixwrite, bs, size, iodepth, "
			   "numjobs, iodepth_batch_submit, runtime, time_based, "
			   "ramp_time, direct, buffered, ioengine=io_uring, "
			   "sqthread_poll, hipri, rate, kb_base, name, group_reporting, "
			   "thread, stonewall, fixedbufs, registerfiles)",
			   k);
	}
	return 0;
}

static char *trim(char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	size_t n = strlen(p);
	while (n && isspace((unsigned char)p[n - 1]))
		p[--n] = 0;
	return p;
}

/* "[name]": the section it opens, or NULL with the error set. */
static struct fio_section *open_section(struct fio_file *f, char *p)
{
	char *end = strchr(p, ']');

	if (!end || *trim(end + 1) || end == p + 1) {
		bad(f, NULL, "'%s' is not a section header ([global] or [jobname])", p);
		return NULL;
	}
	*end = 0;
	if (!strcmp(p + 1, "global"))
		return &f->global;
	if (f->njobs >= FIOJOB_JOBS_MAX) {
		bad(f, NULL, "more than %s jobs", "64");
		return NULL;
	}
	struct fio_section *s = &f->jobs[f->njobs++];
	*s = f->global; /* global options given so far apply, as in fio */
	snprintf(s->name, sizeof(s->name), "%s", p + 1);
	return s;
}

static int parse_line(struct fio_file *f, struct fio_section **cur, char *line)
{
	char *p = trim(line);

	if (!*p || *p == ';' || *p == '#')
		return 0;
	if (*p == '[') {
		*cur = open_section(f, p);
		return *cur ? 0 : -1;
	}
	if (!*cur)
		return bad(f, NULL, "'%s' comes before any [section]", p);
	char *eq = strchr(p, '='), *v = NULL;
	if (eq) {
		*eq = 0;
		v = trim(eq + 1);
	}
	p = trim(p);
	/* fio leaves a bare boolean out of "global options". */
	if (*cur == &f->global && v)
		json_object_set_new(f->global_opts, p, json_string(v));
	return set_option(f, *cur, p, v);
}

static int parse_file(struct fio_file *f, const struct io_spec *base)
{
	char line[FIOJOB_LINE_MAX + 2]; /* 1023 characters, newline, NUL */
	struct fio_section *cur = NULL;
	struct stat st;
	FILE *in;

	if (stat(f->path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* A FIFO would block the open, a device read without end. */
		snprintf(f->err, f->errlen, "--job %s: not a regular file", f->path);
		return -1;
	}
	if (stat(f->path, &st) == 0 &&
	    st.st_size > (off_t)FIOJOB_LINES_MAX * FIOJOB_LINE_MAX) {
		snprintf(f->err, f->errlen,
			 "--job %s: %lld bytes: too large for a job file", f->path,
			 (long long)st.st_size);
		return -1;
	}
	if (!(in = fopen(f->path, "r"))) {
		snprintf(f->err, f->errlen, "--job %s: %s", f->path, strerror(errno));
		return -1;
	}
	f->global.spec = *base;
	f->global.kb_base = 1024;
	int ret = 0;
	char *raw = NULL;
	size_t cap = 0;
	ssize_t n;
	/* getline: the length read, NUL bytes included (fgets hides them) */
	while (!ret && (n = getline(&raw, &cap, in)) > 0) {
		f->line++;
		size_t text = strlen(raw);
		if (text < (size_t)n)
			ret = bad(f, NULL, "a NUL byte at line %s: not a text file",
				  (snprintf(line, sizeof(line), "%d", f->line), line));
		else if (text - (raw[text - 1] == '\n') > FIOJOB_LINE_MAX - 1)
			ret = bad(f, NULL, "a line longer than %s characters", "1023");
		else if (f->line > FIOJOB_LINES_MAX)
			ret =
			    bad(f, NULL, "%s", "more than 100000 lines: not a job file");
		else
			ret = parse_line(f, &cur, strcpy(line, raw));
	}
	free(raw);
	fclose(in);
	if (!ret && !f->njobs)
		ret = bad(f, NULL, "%s", "no job section ([jobname]) in the file");
	return ret;
}

/* fio's rate is per job, pmwal's is the total of numjobs: a total past
 * what a signed 64-bit count holds is refused by name (-1 with f->err). */
static int finish_section(struct fio_file *f, struct fio_section *s)
{
	for (int d = 0; d < DIR_COUNT; d++) {
		uint64_t r = s->rate_per_job[d],
			 n = s->spec.numjobs ? s->spec.numjobs : 1;
		if (!r)
			continue;
		if (r > (uint64_t)INT64_MAX / n) {
			snprintf(
			    f->err, f->errlen,
			    "%s: job [%s]: rate %" PRIu64 " bytes/s per job x numjobs "
			    "%" PRIu64 " overflows a 64-bit rate; give a smaller rate "
			    "(fio's is per job)",
			    f->path, s->name, r, n);
			return -1;
		}
		s->spec.rate[d].bytes_per_s = r * n;
	}
	return 0;
}

/*
 * Every job's target, checked before the first job runs (a bad name in the
 * third section must not leave two jobs run and one silently missing): a
 * file target's directory must exist, the name must not be a directory,
 * FIFO, socket or character device, and no live writer may hold it as a
 * log (another bench run?). 0, or -1 with c->err.
 */
static int check_targets(struct bench_ctx *c, struct fio_file *f)
{
	char label[48], msg[600], dir[1024];
	struct stat st;

	for (int i = 0; i < f->njobs; i++) {
		struct fio_section *s = &f->jobs[i];
		const char *t = *s->target ? s->target : c->npos ? c->pos[0] : "flash";
		const char *r = target_resolve(t, 0, label, sizeof(label));
		enum pmwal_target_kind k = target_kind(r);
		const char *file = target_file(r);
		*msg = 0;
		if (log_check_no_writer(r, msg, sizeof(msg)))
			goto bad;
		if (!file || (k != PMWAL_TARGET_FILE && k != PMWAL_TARGET_PMEM))
			continue;
		if (stat(file, &st) == 0) {
			if (S_ISREG(st.st_mode) ||
			    (S_ISBLK(st.st_mode) && k == PMWAL_TARGET_FILE))
				continue;
			snprintf(msg, sizeof(msg), "%s is %s: name a regular file%s",
				 file, file_kind(st.st_mode),
				 k == PMWAL_TARGET_FILE ? " or a block device" : "");
			goto bad;
		}
		if (s->spec.size_pct) {
			snprintf(msg, sizeof(msg),
				 "size=%u%%: %s does not exist, so it has no size to "
				 "take a share of; give size in bytes",
				 s->spec.size_pct, file);
			goto bad;
		}
		if (parent_dir_writable(file, dir, sizeof(dir))) {
			snprintf(
			    msg, sizeof(msg),
			    "%s: cannot create it: %s is not a directory this run can "
			    "write to",
			    file, dir);
			goto bad;
		}
		continue;
	bad:
		snprintf(c->err, sizeof(c->err),
			 "--job %s: job [%s]: %s (no job was run)", f->path, s->name,
			 msg);
		return -1;
	}
	return 0;
}

int fio_job_file_load(struct bench_ctx *c, const char *path)
{
	struct fio_file *f = calloc(1, sizeof(*f));

	if (!f) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		return -1;
	}
	f->path = path;
	f->err = c->err;
	f->errlen = sizeof(c->err);
	f->global_opts = json_object();
	int ret = parse_file(f, &c->io);
	for (int i = 0; !ret && i < f->njobs; i++)
		ret = finish_section(f, &f->jobs[i]);
	if (ret) {
		json_decref(f->global_opts);
		free(f);
		return -1;
	}
	c->jobs = f;
	return 0;
}

int fio_job_file_run(struct bench_ctx *c)
{
	struct fio_file *f = c->jobs;
	const char *path = f->path;
	char label[48], name[160];

	c->jobs = NULL;
	if (check_targets(c, f)) {
		json_decref(f->global_opts);
		free(f);
		return -1;
	}
	/* fio writes a job file's [global] options at the top level. */
	if (json_object_size(f->global_opts))
		json_object_set(c->root, "global options", f->global_opts);
	json_decref(f->global_opts);
	for (int i = 0; i < f->njobs && !bench_stop; i++) {
		struct fio_section *s = &f->jobs[i];
		const char *t = *s->target ? s->target : c->npos ? c->pos[0] : "flash";
		s->spec.target = target_resolve(t, 0, label, sizeof(label));
		json_t *job = run_io_job(c, &s->spec, label);
		if (!job)
			continue;
		/* fio's jobname is the section's; pmwal's own name stays. */
		json_t *pm = json_object_get(job, "pmwal");
		json_object_set(pm, "workload", json_object_get(job, "jobname"));
		json_object_set_new(pm, "job_file", json_string(path));
		snprintf(name, sizeof(name), "%s", s->name);
		json_object_set_new(job, "jobname", json_string(name));
		json_object_set_new(json_object_get(job, "job options"), "name",
				    json_string(name));
	}
	free(f);
	return 0;
}
