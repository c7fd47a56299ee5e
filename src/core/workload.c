#include "core/workload.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

static const char *const pending_names[KERF_PENDING_COUNT_] = {
	[KERF_PENDING_NONE] = "None",
	[KERF_PENDING_NEW] = "New",
	[KERF_PENDING_CLASS] = "ClassNotAllowed",
	[KERF_PENDING_QUOTA] = "QuotaExceeded",
	[KERF_PENDING_CAPACITY] = "InsufficientCapacity",
	[KERF_PENDING_NEVER_FITS] = "NeverFits",
	[KERF_PENDING_REQUEUED] = "Requeued",
	[KERF_PENDING_PREEMPTING] = "WaitingForPreemption",
	[KERF_PENDING_BUDGET] = "BudgetExhausted",
};

const char *kerf_pending_name(enum kerf_pending p)
{
	return p < KERF_PENDING_COUNT_ ? pending_names[p] : "Unknown";
}

uint32_t kerf_workload_pods(const struct kerf_workload *w)
{
	uint32_t n = 0;

	for (int i = 0; i < w->nr_sets; i++)
		n += w->sets[i].count;
	return n;
}

int64_t kerf_workload_gpu_milli(const struct kerf_workload *w)
{
	int64_t g = 0;

	for (int i = 0; i < w->nr_sets; i++)
		g += kerf_pod_gpu_milli_total(&w->sets[i].req) * w->sets[i].count;
	return g;
}

int kerf_workload_validate(const struct kerf_workload *w, struct kerf_err *err)
{
	uint64_t total = 0;

	if (w->nr_sets < 1 || w->nr_sets > KERF_MAX_PODSETS)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': pod sets: %d, must be 1..%d",
				    kerf_workload_name(w), w->nr_sets, KERF_MAX_PODSETS);
	for (int i = 0; i < w->nr_sets; i++) {
		struct kerf_err why = { 0 };

		if (w->sets[i].count < 1)
			return kerf_err_set(err, -KERF_EINVAL,
					    "workload '%s': pod set %d: count must be at least 1",
					    kerf_workload_name(w), i);
		if (kerf_pod_validate(&w->sets[i].req, &why) < 0)
			return kerf_err_set(err, -KERF_EINVAL,
					    "workload '%s': pod set %d: %s",
					    kerf_workload_name(w), i, why.msg);
		total += w->sets[i].count;
	}
	if (total > KERF_MAX_GANG_PODS)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "workload '%s': %" PRIu64 " pods, more than %d",
				    kerf_workload_name(w), total, KERF_MAX_GANG_PODS);
	if (w->min_count < 1 || w->min_count > total)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': min_count %u must be 1..%" PRIu64,
				    kerf_workload_name(w), w->min_count, total);
	if (w->topology > KERF_TOPO_PACK)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload '%s': unknown topology", kerf_workload_name(w));
	return 0;
}

int kerf_workload_key_check(const char *key, struct kerf_err *err)
{
	char shown[80];
	size_t len;

	if (!key || !key[0])
		return kerf_err_set(err, -KERF_EINVAL, "workload key: must not be empty");
	len = strnlen(key, KERF_WORKLOAD_KEY_MAX + 1);
	if (len > KERF_WORKLOAD_KEY_MAX)
		return kerf_err_set(err, -KERF_EINVAL,
				    "workload key '%s': longer than %d bytes",
				    kerf_escape(shown, sizeof(shown), key),
				    KERF_WORKLOAD_KEY_MAX);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
			return kerf_err_set(err, -KERF_EINVAL,
					    "workload key '%s': holds a control character",
					    kerf_escape(shown, sizeof(shown), key));
	return 0;
}

uint64_t kerf_pending_hash(enum kerf_pending code, const char *text)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)code;

	for (const char *c = text; *c; c++) {
		h ^= (unsigned char)*c;
		h *= 0x100000001b3ULL;
	}
	return h | 1;
}

const char kerf_wl_no_text[1] = "";

static const char no_memory_text[] = "(its reason: out of memory)";

void kerf_workload_clear_text(struct kerf_workload *w)
{
	if (w->pending_text && w->pending_text != kerf_wl_no_text &&
	    w->pending_text != no_memory_text)
		free((char *)w->pending_text);
	w->pending_text = kerf_wl_no_text;
}

void kerf_workload_set_text(struct kerf_workload *w, const char *text)
{
	char *copy;

	if (w->pending_text && strcmp(w->pending_text, text) == 0)
		return;
	kerf_workload_clear_text(w);
	if (!text[0])
		return;
	copy = strdup(text);
	w->pending_text = copy ? copy : no_memory_text;
}

void kerf_workload_copy(struct kerf_workload *dst,
			const struct kerf_workload *src)
{
	int n = src->nr_sets < 1 ? 1 : src->nr_sets > KERF_MAX_PODSETS
		? KERF_MAX_PODSETS : src->nr_sets;

	memset(dst, 0, sizeof(*dst));
	memcpy(dst, src, kerf_workload_size(n));
	dst->pending_text = kerf_wl_no_text;   /* the state's own */
	dst->pre = NULL;                       /* so is this */
}

const struct kerf_wl_preempt kerf_wl_no_preempt;

struct kerf_wl_preempt *kerf_workload_preempt(struct kerf_workload *w)
{
	if (!w->pre)
		w->pre = calloc(1, sizeof(*w->pre));
	return w->pre;
}

void kerf_workload_free_preempt(struct kerf_workload *w)
{
	if (!w->pre)
		return;
	free(w->pre->asked_by);
	free(w->pre->nominated);
	free(w->pre);
	w->pre = NULL;
}

void kerf_workload_charged(const struct kerf_workload *w, struct kerf_res *out)
{
	const int64_t *charged = kerf_wl_charge(w);

	kerf_res_zero(out);
	for (int i = 0; charged && i < w->nr_charged; i++)
		out->v[i] = charged[i];
}
