/* struct kerf_sysfs_ops over a root directory. */
#include "net/nic_qos.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static int root_read(void *ctx, const char *path, char *out, size_t size)
{
	const char *root = ctx;
	char full[4096];
	int n = snprintf(full, sizeof(full), "%s%s",
			 (root[0] == '/' && root[1] == '\0') ? "" : root, path);
	if (n < 0 || (size_t)n >= sizeof(full) || size == 0)
		return -KERF_EINVAL;
	int fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? -KERF_ENOTFOUND
							   : -KERF_EIO;
	size_t off = 0;
	while (off + 1 < size) {
		ssize_t r = read(fd, out + off, size - 1 - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			/* sysfs answers EOPNOTSUPP and the like when the
			 * driver cannot tell: that is "no such value". */
			close(fd);
			return -KERF_ENOTFOUND;
		}
		if (r == 0)
			break;
		off += (size_t)r;
	}
	close(fd);
	out[off] = '\0';
	return (int)off;
}

void kerf_sysfs_root_ops(const char *root, struct kerf_sysfs_ops *ops)
{
	ops->ctx = (void *)root;
	ops->read = root_read;
}
