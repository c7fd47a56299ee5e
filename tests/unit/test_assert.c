/*
 * Unit tests for base/assert: KERF_ASSERT is compiled in whatever NDEBUG
 * says, does nothing when the expression holds, and aborts with the
 * expression, file and line on stderr when it does not (run in a child).
 */
#define NDEBUG 1 /* KERF_ASSERT must not depend on it */

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/assert.h"

static int evaluated;

static int count(int v)
{
	evaluated++;
	return v;
}

static void test_holds(void **state)
{
	(void)state;
	evaluated = 0;
	KERF_ASSERT(count(1) == 1);
	assert_int_equal(evaluated, 1);
}

static void test_fails_and_aborts(void **state)
{
	int fds[2], status;
	char text[256] = "";
	ssize_t n;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		KERF_ASSERT(count(2) == 3);
		_exit(0); /* not reached */
	}
	close(fds[1]);
	n = read(fds[0], text, sizeof(text) - 1);
	close(fds[0]);
	assert_true(n > 0);
	text[n] = '\0';
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
	assert_non_null(strstr(text, "assertion failed: count(2) == 3"));
	assert_non_null(strstr(text, "test_assert.c:"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holds),
		cmocka_unit_test(test_fails_and_aborts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
