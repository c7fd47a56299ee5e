/*
 * testapi_int: what the test API server's files share.
 *
 * Locks: one, st->lock, over the whole store (objects, event logs, kinds,
 * the resourceVersion counter).  A request handler holds it from routing to
 * its answer, except while it calls admission webhooks (webhook_dispatch.c
 * releases it and takes it again: what a handler looked up before must be
 * looked up again); a watch takes it for each step and waits on st->cond,
 * which every write broadcasts.  Nothing does I/O while holding it.
 *
 * Objects are jansson trees owned by the store; an event log entry holds
 * its own references (an object is never changed in place once stored: an
 * update stores a new tree).
 */
#ifndef KERF_TESTAPI_TESTAPI_INT_H
#define KERF_TESTAPI_TESTAPI_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/map.h"
#include "testapi/testapi.h"

struct kerf_ta_ctx;

enum kerf_ta_kflags {
	KERF_TA_NAMESPACED = 1u << 0,
	KERF_TA_STATUS = 1u << 1,      /* has a /status subresource */
	KERF_TA_GENERATION = 1u << 2,  /* metadata.generation kept */
	KERF_TA_CUSTOM = 1u << 3,      /* a custom resource (sorted keys) */
	KERF_TA_KEEP_STATUS = 1u << 4, /* status kept on create (nodes) */
};

/* Kind-specific steps; each may be NULL.  Return 0, or -1 with rs set. */
struct kerf_ta_hooks {
	int (*create)(struct kerf_ta_ctx *c, json_t *obj);
	int (*update)(struct kerf_ta_ctx *c, const json_t *old, json_t *obj);
	/* the stored form shown through this kind (events.k8s.io); new ref */
	json_t *(*view)(const json_t *stored);
	/* a body of this kind turned into the stored form; new ref */
	json_t *(*unview)(const json_t *body);
};

/* An event of a resource's log. */
enum kerf_ta_evtype { KERF_TA_ADDED, KERF_TA_MODIFIED, KERF_TA_DELETED };

struct kerf_ta_event {
	enum kerf_ta_evtype type;
	uint64_t rv;
	char *key;                 /* "ns/name" or "name" (owned) */
	json_t *obj;               /* after the change (deleted: last seen) */
	json_t *prev;              /* before it; NULL for ADDED */
};

struct kerf_ta_obj {
	char *key;                 /* owned; the map's key */
	json_t *obj;
	json_t *owners;            /* field path -> manager id (SSA-lite) */
};

/* Storage of one resource (shared by every kind that views it). */
struct kerf_ta_res {
	char *id;                  /* "pods", "tenants.kerf.io" (owned) */
	struct kerf_map objs;      /* key -> struct kerf_ta_obj */
	struct kerf_ta_event *ring;/* window entries */
	size_t ring_head;          /* oldest entry */
	size_t ring_nr;
	size_t ring_cap;
	uint64_t window_rv;        /* watches from rv < this are too old */
};

struct kerf_ta_kind {
	char *group;               /* "" for core (all owned) */
	char *version;
	char *plural;
	char *singular;
	char *kind;
	char *list_kind;
	json_t *short_names;       /* array or NULL */
	json_t *categories;        /* array or NULL */
	json_t *schema;            /* custom: openAPIV3Schema; NULL else */
	bool has_cel;              /* schema holds x-kubernetes-validations */
	unsigned flags;
	const char *verbs;         /* JSON array text */
	const struct kerf_ta_hooks *hooks;
	struct kerf_ta_res *res;
	char *crd;                 /* custom: name of its CRD (owned) */
};

struct kerf_testapi_store {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t rv;
	uint64_t uid_state;
	struct kerf_ta_kind **kinds;
	size_t nr_kinds, alloc_kinds;
	struct kerf_ta_res **res;
	size_t nr_res, alloc_res;
	size_t window;
	bool stopping;
};

struct kerf_ta_param {
	char *key;
	char *val;
};

struct kerf_ta_req {
	const char *method;
	const char *path;
	struct kerf_ta_param *params;
	size_t nr_params, alloc_params;
	const char *ctype;         /* Content-Type or "" */
	const char *accept;        /* Accept or "" */
	const char *user_agent;
	char *body;                /* NUL-terminated */
	size_t len;
	/* the route */
	const char *group;
	const char *version;
	const char *ns;            /* NULL: none in the path */
	const char *plural;
	const char *name;
	const char *sub;
	char *path_copy;           /* owns the route strings */
	const struct kerf_ta_kind *kind;
	bool anonymous;            /* no Authorization header */
};

enum { KERF_TA_MAX_WARNINGS = 32 };

struct kerf_ta_watch;

struct kerf_ta_resp {
	unsigned status;
	const char *ctype;
	char *body;                /* malloc'd */
	size_t len;
	char *warnings[KERF_TA_MAX_WARNINGS];
	size_t nr_warnings;
	unsigned retry_after_s;    /* 0: none */
	struct kerf_ta_watch *watch;
};

struct kerf_testapi {
	struct kerf_testapi_store st;
	struct kerf_testapi_opts opts;
	char *token;
	char *cert, *key;
	char url[64];
	uint16_t port;
	void *daemon;              /* struct MHD_Daemon */
	pthread_mutex_t watch_lock;
	size_t nr_watches;
	pthread_cond_t watch_cond;
};

struct kerf_ta_ctx {
	struct kerf_testapi *ta;
	struct kerf_testapi_store *st;
	struct kerf_ta_req *rq;
	struct kerf_ta_resp *rs;
	const struct kerf_ta_kind *k;
	bool dry_run;
	const char *manager;       /* fieldManager or User-Agent up to '/' */
	char manager_buf[128];
	json_t *apply_owners;      /* set by an apply: the new owners */
	bool no_admission;         /* a delete of the eviction: no webhooks */
};

/* -- store.c -- */
int kerf_ta_store_init(struct kerf_testapi_store *st, size_t window);
void kerf_ta_store_release(struct kerf_testapi_store *st);
struct kerf_ta_res *kerf_ta_res_get(struct kerf_testapi_store *st,
				    const char *id);
int kerf_ta_kind_add(struct kerf_testapi_store *st, struct kerf_ta_kind *k);
void kerf_ta_kind_free(struct kerf_ta_kind *k);
void kerf_ta_kinds_remove_crd(struct kerf_testapi_store *st, const char *crd);
const struct kerf_ta_kind *kerf_ta_kind_find(struct kerf_testapi_store *st,
					     const char *group,
					     const char *version,
					     const char *plural);
bool kerf_ta_group_known(struct kerf_testapi_store *st, const char *group,
			 const char *version);
struct kerf_ta_obj *kerf_ta_obj_get(struct kerf_ta_res *r, const char *ns,
				    const char *name);
/* Store obj (stolen) as a new object / a new version; returns the rv. */
int kerf_ta_obj_create(struct kerf_testapi_store *st, struct kerf_ta_res *r,
		       json_t *obj, struct kerf_ta_obj **out);
int kerf_ta_obj_update(struct kerf_testapi_store *st, struct kerf_ta_res *r,
		       struct kerf_ta_obj *o, json_t *obj);
void kerf_ta_obj_delete(struct kerf_testapi_store *st, struct kerf_ta_res *r,
			struct kerf_ta_obj *o);
void kerf_ta_res_clear(struct kerf_testapi_store *st, struct kerf_ta_res *r);
/* Objects sorted by key at the current rv, or NULL (ENOMEM) */
json_t *kerf_ta_res_snapshot(struct kerf_ta_res *r, uint64_t rv);
void kerf_ta_make_key(char *out, size_t size, const char *ns,
		      const char *name);
void kerf_ta_new_uid(struct kerf_testapi_store *st, char out[37]);

/* -- priority.c -- */
/* The Priority admission plugin on a pod being created (0, or answered). */
int kerf_ta_pod_priority(struct kerf_ta_ctx *c, json_t *pod, json_t *spec);

/* -- util.c -- */
const char *kerf_ta_param(const struct kerf_ta_req *rq, const char *key);
void kerf_ta_now(char out[32]);
void kerf_ta_now_plus(char out[32], int64_t secs);
void kerf_ta_now_micro(char out[40]);
const char *kerf_ta_str(const json_t *obj, const char *path);
json_t *kerf_ta_path(const json_t *obj, const char *path);
json_t *kerf_ta_path_mk(json_t *obj, const char *path);
int kerf_ta_set_str(json_t *obj, const char *path, const char *val);
char *kerf_ta_dump(const json_t *j, bool sorted, size_t *len);
int kerf_ta_microtime_check(const char *s, char *msg, size_t size);
bool kerf_ta_valid_label_value(const char *v);
bool kerf_ta_valid_qualified_name(const char *v);
int kerf_ta_b64_encode(const char *in, size_t len, char *out, size_t size);
int kerf_ta_b64_decode(const char *in, char *out, size_t size, size_t *len);
const char *kerf_ta_resource_name(const struct kerf_ta_kind *k, char *buf,
				  size_t size);
const char *kerf_ta_kind_name(const struct kerf_ta_kind *k, char *buf,
			      size_t size);

/* -- status.c -- */
void kerf_ta_send_json(struct kerf_ta_resp *rs, unsigned code, json_t *j,
		       bool sorted);
void kerf_ta_send_text(struct kerf_ta_resp *rs, unsigned code,
		       const char *ctype, const char *text);
int kerf_ta_status(struct kerf_ta_resp *rs, unsigned code, const char *reason,
		   const char *message, json_t *details);
/* 422 Invalid on resourceVersionMatch, as lists and watches answer it. */
struct kerf_ta_ctx;
int kerf_ta_rvmatch_invalid(struct kerf_ta_ctx *c, const char *msg);

int kerf_ta_statusf(struct kerf_ta_resp *rs, unsigned code,
		    const char *reason, json_t *details, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
json_t *kerf_ta_details(const struct kerf_ta_kind *k, const char *name);
int kerf_ta_not_found(struct kerf_ta_resp *rs, const struct kerf_ta_kind *k,
		      const char *name);
int kerf_ta_conflict_modified(struct kerf_ta_resp *rs,
			      const struct kerf_ta_kind *k, const char *name);
int kerf_ta_page_not_found(struct kerf_ta_resp *rs);
int kerf_ta_method_not_allowed(struct kerf_ta_resp *rs);
/* causes: array of {reason, message, field} (stolen) */
int kerf_ta_invalid(struct kerf_ta_resp *rs, const struct kerf_ta_kind *k,
		    const char *name, json_t *causes);
int kerf_ta_cause_add(json_t *causes, const char *reason, const char *field,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int kerf_ta_warn(struct kerf_ta_resp *rs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* -- crud.c -- */
void kerf_ta_crud(struct kerf_ta_ctx *c);
json_t *kerf_ta_out(const struct kerf_ta_kind *k, const json_t *stored);
int kerf_ta_decode_body(struct kerf_ta_ctx *c, json_t **out);
int kerf_ta_write_update(struct kerf_ta_ctx *c, struct kerf_ta_obj *o,
			 json_t *obj, const char *sub);
int kerf_ta_delete_obj(struct kerf_ta_ctx *c, struct kerf_ta_obj *o,
		       const json_t *opts, json_t **shown);
bool kerf_ta_ns_exists(struct kerf_testapi_store *st, const char *ns);

/* -- list.c -- */
struct kerf_ta_sel;
int kerf_ta_sel_parse(const char *label, const char *field,
		      const struct kerf_ta_kind *k, struct kerf_ta_sel **out,
		      char *msg, size_t size);
bool kerf_ta_sel_match(const struct kerf_ta_sel *s, const json_t *obj);
void kerf_ta_sel_free(struct kerf_ta_sel *s);
bool kerf_ta_labels_match(const json_t *selector, const json_t *labels);
void kerf_ta_list(struct kerf_ta_ctx *c);
void kerf_ta_delete_collection(struct kerf_ta_ctx *c);
int kerf_ta_token_encode(int64_t rv, const char *start, char *out,
			 size_t size);
int kerf_ta_token_decode(const char *tok, int64_t *rv, char *start,
			 size_t size);

/* -- watch.c -- */
void kerf_ta_watch_start(struct kerf_ta_ctx *c);
ssize_t kerf_ta_watch_read(void *cls, uint64_t pos, char *buf, size_t max);
void kerf_ta_watch_free(void *cls);

/* -- patch.c -- */
int kerf_ta_merge_patch(json_t *target, const json_t *patch);
json_t *kerf_ta_merge_patch_apply(const json_t *doc, const json_t *patch);
int kerf_ta_json_patch(json_t *doc, const json_t *ops, char *msg,
		       size_t size);
int kerf_ta_strategic_merge(json_t *target, const json_t *patch);
json_t *kerf_ta_yaml_to_json(const char *text, size_t len, char *msg,
			     size_t size);
void kerf_ta_patch(struct kerf_ta_ctx *c);

/* -- apply.c -- */
void kerf_ta_owners_update(json_t **owners, const json_t *old,
			   const json_t *new_obj, const char *manager_id);
int kerf_ta_apply(struct kerf_ta_ctx *c, const json_t *cur, json_t *owners,
		  const json_t *intent, bool force, json_t **out,
		  json_t **out_owners);
void kerf_ta_manager_id(char *out, size_t size, const char *manager,
			const char *op, const char *sub, const char *api);

/* -- pods.c -- */
extern const struct kerf_ta_hooks kerf_ta_pod_hooks;
void kerf_ta_binding(struct kerf_ta_ctx *c);
void kerf_ta_eviction(struct kerf_ta_ctx *c);
bool kerf_ta_pod_bound(const json_t *pod);
void kerf_ta_pod_conditions_norm(json_t *pod);

/* -- kinds.c -- */
int kerf_ta_kinds_builtin(struct kerf_testapi_store *st);
void kerf_ta_ensure_ns(struct kerf_testapi_store *st, const char *ns);

/* -- crd.c -- */
extern const struct kerf_ta_hooks kerf_ta_crd_hooks;
extern const struct kerf_ta_hooks kerf_ta_custom_hooks;
int kerf_ta_crd_serve(struct kerf_ta_ctx *c, const json_t *crd);

/* -- discovery.c -- */
bool kerf_ta_discovery(struct kerf_ta_ctx *c, char **segs, size_t nr);

/* -- http.c -- */
void kerf_ta_handle(struct kerf_testapi *ta, struct kerf_ta_req *rq,
		    struct kerf_ta_resp *rs);

#endif /* KERF_TESTAPI_TESTAPI_INT_H */
