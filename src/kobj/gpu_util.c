#include "kobj/gpu_util.h"

#include <string.h>

#include "base/buf.h"
#include "base/parse.h"
#include "kobj/names.h"

/* No value anywhere: what a caller sees after an error. */
static int fail(int8_t pct[KERF_GPU_UTIL_MAX_GPUS], struct kerf_err *err,
		const char *s, const char *item, const char *why)
{
	char shown[80], shown_item[40];

	memset(pct, -1, KERF_GPU_UTIL_MAX_GPUS * sizeof(*pct));
	return kerf_err_set(err, -KERF_EPARSE, "annotation %s '%s': item '%s': %s",
			    KERF_ANN_GPU_UTILIZATION, kerf_escape(shown, sizeof(shown), s),
			    kerf_escape(shown_item, sizeof(shown_item), item), why);
}

int kerf_gpu_util_parse(const char *s, int8_t pct[KERF_GPU_UTIL_MAX_GPUS],
			struct kerf_err *err)
{
	const char *p = s ? s : "";

	memset(pct, -1, KERF_GPU_UTIL_MAX_GPUS * sizeof(*pct));
	while (*p) {
		char item[16], *colon;
		size_t len = strcspn(p, ",");
		uint64_t gpu, v;

		if (len >= sizeof(item))
			return fail(pct, err, s, "", "an item is longer than GPU:PCT can be");
		memcpy(item, p, len);
		item[len] = '\0';
		if (!len)
			return fail(pct, err, s, item, "empty (expected GPU:PCT)");
		if (!(colon = strchr(item, ':')))
			return fail(pct, err, s, item, "expected GPU:PCT");
		*colon = '\0';
		if (kerf_parse_u64(item, &gpu) < 0 || gpu >= KERF_GPU_UTIL_MAX_GPUS) {
			*colon = ':';
			return fail(pct, err, s, item, "the GPU is not an index 0..63");
		}
		if (kerf_parse_u64(colon + 1, &v) < 0 || v > 100) {
			*colon = ':';
			return fail(pct, err, s, item, "the percent is not 0..100");
		}
		if (pct[gpu] >= 0) {
			*colon = ':';
			return fail(pct, err, s, item, "the GPU appears twice");
		}
		pct[gpu] = (int8_t)v;
		p += len;
		if (*p == ',' && !*++p)
			return fail(pct, err, s, "", "a comma ends the value");
	}
	return 0;
}
