#include "persist/state_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/buf.h"

/* --- encode ---------------------------------------------------------- */

static const char *const notice_names[] = {
	[KERF_NOTICE_BUDGET] = "Budget",
	[KERF_NOTICE_IDLE] = "Idle",
	[KERF_NOTICE_IDLE_EVICT] = "IdleEvict",
};

static json_t *names(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* Set key to v (taken); false when v is NULL or the set failed. */
static bool put(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0;
}

/*
 * Containers are attached to their parent as soon as they are made, so
 * one json_decref of the top frees everything on any failure.
 */
static json_t *child(json_t *o, const char *key, json_t *v)
{
	return put(o, key, v) ? v : NULL;
}

static json_t *enc_tenant(const struct kerf_persist_tenant *t)
{
	json_t *o = json_object();
	json_t *u = o ? child(o, "usageAvg", json_object()) : NULL;
	json_t *b = o ? child(o, "budget", json_object()) : NULL;
	bool ok = u && b && put(o, "name", json_string(t->name));

	for (size_t k = 0; ok && k < t->nr_usage_avg; k++)
		ok = put(u, t->usage_avg[k].name, json_integer(t->usage_avg[k].value));
	ok = ok && put(b, "usedMilliMs", json_integer(t->budget_used_milli_ms)) &&
	     put(b, "windowStartMs", json_integer(t->budget_window_start_ms)) &&
	     put(b, "warnedPct", json_integer(t->budget_warned_pct));
	if (ok)
		return o;
	json_decref(o);
	return NULL;
}

static json_t *enc_workload(const struct kerf_persist_workload *w)
{
	json_t *o = json_object();
	json_t *ev = o ? child(o, "evictedAtMs", json_array()) : NULL;
	char told[17];
	bool ok = ev != NULL;

	snprintf(told, sizeof(told), "%016" PRIx64, w->pending_told);
	for (int k = 0; ok && k < 3; k++)
		ok = json_array_append_new(ev, json_integer(w->evicted_at_ms[k])) == 0;
	ok = ok && put(o, "key", json_string(w->key)) &&
	     put(o, "seq", json_integer((json_int_t)w->seq)) &&
	     put(o, "lastCheckpointMs", json_integer(w->last_checkpoint_ms)) &&
	     put(o, "preemptions", json_integer(w->nr_preemptions)) &&
	     put(o, "lostGpuMilliMs", json_integer(w->lost_gpu_milli_ms)) &&
	     put(o, "askedBy", names(w->asked_by, w->nr_asked_by)) &&
	     put(o, "borrowed", json_boolean(w->borrowed)) &&
	     put(o, "preemptDeadlineMs", json_integer(w->preempt_deadline_ms)) &&
	     (!w->preempted_by || put(o, "preemptedBy", json_string(w->preempted_by))) &&
	     put(o, "idleReclaim", json_boolean(w->idle_reclaim)) &&
	     put(o, "idleNotified", json_boolean(w->idle_notified)) &&
	     put(o, "idleSinceMs", json_integer(w->idle_since_ms)) &&
	     put(o, "utilPct", json_integer(w->util_pct)) &&
	     put(o, "pending", json_string(kerf_pending_name((enum kerf_pending)w->pending))) &&
	     put(o, "pendingTold", json_string(told)) &&
	     put(o, "observed", json_boolean(w->observed)) &&
	     put(o, "nominated", names(w->nominated, w->nr_nominated));
	if (ok)
		return o;
	json_decref(o);
	return NULL;
}

int kerf_state_json_encode(const struct kerf_persist *p, char **text,
			   size_t *len, struct kerf_err *err)
{
	json_t *o = json_object();
	json_t *ts = o ? child(o, "tenants", json_array()) : NULL;
	json_t *ws = o ? child(o, "workloads", json_array()) : NULL;
	bool ok = ts && ws;

	*text = NULL;
	for (size_t i = 0; ok && i < p->nr_tenants; i++)
		ok = json_array_append_new(ts, enc_tenant(&p->tenants[i])) == 0;
	for (size_t i = 0; ok && i < p->nr_workloads; i++)
		ok = json_array_append_new(ws, enc_workload(&p->workloads[i])) == 0;
	ok = ok && put(o, "kind", json_string("KerfState")) &&
	     put(o, "version", json_integer(p->version)) &&
	     put(o, "avgAtMs", json_integer(p->avg_at_ms)) &&
	     put(o, "halfLifeMs", json_integer(p->half_life_ms)) &&
	     put(o, "nextSeq", json_integer((json_int_t)p->next_seq));
	if (ok && p->reserver) {
		json_t *r = child(o, "reservation", json_object());

		ok = r && put(r, "workload", json_string(p->reserver)) &&
		     put(r, "nodes", names(p->reserved, p->nr_reserved));
	}
	if (ok && p->nr_notices) {
		json_t *ns = child(o, "notices", json_array());

		ok = ns != NULL;
		for (size_t i = 0; ok && i < p->nr_notices; i++) {
			const struct kerf_persist_notice *n = &p->notices[i];
			json_t *x = json_object();

			ok = json_array_append_new(ns, x) == 0 &&
			     put(x, "kind", json_string(notice_names[n->kind])) &&
			     put(x, "tenant", json_string(n->tenant)) &&
			     (!n->workload || put(x, "workload", json_string(n->workload))) &&
			     put(x, "pct", json_integer(n->pct)) &&
			     put(x, "atMs", json_integer(n->at_ms));
		}
	}
	if (ok && p->policy) {
		json_t *pol = child(o, "policy", json_object());
		json_t *st = pol ? child(pol, "state", json_array()) : NULL;

		ok = st && put(pol, "name", json_string(p->policy));
		for (size_t i = 0; ok && i < p->nr_policy_state; i++)
			ok = json_array_append_new(st, json_integer(p->policy_state[i])) == 0;
	}
	if (ok)
		*text = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(o);
	if (!*text)
		return kerf_err_set(err, -KERF_ENOMEM, "state JSON: out of memory");
	*len = strlen(*text);
	return 0;
}

/* --- decode ---------------------------------------------------------- */

struct dec {
	struct kerf_err *err;
	char path[160];
};

static int fail(struct dec *d, const char *field, const char *why)
{
	char shown[80];

	return kerf_err_set(d->err, -KERF_EPARSE, "state JSON: %s%s%s: %s", d->path,
			    field && d->path[0] ? "." : "",
			    field ? kerf_escape(shown, sizeof(shown), field) : "", why);
}

/* The path of element i of array name, for nested messages. */
static void enter(struct dec *d, const char *name, size_t i, size_t *mark)
{
	size_t n = strlen(d->path);

	*mark = n;
	snprintf(d->path + n, sizeof(d->path) - n, "%s%s[%zu]", n ? "." : "", name, i);
}

static void leave(struct dec *d, size_t mark)
{
	d->path[mark] = '\0';
}

static int get_int(struct dec *d, json_t *v, const char *f, int64_t lo,
		   int64_t hi, int64_t *out)
{
	if (!json_is_integer(v))
		return fail(d, f, "must be an integer");
	if (json_integer_value(v) < lo || json_integer_value(v) > hi)
		return fail(d, f, "out of range");
	*out = json_integer_value(v);
	return 0;
}

static int get_bool(struct dec *d, json_t *v, const char *f, bool *out)
{
	if (!json_is_boolean(v))
		return fail(d, f, "must be true or false");
	*out = json_is_true(v);
	return 0;
}

static int get_str(struct dec *d, json_t *v, const char *f, char **out)
{
	size_t len;

	if (!json_is_string(v))
		return fail(d, f, "must be a string");
	len = json_string_length(v);
	if (len == 0 || len > KERF_WORKLOAD_KEY_MAX ||
	    memchr(json_string_value(v), '\0', len))
		return fail(d, f, "must be 1 to 317 bytes without NUL");
	free(*out);
	*out = malloc(len + 1);
	if (!*out)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	memcpy(*out, json_string_value(v), len + 1);
	return 0;
}

static int get_names(struct dec *d, json_t *v, const char *f, size_t max,
		     char ***out, uint32_t *nr)
{
	size_t n;

	if (!json_is_array(v))
		return fail(d, f, "must be an array of strings");
	n = json_array_size(v);
	if (n > max)
		return fail(d, f, "too many entries");
	*out = calloc(n ? n : 1, sizeof(**out));
	if (!*out)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		int rc = get_str(d, json_array_get(v, i), f, &(*out)[i]);

		if (rc < 0)
			return rc;
		(*nr)++;
	}
	return 0;
}

static int dec_tenant(struct dec *d, json_t *o, struct kerf_persist_tenant *t)
{
	const char *k;
	json_t *v;
	int rc = 0;

	if (!json_is_object(o))
		return fail(d, NULL, "must be an object");
	json_object_foreach(o, k, v) {
		int64_t x;

		if (!strcmp(k, "name")) {
			rc = get_str(d, v, k, &t->name);
		} else if (!strcmp(k, "usageAvg")) {
			const char *dim;
			json_t *q;

			if (!json_is_object(v) || json_object_size(v) > KERF_MAX_RES)
				return fail(d, k, "must be an object of at most 66 dimensions");
			t->usage_avg = calloc(KERF_MAX_RES, sizeof(*t->usage_avg));
			if (!t->usage_avg)
				return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
			json_object_foreach(v, dim, q) {
				struct kerf_persist_dim *u = &t->usage_avg[t->nr_usage_avg];

				if (!dim[0] || strlen(dim) >= sizeof(u->name))
					return fail(d, k, "a dimension name is empty or too long");
				rc = get_int(d, q, dim, 0, KERF_PERSIST_MAX_AMOUNT, &u->value);
				if (rc < 0)
					return rc;
				memcpy(u->name, dim, strlen(dim) + 1);
				t->nr_usage_avg++;
			}
		} else if (!strcmp(k, "budget")) {
			const char *bk;
			json_t *bv;

			if (!json_is_object(v))
				return fail(d, k, "must be an object");
			json_object_foreach(v, bk, bv) {
				if (!strcmp(bk, "usedMilliMs"))
					rc = get_int(d, bv, bk, 0, KERF_PERSIST_MAX_AMOUNT,
						     &t->budget_used_milli_ms);
				else if (!strcmp(bk, "windowStartMs"))
					rc = get_int(d, bv, bk, -KERF_PERSIST_MAX_MS,
						     KERF_PERSIST_MAX_MS, &t->budget_window_start_ms);
				else if (!strcmp(bk, "warnedPct") &&
					 (rc = get_int(d, bv, bk, 0, 100, &x)) == 0)
					t->budget_warned_pct = (int32_t)x;
				else if (strcmp(bk, "warnedPct"))
					rc = fail(d, bk, "unknown field");
				if (rc < 0)
					return rc;
			}
		} else {
			rc = fail(d, k, "unknown field");
		}
		if (rc < 0)
			return rc;
	}
	return t->name ? 0 : fail(d, "name", "missing");
}

static int pending_code(const char *name)
{
	for (int i = 0; i < KERF_PENDING_COUNT_; i++)
		if (!strcmp(kerf_pending_name((enum kerf_pending)i), name))
			return i;
	return -1;
}

/* One scalar field of a workload record. */
static int dec_wl_field(struct dec *d, const char *k, json_t *v,
			struct kerf_persist_workload *w)
{
	const int64_t T = KERF_PERSIST_MAX_MS, A = KERF_PERSIST_MAX_AMOUNT;
	int64_t x = 0;
	int rc;

	if (!strcmp(k, "key"))
		return get_str(d, v, k, &w->key);
	if (!strcmp(k, "preemptedBy"))
		return get_str(d, v, k, &w->preempted_by);
	if (!strcmp(k, "seq")) {
		rc = get_int(d, v, k, 1, A, &x);
		w->seq = (uint64_t)x;
		return rc;
	}
	if (!strcmp(k, "lastCheckpointMs"))
		return get_int(d, v, k, -T, T, &w->last_checkpoint_ms);
	if (!strcmp(k, "preemptions")) {
		rc = get_int(d, v, k, 0, 1000000000, &x);
		w->nr_preemptions = (uint32_t)x;
		return rc;
	}
	if (!strcmp(k, "lostGpuMilliMs"))
		return get_int(d, v, k, 0, A, &w->lost_gpu_milli_ms);
	if (!strcmp(k, "borrowed"))
		return get_bool(d, v, k, &w->borrowed);
	if (!strcmp(k, "preemptDeadlineMs"))
		return get_int(d, v, k, 0, T, &w->preempt_deadline_ms);
	if (!strcmp(k, "idleReclaim"))
		return get_bool(d, v, k, &w->idle_reclaim);
	if (!strcmp(k, "idleNotified"))
		return get_bool(d, v, k, &w->idle_notified);
	if (!strcmp(k, "idleSinceMs"))
		return get_int(d, v, k, -1, T, &w->idle_since_ms);
	if (!strcmp(k, "utilPct")) {
		rc = get_int(d, v, k, 0, 100, &x);
		w->util_pct = (int32_t)x;
		return rc;
	}
	if (!strcmp(k, "observed"))
		return get_bool(d, v, k, &w->observed);
	if (!strcmp(k, "pending")) {
		int c = json_is_string(v) ? pending_code(json_string_value(v)) : -1;

		if (c < 0)
			return fail(d, k, "must name a pending reason (New, QuotaExceeded, ...)");
		w->pending = (uint8_t)c;
		return 0;
	}
	if (!strcmp(k, "pendingTold")) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";
		char *end;

		if (strlen(s) != 16 || strspn(s, "0123456789abcdef") != 16)
			return fail(d, k, "must be 16 lower-case hex digits");
		w->pending_told = strtoull(s, &end, 16);
		return 0;
	}
	return fail(d, k, "unknown field");
}

static int dec_workload(struct dec *d, json_t *o, struct kerf_persist_workload *w)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o))
		return fail(d, NULL, "must be an object");
	w->idle_since_ms = -1;
	w->util_pct = 100;
	json_object_foreach(o, k, v) {
		int rc;

		if (!strcmp(k, "evictedAtMs")) {
			if (!json_is_array(v) || json_array_size(v) != 3)
				return fail(d, k, "must be an array of 3 times");
			for (size_t i = 0; i < 3; i++)
				if ((rc = get_int(d, json_array_get(v, i), k,
						  -KERF_PERSIST_MAX_MS, KERF_PERSIST_MAX_MS,
						  &w->evicted_at_ms[i])) < 0)
					return rc;
			continue;
		}
		if (!strcmp(k, "askedBy"))
			rc = get_names(d, v, k, KERF_PERSIST_MAX_ASKED_BY, &w->asked_by,
				       &w->nr_asked_by);
		else if (!strcmp(k, "nominated"))
			rc = get_names(d, v, k, KERF_PERSIST_MAX_NAMES, &w->nominated,
				       &w->nr_nominated);
		else
			rc = dec_wl_field(d, k, v, w);
		if (rc < 0)
			return rc;
	}
	if (!w->key)
		return fail(d, "key", "missing");
	return w->seq ? 0 : fail(d, "seq", "missing");
}

static int dec_list(struct dec *d, json_t *v, const char *name, size_t max,
		    size_t size, void **items, size_t *nr)
{
	size_t n;

	if (!json_is_array(v))
		return fail(d, name, "must be an array");
	n = json_array_size(v);
	if (n > max)
		return fail(d, name, "too many entries");
	*items = calloc(n ? n : 1, size);
	if (!*items)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	*nr = 0;
	for (size_t i = 0; i < n; i++) {
		size_t mark;
		int rc;

		enter(d, name, i, &mark);
		/* counted first: a half-decoded entry is released too */
		(*nr)++;
		rc = !strcmp(name, "tenants")
			     ? dec_tenant(d, json_array_get(v, i),
					  (struct kerf_persist_tenant *)*items + i)
			     : dec_workload(d, json_array_get(v, i),
					    (struct kerf_persist_workload *)*items + i);
		leave(d, mark);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int dec_reservation(struct dec *d, json_t *v, struct kerf_persist *p)
{
	const char *k;
	json_t *x;
	uint32_t nr = 0;
	int rc = 0;

	if (!json_is_object(v))
		return fail(d, "reservation", "must be an object");
	json_object_foreach(v, k, x) {
		if (!strcmp(k, "workload"))
			rc = get_str(d, x, "reservation.workload", &p->reserver);
		else if (!strcmp(k, "nodes") && !p->reserved) {
			rc = get_names(d, x, "reservation.nodes", KERF_PERSIST_MAX_NAMES,
				       &p->reserved, &nr);
			p->nr_reserved = nr;   /* what was decoded is released too */
		} else
			rc = fail(d, k, "unknown field in reservation");
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int dec_notice(struct dec *d, json_t *o, struct kerf_persist_notice *n)
{
	const char *k;
	json_t *v;
	int rc = 0;
	bool kind = false;

	if (!json_is_object(o))
		return fail(d, NULL, "must be an object");
	json_object_foreach(o, k, v) {
		int64_t x;

		if (!strcmp(k, "kind")) {
			for (int i = 0; i <= KERF_NOTICE_IDLE_EVICT; i++)
				if (json_is_string(v) && !strcmp(json_string_value(v), notice_names[i])) {
					n->kind = (uint8_t)i;
					kind = true;
				}
			if (!kind)
				rc = fail(d, k, "must be Budget, Idle or IdleEvict");
		} else if (!strcmp(k, "tenant")) {
			rc = get_str(d, v, k, &n->tenant);
		} else if (!strcmp(k, "workload")) {
			rc = get_str(d, v, k, &n->workload);
		} else if (!strcmp(k, "pct")) {
			rc = get_int(d, v, k, 0, 100, &x);
			n->pct = (int32_t)x;
		} else if (!strcmp(k, "atMs")) {
			rc = get_int(d, v, k, -KERF_PERSIST_MAX_MS, KERF_PERSIST_MAX_MS, &n->at_ms);
		} else {
			rc = fail(d, k, "unknown field");
		}
		if (rc < 0)
			return rc;
	}
	if (!kind || !n->tenant)
		return fail(d, kind ? "tenant" : "kind", "missing");
	return 0;
}

static int dec_notices(struct dec *d, json_t *v, struct kerf_persist *p)
{
	if (!json_is_array(v) || json_array_size(v) > KERF_NOTICES)
		return fail(d, "notices", "must be an array of at most 256");
	p->notices = calloc(json_array_size(v) ? json_array_size(v) : 1,
			    sizeof(*p->notices));
	if (!p->notices)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < json_array_size(v); i++) {
		size_t mark;
		int rc;

		enter(d, "notices", i, &mark);
		p->nr_notices++;
		rc = dec_notice(d, json_array_get(v, i), &p->notices[i]);
		leave(d, mark);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int dec_policy(struct dec *d, json_t *v, struct kerf_persist *p)
{
	json_t *name = json_object_get(v, "name"), *st = json_object_get(v, "state");
	size_t n;
	int rc;

	if (!json_is_object(v) || json_object_size(v) != 2 || !name || !st)
		return fail(d, "policy", "must be an object of name and state");
	rc = get_str(d, name, "policy.name", &p->policy);
	if (rc < 0)
		return rc;
	if (!json_is_array(st) || json_array_size(st) > KERF_PERSIST_MAX_POLICY_WORDS)
		return fail(d, "policy.state", "must be an array of integers, not too long");
	n = json_array_size(st);
	p->policy_state = calloc(n ? n : 1, sizeof(*p->policy_state));
	if (!p->policy_state)
		return kerf_err_set(d->err, -KERF_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_t *w = json_array_get(st, i);

		if (!json_is_integer(w))
			return fail(d, "policy.state", "must hold integers only");
		p->policy_state[i] = json_integer_value(w);
	}
	p->nr_policy_state = n;
	return 0;
}

static int dec_top(struct dec *d, json_t *o, struct kerf_persist *p)
{
	const char *k;
	json_t *v;
	bool kind = false;

	if (!json_is_object(o))
		return fail(d, NULL, "the document must be an object");
	json_object_foreach(o, k, v) {
		int64_t x;
		int rc;

		if (!strcmp(k, "kind")) {
			if (!json_is_string(v) || strcmp(json_string_value(v), "KerfState"))
				return fail(d, k, "must be \"KerfState\"");
			kind = true;
			continue;
		}
		if (!strcmp(k, "version")) {
			rc = get_int(d, v, k, 1, 1000000, &x);
			p->version = (uint32_t)x;
		} else if (!strcmp(k, "avgAtMs")) {
			rc = get_int(d, v, k, -KERF_PERSIST_MAX_MS, KERF_PERSIST_MAX_MS,
				     &p->avg_at_ms);
		} else if (!strcmp(k, "halfLifeMs")) {
			rc = get_int(d, v, k, 1, KERF_PERSIST_MAX_MS, &p->half_life_ms);
		} else if (!strcmp(k, "nextSeq")) {
			rc = get_int(d, v, k, 1, KERF_PERSIST_MAX_AMOUNT, &x);
			p->next_seq = (uint64_t)x;
		} else if (!strcmp(k, "tenants") && !p->tenants) {
			rc = dec_list(d, v, k, KERF_MAX_TENANTS, sizeof(*p->tenants),
				      (void **)&p->tenants, &p->nr_tenants);
		} else if (!strcmp(k, "workloads") && !p->workloads) {
			rc = dec_list(d, v, k, KERF_PERSIST_MAX_NAMES, sizeof(*p->workloads),
				      (void **)&p->workloads, &p->nr_workloads);
		} else if (!strcmp(k, "reservation")) {
			rc = dec_reservation(d, v, p);
		} else if (!strcmp(k, "policy") && !p->policy) {
			rc = dec_policy(d, v, p);
		} else if (!strcmp(k, "notices") && !p->notices) {
			rc = dec_notices(d, v, p);
		} else {
			rc = fail(d, k, "unknown field");
		}
		if (rc < 0)
			return rc;
	}
	if (!kind)
		return fail(d, "kind", "missing");
	return 0;
}

int kerf_state_json_decode(const char *text, size_t len, struct kerf_persist *p,
			   struct kerf_err *err)
{
	struct dec d = { .err = err };
	json_error_t je;
	json_t *o;
	int rc;

	kerf_persist_init(p);
	p->version = 0;   /* must be given */
	if (len > KERF_STATE_JSON_MAX)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "state JSON: %zu bytes, more than %d", len,
				    KERF_STATE_JSON_MAX);
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		char shown[120];

		return kerf_err_set(err, -KERF_EPARSE, "state JSON: line %d column %d: %s",
				    je.line, je.column,
				    kerf_escape(shown, sizeof(shown), je.text));
	}
	rc = dec_top(&d, o, p);
	json_decref(o);
	if (rc == 0)
		rc = kerf_persist_validate(p, err);
	if (rc < 0)
		kerf_persist_release(p);
	return rc;
}
