/*
 * test_entitlement: weighted max-min shares given demand.  Contenders split
 * by weight, a tenant that wants less than its part gets what it wants and
 * the rest goes to the others, parts nest down the tree, no demand means
 * nothing owed, and the parts always add up exactly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/entitlement.h"

struct tree {
	struct kerf_tenants tt;
	int org_a, org_b, a1, a2, b1;
	int64_t demand[8], owed[8], scratch[8];
};

/* cluster -> org-a (w 1) -> a1 (w 2), a2 (w 1); org-b (w 1) -> b1 */
static void build(struct tree *x)
{
	memset(x, 0, sizeof(*x));
	assert_int_equal(kerf_tenants_init(&x->tt, KERF_RES_GPU0 + 1), 0);
	x->org_a = kerf_tenants_add(&x->tt, "org-a", KERF_TENANT_ROOT, NULL, 1, NULL);
	x->a1 = kerf_tenants_add(&x->tt, "a1", x->org_a, NULL, 2, NULL);
	x->a2 = kerf_tenants_add(&x->tt, "a2", x->org_a, NULL, 1, NULL);
	x->org_b = kerf_tenants_add(&x->tt, "org-b", KERF_TENANT_ROOT, NULL, 1, NULL);
	x->b1 = kerf_tenants_add(&x->tt, "b1", x->org_b, NULL, 1, NULL);
	assert_int_equal(x->b1, 5);
}

static void run(struct tree *x, int64_t capacity)
{
	kerf_entitlement(&x->tt, capacity, x->demand, x->owed, x->scratch);
}

static void test_contention_splits_by_weight(void **state)
{
	struct tree x;

	(void)state;
	build(&x);
	x.demand[x.a1] = x.demand[x.a2] = x.demand[x.b1] = 100000;
	run(&x, 60000);
	assert_int_equal(x.owed[KERF_TENANT_ROOT], 60000);
	assert_int_equal(x.owed[x.org_a], 30000);
	assert_int_equal(x.owed[x.org_b], 30000);
	assert_int_equal(x.owed[x.a1], 20000);
	assert_int_equal(x.owed[x.a2], 10000);
	assert_int_equal(x.owed[x.b1], 30000);
	kerf_tenants_release(&x.tt);
}

static void test_small_demand_gives_the_rest_away(void **state)
{
	struct tree x;

	(void)state;
	build(&x);
	x.demand[x.a1] = 100000;
	x.demand[x.a2] = 4000;           /* less than its 10000 */
	x.demand[x.b1] = 5000;           /* less than its 30000 */
	run(&x, 60000);
	assert_int_equal(x.owed[x.b1], 5000);
	assert_int_equal(x.owed[x.org_a], 55000);
	assert_int_equal(x.owed[x.a2], 4000);
	assert_int_equal(x.owed[x.a1], 51000);
	kerf_tenants_release(&x.tt);
}

static void test_no_demand_owed_nothing(void **state)
{
	struct tree x;

	(void)state;
	build(&x);
	x.demand[x.a2] = 100000;
	run(&x, 60000);
	assert_int_equal(x.owed[x.org_b], 0);
	assert_int_equal(x.owed[x.b1], 0);
	assert_int_equal(x.owed[x.a1], 0);
	assert_int_equal(x.owed[x.a2], 60000);
	/* room for everyone: each is owed its demand */
	memset(x.demand, 0, sizeof(x.demand));
	x.demand[x.a1] = 7;
	x.demand[x.b1] = 9;
	run(&x, 60000);
	assert_int_equal(x.owed[KERF_TENANT_ROOT], 16);
	assert_int_equal(x.owed[x.a1], 7);
	assert_int_equal(x.owed[x.b1], 9);
	kerf_tenants_release(&x.tt);
}

static void test_parts_add_up_exactly(void **state)
{
	struct tree x;

	(void)state;
	build(&x);
	x.demand[x.a1] = x.demand[x.a2] = x.demand[x.b1] = 1000000;
	run(&x, 1001);                   /* odd: remainders to distribute */
	assert_int_equal(x.owed[x.org_a] + x.owed[x.org_b], 1001);
	assert_int_equal(x.owed[x.a1] + x.owed[x.a2], x.owed[x.org_a]);
	assert_true(x.owed[x.a1] >= 2 * x.owed[x.a2] - 1 &&
		    x.owed[x.a1] <= 2 * x.owed[x.a2] + 2);
	kerf_tenants_release(&x.tt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contention_splits_by_weight),
		cmocka_unit_test(test_small_demand_gives_the_rest_away),
		cmocka_unit_test(test_no_demand_owed_nothing),
		cmocka_unit_test(test_parts_add_up_exactly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
