#include "core/resources.h"

#include <stdio.h>
#include <string.h>

void kerf_res_zero(struct kerf_res *r)
{
	memset(r, 0, sizeof(*r));
}

void kerf_res_fill(struct kerf_res *r, int64_t v)
{
	for (int i = 0; i < KERF_MAX_RES; i++)
		r->v[i] = v;
}

void kerf_res_add(struct kerf_res *dst, const struct kerf_res *src)
{
	for (int i = 0; i < KERF_MAX_RES; i++)
		dst->v[i] = kerf_qty_add(dst->v[i], src->v[i]);
}

bool kerf_res_sub(struct kerf_res *dst, const struct kerf_res *src)
{
	for (int i = 0; i < KERF_MAX_RES; i++)
		if (dst->v[i] < src->v[i])
			return false;
	for (int i = 0; i < KERF_MAX_RES; i++)
		dst->v[i] -= src->v[i];
	return true;
}

void kerf_res_of_pod(struct kerf_res *r, const struct kerf_pod *p, int model,
		     int64_t count)
{
	kerf_res_zero(r);
	r->v[KERF_RES_CPU] = kerf_qty_mul(p->cpu_milli, count);
	r->v[KERF_RES_MEM] = kerf_qty_mul(p->mem_mib, count);
	if (p->nr_gpus > 0 && model >= 0 && model < KERF_MAX_MODELS)
		r->v[kerf_res_gpu(model)] =
			kerf_qty_mul(kerf_pod_gpu_milli_total(p), count);
}

void kerf_res_name(const struct kerf_cluster *c, int i, char *buf,
		   unsigned size)
{
	if (i == KERF_RES_CPU)
		snprintf(buf, size, "cpu");
	else if (i == KERF_RES_MEM)
		snprintf(buf, size, "memory");
	else if (i >= KERF_RES_GPU0 && i - KERF_RES_GPU0 < (int)c->nr_models)
		snprintf(buf, size, "gpu:%s", c->models[i - KERF_RES_GPU0].name);
	else
		snprintf(buf, size, "dimension #%d", i);
}
