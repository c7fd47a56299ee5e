/*
 * file: read a whole regular file into memory, bounded (see file.h).
 *
 * The file is opened with O_NONBLOCK, so that opening a FIFO with no
 * writer returns at once instead of blocking forever, and anything that
 * fstat does not call a regular file (a FIFO, a directory, a device, a
 * socket) is refused before a byte is read.  Paths are quoted escaped
 * (base/buf.h): a name holding ESC or a newline cannot forge output.
 */
#include "format/file.h"

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/grow.h"

enum {
	FILE_SHOWN_SIZE = 160,             /* a path quoted in a message */
	FILE_FIRST_ALLOC = 1 << 16,
};

static const char *kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a plain file";
}

/* Read fd to its end into a buffer of at most max_bytes (+ NUL). */
static int read_all(int fd, const char *shown, size_t max_bytes,
		    struct kerf_file *f, struct kerf_err *err)
{
	size_t cap = FILE_FIRST_ALLOC, len = 0;
	char *buf = malloc(cap);

	if (!buf)
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory");
	for (;;) {
		ssize_t got;

		if (len + 1 == cap) {
			if (cap > max_bytes) {
				free(buf);
				return kerf_err_set(err, -KERF_ELIMIT,
						    "'%s' is larger than %zu bytes",
						    shown, max_bytes);
			}
			if (KERF_GROW(buf, cap, cap + 1) < 0) {
				free(buf);
				return kerf_err_set(err, -KERF_ENOMEM,
						    "out of memory");
			}
		}
		got = read(fd, buf + len, cap - 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;

			free(buf);
			return kerf_err_set(err, -KERF_EIO, "cannot read '%s': %s",
					    shown, strerror(e));
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	if (len > max_bytes) {
		free(buf);
		return kerf_err_set(err, -KERF_ELIMIT,
				    "'%s' is larger than %zu bytes", shown,
				    max_bytes);
	}
	buf[len] = '\0';
	f->data = buf;
	f->len = len;
	return 0;
}

int kerf_file_read(struct kerf_file *f, const char *path, size_t max_bytes,
		   struct kerf_err *err)
{
	char shown[FILE_SHOWN_SIZE];
	struct stat st;
	int fd, rc;

	f->data = NULL;
	f->len = 0;
	kerf_escape(shown, sizeof(shown), path);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;

		/* a socket cannot be opened at all (ENXIO): say what it is */
		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
			return kerf_err_set(err, -KERF_EINVAL,
					    "cannot read '%s': %s, not a regular file",
					    shown, kind_of(st.st_mode));
		return kerf_err_set(err, -KERF_EIO, "cannot open '%s': %s",
				    shown, strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		rc = kerf_err_set(err, -KERF_EIO, "cannot open '%s': %s", shown,
				  strerror(errno));
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return kerf_err_set(err, -KERF_EINVAL,
				    "cannot read '%s': %s, not a regular file",
				    shown, kind_of(st.st_mode));
	}
	if (st.st_size > 0 && (uint64_t)st.st_size > max_bytes) {
		close(fd);
		return kerf_err_set(err, -KERF_ELIMIT,
				    "'%s' is larger than %zu bytes", shown,
				    max_bytes);
	}
	rc = read_all(fd, shown, max_bytes, f, err);
	close(fd);
	return rc;
}

void kerf_file_release(struct kerf_file *f)
{
	free(f->data);
	f->data = NULL;
	f->len = 0;
}
