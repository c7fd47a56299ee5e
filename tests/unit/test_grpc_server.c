/*
 * grpc_server (grpc/server.h, grpc/client.h): the server and the unary
 * client against each other on a unix socket in a temp dir, one thread
 * (the client's tick runs the server): an echo, an error status with a
 * message that needs percent-encoding, an unknown method, a request over
 * the bound, a streaming route that ends at once, a connect to nothing,
 * and a failing write through the io ops.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "grpc/client.h"
#include "grpc/frame.h"
#include "grpc/server.h"

static int echo(void *arg, const uint8_t *req, size_t len, struct kerf_buf *resp,
		struct kerf_err *err)
{
	(void)arg;
	(void)err;
	return kerf_buf_add(resp, req, len) == 0 ? KERF_GRPC_OK : KERF_GRPC_INTERNAL;
}

static int refuse(void *arg, const uint8_t *req, size_t len, struct kerf_buf *resp,
		struct kerf_err *err)
{
	(void)arg;
	(void)req;
	(void)len;
	(void)resp;
	kerf_err_set(err, -KERF_EINVAL, "devices: 100%% wrong\nreally");
	return KERF_GRPC_INVALID_ARGUMENT;
}

static int stream_refuse(void *arg, const uint8_t *req, size_t len,
			 struct kerf_grpc_call *call, struct kerf_err *err)
{
	(void)arg;
	(void)req;
	(void)len;
	(void)call;
	kerf_err_set(err, -KERF_EBUSY, "not now");
	return KERF_GRPC_FAILED_PRECONDITION;
}

static const struct kerf_grpc_route routes[] = {
	{ .path = "/t.S/Echo", .unary = echo },
	{ .path = "/t.S/Fail", .unary = refuse },
	{ .path = "/t.S/Watch", .stream = stream_refuse },
};

struct fixture {
	char dir[64];
	char path[128];
	struct kerf_grpc_server *srv;
};

static void tick(void *arg)
{
	kerf_grpc_server_poll(arg, 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/kerf-grpc-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/s.sock", f->dir);
	assert_int_equal(kerf_grpc_server_new(&f->srv, f->path, routes, 3, 64, NULL, NULL), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	kerf_grpc_server_free(f->srv);
	assert_int_not_equal(access(f->path, F_OK), 0); /* unlinked */
	rmdir(f->dir);
	free(f);
	return 0;
}

static int call(struct fixture *f, const char *method, const char *req, size_t len,
		struct kerf_buf *resp, struct kerf_err *err, const struct kerf_grpc_io_ops *io)
{
	struct kerf_grpc_client_opts o = {
		.timeout_ms = 5000, .max_msg_bytes = 1024, .tick = tick, .tick_arg = f->srv,
		.io = io,
	};
	return kerf_grpc_unary_call(f->path, method, (const uint8_t *)req, len, resp, &o, err);
}

static void test_echo(void **state)
{
	struct fixture *f = *state;
	struct kerf_buf resp;
	struct kerf_err err = { 0 };

	kerf_buf_init(&resp, 0);
	assert_int_equal(call(f, "/t.S/Echo", "hello\0x", 7, &resp, &err, NULL), KERF_GRPC_OK);
	assert_int_equal(resp.len, 7);
	assert_memory_equal(resp.data, "hello\0x", 7);
	/* An empty message is a message. */
	kerf_buf_reset(&resp);
	assert_int_equal(call(f, "/t.S/Echo", "", 0, &resp, &err, NULL), KERF_GRPC_OK);
	assert_int_equal(resp.len, 0);
	kerf_buf_release(&resp);
}

static void test_error_status(void **state)
{
	struct fixture *f = *state;
	struct kerf_buf resp;
	struct kerf_err err = { 0 };

	kerf_buf_init(&resp, 0);
	assert_int_equal(call(f, "/t.S/Fail", "x", 1, &resp, &err, NULL),
			 KERF_GRPC_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "INVALID_ARGUMENT: devices: 100% wrong\nreally"));
	kerf_err_clear(&err);
	assert_int_equal(call(f, "/t.S/Nope", "x", 1, &resp, &err, NULL),
			 KERF_GRPC_UNIMPLEMENTED);
	assert_non_null(strstr(err.msg, "unknown method /t.S/Nope"));
	kerf_err_clear(&err);
	char big[65] = { 0 };
	assert_int_equal(call(f, "/t.S/Echo", big, sizeof(big), &resp, &err, NULL),
			 KERF_GRPC_RESOURCE_EXHAUSTED);
	assert_non_null(strstr(err.msg, "length 65 over the limit of 64 bytes"));
	kerf_err_clear(&err);
	assert_int_equal(call(f, "/t.S/Watch", "", 0, &resp, &err, NULL),
			 KERF_GRPC_FAILED_PRECONDITION);
	assert_non_null(strstr(err.msg, "not now"));
	assert_int_equal(resp.len, 0);
	kerf_buf_release(&resp);
}

static void test_connect_nothing(void **state)
{
	struct fixture *f = *state;
	struct kerf_grpc_client_opts o = { .timeout_ms = 100, .max_msg_bytes = 64 };
	struct kerf_buf resp;
	struct kerf_err err = { 0 };
	char path[160];
	(void)f;

	kerf_buf_init(&resp, 0);
	snprintf(path, sizeof(path), "%s/none.sock", f->dir);
	assert_int_equal(kerf_grpc_unary_call(path, "/t.S/Echo", NULL, 0, &resp, &o, &err),
			 -KERF_ETRANSPORT);
	assert_non_null(strstr(err.msg, "none.sock"));
	kerf_buf_release(&resp);
}

static ssize_t failing_write(void *ctx, int fd, const void *buf, size_t len)
{
	(void)ctx;
	(void)fd;
	(void)buf;
	(void)len;
	errno = EPIPE;
	return -1;
}

static ssize_t plain_read(void *ctx, int fd, void *buf, size_t len)
{
	(void)ctx;
	return read(fd, buf, len);
}

static void test_write_fails(void **state)
{
	struct fixture *f = *state;
	const struct kerf_grpc_io_ops io = { plain_read, failing_write, NULL };
	struct kerf_buf resp;
	struct kerf_err err = { 0 };

	kerf_buf_init(&resp, 0);
	assert_int_equal(call(f, "/t.S/Echo", "x", 1, &resp, &err, &io), -KERF_ETRANSPORT);
	assert_non_null(strstr(err.msg, "write failed"));
	/* The server drops the half-open connection and still serves. */
	for (int i = 0; i < 10; i++)
		kerf_grpc_server_poll(f->srv, 5);
	assert_int_equal(kerf_grpc_server_conns(f->srv), 0);
	assert_int_equal(call(f, "/t.S/Echo", "y", 1, &resp, &err, NULL), KERF_GRPC_OK);
	kerf_buf_release(&resp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_echo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connect_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_fails, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
