/*
 * arena: a bump allocator for data that lives and dies together (a cluster's
 * node names, a decoded trace).  Allocation returns NULL on OOM or when the
 * arena would pass its max_bytes bound; nothing is freed one by one.
 */
#ifndef KERF_BASE_ARENA_H
#define KERF_BASE_ARENA_H

#include <stddef.h>

struct kerf_arena_chunk;

struct kerf_arena {
	struct kerf_arena_chunk *head; /* newest chunk first */
	size_t used_bytes;             /* bytes handed out, all chunks */
	size_t max_bytes;              /* 0 = unbounded */
};

void kerf_arena_init(struct kerf_arena *a, size_t max_bytes);
void kerf_arena_release(struct kerf_arena *a);

/* Zeroed, 16-byte aligned storage; NULL on OOM or over max_bytes. */
void *kerf_arena_alloc(struct kerf_arena *a, size_t size);

/* n * size bytes, NULL on overflow. */
void *kerf_arena_alloc_array(struct kerf_arena *a, size_t n, size_t size);

/* Copy of the first len bytes of s, NUL-terminated. */
char *kerf_arena_strndup(struct kerf_arena *a, const char *s, size_t len);

#endif /* KERF_BASE_ARENA_H */
