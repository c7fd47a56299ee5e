/*
 * discovery: /api, /api/v1, /apis, /apis/G, /apis/G/V, /version, /readyz,
 * /healthz and /livez for the groups served (built-in ones and those of
 * established CRDs).  Aggregated discovery (APIGroupDiscoveryList) is not
 * served: a client asking for it with plain JSON as a fallback, as kubectl
 * does, gets the plain lists.
 */
#include "testapi/testapi_int.h"

#include <stdio.h>
#include <string.h>

static json_t *resource_list(struct kerf_testapi_store *st,
			     const char *group, const char *version)
{
	char gv[160];
	json_t *res = json_array(), *out;
	size_t i;

	snprintf(gv, sizeof(gv), "%s%s%s", group, *group ? "/" : "", version);
	for (i = 0; i < st->nr_kinds; i++) {
		const struct kerf_ta_kind *k = st->kinds[i];
		bool ns = k->flags & KERF_TA_NAMESPACED;
		char sub[160];
		json_t *r;

		if (strcmp(k->group, group) || strcmp(k->version, version))
			continue;
		r = json_pack("{sssssbsssO}", "name", k->plural, "singularName",
			      k->singular, "namespaced", ns, "kind", k->kind,
			      "verbs", json_loads(k->verbs, 0, NULL));
		if (!r)
			continue;
		json_decref(json_object_get(r, "verbs"));
		if (k->short_names)
			json_object_set(r, "shortNames", k->short_names);
		if (k->categories)
			json_object_set(r, "categories", k->categories);
		json_array_append_new(res, r);
		if (k->flags & KERF_TA_STATUS) {
			snprintf(sub, sizeof(sub), "%s/status", k->plural);
			json_array_append_new(res,
				json_pack("{sssssbsss[sss]}", "name", sub,
					  "singularName", "", "namespaced", ns,
					  "kind", k->kind, "verbs", "get",
					  "patch", "update"));
		}
		if (!strcmp(k->plural, "pods") && !*group) {
			json_array_append_new(res,
				json_pack("{sssssbsss[s]}", "name",
					  "pods/binding", "singularName", "",
					  "namespaced", true, "kind", "Binding",
					  "verbs", "create"));
			json_array_append_new(res,
				json_pack("{sssssbsssssss[s]}", "name",
					  "pods/eviction", "singularName", "",
					  "namespaced", true, "group", "policy",
					  "version", "v1", "kind", "Eviction",
					  "verbs", "create"));
		}
	}
	out = json_pack("{ssssss}", "kind", "APIResourceList", "apiVersion",
			"v1", "groupVersion", gv);
	json_object_set_new(out, "resources", res);
	return out;
}

static json_t *group_versions(struct kerf_testapi_store *st,
			      const char *group)
{
	json_t *vers = json_array();
	size_t i;

	for (i = 0; i < st->nr_kinds; i++) {
		const struct kerf_ta_kind *k = st->kinds[i];
		char gv[160];
		json_t *v;
		size_t j;
		bool seen = false;

		if (strcmp(k->group, group))
			continue;
		json_array_foreach(vers, j, v)
			seen |= !strcmp(json_string_value(json_object_get(v, "version")),
					k->version);
		if (seen)
			continue;
		snprintf(gv, sizeof(gv), "%s/%s", group, k->version);
		json_array_append_new(vers, json_pack("{ssss}", "groupVersion",
						      gv, "version",
						      k->version));
	}
	return vers;
}

static json_t *group(struct kerf_testapi_store *st, const char *name)
{
	json_t *vers = group_versions(st, name);
	json_t *g = json_pack("{ss}", "name", name);

	json_object_set(g, "preferredVersion", json_array_get(vers, 0));
	json_object_set_new(g, "versions", vers);
	return g;
}

bool kerf_ta_discovery(struct kerf_ta_ctx *c, char **segs, size_t nr)
{
	struct kerf_testapi_store *st = c->st;
	struct kerf_ta_resp *rs = c->rs;
	json_t *j;
	size_t i;

	if (strcmp(c->rq->method, "GET"))
		return false;
	if (nr == 1 && (!strcmp(segs[0], "readyz") ||
			!strcmp(segs[0], "healthz") ||
			!strcmp(segs[0], "livez"))) {
		kerf_ta_send_text(rs, 200, "text/plain; charset=utf-8", "ok");
		return true;
	}
	if (nr == 1 && !strcmp(segs[0], "version")) {
		kerf_ta_send_json(rs, 200, json_pack("{ssssssssssssssssssssssssss}",
			"major", "1", "minor", "34", "emulationMajor", "1",
			"emulationMinor", "34", "minCompatibilityMajor", "1",
			"minCompatibilityMinor", "33", "gitVersion", "v1.34.9",
			"gitCommit", "ba6535cbb8719c3ba6c3923f2725ba050c87faab",
			"gitTreeState", "clean", "buildDate",
			"2026-08-18T00:00:00Z", "goVersion", "go1.25.12",
			"compiler", "gc", "platform", "linux/amd64"), false);
		return true;
	}
	if (nr == 1 && !strcmp(segs[0], "api")) {
		char addr[64];

		snprintf(addr, sizeof(addr), "127.0.0.1:%u",
			 (unsigned)c->ta->port);
		kerf_ta_send_json(rs, 200, json_pack("{sss[s]s[{ssss}]}",
			"kind", "APIVersions", "versions", "v1",
			"serverAddressByClientCIDRs", "clientCIDR",
			"0.0.0.0/0", "serverAddress", addr), false);
		return true;
	}
	if (nr == 2 && !strcmp(segs[0], "api") && !strcmp(segs[1], "v1")) {
		kerf_ta_send_json(rs, 200, resource_list(st, "", "v1"), false);
		return true;
	}
	if (nr == 1 && !strcmp(segs[0], "apis")) {
		json_t *groups = json_array(), *g;

		for (i = 0; i < st->nr_kinds; i++) {
			const char *name = st->kinds[i]->group;
			bool seen = false;
			size_t x;

			if (!*name)
				continue;
			json_array_foreach(groups, x, g)
				seen |= !strcmp(json_string_value(json_object_get(g, "name")),
						name);
			if (!seen)
				json_array_append_new(groups, group(st, name));
		}
		j = json_pack("{ssss}", "kind", "APIGroupList", "apiVersion",
			      "v1");
		json_object_set_new(j, "groups", groups);
		kerf_ta_send_json(rs, 200, j, false);
		return true;
	}
	if (nr == 2 && !strcmp(segs[0], "apis") &&
	    kerf_ta_group_known(st, segs[1], NULL)) {
		j = group(st, segs[1]);
		json_object_set_new(j, "kind", json_string("APIGroup"));
		json_object_set_new(j, "apiVersion", json_string("v1"));
		kerf_ta_send_json(rs, 200, j, false);
		return true;
	}
	if (nr == 3 && !strcmp(segs[0], "apis") &&
	    kerf_ta_group_known(st, segs[1], segs[2])) {
		kerf_ta_send_json(rs, 200, resource_list(st, segs[1], segs[2]),
				  false);
		return true;
	}
	return false;
}
