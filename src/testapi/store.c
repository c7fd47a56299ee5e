/*
 * store: the objects of every resource, one global resourceVersion counter
 * (a decimal string on the wire, shared by all kinds as etcd's revision is),
 * and per resource a bounded log of its last events, the watch cache's
 * window: a watch or a continue token from an rv older than the window is
 * too old (410), and a list at an exact rv inside it is rebuilt by undoing
 * the newer events.
 */
#include "testapi/testapi_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/grow.h"

int kerf_ta_store_init(struct kerf_testapi_store *st, size_t window)
{
	memset(st, 0, sizeof(*st));
	if (pthread_mutex_init(&st->lock, NULL))
		return -KERF_ENOMEM;
	if (pthread_cond_init(&st->cond, NULL)) {
		pthread_mutex_destroy(&st->lock);
		return -KERF_ENOMEM;
	}
	st->rv = 1;
	st->window = window ? window : 100;
	st->uid_state = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)st;
	return 0;
}

static void event_clear(struct kerf_ta_event *e)
{
	free(e->key);
	json_decref(e->obj);
	json_decref(e->prev);
	memset(e, 0, sizeof(*e));
}

static void obj_free(struct kerf_ta_obj *o)
{
	if (!o)
		return;
	free(o->key);
	json_decref(o->obj);
	json_decref(o->owners);
	free(o);
}

static void res_free(struct kerf_ta_res *r)
{
	struct kerf_ta_obj *o;
	size_t i;

	for (i = 0; (o = kerf_map_next(&r->objs, &i));)
		obj_free(o);
	kerf_map_release(&r->objs);
	for (i = 0; i < r->ring_nr; i++)
		event_clear(&r->ring[i]);
	free(r->ring);
	free(r->id);
	free(r);
}

void kerf_ta_kind_free(struct kerf_ta_kind *k)
{
	if (!k)
		return;
	free(k->group);
	free(k->version);
	free(k->plural);
	free(k->singular);
	free(k->kind);
	free(k->list_kind);
	free(k->crd);
	json_decref(k->short_names);
	json_decref(k->categories);
	json_decref(k->schema);
	free(k);
}

void kerf_ta_store_release(struct kerf_testapi_store *st)
{
	size_t i;

	for (i = 0; i < st->nr_kinds; i++)
		kerf_ta_kind_free(st->kinds[i]);
	free(st->kinds);
	for (i = 0; i < st->nr_res; i++)
		res_free(st->res[i]);
	free(st->res);
	pthread_cond_destroy(&st->cond);
	pthread_mutex_destroy(&st->lock);
}

struct kerf_ta_res *kerf_ta_res_get(struct kerf_testapi_store *st,
				    const char *id)
{
	struct kerf_ta_res *r;
	size_t i;

	for (i = 0; i < st->nr_res; i++)
		if (!strcmp(st->res[i]->id, id))
			return st->res[i];
	if (KERF_GROW(st->res, st->alloc_res, st->nr_res + 1) < 0)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->id = kerf_strdup(id);
	r->ring = calloc(st->window, sizeof(*r->ring));
	if (!r->id || !r->ring) {
		free(r->id);
		free(r->ring);
		free(r);
		return NULL;
	}
	r->ring_cap = st->window;
	kerf_map_init(&r->objs, true);
	st->res[st->nr_res++] = r;
	return r;
}

int kerf_ta_kind_add(struct kerf_testapi_store *st, struct kerf_ta_kind *k)
{
	if (KERF_GROW(st->kinds, st->alloc_kinds, st->nr_kinds + 1) < 0)
		return -KERF_ENOMEM;
	st->kinds[st->nr_kinds++] = k;
	return 0;
}

void kerf_ta_kinds_remove_crd(struct kerf_testapi_store *st, const char *crd)
{
	size_t i = 0;

	while (i < st->nr_kinds) {
		struct kerf_ta_kind *k = st->kinds[i];

		if (k->crd && !strcmp(k->crd, crd)) {
			kerf_ta_res_clear(st, k->res);
			kerf_ta_kind_free(k);
			memmove(&st->kinds[i], &st->kinds[i + 1],
				(st->nr_kinds - i - 1) * sizeof(*st->kinds));
			st->nr_kinds--;
			continue;
		}
		i++;
	}
}

const struct kerf_ta_kind *kerf_ta_kind_find(struct kerf_testapi_store *st,
					     const char *group,
					     const char *version,
					     const char *plural)
{
	size_t i;

	for (i = 0; i < st->nr_kinds; i++) {
		const struct kerf_ta_kind *k = st->kinds[i];

		if (!strcmp(k->group, group) && !strcmp(k->version, version) &&
		    !strcmp(k->plural, plural))
			return k;
	}
	return NULL;
}

bool kerf_ta_group_known(struct kerf_testapi_store *st, const char *group,
			 const char *version)
{
	size_t i;

	for (i = 0; i < st->nr_kinds; i++)
		if (!strcmp(st->kinds[i]->group, group) &&
		    (!version || !strcmp(st->kinds[i]->version, version)))
			return true;
	return false;
}

void kerf_ta_make_key(char *out, size_t size, const char *ns,
		      const char *name)
{
	if (ns)
		snprintf(out, size, "%s/%s", ns, name);
	else
		snprintf(out, size, "%s", name);
}

struct kerf_ta_obj *kerf_ta_obj_get(struct kerf_ta_res *r, const char *ns,
				    const char *name)
{
	char key[512];

	kerf_ta_make_key(key, sizeof(key), ns, name);
	return kerf_map_get_str(&r->objs, key);
}

static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void kerf_ta_new_uid(struct kerf_testapi_store *st, char out[37])
{
	uint64_t a = mix(&st->uid_state), b = mix(&st->uid_state);

	snprintf(out, 37, "%08x-%04x-4%03x-%04x-%012llx",
		 (unsigned)(a >> 32), (unsigned)((a >> 16) & 0xffff),
		 (unsigned)(a & 0xfff),
		 (unsigned)(0x8000 | ((b >> 48) & 0x3fff)),
		 (unsigned long long)(b & 0xffffffffffffull));
}

static void set_rv(json_t *obj, uint64_t rv)
{
	char s[24];
	json_t *md = json_object_get(obj, "metadata");

	snprintf(s, sizeof(s), "%llu", (unsigned long long)rv);
	if (md)
		json_object_set_new(md, "resourceVersion", json_string(s));
}

/* Append an event, dropping the oldest when the window is full. */
static void log_event(struct kerf_testapi_store *st, struct kerf_ta_res *r,
		      enum kerf_ta_evtype type, const char *key, json_t *obj,
		      json_t *prev)
{
	struct kerf_ta_event *e;

	if (r->ring_nr == r->ring_cap) {
		e = &r->ring[r->ring_head];
		r->window_rv = e->rv;
		event_clear(e);
		r->ring_head = (r->ring_head + 1) % r->ring_cap;
		r->ring_nr--;
	}
	e = &r->ring[(r->ring_head + r->ring_nr) % r->ring_cap];
	e->type = type;
	e->rv = st->rv;
	e->key = kerf_strdup(key);
	e->obj = json_incref(obj);
	e->prev = json_incref(prev);
	r->ring_nr++;
	pthread_cond_broadcast(&st->cond);
}

int kerf_ta_obj_create(struct kerf_testapi_store *st, struct kerf_ta_res *r,
		       json_t *obj, struct kerf_ta_obj **out)
{
	struct kerf_ta_obj *o = calloc(1, sizeof(*o));
	const char *ns = kerf_ta_str(obj, "metadata.namespace");
	const char *name = kerf_ta_str(obj, "metadata.name");
	char key[512];

	if (!o) {
		json_decref(obj);
		return -KERF_ENOMEM;
	}
	kerf_ta_make_key(key, sizeof(key), ns, name ? name : "");
	o->key = kerf_strdup(key);
	o->obj = obj;
	if (!o->key || kerf_map_put_str(&r->objs, o->key, o) < 0) {
		obj_free(o);
		return -KERF_ENOMEM;
	}
	st->rv++;
	set_rv(obj, st->rv);
	log_event(st, r, KERF_TA_ADDED, key, obj, NULL);
	if (out)
		*out = o;
	return 0;
}

int kerf_ta_obj_update(struct kerf_testapi_store *st, struct kerf_ta_res *r,
		       struct kerf_ta_obj *o, json_t *obj)
{
	json_t *prev = o->obj;

	st->rv++;
	set_rv(obj, st->rv);
	o->obj = obj;
	log_event(st, r, KERF_TA_MODIFIED, o->key, obj, prev);
	json_decref(prev);
	return 0;
}

void kerf_ta_obj_delete(struct kerf_testapi_store *st, struct kerf_ta_res *r,
			struct kerf_ta_obj *o)
{
	json_t *last = json_deep_copy(o->obj);

	st->rv++;
	if (last)
		set_rv(last, st->rv);
	log_event(st, r, KERF_TA_DELETED, o->key, last ? last : o->obj,
		  o->obj);
	json_decref(last);
	kerf_map_del_str(&r->objs, o->key);
	obj_free(o);
}

void kerf_ta_res_clear(struct kerf_testapi_store *st, struct kerf_ta_res *r)
{
	struct kerf_ta_obj *o;
	size_t i = 0;

	while ((o = kerf_map_next(&r->objs, &i))) {
		kerf_ta_obj_delete(st, r, o);
		i = 0; /* the table may have changed: start over */
	}
}

static int key_cmp(const void *a, const void *b)
{
	const char *ka = *(const char *const *)a;
	const char *kb = *(const char *const *)b;

	return strcmp(ka, kb);
}

/*
 * The objects at rv (the current state with every newer event of the
 * window undone) as a JSON object key -> object, keys then sorted into the
 * array "keys": {"keys": [...], "objs": {...}}.
 */
json_t *kerf_ta_res_snapshot(struct kerf_ta_res *r, uint64_t rv)
{
	json_t *objs = json_object(), *out = json_object(), *keys, *v;
	const struct kerf_ta_obj *o;
	const char **arr = NULL;
	const char *k;
	size_t i, n = 0;

	if (!objs || !out)
		goto fail;
	for (i = 0; (o = kerf_map_next(&r->objs, &i));)
		json_object_set(objs, o->key, o->obj);
	for (i = r->ring_nr; i-- > 0;) {
		const struct kerf_ta_event *e =
			&r->ring[(r->ring_head + i) % r->ring_cap];

		if (e->rv <= rv)
			break;
		if (e->type == KERF_TA_ADDED)
			json_object_del(objs, e->key);
		else
			json_object_set(objs, e->key, e->prev);
	}
	keys = json_array();
	if (!keys)
		goto fail;
	arr = calloc(json_object_size(objs) + 1, sizeof(*arr));
	if (!arr) {
		json_decref(keys);
		goto fail;
	}
	json_object_foreach(objs, k, v)
		arr[n++] = k;
	qsort(arr, n, sizeof(*arr), key_cmp);
	for (i = 0; i < n; i++)
		json_array_append_new(keys, json_string(arr[i]));
	free(arr);
	json_object_set_new(out, "keys", keys);
	json_object_set_new(out, "objs", objs);
	return out;
fail:
	json_decref(objs);
	json_decref(out);
	return NULL;
}
