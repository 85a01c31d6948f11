// SPDX-License-Identifier: MIT
/*
 * ship_primary.c - the writing half of a log-shipping pair (ship_standby.c is
 * the other half): a primary that appends records to its log and acknowledges
 * each one only once it is durable. A standby on the same host follows the
 * log as it grows and takes it over when this process dies.
 *
 *   ship_primary LOG [--create SIZE] [--count N] [--rate R]
 *
 * Records are the lines of stdin (empty lines skipped), or with --count N a
 * generated stream "primary 1" .. "primary N", R records a second (--rate 0,
 * the default: as fast as the log acknowledges them). Each acknowledgement is
 * one line, "acked LSN 17: primary 17", printed after pmwal_append() returned:
 * whatever this line names survives the death of the process.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmwal.h>

static void usage(void)
{
	fprintf(stderr,
		"usage: ship_primary LOG [--create SIZE] [--count N] [--rate R]\n"
		"  --create SIZE  make a new log of SIZE bytes (K, M, G suffixes)\n"
		"  --count N      append N generated records instead of stdin's "
		"lines\n"
		"  --rate R       at most R records a second (0: unpaced)\n");
}

/* A decimal number with an optional K, M or G suffix; -1 if it is not one. */
static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);

	if (errno)
		return -1;
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* Sleeps until the next record is due: R a second, on a fixed schedule. */
static void pace(struct timespec *due, uint64_t rate)
{
	if (!rate)
		return;
	due->tv_nsec += (long)(1000000000u / rate);
	due->tv_sec += due->tv_nsec / 1000000000;
	due->tv_nsec %= 1000000000;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, due, NULL);
}

/* The next record: stdin's next non-empty line, or "primary I". 0 at the end. */
static size_t next_record(uint64_t count, uint64_t i, char **line, size_t *cap)
{
	if (count) {
		if (i > count)
			return 0;
		if (*cap < 32) {
			free(*line);
			*cap = 32;
			*line = malloc(*cap);
			if (!*line)
				return 0;
		}
		return (size_t)snprintf(*line, *cap, "primary %llu",
					(unsigned long long)i);
	}
	for (;;) {
		ssize_t n = getline(line, cap, stdin);

		if (n < 0)
			return 0;
		if (n && (*line)[n - 1] == '\n')
			(*line)[--n] = 0;
		if (n)
			return (size_t)n;
	}
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {{"create", required_argument, NULL, 'c'},
					   {"count", required_argument, NULL, 'n'},
					   {"rate", required_argument, NULL, 'r'},
					   {"help", no_argument, NULL, 'h'},
					   {0}};
	char err[512] = "";
	struct pmwal_options o = {.errmsg_buf = err, .errmsg_len = sizeof(err)};
	uint64_t count = 0, rate = 0;
	int opt;

	while ((opt = getopt_long(argc, argv, "c:n:r:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'c':
			/* EXCL: --create never formats over an existing log. */
			o.flags = PMWAL_OPEN_CREATE | PMWAL_OPEN_EXCL;
			if (parse_size(optarg, &o.capacity_bytes) || !o.capacity_bytes) {
				usage();
				return 2;
			}
			break;
		case 'n':
			if (parse_size(optarg, &count) || !count) {
				usage();
				return 2;
			}
			break;
		case 'r':
			if (parse_size(optarg, &rate) || rate > 1000000000u) {
				usage();
				return 2;
			}
			break;
		default:
			usage();
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind != argc - 1) {
		usage();
		return 2;
	}
	o.target = argv[optind];
	/* Each line goes out whole as it is printed: a SIGKILL loses none. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	struct pmwal *w;
	int rc = pmwal_open(&o, &w);

	if (rc) {
		/* -EBUSY: another primary writes this log; err names its pid. */
		fprintf(stderr, "ship_primary: %s: %s\n", pmwal_strerror(rc), err);
		return 1;
	}
	struct pmwal_info info;

	pmwal_stat(w, &info);
	printf("primary: writing %s (pid %ld) from LSN %llu\n", o.target, (long)getpid(),
	       (unsigned long long)info.next_lsn);

	struct timespec due;
	char *line = NULL;
	size_t cap = 0, len;

	clock_gettime(CLOCK_MONOTONIC, &due);
	for (uint64_t i = 1; (len = next_record(count, i, &line, &cap)); i++) {
		uint64_t lsn;

		/* Returns once the record is durable: only then is it acked. */
		rc = pmwal_append(w, line, len, &lsn);
		if (rc) {
			/* PMWAL_EFULL: this example never releases records; a
			 * database checkpoints and calls pmwal_release(). */
			fprintf(stderr, "ship_primary: %s: %s\n", pmwal_strerror(rc),
				pmwal_errmsg(w));
			break;
		}
		printf("acked LSN %llu: %.*s\n", (unsigned long long)lsn, (int)len, line);
		pace(&due, rate);
	}
	free(line);
	/* The handle is gone after close: its error has only the code. */
	int close_rc = pmwal_close(w);

	if (close_rc)
		fprintf(stderr, "ship_primary: close: %s\n", pmwal_strerror(close_rc));
	return rc || close_rc ? 1 : 0;
}
