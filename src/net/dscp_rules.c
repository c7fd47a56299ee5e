#include "net/dscp_rules.h"

#include <stdbool.h>
#include <string.h>

#include "admission/netclass.h"

#define T "inet " KERF_DSCP_TABLE

int kerf_dscp_of_class(const char *class_name, int32_t *dscp,
		       struct kerf_err *err)
{
	char esc[96];
	const struct kerf_netclass *c =
		class_name ? kerf_netclass_find(class_name) : NULL;

	if (!c)
		return kerf_err_set(err, -KERF_EINVAL,
				    "networkClass: unknown class \"%s\" (known: %s)",
				    kerf_escape(esc, sizeof(esc),
						class_name ? class_name : ""),
				    kerf_netclass_names());
	*dscp = c->dscp;
	return 0;
}

static bool ifname_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

int kerf_dscp_check_ifname(const char *ifname, const char *field,
			   struct kerf_err *err)
{
	if (!ifname || !*ifname)
		return kerf_err_set(err, -KERF_EINVAL, "%s: empty", field);
	size_t len = strlen(ifname);
	if (len > KERF_DSCP_IFNAME_MAX)
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s: %zu characters, an interface name has at most %d",
				    field, len, KERF_DSCP_IFNAME_MAX);
	if (!strcmp(ifname, ".") || !strcmp(ifname, ".."))
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s: \"%s\" is not an interface name",
				    field, ifname);
	for (size_t i = 0; i < len; i++)
		if (!ifname_char_ok(ifname[i]))
			return kerf_err_set(err, -KERF_EINVAL,
					    "%s: character 0x%02x at %zu not allowed (only A-Z a-z 0-9 . _ -)",
					    field, (unsigned char)ifname[i], i);
	return 0;
}

int kerf_dscp_check_uid(const char *uid, const char *field,
			struct kerf_err *err)
{
	if (!uid || !*uid)
		return kerf_err_set(err, -KERF_EINVAL, "%s: empty", field);
	size_t len = strlen(uid);
	if (len > KERF_DSCP_UID_MAX)
		return kerf_err_set(err, -KERF_EINVAL,
				    "%s: %zu characters, at most %d",
				    field, len, KERF_DSCP_UID_MAX);
	for (size_t i = 0; i < len; i++) {
		char c = uid[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      c == '-'))
			return kerf_err_set(err, -KERF_EINVAL,
					    "%s: character 0x%02x at %zu not allowed (only 0-9 a-f -)",
					    field, (unsigned char)c, i);
	}
	return 0;
}

int kerf_dscp_check_pod(const struct kerf_dscp_pod *pod, struct kerf_err *err)
{
	int rc = kerf_dscp_check_uid(pod->uid, "uid", err);
	if (rc)
		return rc;
	rc = kerf_dscp_check_ifname(pod->ifname, "interface", err);
	if (rc)
		return rc;
	if (pod->dscp < 0 || pod->dscp > KERF_DSCP_MAX)
		return kerf_err_set(err, -KERF_EINVAL,
				    "dscp: %d out of range 0..%d",
				    (int)pod->dscp, KERF_DSCP_MAX);
	return 0;
}

/* pod_<uid> with '-' as '_'; uid already checked. */
static void chain_name(char out[KERF_DSCP_UID_MAX + 5], const char *uid)
{
	size_t n = 0;
	memcpy(out, "pod_", 4);
	n = 4;
	for (const char *p = uid; *p; p++)
		out[n++] = *p == '-' ? '_' : *p;
	out[n] = '\0';
}

static int fail_buf(int rc, struct kerf_err *err)
{
	return kerf_err_set(err, rc, "nft ruleset: %s", kerf_strerror(rc));
}

int kerf_dscp_rules_add(struct kerf_buf *out, const struct kerf_dscp_pod *pod,
			struct kerf_err *err)
{
	char chain[KERF_DSCP_UID_MAX + 5];
	int rc = kerf_dscp_check_pod(pod, err);
	if (rc)
		return rc;
	chain_name(chain, pod->uid);
	rc = kerf_buf_addf(out,
			   "add chain " T " %s\n"
			   "flush chain " T " %s\n"
			   "add rule " T " %s ip dscp set %d\n"
			   "add rule " T " %s ip6 dscp set %d\n"
			   "add element " T " pods { \"%s\" : jump %s }\n",
			   chain, chain, chain, (int)pod->dscp, chain,
			   (int)pod->dscp, pod->ifname, chain);
	return rc ? fail_buf(rc, err) : 0;
}

int kerf_dscp_rules_remove(struct kerf_buf *out, const char *uid,
			   const char *ifname, struct kerf_err *err)
{
	char chain[KERF_DSCP_UID_MAX + 5];
	int rc = kerf_dscp_check_uid(uid, "uid", err);
	if (!rc)
		rc = kerf_dscp_check_ifname(ifname, "interface", err);
	if (rc)
		return rc;
	chain_name(chain, uid);
	/* Make both exist first so deleting them cannot fail: nft 1.0.6
	 * (Debian 12) has no `destroy`. */
	rc = kerf_buf_addf(out,
			   "add chain " T " %s\n"
			   "add element " T " pods { \"%s\" : jump %s }\n"
			   "delete element " T " pods { \"%s\" }\n"
			   "flush chain " T " %s\n"
			   "delete chain " T " %s\n",
			   chain, ifname, chain, ifname, chain, chain);
	return rc ? fail_buf(rc, err) : 0;
}

static int check_unique(const struct kerf_dscp_pod *pods, size_t i,
			struct kerf_err *err)
{
	char esc[96];
	for (size_t j = 0; j < i; j++) {
		if (!strcmp(pods[j].uid, pods[i].uid))
			return kerf_err_set(err, -KERF_EINVAL,
					    "pods[%zu].uid: \"%s\" also at pods[%zu]",
					    i, kerf_escape(esc, sizeof(esc),
							   pods[i].uid), j);
		if (!strcmp(pods[j].ifname, pods[i].ifname))
			return kerf_err_set(err, -KERF_EINVAL,
					    "pods[%zu].interface: \"%s\" also at pods[%zu]",
					    i, kerf_escape(esc, sizeof(esc),
							   pods[i].ifname), j);
	}
	return 0;
}

int kerf_dscp_rules_resync(struct kerf_buf *out,
			   const struct kerf_dscp_pod *pods, size_t nr_pods,
			   struct kerf_err *err)
{
	char chain[KERF_DSCP_UID_MAX + 5];
	int rc;

	if (nr_pods > KERF_DSCP_MAX_PODS)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "pods: %zu, at most %d", nr_pods,
				    KERF_DSCP_MAX_PODS);
	for (size_t i = 0; i < nr_pods; i++) {
		struct kerf_err e = { 0 };
		rc = kerf_dscp_check_pod(&pods[i], &e);
		if (rc)
			return kerf_err_set(err, rc, "pods[%zu].%s", i, e.msg);
		rc = check_unique(pods, i, err);
		if (rc)
			return rc;
	}

	/* add + delete: the delete cannot fail, and it all is one
	 * transaction, so the table is never seen half made. */
	rc = kerf_buf_add_str(out,
			      "add table " T "\n"
			      "delete table " T "\n"
			      "table " T " {\n"
			      "\tmap pods {\n"
			      "\t\ttype ifname : verdict\n"
			      "\t}\n");
	for (size_t i = 0; !rc && i < nr_pods; i++) {
		chain_name(chain, pods[i].uid);
		rc = kerf_buf_addf(out,
				   "\tchain %s {\n"
				   "\t\tip dscp set %d\n"
				   "\t\tip6 dscp set %d\n"
				   "\t}\n",
				   chain, (int)pods[i].dscp, (int)pods[i].dscp);
	}
	if (!rc)
		rc = kerf_buf_add_str(out,
				      "\tchain egress {\n"
				      "\t\ttype filter hook prerouting priority mangle; policy accept;\n"
				      "\t\tiifname vmap @pods\n"
				      "\t}\n"
				      "}\n");
	for (size_t i = 0; !rc && i < nr_pods; i++) {
		chain_name(chain, pods[i].uid);
		rc = kerf_buf_addf(out,
				   "add element " T " pods { \"%s\" : jump %s }\n",
				   pods[i].ifname, chain);
	}
	return rc ? fail_buf(rc, err) : 0;
}
