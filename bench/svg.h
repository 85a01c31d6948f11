/* SPDX-License-Identifier: MIT */
/*
 * svg.h - inline SVG plots for the HTML report (svg.c).
 */
#ifndef PMWAL_BENCH_SVG_H
#define PMWAL_BENCH_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Curves per chart (and legend lines); the report keeps to it. */
#define SVG_CURVES_MAX 8

struct curve {
	const char *name;
	int n;
	const double *x;
	const double *y;
};

/* Explicit x ticks (values and labels); NULL labels: the value. */
struct svg_ticks {
	int n;
	const double *at;
	const char *const *label;
};

void svg_esc(FILE *f, const char *s);
void svg_num(char *buf, size_t len, double v);
/* A ratio as "x0.0123", "x85.9", or below 1/100 "x1/30.7k". */
void svg_ratio(char *buf, size_t len, double r);
/* @mark_x: a dashed vertical marker (the cliff), NAN for none. */
void svg_lines(FILE *f, const char *title, const struct curve *c, int nc, bool xlog,
	       bool ylog, const char *xl, const char *yl, double mark_x,
	       const struct svg_ticks *xt);
/* Horizontal bars on a log axis, one group per category, one bar per series,
 * each labelled with its value and its ratio to the category's first series
 * (0: not measured, "n/a"). @vals: ncat x nser, row-major. */
void svg_bars(FILE *f, const char *title, const char *const *cats, int ncat,
	      const char *const *sers, int nser, const double *vals, const char *yl);

#endif
