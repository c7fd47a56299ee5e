/*
 * agent_mps: one MPS control daemon per (GPU, UID) of the MPS shares the
 * node's pods were assigned (mps/mps.h), from the agent's loop.
 *
 * Each second the agent collects the pods bound here that have not ended
 * with kerf.io/gpu-sharing: mps, a kerf.io/assigned-fraction and one GPU in
 * kerf.io/assigned-gpus, and the UID their containers run as
 * (securityContext.runAsUser; a pod without one has no daemon, said
 * once).  Each (GPU, UID) gets a daemon limited from its pods' fraction
 * (the first pod's when they differ: the device plugin refuses the
 * others); a daemon no pod needs any more is stopped.  Every step the
 * manager checks the daemons: a dead one is Failed at once (N-07), its GPU
 * goes to kerf.io/mps-failed-gpus on the Node (written at once, so the
 * scheduler can keep new shares off it) and the device plugin refuses MPS
 * allocations there; the manager restarts it with the same limits and
 * the annotation goes when it runs again.
 */
#include "agent/agent_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MPS_EVERY_MS = 1000 };

static void changed(void *arg, const struct kerf_mps_view *v)
{
	struct kerf_agent *a = arg;

	if (v->state != KERF_MPS_RUNNING) {
		a->c.mps_failed_at_ms = kerf_agent_now_ms();
		fprintf(stderr, "kerf agent: MPS daemon of GPU %u, UID %u: %s: %s\n", v->gpu_index,
			v->uid, kerf_mps_state_name(v->state), v->why);
	}
	a->next_write_ms = 0;
}

int kerf_agent_mps_start(struct kerf_agent *a, struct kerf_err *err)
{
	struct kerf_mps_config cfg = { .root_dir = a->o.mps_root, .on_change = changed,
				       .on_change_arg = a };

	if (!a->o.mps_root)
		return 0;
	a->mps_exec.control_path = a->o.mps_control;
	kerf_mps_exec_ops(&a->mps_exec, &cfg.ops);
	return kerf_mps_new(&a->mps, &cfg, err);
}

void kerf_agent_mps_stop(struct kerf_agent *a)
{
	kerf_mps_free(a->mps);   /* the daemons keep running for the next agent */
	a->mps = NULL;
}

int kerf_agent_mps_lookup(void *arg, uint32_t gpu, uint32_t uid, struct kerf_mps_view *v)
{
	struct kerf_agent *a = arg;

	return a->mps ? kerf_mps_find(a->mps, gpu, uid, v) : -KERF_ENOTFOUND;
}

/* The GPU of a pod's one-GPU assignment, or -1. */
static int one_gpu(const struct agent_pod *p)
{
	uint64_t mask;

	if (!kerf_agent_pod_gpus(&p->kp, &mask) || (mask & (mask - 1)))
		return -1;
	return __builtin_ctzll(mask);
}

static uint64_t gpu_mem_mib(const struct kerf_agent *a, int gpu)
{
	for (uint32_t i = 0; i < a->inv.nr_gpus; i++)
		if ((int)a->inv.gpus[i].index == gpu)
			return a->inv.gpus[i].mem_mib;
	return 0;
}

static bool wanted(const struct kerf_agent *a, uint32_t gpu, uint32_t uid)
{
	size_t n = kerf_informer_size(a->pods_inf);

	for (size_t i = 0; i < n; i++) {
		const struct agent_pod *p = kerf_informer_at(a->pods_inf, i, NULL);

		if (p && p->mps && p->fraction_milli && p->uid == (int64_t)uid &&
		    one_gpu(p) == (int)gpu && p->kp.phase != KERF_PHASE_SUCCEEDED &&
		    p->kp.phase != KERF_PHASE_FAILED)
			return true;
	}
	return false;
}

static void start_for(struct kerf_agent *a, const struct agent_pod *p, int64_t now_ms)
{
	struct kerf_err err = { 0 };
	struct kerf_mps_daemon d = { .gpu_index = (uint32_t)one_gpu(p), .uid = (uint32_t)p->uid,
				     .gid = (uint32_t)p->gid };
	uint64_t mem = gpu_mem_mib(a, (int)d.gpu_index);
	size_t k;

	for (k = 0; k < a->nr_mps; k++)
		if (a->mps_running[k].gpu == d.gpu_index && a->mps_running[k].uid == d.uid)
			return;     /* the manager keeps it (and restarts it) */
	for (uint32_t i = 0; i < a->inv.nr_gpus; i++)
		if (a->inv.gpus[i].index == d.gpu_index)
			d.gpu_uuid = a->inv.gpus[i].uuid;
	if (!d.gpu_uuid || !mem ||
	    kerf_mps_limits_for_fraction(p->fraction_milli, mem, &d.limits, &err) < 0) {
		return;
	}
	if (a->nr_mps == KERF_MPS_MAX_DAEMONS)
		return;
	/* started or Failed with its restart scheduled: the manager has it */
	if (kerf_mps_start(a->mps, &d, now_ms, &err) < 0 &&
	    kerf_mps_find(a->mps, d.gpu_index, d.uid, &(struct kerf_mps_view){ 0 }) < 0) {
		fprintf(stderr, "kerf agent: MPS daemon of GPU %u, UID %u: %s\n", d.gpu_index,
			d.uid, err.msg);
		return;
	}
	a->mps_running[a->nr_mps].gpu = d.gpu_index;
	a->mps_running[a->nr_mps].uid = d.uid;
	a->nr_mps++;
}

void kerf_agent_mps_step(struct kerf_agent *a, int64_t now_ms)
{
	size_t n;
	uint64_t failed;

	if (!a->mps)
		return;
	kerf_mps_poll(a->mps, now_ms);
	failed = kerf_mps_failed_gpus(a->mps);
	if (failed != a->mps_failed) {
		a->mps_failed = failed;
		a->next_write_ms = 0;
	}
	if (now_ms < a->mps_next_ms)
		return;
	a->mps_next_ms = now_ms + MPS_EVERY_MS;
	n = kerf_informer_size(a->pods_inf);
	for (size_t i = 0; i < n; i++) {
		const struct agent_pod *p = kerf_informer_at(a->pods_inf, i, NULL);

		if (p && p->mps && p->fraction_milli && p->uid >= 0 && one_gpu(p) >= 0 &&
		    wanted(a, (uint32_t)one_gpu(p), (uint32_t)p->uid))
			start_for(a, p, now_ms);
	}
	for (size_t k = 0; k < a->nr_mps;) {
		struct kerf_err err = { 0 };

		if (wanted(a, a->mps_running[k].gpu, a->mps_running[k].uid)) {
			k++;
			continue;
		}
		kerf_mps_stop(a->mps, a->mps_running[k].gpu, a->mps_running[k].uid, &err);
		a->mps_running[k] = a->mps_running[--a->nr_mps];
	}
}

int kerf_agent_mps_metrics(const struct kerf_agent *a, struct kerf_buf *b)
{
	int rc = kerf_buf_add_str(b,
		"# HELP kerf_agent_mps_daemon_running 1 while the MPS daemon of a GPU and UID runs.\n"
		"# TYPE kerf_agent_mps_daemon_running gauge\n"
		"# HELP kerf_agent_mps_daemon_restarts_total Restarts of the MPS daemon after it failed.\n"
		"# TYPE kerf_agent_mps_daemon_restarts_total counter\n");

	for (size_t k = 0; rc == 0 && a->mps && k < a->nr_mps; k++) {
		struct kerf_mps_view v;

		if (kerf_mps_find(a->mps, a->mps_running[k].gpu, a->mps_running[k].uid, &v) < 0)
			continue;
		rc = kerf_buf_addf(b, "kerf_agent_mps_daemon_running{gpu=\"%u\",uid=\"%u\"} %d\n"
				   "kerf_agent_mps_daemon_restarts_total{gpu=\"%u\",uid=\"%u\"} %u\n",
				   v.gpu_index, v.uid, v.state == KERF_MPS_RUNNING, v.gpu_index, v.uid,
				   v.restarts);
	}
	return rc;
}
