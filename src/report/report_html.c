/*
 * report_html: the report as one self-contained HTML file: inline CSS and
 * inline SVG, no script, nothing fetched, so it opens from disk anywhere.
 * It is also well-formed XML (every element closed), so it can be checked
 * by any XML parser.  The figures the tests compare with the run's JSON
 * carry a data-key attribute.
 */
#include "report/report.h"

#include <stdio.h>

#include "base/units.h"
#include "report/report_charts.h"
#include "report/svg.h"
#include "report/textout.h"

static const char style[] =
	"body{font-family:sans-serif;margin:2em;max-width:60em;color:#222}"
	"table{border-collapse:collapse;margin:1em 0}"
	"th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:right}"
	"th:first-child,td:first-child{text-align:left}"
	"figure{margin:1.5em 0}figcaption{font-size:0.9em;color:#555}"
	"svg{max-width:100%;height:auto}"
	".swatch{display:inline-block;width:0.8em;height:0.8em;margin-right:0.3em}";

#define add(h, ...) kerf_textout_addf((h), __VA_ARGS__)
#define text(h, s) kerf_textout_escaped((h), (s))

/* A chart in a figure with its caption; nothing when it has no data. */
static void chart(struct kerf_textout *h, int (*draw)(const struct kerf_report *,
					      struct kerf_buf *),
		  const struct kerf_report *r, const char *caption)
{
	struct kerf_buf svg;
	int rc;

	if (h->rc)
		return;
	kerf_buf_init(&svg, h->buf->max_bytes);
	rc = draw(r, &svg);
	if (rc < 0)
		h->rc = rc;
	else if (svg.len > 0) {
		add(h, "<figure>\n");
		kerf_textout_add(h, svg.data, svg.len);
		add(h, "<figcaption>");
		text(h, caption);
		add(h, "</figcaption>\n</figure>\n");
	}
	kerf_buf_release(&svg);
}

static void summary(struct kerf_textout *h, const struct kerf_report *r)
{
	struct kerf_report_fact f[KERF_REPORT_FACTS];
	size_t n = kerf_report_facts(r, f);

	add(h, "<table id=\"summary\">\n<tr><th>figure</th><th>value</th></tr>\n");
	for (size_t i = 0; i < n; i++)
		add(h, "<tr><td>%s</td><td data-key=\"%s\">%s</td></tr>\n",
		    f[i].label, f[i].key, f[i].value);
	add(h, "</table>\n");
}

static void tenants(struct kerf_textout *h, const struct kerf_report *r)
{
	add(h, "<h2>Tenants</h2>\n<table id=\"tenants\">\n<tr><th>tenant</th><th>submitted</th><th>started</th><th>pending</th><th>preempted</th><th>GPU-hours</th><th>lost GPU-hours</th></tr>\n");
	for (size_t t = 0; t < r->nr_tenants; t++) {
		const struct kerf_report_tenant *tn = &r->tenants[t];

		add(h, "<tr data-tenant=\"");
		text(h, tn->name);
		add(h, "\"><td><span class=\"swatch\" style=\"background:%s\"></span>",
		    kerf_svg_colour(tn->index));
		text(h, tn->name);
		add(h, "</td><td data-key=\"submitted\">%u</td><td data-key=\"started\">%u</td><td data-key=\"pending\">%u</td><td data-key=\"preempted\">%u</td><td data-key=\"gpu_hours\">%.1f</td><td data-key=\"lost_gpu_hours\">%.2f</td></tr>\n",
		    tn->submitted, tn->started, tn->pending, tn->preempted,
		    (double)tn->gpu_milli_hours / 1000,
		    (double)tn->lost_milli_hours / 1000);
	}
	add(h, "</table>\n");
}

static void classes(struct kerf_textout *h, const struct kerf_report *r)
{
	char p50[32], p99[32];

	add(h, "<h2>Priority classes</h2>\n<table id=\"classes\">\n<tr><th>class</th><th>submitted</th><th>started</th><th>wait p50</th><th>wait p99</th></tr>\n");
	for (size_t c = 0; c < r->nr_classes; c++) {
		const struct kerf_report_class *cl = &r->classes[c];

		add(h, "<tr data-class=\"");
		text(h, cl->name);
		add(h, "\"><td>");
		text(h, cl->name);
		add(h, "</td><td data-key=\"submitted\">%u</td><td data-key=\"started\">%u</td>",
		    cl->submitted, cl->started);
		/* the waits as the CLI's tables write them ("-" for none) */
		kerf_units_duration(cl->wait_p50_ms, p50, sizeof(p50));
		kerf_units_duration(cl->wait_p99_ms, p99, sizeof(p99));
		add(h, "<td>%s</td><td>%s</td></tr>\n", p50, p99);
	}
	add(h, "</table>\n");
}

int kerf_report_html(const struct kerf_report *r, struct kerf_buf *out)
{
	struct kerf_textout h = { .buf = out };

	add(&h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>");
	text(&h, r->title);
	add(&h, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", style);
	text(&h, r->title);
	add(&h, "</h1>\n<p>");
	text(&h, r->subtitle);
	add(&h, "</p>\n");
	if (kerf_report_has_time(r)) {
		summary(&h, r);
		chart(&h, kerf_chart_alloc, r,
		      "GPU capacity allocated to running work, sampled at fixed times through the run.");
		tenants(&h, r);
		chart(&h, kerf_chart_share, r,
		      "Each tenant's share of the GPUs in use (solid) against what it was entitled to given demand (dashed).");
		classes(&h, r);
		chart(&h, kerf_chart_waits, r,
		      "How long work waited before it started, per priority class.");
		chart(&h, kerf_chart_preempt, r,
		      "Work lost to preemption since the last checkpoint, and how many preemptions, through the run.");
		chart(&h, kerf_chart_gpu_map, r,
		      "Which tenant held each GPU when allocation peaked; hover a node for its name.");
	}
	chart(&h, kerf_chart_curves, r,
	      "Allocation against arrived work, per policy (kerf sim openb).");
	add(&h, "</body>\n</html>\n");
	return h.rc;
}
