/*
 * answer: one container's Allocate answer (answer.h).
 */
#include "deviceplugin/answer.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void add_env(struct kerf_dp_answer *a, const char *key, const char *value)
{
	a->envs[a->n_envs].key = key;
	snprintf(a->envs[a->n_envs].value, sizeof(a->envs[0].value), "%s", value);
	a->n_envs++;
}

static int answer_mig(const struct kerf_dp_device *d, const struct kerf_dp_pod_assign *pods,
		      size_t n_pods, struct kerf_dp_answer *out, struct kerf_err *err)
{
	int first = -1, n = 0, other = -1;

	for (size_t i = 0; i < n_pods; i++) {
		if (kerf_dp_device_is_for(d, &pods[i])) {
			if (n++ == 0)
				first = (int)i;
			else
				return kerf_err_set(err, -KERF_EEXIST,
					"MIG instance %s@%u on GPU %u is assigned to both '%.100s' and '%.100s'; refusing a double booking",
					d->mig_profile, d->mig_start, d->gpu_index,
					pods[first].key, pods[i].key);
		} else if (other < 0 && pods[i].mig_profile[0] &&
			   pods[i].gpu_mask == UINT64_C(1) << d->gpu_index) {
			other = (int)i;
		}
	}
	if (n == 0 && other >= 0)
		return kerf_err_set(err, -KERF_ENOTFOUND,
			"MIG device '%.63s' is %s@%u on GPU %u, but '%.100s' was assigned %s@%u (kerf.io/assigned-mig)",
			d->id, d->mig_profile, d->mig_start, d->gpu_index, pods[other].key,
			pods[other].mig_profile, pods[other].mig_start);
	if (n == 0)
		return kerf_err_set(err, -KERF_ENOTFOUND,
			"MIG device '%.63s' (%s@%u on GPU %u) is not the instance kerf assigned to any pending pod on this node (kerf.io/assigned-mig)",
			d->id, d->mig_profile, d->mig_start, d->gpu_index);
	out->pod = first;
	out->ids[0] = d->id;
	out->n_ids = 1;
	return 0;
}

/* The MPS part of a share: the daemon, the limits, the envs and the mount. */
static int answer_mps(const struct kerf_dp_device *d, const struct kerf_dp_pod_assign *pod,
		      kerf_dp_mps_fn mps, void *mps_arg, struct kerf_dp_answer *out,
		      struct kerf_err *err)
{
	struct kerf_dp_mps daemon;
	struct kerf_mps_limits want;
	char pct[KERF_MPS_TEXT_MAX], mem[KERF_MPS_TEXT_MAX];
	struct kerf_err e = { 0 };

	if (!mps || mps(mps_arg, d->gpu_index, pod->uid, &daemon) < 0)
		return kerf_err_set(err, -KERF_EBUSY,
			"'%.100s' shares GPU %u through MPS, but no MPS daemon runs on it for UID %u",
			pod->key, d->gpu_index, pod->uid);
	if (!daemon.healthy)
		return kerf_err_set(err, -KERF_EBUSY,
			"the MPS daemon of GPU %u (UID %u) has failed, so its MPS slices are failed and no new client is accepted until it is healthy again: %.200s",
			d->gpu_index, pod->uid, daemon.why);
	if (kerf_mps_limits_for_fraction(pod->fraction_milli, d->mem_mib, &want, &e) < 0)
		return kerf_err_set(err, e.code, "'%.100s' on GPU %u: %s", pod->key, d->gpu_index,
				    e.msg);
	if (!kerf_mps_limits_within(&want, &daemon.limits))
		return kerf_err_set(err, -KERF_ERANGE,
			"'%.100s': kerf.io/assigned-fraction %um of GPU %u needs %u%% of its threads and %" PRIu64 " MiB, more than its MPS daemon's %u%% and %" PRIu64 " MiB",
			pod->key, pod->fraction_milli, d->gpu_index, want.thread_pct,
			want.pinned_mem_mib, daemon.limits.thread_pct,
			daemon.limits.pinned_mem_mib);
	if (daemon.pipe_dir[0] != '/')
		return kerf_err_set(err, -KERF_EINVAL,
			"the MPS daemon of GPU %u: pipe directory '%.200s' is not an absolute path",
			d->gpu_index, daemon.pipe_dir);
	kerf_mps_limits_env(&want, pct, mem);
	add_env(out, "CUDA_MPS_PIPE_DIRECTORY", daemon.pipe_dir);
	add_env(out, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", pct);
	add_env(out, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", mem);
	snprintf(out->mount_path, sizeof(out->mount_path), "%s", daemon.pipe_dir);
	return 0;
}

static int answer_share(const struct kerf_dp_device *d, size_t n_ids,
			const struct kerf_dp_pod_assign *pods, size_t n_pods,
			kerf_dp_mps_fn mps, void *mps_arg, struct kerf_dp_answer *out,
			struct kerf_err *err)
{
	int first = -1;

	if (n_ids != 1)
		return kerf_err_set(err, -KERF_EINVAL,
			"devices_ids: %zu shares of GPUs in one request; a fraction is one share", n_ids);
	if (!d->gpu_id[0])
		return kerf_err_set(err, -KERF_EINVAL, "share '%.63s' names no GPU", d->id);
	for (size_t i = 0; i < n_pods; i++) {
		if (!kerf_dp_device_is_for(d, &pods[i]))
			continue;
		if (first < 0) {
			first = (int)i;
			continue;
		}
		const struct kerf_dp_pod_assign *a = &pods[first], *b = &pods[i];
		int mps_a = a->sharing == KERF_DP_SHARE_MPS, mps_b = b->sharing == KERF_DP_SHARE_MPS;
		if (mps_a != mps_b || (mps_a && (a->uid != b->uid ||
						   a->fraction_milli != b->fraction_milli)))
			return kerf_err_set(err, -KERF_EEXIST,
				"'%.100s' and '%.100s' both wait for a share of GPU %u with different MPS settings; cannot tell which this is for",
				a->key, b->key, d->gpu_index);
	}
	if (first < 0)
		return kerf_err_set(err, -KERF_ENOTFOUND,
			"share '%.63s' of GPU %u: no pending pod on this node has a fraction of it (kerf.io/assigned-fraction)",
			d->id, d->gpu_index);
	out->pod = first;
	out->ids[0] = d->gpu_id;
	out->n_ids = 1;
	if (pods[first].sharing == KERF_DP_SHARE_MPS)
		return answer_mps(d, &pods[first], mps, mps_arg, out, err);
	return 0;
}

int kerf_dp_answer(const struct kerf_dp_device *devs, size_t n_devs,
		   char *const *ids, size_t n_ids,
		   const struct kerf_dp_pod_assign *pods, size_t n_pods,
		   kerf_dp_mps_fn mps, void *mps_arg,
		   struct kerf_dp_answer *out, struct kerf_err *err)
{
	const struct kerf_dp_device *first;

	memset(out, 0, sizeof(*out));
	if (n_ids == 0)
		return kerf_err_set(err, -KERF_EINVAL, "devices_ids: empty");
	if (n_ids > KERF_DP_MAX_GPUS)
		return kerf_err_set(err, -KERF_EINVAL, "devices_ids: %zu devices, over %d", n_ids,
				    KERF_DP_MAX_GPUS);
	for (size_t i = 0; i < n_ids; i++)
		if (!kerf_dp_device_find(devs, n_devs, ids[i]))
			return kerf_err_set(err, -KERF_ENOTFOUND,
				"device '%.63s' is not one this plugin serves", ids[i]);
	first = kerf_dp_device_find(devs, n_devs, ids[0]);
	out->kind = first->kind;
	for (size_t i = 1; i < n_ids; i++)
		if (kerf_dp_device_find(devs, n_devs, ids[i])->kind != first->kind)
			return kerf_err_set(err, -KERF_EINVAL,
				"devices_ids: '%.63s' and '%.63s' are different kinds of device", ids[0],
				ids[i]);
	switch (first->kind) {
	case KERF_DP_DEV_MIG:
		if (n_ids != 1)
			return kerf_err_set(err, -KERF_EINVAL,
				"devices_ids: %zu MIG instances in one request; kerf assigns a pod one",
				n_ids);
		return answer_mig(first, pods, n_pods, out, err);
	case KERF_DP_DEV_SHARE:
		return answer_share(first, n_ids, pods, n_pods, mps, mps_arg, out, err);
	case KERF_DP_DEV_GPU:
		break;
	}
	int rc = kerf_dp_allocate_match(devs, n_devs, ids, n_ids, pods, n_pods, err);
	if (rc < 0)
		return rc;
	out->pod = rc;
	for (size_t i = 0; i < n_ids; i++)
		out->ids[i] = kerf_dp_device_find(devs, n_devs, ids[i])->id;
	out->n_ids = n_ids;
	return 0;
}
