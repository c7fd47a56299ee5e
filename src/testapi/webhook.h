/*
 * webhook: the test API server calling admission webhooks as
 * kube-apiserver v1.34.9 does (docs/testapi.md, "Admission webhooks").
 *
 *   webhook_config.c    Mutating/ValidatingWebhookConfiguration: defaults
 *                       and the validation the real server does at create
 *   webhook_match.c     rules, scope, namespaceSelector, objectSelector
 *   webhook_call.c      one HTTPS POST of an AdmissionReview (libcurl) and
 *                       the response verified as the real server does
 *   webhook_dispatch.c  which webhooks, in which order, what the client
 *                       gets; the store's lock released while calling
 */
#ifndef KERF_TESTAPI_WEBHOOK_H
#define KERF_TESTAPI_WEBHOOK_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

struct kerf_ta_ctx;

/* -- webhook_config.c -- */
extern const struct kerf_ta_hooks kerf_ta_mwc_hooks;
extern const struct kerf_ta_hooks kerf_ta_vwc_hooks;

/* -- webhook_match.c -- */

/* What a webhook's rules are matched against. */
struct kerf_ta_wh_attrs {
	const char *op;            /* "CREATE", "UPDATE", "DELETE" */
	const char *group;         /* of the resource ("" core) */
	const char *version;
	const char *resource;      /* "pods" */
	const char *sub;           /* "" or "status", "binding", ... */
	const char *ns;            /* "" for cluster-scoped objects */
};

/* One of the webhook's rules matches (operations, groups, versions,
 * resources with "*", "pods/status" and the like, and scope). */
bool kerf_ta_wh_rules_match(const json_t *hook,
			    const struct kerf_ta_wh_attrs *a);

/* A metav1.LabelSelector against labels; an absent selector matches. */
bool kerf_ta_wh_selector_match(const json_t *selector, const json_t *labels);

/*
 * The webhook is called for this request: rules, then namespaceSelector
 * (against ns_labels: the namespace's labels, or the object's own for a
 * Namespace), then objectSelector (the new or the old object's labels).
 */
bool kerf_ta_wh_matches(const json_t *hook, const struct kerf_ta_wh_attrs *a,
			const json_t *ns_labels, const json_t *obj,
			const json_t *old);

/* -- webhook_call.c -- */

enum kerf_ta_wh_outcome {
	KERF_TA_WH_ALLOWED,
	KERF_TA_WH_DENIED,     /* status: what the client gets */
	KERF_TA_WH_CALL_FAILED,/* msg; failurePolicy decides */
};

struct kerf_ta_wh_result {
	enum kerf_ta_wh_outcome outcome;
	json_t *status;            /* DENIED: a metav1.Status (owned) */
	const char *patch_type;    /* into resp; NULL when none */
	json_t *patch;             /* ALLOWED: the decoded patch (owned) */
	json_t *warnings;          /* array of strings (owned) or NULL */
	json_t *resp;              /* the decoded AdmissionReview (owned) */
	char msg[2048];            /* CALL_FAILED: `failed calling webhook ...` */
};

/*
 * POST review (an AdmissionReview) to the webhook hook (a defaulted
 * webhook of a configuration) and verify the answer.  Returns 0 with
 * *out filled (release with kerf_ta_wh_result_release), or -1 when out of
 * memory.  Never touches the store.
 */
int kerf_ta_wh_call(const json_t *hook, bool mutating, const json_t *review,
		    const char *uid, struct kerf_ta_wh_result *out);
void kerf_ta_wh_result_release(struct kerf_ta_wh_result *r);

/*
 * The metav1.Status a client gets from a denial (allowed false), as
 * webhookerrors.ToStatusErr builds it from the webhook's status (NULL:
 * none): only metav1.Status's own fields kept, the code forced to 400 or
 * more, "Failure", the message prefixed.  New reference.
 */
json_t *kerf_ta_wh_denial(const char *name, const json_t *status);

/* -- webhook_dispatch.c -- */

/* A request to admit, as the dispatcher sees it. */
struct kerf_ta_admit {
	struct kerf_ta_wh_attrs at;
	const char *kind_group;    /* the object's kind: "policy" */
	const char *kind_version;  /* "v1" */
	const char *kind;          /* "Eviction" */
	const char *name;
	json_t *obj;               /* NULL on DELETE; mutating changes it */
	const json_t *old;         /* NULL on CREATE */
	json_t *options;           /* CreateOptions, ... (owned) */
	bool dry_run;
};

/*
 * Run the mutating (then, for kerf_ta_admit_validate, the validating)
 * webhooks that match.  Called with the store's lock held and returns
 * with it held; while webhooks are called it is released, and *unlocked
 * says so (the caller must then look its object up again).  0: admitted;
 * -1: c->rs holds what the client gets.  Warnings go to c->rs either way.
 */
int kerf_ta_admit_mutate(struct kerf_ta_ctx *c, struct kerf_ta_admit *a,
			 bool *unlocked);
int kerf_ta_admit_validate(struct kerf_ta_ctx *c,
			   const struct kerf_ta_admit *a, bool *unlocked);

/* The admission attributes of the request c for an op on kind c->k
 * (options: its CreateOptions, UpdateOptions or DeleteOptions, owned). */
void kerf_ta_admit_init(struct kerf_ta_ctx *c, struct kerf_ta_admit *a,
			const char *op);
void kerf_ta_admit_release(struct kerf_ta_admit *a);

#endif /* KERF_TESTAPI_WEBHOOK_H */
