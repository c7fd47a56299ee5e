/*
 * test_ui: the dashboard's files as kerf serve embeds them (serve/ui.h):
 * each file of src/serve/ui is there byte for byte with its Content-Type
 * and an ETag, "/" and "/ui/" are the page, nothing else under /ui/ is
 * found, and the Content-Security-Policy allows no inline script or
 * style, which the page does not have.  (tests/ui/test_dashboard.sh
 * serves them to a browser.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "serve/ui.h"

/* src/serve/ui/name from the source tree, or NULL without one. */
static char *source(const char *name, size_t *len)
{
	const char *root = getenv("KERF_SOURCE_ROOT");
	char path[1024];
	char *text;
	FILE *f;
	long n;

	if (!root)
		return NULL;
	snprintf(path, sizeof(path), "%s/src/serve/ui/%s", root, name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot read '%s'", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	text = malloc((size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	text[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return text;
}

static void test_files(void **state)
{
	static const struct {
		const char *name, *type;
	} want[] = {
		{ "index.html", "text/html; charset=utf-8" },
		{ "app.js", "text/javascript; charset=utf-8" },
		{ "style.css", "text/css; charset=utf-8" },
		{ "favicon.svg", "image/svg+xml" },
	};

	(void)state;
	assert_int_equal(kerf_ui_nr_assets, 4);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char url[64];
		const struct kerf_ui_asset *a;
		size_t len;
		char *text;

		snprintf(url, sizeof(url), "/ui/%s", want[i].name);
		a = kerf_ui_find(url);
		if (!a)
			fail_msg("%s is not embedded", url);
		assert_string_equal(a->content_type, want[i].type);
		/* a strong ETag: quoted, not W/ */
		assert_true(a->etag[0] == '"' && strlen(a->etag) > 10 && a->etag[strlen(a->etag) - 1] == '"');
		text = source(want[i].name, &len);
		if (text) {
			assert_int_equal(a->len, len);
			assert_memory_equal(a->data, text, len);
			free(text);
		}
	}
	/* two files, two tags */
	assert_string_not_equal(kerf_ui_find("/ui/app.js")->etag, kerf_ui_find("/ui/style.css")->etag);
}

static void test_paths(void **state)
{
	const struct kerf_ui_asset *page = kerf_ui_find("/ui/index.html");

	(void)state;
	assert_ptr_equal(kerf_ui_find("/"), page);
	assert_ptr_equal(kerf_ui_find("/ui"), page);
	assert_ptr_equal(kerf_ui_find("/ui/"), page);
	assert_null(kerf_ui_find("/ui/nope.js"));
	assert_null(kerf_ui_find("/ui/../ui/app.js"));
	assert_null(kerf_ui_find("/app.js"));
	assert_null(kerf_ui_find("/index.html"));
	assert_true(kerf_ui_is_path("/"));
	assert_true(kerf_ui_is_path("/ui"));
	assert_true(kerf_ui_is_path("/ui/x"));
	assert_false(kerf_ui_is_path("/uix"));
	assert_false(kerf_ui_is_path("/api/v1/gpus"));
	assert_false(kerf_ui_is_path("/metrics"));
}

static void test_csp(void **state)
{
	const struct kerf_ui_asset *page = kerf_ui_find("/");
	char *html = malloc(page->len + 1);
	const char *p;

	(void)state;
	assert_non_null(strstr(KERF_UI_CSP, "default-src 'none'"));
	assert_non_null(strstr(KERF_UI_CSP, "script-src 'self'"));
	assert_non_null(strstr(KERF_UI_CSP, "frame-ancestors 'none'"));
	assert_null(strstr(KERF_UI_CSP, "unsafe"));
	assert_null(strstr(KERF_UI_CSP, "data:"));
	/* the page obeys it: every script is a file, no style or handler inline */
	assert_non_null(html);
	memcpy(html, page->data, page->len);
	html[page->len] = '\0';
	for (p = strstr(html, "<script"); p; p = strstr(p + 1, "<script")) {
		const char *end = strchr(p, '>');
		char tag[256];

		assert_true(end && (size_t)(end - p) < sizeof(tag));
		memcpy(tag, p, (size_t)(end - p));
		tag[end - p] = '\0';
		if (!strstr(tag, " src=\"/ui/"))
			fail_msg("an inline script: %s", tag);
	}
	assert_null(strstr(html, "<style"));
	assert_null(strstr(html, " style="));
	assert_null(strstr(html, " onclick="));
	assert_null(strstr(html, " onload="));
	free(html);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_csp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
