/*
 * select: label selectors (equality, !=, set-based in/notin, exists and
 * !key) and field selectors (=, ==, != over the fields each kind supports;
 * any other field is 400 "field label not supported"), parsed as
 * k8s.io/apimachinery's labels.Parse and fields.ParseSelector read them.
 */
#include "testapi/testapi_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/grow.h"

enum op { OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_EXISTS, OP_NOTEXISTS };

struct req {
	bool field;
	enum op op;
	char *key;
	char **vals;
	size_t nr_vals, alloc_vals;
};

struct kerf_ta_sel {
	struct req *reqs;
	size_t nr, alloc;
	bool events_view;          /* events.k8s.io field names */
};

void kerf_ta_sel_free(struct kerf_ta_sel *s)
{
	size_t i, j;

	if (!s)
		return;
	for (i = 0; i < s->nr; i++) {
		free(s->reqs[i].key);
		for (j = 0; j < s->reqs[i].nr_vals; j++)
			free(s->reqs[i].vals[j]);
		free(s->reqs[i].vals);
	}
	free(s->reqs);
	free(s);
}

enum tok { T_END, T_IDENT, T_EQ, T_DEQ, T_NE, T_NOT, T_COMMA, T_OPEN,
	   T_CLOSE, T_IN, T_NOTIN };

struct lexer {
	const char *p;
	char text[320];
};

static bool ident_char(char c)
{
	return c && !strchr(" \t\n,()=!", c);
}

static enum tok lex(struct lexer *lx)
{
	size_t n = 0;

	while (*lx->p == ' ' || *lx->p == '\t' || *lx->p == '\n')
		lx->p++;
	lx->text[0] = 0;
	if (!*lx->p)
		return T_END;
	switch (*lx->p) {
	case ',':
		lx->p++;
		snprintf(lx->text, sizeof(lx->text), ",");
		return T_COMMA;
	case '(':
		lx->p++;
		snprintf(lx->text, sizeof(lx->text), "(");
		return T_OPEN;
	case ')':
		lx->p++;
		snprintf(lx->text, sizeof(lx->text), ")");
		return T_CLOSE;
	case '=':
		lx->p++;
		if (*lx->p == '=') {
			lx->p++;
			snprintf(lx->text, sizeof(lx->text), "==");
			return T_DEQ;
		}
		snprintf(lx->text, sizeof(lx->text), "=");
		return T_EQ;
	case '!':
		lx->p++;
		if (*lx->p == '=') {
			lx->p++;
			snprintf(lx->text, sizeof(lx->text), "!=");
			return T_NE;
		}
		snprintf(lx->text, sizeof(lx->text), "!");
		return T_NOT;
	}
	while (ident_char(*lx->p) && n + 1 < sizeof(lx->text))
		lx->text[n++] = *lx->p++;
	lx->text[n] = 0;
	if (!strcmp(lx->text, "in"))
		return T_IN;
	if (!strcmp(lx->text, "notin"))
		return T_NOTIN;
	return T_IDENT;
}

static int add_val(struct req *r, const char *v)
{
	if (KERF_GROW(r->vals, r->alloc_vals, r->nr_vals + 1) < 0)
		return -1;
	r->vals[r->nr_vals] = kerf_strdup(v);
	if (!r->vals[r->nr_vals])
		return -1;
	r->nr_vals++;
	return 0;
}

static struct req *new_req(struct kerf_ta_sel *s, const char *key, bool field)
{
	struct req *r;

	if (KERF_GROW(s->reqs, s->alloc, s->nr + 1) < 0)
		return NULL;
	r = &s->reqs[s->nr];
	memset(r, 0, sizeof(*r));
	r->key = kerf_strdup(key);
	if (!r->key)
		return NULL;
	r->field = field;
	s->nr++;
	return r;
}

static int parse_labels(struct kerf_ta_sel *s, const char *text, char *msg,
			size_t size)
{
	struct lexer lx = { .p = text };
	enum tok t;

	for (;;) {
		struct req *r;
		bool neg = false;

		t = lex(&lx);
		if (t == T_END)
			return 0;
		if (t == T_NOT) {
			neg = true;
			t = lex(&lx);
		}
		if (t != T_IDENT) {
			snprintf(msg, size,
				 "unable to parse requirement: found '%s', expected: identifier",
				 lx.text);
			return -1;
		}
		if (!kerf_ta_valid_qualified_name(lx.text)) {
			snprintf(msg, size,
				 "unable to parse requirement: invalid label key \"%s\"",
				 lx.text);
			return -1;
		}
		r = new_req(s, lx.text, false);
		if (!r)
			goto oom;
		if (neg) {
			r->op = OP_NOTEXISTS;
			t = lex(&lx);
			goto next;
		}
		t = lex(&lx);
		if (t == T_END || t == T_COMMA) {
			r->op = OP_EXISTS;
			goto next;
		}
		if (t == T_EQ || t == T_DEQ || t == T_NE) {
			const char *save = lx.p;

			r->op = t == T_NE ? OP_NE : OP_EQ;
			t = lex(&lx);
			if (t == T_END || t == T_COMMA) {
				lx.p = save;
				if (add_val(r, "") < 0)
					goto oom;
				t = lex(&lx);
				goto next;
			}
			if (t != T_IDENT) {
				snprintf(msg, size,
					 "unable to parse requirement: found '%s', expected: identifier",
					 lx.text);
				return -1;
			}
			if (add_val(r, lx.text) < 0)
				goto oom;
			t = lex(&lx);
			goto next;
		}
		if (t == T_IN || t == T_NOTIN) {
			r->op = t == T_IN ? OP_IN : OP_NOTIN;
			if (lex(&lx) != T_OPEN) {
				snprintf(msg, size,
					 "unable to parse requirement: found '%s', expected: '('",
					 lx.text);
				return -1;
			}
			for (;;) {
				t = lex(&lx);
				if (t == T_IDENT) {
					if (add_val(r, lx.text) < 0)
						goto oom;
					t = lex(&lx);
				}
				if (t == T_CLOSE)
					break;
				if (t != T_COMMA) {
					snprintf(msg, size,
						 "unable to parse requirement: found '%s', expected: ',' or ')'",
						 lx.text);
					return -1;
				}
			}
			t = lex(&lx);
			goto next;
		}
		snprintf(msg, size,
			 "unable to parse requirement: found '%s', expected: in, notin, =, ==, !=, gt, lt",
			 lx.text);
		return -1;
next:
		if (t == T_END)
			return 0;
		if (t != T_COMMA) {
			snprintf(msg, size,
				 "unable to parse requirement: found '%s', expected: ','",
				 lx.text);
			return -1;
		}
	}
oom:
	snprintf(msg, size, "out of memory");
	return -1;
}

static const char *const pod_fields[] = {
	"spec.nodeName", "spec.schedulerName", "status.phase",
	"spec.serviceAccountName", "spec.restartPolicy", "status.podIP",
	"status.nominatedNodeName", NULL,
};
static const char *const event_fields[] = {
	"involvedObject.kind", "involvedObject.namespace",
	"involvedObject.name", "involvedObject.uid",
	"involvedObject.apiVersion", "involvedObject.resourceVersion",
	"involvedObject.fieldPath", "reason", "reportingComponent", "type",
	NULL,
};

static bool in_list(const char *const *l, const char *s)
{
	for (; *l; l++)
		if (!strcmp(*l, s))
			return true;
	return false;
}

/* The stored (core) name of a field selector key of kind k, or NULL. */
static const char *field_name(const struct kerf_ta_kind *k, const char *key,
			      char *buf, size_t size)
{
	if (!strcmp(key, "metadata.name") || !strcmp(key, "metadata.namespace"))
		return key;
	if (!strcmp(k->plural, "pods") && in_list(pod_fields, key))
		return key;
	if (!strcmp(k->plural, "nodes") && !strcmp(key, "spec.unschedulable"))
		return key;
	if (!strcmp(k->plural, "namespaces") && !strcmp(key, "status.phase"))
		return key;
	if (!strcmp(k->plural, "events") && !*k->group &&
	    in_list(event_fields, key))
		return key;
	if (!strcmp(k->plural, "events") && *k->group) {
		if (!strncmp(key, "regarding.", 10)) {
			snprintf(buf, size, "involvedObject.%s", key + 10);
			return in_list(event_fields, buf) ? buf : NULL;
		}
		if (!strcmp(key, "reportingController"))
			return "reportingComponent";
		if (!strcmp(key, "reason") || !strcmp(key, "type"))
			return key;
	}
	return NULL;
}

static int parse_fields(struct kerf_ta_sel *s, const struct kerf_ta_kind *k,
			const char *text, char *msg, size_t size)
{
	const char *p = text;

	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char term[512], buf[600];
		const char *name;
		char *op, *val;
		struct req *r;
		enum op o;

		if (n >= sizeof(term)) {
			snprintf(msg, size, "invalid selector: field selector too long");
			return -1;
		}
		memcpy(term, p, n);
		term[n] = 0;
		p += n + (end ? 1 : 0);
		if ((op = strstr(term, "!="))) {
			o = OP_NE;
			*op = 0;
			val = op + 2;
		} else if ((op = strstr(term, "=="))) {
			o = OP_EQ;
			*op = 0;
			val = op + 2;
		} else if ((op = strchr(term, '='))) {
			o = OP_EQ;
			*op = 0;
			val = op + 1;
		} else {
			snprintf(msg, size, "invalid selector: '%s'; can't understand '%s'",
				 text, term);
			return -1;
		}
		name = field_name(k, term, buf, sizeof(buf));
		if (!name) {
			snprintf(msg, size, "field label not supported: %s", term);
			return -1;
		}
		r = new_req(s, name, true);
		if (!r || add_val(r, val) < 0) {
			snprintf(msg, size, "out of memory");
			return -1;
		}
		r->op = o;
	}
	return 0;
}

int kerf_ta_sel_parse(const char *label, const char *field,
		      const struct kerf_ta_kind *k, struct kerf_ta_sel **out,
		      char *msg, size_t size)
{
	struct kerf_ta_sel *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s) {
		snprintf(msg, size, "out of memory");
		return -1;
	}
	if ((label && parse_labels(s, label, msg, size) < 0) ||
	    (field && parse_fields(s, k, field, msg, size) < 0)) {
		kerf_ta_sel_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

static const char *field_value(const json_t *obj, const char *key,
			       char *buf, size_t size)
{
	const json_t *v = kerf_ta_path(obj, key);

	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_true(v))
		return "true";
	if (json_is_false(v) || (!v && !strcmp(key, "spec.unschedulable")))
		return "false";
	if (json_is_integer(v)) {
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return "";
}

bool kerf_ta_sel_match(const struct kerf_ta_sel *s, const json_t *obj)
{
	const json_t *labels = kerf_ta_path(obj, "metadata.labels");
	size_t i, j;

	if (!s)
		return true;
	for (i = 0; i < s->nr; i++) {
		const struct req *r = &s->reqs[i];
		char buf[32];
		const char *v = r->field ?
			field_value(obj, r->key, buf, sizeof(buf)) :
			json_string_value(json_object_get(labels, r->key));
		bool any = false;

		switch (r->op) {
		case OP_EQ:
			if (!v || strcmp(v, r->vals[0]))
				return false;
			break;
		case OP_NE:
			if (v && !strcmp(v, r->vals[0]))
				return false;
			break;
		case OP_EXISTS:
			if (!v)
				return false;
			break;
		case OP_NOTEXISTS:
			if (v)
				return false;
			break;
		case OP_IN:
		case OP_NOTIN:
			for (j = 0; v && j < r->nr_vals; j++)
				any |= !strcmp(v, r->vals[j]);
			if (r->op == OP_IN ? !any : any)
				return false;
			break;
		}
	}
	return true;
}

/* A LabelSelector object (matchLabels, matchExpressions) against labels. */
bool kerf_ta_labels_match(const json_t *selector, const json_t *labels)
{
	const char *key;
	json_t *v, *e;
	size_t i, j;

	if (!json_is_object(selector))
		return false;
	json_object_foreach(json_object_get(selector, "matchLabels"), key, v) {
		const char *l = json_string_value(json_object_get(labels, key));

		if (!l || !json_is_string(v) || strcmp(l, json_string_value(v)))
			return false;
	}
	json_array_foreach(json_object_get(selector, "matchExpressions"), i, e) {
		const char *k = json_string_value(json_object_get(e, "key"));
		const char *op = json_string_value(json_object_get(e, "operator"));
		const char *l = k ? json_string_value(json_object_get(labels, k)) : NULL;
		bool any = false;
		json_t *val;

		if (!k || !op)
			return false;
		json_array_foreach(json_object_get(e, "values"), j, val)
			any |= l && json_is_string(val) &&
			       !strcmp(l, json_string_value(val));
		if ((!strcmp(op, "In") && !any) ||
		    (!strcmp(op, "NotIn") && any) ||
		    (!strcmp(op, "Exists") && !l) ||
		    (!strcmp(op, "DoesNotExist") && l))
			return false;
	}
	return true;
}
