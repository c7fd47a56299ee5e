/*
 * pod_meta: the labels and annotations of a pod (reliability.md §6.1 rows
 * 2 of §6, 21, 30-33): kerf.io/ keys by who may write them, device
 * injection annotations (cdi.k8s.io/), the legacy seccomp and AppArmor
 * annotations, and what may not change once a pod is admitted.
 */
#include "admission/pod_rules.h"

#include <stdio.h>
#include <string.h>

#include "admission/netclass.h"
#include "base/buf.h"
#include "kobj/json_field.h"
#include "kobj/names.h"

#define KERF_PREFIX "kerf.io/"
#define KERF_LABEL_QUEUE "kerf.io/queue"
#define KERF_ANN_DSCP "kerf.io/dscp"

/* kerf.io/ annotations a user may set; changing them later is refused. */
static const char *const user_annotations[] = {
	KERF_ANN_GANG_SIZE, KERF_ANN_GPU_FRACTION, KERF_ANN_GPU_MEMORY,
	KERF_ANN_GPU_SHARING, "kerf.io/gang-topology",
	"kerf.io/workload-profile",
};

/* kerf.io/ annotations only kerf writes (the allocation and its clock). */
static const char *const kerf_annotations[] = {
	KERF_ANN_ASSIGNED_GPUS, KERF_ANN_ASSIGNED_MIG,
	KERF_ANN_ASSIGNED_FRACTION, KERF_ANN_PLANNED_NODE,
	KERF_ANN_PREEMPT_AT, KERF_ANN_LAST_CHECKPOINT,
};

static bool is_kerf(const struct kerf_pod_check *ck)
{
	return kerf_admission_list_has(&ck->p->cfg.kerf_users,
				       ck->req->user.username);
}

static bool same(const json_t *a, const json_t *b)
{
	return (!a && !b) || (a && b && json_equal((json_t *)a, (json_t *)b));
}

/* The key's prefix ("cdi.k8s.io" of "cdi.k8s.io/x"), into out. */
static const char *key_prefix(const char *k, char *out, size_t size)
{
	const char *slash = strchr(k, '/');
	size_t n = slash ? (size_t)(slash - k) : 0;

	if (n >= size)
		n = size - 1;
	memcpy(out, k, n);
	out[n] = 0;
	return out;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail) &&
	       (n == t || s[n - t - 1] == '.');
}

static void check_annotation(struct kerf_pod_check *ck, const char *k,
			     const json_t *v)
{
	const json_t *oldann = kerf_json_get(kerf_json_get(ck->old, "metadata"),
					     "annotations");
	char field[KERF_ADMISSION_FIELD_MAX], shown[96], prefix[256];
	const char *s = json_string_value(v);

	kerf_admission_field(field, "metadata.annotations.%s",
		 kerf_escape(shown, sizeof(shown), k));
	key_prefix(k, prefix, sizeof(prefix));
	if (ends_with(prefix, "cdi.k8s.io")) {
		kerf_admission_deny(ck->d, "device-annotation", field,
				    "CDI annotations ask the container runtime for devices directly; kerf assigns devices");
		return;
	}
	if ((!strcmp(k, "seccomp.security.alpha.kubernetes.io/pod") ||
	     !strncmp(k, "container.seccomp.security.alpha.kubernetes.io/", 47)) &&
	    s && !strcmp(s, "unconfined")) {
		kerf_admission_deny(ck->d, "seccomp", field,
				    "unconfined is not allowed: use runtime/default");
		return;
	}
	if (!strncmp(k, "container.apparmor.security.beta.kubernetes.io/", 47) &&
	    s && !strcmp(s, "unconfined")) {
		kerf_admission_deny(ck->d, "apparmor", field,
				    "unconfined is not allowed");
		return;
	}
	if (strncmp(k, KERF_PREFIX, strlen(KERF_PREFIX)))
		return;
	if (IN(k, user_annotations) || !strcmp(k, KERF_ANN_CHECKPOINT_DONE))
		return;
	if (!strcmp(k, KERF_ANN_DSCP)) {
		const struct kerf_netclass *nc =
			ck->f->tenant && ck->f->tenant->network_class[0]
			? kerf_netclass_find(ck->f->tenant->network_class) : NULL;
		char want[16];

		if (nc)
			snprintf(want, sizeof(want), "%d", nc->dscp);
		if (!nc || !s || strcmp(s, want))
			kerf_admission_deny(ck->d, "network-class", field,
					    nc ? "must be %s, the DSCP of the tenant's network class" :
					    "%sthe tenant has no network class; kerf sets this annotation",
					    nc ? want : "");
		return;
	}
	if (IN(k, kerf_annotations)) {
		if (is_kerf(ck))
			return;
		if (ck->req->op == KERF_ADMISSION_CREATE)
			kerf_admission_deny(ck->d, "allocation-annotation", field,
					    "only kerf writes the allocation annotations; a pod may not be created with one");
		else if (!same(v, kerf_json_get(oldann, k)))
			kerf_admission_deny(ck->d, "allocation-annotation", field,
					    "only kerf may change the allocation annotations");
		return;
	}
	if (ck->req->op == KERF_ADMISSION_UPDATE &&
	    same(v, kerf_json_get(oldann, k)))
		return;   /* there before: refused when it came */
	kerf_admission_deny(ck->d, "kerf-annotation", field,
			    "not an annotation kerf knows (see docs/api.md); kerf.io/ keys are kerf's");
}

static void check_labels(struct kerf_pod_check *ck)
{
	const struct kerf_pod_facts *f = ck->f;
	const char *k;
	const json_t *v;
	char field[KERF_ADMISSION_FIELD_MAX], shown[96], want[96];

	json_object_foreach((json_t *)f->labels, k, v) {
		const char *s = json_string_value(v);

		if (strncmp(k, KERF_PREFIX, strlen(KERF_PREFIX)))
			continue;
		kerf_admission_field(field, "metadata.labels.%s",
			 kerf_escape(shown, sizeof(shown), k));
		if (!strcmp(k, KERF_LABEL_TENANT) || !strcmp(k, KERF_LABEL_QUEUE)) {
			const char *t = f->ns ? f->ns->tenant : "";

			if (!s || strcmp(s, t))
				kerf_admission_deny(ck->d, "tenant-label", field,
						    "'%s' is not the namespace's tenant%s%s%s",
						    kerf_escape(shown, sizeof(shown), s ? s : ""),
						    *t ? " '" : " (the namespace has none)",
						    *t ? kerf_escape(want, sizeof(want), t) : "",
						    *t ? "'" : "");
		} else if (!strcmp(k, KERF_LABEL_GANG)) {
			size_t n = s ? strlen(s) : 0;

			if (!n || n > 63 || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != n ||
			    s[0] == '-' || s[n - 1] == '-')
				kerf_admission_deny(ck->d, "gang", field,
						    "'%s': a gang is named by a DNS label within the pod's namespace (no '/': gangs never span namespaces)",
						    kerf_escape(shown, sizeof(shown), s ? s : ""));
		} else if (!(ck->req->op == KERF_ADMISSION_UPDATE &&
			     same(v, kerf_json_get(kerf_json_get(kerf_json_get(ck->old, "metadata"), "labels"), k)))) {
			kerf_admission_deny(ck->d, "kerf-label", field,
					    "not a label kerf knows; kerf.io/ keys are kerf's");
		}
	}
}

/* What may not change once admitted: membership, tenant and GPU asks. */
static void check_immutable(struct kerf_pod_check *ck)
{
	static const char *const labels[] = { KERF_LABEL_TENANT, KERF_LABEL_QUEUE,
					      KERF_LABEL_GANG };
	const json_t *om = kerf_json_get(ck->old, "metadata");
	const json_t *ol = kerf_json_get(om, "labels");
	const json_t *oa = kerf_json_get(om, "annotations");
	char field[KERF_ADMISSION_FIELD_MAX];

	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!same(kerf_json_get(ck->f->labels, labels[i]),
			  kerf_json_get(ol, labels[i]))) {
			kerf_admission_field(field, "metadata.labels.%s", labels[i]);
			kerf_admission_deny(ck->d, "immutable", field,
					    "may not change after the pod is admitted (quota and gang accounting)");
		}
	for (size_t i = 0; i < sizeof(user_annotations) / sizeof(user_annotations[0]); i++)
		if (!same(kerf_json_get(ck->f->annotations, user_annotations[i]),
			  kerf_json_get(oa, user_annotations[i]))) {
			kerf_admission_field(field, "metadata.annotations.%s",
				 user_annotations[i]);
			kerf_admission_deny(ck->d, "immutable", field,
					    "may not change after the pod is admitted (quota and gang accounting)");
		}
}

void kerf_pod_check_meta(struct kerf_pod_check *ck)
{
	const char *k;
	const json_t *v;

	json_object_foreach((json_t *)ck->f->annotations, k, v)
		check_annotation(ck, k, v);
	if (ck->req->op == KERF_ADMISSION_UPDATE && ck->old) {
		/* an allocation annotation removed by someone else */
		const json_t *oa = kerf_json_get(kerf_json_get(ck->old, "metadata"),
						 "annotations");

		json_object_foreach((json_t *)oa, k, v)
			if (IN(k, kerf_annotations) && !is_kerf(ck) &&
			    !kerf_json_get(ck->f->annotations, k)) {
				char field[KERF_ADMISSION_FIELD_MAX];

				kerf_admission_field(field, "metadata.annotations.%s", k);
				kerf_admission_deny(ck->d, "allocation-annotation", field,
						    "only kerf may remove the allocation annotations");
			}
		check_immutable(ck);
	}
	check_labels(ck);
}
