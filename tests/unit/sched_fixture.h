/*
 * sched_fixture: the scheduling state, first-fit policy and scheduler that
 * the cycle-level unit tests (cycle, preempt, budget, idle, state) drive,
 * with the helpers they share: submit a gang, find a workload, run a cycle
 * and acknowledge a preemption, each followed by the invariant walker where
 * the state changed.  Every helper fails the running cmocka test on error.
 *
 * A test's setup is its own (node count, tenant quotas, classes):
 *
 *	fx_begin(f, nr_nodes, nr_teams, org_quota, team_quotas);
 *	f->batch = fx_add_class(f, "batch", 100, true, grace_ms);
 *	fx_start(f);
 *	...
 *	fx_teardown(f);
 *
 * A test that wants another tenant tree passes nr_teams 0 and adds its
 * tenants to f->tenants between fx_begin and fx_start.
 */
#ifndef KERF_TESTS_UNIT_SCHED_FIXTURE_H
#define KERF_TESTS_UNIT_SCHED_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/cycle.h"
#include "core/policy.h"
#include "core/state.h"

enum { FX_MAX_TEAMS = 3 };

struct fx {
	struct kerf_state st;
	struct kerf_decisions dec;  /* what the last fx_cycle / fx_ack decided */
	struct kerf_policy pol;
	struct kerf_sched s;
	/*
	 * What fx_begin starts and the setup fills; fx_start moves them into
	 * st and leaves them empty.
	 */
	struct kerf_cluster cluster;
	struct kerf_tenants tenants;
	struct kerf_classes classes;
	/* tenants: org and its leaves team-a, team-b, team-c; -1 if absent */
	int org, a, b, c;
	/* classes the tests name; -1 where a setup does not add one */
	int urgent, prod, high, batch, notebook, low, pinned;
};

/*
 * Start building: nr_nodes nodes n0, n1, ... of 8 GPUs of model "h100"
 * (80 GiB), 64 cores and 512 GiB each; no classes yet.  With nr_teams 1 to
 * FX_MAX_TEAMS, the tree is cluster -> org -> team-a, team-b, ..., all of
 * weight 1; org_quota and team_quotas (an array of nr_teams) may be NULL
 * for the default quota (nothing governed).  With nr_teams 0 the tree has
 * the root only.
 */
void fx_begin(struct fx *f, int nr_nodes, int nr_teams,
	      const struct kerf_quota *org_quota,
	      const struct kerf_quota *team_quotas);

/*
 * The common setup: two nodes, cluster -> org -> team-a, team-b without
 * quotas, classes production (1000, not preemptible) and batch (100, 1 s
 * of checkpoint grace); started.
 */
void fx_two_teams(struct fx *f);

/* Add a class (no minimum runtime); returns its index. */
int fx_add_class(struct fx *f, const char *name, int32_t value,
		 bool preemptible, int64_t checkpoint_grace_ms);

/* The state from what was built, the first-fit policy and a scheduler. */
void fx_start(struct fx *f);

void fx_teardown(struct fx *f);

/*
 * A gang of pods pods of gpus whole GPUs each (1 core and 1 GiB a pod),
 * min_count pods; not submitted.
 */
struct kerf_workload fx_gang(int tenant, int cls, uint32_t pods, int gpus);

/* Submit w under key "w<id>"; the submission must succeed.  Returns the id. */
uint32_t fx_submit_workload(struct fx *f, struct kerf_workload *w,
			    int64_t now_ms);

/* Submit fx_gang(tenant, cls, pods, gpus); returns the id. */
uint32_t fx_submit_gang(struct fx *f, int tenant, int cls, uint32_t pods,
			int gpus, int64_t now_ms);

/* Submit one pod of gpus whole GPUs; returns the id. */
uint32_t fx_submit(struct fx *f, int tenant, int cls, int gpus,
		   int64_t now_ms);

/* The workload of id, which must exist. */
struct kerf_workload *fx_wl(struct fx *f, uint32_t id);

/* kerf_state_check must pass. */
void fx_state_ok(const struct fx *f);

/* One scheduling cycle at now_ms, which must succeed; then fx_state_ok. */
struct kerf_cycle_stats fx_cycle(struct fx *f, int64_t now_ms);

/* Acknowledge the preemption of id, which must succeed; then fx_state_ok. */
void fx_ack(struct fx *f, uint32_t id, int64_t now_ms);

/* Records of kind in f->dec (for workload id; 0: any). */
size_t fx_count(const struct fx *f, enum kerf_decision_kind kind, uint32_t id);

/* Notice k (counted from the first ever issued) is exactly this one. */
void fx_assert_notice(const struct fx *f, uint64_t k, int64_t at_ms,
		      enum kerf_notice_kind kind, int tenant,
		      uint32_t workload, int32_t pct);

#endif /* KERF_TESTS_UNIT_SCHED_FIXTURE_H */
