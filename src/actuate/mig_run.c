/*
 * mig_run: carry out NVML steps one by one: the model first, then NVML,
 * then the layout read back and compared (mig_actuate.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuate/mig_actuate.h"

/* What one step saw: NVML's code and a message when it failed. */
struct outcome {
	int nvml_rc;                 /* 0: no NVML failure */
	struct kerf_err err;
};

static int nvml_failed(struct outcome *o, const struct kerf_nvml *nv, const char *call,
		       nvmlReturn_t rc)
{
	const char *text = nv->error_string ? nv->error_string(rc) : NULL;

	o->nvml_rc = (int)rc;
	if (text && strcmp(text, kerf_nvml_return_name(rc)))
		return kerf_err_set(&o->err, -KERF_EIO, "%s: %s (%d: %s)", call,
				    kerf_nvml_return_name(rc), (int)rc, text);
	return kerf_err_set(&o->err, -KERF_EIO, "%s: %s (%d)", call, kerf_nvml_return_name(rc),
			    (int)rc);
}

/* ---- the model ---------------------------------------------------------- */

/* Remove instance i of GPU n from the NVML ids kept beside the layout. */
static void drop_ids(struct kerf_mig_gpus *g, unsigned n, unsigned i, unsigned nr_before)
{
	for (unsigned k = i; k + 1 < nr_before; k++) {
		g->gi_id[n][k] = g->gi_id[n][k + 1];
		g->nr_cis[n][k] = g->nr_cis[n][k + 1];
		memcpy(g->ci_id[n][k], g->ci_id[n][k + 1], sizeof(g->ci_id[n][k]));
	}
}

/*
 * Step s on the model want: refused (-KERF_EINVAL, why in err) when it is
 * not legal there or touches an instance in use.
 */
static int model_step(struct kerf_mig_gpus *want, const struct kerf_mig_step *s,
		      struct kerf_err *err)
{
	const struct kerf_mig_model *m = want->node.model;
	const char *name = m->profiles[s->profile].name;
	int n = kerf_mig_gpus_find(want, s->gpu);
	struct kerf_mig_action a = { .gpu = (uint8_t)(n < 0 ? 0 : n), .profile = s->profile,
				     .start = s->start };

	if (n < 0)
		return kerf_err_set(err, -KERF_EINVAL, "gpu %u is not a MIG GPU kerf changes",
				    s->gpu);
	int i = kerf_mig_gpus_instance(want, (unsigned)n, s->profile, s->start);
	unsigned nr_before = want->node.gpus[n].nr;
	switch (s->kind) {
	case KERF_MIG_STEP_DESTROY_CI: {
		if (i < 0)
			return kerf_err_set(err, -KERF_EINVAL, "gpu %u: no instance %s@%u", s->gpu,
					    name, s->start);
		if (want->node.gpus[n].inst[i].in_use)
			return kerf_err_set(err, -KERF_EINVAL,
					    "gpu %u: %s@%u is in use: its compute instance is not destroyed",
					    s->gpu, name, s->start);
		uint8_t *nr = &want->nr_cis[n][i];
		for (unsigned c = 0; c < *nr; c++)
			if (want->ci_id[n][i][c] == s->ci_id) {
				want->ci_id[n][i][c] = want->ci_id[n][i][*nr - 1];
				(*nr)--;
				return 0;
			}
		return kerf_err_set(err, -KERF_EINVAL,
				    "gpu %u: %s@%u has no compute instance %u", s->gpu, name,
				    s->start, s->ci_id);
	}
	case KERF_MIG_STEP_DESTROY_GI:
		a.kind = KERF_MIG_DESTROY;
		if (kerf_mig_apply(&want->node, &a, err) < 0)
			return -KERF_EINVAL;
		if (want->nr_cis[n][i])  /* i >= 0: the destroy found it */
			return kerf_err_set(err, -KERF_EINVAL,
					    "gpu %u: %s@%u still has %u compute instances", s->gpu,
					    name, s->start, want->nr_cis[n][i]);
		drop_ids(want, (unsigned)n, (unsigned)i, nr_before);
		return 0;
	case KERF_MIG_STEP_CREATE_GI:
		a.kind = KERF_MIG_CREATE;
		if (kerf_mig_apply(&want->node, &a, err) < 0)
			return -KERF_EINVAL;
		want->gi_id[n][nr_before] = 0;  /* NVML's, known after the step */
		want->nr_cis[n][nr_before] = 0;
		return 0;
	case KERF_MIG_STEP_CREATE_CI:
		if (i < 0)
			return kerf_err_set(err, -KERF_EINVAL, "gpu %u: no instance %s@%u", s->gpu,
					    name, s->start);
		if (want->nr_cis[n][i])
			return kerf_err_set(err, -KERF_EINVAL,
					    "gpu %u: %s@%u already has a compute instance", s->gpu,
					    name, s->start);
		want->nr_cis[n][i] = 1;
		return 0;
	}
	return kerf_err_set(err, -KERF_EINVAL, "unknown step %d", (int)s->kind);
}

/* ---- NVML --------------------------------------------------------------- */

static int gi_handle(const struct kerf_nvml *nv, const struct kerf_mig_gpus *g,
		     const struct kerf_mig_step *s, nvmlGpuInstance_t *gi, struct outcome *o)
{
	int n = kerf_mig_gpus_find(g, s->gpu);
	int i = n < 0 ? -1 : kerf_mig_gpus_instance(g, (unsigned)n, s->profile, s->start);
	nvmlDevice_t dev;
	nvmlReturn_t rc;

	if (i < 0)
		return kerf_err_set(&o->err, -KERF_EIO, "gpu %u: no instance %s@%u", s->gpu,
				    g->node.model->profiles[s->profile].name, s->start);
	rc = nv->handle_by_index_v2(s->gpu, &dev);
	if (rc != NVML_SUCCESS)
		return nvml_failed(o, nv, "nvmlDeviceGetHandleByIndex_v2", rc);
	rc = nv->gi_by_id(dev, g->gi_id[n][i], gi);
	if (rc != NVML_SUCCESS)
		return nvml_failed(o, nv, "nvmlDeviceGetGpuInstanceById", rc);
	return 0;
}

/* Is start:size among NVML's placements of the GI profile? */
static int check_placement(const struct kerf_nvml *nv, nvmlDevice_t dev, unsigned profile_id,
			   const nvmlGpuInstancePlacement_t *want, struct outcome *o)
{
	nvmlGpuInstancePlacement_t list[KERF_MIG_MAX_SLICES];
	unsigned count = 0;
	nvmlReturn_t rc = nv->gi_placements_v2(dev, profile_id, NULL, &count);

	if (rc == NVML_SUCCESS && count > KERF_MIG_MAX_SLICES)
		count = KERF_MIG_MAX_SLICES;
	if (rc == NVML_SUCCESS)
		rc = nv->gi_placements_v2(dev, profile_id, list, &count);
	if (rc != NVML_SUCCESS)
		return nvml_failed(o, nv, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", rc);
	for (unsigned k = 0; k < count; k++)
		if (list[k].start == want->start && list[k].size == want->size)
			return 0;
	return kerf_err_set(&o->err, -KERF_EIO,
			    "placement %u:%u of profile id %u is not among the %u NVML lists: kerf's MIG table disagrees with the driver",
			    want->start, want->size, profile_id, count);
}

/* The CI profile that takes the whole GI: its compute slices. */
static int full_ci(const struct kerf_nvml *nv, nvmlGpuInstance_t gi, unsigned slices,
		   uint32_t *ci_id, struct outcome *o)
{
	for (unsigned idx = 0; idx < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; idx++) {
		nvmlComputeInstanceProfileInfo_t info;
		memset(&info, 0, sizeof(info));
		nvmlReturn_t rc = nv->ci_profile_info(gi, idx, NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED,
						      &info);
		if (rc == NVML_ERROR_NOT_SUPPORTED)
			continue;
		if (rc == NVML_ERROR_INVALID_ARGUMENT)
			break;
		if (rc != NVML_SUCCESS)
			return nvml_failed(o, nv, "nvmlGpuInstanceGetComputeInstanceProfileInfo", rc);
		if (info.sliceCount != slices)
			continue;
		nvmlComputeInstance_t ci;
		nvmlComputeInstanceInfo_t ci_info;
		rc = nv->create_ci(gi, info.id, &ci);
		if (rc != NVML_SUCCESS)
			return nvml_failed(o, nv, "nvmlGpuInstanceCreateComputeInstance", rc);
		memset(&ci_info, 0, sizeof(ci_info));
		if (nv->ci_info_v2(ci, &ci_info) == NVML_SUCCESS)
			*ci_id = ci_info.id;
		return 0;
	}
	return kerf_err_set(&o->err, -KERF_EIO,
			    "NVML lists no compute instance profile of %u slices for this GPU instance",
			    slices);
}

static int nvml_step(const struct kerf_nvml *nv, const struct kerf_mig_gpus *g,
		     struct kerf_mig_step *s, struct outcome *o)
{
	const struct kerf_mig_profile *p = &g->node.model->profiles[s->profile];
	nvmlGpuInstance_t gi;
	nvmlComputeInstance_t ci;
	nvmlDevice_t dev;
	nvmlReturn_t rc;
	int ret;

	switch (s->kind) {
	case KERF_MIG_STEP_DESTROY_CI:
		if ((ret = gi_handle(nv, g, s, &gi, o)) < 0)
			return ret;
		rc = nv->ci_by_id(gi, s->ci_id, &ci);
		if (rc != NVML_SUCCESS)
			return nvml_failed(o, nv, "nvmlGpuInstanceGetComputeInstanceById", rc);
		rc = nv->ci_destroy(ci);
		return rc == NVML_SUCCESS ? 0 : nvml_failed(o, nv, "nvmlComputeInstanceDestroy", rc);
	case KERF_MIG_STEP_DESTROY_GI:
		if ((ret = gi_handle(nv, g, s, &gi, o)) < 0)
			return ret;
		rc = nv->gi_destroy(gi);
		return rc == NVML_SUCCESS ? 0 : nvml_failed(o, nv, "nvmlGpuInstanceDestroy", rc);
	case KERF_MIG_STEP_CREATE_GI: {
		nvmlGpuInstancePlacement_t at = { .start = s->start, .size = p->mem_slices };
		rc = nv->handle_by_index_v2(s->gpu, &dev);
		if (rc != NVML_SUCCESS)
			return nvml_failed(o, nv, "nvmlDeviceGetHandleByIndex_v2", rc);
		if ((ret = check_placement(nv, dev, p->nvml_id, &at, o)) < 0)
			return ret;
		rc = nv->create_gi_with_placement(dev, p->nvml_id, &at, &gi);
		return rc == NVML_SUCCESS
			       ? 0
			       : nvml_failed(o, nv, "nvmlDeviceCreateGpuInstanceWithPlacement", rc);
	}
	case KERF_MIG_STEP_CREATE_CI:
		if ((ret = gi_handle(nv, g, s, &gi, o)) < 0)
			return ret;
		return full_ci(nv, gi, p->compute_slices, &s->ci_id, o);
	}
	return kerf_err_set(&o->err, -KERF_EINVAL, "unknown step %d", (int)s->kind);
}

/* ---- the layout read back ---------------------------------------------- */

static void layout_text(const struct kerf_mig_gpus *g, unsigned n, char *buf, size_t size)
{
	const struct kerf_mig_layout *l = &g->node.gpus[n];
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < l->nr && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s@%u (%u CI)", i ? ", " : "",
					 g->node.model->profiles[l->inst[i].profile].name,
					 l->inst[i].start, g->nr_cis[n][i]);
	if (!l->nr)
		snprintf(buf, size, "no instances");
}

/* Does got show what want expects: the same GPUs, instances and CI counts? */
static int same_layout(const struct kerf_mig_gpus *want, const struct kerf_mig_gpus *got,
		       struct kerf_err *err)
{
	char w[256], h[256];

	if (got->node.nr_gpus != want->node.nr_gpus)
		return kerf_err_set(err, -KERF_EIO, "NVML now shows %u MIG GPUs, kerf expected %u",
				    got->node.nr_gpus, want->node.nr_gpus);
	for (unsigned n = 0; n < want->node.nr_gpus; n++) {
		bool same = got->nvml_index[n] == want->nvml_index[n] &&
			    got->node.gpus[n].nr == want->node.gpus[n].nr;
		for (unsigned i = 0; same && i < want->node.gpus[n].nr; i++) {
			const struct kerf_mig_instance *in = &want->node.gpus[n].inst[i];
			int j = kerf_mig_gpus_instance(got, n, in->profile, in->start);
			same = j >= 0 && got->nr_cis[n][j] == want->nr_cis[n][i];
		}
		if (same)
			continue;
		layout_text(want, n, w, sizeof(w));
		layout_text(got, n, h, sizeof(h));
		return kerf_err_set(err, -KERF_EIO,
				    "gpu %u read back from NVML: %s; kerf expected: %s",
				    want->nvml_index[n], h, w);
	}
	return 0;
}

static void check_legal(struct kerf_mig_report *rep)
{
	struct kerf_err why = { 0 };

	rep->legal = true;
	for (unsigned n = 0; n < rep->now.node.nr_gpus; n++)
		if (kerf_mig_layout_check(rep->now.node.model, &rep->now.node.gpus[n], &why) < 0) {
			rep->legal = false;
			snprintf(rep->legal_error, sizeof(rep->legal_error), "gpu %u: %.400s",
				 rep->now.nvml_index[n], why.msg);
			return;
		}
}

static int fail(struct kerf_mig_report *rep, const struct kerf_mig_steps *steps, size_t k,
		struct outcome *o, struct kerf_err *err)
{
	const struct kerf_mig_step *s = &steps->steps[k];

	rep->failed = (long)k;
	rep->nvml_rc = o->nvml_rc;
	memcpy(rep->error, o->err.msg, sizeof(rep->error));
	return kerf_err_set(err, -KERF_EIO, "step %zu of %zu, %s %s@%u on gpu %u: %s", k + 1,
			    steps->nr, kerf_mig_step_kind_name(s->kind),
			    steps->model->profiles[s->profile].name, s->start, s->gpu, o->err.msg);
}

int kerf_mig_run(const struct kerf_nvml *nv, struct kerf_mig_steps *steps,
		 const struct kerf_mig_ref *in_use, size_t nr_in_use,
		 struct kerf_mig_report *rep, struct kerf_err *err)
{
	struct kerf_mig_gpus *want = malloc(sizeof(*want));
	int ret;

	memset(rep, 0, sizeof(*rep));
	rep->failed = -1;
	if (!want)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	if (!kerf_nvml_has(nv, KERF_NVML_F_MIG_ACTUATE)) {
		ret = kerf_err_set(err, -KERF_ENOTFOUND, "MIG actuation is off: %s", nv->off);
		goto out;
	}
	ret = kerf_mig_gpus_read(&rep->now, nv, in_use, nr_in_use, err);
	if (ret < 0)
		goto out;
	if (steps->model && steps->model != rep->now.node.model) {
		ret = kerf_err_set(err, -KERF_EINVAL, "the steps are for %s, the GPUs are %s",
				   steps->model->name, rep->now.node.model->name);
		goto out;
	}
	for (size_t k = 0; k < steps->nr; k++) {
		struct kerf_mig_step *s = &steps->steps[k];
		struct outcome o = { 0 };

		*want = rep->now;
		if (model_step(want, s, &o.err) < 0 || nvml_step(nv, &rep->now, s, &o) < 0) {
			s->state = KERF_MIG_STEP_FAILED;
			/* the layout now, whatever NVML did */
			kerf_mig_gpus_read(&rep->now, nv, in_use, nr_in_use, NULL);
			ret = fail(rep, steps, k, &o, err);
			goto out;
		}
		ret = kerf_mig_gpus_read(&rep->now, nv, in_use, nr_in_use, &o.err);
		if (ret == 0)
			ret = same_layout(want, &rep->now, &o.err);
		if (ret < 0) {
			s->state = KERF_MIG_STEP_FAILED;
			ret = fail(rep, steps, k, &o, err);
			goto out;
		}
		s->state = KERF_MIG_STEP_DONE;
		rep->nr_done++;
	}
out:
	check_legal(rep);
	free(want);
	return ret;
}

/* ---- MIG mode ----------------------------------------------------------- */

int kerf_mig_set_mode(const struct kerf_nvml *nv, uint32_t gpu, unsigned mode,
		      struct kerf_mig_mode *out, struct kerf_err *err)
{
	struct outcome o = { 0 };
	nvmlReturn_t act = NVML_SUCCESS, rc;
	nvmlDevice_t dev;
	const char *want = mode == NVML_DEVICE_MIG_ENABLE ? "on" : "off";

	memset(out, 0, sizeof(*out));
	if (!kerf_nvml_has(nv, KERF_NVML_F_MIG_ACTUATE) || !kerf_nvml_has(nv, KERF_NVML_F_MIG))
		return kerf_err_set(err, -KERF_ENOTFOUND, "MIG actuation is off: %s", nv->off);
	rc = nv->handle_by_index_v2(gpu, &dev);
	if (rc == NVML_SUCCESS)
		rc = nv->set_mig_mode(dev, mode, &act);
	else
		nvml_failed(&o, nv, "nvmlDeviceGetHandleByIndex_v2", rc);
	if (rc != NVML_SUCCESS && !o.nvml_rc)
		nvml_failed(&o, nv, "nvmlDeviceSetMigMode", rc);
	if (rc == NVML_SUCCESS) {
		rc = nv->mig_mode(dev, &out->current, &out->pending);
		if (rc != NVML_SUCCESS)
			nvml_failed(&o, nv, "nvmlDeviceGetMigMode", rc);
	}
	if (rc != NVML_SUCCESS)
		return kerf_err_set(err, -KERF_EIO, "gpu %u: MIG %s: %s", gpu, want, o.err.msg);
	out->activation_rc = (int)act;
	if (out->current == mode)
		return 0;
	kerf_err_set(err, 1, "gpu %u: MIG %s is pending, not current: %s: %s", gpu, want,
		     kerf_nvml_return_name(act),
		     act == NVML_ERROR_RESET_REQUIRED ? "the GPU must be reset (or the machine rebooted) to apply it"
		     : act == NVML_ERROR_IN_USE	      ? "processes use the GPU; stop them, then reset the GPU"
						      : "the driver did not apply it");
	return 1;
}
