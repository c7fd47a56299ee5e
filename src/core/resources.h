/*
 * resources: the quota dimensions of a cluster and checked arithmetic on
 * them.
 *
 * A quota vector has one slot per dimension: CPU (milli-cores), memory
 * (MiB), and one GPU dimension per GPU model of the cluster (the model is
 * the "flavor"; GPU quota is counted in gpu_milli of that model, so a
 * fraction counts as its gpu_milli and a whole GPU as 1000).
 *
 * Quantities are int64.  Every addition and multiplication that could
 * overflow is checked, and overflow saturates to KERF_QTY_INF, which is
 * larger than any quota: an overflowing request never "fits" (Kueue's
 * overflow bug, reliability.md RS-02).
 */
#ifndef KERF_CORE_RESOURCES_H
#define KERF_CORE_RESOURCES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/model.h"

enum {
	KERF_RES_CPU = 0,
	KERF_RES_MEM = 1,
	KERF_RES_GPU0 = 2,     /* first GPU flavor: 2 + model index */
	KERF_MAX_RES = KERF_RES_GPU0 + KERF_MAX_MODELS,
};

/* "No limit", and the value of any overflowed sum. */
#define KERF_QTY_INF INT64_MAX

struct kerf_res {
	int64_t v[KERF_MAX_RES];
};

static inline int kerf_res_gpu(int model)
{
	return KERF_RES_GPU0 + model;
}

/* a + b, saturating at KERF_QTY_INF; both must be >= 0. */
static inline int64_t kerf_qty_add(int64_t a, int64_t b)
{
	return a > KERF_QTY_INF - b ? KERF_QTY_INF : a + b;
}

/* a * b, saturating at KERF_QTY_INF; both must be >= 0. */
static inline int64_t kerf_qty_mul(int64_t a, int64_t b)
{
	return b != 0 && a > KERF_QTY_INF / b ? KERF_QTY_INF : a * b;
}

void kerf_res_zero(struct kerf_res *r);
void kerf_res_fill(struct kerf_res *r, int64_t v);

/* dst += src (saturating). */
void kerf_res_add(struct kerf_res *dst, const struct kerf_res *src);

/* dst -= src; returns false (dst unchanged) if any slot would go negative. */
bool kerf_res_sub(struct kerf_res *dst, const struct kerf_res *src);

/* The quota request of count pods like p placed on GPUs of model. */
void kerf_res_of_pod(struct kerf_res *r, const struct kerf_pod *p, int model,
		     int64_t count);

/* Name of dimension i in cluster c ("cpu", "memory", "gpu:A100"). */
void kerf_res_name(const struct kerf_cluster *c, int i, char *buf,
		   unsigned size);

/* Number of dimensions in use in cluster c. */
static inline int kerf_res_count(const struct kerf_cluster *c)
{
	return KERF_RES_GPU0 + (int)c->nr_models;
}

#endif /* KERF_CORE_RESOURCES_H */
