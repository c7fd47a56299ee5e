#include "base/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"

int kerf_grow_(void *itemsp, size_t *alloc, size_t need, size_t size,
	       bool zero)
{
	void *items, *grown;
	size_t want = *alloc, bytes;

	if (need <= *alloc)
		return 0;
	if (want < 16)
		want = 16;
	while (want < need) {
		if (want > SIZE_MAX / 2)
			return -KERF_ELIMIT;
		want *= 2;
	}
	if (!kerf_mul_ok(want, size, &bytes) || bytes > PTRDIFF_MAX)
		return -KERF_ELIMIT;
	/* the pointer is copied, not type-punned: any object pointer type */
	memcpy(&items, itemsp, sizeof(items));
	grown = realloc(items, bytes);
	if (!grown)
		return -KERF_ENOMEM;
	if (zero)
		memset((char *)grown + *alloc * size, 0, (want - *alloc) * size);
	memcpy(itemsp, &grown, sizeof(grown));
	*alloc = want;
	return 0;
}
