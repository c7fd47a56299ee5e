/*
 * test_persist: what survives a restart.  A state with history (fair-share
 * usage, a budget spent, a preemption in flight, a workload evicted and
 * requeued, a reservation) is exported, sent through JSON, and imported
 * into a state rebuilt from its nodes and workloads in another order: the
 * history is back, the accounting checks, and the next cycles decide what
 * the original decides.  The JSON decoder refuses what it must (wrong
 * kind or version, unknown fields, duplicate keys, wrong types, values out
 * of range, references to the wrong thing) with the field's path, and
 * import changes nothing then.  The kerf policy's learned model goes
 * through words and back, and refuses words that do not add up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cycle.h"
#include "core/persist.h"
#include "core/preempt.h"
#include "core/workload_model.h"
#include "persist/state_json.h"
#include "sched_fixture.h"

#define GPU KERF_RES_GPU0

/* Two nodes of 8 GPUs; cluster -> org -> team-a, team-b. */
#define setup fx_two_teams

/* Round trip through JSON text. */
static void through_json(const struct kerf_persist *p, struct kerf_persist *back)
{
	struct kerf_err err = { 0 };
	char *text;
	size_t len;

	assert_int_equal(kerf_state_json_encode(p, &text, &len, &err), 0);
	if (kerf_state_json_decode(text, len, back, &err) < 0)
		fail_msg("%s\n%s", err.msg, text);
	free(text);
}

/* A state with history: victims asked to leave, usage aged, a requeue. */
static void make_history(struct fx *f, uint32_t *victim, uint32_t *preemptor)
{
	struct kerf_preempt_plan plan = { .nr = 1 };

	*victim = fx_submit_gang(f, f->a, f->batch, 1, 8, 0);
	fx_submit_gang(f, f->b, f->batch, 1, 8, 0);
	fx_cycle(f, 0);
	kerf_state_age(&f->st, 600000);
	*preemptor = fx_submit_gang(f, f->b, f->prod, 1, 8, 600000);
	plan.victims[0] = *victim;
	kerf_decisions_clear(&f->dec);
	assert_int_equal(kerf_preempt_start(&f->st, fx_wl(f, *preemptor), &plan,
					    600000, &f->dec), 0);
	fx_submit(f, f->a, f->batch, 4, 600001);
}

static void test_export_import_round_trip(void **state)
{
	struct fx f, g;
	struct kerf_persist p, back;
	uint32_t victim, preemptor;
	struct kerf_workload *w;

	(void)state;
	setup(&f);
	make_history(&f, &victim, &preemptor);
	assert_int_equal(kerf_state_export(&f.st, &f.s, &p), 0);
	through_json(&p, &back);
	assert_int_equal(back.nr_workloads, 4);
	assert_int_equal(back.nr_tenants, 3);

	/* rebuilt: the same tree, the running workload adopted, the rest again */
	setup(&g);
	for (size_t k = f.st.nr_wl; k-- > 0;) {
		const struct kerf_workload *x = f.st.wl[k];

		if (x->state == KERF_WL_RUNNING)
			assert_true(kerf_state_adopt(&g.st, x->key, x, x->submit_ms,
						     x->start_ms, x->pods, x->nr_bound,
						     NULL) > 0);
		else
			assert_true(kerf_state_submit(&g.st, x->key, x, x->submit_ms,
						      NULL) > 0);
	}
	assert_int_equal(kerf_state_import(&g.st, &g.s, &back, NULL), 0);
	fx_state_ok(&g);
	/* the handshake in flight is back, pointing at the preemptor */
	w = kerf_state_find_key(&g.st, fx_wl(&f, victim)->key);
	assert_int_equal(kerf_wl_pre(w)->preempt_deadline_ms, 601000);
	assert_ptr_equal(kerf_state_find(&g.st, kerf_wl_pre(w)->preempted_by),
			 kerf_state_find_key(&g.st, fx_wl(&f, preemptor)->key));
	assert_int_equal(kerf_wl_pre(w)->nr_asked_by, 1);
	assert_int_equal(kerf_wl_pre(kerf_state_find_key(&g.st, fx_wl(&f, preemptor)->key))->nr_victims, 1);
	assert_int_equal(kerf_wl_pre(kerf_state_find_key(&g.st, fx_wl(&f, preemptor)->key))->nr_nominated, 1);
	/* only those two took part in preemption: the others carry no pre */
	for (size_t k = 0; k < g.st.nr_wl; k++) {
		const struct kerf_workload *x = g.st.wl[k];
		bool part = strcmp(x->key, fx_wl(&f, victim)->key) == 0 ||
			    strcmp(x->key, fx_wl(&f, preemptor)->key) == 0;

		assert_true((x->pre != NULL) == part);
		assert_true((kerf_state_find_key(&f.st, x->key)->pre != NULL) == part);
	}
	/* fair-share history and the clock */
	assert_int_equal(g.st.avg_at_ms, 600000);
	assert_memory_equal(&g.st.usage_avg[f.a], &f.st.usage_avg[f.a],
			    sizeof(g.st.usage_avg[f.a]));
	assert_true(g.st.usage_avg[f.a].v[GPU] > 0);
	/* submission order kept */
	for (size_t k = 0; k < f.st.nr_wl; k++)
		assert_int_equal(kerf_state_find_key(&g.st, f.st.wl[k]->key)->seq,
				 f.st.wl[k]->seq);
	/* and the next cycle decides the same: the victim leaves at 601000 */
	fx_cycle(&f, 601000);
	fx_cycle(&g, 601000);
	assert_int_equal(f.dec.nr, g.dec.nr);
	for (size_t i = 0; i < f.dec.nr; i++) {
		assert_int_equal(f.dec.d[i].kind, g.dec.d[i].kind);
		assert_string_equal(kerf_state_find(&f.st, f.dec.d[i].workload)->key,
				    kerf_state_find(&g.st, g.dec.d[i].workload)->key);
	}
	kerf_persist_release(&p);
	kerf_persist_release(&back);
	fx_teardown(&f);
	fx_teardown(&g);
}

/* Records of workloads, tenants and nodes that are gone are skipped. */
static void test_import_skips_the_gone(void **state)
{
	struct fx f, g;
	struct kerf_persist p;
	uint32_t victim, preemptor;

	(void)state;
	setup(&f);
	make_history(&f, &victim, &preemptor);
	assert_int_equal(kerf_state_export(&f.st, &f.s, &p), 0);
	setup(&g);   /* nothing relisted: every workload finished meanwhile */
	assert_int_equal(kerf_state_import(&g.st, &g.s, &p, NULL), 0);
	assert_int_equal(g.st.nr_wl, 0);
	assert_int_equal(g.st.next_seq, p.next_seq);
	fx_state_ok(&g);
	kerf_persist_release(&p);
	fx_teardown(&f);
	fx_teardown(&g);
}

static void expect_refused(const char *json, const char *msg)
{
	struct kerf_persist p;
	struct kerf_err err = { 0 };

	assert_true(kerf_state_json_decode(json, strlen(json), &p, &err) < 0);
	if (!strstr(err.msg, msg))
		fail_msg("'%s' does not contain '%s'", err.msg, msg);
}

#define HEAD "{\"kind\":\"KerfState\",\"version\":1,\"avgAtMs\":0,\"halfLifeMs\":1000,\"nextSeq\":5"

static void test_json_refusals(void **state)
{
	(void)state;
	expect_refused("", "state JSON: line 1");
	expect_refused("[1]", "the document must be an object");
	expect_refused("{\"kind\":\"Pod\"}", "kind: must be \"KerfState\"");
	expect_refused("{\"version\":1}", "kind: missing");
	expect_refused(HEAD ",\"extra\":1}", "extra: unknown field");
	expect_refused("{\"kind\":\"KerfState\",\"kind\":\"KerfState\"}", "duplicate");
	expect_refused("{\"kind\":\"KerfState\",\"version\":2,\"halfLifeMs\":1,\"nextSeq\":1}",
		       "version: 2, this kerf reads 1");
	expect_refused("{\"kind\":\"KerfState\",\"avgAtMs\":1.5}", "avgAtMs: must be an integer");
	expect_refused("{\"kind\":\"KerfState\",\"halfLifeMs\":0}", "halfLifeMs: out of range");
	expect_refused(HEAD ",\"workloads\":[{\"key\":\"a\"}]}", "workloads[0].seq: missing");
	expect_refused(HEAD ",\"workloads\":[{\"key\":\"a\",\"seq\":9}]}",
		       "workloads[0].seq: 9 is not below nextSeq 5");
	expect_refused(HEAD ",\"workloads\":[{\"key\":\"a\",\"seq\":1,\"utilPct\":101}]}",
		       "workloads[0].utilPct: out of range");
	expect_refused(HEAD ",\"workloads\":[{\"key\":\"a\\u001b[2J\",\"seq\":1}]}",
		       "workloads[0].key: not a usable name");
	expect_refused(HEAD ",\"workloads\":[{\"key\":\"a\",\"seq\":1,\"pending\":\"Bored\"}]}",
		       "workloads[0].pending: must name a pending reason");
	expect_refused(HEAD ",\"workloads\":[{\"key\":\"a\",\"seq\":1,\"preemptedBy\":\"b\"}]}",
		       "workloads[0].preemptedBy: set without a deadline");
	expect_refused(HEAD ",\"workloads\":[{\"key\":\"a\",\"seq\":1,\"evictedAtMs\":[1,2]}]}",
		       "workloads[0].evictedAtMs: must be an array of 3 times");
	expect_refused(HEAD ",\"workloads\":[{\"key\":\"a\",\"seq\":1,\"pendingTold\":\"xyz\"}]}",
		       "workloads[0].pendingTold: must be 16 lower-case hex digits");
	expect_refused(HEAD ",\"tenants\":[{\"name\":\"t\",\"usageAvg\":{\"cpu\":-1}}]}",
		       "tenants[0].cpu: out of range");
	expect_refused(HEAD ",\"tenants\":[{\"name\":\"t\",\"budget\":{\"warnedPct\":200}}]}",
		       "tenants[0].warnedPct: out of range");
	expect_refused(HEAD ",\"reservation\":{\"nodes\":[\"n1\"]}}",
		       "reservation.nodes: nodes held for no workload");
	expect_refused(HEAD ",\"policy\":{\"name\":\"kerf\",\"state\":[1.5]}}",
		       "policy.state: must hold integers only");
	expect_refused(HEAD ",\"notices\":[{\"kind\":\"Loud\",\"tenant\":\"t\"}]}",
		       "notices[0].kind: must be Budget, Idle or IdleEvict");
}

static void test_json_smallest(void **state)
{
	struct kerf_persist p;
	struct kerf_err err = { 0 };
	const char *json = HEAD "}";

	(void)state;
	assert_int_equal(kerf_state_json_decode(json, strlen(json), &p, &err), 0);
	assert_int_equal(p.next_seq, 5);
	assert_int_equal(p.nr_workloads, 0);
	kerf_persist_release(&p);
}

/* A wrong policy state changes nothing: not the state, not the policy. */
static void test_import_all_or_nothing(void **state)
{
	struct fx f;
	struct kerf_persist p;
	struct kerf_err err = { 0 };
	int64_t words[3] = { 0, 1, 7 };   /* plug-in 0 (fit) keeps no state */

	(void)state;
	setup(&f);
	fx_submit(&f, f.a, f.batch, 1, 0);
	kerf_persist_init(&p);
	p.next_seq = 10;
	p.half_life_ms = 5;
	p.avg_at_ms = 77;
	p.policy = strdup("first-fit");
	p.policy_state = words;
	p.nr_policy_state = 3;
	assert_int_equal(kerf_state_import(&f.st, &f.s, &p, &err), -KERF_EINVAL);
	assert_int_equal(f.st.avg_at_ms, 0);
	assert_int_equal(f.st.next_seq, 2);
	p.policy_state = NULL;
	p.nr_policy_state = 0;
	kerf_persist_release(&p);
	fx_teardown(&f);
}

/* Two empty models alike: one to learn, one to load its words into. */
static void model_pair(struct kerf_workload_model *m,
		       struct kerf_workload_model *n)
{
	assert_int_equal(kerf_workload_model_init(m, 95, 64, 50, 1000), 0);
	assert_int_equal(kerf_workload_model_init(n, 95, 64, 50, 1000), 0);
}

static void test_model_words(void **state)
{
	struct kerf_workload_model m, n;
	struct kerf_err err = { 0 };
	int64_t *w;
	size_t nr;

	(void)state;
	model_pair(&m, &n);
	for (int i = 0; i < 500; i++) {
		struct kerf_pod p = { .cpu_milli = 1000 * (i % 7 + 1), .mem_mib = 4096,
				      .nr_gpus = 1, .gpu_milli = i % 3 ? 1000 : 500 };

		kerf_workload_model_observe(&m, &p);
	}
	assert_int_equal(kerf_workload_model_save(&m, &w, &nr), 0);
	assert_int_equal(kerf_workload_model_load(&n, w, nr, &err), 0);
	assert_int_equal(n.nr_keys, m.nr_keys);
	assert_int_equal(n.nr_seen, m.nr_seen);
	assert_int_equal(n.dist.nr, m.dist.nr);
	assert_int_equal(kerf_pod_dist_distance(&m.dist, &n.dist), 0);
	/* both learn on alike */
	for (int i = 0; i < 300; i++) {
		struct kerf_pod p = { .cpu_milli = 2000, .nr_gpus = 2, .gpu_milli = 1000 };

		assert_int_equal(kerf_workload_model_observe(&m, &p),
				 kerf_workload_model_observe(&n, &p));
	}
	assert_int_equal(kerf_pod_dist_distance(&m.dist, &n.dist), 0);
	/* a weight that does not add up is refused, nothing changed */
	w[2] += 1;
	assert_int_equal(kerf_workload_model_load(&n, w, nr, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "key weights sum to"));
	w[2] -= 1;
	w[9 + 1] = 1001;   /* first key's gpu_milli */
	kerf_err_clear(&err);
	assert_int_equal(kerf_workload_model_load(&n, w, nr, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "key 0 out of range"));
	kerf_err_clear(&err);
	assert_int_equal(kerf_workload_model_load(&n, w, nr - 1, &err), -KERF_EINVAL);
	assert_int_equal(n.nr_seen, m.nr_seen);
	free(w);
	kerf_workload_model_release(&m);
	kerf_workload_model_release(&n);
}

/*
 * A model that learned size classes (more keys than the typical set may
 * hold) comes back with them: same level, distance 0, and it learns on as
 * the original does.  A level out of range is refused.
 */
static void test_model_words_classes(void **state)
{
	struct kerf_workload_model m, n;
	struct kerf_err err = { 0 };
	int64_t *w;
	size_t nr;

	(void)state;
	model_pair(&m, &n);
	for (int i = 0; i < 900; i++) {
		struct kerf_pod p = { .cpu_milli = 1000 + 37 * (i % 300),
				      .mem_mib = 4096, .nr_gpus = 1,
				      .gpu_milli = 100 + 3 * (i % 290) };

		kerf_workload_model_observe(&m, &p);
	}
	assert_true(m.dist.class_level > 0);
	assert_int_equal(kerf_workload_model_save(&m, &w, &nr), 0);
	assert_int_equal(kerf_workload_model_load(&n, w, nr, &err), 0);
	assert_int_equal(n.dist.class_level, m.dist.class_level);
	assert_int_equal(kerf_pod_dist_distance(&m.dist, &n.dist), 0);
	for (int i = 0; i < 300; i++) {
		struct kerf_pod p = { .cpu_milli = 2000 + i, .nr_gpus = 2,
				      .gpu_milli = 1000 };

		assert_int_equal(kerf_workload_model_observe(&m, &p),
				 kerf_workload_model_observe(&n, &p));
	}
	assert_int_equal(kerf_pod_dist_distance(&m.dist, &n.dist), 0);
	w[8] = KERF_DIST_LEVELS;
	assert_int_equal(kerf_workload_model_load(&n, w, nr, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "header out of range"));
	free(w);
	kerf_workload_model_release(&m);
	kerf_workload_model_release(&n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export_import_round_trip),
		cmocka_unit_test(test_import_skips_the_gone),
		cmocka_unit_test(test_json_refusals),
		cmocka_unit_test(test_json_smallest),
		cmocka_unit_test(test_import_all_or_nothing),
		cmocka_unit_test(test_model_words),
		cmocka_unit_test(test_model_words_classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
