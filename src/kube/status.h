/*
 * status: the API server's answers as typed errors.  A failed request
 * carries a metav1.Status body ({"kind":"Status","status":"Failure",
 * "message","reason","details":{...,"retryAfterSeconds"},"code"}); it is
 * decoded into a struct kerf_kube_status and, with the HTTP status, sorted
 * into an enum kerf_kube_class that callers switch on.  A request that got
 * no HTTP answer at all (connection refused, TLS failure, timeout) is
 * KERF_KUBE_TRANSPORT.  Each class maps to one kerf error code, once, here.
 */
#ifndef KERF_KUBE_STATUS_H
#define KERF_KUBE_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* clang-format off */
#define KERF_KUBE_CLASSES(X)                                     \
	X(KERF_KUBE_OK,                     "ok")                  \
	X(KERF_KUBE_BAD_REQUEST,            "bad request")         \
	X(KERF_KUBE_UNAUTHORIZED,           "unauthorized")        \
	X(KERF_KUBE_FORBIDDEN,              "forbidden")           \
	X(KERF_KUBE_NOT_FOUND,              "not found")           \
	X(KERF_KUBE_METHOD_NOT_ALLOWED,     "method not allowed")  \
	X(KERF_KUBE_CONFLICT,               "conflict")            \
	X(KERF_KUBE_ALREADY_EXISTS,         "already exists")      \
	X(KERF_KUBE_GONE,                   "expired")             \
	X(KERF_KUBE_UNSUPPORTED_MEDIA_TYPE, "unsupported media type") \
	X(KERF_KUBE_INVALID,                "invalid")             \
	X(KERF_KUBE_TOO_MANY_REQUESTS,      "too many requests")   \
	X(KERF_KUBE_INTERNAL,               "internal error")      \
	X(KERF_KUBE_UNAVAILABLE,            "service unavailable") \
	X(KERF_KUBE_SERVER_TIMEOUT,         "server timeout")      \
	X(KERF_KUBE_OTHER_HTTP,             "other HTTP error")    \
	X(KERF_KUBE_TRANSPORT,              "transport error")
/* clang-format on */

#define KERF_KUBE_CLASS_ENUM(name, text) name,
enum kerf_kube_class { KERF_KUBE_CLASSES(KERF_KUBE_CLASS_ENUM) KERF_KUBE_CLASS_COUNT_ };
#undef KERF_KUBE_CLASS_ENUM

enum {
	KERF_KUBE_REASON_MAX = 64,
	KERF_KUBE_MESSAGE_MAX = 512,
	KERF_KUBE_NAME_MAX = 254,
};

struct kerf_kube_status {
	bool decoded;                          /* the body was a Status */
	int32_t code;                          /* "code", 0 when absent */
	char reason[KERF_KUBE_REASON_MAX];     /* "" when absent; cut short */
	char message[KERF_KUBE_MESSAGE_MAX];   /* raw: escape before printing */
	char kind[KERF_KUBE_REASON_MAX];       /* details.kind */
	char name[KERF_KUBE_NAME_MAX];         /* details.name */
	char cause[KERF_KUBE_REASON_MAX];      /* details.causes[0].reason */
	int64_t retry_after_s;                 /* details.retryAfterSeconds; -1 */
};

/* An empty status (decoded false, retry_after_s -1). */
void kerf_kube_status_init(struct kerf_kube_status *st);

/*
 * The Status in obj (a JSON object with kind "Status") into st; false and
 * st empty when obj is no Status.  Fields of the wrong type are ignored.
 */
bool kerf_kube_status_from_json(struct kerf_kube_status *st, const json_t *obj);

/* The same from JSON text body[0..len) (any text: never fails). */
bool kerf_kube_status_decode(struct kerf_kube_status *st, const char *body,
			     size_t len);

/*
 * The class of an answer: http_status 0 is a transport error; 409 is
 * AlreadyExists when reason says so, else Conflict; 410, and any answer
 * whose reason is "Expired" or "Gone", is KERF_KUBE_GONE (a watch's
 * in-stream ERROR passes its Status code as http_status).
 */
enum kerf_kube_class kerf_kube_classify(long http_status, const char *reason);

const char *kerf_kube_class_name(enum kerf_kube_class c);

/*
 * The kerf error code for a class (0 for OK): NOT_FOUND -KERF_ENOTFOUND,
 * ALREADY_EXISTS -KERF_EEXIST, CONFLICT -KERF_EBUSY, GONE -KERF_EGONE,
 * SERVER_TIMEOUT -KERF_ETIMEDOUT, TRANSPORT -KERF_ETRANSPORT, every other
 * refusal -KERF_EHTTP.
 */
int kerf_kube_class_errno(enum kerf_kube_class c);

/* 429, 503, 504 and transport errors: worth another try after a pause. */
bool kerf_kube_class_is_retryable(enum kerf_kube_class c);

/* A Retry-After header value in whole seconds (0..86400), else -1. */
int64_t kerf_kube_parse_retry_after(const char *value);

#endif /* KERF_KUBE_STATUS_H */
