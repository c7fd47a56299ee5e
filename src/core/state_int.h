/*
 * state_int: what the state's files share and nobody else uses.
 */
#ifndef KERF_CORE_STATE_INT_H
#define KERF_CORE_STATE_INT_H

#include "core/state.h"

/* The root's nominal is what the nodes have. */
void kerf_state_follow_capacity(struct kerf_state *st);

/* usage_avg has an entry per tenant slot (grown with the tree). */
int kerf_state_grow_tenants(struct kerf_state *st, size_t nr);

void kerf_state_free_workload(struct kerf_workload *w);

/* The tenant's pending counters, for w coming (+1) or going (-1). */
void kerf_state_count_pending(struct kerf_state *st,
			      const struct kerf_workload *w, int dir);

/* w changes state: the tenant's pending counters follow. */
void kerf_state_set_wl_state(struct kerf_state *st, struct kerf_workload *w,
			     enum kerf_wl_state to);

/* Checks common to submit and adopt; names the workload and the field. */
int kerf_state_check_new(const struct kerf_state *st, const char *key,
			 const struct kerf_workload *w, struct kerf_err *err);

/* A new workload from template w (not yet in the state); NULL on OOM. */
struct kerf_workload *kerf_state_make_workload(struct kerf_state *st,
					       const char *key,
					       const struct kerf_workload *w,
					       int64_t submit_ms);

/*
 * The bytes of a state's workload's allocation (kerf_slab's: freed with
 * its size): its sets, asked[] when kept, its key unless borrowed.
 */
size_t kerf_state_workload_bytes(const struct kerf_workload *w);

/* The bytes of a running workload's pods with its charge after them. */
size_t kerf_state_pods_bytes(uint32_t nr, size_t dims);

/* w's requests resolved from what it asked, for the cluster as it stands. */
void kerf_state_resolve(const struct kerf_state *st, struct kerf_workload *w);

/* Room for one more workload in the array and the maps. */
int kerf_state_reserve_one(struct kerf_state *st);

/* Put w into the array and both maps (room from kerf_state_reserve_one). */
void kerf_state_insert(struct kerf_state *st, struct kerf_workload *w);

/* Take w out of the array and the maps and free it. */
void kerf_state_drop(struct kerf_state *st, struct kerf_workload *w);

/*
 * The undo of kerf_state_admit: w's pods unbound, its charge given back
 * (its state is the caller's to set).
 */
int kerf_state_give_back(struct kerf_state *st, struct kerf_workload *w,
			 struct kerf_err *err);

#endif /* KERF_CORE_STATE_INT_H */
