/*
 * limits: fraction to MPS limits, and their text (limits.h).
 */
#include "mps/limits.h"

#include <inttypes.h>
#include <stdio.h>

int kerf_mps_limits_for_fraction(uint32_t fraction_milli, uint64_t gpu_mem_mib,
				 struct kerf_mps_limits *out, struct kerf_err *err)
{
	if (fraction_milli < 1 || fraction_milli > 999)
		return kerf_err_set(err, -KERF_ERANGE,
				    "fraction %um: must be 1m..999m of one GPU", fraction_milli);
	if (gpu_mem_mib < 1 || gpu_mem_mib > KERF_MPS_MAX_GPU_MEM_MIB)
		return kerf_err_set(err, -KERF_ERANGE,
				    "GPU memory %" PRIu64 " MiB: must be 1..%d MiB", gpu_mem_mib,
				    KERF_MPS_MAX_GPU_MEM_MIB);
	out->thread_pct = (fraction_milli + 9) / 10;
	out->pinned_mem_mib = gpu_mem_mib * fraction_milli / 1000;
	if (out->pinned_mem_mib == 0)
		out->pinned_mem_mib = 1;
	return 0;
}

int kerf_mps_limits_check(const struct kerf_mps_limits *l, struct kerf_err *err)
{
	if (l->thread_pct < 1 || l->thread_pct > 100)
		return kerf_err_set(err, -KERF_ERANGE,
				    "active thread percentage %u: must be 1..100", l->thread_pct);
	if (l->pinned_mem_mib > KERF_MPS_MAX_GPU_MEM_MIB)
		return kerf_err_set(err, -KERF_ERANGE,
				    "pinned memory limit %" PRIu64 " MiB: over %d MiB",
				    l->pinned_mem_mib, KERF_MPS_MAX_GPU_MEM_MIB);
	return 0;
}

int kerf_mps_limits_within(const struct kerf_mps_limits *a,
			   const struct kerf_mps_limits *b)
{
	if (a->thread_pct > b->thread_pct)
		return 0;
	if (b->pinned_mem_mib == 0)
		return 1;
	return a->pinned_mem_mib != 0 && a->pinned_mem_mib <= b->pinned_mem_mib;
}

size_t kerf_mps_limits_commands(const struct kerf_mps_limits *l,
				char cmds[2][KERF_MPS_TEXT_MAX])
{
	size_t n = 0;

	if (l->pinned_mem_mib)
		snprintf(cmds[n++], KERF_MPS_TEXT_MAX,
			 "set_default_device_pinned_mem_limit 0 %" PRIu64 "M",
			 l->pinned_mem_mib);
	snprintf(cmds[n++], KERF_MPS_TEXT_MAX, "set_default_active_thread_percentage %u",
		 l->thread_pct);
	return n;
}

void kerf_mps_limits_env(const struct kerf_mps_limits *l,
			 char pct[KERF_MPS_TEXT_MAX], char mem[KERF_MPS_TEXT_MAX])
{
	snprintf(pct, KERF_MPS_TEXT_MAX, "%u", l->thread_pct);
	if (l->pinned_mem_mib)
		snprintf(mem, KERF_MPS_TEXT_MAX, "0=%" PRIu64 "M", l->pinned_mem_mib);
	else
		mem[0] = '\0';
}
