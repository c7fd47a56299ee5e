/*
 * file: read a whole file into memory, bounded.
 *
 * Only regular files are read: a FIFO, a directory, a device or a socket
 * is refused with "cannot read 'PATH': a FIFO, not a regular file" (and
 * opening never blocks, not even on a FIFO without a writer).  Messages
 * quote the path escaped.
 */
#ifndef KERF_FORMAT_FILE_H
#define KERF_FORMAT_FILE_H

#include <stddef.h>

#include "base/err.h"

struct kerf_file {
	char *data;      /* NUL-terminated */
	size_t len;
};

/*
 * The file at path, at most max_bytes, into f (NUL-terminated).  Returns 0;
 * -KERF_EIO when it cannot be opened or read, -KERF_EINVAL when it is not
 * a regular file, -KERF_ELIMIT when it is larger than max_bytes,
 * -KERF_ENOMEM.  On error f is empty.
 */
int kerf_file_read(struct kerf_file *f, const char *path, size_t max_bytes,
		   struct kerf_err *err);
void kerf_file_release(struct kerf_file *f);

#endif /* KERF_FORMAT_FILE_H */
