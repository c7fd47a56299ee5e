/*
 * yaml_doc: a YAML document as a tree of mappings, sequences and scalars,
 * each node carrying the line it starts on, loaded with libyaml's event
 * parser.
 *
 * libyaml types nothing: every scalar comes back as text.  A node says
 * whether it was written plain (unquoted and untagged), so the reader
 * resolves `3`, `true` or `null` itself and a quoted "3" stays a string.
 *
 * Bounded: the text's size, the nesting depth of collections and the
 * number of nodes are limited.  An alias (*name) refers to the node its
 * anchor (&name) defined, which is shared, not copied; it counts as every
 * node under that anchor towards the node limit and as that subtree's height
 * towards the depth limit, so an alias bomb fails instead of exploding in the
 * reader.  An anchor is known once its node is complete, so a node never
 * contains itself: the tree is acyclic.
 *
 * Only one document; mapping keys must be scalars; tags are refused except
 * the standard ones of the node's own kind (!!str, !!map, !!seq) and the
 * non-specific "!".  Merge keys (<<) are ordinary keys here.
 *
 * A loaded document owns all its nodes and text (one arena); nothing is
 * freed one by one.
 */
#ifndef KERF_FORMAT_YAML_DOC_H
#define KERF_FORMAT_YAML_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/err.h"

enum kerf_yaml_kind {
	KERF_YAML_SCALAR = 0,
	KERF_YAML_SEQ,
	KERF_YAML_MAP,
};

struct kerf_yaml_node;

struct kerf_yaml_pair {
	const struct kerf_yaml_node *key;      /* always a scalar */
	const struct kerf_yaml_node *value;
};

struct kerf_yaml_node {
	enum kerf_yaml_kind kind;
	uint32_t line;                         /* 1-based, where it starts */
	bool plain;                            /* scalar written unquoted, untagged */
	const char *text;                      /* scalar: NUL-terminated (arena) */
	size_t len;                            /* scalar: bytes (may hold NULs) */
	const struct kerf_yaml_node **items;   /* seq: nr items (arena) */
	const struct kerf_yaml_pair *pairs;    /* map: nr pairs in order (arena) */
	size_t nr;                             /* seq items or map pairs */
};

struct kerf_yaml_limits {
	size_t max_bytes;                      /* of the text */
	int max_depth;                         /* nested collections; root = 1 */
	size_t max_nodes;                      /* aliases count as their subtree */
};

struct kerf_yaml_doc {
	const struct kerf_yaml_node *root;     /* NULL: the stream holds no document */
	size_t nr_nodes;                       /* counted as for max_nodes */
	struct kerf_arena arena;               /* every node and text */
};

/*
 * Load text (len bytes; NULs are refused by libyaml) into doc, which needs
 * no initialisation.  path is for messages: "path:line: yaml: reason", or
 * "path: out of memory".  On error doc is left empty (release is harmless).
 */
int kerf_yaml_load(struct kerf_yaml_doc *doc, const char *path,
		   const char *text, size_t len,
		   const struct kerf_yaml_limits *lim, struct kerf_err *err);
void kerf_yaml_release(struct kerf_yaml_doc *doc);

/* A plain scalar that YAML reads as null: empty, "~", "null", "Null", "NULL". */
bool kerf_yaml_is_null(const struct kerf_yaml_node *n);

#endif /* KERF_FORMAT_YAML_DOC_H */
