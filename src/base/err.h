/*
 * err: the project's error codes and a first-wins error message holder.
 *
 * Errors are negative numbers from one X-macro table; a function that fails
 * for a reason a human must read also fills a struct kerf_err.  The first
 * message set wins, so the innermost cause survives (curl's failf rule).
 */
#ifndef KERF_BASE_ERR_H
#define KERF_BASE_ERR_H

#include <stddef.h>

/* clang-format off */
#define KERF_ERRORS(X)                                              \
	X(KERF_OK,        0, "success")                             \
	X(KERF_ENOMEM,    1, "out of memory")                       \
	X(KERF_EINVAL,    2, "invalid argument")                    \
	X(KERF_EPARSE,    3, "malformed input")                     \
	X(KERF_EIO,       4, "input/output error")                  \
	X(KERF_ERANGE,    5, "value out of range")                  \
	X(KERF_ENOTFOUND, 6, "not found")                           \
	X(KERF_ELIMIT,    7, "limit exceeded")                      \
	X(KERF_EEXIST,    8, "already exists")                      \
	X(KERF_EBUSY,     9, "in use")                              \
	X(KERF_EGONE,    10, "resource version expired")            \
	X(KERF_ETIMEDOUT,11, "timed out")                           \
	X(KERF_ETRANSPORT,12, "transport error")                    \
	X(KERF_EHTTP,    13, "API server refused the request")
/* clang-format on */

#define KERF_ERR_ENUM(name, num, text) name = num,
enum kerf_errno { KERF_ERRORS(KERF_ERR_ENUM) KERF_E_COUNT_ };
#undef KERF_ERR_ENUM

enum { KERF_ERR_MSG_MAX = 512 };

struct kerf_err {
	int code;                    /* negative kerf_errno, 0 when clear */
	char msg[KERF_ERR_MSG_MAX];  /* human text, "" when clear */
};

/* Text for a (negative or positive) error code; never NULL. */
const char *kerf_strerror(int code);

/*
 * Record an error unless one is already recorded; returns code (negative)
 * so callers can write `return kerf_err_set(err, -KERF_EPARSE, ...)`.
 * err may be NULL.
 */
int kerf_err_set(struct kerf_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void kerf_err_clear(struct kerf_err *err);

#endif /* KERF_BASE_ERR_H */
