/*
 * svg: the chart primitives.  Pixel positions are printed with one
 * decimal: enough for a screen, and the same on every machine for the
 * same data.  The legend sits in a column right of the plot area.
 */
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"

enum { LEGEND_W_PX = 190, MARGIN_L_PX = 70, MARGIN_T_PX = 40,
       MARGIN_B_PX = 56, MARGIN_R_PX = 70 };

/* Stable colours, far apart for the first few tenants (colour-blind safe). */
static const char *const palette[] = {
	"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9",
	"#d55e00", "#f0e442", "#999999", "#882255", "#44aa99",
	"#332288", "#117733",
};

const char *kerf_svg_colour(int i)
{
	size_t n = sizeof(palette) / sizeof(palette[0]);

	return palette[(size_t)(i < 0 ? -i : i) % n];
}

#define put(s, ...) kerf_textout_addf(&(s)->w, __VA_ARGS__)
#define put_text(s, text) kerf_textout_escaped(&(s)->w, (text))

const char *kerf_svg_fmt(char *buf, size_t size, double v, const char *unit)
{
	double a = fabs(v);
	const char *sep = unit && unit[0] && strcmp(unit, "%") ? " " : "";
	char num[48];

	if (a >= 1e6)
		snprintf(num, sizeof(num), "%.3gM", v / 1e6);
	else if (a >= 1e4)
		snprintf(num, sizeof(num), "%.3gk", v / 1e3);
	else if (a >= 100 || a == 0)
		snprintf(num, sizeof(num), "%.0f", v);
	else if (a >= 10)
		snprintf(num, sizeof(num), "%.1f", v);
	else if (a >= 0.1)
		snprintf(num, sizeof(num), "%.2f", v);
	else
		snprintf(num, sizeof(num), "%.3f", v);
	/* no trailing zeros after a decimal point */
	if (strchr(num, '.') && !strpbrk(num, "kM")) {
		size_t len = strlen(num);

		while (len > 0 && num[len - 1] == '0')
			num[--len] = '\0';
		if (len > 0 && num[len - 1] == '.')
			num[--len] = '\0';
	}
	if (!strcmp(num, "-0"))
		snprintf(num, sizeof(num), "0");
	snprintf(buf, size, "%s%s%s", num, sep, unit ? unit : "");
	return buf;
}

void kerf_svg_open(struct kerf_svg *s, struct kerf_buf *out, const char *id,
		   int width_px, int height_px, const char *title,
		   const char *desc)
{
	memset(s, 0, sizeof(*s));
	s->w.buf = out;
	s->width_px = width_px;
	s->height_px = height_px;
	s->left_px = MARGIN_L_PX;
	s->top_px = MARGIN_T_PX;
	s->right_px = width_px - LEGEND_W_PX - MARGIN_R_PX;
	s->bottom_px = height_px - MARGIN_B_PX;
	s->x_max = 1;
	s->y_max = 1;
	put(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-labelledby=\"%s-title %s-desc\" id=\"%s\">\n",
	    width_px, height_px, width_px, height_px, id, id, id);
	put(s, "<title id=\"%s-title\">", id);
	put_text(s, title);
	put(s, "</title>\n<desc id=\"%s-desc\">", id);
	put_text(s, desc);
	put(s, "</desc>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
	    width_px, height_px);
	put(s, "<text x=\"%d\" y=\"22\" class=\"chart-title\" font-size=\"15\" font-weight=\"bold\">",
	    MARGIN_L_PX);
	put_text(s, title);
	put(s, "</text>\n");
}

static double px_x(const struct kerf_svg *s, double x)
{
	double span = s->x_max - s->x_min;

	return s->left_px + (span > 0 ? (x - s->x_min) / span : 0) *
				    (s->right_px - s->left_px);
}

static double px_y(const struct kerf_svg *s, double y)
{
	double span = s->y_max - s->y_min;

	if (y > s->y_max)
		y = s->y_max;
	if (y < s->y_min)
		y = s->y_min;
	return s->bottom_px - (span > 0 ? (y - s->y_min) / span : 0) *
				      (s->bottom_px - s->top_px);
}

/* A tick step of 1, 2 or 5 times a power of ten, about span / 5. */
static double tick_step(double span)
{
	double raw = span / 5, p, m;

	if (!(raw > 0))
		return 1;
	p = pow(10, floor(log10(raw)));
	m = raw / p;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void frame(struct kerf_svg *s)
{
	put(s, "<g stroke=\"#333333\" stroke-width=\"1\" fill=\"none\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/></g>\n",
	    s->left_px, s->top_px, s->left_px, s->bottom_px, s->left_px,
	    s->bottom_px, s->right_px, s->bottom_px);
}

static void y_ticks(struct kerf_svg *s, const char *y_unit)
{
	double step = tick_step(s->y_max - s->y_min);
	char label[48];

	for (double v = ceil(s->y_min / step) * step; v <= s->y_max + step * 1e-9;
	     v += step) {
		double y = px_y(s, v);

		put(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n",
		    s->left_px, y, s->right_px, y);
		put(s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
		    s->left_px - 6, y + 4,
		    kerf_svg_fmt(label, sizeof(label), v, y_unit));
	}
}

static void axis_labels(struct kerf_svg *s, const char *x_label,
			const char *y_label)
{
	put(s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">",
	    (s->left_px + s->right_px) / 2, (double)s->height_px - 12);
	put_text(s, x_label);
	put(s, "</text>\n<text x=\"14\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">",
	    (s->top_px + s->bottom_px) / 2, (s->top_px + s->bottom_px) / 2);
	put_text(s, y_label);
	put(s, "</text>\n");
}

void kerf_svg_axes(struct kerf_svg *s, double x_min, double x_max,
		   double y_min, double y_max, const char *x_label,
		   const char *x_unit, const char *y_label, const char *y_unit)
{
	double step;
	char label[48];

	s->x_min = x_min;
	s->x_max = x_max > x_min ? x_max : x_min + 1;
	s->y_min = y_min;
	s->y_max = y_max > y_min ? y_max : y_min + 1;
	y_ticks(s, y_unit);
	step = tick_step(s->x_max - s->x_min);
	for (double v = ceil(s->x_min / step) * step; v <= s->x_max + step * 1e-9;
	     v += step) {
		double x = px_x(s, v);

		put(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n",
		    x, s->bottom_px, x, s->bottom_px + 4);
		put(s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n",
		    x, s->bottom_px + 17,
		    kerf_svg_fmt(label, sizeof(label), v, x_unit));
	}
	frame(s);
	axis_labels(s, x_label, y_label);
}

double kerf_svg_nice_max(double v)
{
	double step = tick_step(v);

	return v > 0 ? ceil(v / step - 1e-9) * step : 1;
}

void kerf_svg_axis_right(struct kerf_svg *s, double y_min, double y_max,
			 const char *y_label, const char *y_unit)
{
	double step, mid = (s->top_px + s->bottom_px) / 2;
	double x = s->right_px + 56;
	char label[48];

	s->y_min = y_min;
	s->y_max = y_max > y_min ? y_max : y_min + 1;
	step = tick_step(s->y_max - s->y_min);
	put(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333333\"/>\n",
	    s->right_px, s->top_px, s->right_px, s->bottom_px);
	for (double v = ceil(s->y_min / step) * step; v <= s->y_max + step * 1e-9;
	     v += step)
		put(s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>\n",
		    s->right_px + 6, px_y(s, v) + 4,
		    kerf_svg_fmt(label, sizeof(label), v, y_unit));
	put(s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(90 %.1f %.1f)\">",
	    x, mid, x, mid);
	put_text(s, y_label);
	put(s, "</text>\n");
}

void kerf_svg_axes_cat(struct kerf_svg *s, const char *const *labels,
		       size_t n, double y_min, double y_max,
		       const char *x_label, const char *y_label,
		       const char *y_unit)
{
	s->x_min = -0.5;
	s->x_max = n ? (double)n - 0.5 : 0.5;
	s->y_min = y_min;
	s->y_max = y_max > y_min ? y_max : y_min + 1;
	y_ticks(s, y_unit);
	for (size_t i = 0; i < n; i++) {
		put(s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">",
		    px_x(s, (double)i), s->bottom_px + 17);
		put_text(s, labels[i]);
		put(s, "</text>\n");
	}
	frame(s);
	axis_labels(s, x_label, y_label);
}

static void points(struct kerf_svg *s, const double *x, const double *y,
		   size_t n, bool step)
{
	for (size_t i = 0; i < n; i++) {
		if (step && i > 0)
			put(s, "%.1f,%.1f ", px_x(s, x[i]), px_y(s, y[i - 1]));
		put(s, "%.1f,%.1f ", px_x(s, x[i]), px_y(s, y[i]));
	}
}

void kerf_svg_line(struct kerf_svg *s, const double *x, const double *y,
		   size_t n, const char *colour, bool dashed)
{
	put(s, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
	    colour, dashed ? " stroke-dasharray=\"6 4\"" : "");
	points(s, x, y, n, false);
	put(s, "\"/>\n");
}

void kerf_svg_step(struct kerf_svg *s, const double *x, const double *y,
		   size_t n, const char *colour)
{
	put(s, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
	    colour);
	points(s, x, y, n, true);
	put(s, "\"/>\n");
}

void kerf_svg_bar(struct kerf_svg *s, double x, double y, double width,
		  int slot, int nr_slots, const char *colour)
{
	double w = width / (nr_slots > 0 ? nr_slots : 1);
	double x0 = px_x(s, x - width / 2 + w * slot);
	double x1 = px_x(s, x - width / 2 + w * (slot + 1));
	double y0 = px_y(s, y > 0 ? y : 0), y1 = px_y(s, 0);

	put(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
	    x0, y0, x1 - x0, y1 - y0, colour);
}

void kerf_svg_rect_px(struct kerf_svg *s, double x_px, double y_px,
		      double w_px, double h_px, const char *fill,
		      const char *tip)
{
	put(s, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"",
	    x_px, y_px, w_px, h_px, fill);
	if (!tip) {
		put(s, "/>\n");
		return;
	}
	put(s, "><title>");
	put_text(s, tip);
	put(s, "</title></rect>\n");
}

void kerf_svg_text_px(struct kerf_svg *s, double x_px, double y_px,
		      const char *text)
{
	put(s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">", x_px, y_px);
	put_text(s, text);
	put(s, "</text>\n");
}

void kerf_svg_label(struct kerf_svg *s, double x, double y, const char *text)
{
	put(s, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">",
	    px_x(s, x), px_y(s, y) - 4);
	put_text(s, text);
	put(s, "</text>\n");
}

void kerf_svg_legend(struct kerf_svg *s, const char *name, const char *colour,
		     bool dashed)
{
	double x = (double)s->width_px - LEGEND_W_PX;
	double y = s->top_px + 18.0 * s->legend_items;

	put(s, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%d\"%s/>\n",
	    x, y, x + 22, y, colour, dashed ? 2 : 8,
	    dashed ? " stroke-dasharray=\"6 4\"" : "");
	kerf_svg_text_px(s, x + 28, y + 4, name);
	s->legend_items++;
}

int kerf_svg_close(struct kerf_svg *s)
{
	put(s, "</svg>\n");
	return s->w.rc;
}
