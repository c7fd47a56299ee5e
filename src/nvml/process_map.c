/*
 * process_map: per-process GPU memory, mapped to pods through
 * /proc/PID/cgroup (process_map.h).
 */
#include "nvml/process_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool uid_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-' || c == '_';
}

/* s[0..len) is a pod UID (32 to 36 of hex, '-', '_'): copy it with '-'. */
static bool take_uid(const char *s, size_t len, char uid[KERF_POD_UID_MAX + 1])
{
	if (len < 32 || len > KERF_POD_UID_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!uid_char(s[i]))
			return false;
	for (size_t i = 0; i < len; i++)
		uid[i] = s[i] == '_' ? (char)'-' : s[i];
	uid[len] = '\0';
	return true;
}

/*
 * One path component: "kubepods[-QOS]-pod<UID>.slice" (systemd driver)
 * or "pod<UID>" (cgroupfs driver).
 */
static bool component_uid(const char *c, size_t len, char uid[KERF_POD_UID_MAX + 1])
{
	static const char slice[] = ".slice";
	const size_t slice_len = sizeof(slice) - 1;

	if (len > 3 && !strncmp(c, "pod", 3))
		return take_uid(c + 3, len - 3, uid);
	if (len > 8 + slice_len && !strncmp(c, "kubepods", 8) &&
	    !memcmp(c + len - slice_len, slice, slice_len)) {
		/* the last "-pod" of the component: QoS names hold none */
		for (size_t i = len - slice_len; i-- > 8;)
			if (!strncmp(c + i, "-pod", 4))
				return take_uid(c + i + 4, len - slice_len - i - 4, uid);
	}
	return false;
}

static bool path_uid(const char *p, size_t len, char uid[KERF_POD_UID_MAX + 1])
{
	size_t i = 0;

	while (i < len) {
		size_t j = i;

		while (j < len && p[j] != '/')
			j++;
		if (j > i && component_uid(p + i, j - i, uid))
			return true;
		i = j + 1;
	}
	return false;
}

int kerf_cgroup_pod_uid(const char *text, size_t len, char uid[KERF_POD_UID_MAX + 1],
			struct kerf_err *err)
{
	size_t i = 0, lines = 0;

	uid[0] = '\0';
	while (i < len) {
		size_t end = i, id_end, ctl_end;

		while (end < len && text[end] != '\n')
			end++;
		if (end == i) {
			i = end + 1;
			continue;
		}
		lines++;
		id_end = i;
		while (id_end < end && text[id_end] >= '0' && text[id_end] <= '9')
			id_end++;
		ctl_end = id_end + 1;
		while (ctl_end < end && text[ctl_end] != ':')
			ctl_end++;
		if (id_end == i || id_end >= end || text[id_end] != ':' || ctl_end + 1 >= end ||
		    text[ctl_end + 1] != '/')
			return kerf_err_set(err, -KERF_EPARSE,
					    "cgroup line %zu: '%.*s' is not ID:CONTROLLERS:/PATH",
					    lines, (int)(end - i > 80 ? 80 : end - i), text + i);
		if (path_uid(text + ctl_end + 1, end - ctl_end - 1, uid))
			return KERF_PROC_POD;
		i = end + 1;
	}
	if (!lines)
		return kerf_err_set(err, -KERF_EPARSE, "cgroup: no line");
	return KERF_PROC_HOST;
}

int kerf_proc_owner_read(const char *proc_root, uint32_t pid,
			 char uid[KERF_POD_UID_MAX + 1], struct kerf_err *err)
{
	char path[512], *text;
	size_t len = 0;
	int fd, ret;

	uid[0] = '\0';
	if (!pid)
		return KERF_PROC_HOST;
	snprintf(path, sizeof(path), "%s/%u/cgroup", proc_root ? proc_root : "/proc",
		 (unsigned)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && (errno == ENOENT || errno == ESRCH))
		return KERF_PROC_GONE;
	if (fd < 0)
		return kerf_err_set(err, -KERF_EIO, "cannot open '%s': %s", path, strerror(errno));
	text = malloc(KERF_PROC_CGROUP_MAX);
	if (!text) {
		close(fd);
		return kerf_err_set(err, -KERF_ENOMEM, "out of memory reading '%s'", path);
	}
	for (;;) {
		ssize_t n = read(fd, text + len, KERF_PROC_CGROUP_MAX - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ESRCH) {
			ret = KERF_PROC_GONE;     /* exited while we read */
			goto out;
		}
		if (n < 0) {
			ret = kerf_err_set(err, -KERF_EIO, "cannot read '%s': %s", path,
					   strerror(errno));
			goto out;
		}
		if (n == 0 || (len += (size_t)n) == KERF_PROC_CGROUP_MAX)
			break;
	}
	ret = kerf_cgroup_pod_uid(text, len, uid, err);
out:
	free(text);
	close(fd);
	return ret;
}

size_t kerf_nvml_process_stride(const char *driver_version)
{
	unsigned major, minor;

	/* 535.43.02 to 535.86.05 wrote 32 bytes; 535.98 dropped _v3 from its
	 * header, and from 535.104.05 the element is 24 bytes again */
	if (driver_version && sscanf(driver_version, "%u.%u", &major, &minor) == 2 &&
	    major == 535 && minor < 104)
		return 32;
	return sizeof(nvmlProcessInfo_t);
}

/*
 * The processes of one device into out (appended).  The count is asked
 * first, then read into a buffer with room for more (processes start
 * between the calls), again while NVML says it is too small.
 */
static int read_gpu(struct kerf_gpu_processes *out, const struct kerf_nvml *nv,
		    nvmlDevice_t dev, uint32_t gpu, size_t stride, struct kerf_err *err)
{
	unsigned count = 0, cap = 0;
	unsigned char *buf = NULL;
	nvmlReturn_t rc = nv->running_processes_v3(dev, &count, NULL);

	for (int tries = 0; rc == NVML_ERROR_INSUFFICIENT_SIZE && tries < 4; tries++) {
		cap = count < KERF_GPU_PROCESSES_MAX ? count + 8 + count / 2 : count;
		if (cap > KERF_GPU_PROCESSES_MAX)
			cap = KERF_GPU_PROCESSES_MAX;
		free(buf);
		/* sized by the larger element: a wrong stride never overruns */
		buf = calloc(cap, 32);
		if (!buf)
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory reading GPU %u's processes",
					    (unsigned)gpu);
		count = cap;
		rc = nv->running_processes_v3(dev, &count, (nvmlProcessInfo_t *)buf);
	}
	if (rc == NVML_SUCCESS && count > cap)
		count = cap;                     /* never more than there was room for */
	if (rc != NVML_SUCCESS) {
		out->errors++;
		free(buf);
		return 0;
	}
	if (count) {
		struct kerf_gpu_process *grown =
			realloc(out->procs, (out->nr + count) * sizeof(*out->procs));

		if (!grown) {
			free(buf);
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory reading GPU %u's processes",
					    (unsigned)gpu);
		}
		out->procs = grown;
	}
	for (unsigned i = 0; i < count; i++) {
		const unsigned char *e = buf + (size_t)i * stride;
		struct kerf_gpu_process *p = &out->procs[out->nr++];
		unsigned long long used;

		memset(p, 0, sizeof(*p));
		p->gpu = gpu;
		memcpy(&p->pid, e + offsetof(nvmlProcessInfo_t, pid), sizeof(p->pid));
		memcpy(&used, e + offsetof(nvmlProcessInfo_t, usedGpuMemory), sizeof(used));
		memcpy(&p->gi_id, e + offsetof(nvmlProcessInfo_t, gpuInstanceId), sizeof(p->gi_id));
		memcpy(&p->ci_id, e + offsetof(nvmlProcessInfo_t, computeInstanceId),
		       sizeof(p->ci_id));
		p->has_mem = used != NVML_VALUE_NOT_AVAILABLE;
		p->used_bytes = p->has_mem ? used : 0;
	}
	free(buf);
	return 0;
}

int kerf_gpu_processes_read(struct kerf_gpu_processes *out, const struct kerf_nvml *nv,
			    const struct kerf_gpu_inventory *inv, const char *proc_root,
			    struct kerf_err *err)
{
	size_t stride = kerf_nvml_process_stride(inv->driver_version);
	size_t kept = 0;

	memset(out, 0, sizeof(*out));
	if (!kerf_nvml_has(nv, KERF_NVML_F_PROCESSES) || inv->state != KERF_GPU_INVENTORY_READ)
		return 0;
	for (uint32_t i = 0; i < inv->nr_gpus; i++) {
		nvmlDevice_t dev;
		int ret;

		if (inv->gpus[i].lost)
			continue;
		if (nv->handle_by_index_v2(inv->gpus[i].index, &dev) != NVML_SUCCESS) {
			out->errors++;
			continue;
		}
		ret = read_gpu(out, nv, dev, inv->gpus[i].index, stride, err);
		if (ret < 0) {
			kerf_gpu_processes_release(out);
			return ret;
		}
	}
	for (size_t i = 0; i < out->nr; i++) {
		struct kerf_gpu_process *p = &out->procs[i];
		int owner = kerf_proc_owner_read(proc_root, p->pid, p->pod_uid, NULL);

		if (owner == -KERF_ENOMEM) {
			kerf_gpu_processes_release(out);
			return kerf_err_set(err, -KERF_ENOMEM, "out of memory reading /proc");
		}
		if (owner < 0) {
			out->errors++;           /* unreadable or malformed: left out */
			continue;
		}
		p->owner = (enum kerf_proc_owner)owner;
		out->procs[kept++] = *p;
	}
	out->nr = kept;
	return 0;
}

void kerf_gpu_processes_release(struct kerf_gpu_processes *p)
{
	free(p->procs);
	memset(p, 0, sizeof(*p));
}

static int cmp_row(const void *a, const void *b)
{
	const struct kerf_pod_gpu_memory *x = a, *y = b;

	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return strcmp(x->pod_uid, y->pod_uid);
}

int kerf_pod_gpu_memory_sum(const struct kerf_gpu_processes *p,
			    const struct kerf_pod_table_ops *pods, void *ctx,
			    struct kerf_pod_gpu_memory **rows, size_t *nr)
{
	struct kerf_pod_gpu_memory *r = calloc(p->nr ? p->nr : 1, sizeof(*r));
	size_t n = 0;

	*rows = NULL;
	*nr = 0;
	if (!r)
		return -KERF_ENOMEM;
	for (size_t i = 0; i < p->nr; i++) {
		const struct kerf_gpu_process *x = &p->procs[i];
		const char *uid = x->owner == KERF_PROC_POD ? x->pod_uid : "";
		size_t k = 0;

		if (x->owner == KERF_PROC_GONE || !x->has_mem)
			continue;
		while (k < n && !(r[k].gpu == x->gpu && !strcmp(r[k].pod_uid, uid)))
			k++;
		if (k == n) {
			r[n].gpu = x->gpu;
			snprintf(r[n].pod_uid, sizeof(r[n].pod_uid), "%s", uid);
			r[n].known = uid[0] && pods && pods->lookup(ctx, uid, &r[n].ref);
			n++;
		}
		r[k].used_bytes += x->used_bytes;
	}
	qsort(r, n, sizeof(*r), cmp_row);
	*rows = r;
	*nr = n;
	return 0;
}
