#include "base/map.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t kerf_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return mix64(h);
}

void kerf_map_init(struct kerf_map *m, bool str_keys)
{
	memset(m, 0, sizeof(*m));
	m->str_keys = str_keys;
}

void kerf_map_release(struct kerf_map *m)
{
	free(m->kv);
	kerf_map_init(m, m->str_keys);
}

enum { EMPTY = 0, DELETED = 1 };

/* The stored hash: 32 bits, never EMPTY or DELETED. */
static uint32_t stored(uint64_t hash)
{
	uint32_t h = (uint32_t)hash;

	return h > DELETED ? h : h + 2;
}

static bool same(const struct kerf_map *m, size_t i, uint32_t hash,
		 const char *s, uint64_t u)
{
	if (m->h[i] != hash)
		return false;
	/* s is NULL for number keys (told so for -O3, which inlines both) */
	return m->str_keys ? s && strcmp(m->kv[i].key.s, s) == 0 : m->kv[i].key.u == u;
}

/* The slot of the key, or -1. */
static ptrdiff_t find(const struct kerf_map *m, uint32_t hash, const char *s,
		      uint64_t u)
{
	if (!m->cap)
		return -1;
	for (size_t i = hash & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->h[i] == EMPTY)
			return -1;
		if (same(m, i, hash, s, u))
			return (ptrdiff_t)i;
	}
}

/* Rehash into cap slots (a power of two, the keys at most 7/8 of it). */
static int rehash(struct kerf_map *m, size_t cap)
{
	struct kerf_map_slot *kv = malloc(cap * (sizeof(*kv) + sizeof(uint32_t)));
	uint32_t *h;

	if (!kv)
		return -KERF_ENOMEM;
	h = (uint32_t *)(void *)(kv + cap);
	memset(h, 0, cap * sizeof(*h));
	for (size_t k = 0; k < m->cap; k++) {
		size_t i;

		if (m->h[k] <= DELETED)
			continue;
		for (i = m->h[k] & (cap - 1); h[i] != EMPTY; i = (i + 1) & (cap - 1))
			;
		h[i] = m->h[k];
		kv[i] = m->kv[k];
	}
	free(m->kv);
	m->kv = kv;
	m->h = h;
	m->cap = cap;
	m->nr_deleted = 0;
	return 0;
}

int kerf_map_reserve(struct kerf_map *m, size_t nr)
{
	size_t need = m->nr + m->nr_deleted + nr, cap = m->cap ? m->cap : 16;

	if (need < m->nr || need > SIZE_MAX / 32)
		return -KERF_ELIMIT;
	if (8 * need < 7 * m->cap)
		return 0;
	/* deleted entries go at the rehash; only live keys need room */
	while (7 * cap < 8 * (m->nr + nr) + 8)
		cap *= 2;
	return rehash(m, cap);
}

static int put(struct kerf_map *m, uint32_t hash, const char *s, uint64_t u,
	       void *val)
{
	ptrdiff_t at = find(m, hash, s, u);
	size_t i;
	int rc;

	if (at >= 0) {
		m->kv[at].val = val;
		return 0;
	}
	rc = kerf_map_reserve(m, 1);
	if (rc < 0)
		return rc;
	for (i = hash & (m->cap - 1); m->h[i] > DELETED; i = (i + 1) & (m->cap - 1))
		;
	if (m->h[i] == DELETED)
		m->nr_deleted--;
	m->h[i] = hash;
	if (m->str_keys)
		m->kv[i].key.s = s;
	else
		m->kv[i].key.u = u;
	m->kv[i].val = val;
	m->nr++;
	return 0;
}

static bool del(struct kerf_map *m, uint32_t hash, const char *s, uint64_t u)
{
	ptrdiff_t at = find(m, hash, s, u);

	if (at < 0)
		return false;
	m->h[at] = DELETED;
	m->kv[at].val = NULL;
	m->nr--;
	m->nr_deleted++;
	return true;
}

void *kerf_map_next(const struct kerf_map *m, size_t *i)
{
	for (; *i < m->cap; (*i)++)
		if (m->h[*i] > DELETED)
			return m->kv[(*i)++].val;
	return NULL;
}

void *kerf_map_get_str(const struct kerf_map *m, const char *key)
{
	ptrdiff_t at = find(m, stored(kerf_hash_str(key)), key, 0);

	return at >= 0 ? m->kv[at].val : NULL;
}

void *kerf_map_get_u64(const struct kerf_map *m, uint64_t key)
{
	ptrdiff_t at = find(m, stored(mix64(key)), NULL, key);

	return at >= 0 ? m->kv[at].val : NULL;
}

int kerf_map_put_str(struct kerf_map *m, const char *key, void *val)
{
	return put(m, stored(kerf_hash_str(key)), key, 0, val);
}

int kerf_map_put_u64(struct kerf_map *m, uint64_t key, void *val)
{
	return put(m, stored(mix64(key)), NULL, key, val);
}

bool kerf_map_del_str(struct kerf_map *m, const char *key)
{
	return del(m, stored(kerf_hash_str(key)), key, 0);
}

bool kerf_map_del_u64(struct kerf_map *m, uint64_t key)
{
	return del(m, stored(mix64(key)), NULL, key);
}
