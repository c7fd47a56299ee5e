#include "core/spec_weight.h"

#include <stdlib.h>
#include <string.h>

enum { ONE_Q16 = 1 << 16 };

void kerf_model_idle_of(struct kerf_model_idle *idle,
			const struct kerf_cluster *c)
{
	memset(idle, 0, sizeof(*idle));
	/* live nodes: slots of removed nodes are free, not counted */
	for (size_t k = 0; k < c->nr_nodes; k++) {
		const struct kerf_node *n = &c->nodes[c->order[k]];

		if (n->nr_gpus == 0 || n->cordoned || n->model >= KERF_MAX_MODELS)
			continue;
		idle->milli[n->model] += n->gpu_free_milli_sum;
		idle->total_milli += n->gpu_free_milli_sum;
		idle->capacity_milli += (int64_t)n->nr_gpus * KERF_GPU_MILLI;
	}
}

bool kerf_pod_dist_has_models(const struct kerf_pod_dist *d)
{
	for (size_t i = 0; i < d->nr; i++)
		if (d->entries[i].pod.model_mask != 0)
			return true;
	return false;
}

static int64_t demand(const struct kerf_dist_entry *e)
{
	return e->weight * e->pod.nr_gpus * e->pod.gpu_milli;
}

/*
 * F / f_S * min(1, lambda) of entry i in 1/65536 into *q16; false when it
 * does not apply (any model, no GPU demand, nothing of its models idle).
 */
static bool factor_q16(const struct kerf_pod_dist *d, size_t i,
		       const struct kerf_model_idle *idle, int64_t demand_total,
		       unsigned __int128 *q16)
{
	uint64_t mask = d->entries[i].pod.model_mask;
	int64_t f = 0, q = 0;
	unsigned __int128 density, lambda;

	if (mask == 0 || demand_total <= 0 || idle->total_milli <= 0)
		return false;
	for (int b = 0; b < KERF_MAX_MODELS; b++)
		if (mask >> b & 1)
			f += idle->milli[b];
	if (f <= 0)
		return false;
	/* demand that may use only models in mask (mask itself included) */
	for (size_t j = 0; j < d->nr; j++) {
		uint64_t mj = d->entries[j].pod.model_mask;

		if (mj != 0 && (mj & ~mask) == 0)
			q += demand(&d->entries[j]);
	}
	density = (unsigned __int128)idle->total_milli * ONE_Q16 / (uint64_t)f;
	lambda = density * (uint64_t)q / (uint64_t)demand_total;
	if (lambda > ONE_Q16)
		lambda = ONE_Q16;
	*q16 = density * lambda / ONE_Q16;
	return true;
}

int kerf_pod_dist_weigh_by_models(struct kerf_pod_dist *out,
				  const struct kerf_pod_dist *d,
				  const struct kerf_model_idle *idle,
				  struct kerf_err *err)
{
	struct kerf_dist_entry *e;
	int64_t demand_total = 0, sum;
	int shift = 0;

	kerf_pod_dist_release(out);
	e = calloc(d->nr ? d->nr : 1, sizeof(*e));
	if (!e)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < d->nr; i++)
		demand_total += demand(&d->entries[i]);
	for (size_t i = 0; i < d->nr; i++) {
		unsigned __int128 k, w;

		e[i] = d->entries[i];
		/* never below a pod that may go anywhere: see the header */
		if (!factor_q16(d, i, idle, demand_total, &k) || k <= ONE_Q16)
			continue;
		w = ((unsigned __int128)e[i].weight * k + ONE_Q16 / 2) / ONE_Q16;
		/* far beyond any bound: the halving below brings it back */
		e[i].weight = w > (unsigned __int128)INT64_MAX / 4
				      ? INT64_MAX / 4
				      : (int64_t)w;
	}
	/* Halve all together until the sum is within the bound. */
	for (;;) {
		__int128 total = 0;

		for (size_t i = 0; i < d->nr; i++) {
			int64_t w = shift ? (e[i].weight + ((int64_t)1 << (shift - 1))) >> shift
					  : e[i].weight;

			total += w > 0 ? w : 1;
		}
		if (total <= KERF_DIST_MAX_WEIGHT)
			break;
		shift++;
	}
	sum = 0;
	for (size_t i = 0; i < d->nr; i++) {
		if (shift)
			e[i].weight = (e[i].weight + ((int64_t)1 << (shift - 1))) >> shift;
		if (e[i].weight < 1)
			e[i].weight = 1;
		sum += e[i].weight;
	}
	out->entries = e;
	out->nr = d->nr;
	out->alloc = d->nr;
	out->total_weight = sum;
	out->class_level = d->class_level;
	return 0;
}
