/*
 * report_md: the report as Markdown text.  The charts become small tables
 * (the allocation every twelfth of the run, share against entitlement by
 * sixths, the wait histogram, preemptions by eighths, GPUs held at the
 * peak, allocation curves at ten points), so the file stands alone and
 * reads in any viewer; the HTML report draws the same data.
 */
#include "report/report.h"

#include <inttypes.h>
#include <stdio.h>

#include "base/units.h"
#include "report/report_charts.h"
#include "report/textout.h"

#define add(m, ...) kerf_textout_addf((m), __VA_ARGS__)

/* Names go into table cells: a '|' or a newline would break the table. */
static void cell(struct kerf_textout *m, const char *s)
{
	for (; *s && !m->rc; s++) {
		if (*s == '|')
			add(m, "\\|");
		else if (*s == '\n' || *s == '\r')
			add(m, " ");
		else
			add(m, "%c", *s);
	}
}

static void alloc_table(struct kerf_textout *m, const struct kerf_report *r)
{
	char peak[16], at[32];

	kerf_units_percent((double)r->peak_alloc_ppm / 1e4, 1, peak, sizeof(peak));
	kerf_units_duration(r->peak_ms, at, sizeof(at));
	add(m, "\n## GPU allocation over time\n\nPeak %s, %s after the start.\n\n| hours since the start | GPU allocated (%%) |\n|---:|---:|\n",
	    peak, at);
	for (int k = 0; k <= 12; k++) {
		int s = KERF_REPORT_SAMPLES * k / 12;

		add(m, "| %.2f | %.1f |\n", (double)kerf_report_sample_ms(r, s) / 3.6e6,
		    (double)r->alloc_ppm[s] / 1e4);
	}
}

static void tenant_table(struct kerf_textout *m, const struct kerf_report *r)
{
	add(m, "\n## Tenants\n\n| tenant | submitted | started | pending | preempted | GPU-hours | lost GPU-hours |\n|---|---:|---:|---:|---:|---:|---:|\n");
	for (size_t t = 0; t < r->nr_tenants; t++) {
		const struct kerf_report_tenant *tn = &r->tenants[t];

		add(m, "| ");
		cell(m, tn->name);
		add(m, " | %u | %u | %u | %u | %.1f | %.2f |\n", tn->submitted,
		    tn->started, tn->pending, tn->preempted,
		    (double)tn->gpu_milli_hours / 1000,
		    (double)tn->lost_milli_hours / 1000);
	}
}

static void share_table(struct kerf_textout *m, const struct kerf_report *r)
{
	add(m, "\n## Share of the GPUs in use against entitlement\n\nPer tenant without children, share / entitled (%%) in each sixth of the run.\n\n| tenant | 1 | 2 | 3 | 4 | 5 | 6 |\n|---|---:|---:|---:|---:|---:|---:|\n");
	for (size_t t = 0; t < r->nr_tenants; t++) {
		const struct kerf_report_tenant *tn = &r->tenants[t];

		if (!tn->leaf)
			continue;
		add(m, "| ");
		cell(m, tn->name);
		for (int k = 0; k < 6; k++) {
			int64_t s = 0, o = 0, n = 0;

			for (int j = k * KERF_REPORT_WINDOWS / 6;
			     j < (k + 1) * KERF_REPORT_WINDOWS / 6; j++) {
				if (tn->share_ppm[j] < 0 || tn->owed_ppm[j] < 0)
					continue;
				s += tn->share_ppm[j];
				o += tn->owed_ppm[j];
				n++;
			}
			if (n)
				add(m, " | %.1f / %.1f", (double)s / (double)n / 1e4,
				    (double)o / (double)n / 1e4);
			else
				add(m, " | -");
		}
		add(m, " |\n");
	}
}

static void wait_table(struct kerf_textout *m, const struct kerf_report *r)
{
	char p50[32], p99[32];

	add(m, "\n## Wait before start, per priority class\n\nWorkloads started, by how long they waited since submission.\n\n| class | started | wait p50 | wait p99 |");
	for (int b = 0; b < KERF_REPORT_WAIT_BINS; b++)
		add(m, " %s |", kerf_report_wait_bin_label(b));
	add(m, "\n|---|---:|---:|---:|");
	for (int b = 0; b < KERF_REPORT_WAIT_BINS; b++)
		add(m, "---:|");
	add(m, "\n");
	for (size_t c = 0; c < r->nr_classes; c++) {
		const struct kerf_report_class *cl = &r->classes[c];

		add(m, "| ");
		cell(m, cl->name);
		kerf_units_duration(cl->wait_p50_ms, p50, sizeof(p50));
		kerf_units_duration(cl->wait_p99_ms, p99, sizeof(p99));
		add(m, " | %u | %s | %s |", cl->started, p50, p99);
		for (int b = 0; b < KERF_REPORT_WAIT_BINS; b++)
			add(m, " %u |", cl->wait_bins[b]);
		add(m, "\n");
	}
}

static void preempt_table(struct kerf_textout *m, const struct kerf_report *r)
{
	add(m, "\n## Preemptions and the work they lost\n\n| from (h) | to (h) | preemptions | lost GPU-hours |\n|---:|---:|---:|---:|\n");
	for (int w = 0; w < 8; w++) {
		uint64_t n;
		int64_t lost;

		kerf_report_preempt_window(r, w, 8, &n, &lost);
		add(m, "| %.2f | %.2f | %" PRIu64 " | %.2f |\n",
		    (double)kerf_report_sample_ms(r, KERF_REPORT_SAMPLES * w / 8) / 3.6e6,
		    (double)kerf_report_sample_ms(r, KERF_REPORT_SAMPLES * (w + 1) / 8) / 3.6e6,
		    n, (double)lost / 1000);
	}
}

static void map_table(struct kerf_textout *m, const struct kerf_report *r)
{
	size_t gpus = 0;
	double held = 0;

	for (size_t i = 0; i < r->nr_nodes; i++)
		gpus += r->nodes[i].nr_gpus;
	add(m, "\n## GPUs at peak allocation\n\n%zu nodes, %zu GPUs; GPUs held per tenant (fractions and MIG slices as parts of a GPU).\n\n| tenant | GPUs held |\n|---|---:|\n",
	    r->nr_nodes, gpus);
	for (size_t t = 0; t < r->nr_tenants; t++) {
		double g;

		if (!r->tenants[t].leaf)
			continue;
		g = kerf_report_gpus_at_peak(r, r->tenants[t].index);
		held += g;
		add(m, "| ");
		cell(m, r->tenants[t].name);
		add(m, " | %.2f |\n", g);
	}
	add(m, "| (not held by one tenant) | %.2f |\n", (double)gpus - held);
}

static void curve_table(struct kerf_textout *m, const struct kerf_report *r)
{
	add(m, "\n## GPU allocation against arrived work, per policy\n\n| policy | arrived (%% of GPU capacity) | GPU allocated (%%) |\n|---|---:|---:|\n");
	for (size_t i = 0; i < r->nr_curves; i++) {
		const struct kerf_report_curve *c = &r->curves[i];

		for (size_t k = 1; k <= 10 && c->nr > 0; k++) {
			size_t at = (c->nr * k + 9) / 10 - 1;

			add(m, "| ");
			cell(m, c->name);
			add(m, " | %.1f | %.1f |\n", (double)c->arrived_ppm[at] / 1e4,
			    (double)c->alloc_ppm[at] / 1e4);
		}
	}
}

int kerf_report_md(const struct kerf_report *r, struct kerf_buf *out)
{
	struct kerf_textout m = { .buf = out };

	add(&m, "# ");
	cell(&m, r->title);
	add(&m, "\n\n");
	cell(&m, r->subtitle);
	add(&m, "\n");
	if (kerf_report_has_time(r)) {
		struct kerf_report_fact f[KERF_REPORT_FACTS];
		size_t n = kerf_report_facts(r, f);

		add(&m, "\n## Summary\n\n| figure | value |\n|---|---:|\n");
		for (size_t i = 0; i < n; i++)
			add(&m, "| %s | %s |\n", f[i].label, f[i].value);
		alloc_table(&m, r);
		tenant_table(&m, r);
		share_table(&m, r);
		wait_table(&m, r);
		preempt_table(&m, r);
		map_table(&m, r);
	}
	if (r->nr_curves)
		curve_table(&m, r);
	return m.rc;
}
