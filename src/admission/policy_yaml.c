/* policy_yaml: a policy snapshot's objects from multi-document YAML. */
#include "admission/policy.h"

#include "format/yaml_json.h"

int kerf_admission_policy_add_yaml(struct kerf_admission_policy *p,
				   const char *name, const char *text,
				   size_t len, struct kerf_err *err)
{
	struct kerf_yaml_limits lim = { .max_bytes = 16 << 20, .max_depth = 64,
					.max_nodes = 1000000 };
	struct kerf_err one = { 0 };
	json_t *docs, *o;
	size_t i;
	int rc = kerf_yaml_load_json_docs(name, text, len, &lim, &docs, err);

	if (rc < 0)
		return rc;
	json_array_foreach(docs, i, o) {
		rc = kerf_admission_policy_add(p, o, &one);
		if (rc < 0) {
			kerf_err_set(err, rc, "%s: document %zu: %s", name, i + 1,
				     one.msg);
			break;
		}
	}
	json_decref(docs);
	return rc;
}
