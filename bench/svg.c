// SPDX-License-Identifier: MIT
/*
 * svg.c - the two plot kinds the HTML report needs, written as inline SVG so
 * the page is one self-contained file (no scripts, no fonts, no network):
 * line charts (time series, sweeps, latency distributions; either axis may be
 * logarithmic) and horizontal bar charts on a logarithmic axis with each
 * bar's value and its ratio to the first target written beside it (PMR
 * versus flash side by side, where one may be 200 times the other).
 *
 * Axes end on round values and ticks are round (1, 2 or 5 times a power of
 * ten); legends are one entry per line below the plot, so none overlaps
 * however long the names are (a chart grows by a line per entry).
 */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define W	     560
#define ML	     70
#define MR	     16
#define MT	     28
#define PH	     200 /* plot height */
#define PB	     (MT + PH)
#define LEGEND_LINE  13
#define LEGEND_CHARS 92 /* at font-size 10 in W: longer names are cut */

/* Horizontal bars: category label line, then one bar per series. */
#define BW_W	  640
#define BAR_H	  12
#define BAR_GAP	  2
#define CAT_LABEL 15
#define CAT_GAP	  6
#define BAR_ML	  16
#define BAR_MR	  150 /* room for "123.4k  x0.0123" after the longest bar */

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
				      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
#define NPAL (sizeof(palette) / sizeof(palette[0]))

void svg_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if (*s == '\'')
			fputs("&#39;", f);
		else
			fputc(*s, f);
	}
}

/* At most @max characters of @s, an ellipsis where cut. */
static void esc_cut(FILE *f, const char *s, size_t max)
{
	char buf[256];

	if (!s || strlen(s) <= max || max >= sizeof(buf)) {
		svg_esc(f, s);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*s", (int)max - 1, s);
	svg_esc(f, buf);
	fputs("&#8230;", f);
}

/* 1234567 -> "1.23M": short tick labels in any unit. */
void svg_num(char *buf, size_t len, double v)
{
	static const char *const sfx[] = {"", "k", "M", "G", "T"};
	int u = 0;
	double a = fabs(v);

	while (a >= 1000 && u < 4) {
		a /= 1000;
		v /= 1000;
		u++;
	}
	snprintf(buf, len, a >= 100 || a == floor(a) ? "%.0f%s" : "%.3g%s", v, sfx[u]);
}

struct axis {
	double lo, hi;
	bool log;
};

static double ax_pos(const struct axis *a, double v, double from, double to)
{
	double lo = a->log ? log10(a->lo) : a->lo, hi = a->log ? log10(a->hi) : a->hi;
	double x = a->log ? log10(v > 0 ? v : a->lo) : v;

	if (hi <= lo)
		return (from + to) / 2;
	if (x < lo)
		x = lo;
	if (x > hi)
		x = hi;
	return from + (x - lo) / (hi - lo) * (to - from);
}

/* The round value (1, 2 or 5 times a power of ten) at or below / above @v. */
static double round_down(double v)
{
	double mag = pow(10, floor(log10(v))), m = v / mag;

	return mag * (m >= 5 ? 5 : m >= 2 ? 2 : 1);
}

static double round_up(double v)
{
	double mag = pow(10, floor(log10(v))), m = v / mag;

	return mag * (m <= 1 + 1e-9 ? 1 : m <= 2 + 1e-9 ? 2 : m <= 5 + 1e-9 ? 5 : 10);
}

/* A round step giving about four intervals: 1, 2 or 5 times a power of ten. */
static double nice_step(double range)
{
	double raw = range / 4, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return mag * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10);
}

/* Widen [lo, hi] to round ends so the axis is labelled where it ends. */
static void ax_round(struct axis *a)
{
	if (a->log) {
		a->lo = round_down(a->lo);
		a->hi = round_up(a->hi);
		if (a->hi <= a->lo)
			a->hi = a->lo * 10;
		return;
	}
	double step = nice_step(a->hi - a->lo);
	a->lo = floor(a->lo / step + 1e-9) * step;
	a->hi = ceil(a->hi / step - 1e-9) * step;
}

static void ax_fit(struct axis *a, const struct curve *c, int nc, bool y)
{
	a->lo = INFINITY;
	a->hi = -INFINITY;
	for (int i = 0; i < nc; i++)
		for (int k = 0; k < c[i].n; k++) {
			double v = y ? c[i].y[k] : c[i].x[k];
			if ((a->log && v <= 0) || !isfinite(v))
				continue;
			a->lo = v < a->lo ? v : a->lo;
			a->hi = v > a->hi ? v : a->hi;
		}
	if (!isfinite(a->lo)) {
		a->lo = a->log ? 1 : 0;
		a->hi = a->log ? 10 : 1;
	}
	if (!a->log && y && a->lo > 0)
		a->lo = 0;
	if (a->hi <= a->lo)
		a->hi = a->log ? a->lo * 10 : a->lo + 1;
	/* Time axes end where the data ends; values get round ends. */
	if (y || a->log)
		ax_round(a);
}

/*
 * Round tick values inside the axis, at most @max of them: on a log axis
 * powers of ten over wide ranges, 1-2-5 steps over narrow ones.
 */
static int tick_values(const struct axis *a, double *out, int max)
{
	int n = 0;

	if (!a->log) {
		double step = nice_step(a->hi - a->lo);
		/* Bounded: about four steps fit between lo and hi. */
		for (double v = ceil(a->lo / step - 1e-9) * step;
		     v <= a->hi + step * 1e-9 && n < max; v += step)
			out[n++] = fabs(v) < step * 1e-9 ? 0 : v;
		return n;
	}
	double decades = log10(a->hi / a->lo);
	static const double m125[] = {1, 2, 5};
	int every = decades > 2.5 ? (int)ceil(decades / 6) : 0;
	for (int e = (int)floor(log10(a->lo)); e <= (int)ceil(log10(a->hi)) && n < max;
	     e++) {
		for (int k = 0; k < 3 && n < max; k++) {
			if (every && (k || e % every))
				continue;
			double v = m125[k] * pow(10, e);
			if (v >= a->lo * (1 - 1e-9) && v <= a->hi * (1 + 1e-9))
				out[n++] = v;
		}
	}
	return n;
}

static void ticks(FILE *f, const struct axis *a, bool y)
{
	double v[32];
	int n = tick_values(a, v, 32);

	for (int i = 0; i < n; i++) {
		char lab[32];
		svg_num(lab, sizeof(lab), v[i]);
		if (y) {
			double p = ax_pos(a, v[i], PB, MT);
			fprintf(f,
				"<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' "
				"stroke='#ddd'/><text x='%d' y='%.1f' "
				"text-anchor='end' font-size='11'>%s</text>\n",
				ML, W - MR, p, p, ML - 4, p + 4, lab);
		} else {
			double p = ax_pos(a, v[i], ML, W - MR);
			fprintf(f,
				"<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' "
				"stroke='#eee'/><text x='%.1f' y='%d' "
				"text-anchor='middle' font-size='11'>%s</text>\n",
				p, p, MT, PB, p, PB + 14, lab);
		}
	}
}

static int chart_height(int nlegend)
{
	return PB + 40 + nlegend * LEGEND_LINE + 4;
}

static void frame(FILE *f, const char *title, const char *xl, const char *yl, int nlegend)
{
	int h = chart_height(nlegend);

	fprintf(f,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
		"viewBox='0 0 %d %d' font-family='sans-serif'>\n<text x='%d' y='16' "
		"font-size='13' font-weight='bold'>",
		W, h, W, h, 8);
	esc_cut(f, title, 78);
	fprintf(
	    f,
	    "</text>\n<rect x='%d' y='%d' width='%d' height='%d' fill='none' "
	    "stroke='#888'/>\n<text x='%d' y='%d' text-anchor='middle' font-size='11'>",
	    ML, MT, W - ML - MR, PH, (ML + W - MR) / 2, PB + 29);
	svg_esc(f, xl);
	fprintf(f,
		"</text>\n<text transform='translate(14,%d) rotate(-90)' "
		"text-anchor='middle' font-size='11'>",
		(MT + PB) / 2);
	svg_esc(f, yl);
	fputs("</text>\n", f);
}

/* One entry per line from @y0: names never run into each other. */
static void legend(FILE *f, const char *const *names, int n, int y0)
{
	for (int i = 0; i < n; i++) {
		int y = y0 + i * LEGEND_LINE;
		fprintf(f,
			"<rect x='%d' y='%d' width='10' height='10' fill='%s'/>"
			"<text x='%d' y='%d' font-size='10'>",
			8, y - 9, palette[i % NPAL], 22, y);
		esc_cut(f, names[i], LEGEND_CHARS);
		fputs("</text>\n", f);
	}
}

static void xticks(FILE *f, const struct axis *a, const struct svg_ticks *xt)
{
	for (int i = 0; i < xt->n; i++) {
		char lab[32];
		if (xt->at[i] < a->lo * (1 - 1e-9) || xt->at[i] > a->hi * (1 + 1e-9))
			continue;
		svg_num(lab, sizeof(lab), xt->at[i]);
		double p = ax_pos(a, xt->at[i], ML, W - MR);
		fprintf(f,
			"<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='#eee'/>"
			"<text x='%.1f' y='%d' text-anchor='middle' "
			"font-size='11'>%s</text>\n",
			p, p, MT, PB, p, PB + 14, xt->label ? xt->label[i] : lab);
	}
}

void svg_lines(FILE *f, const char *title, const struct curve *c, int nc, bool xlog,
	       bool ylog, const char *xl, const char *yl, double mark_x,
	       const struct svg_ticks *xt)
{
	struct axis ax = {.log = xlog}, ay = {.log = ylog};
	const char *names[SVG_CURVES_MAX];
	int nl = 0;

	ax_fit(&ax, c, nc, false);
	if (xt) {
		/* Sweeps and percentiles: the axis spans the data exactly. */
		struct axis raw = ax;
		raw.lo = INFINITY;
		raw.hi = -INFINITY;
		for (int i = 0; i < nc; i++)
			for (int k = 0; k < c[i].n; k++) {
				double v = c[i].x[k];
				if (xlog && v <= 0)
					continue;
				raw.lo = v < raw.lo ? v : raw.lo;
				raw.hi = v > raw.hi ? v : raw.hi;
			}
		if (isfinite(raw.lo) && raw.hi > raw.lo) {
			ax.lo = raw.lo;
			ax.hi = raw.hi;
		}
	}
	ax_fit(&ay, c, nc, true);
	for (int i = 0; i < nc && nl < SVG_CURVES_MAX; i++)
		names[nl++] = c[i].name;
	frame(f, title, xl, yl, nl);
	if (xt)
		xticks(f, &ax, xt);
	else
		ticks(f, &ax, false);
	ticks(f, &ay, true);
	for (int i = 0; i < nc; i++) {
		fprintf(f,
			"<polyline fill='none' stroke-width='1.6' stroke='%s' points='",
			palette[i % NPAL]);
		for (int k = 0; k < c[i].n; k++)
			if (!(ylog && c[i].y[k] <= 0) && !(xlog && c[i].x[k] <= 0))
				fprintf(f, "%.1f,%.1f ",
					ax_pos(&ax, c[i].x[k], ML, W - MR),
					ax_pos(&ay, c[i].y[k], PB, MT));
		fputs("'/>\n", f);
		if (c[i].n < 40)
			for (int k = 0; k < c[i].n; k++)
				if (!(ylog && c[i].y[k] <= 0) &&
				    !(xlog && c[i].x[k] <= 0))
					fprintf(f,
						"<circle r='2.5' fill='%s' cx='%.1f' "
						"cy='%.1f'/>",
						palette[i % NPAL],
						ax_pos(&ax, c[i].x[k], ML, W - MR),
						ax_pos(&ay, c[i].y[k], PB, MT));
	}
	if (mark_x == mark_x) {
		double p = ax_pos(&ax, mark_x, ML, W - MR);
		fprintf(f,
			"<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='#000' "
			"stroke-width='1.5' stroke-dasharray='5 3'/><text x='%.1f' "
			"y='%d' font-size='11' font-weight='bold'>cliff</text>\n",
			p, p, MT, PB, p + 3, MT + 12);
	}
	legend(f, names, nl, PB + 48);
	fputs("</svg>\n", f);
}

/* "x0.0123", "x85.9", "x1234", and below 1/100 "x1/30.7k" (not 3.26e-05):
 * a ratio in three digits. */
void svg_ratio(char *buf, size_t len, double r)
{
	char inv[24];

	if (r > 0 && r < 0.01) {
		svg_num(inv, sizeof(inv), 1 / r);
		snprintf(buf, len, "x1/%s", inv);
		return;
	}
	snprintf(buf, len, r >= 1000 ? "x%.0f" : "x%.3g", r);
}

void svg_bars(FILE *f, const char *title, const char *const *cats, int ncat,
	      const char *const *sers, int nser, const double *vals, const char *xl)
{
	struct axis ax = {.log = true, .lo = INFINITY, .hi = -INFINITY};
	int group_h = CAT_LABEL + nser * (BAR_H + BAR_GAP) + CAT_GAP;
	int top = MT + 4, plot_h = ncat * group_h, axis_y = top + plot_h;
	int h = axis_y + 36 + nser * LEGEND_LINE + 4;
	int x0 = BAR_ML, x1 = BW_W - BAR_MR;

	for (int i = 0; i < ncat * nser; i++)
		if (vals[i] > 0 && isfinite(vals[i])) {
			ax.lo = vals[i] < ax.lo ? vals[i] : ax.lo;
			ax.hi = vals[i] > ax.hi ? vals[i] : ax.hi;
		}
	if (!isfinite(ax.lo)) {
		ax.lo = 1;
		ax.hi = 10;
	}
	/* Bars start a decade below the smallest value, so it still shows. */
	ax.lo /= 10;
	ax_round(&ax);
	fprintf(f,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
		"viewBox='0 0 %d %d' font-family='sans-serif'>\n<text x='8' y='16' "
		"font-size='13' font-weight='bold'>",
		BW_W, h, BW_W, h);
	esc_cut(f, title, 90);
	fputs("</text>\n", f);
	double tv[32];
	int nt = tick_values(&ax, tv, 32);
	for (int i = 0; i < nt; i++) {
		char lab[32];
		double p = ax_pos(&ax, tv[i], x0, x1);
		svg_num(lab, sizeof(lab), tv[i]);
		fprintf(f,
			"<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='#e4e4e4'/>"
			"<text x='%.1f' y='%d' text-anchor='middle' "
			"font-size='10'>%s</text>\n",
			p, p, top, axis_y, p, axis_y + 12, lab);
	}
	fprintf(f,
		"<line x1='%d' x2='%d' y1='%d' y2='%d' stroke='#888'/>"
		"<text x='%d' y='%d' text-anchor='middle' font-size='11'>",
		x0, x1, axis_y, axis_y, (x0 + x1) / 2, axis_y + 26);
	svg_esc(f, xl);
	fputs(" (log scale; ratios to the first target)</text>\n", f);
	for (int c = 0; c < ncat; c++) {
		int y = top + c * group_h;
		double base = vals[c * nser];
		fprintf(f, "<text x='%d' y='%d' font-size='11' font-weight='bold'>", x0,
			y + 11);
		esc_cut(f, cats[c], 100);
		fputs("</text>\n", f);
		for (int s = 0; s < nser; s++) {
			double v = vals[c * nser + s];
			int by = y + CAT_LABEL + s * (BAR_H + BAR_GAP);
			char lab[32] = "n/a", rat[32] = "";
			double end = x0;
			if (v > 0 && isfinite(v)) {
				end = ax_pos(&ax, v, x0, x1);
				svg_num(lab, sizeof(lab), v);
				if (s && base > 0)
					svg_ratio(rat, sizeof(rat), v / base);
			}
			fprintf(f,
				"<rect x='%d' y='%d' width='%.1f' height='%d' "
				"fill='%s'><title>",
				x0, by, end - x0 > 1 ? end - x0 : 1, BAR_H,
				palette[s % NPAL]);
			svg_esc(f, sers[s]);
			fprintf(f,
				": %s</title></rect><text x='%.1f' y='%d' "
				"font-size='10'>%s",
				lab, end + 4, by + BAR_H - 2, lab);
			if (*rat)
				fprintf(f, " <tspan font-weight='bold'>%s</tspan>", rat);
			fputs("</text>\n", f);
		}
	}
	legend(f, sers, nser < SVG_CURVES_MAX ? nser : SVG_CURVES_MAX, axis_y + 44);
	fputs("</svg>\n", f);
}
