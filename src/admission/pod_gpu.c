/*
 * pod_gpu: what a pod asks of kerf, checked against the tenant's policy
 * (reliability.md §6.1 rows 20, 22-25, 27, 29, 34, 36): resource
 * quantities, whole GPUs against fractions and MIG, the fraction and
 * memory annotations, MIG profiles the tenant's pools offer, sharing and
 * isolation, gangs that can never fit, priority classes, the scheduler,
 * and node selection aimed at pools or GPUs the tenant does not hold.
 */
#include "admission/pod_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/quantity.h"
#include "core/mig/geometry.h"
#include "kobj/json_field.h"
#include "kobj/names.h"
#include "kobj/pod.h"

enum { POOLS_MAX = 64 };

/* Every quantity of a container's resources parses; GPU ones are whole,
 * given as limits, and equal to their requests. */
static void check_resources(void *ctx, enum kerf_container_kind kind,
			    const json_t *c, const char *cpath)
{
	struct kerf_pod_check *ck = ctx;
	const json_t *r = kerf_json_get(c, "resources");
	const json_t *lim = kerf_json_get(r, "limits");
	const json_t *req = kerf_json_get(r, "requests");
	const json_t *sets[2] = { lim, req };
	static const char *const names[2] = { "limits", "requests" };
	char field[KERF_ADMISSION_FIELD_MAX], shown[96];
	struct kerf_err err;

	(void)kind;
	for (int s = 0; s < 2; s++) {
		const char *k;
		const json_t *v;

		json_object_foreach((json_t *)sets[s], k, v) {
			int64_t x;
			bool gpu = kerf_pod_gpu_resource(k);

			kerf_admission_field(field, "%s.resources.%s.%s", cpath,
				 names[s], kerf_escape(shown, sizeof(shown), k));
			kerf_err_clear(&err);
			if (!json_is_string(v)) {
				kerf_admission_deny(ck->d, "resource-quantity", field,
						    "expected a quantity string");
				continue;
			}
			if (kerf_quantity_parse_field(field, json_string_value(v),
						      gpu ? KERF_QTY_WHOLE : KERF_QTY_MILLI,
						      &x, &err) < 0) {
				const char *msg = strncmp(err.msg, field, strlen(field)) ? err.msg
					: err.msg + strlen(field) + (err.msg[strlen(field)] == ':' ? 2 : 0);

				kerf_admission_deny(ck->d, "resource-quantity", field,
						    "%s", msg);
				continue;
			}
			if (x < 0) {
				kerf_admission_deny(ck->d, "resource-quantity", field,
						    "may not be negative");
				continue;
			}
			if (!strcmp(k, KERF_RES_GPU) && x > KERF_POD_GPUS_MAX) {
				kerf_admission_deny(ck->d, "gpu-resource", field,
						    "%lld GPUs: no node has more than %d (a container's GPUs are on one node)",
						    (long long)x, KERF_POD_GPUS_MAX);
				continue;
			}
			if (gpu && s == 1) {
				const json_t *l = kerf_json_get(lim, k);

				if (!l)
					kerf_admission_deny(ck->d, "gpu-resource", field,
							    "a GPU request needs the same limit (GPUs are not overcommitted)");
				else if (!json_equal((json_t *)l, (json_t *)v)) {
					int64_t y;

					if (!json_is_string(l) ||
					    kerf_quantity_parse_whole(json_string_value(l), &y) < 0 ||
					    y != x)
						kerf_admission_deny(ck->d, "gpu-resource", field,
								    "must equal the limit");
				}
			}
		}
	}
}

/* Does any of the tenant's pools offer this MIG profile? */
static bool mig_offered(const struct kerf_admission_pool *const *pools,
			size_t n, const char *profile)
{
	for (size_t i = 0; i < n; i++) {
		const struct kerf_kobj_gpupool *gp = &pools[i]->p;

		if (!gp->mig || gp->mig_policy == KERF_KOBJ_MIG_NONE ||
		    kerf_mig_profile_find(gp->mig, profile) < 0)
			continue;
		if (gp->mig_policy == KERF_KOBJ_MIG_DYNAMIC)
			return true;
		for (size_t l = 0; l < gp->nr_layout; l++)
			if (!strcmp(gp->layout[l], profile))
				return true;
	}
	return false;
}

static void pool_names(const struct kerf_admission_pool *const *pools,
		       size_t n, char *out, size_t size)
{
	size_t len = 0;

	out[0] = 0;
	for (size_t i = 0; i < n && len < size; i++) {
		int w = snprintf(out + len, size - len, "%s%s", i ? ", " : "",
				 pools[i]->p.name);

		if (w < 0)
			break;
		len += (size_t)w;
	}
	if (!n)
		snprintf(out, size, "none");
}

static void check_fraction(struct kerf_pod_check *ck,
			   const struct kerf_admission_pool *const *pools,
			   size_t nr_pools)
{
	const struct kerf_pod_facts *f = ck->f;
	const json_t *ann = f->annotations;
	const char *frac = json_string_value(kerf_json_get(ann, KERF_ANN_GPU_FRACTION));
	const char *mem = json_string_value(kerf_json_get(ann, KERF_ANN_GPU_MEMORY));
	const char *share = json_string_value(kerf_json_get(ann, KERF_ANN_GPU_SHARING));
	char shown[64];
	uint32_t ways = 0;

	for (size_t i = 0; i < nr_pools; i++)
		ways |= pools[i]->p.sharing;
	if (kerf_json_get(ann, KERF_ANN_GPU_FRACTION)) {
		const char *field = "metadata.annotations.kerf.io/gpu-fraction";
		const char *s = frac ? frac : "";
		size_t n = strlen(s);
		const char *dot = strchr(s, '.');
		/* a plain decimal ("0.25", ".5") or milli ("250m"), nothing else */
		bool dec = n && dot && strspn(s, "0123456789.") == n &&
			   !strchr(dot + 1, '.') && strlen(dot + 1) >= 1;
		bool milli = n >= 2 && s[n - 1] == 'm' &&
			     strspn(s, "0123456789") == n - 1;

		if (!frac || !(dec || milli))
			kerf_admission_deny(ck->d, "gpu-fraction", field,
					    "'%s': expected a decimal fraction of one GPU such as 0.25 or 250m",
					    kerf_escape(shown, sizeof(shown), s));
		else if (dec && strlen(dot + 1) > 3)
			kerf_admission_deny(ck->d, "gpu-fraction", field,
					    "'%s': at most three decimals (kerf counts thousandths of a GPU)",
					    kerf_escape(shown, sizeof(shown), s));
		else if (f->fraction_milli <= 0)
			kerf_admission_deny(ck->d, "gpu-fraction", field,
					    "'%s': must be above 0 and below 1 (a whole GPU is nvidia.com/gpu)",
					    kerf_escape(shown, sizeof(shown), s));
		if (f->whole_gpus || f->mig_profile)
			kerf_admission_deny(ck->d, "gpu-ambiguous", field,
					    "a fraction together with %s in the same pod counts the GPU twice",
					    f->whole_gpus ? "nvidia.com/gpu" : "a MIG instance");
		if (f->tenant && f->tenant->isolation == KERF_ISOLATION_HARDWARE)
			kerf_admission_deny(ck->d, "isolation", field,
					    "tenant '%s' has isolation Hardware: exclusive GPUs or MIG instances only",
					    f->tenant->name);
		if (nr_pools && !(ways & (KERF_KOBJ_SHARE_MPS | KERF_KOBJ_SHARE_TIMESLICE)))
			kerf_admission_deny(ck->d, "gpu-fraction", field,
					    "no pool of the tenant shares GPUs (sharing MPS or TimeSlice)");
	}
	if (kerf_json_get(ann, KERF_ANN_GPU_MEMORY)) {
		const char *field = "metadata.annotations.kerf.io/gpu-memory";
		const char *s = mem ? mem : "";
		size_t digits = strspn(s, "0123456789");
		const char *unit = s + digits;
		static const char *const units[] = { "", "Ki", "Mi", "Gi", "Ti", "k", "M", "G", "T" };
		bool unit_ok = false;
		int64_t max = kerf_pod_max_gpu_mem(ck->p, f);

		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(unit, units[i]))
				unit_ok = true;
		if (!mem || !digits || !unit_ok || f->gpu_mem_bytes <= 0)
			kerf_admission_deny(ck->d, "gpu-memory", field,
					    "'%s': expected a whole amount of memory above 0 such as 10Gi or 512Mi",
					    kerf_escape(shown, sizeof(shown), s));
		else if (max && f->gpu_mem_bytes > max)
			kerf_admission_deny(ck->d, "gpu-memory", field,
					    "'%s' fits no GPU of the tenant's pools (the largest has %lld MiB)",
					    kerf_escape(shown, sizeof(shown), s),
					    (long long)(max >> 20));
		if (!frac)
			kerf_admission_deny(ck->d, "gpu-memory", field,
					    "GPU memory is asked together with kerf.io/gpu-fraction");
	}
	if (kerf_json_get(ann, KERF_ANN_GPU_SHARING)) {
		const char *field = "metadata.annotations.kerf.io/gpu-sharing";

		if (!f->sharing)
			kerf_admission_deny(ck->d, "gpu-sharing", field,
					    "'%s': expected mps or timeslice",
					    kerf_escape(shown, sizeof(shown), share ? share : ""));
		else if (nr_pools && !(ways & (!strcmp(f->sharing, "mps") ? KERF_KOBJ_SHARE_MPS
									  : KERF_KOBJ_SHARE_TIMESLICE)))
			kerf_admission_deny(ck->d, "gpu-sharing", field,
					    "no pool of the tenant allows %s",
					    !strcmp(f->sharing, "mps") ? "MPS" : "TimeSlice");
		else if (!frac)
			kerf_admission_deny(ck->d, "gpu-sharing", field,
					    "sharing applies to a kerf.io/gpu-fraction");
	}
}

/* GPUs of the whole gang in GPU-milli, against the tenant and cluster. */
static void check_gang(struct kerf_pod_check *ck,
		       const struct kerf_admission_pool *const *pools,
		       size_t nr_pools)
{
	const struct kerf_pod_facts *f = ck->f;
	const json_t *v = kerf_json_get(f->annotations, KERF_ANN_GANG_SIZE);
	const char *field = "metadata.annotations.kerf.io/gang-size";
	const char *s = json_string_value(v);
	char shown[64];
	int64_t size = 1, per_pod, need, quota = 0, cluster = 0;
	bool quota_known = f->tenant && ck->p->nr_pools > 0;
	bool cluster_known = nr_pools > 0;

	if (v) {
		size_t n = s ? strlen(s) : 0;

		if (!n || n > 4 || strspn(s, "0123456789") != n || s[0] == '0' ||
		    (size = strtoll(s, NULL, 10)) > KERF_GANG_MAX_SIZE) {
			kerf_admission_deny(ck->d, "gang", field,
					    "'%s': expected a whole number of pods from 1 to %d",
					    kerf_escape(shown, sizeof(shown), s ? s : ""),
					    KERF_GANG_MAX_SIZE);
			return;
		}
		if (!kerf_json_get(f->labels, KERF_LABEL_GANG))
			kerf_admission_deny(ck->d, "gang", field,
					    "a gang size needs the kerf.io/gang label naming the gang");
	}
	per_pod = f->whole_gpus * 1000 + f->fraction_milli;
	if (f->mig_profile) {
		for (size_t i = 0; i < nr_pools; i++) {
			int pi = pools[i]->p.mig ? kerf_mig_profile_find(pools[i]->p.mig, f->mig_profile) : -1;

			if (pi >= 0) {
				per_pod += kerf_mig_gpu_milli(pools[i]->p.mig, (unsigned)pi);
				break;
			}
		}
	}
	if (!per_pod)
		return;
	need = per_pod * size;
	/* what the tenant can ever hold: nominal plus borrowing limit over
	 * every pool, unknown when one is unlimited (no entry: the default) */
	for (size_t i = 0; f->tenant && i < ck->p->nr_pools; i++) {
		const struct kerf_kobj_quota *qu =
			kerf_tenant_quota(f->tenant, ck->p->pools[i].p.name);

		if (!qu || qu->borrow_limit == KERF_QTY_INF) {
			quota_known = false;
			break;
		}
		quota += qu->nominal + qu->borrow_limit;
	}
	for (size_t i = 0; i < nr_pools; i++) {
		if (pools[i]->gpus < 0)
			cluster_known = false;
		else
			cluster += (int64_t)pools[i]->gpus * 1000;
	}
	if (quota_known && need > quota)
		kerf_admission_deny(ck->d, "gang-fit", v ? field : "spec.containers",
				    "%lld pod(s) of %s GPUs need %s GPUs, more than tenant '%s' can ever hold (nominal plus borrowing limit: %s)",
				    (long long)size,
				    kerf_kobj_format_milli(shown, 24, per_pod),
				    kerf_kobj_format_milli(shown + 24, 20, need),
				    f->tenant->name,
				    kerf_kobj_format_milli(shown + 44, 20, quota));
	else if (cluster_known && need > cluster)
		kerf_admission_deny(ck->d, "gang-fit", v ? field : "spec.containers",
				    "%lld pod(s) of %s GPUs need %s GPUs, more than the tenant's pools have",
				    (long long)size,
				    kerf_kobj_format_milli(shown, 24, per_pod),
				    kerf_kobj_format_milli(shown + 24, 20, need));
}

/*
 * A new member of a gang kerf already holds must have its class (§6.1 row
 * 30): a gang is one workload with one priority.  On CREATE only: the
 * gang's own members are in it by then.
 */
static void check_gang_class(struct kerf_pod_check *ck)
{
	const char *gang = json_string_value(kerf_json_get(ck->f->labels, KERF_LABEL_GANG));
	const char *mine = kerf_str(ck->f->spec, "priorityClassName");
	const char *theirs;
	char a[96], b[96];

	if (!gang || ck->req->op != KERF_ADMISSION_CREATE)
		return;
	theirs = kerf_admission_policy_gang_class(ck->p, ck->req->namespace, gang);
	if (theirs && strcmp(theirs, mine))
		kerf_admission_deny(ck->d, "gang", "spec.priorityClassName",
				    "'%s': gang '%s' already has pods of priority class '%s' (a gang has one priority)",
				    kerf_escape(a, sizeof(a), mine), gang,
				    kerf_escape(b, sizeof(b), theirs));
}

static void check_priority(struct kerf_pod_check *ck)
{
	const struct kerf_pod_facts *f = ck->f;
	const struct kerf_kobj_tenant *t = f->tenant;
	const char *name = kerf_str(f->spec, "priorityClassName");
	const struct kerf_kpc *pc;
	const char *field = "spec.priorityClassName";
	char shown[96];

	if (!*name)
		return;
	kerf_escape(shown, sizeof(shown), name);
	if (!strncmp(name, "system-", 7)) {
		kerf_admission_deny(ck->d, "priority-class", field,
				    "'%s' is reserved for the cluster's own components", shown);
		return;
	}
	pc = kerf_admission_policy_class(ck->p, name);
	if (!pc) {
		kerf_admission_deny(ck->d, "priority-class", field,
				    "'%s': no such PriorityClass", shown);
		return;
	}
	if (t && t->nr_allowed_classes) {
		bool ok = false;

		for (size_t i = 0; i < t->nr_allowed_classes; i++)
			if (!strcmp(t->allowed_classes[i], name))
				ok = true;
		if (!ok)
			kerf_admission_deny(ck->d, "priority-class", field,
					    "'%s' is not among tenant '%s''s allowedPriorityClasses",
					    shown, t->name);
	}
	if (t && t->has_ceiling) {
		int64_t ceiling = t->ceiling_value;

		if (t->ceiling_class[0]) {
			const struct kerf_kpc *cc = kerf_admission_policy_class(ck->p, t->ceiling_class);

			ceiling = cc ? cc->value : INT64_MIN;
		}
		if (pc->value > ceiling)
			kerf_admission_deny(ck->d, "priority-ceiling", field,
					    "'%s' (%d) is above tenant '%s''s priority ceiling (%lld)",
					    shown, pc->value, t->name, (long long)ceiling);
	}
	{
		const json_t *prio = kerf_json_get(f->spec, "priority");
		const char *pp = kerf_str(f->spec, "preemptionPolicy");

		if (json_is_integer(prio) && json_integer_value(prio) != pc->value)
			kerf_admission_deny(ck->d, "priority-class", "spec.priority",
					    "%lld is not the value of '%s' (%d)",
					    (long long)json_integer_value(prio), shown, pc->value);
		if (*pp && pc->preemption != KERF_PREEMPT_UNSET &&
		    kerf_preemption_policy_parse(pp) != pc->preemption)
			kerf_admission_deny(ck->d, "priority-class", "spec.preemptionPolicy",
					    "'%s' differs from the class '%s'",
					    pp, shown);
	}
}

/* A node label key the tenant may not aim at: a pool it holds no quota
 * in, or a single GPU. */
static void check_node_key(struct kerf_pod_check *ck, const char *field,
			   const char *key, const char *value,
			   const struct kerf_admission_pool *const *mine,
			   size_t nr_mine)
{
	char shown[96];

	if (strstr(key, "uuid") && (!strncmp(key, "kerf.io/", 8) ||
				    !strncmp(key, "nvidia.com/", 11))) {
		kerf_admission_deny(ck->d, "pool", field,
				    "'%s' aims at a single GPU; kerf assigns GPUs",
				    kerf_escape(shown, sizeof(shown), key));
		return;
	}
	for (size_t i = 0; i < ck->p->nr_pools; i++) {
		const struct kerf_kobj_gpupool *gp = &ck->p->pools[i].p;
		bool held = false;

		for (size_t m = 0; m < nr_mine; m++)
			if (&mine[m]->p == gp)
				held = true;
		if (held)
			continue;
		for (size_t l = 0; l < gp->nr_match_labels; l++)
			if (!strcmp(gp->match_labels[l].key, key) &&
			    (!value || !strcmp(gp->match_labels[l].value, value))) {
				bool also_mine = false;

				/* the label may select one of the tenant's pools too */
				for (size_t m = 0; value && m < nr_mine; m++)
					for (size_t ml = 0; ml < mine[m]->p.nr_match_labels; ml++)
						if (!strcmp(mine[m]->p.match_labels[ml].key, key) &&
						    !strcmp(mine[m]->p.match_labels[ml].value, value))
							also_mine = true;
				if (!also_mine) {
					kerf_admission_deny(ck->d, "pool", field,
							    "selects pool '%s', where tenant '%s' holds no quota",
							    gp->name, ck->f->tenant ? ck->f->tenant->name : "");
					return;
				}
			}
	}
}

static void check_affinity(struct kerf_pod_check *ck,
			   const struct kerf_admission_pool *const *mine,
			   size_t nr_mine)
{
	const json_t *sel = kerf_json_get(ck->f->spec, "nodeSelector");
	const json_t *terms = kerf_json_get(kerf_json_get(kerf_json_get(kerf_json_get(
		ck->f->spec, "affinity"), "nodeAffinity"),
		"requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
	const char *k;
	const json_t *v, *t;
	char field[KERF_ADMISSION_FIELD_MAX], shown[96];
	size_t i;

	json_object_foreach((json_t *)sel, k, v) {
		kerf_admission_field(field, "spec.nodeSelector.%s",
			 kerf_escape(shown, sizeof(shown), k));
		check_node_key(ck, field, k, json_string_value(v), mine, nr_mine);
	}
	json_array_foreach(terms, i, t) {
		const json_t *e;
		size_t j;

		json_array_foreach(kerf_json_get(t, "matchExpressions"), j, e) {
			const char *op = kerf_str(e, "operator");
			const json_t *vals = kerf_json_get(e, "values");
			const json_t *val;
			size_t x;

			kerf_admission_field(field, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%zu].matchExpressions[%zu]",
				 i, j);
			if (strcmp(op, "In") && strcmp(op, "Exists"))
				continue;   /* NotIn, DoesNotExist, Gt, Lt narrow */
			if (!strcmp(op, "Exists") || !json_array_size(vals))
				check_node_key(ck, field, kerf_str(e, "key"), NULL, mine, nr_mine);
			json_array_foreach(vals, x, val)
				check_node_key(ck, field, kerf_str(e, "key"),
					       json_string_value(val), mine, nr_mine);
		}
	}
}

void kerf_pod_check_gpu(struct kerf_pod_check *ck)
{
	const struct kerf_pod_facts *f = ck->f;
	const struct kerf_admission_pool *pools[POOLS_MAX];
	size_t nr = kerf_tenant_pools(ck->p, f->tenant, pools, POOLS_MAX);
	const char *sched = kerf_str(f->spec, "schedulerName");
	char names[256];

	kerf_pod_each_container(f->spec, check_resources, ck);
	check_fraction(ck, pools, nr);
	if (f->mig_profile && f->whole_gpus)
		kerf_admission_deny(ck->d, "gpu-ambiguous", "spec.containers",
				    "whole GPUs and a MIG instance in one pod");
	if (f->mig_profile && ck->p->nr_pools && !mig_offered(pools, nr, f->mig_profile)) {
		pool_names(pools, nr, names, sizeof(names));
		kerf_admission_deny(ck->d, "mig-profile", "spec.containers",
				    "MIG profile '%s' is offered by none of the tenant's pools (%s)",
				    f->mig_profile, names);
	}
	if (f->gpu_runtime && !f->requests_gpu)
		kerf_admission_deny(ck->d, "runtime-class", "spec.runtimeClassName",
				    "'%s' injects GPUs (an image's NVIDIA_VISIBLE_DEVICES=all) into a pod that asks for none",
				    kerf_str(f->spec, "runtimeClassName"));
	if (f->requests_gpu && f->tenant_ns) {
		if (ck->req->op == KERF_ADMISSION_CREATE &&
		    *kerf_str(f->spec, "nodeName"))
			kerf_admission_deny(ck->d, "node-name", "spec.nodeName",
					    "a GPU pod may not name its node: kerf places it within the tenant's quota");
		if (strcmp(sched, ck->p->cfg.scheduler_name))
			kerf_admission_deny(ck->d, "scheduler-name", "spec.schedulerName",
					    "'%s': GPU pods of tenant namespaces are scheduled by '%s'",
					    sched, ck->p->cfg.scheduler_name);
		if (!f->tenant)
			kerf_admission_deny(ck->d, "tenant-label", "metadata.namespace",
					    "the namespace's tenant '%s' does not exist",
					    f->ns->tenant);
		else if (kerf_admission_policy_has_children(ck->p, f->tenant->name))
			kerf_admission_deny(ck->d, "tenant-label", "metadata.namespace",
					    "the namespace's tenant '%s' has child tenants; pods belong to leaf tenants",
					    f->tenant->name);
	}
	check_gang(ck, pools, nr);
	check_gang_class(ck);
	check_priority(ck);
	check_affinity(ck, pools, nr);
}
