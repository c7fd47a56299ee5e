/* JSON Patch (RFC 6902): add, remove, replace, move, copy and test. */
#include "format/json_patch.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pointer_parent(json_t *doc, const char *ptr, json_t **parent,
			  char *last, size_t size)
{
	const char *p = ptr;
	json_t *cur = doc;

	if (*p != '/')
		return -1;
	for (;;) {
		char tok[512];
		size_t n = 0;

		p++;
		while (*p && *p != '/' && n + 1 < sizeof(tok)) {
			if (p[0] == '~' && p[1] == '0') {
				tok[n++] = '~';
				p += 2;
			} else if (p[0] == '~' && p[1] == '1') {
				tok[n++] = '/';
				p += 2;
			} else {
				tok[n++] = *p++;
			}
		}
		tok[n] = 0;
		if (!*p) {
			*parent = cur;
			snprintf(last, size, "%s", tok);
			return 0;
		}
		if (*p != '/')
			return -1;
		if (json_is_object(cur)) {
			cur = json_object_get(cur, tok);
		} else if (json_is_array(cur)) {
			char *end;
			unsigned long i = strtoul(tok, &end, 10);

			if (*end || !*tok)
				return -1;
			cur = json_array_get(cur, i);
		} else {
			return -1;
		}
		if (!cur)
			return -1;
	}
}

static json_t *pointer_get(json_t *doc, const char *ptr)
{
	json_t *parent;
	char last[512];

	if (!*ptr)
		return doc;
	if (pointer_parent(doc, ptr, &parent, last, sizeof(last)) < 0)
		return NULL;
	if (json_is_object(parent))
		return json_object_get(parent, last);
	if (json_is_array(parent)) {
		char *end;
		unsigned long i = strtoul(last, &end, 10);

		return *end || !*last ? NULL : json_array_get(parent, i);
	}
	return NULL;
}

static int array_index(const json_t *arr, const char *tok, bool add,
		       size_t *out)
{
	char *end;
	unsigned long i;

	if (add && !strcmp(tok, "-")) {
		*out = json_array_size(arr);
		return 0;
	}
	i = strtoul(tok, &end, 10);
	if (*end || !*tok || i > json_array_size(arr) - (add ? 0 : 1) ||
	    (!add && !json_array_size(arr)))
		return -1;
	*out = i;
	return 0;
}

static int op_add(json_t *doc, const char *path, json_t *val)
{
	json_t *parent;
	char last[512];
	size_t i;

	if (pointer_parent(doc, path, &parent, last, sizeof(last)) < 0)
		goto fail;
	if (json_is_object(parent))
		return json_object_set_new(parent, last, val);
	if (json_is_array(parent) && array_index(parent, last, true, &i) == 0)
		return json_array_insert_new(parent, i, val);
fail:
	json_decref(val);
	return -1;
}

static json_t *op_remove(json_t *doc, const char *path)
{
	json_t *parent, *v;
	char last[512];
	size_t i;

	if (pointer_parent(doc, path, &parent, last, sizeof(last)) < 0)
		return NULL;
	if (json_is_object(parent)) {
		v = json_incref(json_object_get(parent, last));
		if (v)
			json_object_del(parent, last);
		return v;
	}
	if (json_is_array(parent) && array_index(parent, last, false, &i) == 0) {
		v = json_incref(json_array_get(parent, i));
		json_array_remove(parent, i);
		return v;
	}
	return NULL;
}

int kerf_json_patch_apply(json_t *doc, const json_t *ops, char *msg,
		       size_t size)
{
	json_t *op;
	size_t i;

	if (!json_is_array(ops)) {
		snprintf(msg, size, "json patch is not an array");
		return -1;
	}
	json_array_foreach(ops, i, op) {
		const char *o = json_string_value(json_object_get(op, "op"));
		const char *path = json_string_value(json_object_get(op, "path"));
		const char *from = json_string_value(json_object_get(op, "from"));
		json_t *val = json_object_get(op, "value"), *v;

		if (!o || !path) {
			snprintf(msg, size, "operation %zu lacks op or path", i);
			return -1;
		}
		if (!strcmp(o, "test")) {
			if (!json_equal(pointer_get(doc, path), val)) {
				snprintf(msg, size, "testing value %s failed", path);
				return -2;
			}
		} else if (!strcmp(o, "add")) {
			if (!val || op_add(doc, path, json_deep_copy(val)) < 0)
				goto bad;
		} else if (!strcmp(o, "remove")) {
			v = op_remove(doc, path);
			if (!v)
				goto bad;
			json_decref(v);
		} else if (!strcmp(o, "replace")) {
			v = op_remove(doc, path);
			if (!v || !val)
				goto bad_v;
			json_decref(v);
			if (op_add(doc, path, json_deep_copy(val)) < 0)
				goto bad;
		} else if (!strcmp(o, "move") || !strcmp(o, "copy")) {
			if (!from)
				goto bad;
			v = !strcmp(o, "move") ? op_remove(doc, from) :
				json_deep_copy(pointer_get(doc, from));
			if (!v || op_add(doc, path, v) < 0)
				goto bad;
		} else {
			snprintf(msg, size, "unexpected kind: %s", o);
			return -1;
		}
		continue;
bad_v:
		json_decref(v);
bad:
		snprintf(msg, size, "%s operation does not apply: doc is missing path: \"%s\"",
			 o, path);
		return -1;
	}
	return 0;
}
