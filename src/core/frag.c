#include "core/frag.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu_pick.h"

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

/* FGD's key order: larger first, field by field. */
static int key_cmp(const struct kerf_pod *a, const struct kerf_pod *b)
{
	if (a->cpu_milli != b->cpu_milli)
		return a->cpu_milli > b->cpu_milli ? -1 : 1;
	if (a->gpu_milli != b->gpu_milli)
		return a->gpu_milli > b->gpu_milli ? -1 : 1;
	if (a->nr_gpus != b->nr_gpus)
		return a->nr_gpus > b->nr_gpus ? -1 : 1;
	if (a->model_mask != b->model_mask)
		return a->model_mask > b->model_mask ? -1 : 1;
	return 0;
}

struct kerf_pod kerf_pod_dist_class(const struct kerf_pod *p, int level)
{
	struct kerf_pod k = {
		.cpu_milli = p->cpu_milli,
		.gpu_milli = p->gpu_milli,
		.nr_gpus = p->nr_gpus,
		.model_mask = p->model_mask,
	};
	int bits = KERF_DIST_LEVELS - 2 - level; /* CPU mantissa bits kept */

	if (level <= 0)
		return k;
	if (bits < 0) {
		k.cpu_milli = 0;
	} else if (k.cpu_milli > 0) {
		int top = 63 - __builtin_clzll((uint64_t)k.cpu_milli);

		if (top > bits)
			k.cpu_milli &= ~(((int64_t)1 << (top - bits)) - 1);
	}
	if (k.gpu_milli > 0 && k.gpu_milli < KERF_GPU_MILLI) {
		int32_t width = (int32_t)16 << (level - 1);

		k.gpu_milli = k.gpu_milli / width * width;
	}
	return k;
}

/* A class of keys with the sums its representative is computed from. */
struct dist_acc {
	struct kerf_pod cls;     /* class key at the current level */
	struct kerf_dist_entry e;/* representative and weight */
	__int128 cpu_sum;        /* sum of weight * cpu_milli */
	__int128 gpu_sum;        /* sum of weight * gpu_milli */
	__int128 mem_sum;        /* sum of weight * mem_mib */
	__int128 gpu_mem_sum;    /* sum of weight * gpu_mem_mib */
};

static int acc_by_class(const void *pa, const void *pb)
{
	const struct dist_acc *a = pa, *b = pb;

	return key_cmp(&a->cls, &b->cls);
}

/*
 * Heaviest first, ties by larger representative.  Representatives of
 * different classes differ, since each lies within its class, so the order
 * is total.
 */
static int acc_by_weight(const void *pa, const void *pb)
{
	const struct dist_acc *a = pa, *b = pb;

	if (a->e.weight != b->e.weight)
		return a->e.weight > b->e.weight ? -1 : 1;
	return key_cmp(&a->e.pod, &b->e.pod);
}

/*
 * Merge the accumulators of equal class keys and set each representative:
 * the class's GPU count and models, its weighted mean CPU and GPU milli
 * (floored, so within the class).  Returns the number of classes.
 */
static size_t merge_classes(struct dist_acc *a, size_t n)
{
	size_t nr = 0;

	qsort(a, n, sizeof(*a), acc_by_class);
	for (size_t i = 0; i < n; i++) {
		if (nr > 0 && key_cmp(&a[nr - 1].cls, &a[i].cls) == 0) {
			a[nr - 1].e.weight += a[i].e.weight;
			a[nr - 1].cpu_sum += a[i].cpu_sum;
			a[nr - 1].gpu_sum += a[i].gpu_sum;
			a[nr - 1].mem_sum += a[i].mem_sum;
			a[nr - 1].gpu_mem_sum += a[i].gpu_mem_sum;
		} else {
			a[nr++] = a[i];
		}
	}
	for (size_t i = 0; i < nr; i++) {
		int64_t w = a[i].e.weight;

		a[i].e.pod = (struct kerf_pod){
			.cpu_milli = (int64_t)(a[i].cpu_sum / w),
			.gpu_milli = (int32_t)(a[i].gpu_sum / w),
			.nr_gpus = a[i].cls.nr_gpus,
			.model_mask = a[i].cls.model_mask,
		};
	}
	return nr;
}

int kerf_pod_dist_typical_weighted(struct kerf_pod_dist *d,
				   const struct kerf_dist_entry *entries,
				   size_t nr_entries, int coverage_pct,
				   unsigned flags, struct kerf_err *err)
{
	return kerf_pod_dist_typical_bounded(d, entries, nr_entries,
					     coverage_pct,
					     KERF_DIST_MAX_ENTRIES, flags, err);
}

int kerf_pod_dist_typical_bounded(struct kerf_pod_dist *d,
				  const struct kerf_dist_entry *entries,
				  size_t nr_entries, int coverage_pct,
				  size_t max_entries, unsigned flags,
				  struct kerf_err *err)
{
	struct kerf_dist_entry *out;
	struct dist_acc *a;
	size_t nr = nr_entries, keep;
	int64_t covered, total = 0;
	int level = 0;

	if (coverage_pct < 1 || coverage_pct > 100)
		return kerf_err_set(err, -KERF_EINVAL,
				    "coverage %d%%: must be 1..100", coverage_pct);
	if (max_entries < 1)
		return kerf_err_set(err, -KERF_EINVAL,
				    "typical pods: at most 0 entries");
	for (size_t i = 0; i < nr_entries; i++) {
		if (entries[i].weight <= 0 ||
		    entries[i].weight > KERF_DIST_MAX_WEIGHT - total)
			return kerf_err_set(err, -KERF_ELIMIT,
					    "typical pods: weights must be positive and sum below 2^30");
		total += entries[i].weight;
	}
	a = calloc(nr_entries ? nr_entries : 1, sizeof(*a));
	if (!a)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < nr_entries; i++) {
		const struct kerf_pod *p = &entries[i].pod;
		int64_t w = entries[i].weight;

		a[i].cls = kerf_pod_dist_class(p, 0);
		a[i].e.weight = w;
		a[i].cpu_sum = (__int128)p->cpu_milli * w;
		a[i].gpu_sum = (__int128)p->gpu_milli * w;
		a[i].mem_sum = (__int128)p->mem_mib * w;
		a[i].gpu_mem_sum = (__int128)p->gpu_mem_mib * w;
	}
	/*
	 * FGD's rule on exact keys first; while it needs more than
	 * max_entries, the same rule on the next coarser size classes.  The
	 * classes nest, so each level merges the previous level's classes.
	 */
	for (;;) {
		nr = merge_classes(a, nr);
		qsort(a, nr, sizeof(*a), acc_by_weight);
		covered = 0;
		keep = 0;
		while (keep < nr && covered * 100 < total * coverage_pct)
			covered += a[keep++].e.weight;
		if (keep <= max_entries || level == KERF_DIST_LEVELS - 1)
			break;
		level++;
		for (size_t i = 0; i < nr; i++)
			a[i].cls = kerf_pod_dist_class(&a[i].cls, level);
	}
	/* Only with more than max_entries GPU counts and model sets. */
	while (keep > max_entries)
		covered -= a[--keep].e.weight;
	out = calloc(keep ? keep : 1, sizeof(*out));
	if (!out) {
		free(a);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < keep; i++) {
		out[i] = a[i].e;
		if (flags & KERF_DIST_MEAN_MEM) {
			out[i].pod.mem_mib = (int64_t)(a[i].mem_sum / a[i].e.weight);
			out[i].pod.gpu_mem_mib =
				(int32_t)(a[i].gpu_mem_sum / a[i].e.weight);
		}
	}
	free(a);
	kerf_pod_dist_release(d);
	d->entries = out;
	d->nr = keep;
	d->alloc = keep;
	d->total_weight = covered;
	d->class_level = level;
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

static bool model_allows(const struct kerf_pod *m,
			 const struct kerf_frag_view *v)
{
	return !m->model_mask || (m->model_mask >> v->model & 1);
}

int64_t kerf_frag_amount(const struct kerf_pod_dist *d,
			 const struct kerf_frag_view *v, unsigned flags)
{
	int64_t f;

	kerf_frag_measures(d, v, flags, &f, NULL);
	return f;
}

/* Free GPU milli sorted from most to least free, with prefix sums. */
struct sorted_gpus {
	int nr;
	int32_t free_milli[KERF_NODE_MAX_GPUS];
	int64_t prefix[KERF_NODE_MAX_GPUS + 1]; /* prefix[i]: sum of first i */
};

static void sort_gpus(struct sorted_gpus *s, const struct kerf_frag_view *v)
{
	s->nr = v->nr_gpus;
	for (int g = 0; g < v->nr_gpus; g++) {
		int32_t x = v->gpu_free_milli[g];
		int i = g;

		for (; i > 0 && s->free_milli[i - 1] < x; i--)
			s->free_milli[i] = s->free_milli[i - 1];
		s->free_milli[i] = x;
	}
	/* no GPU: never counted as having room (see kerf_frag_measures) */
	for (int g = v->nr_gpus; g < KERF_NODE_MAX_GPUS; g++)
		s->free_milli[g] = -1;
	s->prefix[0] = 0;
	for (int i = 0; i < s->nr; i++)
		s->prefix[i + 1] = s->prefix[i] + s->free_milli[i];
}

/*
 * GPU milli that a stream of pods like m alone could still use: the GPUs
 * with room for m (whole multiples of m's GPU count for whole-GPU pods), but
 * no more than the copies of m the free CPU (and memory) leave room for.
 * fit and fit_milli: how many GPUs have room for m, and their free sum.
 */
static int64_t capacity_usable(const struct kerf_pod *m,
			       const struct kerf_frag_view *v, int fit,
			       int64_t fit_milli, unsigned flags)
{
	int64_t per = (int64_t)m->nr_gpus * m->gpu_milli, gpu, copies;

	if (m->gpu_milli == KERF_GPU_MILLI) {
		/* GPU counts are mostly powers of two: a shift, not a divide */
		copies = (m->nr_gpus & (m->nr_gpus - 1)) == 0
				 ? fit >> __builtin_ctz(m->nr_gpus)
				 : fit / m->nr_gpus;
		gpu = copies * per;
	} else {
		gpu = fit_milli;
		/*
		 * ceil(gpu / per) copies; when CPU and memory leave room for
		 * at least (gpu + per - 1) / per of them anyway, the answer is
		 * all of gpu and no division is needed
		 */
		if ((m->cpu_milli <= 0 ||
		     v->cpu_free_milli * per >= (gpu + per - 1) * m->cpu_milli) &&
		    (!(flags & KERF_FRAG_MEM) || m->mem_mib <= 0 ||
		     v->mem_free_mib * per >= (gpu + per - 1) * m->mem_mib))
			return gpu;
		copies = (gpu + per - 1) / per;
	}
	/* Copies beyond what CPU or memory allow cannot be placed. */
	if (m->cpu_milli > 0 && v->cpu_free_milli < copies * m->cpu_milli)
		copies = v->cpu_free_milli / m->cpu_milli;
	if ((flags & KERF_FRAG_MEM) && m->mem_mib > 0 &&
	    v->mem_free_mib < copies * m->mem_mib)
		copies = v->mem_free_mib / m->mem_mib;
	return copies * per < gpu ? copies * per : gpu;
}

void kerf_frag_measures(const struct kerf_pod_dist *d,
			const struct kerf_frag_view *v, unsigned flags,
			int64_t *f_out, int64_t *c_out)
{
	struct sorted_gpus s;
	int64_t idle, f = 0, c = 0;

	sort_gpus(&s, v);
	idle = s.prefix[s.nr];
	if (idle == 0) {
		*f_out = 0;
		if (c_out)
			*c_out = 0;
		return;
	}
	int32_t last_milli = -1;
	int fit = 0;

	for (size_t i = 0; i < d->nr; i++) {
		const struct kerf_pod *m = &d->entries[i].pod;
		int64_t w = d->entries[i].weight, frag = idle, cfrag = idle;

		if (m->nr_gpus > 0 && model_allows(m, v)) {
			/* GPUs with room for m: the same as the last entry's
			 * when it asked as much (whole GPUs mostly) */
			if (m->gpu_milli != last_milli) {
				/* a count, not a search: no branch to mispredict */
				fit = 0;
				for (int g = 0; g < KERF_NODE_MAX_GPUS; g++)
					fit += s.free_milli[g] >= m->gpu_milli;
				last_milli = m->gpu_milli;
			}
			if (fit >= m->nr_gpus && v->cpu_free_milli >= m->cpu_milli &&
			    (!(flags & KERF_FRAG_MEM) || v->mem_free_mib >= m->mem_mib))
				frag = idle - s.prefix[fit];
			if (c_out)
				cfrag = idle - capacity_usable(m, v, fit,
							       s.prefix[fit], flags);
		}
		f += w * frag;
		c += w * cfrag;
	}
	*f_out = f;
	if (c_out)
		*c_out = c;
}

int64_t kerf_frag_capacity(const struct kerf_pod_dist *d,
			   const struct kerf_frag_view *v, unsigned flags)
{
	int64_t f, c;

	kerf_frag_measures(d, v, flags, &f, &c);
	return c;
}

int32_t kerf_frag_score_pod(const struct kerf_node *n, const struct kerf_pod *p,
			    const struct kerf_frag_view *v, int64_t m0,
			    const struct kerf_pod_dist *d,
			    kerf_frag_measure_fn measure, const void *ctx,
			    uint16_t *gpus)
{
	struct kerf_frag_view after = *v;
	int best = -1;

	if (!kerf_pod_is_fraction(p)) {
		*gpus = kerf_gpus_best_fit(n, p);
		kerf_frag_view_sub(&after, p, *gpus);
		return kerf_fgd_score(m0 - measure(ctx, d, &after),
				      d->total_weight);
	}
	for (int g = 0; g < n->nr_gpus; g++) {
		int s, seen = 0;

		if (!kerf_gpu_fits(n, g, p))
			continue;
		for (int h = 0; h < g && !seen; h++)
			seen = kerf_gpu_fits(n, h, p) &&
			       n->gpu_free_milli[h] == n->gpu_free_milli[g];
		if (seen)
			continue;
		after = *v;
		kerf_frag_view_sub(&after, p, (uint16_t)(1u << g));
		s = kerf_fgd_score(m0 - measure(ctx, d, &after),
				   d->total_weight);
		if (s > best) {
			best = s;
			*gpus = (uint16_t)(1u << g);
		}
	}
	return best < 0 ? 0 : best;
}

int64_t kerf_pod_dist_distance(const struct kerf_pod_dist *a,
			       const struct kerf_pod_dist *b)
{
	int64_t wa = a->total_weight, wb = b->total_weight, sum = 0;
	int lv = a->class_level;

	if (wa <= 0 || wb <= 0)
		return wa == wb ? 0 : 1000;
	/* different grids: no class of one is a class of the other */
	if (a->class_level != b->class_level)
		return 1000;
	/*
	 * sum over classes of |pa - pb|, scaled by wa * wb to stay integer;
	 * a representative's class is its members' (it lies within it)
	 */
	for (size_t i = 0; i < a->nr; i++) {
		struct kerf_pod ka = kerf_pod_dist_class(&a->entries[i].pod, lv);
		int64_t xb = 0;

		for (size_t j = 0; j < b->nr; j++) {
			struct kerf_pod kb =
				kerf_pod_dist_class(&b->entries[j].pod, lv);

			if (key_cmp(&ka, &kb) == 0)
				xb = b->entries[j].weight;
		}
		sum += llabs(a->entries[i].weight * wb - xb * wa);
	}
	for (size_t j = 0; j < b->nr; j++) {
		struct kerf_pod kb = kerf_pod_dist_class(&b->entries[j].pod, lv);
		bool in_a = false;

		for (size_t i = 0; i < a->nr && !in_a; i++) {
			struct kerf_pod ka =
				kerf_pod_dist_class(&a->entries[i].pod, lv);

			in_a = key_cmp(&ka, &kb) == 0;
		}
		if (!in_a)
			sum += b->entries[j].weight * wa;
	}
	/* total variation = half the L1 distance, in per mille */
	return (int64_t)((__int128)sum * 500 / ((__int128)wa * wb));
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
