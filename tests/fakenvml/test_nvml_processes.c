/*
 * Per-process GPU memory by pod and tenant (nvml/process_map.h) and its
 * metrics (nvml/telemetry.h): the cgroup text of both cgroup versions and
 * both kubelet cgroup drivers, a fake /proc tree in a temporary directory
 * (a process in no pod, a process gone, a file that cannot be read), and
 * the processes of the fake libnvidia-ml (scripts/processes.json),
 * including the 32-byte elements of drivers 535.43 to 535.103.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nvml/process_map.h"
#include "nvml/telemetry.h"

#define UID_A "8f4c2a3e-1b2d-4c5e-9f00-112233445566"   /* team-a/train-0 */
#define UID_B "0a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3"   /* team-b/infer-1 */
#define UID_C "c0ffee00-0000-4000-8000-000000000001"   /* not in the table */
#define UID_D "d00d0000-0000-4000-8000-00000000000d"   /* team-a/train-1 */
#define SYSTEMD(qos, u) "/kubepods.slice/kubepods-" qos ".slice/kubepods-" qos "-pod" u ".slice"

static const char *env(const char *name)
{
	const char *v = getenv(name);

	if (!v)
		fail_msg("%s is not set (run through meson test)", name);
	return v;
}

static int owner_of(const char *text, char uid[KERF_POD_UID_MAX + 1])
{
	struct kerf_err err = { 0 };

	return kerf_cgroup_pod_uid(text, strlen(text), uid, &err);
}

static void test_cgroup_text(void **state)
{
	static const struct {
		const char *text;
		int want;
		const char *uid;
	} cases[] = {
		/* v2, systemd driver, burstable and besteffort */
		{ "0::" SYSTEMD("burstable", "8f4c2a3e_1b2d_4c5e_9f00_112233445566")
		  "/cri-containerd-0123abcd.scope\n", KERF_PROC_POD, UID_A },
		{ "0::" SYSTEMD("besteffort", "8f4c2a3e_1b2d_4c5e_9f00_112233445566")
		  "/crio-0123abcd.scope", KERF_PROC_POD, UID_A },
		/* guaranteed: no QoS level */
		{ "0::/kubepods.slice/kubepods-podd00d0000_0000_4000_8000_00000000000d.slice/x.scope\n",
		  KERF_PROC_POD, UID_D },
		/* v2, cgroupfs driver */
		{ "0::/kubepods/besteffort/pod" UID_B "/0123abcd\n", KERF_PROC_POD, UID_B },
		{ "0::/kubepods/pod" UID_D "/0123abcd\n", KERF_PROC_POD, UID_D },
		/* v1: one line per hierarchy, the pod's on every one */
		{ "12:memory:/kubepods/burstable/pod" UID_B "/abc\n"
		  "11:cpu,cpuacct:/kubepods/burstable/pod" UID_B "/abc\n"
		  "1:name=systemd:/kubepods/burstable/pod" UID_B "/abc\n", KERF_PROC_POD, UID_B },
		/* v1 with systemd, and a hybrid's unified line "0::/" first */
		{ "0::/\n5:devices:" SYSTEMD("burstable", "8f4c2a3e_1b2d_4c5e_9f00_112233445566")
		  "/cri-containerd-1.scope\n", KERF_PROC_POD, UID_A },
		/* seen from the agent's cgroup namespace: relative, anywhere */
		{ "0::/../../kubepods-besteffort-pod8f4c2a3e_1b2d_4c5e_9f00_112233445566.slice/c.scope\n",
		  KERF_PROC_POD, UID_A },
		{ "0::/../../../pod" UID_C "/ffff\n", KERF_PROC_POD, UID_C },
		/* a static pod: a 32-digit hash for a UID */
		{ "0::/kubepods/burstable/pod0123456789abcdef0123456789abcdef/c\n", KERF_PROC_POD,
		  "0123456789abcdef0123456789abcdef" },
		/* no pod */
		{ "0::/system.slice/nvidia-persistenced.service\n", KERF_PROC_HOST, "" },
		{ "0::/\n", KERF_PROC_HOST, "" },
		{ "0::/kubepods.slice/kubepods-burstable.slice\n", KERF_PROC_HOST, "" },
		{ "0::/user.slice/podman-1234.scope\n", KERF_PROC_HOST, "" },
		{ "0::/kubepods/burstable/podNOT-A-UID/c\n", KERF_PROC_HOST, "" },
		{ "0::/kubepods/burstable/pod0a1b2c3d/c\n", KERF_PROC_HOST, "" },  /* too short */
		{ "0::/kubepods/burstable/pod" UID_B "-0000000000/c\n", KERF_PROC_HOST, "" },
		/* not a cgroup file */
		{ "", -KERF_EPARSE, "" },
		{ "\n\n", -KERF_EPARSE, "" },
		{ "hello\n", -KERF_EPARSE, "" },
		{ "0:/kubepods/pod" UID_B "\n", -KERF_EPARSE, "" },
		{ "x::/kubepods/pod" UID_B "\n", -KERF_EPARSE, "" },
		{ "0::kubepods\n", -KERF_EPARSE, "" },
		{ "12:memory:", -KERF_EPARSE, "" },  /* found by fuzz_cgroup */
	};
	char uid[KERF_POD_UID_MAX + 1];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = owner_of(cases[i].text, uid);

		if (got != cases[i].want || strcmp(uid, cases[i].uid))
			fail_msg("case %zu (%s): got %d '%s', want %d '%s'", i, cases[i].text, got,
				 uid, cases[i].want, cases[i].uid);
	}
}

static void test_parse_message(void **state)
{
	struct kerf_err err = { 0 };
	char uid[KERF_POD_UID_MAX + 1];

	(void)state;
	assert_int_equal(kerf_cgroup_pod_uid("0::/\nnonsense\n", 15, uid, &err), -KERF_EPARSE);
	assert_string_equal(err.msg, "cgroup line 2: 'nonsense' is not ID:CONTROLLERS:/PATH");
}

/* --- a fake /proc ----------------------------------------------------- */

static char proc_root[256];

static void put_cgroup(unsigned pid, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u", proc_root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%u/cgroup", proc_root, pid);
	if (!text) {                     /* a cgroup that cannot be read */
		assert_int_equal(mkdir(path, 0755), 0);
		return;
	}
	f = fopen(path, "w");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static int make_proc(void **state)
{
	(void)state;
	snprintf(proc_root, sizeof(proc_root), "%s/kerf-proc-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(proc_root))
		return -1;
	/* pod A: v2 systemd, and v1 (hybrid) systemd */
	put_cgroup(101, "0::" SYSTEMD("burstable", "8f4c2a3e_1b2d_4c5e_9f00_112233445566")
		   "/cri-containerd-aaaa.scope\n");
	put_cgroup(102, "12:memory:" SYSTEMD("burstable", "8f4c2a3e_1b2d_4c5e_9f00_112233445566")
		   "/cri-containerd-bbbb.scope\n1:name=systemd:"
		   SYSTEMD("burstable", "8f4c2a3e_1b2d_4c5e_9f00_112233445566")
		   "/cri-containerd-bbbb.scope\n0::/\n");
	/* pod B: v1 cgroupfs, and v2 cgroupfs */
	put_cgroup(103, "5:memory:/kubepods/besteffort/pod" UID_B "/1234abcd\n"
		   "4:devices:/kubepods/besteffort/pod" UID_B "/1234abcd\n");
	put_cgroup(202, "0::/kubepods/besteffort/pod" UID_B "/eeee\n");
	/* a host daemon; 105 is gone (no directory) */
	put_cgroup(104, "0::/system.slice/nvidia-persistenced.service\n");
	put_cgroup(106, "0::" SYSTEMD("burstable", "8f4c2a3e_1b2d_4c5e_9f00_112233445566") "/x.scope\n");
	/* pod D, guaranteed; pod C, relative to the agent's cgroup namespace */
	put_cgroup(107, "0::/kubepods.slice/kubepods-podd00d0000_0000_4000_8000_00000000000d.slice/c.scope\n");
	put_cgroup(201, "0::/../../../pod" UID_C "/ffff\n");
	/* unreadable: a directory where the file should be */
	put_cgroup(300, NULL);
	return 0;
}

static int remove_proc(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", proc_root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_proc_owner(void **state)
{
	struct kerf_err err = { 0 };
	char uid[KERF_POD_UID_MAX + 1];

	(void)state;
	assert_int_equal(kerf_proc_owner_read(proc_root, 101, uid, &err), KERF_PROC_POD);
	assert_string_equal(uid, UID_A);
	assert_int_equal(kerf_proc_owner_read(proc_root, 102, uid, &err), KERF_PROC_POD);
	assert_string_equal(uid, UID_A);
	assert_int_equal(kerf_proc_owner_read(proc_root, 103, uid, &err), KERF_PROC_POD);
	assert_string_equal(uid, UID_B);
	assert_int_equal(kerf_proc_owner_read(proc_root, 104, uid, &err), KERF_PROC_HOST);
	assert_string_equal(uid, "");
	assert_int_equal(kerf_proc_owner_read(proc_root, 105, uid, &err), KERF_PROC_GONE);
	assert_int_equal(kerf_proc_owner_read(proc_root, 0, uid, &err), KERF_PROC_HOST);
	assert_string_equal(err.msg, "");
	assert_int_equal(kerf_proc_owner_read(proc_root, 300, uid, &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "/300/cgroup': "));
	assert_non_null(strstr(err.msg, "cannot read '"));
}

/* --- the fake NVML's processes ---------------------------------------- */

static const struct {
	const char *uid, *ns, *name, *tenant;
} pod_table[] = {
	{ UID_A, "team-a", "train-0", "team-a" },
	{ UID_B, "team-b", "infer-1", "team-b" },
	{ UID_D, "team-a", "train-1", "team-a" },
};

static bool lookup(void *ctx, const char *uid, struct kerf_pod_ref *ref)
{
	int *calls = ctx;

	(*calls)++;
	for (size_t i = 0; i < sizeof(pod_table) / sizeof(pod_table[0]); i++)
		if (!strcmp(pod_table[i].uid, uid)) {
			ref->ns = pod_table[i].ns;
			ref->name = pod_table[i].name;
			ref->tenant = pod_table[i].tenant;
			return true;
		}
	return false;
}

static const struct kerf_pod_table_ops table_ops = { .lookup = lookup };

/* Open the fake on script (a path) and read inventory and processes. */
static void read_all(const char *script, bool minimal, struct kerf_gpu_inventory *inv,
		     struct kerf_gpu_processes *p)
{
	struct kerf_nvml nv;
	struct kerf_err err = { 0 };

	setenv("KERF_FAKE_NVML_SCRIPT", script, 1);
	assert_int_equal(kerf_nvml_open(&nv, env(minimal ? "KERF_TEST_FAKE_NVML_MINIMAL"
							 : "KERF_TEST_FAKE_NVML"), &err), 0);
	assert_int_equal(kerf_gpu_inventory_read(inv, &nv, &err), 0);
	assert_int_equal(kerf_gpu_processes_read(p, &nv, inv, proc_root, &err), 0);
	kerf_nvml_close(&nv);
}

static const char *script_path(const char *name)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/%s", env("KERF_TEST_FAKE_NVML_SCRIPTS"), name);
	return path;
}

static const struct kerf_gpu_process *find_pid(const struct kerf_gpu_processes *p, uint32_t pid)
{
	for (size_t i = 0; i < p->nr; i++)
		if (p->procs[i].pid == pid)
			return &p->procs[i];
	fail_msg("no process %u", (unsigned)pid);
	return NULL;
}

static void check_processes(const struct kerf_gpu_processes *p)
{
	const struct kerf_gpu_process *x;

	assert_int_equal(p->nr, 9);
	assert_int_equal(p->errors, 0);
	x = find_pid(p, 101);
	assert_int_equal(x->gpu, 0);
	assert_true(x->has_mem);
	assert_int_equal(x->used_bytes, 1024ull << 20);
	assert_int_equal(x->owner, KERF_PROC_POD);
	assert_string_equal(x->pod_uid, UID_A);
	assert_int_equal(x->gi_id, NVML_INSTANCE_ID_NONE);
	assert_int_equal(find_pid(p, 104)->owner, KERF_PROC_HOST);
	assert_int_equal(find_pid(p, 105)->owner, KERF_PROC_GONE);
	assert_false(find_pid(p, 106)->has_mem);   /* NVML_VALUE_NOT_AVAILABLE */
	x = find_pid(p, 201);
	assert_int_equal(x->gpu, 1);
	assert_int_equal(x->gi_id, 1);
	assert_int_equal(x->ci_id, 0);
	assert_string_equal(x->pod_uid, UID_C);
	assert_int_equal(find_pid(p, 202)->gi_id, 2);
	assert_int_equal(find_pid(p, 202)->used_bytes, 256ull << 20);
}

static void test_fake_processes(void **state)
{
	struct kerf_gpu_inventory inv;
	struct kerf_gpu_processes p;

	(void)state;
	read_all(script_path("processes.json"), false, &inv, &p);
	check_processes(&p);
	kerf_gpu_processes_release(&p);
	kerf_gpu_inventory_release(&inv);
}

/* scripts/processes.json edited by sed_args, as <proc root>/name. */
static const char *script_variant(const char *name, const char *sed_args)
{
	static char path[512];
	char cmd[4096];

	snprintf(path, sizeof(path), "%s/%s", proc_root, name);
	snprintf(cmd, sizeof(cmd), "sed %s '%s' > '%s'", sed_args,
		 script_path("processes.json"), path);
	assert_int_equal(system(cmd), 0);
	return path;
}

/* The same processes from a 535.54.03 driver's 32-byte elements. */
static void test_driver_535(void **state)
{
	struct kerf_gpu_inventory inv;
	struct kerf_gpu_processes p;

	(void)state;
	assert_int_equal(kerf_nvml_process_stride("535.54.03"), 32);
	assert_int_equal(kerf_nvml_process_stride("535.86.05"), 32);
	assert_int_equal(kerf_nvml_process_stride("535.104.05"), 24);
	assert_int_equal(kerf_nvml_process_stride("550.54.15"), 24);
	assert_int_equal(kerf_nvml_process_stride(""), 24);
	assert_int_equal(kerf_nvml_process_stride(NULL), 24);
	read_all(script_variant("535.json", "'s/\"570.86.15\"/\"535.54.03\"/'"), false, &inv, &p);
	assert_string_equal(inv.driver_version, "535.54.03");
	check_processes(&p);
	kerf_gpu_processes_release(&p);
	kerf_gpu_inventory_release(&inv);
}

static void test_metrics(void **state)
{
	struct kerf_gpu_inventory inv;
	struct kerf_gpu_processes p;
	struct kerf_buf b;
	int calls = 0;
	const char *want =
		"# HELP kerf_agent_gpu_process_errors GPUs whose processes NVML refused and processes whose cgroup could not be read, in the last sample.\n"
		"# TYPE kerf_agent_gpu_process_errors gauge\n"
		"kerf_agent_gpu_process_errors 0\n"
		"# HELP kerf_gpu_process_memory_used_bytes GPU memory used by the processes of a pod on a GPU, in bytes (pod empty: processes in no pod).\n"
		"# TYPE kerf_gpu_process_memory_used_bytes gauge\n"
		"kerf_gpu_process_memory_used_bytes{gpu=\"0\",uuid=\"GPU-11111111-2222-3333-4444-555555555555\",pod=\"\",namespace=\"\",tenant=\"\"} 104857600\n"
		"kerf_gpu_process_memory_used_bytes{gpu=\"0\",uuid=\"GPU-11111111-2222-3333-4444-555555555555\",pod=\"infer-1\",namespace=\"team-b\",tenant=\"team-b\"} 2147483648\n"
		"kerf_gpu_process_memory_used_bytes{gpu=\"0\",uuid=\"GPU-11111111-2222-3333-4444-555555555555\",pod=\"train-0\",namespace=\"team-a\",tenant=\"team-a\"} 1610612736\n"
		"kerf_gpu_process_memory_used_bytes{gpu=\"0\",uuid=\"GPU-11111111-2222-3333-4444-555555555555\",pod=\"train-1\",namespace=\"team-a\",tenant=\"team-a\"} 1048576000\n"
		"kerf_gpu_process_memory_used_bytes{gpu=\"1\",uuid=\"GPU-66666666-7777-8888-9999-000000000000\",pod=\"infer-1\",namespace=\"team-b\",tenant=\"team-b\"} 268435456\n"
		"kerf_gpu_process_memory_used_bytes{gpu=\"1\",uuid=\"GPU-66666666-7777-8888-9999-000000000000\",pod=\"" UID_C "\",namespace=\"\",tenant=\"\"} 4294967296\n"
		"# HELP kerf_tenant_gpu_memory_used_bytes GPU memory used by the tenant's pods on this node, in bytes.\n"
		"# TYPE kerf_tenant_gpu_memory_used_bytes gauge\n"
		"kerf_tenant_gpu_memory_used_bytes{tenant=\"team-a\"} 2659188736\n"
		"kerf_tenant_gpu_memory_used_bytes{tenant=\"team-b\"} 2415919104\n";

	(void)state;
	read_all(script_path("processes.json"), false, &inv, &p);
	kerf_buf_init(&b, 1 << 20);
	assert_int_equal(kerf_gpu_process_metrics_text(&inv, &p, &table_ops, &calls, &b), 0);
	assert_string_equal(kerf_buf_str(&b), want);
	assert_int_equal(calls, 5);      /* once per (GPU, pod), never for no pod */
	/* without a table: pods by UID, no tenant */
	kerf_buf_reset(&b);
	assert_int_equal(kerf_gpu_process_metrics_text(&inv, &p, NULL, NULL, &b), 0);
	assert_non_null(strstr(kerf_buf_str(&b), ",pod=\"" UID_A "\",namespace=\"\",tenant=\"\"} 1610612736\n"));
	assert_null(strstr(kerf_buf_str(&b), "kerf_tenant_gpu_memory_used_bytes"));
	kerf_buf_release(&b);
	kerf_gpu_processes_release(&p);
	kerf_gpu_inventory_release(&inv);
}

/* NVML refusing one GPU's list, an unreadable /proc file, an old driver. */
static void test_errors(void **state)
{
	struct kerf_gpu_inventory inv;
	struct kerf_gpu_processes p;

	(void)state;
	read_all(script_variant("fail.json",
		 "-e 's/\"driverVersion\"/\"fail\": [{\"function\": "
		 "\"nvmlDeviceGetComputeRunningProcesses_v3\", \"device\": 1, \"return\": "
		 "\"NO_PERMISSION\"}], \"driverVersion\"/' -e 's/\"pid\": 104,/\"pid\": 300,/'"),
		 false, &inv, &p);
	assert_int_equal(p.errors, 2);   /* GPU 1's list, 300's cgroup */
	assert_int_equal(p.nr, 6);       /* GPU 0's seven but 300 */
	for (size_t i = 0; i < p.nr; i++)
		assert_int_equal(p.procs[i].gpu, 0);
	kerf_gpu_processes_release(&p);
	kerf_gpu_inventory_release(&inv);

	/* a driver without the symbol: the feature is off, nothing is read */
	read_all(script_path("processes.json"), true, &inv, &p);
	assert_false(inv.features & KERF_NVML_F_PROCESSES);
	assert_non_null(strstr(inv.features_off,
			       "processes (nvmlDeviceGetComputeRunningProcesses_v3 missing)"));
	assert_int_equal(p.nr, 0);
	assert_int_equal(p.errors, 0);
	kerf_gpu_processes_release(&p);
	kerf_gpu_inventory_release(&inv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_text),
		cmocka_unit_test(test_parse_message),
		cmocka_unit_test(test_proc_owner),
		cmocka_unit_test(test_fake_processes),
		cmocka_unit_test(test_driver_535),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, make_proc, remove_proc);
}
