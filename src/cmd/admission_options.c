#include "cmd/admission_options.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"

const struct option kerf_admission_longopts[KERF_ADM_OPT_NR] = {
	{ "kerf-user", required_argument, NULL, KERF_ADM_OPT_BASE + 0 },
	{ "label-user", required_argument, NULL, KERF_ADM_OPT_BASE + 1 },
	{ "label-group", required_argument, NULL, KERF_ADM_OPT_BASE + 2 },
	{ "exclude-namespace", required_argument, NULL, KERF_ADM_OPT_BASE + 3 },
	{ "gpu-runtime-class", required_argument, NULL, KERF_ADM_OPT_BASE + 4 },
	{ "allow-host-path", required_argument, NULL, KERF_ADM_OPT_BASE + 5 },
	{ "gpu-taint", required_argument, NULL, KERF_ADM_OPT_BASE + 6 },
	{ "nccl-ib-hca", required_argument, NULL, KERF_ADM_OPT_BASE + 7 },
	{ "default-priority-class", required_argument, NULL, KERF_ADM_OPT_BASE + 8 },
	{ "interposer", no_argument, NULL, KERF_ADM_OPT_BASE + 9 },
	{ "gpu-device-class", required_argument, NULL, KERF_ADM_OPT_BASE + 10 },
};

const char kerf_admission_options_help[] =
	"admission (each list option may repeat; the first replaces the default):\n"
	"  --kerf-user USER        kerf's identity, may write allocation annotations\n"
	"                          (system:serviceaccount:kerf-system:kerf)\n"
	"  --label-user USER       may set a namespace's kerf.io/tenant (kerf's identity)\n"
	"  --label-group GROUP     the same, by group (system:masters)\n"
	"  --exclude-namespace NS  never judged (kube-system, kube-public,\n"
	"                          kube-node-lease, kerf-system)\n"
	"  --gpu-runtime-class RC  runtime classes that inject GPUs (nvidia,\n"
	"                          nvidia-cdi, nvidia-legacy)\n"
	"  --allow-host-path PATH  a hostPath prefix tenants may mount (none)\n"
	"  --gpu-taint KEY:EFFECT  GPU nodes' taint that GPU pods tolerate\n"
	"                          (nvidia.com/gpu:NoSchedule)\n"
	"  --nccl-ib-hca HCAS      NCCL_IB_HCA for tenants with an RDMA class (none)\n"
	"  --default-priority-class NAME  for pods without one (the tenant's lowest)\n"
	"  --interposer            limits are enforced by an LD_PRELOAD interposer:\n"
	"                          refuse LD_LIBRARY_PATH too\n"
	"  --gpu-device-class NAME DRA device classes that give GPUs, refused in\n"
	"                          tenants' claims (gpu.nvidia.com, mig.nvidia.com,\n"
	"                          gpu.amd.com)\n";

static int bad(const char *prog, int i, const char *arg, const char *why)
{
	char shown[96];

	fprintf(stderr, "%s: --%s '%s': %s\n", prog, kerf_admission_longopts[i].name,
		kerf_escape(shown, sizeof(shown), arg), why);
	return -1;
}

int kerf_admission_option(const char *prog, int opt, const char *arg,
			     struct kerf_admission_config *c,
			     struct kerf_admission_opt_state *st)
{
	struct kerf_admission_list *lists[] = {
		&c->kerf_users, &c->label_users, &c->label_groups,
		&c->excluded_namespaces, &c->gpu_runtime_classes,
		&c->host_path_allowed, &c->gpu_taints, NULL, NULL, NULL,
		&c->gpu_device_classes,
	};
	int i = opt - KERF_ADM_OPT_BASE;
	int rc;

	if (i < 0 || i >= KERF_ADM_OPT_NR)
		return -1;
	if (i == 9) {
		c->interposer = true;
		return 0;
	}
	if (i == 7 || i == 8) {
		char *dst = i == 7 ? c->nccl_ib_hca : c->default_priority_class;

		if (!*arg || strlen(arg) >= KERF_ADMISSION_ENTRY_MAX)
			return bad(prog, i, arg, "1 to 253 bytes");
		memcpy(dst, arg, strlen(arg) + 1);
		return 0;
	}
	if (i == 5 && arg[0] != '/')
		return bad(prog, i, arg, "an absolute path");
	if (i == 6) {
		const char *colon = strrchr(arg, ':');

		if (!colon || colon == arg ||
		    (strcmp(colon + 1, "NoSchedule") && strcmp(colon + 1, "PreferNoSchedule") &&
		     strcmp(colon + 1, "NoExecute")))
			return bad(prog, i, arg, "KEY:EFFECT, the effect NoSchedule, PreferNoSchedule or NoExecute");
	}
	if (!(st->replaced & (1u << i))) {
		st->replaced |= 1u << i;
		lists[i]->nr = 0;
	}
	rc = kerf_admission_list_add(lists[i], arg);   /* i: 0..6 or 10 */
	if (rc == -KERF_ELIMIT)
		return bad(prog, i, arg, "too many (at most 16)");
	if (rc < 0)
		return bad(prog, i, arg, "1 to 253 bytes");
	return 0;
}
