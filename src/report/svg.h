/*
 * svg: charts as inline SVG text, for the reports (report/report.h).  A
 * chart is opened with its title and a description (the <title> and
 * <desc> screen readers read), given axes with labels and units, then
 * lines, steps, bars and rectangles in data coordinates, a legend, and
 * closed.  Numbers are printed with fixed precision, so the same data
 * gives the same bytes.  Every append goes to one kerf_buf; the first
 * failure is kept in the chart and returned by kerf_svg_close, so the
 * drawing calls need no checks.
 */
#ifndef KERF_REPORT_SVG_H
#define KERF_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "report/textout.h"

struct kerf_svg {
	struct kerf_textout w;      /* the output and its first failure */
	int width_px;
	int height_px;
	/* the plot area, pixels */
	double left_px;
	double top_px;
	double right_px;
	double bottom_px;
	/* data range of the axes */
	double x_min;
	double x_max;
	double y_min;
	double y_max;
	int legend_items;           /* drawn so far */
};

/* Colour i of the fixed palette ("#rrggbb"); tenants use their index. */
const char *kerf_svg_colour(int i);

/*
 * Open a chart of width x height pixels with its title (also drawn at the
 * top) and description.  id names the chart's element (for the <title>
 * reference); text is escaped.
 */
void kerf_svg_open(struct kerf_svg *s, struct kerf_buf *out, const char *id,
		   int width_px, int height_px, const char *title,
		   const char *desc);

/*
 * Axes over [x_min, x_max] x [y_min, y_max] with five ticks each, printed
 * with kerf_svg_fmt in the axis unit, and the labels ("time (h)").
 */
void kerf_svg_axes(struct kerf_svg *s, double x_min, double x_max,
		   double y_min, double y_max, const char *x_label,
		   const char *x_unit, const char *y_label, const char *y_unit);

/*
 * A category x axis (n labels, bars centred on each) over [y_min,
 * y_max]; kerf_svg_bar then takes the category index as x.
 */
void kerf_svg_axes_cat(struct kerf_svg *s, const char *const *labels,
		       size_t n, double y_min, double y_max,
		       const char *x_label, const char *y_label,
		       const char *y_unit);

/*
 * A second y axis on the right over [y_min, y_max], with its label; the
 * lines drawn after it use its scale.
 */
void kerf_svg_axis_right(struct kerf_svg *s, double y_min, double y_max,
			 const char *y_label, const char *y_unit);

/* The smallest tick value at or above v (for an axis's top). */
double kerf_svg_nice_max(double v);

/* A polyline through n points; dashed for a reference (entitlement). */
void kerf_svg_line(struct kerf_svg *s, const double *x, const double *y,
		   size_t n, const char *colour, bool dashed);

/* A step line: y[i] holds from x[i] to x[i+1]. */
void kerf_svg_step(struct kerf_svg *s, const double *x, const double *y,
		   size_t n, const char *colour);

/*
 * A bar from 0 to y centred on x, width in data units; slot and nr_slots
 * place grouped bars side by side within width.
 */
void kerf_svg_bar(struct kerf_svg *s, double x, double y, double width,
		  int slot, int nr_slots, const char *colour);

/* A rectangle in pixels, with a tooltip (<title>) when tip is not NULL. */
void kerf_svg_rect_px(struct kerf_svg *s, double x_px, double y_px,
		      double w_px, double h_px, const char *fill,
		      const char *tip);

/* Text in pixels (escaped), anchored at its start. */
void kerf_svg_text_px(struct kerf_svg *s, double x_px, double y_px,
		      const char *text);

/* Text centred just above the data point (x, y), escaped. */
void kerf_svg_label(struct kerf_svg *s, double x, double y, const char *text);

/* The next legend entry (a swatch and the name), dashed like the line. */
void kerf_svg_legend(struct kerf_svg *s, const char *name, const char *colour,
		     bool dashed);

/* Close the chart: 0, or the first append failure (negative). */
int kerf_svg_close(struct kerf_svg *s);

/*
 * v with its unit for an axis or a table: "12 h", "35 %", "1.5 GPU-h",
 * "2.5k"; at most three significant digits, no trailing zeros.
 */
const char *kerf_svg_fmt(char *buf, size_t size, double v, const char *unit);

#endif /* KERF_REPORT_SVG_H */
