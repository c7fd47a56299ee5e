/*
 * map: an open-addressing hash map from a key to a pointer, for lookups by
 * name or id (a node by name, a workload by key or id).  Keys are strings
 * (borrowed: the caller keeps each key alive and unchanged while it is in
 * the map, typically the value's own name) or 64-bit integers, fixed at
 * init.  Lookups and changes are O(1) on average; the table stays at most
 * seven eighths full (deleted entries included) and never shrinks below
 * 16 slots.  A slot is 20 bytes: 32 bits of the key's hash in an array of
 * their own (probes scan it, and compare a key only when its hash
 * matches) and the key and value in another, so a key costs 23 to 46
 * bytes of table: kerf serve keeps several maps of 50,000 pods.
 * Iteration order is not offered: nothing may depend on hash order
 * (kerf_map_next walks every value, to free them).
 */
#ifndef KERF_BASE_MAP_H
#define KERF_BASE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kerf_map_slot {
	union {
		const char *s;
		uint64_t u;
	} key;
	void *val;
};

struct kerf_map {
	struct kerf_map_slot *kv;   /* cap slots, then cap hashes; or NULL */
	uint32_t *h;                /* in kv's allocation: 0 empty, 1 deleted,
				       else the key's hash (2 and up) */
	size_t cap;                 /* a power of two, or 0 */
	size_t nr;                  /* keys in the map */
	size_t nr_deleted;          /* deleted entries still in the table */
	bool str_keys;
};

void kerf_map_init(struct kerf_map *m, bool str_keys);
void kerf_map_release(struct kerf_map *m);

/* The value of key, or NULL. */
void *kerf_map_get_str(const struct kerf_map *m, const char *key);
void *kerf_map_get_u64(const struct kerf_map *m, uint64_t key);

/*
 * Set key's value (val must not be NULL), replacing any; 0, or -KERF_ENOMEM
 * with the map unchanged.
 */
int kerf_map_put_str(struct kerf_map *m, const char *key, void *val)
	__attribute__((warn_unused_result));
int kerf_map_put_u64(struct kerf_map *m, uint64_t key, void *val)
	__attribute__((warn_unused_result));

/* Make room for nr more keys, so the next nr puts cannot fail. */
int kerf_map_reserve(struct kerf_map *m, size_t nr)
	__attribute__((warn_unused_result));

/*
 * The next value from slot *i on (start at 0), *i moved past it; NULL at
 * the end.  Walk with: for (size_t i = 0; (v = kerf_map_next(m, &i));).
 */
void *kerf_map_next(const struct kerf_map *m, size_t *i);

/* Remove key; true when it was there. */
bool kerf_map_del_str(struct kerf_map *m, const char *key);
bool kerf_map_del_u64(struct kerf_map *m, uint64_t key);

/* 64-bit hash of a string (FNV-1a, then mixed). */
uint64_t kerf_hash_str(const char *s);

#endif /* KERF_BASE_MAP_H */
