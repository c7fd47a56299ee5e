/*
 * NVML loading and the GPU inventory, against the fake libnvidia-ml
 * (fake_nvml.c) scripted by the JSON files in scripts/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nvml/inventory.h"

static const char *env(const char *name)
{
	const char *v = getenv(name);
	if (!v)
		fail_msg("%s is not set (run through meson test)", name);
	return v;
}

/* Open the fake (or its minimal build) on scripts/<script>. */
static int open_fake(struct kerf_nvml *nv, const char *script, bool minimal,
		     struct kerf_err *err)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", env("KERF_TEST_FAKE_NVML_SCRIPTS"), script);
	setenv("KERF_FAKE_NVML_SCRIPT", path, 1);
	return kerf_nvml_open(nv, env(minimal ? "KERF_TEST_FAKE_NVML_MINIMAL" : "KERF_TEST_FAKE_NVML"),
			      err);
}

static void read_script(struct kerf_gpu_inventory *inv, const char *script, bool minimal)
{
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };

	assert_int_equal(open_fake(&nv, script, minimal, &err), 0);
	assert_int_equal(kerf_gpu_inventory_read(inv, &nv, &err), 0);
	kerf_nvml_close(&nv);
}

static bool has_error(const struct kerf_gpu *g, const char *field, int rc)
{
	for (unsigned i = 0; i < g->nr_errors; i++)
		if (!strcmp(g->errors[i].field, field) && g->errors[i].nvml_rc == rc)
			return true;
	return false;
}

static void test_two_gpus(void **state)
{
	(void)state;
	struct kerf_gpu_inventory inv;

	read_script(&inv, "two_gpu.json", false);
	assert_int_equal(inv.state, KERF_GPU_INVENTORY_READ);
	assert_string_equal(inv.driver_version, "550.54.15");
	assert_int_equal(inv.features, KERF_NVML_F_ALL);
	assert_string_equal(inv.features_off, "");
	assert_int_equal(inv.nr_gpus, 2);
	const struct kerf_gpu *g = &inv.gpus[0];
	assert_int_equal(g->index, 0);
	assert_string_equal(g->uuid, "GPU-aaaaaaaa-0000-0000-0000-000000000000");
	assert_string_equal(g->name, "NVIDIA H100 PCIe");
	assert_string_equal(g->model, "H100-80GB");  /* by PCI device id */
	assert_string_equal(g->bus_id, "00000000:10:00.0");
	assert_int_equal(g->mem_mib, 81559);
	assert_int_equal(g->numa_node, 0);
	assert_int_equal(g->mig_current, KERF_GPU_MIG_UNSUPPORTED);
	assert_int_equal(g->nr_links, 0);
	assert_int_equal(g->nvlink_domain, -1);
	assert_int_equal(g->nr_errors, 0);
	assert_false(g->lost);
	g = &inv.gpus[1];
	assert_string_equal(g->model, "A100-40GB");  /* by name: no PCI id */
	assert_int_equal(g->numa_node, -1);
	assert_int_equal(g->mig_current, 0);
	assert_int_equal(g->mig_pending, 1);
	assert_int_equal(g->nr_gis, 0);
	assert_int_equal(inv.nr_domains, 0);
	kerf_gpu_inventory_release(&inv);
}

static void test_nvlink_two_cliques(void **state)
{
	(void)state;
	struct kerf_gpu_inventory inv;

	read_script(&inv, "nvlink8.json", false);
	assert_int_equal(inv.nr_gpus, 8);
	assert_int_equal(inv.nr_domains, 2);
	for (unsigned i = 0; i < 8; i++) {
		const struct kerf_gpu *g = &inv.gpus[i];
		assert_int_equal(g->nr_links, 3);
		assert_int_equal(g->nvlink_domain, i < 4 ? 0 : 4);
		for (unsigned k = 0; k < g->nr_links; k++) {
			int peer = g->links[k].remote_gpu;
			assert_true(peer >= 0 && (unsigned)peer != i);
			assert_int_equal(peer < 4, i < 4);
		}
	}
	assert_string_equal(inv.gpus[5].links[0].remote_bus_id, "00000000:50:00.0");
	kerf_gpu_inventory_release(&inv);
}

static void test_nvswitch_one_domain(void **state)
{
	(void)state;
	struct kerf_gpu_inventory inv;

	read_script(&inv, "nvswitch4.json", false);
	assert_int_equal(inv.nr_gpus, 4);
	assert_int_equal(inv.nr_domains, 1);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(inv.gpus[i].nvlink_domain, 0);
		assert_int_equal(inv.gpus[i].links[0].remote_gpu, -1);
	}
	kerf_gpu_inventory_release(&inv);
}

static void test_mig_layout(void **state)
{
	(void)state;
	struct kerf_gpu_inventory inv;

	read_script(&inv, "mig.json", false);
	const struct kerf_gpu *g = &inv.gpus[0];
	assert_int_equal(g->mig_current, 1);
	assert_int_equal(g->nr_errors, 0);
	assert_int_equal(g->nr_gis, 3);
	/* Read in NVML profile index order: 1g (19), 2g (14), 3g (9). */
	assert_int_equal(g->gis[0].profile_id, 19);
	assert_string_equal(g->gis[0].profile, "1g.10gb");
	assert_int_equal(g->gis[0].start, 0);
	assert_int_equal(g->gis[0].size, 1);
	assert_int_equal(g->gis[1].id, 2);
	assert_string_equal(g->gis[1].profile, "2g.20gb");
	assert_int_equal(g->gis[1].start, 2);
	assert_int_equal(g->gis[1].nr_cis, 2);
	assert_int_equal(g->gis[1].cis[1].start, 1);
	assert_int_equal(g->gis[1].cis[1].slices, 1);
	assert_int_equal(g->gis[2].id, 1);
	assert_string_equal(g->gis[2].profile, "3g.40gb");
	assert_int_equal(g->gis[2].slices, 3);
	assert_int_equal(g->gis[2].start, 4);
	assert_int_equal(g->gis[2].size, 4);
	assert_int_equal(g->gis[2].nr_cis, 1);
	assert_int_equal(g->gis[2].cis[0].size, 3);
	assert_int_equal(g->gis[2].cis[0].slices, 3);
	kerf_gpu_inventory_release(&inv);
}

static void test_missing_symbols(void **state)
{
	(void)state;
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };
	struct kerf_gpu_inventory inv;

	assert_int_equal(open_fake(&nv, "nvlink8.json", true, &err), 0);
	assert_false(kerf_nvml_has(&nv, KERF_NVML_F_NVLINK));
	assert_false(kerf_nvml_has(&nv, KERF_NVML_F_NUMA));
	assert_false(kerf_nvml_has(&nv, KERF_NVML_F_EVENTS));
	assert_false(kerf_nvml_has(&nv, KERF_NVML_F_TELEMETRY));
	assert_true(kerf_nvml_has(&nv, KERF_NVML_F_MIG));
	assert_null(nv.nvlink_state);
	assert_null(nv.event_set_wait_v2);
	assert_non_null(strstr(nv.off, "nvlink (nvmlDeviceGetNvLinkState missing)"));
	assert_non_null(strstr(nv.off, "numa (nvmlDeviceGetNumaNodeId missing)"));
	assert_int_equal(kerf_gpu_inventory_read(&inv, &nv, &err), 0);
	kerf_nvml_close(&nv);
	assert_int_equal(inv.nr_gpus, 8);
	assert_int_equal(inv.nr_domains, 0);  /* no links read without the symbols */
	assert_int_equal(inv.gpus[0].nr_links, 0);
	assert_string_equal(inv.gpus[0].model, "H100-80GB");
	kerf_gpu_inventory_release(&inv);
}

static void test_init_fails(void **state)
{
	(void)state;
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };
	struct kerf_gpu_inventory inv = { 0 };

	assert_int_equal(open_fake(&nv, "init_fail.json", false, &err), -KERF_EIO);
	assert_string_equal(err.msg, "nvmlInit_v2 failed: NVML_ERROR_DRIVER_NOT_LOADED (9)");
	assert_null(nv.dl);
	kerf_nvml_close(&nv);  /* harmless */
	kerf_gpu_inventory_unknown(&inv, err.msg);
	assert_int_equal(inv.state, KERF_GPU_INVENTORY_UNKNOWN);
	assert_int_equal(inv.nr_gpus, 0);
	json_t *j = kerf_gpu_inventory_json(&inv);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "state")), "Unknown");
	assert_string_equal(json_string_value(json_object_get(j, "reason")), err.msg);
	assert_int_equal(json_array_size(json_object_get(j, "gpus")), 0);
	json_decref(j);
	kerf_gpu_inventory_release(&inv);
}

static void test_no_library(void **state)
{
	(void)state;
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };

	assert_int_equal(kerf_nvml_open(&nv, "/nonexistent/libnvidia-ml.so.1", &err),
			 -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "cannot load NVML from '/nonexistent/libnvidia-ml.so.1'"));
	/* The path comes from KERF_NVML_LIBRARY when none is given. */
	kerf_err_clear(&err);
	setenv(KERF_NVML_LIBRARY_ENV, "/nonexistent/other.so.1", 1);
	assert_int_equal(kerf_nvml_open(&nv, NULL, &err), -KERF_ENOTFOUND);
	unsetenv(KERF_NVML_LIBRARY_ENV);
	assert_non_null(strstr(err.msg, "'/nonexistent/other.so.1'"));
}

static void test_field_failure_and_lost(void **state)
{
	(void)state;
	struct kerf_gpu_inventory inv;

	read_script(&inv, "field_fail.json", false);
	assert_int_equal(inv.nr_gpus, 4);
	/* GPU 0 reads whole. */
	assert_int_equal(inv.gpus[0].nr_errors, 0);
	assert_string_equal(inv.gpus[0].uuid, "GPU-aaaaaaaa-0000-0000-0000-000000000000");
	/* GPU 1: the UUID failed, the rest was read. */
	const struct kerf_gpu *g = &inv.gpus[1];
	assert_int_equal(g->nr_errors, 1);
	assert_true(has_error(g, "uuid", NVML_ERROR_UNKNOWN));
	assert_string_equal(g->uuid, "");
	assert_string_equal(g->name, "NVIDIA H100 PCIe");
	assert_int_equal(g->mem_mib, 81559);
	assert_string_equal(g->bus_id, "00000000:20:00.0");
	assert_false(g->lost);
	/* GPU 2 fell off the bus after attach; GPU 3 could not be attached. */
	assert_true(inv.gpus[2].lost);
	assert_true(has_error(&inv.gpus[2], "uuid", NVML_ERROR_GPU_IS_LOST));
	assert_int_equal(inv.gpus[2].nr_errors, 1);
	assert_true(inv.gpus[3].lost);
	assert_int_equal(inv.gpus[3].index, 3);
	assert_true(has_error(&inv.gpus[3], "handle", NVML_ERROR_GPU_IS_LOST));

	json_t *j = kerf_gpu_inventory_json(&inv);
	assert_non_null(j);
	json_t *g1 = json_array_get(json_object_get(j, "gpus"), 1);
	json_t *e = json_array_get(json_object_get(g1, "errors"), 0);
	assert_string_equal(json_string_value(json_object_get(e, "field")), "uuid");
	assert_string_equal(json_string_value(json_object_get(e, "nvml")), "NVML_ERROR_UNKNOWN");
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(j, "gpus"), 3),
						 "lost")));
	json_decref(j);
	kerf_gpu_inventory_release(&inv);
}

static void test_json(void **state)
{
	(void)state;
	struct kerf_gpu_inventory inv;

	read_script(&inv, "mig.json", false);
	json_t *j = kerf_gpu_inventory_json(&inv);
	kerf_gpu_inventory_release(&inv);
	assert_non_null(j);
	char *text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(j);
	assert_non_null(text);
	const char *want =
		"{\"driverVersion\":\"550.54.15\",\"features\":[\"driver-version\",\"numa\","
		"\"mig\",\"nvlink\",\"events\",\"telemetry\",\"mig-actuation\",\"processes\",\"gpm\"],\"featuresOff\":\"\",\"gpus\":["
		"{\"errors\":[],\"index\":0,\"lost\":false,\"memoryMiB\":81559,\"mig\":{"
		"\"current\":\"Enabled\",\"gpuInstances\":["
		"{\"computeInstances\":[{\"id\":0,\"profileId\":0,\"size\":1,\"slices\":1,\"start\":0}],"
		"\"id\":3,\"memoryMiB\":9856,\"profile\":\"1g.10gb\",\"profileId\":19,\"size\":1,"
		"\"slices\":1,\"start\":0},"
		"{\"computeInstances\":[{\"id\":0,\"profileId\":0,\"size\":1,\"slices\":1,\"start\":0},"
		"{\"id\":1,\"profileId\":0,\"size\":1,\"slices\":1,\"start\":1}],"
		"\"id\":2,\"memoryMiB\":20096,\"profile\":\"2g.20gb\",\"profileId\":14,\"size\":2,"
		"\"slices\":2,\"start\":2},"
		"{\"computeInstances\":[{\"id\":0,\"profileId\":2,\"size\":3,\"slices\":3,\"start\":0}],"
		"\"id\":1,\"memoryMiB\":40192,\"profile\":\"3g.40gb\",\"profileId\":9,\"size\":4,"
		"\"slices\":3,\"start\":4}],\"pending\":\"Enabled\"},"
		"\"model\":\"H100-80GB\",\"name\":\"NVIDIA H100 80GB HBM3\",\"numaNode\":null,"
		"\"nvlinkDomain\":null,\"nvlinks\":[],\"pciBusId\":\"00000000:10:00.0\","
		"\"pciDeviceId\":\"0x233010DE\",\"uuid\":\"GPU-dddddddd-0000-0000-0000-000000000000\"}],"
		"\"nvlinkDomains\":0,\"state\":\"Read\"}";
	assert_string_equal(text, want);
	free(text);
}

/* The fake's event queue and its buffer rules, through the ops table. */
static void test_fake_events_and_sizes(void **state)
{
	(void)state;
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };
	nvmlDevice_t dev;
	nvmlEventSet_t set;
	nvmlEventData_t ev;
	char small[8];

	assert_int_equal(open_fake(&nv, "mig.json", false, &err), 0);
	assert_int_equal(nv.handle_by_index_v2(0, &dev), NVML_SUCCESS);
	assert_int_equal(nv.handle_by_index_v2(1, &dev), NVML_ERROR_INVALID_ARGUMENT);
	assert_int_equal(nv.device_uuid(dev, small, sizeof(small)), NVML_ERROR_INSUFFICIENT_SIZE);
	/* Two compute instances of profile 0 in GI 2 (2g): a 1-slot buffer is short. */
	nvmlGpuInstance_t gis[3];
	nvmlComputeInstance_t cis[2];
	unsigned count = 3;
	assert_int_equal(nv.gpu_instances(dev, 14, gis, &count), NVML_SUCCESS);
	assert_int_equal(count, 1);
	count = 1;
	assert_int_equal(nv.compute_instances(gis[0], 0, cis, &count), NVML_ERROR_INSUFFICIENT_SIZE);
	count = 2;
	assert_int_equal(nv.compute_instances(gis[0], 0, cis, &count), NVML_SUCCESS);
	assert_int_equal(count, 2);
	assert_int_equal(nv.event_set_create(&set), NVML_SUCCESS);
	assert_int_equal(nv.register_events(dev, nvmlEventTypeXidCriticalError, set), NVML_SUCCESS);
	assert_int_equal(nv.event_set_wait_v2(set, &ev, 10), NVML_SUCCESS);
	assert_true(ev.device == dev);
	assert_int_equal(ev.eventType, nvmlEventTypeXidCriticalError);
	assert_int_equal(ev.eventData, 79);
	assert_int_equal(ev.gpuInstanceId, 1);
	assert_int_equal(ev.computeInstanceId, 0);
	assert_int_equal(nv.event_set_wait_v2(set, &ev, 10), NVML_SUCCESS);
	assert_int_equal(ev.eventType, nvmlEventTypeDoubleBitEccError);
	assert_int_equal(ev.gpuInstanceId, NVML_INSTANCE_ID_NONE);
	assert_int_equal(nv.event_set_wait_v2(set, &ev, 10), NVML_ERROR_TIMEOUT);
	assert_int_equal(nv.event_set_free(set), NVML_SUCCESS);
	kerf_nvml_close(&nv);
}

static void test_return_names(void **state)
{
	(void)state;
	assert_string_equal(kerf_nvml_return_name(15), "NVML_ERROR_GPU_IS_LOST");
	assert_string_equal(kerf_nvml_return_name(12345), "NVML_ERROR_12345");
	assert_int_equal(kerf_nvml_return_parse("GPU_IS_LOST"), 15);
	assert_int_equal(kerf_nvml_return_parse("NVML_ERROR_UNKNOWN"), 999);
	assert_int_equal(kerf_nvml_return_parse("NO_SUCH"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_gpus),
		cmocka_unit_test(test_nvlink_two_cliques),
		cmocka_unit_test(test_nvswitch_one_domain),
		cmocka_unit_test(test_mig_layout),
		cmocka_unit_test(test_missing_symbols),
		cmocka_unit_test(test_init_fails),
		cmocka_unit_test(test_no_library),
		cmocka_unit_test(test_field_failure_and_lost),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_fake_events_and_sizes),
		cmocka_unit_test(test_return_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
