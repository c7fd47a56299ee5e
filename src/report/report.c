/*
 * report: the data a report is drawn from, and the facts the writers
 * share (wait bins, the format a file name asks for).
 */
#include "report/report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

void kerf_report_init(struct kerf_report *r)
{
	memset(r, 0, sizeof(*r));
	r->peak_ms = -1;
}

void kerf_report_release(struct kerf_report *r)
{
	for (size_t i = 0; i < r->nr_curves; i++) {
		free(r->curves[i].arrived_ppm);
		free(r->curves[i].alloc_ppm);
	}
	free(r->curves);
	free(r->tenants);
	free(r->classes);
	free(r->nodes);
	kerf_report_init(r);
}

int kerf_report_add_curve(struct kerf_report *r, const char *name,
			  const int64_t *arrived_ppm, const int64_t *alloc_ppm,
			  size_t n)
{
	struct kerf_report_curve *c;
	struct kerf_report_curve *grown =
		realloc(r->curves, (r->nr_curves + 1) * sizeof(*grown));

	if (!grown)
		return -KERF_ENOMEM;
	r->curves = grown;
	c = &r->curves[r->nr_curves];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->arrived_ppm = malloc((n ? n : 1) * sizeof(*c->arrived_ppm));
	c->alloc_ppm = malloc((n ? n : 1) * sizeof(*c->alloc_ppm));
	if (!c->arrived_ppm || !c->alloc_ppm) {
		free(c->arrived_ppm);
		free(c->alloc_ppm);
		return -KERF_ENOMEM;
	}
	if (n) {
		memcpy(c->arrived_ppm, arrived_ppm, n * sizeof(*arrived_ppm));
		memcpy(c->alloc_ppm, alloc_ppm, n * sizeof(*alloc_ppm));
	}
	c->nr = n;
	r->nr_curves++;
	return 0;
}

static const int64_t bin_upper_ms[KERF_REPORT_WAIT_BINS - 1] = {
	10 * 1000, 60 * 1000, 5 * 60 * 1000, 15 * 60 * 1000, 3600 * 1000,
	4 * 3600 * 1000, 12 * 3600 * 1000,
};

static const char *const bin_label[KERF_REPORT_WAIT_BINS] = {
	"<10 s", "<1 min", "<5 min", "<15 min", "<1 h", "<4 h", "<12 h",
	">=12 h",
};

int kerf_report_wait_bin(int64_t wait_ms)
{
	int b = 0;

	while (b < KERF_REPORT_WAIT_BINS - 1 && wait_ms >= bin_upper_ms[b])
		b++;
	return b;
}

const char *kerf_report_wait_bin_label(int bin)
{
	if (bin < 0 || bin >= KERF_REPORT_WAIT_BINS)
		return "?";
	return bin_label[bin];
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

enum kerf_report_format kerf_report_format_of(const char *path)
{
	if (ends_with(path, ".html"))
		return KERF_REPORT_HTML;
	if (ends_with(path, ".md"))
		return KERF_REPORT_MD;
	return KERF_REPORT_NONE;
}

static size_t fact(struct kerf_report_fact *f, size_t i, const char *label,
		   const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static size_t fact(struct kerf_report_fact *f, size_t i, const char *label,
		   const char *key, const char *fmt, ...)
{
	va_list ap;

	f[i].label = label;
	f[i].key = key;
	va_start(ap, fmt);
	vsnprintf(f[i].value, sizeof(f[i].value), fmt, ap);
	va_end(ap);
	return i + 1;
}

size_t kerf_report_facts(const struct kerf_report *r,
			 struct kerf_report_fact *f)
{
	size_t n = 0;

	n = fact(f, n, "workloads submitted", "submitted", "%u", r->submitted);
	n = fact(f, n, "workloads started", "started", "%u", r->started);
	n = fact(f, n, "workloads still pending at the end", "pending", "%u",
		 r->pending);
	n = fact(f, n, "peak GPU allocation (%)", "peak_alloc_pct", "%.1f",
		 (double)r->peak_alloc_ppm / 1e4);
	n = fact(f, n, "peak reached at (hours since the start)", "peak_h",
		 "%.2f", (double)r->peak_ms / 3.6e6);
	n = fact(f, n, "preemptions", "preempted", "%" PRIu64,
		 r->preempted_cum[KERF_REPORT_SAMPLES]);
	n = fact(f, n, "work lost to preemption (GPU-hours)", "lost_gpu_hours",
		 "%.2f",
		 (double)(r->lost_milli_ms_cum[KERF_REPORT_SAMPLES] / 3600) / 1000);
	n = fact(f, n, "events simulated", "events", "%" PRIu64, r->nr_events);
	return n;
}
