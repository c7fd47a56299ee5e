#include "kube/sync.h"

#include <stdbool.h>

struct answer {
	bool done;
	long status;
	json_t *body;
};

static void got(void *arg, const struct kerf_kube_response *r)
{
	struct answer *a = arg;

	a->done = true;
	a->status = r->http_status;
	a->body = r->body ? json_loads(r->body, 0, NULL) : NULL;
}

long kerf_kube_sync(const struct kerf_kube_ops *ops,
		    const struct kerf_kube_request *req,
		    void (*turn)(void *arg), void *arg, unsigned max_turns,
		    json_t **body)
{
	struct answer a = { 0 };
	uint64_t id;

	if (body)
		*body = NULL;
	if (ops->request(ops->ctx, req, got, &a, &id) < 0)
		return 0;
	for (unsigned i = 0; !a.done && i < max_turns; i++)
		turn(arg);
	if (!a.done) {
		ops->cancel(ops->ctx, id);
		return 0;
	}
	if (body)
		*body = a.body;
	else
		json_decref(a.body);
	return a.status;
}
