#include "kobj/pdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/grow.h"
#include "kobj/json_field.h"


static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

uint64_t kerf_label_hash(const char *key, const char *value)
{
	/* 0xff and 0xfe never occur in a label: key=value and key differ */
	uint64_t h = fnv(14695981039346656037ull, key);

	h ^= value ? 0xff : 0xfe;
	h *= 1099511628211ull;
	return value ? fnv(h, value) : h;
}

struct decode {
	struct kerf_kpdb *b;
	size_t alloc_terms, alloc_values;
	struct kerf_err *err;
};

static int add_term(struct decode *d, const char *key, uint8_t op,
		    const char *path)
{
	struct kerf_kpdb *b = d->b;

	if (b->nr_terms >= KERF_PDB_MAX_TERMS)
		return kerf_err_set(d->err, -KERF_EPARSE,
				    "%s: more than %d selector terms", path,
				    KERF_PDB_MAX_TERMS);
	if (KERF_GROW(b->terms, d->alloc_terms, (size_t)b->nr_terms + 1) < 0)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	b->terms[b->nr_terms++] = (struct kerf_sel_term){
		.key = kerf_label_hash(key, NULL), .first = b->nr_values, .op = op,
	};
	return 0;
}

static int add_value(struct decode *d, const char *key, const char *value,
		     const char *path)
{
	struct kerf_kpdb *b = d->b;

	if (b->nr_values >= KERF_PDB_MAX_VALUES)
		return kerf_err_set(d->err, -KERF_EPARSE,
				    "%s: more than %d selector values", path,
				    KERF_PDB_MAX_VALUES);
	if (KERF_GROW(b->values, d->alloc_values, (size_t)b->nr_values + 1) < 0)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	b->values[b->nr_values++] = kerf_label_hash(key, value);
	b->terms[b->nr_terms - 1].nr++;
	return 0;
}

static int match_labels(struct decode *d, const json_t *sel)
{
	const json_t *ml, *v;
	const char *key;
	char shown[80];
	int rc;

	if ((rc = kerf_json_object(sel, "matchLabels", "spec.selector", &ml, d->err)) < 0)
		return rc;
	json_object_foreach((json_t *)ml, key, v) {
		if (!json_is_string(v))
			return kerf_err_set(d->err, -KERF_EPARSE,
					    "spec.selector.matchLabels.%s: expected a string, got %s",
					    kerf_escape(shown, sizeof(shown), key),
					    kerf_json_type_name(v));
		if ((rc = add_term(d, key, KERF_SEL_IN, "spec.selector.matchLabels")) < 0 ||
		    (rc = add_value(d, key, json_string_value(v), "spec.selector.matchLabels")) < 0)
			return rc;
	}
	return 0;
}

static int expression(struct decode *d, const json_t *e, size_t i)
{
	static const char *ops[] = { "In", "NotIn", "Exists", "DoesNotExist" };
	char path[96], shown[80];
	const json_t *values;
	const char *key, *op;
	size_t k;
	int rc;

	snprintf(path, sizeof(path), "spec.selector.matchExpressions[%zu]", i);
	if (!json_is_object(e))
		return kerf_err_set(d->err, -KERF_EPARSE, "%s: expected an object, got %s",
				    path, kerf_json_type_name(e));
	if ((rc = kerf_json_string(e, "key", path, &key, d->err)) < 0 ||
	    (rc == 0 && (rc = kerf_json_string(e, "operator", path, &op, d->err)) < 0))
		return rc;
	if (!key || !*key)
		return kerf_err_set(d->err, -KERF_EPARSE, "%s.key: missing", path);
	if (rc == 1 || !op)
		return kerf_err_set(d->err, -KERF_EPARSE, "%s.operator: missing", path);
	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (!strcmp(op, ops[k]))
			break;
	if (k == sizeof(ops) / sizeof(ops[0]))
		return kerf_err_set(d->err, -KERF_EPARSE,
				    "%s.operator '%s': expected In, NotIn, Exists or DoesNotExist",
				    path, kerf_escape(shown, sizeof(shown), op));
	if ((rc = kerf_json_array(e, "values", path, &values, d->err)) < 0)
		return rc;
	if (k <= KERF_SEL_NOT_IN && json_array_size(values) == 0)
		return kerf_err_set(d->err, -KERF_EPARSE,
				    "%s.values: %s needs at least one value", path, op);
	if (k > KERF_SEL_NOT_IN && json_array_size(values) > 0)
		return kerf_err_set(d->err, -KERF_EPARSE,
				    "%s.values: %s takes no values", path, op);
	if ((rc = add_term(d, key, (uint8_t)k, path)) < 0)
		return rc;
	for (size_t j = 0; j < json_array_size(values); j++) {
		const json_t *v = json_array_get(values, j);

		if (!json_is_string(v))
			return kerf_err_set(d->err, -KERF_EPARSE,
					    "%s.values[%zu]: expected a string, got %s",
					    path, j, kerf_json_type_name(v));
		if ((rc = add_value(d, key, json_string_value(v), path)) < 0)
			return rc;
	}
	return 0;
}

static int copy_name(struct decode *d, const json_t *meta, const char *key,
		     char *out, size_t size)
{
	const char *s;
	int rc = kerf_json_string(meta, key, "metadata", &s, d->err);

	if (rc < 0)
		return rc;
	if (rc == 1 || !*s)
		return kerf_err_set(d->err, -KERF_EPARSE, "metadata.%s: missing", key);
	if (strlen(s) >= size)
		return kerf_err_set(d->err, -KERF_EPARSE,
				    "metadata.%s: longer than %zu bytes", key, size - 1);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

static int decode(struct decode *d, const json_t *obj)
{
	struct kerf_kpdb *b = d->b;
	const json_t *meta, *spec, *sel, *exprs, *status;
	long long gen = 0, observed = -1, allowed = 0;
	int rc;

	if (!json_is_object(obj))
		return kerf_err_set(d->err, -KERF_EPARSE,
				    "PodDisruptionBudget: expected an object, got %s",
				    kerf_json_type_name(obj));
	if ((rc = kerf_json_object(obj, "metadata", "", &meta, d->err)) < 0 ||
	    (rc = copy_name(d, meta, "namespace", b->ns, sizeof(b->ns))) < 0 ||
	    (rc = copy_name(d, meta, "name", b->name, sizeof(b->name))) < 0)
		return rc;
	if ((rc = kerf_json_int(meta, "generation", "metadata", 0, INT64_MAX, &gen,
				d->err)) < 0 ||
	    (rc = kerf_json_object(obj, "spec", "", &spec, d->err)) < 0 ||
	    (rc = kerf_json_object(spec, "selector", "spec", &sel, d->err)) < 0)
		return rc;
	b->has_selector = sel != NULL;
	if ((rc = match_labels(d, sel)) < 0 ||
	    (rc = kerf_json_array(sel, "matchExpressions", "spec.selector", &exprs, d->err)) < 0)
		return rc;
	for (size_t i = 0; i < json_array_size(exprs); i++)
		if ((rc = expression(d, json_array_get(exprs, i), i)) < 0)
			return rc;
	if ((rc = kerf_json_object(obj, "status", "", &status, d->err)) < 0 ||
	    (rc = kerf_json_int(status, "observedGeneration", "status", 0, INT64_MAX,
				&observed, d->err)) < 0 ||
	    (rc = kerf_json_int(status, "disruptionsAllowed", "status", INT32_MIN,
				INT32_MAX, &allowed, d->err)) < 0)
		return rc;
	/* no computed status: the eviction would refuse, as for allowing 0 */
	b->observed = observed >= 0 && observed >= gen;
	b->disruptions_allowed = (int32_t)allowed;
	return 0;
}

int kerf_kpdb_decode(const json_t *obj, struct kerf_kpdb *out,
		     struct kerf_err *err)
{
	struct kerf_kpdb b = { 0 };
	struct decode d = { .b = &b, .err = err };
	int rc = decode(&d, obj);

	if (rc < 0) {
		kerf_kpdb_release(&b);
		return rc;
	}
	*out = b;
	return 0;
}

void kerf_kpdb_release(struct kerf_kpdb *b)
{
	if (!b)
		return;
	free(b->terms);
	free(b->values);
	memset(b, 0, sizeof(*b));
}

static bool has(const uint64_t *labels, size_t nr, size_t at, uint64_t h)
{
	for (size_t i = 0; i < nr; i++)
		if (labels[2 * i + at] == h)
			return true;
	return false;
}

bool kerf_kpdb_selects(const struct kerf_kpdb *b, const uint64_t *labels,
		       size_t nr)
{
	if (!b->has_selector)
		return false;
	for (uint16_t t = 0; t < b->nr_terms; t++) {
		const struct kerf_sel_term *s = &b->terms[t];
		bool any = false;

		for (uint32_t v = 0; v < s->nr && !any; v++)
			any = has(labels, nr, 1, b->values[s->first + v]);
		switch (s->op) {
		case KERF_SEL_IN:
			if (!any)
				return false;
			break;
		case KERF_SEL_NOT_IN:
			if (any)
				return false;
			break;
		case KERF_SEL_EXISTS:
			if (!has(labels, nr, 0, s->key))
				return false;
			break;
		default:
			if (has(labels, nr, 0, s->key))
				return false;
			break;
		}
	}
	return true;
}
