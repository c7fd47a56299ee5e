/*
 * sched_fixture: see sched_fixture.h.  The helpers assert with cmocka, so
 * this file links only into cmocka tests.
 */
#include "sched_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/preempt.h"

void fx_begin(struct fx *f, int nr_nodes, int nr_teams,
	      const struct kerf_quota *org_quota,
	      const struct kerf_quota *team_quotas)
{
	static const char *const names[FX_MAX_TEAMS] = {
		"team-a", "team-b", "team-c",
	};
	int *team[FX_MAX_TEAMS] = { &f->a, &f->b, &f->c };

	assert_true(nr_teams >= 0 && nr_teams <= FX_MAX_TEAMS);
	memset(f, 0, sizeof(*f));
	f->org = f->a = f->b = f->c = -1;
	f->urgent = f->prod = f->high = f->batch = -1;
	f->notebook = f->low = f->pinned = -1;
	kerf_cluster_init(&f->cluster);
	assert_int_equal(kerf_cluster_model(&f->cluster, "h100", 81920, NULL),
			 0);
	for (int i = 0; i < nr_nodes; i++) {
		char name[16];

		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(kerf_cluster_add_node(&f->cluster, name, 64000,
						       524288, 0, 8, NULL), i);
	}
	assert_int_equal(kerf_tenants_init(&f->tenants,
					   kerf_res_count(&f->cluster)), 0);
	kerf_classes_init(&f->classes);
	if (nr_teams == 0)
		return;
	f->org = kerf_tenants_add(&f->tenants, "org", KERF_TENANT_ROOT,
				  org_quota, 1, NULL);
	assert_int_equal(f->org, KERF_TENANT_ROOT + 1);
	for (int i = 0; i < nr_teams; i++) {
		const struct kerf_quota *q =
			team_quotas ? &team_quotas[i] : NULL;

		*team[i] = kerf_tenants_add(&f->tenants, names[i], f->org, q, 1,
					    NULL);
		assert_int_equal(*team[i], f->org + 1 + i);
	}
}

int fx_add_class(struct fx *f, const char *name, int32_t value,
		 bool preemptible, int64_t checkpoint_grace_ms)
{
	struct kerf_priority_class pc = {
		.value = value,
		.preemptible = preemptible,
		.checkpoint_grace_ms = checkpoint_grace_ms,
	};

	snprintf(pc.name, sizeof(pc.name), "%s", name);
	return kerf_classes_add(&f->classes, &pc, NULL);
}

void fx_start(struct fx *f)
{
	struct kerf_policy_args args = { 0 };

	assert_int_equal(kerf_state_init(&f->st, &f->cluster, &f->tenants,
					 &f->classes, NULL), 0);
	args.cluster = &f->st.cluster;
	assert_int_equal(kerf_policy_build(&f->pol, "first-fit", &args, NULL),
			 0);
	kerf_sched_init(&f->s, &f->pol);
	kerf_decisions_init(&f->dec);
}

void fx_teardown(struct fx *f)
{
	kerf_decisions_release(&f->dec);
	kerf_sched_release(&f->s);
	kerf_policy_release(&f->pol);
	kerf_state_release(&f->st);
}

struct kerf_workload fx_gang(int tenant, int cls, uint32_t pods, int gpus)
{
	struct kerf_workload w = { .tenant = tenant, .class_idx = cls,
				   .nr_sets = 1, .min_count = pods };

	w.sets[0] = (struct kerf_podset){
		.req = { .cpu_milli = 1000, .mem_mib = 1024,
			 .nr_gpus = (uint8_t)gpus, .gpu_milli = 1000 },
		.count = pods,
	};
	return w;
}

uint32_t fx_submit_workload(struct fx *f, struct kerf_workload *w,
			    int64_t now_ms)
{
	struct kerf_err err = { 0 };
	char key[32];
	int id;

	snprintf(key, sizeof(key), "w%u", f->st.next_id);
	id = kerf_state_submit(&f->st, key, w, now_ms, &err);
	if (id <= 0)
		fail_msg("%s", err.msg);
	return (uint32_t)id;
}

uint32_t fx_submit_gang(struct fx *f, int tenant, int cls, uint32_t pods,
			int gpus, int64_t now_ms)
{
	struct kerf_workload w = fx_gang(tenant, cls, pods, gpus);

	return fx_submit_workload(f, &w, now_ms);
}

uint32_t fx_submit(struct fx *f, int tenant, int cls, int gpus,
		   int64_t now_ms)
{
	return fx_submit_gang(f, tenant, cls, 1, gpus, now_ms);
}

struct kerf_workload *fx_wl(struct fx *f, uint32_t id)
{
	struct kerf_workload *w = kerf_state_find(&f->st, id);

	assert_non_null(w);
	return w;
}

void fx_state_ok(const struct fx *f)
{
	struct kerf_err err = { 0 };

	if (kerf_state_check(&f->st, &err) < 0)
		fail_msg("%s", err.msg);
}

struct kerf_cycle_stats fx_cycle(struct fx *f, int64_t now_ms)
{
	struct kerf_cycle_stats stats;
	struct kerf_err err = { 0 };

	kerf_decisions_clear(&f->dec);
	if (kerf_cycle_run(&f->s, &f->st, now_ms, &f->dec, &stats, &err) != 0)
		fail_msg("%s", err.msg);
	fx_state_ok(f);
	return stats;
}

void fx_ack(struct fx *f, uint32_t id, int64_t now_ms)
{
	struct kerf_err err = { 0 };

	kerf_decisions_clear(&f->dec);
	if (kerf_preempt_ack(&f->st, id, now_ms, &f->dec, &err) < 0)
		fail_msg("%s", err.msg);
	fx_state_ok(f);
}

void fx_assert_notice(const struct fx *f, uint64_t k, int64_t at_ms,
		      enum kerf_notice_kind kind, int tenant,
		      uint32_t workload, int32_t pct)
{
	const struct kerf_notice *n = &f->st.notices[k % KERF_NOTICES];

	assert_true(k < f->st.nr_notices);
	assert_int_equal(n->at_ms, at_ms);
	assert_int_equal(n->kind, kind);
	assert_int_equal(n->tenant, tenant);
	assert_int_equal(n->workload, workload);
	assert_int_equal(n->pct, pct);
}

size_t fx_count(const struct fx *f, enum kerf_decision_kind kind, uint32_t id)
{
	size_t n = 0;

	for (size_t i = 0; i < f->dec.nr; i++)
		n += f->dec.d[i].kind == kind && (!id || f->dec.d[i].workload == id);
	return n;
}

void fx_two_teams(struct fx *f)
{
	fx_begin(f, 2, 2, NULL, NULL);
	f->prod = fx_add_class(f, "production", 1000, false, 0);
	f->batch = fx_add_class(f, "batch", 100, true, 1000);
	fx_start(f);
}
