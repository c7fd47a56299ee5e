/*
 * yaml_doc: libyaml's events folded into a tree (see yaml_doc.h).
 *
 * We use the event parser rather than yaml_parser_load because the loader
 * has no bound on depth or size, registers an anchor before its node is
 * complete (so "&a [*a]" makes a cycle) and resolves aliases into a graph
 * that a naive walk expands exponentially.  Here each open collection is a
 * frame on a stack no deeper than max_depth, an anchor is registered when
 * its node ends, and an alias is charged the size and height of what it
 * names.
 */
#include "format/yaml_doc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/buf.h"
#include "base/grow.h"

/* text of the input (a tag, an anchor) quoted in a message, escaped */
enum { SHOWN_SIZE = 64 };

#define TAG_STR "tag:yaml.org,2002:str"
#define TAG_SEQ "tag:yaml.org,2002:seq"
#define TAG_MAP "tag:yaml.org,2002:map"

struct anchor {
	const char *name;                  /* arena; NULL = free slot */
	const struct kerf_yaml_node *node;
	size_t weight;                     /* nodes in its subtree */
	int height;                        /* collections on its longest path */
};

struct frame {
	struct kerf_yaml_node *node;
	const struct kerf_yaml_node **kids; /* map: key, value, key, ... */
	size_t nr;
	size_t alloc;
	char *anchor;                      /* arena; NULL when none */
	size_t weight;
	int height;
};

struct builder {
	struct kerf_yaml_doc *doc;
	char path[160];                    /* escaped, for messages */
	const struct kerf_yaml_limits *lim;
	struct kerf_err *err;
	struct frame *stack;               /* lim->max_depth frames */
	int depth;
	struct anchor *anchors;            /* open addressing, power of 2 */
	size_t nr_anchors;
	size_t alloc_anchors;
	bool seen_document;
};

static int oom(struct builder *b)
{
	return kerf_err_set(b->err, -KERF_ENOMEM, "%s: out of memory", b->path);
}

static uint32_t line_of(size_t line0)
{
	return line0 >= UINT32_MAX - 1 ? UINT32_MAX : (uint32_t)line0 + 1;
}

static int fail(struct builder *b, uint32_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct builder *b, uint32_t line, const char *fmt, ...)
{
	char reason[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return kerf_err_set(b->err, -KERF_EPARSE, "%s:%u: yaml: %s", b->path,
			    line, reason);
}

/* FNV-1a: anchors are short and few; this only has to spread them. */
static size_t hash_name(const char *s)
{
	uint64_t h = 14695981039346656037u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return (size_t)h;
}

static struct anchor *anchor_slot(struct anchor *tab, size_t alloc,
				  const char *name)
{
	size_t i = hash_name(name) & (alloc - 1);

	while (tab[i].name && strcmp(tab[i].name, name) != 0)
		i = (i + 1) & (alloc - 1);
	return &tab[i];
}

static const struct anchor *anchor_find(const struct builder *b,
					const char *name)
{
	const struct anchor *a;

	if (!b->alloc_anchors)
		return NULL;
	a = anchor_slot(b->anchors, b->alloc_anchors, name);
	return a->name ? a : NULL;
}

/* A later anchor of the same name replaces the earlier one (YAML 1.1). */
static int anchor_set(struct builder *b, const char *name,
		      const struct kerf_yaml_node *node, size_t weight,
		      int height)
{
	struct anchor *a;

	if ((b->nr_anchors + 1) * 2 > b->alloc_anchors) {
		size_t want = b->alloc_anchors ? b->alloc_anchors * 2 : 64;
		struct anchor *tab = calloc(want, sizeof(*tab));

		if (!tab)
			return oom(b);
		for (size_t i = 0; i < b->alloc_anchors; i++)
			if (b->anchors[i].name)
				*anchor_slot(tab, want, b->anchors[i].name) =
					b->anchors[i];
		free(b->anchors);
		b->anchors = tab;
		b->alloc_anchors = want;
	}
	a = anchor_slot(b->anchors, b->alloc_anchors, name);
	if (!a->name)
		b->nr_anchors++;
	*a = (struct anchor){
		.name = name, .node = node, .weight = weight, .height = height,
	};
	return 0;
}

static int count_nodes(struct builder *b, size_t n, uint32_t line)
{
	if (n > b->lim->max_nodes - b->doc->nr_nodes)
		return fail(b, line, "more than %zu nodes (aliases count as what they name)",
			    b->lim->max_nodes);
	b->doc->nr_nodes += n;
	return 0;
}

/* Hand a complete node to the open collection, or make it the root. */
static int attach(struct builder *b, const struct kerf_yaml_node *node,
		  size_t weight, int height)
{
	struct frame *f;

	if (b->depth == 0) {
		b->doc->root = node;
		return 0;
	}
	f = &b->stack[b->depth - 1];
	if (f->node->kind == KERF_YAML_MAP && f->nr % 2 == 0 &&
	    node->kind != KERF_YAML_SCALAR)
		return fail(b, node->line, "%s", "a mapping key must be a scalar");
	if (KERF_GROW(f->kids, f->alloc, f->nr + 1) < 0)
		return oom(b);
	f->kids[f->nr++] = node;
	f->weight += weight;
	if (height + 1 > f->height)
		f->height = height + 1;
	return 0;
}

static char *copy_anchor(struct builder *b, const yaml_char_t *anchor)
{
	const char *s = (const char *)anchor;

	return kerf_arena_strndup(&b->doc->arena, s, strlen(s));
}

static bool tag_is(const yaml_char_t *tag, const char *want)
{
	return strcmp((const char *)tag, want) == 0;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
	const yaml_char_t *tag = ev->data.scalar.tag;
	uint32_t line = line_of(ev->start_mark.line);
	char show[SHOWN_SIZE];
	struct kerf_yaml_node *n;
	int rc;

	if (tag && !tag_is(tag, "!") && !tag_is(tag, TAG_STR))
		return fail(b, line, "tag '%s' is not supported",
			    kerf_escape(show, sizeof(show), (const char *)tag));
	if ((rc = count_nodes(b, 1, line)) < 0)
		return rc;
	n = kerf_arena_alloc(&b->doc->arena, sizeof(*n));
	if (!n)
		return oom(b);
	n->kind = KERF_YAML_SCALAR;
	n->line = line;
	n->plain = !tag && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	n->len = ev->data.scalar.length;
	n->text = kerf_arena_strndup(&b->doc->arena,
				     (const char *)ev->data.scalar.value, n->len);
	if (!n->text)
		return oom(b);
	if (ev->data.scalar.anchor) {
		char *name = copy_anchor(b, ev->data.scalar.anchor);

		if (!name)
			return oom(b);
		if ((rc = anchor_set(b, name, n, 1, 0)) < 0)
			return rc;
	}
	return attach(b, n, 1, 0);
}

static int on_start(struct builder *b, const yaml_event_t *ev,
		    enum kerf_yaml_kind kind)
{
	const yaml_char_t *tag, *anchor;
	uint32_t line = line_of(ev->start_mark.line);
	char show[SHOWN_SIZE];
	struct frame *f;
	struct kerf_yaml_node *n;
	int rc;

	if (kind == KERF_YAML_SEQ) {
		tag = ev->data.sequence_start.tag;
		anchor = ev->data.sequence_start.anchor;
	} else {
		tag = ev->data.mapping_start.tag;
		anchor = ev->data.mapping_start.anchor;
	}
	if (tag && !tag_is(tag, "!") &&
	    !tag_is(tag, kind == KERF_YAML_SEQ ? TAG_SEQ : TAG_MAP))
		return fail(b, line, "tag '%s' is not supported",
			    kerf_escape(show, sizeof(show), (const char *)tag));
	if (b->depth >= b->lim->max_depth)
		return fail(b, line, "nested deeper than %d levels",
			    b->lim->max_depth);
	if ((rc = count_nodes(b, 1, line)) < 0)
		return rc;
	n = kerf_arena_alloc(&b->doc->arena, sizeof(*n));
	if (!n)
		return oom(b);
	n->kind = kind;
	n->line = line;
	f = &b->stack[b->depth++];
	memset(f, 0, sizeof(*f));
	f->node = n;
	f->weight = 1;
	f->height = 1;
	if (anchor && !(f->anchor = copy_anchor(b, anchor)))
		return oom(b);
	return 0;
}

static int on_end(struct builder *b)
{
	struct frame f = b->stack[--b->depth];
	struct kerf_yaml_node *n = f.node;
	int rc = 0;

	if (n->kind == KERF_YAML_SEQ) {
		const struct kerf_yaml_node **items = NULL;

		if (f.nr && !(items = kerf_arena_alloc_array(&b->doc->arena, f.nr,
							      sizeof(*items))))
			rc = oom(b);
		else if (f.nr)
			memcpy(items, f.kids, f.nr * sizeof(*items));
		n->items = items;
		n->nr = f.nr;
	} else {
		struct kerf_yaml_pair *pairs = NULL;
		size_t nr = f.nr / 2;

		if (nr && !(pairs = kerf_arena_alloc_array(&b->doc->arena, nr,
							    sizeof(*pairs))))
			rc = oom(b);
		for (size_t i = 0; pairs && i < nr; i++) {
			pairs[i].key = f.kids[2 * i];
			pairs[i].value = f.kids[2 * i + 1];
		}
		n->pairs = pairs;
		n->nr = nr;
	}
	free(f.kids);
	if (rc == 0 && f.anchor)
		rc = anchor_set(b, f.anchor, n, f.weight, f.height);
	if (rc == 0)
		rc = attach(b, n, f.weight, f.height);
	return rc;
}

static int on_alias(struct builder *b, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	const struct anchor *a = anchor_find(b, name);
	uint32_t line = line_of(ev->start_mark.line);
	char show[SHOWN_SIZE];
	int rc;

	if (!a)
		return fail(b, line, "alias '*%s' names no complete anchor before it",
			    kerf_escape(show, sizeof(show), name));
	if (a->height > b->lim->max_depth - b->depth)
		return fail(b, line, "nested deeper than %d levels (through an alias)",
			    b->lim->max_depth);
	if ((rc = count_nodes(b, a->weight, line)) < 0)
		return rc;
	return attach(b, a->node, a->weight, a->height);
}

/* The line of a libyaml error; reader errors only know a byte offset. */
static uint32_t error_line(const yaml_parser_t *p, const char *text,
			   size_t len)
{
	size_t line = 0;

	if (p->error != YAML_READER_ERROR)
		return line_of(p->problem_mark.line);
	for (size_t i = 0; i < p->problem_offset && i < len; i++)
		line += text[i] == '\n';
	return line_of(line);
}

static int parser_error(struct builder *b, const yaml_parser_t *p,
			const char *text, size_t len)
{
	uint32_t line = error_line(p, text, len);
	const char *problem = p->problem ? p->problem : "malformed YAML";

	if (p->error == YAML_MEMORY_ERROR)
		return oom(b);
	if (p->error == YAML_READER_ERROR && p->problem_value != -1)
		return kerf_err_set(b->err, -KERF_EPARSE,
				    "%s:%u: yaml: %s (0x%02x)", b->path, line,
				    problem, (unsigned)p->problem_value);
	if (p->context)
		return kerf_err_set(b->err, -KERF_EPARSE,
				    "%s:%u: yaml: %s (%s from line %u)", b->path,
				    line, problem, p->context,
				    line_of(p->context_mark.line));
	return kerf_err_set(b->err, -KERF_EPARSE, "%s:%u: yaml: %s", b->path,
			    line, problem);
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->seen_document)
			return fail(b, line_of(ev->start_mark.line), "%s",
				    "only one document is allowed");
		b->seen_document = true;
		return 0;
	case YAML_SCALAR_EVENT:
		return on_scalar(b, ev);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, ev, KERF_YAML_SEQ);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, ev, KERF_YAML_MAP);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_end(b);
	case YAML_ALIAS_EVENT:
		return on_alias(b, ev);
	default:
		return 0;
	}
}

int kerf_yaml_load(struct kerf_yaml_doc *doc, const char *path,
		   const char *text, size_t len,
		   const struct kerf_yaml_limits *lim, struct kerf_err *err)
{
	struct builder b = {
		.doc = doc, .lim = lim, .err = err,
	};
	yaml_parser_t parser;
	bool done = false;
	int rc = 0;

	memset(doc, 0, sizeof(*doc));
	kerf_arena_init(&doc->arena, 0);
	kerf_escape(b.path, sizeof(b.path), path);
	if (len > lim->max_bytes)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "%s: larger than %zu bytes", b.path,
				    lim->max_bytes);
	if (lim->max_depth < 1)
		return kerf_err_set(err, -KERF_EINVAL, "%s: bad YAML limits",
				    b.path);
	b.stack = calloc((size_t)lim->max_depth, sizeof(*b.stack));
	if (!b.stack)
		return oom(&b);
	if (!yaml_parser_initialize(&parser)) {
		free(b.stack);
		return oom(&b);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!done && rc == 0) {
		yaml_event_t ev;

		if (!yaml_parser_parse(&parser, &ev)) {
			rc = parser_error(&b, &parser, text, len);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rc = on_event(&b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	while (b.depth > 0)
		free(b.stack[--b.depth].kids);
	free(b.stack);
	free(b.anchors);
	if (rc < 0)
		kerf_yaml_release(doc);
	return rc;
}

void kerf_yaml_release(struct kerf_yaml_doc *doc)
{
	kerf_arena_release(&doc->arena);
	memset(doc, 0, sizeof(*doc));
	kerf_arena_init(&doc->arena, 0);
}

bool kerf_yaml_is_null(const struct kerf_yaml_node *n)
{
	return n->kind == KERF_YAML_SCALAR && n->plain &&
	       (n->len == 0 || strcmp(n->text, "~") == 0 ||
		strcmp(n->text, "null") == 0 || strcmp(n->text, "Null") == 0 ||
		strcmp(n->text, "NULL") == 0);
}
