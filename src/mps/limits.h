/*
 * limits: the arithmetic from a GPU fraction to MPS limits, and the text
 * of those limits as control commands and as client environment values
 * (docs/agent.md "MPS daemons").  Pure: no I/O.
 *
 * A fraction is in thousandths of one GPU (kerf.io/assigned-fraction
 * "250m" is 250).  Its limits:
 *  - active thread percentage: the fraction rounded up to a whole percent
 *    (250m: 25; 1m: 1; 999m: 100), the same rounding the admission
 *    webhook applies to a pod's own CUDA_MPS_ACTIVE_THREAD_PERCENTAGE;
 *  - pinned device memory: the fraction of the GPU's memory rounded down
 *    to a MiB (at least 1 MiB), so that the shares of one GPU never add up
 *    to more than the GPU has.
 *
 * The MPS control daemon sees exactly one GPU (CUDA_VISIBLE_DEVICES is the
 * GPU's UUID), and so does each client container, so the device of the
 * memory limit is ordinal 0 in both places.
 */
#ifndef KERF_MPS_LIMITS_H
#define KERF_MPS_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Limits of one MPS daemon, applied to each of its clients. */
struct kerf_mps_limits {
	uint32_t thread_pct;      /* active thread percentage, 1..100 */
	uint64_t pinned_mem_mib;  /* device pinned memory limit, MiB; 0: none */
};

/* Bounds on what kerf writes: a GPU of at most 16 TiB. */
enum { KERF_MPS_MAX_GPU_MEM_MIB = 16 * 1024 * 1024 };

/*
 * The limits of fraction_milli (1..999) of a GPU with gpu_mem_mib
 * (1..KERF_MPS_MAX_GPU_MEM_MIB) of memory.  Returns 0, or -KERF_ERANGE
 * naming the value out of range.
 */
int kerf_mps_limits_for_fraction(uint32_t fraction_milli, uint64_t gpu_mem_mib,
				 struct kerf_mps_limits *out, struct kerf_err *err);

/* 0 when l is within bounds, else -KERF_ERANGE naming the field. */
int kerf_mps_limits_check(const struct kerf_mps_limits *l, struct kerf_err *err);

/* Whether a fits inside b: no more threads, no more memory (0 = none). */
int kerf_mps_limits_within(const struct kerf_mps_limits *a,
			   const struct kerf_mps_limits *b);

/* Room for the longest command or value below. */
enum { KERF_MPS_TEXT_MAX = 64 };

/*
 * The control commands that set l as the defaults of every server the
 * daemon spawns, in the order they must be sent (memory, then threads):
 * "set_default_device_pinned_mem_limit 0 20389M",
 * "set_default_active_thread_percentage 25".  Returns how many (1 or 2:
 * no memory command when pinned_mem_mib is 0).
 */
size_t kerf_mps_limits_commands(const struct kerf_mps_limits *l,
				char cmds[2][KERF_MPS_TEXT_MAX]);

/*
 * The client environment values: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE "25"
 * into pct, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT "0=20389M" into mem ("" when
 * pinned_mem_mib is 0).
 */
void kerf_mps_limits_env(const struct kerf_mps_limits *l,
			 char pct[KERF_MPS_TEXT_MAX], char mem[KERF_MPS_TEXT_MAX]);

#endif /* KERF_MPS_LIMITS_H */
