/*
 * Unit tests for format/file: a regular file is read whole and bounded;
 * a FIFO (with no writer: opening must not block), a directory, a
 * character device and a socket are refused before a byte is read, with
 * the path escaped and the reason; so are a missing file and one over the
 * bound.
 */
#define _DEFAULT_SOURCE                 /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/file.h"

struct dir {
	char path[64];
};

static int setup(void **state)
{
	struct dir *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	snprintf(d->path, sizeof(d->path), "/tmp/kerf-test-file-XXXXXX");
	if (!mkdtemp(d->path)) {
		free(d);
		return -1;
	}
	*state = d;
	return 0;
}

static int teardown(void **state)
{
	struct dir *d = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	if (system(cmd) != 0)
		return -1;
	free(d);
	return 0;
}

static void join(char *out, size_t size, const struct dir *d, const char *name)
{
	snprintf(out, size, "%s/%s", d->path, name);
}

/* Reading path fails with code and the message "<prefix>'<path>'<suffix>". */
static void expect_refused(const char *path, const char *shown_path,
			   int code, const char *prefix, const char *suffix)
{
	struct kerf_file f = { (char *)1, 7 };
	struct kerf_err err = { 0 };
	char want[512];

	assert_int_equal(kerf_file_read(&f, path, 1 << 20, &err), code);
	assert_null(f.data);
	assert_int_equal(f.len, 0);
	snprintf(want, sizeof(want), "%s'%s'%s", prefix, shown_path, suffix);
	assert_string_equal(err.msg, want);
}

static void test_regular(void **state)
{
	const struct dir *d = *state;
	struct kerf_file f;
	struct kerf_err err = { 0 };
	char path[128];
	FILE *fp;

	join(path, sizeof(path), d, "a.txt");
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("hello\n", fp);
	fclose(fp);
	assert_int_equal(kerf_file_read(&f, path, 1 << 20, &err), 0);
	assert_int_equal(f.len, 6);
	assert_string_equal(f.data, "hello\n");
	kerf_file_release(&f);
}

static void test_bound(void **state)
{
	const struct dir *d = *state;
	struct kerf_file f;
	struct kerf_err err = { 0 };
	char path[128], want[256];
	FILE *fp;

	join(path, sizeof(path), d, "big.txt");
	fp = fopen(path, "w");
	assert_non_null(fp);
	for (int i = 0; i < 100000; i++)
		fputc('x', fp);
	fclose(fp);
	assert_int_equal(kerf_file_read(&f, path, 99999, &err), -KERF_ELIMIT);
	assert_null(f.data);
	snprintf(want, sizeof(want), "'%s' is larger than 99999 bytes", path);
	assert_string_equal(err.msg, want);
	kerf_err_clear(&err);
	assert_int_equal(kerf_file_read(&f, path, 100000, &err), 0);
	assert_int_equal(f.len, 100000);
	kerf_file_release(&f);
}

static void test_fifo(void **state)
{
	const struct dir *d = *state;
	char path[128];

	/* no writer: a blocking open would wait forever */
	join(path, sizeof(path), d, "fifo");
	assert_int_equal(mkfifo(path, 0600), 0);
	expect_refused(path, path, -KERF_EINVAL, "cannot read ",
		       ": a FIFO, not a regular file");
}

static void test_directory(void **state)
{
	const struct dir *d = *state;

	expect_refused(d->path, d->path, -KERF_EINVAL, "cannot read ",
		       ": a directory, not a regular file");
}

static void test_device(void **state)
{
	(void)state;
	expect_refused("/dev/null", "/dev/null", -KERF_EINVAL, "cannot read ",
		       ": a character device, not a regular file");
}

static void test_socket(void **state)
{
	const struct dir *d = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	join(sa.sun_path, sizeof(sa.sun_path), d, "sock");
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	expect_refused(sa.sun_path, sa.sun_path, -KERF_EINVAL, "cannot read ",
		       ": a socket, not a regular file");
	close(fd);
}

static void test_missing_escaped(void **state)
{
	const struct dir *d = *state;
	char path[128], shown[160];

	/* a name with ESC and a newline comes back escaped */
	join(path, sizeof(path), d, "no\x1b[2J\nsuch");
	snprintf(shown, sizeof(shown), "%s/no\\x1b[2J\\x0asuch", d->path);
	expect_refused(path, shown, -KERF_EIO, "cannot open ",
		       ": No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_socket, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_escaped, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
