/*
 * yaml_json: YAML trees as JSON values, and multi-document YAML files
 * (kubectl's `---` separated manifests) as arrays of them.
 */
#include "format/yaml_json.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *scalar(const struct kerf_yaml_node *n)
{
	const char *s = n->text;
	char *end;
	long long ll;
	double d;

	if (!n->plain)
		return json_stringn(s, n->len);
	if (kerf_yaml_is_null(n))
		return json_null();
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		return json_true();
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return json_false();
	ll = strtoll(s, &end, 10);
	if (*s && !*end)
		return json_integer(ll);
	d = strtod(s, &end);
	if (*s && !*end && strpbrk(s, "0123456789"))
		return json_real(d);
	return json_stringn(s, n->len);
}

json_t *kerf_yaml_to_json(const struct kerf_yaml_node *n)
{
	json_t *out;
	size_t i;

	switch (n->kind) {
	case KERF_YAML_SCALAR:
		return scalar(n);
	case KERF_YAML_SEQ:
		out = json_array();
		for (i = 0; out && i < n->nr; i++)
			json_array_append_new(out, kerf_yaml_to_json(n->items[i]));
		return out;
	case KERF_YAML_MAP:
		out = json_object();
		for (i = 0; out && i < n->nr; i++)
			json_object_set_new(out, n->pairs[i].key->text,
					    kerf_yaml_to_json(n->pairs[i].value));
		return out;
	}
	return NULL;
}

/* Is the line at s a document marker ("---" or "--- ...", "...")? */
static bool marker(const char *s, const char *end)
{
	size_t n = (size_t)(end - s);

	if (n >= 3 && !strncmp(s, "---", 3) &&
	    (n == 3 || s[3] == ' ' || s[3] == '\t' || s[3] == '\r'))
		return true;
	return n >= 3 && !strncmp(s, "...", 3) && (n == 3 || s[3] == '\r');
}

static int load_one(const char *path, const char *text, size_t len,
		    const struct kerf_yaml_limits *lim, json_t *out,
		    struct kerf_err *err)
{
	struct kerf_yaml_doc doc;
	json_t *j;
	int rc = kerf_yaml_load(&doc, path, text, len, lim, err);

	if (rc < 0) {
		kerf_yaml_release(&doc);
		return rc;
	}
	if (!doc.root || kerf_yaml_is_null(doc.root)) {
		kerf_yaml_release(&doc);
		return 0;              /* an empty document */
	}
	j = kerf_yaml_to_json(doc.root);
	kerf_yaml_release(&doc);
	if (!j || json_array_append_new(out, j) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "%s: out of memory", path);
	return 0;
}

int kerf_yaml_load_json_docs(const char *path, const char *text, size_t len,
			     const struct kerf_yaml_limits *lim, json_t **out,
			     struct kerf_err *err)
{
	const char *end = text + len, *doc = text, *line = text;
	json_t *docs = json_array();
	int rc = 0;

	if (!docs)
		return kerf_err_set(err, -KERF_ENOMEM, "%s: out of memory", path);
	while (rc == 0 && line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *eol = nl ? nl : end;

		if (marker(line, eol)) {
			rc = load_one(path, doc, (size_t)(line - doc), lim, docs, err);
			/* "--- {a: 1}": the document starts on the marker's line */
			doc = (size_t)(eol - line) > 4 && line[0] == '-' ? line + 4 : (nl ? nl + 1 : end);
		}
		line = nl ? nl + 1 : end;
	}
	if (rc == 0)
		rc = load_one(path, doc, (size_t)(end - doc), lim, docs, err);
	if (rc < 0) {
		json_decref(docs);
		return rc;
	}
	*out = docs;
	return 0;
}
