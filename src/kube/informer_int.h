/*
 * informer_int: the informer's cache (informer_store.c) as informer.c
 * uses it.  Entries live in one array (for the relist diff, which must
 * visit every entry) and in a map by key; one allocation per entry holds
 * the key, and a resourceVersion that is a number written the canonical
 * way (an etcd revision: "1" to "18446744073709551615", no leading zero)
 * is kept as that number; any other string the server sends (the API
 * calls it opaque) in an allocation of its own.
 */
#ifndef KERF_KUBE_INFORMER_INT_H
#define KERF_KUBE_INFORMER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "base/map.h"
#include "kube/informer.h"

struct inf_entry {
	void *obj;                 /* the handlers' compact object */
	uint64_t rv_num;           /* the resourceVersion; 0: rv_str */
	char *rv_str;              /* owned, when not a canonical number */
	uint32_t gen;              /* the list that last saw it (its low
				      32 bits) */
	uint32_t index;            /* in store.entries */
	char key[];                /* "ns/name" or "name" */
};

struct inf_store {
	struct kerf_map map;       /* key -> struct inf_entry */
	struct inf_entry **entries;
	size_t nr_entries;
	size_t alloc_entries;
};

void inf_store_init(struct inf_store *s);

/* Every entry freed through h->free. */
void inf_store_release(struct inf_store *s,
		       const struct kerf_informer_handlers *h);

/*
 * obj (name, namespace and rv from its metadata) into the cache: add,
 * update (rv changed) or nothing (same rv); gen marks it seen by a list.
 * Counts and calls the handlers.  0 or -KERF_ENOMEM.
 */
int inf_store_apply(struct inf_store *s, const struct kerf_informer_handlers *h,
		    struct kerf_informer_stats *st, const json_t *obj,
		    const char *name, const char *namespace_name,
		    const char *rv, uint64_t gen);

/* Delete key if cached (on_delete, then free). */
int inf_store_delete(struct inf_store *s, const struct kerf_informer_handlers *h,
		     struct kerf_informer_stats *st, const char *name,
		     const char *namespace_name);

/* Delete every entry whose gen is not gen (what a relist did not see). */
void inf_store_sweep(struct inf_store *s, const struct kerf_informer_handlers *h,
		     struct kerf_informer_stats *st, uint64_t gen);

#endif /* KERF_KUBE_INFORMER_INT_H */
