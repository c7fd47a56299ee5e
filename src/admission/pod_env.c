/*
 * pod_env: the environment rules of a container (reliability.md §6.1
 * rows 10, 15-18 and the network class), over env and envFrom, whatever
 * the value's source: a name kerf forbids is refused with a literal value
 * or a valueFrom alike, and an envFrom that could import such a name (no
 * prefix, or a prefix that begins one) is refused too, because the
 * ConfigMap or Secret behind it can change after admission.
 */
#include "admission/pod_rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/netclass.h"
#include "base/buf.h"
#include "base/quantity.h"
#include "kobj/json_field.h"

enum name_class {
	NAME_OK = 0,
	NAME_DEVICE,        /* selects devices: NVIDIA_VISIBLE_DEVICES ... */
	NAME_MPS_DIR,       /* points at an MPS daemon */
	NAME_MPS_LIMIT,     /* an MPS client limit kerf sets */
	NAME_MPS_OTHER,     /* other MPS client settings */
	NAME_LIMIT,         /* an interposer's limits (HAMi-style) */
	NAME_PRELOAD,       /* loader injection */
	NAME_NET,           /* the fabric's traffic class */
};

/* A forbidden name or name prefix (prefix: ends with '_'), and its class. */
static const struct { const char *pat; enum name_class cls; } forbidden[] = {
	{ "NVIDIA_", NAME_DEVICE },
	{ "AMD_VISIBLE_DEVICES", NAME_DEVICE },
	{ "CUDA_MPS_PIPE_DIRECTORY", NAME_MPS_DIR },
	{ "CUDA_MPS_LOG_DIRECTORY", NAME_MPS_DIR },
	{ "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", NAME_MPS_LIMIT },
	{ "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", NAME_MPS_LIMIT },
	{ "CUDA_MPS_", NAME_MPS_OTHER },
	{ "CUDA_DEVICE_", NAME_LIMIT },
	{ "CUDA_OVERSUBSCRIBE", NAME_LIMIT },
	{ "LD_PRELOAD", NAME_PRELOAD },
	{ "LD_AUDIT", NAME_PRELOAD },
	{ "LD_LIBRARY_PATH", NAME_PRELOAD },
	{ "NCCL_IB_TC", NAME_NET },
	{ "NCCL_IB_FIFO_TC", NAME_NET },
	{ "NCCL_IB_SL", NAME_NET },
	{ "NCCL_GIN_IB_TC", NAME_NET },
	{ "UCX_IB_TRAFFIC_CLASS", NAME_NET },
	{ "UCX_IB_SL", NAME_NET },
};

/* NVIDIA_ names that only constrain or describe, never select devices. */
static bool nvidia_harmless(const char *n)
{
	return !strncmp(n, "NVIDIA_REQUIRE_", 15) ||
	       !strcmp(n, "NVIDIA_DISABLE_REQUIRE") ||
	       !strcmp(n, "NVIDIA_DRIVER_CAPABILITIES");
}

static enum name_class classify(const struct kerf_admission_policy *p,
				const char *n)
{
	for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
		const char *pat = forbidden[i].pat;
		size_t len = strlen(pat);
		bool prefix = pat[len - 1] == '_';

		if (prefix ? strncmp(n, pat, len) : strcmp(n, pat))
			continue;
		if (forbidden[i].cls == NAME_DEVICE && nvidia_harmless(n))
			return NAME_OK;
		if (!strcmp(pat, "LD_LIBRARY_PATH") && !p->cfg.interposer)
			return NAME_OK;
		return forbidden[i].cls;
	}
	return NAME_OK;
}

/* Could a name made of prefix and anything match a forbidden one? */
static bool prefix_unsafe(const char *prefix)
{
	size_t n = strlen(prefix);

	for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++) {
		size_t len = strlen(forbidden[i].pat);

		if (!strncmp(prefix, forbidden[i].pat, n < len ? n : len))
			return true;
	}
	return false;
}

/* A whole percentage 1..100 (MPS reads an integer). */
static int read_pct(const char *s)
{
	char *end;
	long v;

	if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 3)
		return -1;
	v = strtol(s, &end, 10);
	return v >= 1 && v <= 100 ? (int)v : -1;
}

/*
 * CUDA_MPS_PINNED_DEVICE_MEM_LIMIT: "2G", or "0=1G,1=512M" (devices by
 * ordinal or UUID).  The largest limit in bytes, or -1 when unreadable.
 */
static int64_t read_mem_limit(const char *s)
{
	char buf[256], *save = NULL, *tok;
	int64_t max = 0;

	if (!*s || strlen(s) >= sizeof(buf))
		return -1;
	memcpy(buf, s, strlen(s) + 1);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *q = eq ? eq + 1 : tok;
		size_t n = strlen(q);
		int64_t v;
		char qty[64];

		if (eq && eq == tok)
			return -1;
		/* MPS's units: G, M, K (the doc's example: MB), binary */
		if (!n || n > 40)
			return -1;
		snprintf(qty, sizeof(qty), "%s", q);
		if (n >= 2 && qty[n - 1] == 'B' && strchr("GMK", qty[n - 2]))
			qty[--n] = 0;
		if (strchr("GMK", qty[n - 1]))
			snprintf(qty + n, sizeof(qty) - n, "i");
		if (strspn(qty, "0123456789") == 0 ||
		    kerf_quantity_parse(qty, &v) < 0 || v <= 0)
			return -1;
		if (v > max)
			max = v;
	}
	return max;
}

/* The largest GPU memory the tenant's pods can land on; 0 unknown. */
int64_t kerf_pod_max_gpu_mem(const struct kerf_admission_policy *p,
			     const struct kerf_pod_facts *f)
{
	const struct kerf_admission_pool *pools[64];
	size_t n = kerf_tenant_pools(p, f->tenant, pools, 64);
	int64_t max = 0;

	if (!n)
		n = kerf_tenant_pools(p, NULL, pools, 64);
	for (size_t i = 0; i < n; i++) {
		if (!pools[i]->gpu_mem_mib)
			return 0;             /* one unknown: cannot bound */
		if (pools[i]->gpu_mem_mib * ((int64_t)1 << 20) > max)
			max = pools[i]->gpu_mem_mib * ((int64_t)1 << 20);
	}
	return max;
}

/* The value kerf sets for a network variable, or -1: none. */
static int32_t net_value(const struct kerf_netclass *nc, const char *n)
{
	if (!nc)
		return -1;
	if (!strcmp(n, "NCCL_IB_TC") || !strcmp(n, "NCCL_GIN_IB_TC") ||
	    !strcmp(n, "UCX_IB_TRAFFIC_CLASS"))
		return nc->nccl_ib_tc;
	if (!strcmp(n, "NCCL_IB_FIFO_TC"))
		return nc->nccl_ib_fifo_tc >= 0 ? nc->nccl_ib_fifo_tc : nc->nccl_ib_tc;
	if (!strcmp(n, "NCCL_IB_SL") || !strcmp(n, "UCX_IB_SL"))
		return nc->nccl_ib_sl;
	return -1;
}

/* v: the literal value ("" when none), NULL for a valueFrom. */
static void check_var(struct kerf_pod_check *ck, const char *path,
		      const char *n, const char *v)
{
	const struct kerf_admission_policy *p = ck->p;
	const struct kerf_pod_facts *f = ck->f;
	char shown[96];
	enum name_class cls = classify(p, n);

	kerf_escape(shown, sizeof(shown), n);
	switch (cls) {
	case NAME_OK:
		return;
	case NAME_DEVICE:
		kerf_admission_deny(ck->d, "device-env", path,
				    "%s selects GPUs outside the allocation (the container runtime injects what it names); kerf assigns devices through the device plugin",
				    shown);
		return;
	case NAME_MPS_DIR:
		kerf_admission_deny(ck->d, "mps-env", path,
				    "%s would point the container at another MPS daemon; kerf sets the MPS directories",
				    shown);
		return;
	case NAME_MPS_OTHER:
		kerf_admission_deny(ck->d, "mps-env", path,
				    "%s is an MPS client setting kerf does not let tenants choose",
				    shown);
		return;
	case NAME_LIMIT:
		kerf_admission_deny(ck->d, "limit-env", path,
				    "%s spoofs a GPU limit of the enforcement layer",
				    shown);
		return;
	case NAME_PRELOAD:
		kerf_admission_deny(ck->d, "preload-env", path,
				    "%s injects libraries into GPU processes and is not allowed in GPU pods",
				    shown);
		return;
	case NAME_MPS_LIMIT:
		break;
	case NAME_NET: {
		const struct kerf_netclass *nc = f->tenant && f->tenant->network_class[0]
			? kerf_netclass_find(f->tenant->network_class) : NULL;
		int32_t want = net_value(nc, n);
		char text[16];

		if (want >= 0 && v) {
			snprintf(text, sizeof(text), "%d", want);
			if (!strcmp(v, text))
				return;   /* what kerf sets */
		}
		if (want < 0)
			kerf_admission_deny(ck->d, "network-class", path,
					    "%s picks a traffic class of the fabric; the tenant's network class sets none",
					    shown);
		else
			kerf_admission_deny(ck->d, "network-class", path,
					    "%s must be %d, the tenant's network class '%s'",
					    shown, want, nc->name);
		return;
	}
	}
	/* the two MPS limits: literal values that only constrain further */
	if (!v) {
		kerf_admission_deny(ck->d, "mps-limit", path,
				    "%s must be a literal value (kerf sets it for fractions), not valueFrom",
				    shown);
		return;
	}
	if (!strcmp(n, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE")) {
		int pct = read_pct(v);
		int64_t cap = f->fraction_milli ? (f->fraction_milli + 9) / 10 : 100;

		if (pct < 0 || pct > cap)
			kerf_admission_deny(ck->d, "mps-limit", path,
					    "%s '%s': must be a whole percentage from 1 to %lld%s",
					    shown, kerf_escape(shown + 48, 48, v),
					    (long long)cap,
					    f->fraction_milli ? " (the pod's GPU fraction)" : "");
		return;
	}
	{
		int64_t lim = read_mem_limit(v);
		int64_t cap = f->gpu_mem_bytes ? f->gpu_mem_bytes
					       : kerf_pod_max_gpu_mem(p, f);

		if (lim < 0)
			kerf_admission_deny(ck->d, "mps-limit", path,
					    "%s '%s': expected a memory limit such as 4G or 0=4G,1=2G",
					    shown, kerf_escape(shown + 48, 48, v));
		else if (cap && kerf_mib_up(lim) > kerf_mib_up(cap))
			kerf_admission_deny(ck->d, "mps-limit", path,
					    "%s '%s': above the %lld MiB the pod may use",
					    shown, kerf_escape(shown + 48, 48, v),
					    (long long)kerf_mib_up(cap));
	}
}

void kerf_pod_check_env(struct kerf_pod_check *ck, const json_t *c,
			const char *cpath)
{
	const json_t *env = kerf_json_get(c, "env");
	const json_t *from = kerf_json_get(c, "envFrom");
	const json_t *e;
	size_t i;
	char path[KERF_ADMISSION_FIELD_MAX];

	json_array_foreach(env, i, e) {
		const char *n = json_string_value(kerf_json_get(e, "name"));

		kerf_admission_field(path, "%s.env[%zu]", cpath, i);
		if (!n) {
			kerf_admission_deny(ck->d, "malformed", path,
					    "name: expected a string");
			continue;
		}
		if (kerf_json_get(e, "value"))
			check_var(ck, path, n, kerf_str(e, "value"));
		else
			check_var(ck, path, n, kerf_json_get(e, "valueFrom") ? NULL : "");
	}
	json_array_foreach(from, i, e) {
		const char *prefix = kerf_str(e, "prefix");
		char shown[64];

		kerf_admission_field(path, "%s.envFrom[%zu].prefix", cpath, i);
		if (!*prefix)
			kerf_admission_deny(ck->d, "device-env", path,
					    "envFrom without a prefix may import NVIDIA_VISIBLE_DEVICES, CUDA_MPS_* or LD_PRELOAD from a ConfigMap or Secret that can change after admission; set a prefix such as APP_");
		else if (prefix_unsafe(prefix))
			kerf_admission_deny(ck->d, "device-env", path,
					    "the prefix '%s' can make a name kerf forbids (NVIDIA_*, CUDA_MPS_*, CUDA_DEVICE_*, LD_*, NCCL_IB_*, UCX_IB_*)",
					    kerf_escape(shown, sizeof(shown), prefix));
	}
}
