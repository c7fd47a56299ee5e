/*
 * mps (mps/mps.h) on the fake ops with a test clock: the bring-up (limits
 * in order, read back), a dead daemon failed at the next poll with its
 * GPU in kerf_mps_failed_gpus and on_change told, the restart with the
 * same limits after the backoff and not before, the backoff doubling on
 * failed restarts, giving up after max_restarts and starting again, a
 * stable daemon's count reset, a half-started daemon killed, limits that
 * differ refused, stop, and bad input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mps/mps.h"

struct fixture {
	struct kerf_mps_fake fake;
	struct kerf_mps *m;
	struct kerf_mps_view seen[32];
	char why[32][KERF_ERR_MSG_MAX];
	size_t nr_seen;
};

static void on_change(void *arg, const struct kerf_mps_view *v)
{
	struct fixture *f = arg;
	if (f->nr_seen < 32) {
		f->seen[f->nr_seen] = *v;
		snprintf(f->why[f->nr_seen], sizeof(f->why[0]), "%s", v->why);
		f->nr_seen++;
	}
}

static int setup(void **state)
{
	static struct fixture f;
	struct kerf_mps_config cfg = {
		.root_dir = "/run/kerf-test/mps",
		.on_change = on_change, .on_change_arg = &f,
		.max_restarts = 3, .stable_ms = 10000,
	};
	memset(&f, 0, sizeof(f));
	kerf_mps_fake_ops(&f.fake, &cfg.ops);
	assert_int_equal(kerf_mps_new(&f.m, &cfg, NULL), 0);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	kerf_mps_free(f->m);
	kerf_mps_fake_release(&f->fake);
	return 0;
}

static const struct kerf_mps_daemon gpu1 = {
	.gpu_index = 1, .gpu_uuid = "GPU-11111111-2222-3333-4444-555555555555",
	.uid = 1000, .gid = 1000, .limits = { .thread_pct = 25, .pinned_mem_mib = 20389 },
};

#define PIPE1 "/run/kerf-test/mps/GPU-11111111-2222-3333-4444-555555555555/1000/pipe"

static void assert_bring_up(const struct fixture *f, size_t from)
{
	assert_true(f->fake.nr_cmds >= from + 3);
	assert_string_equal(f->fake.cmds[from], PIPE1 ": set_default_device_pinned_mem_limit 0 20389M");
	assert_string_equal(f->fake.cmds[from + 1], PIPE1 ": set_default_active_thread_percentage 25");
	assert_string_equal(f->fake.cmds[from + 2], PIPE1 ": get_default_active_thread_percentage");
}

static void test_start(void **state)
{
	struct fixture *f = *state;
	struct kerf_mps_view v;

	assert_int_equal(kerf_mps_start(f->m, &gpu1, 0, NULL), 0);
	assert_int_equal(f->fake.nr_started, 1);
	assert_int_equal(f->fake.nr_cmds, 3);
	assert_bring_up(f, 0);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.state, KERF_MPS_RUNNING);
	assert_int_equal(v.pid, 1000);
	assert_string_equal(v.pipe_dir, PIPE1);
	assert_string_equal(v.why, "");
	assert_int_equal(kerf_mps_failed_gpus(f->m), 0);
	assert_int_equal(kerf_mps_find(f->m, 1, 1001, &v), -KERF_ENOTFOUND);
	assert_int_equal(kerf_mps_find(f->m, 0, 1000, &v), -KERF_ENOTFOUND);
	/* the same again: nothing happens */
	assert_int_equal(kerf_mps_start(f->m, &gpu1, 5, NULL), 0);
	assert_int_equal(f->fake.nr_started, 1);
	/* a poll of a live daemon changes nothing */
	assert_int_equal(kerf_mps_poll(f->m, 100), 0);
	assert_int_equal(f->nr_seen, 0);
}

static void test_dead_daemon_restarts_with_same_limits(void **state)
{
	struct fixture *f = *state;
	struct kerf_mps_view v;

	assert_int_equal(kerf_mps_start(f->m, &gpu1, 0, NULL), 0);
	kerf_mps_fake_kill(&f->fake, 1000);
	/* failed at the first poll after the kill */
	assert_int_equal(kerf_mps_poll(f->m, 500), 1);
	assert_int_equal(kerf_mps_failed_gpus(f->m), 0x2);
	assert_int_equal(f->nr_seen, 1);
	assert_int_equal(f->seen[0].state, KERF_MPS_FAILED);
	assert_int_equal(f->seen[0].gpu_index, 1);
	assert_int_equal(f->seen[0].failed_at_ms, 500);
	assert_int_equal(f->seen[0].retry_at_ms, 1500);
	assert_non_null(strstr(f->why[0], "MPS daemon for GPU 1"));
	assert_non_null(strstr(f->why[0], "process 1000 is gone"));
	/* not before the backoff: no start, no busy loop */
	for (int64_t t = 500; t < 1500; t += 100)
		assert_int_equal(kerf_mps_poll(f->m, t), 0);
	assert_int_equal(f->fake.nr_started, 1);
	/* at the backoff: the same limits again, in the same order */
	assert_int_equal(kerf_mps_poll(f->m, 1500), 1);
	assert_int_equal(f->fake.nr_started, 2);
	assert_bring_up(f, 3);
	assert_int_equal(kerf_mps_failed_gpus(f->m), 0);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.state, KERF_MPS_RUNNING);
	assert_int_equal(v.pid, 1001);
	assert_int_equal(v.restarts, 1);
	assert_int_equal(v.limits.thread_pct, 25);
	assert_int_equal(v.limits.pinned_mem_mib, 20389);
	assert_int_equal(f->nr_seen, 2);
	assert_int_equal(f->seen[1].state, KERF_MPS_RUNNING);
}

static void test_backoff_and_give_up(void **state)
{
	struct fixture *f = *state;
	struct kerf_mps_view v;

	assert_int_equal(kerf_mps_start(f->m, &gpu1, 0, NULL), 0);
	kerf_mps_fake_kill(&f->fake, 1000);
	assert_int_equal(kerf_mps_poll(f->m, 0), 1);
	f->fake.fail_starts = 10;
	/* restart 1 at 1000 fails: next at +2000; restart 2 at 3000 fails:
	 * +4000; restart 3 at 7000 fails: the third failure, given up */
	assert_int_equal(kerf_mps_poll(f->m, 1000), 0);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.state, KERF_MPS_FAILED);
	assert_int_equal(v.failures, 1);
	assert_int_equal(v.retry_at_ms, 3000);
	assert_non_null(strstr(v.why, "did not come up: fake: start"));
	assert_int_equal(kerf_mps_poll(f->m, 2999), 0);
	assert_int_equal(f->fake.fail_starts, 9);
	assert_int_equal(kerf_mps_poll(f->m, 3000), 0);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.retry_at_ms, 7000);
	assert_int_equal(kerf_mps_poll(f->m, 7000), 1);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.state, KERF_MPS_GAVE_UP);
	assert_string_equal(kerf_mps_state_name(v.state), "GaveUp");
	assert_int_equal(kerf_mps_failed_gpus(f->m), 0x2);
	/* given up: polls never try again */
	assert_int_equal(kerf_mps_poll(f->m, 1000000), 0);
	assert_int_equal(f->fake.fail_starts, 7);
	/* started again by the agent: tried at once */
	f->fake.fail_starts = 0;
	assert_int_equal(kerf_mps_start(f->m, &gpu1, 1000001, NULL), 0);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.state, KERF_MPS_RUNNING);
	assert_int_equal(kerf_mps_failed_gpus(f->m), 0);
}

static void test_stable_resets_count(void **state)
{
	struct fixture *f = *state;
	struct kerf_mps_view v;

	assert_int_equal(kerf_mps_start(f->m, &gpu1, 0, NULL), 0);
	kerf_mps_fake_kill(&f->fake, 1000);
	kerf_mps_poll(f->m, 0);
	f->fake.fail_starts = 1;
	kerf_mps_poll(f->m, 1000);    /* fails: failures 1 */
	kerf_mps_poll(f->m, 3000);    /* up */
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.state, KERF_MPS_RUNNING);
	assert_int_equal(v.failures, 1);
	kerf_mps_poll(f->m, 12999);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.failures, 1);
	kerf_mps_poll(f->m, 13000);   /* up 10 s */
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.failures, 0);
	/* the next crash starts the backoff from the first step */
	kerf_mps_fake_kill(&f->fake, v.pid);
	kerf_mps_poll(f->m, 20000);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.retry_at_ms, 21000);
}

static void test_half_started_killed(void **state)
{
	struct fixture *f = *state;
	struct kerf_mps_view v;
	struct kerf_err err = { 0 };

	/* the limits are not read back: the daemon is killed, not used */
	snprintf(f->fake.pct_override, sizeof(f->fake.pct_override), "100");
	assert_int_equal(kerf_mps_start(f->m, &gpu1, 0, &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "answered '100', not 25"));
	assert_int_equal(f->fake.nr_started, 1);
	assert_int_equal(f->fake.dead[0], 1);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(v.state, KERF_MPS_FAILED);
	assert_int_equal(v.pid, 0);
	assert_int_equal(kerf_mps_failed_gpus(f->m), 0x2);
	assert_int_equal(f->nr_seen, 1);
	/* one failure so far: the next try 2 s later */
	assert_int_equal(v.retry_at_ms, 2000);
	/* a control command failing is the same */
	f->fake.pct_override[0] = '\0';
	f->fake.fail_controls = 1;
	assert_int_equal(kerf_mps_poll(f->m, 2000), 0);
	assert_int_equal(f->fake.nr_started, 2);
	assert_int_equal(f->fake.dead[1], 1);
	assert_int_equal(kerf_mps_poll(f->m, 6000), 1);
	assert_int_equal(kerf_mps_failed_gpus(f->m), 0);
	/* "25.0" is 25 too (the format of the answer is not pinned down) */
	kerf_mps_fake_kill(&f->fake, 1002);
	snprintf(f->fake.pct_override, sizeof(f->fake.pct_override), "25.0");
	assert_int_equal(kerf_mps_poll(f->m, 7000), 1);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	assert_int_equal(kerf_mps_poll(f->m, v.retry_at_ms), 1);
	assert_int_equal(kerf_mps_failed_gpus(f->m), 0);
	/* "250" is not */
	kerf_mps_fake_kill(&f->fake, 1003);
	snprintf(f->fake.pct_override, sizeof(f->fake.pct_override), "250");
	assert_int_equal(kerf_mps_poll(f->m, 100000), 1);
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), 0);
	kerf_mps_poll(f->m, v.retry_at_ms);
	assert_int_equal(kerf_mps_failed_gpus(f->m), 0x2);
}

static void test_other_limits_stop(void **state)
{
	struct fixture *f = *state;
	struct kerf_mps_daemon other = gpu1;
	struct kerf_err err = { 0 };

	assert_int_equal(kerf_mps_start(f->m, &gpu1, 0, NULL), 0);
	other.limits.thread_pct = 50;
	assert_int_equal(kerf_mps_start(f->m, &other, 0, &err), -KERF_EBUSY);
	assert_non_null(strstr(err.msg, "GPU 1 UID 1000: the daemon runs"));
	assert_non_null(strstr(err.msg, "25% and 20389 MiB; stop it"));
	/* another tenant's daemon on GPU 1, and one on GPU 3 */
	other.uid = 2000;
	assert_int_equal(kerf_mps_start(f->m, &other, 0, NULL), 0);
	other.gpu_index = 3;
	other.gpu_uuid = "GPU-3";
	assert_int_equal(kerf_mps_start(f->m, &other, 0, NULL), 0);
	kerf_mps_fake_kill(&f->fake, 1002);
	kerf_mps_poll(f->m, 10);
	assert_int_equal(kerf_mps_failed_gpus(f->m), 0x8);
	/* stop: quit through the pipe, then forgotten */
	size_t before = f->fake.nr_cmds;
	assert_int_equal(kerf_mps_stop(f->m, 1, 1000, NULL), 0);
	assert_int_equal(f->fake.nr_cmds, before + 1);
	assert_string_equal(f->fake.cmds[before], PIPE1 ": quit");
	struct kerf_mps_view v;
	assert_int_equal(kerf_mps_find(f->m, 1, 1000, &v), -KERF_ENOTFOUND);
	assert_int_equal(kerf_mps_find(f->m, 1, 2000, &v), 0);
	kerf_err_clear(&err);
	assert_int_equal(kerf_mps_stop(f->m, 1, 1000, &err), -KERF_ENOTFOUND);
	assert_non_null(strstr(err.msg, "no daemon for GPU 1 UID 1000"));
	/* quit failing: killed */
	f->fake.fail_controls = 1;
	assert_int_equal(kerf_mps_stop(f->m, 1, 2000, NULL), 0);
	assert_int_equal(f->fake.dead[1], 1);
	/* a failed daemon has no process to quit */
	before = f->fake.nr_cmds;
	assert_int_equal(kerf_mps_stop(f->m, 3, 2000, NULL), 0);
	assert_int_equal(f->fake.nr_cmds, before);
}

static void test_bad_input(void **state)
{
	struct fixture *f = *state;
	struct kerf_mps_daemon d = gpu1;
	struct kerf_err err = { 0 };
	struct kerf_mps *m;
	struct kerf_mps_config cfg = { 0 };

	d.gpu_uuid = "GPU-../../etc";
	assert_int_equal(kerf_mps_start(f->m, &d, 0, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "gpu_uuid 'GPU-../../etc': only letters, digits and '-'"));
	d.gpu_uuid = "";
	assert_int_equal(kerf_mps_start(f->m, &d, 0, NULL), -KERF_EINVAL);
	d.gpu_uuid = "GPU-1";
	d.gpu_index = 64;
	kerf_err_clear(&err);
	assert_int_equal(kerf_mps_start(f->m, &d, 0, &err), -KERF_ERANGE);
	assert_non_null(strstr(err.msg, "gpu_index 64: must be 0..63"));
	d.gpu_index = 1;
	d.limits.thread_pct = 0;
	assert_int_equal(kerf_mps_start(f->m, &d, 0, NULL), -KERF_ERANGE);
	assert_int_equal(f->fake.nr_started, 0);
	/* ops missing, a relative root */
	kerf_err_clear(&err);
	assert_int_equal(kerf_mps_new(&m, &cfg, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "ops"));
	kerf_mps_fake_ops(&f->fake, &cfg.ops);
	cfg.root_dir = "run/mps";
	kerf_err_clear(&err);
	assert_int_equal(kerf_mps_new(&m, &cfg, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "must be an absolute path"));
	/* the bound on daemons */
	cfg.root_dir = NULL;
	assert_int_equal(kerf_mps_new(&m, &cfg, NULL), 0);
	d = gpu1;
	for (uint32_t i = 0; i < KERF_MPS_MAX_DAEMONS; i++) {
		d.uid = 5000 + i;
		f->fake.nr_started = 0;   /* the fake's own bounds */
		kerf_mps_fake_release(&f->fake);
		assert_int_equal(kerf_mps_start(m, &d, 0, NULL), 0);
	}
	d.uid = 1;
	assert_int_equal(kerf_mps_start(m, &d, 0, NULL), -KERF_ELIMIT);
	kerf_mps_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dead_daemon_restarts_with_same_limits, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_backoff_and_give_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stable_resets_count, setup, teardown),
		cmocka_unit_test_setup_teardown(test_half_started_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_limits_stop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
