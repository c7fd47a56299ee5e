/*
 * pdb: a policy/v1 PodDisruptionBudget cut down to what preemption needs:
 * which pods of its namespace it selects, and whether the API server's
 * eviction would refuse to disrupt one of them now.
 *
 * The selector is kept as the API has it (matchLabels as In terms of one
 * value, matchExpressions as given) with the keys and values hashed, and
 * pods carry their labels hashed the same way (kerf_label_hash): a pod's
 * labels cost 16 bytes each, not their text.  Two different labels with
 * one 64-bit hash could only make kerf skip a victim it could have asked
 * (or ask one whose eviction is then refused with a 429, which it retries):
 * never an eviction the budget forbids, which the API server enforces.
 *
 * policy/v1: a null selector selects no pod, an empty one every pod of
 * the namespace.  The eviction refuses while status.observedGeneration is
 * behind metadata.generation ("still being processed") and while
 * status.disruptionsAllowed is 0; a budget without a computed status
 * allows nothing (kerf_kpdb_blocks).
 */
#ifndef KERF_KOBJ_PDB_H
#define KERF_KOBJ_PDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

enum kerf_sel_op {
	KERF_SEL_IN = 0,
	KERF_SEL_NOT_IN,
	KERF_SEL_EXISTS,
	KERF_SEL_DOES_NOT_EXIST,
};

enum {
	KERF_PDB_MAX_TERMS = 256,      /* matchLabels and matchExpressions */
	KERF_PDB_MAX_VALUES = 4096,    /* values of all terms */
};

struct kerf_sel_term {
	uint64_t key;                  /* kerf_label_hash(key, NULL) */
	uint32_t first, nr;            /* In, NotIn: values[first .. +nr) */
	uint8_t op;                    /* enum kerf_sel_op */
};

struct kerf_kpdb {
	char ns[64];
	char name[254];
	bool has_selector;             /* false: selects no pod */
	bool observed;                 /* observedGeneration >= generation */
	int32_t disruptions_allowed;   /* status; 0 when absent */
	uint16_t nr_terms;
	uint32_t nr_values;
	struct kerf_sel_term *terms;   /* owned */
	uint64_t *values;              /* kerf_label_hash(key, value), owned */
};

/*
 * The hash of label key=value, or of the key alone (value NULL): what
 * pods and selectors are matched by.
 */
uint64_t kerf_label_hash(const char *key, const char *value);

/*
 * obj into *out (released by kerf_kpdb_release); nothing on error, which
 * names the field ("spec.selector.matchExpressions[0].operator ...").
 */
int kerf_kpdb_decode(const json_t *obj, struct kerf_kpdb *out,
		     struct kerf_err *err);
void kerf_kpdb_release(struct kerf_kpdb *b);

/* Would the eviction of a pod it selects be refused now? */
static inline bool kerf_kpdb_blocks(const struct kerf_kpdb *b)
{
	return !b->observed || b->disruptions_allowed <= 0;
}

/*
 * Does b select a pod of its namespace with these labels: nr pairs
 * (kerf_label_hash(key, NULL), kerf_label_hash(key, value)) in labels[]?
 */
bool kerf_kpdb_selects(const struct kerf_kpdb *b, const uint64_t *labels,
		       size_t nr);

#endif
