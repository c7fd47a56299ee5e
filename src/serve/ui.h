/*
 * ui: kerf serve's dashboard (docs/dashboard.md), plain HTML, CSS and
 * JavaScript kept in src/serve/ui/ and embedded into the binary at build
 * time (src/serve/ui/embed.py), served on the metrics listener next to
 * /api/v1/ (serve/endpoints.h):
 *   GET /, /ui, /ui/          the page (index.html)
 *   GET /ui/NAME              its script, style sheet and icon
 * Read-only: the page only GETs the read-only API.  Every answer carries
 * a Content-Security-Policy that allows nothing but this origin's own
 * script, style, images and API (no inline script or style, no frames,
 * no forms), X-Content-Type-Options: nosniff, and Cache-Control: no-cache
 * with a strong ETag of the file, so a browser asks again each time and
 * gets 304 Not Modified while the binary is the same.
 */
#ifndef KERF_SERVE_UI_H
#define KERF_SERVE_UI_H

#include <stdbool.h>
#include <stddef.h>

#include <microhttpd.h>

struct kerf_ui_asset {
	const char *path;            /* "/ui/app.js" */
	const char *content_type;    /* "text/javascript; charset=utf-8" */
	const char *etag;            /* "\"...\"", quotes included */
	const unsigned char *data;
	size_t len;
};

/* The embedded files (made by embed.py), by name. */
extern const struct kerf_ui_asset kerf_ui_assets[];
extern const size_t kerf_ui_nr_assets;

#define KERF_UI_CSP                                                             \
	"default-src 'none'; script-src 'self'; style-src 'self'; "            \
	"img-src 'self'; connect-src 'self'; base-uri 'none'; "                \
	"form-action 'none'; frame-ancestors 'none'"

/* The asset url names ("/", "/ui" and "/ui/" are index.html), or NULL. */
const struct kerf_ui_asset *kerf_ui_find(const char *url);

/* Is url the dashboard's ("/" or under "/ui")? */
bool kerf_ui_is_path(const char *url);

/*
 * Answer a GET or HEAD of url: 200 with the file, 304 when if_none_match
 * (the request's If-None-Match, or NULL) names its ETag, 404 when there is
 * no such file.
 */
enum MHD_Result kerf_ui_serve(struct MHD_Connection *conn, const char *url,
			      const char *if_none_match);

#endif
