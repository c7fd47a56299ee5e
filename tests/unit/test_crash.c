/*
 * serve/crash: KERF_CRASH_AT is read strictly (every refusal names the
 * variable and says what was expected), and a point kills the process
 * with SIGKILL the N-th time it is reached, not before, and only the
 * point chosen (in a child process: the test itself survives).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "serve/crash.h"

static void test_parse(void **state)
{
	struct kerf_crash c;
	struct kerf_err err = { 0 };

	(void)state;
	assert_int_equal(kerf_crash_parse(NULL, &c, &err), 0);
	assert_int_equal(c.point, KERF_CRASH_NONE);
	assert_int_equal(kerf_crash_parse("", &c, &err), 0);
	assert_int_equal(c.point, KERF_CRASH_NONE);
	assert_int_equal(kerf_crash_parse("after-first-bind", &c, &err), 0);
	assert_int_equal(c.point, KERF_CRASH_AFTER_FIRST_BIND);
	assert_int_equal(c.left, 1);
	assert_int_equal(kerf_crash_parse("mid-preemption:3", &c, &err), 0);
	assert_int_equal(c.point, KERF_CRASH_MID_PREEMPTION);
	assert_int_equal(c.left, 3);
	assert_int_equal(kerf_crash_parse("during-relist", &c, &err), 0);
	assert_int_equal(c.point, KERF_CRASH_DURING_RELIST);
	assert_int_equal(kerf_crash_parse("during", &c, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "KERF_CRASH_AT 'during': expected after-first-bind"));
	assert_int_equal(c.point, KERF_CRASH_NONE);
	assert_int_equal(kerf_crash_parse("during-relist:0", &c, &err), -KERF_EINVAL);
	assert_int_equal(kerf_crash_parse("during-relist:", &c, &err), -KERF_EINVAL);
	assert_int_equal(kerf_crash_parse("during-relist:x", &c, &err), -KERF_EINVAL);
	memset(&err, 0, sizeof(err));
	assert_int_equal(kerf_crash_parse("during-relist:1000001", &c, &err), -KERF_EINVAL);
	assert_non_null(strstr(err.msg, "1 to 1000000"));
	assert_int_equal(kerf_crash_parse("after-first-bind-x", &c, &err), -KERF_EINVAL);
}

/* How a child that reaches points[0..nr) in turn ends: its signal or 0. */
static int run_child(const char *env, const uint8_t *points, size_t nr)
{
	int status = 0;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct kerf_crash c;

		if (kerf_crash_parse(env, &c, NULL) < 0)
			_exit(3);
		for (size_t i = 0; i < nr; i++)
			kerf_crash_at(&c, points[i]);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status) ? -1 : 0;
}

static void test_kill(void **state)
{
	static const uint8_t two_binds[] = { KERF_CRASH_AFTER_FIRST_BIND,
					     KERF_CRASH_AFTER_FIRST_BIND };
	static const uint8_t others[] = { KERF_CRASH_MID_PREEMPTION,
					  KERF_CRASH_DURING_RELIST };

	(void)state;
	assert_int_equal(run_child("after-first-bind", two_binds, 1), SIGKILL);
	assert_int_equal(run_child("after-first-bind:2", two_binds, 1), 0);
	assert_int_equal(run_child("after-first-bind:2", two_binds, 2), SIGKILL);
	assert_int_equal(run_child("after-first-bind", others, 2), 0);
	assert_int_equal(run_child(NULL, two_binds, 2), 0);
	assert_int_equal(run_child("during-relist", others, 2), SIGKILL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_kill),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
