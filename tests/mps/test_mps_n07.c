/*
 * mps_n07: reliability N-07 with real processes.  The MPS control daemon
 * is tests/mps/fake_mps_control.c (argv[1]) run through the real ops
 * (mps_exec.c); the test kills it with SIGKILL and checks, polling as the
 * agent does (once a second):
 *  - the death is detected within 5 s (the time is measured and printed);
 *  - its GPU is in kerf_mps_failed_gpus() and on_change said Failed;
 *  - the device plugin's answer refuses a new MPS allocation on that GPU
 *    meanwhile, and gives one on another GPU;
 *  - the daemon is restarted (a new process) with the SAME limits: the
 *    fake's log holds the second start with the same GPU, and the same
 *    commands in the same order;
 *  - after that the allocation is answered again.
 * Also: the bring-up itself (directories, environment, commands), stop
 * (quit ends the process), the daemon run as the tenant's UID and GID
 * (as root only), and a program that cannot be run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "deviceplugin/answer.h"
#include "mps/mps.h"

static const char *fake_path;
static char root[64];

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

struct world {
	struct kerf_mps_exec exec;
	struct kerf_mps *m;
	int64_t failed_at_ms;     /* when on_change said Failed */
	int64_t running_at_ms;    /* when it said Running again */
	int nr_changes;
};

static void on_change(void *arg, const struct kerf_mps_view *v)
{
	struct world *w = arg;
	w->nr_changes++;
	if (v->state == KERF_MPS_FAILED && !w->failed_at_ms)
		w->failed_at_ms = now_ms();
	if (v->state == KERF_MPS_RUNNING)
		w->running_at_ms = now_ms();
}

/* What the agent gives the device plugin: the manager's view. */
static int lookup(void *arg, uint32_t gpu_index, uint32_t uid, struct kerf_dp_mps *out)
{
	struct world *w = arg;
	struct kerf_mps_view v;
	if (kerf_mps_find(w->m, gpu_index, uid, &v) < 0)
		return -KERF_ENOTFOUND;
	out->healthy = v.state == KERF_MPS_RUNNING;
	snprintf(out->pipe_dir, sizeof(out->pipe_dir), "%s", v.pipe_dir);
	out->limits = v.limits;
	snprintf(out->why, sizeof(out->why), "%s", v.why);
	return 0;
}

static int setup(void **state)
{
	static struct world w;
	struct kerf_mps_config cfg = { .root_dir = root, .on_change = on_change,
				       .on_change_arg = &w };
	memset(&w, 0, sizeof(w));
	snprintf(root, sizeof(root), "/tmp/kerf-mps-n07-XXXXXX");
	assert_non_null(mkdtemp(root));
	w.exec.control_path = fake_path;
	w.exec.timeout_ms = 5000;
	kerf_mps_exec_ops(&w.exec, &cfg.ops);
	assert_int_equal(kerf_mps_new(&w.m, &cfg, NULL), 0);
	*state = &w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;
	struct kerf_mps_view v;
	char cmd[128];
	/* no daemon outlives the test */
	for (uint32_t g = 0; g < 4; g++)
		if (kerf_mps_find(w->m, g, (uint32_t)getuid(), &v) == 0 && v.pid > 1)
			kill((pid_t)v.pid, SIGKILL);
	kerf_mps_free(w->m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", root);
	return 0;
}

/* The fake's log of one pipe directory, whole. */
static void read_log(const char *pipe_dir, char *out, size_t size)
{
	char p[512];
	snprintf(p, sizeof(p), "%s/fake.log", pipe_dir);
	FILE *f = fopen(p, "r");
	out[0] = '\0';
	if (!f)
		return;
	size_t n = fread(out, 1, size - 1, f);
	out[n] = '\0';
	fclose(f);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static struct kerf_mps_daemon daemon_of(uint32_t gpu, const char *uuid)
{
	struct kerf_mps_daemon d = { .gpu_index = gpu, .gpu_uuid = uuid,
				     .uid = (uint32_t)getuid(), .gid = (uint32_t)getgid() };
	assert_int_equal(kerf_mps_limits_for_fraction(250, 81559, &d.limits, NULL), 0);
	return d;
}

static const struct kerf_dp_device devs[] = {
	{ .id = "GPU-aaaa::0", .gpu_index = 1, .healthy = 1, .kind = KERF_DP_DEV_SHARE,
	  .gpu_id = "GPU-aaaa", .mem_mib = 81559 },
	{ .id = "GPU-bbbb::0", .gpu_index = 2, .healthy = 1, .kind = KERF_DP_DEV_SHARE,
	  .gpu_id = "GPU-bbbb", .mem_mib = 81559 },
};

static int allocate(struct world *w, const char *id, struct kerf_dp_answer *a,
		    struct kerf_err *err)
{
	struct kerf_dp_pod_assign pods[2];
	char *ids[] = { (char *)id };
	assert_int_equal(kerf_dp_pod_assign_parse(&pods[0], "t/on-1", "1", NULL, "250m", "mps",
						  (uint32_t)getuid(), NULL), 0);
	assert_int_equal(kerf_dp_pod_assign_parse(&pods[1], "t/on-2", "2", NULL, "250m", "mps",
						  (uint32_t)getuid(), NULL), 0);
	return kerf_dp_answer(devs, 2, ids, 1, pods, 2, lookup, w, a, err);
}

static void test_bring_up(void **state)
{
	struct world *w = *state;
	struct kerf_mps_daemon d = daemon_of(1, "GPU-aaaa");
	struct kerf_mps_view v;
	struct kerf_dp_answer a;
	char log[4096], want[512];
	struct stat st;

	assert_int_equal(kerf_mps_start(w->m, &d, now_ms(), NULL), 0);
	assert_int_equal(kerf_mps_find(w->m, 1, d.uid, &v), 0);
	assert_int_equal(v.state, KERF_MPS_RUNNING);
	assert_true(v.pid > 1);
	assert_int_equal(kill((pid_t)v.pid, 0), 0);
	/* the pipe and log directories, the tenant's, 0700 */
	assert_int_equal(stat(v.pipe_dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(st.st_uid, getuid());
	snprintf(want, sizeof(want), "%s/GPU-aaaa/%u/log", root, d.uid);
	assert_int_equal(stat(want, &st), 0);
	read_log(v.pipe_dir, log, sizeof(log));
	snprintf(want, sizeof(want),
		 "start uid=%u gid=%u visible=GPU-aaaa log=%s/GPU-aaaa/%u/log\n"
		 "cmd set_default_device_pinned_mem_limit 0 20389M\n"
		 "cmd set_default_active_thread_percentage 25\n"
		 "cmd get_default_active_thread_percentage\n",
		 d.uid, d.gid, root, d.uid);
	assert_string_equal(log, want);
	/* the plugin's answer through the manager */
	assert_int_equal(allocate(w, "GPU-aaaa::0", &a, NULL), 0);
	assert_string_equal(a.ids[0], "GPU-aaaa");
	assert_string_equal(a.envs[0].value, v.pipe_dir);
	assert_string_equal(a.mount_path, v.pipe_dir);
	/* stop: quit ends the process */
	int64_t pid = v.pid;
	assert_int_equal(kerf_mps_stop(w->m, 1, d.uid, NULL), 0);
	for (int i = 0; i < 100 && kill((pid_t)pid, 0) == 0; i++) {
		struct kerf_mps_ops ops;
		kerf_mps_exec_ops(&w->exec, &ops);
		if (!ops.alive(ops.ctx, pid))
			break;
		sleep_ms(20);
	}
	struct kerf_mps_ops ops;
	kerf_mps_exec_ops(&w->exec, &ops);
	assert_false(ops.alive(ops.ctx, pid));
	read_log(v.pipe_dir, log, sizeof(log));
	assert_non_null(strstr(log, "cmd quit\n"));
}

static void test_n07_kill9(void **state)
{
	struct world *w = *state;
	struct kerf_mps_daemon d1 = daemon_of(1, "GPU-aaaa"), d2 = daemon_of(2, "GPU-bbbb");
	struct kerf_mps_view v;
	struct kerf_dp_answer a;
	struct kerf_err err = { 0 };
	char before[4096], after[4096];

	assert_int_equal(kerf_mps_start(w->m, &d1, now_ms(), NULL), 0);
	assert_int_equal(kerf_mps_start(w->m, &d2, now_ms(), NULL), 0);
	assert_int_equal(kerf_mps_find(w->m, 1, d1.uid, &v), 0);
	int64_t old_pid = v.pid;
	read_log(v.pipe_dir, before, sizeof(before));
	assert_int_equal(allocate(w, "GPU-aaaa::0", &a, NULL), 0);

	/* kill -9, then poll once a second as the agent does */
	assert_int_equal(kill((pid_t)old_pid, SIGKILL), 0);
	int64_t killed_at = now_ms();
	int64_t last_poll = 0;
	while (!(kerf_mps_failed_gpus(w->m) & 0x2) && now_ms() - killed_at < 10000) {
		last_poll = now_ms();
		kerf_mps_poll(w->m, last_poll);
		if (!(kerf_mps_failed_gpus(w->m) & 0x2))
			sleep_ms(1000);
	}
	int64_t detect_ms = now_ms() - killed_at;
	print_message("# N-07: the daemon's death detected %lld ms after kill -9 (limit 5000)\n",
		      (long long)detect_ms);
	assert_true(kerf_mps_failed_gpus(w->m) & 0x2);
	assert_true(detect_ms <= 5000);
	assert_true(w->failed_at_ms > 0 && w->failed_at_ms - killed_at <= 5000);
	/* GPU 2's daemon is untouched */
	assert_int_equal(kerf_mps_failed_gpus(w->m), 0x2);

	/* meanwhile: no new MPS allocation on GPU 1, GPU 2 still fine */
	assert_int_equal(allocate(w, "GPU-aaaa::0", &a, &err), -KERF_EBUSY);
	assert_non_null(strstr(err.msg, "the MPS daemon of GPU 1"));
	assert_non_null(strstr(err.msg, "has failed"));
	assert_non_null(strstr(err.msg, "is gone"));
	print_message("# refused meanwhile: %s\n", err.msg);
	assert_int_equal(allocate(w, "GPU-bbbb::0", &a, NULL), 0);

	/* restarted after the 1 s backoff, polled once a second */
	while (kerf_mps_failed_gpus(w->m) && now_ms() - killed_at < 15000) {
		sleep_ms(1000);
		kerf_mps_poll(w->m, now_ms());
	}
	assert_int_equal(kerf_mps_failed_gpus(w->m), 0);
	assert_int_equal(kerf_mps_find(w->m, 1, d1.uid, &v), 0);
	assert_int_equal(v.state, KERF_MPS_RUNNING);
	assert_int_equal(v.restarts, 1);
	assert_true(v.pid > 1 && v.pid != old_pid);
	assert_int_equal(kill((pid_t)v.pid, 0), 0);
	print_message("# restarted as pid %lld %lld ms after kill -9\n", (long long)v.pid,
		      (long long)(w->running_at_ms - killed_at));
	/* the same limits: the second start got what the first got */
	read_log(v.pipe_dir, after, sizeof(after));
	assert_int_equal(strncmp(after, before, strlen(before)), 0);
	assert_string_equal(after + strlen(before), before);
	assert_int_equal(count(after, "start uid="), 2);
	assert_int_equal(count(after, "cmd set_default_active_thread_percentage 25\n"), 2);
	assert_int_equal(count(after, "cmd set_default_device_pinned_mem_limit 0 20389M\n"), 2);

	/* and MPS allocations on GPU 1 are answered again */
	assert_int_equal(allocate(w, "GPU-aaaa::0", &a, NULL), 0);
	assert_string_equal(a.envs[1].value, "25");
	assert_string_equal(a.envs[2].value, "0=20389M");
}

/* As root (the agent is): the daemon runs as the tenant's UID and GID. */
static void test_tenant_uid(void **state)
{
	struct world *w = *state;
	struct kerf_mps_daemon d = daemon_of(0, "GPU-dddd");
	struct kerf_mps_view v;
	char log[4096];
	struct stat st;

	if (getuid() != 0) {
		print_message("# not root: the switch to the tenant's UID is not tested\n");
		skip();
	}
	d.uid = 65534;
	d.gid = 65533;
	assert_int_equal(chmod(root, 0755), 0);
	/* the tenant must be able to run the program: the build tree may sit
	   in a directory only root can enter, so run a copy from root */
	static char copy[128];
	char cmd[512];
	snprintf(copy, sizeof(copy), "%s/nvidia-cuda-mps-control", root);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod 0755 '%s'", fake_path, copy, copy);
	assert_int_equal(system(cmd), 0);
	w->exec.control_path = copy;
	assert_int_equal(kerf_mps_start(w->m, &d, now_ms(), NULL), 0);
	assert_int_equal(kerf_mps_find(w->m, 0, 65534, &v), 0);
	assert_int_equal(stat(v.pipe_dir, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(st.st_gid, 65533);
	read_log(v.pipe_dir, log, sizeof(log));
	assert_non_null(strstr(log, "start uid=65534 gid=65533 visible=GPU-dddd"));
	assert_non_null(strstr(log, "cmd get_default_active_thread_percentage\n"));
	/* /proc says the daemon is the tenant's */
	char p[64];
	snprintf(p, sizeof(p), "/proc/%lld", (long long)v.pid);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	kill((pid_t)v.pid, SIGKILL);
	w->exec.control_path = fake_path;
}

static void test_cannot_run(void **state)
{
	struct world *w = *state;
	struct kerf_mps_daemon d = daemon_of(3, "GPU-cccc");
	struct kerf_err err = { 0 };

	w->exec.control_path = "/nonexistent/nvidia-cuda-mps-control";
	assert_int_equal(kerf_mps_start(w->m, &d, now_ms(), &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "MPS daemon for GPU 3 (GPU-cccc)"));
	assert_non_null(strstr(err.msg, "cannot run /nonexistent/nvidia-cuda-mps-control"));
	assert_int_equal(kerf_mps_failed_gpus(w->m), 0x8);
	w->exec.control_path = fake_path;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bring_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_n07_kill9, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tenant_uid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cannot_run, setup, teardown),
	};
	if (argc != 2) {
		fprintf(stderr, "usage: test_mps_n07 FAKE-NVIDIA-CUDA-MPS-CONTROL\n");
		return 2;
	}
	fake_path = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
