/*
 * snapshot_read: kerf get, explain and top on a file of `kerf sim
 * snapshot` (view/snapshot.h) instead of kerf serve: a path of the
 * read-only API picks the view of the same shape from the file.
 */
#include "cmd/api_client.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"

/* The snapshot in file, checked to be one: NULL after a message. */
static json_t *load(const char *prog, const char *file)
{
	json_error_t e;
	json_t *j = json_load_file(file, 0, &e);
	char shown[300];

	kerf_escape(shown, sizeof(shown), file);
	if (!j) {
		fprintf(stderr, "%s: --snapshot '%s': %s (line %d)\n", prog, shown, e.text, e.line);
		return NULL;
	}
	if (!json_is_object(j) || strcmp(kerf_cli_str(j, "kind"), "Snapshot") ||
	    strcmp(kerf_cli_str(j, "apiVersion"), "kerf.io/api/v1")) {
		fprintf(stderr, "%s: --snapshot '%s': not a snapshot (apiVersion must be kerf.io/api/v1 and kind Snapshot, as kerf sim snapshot writes)\n",
			prog, shown);
		json_decref(j);
		return NULL;
	}
	return j;
}

/* The Explanation in snap's "explanations" whose workload.key is key. */
static json_t *explanation(const json_t *snap, const char *key)
{
	const json_t *w;
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(snap, "explanations"), i, e) {
		w = json_object_get(e, "workload");
		if (json_is_object(e) && json_is_string(json_object_get(w, "key")) &&
		    !strcmp(json_string_value(json_object_get(w, "key")), key))
			return e;
	}
	return NULL;
}

int kerf_cli_fetch(const char *prog, const char *server, const char *snapshot,
		   const char *path, json_t **out)
{
	static const char views[] = "/api/v1/";
	static const char explain[] = "/api/v1/explain/";
	char shown[300], fshown[300];
	const char *key;
	json_t *snap, *v;

	if (!snapshot)
		return kerf_cli_get(prog, kerf_cli_server(server), path, out);
	if (!(snap = load(prog, snapshot)))
		return 1;
	kerf_escape(fshown, sizeof(fshown), snapshot);
	if (!strncmp(path, explain, strlen(explain))) {
		key = path + strlen(explain);
		v = explanation(snap, key);
		if (!v) {
			fprintf(stderr, "%s: '%s' is not pending in snapshot '%s' (it explains every workload pending then; kerf get queue --snapshot lists them)\n",
				prog, kerf_escape(shown, sizeof(shown), key), fshown);
			json_decref(snap);
			return 1;
		}
	} else {
		key = path + strlen(views);
		v = json_object_get(snap, key);
		if (!json_is_object(v) || !json_is_array(json_object_get(v, "items"))) {
			fprintf(stderr, "%s: snapshot '%s' has no \"%s\" view with items (written by another version of kerf?)\n",
				prog, fshown, kerf_escape(shown, sizeof(shown), key));
			json_decref(snap);
			return 1;
		}
	}
	*out = json_incref(v);
	json_decref(snap);
	return 0;
}
