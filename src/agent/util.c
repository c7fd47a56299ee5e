/*
 * util: the windowed utilisation of each GPU (util.h).
 */
#include "agent/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/parse.h"

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

int kerf_util_parse(const char *s, int16_t pct[KERF_UTIL_MAX_GPUS])
{
	for (unsigned g = 0; g < KERF_UTIL_MAX_GPUS; g++)
		pct[g] = -1;
	while (s && *s) {
		char item[16], *colon;
		size_t len = strcspn(s, ",");
		uint64_t gpu, v;

		if (!len || len >= sizeof(item))
			return -1;
		memcpy(item, s, len);
		item[len] = '\0';
		if (!(colon = strchr(item, ':')))
			return -1;
		*colon = '\0';
		if (kerf_parse_u64(item, &gpu) < 0 || gpu >= KERF_UTIL_MAX_GPUS ||
		    kerf_parse_u64(colon + 1, &v) < 0 || v > 100 || pct[gpu] >= 0)
			return -1;
		pct[gpu] = (int16_t)v;
		s += len;
		if (*s == ',' && !*++s)
			return -1;
	}
	return 0;
}

bool kerf_util_changed(const char *have, const char *text)
{
	int16_t a[KERF_UTIL_MAX_GPUS], b[KERF_UTIL_MAX_GPUS];

	if (!have)
		return text[0] != '\0';
	if (kerf_util_parse(have, a) < 0 || kerf_util_parse(text, b) < 0)
		return true;
	for (unsigned g = 0; g < KERF_UTIL_MAX_GPUS; g++)
		if ((a[g] < 0) != (b[g] < 0) || abs(a[g] - b[g]) >= KERF_UTIL_MOVE_PCT)
			return true;
	return false;
}
