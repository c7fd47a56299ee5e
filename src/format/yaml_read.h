/*
 * yaml_read: the pieces shared by the readers that decode a format/yaml_doc
 * tree into structs (sim/scenario, sim/mig_node): a field path carried
 * down the walk and messages that name it, mappings with a fixed set of
 * keys, and the scalars every format has (names, booleans).
 *
 * A reader pushes a key or an index onto the field path before it reads a
 * value and pops back to the mark it got afterwards, so that an error says
 * "file:line: field: reason", e.g.
 * "n.yaml:7: gpus[0].instances[1].start: must be an integer from 0 to 7",
 * or "file:line: reason" at the top, where the path is empty.  A path
 * longer than KERF_YREAD_FIELD_MAX - 1 bytes is cut short.
 *
 * kerf_yread_show quotes text taken from the input for a message, escaped
 * as kerf_escape_n does (base/buf.h: every byte that is not printable
 * ASCII as \xNN, the backslash and the quote escaped) and shortened with
 * "..." to fit KERF_YREAD_SHOWN_SIZE.  Keys taken from the input (unknown
 * keys, quota resources) go onto the field path the same way, and the path
 * of the file is kept escaped: no message can carry a raw ESC or newline
 * from a file or a file name, so none can forge output.
 *
 * Every failure is -KERF_EPARSE with the message in the reader's err (first
 * message wins, see base/err.h); nothing here allocates.
 */
#ifndef KERF_FORMAT_YAML_READ_H
#define KERF_FORMAT_YAML_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "format/yaml_doc.h"

enum {
	KERF_YREAD_FIELD_MAX = 320,        /* the field path, with the NUL */
	KERF_YREAD_SHOWN_SIZE = 64,        /* input text quoted back, with NUL */
	KERF_YREAD_PATH_SHOWN = 160,       /* the file's path, escaped */
};

struct kerf_yread {
	char path[KERF_YREAD_PATH_SHOWN];  /* the file, escaped, for messages */
	struct kerf_err *err;
	char field[KERF_YREAD_FIELD_MAX];  /* path of the value at hand */
	size_t field_len;
};

/* An empty field path; messages name path (escaped) and go to err. */
void kerf_yread_init(struct kerf_yread *r, const char *path,
		     struct kerf_err *err);

/* "path:line: field: reason" at node n; returns -KERF_EPARSE. */
int kerf_yread_fail(struct kerf_yread *r, const struct kerf_yaml_node *n,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An error about key of a mapping (the key itself is absent or wrong). */
int kerf_yread_fail_key(struct kerf_yread *r, const struct kerf_yaml_node *at,
			const char *key, const char *reason);

/* ---- the field path ------------------------------------------------- */

/* Append ".key" ("key" at the top); returns the mark to pop back to. */
size_t kerf_yread_push_key(struct kerf_yread *r, const char *key);

/* Append a key taken from the input (scalar k), escaped. */
size_t kerf_yread_push_key_node(struct kerf_yread *r,
				const struct kerf_yaml_node *k);

/* Append "[i]". */
size_t kerf_yread_push_index(struct kerf_yread *r, size_t i);

void kerf_yread_pop(struct kerf_yread *r, size_t mark);

/* rc = call, with key appended to the field path of r meanwhile. */
#define KERF_YREAD_UNDER_KEY(rc, r, key, call)                  \
	do {                                                    \
		size_t mark_ = kerf_yread_push_key((r), (key)); \
		(rc) = (call);                                  \
		kerf_yread_pop((r), mark_);                     \
	} while (0)

/* ---- text for messages ---------------------------------------------- */

/*
 * The text of scalar n for a message (see above) into out, size bytes
 * (KERF_YREAD_SHOWN_SIZE holds any).
 */
void kerf_yread_show(char *out, size_t size, const struct kerf_yaml_node *n);

/* Append item to the list "a, b, c" in out (size bytes, *used of them). */
void kerf_yread_add_list(char *out, size_t size, size_t *used,
			 const char *item);

/* ---- mappings and scalars ------------------------------------------- */

/* Scalar k is exactly name. */
bool kerf_yread_key_is(const struct kerf_yaml_node *k, const char *name);

/*
 * The values of mapping n with the given keys into vals (NULL where
 * absent).  Not a mapping, an unknown key (the known ones listed) and a key
 * given twice are errors.
 */
int kerf_yread_take_map(struct kerf_yread *r, const struct kerf_yaml_node *n,
			const char *const *keys, int nr_keys,
			const struct kerf_yaml_node **vals);

/* 0 when val (the value of key in map) is there, else "key: missing". */
int kerf_yread_need(struct kerf_yread *r, const struct kerf_yaml_node *map,
		    const struct kerf_yaml_node *val, const char *key);

/* A scalar that is not null. */
bool kerf_yread_is_scalar(const struct kerf_yaml_node *n);

/* A scalar of 1.. bytes holding no NUL: usable as a C string. */
bool kerf_yread_is_text(const struct kerf_yaml_node *n);

/*
 * A name: 1..max bytes of printable ASCII, no space, copied with its NUL
 * into out (max + 1 bytes).  Names end up in messages, reports and node
 * names, where a control character or an invisible Unicode space would
 * only confuse.
 */
int kerf_yread_get_name(struct kerf_yread *r, const struct kerf_yaml_node *n,
			size_t max, char *out);

/* A plain true or false. */
int kerf_yread_get_bool(struct kerf_yread *r, const struct kerf_yaml_node *n,
			bool *out);

/*
 * The optional value v of key (NULL: absent, out untouched, 0) read as
 * above, with key on the field path meanwhile.
 */
int kerf_yread_key_name(struct kerf_yread *r, const struct kerf_yaml_node *v,
			const char *key, size_t max, char *out);
int kerf_yread_key_bool(struct kerf_yread *r, const struct kerf_yaml_node *v,
			const char *key, bool *out);

#endif /* KERF_FORMAT_YAML_READ_H */
