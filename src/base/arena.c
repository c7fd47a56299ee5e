#include "base/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ARENA_CHUNK_BYTES = 64 * 1024, ARENA_ALIGN = 16 };

struct kerf_arena_chunk {
	struct kerf_arena_chunk *next;
	size_t size;      /* usable bytes in data[] */
	size_t off;       /* next free offset in data[] */
	_Alignas(16) unsigned char data[];
};

void kerf_arena_init(struct kerf_arena *a, size_t max_bytes)
{
	a->head = NULL;
	a->used_bytes = 0;
	a->max_bytes = max_bytes;
}

void kerf_arena_release(struct kerf_arena *a)
{
	struct kerf_arena_chunk *c = a->head;

	while (c) {
		struct kerf_arena_chunk *next = c->next;

		free(c);
		c = next;
	}
	kerf_arena_init(a, a->max_bytes);
}

void *kerf_arena_alloc(struct kerf_arena *a, size_t size)
{
	struct kerf_arena_chunk *c = a->head;
	size_t rounded;
	void *p;

	if (size == 0)
		size = 1;
	if (size > SIZE_MAX - ARENA_ALIGN)
		return NULL;
	rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (a->max_bytes && rounded > a->max_bytes - a->used_bytes)
		return NULL;
	if (!c || c->size - c->off < rounded) {
		size_t want = rounded > ARENA_CHUNK_BYTES ? rounded
							  : ARENA_CHUNK_BYTES;

		c = malloc(sizeof(*c) + want);
		if (!c)
			return NULL;
		c->size = want;
		c->off = 0;
		c->next = a->head;
		a->head = c;
	}
	p = c->data + c->off;
	c->off += rounded;
	a->used_bytes += rounded;
	memset(p, 0, size);
	return p;
}

void *kerf_arena_alloc_array(struct kerf_arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return kerf_arena_alloc(a, n * size);
}

char *kerf_arena_strndup(struct kerf_arena *a, const char *s, size_t len)
{
	char *p = kerf_arena_alloc(a, len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}
