/*
 * access: tests acting on the store directly, as a kubelet or a controller
 * would (a pod's phase set, a Terminating pod finished), under the lock.
 */
#include "testapi/testapi_int.h"

#include <string.h>

void kerf_testapi_with_store(struct kerf_testapi *ta,
			     kerf_testapi_store_fn fn, void *arg)
{
	pthread_mutex_lock(&ta->st.lock);
	fn(&ta->st, arg);
	pthread_mutex_unlock(&ta->st.lock);
}

static const struct kerf_ta_kind *find(struct kerf_testapi_store *st,
				       const char *group, const char *plural)
{
	size_t i;

	for (i = 0; i < st->nr_kinds; i++)
		if (!strcmp(st->kinds[i]->group, group) &&
		    !strcmp(st->kinds[i]->plural, plural))
			return st->kinds[i];
	return NULL;
}

static struct kerf_ta_obj *lookup(struct kerf_testapi_store *st,
				  const char *group, const char *plural,
				  const char *ns, const char *name,
				  const struct kerf_ta_kind **kp)
{
	const struct kerf_ta_kind *k = find(st, group, plural);

	*kp = k;
	return k ? kerf_ta_obj_get(k->res, ns, name) : NULL;
}

json_t *kerf_testapi_get(struct kerf_testapi_store *st, const char *group,
			 const char *plural, const char *ns, const char *name)
{
	const struct kerf_ta_kind *k;
	struct kerf_ta_obj *o = lookup(st, group, plural, ns, name, &k);

	return o ? json_deep_copy(o->obj) : NULL;
}

int kerf_testapi_put(struct kerf_testapi_store *st, const char *group,
		     const char *plural, const char *ns, const char *name,
		     const json_t *obj)
{
	const struct kerf_ta_kind *k;
	struct kerf_ta_obj *o = lookup(st, group, plural, ns, name, &k);
	json_t *n;

	if (!o)
		return -KERF_ENOTFOUND;
	n = json_deep_copy(obj);
	if (!n)
		return -KERF_ENOMEM;
	return kerf_ta_obj_update(st, k->res, o, n);
}

int kerf_testapi_set_pod_phase(struct kerf_testapi_store *st, const char *ns,
			       const char *name, const char *phase)
{
	const struct kerf_ta_kind *k;
	struct kerf_ta_obj *o = lookup(st, "", "pods", ns, name, &k);
	json_t *n;

	if (!o)
		return -KERF_ENOTFOUND;
	n = json_deep_copy(o->obj);
	if (!n)
		return -KERF_ENOMEM;
	json_object_set_new(kerf_ta_path_mk(n, "status"), "phase",
			    json_string(phase));
	return kerf_ta_obj_update(st, k->res, o, n);
}

int kerf_testapi_remove(struct kerf_testapi_store *st, const char *group,
			const char *plural, const char *ns, const char *name)
{
	const struct kerf_ta_kind *k;
	struct kerf_ta_obj *o = lookup(st, group, plural, ns, name, &k);

	if (!o)
		return -KERF_ENOTFOUND;
	kerf_ta_obj_delete(st, k->res, o);
	return 0;
}

uint64_t kerf_testapi_rv(struct kerf_testapi_store *st)
{
	return st->rv;
}

void kerf_testapi_compact(struct kerf_testapi_store *st)
{
	/* a revision no object has, and the history up to it forgotten */
	st->rv++;
	for (size_t i = 0; i < st->nr_res; i++)
		st->res[i]->window_rv = st->rv;
	pthread_cond_broadcast(&st->cond);
}
