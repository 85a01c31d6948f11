// SPDX-License-Identifier: MIT
/* consumer - links the installed libpmwal and round-trips one record. */
#include <stdio.h>
#include <string.h>

#include <pmwal.h>

int main(int argc, char **argv)
{
	char err[512] = "";
	struct pmwal_options o = { .target = argv[1], .capacity_bytes = 1 << 20,
				   .flags = PMWAL_OPEN_CREATE, .errmsg_buf = err,
				   .errmsg_len = sizeof(err) };
	struct pmwal *w;
	uint64_t lsn;

	if (argc != 2 || pmwal_open(&o, &w)) {
		fprintf(stderr, "consumer: open failed: %s\n", err);
		return 1;
	}
	if (pmwal_append(w, "hello", 5, &lsn) || lsn != 1 || pmwal_durable_lsn(w) != 1) {
		fprintf(stderr, "consumer: append failed: %s\n", pmwal_errmsg(w));
		return 1;
	}
	pmwal_close(w);
	printf("consumer: pmwal %s appended LSN %llu\n", pmwal_version(),
	       (unsigned long long)lsn);
	return 0;
}
