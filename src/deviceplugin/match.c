/*
 * match: Allocate to pod matching and preferred allocation (match.h).
 */
#include "deviceplugin/match.h"

#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/quantity.h"

int kerf_dp_assigned_parse(const char *value, uint64_t *mask, struct kerf_err *err)
{
	const char *p = value;
	uint64_t m = 0;
	char shown[64];

	if (!value || !*value)
		return kerf_err_set(err, -KERF_EPARSE, "kerf.io/assigned-gpus: empty");
	/* the value is quoted escaped: it comes from the API, not from kerf */
	kerf_escape(shown, sizeof(shown), value);
	for (;;) {
		unsigned long v = 0;
		const char *start = p;
		while (*p >= '0' && *p <= '9') {
			v = v * 10 + (unsigned long)(*p - '0');
			if (v >= KERF_DP_MAX_GPUS)
				return kerf_err_set(err, -KERF_EPARSE,
					"kerf.io/assigned-gpus '%s': index over %d",
					shown, KERF_DP_MAX_GPUS - 1);
			p++;
		}
		if (p == start)
			return kerf_err_set(err, -KERF_EPARSE,
				"kerf.io/assigned-gpus '%s': expected a GPU index at offset %td",
				shown, p - value);
		if (m & (UINT64_C(1) << v))
			return kerf_err_set(err, -KERF_EPARSE,
				"kerf.io/assigned-gpus '%s': index %lu repeated", shown, v);
		m |= UINT64_C(1) << v;
		if (*p == '\0')
			break;
		if (*p != ',')
			return kerf_err_set(err, -KERF_EPARSE,
				"kerf.io/assigned-gpus '%s': expected ',' at offset %td",
				shown, p - value);
		p++;
	}
	*mask = m;
	return 0;
}

/* n digits (no sign, no leading zero unless "0") into *v up to max. */
static const char *read_uint(const char *p, uint32_t max, uint32_t *v)
{
	uint32_t x = 0;
	const char *start = p;

	while (*p >= '0' && *p <= '9') {
		if (p > start && x == 0)
			return NULL;   /* leading zero */
		x = x * 10 + (uint32_t)(*p - '0');
		if (x > max)
			return NULL;
		p++;
	}
	if (p == start)
		return NULL;
	*v = x;
	return p;
}

int kerf_dp_mig_parse(const char *value, char profile[KERF_DP_MIG_PROFILE_MAX],
		      uint32_t *start, struct kerf_err *err)
{
	char shown[64];
	const char *at = value ? strchr(value, '@') : NULL;
	const char *p = value;
	uint32_t v;

	if (!value || !*value)
		return kerf_err_set(err, -KERF_EPARSE, "kerf.io/assigned-mig: empty");
	kerf_escape(shown, sizeof(shown), value);
	if (!at)
		return kerf_err_set(err, -KERF_EPARSE,
			"kerf.io/assigned-mig '%s': expected PROFILE@START such as 3g.40gb@4", shown);
	/* <n>g.<m>gb[+attr] */
	if (!(p = read_uint(p, 7, &v)) || v == 0 || *p++ != 'g' || *p++ != '.' ||
	    !(p = read_uint(p, 9999, &v)) || v == 0 || strncmp(p, "gb", 2) != 0)
		return kerf_err_set(err, -KERF_EPARSE,
			"kerf.io/assigned-mig '%s': profile must be <slices>g.<memory>gb such as 3g.40gb",
			shown);
	p += 2;
	if (*p == '+') {
		const char *attr = ++p;
		while (*p >= 'a' && *p <= 'z')
			p++;
		if (p == attr || p - attr > 8)
			return kerf_err_set(err, -KERF_EPARSE,
				"kerf.io/assigned-mig '%s': expected 1..8 lower-case letters after '+'",
				shown);
	}
	if (p != at)
		return kerf_err_set(err, -KERF_EPARSE,
			"kerf.io/assigned-mig '%s': unexpected character at offset %td", shown,
			p - value);
	if (!(p = read_uint(at + 1, KERF_DP_MIG_MAX_START, &v)) || *p)
		return kerf_err_set(err, -KERF_EPARSE,
			"kerf.io/assigned-mig '%s': start must be a memory slice 0..%d", shown,
			KERF_DP_MIG_MAX_START);
	/* the profile is at most 1+2+4+2+1+8 = 18 characters */
	memcpy(profile, value, (size_t)(at - value));
	profile[at - value] = '\0';
	*start = v;
	return 0;
}

int kerf_dp_fraction_parse(const char *value, uint32_t *milli, struct kerf_err *err)
{
	char shown[64];
	int64_t m;

	if (!value || !*value)
		return kerf_err_set(err, -KERF_EPARSE, "kerf.io/assigned-fraction: empty");
	kerf_escape(shown, sizeof(shown), value);
	if (kerf_quantity_parse_milli(value, &m) < 0)
		return kerf_err_set(err, -KERF_EPARSE,
			"kerf.io/assigned-fraction '%s': expected a fraction of one GPU such as 250m",
			shown);
	if (m < 1 || m > 999)
		return kerf_err_set(err, -KERF_ERANGE,
			"kerf.io/assigned-fraction '%s': must be 1m..999m (a whole GPU is kerf.io/assigned-gpus alone)",
			shown);
	*milli = (uint32_t)m;
	return 0;
}

int kerf_dp_sharing_parse(const char *value, enum kerf_dp_sharing *out, struct kerf_err *err)
{
	char shown[64];

	if (value && !strcmp(value, "mps")) {
		*out = KERF_DP_SHARE_MPS;
		return 0;
	}
	if (value && !strcmp(value, "timeslice")) {
		*out = KERF_DP_SHARE_TIMESLICE;
		return 0;
	}
	return kerf_err_set(err, -KERF_EPARSE, "kerf.io/gpu-sharing '%s': expected mps or timeslice",
			    kerf_escape(shown, sizeof(shown), value ? value : ""));
}

int kerf_dp_pod_assign_parse(struct kerf_dp_pod_assign *out, const char *key,
			     const char *gpus, const char *mig, const char *fraction,
			     const char *sharing, uint32_t uid, struct kerf_err *err)
{
	struct kerf_dp_pod_assign a = { .key = key, .uid = uid };
	int rc;

	if (!gpus)
		return kerf_err_set(err, -KERF_EPARSE, "kerf.io/assigned-gpus: missing");
	if ((rc = kerf_dp_assigned_parse(gpus, &a.gpu_mask, err)) < 0)
		return rc;
	if (mig && (rc = kerf_dp_mig_parse(mig, a.mig_profile, &a.mig_start, err)) < 0)
		return rc;
	if (fraction && (rc = kerf_dp_fraction_parse(fraction, &a.fraction_milli, err)) < 0)
		return rc;
	if (sharing && (rc = kerf_dp_sharing_parse(sharing, &a.sharing, err)) < 0)
		return rc;
	if (mig && fraction)
		return kerf_err_set(err, -KERF_EINVAL,
			"kerf.io/assigned-mig and kerf.io/assigned-fraction: a pod gets one or the other");
	if ((mig || fraction) && __builtin_popcountll(a.gpu_mask) != 1)
		return kerf_err_set(err, -KERF_EINVAL,
			"kerf.io/assigned-gpus: %s is on exactly one GPU, not %d",
			mig ? "a MIG instance (kerf.io/assigned-mig)"
			    : "a fraction (kerf.io/assigned-fraction)",
			__builtin_popcountll(a.gpu_mask));
	if (sharing && !fraction)
		return kerf_err_set(err, -KERF_EINVAL,
			"kerf.io/gpu-sharing: applies to a fraction; the pod has no kerf.io/assigned-fraction");
	*out = a;
	return 0;
}

int kerf_dp_pod_is_whole(const struct kerf_dp_pod_assign *pod)
{
	return !pod->mig_profile[0] && !pod->fraction_milli;
}

int kerf_dp_device_is_for(const struct kerf_dp_device *d, const struct kerf_dp_pod_assign *pod)
{
	if (d->gpu_index >= KERF_DP_MAX_GPUS || pod->gpu_mask != UINT64_C(1) << d->gpu_index)
		return 0;
	if (d->kind == KERF_DP_DEV_MIG)
		return pod->mig_profile[0] && !strcmp(pod->mig_profile, d->mig_profile) &&
		       pod->mig_start == d->mig_start;
	if (d->kind == KERF_DP_DEV_SHARE)
		return pod->fraction_milli > 0;
	return 0;
}

const struct kerf_dp_device *kerf_dp_device_find(const struct kerf_dp_device *devs,
						 size_t n_devs, const char *id)
{
	for (size_t i = 0; i < n_devs; i++)
		if (strcmp(devs[i].id, id) == 0)
			return &devs[i];
	return NULL;
}

int kerf_dp_ids_mask(const struct kerf_dp_device *devs, size_t n_devs,
		     char *const *ids, size_t n_ids, uint64_t *mask,
		     struct kerf_err *err)
{
	uint64_t m = 0;

	for (size_t i = 0; i < n_ids; i++) {
		const struct kerf_dp_device *d = kerf_dp_device_find(devs, n_devs, ids[i]);
		if (!d)
			return kerf_err_set(err, -KERF_ENOTFOUND,
				"device '%.63s' is not one this plugin serves", ids[i]);
		if (d->gpu_index >= KERF_DP_MAX_GPUS)
			return kerf_err_set(err, -KERF_ERANGE,
				"device '%.63s': GPU index %u over %d", ids[i],
				d->gpu_index, KERF_DP_MAX_GPUS - 1);
		uint64_t bit = UINT64_C(1) << d->gpu_index;
		if (m & bit)
			return kerf_err_set(err, -KERF_EINVAL,
				"device '%.63s' requested twice (GPU %u)", ids[i], d->gpu_index);
		m |= bit;
	}
	*mask = m;
	return 0;
}

/* "0,2,5" of a mask, for messages. */
static void mask_text(uint64_t m, char *out, size_t size)
{
	size_t n = 0;
	out[0] = '\0';
	for (unsigned i = 0; i < KERF_DP_MAX_GPUS && n + 4 < size; i++) {
		if (!(m & (UINT64_C(1) << i)))
			continue;
		int w = snprintf(out + n, size - n, n ? ",%u" : "%u", i);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

int kerf_dp_allocate_match(const struct kerf_dp_device *devs, size_t n_devs,
			   char *const *ids, size_t n_ids,
			   const struct kerf_dp_pod_assign *pods, size_t n_pods,
			   struct kerf_err *err)
{
	uint64_t want;
	int equal = -1, equal2 = -1, n_equal = 0, contains = -1, n_contains = 0;
	char text[200];

	if (n_ids == 0)
		return kerf_err_set(err, -KERF_EINVAL, "devices_ids: empty");
	int rc = kerf_dp_ids_mask(devs, n_devs, ids, n_ids, &want, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n_pods; i++) {
		if (!kerf_dp_pod_is_whole(&pods[i]))
			continue;
		if (pods[i].gpu_mask == want) {
			if (n_equal++ == 0)
				equal = (int)i;
			else if (n_equal == 2)
				equal2 = (int)i;
		} else if ((pods[i].gpu_mask & want) == want) {
			if (n_contains++ == 0)
				contains = (int)i;
		}
	}
	mask_text(want, text, sizeof(text));
	if (n_equal == 1)
		return equal;
	if (n_equal > 1)
		return kerf_err_set(err, -KERF_EEXIST,
			"GPUs %s are assigned to both '%.100s' and '%.100s'; refusing a double booking",
			text, pods[equal].key, pods[equal2].key);
	if (n_contains == 1)
		return contains;
	if (n_contains > 1)
		return kerf_err_set(err, -KERF_EEXIST,
			"GPUs %s are part of the assignment of %d pods; cannot tell which", text,
			n_contains);
	return kerf_err_set(err, -KERF_ENOTFOUND,
		"GPUs %s (device '%.63s'%s) are not what kerf assigned to any pending pod on this node (kerf.io/assigned-gpus)",
		text, ids[0], n_ids > 1 ? ", ..." : "");
}

static int in_list(char *const *list, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], id) == 0)
			return 1;
	return 0;
}

static int64_t numa_of(const struct kerf_dp_device *devs, size_t n_devs, const char *id)
{
	const struct kerf_dp_device *d = kerf_dp_device_find(devs, n_devs, id);
	return d ? d->numa_node : -1;
}

/* Try a pod's assignment; returns the count written, or 0. */
static size_t prefer_pod(const struct kerf_dp_device *devs, size_t n_devs,
			 char *const *available, size_t n_available,
			 char *const *must_include, size_t n_must, size_t size,
			 uint64_t mask, size_t *out)
{
	size_t n = 0;
	uint64_t seen = 0;

	if ((size_t)__builtin_popcountll(mask) != size)
		return 0;
	for (size_t i = 0; i < n_available; i++) {
		const struct kerf_dp_device *d = kerf_dp_device_find(devs, n_devs, available[i]);
		if (!d || d->gpu_index >= KERF_DP_MAX_GPUS)
			continue;
		uint64_t bit = UINT64_C(1) << d->gpu_index;
		if (!(mask & bit) || (seen & bit))
			continue;
		seen |= bit;
		out[n++] = i;
	}
	if (seen != mask)
		return 0;
	for (size_t j = 0; j < n_must; j++) {
		int found = 0;
		for (size_t k = 0; k < n; k++)
			found |= strcmp(available[out[k]], must_include[j]) == 0;
		if (!found)
			return 0;
	}
	return n;
}

int kerf_dp_prefer(const struct kerf_dp_device *devs, size_t n_devs,
		   char *const *available, size_t n_available,
		   char *const *must_include, size_t n_must,
		   size_t size,
		   const struct kerf_dp_pod_assign *pods, size_t n_pods,
		   size_t *out, struct kerf_err *err)
{
	size_t n = 0;
	int64_t numa = -1;

	if (n_available > KERF_DP_MAX_AVAILABLE)
		return kerf_err_set(err, -KERF_ELIMIT,
			"available_deviceIDs: %zu devices, over %d", n_available,
			KERF_DP_MAX_AVAILABLE);
	if (n_must > size)
		return kerf_err_set(err, -KERF_EINVAL,
			"must_include_deviceIDs: %zu devices, more than allocation_size %zu",
			n_must, size);
	for (size_t j = 0; j < n_must; j++)
		if (!in_list(available, n_available, must_include[j]))
			return kerf_err_set(err, -KERF_EINVAL,
				"must_include_deviceIDs: '%.63s' is not in available_deviceIDs",
				must_include[j]);
	/* One MIG instance or one share: the one a pod was given. */
	for (size_t p = 0; size == 1 && p < n_pods; p++) {
		if (kerf_dp_pod_is_whole(&pods[p]))
			continue;
		for (size_t i = 0; i < n_available; i++) {
			const struct kerf_dp_device *d = kerf_dp_device_find(devs, n_devs, available[i]);
			if (d && kerf_dp_device_is_for(d, &pods[p]) &&
			    (n_must == 0 || !strcmp(must_include[0], available[i]))) {
				out[0] = i;
				return 1;
			}
		}
	}
	for (size_t p = 0; p < n_pods; p++) {
		if (!kerf_dp_pod_is_whole(&pods[p]))
			continue;
		size_t got = prefer_pod(devs, n_devs, available, n_available,
					must_include, n_must, size, pods[p].gpu_mask, out);
		if (got == size)
			return (int)got;
	}
	/* must_include first, in available's order. */
	for (size_t i = 0; i < n_available && n < size; i++)
		if (in_list(must_include, n_must, available[i]) &&
		    !in_list(available, i, available[i]))
			out[n++] = i;
	if (n > 0) {
		numa = numa_of(devs, n_devs, available[out[0]]);
	} else {
		size_t best = 0;
		for (size_t i = 0; i < n_available; i++) {
			int64_t node = numa_of(devs, n_devs, available[i]);
			size_t count = 0;
			for (size_t k = 0; k < n_available; k++)
				count += numa_of(devs, n_devs, available[k]) == node;
			if (node >= 0 && count > best) {
				best = count;
				numa = node;
			}
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n_available && n < size; i++) {
			int taken = 0;
			for (size_t k = 0; k < n; k++)
				taken |= strcmp(available[out[k]], available[i]) == 0;
			if (taken)
				continue;
			if (pass == 0 && (numa < 0 || numa_of(devs, n_devs, available[i]) != numa))
				continue;
			out[n++] = i;
		}
	}
	return (int)n;
}
