/*
 * yaml_read: the field path, messages, mappings and common scalars of the
 * format/yaml_doc readers (see yaml_read.h).
 */
#include "format/yaml_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"

enum {
	KNOWN_MAX = 400,                   /* "unknown key (known: ...)" */
};

void kerf_yread_init(struct kerf_yread *r, const char *path,
		     struct kerf_err *err)
{
	memset(r, 0, sizeof(*r));
	kerf_escape(r->path, sizeof(r->path), path);
	r->err = err;
}

/* ---- messages and the field path ------------------------------------ */

int kerf_yread_fail(struct kerf_yread *r, const struct kerf_yaml_node *n,
		    const char *fmt, ...)
{
	char reason[KERF_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	if (r->field_len == 0)
		return kerf_err_set(r->err, -KERF_EPARSE, "%s:%u: %s", r->path,
				    n->line, reason);
	return kerf_err_set(r->err, -KERF_EPARSE, "%s:%u: %s: %s", r->path,
			    n->line, r->field, reason);
}

int kerf_yread_fail_key(struct kerf_yread *r, const struct kerf_yaml_node *at,
			const char *key, const char *reason)
{
	size_t mark = kerf_yread_push_key(r, key);
	int rc = kerf_yread_fail(r, at, "%s", reason);

	kerf_yread_pop(r, mark);
	return rc;
}

/* Append sep then text to the field path; returns the mark to pop to. */
static size_t push_text(struct kerf_yread *r, const char *sep,
			const char *text)
{
	size_t mark = r->field_len;
	int n = snprintf(r->field + mark, sizeof(r->field) - mark, "%s%s", sep,
			 text);

	if (n > 0)
		r->field_len += (size_t)n;
	if (r->field_len >= sizeof(r->field))
		r->field_len = sizeof(r->field) - 1;
	return mark;
}

size_t kerf_yread_push_key(struct kerf_yread *r, const char *key)
{
	return push_text(r, r->field_len ? "." : "", key);
}

size_t kerf_yread_push_key_node(struct kerf_yread *r,
				const struct kerf_yaml_node *k)
{
	char shown[KERF_YREAD_SHOWN_SIZE];

	kerf_yread_show(shown, sizeof(shown), k);
	return kerf_yread_push_key(r, shown);
}

size_t kerf_yread_push_index(struct kerf_yread *r, size_t i)
{
	char idx[32];

	snprintf(idx, sizeof(idx), "[%zu]", i);
	return push_text(r, "", idx);
}

void kerf_yread_pop(struct kerf_yread *r, size_t mark)
{
	r->field_len = mark;
	r->field[mark] = '\0';
}

/* ---- text for messages ---------------------------------------------- */

void kerf_yread_show(char *out, size_t size, const struct kerf_yaml_node *n)
{
	kerf_escape_n(out, size, n->text, n->len);
}

void kerf_yread_add_list(char *out, size_t size, size_t *used,
			 const char *item)
{
	int w;

	if (*used >= size)
		return;
	w = snprintf(out + *used, size - *used, "%s%s", *used ? ", " : "",
		     item);
	if (w > 0)
		*used += (size_t)w;
}

/* ---- mappings and scalars ------------------------------------------- */

bool kerf_yread_key_is(const struct kerf_yaml_node *k, const char *name)
{
	size_t len = strlen(name);

	return k->len == len && memcmp(k->text, name, len) == 0;
}

int kerf_yread_take_map(struct kerf_yread *r, const struct kerf_yaml_node *n,
			const char *const *keys, int nr_keys,
			const struct kerf_yaml_node **vals)
{
	for (int j = 0; j < nr_keys; j++)
		vals[j] = NULL;
	if (n->kind != KERF_YAML_MAP)
		return kerf_yread_fail(r, n, "must be a mapping");
	for (size_t i = 0; i < n->nr; i++) {
		const struct kerf_yaml_node *k = n->pairs[i].key;
		char known[KNOWN_MAX];
		size_t used = 0, mark;
		int j, rc;

		for (j = 0; j < nr_keys && !kerf_yread_key_is(k, keys[j]); j++)
			;
		if (j < nr_keys && !vals[j]) {
			vals[j] = n->pairs[i].value;
			continue;
		}
		if (j < nr_keys)
			return kerf_yread_fail_key(r, k, keys[j],
						   "given twice");
		known[0] = '\0';
		for (j = 0; j < nr_keys; j++)
			kerf_yread_add_list(known, sizeof(known), &used,
					    keys[j]);
		mark = kerf_yread_push_key_node(r, k);
		rc = kerf_yread_fail(r, k, "unknown key (known: %s)", known);
		kerf_yread_pop(r, mark);
		return rc;
	}
	return 0;
}

int kerf_yread_need(struct kerf_yread *r, const struct kerf_yaml_node *map,
		    const struct kerf_yaml_node *val, const char *key)
{
	return val ? 0 : kerf_yread_fail_key(r, map, key, "missing");
}

bool kerf_yread_is_scalar(const struct kerf_yaml_node *n)
{
	return n->kind == KERF_YAML_SCALAR && !kerf_yaml_is_null(n);
}

bool kerf_yread_is_text(const struct kerf_yaml_node *n)
{
	return kerf_yread_is_scalar(n) && n->len > 0 &&
	       strlen(n->text) == n->len;
}

int kerf_yread_get_name(struct kerf_yread *r, const struct kerf_yaml_node *n,
			size_t max, char *out)
{
	if (!kerf_yread_is_scalar(n) || n->len == 0 || n->len > max)
		return kerf_yread_fail(r, n, "must be a name of 1 to %zu bytes",
				       max);
	for (size_t i = 0; i < n->len; i++) {
		unsigned char ch = (unsigned char)n->text[i];

		if (ch <= ' ' || ch >= 0x7f)
			return kerf_yread_fail(r, n,
					       "byte 0x%02x is not allowed in a name",
					       ch);
	}
	memcpy(out, n->text, n->len + 1);
	return 0;
}

int kerf_yread_get_bool(struct kerf_yread *r, const struct kerf_yaml_node *n,
			bool *out)
{
	if (n->kind == KERF_YAML_SCALAR && n->plain &&
	    kerf_yread_key_is(n, "true")) {
		*out = true;
		return 0;
	}
	if (n->kind == KERF_YAML_SCALAR && n->plain &&
	    kerf_yread_key_is(n, "false")) {
		*out = false;
		return 0;
	}
	return kerf_yread_fail(r, n, "must be true or false");
}

int kerf_yread_key_name(struct kerf_yread *r, const struct kerf_yaml_node *v,
			const char *key, size_t max, char *out)
{
	int rc = 0;

	if (v)
		KERF_YREAD_UNDER_KEY(rc, r, key,
				     kerf_yread_get_name(r, v, max, out));
	return rc;
}

int kerf_yread_key_bool(struct kerf_yread *r, const struct kerf_yaml_node *v,
			const char *key, bool *out)
{
	int rc = 0;

	if (v)
		KERF_YREAD_UNDER_KEY(rc, r, key,
				     kerf_yread_get_bool(r, v, out));
	return rc;
}
