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
	free(m->e);
	kerf_map_init(m, m->str_keys);
}

static bool same(const struct kerf_map *m, const struct kerf_map_entry *e,
		 uint32_t hash, const char *s, uint64_t u)
{
	if (e->hash != hash)
		return false;
	/* s is NULL for number keys (told so for -O3, which inlines both) */
	return m->str_keys ? s && strcmp(e->key.s, s) == 0 : e->key.u == u;
}

/* The entry of the key, or NULL. */
static struct kerf_map_entry *find(const struct kerf_map *m, uint32_t hash,
				   const char *s, uint64_t u)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct kerf_map_entry *e = &m->e[i];

		if (!e->used)
			return NULL;
		if (e->used == 1 && same(m, e, hash, s, u))
			return e;
	}
}

/* Rehash into cap slots (a power of two, the keys at most 3/4 of it). */
static int rehash(struct kerf_map *m, size_t cap)
{
	struct kerf_map_entry *e = calloc(cap, sizeof(*e));

	if (!e)
		return -KERF_ENOMEM;
	for (size_t k = 0; k < m->cap; k++) {
		size_t i;

		if (m->e[k].used != 1)
			continue;
		for (i = m->e[k].hash & (cap - 1); e[i].used; i = (i + 1) & (cap - 1))
			;
		e[i] = m->e[k];
	}
	free(m->e);
	m->e = e;
	m->cap = cap;
	m->nr_deleted = 0;
	return 0;
}

int kerf_map_reserve(struct kerf_map *m, size_t nr)
{
	size_t need = m->nr + m->nr_deleted + nr, cap = m->cap ? m->cap : 16;

	if (need < m->nr || need > SIZE_MAX / 4)
		return -KERF_ELIMIT;
	if (4 * need < 3 * m->cap)
		return 0;
	/* deleted entries go at the rehash; only live keys need room */
	while (3 * cap < 4 * (m->nr + nr) + 4)
		cap *= 2;
	return rehash(m, cap);
}

static int put(struct kerf_map *m, uint32_t hash, const char *s, uint64_t u,
	       void *val)
{
	struct kerf_map_entry *e = find(m, hash, s, u);
	size_t i;
	int rc;

	if (e) {
		e->val = val;
		return 0;
	}
	rc = kerf_map_reserve(m, 1);
	if (rc < 0)
		return rc;
	for (i = hash & (m->cap - 1); m->e[i].used == 1; i = (i + 1) & (m->cap - 1))
		;
	if (m->e[i].used == 2)
		m->nr_deleted--;
	m->e[i].hash = hash;
	if (m->str_keys)
		m->e[i].key.s = s;
	else
		m->e[i].key.u = u;
	m->e[i].val = val;
	m->e[i].used = 1;
	m->nr++;
	return 0;
}

static bool del(struct kerf_map *m, uint32_t hash, const char *s, uint64_t u)
{
	struct kerf_map_entry *e = find(m, hash, s, u);

	if (!e)
		return false;
	e->used = 2;
	e->val = NULL;
	m->nr--;
	m->nr_deleted++;
	return true;
}

void *kerf_map_get_str(const struct kerf_map *m, const char *key)
{
	struct kerf_map_entry *e = find(m, (uint32_t)kerf_hash_str(key), key, 0);

	return e ? e->val : NULL;
}

void *kerf_map_get_u64(const struct kerf_map *m, uint64_t key)
{
	struct kerf_map_entry *e = find(m, (uint32_t)mix64(key), NULL, key);

	return e ? e->val : NULL;
}

int kerf_map_put_str(struct kerf_map *m, const char *key, void *val)
{
	return put(m, (uint32_t)kerf_hash_str(key), key, 0, val);
}

int kerf_map_put_u64(struct kerf_map *m, uint64_t key, void *val)
{
	return put(m, (uint32_t)mix64(key), NULL, key, val);
}

bool kerf_map_del_str(struct kerf_map *m, const char *key)
{
	return del(m, (uint32_t)kerf_hash_str(key), key, 0);
}

bool kerf_map_del_u64(struct kerf_map *m, uint64_t key)
{
	return del(m, (uint32_t)mix64(key), NULL, key);
}
