/*
 * slab: the long-lived records of a single-threaded process by size class,
 * without malloc's per-allocation header and rounding, and apart from the
 * short-lived allocations (parse trees, requests) that would otherwise
 * leave holes between them.
 *
 * kerf serve keeps 50,000 pods as about eight small records each (the
 * informer's entry and decoded pod, the world's pod and group, the core's
 * workload and bindings): with malloc each costs 8 bytes of header, a
 * rounding up to 16 bytes, and the holes that the JSON of the watch event
 * it came from leaves when freed.  Here a record of size bytes takes size
 * rounded up to 8, carved from chunks of KERF_SLAB_CHUNK_BYTES mapped for
 * the purpose, one class to a chunk; a freed record is kept for the next
 * record of its class, and a chunk whose records are all freed is unmapped
 * (but the last of its class with room), so that a burst of one shape (the
 * pending pods of a backlog, their strings cut shorter than once bound)
 * is given back when it is over.
 *
 * Off by default: kerf_slab_alloc is then malloc and kerf_slab_free free,
 * so libraries, tests and the threaded simulator are unaffected.  A
 * single-threaded process turns it on once, before its first record
 * (kerf_slab_enable); records larger than KERF_SLAB_MAX_BYTES always come
 * from malloc.  Under AddressSanitizer a record is addressable only while
 * it is handed out (records are poisoned when free, and past their
 * size), so the sanitized test run checks kerf serve's records as it
 * would malloc's; off, each record then carries its size, so that
 * kerf_slab_free checks the caller's.
 */
#ifndef KERF_BASE_SLAB_H
#define KERF_BASE_SLAB_H

#include <stdbool.h>
#include <stddef.h>

enum {
	KERF_SLAB_MAX_BYTES = 512,          /* larger: malloc */
	KERF_SLAB_CHUNK_BYTES = 64 * 1024,  /* mapped at a time, aligned */
};

/*
 * Turn the slab on; false when it stays off: a record taken while it was
 * off is still live (it would be freed into a chunk).
 */
bool kerf_slab_enable(void);
bool kerf_slab_enabled(void);

/* size > 0 bytes, 8-byte aligned; NULL on OOM.  _zalloc zeroes them. */
void *kerf_slab_alloc(size_t size);
void *kerf_slab_zalloc(size_t size);

/* p (NULL: nothing) of exactly the size it was allocated with. */
void kerf_slab_free(void *p, size_t size);

struct kerf_slab_stats {
	size_t mapped_bytes;     /* chunks mapped */
	size_t live_bytes;       /* records handed out, rounded to 8 */
	size_t free_bytes;       /* on the free lists */
};

void kerf_slab_stats(struct kerf_slab_stats *out);

#endif
