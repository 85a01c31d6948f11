// SPDX-License-Identifier: MIT
/*
 * svg.c - the two plot kinds the HTML report needs, written as inline SVG so
 * the page is one self-contained file (no scripts, no fonts, no network):
 * line charts (time series, sweeps, latency distributions; either axis may be
 * logarithmic) and grouped bar charts (PMR versus flash side by side).
 */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define W  560
#define H  300
#define ML 70
#define MR 16
#define MT 28
#define MB 72

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
		else
			fputc(*s, f);
	}
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
	return from + (x - lo) / (hi - lo) * (to - from);
}

static void ax_fit(struct axis *a, const struct curve *c, int nc, bool y)
{
	a->lo = INFINITY;
	a->hi = -INFINITY;
	for (int i = 0; i < nc; i++)
		for (int k = 0; k < c[i].n; k++) {
			double v = y ? c[i].y[k] : c[i].x[k];
			if (a->log && v <= 0)
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
}

/* A round step giving about four intervals: 1, 2 or 5 times a power of ten. */
static double nice_step(double range)
{
	double raw = range / 4, mag = pow(10, floor(log10(raw))), f = raw / mag;

	return mag * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10);
}

static void tick(FILE *f, const struct axis *a, bool y, double v)
{
	char lab[32];

	svg_num(lab, sizeof(lab), v);
	if (y) {
		double p = ax_pos(a, v, H - MB, MT);
		fprintf(
		    f,
		    "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>"
		    "<text x='%d' y='%.1f' text-anchor='end' font-size='11'>%s</text>\n",
		    ML, W - MR, p, p, ML - 4, p + 4, lab);
	} else {
		double p = ax_pos(a, v, ML, W - MR);
		fprintf(f,
			"<text x='%.1f' y='%d' text-anchor='middle' "
			"font-size='11'>%s</text>\n",
			p, H - MB + 14, lab);
	}
}

static void ticks(FILE *f, const struct axis *a, bool y)
{
	if (a->log) {
		for (int i = 0; i <= 4; i++)
			tick(f, a, y,
			     pow(10,
				 log10(a->lo) + (log10(a->hi) - log10(a->lo)) * i / 4));
		return;
	}
	double step = nice_step(a->hi - a->lo);
	/* Bounded: about four steps fit between lo and hi. */
	for (double v = ceil(a->lo / step) * step; v <= a->hi + step * 1e-9; v += step)
		tick(f, a, y, v);
}

static void frame(FILE *f, const char *title, const char *xl, const char *yl)
{
	fprintf(f,
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
		"viewBox='0 0 %d %d' font-family='sans-serif'>\n<text x='%d' y='16' "
		"font-size='13' font-weight='bold'>",
		W, H, W, H, ML);
	svg_esc(f, title);
	fprintf(
	    f,
	    "</text>\n<rect x='%d' y='%d' width='%d' height='%d' fill='none' "
	    "stroke='#888'/>\n<text x='%d' y='%d' text-anchor='middle' font-size='11'>",
	    ML, MT, W - ML - MR, H - MT - MB, (ML + W - MR) / 2, H - MB + 30);
	svg_esc(f, xl);
	fprintf(f,
		"</text>\n<text transform='translate(14,%d) rotate(-90)' "
		"text-anchor='middle' font-size='11'>",
		(MT + H - MB) / 2);
	svg_esc(f, yl);
	fputs("</text>\n", f);
}

/* Up to 8 entries in rows of three under the x axis label. */
static void legend(FILE *f, const char *const *names, int n)
{
	for (int i = 0; i < n && i < 8; i++) {
		int x = 8 + (i % 3) * 184, y = H - 28 + (i / 3) * 11;
		fprintf(f,
			"<rect x='%d' y='%d' width='9' height='9' fill='%s'/>"
			"<text x='%d' y='%d' font-size='9.5'>",
			x, y - 8, palette[i % NPAL], x + 12, y);
		svg_esc(f, names[i]);
		fputs("</text>\n", f);
	}
}

static void xticks(FILE *f, const struct axis *a, const struct svg_ticks *xt)
{
	for (int i = 0; i < xt->n; i++) {
		char lab[32];
		if (xt->at[i] < a->lo || xt->at[i] > a->hi)
			continue;
		svg_num(lab, sizeof(lab), xt->at[i]);
		fprintf(f,
			"<text x='%.1f' y='%d' text-anchor='middle' "
			"font-size='11'>%s</text>\n",
			ax_pos(a, xt->at[i], ML, W - MR), H - MB + 14,
			xt->label ? xt->label[i] : lab);
	}
}

void svg_lines(FILE *f, const char *title, const struct curve *c, int nc, bool xlog,
	       bool ylog, const char *xl, const char *yl, double mark_x,
	       const struct svg_ticks *xt)
{
	struct axis ax = {.log = xlog}, ay = {.log = ylog};
	const char *names[8];

	ax_fit(&ax, c, nc, false);
	ax_fit(&ay, c, nc, true);
	frame(f, title, xl, yl);
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
			if (!(ylog && c[i].y[k] <= 0))
				fprintf(f, "%.1f,%.1f ",
					ax_pos(&ax, c[i].x[k], ML, W - MR),
					ax_pos(&ay, c[i].y[k], H - MB, MT));
		fputs("'/>\n", f);
		if (c[i].n < 40)
			for (int k = 0; k < c[i].n; k++)
				if (!(ylog && c[i].y[k] <= 0))
					fprintf(f,
						"<circle r='2.5' fill='%s' cx='%.1f' "
						"cy='%.1f'/>",
						palette[i % NPAL],
						ax_pos(&ax, c[i].x[k], ML, W - MR),
						ax_pos(&ay, c[i].y[k], H - MB, MT));
		if (i < 8)
			names[i] = c[i].name;
	}
	if (mark_x == mark_x) {
		double p = ax_pos(&ax, mark_x, ML, W - MR);
		fprintf(f,
			"<line x1='%.1f' x2='%.1f' y1='%d' y2='%d' stroke='#000' "
			"stroke-dasharray='4 3'/><text x='%.1f' y='%d' "
			"font-size='10'>cliff</text>\n",
			p, p, MT, H - MB, p + 3, MT + 12);
	}
	legend(f, names, nc < 8 ? nc : 8);
	fputs("</svg>\n", f);
}

void svg_bars(FILE *f, const char *title, const char *const *cats, int ncat,
	      const char *const *sers, int nser, const double *vals, const char *yl)
{
	struct axis ay = {.log = false, .lo = 0, .hi = 0};

	for (int i = 0; i < ncat * nser; i++)
		ay.hi = vals[i] > ay.hi ? vals[i] : ay.hi;
	if (ay.hi <= 0)
		ay.hi = 1;
	frame(f, title, "", yl);
	ticks(f, &ay, true);
	double gw = (double)(W - ML - MR) / (ncat ? ncat : 1),
	       bw = gw * 0.8 / (nser ? nser : 1);
	for (int c = 0; c < ncat; c++) {
		for (int s = 0; s < nser; s++) {
			double v = vals[c * nser + s], y = ax_pos(&ay, v, H - MB, MT);
			double x = ML + c * gw + gw * 0.1 + s * bw;
			char lab[32];
			svg_num(lab, sizeof(lab), v);
			fprintf(f,
				"<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' "
				"fill='%s'>"
				"<title>%s</title></rect>\n",
				x, y, bw - 1, H - MB - y, palette[s % NPAL], lab);
		}
		fprintf(f, "<text x='%.1f' y='%d' text-anchor='middle' font-size='9'>",
			ML + c * gw + gw / 2, H - MB + 12 + (c % 2) * 10);
		svg_esc(f, cats[c]);
		fputs("</text>\n", f);
	}
	legend(f, sers, nser < 8 ? nser : 8);
	fputs("</svg>\n", f);
}
