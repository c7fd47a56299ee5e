/*
 * file: read a whole file into memory, bounded.
 */
#ifndef KERF_FORMAT_FILE_H
#define KERF_FORMAT_FILE_H

#include <stddef.h>

#include "base/err.h"

struct kerf_file {
	char *data;      /* NUL-terminated */
	size_t len;
};

int kerf_file_read(struct kerf_file *f, const char *path, size_t max_bytes,
		   struct kerf_err *err);
void kerf_file_release(struct kerf_file *f);

#endif /* KERF_FORMAT_FILE_H */
