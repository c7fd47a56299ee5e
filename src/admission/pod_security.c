/*
 * pod_security: the host and privilege rules (reliability.md §6.1 rows
 * 1-9 and 18's mount, Pod Security "Restricted" where it matters for
 * GPUs): privilege, host namespaces, host paths and ports, capabilities,
 * privilege escalation, root, seccomp, AppArmor, SELinux, procMount,
 * sysctls and Windows host processes, at pod and container level.
 */
#include "admission/pod_rules.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "kobj/json_field.h"

/* Host paths that reach devices, MPS daemons, the kubelet or a runtime. */
static const char *const sensitive_paths[] = {
	"/dev", "/run/nvidia", "/run/nvidia-persistenced", "/tmp/nvidia-mps",
	"/run/kerf",   /* the node agent's MPS daemons' pipes (--mps-root) */
	"/var/lib/kubelet", "/run/containerd", "/run/crio", "/run/docker.sock",
	"/run/docker", "/var/lib/docker", "/var/lib/containerd",
	"/run/cdi", "/etc/cdi", "/etc/nvidia-container-runtime",
	"/etc/nvidia-container-toolkit", "/etc/ld.so.preload", "/etc/kubernetes",
	"/proc", "/sys",
};

static const char *const safe_sysctls[] = {
	"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
	"net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
	"net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
	"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
};

static const char *const selinux_types[] = {
	"container_t", "container_init_t", "container_kvm_t",
	"container_engine_t",
};

/*
 * path made canonical without the host's help: absolute, no "//", "." or
 * "..", no trailing '/', and /var/run read as /run (a link on every
 * distribution).  false when not absolute or too long.
 */
bool kerf_host_path_clean(const char *path, char *out, size_t size)
{
	size_t n = 0;
	const char *s = path;

	if (*s != '/' || strlen(path) >= size)
		return false;
	while (*s) {
		const char *e;
		size_t len;

		while (*s == '/')
			s++;
		e = strchr(s, '/');
		len = e ? (size_t)(e - s) : strlen(s);
		if (len == 0)
			break;
		if (len == 1 && s[0] == '.') {
			/* nothing */
		} else if (len == 2 && s[0] == '.' && s[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
		} else {
			out[n++] = '/';
			memcpy(out + n, s, len);
			n += len;
		}
		s += len;
	}
	out[n] = 0;
	if (n == 0)
		snprintf(out, size, "/");
	if (!strncmp(out, "/var/run", 8) && (out[8] == '/' || !out[8]))
		memmove(out, out + 4, strlen(out + 4) + 1);
	return true;
}

/* Is a under b, or the same ("/" holds everything)? */
static bool under(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (!strcmp(b, "/"))
		return true;
	return !strncmp(a, b, n) && (a[n] == '/' || !a[n]);
}

static void check_host_path(struct kerf_pod_check *ck, const char *field,
			    const char *raw)
{
	char clean[1024], shown[96];
	bool allowed = false;

	if (!kerf_host_path_clean(raw, clean, sizeof(clean))) {
		kerf_admission_deny(ck->d, "host-path", field,
				    "'%s': a host path must be absolute",
				    kerf_escape(shown, sizeof(shown), raw));
		return;
	}
	for (size_t i = 0; i < sizeof(sensitive_paths) / sizeof(sensitive_paths[0]); i++)
		if (under(clean, sensitive_paths[i]) || under(sensitive_paths[i], clean)) {
			kerf_admission_deny(ck->d, "host-path", field,
					    "'%s' reaches %s (GPU devices, MPS daemons, the kubelet or the container runtime)",
					    kerf_escape(shown, sizeof(shown), raw),
					    sensitive_paths[i]);
			return;
		}
	for (size_t i = 0; i < ck->p->cfg.host_path_allowed.nr; i++)
		if (under(clean, ck->p->cfg.host_path_allowed.v[i]))
			allowed = true;
	if (!allowed)
		kerf_admission_deny(ck->d, "host-path", field,
				    "'%s': hostPath volumes are not allowed in GPU pods (Pod Security Baseline)%s",
				    kerf_escape(shown, sizeof(shown), raw),
				    ck->p->cfg.host_path_allowed.nr ? " outside the allowed prefixes" : "");
}

/* seccomp, AppArmor, SELinux, root and Windows options of a securityContext. */
static void check_context(struct kerf_pod_check *ck, const json_t *sc,
			  const char *path)
{
	char field[KERF_ADMISSION_FIELD_MAX], shown[64];
	const json_t *sel = kerf_json_get(sc, "seLinuxOptions");
	const json_t *ru = kerf_json_get(sc, "runAsUser");

	if (!sc)
		return;
	if (!strcmp(kerf_str(kerf_json_get(sc, "seccompProfile"), "type"), "Unconfined")) {
		kerf_admission_field(field, "%s.seccompProfile.type", path);
		kerf_admission_deny(ck->d, "seccomp", field,
				    "Unconfined is not allowed: use RuntimeDefault or Localhost");
	}
	if (!strcmp(kerf_str(kerf_json_get(sc, "appArmorProfile"), "type"), "Unconfined")) {
		kerf_admission_field(field, "%s.appArmorProfile.type", path);
		kerf_admission_deny(ck->d, "apparmor", field,
				    "Unconfined is not allowed: use RuntimeDefault or Localhost");
	}
	if (sel) {
		const char *t = kerf_str(sel, "type");

		kerf_admission_field(field, "%s.seLinuxOptions", path);
		if (*kerf_str(sel, "user") || *kerf_str(sel, "role"))
			kerf_admission_deny(ck->d, "selinux", field,
					    "user and role may not be set");
		if (*t && !IN(t, selinux_types))
			kerf_admission_deny(ck->d, "selinux", field,
					    "type '%s' is not one of container_t, container_init_t, container_kvm_t, container_engine_t",
					    kerf_escape(shown, sizeof(shown), t));
	}
	if (json_is_integer(ru) && json_integer_value(ru) == 0) {
		kerf_admission_field(field, "%s.runAsUser", path);
		kerf_admission_deny(ck->d, "run-as-root", field,
				    "0 (root) is not allowed in GPU pods");
	}
	if (json_is_false(kerf_json_get(sc, "runAsNonRoot"))) {
		kerf_admission_field(field, "%s.runAsNonRoot", path);
		kerf_admission_deny(ck->d, "run-as-root", field,
				    "false is not allowed in GPU pods");
	}
	if (kerf_true(kerf_json_get(sc, "windowsOptions"), "hostProcess")) {
		kerf_admission_field(field, "%s.windowsOptions.hostProcess", path);
		kerf_admission_deny(ck->d, "host-namespace", field,
				    "a host process runs outside any isolation");
	}
}

/* "CAP_SYS_ADMIN", "sys_admin" -> "SYS_ADMIN". */
static const char *cap_name(const char *s, char *out, size_t size)
{
	size_t n = 0;

	if (!strncasecmp(s, "CAP_", 4))
		s += 4;
	for (; *s && n + 1 < size; s++)
		out[n++] = (char)toupper((unsigned char)*s);
	out[n] = 0;
	return out;
}

void kerf_pod_check_container_security(struct kerf_pod_check *ck,
				       const json_t *c, const char *cpath)
{
	const json_t *sc = kerf_json_get(c, "securityContext");
	const json_t *caps = kerf_json_get(kerf_json_get(sc, "capabilities"), "add");
	const json_t *ports = kerf_json_get(c, "ports");
	const json_t *mounts = kerf_json_get(c, "volumeMounts");
	const json_t *v;
	char path[KERF_ADMISSION_FIELD_MAX], field[KERF_ADMISSION_FIELD_MAX];
	char shown[64];
	size_t i;

	kerf_admission_field(path, "%s.securityContext", cpath);
	if (kerf_true(sc, "privileged")) {
		kerf_admission_field(field, "%s.privileged", path);
		kerf_admission_deny(ck->d, "privileged", field,
				    "a privileged container sees every GPU of the node and bypasses the device cgroup");
	}
	if (kerf_true(sc, "allowPrivilegeEscalation")) {
		kerf_admission_field(field, "%s.allowPrivilegeEscalation", path);
		kerf_admission_deny(ck->d, "privilege-escalation", field,
				    "true is not allowed in GPU pods");
	}
	if (!strcmp(kerf_str(sc, "procMount"), "Unmasked")) {
		kerf_admission_field(field, "%s.procMount", path);
		kerf_admission_deny(ck->d, "proc-mount", field,
				    "Unmasked exposes the host's /proc paths");
	}
	json_array_foreach(caps, i, v) {
		char cap[64];

		kerf_admission_field(field, "%s.capabilities.add[%zu]", path, i);
		if (!json_is_string(v))
			kerf_admission_deny(ck->d, "malformed", field, "expected a string");
		else if (strcmp(cap_name(json_string_value(v), cap, sizeof(cap)),
				"NET_BIND_SERVICE"))
			kerf_admission_deny(ck->d, "capabilities", field,
					    "'%s': only NET_BIND_SERVICE may be added (Pod Security Restricted)",
					    kerf_escape(shown, sizeof(shown), json_string_value(v)));
	}
	check_context(ck, sc, path);
	json_array_foreach(ports, i, v) {
		const json_t *hp = kerf_json_get(v, "hostPort");

		if (json_is_integer(hp) && json_integer_value(hp) != 0) {
			kerf_admission_field(field, "%s.ports[%zu].hostPort", cpath, i);
			kerf_admission_deny(ck->d, "host-port", field,
					    "host ports are not allowed in GPU pods");
		}
	}
	json_array_foreach(mounts, i, v) {
		char clean[1024];
		const char *mp = kerf_str(v, "mountPath");

		if (kerf_host_path_clean(mp, clean, sizeof(clean)) &&
		    !strcmp(clean, "/etc/ld.so.preload")) {
			kerf_admission_field(field, "%s.volumeMounts[%zu].mountPath", cpath, i);
			kerf_admission_deny(ck->d, "preload-env", field,
					    "a mount on /etc/ld.so.preload injects libraries into every process");
		}
	}
}

void kerf_pod_check_pod_security(struct kerf_pod_check *ck)
{
	const json_t *spec = ck->f->spec;
	const json_t *sc = kerf_json_get(spec, "securityContext");
	const json_t *vols = kerf_json_get(spec, "volumes");
	const json_t *v;
	static const char *const hosts[] = { "hostIPC", "hostPID", "hostNetwork" };
	static const char *const why[] = {
		"reaches MPS shared memory and other tenants' IPC",
		"sees other tenants' GPU processes and can signal the MPS daemon",
		"bypasses the pod network and its QoS marking",
	};
	char field[KERF_ADMISSION_FIELD_MAX], shown[80];
	size_t i;

	for (i = 0; i < 3; i++)
		if (kerf_true(spec, hosts[i])) {
			kerf_admission_field(field, "spec.%s", hosts[i]);
			kerf_admission_deny(ck->d, "host-namespace", field,
					    "may not be true: it %s", why[i]);
		}
	check_context(ck, sc, "spec.securityContext");
	json_array_foreach(kerf_json_get(sc, "sysctls"), i, v) {
		char name[256];
		const char *n = kerf_str(v, "name");

		snprintf(name, sizeof(name), "%s", n);
		for (char *c = name; *c; c++)
			if (*c == '/')
				*c = '.';
		if (!IN(name, safe_sysctls)) {
			kerf_admission_field(field, "spec.securityContext.sysctls[%zu].name", i);
			kerf_admission_deny(ck->d, "sysctls", field,
					    "'%s' is not a safe sysctl",
					    kerf_escape(shown, sizeof(shown), n));
		}
	}
	json_array_foreach(vols, i, v) {
		const json_t *hp = kerf_json_get(v, "hostPath");

		if (hp) {
			kerf_admission_field(field, "spec.volumes[%zu].hostPath.path", i);
			check_host_path(ck, field, kerf_str(hp, "path"));
		}
	}
}
