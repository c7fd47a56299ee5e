#include "base/assert.h"

#include <stdio.h>
#include <stdlib.h>

_Noreturn void kerf_assert_fail(const char *expr, const char *file, int line)
{
	fprintf(stderr, "kerf: assertion failed: %s (%s:%d)\n", expr, file, line);
	fflush(stderr);
	abort();
}
