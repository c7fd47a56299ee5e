#include "core/frag.h"

#include <stdlib.h>
#include <string.h>

/*
 * round(1000 * ln(s / (100 - s)) * 65536) for s = 1..99: a placement scores
 * at least s when dF (milli-GPU) >= this / 65536.  Checked against libm by
 * tests/unit/test_frag.c.
 */
static const int64_t fgd_threshold_q16[99] = {
	-301145774, -255054335, -227809604, -208276936,
	-192966753, -180324618, -169521273, -160061655,
	-151626379, -143997310, -137018809, -130575903,
	-124581233, -118966843, -113678815, -108673635,
	-103915668, -99375349, -95027867, -90852187,
	-86830312, -82946711, -79187883, -75542004,
	-71998655, -68548595, -65183585, -61896236,
	-58679889, -55528513, -52436618, -49399189,
	-46411616, -43469650, -40569354, -37707065,
	-34879361, -32083032, -29315054, -26572561,
	-23852835, -21153277, -18471397, -15804797,
	-13151155, -10508216, -7873778, -5245679,
	-2621790, 0, 2621790, 5245679,
	7873778, 10508216, 13151155, 15804797,
	18471397, 21153277, 23852835, 26572561,
	29315054, 32083032, 34879361, 37707065,
	40569354, 43469650, 46411616, 49399189,
	52436618, 55528513, 58679889, 61896236,
	65183585, 68548595, 71998655, 75542004,
	79187883, 82946711, 86830312, 90852187,
	95027867, 99375349, 103915668, 108673635,
	113678815, 118966843, 124581233, 130575903,
	137018809, 143997310, 151626379, 160061655,
	169521273, 180324618, 192966753, 208276936,
	227809604, 255054335, 301145774,
};

void kerf_pod_dist_init(struct kerf_pod_dist *d)
{
	memset(d, 0, sizeof(*d));
}

void kerf_pod_dist_release(struct kerf_pod_dist *d)
{
	free(d->entries);
	kerf_pod_dist_init(d);
}

static int pod_key_cmp(const struct kerf_pod *a, const struct kerf_pod *b)
{
	/* Larger first, field by field: FGD's tie order. */
	if (a->cpu_milli != b->cpu_milli)
		return a->cpu_milli > b->cpu_milli ? -1 : 1;
	if (a->gpu_milli != b->gpu_milli)
		return a->gpu_milli > b->gpu_milli ? -1 : 1;
	if (a->nr_gpus != b->nr_gpus)
		return a->nr_gpus > b->nr_gpus ? -1 : 1;
	if (a->model_mask != b->model_mask)
		return a->model_mask > b->model_mask ? -1 : 1;
	if (a->mem_mib != b->mem_mib)
		return a->mem_mib > b->mem_mib ? -1 : 1;
	if (a->gpu_mem_mib != b->gpu_mem_mib)
		return a->gpu_mem_mib > b->gpu_mem_mib ? -1 : 1;
	return 0;
}

static int entry_by_key(const void *pa, const void *pb)
{
	const struct kerf_dist_entry *a = pa, *b = pb;

	return pod_key_cmp(&a->pod, &b->pod);
}

/* Key order; memory only counts when it is part of the key. */
static int pod_key_cmp_nomem(const struct kerf_pod *a, const struct kerf_pod *b,
			     unsigned flags)
{
	struct kerf_pod x = *a, y = *b;

	if (flags & KERF_DIST_MEAN_MEM)
		x.mem_mib = y.mem_mib = 0;
	return pod_key_cmp(&x, &y);
}

static int entry_by_weight(const void *pa, const void *pb)
{
	const struct kerf_dist_entry *a = pa, *b = pb;

	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return pod_key_cmp(&a->pod, &b->pod);
}

static struct kerf_pod dist_key(const struct kerf_pod *p, unsigned flags)
{
	struct kerf_pod k = {
		.cpu_milli = p->cpu_milli,
		.gpu_milli = p->gpu_milli,
		.nr_gpus = p->nr_gpus,
		.model_mask = p->model_mask,
	};

	if (flags & (KERF_DIST_KEEP_MEM | KERF_DIST_MEAN_MEM)) {
		k.mem_mib = p->mem_mib;
		k.gpu_mem_mib = p->gpu_mem_mib;
	}
	return k;
}

int kerf_pod_dist_typical_weighted(struct kerf_pod_dist *d,
				   const struct kerf_dist_entry *entries,
				   size_t nr_entries, int coverage_pct,
				   unsigned flags, struct kerf_err *err)
{
	struct kerf_dist_entry *e;
	size_t nr = 0, keep = 0;
	int64_t covered = 0, total = 0;

	if (coverage_pct < 1 || coverage_pct > 100)
		return kerf_err_set(err, -KERF_EINVAL,
				    "coverage %d%%: must be 1..100", coverage_pct);
	for (size_t i = 0; i < nr_entries; i++) {
		if (entries[i].weight <= 0 ||
		    entries[i].weight > KERF_DIST_MAX_WEIGHT - total)
			return kerf_err_set(err, -KERF_ELIMIT,
					    "typical pods: weights must be positive and sum below 2^30");
		total += entries[i].weight;
	}
	e = calloc(nr_entries ? nr_entries : 1, sizeof(*e));
	if (!e)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < nr_entries; i++) {
		e[i].pod = dist_key(&entries[i].pod, flags);
		e[i].weight = entries[i].weight;
		if (flags & KERF_DIST_MEAN_MEM)
			e[i].pod.mem_mib = entries[i].pod.mem_mib * entries[i].weight;
	}
	/* Equal keys end up adjacent even with memory in the sort key. */
	qsort(e, nr_entries, sizeof(*e), entry_by_key);
	for (size_t i = 0; i < nr_entries; i++) {
		if (nr > 0 && pod_key_cmp_nomem(&e[nr - 1].pod, &e[i].pod, flags) == 0) {
			e[nr - 1].weight += e[i].weight;
			e[nr - 1].pod.mem_mib += e[i].pod.mem_mib;
		} else {
			e[nr++] = e[i];
		}
	}
	if (flags & KERF_DIST_MEAN_MEM)
		for (size_t i = 0; i < nr; i++)
			e[i].pod.mem_mib /= e[i].weight;
	qsort(e, nr, sizeof(*e), entry_by_weight);
	while (keep < nr && covered * 100 < total * coverage_pct)
		covered += e[keep++].weight;
	kerf_pod_dist_release(d);
	d->entries = e;
	d->nr = keep;
	d->alloc = nr_entries;
	d->total_weight = covered;
	return 0;
}

int kerf_pod_dist_typical(struct kerf_pod_dist *d, const struct kerf_pod *pods,
			  size_t nr_pods, int coverage_pct, unsigned flags,
			  struct kerf_err *err)
{
	struct kerf_dist_entry *e;
	int rc;

	if ((int64_t)nr_pods >= KERF_DIST_MAX_WEIGHT)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "typical pods: %zu pods is too many", nr_pods);
	e = calloc(nr_pods ? nr_pods : 1, sizeof(*e));
	if (!e)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < nr_pods; i++) {
		e[i].pod = pods[i];
		e[i].weight = 1;
	}
	rc = kerf_pod_dist_typical_weighted(d, e, nr_pods, coverage_pct, flags,
					    err);
	free(e);
	return rc;
}

void kerf_frag_view_of(struct kerf_frag_view *v, const struct kerf_node *n)
{
	v->cpu_free_milli = n->cpu_free_milli;
	v->mem_free_mib = n->mem_free_mib;
	v->model = n->model;
	v->nr_gpus = n->nr_gpus;
	memcpy(v->gpu_free_milli, n->gpu_free_milli, sizeof(v->gpu_free_milli));
}

void kerf_frag_view_sub(struct kerf_frag_view *v, const struct kerf_pod *p,
			uint16_t gpus)
{
	v->cpu_free_milli -= p->cpu_milli;
	v->mem_free_mib -= p->mem_mib;
	for (int g = 0; g < v->nr_gpus; g++)
		if (gpus >> g & 1)
			v->gpu_free_milli[g] =
				(int16_t)(v->gpu_free_milli[g] - p->gpu_milli);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* GPU milli that copies of m alone could still use on v. */
static int64_t multi_usable(const struct kerf_pod *m,
			    const struct kerf_frag_view *v, unsigned flags)
{
	int64_t copies = 0;

	if (m->nr_gpus == 1 && m->gpu_milli < KERF_GPU_MILLI &&
	    (flags & KERF_FRAG_IDLE_USABLE)) {
		int64_t gpu = 0, cpu_cap = INT64_MAX, mem_cap = INT64_MAX;

		for (int g = 0; g < v->nr_gpus; g++) {
			int f = v->gpu_free_milli[g];

			gpu += f == KERF_GPU_MILLI ? f : f / m->gpu_milli * m->gpu_milli;
		}
		if (m->cpu_milli > 0)
			cpu_cap = v->cpu_free_milli / m->cpu_milli * m->gpu_milli;
		if ((flags & KERF_FRAG_MEM) && m->mem_mib > 0)
			mem_cap = v->mem_free_mib / m->mem_mib * m->gpu_milli;
		return min64(gpu, min64(cpu_cap, mem_cap));
	}
	if (m->nr_gpus == 1 && m->gpu_milli < KERF_GPU_MILLI &&
	    (flags & KERF_FRAG_NO_REM)) {
		int64_t gpu = 0, cpu_cap = INT64_MAX;

		for (int g = 0; g < v->nr_gpus; g++)
			if (v->gpu_free_milli[g] >= m->gpu_milli)
				gpu += v->gpu_free_milli[g];
		if (m->cpu_milli > 0 && !(flags & KERF_FRAG_NO_CPU))
			cpu_cap = v->cpu_free_milli / m->cpu_milli * m->gpu_milli;
		return min64(gpu, cpu_cap);
	}
	if (m->nr_gpus == 1 && m->gpu_milli < KERF_GPU_MILLI) {
		for (int g = 0; g < v->nr_gpus; g++)
			copies += v->gpu_free_milli[g] / m->gpu_milli;
	} else {
		int idle = 0;

		for (int g = 0; g < v->nr_gpus; g++)
			idle += v->gpu_free_milli[g] >= m->gpu_milli;
		copies = idle / m->nr_gpus;
	}
	if (m->cpu_milli > 0 && !(flags & KERF_FRAG_NO_CPU))
		copies = min64(copies, v->cpu_free_milli / m->cpu_milli);
	if ((flags & KERF_FRAG_MEM) && m->mem_mib > 0)
		copies = min64(copies, v->mem_free_mib / m->mem_mib);
	return copies * m->nr_gpus * m->gpu_milli;
}

/* GPU milli m could use on v by GPUs alone but not for lack of CPU. */
static int64_t stranded(const struct kerf_pod *m, const struct kerf_frag_view *v,
			unsigned flags)
{
	int64_t gpu = 0, cap = INT64_MAX, per = m->nr_gpus * m->gpu_milli;
	int fit = 0;

	for (int g = 0; g < v->nr_gpus; g++)
		if (v->gpu_free_milli[g] >= m->gpu_milli) {
			fit++;
			gpu += v->gpu_free_milli[g];
		}
	if (m->nr_gpus > 1 || m->gpu_milli == KERF_GPU_MILLI)
		gpu = fit / m->nr_gpus * per;
	if (m->cpu_milli > 0)
		cap = v->cpu_free_milli / m->cpu_milli * per;
	if ((flags & KERF_FRAG_MEM) && m->mem_mib > 0)
		cap = min64(cap, v->mem_free_mib / m->mem_mib * per);
	return gpu > cap ? gpu - cap : 0;
}

int64_t kerf_frag_amount(const struct kerf_pod_dist *d,
			 const struct kerf_frag_view *v, unsigned flags)
{
	int64_t idle = 0, sum = 0;

	for (int g = 0; g < v->nr_gpus; g++)
		idle += v->gpu_free_milli[g];
	if (idle == 0)
		return 0;
	for (size_t i = 0; i < d->nr; i++) {
		const struct kerf_pod *m = &d->entries[i].pod;
		int64_t frag = idle;

		if ((flags & KERF_FRAG_MULTI) &&
		    (((flags & KERF_FRAG_SMALL_ONLY) && m->nr_gpus != 1) ||
		     ((flags & KERF_FRAG_FRACTION_ONLY) &&
		      !(m->nr_gpus == 1 && m->gpu_milli < KERF_GPU_MILLI)))) {
			frag = 0;
		} else if ((flags & KERF_FRAG_MULTI) && m->nr_gpus > 0) {
			if (!m->model_mask || (m->model_mask >> v->model & 1))
				frag = idle - multi_usable(m, v, flags);
			if ((flags & KERF_FRAG_STRANDED) &&
			    (!m->model_mask || (m->model_mask >> v->model & 1)))
				frag = stranded(m, v, flags);
			else if (flags & KERF_FRAG_STRANDED)
				frag = 0;
		} else if (m->nr_gpus > 0 &&
		    (!m->model_mask || (m->model_mask >> v->model & 1)) &&
		    v->cpu_free_milli >= m->cpu_milli &&
		    (!(flags & KERF_FRAG_MEM) || v->mem_free_mib >= m->mem_mib)) {
			int fit = 0;
			int64_t small = 0;

			for (int g = 0; g < v->nr_gpus; g++) {
				if (v->gpu_free_milli[g] >= m->gpu_milli)
					fit++;
				else
					small += v->gpu_free_milli[g];
			}
			if (fit >= m->nr_gpus)
				frag = small;
		}
		sum += d->entries[i].weight * frag;
	}
	return sum;
}

int kerf_fgd_score(int64_t delta_weighted, int64_t total_weight)
{
	int lo = 0, hi = 99;

	if (total_weight <= 0)
		return 50;
	/* Largest s with delta * 65536 >= threshold[s] * total. */
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (delta_weighted * 65536 >= fgd_threshold_q16[mid - 1] * total_weight)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}
