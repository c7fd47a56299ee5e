/*
 * decide: kerf's admission decisions, from a decoded AdmissionReview and
 * a policy snapshot to the answer (docs/admission.md "Rules" and
 * "Mutation").  Pure and thread-safe: no I/O, no global state, the same
 * request and snapshot always give the same answer, and nothing is
 * reserved or cached, so a dryRun request has no side effects by
 * construction.
 *
 *   /validate/pods        every rule over containers, init containers
 *                         (native sidecars included), ephemeral containers
 *                         and pod-level fields, and tenant policy;
 *   /mutate/pods          kerf's defaults as an idempotent JSON Patch;
 *   /validate/namespaces  who may set a namespace's kerf.io/tenant label;
 *   /validate/tenants     a Tenant decoded and checked against the others;
 *   /validate/resourceclaims  DRA claims of tenant namespaces: no admin
 *                         access, no GPU device class outside the quota.
 *
 * A denial lists every finding, each with the field path and the rule:
 * "spec.hostIPC: ... (rule host-namespace)".
 */
#ifndef KERF_ADMISSION_DECIDE_H
#define KERF_ADMISSION_DECIDE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "admission/policy.h"
#include "admission/review.h"

enum kerf_admission_route {
	KERF_ROUTE_VALIDATE_PODS = 0,
	KERF_ROUTE_MUTATE_PODS,
	KERF_ROUTE_VALIDATE_NAMESPACES,
	KERF_ROUTE_VALIDATE_TENANTS,
	KERF_ROUTE_VALIDATE_CLAIMS,
	KERF_ROUTE_NR,
};

/* "/validate/pods" and the others; -1 for another path. */
int kerf_admission_route_find(const char *path);
const char *kerf_admission_route_path(enum kerf_admission_route r);

enum {
	KERF_ADMISSION_FINDINGS_MAX = 16,   /* reported; more are counted */
	KERF_ADMISSION_FIELD_MAX = 256,
	KERF_ADMISSION_TEXT_MAX = 320,
	KERF_ADMISSION_WARN_MAX = 4,
};

struct kerf_admission_finding {
	const char *rule;                   /* static: "privileged", ... */
	char field[KERF_ADMISSION_FIELD_MAX];
	char text[KERF_ADMISSION_TEXT_MAX];
};

struct kerf_admission_decision {
	bool allowed;
	json_t *patch;                      /* owned; NULL: nothing to change */
	struct kerf_admission_finding findings[KERF_ADMISSION_FINDINGS_MAX];
	size_t nr_findings;                 /* kept */
	size_t nr_total;                    /* found */
	char warnings[KERF_ADMISSION_WARN_MAX][KERF_ADMISSION_WARNING_MAX_RUNES];
	size_t nr_warnings;
};

/*
 * Decide req on route r under p.  0 (d filled; release it), or
 * -KERF_ENOMEM.  A request the route does not judge (another kind, an
 * excluded namespace, a DELETE) is allowed untouched.
 */
int kerf_admission_decide(const struct kerf_admission_policy *p,
			  enum kerf_admission_route r,
			  const struct kerf_admission_request *req,
			  struct kerf_admission_decision *d)
	__attribute__((warn_unused_result));

void kerf_admission_decision_release(struct kerf_admission_decision *d);

/* Add a finding (printf-like text); used by the rule files. */
void kerf_admission_deny(struct kerf_admission_decision *d, const char *rule,
			 const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void kerf_admission_warn(struct kerf_admission_decision *d,
			 const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A field path into out[KERF_ADMISSION_FIELD_MAX], cut if longer. */
void kerf_admission_field(char *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* What one HTTP request comes to, for the server and the offline CLI. */
struct kerf_admission_answer {
	char *body;                         /* malloc'd AdmissionReview JSON */
	size_t len;
	int http_status;                    /* 200, or 400: not a review */
	const char *verdict;                /* "allowed", "patched", "denied",
					       "error" */
	const char *rule;                   /* the first denial's, or NULL */
};

/*
 * The whole path: body[0..len) decoded, decided, encoded.  A body that is
 * not an AdmissionReview is answered 400 with the decoder's message
 * (there is no uid to answer to); one that decodes gets a 200 review.
 * 0 or -KERF_ENOMEM.
 */
int kerf_admission_answer(const struct kerf_admission_policy *p,
			  enum kerf_admission_route r, const char *body,
			  size_t len, struct kerf_admission_answer *a)
	__attribute__((warn_unused_result));

void kerf_admission_answer_release(struct kerf_admission_answer *a);

/* The rule files (pod_validate.c, pod_mutate.c, ns_validate.c, ...). */
void kerf_admission_validate_pod(const struct kerf_admission_policy *p,
				 const struct kerf_admission_request *req,
				 struct kerf_admission_decision *d);
int kerf_admission_mutate_pod(const struct kerf_admission_policy *p,
			      const struct kerf_admission_request *req,
			      struct kerf_admission_decision *d);
void kerf_admission_validate_namespace(const struct kerf_admission_policy *p,
				       const struct kerf_admission_request *req,
				       struct kerf_admission_decision *d);
void kerf_admission_validate_tenant(const struct kerf_admission_policy *p,
				    const struct kerf_admission_request *req,
				    struct kerf_admission_decision *d);
void kerf_admission_validate_claim(const struct kerf_admission_policy *p,
				   const struct kerf_admission_request *req,
				   struct kerf_admission_decision *d);

#endif /* KERF_ADMISSION_DECIDE_H */
