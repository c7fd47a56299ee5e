/*
 * slab: size classes of 8 bytes.  A chunk of KERF_SLAB_CHUNK_BYTES,
 * aligned to its size, holds records of one class after a small header:
 * a record's chunk is its address rounded down.  Each chunk keeps its own
 * free records and count; a class keeps the chunks that have room.  A
 * chunk is carved as it fills (its untouched pages cost no memory) and
 * unmapped when its last record goes, so that a burst of one shape of
 * record (the pending pods of a backlog) is given back once it is over.
 * See slab.h.
 */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include "base/slab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/assert.h"

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif
#ifndef SLAB_ASAN
#define SLAB_ASAN 0
#endif

/*
 * Under ASan a record is addressable only while it is handed out: a chunk
 * is poisoned when mapped, a record unpoisoned when taken and poisoned
 * again when freed, so a use after free or past the record's size is
 * reported as with malloc (the free list is read with the record
 * unpoisoned for that moment).
 */
#if SLAB_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

enum { NR_CLASSES = KERF_SLAB_MAX_BYTES / 8, HEADER_BYTES = 64 };

struct free_rec {
	struct free_rec *next;
};

struct chunk {
	struct chunk *prev, *next;   /* in its class's list of chunks with room */
	struct free_rec *free;       /* records freed in this chunk */
	uint32_t carved;             /* bytes carved so far (header included) */
	uint32_t nr_live;
	uint32_t rec_bytes;
	bool listed;
};

_Static_assert(sizeof(struct chunk) <= HEADER_BYTES, "chunk header");

static struct {
	bool on;
	struct chunk *room[NR_CLASSES];   /* class c: records of 8(c+1) bytes */
	size_t off_live;                  /* from malloc while off */
	struct kerf_slab_stats stats;
} slab;

static size_t rounded(size_t size)
{
	return (size + 7) & ~(size_t)7;
}

bool kerf_slab_enable(void)
{
	/* a record from malloc would be freed into a chunk */
	if (slab.off_live)
		return slab.on;
	slab.on = true;
	return true;
}

bool kerf_slab_enabled(void)
{
	return slab.on;
}

/* Off: malloc, with the size in front under ASan to check the free's. */
static void *heap_alloc(size_t size)
{
	unsigned char *p;

	if (!SLAB_ASAN) {
		p = malloc(size);
		slab.off_live += p != NULL;
		return p;
	}
	if (size > SIZE_MAX - 16)
		return NULL;
	p = malloc(16 + size);
	if (!p)
		return NULL;
	memcpy(p, &size, sizeof(size));
	slab.off_live++;
	return p + 16;
}

static void heap_free(void *p, size_t size)
{
	size_t had;

	slab.off_live--;
	if (!SLAB_ASAN) {
		free(p);
		return;
	}
	memcpy(&had, (unsigned char *)p - 16, sizeof(had));
	KERF_ASSERT(had == size);
	free((unsigned char *)p - 16);
}

/* A chunk mapped at a multiple of its size; NULL when none. */
static struct chunk *chunk_map(uint32_t rec_bytes)
{
	const size_t n = KERF_SLAB_CHUNK_BYTES;
	char *m = mmap(NULL, 2 * n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t at;
	struct chunk *c;

	if (m == MAP_FAILED)
		return NULL;
	at = ((uintptr_t)m + n - 1) & ~(uintptr_t)(n - 1);
	/* the unaligned ends back */
	if (at > (uintptr_t)m)
		munmap(m, at - (uintptr_t)m);
	if ((uintptr_t)m + 2 * n > at + n)
		munmap((char *)at + n, (uintptr_t)m + 2 * n - (at + n));
	c = (struct chunk *)at;
	UNPOISON(c, n);   /* whatever was mapped here before */
	*c = (struct chunk){ .carved = HEADER_BYTES, .rec_bytes = rec_bytes };
	POISON((char *)c + HEADER_BYTES, n - HEADER_BYTES);
	slab.stats.mapped_bytes += n;
	return c;
}

static void list_add(size_t cls, struct chunk *c)
{
	c->prev = NULL;
	c->next = slab.room[cls];
	if (c->next)
		c->next->prev = c;
	slab.room[cls] = c;
	c->listed = true;
}

static void list_del(size_t cls, struct chunk *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		slab.room[cls] = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
	c->listed = false;
}

static bool has_room(const struct chunk *c)
{
	return c->free || c->carved + c->rec_bytes <= KERF_SLAB_CHUNK_BYTES;
}

void *kerf_slab_alloc(size_t size)
{
	size_t r, cls;
	struct chunk *c;
	void *p;

	size = size ? size : 1;   /* and so in kerf_slab_free */
	r = rounded(size);
	if (!slab.on || r > KERF_SLAB_MAX_BYTES)
		return heap_alloc(size);
	cls = r / 8 - 1;
	c = slab.room[cls];
	if (!c) {
		c = chunk_map((uint32_t)r);
		if (!c)
			return NULL;
		list_add(cls, c);
	}
	if (c->free) {
		p = c->free;
		UNPOISON(p, r);
		c->free = c->free->next;
		slab.stats.free_bytes -= r;
	} else {
		p = (char *)c + c->carved;
		UNPOISON(p, r);
		c->carved += (uint32_t)r;
	}
	/* past the caller's size: poisoned (ASan) */
	POISON((char *)p + size, r - size);
	c->nr_live++;
	if (!has_room(c))
		list_del(cls, c);
	slab.stats.live_bytes += r;
	return p;
}

void *kerf_slab_zalloc(size_t size)
{
	void *p = kerf_slab_alloc(size);

	if (p)
		memset(p, 0, size);
	return p;
}

void kerf_slab_free(void *p, size_t size)
{
	struct chunk *c;
	struct free_rec *f = p;
	size_t r, cls;

	if (!p)
		return;
	size = size ? size : 1;
	r = rounded(size);
	if (!slab.on || r > KERF_SLAB_MAX_BYTES) {
		heap_free(p, size);
		return;
	}
	cls = r / 8 - 1;
	c = (struct chunk *)((uintptr_t)p & ~(uintptr_t)(KERF_SLAB_CHUNK_BYTES - 1));
	KERF_ASSERT(c->rec_bytes == r && c->nr_live > 0);
	slab.stats.live_bytes -= r;
	/* empty: given back, unless it is the class's only chunk with room */
	if (--c->nr_live == 0 && !(c->listed && slab.room[cls] == c && !c->next)) {
		if (c->listed)
			list_del(cls, c);
		slab.stats.free_bytes -= c->carved - HEADER_BYTES - r;
		slab.stats.mapped_bytes -= KERF_SLAB_CHUNK_BYTES;
		UNPOISON(c, KERF_SLAB_CHUNK_BYTES);
		munmap(c, KERF_SLAB_CHUNK_BYTES);
		return;
	}
	UNPOISON(f, r);
	f->next = c->free;
	c->free = f;
	POISON(f, r);
	slab.stats.free_bytes += r;
	if (!c->listed)
		list_add(cls, c);
}

void kerf_slab_stats(struct kerf_slab_stats *out)
{
	*out = slab.stats;
}
