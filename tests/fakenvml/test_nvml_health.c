/*
 * What NVML health events mean (src/nvml/health.h), by the fault tests of
 * reliability.md §7 at the level of the decision: N-02 (Xid 48, 95, DBE:
 * unhealthy, drained, untrusted), N-03 (the application Xids: never out
 * of service, counted), N-04 (Xid 79 or GPU_IS_LOST: cordon and
 * remediation), N-05 (a failed wait: every GPU Unknown), N-06 (an event
 * naming a MIG instance: only that instance).  Then events read from the
 * fake libnvidia-ml through kerf's NVML ops table and decided.
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

#include "nvml/health.h"
#include "nvml/nvml_load.h"

#define NONE 0xFFFFFFFFu

static struct kerf_health_verdict xid(unsigned long long code, unsigned gi,
				      unsigned ci)
{
	nvmlEventData_t ev = { .eventType = nvmlEventTypeXidCriticalError,
			       .eventData = code, .gpuInstanceId = gi,
			       .computeInstanceId = ci };
	struct kerf_health_verdict v;

	kerf_health_decide(NVML_SUCCESS, &ev, &v);
	return v;
}

static void test_n02_critical(void **state)
{
	static const unsigned long long codes[] = { 48, 95 };
	nvmlEventData_t dbe = { .eventType = nvmlEventTypeDoubleBitEccError,
				.gpuInstanceId = NONE, .computeInstanceId = NONE };
	struct kerf_health_verdict v;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		v = xid(codes[i], NONE, NONE);
		assert_int_equal(v.actions, KERF_HEALTH_GPU_UNHEALTHY | KERF_HEALTH_DRAIN |
						    KERF_HEALTH_UNTRUSTED);
		assert_int_equal(v.cls, KERF_XID_CRITICAL);
	}
	kerf_health_decide(NVML_SUCCESS, &dbe, &v);
	assert_int_equal(v.actions, KERF_HEALTH_GPU_UNHEALTHY | KERF_HEALTH_DRAIN |
					    KERF_HEALTH_UNTRUSTED);
	/* an Xid not in the table fails safe, as the device plugin does */
	v = xid(119, NONE, NONE);
	assert_true(v.actions & KERF_HEALTH_GPU_UNHEALTHY);
	assert_int_equal(v.cls, KERF_XID_UNKNOWN);
}

static void test_n03_application(void **state)
{
	static const unsigned long long codes[] = { 13, 31, 43, 45, 68, 109 };
	nvmlEventData_t sbe = { .eventType = nvmlEventTypeSingleBitEccError,
				.gpuInstanceId = NONE, .computeInstanceId = NONE };
	struct kerf_health_verdict v;

	(void)state;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		v = xid(codes[i], NONE, NONE);
		/* 0 false positives: counted, never out of service */
		assert_int_equal(v.actions, KERF_HEALTH_COUNT_POD);
		assert_int_equal(v.cls, KERF_XID_APPLICATION);
	}
	kerf_health_decide(NVML_SUCCESS, &sbe, &v);
	assert_int_equal(v.actions, KERF_HEALTH_COUNT_POD);
	/* 94 (contained): the affected pod only */
	v = xid(94, NONE, NONE);
	assert_int_equal(v.actions, KERF_HEALTH_KILL_POD | KERF_HEALTH_COUNT_POD);
	/* 63, 64: out of allocation until a reset */
	v = xid(63, NONE, NONE);
	assert_int_equal(v.actions, KERF_HEALTH_GPU_UNHEALTHY | KERF_HEALTH_REMEDIATE);
}

static void test_n04_lost(void **state)
{
	struct kerf_health_verdict v = xid(79, NONE, NONE);
	unsigned node = KERF_HEALTH_GPU_UNHEALTHY | KERF_HEALTH_CORDON_NODE |
			KERF_HEALTH_REMEDIATE;

	(void)state;
	assert_int_equal(v.actions, node);
	kerf_health_decide(NVML_ERROR_GPU_IS_LOST, NULL, &v);
	assert_int_equal(v.actions, node);
	/* a GPU off the bus is the node's, whatever instance the event names */
	v = xid(79, 1, 0);
	assert_int_equal(v.actions, node);
}

static void test_n05_wait_error(void **state)
{
	struct kerf_health_verdict v;

	(void)state;
	kerf_health_decide(NVML_ERROR_UNKNOWN, NULL, &v);
	assert_int_equal(v.actions, KERF_HEALTH_ALL_UNKNOWN);
	assert_non_null(strstr(v.reason, "every GPU Unknown"));
	kerf_health_decide(NVML_ERROR_TIMEOUT, NULL, &v);
	assert_int_equal(v.actions, 0);   /* a timeout is no news */
}

static void test_n06_mig_instance(void **state)
{
	struct kerf_health_verdict v = xid(48, 3, 0);

	(void)state;
	assert_int_equal(v.actions, KERF_HEALTH_INSTANCE_UNHEALTHY | KERF_HEALTH_DRAIN |
					    KERF_HEALTH_UNTRUSTED);
	assert_int_equal(v.gi, 3);
	assert_int_equal(v.ci, 0);
	/* no instance named (0xFFFFFFFF): the whole GPU */
	v = xid(48, 3, NONE);
	assert_true(v.actions & KERF_HEALTH_GPU_UNHEALTHY);
	assert_false(v.actions & KERF_HEALTH_INSTANCE_UNHEALTHY);
}

/* Events of the fake's script, waited for through the ops table. */
static void test_events_from_fake(void **state)
{
	const char *lib = getenv("KERF_TEST_FAKE_NVML");
	const char *dir = getenv("KERF_TEST_FAKE_NVML_SCRIPTS");
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };
	nvmlDevice_t dev[2];
	nvmlEventSet_t set;
	nvmlEventData_t ev;
	struct kerf_health_verdict v[4];
	char path[1024];

	(void)state;
	assert_non_null(lib);
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/health.json", dir);
	setenv("KERF_FAKE_NVML_SCRIPT", path, 1);
	if (kerf_nvml_open(&nv, lib, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(nv.event_set_create(&set), NVML_SUCCESS);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(nv.handle_by_index_v2(i, &dev[i]), NVML_SUCCESS);
		assert_int_equal(nv.register_events(dev[i], nvmlEventTypeXidCriticalError |
						    nvmlEventTypeDoubleBitEccError, set),
				 NVML_SUCCESS);
	}
	for (int i = 0; i < 4; i++) {
		nvmlReturn_t rc = nv.event_set_wait_v2(set, &ev, 10);

		kerf_health_decide(rc, rc == NVML_SUCCESS ? &ev : NULL, &v[i]);
		if (i < 3)
			assert_true(ev.device == dev[i == 1 ? 0 : 1]);
	}
	assert_int_equal(v[0].actions, KERF_HEALTH_COUNT_POD);             /* Xid 13 */
	assert_true(v[1].actions & KERF_HEALTH_GPU_UNHEALTHY);              /* Xid 48 */
	assert_true(v[2].actions & KERF_HEALTH_INSTANCE_UNHEALTHY);         /* Xid 95, GI 3 */
	assert_int_equal(v[2].gi, 3);
	assert_int_equal(v[3].actions, 0);                                   /* queue empty */
	assert_int_equal(nv.event_set_free(set), NVML_SUCCESS);
	kerf_nvml_close(&nv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_n02_critical),
		cmocka_unit_test(test_n03_application),
		cmocka_unit_test(test_n04_lost),
		cmocka_unit_test(test_n05_wait_error),
		cmocka_unit_test(test_n06_mig_instance),
		cmocka_unit_test(test_events_from_fake),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
