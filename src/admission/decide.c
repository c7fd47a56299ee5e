#include "admission/decide.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

static const char *const route_paths[KERF_ROUTE_NR] = {
	[KERF_ROUTE_VALIDATE_PODS] = "/validate/pods",
	[KERF_ROUTE_MUTATE_PODS] = "/mutate/pods",
	[KERF_ROUTE_VALIDATE_NAMESPACES] = "/validate/namespaces",
	[KERF_ROUTE_VALIDATE_TENANTS] = "/validate/tenants",
	[KERF_ROUTE_VALIDATE_CLAIMS] = "/validate/resourceclaims",
};

int kerf_admission_route_find(const char *path)
{
	for (int i = 0; i < KERF_ROUTE_NR; i++)
		if (!strcmp(path, route_paths[i]))
			return i;
	return -1;
}

const char *kerf_admission_route_path(enum kerf_admission_route r)
{
	return (unsigned)r < KERF_ROUTE_NR ? route_paths[r] : "";
}

void kerf_admission_deny(struct kerf_admission_decision *d, const char *rule,
			 const char *field, const char *fmt, ...)
{
	struct kerf_admission_finding *f;
	va_list ap;

	d->allowed = false;
	if (d->nr_findings == KERF_ADMISSION_FINDINGS_MAX) {
		d->nr_total++;
		return;
	}
	f = &d->findings[d->nr_findings++];
	d->nr_total++;
	f->rule = rule;
	snprintf(f->field, sizeof(f->field), "%s", field);
	va_start(ap, fmt);
	vsnprintf(f->text, sizeof(f->text), fmt, ap);
	va_end(ap);
}

void kerf_admission_field(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, KERF_ADMISSION_FIELD_MAX, fmt, ap);
	va_end(ap);
}

void kerf_admission_warn(struct kerf_admission_decision *d, const char *fmt, ...)
{
	va_list ap;
	char *w;

	if (d->nr_warnings == KERF_ADMISSION_WARN_MAX)
		return;
	w = d->warnings[d->nr_warnings++];
	va_start(ap, fmt);
	vsnprintf(w, KERF_ADMISSION_WARNING_MAX_RUNES, fmt, ap);
	va_end(ap);
	/* the API server drops a warning with a control character */
	for (char *c = w; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
}

int kerf_admission_decide(const struct kerf_admission_policy *p,
			  enum kerf_admission_route r,
			  const struct kerf_admission_request *req,
			  struct kerf_admission_decision *d)
{
	memset(d, 0, sizeof(*d));
	d->allowed = true;
	switch (r) {
	case KERF_ROUTE_VALIDATE_PODS:
		kerf_admission_validate_pod(p, req, d);
		return 0;
	case KERF_ROUTE_MUTATE_PODS:
		return kerf_admission_mutate_pod(p, req, d);
	case KERF_ROUTE_VALIDATE_NAMESPACES:
		kerf_admission_validate_namespace(p, req, d);
		return 0;
	case KERF_ROUTE_VALIDATE_TENANTS:
		kerf_admission_validate_tenant(p, req, d);
		return 0;
	case KERF_ROUTE_VALIDATE_CLAIMS:
		kerf_admission_validate_claim(p, req, d);
		return 0;
	case KERF_ROUTE_NR:
		break;
	}
	return -KERF_EINVAL;
}

void kerf_admission_decision_release(struct kerf_admission_decision *d)
{
	if (d) {
		json_decref(d->patch);
		d->patch = NULL;
	}
}

/* "field: text (rule r); ..." within the message's room. */
static char *denial_message(const struct kerf_admission_decision *d)
{
	struct kerf_buf b;

	int rc = 0;

	kerf_buf_init(&b, 16 * 1024);
	for (size_t i = 0; rc == 0 && i < d->nr_findings; i++)
		rc = kerf_buf_addf(&b, "%s%s: %s (rule %s)", i ? "; " : "",
				   d->findings[i].field, d->findings[i].text,
				   d->findings[i].rule);
	if (rc == 0 && d->nr_total > d->nr_findings)
		rc = kerf_buf_addf(&b, "; and %zu more", d->nr_total - d->nr_findings);
	if (rc < 0) {
		kerf_buf_release(&b);
		return NULL;
	}
	return kerf_buf_detach(&b, NULL);
}

static int encode_error(struct kerf_admission_answer *a, const char *msg)
{
	json_t *o = json_pack("{s:i,s:s,s:s}", "code", 400, "reason", "BadRequest",
			      "message", msg);

	a->http_status = 400;
	a->verdict = "error";
	a->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!a->body)
		return -KERF_ENOMEM;
	a->len = strlen(a->body);
	return 0;
}

int kerf_admission_answer(const struct kerf_admission_policy *p,
			  enum kerf_admission_route r, const char *body,
			  size_t len, struct kerf_admission_answer *a)
{
	struct kerf_admission_request req;
	struct kerf_admission_decision d;
	struct kerf_admission_response resp = { 0 };
	struct kerf_admission_cause causes[KERF_ADMISSION_FINDINGS_MAX];
	const char *warns[KERF_ADMISSION_WARN_MAX];
	struct kerf_err err = { 0 };
	char *msg = NULL;
	int rc;

	memset(a, 0, sizeof(*a));
	rc = kerf_admission_request_decode(body, len, &req, &err);
	if (rc == -KERF_ENOMEM)
		return rc;
	if (rc < 0)
		return encode_error(a, err.msg);
	rc = kerf_admission_decide(p, r, &req, &d);
	if (rc < 0) {
		kerf_admission_request_release(&req);
		return rc;
	}
	resp.uid = req.uid;
	resp.allowed = d.allowed;
	for (size_t i = 0; i < d.nr_warnings; i++)
		warns[i] = d.warnings[i];
	resp.warnings = warns;
	resp.nr_warnings = d.nr_warnings;
	if (!d.allowed) {
		msg = denial_message(&d);
		if (!msg) {
			rc = -KERF_ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < d.nr_findings; i++) {
			causes[i].reason = "FieldValueForbidden";
			causes[i].message = d.findings[i].text;
			causes[i].field = d.findings[i].field;
		}
		resp.status_code = 403;
		resp.status_reason = "Forbidden";
		resp.status_message = msg;
		resp.causes = causes;
		resp.nr_causes = d.nr_findings;
		a->verdict = "denied";
		a->rule = d.findings[0].rule;
	} else {
		resp.patch = d.patch;
		a->verdict = d.patch ? "patched" : "allowed";
	}
	rc = kerf_admission_response_encode(&resp, &a->body, &a->len, &err);
	if (rc == -KERF_EINVAL) {
		/* a warning the server would cut: answer without warnings */
		resp.nr_warnings = 0;
		rc = kerf_admission_response_encode(&resp, &a->body, &a->len, &err);
	}
	a->http_status = 200;
out:
	free(msg);
	kerf_admission_decision_release(&d);
	kerf_admission_request_release(&req);
	return rc < 0 ? (rc == -KERF_ENOMEM ? rc : encode_error(a, err.msg)) : 0;
}

void kerf_admission_answer_release(struct kerf_admission_answer *a)
{
	if (a) {
		free(a->body);
		a->body = NULL;
	}
}
