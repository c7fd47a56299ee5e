#include "core/model.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/assert.h"
#include "base/buf.h"
#include "base/grow.h"
#include "core/mig/geometry.h"
#include "core/mig/place.h"

static const char free_slot_name[] = "";

void kerf_cluster_init(struct kerf_cluster *c)
{
	memset(c, 0, sizeof(*c));
	kerf_map_init(&c->by_name, true);
}

static void free_node_name(struct kerf_node *n)
{
	if (n->name && n->name != free_slot_name)
		free((char *)n->name);
	n->name = free_slot_name;
}

void kerf_cluster_release(struct kerf_cluster *c)
{
	for (size_t i = 0; i < c->nr_slots; i++) {
		free(c->nodes[i].mig);
		free_node_name(&c->nodes[i]);
	}
	for (size_t i = 0; i < c->nr_labels; i++)
		free(c->labels[i]);
	for (size_t i = 0; i < c->nr_taints; i++)
		free(c->taints[i]);
	free(c->nodes);
	free(c->stamps);
	free(c->order);
	free(c->pos);
	free(c->free_slots);
	kerf_map_release(&c->by_name);
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
	return kerf_cluster_model_hw(c, name, name, gpu_mem_mib, err);
}

int kerf_cluster_model_hw(struct kerf_cluster *c, const char *name,
			  const char *hw, int32_t gpu_mem_mib,
			  struct kerf_err *err)
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
	c->models[c->nr_models].mig = kerf_mig_model_find(hw);
	return (int)c->nr_models++;
}

/* A node name: 1 .. KERF_NODE_NAME_MAX bytes of printable text. */
static int check_name(const char *name, struct kerf_err *err)
{
	char shown[80];
	size_t len;

	if (!name || !name[0])
		return kerf_err_set(err, -KERF_EINVAL, "node name: must not be empty");
	len = strnlen(name, KERF_NODE_NAME_MAX + 1);
	if (len > KERF_NODE_NAME_MAX)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node name '%s': longer than %d bytes",
				    kerf_escape(shown, sizeof(shown), name),
				    KERF_NODE_NAME_MAX);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)name[i] <= 0x20 || name[i] == 0x7f)
			return kerf_err_set(err, -KERF_EINVAL,
					    "node name '%s': holds a space or control character",
					    kerf_escape(shown, sizeof(shown), name));
	return 0;
}

int kerf_node_spec_validate(const struct kerf_cluster *c,
			    const struct kerf_node_spec *spec,
			    struct kerf_err *err)
{
	const char *name = spec->name;
	int rc = check_name(name, err);

	if (rc < 0)
		return rc;
	if (spec->cpu_milli < 0 || spec->cpu_milli > KERF_MAX_CPU_MILLI)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': cpu_milli %" PRId64 " is outside 0..%" PRId64,
				    name, spec->cpu_milli, KERF_MAX_CPU_MILLI);
	if (spec->mem_mib < 0 || spec->mem_mib > KERF_MAX_MEM_MIB)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': memory_mib %" PRId64 " is outside 0..%" PRId64,
				    name, spec->mem_mib, KERF_MAX_MEM_MIB);
	if (spec->nr_gpus < 0 || spec->nr_gpus > KERF_NODE_MAX_GPUS)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': gpu count %d is outside 0..%d",
				    name, spec->nr_gpus, KERF_NODE_MAX_GPUS);
	if (spec->nr_gpus > 0 &&
	    (spec->model < 0 || (size_t)spec->model >= c->nr_models))
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': has %d GPUs but no GPU model",
				    name, spec->nr_gpus);
	if (spec->nr_gpus < KERF_NODE_MAX_GPUS &&
	    (spec->mig_gpus >> spec->nr_gpus) != 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': MIG mode asked for a GPU beyond its %d",
				    name, spec->nr_gpus);
	if (spec->mig_gpus && !c->models[spec->model].mig)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': GPU model '%s' has no MIG profiles",
				    name, c->models[spec->model].name);
	for (int g = 0; spec->mig_layout && g < KERF_NODE_MAX_GPUS; g++) {
		struct kerf_err why = { 0 };

		if (!(spec->mig_gpus >> g & 1)) {
			if (spec->mig_layout[g].nr)
				return kerf_err_set(err, -KERF_EINVAL,
						    "node '%s' GPU %d: MIG instances on a GPU not in MIG mode",
						    name, g);
			continue;
		}
		if (kerf_mig_layout_check(c->models[spec->model].mig, &spec->mig_layout[g],
					  &why) < 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "node '%s' GPU %d: MIG layout: %s", name, g,
					    why.msg);
	}
	if (spec->nr_gpus < KERF_NODE_MAX_GPUS &&
	    (spec->gpus_down >> spec->nr_gpus) != 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': a GPU out of service beyond its %d",
				    name, spec->nr_gpus);
	for (int g = 0; spec->mig_down && g < KERF_NODE_MAX_GPUS; g++) {
		struct kerf_err why = { 0 };

		if (!spec->mig_down[g].nr)
			continue;
		if (!(spec->mig_gpus >> g & 1))
			return kerf_err_set(err, -KERF_EINVAL,
					    "node '%s' GPU %d: MIG instances out of service on a GPU not in MIG mode",
					    name, g);
		if (kerf_mig_layout_check(c->models[spec->model].mig, &spec->mig_down[g],
					  &why) < 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "node '%s' GPU %d: MIG instances out of service: %s",
					    name, g, why.msg);
	}
	if ((c->nr_labels < 64 && spec->labels >> c->nr_labels) ||
	    (c->nr_taints < 64 && spec->taints >> c->nr_taints))
		return kerf_err_set(err, -KERF_EINVAL,
				    "node '%s': label or taint term not interned",
				    name);
	return 0;
}

/* (rank, name) of slot i against (rank, name): <0, 0, >0. */
static int cmp_rank(const struct kerf_cluster *c, uint32_t i, uint64_t rank,
		    const char *name)
{
	const struct kerf_node *n = &c->nodes[i];

	if (n->rank != rank)
		return n->rank < rank ? -1 : 1;
	return strcmp(n->name, name);
}

/* The position a node of (rank, name) takes in order[]. */
static size_t rank_position(const struct kerf_cluster *c, uint64_t rank,
			    const char *name)
{
	size_t lo = 0, hi = c->nr_nodes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_rank(c, c->order[mid], rank, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void renumber(struct kerf_cluster *c, size_t from, size_t to)
{
	for (size_t p = from; p < to; p++)
		c->pos[c->order[p]] = (uint32_t)p;
}

/* Put slot i into order[] at its rank (room must be there). */
static void order_insert(struct kerf_cluster *c, uint32_t i)
{
	size_t p = rank_position(c, c->nodes[i].rank, c->nodes[i].name);

	memmove(&c->order[p + 1], &c->order[p],
		(c->nr_nodes - p) * sizeof(*c->order));
	c->order[p] = i;
	c->nr_nodes++;
	renumber(c, p, c->nr_nodes);
}

static void order_remove(struct kerf_cluster *c, uint32_t i)
{
	size_t p = c->pos[i];

	memmove(&c->order[p], &c->order[p + 1],
		(c->nr_nodes - p - 1) * sizeof(*c->order));
	c->nr_nodes--;
	c->pos[i] = KERF_NO_POS;
	renumber(c, p, c->nr_nodes);
}

static void new_stamp(struct kerf_cluster *c, size_t i)
{
	c->nodes[i].stamp = c->stamps[i] = ++c->stamp_seq;
}

/*
 * GPU g of n out of service (down) or back: what it has free moves aside,
 * it showing none, or back where placement sees it.  A GPU in MIG mode
 * shows none anyway (its charges stay in n->mig).
 */
static void gpu_move(struct kerf_node *n, int g, bool down)
{
	int16_t milli = down ? n->gpu_free_milli[g] : n->gpu_down_free_milli[g];
	int32_t mem = down ? n->gpu_mem_free_mib[g] : n->gpu_down_mem_free_mib[g];
	int sign = down ? -1 : 1;

	if (n->mig_gpus >> g & 1)
		return;
	n->nr_gpus_idle = (uint8_t)(n->nr_gpus_idle + sign * (milli == KERF_GPU_MILLI));
	n->gpu_free_milli_sum += sign * milli;
	n->gpu_free_milli[g] = down ? 0 : milli;
	n->gpu_mem_free_mib[g] = down ? 0 : mem;
	n->gpu_down_free_milli[g] = down ? milli : 0;
	n->gpu_down_mem_free_mib[g] = down ? mem : 0;
}

/* Exactly the GPUs of mask out of service (the caller stamps the node). */
static void set_down(struct kerf_node *n, uint16_t mask)
{
	uint16_t change = (uint16_t)(mask ^ n->gpus_down);

	for (int g = 0; g < n->nr_gpus; g++) {
		if (!(change >> g & 1))
			continue;
		gpu_move(n, g, mask >> g & 1);
	}
	n->gpus_down = mask;
}

/*
 * Mark the MIG instances of the spec out of service.  One the core cannot
 * hold (an instance in use overlaps it) takes its whole GPU out of MIG
 * placement instead: the mark is never lost.  Returns the GPUs so taken.
 */
static uint16_t mark_mig_down(const struct kerf_cluster *c, struct kerf_node *n,
			      const struct kerf_node_spec *spec)
{
	static const struct kerf_mig_layout none;
	uint16_t whole = 0;

	if (!spec->mig_down || !n->mig)
		return 0;
	for (int g = 0; g < n->nr_gpus; g++) {
		const struct kerf_mig_layout *l = &spec->mig_down[g];

		if (!(n->mig_gpus >> g & 1))
			continue;
		if (kerf_mig_mark_down(c->models[n->model].mig, n->mig, g, l) < 0) {
			kerf_mig_mark_down(c->models[n->model].mig, n->mig, g, &none);
			whole |= (uint16_t)(1u << g);
		}
	}
	return whole;
}

/* Empty node of the spec's shape in slot i (name and rank set by the caller). */
static void fill_node(struct kerf_cluster *c, struct kerf_node *n,
		      const struct kerf_node_spec *spec)
{
	int nr_gpus = spec->nr_gpus;

	n->cpu_milli = n->cpu_free_milli = spec->cpu_milli;
	n->mem_mib = n->mem_free_mib = spec->mem_mib;
	n->model = nr_gpus > 0 ? (uint16_t)spec->model : KERF_MODEL_NONE;
	n->nr_gpus = (uint8_t)nr_gpus;
	n->nr_gpus_idle = (uint8_t)nr_gpus;
	n->gpu_free_milli_sum = nr_gpus * KERF_GPU_MILLI;
	for (int g = 0; g < nr_gpus; g++) {
		n->gpu_free_milli[g] = KERF_GPU_MILLI;
		n->gpu_mem_mib[g] = c->models[spec->model].mem_mib;
		n->gpu_mem_free_mib[g] = c->models[spec->model].mem_mib;
	}
}

/* Room for one more slot and one more live node; nothing changes on error. */
static int grow(struct kerf_cluster *c)
{
	size_t want = c->nr_slots + 1;
	int rc;

	if (c->nr_slots >= UINT32_MAX - 1)
		return -KERF_ELIMIT;
	if (want > c->alloc_nodes) {
		size_t a_stamps = c->alloc_nodes, a_pos = c->alloc_nodes,
		       a_nodes = c->alloc_nodes;

		rc = KERF_GROW(c->stamps, a_stamps, want);
		if (rc == 0)
			rc = KERF_GROW(c->pos, a_pos, want);
		if (rc == 0)
			rc = KERF_GROW(c->nodes, a_nodes, want);
		if (rc < 0)
			return rc;  /* the bigger arrays are harmless */
		/* all three now hold at least want; keep the smallest size */
		c->alloc_nodes = a_nodes < a_stamps ? a_nodes : a_stamps;
		if (a_pos < c->alloc_nodes)
			c->alloc_nodes = a_pos;
	}
	rc = KERF_GROW(c->order, c->alloc_order, c->nr_nodes + 1);
	if (rc < 0)
		return rc;
	if (!kerf_fit_index_has_room(&c->fit, c->nr_slots) &&
	    kerf_fit_index_build(&c->fit, c->nodes, c->nr_slots) < 0)
		return -KERF_ENOMEM;
	return kerf_map_reserve(&c->by_name, 1);
}

int kerf_cluster_find_node(const struct kerf_cluster *c, const char *name)
{
	void *v = kerf_map_get_str(&c->by_name, name);

	return v ? (int)((uintptr_t)v - 1) : -KERF_ENOTFOUND;
}

/* The slot for a new node: a freed one, else the next. */
static uint32_t take_slot(struct kerf_cluster *c)
{
	if (c->nr_free)
		return c->free_slots[--c->nr_free];
	c->nodes[c->nr_slots] = (struct kerf_node){ .name = free_slot_name };
	c->pos[c->nr_slots] = KERF_NO_POS;
	return (uint32_t)c->nr_slots++;
}

static bool has_instance(const struct kerf_mig_layout *l,
			 const struct kerf_mig_instance *in)
{
	for (unsigned k = 0; k < l->nr; k++)
		if (l->inst[k].profile == in->profile && l->inst[k].start == in->start)
			return true;
	return false;
}

/* Would the reported layouts drop an instance in use on node n? */
static bool layout_drops_busy(const struct kerf_node *n,
			      const struct kerf_node_spec *spec)
{
	for (int g = 0; spec->mig_layout && n->mig && g < n->nr_gpus; g++)
		for (unsigned k = 0; k < n->mig->gpu[g].nr; k++)
			if (n->mig->gpu[g].inst[k].in_use &&
			    (!(spec->mig_gpus >> g & 1) ||
			     !has_instance(&spec->mig_layout[g], &n->mig->gpu[g].inst[k])))
				return true;
	return false;
}

/*
 * The reported layouts replace the core's on GPUs in MIG mode; instances
 * in use stay in use (they are in the report: checked before).
 */
static void take_layouts(struct kerf_node *n, const struct kerf_node_spec *spec)
{
	for (int g = 0; spec->mig_layout && n->mig && g < n->nr_gpus; g++) {
		struct kerf_mig_layout l = spec->mig_layout[g];

		if (!(n->mig_gpus >> g & 1))
			continue;
		for (unsigned k = 0; k < l.nr; k++)
			l.inst[k].in_use = false;
		/*
		 * out of service: as reported (a node spec read back) or as
		 * the core had it; mark_mig_down sets them anew
		 */
		for (unsigned k = 0; k < n->mig->gpu[g].nr; k++)
			for (unsigned j = 0; j < l.nr; j++)
				if (l.inst[j].profile == n->mig->gpu[g].inst[k].profile &&
				    l.inst[j].start == n->mig->gpu[g].inst[k].start) {
					l.inst[j].in_use = n->mig->gpu[g].inst[k].in_use;
					l.inst[j].down |= n->mig->gpu[g].inst[k].down;
				}
		n->mig->gpu[g] = l;
		/* what the node reported is what it has: nothing to tell */
		n->mig->told[g] = l;
	}
}

static int add_new(struct kerf_cluster *c, const struct kerf_node_spec *spec,
		   struct kerf_err *err)
{
	size_t len = strlen(spec->name);
	struct kerf_node *n;
	char *name;
	uint32_t i;
	int rc = grow(c);

	if (rc < 0)
		return kerf_err_set(err, rc, "node '%s': %s", spec->name,
				    kerf_strerror(rc));
	name = malloc(len + 1);
	if (!name)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	memcpy(name, spec->name, len + 1);
	i = take_slot(c);
	n = &c->nodes[i];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->rank = spec->rank;
	n->live = true;
	fill_node(c, n, spec);
	n->domain = spec->domain;
	n->cordoned = spec->cordoned;
	n->labels = spec->labels;
	n->taints = spec->taints;
	order_insert(c, i);
	/* room was reserved: cannot fail */
	rc = kerf_map_put_str(&c->by_name, n->name, (void *)((uintptr_t)i + 1));
	KERF_ASSERT(rc == 0);
	new_stamp(c, i);
	kerf_fit_index_update(&c->fit, n, i);
	if (spec->mig_gpus && (rc = kerf_cluster_set_mig(c, i, spec->mig_gpus, err)) < 0) {
		/* only out of memory gets here (the spec was checked) */
		struct kerf_err ignore = { 0 };

		kerf_cluster_remove_node(c, i, &ignore);
		return rc;
	}
	n = &c->nodes[i];
	take_layouts(n, spec);
	if (spec->gpus_down || spec->mig_down) {
		set_down(n, (uint16_t)(spec->gpus_down | mark_mig_down(c, n, spec)));
		new_stamp(c, i);
		kerf_fit_index_update(&c->fit, n, i);
	}
	return (int)i;
}

/* Does the node's shape (what pods are charged against) change? */
static bool shape_changes(const struct kerf_node *n,
			  const struct kerf_node_spec *spec)
{
	return n->cpu_milli != spec->cpu_milli || n->mem_mib != spec->mem_mib ||
	       n->nr_gpus != spec->nr_gpus ||
	       (spec->nr_gpus > 0 && n->model != spec->model);
}

/* Does anything run on node i (a pod, a MIG instance in use)? */
static bool node_busy(const struct kerf_node *n)
{
	if (n->nr_pods)
		return true;
	for (int g = 0; n->mig && g < n->nr_gpus; g++)
		for (unsigned k = 0; k < n->mig->gpu[g].nr; k++)
			if (n->mig->gpu[g].inst[k].in_use)
				return true;
	return false;
}

static void recompute_mig_models(struct kerf_cluster *c)
{
	c->mig_models = 0;
	for (size_t k = 0; k < c->nr_slots; k++)
		if (c->nodes[k].live && c->nodes[k].mig_gpus)
			c->mig_models |= (uint64_t)1 << c->nodes[k].model;
}

int kerf_cluster_upsert_node(struct kerf_cluster *c,
			     const struct kerf_node_spec *spec,
			     struct kerf_err *err)
{
	struct kerf_node *n;
	int found, rc = kerf_node_spec_validate(c, spec, err);

	if (rc < 0)
		return rc;
	found = kerf_cluster_find_node(c, spec->name);
	if (found < 0)
		return add_new(c, spec, err);
	n = &c->nodes[found];
	if (layout_drops_busy(n, spec) && !shape_changes(n, spec))
		return kerf_err_set(err, -KERF_EBUSY,
				    "node '%s': an instance in use is missing from its MIG layout",
				    n->name);
	if (shape_changes(n, spec)) {
		if (node_busy(n))
			return kerf_err_set(err, -KERF_EBUSY,
					    "node '%s': its capacity changes while pods run there",
					    n->name);
		/* empty: rebuilt in its slot, out of MIG mode first */
		rc = kerf_cluster_set_mig(c, (size_t)found, 0, err);
		if (rc < 0)
			return rc;
		free(n->mig);
		n->mig = NULL;
		n->gpus_down = 0;
		memset(n->gpu_down_free_milli, 0, sizeof(n->gpu_down_free_milli));
		memset(n->gpu_down_mem_free_mib, 0, sizeof(n->gpu_down_mem_free_mib));
		memset(n->gpu_free_milli, 0, sizeof(n->gpu_free_milli));
		memset(n->gpu_mem_mib, 0, sizeof(n->gpu_mem_mib));
		memset(n->gpu_mem_free_mib, 0, sizeof(n->gpu_mem_free_mib));
		fill_node(c, n, spec);
		recompute_mig_models(c);
	}
	rc = kerf_cluster_set_mig(c, (size_t)found, spec->mig_gpus, err);
	if (rc < 0)
		return rc;
	take_layouts(n, spec);
	set_down(n, (uint16_t)(spec->gpus_down | mark_mig_down(c, n, spec)));
	n->domain = spec->domain;
	n->cordoned = spec->cordoned;
	n->labels = spec->labels;
	n->taints = spec->taints;
	if (n->rank != spec->rank) {
		order_remove(c, (uint32_t)found);
		n->rank = spec->rank;
		order_insert(c, (uint32_t)found);
	}
	new_stamp(c, (size_t)found);
	kerf_fit_index_update(&c->fit, n, (size_t)found);
	return found;
}

int kerf_cluster_add_node(struct kerf_cluster *c, const char *name,
			  int64_t cpu_milli, int64_t mem_mib, int model,
			  int nr_gpus, struct kerf_err *err)
{
	struct kerf_node_spec spec = {
		.name = name, .rank = c->next_rank, .cpu_milli = cpu_milli,
		.mem_mib = mem_mib, .model = model, .nr_gpus = nr_gpus,
	};
	int rc;

	if (name && kerf_cluster_find_node(c, name) >= 0)
		return kerf_err_set(err, -KERF_EEXIST, "node '%s': added twice",
				    name);
	rc = kerf_cluster_upsert_node(c, &spec, err);
	if (rc >= 0)
		c->next_rank++;
	return rc;
}

void kerf_cluster_node_spec(const struct kerf_cluster *c, size_t i,
			    struct kerf_node_spec *spec)
{
	const struct kerf_node *n = &c->nodes[i];

	*spec = (struct kerf_node_spec){
		.name = n->name, .rank = n->rank, .cpu_milli = n->cpu_milli,
		.mem_mib = n->mem_mib,
		.model = n->nr_gpus ? n->model : -1, .nr_gpus = n->nr_gpus,
		.domain = n->domain, .cordoned = n->cordoned,
		.mig_gpus = n->mig_gpus, .labels = n->labels, .taints = n->taints,
		.mig_layout = n->mig ? n->mig->gpu : NULL,
		.gpus_down = n->gpus_down,
	};
}

int kerf_cluster_remove_node(struct kerf_cluster *c, size_t i,
			     struct kerf_err *err)
{
	struct kerf_node *n;
	bool had_mig;
	int rc;

	if (i >= c->nr_slots || !c->nodes[i].live)
		return kerf_err_set(err, -KERF_ENOTFOUND, "node slot %zu: no node", i);
	n = &c->nodes[i];
	if (node_busy(n))
		return kerf_err_set(err, -KERF_EBUSY,
				    "node '%s': pods run there; requeue them first",
				    n->name);
	rc = KERF_GROW(c->free_slots, c->alloc_free, c->nr_free + 1);
	if (rc < 0)
		return kerf_err_set(err, rc, "out of memory");
	kerf_map_del_str(&c->by_name, n->name);
	order_remove(c, (uint32_t)i);
	had_mig = n->mig_gpus != 0;
	free(n->mig);
	free_node_name(n);
	*n = (struct kerf_node){ .name = free_slot_name, .cordoned = true,
				 .model = KERF_MODEL_NONE };
	new_stamp(c, i);
	kerf_fit_index_update(&c->fit, n, i);
	c->free_slots[c->nr_free++] = (uint32_t)i;
	if (had_mig)
		recompute_mig_models(c);
	return 0;
}

static int intern(char **table, size_t *nr, const char *term, const char *what,
		  struct kerf_err *err)
{
	char shown[80];
	size_t len;

	if (!term || !term[0])
		return kerf_err_set(err, -KERF_EINVAL, "%s term: must not be empty", what);
	len = strnlen(term, KERF_LABEL_MAX + 1);
	if (len > KERF_LABEL_MAX)
		return kerf_err_set(err, -KERF_EINVAL, "%s term '%s': longer than %d bytes",
				    what, kerf_escape(shown, sizeof(shown), term),
				    KERF_LABEL_MAX);
	for (size_t i = 0; i < *nr; i++)
		if (strcmp(table[i], term) == 0)
			return (int)i;
	if (*nr >= KERF_MAX_LABELS)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "%s term '%s': more than %d distinct terms",
				    what, kerf_escape(shown, sizeof(shown), term),
				    KERF_MAX_LABELS);
	table[*nr] = malloc(len + 1);
	if (!table[*nr])
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	memcpy(table[*nr], term, len + 1);
	return (int)(*nr)++;
}

int kerf_cluster_label(struct kerf_cluster *c, const char *term,
		       struct kerf_err *err)
{
	return intern(c->labels, &c->nr_labels, term, "label", err);
}

int kerf_cluster_taint(struct kerf_cluster *c, const char *term,
		       struct kerf_err *err)
{
	return intern(c->taints, &c->nr_taints, term, "taint", err);
}

void kerf_cluster_cordon(struct kerf_cluster *c, size_t i, bool cordoned)
{
	if (i >= c->nr_slots || !c->nodes[i].live ||
	    c->nodes[i].cordoned == cordoned)
		return;
	c->nodes[i].cordoned = cordoned;
	new_stamp(c, i);
	kerf_fit_index_update(&c->fit, &c->nodes[i], i);
}

void kerf_cluster_set_domain(struct kerf_cluster *c, size_t i, uint32_t d)
{
	if (i < c->nr_slots && c->nodes[i].live)
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
	uint16_t change, down;

	if (i >= c->nr_slots || !c->nodes[i].live)
		return kerf_err_set(err, -KERF_EINVAL, "MIG mode: no node in slot %zu", i);
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
	if (!change)
		return 0;
	/* a GPU out of service changes mode as if up, and stays down */
	down = n->gpus_down;
	set_down(n, 0);
	for (int g = 0; g < n->nr_gpus; g++)
		if ((change >> g & 1) && !gpu_quiet(n, g)) {
			set_down(n, down);
			return kerf_err_set(err, -KERF_EBUSY,
					    "node '%s' GPU %d: work runs on it, its MIG mode cannot change",
					    n->name, g);
		}
	if (mask && !n->mig) {
		n->mig = calloc(1, sizeof(*n->mig));
		if (!n->mig) {
			set_down(n, down);
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
		}
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
			memset(&n->mig->told[g], 0, sizeof(n->mig->told[g]));
			n->mig->free_milli[g] = KERF_GPU_MILLI;
		} else {
			/* out of it: its free instances go */
			n->mig->nr_destroyed += n->mig->gpu[g].nr;
			memset(&n->mig->gpu[g], 0, sizeof(n->mig->gpu[g]));
			memset(&n->mig->told[g], 0, sizeof(n->mig->told[g]));
			n->mig->free_milli[g] = 0;
			n->gpu_free_milli[g] = KERF_GPU_MILLI;
			n->gpu_free_milli_sum += KERF_GPU_MILLI;
			n->nr_gpus_idle++;
			n->gpu_mem_free_mib[g] = n->gpu_mem_mib[g];
		}
	}
	n->mig_gpus = mask;
	set_down(n, down);
	if (mask)
		c->mig_models |= (uint64_t)1 << n->model;
	else    /* the last node of its model in MIG mode may have left it */
		recompute_mig_models(c);
	new_stamp(c, i);
	kerf_fit_index_update(&c->fit, n, i);
	return 0;
}

static bool same_layout(const struct kerf_mig_layout *a,
			const struct kerf_mig_layout *b)
{
	if (a->nr != b->nr)
		return false;
	for (unsigned k = 0; k < a->nr; k++)
		if (!has_instance(b, &a->inst[k]))
			return false;
	return true;
}

int kerf_cluster_mig_reconcile(struct kerf_cluster *c)
{
	int changed = 0;

	if (!c->mig_models)
		return 0;
	for (size_t i = 0; i < c->nr_slots; i++) {
		struct kerf_node *n = &c->nodes[i];
		bool touched = false;

		for (int g = 0; n->mig && g < n->nr_gpus; g++) {
			struct kerf_mig_layout l;

			if (!(n->mig_gpus >> g & 1) ||
			    same_layout(&n->mig->gpu[g], &n->mig->told[g]))
				continue;
			l = n->mig->told[g];
			for (unsigned k = 0; k < l.nr; k++) {
				l.inst[k].in_use = false;
				l.inst[k].down = false;
				for (unsigned j = 0; j < n->mig->gpu[g].nr; j++)
					if (n->mig->gpu[g].inst[j].profile == l.inst[k].profile &&
					    n->mig->gpu[g].inst[j].start == l.inst[k].start) {
						l.inst[k].in_use = n->mig->gpu[g].inst[j].in_use;
						l.inst[k].down = n->mig->gpu[g].inst[j].down;
					}
			}
			n->mig->gpu[g] = l;
			touched = true;
			changed++;
		}
		if (touched) {
			new_stamp(c, i);
			kerf_fit_index_update(&c->fit, n, i);
		}
	}
	return changed;
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
	size_t n = src->nr_slots;

	kerf_cluster_init(dst);
	memcpy(dst->models, src->models, sizeof(src->models));
	dst->nr_models = src->nr_models;
	dst->stamp_seq = src->stamp_seq;
	dst->mig_models = src->mig_models;
	dst->next_rank = src->next_rank;
	for (size_t i = 0; i < src->nr_labels; i++)
		if (kerf_cluster_label(dst, src->labels[i], NULL) < 0)
			goto oom;
	for (size_t i = 0; i < src->nr_taints; i++)
		if (kerf_cluster_taint(dst, src->taints[i], NULL) < 0)
			goto oom;
	if (n == 0)
		return 0;
	dst->nodes = malloc(n * sizeof(*dst->nodes));
	dst->stamps = malloc(n * sizeof(*dst->stamps));
	dst->pos = malloc(n * sizeof(*dst->pos));
	dst->order = malloc((src->nr_nodes ? src->nr_nodes : 1) * sizeof(*dst->order));
	dst->free_slots = malloc((src->nr_free ? src->nr_free : 1) *
				 sizeof(*dst->free_slots));
	if (!dst->nodes || !dst->stamps || !dst->pos || !dst->order ||
	    !dst->free_slots || kerf_map_reserve(&dst->by_name, src->nr_nodes) < 0)
		goto oom;
	dst->alloc_nodes = dst->nr_slots = n;
	dst->alloc_order = dst->nr_nodes = src->nr_nodes;
	dst->alloc_free = dst->nr_free = src->nr_free;
	memcpy(dst->nodes, src->nodes, n * sizeof(*dst->nodes));
	memcpy(dst->stamps, src->stamps, n * sizeof(*dst->stamps));
	memcpy(dst->pos, src->pos, n * sizeof(*dst->pos));
	if (src->nr_nodes)
		memcpy(dst->order, src->order, src->nr_nodes * sizeof(*dst->order));
	if (src->nr_free)
		memcpy(dst->free_slots, src->free_slots,
		       src->nr_free * sizeof(*dst->free_slots));
	for (size_t i = 0; i < n; i++) {
		/* src's: never freed from dst */
		dst->nodes[i].mig = NULL;
		dst->nodes[i].name = free_slot_name;
	}
	for (size_t i = 0; i < n; i++) {
		const struct kerf_node *sn = &src->nodes[i];
		struct kerf_node *dn = &dst->nodes[i];

		if (sn->live) {
			size_t len = strlen(sn->name);
			char *name = malloc(len + 1);

			if (!name)
				goto oom;
			memcpy(name, sn->name, len + 1);
			dn->name = name;
			if (kerf_map_put_str(&dst->by_name, name,
					     (void *)((uintptr_t)i + 1)) < 0)
				goto oom;
		}
		if (sn->mig) {
			dn->mig = malloc(sizeof(*dn->mig));
			if (!dn->mig)
				goto oom;
			*dn->mig = *sn->mig;
		}
	}
	if (kerf_fit_index_build(&dst->fit, dst->nodes, dst->nr_slots) < 0)
		goto oom;
	return 0;
oom:
	kerf_cluster_release(dst);
	return -KERF_ENOMEM;
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

/* Would p fit on GPU g of n if it had free_milli and mem_free_mib free? */
static bool fits_free(const struct kerf_node *n, int g, const struct kerf_pod *p,
		      int32_t free_milli, int32_t mem_free_mib)
{
	if (free_milli < p->gpu_milli)
		return false;
	if (n->gpu_nr_fractions[g] && !kerf_gpu_share_ok(n, g, p))
		return false;
	if (p->gpu_mem_mib == 0)
		return true;
	/* A memory request needs a GPU whose memory is known. */
	return n->gpu_mem_mib[g] > 0 && mem_free_mib >= p->gpu_mem_mib;
}

bool kerf_gpu_fits(const struct kerf_node *n, int g, const struct kerf_pod *p)
{
	return fits_free(n, g, p, n->gpu_free_milli[g], n->gpu_mem_free_mib[g]);
}

/* Would p fit on GPU g if it were in service (what its pods leave)? */
static bool held_fits(const struct kerf_node *n, int g, const struct kerf_pod *p)
{
	return fits_free(n, g, p, kerf_gpu_held_free_milli(n, g),
			 kerf_gpu_held_mem_free_mib(n, g));
}

static const char *const misfit_text[KERF_MISFIT_COUNT_] = {
	[KERF_MISFIT_NONE] = "fits",
	[KERF_MISFIT_CORDONED] = "node is cordoned",
	[KERF_MISFIT_LABELS] = "node does not match the pod's node selector",
	[KERF_MISFIT_TAINT] = "node has a taint the pod does not tolerate",
	[KERF_MISFIT_MODEL] = "GPU model not allowed",
	[KERF_MISFIT_GPU_COUNT] = "node has too few GPUs",
	[KERF_MISFIT_CPU] = "insufficient cpu",
	[KERF_MISFIT_MEM] = "insufficient memory",
	[KERF_MISFIT_GPU] = "insufficient GPU",
	[KERF_MISFIT_SHARING] = "GPUs with room are shared against the pod's isolation or sharing mode",
	[KERF_MISFIT_MIG_MODE] = "no GPU in MIG mode with a profile large enough",
	[KERF_MISFIT_MIG] = "MIG instances in use leave no room",
	[KERF_MISFIT_GPU_DOWN] = "GPU out of service",
};

const char *kerf_misfit_text(enum kerf_misfit m)
{
	if (m >= KERF_MISFIT_COUNT_)
		return "unknown";
	return misfit_text[m];
}

/* Does some MIG instance of n stand out of service? */
static bool has_mig_down(const struct kerf_node *n)
{
	for (int g = 0; n->mig && g < n->nr_gpus; g++)
		for (unsigned k = 0; k < n->mig->gpu[g].nr; k++)
			if (n->mig->gpu[g].inst[k].down)
				return true;
	return false;
}

/* Why MIG pod p does not fit on n (GPUs out of service left out). */
static enum kerf_misfit mig_misfit(const struct kerf_cluster *c,
				   const struct kerf_node *n,
				   const struct kerf_pod *p)
{
	const struct kerf_mig_model *m;
	int pi = kerf_pod_mig_profile(c, n, p);
	struct kerf_node_mig all_up;

	if (!n->mig_gpus || pi < 0)
		return KERF_MISFIT_MIG_MODE;
	m = c->models[n->model].mig;
	if (kerf_mig_can_host(m, n->mig, (uint16_t)(n->mig_gpus & ~n->gpus_down),
			      (unsigned)pi, p->gpu_milli))
		return KERF_MISFIT_NONE;
	if (!(n->mig_gpus & n->gpus_down) && !has_mig_down(n))
		return KERF_MISFIT_MIG;
	/* would it fit with everything back in service? */
	all_up = *n->mig;
	for (int g = 0; g < n->nr_gpus; g++)
		for (unsigned k = 0; k < all_up.gpu[g].nr; k++)
			all_up.gpu[g].inst[k].down = false;
	return kerf_mig_can_host(m, &all_up, n->mig_gpus, (unsigned)pi, p->gpu_milli)
		       ? KERF_MISFIT_GPU_DOWN
		       : KERF_MISFIT_MIG;
}

enum kerf_misfit kerf_node_misfit(const struct kerf_cluster *c,
				  const struct kerf_node *n,
				  const struct kerf_pod *p)
{
	if (n->cordoned)
		return KERF_MISFIT_CORDONED;
	if ((n->labels & p->need_labels) != p->need_labels)
		return KERF_MISFIT_LABELS;
	if (n->taints & ~p->tolerates)
		return KERF_MISFIT_TAINT;
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
	if (kerf_pod_is_mig(p))
		return mig_misfit(c, n, p);
	if (!kerf_pod_is_fraction(p) && p->gpu_mem_mib == 0) {
		int idle_down = 0;

		if (n->nr_gpus_idle >= p->nr_gpus)
			return KERF_MISFIT_NONE;
		for (int g = 0; g < n->nr_gpus; g++)
			idle_down += kerf_gpu_is_down(n, g) &&
				     n->gpu_down_free_milli[g] == KERF_GPU_MILLI;
		return n->nr_gpus_idle + idle_down >= p->nr_gpus ? KERF_MISFIT_GPU_DOWN
								 : KERF_MISFIT_GPU;
	}
	int fit = 0, fit_down = 0, blocked = 0;

	for (int g = 0; g < n->nr_gpus; g++) {
		bool ok = kerf_gpu_fits(n, g, p);

		fit += ok;
		fit_down += kerf_gpu_is_down(n, g) && held_fits(n, g, p);
		blocked += !ok && !kerf_gpu_share_ok(n, g, p) &&
			   n->gpu_free_milli[g] >= p->gpu_milli;
	}
	if (fit >= p->nr_gpus)
		return KERF_MISFIT_NONE;
	if (fit + fit_down >= p->nr_gpus)
		return KERF_MISFIT_GPU_DOWN;
	return blocked ? KERF_MISFIT_SHARING : KERF_MISFIT_GPU;
}

static int popcount16(uint16_t x)
{
	return __builtin_popcount(x);
}

static void node_gpu_add(struct kerf_node *n, int g, int32_t milli,
			 int32_t mem_mib)
{
	bool was_idle;

	if (kerf_gpu_is_down(n, g)) {
		/* what it frees comes back only when it is up again */
		n->gpu_down_free_milli[g] = (int16_t)(n->gpu_down_free_milli[g] + milli);
		if (n->gpu_mem_mib[g] > 0)
			n->gpu_down_mem_free_mib[g] += mem_mib;
		return;
	}
	was_idle = n->gpu_free_milli[g] == KERF_GPU_MILLI;
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

	if (b.node >= c->nr_slots || !c->nodes[b.node].live)
		return kerf_err_set(err, -KERF_ERANGE,
				    "binding: no node in slot %" PRIu32, b.node);
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
	new_stamp(c, b.node);
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
		if ((b.gpus >> g & 1) && !held_fits(n, g, p))
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
	new_stamp(c, b.node);
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
		if (kerf_gpu_held_free_milli(n, g) + p->gpu_milli > KERF_GPU_MILLI ||
		    (n->gpu_mem_mib[g] > 0 &&
		     (int64_t)kerf_gpu_held_mem_free_mib(n, g) + p->gpu_mem_mib >
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
	new_stamp(c, b.node);
	if (p->nr_gpus > 0)
		kerf_fit_index_update(&c->fit, n, b.node);
	return 0;
}

void kerf_cluster_touch_all(struct kerf_cluster *c)
{
	for (size_t i = 0; i < c->nr_slots; i++)
		new_stamp(c, i);
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

/* Slots, ranks and names agree: order[] is every live slot in rank order. */
static int check_slots(const struct kerf_cluster *c, struct kerf_err *err)
{
	size_t live = 0;

	if (c->nr_nodes + c->nr_free != c->nr_slots || c->by_name.nr != c->nr_nodes)
		return kerf_err_set(err, -KERF_ERANGE,
				    "cluster: %zu live + %zu free slots of %zu, %zu names",
				    c->nr_nodes, c->nr_free, c->nr_slots, c->by_name.nr);
	for (size_t p = 0; p < c->nr_nodes; p++) {
		uint32_t i = c->order[p];

		if (i >= c->nr_slots || !c->nodes[i].live || c->pos[i] != p)
			return kerf_err_set(err, -KERF_ERANGE,
					    "cluster: rank %zu names slot %u, not a live node ranked there",
					    p, i);
		if (p > 0 && cmp_rank(c, c->order[p - 1], c->nodes[i].rank,
				      c->nodes[i].name) >= 0)
			return kerf_err_set(err, -KERF_ERANGE,
					    "cluster: node '%s' out of rank order",
					    c->nodes[i].name);
		if (kerf_cluster_find_node(c, c->nodes[i].name) != (int)i)
			return kerf_err_set(err, -KERF_ERANGE,
					    "cluster: node '%s' not found by its name",
					    c->nodes[i].name);
	}
	for (size_t i = 0; i < c->nr_slots; i++) {
		const struct kerf_node *n = &c->nodes[i];

		live += n->live;
		if (!n->live && (c->pos[i] != KERF_NO_POS || n->nr_pods || n->nr_gpus ||
				 n->cpu_milli || n->mem_mib || !n->cordoned || n->mig))
			return kerf_err_set(err, -KERF_ERANGE,
					    "cluster: free slot %zu is not empty", i);
	}
	if (live != c->nr_nodes)
		return kerf_err_set(err, -KERF_ERANGE,
				    "cluster: %zu live nodes, %zu ranked", live, c->nr_nodes);
	return 0;
}

int kerf_cluster_check(const struct kerf_cluster *c, struct kerf_err *err)
{
	int rc = check_slots(c, err);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < c->nr_slots; i++) {
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
			if (!kerf_gpu_is_down(n, g) &&
			    (n->gpu_down_free_milli[g] || n->gpu_down_mem_free_mib[g]))
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: free kept aside while in service",
						    n->name, g);
			if (kerf_gpu_is_down(n, g) &&
			    (f != 0 || n->gpu_mem_free_mib[g] != 0 ||
			     n->gpu_down_free_milli[g] < 0 ||
			     n->gpu_down_free_milli[g] > KERF_GPU_MILLI ||
			     (n->gpu_mem_mib[g] > 0 &&
			      (n->gpu_down_mem_free_mib[g] < 0 ||
			       n->gpu_down_mem_free_mib[g] > n->gpu_mem_mib[g]))))
				return kerf_err_set(err, -KERF_ERANGE,
						    "node '%s' GPU %d: out of service but open, or what it holds outside capacity",
						    n->name, g);
			sum += f;
			idle += f == KERF_GPU_MILLI;
		}
		if (n->nr_gpus < KERF_NODE_MAX_GPUS && (n->gpus_down >> n->nr_gpus) != 0)
			return kerf_err_set(err, -KERF_ERANGE,
					    "node '%s': a GPU out of service beyond its %u",
					    n->name, n->nr_gpus);
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

	for (size_t i = 0; i < c->nr_slots; i++)
		sum += (int64_t)c->nodes[i].nr_gpus * KERF_GPU_MILLI;
	return sum;
}

int64_t kerf_cluster_gpu_milli_used(const struct kerf_cluster *c)
{
	int64_t sum = 0;

	for (size_t i = 0; i < c->nr_slots; i++) {
		const struct kerf_node *n = &c->nodes[i];

		sum += (int64_t)n->nr_gpus * KERF_GPU_MILLI - n->gpu_free_milli_sum;
		/* a GPU in MIG mode holds what its instances in use are charged */
		for (int g = 0; g < n->nr_gpus; g++)
			if (n->mig_gpus >> g & 1)
				sum -= n->mig->free_milli[g];
			else if (kerf_gpu_is_down(n, g))  /* down: its pods' charges */
				sum -= n->gpu_down_free_milli[g];
	}
	return sum;
}
