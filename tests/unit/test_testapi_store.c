/*
 * test_testapi_store: the test API server's store (one rv counter, the
 * event window, lists rebuilt at an older rv) and its continue tokens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "testapi/testapi_int.h"

static json_t *pod(const char *name, const char *phase)
{
	return json_pack("{s{ssss}s{ss}}", "metadata", "name", name,
			 "namespace", "ns", "status", "phase", phase);
}

static void test_rv_and_events(void **state)
{
	struct kerf_testapi_store st;
	struct kerf_ta_res *r;
	struct kerf_ta_obj *o;

	(void)state;
	assert_int_equal(kerf_ta_store_init(&st, 4), 0);
	r = kerf_ta_res_get(&st, "pods");
	assert_non_null(r);
	assert_ptr_equal(kerf_ta_res_get(&st, "pods"), r);
	assert_int_equal(kerf_ta_obj_create(&st, r, pod("a", "Pending"), &o), 0);
	assert_int_equal(st.rv, 2);
	assert_string_equal(kerf_ta_str(o->obj, "metadata.resourceVersion"), "2");
	assert_ptr_equal(kerf_ta_obj_get(r, "ns", "a"), o);
	assert_null(kerf_ta_obj_get(r, NULL, "a"));
	kerf_ta_obj_update(&st, r, o, pod("a", "Running"));
	assert_string_equal(kerf_ta_str(o->obj, "metadata.resourceVersion"), "3");
	assert_int_equal(r->ring_nr, 2);
	assert_int_equal(r->ring[1].type, KERF_TA_MODIFIED);
	assert_string_equal(kerf_ta_str(r->ring[1].prev, "status.phase"),
			    "Pending");
	kerf_ta_obj_delete(&st, r, o);
	assert_null(kerf_ta_obj_get(r, "ns", "a"));
	assert_int_equal(r->ring[2].type, KERF_TA_DELETED);
	assert_int_equal(r->window_rv, 0);
	kerf_ta_store_release(&st);
}

static void test_window_drops_oldest(void **state)
{
	struct kerf_testapi_store st;
	struct kerf_ta_res *r;
	struct kerf_ta_obj *o;
	int i;

	(void)state;
	assert_int_equal(kerf_ta_store_init(&st, 3), 0);
	r = kerf_ta_res_get(&st, "pods");
	assert_int_equal(kerf_ta_obj_create(&st, r, pod("a", "P0"), &o), 0);
	for (i = 0; i < 5; i++)
		kerf_ta_obj_update(&st, r, o, pod("a", "Pn"));
	assert_int_equal(r->ring_nr, 3);
	/* rv 2..7 written; 5, 6, 7 kept, so watches from rv < 4 are too old */
	assert_int_equal(r->window_rv, 4);
	kerf_ta_store_release(&st);
}

static void test_snapshot_rewinds(void **state)
{
	struct kerf_testapi_store st;
	struct kerf_ta_res *r;
	struct kerf_ta_obj *a, *b;
	json_t *snap;

	(void)state;
	assert_int_equal(kerf_ta_store_init(&st, 10), 0);
	r = kerf_ta_res_get(&st, "pods");
	assert_int_equal(kerf_ta_obj_create(&st, r, pod("b", "P"), &b), 0);
	assert_int_equal(kerf_ta_obj_create(&st, r, pod("a", "P"), &a), 0);
	kerf_ta_obj_update(&st, r, a, pod("a", "Running"));   /* rv 4 */
	kerf_ta_obj_delete(&st, r, b);                        /* rv 5 */
	snap = kerf_ta_res_snapshot(r, 3);
	assert_int_equal(json_array_size(json_object_get(snap, "keys")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(snap, "keys"), 0)), "ns/a");
	assert_string_equal(kerf_ta_str(json_object_get(json_object_get(snap, "objs"), "ns/a"), "status.phase"), "P");
	json_decref(snap);
	snap = kerf_ta_res_snapshot(r, 5);
	assert_int_equal(json_array_size(json_object_get(snap, "keys")), 1);
	json_decref(snap);
	snap = kerf_ta_res_snapshot(r, 2);
	assert_int_equal(json_array_size(json_object_get(snap, "keys")), 1);
	assert_string_equal(json_string_value(json_array_get(json_object_get(snap, "keys"), 0)), "ns/b");
	json_decref(snap);
	kerf_ta_store_release(&st);
}

static void test_continue_token(void **state)
{
	char tok[512], start[128];
	int64_t rv;

	(void)state;
	assert_int_equal(kerf_ta_token_encode(218, "/p2", tok, sizeof(tok)), 0);
	/* byte for byte what kube-apiserver 1.34 wrote (pods/list-limit2-page1) */
	assert_string_equal(tok, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjE4LCJzdGFydCI6Ii9wMlx1MDAwMCJ9");
	assert_int_equal(kerf_ta_token_decode(tok, &rv, start, sizeof(start)), 0);
	assert_int_equal(rv, 218);
	assert_string_equal(start, "p2");
	assert_int_equal(kerf_ta_token_encode(-1, "p2", tok, sizeof(tok)), 0);
	assert_string_equal(tok, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoicDJcdTAwMDAifQ");
	assert_int_equal(kerf_ta_token_decode(tok, &rv, start, sizeof(start)), 0);
	assert_int_equal(rv, -1);
	assert_int_equal(kerf_ta_token_decode("!!!", &rv, start, sizeof(start)), -1);
	assert_int_equal(kerf_ta_token_decode("e30", &rv, start, sizeof(start)), -1);
}

static void test_microtime(void **state)
{
	char msg[256];

	(void)state;
	assert_int_equal(kerf_ta_microtime_check("2026-12-02T18:32:07.653009Z", msg, sizeof(msg)), 0);
	assert_int_equal(kerf_ta_microtime_check("2026-12-02T18:32:07.653009+01:00", msg, sizeof(msg)), 0);
	assert_int_equal(kerf_ta_microtime_check("2026-12-02T18:32:07Z", msg, sizeof(msg)), -1);
	assert_string_equal(msg, "parsing time \"2026-12-02T18:32:07Z\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"Z\" as \".000000\"");
	assert_int_equal(kerf_ta_microtime_check("2026-12-02T18:00:00.123Z", msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "cannot parse \".123Z\" as \".000000\""));
	assert_int_equal(kerf_ta_microtime_check("yesterday", msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "cannot parse \"yesterday\" as \"2006\""));
	assert_int_equal(kerf_ta_microtime_check("2026-12-02T18:32:07.653009Zx", msg, sizeof(msg)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rv_and_events),
		cmocka_unit_test(test_window_drops_oldest),
		cmocka_unit_test(test_snapshot_rewinds),
		cmocka_unit_test(test_continue_token),
		cmocka_unit_test(test_microtime),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
