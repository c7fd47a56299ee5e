#include "net/nic_qos.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "admission/netclass.h"
#include "base/buf.h"
#include "net/dscp_rules.h"

const char *kerf_nic_verdict_name(enum kerf_nic_verdict v)
{
	switch (v) {
	case KERF_NIC_OK: return "ok";
	case KERF_NIC_MISMATCH: return "mismatch";
	case KERF_NIC_UNKNOWN: return "unknown";
	}
	return "?";
}

static uint8_t class_prio_bit(const char *name)
{
	const struct kerf_netclass *c = kerf_netclass_find(name);
	if (!c || c->nccl_ib_sl < 0 || c->nccl_ib_sl > 7)
		return 0;
	return (uint8_t)(1u << c->nccl_ib_sl);
}

uint8_t kerf_nic_expected_pfc_mask(enum kerf_roce_profile profile)
{
	uint8_t mask = class_prio_bit("rdma");
	if (profile == KERF_ROCE_PROFILE_B)
		mask |= class_prio_bit("rdma-latency");
	return mask;
}

/* "3,4" or "none". */
static void mask_text(char *out, size_t size, uint8_t mask)
{
	size_t n = 0;
	out[0] = '\0';
	for (int p = 0; p < 8; p++)
		if (mask & (1u << p))
			n += (size_t)snprintf(out + n, size - n, "%s%d",
					      n ? "," : "", p);
	if (!n)
		snprintf(out, size, "none");
}

/* The last word of text that is "dscp" or "pcp"; NULL if none. */
static const char *trust_word(const char *text)
{
	const char *found = NULL;
	for (const char *p = text; *p; p++) {
		bool start = p == text || p[-1] == ' ' || p[-1] == ':' ||
			     p[-1] == '\t' || p[-1] == '\n';
		if (!start)
			continue;
		size_t len = strcspn(p, " \t\r\n");
		if (len == 4 && !strncmp(p, "dscp", 4))
			found = "dscp";
		else if (len == 3 && !strncmp(p, "pcp", 3))
			found = "pcp";
	}
	return found;
}

static void check_trust(const struct kerf_sysfs_ops *ops, const char *ifname,
			struct kerf_nic_finding *f)
{
	char path[96], text[256], esc[64];
	snprintf(path, sizeof(path), "/sys/class/net/%s/qos/trust", ifname);
	f->check = "trust";
	snprintf(f->expected, sizeof(f->expected), "dscp");
	int n = ops->read(ops->ctx, path, text, sizeof(text));
	if (n < 0) {
		f->verdict = KERF_NIC_UNKNOWN;
		snprintf(f->detail, sizeof(f->detail),
			 "%s: %s (the driver does not expose trust)", path,
			 kerf_strerror(n));
		return;
	}
	const char *w = trust_word(text);
	snprintf(f->detail, sizeof(f->detail), "%s", path);
	if (!w) {
		f->verdict = KERF_NIC_UNKNOWN;
		snprintf(f->detail, sizeof(f->detail), "%s: unreadable \"%s\"",
			 path, kerf_escape(esc, sizeof(esc), text));
		return;
	}
	snprintf(f->actual, sizeof(f->actual), "%s", w);
	f->verdict = strcmp(w, "dscp") ? KERF_NIC_MISMATCH : KERF_NIC_OK;
}

/* 8 flags 0/1 separated by commas or blanks; -1 when malformed. */
static int parse_pfc(const char *text)
{
	int mask = 0, nr = 0;
	for (const char *p = text; *p; p++) {
		if (*p == ',' || *p == ' ' || *p == '\t' || *p == '\n' ||
		    *p == '\r')
			continue;
		if ((*p != '0' && *p != '1') || nr >= 8)
			return -1;
		if (p[1] && p[1] != ',' && p[1] != ' ' && p[1] != '\t' &&
		    p[1] != '\n' && p[1] != '\r')
			return -1;
		if (*p == '1')
			mask |= 1 << nr;
		nr++;
	}
	return nr == 8 ? mask : -1;
}

static void check_pfc(const struct kerf_sysfs_ops *ops, const char *ifname,
		      uint8_t want, struct kerf_nic_finding *f)
{
	char path[96], text[256], esc[64];
	snprintf(path, sizeof(path), "/sys/class/net/%s/qos/pfc", ifname);
	f->check = "pfc";
	mask_text(f->expected, sizeof(f->expected), want);
	int n = ops->read(ops->ctx, path, text, sizeof(text));
	if (n < 0) {
		f->verdict = KERF_NIC_UNKNOWN;
		snprintf(f->detail, sizeof(f->detail),
			 "%s: %s (PFC is in DCB netlink only, not read)", path,
			 kerf_strerror(n));
		return;
	}
	int mask = parse_pfc(text);
	if (mask < 0) {
		f->verdict = KERF_NIC_UNKNOWN;
		snprintf(f->detail, sizeof(f->detail),
			 "%s: not 8 flags 0/1: \"%s\"", path,
			 kerf_escape(esc, sizeof(esc), text));
		return;
	}
	snprintf(f->detail, sizeof(f->detail), "%s", path);
	mask_text(f->actual, sizeof(f->actual), (uint8_t)mask);
	f->verdict = mask == want ? KERF_NIC_OK : KERF_NIC_MISMATCH;
}

int kerf_nic_qos_check(const struct kerf_sysfs_ops *ops, const char *ifname,
		       enum kerf_roce_profile profile,
		       struct kerf_nic_report *report, struct kerf_err *err)
{
	char path[64], text[32];
	memset(report, 0, sizeof(*report));
	int rc = kerf_dscp_check_ifname(ifname, "interface", err);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", ifname);
	if (ops->read(ops->ctx, path, text, sizeof(text)) < 0)
		return kerf_err_set(err, -KERF_ENOTFOUND,
				    "interface: no interface \"%s\" (%s)",
				    ifname, path);
	snprintf(report->ifname, sizeof(report->ifname), "%s", ifname);

	check_trust(ops, ifname, &report->findings[0]);
	check_pfc(ops, ifname, kerf_nic_expected_pfc_mask(profile),
		  &report->findings[1]);
	report->nr_findings = 2;
	for (size_t i = 0; i < report->nr_findings; i++) {
		if (report->findings[i].verdict == KERF_NIC_MISMATCH)
			report->nr_mismatches++;
		else if (report->findings[i].verdict == KERF_NIC_UNKNOWN)
			report->nr_unknown++;
	}
	return 0;
}
