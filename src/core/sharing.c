#include "core/sharing.h"

#include <string.h>

static const char *const profile_names[KERF_PROFILE_COUNT_] = {
	"none", "inference-latency", "inference-batch", "interactive", "training",
};

static const char *const mech_names[KERF_MECH_COUNT_] = {
	"auto", "exclusive", "mig", "mps", "timeslice", "default",
};

const char *kerf_profile_name(enum kerf_wl_profile p)
{
	return (unsigned)p < KERF_PROFILE_COUNT_ ? profile_names[p] : NULL;
}

const char *kerf_mechanism_name(enum kerf_mechanism m)
{
	return (unsigned)m < KERF_MECH_COUNT_ ? mech_names[m] : NULL;
}

int kerf_profile_parse(const char *name)
{
	for (int i = 0; name && i < KERF_PROFILE_COUNT_; i++)
		if (!strcmp(profile_names[i], name))
			return i;
	return -1;
}

int kerf_mechanism_parse(const char *name)
{
	for (int i = 0; name && i < KERF_MECH_COUNT_; i++)
		if (!strcmp(mech_names[i], name))
			return i;
	return -1;
}

/*
 * The smallest MIG profile (no media extension) with the memory asked (or,
 * when none is, the fraction's share of the memory slices) and the compute
 * share asked; -1 when
 * none is large enough.  Smallest: fewest compute slices, then memory.
 */
static int mig_fit(const struct kerf_mig_model *m, const struct kerf_pod *p)
{
	int64_t mem = p->gpu_mem_mib;
	int best = -1;

	for (int i = 0; i < m->nr_profiles; i++) {
		const struct kerf_mig_profile *pr = &m->profiles[i];
		/* memory by slices when the table has no figure */
		int64_t pm = pr->mem_mib ? pr->mem_mib
					 : (int64_t)m->mem_mib * pr->mem_slices / m->mem_slices;
		/* no memory asked: the fraction's share of the memory slices */
		bool mem_ok = mem ? pm >= mem
				  : (int64_t)pr->mem_slices * KERF_GPU_MILLI >=
					    (int64_t)p->gpu_milli * m->mem_slices;

		if (pr->media_ext || !mem_ok ||
		    (int64_t)pr->compute_slices * KERF_GPU_MILLI <
			    (int64_t)p->gpu_milli * m->compute_slices)
			continue;
		if (best < 0 || pr->compute_slices < m->profiles[best].compute_slices ||
		    (pr->compute_slices == m->profiles[best].compute_slices &&
		     pr->mem_slices < m->profiles[best].mem_slices))
			best = i;
	}
	return best;
}

static void mps_params(const struct kerf_pod *p, int32_t gpu_mem_mib,
		       struct kerf_sharing_choice *out)
{
	out->mps_thread_pct = (p->gpu_milli + 9) / 10;
	out->mps_pinned_mem_mib = p->gpu_mem_mib
		? p->gpu_mem_mib
		: (int32_t)((int64_t)gpu_mem_mib * p->gpu_milli / KERF_GPU_MILLI);
}

int kerf_sharing_choose(const struct kerf_pod *p, enum kerf_wl_profile prof,
			enum kerf_mechanism override, enum kerf_isolation iso,
			const struct kerf_mig_model *mig, int32_t gpu_mem_mib,
			struct kerf_sharing_choice *out, struct kerf_err *err)
{
	bool fraction = kerf_pod_is_fraction(p);
	enum kerf_mechanism m = override;

	memset(out, 0, sizeof(*out));
	out->mig_profile = -1;
	if ((unsigned)prof >= KERF_PROFILE_COUNT_ || (unsigned)override >= KERF_MECH_COUNT_)
		return kerf_err_set(err, -KERF_EINVAL, "profile or mechanism out of range");
	if (p->nr_gpus == 0)
		return kerf_err_set(err, -KERF_EINVAL, "the pod asks for no GPU");
	if (m == KERF_MECH_AUTO) {
		switch (prof) {
		case KERF_PROFILE_INFERENCE_LATENCY:
			m = mig && fraction && mig_fit(mig, p) >= 0
				    ? KERF_MECH_MIG
				    : fraction ? KERF_MECH_MPS : KERF_MECH_EXCLUSIVE;
			break;
		case KERF_PROFILE_INFERENCE_BATCH:
			m = fraction ? KERF_MECH_MPS : KERF_MECH_EXCLUSIVE;
			break;
		case KERF_PROFILE_INTERACTIVE:
			m = fraction ? KERF_MECH_TIMESLICE : KERF_MECH_EXCLUSIVE;
			break;
		case KERF_PROFILE_TRAINING:
			m = KERF_MECH_EXCLUSIVE;
			out->nvlink_domain = p->nr_gpus > 1 || !fraction;
			break;
		default:
			m = fraction ? KERF_MECH_DEFAULT : KERF_MECH_EXCLUSIVE;
			break;
		}
		/* hardware isolation: no software sharing, ever */
		if (iso == KERF_ISOLATION_HARDWARE &&
		    (m == KERF_MECH_MPS || m == KERF_MECH_TIMESLICE || m == KERF_MECH_DEFAULT))
			m = mig && mig_fit(mig, p) >= 0 ? KERF_MECH_MIG
								     : KERF_MECH_EXCLUSIVE;
	} else if (iso == KERF_ISOLATION_HARDWARE &&
		   (m == KERF_MECH_MPS || m == KERF_MECH_TIMESLICE || m == KERF_MECH_DEFAULT)) {
		return kerf_err_set(err, -KERF_EINVAL,
				    "sharing '%s': the tenant's isolation is hardware, which allows only exclusive GPUs or MIG",
				    mech_names[m]);
	}
	if ((m == KERF_MECH_MPS || m == KERF_MECH_TIMESLICE || m == KERF_MECH_DEFAULT) &&
	    !fraction)
		return kerf_err_set(err, -KERF_EINVAL,
				    "sharing '%s': only a fraction of one GPU can share it (the pod asks for %u whole GPUs)",
				    mech_names[m], p->nr_gpus);
	out->mech = m;
	switch (m) {
	case KERF_MECH_MIG:
		if (!mig)
			return kerf_err_set(err, -KERF_EINVAL,
					    "sharing 'mig': the GPU model has no MIG profiles");
		if (!fraction)
			return kerf_err_set(err, -KERF_EINVAL,
					    "sharing 'mig': a MIG instance serves a fraction of one GPU, the pod asks for %u whole GPUs",
					    p->nr_gpus);
		out->mig_profile = mig_fit(mig, p);
		if (out->mig_profile < 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "sharing 'mig': no %s profile has the memory and compute asked",
					    mig->name);
		break;
	case KERF_MECH_MPS:
		out->share = KERF_SHARE_MPS;
		mps_params(p, gpu_mem_mib, out);
		break;
	case KERF_MECH_TIMESLICE:
		out->share = KERF_SHARE_TIMESLICE;
		break;
	default:
		break;
	}
	return 0;
}
