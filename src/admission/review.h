/*
 * review: the AdmissionReview codec (admission.k8s.io/v1), what the API
 * server POSTs to a webhook and what the webhook must answer
 * (docs/admission.md).  jansson only; no I/O, no policy.
 *
 * The request is decoded into a compact struct whose strings and the
 * object, oldObject and options subtrees are borrowed from the parsed
 * document it owns, so the rules walk the object without copies.  The body
 * is untrusted: its size and its JSON nesting depth are bounded before
 * jansson sees it, and every refusal names the field and the reason.
 *
 * The response is encoded exactly as the API server verifies it:
 * apiVersion and kind, response.uid echoing the request, allowed, a
 * metav1.Status on a denial, a JSON Patch base64-encoded with patchType
 * "JSONPatch", and warnings the server passes on to the client unchanged.
 */
#ifndef KERF_ADMISSION_REVIEW_H
#define KERF_ADMISSION_REVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/err.h"

#define KERF_ADMISSION_API_VERSION "admission.k8s.io/v1"

enum {
	/*
	 * A review carries the object (a request body of at most 3 MiB,
	 * the API server's limit) and, on UPDATE, the stored old object
	 * (at most 1.5 MiB, etcd's default): 8 MiB leaves room for the
	 * envelope and the server's defaulted fields.
	 */
	KERF_ADMISSION_BODY_MAX_BYTES = 8 * 1024 * 1024,
	/* Real pod reviews nest 13 or 14 levels deep; 64 is ample. */
	KERF_ADMISSION_DEPTH_MAX = 64,
	/*
	 * The API server's warning recorder: each warning is cut to 256
	 * runes once all of them pass 4096, and dropped beyond that; a
	 * warning with a control character or invalid UTF-8 is dropped.
	 */
	KERF_ADMISSION_WARNING_MAX_RUNES = 256,
	KERF_ADMISSION_WARNINGS_MAX_RUNES = 4096,
};

enum kerf_admission_op {
	KERF_ADMISSION_CREATE,
	KERF_ADMISSION_UPDATE,
	KERF_ADMISSION_DELETE,
	KERF_ADMISSION_CONNECT,
};

/* A group/version/kind; group is "" for the core API. */
struct kerf_admission_gvk {
	const char *group;
	const char *version;
	const char *kind;
};

/* A group/version/resource ("pods"). */
struct kerf_admission_gvr {
	const char *group;
	const char *version;
	const char *resource;
};

struct kerf_admission_user {
	const char *username;        /* "" when absent */
	const char *uid;             /* "" when absent */
	const json_t *groups;        /* array of strings, NULL when none */
	size_t nr_groups;
};

/*
 * A decoded request.  Every pointer is borrowed from doc and lives until
 * kerf_admission_request_release; optional strings are "" when absent.
 */
struct kerf_admission_request {
	json_t *doc;                 /* the parsed body, owned */
	const char *uid;             /* never empty */
	struct kerf_admission_gvk kind;
	struct kerf_admission_gvr resource;
	const char *sub_resource;    /* "binding", "eviction", "status", ... */
	bool has_request_kind;
	struct kerf_admission_gvk request_kind;
	bool has_request_resource;
	struct kerf_admission_gvr request_resource;
	const char *request_sub_resource;
	const char *name;            /* "" on a CREATE by generateName */
	const char *namespace;       /* "" for cluster-scoped objects */
	enum kerf_admission_op op;
	struct kerf_admission_user user;
	bool dry_run;
	/* objects, NULL when null or absent (object on DELETE, oldObject on
	 * CREATE, options on CONNECT) */
	const json_t *object;
	const json_t *old_object;
	const json_t *options;
};

/*
 * Decode the AdmissionReview body[0..len) into *req.  Returns 0, or on a
 * refusal (req left empty, nothing to release):
 *   -KERF_ELIMIT  body over KERF_ADMISSION_BODY_MAX_BYTES or nested deeper
 *                 than KERF_ADMISSION_DEPTH_MAX;
 *   -KERF_EPARSE  not JSON, or not an AdmissionReview v1 (wrong
 *                 apiVersion or kind, a field missing or of a wrong type);
 *   -KERF_EINVAL  a field of the right type with a value kerf refuses
 *                 (an unknown operation, an empty uid);
 *   -KERF_ENOMEM.
 * err names the field ("request.uid: ...") with the value escaped.
 */
int kerf_admission_request_decode(const char *body, size_t len,
				  struct kerf_admission_request *req,
				  struct kerf_err *err)
	__attribute__((warn_unused_result));

/* Frees the document; req is empty afterwards (NULL is fine). */
void kerf_admission_request_release(struct kerf_admission_request *req);

/* The i-th of user.groups (i < nr_groups). */
const char *kerf_admission_user_group(const struct kerf_admission_user *u,
				      size_t i);

/* "CREATE", "UPDATE", "DELETE" or "CONNECT". */
const char *kerf_admission_op_name(enum kerf_admission_op op);

/* A metav1.StatusCause: at least one field set, the others NULL. */
struct kerf_admission_cause {
	const char *reason;          /* "FieldValueInvalid", ... */
	const char *message;
	const char *field;           /* "spec.containers[0].env[1]" */
};

/*
 * What the webhook answers.  status_* and causes only with allowed false;
 * patch (a JSON Patch array, borrowed) only with allowed true.  The API
 * server prefixes the message with `admission webhook "NAME" denied the
 * request: ` and forces a code under 400 to 400.
 */
struct kerf_admission_response {
	const char *uid;             /* the request's */
	bool allowed;
	int status_code;             /* 400..599, or 0 for none */
	const char *status_reason;   /* "Forbidden", "Invalid"; NULL for none */
	const char *status_message;  /* NULL for none */
	const struct kerf_admission_cause *causes;
	size_t nr_causes;
	const json_t *patch;         /* NULL for none */
	const char *const *warnings;
	size_t nr_warnings;
};

/*
 * The response as a new AdmissionReview JSON object in *out.  Returns 0,
 * -KERF_EINVAL (a field the API server would refuse or alter: no uid, a
 * status on an allowed response, a code outside 400..599, a patch on a
 * denial or not an array of operations, a warning it would drop or cut;
 * err names the field) or -KERF_ENOMEM.
 */
int kerf_admission_response_json(const struct kerf_admission_response *resp,
				 json_t **out, struct kerf_err *err)
	__attribute__((warn_unused_result));

/*
 * The same serialized: a malloc'd NUL-terminated compact JSON text in
 * *body of *len bytes, the HTTP response body.
 */
int kerf_admission_response_encode(const struct kerf_admission_response *resp,
				   char **body, size_t *len,
				   struct kerf_err *err)
	__attribute__((warn_unused_result));

#endif /* KERF_ADMISSION_REVIEW_H */
