/*
 * util: each GPU's utilisation averaged over a window, for idle
 * reclamation in kerf serve.  Pure: samples in, the annotation out.
 *
 * The agent samples every GPU every window/30 (10 s for the default 5
 * minutes) and keeps the last 30 samples per GPU; the mean of each GPU
 * (rounded to a whole percent) goes to the Node as
 *   kerf.io/gpu-utilization: "0:40,1:10,3:55"
 * (a GPU without a sample in the window is left out).  It is written again
 * only when some GPU moved by 5 points or more, or one appeared or
 * disappeared: a few writes an hour on a steady node.  kerf serve maps the
 * GPUs to the pods holding them (kerf.io/assigned-gpus).  The grammar and
 * its one reader are kobj/gpu_util.h's.
 */
#ifndef KERF_AGENT_UTIL_H
#define KERF_AGENT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kobj/gpu_util.h"
#include "kobj/names.h"

enum {
	KERF_UTIL_SAMPLES = 30,
	KERF_UTIL_MAX_GPUS = KERF_GPU_UTIL_MAX_GPUS,
	KERF_UTIL_MOVE_PCT = 5,
};

struct kerf_util_window {
	uint8_t pct[KERF_UTIL_MAX_GPUS][KERF_UTIL_SAMPLES];
	uint8_t nr[KERF_UTIL_MAX_GPUS];      /* samples held, <= KERF_UTIL_SAMPLES */
	uint8_t next[KERF_UTIL_MAX_GPUS];    /* where the next one goes */
};

/* One sample of GPU gpu (pct clamped to 0..100); has false: none (dropped
   from the window only by age: the ring moves on). */
void kerf_util_add(struct kerf_util_window *w, unsigned gpu, bool has, uint32_t pct);

/* The annotation's value for the window ("" when no GPU has a sample). */
void kerf_util_text(const struct kerf_util_window *w, char *out, size_t size);

/*
 * Should text replace what the Node says (have, NULL when absent)?  Yes
 * when a GPU moved by KERF_UTIL_MOVE_PCT or more, or appeared or went.  A
 * have that does not parse is replaced.
 */
bool kerf_util_changed(const char *have, const char *text);

#endif /* KERF_AGENT_UTIL_H */
