/*
 * grow: an overflow-checked growable array, in the shape of git's
 * ALLOC_GROW.  An array is a typed pointer, a count and an allocation size
 * (size_t) kept by its owner; KERF_GROW makes room for `need` items:
 *
 *     struct kerf_node *nodes; size_t nr_nodes, alloc_nodes;
 *     rc = KERF_GROW(nodes, alloc_nodes, nr_nodes + 1);
 *     if (rc < 0)
 *             return rc;           (the array is unchanged)
 *     nodes[nr_nodes++] = n;
 *
 * The allocation at least doubles (16 items at first), so appending is
 * amortised O(1).  need * item size and the growth itself are checked for
 * overflow: -KERF_ELIMIT then, -KERF_ENOMEM when realloc fails; in both
 * cases the array, its items and alloc are as before.  New slots are not
 * initialised; KERF_GROW_ZERO zeroes them.
 */
#ifndef KERF_BASE_GROW_H
#define KERF_BASE_GROW_H

#include <stdbool.h>
#include <stddef.h>

/*
 * itemsp points to the array's pointer (any object pointer type); *alloc is
 * its size in items.  Room for need items of size bytes; 0 or negative.
 */
int kerf_grow_(void *itemsp, size_t *alloc, size_t need, size_t size,
	       bool zero) __attribute__((warn_unused_result));

#define KERF_GROW(items, alloc, need)                                          \
	kerf_grow_(&(items), &(alloc), (need), sizeof(*(items)), false)
#define KERF_GROW_ZERO(items, alloc, need)                                     \
	kerf_grow_(&(items), &(alloc), (need), sizeof(*(items)), true)

/* n * size, or false when it overflows a size_t. */
static inline bool kerf_mul_ok(size_t n, size_t size, size_t *out)
{
	return !__builtin_mul_overflow(n, size, out);
}

#endif /* KERF_BASE_GROW_H */
