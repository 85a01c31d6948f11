/* SPDX-License-Identifier: MIT */
/*
 * ref_parse.h - a second, deliberately plain reader of the pmwal format,
 * written from the specification at the top of wal/format.c and sharing no
 * code with wal/ (its own byte loads, its own checks, libxxhash directly).
 * The fuzz targets hold pmwal's recovery to what this reader finds.
 */
#ifndef PMWAL_REF_PARSE_H
#define PMWAL_REF_PARSE_H

#include <stddef.h>
#include <stdint.h>

enum ref_status {
	REF_OK = 0,	   /* a superblock was picked; verdict says how the log ends */
	REF_NOT_A_LOG,	   /* no valid copy, or the target is too small for it */
	REF_SB_CORRUPT,	   /* two valid copies that contradict each other */
};

/* The superblock fields the walk uses. */
struct ref_sb {
	uint64_t log_id, sb_seq, capacity, head_seq, head_lsn, end_seq, end_lsn;
	uint32_t epoch, record_max, group_max, flags;
};

struct ref_record {
	uint64_t lsn;
	uint64_t len;
	uint64_t hash;	    /* XXH3_64bits of the record's bytes */
	uint64_t first_seq; /* block holding its length */
	uint64_t last_seq;  /* block holding its last byte */
};

struct ref_result {
	int status;	   /* enum ref_status */
	struct ref_sb sb;  /* REF_OK: the copy picked */
	int verdict;	   /* REF_OK: PMWAL_CLEAN, PMWAL_TORN_TAIL or PMWAL_CORRUPT */
	uint64_t end_seq;  /* seq of the block the walk stopped at */
	struct ref_record *rec; /* records of complete groups, in LSN order */
	size_t nrec;
	char why[160]; /* what ended the walk, for people */
};

/* Parses the image (superblocks at 0; @size bytes). Returns 0, or -ENOMEM. */
int ref_parse(const uint8_t *img, size_t size, struct ref_result *r);
void ref_free(struct ref_result *r);

#endif
