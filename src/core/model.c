#include "core/model.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/mig/geometry.h"
#include "core/mig/place.h"

void kerf_cluster_init(struct kerf_cluster *c)
{
	memset(c, 0, sizeof(*c));
	kerf_arena_init(&c->names, 0);
}

void kerf_cluster_release(struct kerf_cluster *c)
{
	for (size_t i = 0; i < c->nr_nodes; i++)
		free(c->nodes[i].mig);
	free(c->nodes);
	free(c->stamps);
	kerf_arena_release(&c->names);
	kerf_fit_index_release(&c->fit);
	kerf_cluster_init(c);
}

int kerf_cluster_find_model(const struct kerf_cluster *c, const char *name)
{
	for (size_t i = 0; i < c->nr_models; i++)
		if (strcmp(c->models[i].name, name) == 0)
			return (int)i;
	return -KERF_ENOTFOUND;
}

int kerf_cluster_model(struct kerf_cluster *c, const char *name,
		       int32_t gpu_mem_mib, struct kerf_err *err)
{
	int i = kerf_cluster_find_model(c, name);
	size_t len = strlen(name);

	if (i >= 0)
		return i;
	if (len == 0 || len >= KERF_MODEL_NAME_MAX)
		return kerf_err_set(err, -KERF_EINVAL,
				    "GPU model name '%s': must be 1 to %d bytes",
				    name, KERF_MODEL_NAME_MAX - 1);
	if (gpu_mem_mib < 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "GPU model '%s': memory %" PRId32 " MiB is negative",
				    name, gpu_mem_mib);
	if (c->nr_models >= KERF_MAX_MODELS)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "GPU model '%s': more than %d models",
				    name, KERF_MAX_MODELS);
	memcpy(c->models[c->nr_models].name, name, len + 1);
	c->models[c->nr_models].mem_mib = gpu_mem_mib;
	c->models[c->nr_models].mig = kerf_mig_model_find(name);
	return (int)c->nr_models++;
}

int kerf_cluster_add_node(struct kerf_cluster *c, const char *name,
			  int64_t cpu_milli, int64_t mem_mib, int model,
			  int nr_gpus, struct kerf_err *err)
{
	struct kerf_node *n;

	if (cpu_milli < 0 || cpu_milli > KERF_MAX_CPU_MILLI)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': cpu_milli %" PRId64 " is outside 0..%" PRId64,
				    name, cpu_milli, KERF_MAX_CPU_MILLI);
	if (mem_mib < 0 || mem_mib > KERF_MAX_MEM_MIB)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': memory_mib %" PRId64 " is outside 0..%" PRId64,
				    name, mem_mib, KERF_MAX_MEM_MIB);
	if (nr_gpus < 0 || nr_gpus > KERF_NODE_MAX_GPUS)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': gpu count %d is outside 0..%d",
				    name, nr_gpus, KERF_NODE_MAX_GPUS);
	if (nr_gpus > 0 && (model < 0 || (size_t)model >= c->nr_models))
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': has %d GPUs but no GPU model",
				    name, nr_gpus);
	if (c->nr_nodes >= UINT32_MAX - 1)
		return kerf_err_set(err, -KERF_ELIMIT, "too many nodes");
	if (c->nr_nodes == c->alloc_nodes) {
		size_t want = c->alloc_nodes ? c->alloc_nodes * 2 : 64;
		struct kerf_node *grown = realloc(c->nodes, want * sizeof(*grown));
		uint32_t *stamps;

		if (!grown)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		c->nodes = grown;
		stamps = realloc(c->stamps, want * sizeof(*stamps));
		if (!stamps)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		c->stamps = stamps;
		c->alloc_nodes = want;
	}
	n = &c->nodes[c->nr_nodes];
	memset(n, 0, sizeof(*n));
	n->name = kerf_arena_strndup(&c->names, name, strlen(name));
	if (!n->name)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	n->cpu_milli = n->cpu_free_milli = cpu_milli;
	n->mem_mib = n->mem_free_mib = mem_mib;
	n->model = nr_gpus > 0 ? (uint16_t)model : KERF_MODEL_NONE;
	n->nr_gpus = (uint8_t)nr_gpus;
	n->nr_gpus_idle = (uint8_t)nr_gpus;
	n->gpu_free_milli_sum = nr_gpus * KERF_GPU_MILLI;
	for (int g = 0; g < nr_gpus; g++) {
		n->gpu_free_milli[g] = KERF_GPU_MILLI;
		n->gpu_mem_mib[g] = c->models[model].mem_mib;
		n->gpu_mem_free_mib[g] = c->models[model].mem_mib;
	}
	n->stamp = c->stamps[c->nr_nodes] = ++c->stamp_seq;
	if (kerf_fit_index_has_room(&c->fit, c->nr_nodes))
		kerf_fit_index_update(&c->fit, n, c->nr_nodes);
	else if (kerf_fit_index_build(&c->fit, c->nodes, c->nr_nodes + 1) < 0)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	return (int)c->nr_nodes++;
}

void kerf_cluster_cordon(struct kerf_cluster *c, size_t i, bool cordoned)
{
	if (i >= c->nr_nodes || c->nodes[i].cordoned == cordoned)
		return;
	c->nodes[i].cordoned = cordoned;
	c->nodes[i].stamp = c->stamps[i] = ++c->stamp_seq;
	kerf_fit_index_update(&c->fit, &c->nodes[i], i);
}

void kerf_cluster_set_domain(struct kerf_cluster *c, size_t i, uint32_t d)
{
	if (i < c->nr_nodes)
		c->nodes[i].domain = d;
}

/* May GPU g of n change its MIG mode: nothing runs on it? */
static bool gpu_quiet(const struct kerf_node *n, int g)
{
	if (n->mig_gpus >> g & 1) {
		for (unsigned k = 0; k < n->mig->gpu[g].nr; k++)
			if (n->mig->gpu[g].inst[k].in_use)
				return false;
		return true;
	}
	return n->gpu_free_milli[g] == KERF_GPU_MILLI &&
	       n->gpu_nr_fractions[g] == 0 &&
	       n->gpu_mem_free_mib[g] == n->gpu_mem_mib[g];
}

int kerf_cluster_set_mig(struct kerf_cluster *c, size_t i, uint16_t mask,
			 struct kerf_err *err)
{
	struct kerf_node *n;
	uint16_t change;

	if (i >= c->nr_nodes)
		return kerf_err_set(err, -KERF_EINVAL, "MIG mode: no node %zu", i);
	n = &c->nodes[i];
	if (n->nr_gpus < KERF_NODE_MAX_GPUS && (mask >> n->nr_gpus) != 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': MIG mode asked for a GPU beyond its %u",
				    n->name, n->nr_gpus);
	if (mask && !c->models[n->model].mig)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': GPU model '%s' has no MIG profiles",
				    n->name, c->models[n->model].name);
	change = (uint16_t)(mask ^ n->mig_gpus);
	for (int g = 0; g < n->nr_gpus; g++)
		if ((change >> g & 1) && !gpu_quiet(n, g))
			return kerf_err_set(err, -KERF_EINVAL,
					    "node '%s' GPU %d: work runs on it, its MIG mode cannot change",
					    n->name, g);
	if (!change)
		return 0;
	if (mask && !n->mig) {
		n->mig = calloc(1, sizeof(*n->mig));
		if (!n->mig)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	for (int g = 0; g < n->nr_gpus; g++) {
		if (!(change >> g & 1))
			continue;
		if (mask >> g & 1) {
			/* into MIG mode: invisible to whole GPUs and fractions */
			n->gpu_free_milli[g] = 0;
			n->gpu_free_milli_sum -= KERF_GPU_MILLI;
			n->nr_gpus_idle--;
			n->gpu_mem_free_mib[g] = 0;
			memset(&n->mig->gpu[g], 0, sizeof(n->mig->gpu[g]));
			n->mig->free_milli[g] = KERF_GPU_MILLI;
		} else {
			/* out of it: its free instances go */
			n->mig->nr_destroyed += n->mig->gpu[g].nr;
			memset(&n->mig->gpu[g], 0, sizeof(n->mig->gpu[g]));
			n->mig->free_milli[g] = 0;
			n->gpu_free_milli[g] = KERF_GPU_MILLI;
			n->gpu_free_milli_sum += KERF_GPU_MILLI;
			n->nr_gpus_idle++;
			n->gpu_mem_free_mib[g] = n->gpu_mem_mib[g];
		}
	}
	n->mig_gpus = mask;
	if (mask) {
		c->mig_models |= (uint64_t)1 << n->model;
	} else {
		/* the last node of its model in MIG mode may have left it */
		c->mig_models = 0;
		for (size_t k = 0; k < c->nr_nodes; k++)
			if (c->nodes[k].mig_gpus)
				c->mig_models |= (uint64_t)1 << c->nodes[k].model;
	}
	n->stamp = c->stamps[i] = ++c->stamp_seq;
	kerf_fit_index_update(&c->fit, n, i);
	return 0;
}

int kerf_pod_mig_profile(const struct kerf_cluster *c, const struct kerf_node *n,
			 const struct kerf_pod *p)
{
	const struct kerf_mig_model *m;

	if (n->nr_gpus == 0 || n->model >= c->nr_models)
		return -1;
	m = c->models[n->model].mig;
	if (!m)
		return -1;
	return kerf_mig_profile_for(m, p->mig_slices, (uint32_t)p->gpu_mem_mib);
}

int kerf_cluster_copy(struct kerf_cluster *dst, const struct kerf_cluster *src)
{
	kerf_cluster_init(dst);
	memcpy(dst->models, src->models, sizeof(src->models));
	dst->nr_models = src->nr_models;
	dst->stamp_seq = src->stamp_seq;
	dst->mig_models = src->mig_models;
	if (src->nr_nodes == 0)
		return 0;
	dst->nodes = malloc(src->nr_nodes * sizeof(*dst->nodes));
	dst->stamps = malloc(src->nr_nodes * sizeof(*dst->stamps));
	if (!dst->nodes || !dst->stamps) {
		kerf_cluster_release(dst);
		return -KERF_ENOMEM;
	}
	dst->alloc_nodes = dst->nr_nodes = src->nr_nodes;
	memcpy(dst->nodes, src->nodes, src->nr_nodes * sizeof(*dst->nodes));
	memcpy(dst->stamps, src->stamps, src->nr_nodes * sizeof(*dst->stamps));
	for (size_t i = 0; i < src->nr_nodes; i++)
		dst->nodes[i].mig = NULL;   /* src's: never freed from dst */
	for (size_t i = 0; i < src->nr_nodes; i++) {
		const char *s = src->nodes[i].name;

		dst->nodes[i].name = kerf_arena_strndup(&dst->names, s, strlen(s));
		if (src->nodes[i].mig) {
			dst->nodes[i].mig = malloc(sizeof(*dst->nodes[i].mig));
			if (dst->nodes[i].mig)
				*dst->nodes[i].mig = *src->nodes[i].mig;
		}
		if (!dst->nodes[i].name || (src->nodes[i].mig && !dst->nodes[i].mig)) {
			kerf_cluster_release(dst);
			return -KERF_ENOMEM;
		}
	}
	if (kerf_fit_index_build(&dst->fit, dst->nodes, dst->nr_nodes) < 0) {
		kerf_cluster_release(dst);
		return -KERF_ENOMEM;
	}
	return 0;
}

int kerf_pod_validate(const struct kerf_pod *p, struct kerf_err *err)
{
	if (p->cpu_milli < 0 || p->cpu_milli > KERF_MAX_CPU_MILLI)
		return kerf_err_set(err, -KERF_EINVAL,
				    "cpu_milli %" PRId64 ": must be 0..%" PRId64,
				    p->cpu_milli, KERF_MAX_CPU_MILLI);
	if (p->mem_mib < 0 || p->mem_mib > KERF_MAX_MEM_MIB)
		return kerf_err_set(err, -KERF_EINVAL,
				    "memory_mib %" PRId64 ": must be 0..%" PRId64,
				    p->mem_mib, KERF_MAX_MEM_MIB);
	if (p->nr_gpus > KERF_NODE_MAX_GPUS)
		return kerf_err_set(err, -KERF_EINVAL,
				    "num_gpu %u: more than %d GPUs on one node",
				    p->nr_gpus, KERF_NODE_MAX_GPUS);
	if (p->nr_gpus == 0) {
		if (p->gpu_milli != 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "gpu_milli %" PRId32 ": set on a pod with no GPUs",
					    p->gpu_milli);
		if (p->gpu_mem_mib != 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "gpu_memory_mib %" PRId32 ": set on a pod with no GPUs",
					    p->gpu_mem_mib);
		return 0;
	}
	if (p->gpu_milli <= 0 || p->gpu_milli > KERF_GPU_MILLI)
		return kerf_err_set(err, -KERF_EINVAL,
				    "gpu_milli %" PRId32 ": must be 1..1000 for a GPU pod",
				    p->gpu_milli);
	if (p->nr_gpus > 1 && p->gpu_milli != KERF_GPU_MILLI)
		return kerf_err_set(err, -KERF_EINVAL,
				    "gpu_milli %" PRId32 ": a fraction is only allowed with num_gpu 1",
				    p->gpu_milli);
	if (p->gpu_mem_mib < 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "gpu_memory_mib %" PRId32 ": must not be negative",
				    p->gpu_mem_mib);
	if (p->mig_slices > KERF_MIG_MAX_SLICES)
		return kerf_err_set(err, -KERF_EINVAL,
				    "mig_slices %u: a GPU has at most %d compute slices",
				    p->mig_slices, KERF_MIG_MAX_SLICES);
	if (p->mig_slices && p->nr_gpus != 1)
		return kerf_err_set(err, -KERF_EINVAL,
				    "mig_slices %u: a MIG instance is asked with num_gpu 1, not %u",
				    p->mig_slices, p->nr_gpus);
	if (p->mig_slices && p->share != KERF_SHARE_DEFAULT)
		return kerf_err_set(err, -KERF_EINVAL,
				    "mig_slices %u: a MIG instance is not shared by MPS or time-slicing",
				    p->mig_slices);
	return 0;
}

int kerf_pod_class(const struct kerf_pod *p)
{
	if (p->nr_gpus == 0)
		return -1;
	return kerf_pod_is_fraction(p) || kerf_pod_is_mig(p) ? 0 : p->nr_gpus;
}

bool kerf_gpu_share_ok(const struct kerf_node *n, int g, const struct kerf_pod *p)
{
	if (n->gpu_nr_fractions[g] == 0 || !kerf_pod_is_fraction(p))
		return true;
	if (n->gpu_share[g] != p->share || p->isolation == KERF_ISOLATION_HARDWARE ||
	    n->gpu_isolation[g] == KERF_ISOLATION_HARDWARE)
		return false;
	if (p->isolation == KERF_ISOLATION_SHARED &&
	    n->gpu_isolation[g] == KERF_ISOLATION_SHARED)
		return true;
	/* someone there (or p) shares only within its tenant */
	return n->gpu_tenant[g] == p->tenant;
}

bool kerf_gpu_fits(const struct kerf_node *n, int g, const struct kerf_pod *p)
{
	if (n->gpu_free_milli[g] < p->gpu_milli)
		return false;
	if (n->gpu_nr_fractions[g] && !kerf_gpu_share_ok(n, g, p))
		return false;
	if (p->gpu_mem_mib == 0)
		return true;
	/* A memory request needs a GPU whose memory is known. */
	return n->gpu_mem_mib[g] > 0 && n->gpu_mem_free_mib[g] >= p->gpu_mem_mib;
}

static const char *const misfit_text[KERF_MISFIT_COUNT_] = {
	[KERF_MISFIT_NONE] = "fits",
	[KERF_MISFIT_CORDONED] = "node is cordoned",
	[KERF_MISFIT_MODEL] = "GPU model not allowed",
	[KERF_MISFIT_GPU_COUNT] = "node has too few GPUs",
	[KERF_MISFIT_CPU] = "insufficient cpu",
	[KERF_MISFIT_MEM] = "insufficient memory",
	[KERF_MISFIT_GPU] = "insufficient GPU",
	[KERF_MISFIT_SHARING] = "GPUs with room are shared against the pod's isolation or sharing mode",
	[KERF_MISFIT_MIG_MODE] = "no GPU in MIG mode with a profile large enough",
	[KERF_MISFIT_MIG] = "MIG instances in use leave no room",
};

const char *kerf_misfit_text(enum kerf_misfit m)
{
	if (m >= KERF_MISFIT_COUNT_)
		return "unknown";
	return misfit_text[m];
}

enum kerf_misfit kerf_node_misfit(const struct kerf_cluster *c,
				  const struct kerf_node *n,
				  const struct kerf_pod *p)
{
	if (n->cordoned)
		return KERF_MISFIT_CORDONED;
	if (p->nr_gpus > 0) {
		if (n->nr_gpus == 0)
			return KERF_MISFIT_MODEL;
		if (p->model_mask && !(p->model_mask >> n->model & 1))
			return KERF_MISFIT_MODEL;
		if (n->nr_gpus < p->nr_gpus)
			return KERF_MISFIT_GPU_COUNT;
	}
	if (n->cpu_free_milli < p->cpu_milli)
		return KERF_MISFIT_CPU;
	if (n->mem_free_mib < p->mem_mib)
		return KERF_MISFIT_MEM;
	if (p->nr_gpus == 0)
		return KERF_MISFIT_NONE;
	if (kerf_pod_is_mig(p)) {
		int pi = kerf_pod_mig_profile(c, n, p);

		if (!n->mig_gpus || pi < 0)
			return KERF_MISFIT_MIG_MODE;
		return kerf_mig_can_host(c->models[n->model].mig, n->mig,
					 n->mig_gpus, (unsigned)pi, p->gpu_milli)
			       ? KERF_MISFIT_NONE
			       : KERF_MISFIT_MIG;
	}
	if (!kerf_pod_is_fraction(p) && p->gpu_mem_mib == 0)
		return n->nr_gpus_idle >= p->nr_gpus ? KERF_MISFIT_NONE
						     : KERF_MISFIT_GPU;
	int fit = 0, blocked = 0;

	for (int g = 0; g < n->nr_gpus; g++) {
		bool ok = kerf_gpu_fits(n, g, p);

		fit += ok;
		blocked += !ok && !kerf_gpu_share_ok(n, g, p) &&
			   n->gpu_free_milli[g] >= p->gpu_milli;
	}
	if (fit >= p->nr_gpus)
		return KERF_MISFIT_NONE;
	return blocked ? KERF_MISFIT_SHARING : KERF_MISFIT_GPU;
}

static int popcount16(uint16_t x)
{
	return __builtin_popcount(x);
}

static void node_gpu_add(struct kerf_node *n, int g, int32_t milli,
			 int32_t mem_mib)
{
	bool was_idle = n->gpu_free_milli[g] == KERF_GPU_MILLI;

	n->gpu_free_milli[g] = (int16_t)(n->gpu_free_milli[g] + milli);
	n->gpu_free_milli_sum += milli;
	if (n->gpu_mem_mib[g] > 0)
		n->gpu_mem_free_mib[g] += mem_mib;
	if (was_idle && n->gpu_free_milli[g] != KERF_GPU_MILLI)
		n->nr_gpus_idle--;
	else if (!was_idle && n->gpu_free_milli[g] == KERF_GPU_MILLI)
		n->nr_gpus_idle++;
}

/* A fraction joins (+1) or leaves (-1) the fractions sharing GPU g. */
static void node_gpu_share(struct kerf_node *n, int g, const struct kerf_pod *p,
			   int delta)
{
	if (!kerf_pod_is_fraction(p))
		return;
	if (delta < 0) {
		if (--n->gpu_nr_fractions[g] == 0) {
			n->gpu_share[g] = 0;
			n->gpu_isolation[g] = 0;
			n->gpu_tenant[g] = 0;
		}
		return;
	}
	if (n->gpu_nr_fractions[g]++ == 0) {
		n->gpu_share[g] = p->share;
		n->gpu_isolation[g] = p->isolation;
		n->gpu_tenant[g] = p->tenant;
		return;
	}
	if (p->isolation > n->gpu_isolation[g])
		n->gpu_isolation[g] = p->isolation;
	if (n->gpu_tenant[g] != p->tenant)
		n->gpu_tenant[g] = KERF_GPU_TENANTS_MIXED;
}

static int check_binding(const struct kerf_cluster *c,
			 const struct kerf_pod *p, struct kerf_binding b,
			 struct kerf_err *err)
{
	const struct kerf_node *n;

	if (b.node >= c->nr_nodes)
		return kerf_err_set(err, -KERF_ERANGE,
				    "binding: node %" PRIu32 " does not exist",
				    b.node);
	n = &c->nodes[b.node];
	if (popcount16(b.gpus) != p->nr_gpus)
		return kerf_err_set(err, -KERF_ERANGE,
				    "binding on '%s': %d GPUs chosen for a pod asking %u",
				    n->name, popcount16(b.gpus), p->nr_gpus);
	if (n->nr_gpus < KERF_NODE_MAX_GPUS && (b.gpus >> n->nr_gpus) != 0)
		return kerf_err_set(err, -KERF_ERANGE,
				    "binding on '%s': GPU index beyond %u GPUs",
				    n->name, n->nr_gpus);
	if (p->nr_gpus > 0 && p->model_mask &&
	    !(p->model_mask >> n->model & 1))
		return kerf_err_set(err, -KERF_ERANGE,
				    "binding on '%s': GPU model %s not allowed",
				    n->name, c->models[n->model].name);
	return 0;
}

/* Take (+1) or give back (-1) the MIG instance of pod p at b. */
static int mig_bind(struct kerf_cluster *c, const struct kerf_pod *p,
		    struct kerf_binding b, int dir, struct kerf_err *err)
{
	struct kerf_node *n = &c->nodes[b.node];
	int g = __builtin_ctz(b.gpus);
	int pi = kerf_pod_mig_profile(c, n, p);
	struct kerf_err why = { 0 };
	int rc;

	if (!(n->mig_gpus >> g & 1) || pi < 0)
		return kerf_err_set(err, -KERF_ERANGE,
				    "%s on '%s': GPU %d is not in MIG mode or has no profile for the pod",
				    dir > 0 ? "binding" : "unbind", n->name, g);
	if (dir < 0 && (n->nr_pods == 0 || n->nr_pods_by_class[0] == 0 ||
			n->cpu_free_milli + p->cpu_milli > n->cpu_milli ||
			n->mem_free_mib + p->mem_mib > n->mem_mib))
		return kerf_err_set(err, -KERF_ERANGE,
				    "unbind on '%s': pod was not bound here", n->name);
	rc = dir > 0 ? kerf_mig_take(c->models[n->model].mig, n->mig, g,
				     (unsigned)pi, b.mig_start, p->gpu_milli, &why)
		     : kerf_mig_give(c->models[n->model].mig, n->mig, g,
				     (unsigned)pi, b.mig_start, p->gpu_milli, &why);
	if (rc < 0)
		return kerf_err_set(err, rc, "%s on '%s': %s",
				    dir > 0 ? "binding" : "unbind", n->name, why.msg);
	n->cpu_free_milli -= dir * p->cpu_milli;
	n->mem_free_mib -= dir * p->mem_mib;
	n->nr_pods = (uint32_t)((int64_t)n->nr_pods + dir);
	n->nr_pods_by_class[0] = (uint16_t)(n->nr_pods_by_class[0] + dir);
	n->stamp = c->stamps[b.node] = ++c->stamp_seq;
	kerf_fit_index_update(&c->fit, n, b.node);
	return 0;
}

int kerf_cluster_bind(struct kerf_cluster *c, const struct kerf_pod *p,
		      struct kerf_binding b, struct kerf_err *err)
{
	struct kerf_node *n;
	int rc = check_binding(c, p, b, err);

	if (rc < 0)
		return rc;
	n = &c->nodes[b.node];
	if (n->cpu_free_milli < p->cpu_milli || n->mem_free_mib < p->mem_mib)
		return kerf_err_set(err, -KERF_ERANGE,
				    "binding on '%s': cpu or memory overcommitted",
				    n->name);
	if (kerf_pod_is_mig(p))
		return mig_bind(c, p, b, +1, err);
	for (int g = 0; g < n->nr_gpus; g++)
		if ((b.gpus >> g & 1) && !kerf_gpu_fits(n, g, p))
			return kerf_err_set(err, -KERF_ERANGE,
					    "binding on '%s': GPU %d overcommitted",
					    n->name, g);
	n->cpu_free_milli -= p->cpu_milli;
	n->mem_free_mib -= p->mem_mib;
	for (int g = 0; g < n->nr_gpus; g++)
		if (b.gpus >> g & 1) {
			node_gpu_add(n, g, -p->gpu_milli, -p->gpu_mem_mib);
			node_gpu_share(n, g, p, +1);
		}
	n->nr_pods++;
	if (p->nr_gpus > 0)
		n->nr_pods_by_class[kerf_pod_class(p)]++;
	n->stamp = c->stamps[b.node] = ++c->stamp_seq;
	if (p->nr_gpus > 0)
		kerf_fit_index_update(&c->fit, n, b.node);
	return 0;
}

int kerf_cluster_unbind(struct kerf_cluster *c, const struct kerf_pod *p,
			struct kerf_binding b, struct kerf_err *err)
{
	struct kerf_node *n;
	int rc = check_binding(c, p, b, err);

	if (rc < 0)
		return rc;
	n = &c->nodes[b.node];
	if (kerf_pod_is_mig(p))
		return mig_bind(c, p, b, -1, err);
	if (n->nr_pods == 0 || n->cpu_free_milli + p->cpu_milli > n->cpu_milli ||
	    n->mem_free_mib + p->mem_mib > n->mem_mib)
		return kerf_err_set(err, -KERF_ERANGE,
				    "unbind on '%s': pod was not bound here",
				    n->name);
	for (int g = 0; g < n->nr_gpus; g++) {
		if (!(b.gpus >> g & 1))
			continue;
		if (n->gpu_free_milli[g] + p->gpu_milli > KERF_GPU_MILLI ||
		    (n->gpu_mem_mib[g] > 0 &&
		     (int64_t)n->gpu_mem_free_mib[g] + p->gpu_mem_mib >
			     n->gpu_mem_mib[g]))
			return kerf_err_set(err, -KERF_ERANGE,
					    "unbind on '%s': GPU %d was not held",
					    n->name, g);
	}
	if (p->nr_gpus > 0 && n->nr_pods_by_class[kerf_pod_class(p)] == 0)
		return kerf_err_set(err, -KERF_ERANGE,
				    "unbind on '%s': no pod of this class bound",
				    n->name);
	n->cpu_free_milli += p->cpu_milli;
	n->mem_free_mib += p->mem_mib;
	for (int g = 0; g < n->nr_gpus; g++)
		if ((b.gpus >> g & 1) && kerf_pod_is_fraction(p) &&
		    n->gpu_nr_fractions[g] == 0)
			return kerf_err_set(err, -KERF_ERANGE,
					    "unbind on '%s': GPU %d holds no fraction",
					    n->name, g);
	for (int g = 0; g < n->nr_gpus; g++)
		if (b.gpus >> g & 1) {
			node_gpu_add(n, g, p->gpu_milli, p->gpu_mem_mib);
			node_gpu_share(n, g, p, -1);
		}
	n->nr_pods--;
	if (p->nr_gpus > 0)
		n->nr_pods_by_class[kerf_pod_class(p)]--;
	n->stamp = c->stamps[b.node] = ++c->stamp_seq;
	if (p->nr_gpus > 0)
		kerf_fit_index_update(&c->fit, n, b.node);
	return 0;
}

void kerf_cluster_touch_all(struct kerf_cluster *c)
{
	for (size_t i = 0; i < c->nr_nodes; i++)
		c->nodes[i].stamp = c->stamps[i] = ++c->stamp_seq;
}

/* GPUs in MIG mode: legal layouts, charges within the GPU, hidden above. */
static int check_mig(const struct kerf_cluster *c, const struct kerf_node *n,
		     struct kerf_err *err)
{
	const struct kerf_mig_model *m = c->models[n->model].mig;

	if (!m || !n->mig)
		return kerf_err_set(err, -KERF_ERANGE,
				    "node '%s': GPUs in MIG mode without a MIG table",
				    n->name);
	for (int g = 0; g < n->nr_gpus; g++) {
		struct kerf_err why = { 0 };

		if (!(n->mig_gpus >> g & 1)) {
			if (n->mig->gpu[g].nr || n->mig->free_milli[g])
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: MIG instances on a GPU not in MIG mode",
						    n->name, g);
			continue;
		}
		if (kerf_mig_layout_check(m, &n->mig->gpu[g], &why) < 0)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s' GPU %d: illegal MIG layout: %s",
					    n->name, g, why.msg);
		if (n->mig->free_milli[g] < 0 || n->mig->free_milli[g] > KERF_GPU_MILLI)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s' GPU %d: MIG free %d milli outside 0..1000",
					    n->name, g, n->mig->free_milli[g]);
		if (n->gpu_free_milli[g] != 0 || n->gpu_nr_fractions[g] ||
		    n->gpu_mem_free_mib[g] != 0)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s' GPU %d: in MIG mode but open to whole GPUs or fractions",
					    n->name, g);
	}
	return 0;
}

int kerf_cluster_check(const struct kerf_cluster *c, struct kerf_err *err)
{
	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct kerf_node *n = &c->nodes[i];
		int32_t sum = 0;
		int idle = 0;

		if (n->cpu_free_milli < 0 || n->cpu_free_milli > n->cpu_milli)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s': cpu free %" PRId64 " outside 0..%" PRId64,
					    n->name, n->cpu_free_milli, n->cpu_milli);
		if (n->mem_free_mib < 0 || n->mem_free_mib > n->mem_mib)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s': memory free %" PRId64 " outside 0..%" PRId64,
					    n->name, n->mem_free_mib, n->mem_mib);
		for (int g = 0; g < n->nr_gpus; g++) {
			int f = n->gpu_free_milli[g];

			if (f < 0 || f > KERF_GPU_MILLI)
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: free %d milli outside 0..1000",
						    n->name, g, f);
			if (n->gpu_mem_mib[g] > 0 &&
			    (n->gpu_mem_free_mib[g] < 0 ||
			     n->gpu_mem_free_mib[g] > n->gpu_mem_mib[g]))
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: memory free outside capacity",
						    n->name, g);
			if (n->gpu_share[g] >= KERF_SHARE_COUNT_ ||
			    n->gpu_isolation[g] >= KERF_ISOLATION_COUNT_ ||
			    (n->gpu_nr_fractions[g] == 0 &&
			     (n->gpu_share[g] || n->gpu_isolation[g] || n->gpu_tenant[g])))
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: sharing state without fractions or out of range",
						    n->name, g);
			sum += f;
			idle += f == KERF_GPU_MILLI;
		}
		if (sum != n->gpu_free_milli_sum || idle != n->nr_gpus_idle)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s': GPU free counters disagree with GPUs",
					    n->name);
		if (n->nr_gpus > 0 && n->model >= c->nr_models)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s': unknown GPU model", n->name);
		if (n->mig_gpus && check_mig(c, n, err) < 0)
			return -KERF_ERANGE;
		if (c->stamps[i] != n->stamp)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s': packed stamp disagrees", n->name);
		if (kerf_fit_index_check_node(&c->fit, n, i) < 0)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s': fit index disagrees with its GPUs",
					    n->name);
	}
	return 0;
}

int64_t kerf_cluster_gpu_milli_capacity(const struct kerf_cluster *c)
{
	int64_t sum = 0;

	for (size_t i = 0; i < c->nr_nodes; i++)
		sum += (int64_t)c->nodes[i].nr_gpus * KERF_GPU_MILLI;
	return sum;
}

int64_t kerf_cluster_gpu_milli_used(const struct kerf_cluster *c)
{
	int64_t sum = 0;

	for (size_t i = 0; i < c->nr_nodes; i++) {
		const struct kerf_node *n = &c->nodes[i];

		sum += (int64_t)n->nr_gpus * KERF_GPU_MILLI - n->gpu_free_milli_sum;
		/* a GPU in MIG mode holds what its instances in use are charged */
		for (int g = 0; g < n->nr_gpus; g++)
			if (n->mig_gpus >> g & 1)
				sum -= n->mig->free_milli[g];
	}
	return sum;
}
