/*
 * Unit tests for report/: the format a file name asks for, wait bins,
 * numbers with units, and the HTML and Markdown writers on a small
 * report made here: every chart there with its <title> and <desc>, names
 * escaped (a tenant called "<b>&\"x|y" breaks neither the page nor a
 * table), the same bytes twice, and a buffer too small refused whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/err.h"
#include "report/report.h"
#include "report/svg.h"

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static void test_format_of(void **state)
{
	(void)state;
	assert_int_equal(kerf_report_format_of("day.html"), KERF_REPORT_HTML);
	assert_int_equal(kerf_report_format_of("out/day.md"), KERF_REPORT_MD);
	assert_int_equal(kerf_report_format_of("day.htm"), KERF_REPORT_NONE);
	assert_int_equal(kerf_report_format_of("day.pdf"), KERF_REPORT_NONE);
	assert_int_equal(kerf_report_format_of(".html"), KERF_REPORT_NONE);
	assert_int_equal(kerf_report_format_of("md"), KERF_REPORT_NONE);
	assert_int_equal(kerf_report_format_of("day.html.tmp"), KERF_REPORT_NONE);
}

static void test_wait_bins(void **state)
{
	(void)state;
	assert_int_equal(kerf_report_wait_bin(0), 0);
	assert_int_equal(kerf_report_wait_bin(9999), 0);
	assert_int_equal(kerf_report_wait_bin(10000), 1);
	assert_int_equal(kerf_report_wait_bin(3600 * 1000 - 1), 4);
	assert_int_equal(kerf_report_wait_bin(3600 * 1000), 5);
	assert_int_equal(kerf_report_wait_bin(INT64_C(1) << 50), KERF_REPORT_WAIT_BINS - 1);
	assert_string_equal(kerf_report_wait_bin_label(0), "<10 s");
	assert_string_equal(kerf_report_wait_bin_label(KERF_REPORT_WAIT_BINS), "?");
}

static void test_fmt(void **state)
{
	char b[48];

	(void)state;
	assert_string_equal(kerf_svg_fmt(b, sizeof(b), 0, "%"), "0%");
	assert_string_equal(kerf_svg_fmt(b, sizeof(b), 35, "%"), "35%");
	assert_string_equal(kerf_svg_fmt(b, sizeof(b), 12.5, "h"), "12.5 h");
	assert_string_equal(kerf_svg_fmt(b, sizeof(b), 20, "h"), "20 h");
	assert_string_equal(kerf_svg_fmt(b, sizeof(b), 0.25, "GPU-h"), "0.25 GPU-h");
	assert_string_equal(kerf_svg_fmt(b, sizeof(b), 0.02, ""), "0.02");
	assert_string_equal(kerf_svg_fmt(b, sizeof(b), 2500, ""), "2500");
	assert_string_equal(kerf_svg_fmt(b, sizeof(b), 25000, ""), "25k");
	assert_true(kerf_svg_nice_max(1990) == 2000);
	assert_true(kerf_svg_nice_max(47) == 50);
	assert_true(kerf_svg_nice_max(0) == 1);
}

/* A day of 2 hours, two tenants (one with a hostile name), one class. */
static void small_report(struct kerf_report *r)
{
	static const int64_t x[] = { 0, 500000, 1000000 };
	static const int64_t y[] = { 0, 480000, 900000 };

	kerf_report_init(r);
	snprintf(r->title, sizeof(r->title), "a <small> day");
	snprintf(r->subtitle, sizeof(r->subtitle), "made by the test");
	r->horizon_ms = 2 * 3600 * 1000;
	for (int k = 0; k <= KERF_REPORT_SAMPLES; k++) {
		r->alloc_ppm[k] = k * 1000000 / KERF_REPORT_SAMPLES;
		r->preempted_cum[k] = (uint64_t)k / 10;
		r->lost_milli_ms_cum[k] = (int64_t)k * 3600;
	}
	r->peak_alloc_ppm = 1000000;
	r->peak_ms = r->horizon_ms;
	r->submitted = 7;
	r->started = 5;
	r->pending = 2;
	r->nr_tenants = 2;
	r->tenants = calloc(2, sizeof(*r->tenants));
	r->classes = calloc(1, sizeof(*r->classes));
	r->nodes = calloc(2, sizeof(*r->nodes));
	assert_non_null(r->tenants);
	assert_non_null(r->classes);
	assert_non_null(r->nodes);
	snprintf(r->tenants[0].name, sizeof(r->tenants[0].name), "<b>&\"x|y");
	snprintf(r->tenants[1].name, sizeof(r->tenants[1].name), "team-b");
	for (int t = 0; t < 2; t++) {
		r->tenants[t].index = t + 1;
		r->tenants[t].leaf = true;
		r->tenants[t].started = 2 + (uint32_t)t;
		for (int k = 0; k < KERF_REPORT_WINDOWS; k++) {
			r->tenants[t].share_ppm[k] = k == 3 ? -1 : 500000;
			r->tenants[t].owed_ppm[k] = 500000;
		}
	}
	r->nr_classes = 1;
	snprintf(r->classes[0].name, sizeof(r->classes[0].name), "batch");
	r->classes[0].started = 5;
	r->classes[0].wait_p50_ms = 4000;
	r->classes[0].wait_p99_ms = 1800000;
	r->classes[0].wait_bins[0] = 3;
	r->classes[0].wait_bins[4] = 2;
	r->nr_nodes = 2;
	for (int i = 0; i < 2; i++) {
		snprintf(r->nodes[i].name, sizeof(r->nodes[i].name), "node-%d", i);
		r->nodes[i].nr_gpus = 2;
		for (int g = 0; g < 2; g++) {
			r->nodes[i].gpu[g].owner = i == 0 ? 1 : KERF_REPORT_FREE;
			r->nodes[i].gpu[g].used_milli = i == 0 ? 1000 : 0;
			for (int k = 0; k < KERF_REPORT_MIG_SLICES; k++)
				r->nodes[i].gpu[g].slices[k] = KERF_REPORT_FREE;
		}
	}
	r->nodes[1].gpu[1].mig = true;
	r->nodes[1].gpu[1].slices[0] = 2;
	r->nodes[1].gpu[1].slices[1] = KERF_REPORT_IDLE_SLICE;
	assert_int_equal(kerf_report_add_curve(r, "fgd", x, y, 3), 0);
}

static void test_html(void **state)
{
	struct kerf_report r;
	struct kerf_buf a, b;
	const char *s;

	(void)state;
	small_report(&r);
	kerf_buf_init(&a, 0);
	kerf_buf_init(&b, 0);
	assert_int_equal(kerf_report_html(&r, &a), 0);
	assert_int_equal(kerf_report_html(&r, &b), 0);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.data, b.data, a.len);
	s = kerf_buf_str(&a);
	/* six charts (five of the run, the curves), each titled */
	assert_int_equal(count(s, "<svg "), 6);
	assert_int_equal(count(s, "</svg>"), 6);
	assert_int_equal(count(s, "<desc id="), 6);
	assert_int_equal(count(s, "<figcaption>"), 6);
	for (const char *const *id = (const char *const[]){ "chart-alloc", "chart-share",
		     "chart-waits", "chart-preempt", "chart-gpumap", "chart-curves", NULL };
	     *id; id++) {
		char want[64];

		snprintf(want, sizeof(want), "<title id=\"%s-title\">", *id);
		assert_non_null(strstr(s, want));
	}
	assert_non_null(strstr(s, "<title>a &lt;small&gt; day</title>"));
	assert_non_null(strstr(s, "&lt;b&gt;&amp;&quot;x|y"));
	assert_null(strstr(s, "<b>"));
	assert_null(strstr(s, "<script"));
	assert_non_null(strstr(s, "data-key=\"pending\">2<"));
	/* the hostile tenant's colour is its index's in every chart */
	assert_non_null(strstr(s, kerf_svg_colour(1)));
	kerf_buf_release(&a);
	kerf_buf_release(&b);
	/* a buffer too small: refused, and the failure said */
	kerf_buf_init(&a, 4096);
	assert_true(kerf_report_html(&r, &a) < 0);
	kerf_buf_release(&a);
	kerf_report_release(&r);
}

static void test_md(void **state)
{
	struct kerf_report r;
	struct kerf_buf a;
	const char *s;

	(void)state;
	small_report(&r);
	kerf_buf_init(&a, 0);
	assert_int_equal(kerf_report_md(&r, &a), 0);
	s = kerf_buf_str(&a);
	assert_non_null(strstr(s, "# a <small> day\n"));
	assert_non_null(strstr(s, "| workloads still pending at the end | 2 |\n"));
	/* a '|' in a name does not open a new cell */
	assert_non_null(strstr(s, "| <b>&\"x\\|y | 0 | 2 |"));
	assert_non_null(strstr(s, "## GPU allocation over time"));
	assert_non_null(strstr(s, "## Wait before start, per priority class"));
	assert_non_null(strstr(s, "| batch | 5 | 4s | 30m | 3 | 0 | 0 | 0 | 2 |"));
	assert_non_null(strstr(s, "## Preemptions and the work they lost"));
	/* four GPUs, two whole ones held by tenant 1, one slice of eight by 2 */
	assert_non_null(strstr(s, "| <b>&\"x\\|y | 2.00 |\n"));
	assert_non_null(strstr(s, "| team-b | 0.12 |\n"));
	assert_non_null(strstr(s, "| fgd | 100.0 | 90.0 |\n"));
	kerf_buf_release(&a);
	kerf_report_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_of),
		cmocka_unit_test(test_wait_bins),
		cmocka_unit_test(test_fmt),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_md),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
