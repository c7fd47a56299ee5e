/*
 * mig_ref: "GPU:PROFILE@START" lists, the form the node annotations and
 * the agent's flags name MIG instances in (mig_actuate.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actuate/mig_actuate.h"

/* One entry of len bytes at s. */
static int parse_one(const char *s, size_t len, const char *field, struct kerf_mig_ref *out,
		     struct kerf_err *err)
{
	char item[64], *colon, *at, *end;

	if (len == 0 || len >= sizeof(item))
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s: an entry is empty or longer than %zu bytes", field,
				    sizeof(item) - 1);
	for (size_t k = 0; k < len; k++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:@+_-", s[k]))
			return kerf_err_set(err, -KERF_EINVAL,
					    "%s: byte %zu of an entry: only letters, digits and . : @ + _ - may name an instance",
					    field, k + 1);
	memcpy(item, s, len);
	item[len] = '\0';
	colon = strchr(item, ':');
	at = strrchr(item, '@');
	if (!colon)
		return kerf_err_set(err, -KERF_EINVAL, "%s: '%s': missing 'GPU:'", field, item);
	if (!at || at < colon)
		return kerf_err_set(err, -KERF_EINVAL, "%s: '%s': missing '@START'", field, item);
	*colon = *at = '\0';
	unsigned long gpu = strtoul(item, &end, 10);
	if (!item[0] || *end || item[0] == '-' || item[0] == '+' || gpu >= 64)
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s: '%.*s': GPU must be an index from 0 to 63", field,
				    (int)len, s);
	unsigned long start = strtoul(at + 1, &end, 10);
	if (!at[1] || *end || at[1] == '-' || at[1] == '+' || start >= KERF_MIG_MAX_SLICES)
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s: '%.*s': START must be a memory slice from 0 to %d", field,
				    (int)len, s, KERF_MIG_MAX_SLICES - 1);
	if (!colon[1] || strlen(colon + 1) >= sizeof(out->profile))
		return kerf_err_set(err, -KERF_EINVAL, "%s: '%.*s': PROFILE empty or too long",
				    field, (int)len, s);
	out->gpu = (uint32_t)gpu;
	out->start = (uint8_t)start;
	snprintf(out->profile, sizeof(out->profile), "%s", colon + 1);
	return 0;
}

int kerf_mig_refs_parse(const char *text, const char *field, struct kerf_mig_ref *out,
			size_t max, size_t *nr, struct kerf_err *err)
{
	*nr = 0;
	if (!text || !*text)
		return 0;
	for (const char *s = text;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		if (*nr == max)
			return kerf_err_set(err, -KERF_EINVAL, "%s: more than %zu instances",
					    field, max);
		int rc = parse_one(s, len, field, &out[*nr], err);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < *nr; i++)
			if (out[i].gpu == out[*nr].gpu && out[i].start == out[*nr].start &&
			    !strcmp(out[i].profile, out[*nr].profile))
				return kerf_err_set(err, -KERF_EINVAL,
						    "%s: '%.*s' given twice", field, (int)len, s);
		(*nr)++;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}
