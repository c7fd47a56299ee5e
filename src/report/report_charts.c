/*
 * report_charts: the charts.  Time runs along x in hours (minutes for a
 * run under two hours); tenants keep the colour of their index in every
 * chart; every chart has a title, a description, labelled axes with units
 * and a legend.
 */
#include "report/report_charts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "report/svg.h"

enum { CHART_W_PX = 760, CHART_H_PX = 320, PREEMPT_WINDOWS = 24 };

bool kerf_report_has_time(const struct kerf_report *r)
{
	return r->horizon_ms > 0;
}

int64_t kerf_report_sample_ms(const struct kerf_report *r, int k)
{
	return r->horizon_ms * k / KERF_REPORT_SAMPLES;
}

/* Hours, or minutes for a short run: divisor (ms) and unit. */
static double time_div(const struct kerf_report *r, const char **unit)
{
	if (r->horizon_ms >= 2 * 3600 * 1000) {
		*unit = "h";
		return 3.6e6;
	}
	*unit = "min";
	return 6e4;
}

int kerf_chart_alloc(const struct kerf_report *r, struct kerf_buf *out)
{
	double x[KERF_REPORT_SAMPLES + 1], y[KERF_REPORT_SAMPLES + 1];
	const char *unit;
	double div = time_div(r, &unit);
	char desc[256], label[48];
	struct kerf_svg s;

	if (!kerf_report_has_time(r))
		return 0;
	for (int k = 0; k <= KERF_REPORT_SAMPLES; k++) {
		x[k] = (double)kerf_report_sample_ms(r, k) / div;
		y[k] = (double)r->alloc_ppm[k] / 1e4;
	}
	snprintf(desc, sizeof(desc),
		 "Share of the cluster's GPU capacity allocated to running work over the run; it peaked at %.1f%% at %s.",
		 (double)r->peak_alloc_ppm / 1e4,
		 kerf_svg_fmt(label, sizeof(label), (double)r->peak_ms / div, unit));
	kerf_svg_open(&s, out, "chart-alloc", CHART_W_PX, CHART_H_PX,
		      "GPU allocation over time", desc);
	snprintf(label, sizeof(label), "time since the start (%s)", unit);
	kerf_svg_axes(&s, 0, (double)r->horizon_ms / div, 0, 100, label, unit,
		      "GPU allocated (%)", "%");
	kerf_svg_step(&s, x, y, KERF_REPORT_SAMPLES + 1, kerf_svg_colour(0));
	kerf_svg_legend(&s, "GPU allocated", kerf_svg_colour(0), false);
	return kerf_svg_close(&s);
}

/* Draw the valid points of one series as separate runs of lines. */
static void share_series(struct kerf_svg *s, const double *x,
			 const int64_t *ppm, const char *colour, bool dashed)
{
	double xs[KERF_REPORT_WINDOWS], ys[KERF_REPORT_WINDOWS];
	size_t n = 0;

	for (int k = 0; k <= KERF_REPORT_WINDOWS; k++) {
		if (k < KERF_REPORT_WINDOWS && ppm[k] >= 0) {
			xs[n] = x[k];
			ys[n++] = (double)ppm[k] / 1e4;
			continue;
		}
		if (n > 0)
			kerf_svg_line(s, xs, ys, n, colour, dashed);
		n = 0;
	}
}

int kerf_chart_share(const struct kerf_report *r, struct kerf_buf *out)
{
	double x[KERF_REPORT_WINDOWS];
	const char *unit;
	double div = time_div(r, &unit);
	char label[48];
	struct kerf_svg s;

	if (!kerf_report_has_time(r))
		return 0;
	for (int k = 0; k < KERF_REPORT_WINDOWS; k++)
		x[k] = ((double)r->horizon_ms * (2 * k + 1) /
			(2 * KERF_REPORT_WINDOWS)) / div;
	kerf_svg_open(&s, out, "chart-share", CHART_W_PX, CHART_H_PX,
		      "Share of the GPUs in use against entitlement, per tenant",
		      "For each tenant without children, a solid line is its share of the GPUs in use in each twenty-fourth of the run and the dashed line of the same colour is what it was entitled to given demand.");
	snprintf(label, sizeof(label), "time since the start (%s)", unit);
	kerf_svg_axes(&s, 0, (double)r->horizon_ms / div, 0, 100, label, unit,
		      "share of GPUs in use (%)", "%");
	for (size_t t = 0; t < r->nr_tenants; t++) {
		const struct kerf_report_tenant *tn = &r->tenants[t];
		const char *c = kerf_svg_colour(tn->index);
		char name[KERF_REPORT_NAME_MAX + 16];

		if (!tn->leaf)
			continue;
		share_series(&s, x, tn->share_ppm, c, false);
		share_series(&s, x, tn->owed_ppm, c, true);
		kerf_svg_legend(&s, tn->name, c, false);
		snprintf(name, sizeof(name), "%s entitled", tn->name);
		kerf_svg_legend(&s, name, c, true);
	}
	return kerf_svg_close(&s);
}

int kerf_chart_waits(const struct kerf_report *r, struct kerf_buf *out)
{
	const char *labels[KERF_REPORT_WAIT_BINS];
	uint32_t top = 1;
	int nr = 0, slot = 0;
	struct kerf_svg s;

	if (!kerf_report_has_time(r))
		return 0;
	for (int b = 0; b < KERF_REPORT_WAIT_BINS; b++)
		labels[b] = kerf_report_wait_bin_label(b);
	for (size_t c = 0; c < r->nr_classes; c++) {
		nr += r->classes[c].started > 0;
		for (int b = 0; b < KERF_REPORT_WAIT_BINS; b++)
			if (r->classes[c].wait_bins[b] > top)
				top = r->classes[c].wait_bins[b];
	}
	kerf_svg_open(&s, out, "chart-waits", CHART_W_PX, CHART_H_PX,
		      "Wait before start, per priority class",
		      "How many workloads of each priority class started after waiting how long since they were submitted, in bins from under ten seconds to twelve hours or more.");
	kerf_svg_axes_cat(&s, labels, KERF_REPORT_WAIT_BINS, 0,
			  kerf_svg_nice_max(top), "wait from submission to start",
			  "workloads started", "");
	for (size_t c = 0; c < r->nr_classes; c++) {
		const struct kerf_report_class *cl = &r->classes[c];
		const char *colour = kerf_svg_colour((int)c + 5);

		if (cl->started == 0)
			continue;
		for (int b = 0; b < KERF_REPORT_WAIT_BINS; b++)
			if (cl->wait_bins[b])
				kerf_svg_bar(&s, b, cl->wait_bins[b], 0.8, slot,
					     nr, colour);
		kerf_svg_legend(&s, cl->name, colour, false);
		slot++;
	}
	return kerf_svg_close(&s);
}

void kerf_report_preempt_window(const struct kerf_report *r, int w, int nr,
				uint64_t *preempted, int64_t *lost_milli_hours)
{
	int a = KERF_REPORT_SAMPLES * w / nr, b = KERF_REPORT_SAMPLES * (w + 1) / nr;

	*preempted = r->preempted_cum[b] - r->preempted_cum[a];
	/* GPU-milli x ms / 1000 = GPU x ms: GPU-hours x 1000 is / 3600 */
	*lost_milli_hours = (r->lost_milli_ms_cum[b] - r->lost_milli_ms_cum[a]) / 3600;
}

int kerf_chart_preempt(const struct kerf_report *r, struct kerf_buf *out)
{
	double x[KERF_REPORT_SAMPLES + 1], y[KERF_REPORT_SAMPLES + 1];
	const char *unit;
	double div = time_div(r, &unit), width, top = 1;
	char label[48];
	struct kerf_svg s;

	if (!kerf_report_has_time(r))
		return 0;
	width = (double)r->horizon_ms / PREEMPT_WINDOWS / div;
	for (int w = 0; w < PREEMPT_WINDOWS; w++) {
		uint64_t n;
		int64_t lost;

		kerf_report_preempt_window(r, w, PREEMPT_WINDOWS, &n, &lost);
		if ((double)n > top)
			top = (double)n;
	}
	for (int k = 0; k <= KERF_REPORT_SAMPLES; k++) {
		x[k] = (double)kerf_report_sample_ms(r, k) / div;
		y[k] = (double)r->lost_milli_ms_cum[k] / 3.6e6;
	}
	kerf_svg_open(&s, out, "chart-preempt", CHART_W_PX, CHART_H_PX,
		      "Preemptions and the work they lost",
		      "Bars: preemptions in each twenty-fourth of the run (left axis). Line: GPU-hours of work lost by preempted workloads since their last checkpoint, added up from the start (right axis).");
	snprintf(label, sizeof(label), "time since the start (%s)", unit);
	kerf_svg_axes(&s, 0, (double)r->horizon_ms / div, 0,
		      kerf_svg_nice_max(top), label, unit, "preemptions", "");
	for (int w = 0; w < PREEMPT_WINDOWS; w++) {
		uint64_t n;
		int64_t lost;

		kerf_report_preempt_window(r, w, PREEMPT_WINDOWS, &n, &lost);
		if (n)
			kerf_svg_bar(&s, width * (w + 0.5), (double)n, width * 0.8,
				     0, 1, kerf_svg_colour(7));
	}
	kerf_svg_axis_right(&s, 0, kerf_svg_nice_max(y[KERF_REPORT_SAMPLES]),
			    "work lost, cumulative (GPU-hours)", "");
	kerf_svg_step(&s, x, y, KERF_REPORT_SAMPLES + 1, kerf_svg_colour(5));
	kerf_svg_legend(&s, "preemptions (left)", kerf_svg_colour(7), false);
	kerf_svg_legend(&s, "GPU-hours lost (right)", kerf_svg_colour(5), false);
	return kerf_svg_close(&s);
}

double kerf_report_gpus_at_peak(const struct kerf_report *r, int t)
{
	double held = 0;

	for (size_t i = 0; i < r->nr_nodes; i++)
		for (int g = 0; g < r->nodes[i].nr_gpus; g++) {
			const struct kerf_report_gpu *gp = &r->nodes[i].gpu[g];

			if (gp->mig) {
				for (int k = 0; k < KERF_REPORT_MIG_SLICES; k++)
					held += gp->slices[k] == t ? 1.0 / KERF_REPORT_MIG_SLICES : 0;
			} else if (gp->owner == t) {
				held += gp->used_milli / 1000.0;
			}
		}
	return held;
}

static const char *owner_fill(int32_t owner)
{
	if (owner == KERF_REPORT_FREE)
		return "#eeeeee";
	if (owner == KERF_REPORT_MIXED)
		return "#444444";
	if (owner == KERF_REPORT_IDLE_SLICE)
		return "#bbbbbb";
	return kerf_svg_colour(owner);
}

static void map_gpu(struct kerf_svg *s, const struct kerf_report_gpu *gp,
		    double x, double y, double w, double h)
{
	if (gp->mig) {
		double sh = h / KERF_REPORT_MIG_SLICES;

		for (int k = 0; k < KERF_REPORT_MIG_SLICES; k++)
			kerf_svg_rect_px(s, x, y + sh * k, w, sh,
					 owner_fill(gp->slices[k]), NULL);
		return;
	}
	kerf_svg_rect_px(s, x, y, w, h, owner_fill(KERF_REPORT_FREE), NULL);
	if (gp->owner != KERF_REPORT_FREE && gp->used_milli > 0) {
		double uh = h * gp->used_milli / 1000.0;

		kerf_svg_rect_px(s, x, y + h - uh, w, uh, owner_fill(gp->owner),
				 NULL);
	}
}

int kerf_chart_gpu_map(const struct kerf_report *r, struct kerf_buf *out)
{
	int max_gpus = 1, cell_w, cell_h, per_row, rows;
	double block_w, area_w;
	char desc[320], tip[KERF_REPORT_NAME_MAX + 32];
	bool tips = r->nr_nodes <= 256;
	struct kerf_svg s;

	if (!kerf_report_has_time(r) || r->nr_nodes == 0)
		return 0;
	for (size_t i = 0; i < r->nr_nodes; i++)
		if (r->nodes[i].nr_gpus > max_gpus)
			max_gpus = r->nodes[i].nr_gpus;
	/* cells as large as the cluster allows: a few nodes read at a glance */
	cell_w = r->nr_nodes > 200 ? 4 : r->nr_nodes > 32 ? 9 : 14;
	cell_h = r->nr_nodes > 32 ? 16 : 24;
	area_w = CHART_W_PX - 180 - 16 - 20;
	block_w = max_gpus * (cell_w + 1) + 6;
	per_row = (int)(area_w / block_w);
	if (per_row < 1)
		per_row = 1;
	rows = (int)((r->nr_nodes + (size_t)per_row - 1) / (size_t)per_row);
	snprintf(desc, sizeof(desc),
		 "Every GPU of the %zu nodes when allocation peaked (%.1f%%), one column per GPU in blocks of a node; coloured by the tenant using it, filled to the share used for fractions, in eight stripes (memory slices) for GPUs in MIG mode.",
		 r->nr_nodes, (double)r->peak_alloc_ppm / 1e4);
	kerf_svg_open(&s, out, "chart-gpumap", CHART_W_PX,
		      40 + rows * (cell_h + 6) + 40 > 260 ? 40 + rows * (cell_h + 6) + 40 : 260,
		      "GPU map at peak allocation", desc);
	for (size_t i = 0; i < r->nr_nodes; i++) {
		const struct kerf_report_node *n = &r->nodes[i];
		double x0 = 20 + block_w * (double)(i % (size_t)per_row);
		double y0 = 40 + (cell_h + 6) * (double)(i / (size_t)per_row);

		if (tips) {
			snprintf(tip, sizeof(tip), "%s: %u GPUs", n->name, n->nr_gpus);
			kerf_svg_rect_px(&s, x0 - 2, y0 - 2, n->nr_gpus * (cell_w + 1) + 3,
					 cell_h + 4, "#ffffff", tip);
		}
		for (int g = 0; g < n->nr_gpus; g++)
			map_gpu(&s, &n->gpu[g], x0 + g * (cell_w + 1), y0, cell_w,
				cell_h);
	}
	s.top_px = 40;
	for (size_t t = 0; t < r->nr_tenants; t++)
		if (r->tenants[t].leaf)
			kerf_svg_legend(&s, r->tenants[t].name,
					kerf_svg_colour(r->tenants[t].index), false);
	kerf_svg_legend(&s, "free", owner_fill(KERF_REPORT_FREE), false);
	kerf_svg_legend(&s, "fractions of several tenants",
			owner_fill(KERF_REPORT_MIXED), false);
	kerf_svg_legend(&s, "MIG instance, unused",
			owner_fill(KERF_REPORT_IDLE_SLICE), false);
	return kerf_svg_close(&s);
}

int kerf_chart_curves(const struct kerf_report *r, struct kerf_buf *out)
{
	double max_x = 1;
	struct kerf_svg s;

	if (r->nr_curves == 0)
		return 0;
	for (size_t i = 0; i < r->nr_curves; i++)
		for (size_t k = 0; k < r->curves[i].nr; k++)
			if ((double)r->curves[i].arrived_ppm[k] / 1e4 > max_x)
				max_x = (double)r->curves[i].arrived_ppm[k] / 1e4;
	kerf_svg_open(&s, out, "chart-curves", CHART_W_PX, CHART_H_PX,
		      "GPU allocation against arrived work, per policy",
		      "For each placement policy, the share of GPU capacity allocated (mean over seeds) as the work that arrived grows as a share of GPU capacity; higher is better.");
	kerf_svg_axes(&s, 0, max_x, 0, 100, "work arrived (% of GPU capacity)",
		      "%", "GPU allocated (%)", "%");
	for (size_t i = 0; i < r->nr_curves; i++) {
		const struct kerf_report_curve *c = &r->curves[i];
		double *x = malloc((c->nr ? c->nr : 1) * sizeof(*x));
		double *y = malloc((c->nr ? c->nr : 1) * sizeof(*y));

		if (!x || !y) {
			free(x);
			free(y);
			kerf_svg_close(&s);
			return -KERF_ENOMEM;
		}
		for (size_t k = 0; k < c->nr; k++) {
			x[k] = (double)c->arrived_ppm[k] / 1e4;
			y[k] = (double)c->alloc_ppm[k] / 1e4;
		}
		kerf_svg_line(&s, x, y, c->nr, kerf_svg_colour((int)i), false);
		kerf_svg_legend(&s, c->name, kerf_svg_colour((int)i), false);
		free(x);
		free(y);
	}
	return kerf_svg_close(&s);
}
