#include "format/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kerf_file_read(struct kerf_file *f, const char *path, size_t max_bytes,
		   struct kerf_err *err)
{
	FILE *fp = fopen(path, "rb");
	size_t cap = 1 << 16, len = 0;
	char *buf;

	f->data = NULL;
	f->len = 0;
	if (!fp)
		return kerf_err_set(err, -KERF_EIO, "cannot open '%s': %s", path,
				    strerror(errno));
	buf = malloc(cap);
	if (!buf) {
		fclose(fp);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	}
	for (;;) {
		size_t got;

		if (len + 1 == cap) {
			char *grown;

			if (cap > max_bytes) {
				free(buf);
				fclose(fp);
				return kerf_err_set(err, -KERF_ELIMIT,
						    "'%s' is larger than %zu bytes",
						    path, max_bytes);
			}
			grown = realloc(buf, cap * 2);
			if (!grown) {
				free(buf);
				fclose(fp);
				return kerf_err_set(err, -KERF_ENOMEM,
						    "out of memory");
			}
			buf = grown;
			cap *= 2;
		}
		got = fread(buf + len, 1, cap - 1 - len, fp);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		free(buf);
		fclose(fp);
		return kerf_err_set(err, -KERF_EIO, "cannot read '%s'", path);
	}
	fclose(fp);
	buf[len] = '\0';
	f->data = buf;
	f->len = len;
	return 0;
}

void kerf_file_release(struct kerf_file *f)
{
	free(f->data);
	f->data = NULL;
	f->len = 0;
}
