#include "kobj/gpu_marks.h"

#include <stdbool.h>
#include <string.h>

#include "base/buf.h"
#include "kobj/names.h"

/* A GPU index at *s (no leading zero, below KERF_NODE_MAX_GPUS = 16). */
static bool gpu_index(const char **s, unsigned *g)
{
	const char *p = *s;
	unsigned v = 0;
	int digits = 0;

	while (*p >= '0' && *p <= '9' && digits < 3) {
		v = v * 10 + (unsigned)(*p++ - '0');
		digits++;
	}
	if (!digits || (digits > 1 && **s == '0') || v >= 16)
		return false;
	*s = p;
	*g = v;
	return true;
}

/* Past the ',' before the next item, or at the end: true; false otherwise. */
static bool next_item(const char **p)
{
	if (**p == ',' && (*p)[1]) {
		(*p)++;
		return true;
	}
	return !**p;
}

int kerf_gpu_marks_parse_gpus_of(const char *annotation, const char *s, uint16_t *mask,
			      struct kerf_err *err)
{
	char shown[80];
	const char *p = s;
	int last = -1;

	*mask = 0;
	while (*p) {
		unsigned g;

		if (!gpu_index(&p, &g))
			return kerf_err_set(err, -KERF_EPARSE,
					    "annotation %s '%s': at offset %zu: expected a GPU index 0..15",
					    annotation,
					    kerf_escape(shown, sizeof(shown), s),
					    (size_t)(p - s));
		if ((int)g <= last)
			return kerf_err_set(err, -KERF_EPARSE,
					    "annotation %s '%s': GPU %u: indexes must be ascending without repeats",
					    annotation,
					    kerf_escape(shown, sizeof(shown), s), g);
		last = (int)g;
		*mask = (uint16_t)(*mask | 1u << g);
		if (!next_item(&p))
			return kerf_err_set(err, -KERF_EPARSE,
					    "annotation %s '%s': at offset %zu: expected ',' and a GPU index",
					    annotation,
					    kerf_escape(shown, sizeof(shown), s),
					    (size_t)(p - s));
	}
	return 0;
}

int kerf_gpu_marks_parse_gpus(const char *s, uint16_t *mask, struct kerf_err *err)
{
	return kerf_gpu_marks_parse_gpus_of(KERF_ANN_UNHEALTHY_GPUS, s, mask, err);
}

static bool profile_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '+';
}

/* One GPU:PROFILE@START at *s; false when malformed. */
static bool mig_mark(const char **s, struct kerf_mig_mark *m)
{
	const char *p = *s;
	unsigned g;
	size_t len = 0;

	if (!gpu_index(&p, &g) || *p++ != ':')
		return false;
	while (profile_char(p[len]))
		len++;
	if (len == 0 || len >= sizeof(m->profile) || p[len] != '@')
		return false;
	memcpy(m->profile, p, len);
	m->profile[len] = 0;
	p += len + 1;
	if (*p < '0' || *p > '7')
		return false;
	m->gpu = (uint8_t)g;
	m->start = (uint8_t)(*p++ - '0');
	*s = p;
	return true;
}

int kerf_gpu_marks_parse_mig(const char *s, struct kerf_mig_mark *out,
			     size_t max, size_t *nr, struct kerf_err *err)
{
	char shown[80];
	const char *p = s;

	*nr = 0;
	while (*p) {
		if (*nr >= max)
			return kerf_err_set(err, -KERF_ELIMIT,
					    "annotation %s: more than %zu instances",
					    KERF_ANN_UNHEALTHY_MIG, max);
		if (!mig_mark(&p, &out[*nr]))
			return kerf_err_set(err, -KERF_EPARSE,
					    "annotation %s '%s': at offset %zu: expected GPU:PROFILE@START (like 0:3g.40gb@4, start 0..7)",
					    KERF_ANN_UNHEALTHY_MIG,
					    kerf_escape(shown, sizeof(shown), s),
					    (size_t)(p - s));
		(*nr)++;
		if (!next_item(&p))
			return kerf_err_set(err, -KERF_EPARSE,
					    "annotation %s '%s': at offset %zu: expected ',' and another instance",
					    KERF_ANN_UNHEALTHY_MIG,
					    kerf_escape(shown, sizeof(shown), s),
					    (size_t)(p - s));
	}
	return 0;
}
