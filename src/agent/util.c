/*
 * util: the windowed utilisation of each GPU (util.h).
 */
#include "agent/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void kerf_util_add(struct kerf_util_window *w, unsigned gpu, bool has, uint32_t pct)
{
	if (gpu >= KERF_UTIL_MAX_GPUS || !has)
		return;
	w->pct[gpu][w->next[gpu]] = (uint8_t)(pct > 100 ? 100 : pct);
	w->next[gpu] = (uint8_t)((w->next[gpu] + 1) % KERF_UTIL_SAMPLES);
	if (w->nr[gpu] < KERF_UTIL_SAMPLES)
		w->nr[gpu]++;
}

void kerf_util_text(const struct kerf_util_window *w, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (unsigned g = 0; g < KERF_UTIL_MAX_GPUS && used < size; g++) {
		unsigned sum = 0;

		if (!w->nr[g])
			continue;
		for (unsigned k = 0; k < w->nr[g]; k++)
			sum += w->pct[g][k];
		used += (size_t)snprintf(out + used, size - used, "%s%u:%u", used ? "," : "", g,
					 (sum + w->nr[g] / 2) / w->nr[g]);
	}
}

bool kerf_util_changed(const char *have, const char *text)
{
	int8_t a[KERF_UTIL_MAX_GPUS], b[KERF_UTIL_MAX_GPUS];

	if (!have)
		return text[0] != '\0';
	if (kerf_gpu_util_parse(have, a, NULL) < 0 || kerf_gpu_util_parse(text, b, NULL) < 0)
		return true;
	for (unsigned g = 0; g < KERF_UTIL_MAX_GPUS; g++)
		if ((a[g] < 0) != (b[g] < 0) || abs(a[g] - b[g]) >= KERF_UTIL_MOVE_PCT)
			return true;
	return false;
}
