/*
 * fit: the filter every policy uses.  A node passes when the pod's GPU model
 * is allowed there, the node has enough GPUs at all, and enough CPU, memory
 * and GPUs (with gpu_milli and GPU memory) are free now.  Model and GPU count
 * are permanent (unresolvable); the rest may change as pods leave.
 */
#include "core/plugins/plugins.h"

static enum kerf_code fit_filter(void *priv, const struct kerf_cluster *c,
				 const struct kerf_node *n,
				 const struct kerf_pod *p, struct kerf_status *st)
{
	enum kerf_misfit m = kerf_node_misfit(c, n, p);
	enum kerf_code code;

	(void)priv;
	if (m == KERF_MISFIT_NONE)
		return KERF_FIT;
	code = (m == KERF_MISFIT_MODEL || m == KERF_MISFIT_GPU_COUNT)
		       ? KERF_UNRESOLVABLE
		       : KERF_UNSCHEDULABLE;
	kerf_status_fixed(st, code, "fit", kerf_misfit_text(m));
	return code;
}

const struct kerf_plugin kerf_plugin_fit = {
	.name = "fit",
	.flags = KERF_PLUGIN_PURE,
	.filter = fit_filter,
};
