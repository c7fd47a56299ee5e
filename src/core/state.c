#include "core/state.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/grow.h"
#include "base/slab.h"
#include "core/budget.h"
#include "core/state_int.h"

enum { DEFAULT_HALF_LIFE_MS = 3600 * 1000 };

void kerf_state_capacity(const struct kerf_state *st, struct kerf_res *cap)
{
	kerf_res_zero(cap);
	for (size_t i = 0; i < st->cluster.nr_slots; i++) {
		const struct kerf_node *n = &st->cluster.nodes[i];

		if (!n->live)
			continue;
		cap->v[KERF_RES_CPU] += n->cpu_milli;
		cap->v[KERF_RES_MEM] += n->mem_mib;
		if (n->nr_gpus > 0)
			cap->v[kerf_res_gpu(n->model)] +=
				(int64_t)n->nr_gpus * KERF_GPU_MILLI;
	}
}

/* The root's nominal is what the nodes have. */
void kerf_state_follow_capacity(struct kerf_state *st)
{
	struct kerf_res cap;

	kerf_state_capacity(st, &cap);
	kerf_tenants_set_capacity(&st->tenants, &cap);
}

/* usage_avg has an entry per tenant slot (grown with the tree). */
int kerf_state_grow_tenants(struct kerf_state *st, size_t nr)
{
	return KERF_GROW_ZERO(st->usage_avg, st->alloc_usage_avg, nr);
}

int kerf_state_init(struct kerf_state *st, struct kerf_cluster *cluster,
		    struct kerf_tenants *tenants,
		    const struct kerf_classes *classes, struct kerf_err *err)
{
	memset(st, 0, sizeof(*st));
	kerf_map_init(&st->by_id, false);
	kerf_map_init(&st->by_key, true);
	if (kerf_state_grow_tenants(st, tenants->nr) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	st->cluster = *cluster;
	memset(cluster, 0, sizeof(*cluster));
	kerf_cluster_init(cluster);
	st->tenants = *tenants;
	memset(tenants, 0, sizeof(*tenants));
	st->classes = *classes;
	st->next_id = 1;
	st->next_seq = 1;
	st->half_life_ms = DEFAULT_HALF_LIFE_MS;
	kerf_state_follow_capacity(st);
	return 0;
}

void kerf_state_free_workload(struct kerf_workload *w)
{
	kerf_slab_free(w->pods, kerf_state_pods_bytes(w->nr_bound, w->nr_charged));
	kerf_workload_free_preempt(w);
	kerf_workload_clear_text(w);
	/* its asked[] and key too (kerf_state_make_workload) */
	kerf_slab_free(w, kerf_state_workload_bytes(w));
}

void kerf_state_release(struct kerf_state *st)
{
	for (size_t i = 0; i < st->nr_wl; i++)
		kerf_state_free_workload(st->wl[i]);
	free(st->wl);
	kerf_map_release(&st->by_id);
	kerf_map_release(&st->by_key);
	free(st->usage_avg);
	free(st->reserved);
	kerf_cluster_release(&st->cluster);
	kerf_tenants_release(&st->tenants);
	memset(st, 0, sizeof(*st));
}

void kerf_state_notice(struct kerf_state *st, enum kerf_notice_kind kind,
		       int tenant, uint32_t workload, int32_t pct, int64_t now_ms)
{
	st->notices[st->nr_notices++ % KERF_NOTICES] = (struct kerf_notice){
		.at_ms = now_ms, .kind = kind, .tenant = tenant,
		.workload = workload, .pct = pct,
	};
}

struct kerf_workload *kerf_state_find_mut(struct kerf_state *st, uint32_t id)
{
	return kerf_map_get_u64(&st->by_id, id);
}

const struct kerf_workload *kerf_state_find_const(const struct kerf_state *st,
						  uint32_t id)
{
	return kerf_map_get_u64(&st->by_id, id);
}

const struct kerf_workload *
kerf_state_find_key_const(const struct kerf_state *st, const char *key)
{
	if (!st->no_key_map)
		return kerf_map_get_str(&st->by_key, key);
	for (size_t i = 0; i < st->nr_wl; i++)
		if (!strcmp(st->wl[i]->key, key))
			return st->wl[i];
	return NULL;
}

struct kerf_workload *kerf_state_find_key_mut(struct kerf_state *st,
					      const char *key)
{
	return (struct kerf_workload *)kerf_state_find_key_const(st, key);
}

/* --- pending counters per tenant ------------------------------------- */

void kerf_state_count_pending(struct kerf_state *st, const struct kerf_workload *w,
			  int dir)
{
	struct kerf_tenant *t = &st->tenants.t[w->tenant];

	t->nr_pending = (uint32_t)((int64_t)t->nr_pending + dir);
	t->pending_gpu_milli += dir * kerf_workload_gpu_milli(w);
}

/* w changes state: the tenant's pending counters follow. */
void kerf_state_set_wl_state(struct kerf_state *st, struct kerf_workload *w,
			 enum kerf_wl_state to)
{
	if (w->state == KERF_WL_PENDING)
		kerf_state_count_pending(st, w, -1);
	w->state = to;
	if (to == KERF_WL_PENDING)
		kerf_state_count_pending(st, w, +1);
}

/*
 * 65536 * 2^(-dt / half_life): halve once per whole half-life, linear
 * within the last (an integer stand-in for exp, the same on every machine).
 */
static int64_t decay_q16(int64_t dt, int64_t half_life)
{
	int64_t halvings = dt / half_life, r = dt % half_life;

	if (halvings >= 16)
		return 0;
	return (65536 >> halvings) * (2 * half_life - r) / (2 * half_life);
}

void kerf_state_age(struct kerf_state *st, int64_t now_ms)
{
	int64_t dt = now_ms - st->avg_at_ms, f;

	if (dt <= 0)
		return;
	kerf_budget_account(st, dt, now_ms);
	f = decay_q16(dt, st->half_life_ms);
	for (size_t t = 0; t < st->tenants.nr; t++)
		for (int i = 0; i < st->tenants.nr_res; i++) {
			__int128 a = st->usage_avg[t].v[i];
			__int128 u = (__int128)st->tenants.t[t].usage.v[i] << 16;
			__int128 x = (a * f + u * (65536 - f)) >> 16;

			st->usage_avg[t].v[i] = x > KERF_USAGE_AVG_MAX ? KERF_USAGE_AVG_MAX
								: (int64_t)x;
		}
	st->avg_at_ms = now_ms;
}
