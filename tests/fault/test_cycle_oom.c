/*
 * test_cycle_oom: the scheduling cycle under allocation failure, curl's
 * torture test applied to the core.  A state with a backlog (gangs, an
 * NVLink gang, a preemption to make, work to admit) runs one cycle with
 * the n-th allocation failing, for every n until a cycle needs no more.
 * Each run must either succeed or return -KERF_ENOMEM, and in both cases:
 *   - the state passes kerf_state_check (nothing half done);
 *   - every workload the cycle admitted has a BIND record per pod, and
 *     every workload with a BIND record runs (a decision taken is never
 *     lost, none is invented);
 *   - when it failed, running the cycle again with memory back decides
 *     what an undisturbed cycle decides for the work still pending.
 *
 * malloc, calloc and realloc of this program fail on request (glibc's
 * __libc_* do the work); the program is built without sanitizers, which
 * would intercept them first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cycle.h"
#include "core/policy.h"
#include "core/preempt.h"

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);

static long fail_at = -1;   /* the allocation that fails; -1: none */
static long nr_allocs;

static bool fails(void)
{
	return fail_at >= 0 && nr_allocs++ == fail_at;
}

void *malloc(size_t size)
{
	return fails() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return fails() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return fails() ? NULL : __libc_realloc(p, size);
}

struct bed {
	struct kerf_state st;
	struct kerf_policy pol;
	struct kerf_sched s;
	struct kerf_decisions dec;
};

static void submit(struct bed *b, const char *key, int tenant, int cls,
		   uint32_t pods, int gpus, enum kerf_topology topo, int64_t at)
{
	struct kerf_workload w = { .tenant = tenant, .class_idx = cls, .nr_sets = 1,
				   .min_count = pods, .topology = topo };

	w.sets[0] = (struct kerf_podset){
		.req = { .cpu_milli = 1000, .mem_mib = 1024, .nr_gpus = (uint8_t)gpus,
			 .gpu_milli = gpus ? 1000 : 0 },
		.count = pods,
	};
	assert_true(kerf_state_submit(&b->st, key, &w, at, NULL) > 0);
}

/* 6 nodes in 2 NVLink domains, two teams, running work and a backlog. */
static void bed_init(struct bed *b)
{
	struct kerf_cluster c;
	struct kerf_tenants tt;
	struct kerf_classes cl;
	struct kerf_priority_class prod = { .name = "prod", .value = 1000 };
	struct kerf_priority_class batch = { .name = "batch", .value = 100,
					     .preemptible = true,
					     .checkpoint_grace_ms = 30000 };
	int a, t;

	memset(b, 0, sizeof(*b));
	kerf_cluster_init(&c);
	assert_int_equal(kerf_cluster_model(&c, "H100-80GB", 81920, NULL), 0);
	for (int i = 0; i < 6; i++) {
		char name[8];

		snprintf(name, sizeof(name), "n%d", i);
		assert_int_equal(kerf_cluster_add_node(&c, name, 64000, 524288, 0, 8,
						       NULL), i);
		kerf_cluster_set_domain(&c, (size_t)i, (uint32_t)(i / 3 + 1));
	}
	assert_int_equal(kerf_tenants_init(&tt, kerf_res_count(&c)), 0);
	a = kerf_tenants_add(&tt, "team-a", KERF_TENANT_ROOT, NULL, 1, NULL);
	t = kerf_tenants_add(&tt, "team-b", KERF_TENANT_ROOT, NULL, 1, NULL);
	kerf_classes_init(&cl);
	assert_int_equal(kerf_classes_add(&cl, &prod, NULL), 0);
	assert_int_equal(kerf_classes_add(&cl, &batch, NULL), 1);
	assert_int_equal(kerf_state_init(&b->st, &c, &tt, &cl, NULL), 0);
	assert_int_equal(kerf_policy_build(&b->pol, "kerf",
					   &(struct kerf_policy_args){
						   .cluster = &b->st.cluster },
					   NULL), 0);
	assert_int_equal(kerf_sched_init(&b->s, &b->pol), 0);
	kerf_decisions_init(&b->dec);
	/* running: batch work filling 5 of 6 nodes */
	for (int i = 0; i < 5; i++) {
		char key[16];

		snprintf(key, sizeof(key), "run-%d", i);
		submit(b, key, a, 1, 1, 8, KERF_TOPO_ANY, 0);
	}
	assert_int_equal(kerf_cycle_run(&b->s, &b->st, 0, &b->dec,
					&(struct kerf_cycle_stats){ 0 }, NULL), 0);
	kerf_decisions_clear(&b->dec);
	/* backlog: a production gang (preemption), an NVLink gang, pods */
	submit(b, "prod-gang", t, 0, 2, 8, KERF_TOPO_ANY, 1000);
	submit(b, "nvlink", t, 1, 3, 4, KERF_TOPO_NVLINK, 1001);
	submit(b, "small-1", a, 1, 1, 1, KERF_TOPO_ANY, 1002);
	submit(b, "small-2", t, 1, 2, 2, KERF_TOPO_ANY, 1003);
	submit(b, "cpu", a, 1, 4, 0, KERF_TOPO_ANY, 1004);
}

static void bed_release(struct bed *b)
{
	kerf_decisions_release(&b->dec);
	kerf_sched_release(&b->s);
	kerf_policy_release(&b->pol);
	kerf_state_release(&b->st);
}

/* BIND records and running workloads agree. */
static void binds_match(const struct bed *b)
{
	for (size_t i = 0; i < b->st.nr_wl; i++) {
		const struct kerf_workload *w = b->st.wl[i];
		uint32_t binds = 0;

		for (size_t k = 0; k < b->dec.nr; k++)
			binds += b->dec.d[k].kind == KERF_DECIDE_BIND &&
				 b->dec.d[k].workload == w->id;
		if (w->state == KERF_WL_RUNNING && w->start_ms > 0)
			assert_int_equal(binds, w->nr_bound);
		else
			assert_int_equal(binds, 0);
	}
}

/* Keys of the running workloads, sorted, as one string. */
static void running_keys(const struct bed *b, char *out, size_t size)
{
	const char *keys[64];
	size_t n = 0, off = 0;

	for (size_t i = 0; i < b->st.nr_wl && n < 64; i++)
		if (b->st.wl[i]->state == KERF_WL_RUNNING)
			keys[n++] = b->st.wl[i]->key;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(keys[j], keys[j - 1]) < 0; j--) {
			const char *t = keys[j];

			keys[j] = keys[j - 1];
			keys[j - 1] = t;
		}
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(out + off, size - off, "%s ", keys[i]);
}

static void test_every_allocation_fails_once(void **state)
{
	char want[512], got[512];
	long needed, failed = 0;
	struct bed b;

	(void)state;
	/* the undisturbed cycle, and how many allocations it makes */
	bed_init(&b);
	nr_allocs = 0;
	fail_at = 1L << 40;
	assert_int_equal(kerf_cycle_run(&b.s, &b.st, 2000, &b.dec,
					&(struct kerf_cycle_stats){ 0 }, NULL), 0);
	needed = nr_allocs;
	fail_at = -1;
	running_keys(&b, want, sizeof(want));
	bed_release(&b);
	assert_true(needed > 10);
	for (long n = 0; n < needed; n++) {
		struct kerf_err err = { 0 };
		int rc;

		bed_init(&b);
		nr_allocs = 0;
		fail_at = n;
		rc = kerf_cycle_run(&b.s, &b.st, 2000, &b.dec,
				    &(struct kerf_cycle_stats){ 0 }, &err);
		fail_at = -1;
		assert_true(rc == 0 || rc == -KERF_ENOMEM);
		failed += rc < 0;
		if (kerf_state_check(&b.st, &err) < 0)
			fail_msg("allocation %ld: %s", n, err.msg);
		binds_match(&b);
		/* with memory back, the same outcome as undisturbed */
		if (rc < 0) {
			assert_int_equal(kerf_cycle_run(&b.s, &b.st, 2000, &b.dec,
							&(struct kerf_cycle_stats){ 0 },
							NULL), 0);
			assert_int_equal(kerf_state_check(&b.st, NULL), 0);
			running_keys(&b, got, sizeof(got));
			assert_string_equal(got, want);
		}
		bed_release(&b);
	}
	printf("# %ld allocations in the cycle; failing each: %ld cycles returned -KERF_ENOMEM, the rest lost nothing\n",
	       needed, failed);
	assert_true(failed > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_allocation_fails_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
