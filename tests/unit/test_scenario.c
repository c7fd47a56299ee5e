/*
 * Unit tests for sim/scenario (and format/yaml_doc under it): a complete
 * scenario parsed and built (node names, ranks and NVLink domains, model
 * memory, quotas in core units, class masks, the tenant tree), defaults,
 * the exact conversion of decimals to core units, the example of
 * docs/scenario.md, anchors and aliases, one case per rejection rule with
 * its exact "file:line: field: reason" message and the struct left empty,
 * kerf_scenario_load on a missing file, and kerf_scenario_build refusing a
 * scenario made by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/resources.h"
#include "format/file.h"
#include "sim/scenario.h"

static const struct kerf_scenario empty_scenario;

static void assert_empty(const struct kerf_scenario *sc)
{
	assert_memory_equal(sc, &empty_scenario, sizeof(*sc));
}

static int parse(struct kerf_scenario *sc, const char *yaml,
		 struct kerf_err *err)
{
	return kerf_scenario_parse(sc, "s.yaml", yaml, strlen(yaml), err);
}

/* Parse, which must succeed, printing the message if it does not. */
static void parse_ok(struct kerf_scenario *sc, const char *yaml)
{
	struct kerf_err err = { 0 };
	int rc = parse(sc, yaml, &err);

	if (rc != 0)
		print_error("unexpected error: %s\n", err.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(err.code, 0);
}

static const char full_yaml[] =
	"name: full\n"
	"seed: 7\n"
	"horizon_s: 3600.5\n"
	"cycle_s: 2.5\n"
	"policy: fgd\n"
	"cluster:\n"
	"  nodes:\n"
	"    - prefix: h100-\n"
	"      count: 8\n"
	"      cpu: 192\n"
	"      memory_gib: 2048\n"
	"      gpus: 8\n"
	"      model: H100\n"
	"      gpu_memory_gib: 80\n"
	"      nvlink_domain_nodes: 4\n"
	"    - prefix: cpu-\n"
	"      count: 2\n"
	"      cpu: 64.5\n"
	"      memory_gib: 256.25\n"
	"    - prefix: l4-\n"
	"      count: 3\n"
	"      cpu: 64\n"
	"      memory_gib: 512\n"
	"      gpus: 4\n"
	"      model: L4\n"
	"      nvlink_domain_nodes: 2\n"
	"    - prefix: h100b-\n"
	"      count: 1\n"
	"      cpu: 96\n"
	"      memory_gib: 1024\n"
	"      gpus: 4\n"
	"      model: H100\n"
	"priority_classes:\n"
	"  - name: production\n"
	"    value: 1000\n"
	"    preemptible: false\n"
	"    checkpoint_grace_s: 300\n"
	"    min_runtime_s: 600\n"
	"  - name: experiment\n"
	"    value: -5\n"
	"  - name: batch\n"
	"    value: 0\n"
	"    preemptible: true\n"
	"tenants:\n"
	"  - name: research\n"
	"    weight: 2\n"
	"    quota:\n"
	"      H100: { nominal: 36, borrowing_limit: 32, lending_limit: 10.5 }\n"
	"      L4: { nominal: 1 }\n"
	"      cpu: { nominal: 1000.25 }\n"
	"      memory: { nominal: 0.5 }\n"
	"    allowed_classes: [experiment, batch]\n"
	"    isolation: tenant\n"
	"    network_class: bulk\n"
	"    budget: { gpu_hours: 500.5, window_h: 168 }\n"
	"    idle: { below_pct: 5, for_s: 1800, action: checkpoint-evict, exempt_classes: [production] }\n"
	"    children:\n"
	"      - name: team-a\n"
	"        quota: { H100: { nominal: 32 }, L4: { nominal: 0.5 } }\n"
	"      - name: team-b\n"
	"        weight: 3\n"
	"        children:\n"
	"          - name: proj-x\n"
	"            isolation: hardware\n"
	"  - name: prod\n"
	"    allowed_classes: [production]\n"
	"    budget: { gpu_hours: 10, window_h: 24, on_exhaustion: preemptible-only, flavor_weights: { H100: 2, L4: 0.25 } }\n"
	"    idle: { below_pct: 2.5, for_s: 60 }\n"
	"workload:\n"
	"  - name: train\n"
	"    tenant: team-a\n"
	"    class: experiment\n"
	"    count: 20\n"
	"    every_s: 600\n"
	"    arrival: exponential\n"
	"    duration_h: 2\n"
	"    duration: exponential\n"
	"    pods: 8\n"
	"    gpus: 2\n"
	"    gpu_memory_gib: 20\n"
	"    cpu: 32\n"
	"    memory_gib: 256\n"
	"    models: [L4]\n"
	"    min_count: 4\n"
	"    topology: nvlink\n"
	"    checkpoint_every_s: 900\n"
	"    utilisation_pct: 80\n"
	"  - name: infer\n"
	"    tenant: prod\n"
	"    class: production\n"
	"    start_s: 30\n"
	"    duration_s: 1e3\n"
	"    gpu_fraction: 0.25\n"
	"    topology: pack\n";

static void check_full_parsed(const struct kerf_scenario *sc)
{
	const struct kerf_scn_tenant *t;
	const struct kerf_scn_generator *g;

	assert_string_equal(sc->name, "full");
	assert_int_equal(sc->seed, 7);
	assert_int_equal(sc->horizon_ms, 3600500);
	assert_int_equal(sc->cycle_ms, 2500);
	assert_string_equal(sc->policy, "fgd");
	assert_int_equal(sc->nr_nodes, 4);
	assert_string_equal(sc->nodes[0].prefix, "h100-");
	assert_int_equal(sc->nodes[0].count, 8);
	assert_int_equal(sc->nodes[0].cpu_milli, 192000);
	assert_int_equal(sc->nodes[0].mem_mib, 2048 * 1024);
	assert_int_equal(sc->nodes[0].gpus, 8);
	assert_string_equal(sc->nodes[0].model, "H100");
	assert_int_equal(sc->nodes[0].gpu_mem_mib, 81920);
	assert_int_equal(sc->nodes[0].domain_nodes, 4);
	assert_int_equal(sc->nodes[1].cpu_milli, 64500);
	assert_int_equal(sc->nodes[1].mem_mib, 262400);
	assert_int_equal(sc->nodes[1].gpus, 0);
	assert_string_equal(sc->nodes[1].model, "");
	assert_int_equal(sc->nodes[2].gpu_mem_mib, 0);
	assert_int_equal(sc->nodes[3].domain_nodes, 0);

	assert_int_equal(sc->classes.nr, 3);
	assert_string_equal(sc->classes.c[0].name, "production");
	assert_int_equal(sc->classes.c[0].value, 1000);
	assert_false(sc->classes.c[0].preemptible);
	assert_int_equal(sc->classes.c[0].checkpoint_grace_ms, 300000);
	assert_int_equal(sc->classes.c[0].min_runtime_ms, 600000);
	assert_int_equal(sc->classes.c[1].value, -5);
	assert_true(sc->classes.c[1].preemptible);
	assert_int_equal(sc->classes.c[1].checkpoint_grace_ms, 0);
	assert_true(sc->classes.c[2].preemptible);

	/* parents before children, in document order */
	assert_int_equal(sc->nr_tenants, 5);
	assert_string_equal(sc->tenants[0].name, "research");
	assert_string_equal(sc->tenants[0].parent, "");
	assert_string_equal(sc->tenants[1].name, "team-a");
	assert_string_equal(sc->tenants[1].parent, "research");
	assert_string_equal(sc->tenants[2].name, "team-b");
	assert_string_equal(sc->tenants[2].parent, "research");
	assert_string_equal(sc->tenants[3].name, "proj-x");
	assert_string_equal(sc->tenants[3].parent, "team-b");
	assert_string_equal(sc->tenants[4].name, "prod");
	assert_string_equal(sc->tenants[4].parent, "");
	t = &sc->tenants[0];
	assert_int_equal(t->weight, 2);
	assert_int_equal(t->nr_quotas, 4);
	assert_string_equal(t->quotas[0].resource, "H100");
	assert_int_equal(t->quotas[0].nominal, 36000);
	assert_int_equal(t->quotas[0].borrowing_limit, 32000);
	assert_int_equal(t->quotas[0].lending_limit, 10500);
	assert_string_equal(t->quotas[2].resource, "cpu");
	assert_int_equal(t->quotas[2].nominal, 1000250);
	assert_true(t->quotas[2].borrowing_limit == KERF_QTY_INF);
	assert_true(t->quotas[2].lending_limit == KERF_QTY_INF);
	assert_string_equal(t->quotas[3].resource, "memory");
	assert_int_equal(t->quotas[3].nominal, 512);
	assert_int_equal(t->nr_allowed_classes, 2);
	assert_string_equal(t->allowed_classes[0], "experiment");
	assert_string_equal(t->allowed_classes[1], "batch");
	assert_int_equal(t->isolation, KERF_ISOLATION_TENANT);
	assert_string_equal(t->network_class, "bulk");
	assert_int_equal(t->budget_gpu_milli_hours, 500500);
	assert_int_equal(t->budget_window_ms, 168 * 3600000LL);
	assert_int_equal(t->budget_action, KERF_BUDGET_HOLD);
	assert_int_equal(t->idle_action, KERF_IDLE_CHECKPOINT_EVICT);
	assert_int_equal(t->idle_threshold_pct, 5);
	assert_int_equal(t->idle_after_ms, 1800000);
	assert_int_equal(t->nr_idle_exempt_classes, 1);
	assert_string_equal(t->idle_exempt_classes[0], "production");
	assert_int_equal(sc->tenants[1].weight, 1);
	assert_int_equal(sc->tenants[1].quotas[1].nominal, 500);
	assert_int_equal(sc->tenants[2].weight, 3);
	assert_int_equal(sc->tenants[2].nr_quotas, 0);
	assert_int_equal(sc->tenants[3].isolation, KERF_ISOLATION_HARDWARE);
	assert_int_equal(sc->tenants[3].idle_action, KERF_IDLE_NONE);
	t = &sc->tenants[4];
	assert_int_equal(t->isolation, KERF_ISOLATION_SHARED);
	assert_int_equal(t->budget_gpu_milli_hours, 10000);
	assert_int_equal(t->budget_window_ms, 86400000);
	assert_int_equal(t->budget_action, KERF_BUDGET_PREEMPTIBLE_ONLY);
	assert_int_equal(t->budget_weight_pct[0], 200);   /* H100 */
	assert_int_equal(t->budget_weight_pct[1], 25);    /* L4 */
	assert_int_equal(t->budget_weight_pct[2], 100);   /* not named */
	assert_int_equal(sc->tenants[0].budget_weight_pct[0], 100);
	assert_int_equal(t->idle_action, KERF_IDLE_NOTIFY);
	assert_int_equal(t->idle_threshold_pct, 3); /* 2.5 rounds half up */
	assert_int_equal(t->idle_after_ms, 60000);

	assert_int_equal(sc->nr_generators, 2);
	g = &sc->generators[0];
	assert_string_equal(g->name, "train");
	assert_string_equal(g->tenant, "team-a");
	assert_string_equal(g->class_name, "experiment");
	assert_int_equal(g->count, 20);
	assert_int_equal(g->start_ms, 0);
	assert_int_equal(g->interarrival_ms, 600000);
	assert_int_equal(g->arrival, KERF_DIST_EXP);
	assert_int_equal(g->duration_ms, 7200000);
	assert_int_equal(g->duration, KERF_DIST_EXP);
	assert_int_equal(g->set.count, 8);
	assert_int_equal(g->set.req.nr_gpus, 2);
	assert_int_equal(g->set.req.gpu_milli, 1000);
	assert_int_equal(g->set.req.gpu_mem_mib, 20480);
	assert_int_equal(g->set.req.cpu_milli, 32000);
	assert_int_equal(g->set.req.mem_mib, 262144);
	/* L4 is the second model in node group order: cluster model 1 */
	assert_int_equal(g->set.req.model_mask, 2);
	assert_int_equal(g->min_count, 4);
	assert_int_equal(g->topology, KERF_TOPO_NVLINK);
	assert_int_equal(g->checkpoint_every_ms, 900000);
	assert_int_equal(g->utilisation_pct, 80);
	g = &sc->generators[1];
	assert_int_equal(g->count, 1);
	assert_int_equal(g->start_ms, 30000);
	assert_int_equal(g->interarrival_ms, 0);
	assert_int_equal(g->arrival, KERF_DIST_FIXED);
	assert_int_equal(g->duration_ms, 1000000);
	assert_int_equal(g->set.count, 1);
	assert_int_equal(g->set.req.nr_gpus, 1);
	assert_int_equal(g->set.req.gpu_milli, 250);
	assert_int_equal(g->set.req.model_mask, 0);
	assert_int_equal(g->min_count, 0);
	assert_int_equal(g->topology, KERF_TOPO_PACK);
	assert_int_equal(g->utilisation_pct, 100);
}

static void check_full_built(const struct kerf_state *st)
{
	static const char *const names[] = {
		"h100-0", "h100-1", "h100-2", "h100-3", "h100-4",
		"h100-5", "h100-6", "h100-7", "cpu-0", "cpu-1",
		"l4-0", "l4-1", "l4-2", "h100b-0",
	};
	static const uint32_t domains[] = { 1, 1, 1, 1, 2, 2, 2, 2, 0, 0,
					    3, 3, 4, 0 };
	const struct kerf_cluster *c = &st->cluster;
	const struct kerf_tenants *tt = &st->tenants;
	const struct kerf_tenant *t;
	struct kerf_err err = { 0 };
	int h100 = kerf_res_gpu(0), l4 = kerf_res_gpu(1);

	assert_int_equal(c->nr_nodes, 14);
	for (size_t i = 0; i < c->nr_nodes; i++) {
		assert_string_equal(c->nodes[i].name, names[i]);
		assert_int_equal(c->nodes[i].domain, domains[i]);
	}
	assert_int_equal(c->nr_models, 2);
	assert_string_equal(c->models[0].name, "H100");
	assert_int_equal(c->models[0].mem_mib, 81920);
	assert_string_equal(c->models[1].name, "L4");
	assert_int_equal(c->models[1].mem_mib, 0);
	assert_int_equal(c->nodes[0].model, 0);
	assert_int_equal(c->nodes[0].nr_gpus, 8);
	assert_int_equal(c->nodes[8].model, KERF_MODEL_NONE);
	assert_int_equal(c->nodes[8].cpu_milli, 64500);
	assert_int_equal(c->nodes[10].model, 1);
	assert_int_equal(c->nodes[13].model, 0);
	assert_int_equal(c->nodes[13].nr_gpus, 4);
	assert_int_equal(c->nodes[13].gpu_mem_mib[3], 81920);

	assert_int_equal(st->classes.nr, 3);
	assert_int_equal(tt->nr_res, KERF_RES_GPU0 + 2);
	assert_int_equal(tt->nr, 6);
	/* the root's nominal is the capacity */
	assert_int_equal(tt->t[0].quota.nominal.v[h100], (8 * 8 + 4) * 1000);
	assert_int_equal(tt->t[0].quota.nominal.v[l4], 3 * 4 * 1000);
	assert_int_equal(tt->t[0].quota.nominal.v[KERF_RES_CPU],
			 8 * 192000 + 2 * 64500 + 3 * 64000 + 96000);
	t = &tt->t[1];
	assert_string_equal(t->name, "research");
	assert_int_equal(t->parent, 0);
	assert_int_equal(t->weight, 2);
	assert_int_equal(t->nr_children, 2);
	assert_int_equal(t->quota.nominal.v[h100], 36000);
	assert_int_equal(t->quota.borrow_limit.v[h100], 32000);
	assert_int_equal(t->quota.lend_limit.v[h100], 10500);
	assert_int_equal(t->quota.nominal.v[l4], 1000);
	assert_true(t->quota.borrow_limit.v[l4] == KERF_QTY_INF);
	assert_true(t->quota.lend_limit.v[l4] == KERF_QTY_INF);
	assert_int_equal(t->quota.nominal.v[KERF_RES_CPU], 1000250);
	assert_int_equal(t->quota.nominal.v[KERF_RES_MEM], 512);
	assert_int_equal(t->allowed_classes, (1u << 1) | (1u << 2));
	assert_int_equal(t->isolation, KERF_ISOLATION_TENANT);
	t = &tt->t[2];
	assert_string_equal(t->name, "team-a");
	assert_int_equal(t->parent, 1);
	assert_int_equal(t->quota.nominal.v[h100], 32000);
	assert_int_equal(t->quota.nominal.v[l4], 500);
	assert_int_equal(t->quota.nominal.v[KERF_RES_CPU], 0);
	assert_int_equal(t->allowed_classes, 0);
	assert_string_equal(tt->t[3].name, "team-b");
	assert_int_equal(tt->t[3].parent, 1);
	assert_int_equal(tt->t[3].weight, 3);
	assert_string_equal(tt->t[4].name, "proj-x");
	assert_int_equal(tt->t[4].parent, 3);
	assert_int_equal(tt->t[4].depth, 3);
	assert_int_equal(tt->t[4].isolation, KERF_ISOLATION_HARDWARE);
	assert_string_equal(tt->t[5].name, "prod");
	assert_int_equal(tt->t[5].parent, 0);
	assert_int_equal(tt->t[5].allowed_classes, 1u << 0);
	assert_int_equal(kerf_state_check(st, &err), 0);
}

static void test_full(void **state)
{
	struct kerf_scenario sc;
	struct kerf_state st;
	struct kerf_err err = { 0 };

	(void)state;
	parse_ok(&sc, full_yaml);
	check_full_parsed(&sc);
	assert_int_equal(kerf_scenario_build(&sc, &st, &err), 0);
	assert_int_equal(err.code, 0);
	check_full_built(&st);
	kerf_state_release(&st);
	kerf_scenario_release(&sc);
	assert_empty(&sc);
}

#define MINI                                                            \
	"horizon_h: 1\n"                                                \
	"cluster: { nodes: [ { prefix: n, count: 1, cpu: 1, memory_gib: 1 } ] }\n"

static void test_defaults(void **state)
{
	struct kerf_scenario sc;
	struct kerf_state st;
	struct kerf_err err = { 0 };

	(void)state;
	parse_ok(&sc, MINI
		 "priority_classes: [ { name: c, value: 1 } ]\n"
		 "tenants: [ { name: t } ]\n"
		 "workload: [ { name: w, tenant: t, class: c, duration_s: 1 } ]\n");
	assert_string_equal(sc.name, "");
	assert_int_equal(sc.seed, 1);
	assert_int_equal(sc.horizon_ms, 3600000);
	assert_int_equal(sc.cycle_ms, 10000);
	assert_string_equal(sc.policy, "kerf");
	assert_int_equal(sc.nodes[0].gpus, 0);
	assert_int_equal(sc.nodes[0].domain_nodes, 0);
	assert_true(sc.classes.c[0].preemptible);
	assert_int_equal(sc.tenants[0].weight, 1);
	assert_int_equal(sc.tenants[0].nr_quotas, 0);
	assert_int_equal(sc.tenants[0].nr_allowed_classes, 0);
	assert_int_equal(sc.tenants[0].isolation, KERF_ISOLATION_SHARED);
	assert_string_equal(sc.tenants[0].network_class, "");
	assert_int_equal(sc.tenants[0].budget_gpu_milli_hours, 0);
	assert_int_equal(sc.tenants[0].idle_action, KERF_IDLE_NONE);
	assert_int_equal(sc.generators[0].count, 1);
	assert_int_equal(sc.generators[0].set.count, 1);
	assert_int_equal(sc.generators[0].set.req.nr_gpus, 0);
	assert_int_equal(sc.generators[0].set.req.gpu_milli, 0);
	assert_int_equal(sc.generators[0].set.req.cpu_milli, 0);
	assert_int_equal(sc.generators[0].min_count, 0);
	assert_int_equal(sc.generators[0].topology, KERF_TOPO_ANY);
	assert_int_equal(sc.generators[0].utilisation_pct, 100);
	assert_int_equal(sc.generators[0].checkpoint_every_ms, 0);
	/* no quota: nominal 0, borrowing unlimited, lending all */
	assert_int_equal(kerf_scenario_build(&sc, &st, &err), 0);
	assert_int_equal(st.tenants.nr, 2);
	assert_int_equal(st.tenants.t[1].quota.nominal.v[KERF_RES_CPU], 0);
	assert_true(st.tenants.t[1].quota.borrow_limit.v[KERF_RES_CPU] ==
		    KERF_QTY_INF);
	assert_true(st.tenants.t[1].quota.lend_limit.v[KERF_RES_MEM] ==
		    KERF_QTY_INF);
	assert_int_equal(st.cluster.nodes[0].domain, 0);
	kerf_state_release(&st);
	kerf_scenario_release(&sc);

	/* a cluster alone is a scenario */
	parse_ok(&sc, MINI);
	assert_int_equal(sc.nr_tenants, 0);
	assert_int_equal(sc.nr_generators, 0);
	assert_int_equal(kerf_scenario_build(&sc, &st, &err), 0);
	assert_int_equal(st.tenants.nr, 1);
	kerf_state_release(&st);
	kerf_scenario_release(&sc);
}

/* The cpu of a node group written as text, in cpu_milli. */
static int64_t cores(const char *text)
{
	char yaml[256];
	struct kerf_scenario sc;
	int64_t v;

	snprintf(yaml, sizeof(yaml),
		 "horizon_h: 1\n"
		 "cluster: { nodes: [ { prefix: n, count: 1, cpu: %s, memory_gib: 1 } ] }\n",
		 text);
	parse_ok(&sc, yaml);
	v = sc.nodes[0].cpu_milli;
	kerf_scenario_release(&sc);
	return v;
}

static int64_t gib(const char *text)
{
	char yaml[256];
	struct kerf_scenario sc;
	int64_t v;

	snprintf(yaml, sizeof(yaml),
		 "horizon_h: 1\n"
		 "cluster: { nodes: [ { prefix: n, count: 1, cpu: 1, memory_gib: %s } ] }\n",
		 text);
	parse_ok(&sc, yaml);
	v = sc.nodes[0].mem_mib;
	kerf_scenario_release(&sc);
	return v;
}

static int64_t hours(const char *text)
{
	char yaml[256];
	struct kerf_scenario sc;
	int64_t v;

	snprintf(yaml, sizeof(yaml),
		 "horizon_h: %s\n"
		 "cycle_s: 3600\n"      /* a million hours in 10^6 cycles */
		 "cluster: { nodes: [ { prefix: n, count: 1, cpu: 1, memory_gib: 1 } ] }\n",
		 text);
	parse_ok(&sc, yaml);
	v = sc.horizon_ms;
	kerf_scenario_release(&sc);
	return v;
}

static void test_numbers(void **state)
{
	(void)state;
	assert_int_equal(cores("0"), 0);
	assert_int_equal(cores("2"), 2000);
	assert_int_equal(cores("+2"), 2000);
	assert_int_equal(cores("-0"), 0);
	assert_int_equal(cores("0.5"), 500);
	assert_int_equal(cores(".5"), 500);
	assert_int_equal(cores("5."), 5000);
	assert_int_equal(cores("007"), 7000);
	assert_int_equal(cores("1.2345"), 1235);     /* half up */
	assert_int_equal(cores("1.2344999999"), 1234);
	assert_int_equal(cores("0.0005"), 1);
	assert_int_equal(cores("0.00049999999999999999999"), 0);
	assert_int_equal(cores("1e3"), 1000000);
	assert_int_equal(cores("2.5E-3"), 3);
	assert_int_equal(cores("25e-4"), 3);
	assert_int_equal(cores("1e-900"), 0);
	assert_int_equal(cores("0e999999999"), 0);
	assert_int_equal(cores("2147483.648"), KERF_MAX_CPU_MILLI);
	assert_int_equal(gib("1"), 1024);
	assert_int_equal(gib("0.5"), 512);
	assert_int_equal(gib("0.001"), 1);           /* 1.024 MiB */
	assert_int_equal(gib("0.00048828125"), 1);   /* exactly 0.5 MiB */
	assert_int_equal(gib("0.00048828124"), 0);
	assert_int_equal(gib("1073741824"), KERF_MAX_MEM_MIB);
	assert_int_equal(hours("0.5"), 1800000);
	assert_int_equal(hours("1e6"), 3600000000000LL);
	/* 1/7200000 h is 0.5 ms; 1 digit less and it rounds down */
	assert_int_equal(hours("1.000000138888888888888888889"), 3600001);
	assert_int_equal(hours("1.00000013888888888888888888"), 3600000);
}

static void test_doc_example(void **state)
{
	const char *root = getenv("KERF_SOURCE_ROOT");
	char path[4096];
	struct kerf_file f, ex;
	struct kerf_scenario sc;
	struct kerf_state st;
	struct kerf_err err = { 0 };
	char *start, *end;

	(void)state;
	if (!root)
		skip();
	snprintf(path, sizeof(path), "%s/docs/scenario.md", root);
	assert_int_equal(kerf_file_read(&f, path, 1 << 20, &err), 0);
	start = strstr(f.data, "```yaml\n");
	assert_non_null(start);
	start += strlen("```yaml\n");
	end = strstr(start, "```\n");
	assert_non_null(end);
	/* the same bytes as the file the doc and tests/cli/test_sim_run.sh run */
	snprintf(path, sizeof(path), "%s/examples/scenario/demo-day.yaml", root);
	assert_int_equal(kerf_file_read(&ex, path, 1 << 20, &err), 0);
	assert_int_equal(ex.len, (size_t)(end - start));
	assert_memory_equal(ex.data, start, ex.len);
	kerf_file_release(&ex);
	assert_int_equal(kerf_scenario_parse(&sc, "docs/scenario.md", start,
					     (size_t)(end - start), &err),
			 0);
	assert_string_equal(err.msg, "");
	assert_string_equal(sc.name, "demo-day");
	assert_int_equal(sc.nodes[0].count, 16);
	assert_int_equal(kerf_scenario_build(&sc, &st, &err), 0);
	assert_int_equal(st.cluster.nr_nodes, 16);
	assert_int_equal(st.cluster.nodes[15].domain, 4);
	kerf_state_release(&st);
	kerf_scenario_release(&sc);
	kerf_file_release(&f);
}

static void test_anchors(void **state)
{
	struct kerf_scenario sc;

	(void)state;
	parse_ok(&sc, "horizon_h: 1\n"
		 "cluster:\n"
		 "  nodes:\n"
		 "    - &big { prefix: a, count: 2, cpu: 8, memory_gib: 64, gpus: 4, model: X }\n"
		 "    - { prefix: b, count: 2, cpu: 8, memory_gib: 64, gpus: 4, model: X }\n"
		 "priority_classes: [ { name: c, value: 1 } ]\n"
		 "tenants:\n"
		 "  - { name: t1, quota: { X: &q { nominal: 2, lending_limit: 1 } } }\n"
		 "  - { name: t2, quota: { X: *q } }\n"
		 "workload:\n"
		 "  - &w { name: !!str 1, tenant: t1, class: c, duration_s: 60 }\n");
	assert_int_equal(sc.tenants[1].quotas[0].nominal, 2000);
	assert_int_equal(sc.tenants[1].quotas[0].lending_limit, 1000);
	assert_string_equal(sc.generators[0].name, "1");
	kerf_scenario_release(&sc);
}

/* ---- rejections ----------------------------------------------------- */

struct reject {
	const char *rule;
	const char *yaml;
	const char *msg;
};

/*
 * BASE is a valid scenario; its line numbers matter to the messages:
 *   1 horizon_h          8 gpus: 8          15 quota of org
 *   2 cluster:           9 model: A100      16 children:
 *   3   nodes:          10 priority_classes 17 - name: team
 *   4 - prefix: n       11 - high           18 quota of team
 *   5   count: 4        12 - low            19 workload:
 *   6   cpu: 64         13 tenants:         20 - w
 *   7   memory_gib: 512 14 - name: org
 */
#define B1 "horizon_h: 1\n"
#define B_CLUSTER                                                       \
	"cluster:\n"                                                    \
	"  nodes:\n"                                                    \
	"    - prefix: n\n"                                             \
	"      count: 4\n"                                              \
	"      cpu: 64\n"                                               \
	"      memory_gib: 512\n"                                       \
	"      gpus: 8\n"                                               \
	"      model: A100\n"
#define B_CLASSES                                                       \
	"priority_classes:\n"                                           \
	"  - { name: high, value: 10 }\n"                               \
	"  - { name: low, value: 1 }\n"
#define B_TENANTS                                                       \
	"tenants:\n"                                                    \
	"  - name: org\n"                                               \
	"    quota: { A100: { nominal: 16 } }\n"                        \
	"    children:\n"                                               \
	"      - name: team\n"                                          \
	"        quota: { A100: { nominal: 8 } }\n"
#define B_WORKLOAD                                                      \
	"workload:\n"                                                   \
	"  - { name: w, tenant: team, class: low, duration_s: 60 }\n"
#define BASE B1 B_CLUSTER B_CLASSES B_TENANTS B_WORKLOAD
/* BASE without its workload: line 19 is the first line after it */
#define NO_WL B1 B_CLUSTER B_CLASSES B_TENANTS
#define WL(fields)                                                      \
	NO_WL "workload:\n  - { name: w, tenant: team, class: low, duration_s: 60, " fields " }\n"
/* one node group, given in flow style on line 4 */
#define GROUP(fields) B1 "cluster:\n  nodes:\n    - { " fields " }\n"
#define NODE "prefix: n, count: 1, cpu: 1, memory_gib: 1"

/* a node group with its GPUs in MIG mode; the workload is on line 11 */
#define MIG_BASE B1                                                     \
	"cluster:\n  nodes:\n    - { prefix: n, count: 1, cpu: 8, memory_gib: 64, " \
	"gpus: 2, model: H100-80GB, mig_gpus: 2 }\n" B_CLASSES            \
	"tenants:\n  - { name: team }\n"
#define MIG_WL(fields)                                                  \
	MIG_BASE "workload:\n  - { name: w, tenant: team, class: low, duration_s: 60, " fields " }\n"

/* GPU memory tracked (40 GiB), two groups; the workload is on line 12 */
#define MEM_BASE B1                                                     \
	"cluster:\n  nodes:\n"                                          \
	"    - { prefix: a, count: 2, cpu: 64, memory_gib: 512, gpus: 8, model: A100, gpu_memory_gib: 40 }\n" \
	"    - { prefix: l, count: 2, cpu: 192, memory_gib: 512, gpus: 2, model: L4 }\n" \
	B_CLASSES "tenants:\n  - { name: team }\n"
#define MEM_WL(fields)                                                  \
	MEM_BASE "workload:\n  - { name: w, tenant: team, class: low, duration_s: 60, " fields " }\n"
#define KNOWN_TOP "(known: name, seed, horizon_h, horizon_s, cycle_s, policy, cluster, priority_classes, tenants, workload)"

/* clang-format off */
static const struct reject rejects[] = {
	/* impossible work: one pod larger than any node it may use */
	{ "fits: the control", WL("gpus: 8, cpu: 64, memory_gib: 512"), NULL },
	{ "gpus per pod over the largest node", WL("gpus: 9"),
	  "s.yaml:20: workload[0].gpus: 9 GPUs per pod, but the largest node with GPUs the pods may use has 8" },
	{ "cores per pod over the largest node", WL("cpu: 64.5"),
	  "s.yaml:20: workload[0].cpu: 64.5 cores per pod, but the largest node has 64" },
	{ "memory per pod over the largest node", WL("memory_gib: 513"),
	  "s.yaml:20: workload[0].memory_gib: 513 GiB per pod, but the largest node has 512" },
	{ "GPU memory over the largest GPU", MEM_WL("gpus: 1, gpu_memory_gib: 41, models: [A100]"),
	  "s.yaml:12: workload[0].gpu_memory_gib: 41 GiB per GPU, but the largest GPU the pods may use has 40" },
	{ "GPU memory on an untracked model, the control", MEM_WL("gpus: 1, gpu_memory_gib: 41"), NULL },
	{ "models leave only small nodes", MEM_WL("gpus: 4, models: [L4]"),
	  "s.yaml:12: workload[0].gpus: 4 GPUs per pod, but the largest node with GPUs the pods may use has 2" },
	{ "no group has it all", MEM_WL("gpus: 8, cpu: 100"),
	  "s.yaml:12: workload[0]: no node with GPUs the pods may use fits one pod (8 GPUs, 100 cores, 0 GiB): each node group falls short in some of it" },
	/* impossible work: a gang larger than what it may use */
	{ "gang: the control", WL("gpus: 8, pods: 4"), NULL },
	{ "gang larger than the cluster", WL("gpus: 8, pods: 5"),
	  "s.yaml:20: workload[0].pods: a gang of 5 pods (8 GPUs, 0 cores, 0 GiB each), but the nodes the pods may use hold at most 4 such pods at once" },
	{ "gang of min_count: the control", WL("gpus: 8, pods: 6, min_count: 4"), NULL },
	{ "gang of min_count larger than the cluster", WL("gpus: 8, pods: 6, min_count: 5"),
	  "s.yaml:20: workload[0].min_count: a gang of 5 pods (8 GPUs, 0 cores, 0 GiB each), but the nodes the pods may use hold at most 4 such pods at once" },
	{ "gang by cores", WL("cpu: 40, pods: 5"),
	  "s.yaml:20: workload[0].pods: a gang of 5 pods (40 cores, 0 GiB each), but the nodes the pods may use hold at most 4 such pods at once" },
	{ "gang of fractions: the control", WL("gpu_fraction: 0.5, pods: 64"), NULL },
	{ "gang of fractions", WL("gpu_fraction: 0.5, pods: 65"),
	  "s.yaml:20: workload[0].pods: a gang of 65 pods (500/1000 of a GPU, 0 cores, 0 GiB each), but the nodes the pods may use hold at most 64 such pods at once" },
	{ "gang of MIG instances: the control", MIG_WL("mig: 3g.40gb, pods: 4"), NULL },
	{ "gang of MIG instances", MIG_WL("mig: 3g.40gb, pods: 5"),
	  "s.yaml:11: workload[0].pods: a gang of 5 pods (a MIG instance of 3 slices, 0 cores, 0 GiB each), but the nodes the pods may use hold at most 4 such pods at once" },
	{ "topology node: the control", WL("gpus: 4, pods: 2, topology: node"), NULL },
	{ "topology node, gang over one node", WL("gpus: 4, pods: 3, topology: node"),
	  "s.yaml:20: workload[0].topology: node: all 3 pods of the gang on one node, but a node the pods may use holds at most 2 such pods (4 GPUs, 0 cores, 0 GiB each)" },
	{ "topology nvlink without domains", WL("gpus: 4, pods: 3, topology: nvlink"),
	  "s.yaml:20: workload[0].topology: nvlink: all 3 pods of the gang in one NVLink domain, but a domain the pods may use holds at most 2 such pods (4 GPUs, 0 cores, 0 GiB each; nodes outside any domain are domains of one)" },
	{ "profile training makes it nvlink", WL("gpus: 8, pods: 2, profile: training"),
	  "s.yaml:20: workload[0].profile: nvlink: all 2 pods of the gang in one NVLink domain, but a domain the pods may use holds at most 1 such pods (8 GPUs, 0 cores, 0 GiB each; nodes outside any domain are domains of one)" },
	{ "topology nvlink in a domain: the control",
	  B1 "cluster: { nodes: [ { prefix: n, count: 4, cpu: 64, memory_gib: 512, gpus: 8, model: A100, nvlink_domain_nodes: 2 } ] }\n"
	  B_CLASSES "tenants:\n  - { name: team }\n"
	  "workload:\n  - { name: w, tenant: team, class: low, duration_s: 60, gpus: 8, pods: 2, topology: nvlink }\n", NULL },
	/* the work of a run, bounded up front */
	{ "cycles: the control", "horizon_s: 100000000\n" B_CLUSTER, NULL },
	{ "cycles over the bound", "horizon_s: 100000010\n" B_CLUSTER,
	  "s.yaml:1: horizon_s: a horizon of 100000010 seconds in cycles of 10 seconds is 10000001 scheduling cycles, more than 10000000 (a longer cycle_s or a shorter horizon)" },
	{ "a million hours in cycles of 1 ms", "horizon_h: 1000000\ncycle_s: 0.001\n" B_CLUSTER,
	  "s.yaml:2: cycle_s: a horizon of 1000000 hours in cycles of 0.001 seconds is 3600000000000 scheduling cycles, more than 10000000 (a longer cycle_s or a shorter horizon)" },
	{ "workloads over the bound", NO_WL "workload:\n"
	  "  - { name: a, tenant: team, class: low, duration_s: 60, count: 600000 }\n"
	  "  - { name: b, tenant: team, class: low, duration_s: 60, count: 400001 }\n",
	  "s.yaml:21: workload[1].count: the generators make 1000001 workloads in all, more than 1000000" },
	{ "pods over the bound", WL("count: 1000000, pods: 11"),
	  "s.yaml:20: workload[0].pods: the generators make 11000000 pods in all (count x pods), more than 10000000" },
	{ "pods: the control", WL("count: 1000000, pods: 10"), NULL },
	{ "mig: the control", MIG_WL("mig: 3g.40gb"), NULL },
	{ "mig: sized from a fraction, the control", MIG_WL("gpu_fraction: 0.3, sharing: mig"), NULL },
	{ "mig_gpus on a model without MIG", GROUP(NODE ", gpus: 2, model: L4, mig_gpus: 1"),
	  "s.yaml:4: cluster.nodes[0].mig_gpus: the model has no MIG profiles*" },
	{ "mig_gpus over gpus", GROUP(NODE ", gpus: 2, model: H100-80GB, mig_gpus: 3"),
	  "s.yaml:4: cluster.nodes[0].mig_gpus: more than the node's gpus" },
	{ "mig_gpus without gpus", GROUP(NODE ", mig_gpus: 1"),
	  "s.yaml:4: cluster.nodes[0].mig_gpus: given for nodes without GPUs (gpus is 0)" },
	{ "mig without MIG nodes", WL("mig: 1g.10gb"),
	  "s.yaml:20: workload[0].mig: no node group the pod may use has GPUs in MIG mode (mig_gpus)" },
	{ "sharing mig without MIG nodes", WL("gpu_fraction: 0.5, sharing: mig"),
	  "s.yaml:20: workload[0].sharing: no node group the pod may use has GPUs in MIG mode (mig_gpus)" },
	{ "mig with gpus", WL("gpus: 1, mig: 1g.10gb"),
	  "s.yaml:20: workload[0].mig: a MIG profile is the pod's GPU: give mig or gpus/gpu_fraction, not both" },
	{ "mig profile unknown", MIG_WL("mig: 2g.5gb"),
	  "s.yaml:11: workload[0].mig: not a MIG profile of the model the pod runs on" },
	{ "mig media extension", MIG_WL("mig: 1g.10gb+me"),
	  "s.yaml:11: workload[0].mig: media-extension (+me) profiles are not placed by the scheduler" },
	{ "mig shared by mps", MIG_WL("mig: 1g.10gb, sharing: mps"),
	  "s.yaml:11: workload[0].sharing: a pod asking a MIG profile is shared by MIG only" },
	{ "document is empty", "", "s.yaml:1: the scenario is empty" },
	{ "document is a comment", "# nothing\n", "s.yaml:1: the scenario is empty" },
	{ "document is not a mapping", "- a\n- b\n",
	  "s.yaml:1: a scenario must be a mapping" },
	{ "yaml syntax", "horizon_h: 1\ncluster: [ 1, 2\n",
	  "s.yaml:3: yaml: did not find expected ',' or ']' (while parsing a flow sequence from line 2)" },
	{ "yaml tab indent", "a:\n\tb: 1\n",
	  "s.yaml:2: yaml: found character that cannot start any token (while scanning for the next token from line 2)" },
	{ "yaml invalid utf-8", "horizon_h: 1\nname: \xff\n",
	  "s.yaml:2: yaml: invalid leading UTF-8 octet (0xff)" },
	{ "yaml control character", "horizon_h: 1\nname: \"\x01\"\n",
	  "s.yaml:2: yaml: control characters are not allowed (0x01)" },
	{ "yaml two documents", "horizon_h: 1\n---\nhorizon_h: 2\n",
	  "s.yaml:2: yaml: only one document is allowed" },
	{ "yaml unknown alias", "horizon_h: *h\n",
	  "s.yaml:1: yaml: alias '*h' names no complete anchor before it" },
	{ "yaml recursive alias", "a: &a [ 1, *a ]\n",
	  "s.yaml:1: yaml: alias '*a' names no complete anchor before it" },
	{ "yaml tag", "horizon_h: !!float 1\n",
	  "s.yaml:1: yaml: tag 'tag:yaml.org,2002:float' is not supported" },
	{ "yaml complex key", "? [a]\n: 1\n",
	  "s.yaml:1: yaml: a mapping key must be a scalar" },
	{ "yaml too deep",
	  "a: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
	  "s.yaml:1: yaml: nested deeper than 32 levels" },
	{ "yaml too deep through an alias",
	  "a: &a [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n"
	  "b: [[[*a]]]\n",
	  "s.yaml:2: yaml: nested deeper than 32 levels (through an alias)" },
	{ "yaml alias bomb",
	  "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	  "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
	  "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	  "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
	  "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	  "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
	  "s.yaml:6: yaml: more than 1000000 nodes (aliases count as what they name)" },
	{ "unknown top-level key", B1 "horizon: 3\n",
	  "s.yaml:2: horizon: unknown key (known: name, seed, horizon_h, horizon_s, cycle_s, policy, cluster, priority_classes, tenants, workload)" },
	{ "unknown key with ESC and a newline, escaped",
	  B1 "\"\\e[2J\\ns.yaml:1: forged\": 3\n",
	  "s.yaml:2: \\x1b[2J\\x0as.yaml:1: forged: unknown key (known: name, seed, horizon_h, horizon_s, cycle_s, policy, cluster, priority_classes, tenants, workload)" },
	{ "unknown key with a quote and a backslash", B1 "\"a'b\\\\c\": 3\n",
	  "s.yaml:2: a\\'b\\\\c: unknown key (known: name, seed, horizon_h, horizon_s, cycle_s, policy, cluster, priority_classes, tenants, workload)" },
	{ "long unknown key, shortened",
	  B1 "k0123456789012345678901234567890123456789012345678901234567890123456789: 3\n",
	  "s.yaml:2: k01234567890123456789012345678901234567890123456789012345678...: unknown key (known: name, seed, horizon_h, horizon_s, cycle_s, policy, cluster, priority_classes, tenants, workload)" },
	{ "yaml tag with ESC, escaped", "horizon_h: !<x%1B%0Ay> 1\n",
	  "s.yaml:1: yaml: tag 'x\\x1b\\x0ay' is not supported" },
	{ "unknown nested key", GROUP(NODE ", gpu: 1"),
	  "s.yaml:4: cluster.nodes[0].gpu: unknown key (known: prefix, count, cpu, memory_gib, gpus, model, gpu_memory_gib, nvlink_domain_nodes, mig_gpus)" },
	{ "key given twice", B1 "seed: 1\nseed: 2\n" B_CLUSTER,
	  "s.yaml:3: seed: given twice" },
	{ "cluster missing", B1 "name: x\n", "s.yaml:1: cluster: missing" },
	{ "horizon missing", "cluster: { nodes: [ { " NODE " } ] }\n",
	  "s.yaml:1: horizon_h: missing (or horizon_s)" },
	{ "horizon twice", B1 "horizon_s: 60\n" B_CLUSTER,
	  "s.yaml:2: horizon_s: give horizon_h or horizon_s, not both" },
	{ "horizon zero", "horizon_s: 0\n" B_CLUSTER,
	  "s.yaml:1: horizon_s: must be a number of seconds > 0" },
	{ "cycle rounds to zero", B1 "cycle_s: 0.0004\n" B_CLUSTER,
	  "s.yaml:2: cycle_s: must be a number of seconds > 0" },
	{ "seed not an integer", B1 "seed: 1.5\n" B_CLUSTER,
	  "s.yaml:2: seed: must be an integer from 0 to 2^62" },
	{ "unknown policy", B1 "policy: best\n" B_CLUSTER,
	  "s.yaml:2: policy: unknown placement policy 'best' (known: random, *" },
	{ "scenario name with a space", B1 "name: my day\n" B_CLUSTER,
	  "s.yaml:2: name: byte 0x20 is not allowed in a name" },
	{ "name with a control character", B1 "name: \"a\\tb\"\n" B_CLUSTER,
	  "s.yaml:2: name: byte 0x09 is not allowed in a name" },
	{ "name beyond ASCII", B1 "name: \xc3\xa9quipe\n" B_CLUSTER,
	  "s.yaml:2: name: byte 0xc3 is not allowed in a name" },
	{ "name too long", B1
	  "name: a123456789012345678901234567890123456789012345678901234567890123\n"
	  B_CLUSTER, "s.yaml:2: name: must be a name of 1 to 63 bytes" },
	{ "name empty", B1 "name: ''\n" B_CLUSTER,
	  "s.yaml:2: name: must be a name of 1 to 63 bytes" },
	{ "name null", B1 "name:\n" B_CLUSTER,
	  "s.yaml:2: name: must be a name of 1 to 63 bytes" },
	{ "name not a scalar", B1 "name: [a]\n" B_CLUSTER,
	  "s.yaml:2: name: must be a name of 1 to 63 bytes" },
	/* cluster */
	{ "no node groups", B1 "cluster: { nodes: [] }\n",
	  "s.yaml:2: cluster.nodes: must be a list of node groups" },
	{ "cluster not a mapping", B1 "cluster: 3\n",
	  "s.yaml:2: cluster: must be a mapping" },
	{ "prefix missing", GROUP("count: 1, cpu: 1, memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].prefix: missing" },
	{ "count zero", GROUP("prefix: n, count: 0, cpu: 1, memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].count: must be an integer from 1 to 1048576" },
	{ "count not an integer", GROUP("prefix: n, count: 1.5, cpu: 1, memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].count: must be an integer from 1 to 1048576" },
	{ "too many nodes", B1 "cluster:\n  nodes:\n"
	  "    - { prefix: a, count: 1048576, cpu: 1, memory_gib: 1 }\n"
	  "    - { prefix: b, count: 1, cpu: 1, memory_gib: 1 }\n",
	  "s.yaml:5: cluster.nodes[1].count: more than 1048576 nodes in the cluster" },
	{ "cpu negative", GROUP("prefix: n, count: 1, cpu: -1, memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].cpu: must be a number of cores >= 0" },
	{ "cpu nan", GROUP("prefix: n, count: 1, cpu: .nan, memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].cpu: must be a number of cores >= 0" },
	{ "cpu inf", GROUP("prefix: n, count: 1, cpu: .inf, memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].cpu: must be a number of cores >= 0" },
	{ "cpu not a number", GROUP("prefix: n, count: 1, cpu: many, memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].cpu: must be a number of cores >= 0" },
	{ "cpu quoted", GROUP("prefix: n, count: 1, cpu: \"8\", memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].cpu: must be a number of cores >= 0" },
	{ "cpu hexadecimal", GROUP("prefix: n, count: 1, cpu: 0x10, memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].cpu: must be a number of cores >= 0" },
	{ "cpu over the bound", GROUP("prefix: n, count: 1, cpu: 2147483.649, memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].cpu: must be at most 2147483.648 cores" },
	{ "cpu overflowing int64", GROUP("prefix: n, count: 1, cpu: 99999999999999999999999, memory_gib: 1"),
	  "s.yaml:4: cluster.nodes[0].cpu: must be at most 2147483.648 cores" },
	{ "memory over the bound", GROUP("prefix: n, count: 1, cpu: 1, memory_gib: 1e10"),
	  "s.yaml:4: cluster.nodes[0].memory_gib: must be at most 1073741824 GiB" },
	{ "gpus over 16", GROUP(NODE ", gpus: 17, model: X"),
	  "s.yaml:4: cluster.nodes[0].gpus: must be an integer from 0 to 16" },
	{ "gpus without a model", GROUP(NODE ", gpus: 2"),
	  "s.yaml:4: cluster.nodes[0].model: missing" },
	{ "model without gpus", GROUP(NODE ", model: X"),
	  "s.yaml:4: cluster.nodes[0].model: given for nodes without GPUs (gpus is 0)" },
	{ "gpu memory without gpus", GROUP(NODE ", gpu_memory_gib: 8"),
	  "s.yaml:4: cluster.nodes[0].gpu_memory_gib: given for nodes without GPUs (gpus is 0)" },
	{ "nvlink without gpus", GROUP(NODE ", nvlink_domain_nodes: 2"),
	  "s.yaml:4: cluster.nodes[0].nvlink_domain_nodes: given for nodes without GPUs (gpus is 0)" },
	{ "model named cpu", GROUP(NODE ", gpus: 1, model: cpu"),
	  "s.yaml:4: cluster.nodes[0].model: 'cpu' and 'memory' are quota resources, not GPU models" },
	{ "model name too long", GROUP(NODE ", gpus: 1, model: M2345678901234567890123456789012"),
	  "s.yaml:4: cluster.nodes[0].model: must be a name of 1 to 31 bytes" },
	{ "prefix twice", B1 "cluster:\n  nodes:\n"
	  "    - { prefix: n, count: 1, cpu: 1, memory_gib: 1 }\n"
	  "    - { prefix: n, count: 1, cpu: 1, memory_gib: 1 }\n",
	  "s.yaml:5: cluster.nodes[1].prefix: 'n' is also the prefix of cluster.nodes[0]" },
	{ "prefixes making the same node name", B1 "cluster:\n  nodes:\n"
	  "    - { prefix: n, count: 12, cpu: 1, memory_gib: 1 }\n"
	  "    - { prefix: n1, count: 1, cpu: 1, memory_gib: 1 }\n",
	  "s.yaml:5: cluster.nodes[1].prefix: node name 'n10' would also be made by cluster.nodes[0]" },
	{ "prefixes making the same node name, shorter later", B1 "cluster:\n  nodes:\n"
	  "    - { prefix: n2, count: 1, cpu: 1, memory_gib: 1 }\n"
	  "    - { prefix: n, count: 21, cpu: 1, memory_gib: 1 }\n",
	  "s.yaml:5: cluster.nodes[1].prefix: node name 'n20' would also be made by cluster.nodes[0]" },
	{ "GPU memory differing for one model", B1 "cluster:\n  nodes:\n"
	  "    - { prefix: a, count: 1, cpu: 1, memory_gib: 1, gpus: 1, model: X, gpu_memory_gib: 80 }\n"
	  "    - { prefix: b, count: 1, cpu: 1, memory_gib: 1, gpus: 1, model: X, gpu_memory_gib: 40 }\n",
	  "s.yaml:5: cluster.nodes[1].gpu_memory_gib: model 'X' has 80 GiB in cluster.nodes[0]" },
	/* priority classes */
	{ "control: the base is valid", BASE, NULL },
	{ "class value missing", B1 B_CLUSTER "priority_classes:\n"
	  "  - { name: high }\n",
	  "s.yaml:11: priority_classes[0].value: missing" },
	{ "class name twice", B1 B_CLUSTER "priority_classes:\n"
	  "  - { name: high, value: 10 }\n  - { name: high, value: 1 }\n",
	  "s.yaml:12: priority_classes[1].name: defined twice" },
	{ "class value not an integer", B1 B_CLUSTER "priority_classes:\n"
	  "  - { name: high, value: 1.5 }\n",
	  "s.yaml:11: priority_classes[0].value: must be an integer from -2147483648 to 2147483647" },
	{ "class value over int32", B1 B_CLUSTER "priority_classes:\n"
	  "  - { name: high, value: 2147483648 }\n",
	  "s.yaml:11: priority_classes[0].value: must be an integer from -2147483648 to 2147483647" },
	{ "preemptible not a boolean", B1 B_CLUSTER "priority_classes:\n"
	  "  - { name: high, value: 1, preemptible: yes }\n",
	  "s.yaml:11: priority_classes[0].preemptible: must be true or false" },
	{ "preemptible quoted", B1 B_CLUSTER "priority_classes:\n"
	  "  - { name: high, value: 1, preemptible: 'false' }\n",
	  "s.yaml:11: priority_classes[0].preemptible: must be true or false" },
	{ "grace negative", B1 B_CLUSTER "priority_classes:\n"
	  "  - { name: high, value: 1, checkpoint_grace_s: -1 }\n",
	  "s.yaml:11: priority_classes[0].checkpoint_grace_s: must be a number of seconds >= 0" },
	/* tenants */
	{ "tenant name twice across the tree", NO_WL "  - name: team\n",
	  "s.yaml:19: tenants[1].name: tenant defined twice" },
	{ "tenant named cluster", B1 B_CLUSTER "tenants: [ { name: cluster } ]\n",
	  "s.yaml:10: tenants[0].name: 'cluster' is the root of the tenant tree" },
	{ "tenant name missing", B1 B_CLUSTER "tenants: [ { weight: 2 } ]\n",
	  "s.yaml:10: tenants[0].name: missing" },
	{ "weight zero", B1 B_CLUSTER "tenants: [ { name: t, weight: 0 } ]\n",
	  "s.yaml:10: tenants[0].weight: must be an integer from 1 to 1000000" },
	{ "quota nominal negative", NO_WL "  - { name: t, quota: { A100: { nominal: -1 } } }\n",
	  "s.yaml:19: tenants[1].quota.A100.nominal: must be a number of GPUs >= 0" },
	{ "quota resource with ESC and a newline, escaped",
	  NO_WL "  - { name: t, quota: { \"\\e[2J\\nx\": { nominal: 1 } } }\n",
	  "s.yaml:19: tenants[1].quota.\\x1b[2J\\x0ax: '\\x1b[2J\\x0ax' is not cpu, memory or the GPU model of a node group" },
	{ "quota of an unknown model", NO_WL "  - { name: t, quota: { H100: { nominal: 1 } } }\n",
	  "s.yaml:19: tenants[1].quota.H100: 'H100' is not cpu, memory or the GPU model of a node group" },
	{ "quota resource twice", NO_WL "  - { name: t, quota: { cpu: { nominal: 1 }, cpu: { nominal: 2 } } }\n",
	  "s.yaml:19: tenants[1].quota.cpu: given twice" },
	{ "quota unknown field", NO_WL "  - { name: t, quota: { cpu: { min: 1 } } }\n",
	  "s.yaml:19: tenants[1].quota.cpu.min: unknown key (known: nominal, borrowing_limit, lending_limit)" },
	{ "lending over nominal", NO_WL "  - { name: t, quota: { memory: { nominal: 1, lending_limit: 1.5 } } }\n",
	  "s.yaml:19: tenants[1].quota.memory.lending_limit: must not be more than nominal (1 GiB)" },
	{ "children over the parent's nominal", B1 B_CLUSTER B_CLASSES
	  "tenants:\n"
	  "  - name: org\n"
	  "    quota: { A100: { nominal: 16 } }\n"
	  "    children:\n"
	  "      - { name: a, quota: { A100: { nominal: 8 } } }\n"
	  "      - { name: b, quota: { A100: { nominal: 8.5 } } }\n",
	  "s.yaml:18: tenants[0].children[1].quota.A100.nominal: the nominal quotas of the children of 'org' sum to 16.5 GPUs, more than its nominal 16" },
	{ "top level over the cluster", B1 B_CLUSTER B_CLASSES
	  "tenants:\n"
	  "  - { name: a, quota: { cpu: { nominal: 200 } } }\n"
	  "  - { name: b, quota: { cpu: { nominal: 56.001 } } }\n",
	  "s.yaml:15: tenants[1].quota.cpu.nominal: the top-level tenants' nominal quotas sum to 256.001 cores, more than the cluster's 256" },
	{ "quota over the bound", NO_WL "  - { name: t, quota: { A100: { borrowing_limit: 1e9 } } }\n",
	  "s.yaml:19: tenants[1].quota.A100.borrowing_limit: must be at most 1000000 GPUs" },
	{ "allowed class unknown", NO_WL "  - { name: t, allowed_classes: [low, mid] }\n",
	  "s.yaml:19: tenants[1].allowed_classes[1]: no priority class 'mid'" },
	{ "allowed class twice", NO_WL "  - { name: t, allowed_classes: [low, low] }\n",
	  "s.yaml:19: tenants[1].allowed_classes[1]: 'low' is listed twice" },
	{ "allowed classes empty", NO_WL "  - { name: t, allowed_classes: [] }\n",
	  "s.yaml:19: tenants[1].allowed_classes: must be a list of priority class names" },
	{ "isolation unknown", NO_WL "  - { name: t, isolation: strict }\n",
	  "s.yaml:19: tenants[1].isolation: must be shared, tenant or hardware" },
	{ "network class with a space", NO_WL "  - { name: t, network_class: 'a b' }\n",
	  "s.yaml:19: tenants[1].network_class: byte 0x20 is not allowed in a name" },
	{ "budget without a window", NO_WL "  - { name: t, budget: { gpu_hours: 5 } }\n",
	  "s.yaml:19: tenants[1].budget.window_h: missing" },
	{ "budget action unknown", NO_WL "  - { name: t, budget: { gpu_hours: 5, window_h: 1, on_exhaustion: stop } }\n",
	  "s.yaml:19: tenants[1].budget.on_exhaustion: must be hold or preemptible-only" },
	{ "budget weight of cpu", NO_WL "  - { name: t, budget: { gpu_hours: 5, window_h: 1, flavor_weights: { cpu: 1 } } }\n",
	  "s.yaml:19: tenants[1].budget.flavor_weights.cpu: budgets count GPU-hours: 'cpu' is not a GPU model" },
	{ "budget weight over 100", NO_WL "  - { name: t, budget: { gpu_hours: 5, window_h: 1, flavor_weights: { A100: 101 } } }\n",
	  "s.yaml:19: tenants[1].budget.flavor_weights.A100: must be a weight from 0 to 100 (GPU-hours counted per GPU-hour)" },
	{ "budget weights not a map", NO_WL "  - { name: t, budget: { gpu_hours: 5, window_h: 1, flavor_weights: [1] } }\n",
	  "s.yaml:19: tenants[1].budget.flavor_weights: must be a mapping of GPU models to weights" },
	{ "idle percentage over 100", NO_WL "  - { name: t, idle: { below_pct: 101, for_s: 1 } }\n",
	  "s.yaml:19: tenants[1].idle.below_pct: must be a percentage from 0 to 100" },
	{ "idle action unknown", NO_WL "  - { name: t, idle: { below_pct: 1, for_s: 1, action: kill } }\n",
	  "s.yaml:19: tenants[1].idle.action: must be notify or checkpoint-evict" },
	{ "idle exempt class unknown", NO_WL "  - { name: t, idle: { below_pct: 1, for_s: 1, exempt_classes: [top] } }\n",
	  "s.yaml:19: tenants[1].idle.exempt_classes[0]: no priority class 'top'" },
	{ "children not a list", NO_WL "  - { name: t, children: { name: u } }\n",
	  "s.yaml:19: tenants[1].children: must be a list of tenants" },
	/* workload */
	{ "workload tenant unknown", NO_WL "workload:\n  - { name: w, tenant: nobody, class: low, duration_s: 60 }\n",
	  "s.yaml:20: workload[0].tenant: no tenant 'nobody'" },
	{ "workload tenant not a leaf", NO_WL "workload:\n  - { name: w, tenant: org, class: low, duration_s: 60 }\n",
	  "s.yaml:20: workload[0].tenant: 'org' has children; work goes to leaf tenants only" },
	{ "workload class unknown", NO_WL "workload:\n  - { name: w, tenant: team, class: mid, duration_s: 60 }\n",
	  "s.yaml:20: workload[0].class: no priority class 'mid'" },
	{ "workload class missing", NO_WL "workload:\n  - { name: w, tenant: team, duration_s: 60 }\n",
	  "s.yaml:20: workload[0].class: missing" },
	{ "workload duration missing", NO_WL "workload:\n  - { name: w, tenant: team, class: low }\n",
	  "s.yaml:20: workload[0].duration_s: missing (or duration_h)" },
	{ "workload duration twice", WL("duration_h: 1"),
	  "s.yaml:20: workload[0].duration_h: give duration_s or duration_h, not both" },
	{ "workload name twice", BASE "  - { name: w, tenant: team, class: low, duration_s: 6 }\n",
	  "s.yaml:21: workload[1].name: another generator has this name" },
	{ "workload model unknown", WL("gpus: 1, models: [A100, H100]"),
	  "s.yaml:20: workload[0].models[1]: 'H100' is not the GPU model of a node group" },
	{ "workload models without GPUs", WL("models: [A100]"),
	  "s.yaml:20: workload[0].models: given for pods without GPUs" },
	{ "workload gpus over 16", WL("gpus: 17"),
	  "s.yaml:20: workload[0].gpus: must be an integer from 0 to 16" },
	{ "gpu fraction zero", WL("gpu_fraction: 0"),
	  "s.yaml:20: workload[0].gpu_fraction: must be a fraction of one GPU from 0.001 to 0.999" },
	{ "gpu fraction one", WL("gpu_fraction: 1"),
	  "s.yaml:20: workload[0].gpu_fraction: must be a fraction of one GPU from 0.001 to 0.999" },
	{ "gpu fraction rounding to a whole GPU", WL("gpu_fraction: 0.9999"),
	  "s.yaml:20: workload[0].gpu_fraction: must be a fraction of one GPU from 0.001 to 0.999" },
	{ "gpu fraction with gpus", WL("gpus: 1, gpu_fraction: 0.5"),
	  "s.yaml:20: workload[0].gpu_fraction: give gpus or gpu_fraction, not both" },
	{ "gpu memory without GPUs", WL("gpu_memory_gib: 4"),
	  "s.yaml:20: workload[0].gpu_memory_gib: given for pods without GPUs" },
	{ "pods zero", WL("pods: 0"),
	  "s.yaml:20: workload[0].pods: must be an integer from 1 to 4096" },
	{ "pods over the gang bound", WL("pods: 4097"),
	  "s.yaml:20: workload[0].pods: must be an integer from 1 to 4096" },
	{ "min_count over pods", WL("pods: 4, min_count: 5"),
	  "s.yaml:20: workload[0].min_count: must be at most pods (4)" },
	{ "pod cpu over the bound", WL("cpu: 3e6"),
	  "s.yaml:20: workload[0].cpu: must be at most 2147483.648 cores" },
	{ "arrival unknown", WL("arrival: poisson"),
	  "s.yaml:20: workload[0].arrival: must be fixed or exponential" },
	{ "topology unknown", WL("topology: rack"),
	  "s.yaml:20: workload[0].topology: must be any, node, nvlink or pack" },
	{ "utilisation over 100", WL("utilisation_pct: 100.5"),
	  "s.yaml:20: workload[0].utilisation_pct: must be a percentage from 0 to 100" },
	{ "workload not a list", NO_WL "workload: { name: w }\n",
	  "s.yaml:19: workload: must be a list of workload generators" },
};
/* clang-format on */

static void test_reject(void **state)
{
	const struct reject *c = *state;
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };
	int rc = parse(&sc, c->yaml, &err);
	size_t len;

	if (!c->msg) {
		/* a valid variant of the base, the control for the others */
		if (rc != 0)
			print_error("unexpected error: %s\n", err.msg);
		assert_int_equal(rc, 0);
		kerf_scenario_release(&sc);
		return;
	}
	assert_true(rc < 0);
	assert_int_equal(err.code, rc);
	len = strlen(c->msg);
	if (c->msg[len - 1] == '*') /* a list that may grow: the start */
		assert_memory_equal(err.msg, c->msg, len - 1);
	else
		assert_string_equal(err.msg, c->msg);
	assert_empty(&sc);
}

static void test_too_many_classes(void **state)
{
	char yaml[4096];
	size_t used;
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };

	(void)state;
	used = (size_t)snprintf(yaml, sizeof(yaml), MINI "priority_classes:\n");
	for (int i = 0; i <= KERF_MAX_CLASSES; i++)
		used += (size_t)snprintf(yaml + used, sizeof(yaml) - used,
					 "  - { name: c%d, value: %d }\n", i, i);
	assert_true(parse(&sc, yaml, &err) < 0);
	/* class 32 is on line 3 + 1 + 32 */
	assert_string_equal(err.msg, "s.yaml:36: priority_classes[32]: more than 32 priority classes");
	assert_empty(&sc);
}

static void test_too_many_models(void **state)
{
	char *yaml = malloc(16384);
	size_t used;
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };

	(void)state;
	assert_non_null(yaml);
	used = (size_t)snprintf(yaml, 16384, "horizon_h: 1\ncluster:\n  nodes:\n");
	for (int i = 0; i <= KERF_MAX_MODELS; i++)
		used += (size_t)snprintf(yaml + used, 16384 - used,
					 "    - { prefix: g%d-, count: 1, cpu: 1, memory_gib: 1, gpus: 1, model: M%d }\n",
					 i, i);
	assert_true(parse(&sc, yaml, &err) < 0);
	assert_string_equal(err.msg, "s.yaml:68: cluster.nodes[64].model: more than 64 GPU models");
	assert_empty(&sc);
	free(yaml);
}

static void test_too_large(void **state)
{
	size_t len = (16 << 20) + 1;
	char *yaml = malloc(len);
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };

	(void)state;
	assert_non_null(yaml);
	memset(yaml, ' ', len);
	assert_int_equal(kerf_scenario_parse(&sc, "s.yaml", yaml, len, &err),
			 -KERF_ELIMIT);
	assert_string_equal(err.msg, "s.yaml: larger than 16777216 bytes");
	assert_empty(&sc);
	free(yaml);
}

static void test_load(void **state)
{
	struct kerf_scenario sc;
	struct kerf_err err = { 0 };
	char path[] = "kerf-scenario-XXXXXX";
	int fd;
	FILE *fp;

	(void)state;
	assert_int_equal(kerf_scenario_load(&sc, "no/such/scenario.yaml", &err),
			 -KERF_EIO);
	assert_string_equal(err.msg, "cannot open 'no/such/scenario.yaml': No such file or directory");
	assert_empty(&sc);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs(MINI "seed: x\n", fp);
	fclose(fp);
	kerf_err_clear(&err);
	assert_int_equal(kerf_scenario_load(&sc, path, &err), -KERF_EPARSE);
	assert_non_null(strstr(err.msg, ":3: seed: must be an integer from 0 to 2^62"));
	assert_memory_equal(err.msg, path, strlen(path));
	assert_empty(&sc);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(full_yaml, fp);
	fclose(fp);
	kerf_err_clear(&err);
	assert_int_equal(kerf_scenario_load(&sc, path, &err), 0);
	check_full_parsed(&sc);
	kerf_scenario_release(&sc);
	remove(path);
}

/* The path is quoted escaped in every message, from every layer. */
static void test_path_escaped(void **state)
{
	static const char path[] = "s\x1b[2J\n.yaml";
	static const struct {
		const char *yaml, *msg;
	} cases[] = {
		{ "", "s\\x1b[2J\\x0a.yaml:1: the scenario is empty" },
		{ "a: [1\n", "s\\x1b[2J\\x0a.yaml:2: yaml: did not find expected ',' or ']' (while parsing a flow sequence from line 1)" },
		{ "horizon: 1\n", "s\\x1b[2J\\x0a.yaml:1: horizon: unknown key (known: name, seed, horizon_h, horizon_s, cycle_s, policy, cluster, priority_classes, tenants, workload)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kerf_scenario sc;
		struct kerf_err err = { 0 };

		assert_int_equal(kerf_scenario_parse(&sc, path, cases[i].yaml,
						     strlen(cases[i].yaml), &err),
				 -KERF_EPARSE);
		assert_string_equal(err.msg, cases[i].msg);
	}
}

static void test_build_rejects(void **state)
{
	struct kerf_scenario sc;
	struct kerf_state st;
	struct kerf_err err = { 0 };
	static const struct kerf_state empty_state;

	(void)state;
	/* children over the parent's nominal, made by hand: validate says no */
	parse_ok(&sc, BASE);
	sc.tenants[1].quotas[0].nominal = 17000;
	assert_true(kerf_scenario_build(&sc, &st, &err) < 0);
	assert_string_equal(err.msg, "tenants under 'org' gpu:A100: nominal quotas sum to 17000, more than its nominal 16000");
	assert_memory_equal(&st, &empty_state, sizeof(st));
	kerf_scenario_release(&sc);

	/* a parent that comes after its child */
	parse_ok(&sc, BASE);
	snprintf(sc.tenants[0].parent, sizeof(sc.tenants[0].parent), "team");
	kerf_err_clear(&err);
	assert_true(kerf_scenario_build(&sc, &st, &err) < 0);
	assert_string_equal(err.msg, "tenant 'org': parent 'team' is not defined before it");
	assert_memory_equal(&st, &empty_state, sizeof(st));
	kerf_scenario_release(&sc);

	/* a quota of a model the cluster does not have */
	parse_ok(&sc, BASE);
	snprintf(sc.tenants[1].quotas[0].resource,
		 sizeof(sc.tenants[1].quotas[0].resource), "B200");
	kerf_err_clear(&err);
	assert_true(kerf_scenario_build(&sc, &st, &err) < 0);
	assert_string_equal(err.msg, "tenant 'team': quota of 'B200', which is no GPU model of the cluster");
	kerf_scenario_release(&sc);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_doc_example),
		cmocka_unit_test(test_anchors),
		cmocka_unit_test(test_too_many_classes),
		cmocka_unit_test(test_too_many_models),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_path_escaped),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_build_rejects),
	};
	enum { NR_FIXED = sizeof(fixed) / sizeof(fixed[0]),
	       NR_REJECTS = sizeof(rejects) / sizeof(rejects[0]) };
	struct CMUnitTest tests[NR_FIXED + NR_REJECTS];

	memcpy(tests, fixed, sizeof(fixed));
	for (size_t i = 0; i < NR_REJECTS; i++)
		tests[NR_FIXED + i] = (struct CMUnitTest){
			.name = rejects[i].rule,
			.test_func = test_reject,
			.initial_state = (void *)&rejects[i],
		};
	return _cmocka_run_group_tests("scenario", tests, NR_FIXED + NR_REJECTS,
				       NULL, NULL);
}
