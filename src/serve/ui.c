/*
 * ui: see ui.h.  The files are constant and in the binary, so each answer
 * hands libmicrohttpd the bytes where they are (MHD_RESPMEM_PERSISTENT).
 */
#include "serve/ui.h"

#include <string.h>

const struct kerf_ui_asset *kerf_ui_find(const char *url)
{
	if (!strcmp(url, "/") || !strcmp(url, "/ui") || !strcmp(url, "/ui/"))
		url = "/ui/index.html";
	for (size_t i = 0; i < kerf_ui_nr_assets; i++)
		if (!strcmp(kerf_ui_assets[i].path, url))
			return &kerf_ui_assets[i];
	return NULL;
}

bool kerf_ui_is_path(const char *url)
{
	return !strcmp(url, "/") || !strcmp(url, "/ui") || !strncmp(url, "/ui/", 4);
}

/* Does an If-None-Match list (or "*") name etag? */
static bool etag_matches(const char *list, const char *etag)
{
	size_t n = strlen(etag);

	if (!list)
		return false;
	if (!strcmp(list, "*"))
		return true;
	for (const char *p = strstr(list, etag); p; p = strstr(p + 1, etag))
		if ((p == list || p[-1] == ' ' || p[-1] == ',' || p[-1] == '/') &&
		    (p[n] == '\0' || p[n] == ',' || p[n] == ' '))
			return true;
	return false;
}

static void security_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "Content-Security-Policy", KERF_UI_CSP);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

enum MHD_Result kerf_ui_serve(struct MHD_Connection *conn, const char *url,
			      const char *if_none_match)
{
	static const char missing[] = "not found\n";
	const struct kerf_ui_asset *a = kerf_ui_find(url);
	bool same = a && etag_matches(if_none_match, a->etag);
	struct MHD_Response *r;
	enum MHD_Result ret;
	unsigned status;

	if (!a)
		r = MHD_create_response_from_buffer(sizeof(missing) - 1, (void *)missing,
						    MHD_RESPMEM_PERSISTENT);
	else
		r = MHD_create_response_from_buffer(same ? 0 : a->len, (void *)a->data,
						    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	security_headers(r);
	if (a) {
		MHD_add_response_header(r, "Content-Type", a->content_type);
		MHD_add_response_header(r, "Cache-Control", "no-cache");
		MHD_add_response_header(r, "ETag", a->etag);
		status = same ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK;
	} else {
		MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
		status = MHD_HTTP_NOT_FOUND;
	}
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}
