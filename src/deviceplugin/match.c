/*
 * match: Allocate to pod matching and preferred allocation (match.h).
 */
#include "deviceplugin/match.h"

#include <stdio.h>
#include <string.h>

int kerf_dp_assigned_parse(const char *value, uint64_t *mask, struct kerf_err *err)
{
	const char *p = value;
	uint64_t m = 0;

	if (!value || !*value)
		return kerf_err_set(err, -KERF_EPARSE, "kerf.io/assigned-gpus: empty");
	for (;;) {
		unsigned long v = 0;
		const char *start = p;
		while (*p >= '0' && *p <= '9') {
			v = v * 10 + (unsigned long)(*p - '0');
			if (v >= KERF_DP_MAX_GPUS)
				return kerf_err_set(err, -KERF_EPARSE,
					"kerf.io/assigned-gpus '%.40s': index over %d",
					value, KERF_DP_MAX_GPUS - 1);
			p++;
		}
		if (p == start)
			return kerf_err_set(err, -KERF_EPARSE,
				"kerf.io/assigned-gpus '%.40s': expected a GPU index at offset %td",
				value, p - value);
		if (m & (UINT64_C(1) << v))
			return kerf_err_set(err, -KERF_EPARSE,
				"kerf.io/assigned-gpus '%.40s': index %lu repeated", value, v);
		m |= UINT64_C(1) << v;
		if (*p == '\0')
			break;
		if (*p != ',')
			return kerf_err_set(err, -KERF_EPARSE,
				"kerf.io/assigned-gpus '%.40s': expected ',' at offset %td",
				value, p - value);
		p++;
	}
	*mask = m;
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
	int equal = -1, n_equal = 0, contains = -1, n_contains = 0;
	char text[200];

	if (n_ids == 0)
		return kerf_err_set(err, -KERF_EINVAL, "devices_ids: empty");
	int rc = kerf_dp_ids_mask(devs, n_devs, ids, n_ids, &want, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n_pods; i++) {
		if (pods[i].gpu_mask == want) {
			if (n_equal++ == 0)
				equal = (int)i;
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
			text, pods[equal].key, pods[equal + 1 < (int)n_pods ? equal + 1 : equal].key);
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
	for (size_t p = 0; p < n_pods; p++) {
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
