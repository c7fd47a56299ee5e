#include "kube/informer_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/grow.h"
#include "base/slab.h"

void inf_store_init(struct inf_store *s)
{
	memset(s, 0, sizeof(*s));
	kerf_map_init(&s->map, true);
}

static void entry_free(struct inf_entry *e, const struct kerf_informer_handlers *h)
{
	if (e->obj && h->free)
		h->free(h->arg, e->obj);
	free(e->rv_str);
	kerf_slab_free(e, sizeof(*e) + strlen(e->key) + 1);
}

void inf_store_release(struct inf_store *s,
		       const struct kerf_informer_handlers *h)
{
	size_t i;

	for (i = 0; i < s->nr_entries; i++)
		entry_free(s->entries[i], h);
	free(s->entries);
	kerf_map_release(&s->map);
	memset(s, 0, sizeof(*s));
}

/* rv as a canonical decimal number ("0", leading zeros: not), or 0. */
static uint64_t rv_number(const char *rv)
{
	uint64_t v = 0;

	if (rv[0] < '1' || rv[0] > '9')
		return 0;
	for (const char *c = rv; *c; c++) {
		if (*c < '0' || *c > '9' || v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*c - '0');
	}
	return v;
}

static bool same_rv(const struct inf_entry *e, const char *rv)
{
	return e->rv_num ? e->rv_num == rv_number(rv) : strcmp(e->rv_str, rv) == 0;
}

static int set_rv(struct inf_entry *e, const char *rv)
{
	uint64_t v = rv_number(rv);
	char *str = NULL;

	if (!v && !(str = kerf_strdup(rv)))
		return -KERF_ENOMEM;
	free(e->rv_str);
	e->rv_str = str;
	e->rv_num = v;
	return 0;
}

/* The key of name in namespace_name into buf; false when too long. */
static bool make_key(char *buf, size_t size, const char *name,
		     const char *namespace_name)
{
	int n = namespace_name ?
		snprintf(buf, size, "%s/%s", namespace_name, name) :
		snprintf(buf, size, "%s", name);

	return n >= 0 && (size_t)n < size;
}

/* A new entry for key holding obj, in the array and the map. */
static int add_entry(struct inf_store *s, const char *key, void *obj,
		     const char *rv, uint64_t gen, struct inf_entry **out)
{
	size_t len = strlen(key);
	struct inf_entry *e;

	if (KERF_GROW(s->entries, s->alloc_entries, s->nr_entries + 1) < 0 ||
	    kerf_map_reserve(&s->map, 1) < 0)
		return -KERF_ENOMEM;
	if (s->nr_entries >= UINT32_MAX)
		return -KERF_ELIMIT;
	e = kerf_slab_zalloc(sizeof(*e) + len + 1);
	if (!e)
		return -KERF_ENOMEM;
	memcpy(e->key, key, len + 1);
	if (set_rv(e, rv) < 0) {
		kerf_slab_free(e, sizeof(*e) + len + 1);
		return -KERF_ENOMEM;
	}
	e->obj = obj;
	e->gen = (uint32_t)gen;
	e->index = (uint32_t)s->nr_entries;
	if (kerf_map_put_str(&s->map, e->key, e) < 0) {
		entry_free(e, &(struct kerf_informer_handlers){ 0 });
		return -KERF_ENOMEM;
	}
	s->entries[s->nr_entries++] = e;
	*out = e;
	return 0;
}

static void remove_entry(struct inf_store *s, struct inf_entry *e)
{
	struct inf_entry *last = s->entries[s->nr_entries - 1];

	kerf_map_del_str(&s->map, e->key);
	s->entries[e->index] = last;
	last->index = e->index;
	s->nr_entries--;
}

int inf_store_apply(struct inf_store *s, const struct kerf_informer_handlers *h,
		    struct kerf_informer_stats *st, const json_t *obj,
		    const char *name, const char *namespace_name,
		    const char *rv, uint64_t gen)
{
	char key[512];
	struct inf_entry *e;
	void *compact, *old;

	if (!make_key(key, sizeof(key), name, namespace_name)) {
		st->no_name++;
		return 0;
	}
	e = kerf_map_get_str(&s->map, key);
	if (e && same_rv(e, rv)) {
		e->gen = (uint32_t)gen;
		return 0;
	}
	compact = h->decode(h->arg, obj);
	if (!compact) {
		st->decode_failed++;
		if (e)
			e->gen = (uint32_t)gen;  /* keep the last good one */
		return 0;
	}
	if (!e) {
		if (add_entry(s, key, compact, rv, gen, &e) < 0) {
			if (h->free)
				h->free(h->arg, compact);
			return -KERF_ENOMEM;
		}
		st->adds++;
		if (h->on_add)
			h->on_add(h->arg, e->key, e->obj);
		return 0;
	}
	if (set_rv(e, rv) < 0) {
		if (h->free)
			h->free(h->arg, compact);
		return -KERF_ENOMEM;
	}
	old = e->obj;
	e->obj = compact;
	e->gen = (uint32_t)gen;
	st->updates++;
	if (h->on_update)
		h->on_update(h->arg, e->key, old, compact);
	if (h->free)
		h->free(h->arg, old);
	return 0;
}

static void delete_entry(struct inf_store *s,
			 const struct kerf_informer_handlers *h,
			 struct kerf_informer_stats *st, struct inf_entry *e)
{
	remove_entry(s, e);
	st->deletes++;
	if (h->on_delete)
		h->on_delete(h->arg, e->key, e->obj);
	entry_free(e, h);
}

int inf_store_delete(struct inf_store *s, const struct kerf_informer_handlers *h,
		     struct kerf_informer_stats *st, const char *name,
		     const char *namespace_name)
{
	char key[512];
	struct inf_entry *e;

	if (!make_key(key, sizeof(key), name, namespace_name))
		return 0;
	e = kerf_map_get_str(&s->map, key);
	if (e)
		delete_entry(s, h, st, e);
	return 0;
}

void inf_store_sweep(struct inf_store *s, const struct kerf_informer_handlers *h,
		     struct kerf_informer_stats *st, uint64_t gen)
{
	size_t i = s->nr_entries;

	/* from the end: a removal moves the last entry into the hole */
	while (i-- > 0)
		if (s->entries[i]->gen != (uint32_t)gen)
			delete_entry(s, h, st, s->entries[i]);
}
