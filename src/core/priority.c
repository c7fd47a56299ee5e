#include "core/priority.h"

#include <string.h>

void kerf_classes_init(struct kerf_classes *cl)
{
	memset(cl, 0, sizeof(*cl));
}

int kerf_classes_find(const struct kerf_classes *cl, const char *name)
{
	for (int i = 0; i < cl->nr; i++)
		if (strcmp(cl->c[i].name, name) == 0)
			return i;
	return -KERF_ENOTFOUND;
}

int kerf_classes_add(struct kerf_classes *cl,
		     const struct kerf_priority_class *pc, struct kerf_err *err)
{
	size_t len = strnlen(pc->name, sizeof(pc->name));

	if (len == 0 || len >= sizeof(pc->name))
		return kerf_err_set(err, -KERF_EINVAL,
				    "priority class name: must be 1 to %d bytes",
				    KERF_CLASS_NAME_MAX - 1);
	if (kerf_classes_find(cl, pc->name) >= 0)
		return kerf_err_set(err, -KERF_EEXIST,
				    "priority class '%s': defined twice", pc->name);
	if (pc->checkpoint_grace_ms < 0 || pc->min_runtime_ms < 0)
		return kerf_err_set(err, -KERF_EINVAL,
				    "priority class '%s': times must not be negative",
				    pc->name);
	if (cl->nr >= KERF_MAX_CLASSES)
		return kerf_err_set(err, -KERF_ELIMIT,
				    "priority class '%s': more than %d classes",
				    pc->name, KERF_MAX_CLASSES);
	cl->c[cl->nr] = *pc;
	return cl->nr++;
}
