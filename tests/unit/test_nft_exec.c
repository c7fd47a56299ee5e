/* The real nft ops against a stand-in nft (a shell script the test
 * writes): stdin carried whole, stderr brought back, exit status, no such
 * program, a hung program. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "net/nft.h"

struct fixture {
	char dir[64];
	char script[128];
	char got[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/kerf-nft-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->script, sizeof(f->script), "%s/nft", f->dir);
	snprintf(f->got, sizeof(f->got), "%s/got", f->dir);
	FILE *s = fopen(f->script, "w");
	if (!s)
		return -1;
	/* Like nft: "-f -" required; BAD on stdin is an error on stderr;
	 * SLEEP hangs. */
	fprintf(s, "#!/bin/sh\n"
		   "[ \"$1 $2\" = \"-f -\" ] || { echo \"usage\" >&2; exit 2; }\n"
		   "cat > '%s'\n"
		   "if grep -q SLEEP '%s'; then sleep 5; fi\n"
		   "if grep -q BAD '%s'; then\n"
		   "  echo '/dev/stdin:1:1-3: Error: syntax error' >&2; exit 1\n"
		   "fi\n", f->got, f->got, f->got);
	fclose(s);
	chmod(f->script, 0755);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	int rc = system(cmd);
	free(f);
	return rc == 0 ? 0 : -1;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc((size_t)n + 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return p;
}

static void test_ok_and_large(void **state)
{
	struct fixture *f = *state;
	struct kerf_nft_exec ex = { .nft_path = f->script };
	struct kerf_nft_ops ops;
	struct kerf_err err = { 0 };
	kerf_nft_exec_ops(&ex, &ops);

	const char *small = "add table inet kerf_dscp\n";
	assert_int_equal(kerf_nft_apply(&ops, small, strlen(small), &err), 0);
	size_t len;
	char *got = slurp(f->got, &len);
	assert_string_equal(got, small);
	free(got);

	/* 1 MiB: more than a pipe holds, so writing and reading interleave */
	size_t big_len = 1u << 20;
	char *big = malloc(big_len);
	assert_non_null(big);
	for (size_t i = 0; i < big_len; i++)
		big[i] = (char)('a' + i % 26);
	assert_int_equal(kerf_nft_apply(&ops, big, big_len, &err), 0);
	got = slurp(f->got, &len);
	assert_int_equal(len, big_len);
	assert_memory_equal(got, big, big_len);
	free(got);
	free(big);
}

static void test_error_text(void **state)
{
	struct fixture *f = *state;
	struct kerf_nft_exec ex = { .nft_path = f->script };
	struct kerf_nft_ops ops;
	struct kerf_err err = { 0 };
	kerf_nft_exec_ops(&ex, &ops);
	assert_int_equal(kerf_nft_apply(&ops, "BAD\n", 4, &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "nft -f - failed (exit 1)"));
	assert_non_null(strstr(err.msg, "Error: syntax error"));
}

static void test_no_program(void **state)
{
	struct fixture *f = *state;
	char path[160];
	snprintf(path, sizeof(path), "%s/absent", f->dir);
	struct kerf_nft_exec ex = { .nft_path = path };
	struct kerf_nft_ops ops;
	struct kerf_err err = { 0 };
	kerf_nft_exec_ops(&ex, &ops);
	assert_int_equal(kerf_nft_apply(&ops, "x\n", 2, &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "exit 127"));
	assert_non_null(strstr(err.msg, "cannot run"));

	/* More than a pipe holds to a program that never reads it: the
	 * write fails with EPIPE (no SIGPIPE kills the test) and the error
	 * is the program's. */
	size_t big_len = 1u << 20;
	char *big = calloc(1, big_len);
	assert_non_null(big);
	kerf_err_clear(&err);
	assert_int_equal(kerf_nft_apply(&ops, big, big_len, &err), -KERF_EIO);
	assert_non_null(strstr(err.msg, "exit 127"));
	free(big);
}

static void test_timeout(void **state)
{
	struct fixture *f = *state;
	struct kerf_nft_exec ex = { .nft_path = f->script, .timeout_ms = 300 };
	struct kerf_nft_ops ops;
	struct kerf_err err = { 0 };
	kerf_nft_exec_ops(&ex, &ops);
	assert_int_equal(kerf_nft_apply(&ops, "SLEEP\n", 6, &err),
			 -KERF_ETIMEDOUT);
	assert_non_null(strstr(err.msg, "no answer in 300 ms"));
}

int main(void)
{
	/* The default, whatever the runner left (meson's ignores SIGPIPE),
	 * so a SIGPIPE that escapes kerf_nft_apply kills the test. */
	signal(SIGPIPE, SIG_DFL);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ok_and_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_program, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
