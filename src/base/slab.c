/*
 * slab: size classes of 8 bytes, each a free list threaded through its
 * free records, carved from mapped chunks.  See slab.h.
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

enum { NR_CLASSES = KERF_SLAB_MAX_BYTES / 8 };

struct free_rec {
	struct free_rec *next;
};

static struct {
	bool on;
	struct free_rec *free[NR_CLASSES];   /* class c: records of 8(c+1) bytes */
	char *next, *end;                    /* the current chunk's rest */
	size_t off_live;                     /* from malloc while off */
	struct kerf_slab_stats stats;
} slab;

static size_t rounded(size_t size)
{
	return (size + 7) & ~(size_t)7;
}

bool kerf_slab_enable(void)
{
	/* a record from malloc would be freed onto a list */
	if (SLAB_ASAN || slab.off_live)
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

static void *carve(size_t r)
{
	void *p;

	if ((size_t)(slab.end - slab.next) < r) {
		/* the rest of this chunk (< r bytes) is given up */
		void *c = mmap(NULL, KERF_SLAB_CHUNK_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (c == MAP_FAILED)
			return NULL;
		slab.next = c;
		slab.end = slab.next + KERF_SLAB_CHUNK_BYTES;
		slab.stats.mapped_bytes += KERF_SLAB_CHUNK_BYTES;
	}
	p = slab.next;
	slab.next += r;
	return p;
}

void *kerf_slab_alloc(size_t size)
{
	size_t r, c;
	struct free_rec *f;

	size = size ? size : 1;   /* and so in kerf_slab_free */
	r = rounded(size);
	c = r / 8 - 1;
	if (!slab.on || r > KERF_SLAB_MAX_BYTES)
		return heap_alloc(size);
	f = slab.free[c];
	if (f) {
		slab.free[c] = f->next;
		slab.stats.free_bytes -= r;
	} else {
		f = carve(r);
		if (!f)
			return NULL;
	}
	slab.stats.live_bytes += r;
	return f;
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
	size_t r, c;
	struct free_rec *f = p;

	if (!p)
		return;
	size = size ? size : 1;
	r = rounded(size);
	c = r / 8 - 1;
	if (!slab.on || r > KERF_SLAB_MAX_BYTES) {
		heap_free(p, size);
		return;
	}
	f->next = slab.free[c];
	slab.free[c] = f;
	slab.stats.live_bytes -= r;
	slab.stats.free_bytes += r;
}

void kerf_slab_stats(struct kerf_slab_stats *out)
{
	*out = slab.stats;
}
