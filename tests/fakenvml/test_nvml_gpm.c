/*
 * GPM telemetry (nvml/gpm.h) on the fake libnvidia-ml
 * (scripts/gpm.json: an H100 with every metric, an A100 without GPM, an
 * H100 PCIe whose NVLink metrics NVML refuses, an H100 whose GPM the
 * script turns off): the first sample gives nothing, the second the
 * scripted values in kerf's units, a GPU without GPM or a refused metric
 * is left out (never 0), a failing MetricsGet leaves the GPU out, a call
 * sooner than 100 ms repeats the reading, and a driver without the GPM
 * symbols turns the feature off and says why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <unistd.h>

#include "nvml/gpm.h"

static const char *env(const char *name)
{
	const char *v = getenv(name);

	if (!v)
		fail_msg("%s is not set (run through meson test)", name);
	return v;
}

static const char *script_path(const char *name)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/%s", env("KERF_TEST_FAKE_NVML_SCRIPTS"), name);
	return path;
}

struct fixture {
	struct kerf_nvml nv;
	struct kerf_gpu_inventory inv;
	struct kerf_gpm_sampler *s;
	char log[4096];
	FILE *logf;
};

static void open_fake(struct fixture *f, const char *script, bool minimal)
{
	struct kerf_err err = { 0 };

	memset(f, 0, sizeof(*f));
	setenv("KERF_FAKE_NVML_SCRIPT", script, 1);
	assert_int_equal(kerf_nvml_open(&f->nv, env(minimal ? "KERF_TEST_FAKE_NVML_MINIMAL"
							    : "KERF_TEST_FAKE_NVML"), &err), 0);
	assert_int_equal(kerf_gpu_inventory_read(&f->inv, &f->nv, &err), 0);
	f->logf = fmemopen(f->log, sizeof(f->log), "w");
	assert_non_null(f->logf);
	setvbuf(f->logf, NULL, _IONBF, 0);
}

static void close_fake(struct fixture *f)
{
	kerf_gpm_sampler_free(f->s);
	fclose(f->logf);
	kerf_gpu_inventory_release(&f->inv);
	kerf_nvml_close(&f->nv);
}

static void test_two_samples(void **state)
{
	struct fixture f;
	struct kerf_gpm_reading r[4];
	struct kerf_err err = { 0 };

	(void)state;
	open_fake(&f, script_path("gpm.json"), false);
	assert_true(kerf_nvml_has(&f.nv, KERF_NVML_F_GPM));
	assert_int_equal(f.inv.nr_gpus, 4);
	assert_int_equal(kerf_gpm_sampler_new(&f.s, &f.nv, f.logf, &err), 0);

	/* the first call: support known, no metric yet */
	assert_int_equal(kerf_gpm_sample(f.s, &f.inv, 1000, r), 2);
	assert_int_equal(r[0].support, KERF_GPM_SUPPORTED);
	assert_false(r[0].valid);
	assert_int_equal(r[1].support, KERF_GPM_UNSUPPORTED);
	assert_int_equal(r[2].support, KERF_GPM_SUPPORTED);
	assert_int_equal(r[3].support, KERF_GPM_UNSUPPORTED);
	/* said once per GPU without GPM */
	assert_non_null(strstr(f.log, "GPU 1 (GPU-91111111-0000-0000-0000-000000000000, "
				      "NVIDIA A100-SXM4-40GB): no GPM"));
	assert_non_null(strstr(f.log, "GPU 3 (GPU-93333333"));
	size_t said = strlen(f.log);

	/* the second: the scripted values, in kerf's units */
	assert_int_equal(kerf_gpm_sample(f.s, &f.inv, 2000, r), 2);
	assert_true(r[0].valid);
	assert_int_equal(r[0].nvml_rc, 0);
	for (int m = 0; m < KERF_GPM_NR_METRICS; m++)
		assert_int_equal(r[0].v[m].nvml_rc, NVML_SUCCESS);
	assert_true(r[0].v[KERF_GPM_SM_OCCUPANCY].value == 0.375);
	assert_true(r[0].v[KERF_GPM_SM_ACTIVE].value == 0.6);
	assert_true(r[0].v[KERF_GPM_NVLINK_TX].value == 1e9);
	assert_true(r[0].v[KERF_GPM_NVLINK_RX].value == 2e9);
	/* no GPM: nothing, and no second word about it */
	assert_false(r[1].valid);
	assert_false(r[3].valid);
	assert_int_equal(strlen(f.log), said);
	/* a metric NVML refuses carries its own return */
	assert_true(r[2].valid);
	assert_int_equal(r[2].v[KERF_GPM_SM_OCCUPANCY].nvml_rc, NVML_SUCCESS);
	assert_true(r[2].v[KERF_GPM_SM_ACTIVE].value == 0.25);
	assert_int_equal(r[2].v[KERF_GPM_NVLINK_TX].nvml_rc, NVML_ERROR_NOT_SUPPORTED);
	assert_int_equal(r[2].v[KERF_GPM_NVLINK_RX].nvml_rc, NVML_ERROR_NOT_SUPPORTED);

	/* sooner than 100 ms: the reading before, no new sample */
	memset(r, 0, sizeof(r));
	assert_int_equal(kerf_gpm_sample(f.s, &f.inv, 2050, r), 2);
	assert_true(r[0].valid);
	assert_true(r[0].v[KERF_GPM_SM_OCCUPANCY].value == 0.375);

	/* the text: DCGM names, ratios and bytes/s, refused and unsupported left out */
	struct kerf_buf b;
	const char *l0 = "{gpu=\"0\",uuid=\"GPU-90000000-0000-0000-0000-000000000000\","
			 "model_name=\"NVIDIA H100 80GB HBM3\",hostname=\"node-1\"}";
	char want[512];

	kerf_buf_init(&b, 1 << 20);
	assert_int_equal(kerf_gpm_metrics(f.s, &f.inv, 3000, "node-1", &b), 0);
	const char *t = kerf_buf_str(&b);
	snprintf(want, sizeof(want), "DCGM_FI_PROF_SM_OCCUPANCY%s 0.375\n", l0);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "DCGM_FI_PROF_SM_ACTIVE%s 0.6\n", l0);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "DCGM_FI_PROF_NVLINK_TX_BYTES%s 1000000000\n", l0);
	assert_non_null(strstr(t, want));
	snprintf(want, sizeof(want), "DCGM_FI_PROF_NVLINK_RX_BYTES%s 2000000000\n", l0);
	assert_non_null(strstr(t, want));
	assert_non_null(strstr(t, "DCGM_FI_PROF_SM_ACTIVE{gpu=\"2\","));
	assert_null(strstr(t, "DCGM_FI_PROF_NVLINK_TX_BYTES{gpu=\"2\","));
	assert_null(strstr(t, "DCGM_FI_PROF_SM_OCCUPANCY{gpu=\"1\","));
	assert_null(strstr(t, "DCGM_FI_PROF_SM_OCCUPANCY{gpu=\"3\","));
	assert_non_null(strstr(t, "kerf_agent_gpm_supported{gpu=\"1\","));
	assert_non_null(strstr(t, "hostname=\"node-1\"} 0\n"));
	snprintf(want, sizeof(want), "kerf_agent_gpm_supported%s 1\n", l0);
	assert_non_null(strstr(t, want));
	/* one HELP per series */
	const char *first = strstr(t, "# HELP DCGM_FI_PROF_SM_ACTIVE");
	assert_non_null(first);
	assert_null(strstr(first + 1, "# HELP DCGM_FI_PROF_SM_ACTIVE"));
	kerf_buf_release(&b);
	close_fake(&f);
}

/* A script written to a temporary file. */
static void write_script(char *path, size_t size, const char *text)
{
	FILE *fp;
	int fd;

	snprintf(path, size, "%s/kerf-gpm-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_failures(void **state)
{
	struct fixture f;
	struct kerf_gpm_reading r[2];
	struct kerf_err err = { 0 };
	char path[512];
	struct kerf_buf b;

	(void)state;
	write_script(path, sizeof(path),
		"{\"fail\": [{\"function\": \"nvmlGpmMetricsGet\", \"device\": 0, \"return\": \"UNKNOWN\"},"
		" {\"function\": \"nvmlGpmSampleGet\", \"device\": 1, \"return\": \"GPU_IS_LOST\"}],"
		" \"devices\": ["
		"{\"uuid\": \"GPU-a\", \"name\": \"H100\", \"pciBusId\": \"00000000:18:00.0\", \"memoryMiB\": 1,"
		" \"gpm\": {\"supported\": true, \"smOccupancyPct\": 10, \"smActivePct\": 20}},"
		"{\"uuid\": \"GPU-b\", \"name\": \"H100\", \"pciBusId\": \"00000000:2A:00.0\", \"memoryMiB\": 1,"
		" \"gpm\": {\"supported\": true, \"smOccupancyPct\": 10}}]}");
	open_fake(&f, path, false);
	assert_int_equal(kerf_gpm_sampler_new(&f.s, &f.nv, NULL, &err), 0);
	assert_int_equal(kerf_gpm_sample(f.s, &f.inv, 0, r), 1);
	assert_int_equal(kerf_gpm_sample(f.s, &f.inv, 1000, r), 1);
	/* MetricsGet failed: every metric carries its code, none is reported */
	assert_false(r[0].valid);
	assert_int_equal(r[0].nvml_rc, NVML_ERROR_UNKNOWN);
	assert_int_equal(r[0].v[KERF_GPM_SM_OCCUPANCY].nvml_rc, NVML_ERROR_UNKNOWN);
	/* SampleGet failed: no metric, the code kept */
	assert_false(r[1].valid);
	assert_int_equal(r[1].nvml_rc, NVML_ERROR_GPU_IS_LOST);
	kerf_buf_init(&b, 1 << 20);
	assert_int_equal(kerf_gpm_metrics(f.s, &f.inv, 2000, "n", &b), 0);
	assert_null(strstr(kerf_buf_str(&b), "DCGM_FI_PROF"));
	assert_non_null(strstr(kerf_buf_str(&b), "kerf_agent_gpm_supported{gpu=\"0\""));
	kerf_buf_release(&b);
	close_fake(&f);
	unlink(path);
}

/* A driver without the GPM symbols: the feature is off, with the reason. */
static void test_minimal(void **state)
{
	struct fixture f;
	struct kerf_err err = { 0 };

	(void)state;
	open_fake(&f, script_path("gpm.json"), true);
	assert_false(kerf_nvml_has(&f.nv, KERF_NVML_F_GPM));
	assert_null(f.nv.gpm_metrics_get);
	assert_non_null(strstr(f.nv.off, "gpm (nvmlGpmQueryDeviceSupport missing)"));
	assert_false(f.inv.features & KERF_NVML_F_GPM);
	assert_int_equal(kerf_gpm_sampler_new(&f.s, &f.nv, f.logf, &err), -KERF_EINVAL);
	assert_null(f.s);
	assert_non_null(strstr(err.msg, "GPM is off: "));
	assert_non_null(strstr(err.msg, "gpm (nvmlGpmQueryDeviceSupport missing)"));
	close_fake(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_samples),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_minimal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
