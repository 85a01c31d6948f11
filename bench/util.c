// SPDX-License-Identifier: MIT
/*
 * util.c - clocks, the SIGINT stop flag, fio-style value parsers, the rate
 * limiter and the progress line.
 *
 * Values follow fio's conventions so a command line reads the same in both
 * tools: sizes in base 1024 (4k, 1M, 2g, 4KiB), durations with a unit
 * (10s, 500ms, 2m; a bare number is seconds), rates as sizes per second or a
 * percentage ("20%") of a maximum measured first.
 */
#include "bench.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t bench_stop;

static void on_sigint(int sig)
{
	(void)sig;
	bench_stop = 1;
}

void bench_install_sigint(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The clock for every timestamp a result holds. Like fio's default
 * (clocksource=cpu where the TSC is reliable), it reads the time stamp
 * counter where the CPU's TSC is invariant and the kernel itself keeps time
 * with it, scaled by a factor calibrated against CLOCK_MONOTONIC; elsewhere
 * it is clock_gettime(CLOCK_MONOTONIC). A timestamp is taken two or three
 * times per append, so its cost shows in a microsecond-long append.
 */
static struct {
	int kind; /* 0 unset, 1 monotonic, 2 tsc */
	uint64_t tsc0, ns0;
	uint64_t mult; /* ns per tick << 32 */
} clk;

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>

static bool tsc_usable(void)
{
	unsigned a, b, c, d;
	char src[32] = "";
	FILE *f;

	if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
		return false; /* no invariant TSC */
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  "r");
	if (!f)
		return false;
	if (!fgets(src, sizeof(src), f))
		src[0] = 0;
	fclose(f);
	return strncmp(src, "tsc", 3) == 0;
}

/* lfence; rdtsc, as the kernel's own clock reads it: a bare rdtsc may run
 * before earlier instructions finish, and time a barrier as free. */
static uint64_t tsc_ordered(void)
{
	_mm_lfence();
	return __rdtsc();
}

static void clock_init(void)
{
	if (getenv("PMWAL_BENCH_CLOCK") &&
	    !strcmp(getenv("PMWAL_BENCH_CLOCK"), "monotonic")) {
		clk.kind = 1;
		return;
	}
	if (!tsc_usable()) {
		clk.kind = 1;
		return;
	}
	uint64_t n0 = mono_ns(), t0 = tsc_ordered();

	sleep_ns(20 * 1000000u);
	uint64_t n1 = mono_ns(), t1 = tsc_ordered();

	if (t1 <= t0 || n1 <= n0) {
		clk.kind = 1;
		return;
	}
	clk.mult = (uint64_t)(((unsigned __int128)(n1 - n0) << 32) / (t1 - t0));
	clk.tsc0 = t1;
	clk.ns0 = n1;
	clk.kind = 2;
}

uint64_t now_ns(void)
{
	if (clk.kind == 2)
		return clk.ns0 +
		       (uint64_t)(((unsigned __int128)(tsc_ordered() - clk.tsc0) *
				   clk.mult) >>
				  32);
	if (clk.kind == 0)
		clock_init();
	return clk.kind == 2 ? now_ns() : mono_ns();
}
#else
uint64_t now_ns(void)
{
	clk.kind = 1;
	return mono_ns();
}
#endif

const char *bench_clock_name(void)
{
	if (clk.kind == 0)
		(void)now_ns();
	return clk.kind == 2 ? "tsc (calibrated against CLOCK_MONOTONIC)"
			     : "clock_gettime(CLOCK_MONOTONIC)";
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
			      .tv_nsec = (long)(ns % 1000000000u)};

	while (nanosleep(&ts, &ts) && errno == EINTR && !bench_stop)
		;
}

/* xorshift64*: cheap and good enough to spread offsets. */
uint64_t rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * UINT64_C(2685821657736338717);
}

/* Multiplier for a size suffix (k, KiB, KB all mean 1024, as fio). */
static int size_suffix(const char *p, uint64_t *mult)
{
	static const char units[] = "kmgtp";
	const char *u;

	*mult = 1;
	if (!*p || !strcasecmp(p, "b"))
		return 0;
	u = strchr(units, tolower((unsigned char)*p));
	if (!u)
		return -1;
	for (const char *q = units; q <= u; q++)
		*mult *= 1024;
	p++;
	if (!*p || !strcasecmp(p, "b") || !strcasecmp(p, "ib"))
		return 0;
	return -1;
}

int parse_size(const char *s, uint64_t *bytes, char *err, size_t errlen)
{
	char *end;
	uint64_t mult;

	if (!s || !*s || *s == '-')
		goto bad;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0 || size_suffix(end, &mult))
		goto bad;
	double total = v * (double)mult;
	if (total >= 1.8e19)
		goto bad;
	*bytes = (uint64_t)llround(total);
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not a size (examples: 4k, 128KiB, 1M, 2g)",
		 s ? s : "");
	return -1;
}

int parse_duration(const char *s, uint64_t *ns, char *err, size_t errlen)
{
	char *end;
	double mult = 1e9;

	if (!s || !*s || *s == '-')
		goto bad;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		goto bad;
	if (!*end || !strcmp(end, "s"))
		mult = 1e9;
	else if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		mult = 60e9;
	else if (!strcmp(end, "h"))
		mult = 3600e9;
	else
		goto bad;
	if (v * mult > 1e18)
		goto bad;
	*ns = (uint64_t)llround(v * mult);
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not a duration (examples: 10s, 500ms, 2m)",
		 s ? s : "");
	return -1;
}

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err,
	       size_t errlen)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		goto bad;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	snprintf(err, errlen, "'%s' is not a whole number in %" PRIu64 "..%" PRIu64,
		 s ? s : "", min, max);
	return -1;
}

int parse_rate(const char *s, struct rate_cap *cap, char *err, size_t errlen)
{
	size_t n = s ? strlen(s) : 0;

	memset(cap, 0, sizeof(*cap));
	if (n > 1 && s[n - 1] == '%') {
		char *end;
		double pct = strtod(s, &end);
		if (end != s + n - 1 || !(pct > 0 && pct <= 100)) {
			snprintf(err, errlen, "'%s': a percentage must be in (0, 100]",
				 s);
			return -1;
		}
		cap->pct = pct;
		return 0;
	}
	/* fio accepts "500m" or "500m/s"; so do we. */
	char tmp[64];
	snprintf(tmp, sizeof(tmp), "%s", s ? s : "");
	char *slash = strstr(tmp, "/s");
	if (slash && !slash[2])
		*slash = 0;
	if (parse_size(tmp, &cap->bytes_per_s, err, errlen) || !cap->bytes_per_s) {
		snprintf(err, errlen,
			 "'%s' is not a rate (examples: 500M for 500 MiB/s, 20%% of the "
			 "measured maximum)",
			 s ? s : "");
		return -1;
	}
	return 0;
}

static const char *const rw_names[] = {
    [RW_READ] = "read",		  [RW_WRITE] = "write",	  [RW_RANDREAD] = "randread",
    [RW_RANDWRITE] = "randwrite", [RW_RANDRW] = "randrw", [RW_RW] = "rw",
};

int parse_rw(const char *s, int *rw, char *err, size_t errlen)
{
	for (int i = 0; i < (int)(sizeof(rw_names) / sizeof(rw_names[0])); i++) {
		if (s && !strcmp(s, rw_names[i])) {
			*rw = i;
			return 0;
		}
	}
	if (s && !strcmp(s, "readwrite")) {
		*rw = RW_RW;
		return 0;
	}
	snprintf(err, errlen,
		 "'%s' is not a workload (read, write, randread, randwrite, randrw, rw)",
		 s ? s : "");
	return -1;
}

const char *rw_name(int rw)
{
	return rw >= 0 && rw <= RW_RW ? rw_names[rw] : "?";
}

bool rw_is_random(int rw)
{
	return rw == RW_RANDREAD || rw == RW_RANDWRITE || rw == RW_RANDRW;
}

bool rw_has_dir(int rw, int dir)
{
	if (rw == RW_RANDRW || rw == RW_RW)
		return true;
	if (dir == DIR_READ)
		return rw == RW_READ || rw == RW_RANDREAD;
	return rw == RW_WRITE || rw == RW_RANDWRITE;
}

static int list_item(const char *s, bool sizes, uint64_t *v, char *err, size_t errlen)
{
	if (sizes)
		return parse_size(s, v, err, errlen);
	return parse_uint(s, 1, UINT32_MAX, v, err, errlen);
}

static int list_push(uint64_t *vals, int max, int *count, uint64_t v, char *err,
		     size_t errlen)
{
	if (*count >= max) {
		snprintf(err, errlen, "a sweep holds at most %d points", max);
		return -1;
	}
	vals[(*count)++] = v;
	return 0;
}

int parse_list(const char *s, bool sizes, uint64_t *vals, int max, int *count, char *err,
	       size_t errlen)
{
	char buf[512], *save = NULL;

	*count = 0;
	if (!s || !*s || strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "an empty or overlong list");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *dots = strstr(tok, "..");
		uint64_t a, b;
		if (!dots) {
			if (list_item(tok, sizes, &a, err, errlen) ||
			    list_push(vals, max, count, a, err, errlen))
				return -1;
			continue;
		}
		*dots = 0;
		if (list_item(tok, sizes, &a, err, errlen) ||
		    list_item(dots + 2, sizes, &b, err, errlen))
			return -1;
		if (!a || a > b) {
			snprintf(err, errlen, "range %s..%s must go up from above 0", tok,
				 dots + 2);
			return -1;
		}
		for (uint64_t v = a; v <= b; v *= 2) {
			if (*count && vals[*count - 1] == v)
				continue;
			if (list_push(vals, max, count, v, err, errlen))
				return -1;
		}
	}
	return 0;
}

const char *file_kind(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISLNK(m)  ? "a symbolic link"
			     : "not a regular file";
}

int parent_dir_writable(const char *path, char *dir, size_t len)
{
	struct stat st;

	snprintf(dir, len, "%s", path);
	char *slash = strrchr(dir, '/');

	if (!slash)
		snprintf(dir, len, ".");
	else
		slash[slash == dir] = 0;
	if (stat(dir, &st))
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return -1;
	}
	return access(dir, W_OK);
}

void fmt_bytes(char *buf, size_t len, double bytes)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f%s" : "%.0f%s", bytes, unit[u]);
}

void fmt_ns(char *buf, size_t len, double ns)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.2fms", ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", ns / 1e9);
}

void limiter_init(struct limiter *l, uint64_t bytes_per_s)
{
	l->ns_per_byte = bytes_per_s ? 1e9 / (double)bytes_per_s : 0;
	l->next_ns = 0;
}

/* Bursts are bounded: idle time earns at most 10 ms of credit. */
#define LIMITER_BURST_NS 10000000u

uint64_t limiter_take(struct limiter *l, uint64_t now, uint64_t bytes)
{
	if (l->ns_per_byte == 0)
		return 0;
	if (l->next_ns + LIMITER_BURST_NS < now)
		l->next_ns = now - LIMITER_BURST_NS;
	if (l->next_ns > now)
		return l->next_ns - now;
	l->next_ns += (uint64_t)(l->ns_per_byte * (double)bytes);
	return 0;
}

uint64_t progress_suite_left_ns;
uint64_t progress_ops, progress_bytes;
char progress_job[96];
static char progress_phase[200];
static uint64_t progress_total_ns;
static bool progress_tty = false;
/* The live rate: over the last second or more of updates. */
static uint64_t rate_ops0, rate_bytes0, rate_ns0;
static double rate_ops_s, rate_bytes_s;

void progress_begin(const char *phase, uint64_t total_ns)
{
	progress_tty = isatty(STDERR_FILENO);
	rate_ops0 = __atomic_load_n(&progress_ops, __ATOMIC_RELAXED);
	rate_bytes0 = __atomic_load_n(&progress_bytes, __ATOMIC_RELAXED);
	rate_ns0 = now_ns();
	rate_ops_s = rate_bytes_s = 0;
	snprintf(progress_phase, sizeof(progress_phase), "%s%s%s", phase,
		 *progress_job ? ": " : "", progress_job);
	progress_total_ns = total_ns;
	progress_update(0);
}

void progress_update(uint64_t elapsed_ns)
{
	if (!progress_tty)
		return;
	double left =
	    progress_total_ns > elapsed_ns ? (progress_total_ns - elapsed_ns) / 1e9 : 0;
	uint64_t now = now_ns();
	if (now - rate_ns0 >= 1000000000ull) {
		uint64_t ops = __atomic_load_n(&progress_ops, __ATOMIC_RELAXED),
			 bytes = __atomic_load_n(&progress_bytes, __ATOMIC_RELAXED);
		rate_ops_s = (double)(ops - rate_ops0) * 1e9 / (double)(now - rate_ns0);
		rate_bytes_s = (double)(bytes - rate_bytes0) * 1e9 / (double)(now - rate_ns0);
		rate_ops0 = ops;
		rate_bytes0 = bytes;
		rate_ns0 = now;
	}
	fprintf(stderr, "\r\033[K[%s] %.1fs elapsed, %.0fs left", progress_phase,
		elapsed_ns / 1e9, left);
	if (rate_ops_s > 0) {
		char bw[16];
		fmt_bytes(bw, sizeof(bw), rate_bytes_s);
		fprintf(stderr, ", %.0f ops/s %s/s", rate_ops_s, bw);
	}
	if (progress_suite_left_ns)
		fprintf(stderr, " (suite ~%.0fs left)",
			left + progress_suite_left_ns / 1e9);
	fflush(stderr);
}

void progress_fraction(uint64_t done, uint64_t total)
{
	if (!progress_tty || !total)
		return;
	fprintf(stderr, "\r\033[K[%s] %.0f%% of %.0f MiB", progress_phase,
		100.0 * done / total, total / 1048576.0);
	fflush(stderr);
}

void progress_end(void)
{
	if (progress_tty)
		fprintf(stderr, "\r\033[K");
	progress_tty = false;
}
