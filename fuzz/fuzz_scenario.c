/*
 * fuzz_scenario: libFuzzer target for the YAML scenario reader
 * (kerf_scenario_parse and format/yaml_doc under it), the decoder of untrusted
 * scenario files.  The input is the YAML text.
 *
 * Beyond "no crash, no leak, no sanitizer report", each input checks
 * properties and abort()s when one fails:
 *  - on error: the code is negative and recorded, the message is printable
 *    ASCII and starts with the path given followed by ':', and the
 *    scenario is empty (all zero);
 *  - on success: every value is within the documented bounds (names of
 *    printable ASCII, counts, units, references between sections, parents
 *    before children, leaves for work, the cycles, workloads and pods of
 *    the whole run); writing the scenario back as YAML (block style,
 *    numbers in exact decimals) and parsing that gives the same scenario
 *    (round trip); and a cluster of at most 4096 nodes builds
 *    (a scenario that parsed always builds) into a state that passes
 *    kerf_state_check, with the nodes, tenants and model masks the
 *    scenario says.
 */
#include "fuzz.h"

#define FUZZ_TARGET "fuzz_scenario"
#include "check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "core/policy.h"
#include "core/resources.h"
#include "core/state.h"
#include "core/mig/geometry.h"
#include "sim/scenario.h"

/* The path handed to the parser; every message must start with it. */
static const char input_path[] = "fuzz-input.yaml";
static const char roundtrip_path[] = "roundtrip.yaml";

enum { BUILD_MAX_NODES = 4096 };

#define MAX_MS ((int64_t)3600000000000)

/* ---- a growable text buffer for the round trip --------------------- */

struct text {
	char *data;
	size_t len;
	size_t alloc;
};

static void text_add(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	CHECK(n >= 0);
	if (t->len + (size_t)n + 1 > t->alloc) {
		size_t want = t->alloc ? t->alloc : 1024;
		char *grown;

		while (want < t->len + (size_t)n + 1)
			want *= 2;
		grown = realloc(t->data, want);
		CHECK(grown != NULL);
		t->data = grown;
		t->alloc = want;
	}
	va_start(ap, fmt);
	vsnprintf(t->data + t->len, t->alloc - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* v / scale as an exact decimal (at most 10 digits after the point). */
static void add_qty(struct text *t, int64_t v, int64_t scale)
{
	int64_t rem = v % scale;

	if (v < 0) {
		/* only priority values, which are integers */
		CHECK(scale == 1);
		text_add(t, "%" PRId64, v);
		return;
	}
	text_add(t, "%" PRId64, v / scale);
	if (rem == 0)
		return;
	text_add(t, ".");
	for (int i = 0; i < 10 && rem != 0; i++) {
		rem *= 10;
		text_add(t, "%c", (char)('0' + rem / scale));
		rem %= scale;
	}
}

/* A name, double-quoted: it may hold any printable ASCII. */
static void add_name(struct text *t, const char *s)
{
	text_add(t, "\"");
	for (; *s; s++)
		text_add(t, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
	text_add(t, "\"");
}

/* ---- value checks -------------------------------------------------- */

static bool is_name(const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

/* Model i of the cluster: the i-th distinct model in group order. */
static int models_of(const struct kerf_scenario *sc,
		     const char *names[KERF_MAX_MODELS])
{
	int nr = 0;

	for (size_t g = 0; g < sc->nr_nodes; g++) {
		int m;

		if (sc->nodes[g].gpus == 0)
			continue;
		for (m = 0; m < nr && strcmp(names[m], sc->nodes[g].model); m++)
			;
		if (m == nr) {
			CHECK(nr < KERF_MAX_MODELS);
			names[nr++] = sc->nodes[g].model;
		}
	}
	return nr;
}

static int tenant_index(const struct kerf_scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->nr_tenants; i++)
		if (strcmp(sc->tenants[i].name, name) == 0)
			return (int)i;
	return -1;
}

static bool has_children(const struct kerf_scenario *sc, const char *name)
{
	for (size_t i = 0; i < sc->nr_tenants; i++)
		if (strcmp(sc->tenants[i].parent, name) == 0)
			return true;
	return false;
}

static void check_parsed(const struct kerf_scenario *sc)
{
	const char *models[KERF_MAX_MODELS];
	int nr_models = models_of(sc, models);
	uint64_t nodes = 0;

	CHECK(sc->name[0] == '\0' || is_name(sc->name, 63));
	CHECK(sc->horizon_ms > 0 && sc->horizon_ms <= MAX_MS);
	CHECK(sc->cycle_ms > 0 && sc->cycle_ms <= MAX_MS);
	/* the work of a run is bounded up front (docs/scenario.md) */
	CHECK(sc->horizon_ms / sc->cycle_ms <= 10000000);
	{
		uint64_t wl = 0, pods = 0;

		for (size_t g = 0; g < sc->nr_generators; g++) {
			wl += sc->generators[g].count;
			pods += (uint64_t)sc->generators[g].count *
				sc->generators[g].set.count;
		}
		CHECK(wl <= 1000000 && pods <= 10000000);
	}
	CHECK(kerf_policy_lookup(sc->policy) != NULL);
	CHECK(sc->nr_nodes >= 1 && sc->nr_nodes <= 4096);
	for (size_t g = 0; g < sc->nr_nodes; g++) {
		const struct kerf_scn_nodes *n = &sc->nodes[g];

		CHECK(is_name(n->prefix, 63));
		CHECK(n->count >= 1);
		nodes += n->count;
		CHECK(n->cpu_milli >= 0 && n->cpu_milli <= KERF_MAX_CPU_MILLI);
		CHECK(n->mem_mib >= 0 && n->mem_mib <= KERF_MAX_MEM_MIB);
		CHECK(n->gpus >= 0 && n->gpus <= KERF_NODE_MAX_GPUS);
		if (n->gpus > 0) {
			CHECK(is_name(n->model, KERF_MODEL_NAME_MAX - 1));
		} else {
			CHECK(n->model[0] == '\0' && n->gpu_mem_mib == 0 &&
			      n->domain_nodes == 0);
		}
		CHECK(n->gpu_mem_mib >= 0);
		for (size_t h = 0; h < g; h++)
			CHECK(strcmp(sc->nodes[h].prefix, n->prefix) != 0);
	}
	CHECK(nodes <= (1u << 20));
	CHECK(sc->classes.nr >= 0 && sc->classes.nr <= KERF_MAX_CLASSES);
	for (int i = 0; i < sc->classes.nr; i++)
		CHECK(is_name(sc->classes.c[i].name, 63));
	CHECK(sc->nr_tenants <= 4096);
	for (size_t k = 0; k < sc->nr_tenants; k++) {
		const struct kerf_scn_tenant *t = &sc->tenants[k];
		int p = t->parent[0] ? tenant_index(sc, t->parent) : -1;

		CHECK(is_name(t->name, 63));
		CHECK(strcmp(t->name, "cluster") != 0);
		CHECK(tenant_index(sc, t->name) == (int)k);
		CHECK(t->parent[0] == '\0' || (p >= 0 && (size_t)p < k));
		CHECK(t->weight >= 1);
		CHECK(t->nr_quotas >= 0 && t->nr_quotas <= KERF_SCN_MAX_QUOTAS);
		for (int q = 0; q < t->nr_quotas; q++) {
			const struct kerf_scn_quota *l = &t->quotas[q];

			CHECK(l->nominal >= 0 && l->borrowing_limit >= 0 &&
			      l->lending_limit >= 0);
			CHECK(l->lending_limit == KERF_QTY_INF ||
			      l->lending_limit <= l->nominal);
		}
		for (int c = 0; c < t->nr_allowed_classes; c++)
			CHECK(kerf_classes_find(&sc->classes,
						t->allowed_classes[c]) >= 0);
		for (int c = 0; c < t->nr_idle_exempt_classes; c++)
			CHECK(kerf_classes_find(&sc->classes,
						t->idle_exempt_classes[c]) >= 0);
		CHECK(t->network_class[0] == '\0' || is_name(t->network_class, 63));
		if (t->idle_action != KERF_IDLE_NONE)
			CHECK(t->idle_threshold_pct >= 0 &&
			      t->idle_threshold_pct <= 100 && t->idle_after_ms > 0);
		if (t->budget_gpu_milli_hours != 0)
			CHECK(t->budget_gpu_milli_hours > 0 &&
			      t->budget_window_ms > 0);
	}
	for (size_t i = 0; i < sc->nr_generators; i++) {
		const struct kerf_scn_generator *g = &sc->generators[i];
		struct kerf_err err = { 0 };
		int rc = kerf_pod_validate(&g->set.req, &err);

		CHECK_MSG(rc == 0, err.msg);
		CHECK(is_name(g->name, 63));
		CHECK(tenant_index(sc, g->tenant) >= 0);
		CHECK(!has_children(sc, g->tenant));
		CHECK(kerf_classes_find(&sc->classes, g->class_name) >= 0);
		CHECK(g->count >= 1 && g->count <= 1000000);
		CHECK(g->set.count >= 1 && g->set.count <= KERF_MAX_GANG_PODS);
		CHECK(g->min_count <= g->set.count);
		CHECK(g->duration_ms > 0 && g->start_ms >= 0 &&
		      g->interarrival_ms >= 0 && g->checkpoint_every_ms >= 0);
		CHECK(g->utilisation_pct >= 0 && g->utilisation_pct <= 100);
		CHECK(nr_models == 64 || g->set.req.model_mask >> nr_models == 0);
		if (g->set.req.nr_gpus == 0)
			CHECK(g->set.req.model_mask == 0);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(sc->generators[j].name, g->name) != 0);
	}
}

/* ---- writing a scenario back --------------------------------------- */

static const char *const isolations[] = { "shared", "tenant", "hardware" };
static const char *const dists[] = { "fixed", "exponential" };
static const char *const topologies[] = { "any", "node", "nvlink", "pack" };

static void write_tenant(struct text *t, const struct kerf_scenario *sc,
			 size_t k, int level)
{
	const struct kerf_scn_tenant *x = &sc->tenants[k];
	char ind[160];
	bool first = true;

	CHECK(level < 70);
	memset(ind, ' ', (size_t)level * 2 + 2);
	ind[level * 2 + 2] = '\0';
	text_add(t, "%.*s- name: ", level * 2, ind);
	add_name(t, x->name);
	text_add(t, "\n%sweight: %" PRIu32 "\n", ind, x->weight);
	if (x->nr_quotas > 0)
		text_add(t, "%squota:\n", ind);
	for (int q = 0; q < x->nr_quotas; q++) {
		const struct kerf_scn_quota *l = &x->quotas[q];
		int64_t scale = strcmp(l->resource, "memory") == 0 ? 1024 : 1000;

		text_add(t, "%s  ", ind);
		add_name(t, l->resource);
		text_add(t, ": { nominal: ");
		add_qty(t, l->nominal, scale);
		if (l->borrowing_limit != KERF_QTY_INF) {
			text_add(t, ", borrowing_limit: ");
			add_qty(t, l->borrowing_limit, scale);
		}
		if (l->lending_limit != KERF_QTY_INF) {
			text_add(t, ", lending_limit: ");
			add_qty(t, l->lending_limit, scale);
		}
		text_add(t, " }\n");
	}
	if (x->nr_allowed_classes > 0) {
		text_add(t, "%sallowed_classes: [", ind);
		for (int c = 0; c < x->nr_allowed_classes; c++) {
			if (c)
				text_add(t, ", ");
			add_name(t, x->allowed_classes[c]);
		}
		text_add(t, "]\n");
	}
	text_add(t, "%sisolation: %s\n", ind, isolations[x->isolation]);
	if (x->network_class[0]) {
		text_add(t, "%snetwork_class: ", ind);
		add_name(t, x->network_class);
		text_add(t, "\n");
	}
	if (x->budget_gpu_milli_hours > 0) {
		text_add(t, "%sbudget: { gpu_hours: ", ind);
		add_qty(t, x->budget_gpu_milli_hours, 1000);
		text_add(t, ", window_h: ");
		add_qty(t, x->budget_window_ms, 3600000);
		text_add(t, ", on_exhaustion: %s }\n",
			 x->budget_action == KERF_BUDGET_HOLD ? "hold"
								: "preemptible-only");
	}
	if (x->idle_action != KERF_IDLE_NONE) {
		text_add(t, "%sidle: { below_pct: %" PRId32 ", for_s: ", ind,
			 x->idle_threshold_pct);
		add_qty(t, x->idle_after_ms, 1000);
		text_add(t, ", action: %s",
			 x->idle_action == KERF_IDLE_NOTIFY ? "notify"
							    : "checkpoint-evict");
		if (x->nr_idle_exempt_classes > 0) {
			text_add(t, ", exempt_classes: [");
			for (int c = 0; c < x->nr_idle_exempt_classes; c++) {
				if (c)
					text_add(t, ", ");
				add_name(t, x->idle_exempt_classes[c]);
			}
			text_add(t, "]");
		}
		text_add(t, " }\n");
	}
	for (size_t j = k + 1; j < sc->nr_tenants; j++) {
		if (strcmp(sc->tenants[j].parent, x->name) != 0)
			continue;
		if (first)
			text_add(t, "%schildren:\n", ind);
		first = false;
		write_tenant(t, sc, j, level + 1);
	}
}

/*
 * The MIG profile a MIG pod was sized to: on the model of the first group
 * with GPUs in MIG mode that the pod may use (as the reader sizes it).
 */
static const char *mig_name(const struct kerf_scenario *sc, const char **models,
			    int nr_models, const struct kerf_pod *p)
{
	for (size_t g = 0; g < sc->nr_nodes; g++) {
		const struct kerf_mig_model *mm;
		int m, pi;

		if (!sc->nodes[g].mig_gpus)
			continue;
		for (m = 0; m < nr_models && strcmp(models[m], sc->nodes[g].model); m++)
			;
		if (p->model_mask && !(p->model_mask >> m & 1))
			continue;
		mm = kerf_mig_model_find(sc->nodes[g].model);
		CHECK(mm != NULL);
		pi = kerf_mig_profile_for(mm, p->mig_slices, (uint32_t)p->gpu_mem_mib);
		CHECK(pi >= 0);
		return mm->profiles[pi].name;
	}
	CHECK_MSG(false, "a MIG pod without a group in MIG mode");
	return NULL;
}

static void write_generator(struct text *t, const struct kerf_scenario *sc,
			    const struct kerf_scn_generator *g)
{
	const struct kerf_pod *p = &g->set.req;
	const char *models[KERF_MAX_MODELS];
	int nr_models = models_of(sc, models);
	bool first = true;

	text_add(t, "  - name: ");
	add_name(t, g->name);
	text_add(t, "\n    tenant: ");
	add_name(t, g->tenant);
	text_add(t, "\n    class: ");
	add_name(t, g->class_name);
	text_add(t, "\n    count: %" PRIu32 "\n    start_s: ", g->count);
	add_qty(t, g->start_ms, 1000);
	text_add(t, "\n    every_s: ");
	add_qty(t, g->interarrival_ms, 1000);
	text_add(t, "\n    arrival: %s\n    duration_s: ", dists[g->arrival]);
	add_qty(t, g->duration_ms, 1000);
	text_add(t, "\n    duration: %s\n    pods: %" PRIu32 "\n",
		 dists[g->duration], g->set.count);
	if (kerf_pod_is_mig(p)) {
		/* the profile's name: its slices and memory come back from it */
		text_add(t, "    mig: ");
		add_name(t, mig_name(sc, models, nr_models, p));
		text_add(t, "\n");
	} else if (kerf_pod_is_fraction(p)) {
		text_add(t, "    gpu_fraction: ");
		add_qty(t, p->gpu_milli, 1000);
		text_add(t, "\n");
	} else {
		text_add(t, "    gpus: %u\n", p->nr_gpus);
	}
	if (p->gpu_mem_mib > 0 && !kerf_pod_is_mig(p)) {
		text_add(t, "    gpu_memory_gib: ");
		add_qty(t, p->gpu_mem_mib, 1024);
		text_add(t, "\n");
	}
	text_add(t, "    cpu: ");
	add_qty(t, p->cpu_milli, 1000);
	text_add(t, "\n    memory_gib: ");
	add_qty(t, p->mem_mib, 1024);
	text_add(t, "\n");
	if (p->model_mask) {
		text_add(t, "    models: [");
		for (int m = 0; m < nr_models; m++) {
			if (!(p->model_mask >> m & 1))
				continue;
			if (!first)
				text_add(t, ", ");
			add_name(t, models[m]);
			first = false;
		}
		text_add(t, "]\n");
	}
	if (g->min_count)
		text_add(t, "    min_count: %" PRIu32 "\n", g->min_count);
	text_add(t, "    topology: %s\n    checkpoint_every_s: ",
		 topologies[g->topology]);
	add_qty(t, g->checkpoint_every_ms, 1000);
	text_add(t, "\n    utilisation_pct: %" PRId32 "\n", g->utilisation_pct);
}

static void write_scenario(struct text *t, const struct kerf_scenario *sc)
{
	if (sc->name[0]) {
		text_add(t, "name: ");
		add_name(t, sc->name);
		text_add(t, "\n");
	}
	text_add(t, "seed: %" PRIu64 "\nhorizon_s: ", sc->seed);
	add_qty(t, sc->horizon_ms, 1000);
	text_add(t, "\ncycle_s: ");
	add_qty(t, sc->cycle_ms, 1000);
	text_add(t, "\npolicy: ");
	add_name(t, sc->policy);
	text_add(t, "\ncluster:\n  nodes:\n");
	for (size_t g = 0; g < sc->nr_nodes; g++) {
		const struct kerf_scn_nodes *n = &sc->nodes[g];

		text_add(t, "    - prefix: ");
		add_name(t, n->prefix);
		text_add(t, "\n      count: %" PRIu32 "\n      cpu: ", n->count);
		add_qty(t, n->cpu_milli, 1000);
		text_add(t, "\n      memory_gib: ");
		add_qty(t, n->mem_mib, 1024);
		text_add(t, "\n      gpus: %d\n", n->gpus);
		if (n->gpus == 0)
			continue;
		text_add(t, "      model: ");
		add_name(t, n->model);
		text_add(t, "\n      nvlink_domain_nodes: %" PRIu32 "\n      mig_gpus: %d\n",
			 n->domain_nodes, n->mig_gpus);
		if (n->gpu_mem_mib) {
			text_add(t, "      gpu_memory_gib: ");
			add_qty(t, n->gpu_mem_mib, 1024);
			text_add(t, "\n");
		}
	}
	if (sc->classes.nr > 0)
		text_add(t, "priority_classes:\n");
	for (int i = 0; i < sc->classes.nr; i++) {
		const struct kerf_priority_class *c = &sc->classes.c[i];

		text_add(t, "  - name: ");
		add_name(t, c->name);
		text_add(t, "\n    value: %" PRId32 "\n    preemptible: %s\n    checkpoint_grace_s: ",
			 c->value, c->preemptible ? "true" : "false");
		add_qty(t, c->checkpoint_grace_ms, 1000);
		text_add(t, "\n    min_runtime_s: ");
		add_qty(t, c->min_runtime_ms, 1000);
		text_add(t, "\n");
	}
	if (sc->nr_tenants > 0)
		text_add(t, "tenants:\n");
	for (size_t k = 0; k < sc->nr_tenants; k++)
		if (sc->tenants[k].parent[0] == '\0')
			write_tenant(t, sc, k, 1);
	if (sc->nr_generators > 0)
		text_add(t, "workload:\n");
	for (size_t i = 0; i < sc->nr_generators; i++)
		write_generator(t, sc, &sc->generators[i]);
}

/* ---- comparing two scenarios ---------------------------------------- */

static bool same_names(const char (*a)[KERF_CLASS_NAME_MAX],
		       const char (*b)[KERF_CLASS_NAME_MAX], int nr)
{
	for (int i = 0; i < nr; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

static void check_same_tenant(const struct kerf_scn_tenant *a,
			      const struct kerf_scn_tenant *b)
{
	CHECK(strcmp(a->name, b->name) == 0 &&
	      strcmp(a->parent, b->parent) == 0 && a->weight == b->weight);
	CHECK(a->nr_quotas == b->nr_quotas);
	for (int q = 0; q < a->nr_quotas; q++) {
		const struct kerf_scn_quota *x = &a->quotas[q], *y = &b->quotas[q];

		CHECK(strcmp(x->resource, y->resource) == 0);
		CHECK(x->nominal == y->nominal &&
		      x->borrowing_limit == y->borrowing_limit &&
		      x->lending_limit == y->lending_limit);
	}
	CHECK(a->nr_allowed_classes == b->nr_allowed_classes &&
	      same_names(a->allowed_classes, b->allowed_classes,
			 a->nr_allowed_classes));
	CHECK(a->isolation == b->isolation &&
	      strcmp(a->network_class, b->network_class) == 0);
	CHECK(a->budget_gpu_milli_hours == b->budget_gpu_milli_hours &&
	      a->budget_window_ms == b->budget_window_ms &&
	      a->budget_action == b->budget_action);
	CHECK(a->idle_action == b->idle_action &&
	      a->idle_threshold_pct == b->idle_threshold_pct &&
	      a->idle_after_ms == b->idle_after_ms);
	CHECK(a->nr_idle_exempt_classes == b->nr_idle_exempt_classes &&
	      same_names(a->idle_exempt_classes, b->idle_exempt_classes,
			 a->nr_idle_exempt_classes));
}

static void check_same_generator(const struct kerf_scn_generator *a,
				 const struct kerf_scn_generator *b)
{
	const struct kerf_pod *p = &a->set.req, *q = &b->set.req;

	CHECK(strcmp(a->name, b->name) == 0 &&
	      strcmp(a->tenant, b->tenant) == 0 &&
	      strcmp(a->class_name, b->class_name) == 0);
	CHECK(a->count == b->count && a->start_ms == b->start_ms &&
	      a->interarrival_ms == b->interarrival_ms &&
	      a->arrival == b->arrival && a->duration_ms == b->duration_ms &&
	      a->duration == b->duration);
	CHECK(a->set.count == b->set.count && a->min_count == b->min_count &&
	      a->topology == b->topology &&
	      a->checkpoint_every_ms == b->checkpoint_every_ms &&
	      a->utilisation_pct == b->utilisation_pct);
	CHECK(p->cpu_milli == q->cpu_milli && p->mem_mib == q->mem_mib &&
	      p->gpu_milli == q->gpu_milli && p->gpu_mem_mib == q->gpu_mem_mib &&
	      p->nr_gpus == q->nr_gpus && p->model_mask == q->model_mask &&
	      p->mig_slices == q->mig_slices);
}

static void check_same(const struct kerf_scenario *a,
		       const struct kerf_scenario *b)
{
	CHECK(strcmp(a->name, b->name) == 0 && a->seed == b->seed &&
	      a->horizon_ms == b->horizon_ms && a->cycle_ms == b->cycle_ms &&
	      strcmp(a->policy, b->policy) == 0);
	CHECK(a->nr_nodes == b->nr_nodes);
	for (size_t g = 0; g < a->nr_nodes; g++) {
		const struct kerf_scn_nodes *x = &a->nodes[g], *y = &b->nodes[g];

		CHECK(strcmp(x->prefix, y->prefix) == 0 && x->count == y->count &&
		      x->cpu_milli == y->cpu_milli && x->mem_mib == y->mem_mib &&
		      x->gpus == y->gpus && strcmp(x->model, y->model) == 0 &&
		      x->gpu_mem_mib == y->gpu_mem_mib &&
		      x->domain_nodes == y->domain_nodes &&
		      x->mig_gpus == y->mig_gpus);
	}
	CHECK(a->classes.nr == b->classes.nr);
	for (int i = 0; i < a->classes.nr; i++) {
		const struct kerf_priority_class *x = &a->classes.c[i];
		const struct kerf_priority_class *y = &b->classes.c[i];

		CHECK(strcmp(x->name, y->name) == 0 && x->value == y->value &&
		      x->preemptible == y->preemptible &&
		      x->checkpoint_grace_ms == y->checkpoint_grace_ms &&
		      x->min_runtime_ms == y->min_runtime_ms);
	}
	CHECK(a->nr_tenants == b->nr_tenants);
	for (size_t k = 0; k < a->nr_tenants; k++)
		check_same_tenant(&a->tenants[k], &b->tenants[k]);
	CHECK(a->nr_generators == b->nr_generators);
	for (size_t i = 0; i < a->nr_generators; i++)
		check_same_generator(&a->generators[i], &b->generators[i]);
}

static void check_roundtrip(const struct kerf_scenario *sc)
{
	struct text t = { 0 };
	struct kerf_scenario back;
	struct kerf_err err = { 0 };
	int rc;

	write_scenario(&t, sc);
	rc = kerf_scenario_parse(&back, roundtrip_path, t.data, t.len, &err);
	if (rc != 0)
		fprintf(stderr, "%.*s", (int)t.len, t.data);
	CHECK_MSG(rc == 0, err.msg);
	check_same(sc, &back);
	kerf_scenario_release(&back);
	free(t.data);
}

/* ---- the built state ------------------------------------------------ */

static void check_build(const struct kerf_scenario *sc)
{
	struct kerf_state st;
	struct kerf_err err = { 0 };
	const char *models[KERF_MAX_MODELS];
	int nr_models = models_of(sc, models);
	size_t nodes = 0, rank = 0;
	uint32_t last_domain = 0;
	int rc;

	for (size_t g = 0; g < sc->nr_nodes; g++)
		nodes += sc->nodes[g].count;
	if (nodes > BUILD_MAX_NODES)
		return;
	rc = kerf_scenario_build(sc, &st, &err);
	CHECK_MSG(rc == 0, err.msg);
	CHECK(st.cluster.nr_nodes == nodes);
	CHECK(st.cluster.nr_models == (size_t)nr_models);
	for (int m = 0; m < nr_models; m++)
		CHECK(strcmp(st.cluster.models[m].name, models[m]) == 0);
	for (size_t g = 0; g < sc->nr_nodes; g++) {
		const struct kerf_scn_nodes *n = &sc->nodes[g];

		for (uint32_t i = 0; i < n->count; i++, rank++) {
			const struct kerf_node *x = &st.cluster.nodes[rank];
			char name[96];

			snprintf(name, sizeof(name), "%s%" PRIu32, n->prefix, i);
			CHECK(strcmp(x->name, name) == 0);
			CHECK(x->nr_gpus == n->gpus && x->cpu_milli == n->cpu_milli &&
			      x->mem_mib == n->mem_mib);
			CHECK((x->domain != 0) == (n->domain_nodes != 0));
			if (n->gpu_mem_mib && n->gpus)
				CHECK(x->gpu_mem_mib[0] == n->gpu_mem_mib);
		}
	}
	/* domains are numbered from 1 in rank order, each one consecutive */
	for (size_t i = 0; i < nodes; i++) {
		uint32_t d = st.cluster.nodes[i].domain;

		if (d == 0)
			continue;
		if (d == last_domain)
			CHECK(i > 0 && st.cluster.nodes[i - 1].domain == d);
		else
			CHECK(d == last_domain + 1);
		last_domain = d;
	}
	CHECK(st.tenants.nr == sc->nr_tenants + 1);
	for (size_t k = 0; k < sc->nr_tenants; k++) {
		const struct kerf_tenant *t = &st.tenants.t[k + 1];
		const struct kerf_scn_tenant *s = &sc->tenants[k];

		CHECK(strcmp(t->name, s->name) == 0);
		CHECK(s->parent[0] ? strcmp(st.tenants.t[t->parent].name,
					    s->parent) == 0
				   : t->parent == KERF_TENANT_ROOT);
		CHECK(s->nr_allowed_classes == 0 ||
		      (uint32_t)__builtin_popcount(t->allowed_classes) ==
			      (uint32_t)s->nr_allowed_classes);
	}
	for (size_t i = 0; i < sc->nr_generators; i++) {
		int t = kerf_tenants_find(&st.tenants, sc->generators[i].tenant);

		CHECK(t > 0 && kerf_tenant_is_leaf(&st.tenants.t[t]));
	}
	rc = kerf_state_check(&st, &err);
	CHECK_MSG(rc == 0, err.msg);
	kerf_state_release(&st);
}

static void check_failure(int rc, const struct kerf_err *err,
			  const struct kerf_scenario *sc)
{
	static const struct kerf_scenario empty;

	fuzz_check_refusal(rc, err, input_path, true);
	CHECK(memcmp(sc, &empty, sizeof(*sc)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };
	int rc = kerf_scenario_parse(&sc, input_path, (const char *)data, size,
				     &err);

	if (rc < 0) {
		check_failure(rc, &err, &sc);
		return 0;
	}
	CHECK(rc == 0 && err.code == 0);
	check_parsed(&sc);
	check_roundtrip(&sc);
	check_build(&sc);
	kerf_scenario_release(&sc);
	return 0;
}
