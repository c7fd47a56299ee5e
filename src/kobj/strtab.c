#include "kobj/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/slab.h"

void kerf_strtab_init(struct kerf_strtab *t)
{
	kerf_buf_init(&t->text, KERF_STRTAB_MAX_BYTES);
	t->nr_fix = 0;
	t->rc = 0;
}

void kerf_strtab_release(struct kerf_strtab *t)
{
	kerf_buf_release(&t->text);
}

void kerf_strtab_add_n(struct kerf_strtab *t, const char **field,
		       const char *s, size_t len)
{
	size_t off = t->text.len;
	int rc;

	if (t->rc)
		return;
	if (t->nr_fix == KERF_STRTAB_MAX_FIELDS) {
		t->rc = -KERF_ELIMIT;
		return;
	}
	rc = kerf_buf_add(&t->text, s, len);
	if (rc == 0)
		rc = kerf_buf_add(&t->text, "", 1);
	if (rc < 0) {
		t->rc = rc;
		return;
	}
	t->fix[t->nr_fix].field = field;
	t->fix[t->nr_fix].off = off;
	t->nr_fix++;
}

void kerf_strtab_add(struct kerf_strtab *t, const char **field, const char *s)
{
	kerf_strtab_add_n(t, field, s, strlen(s));
}

char *kerf_strtab_finish(struct kerf_strtab *t, size_t *len, int *rc)
{
	char *block, *text;

	*rc = t->rc;
	if (t->rc)
		return NULL;
	*len = 0;
	text = kerf_buf_detach(&t->text, len);
	/*
	 * A cached object keeps its block for long: of its size exactly,
	 * from kerf_slab (freed with kerf_slab_free(block, len)), not the
	 * buffer that grew by doubling among the parse's allocations.
	 */
	block = (text || t->nr_fix == 0) ? kerf_slab_alloc(*len) : NULL;
	if (block && *len)
		memcpy(block, text, *len);
	free(text);
	if (!block) {
		*rc = -KERF_ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < t->nr_fix; i++)
		*t->fix[i].field = block + t->fix[i].off;
	t->nr_fix = 0;
	return block;
}

int kerf_strtab_clone(const char *src_block, size_t len, char **dst_block,
		      const char **const *fields, size_t nr)
{
	char *copy = kerf_slab_alloc(len);

	if (!copy)
		return -KERF_ENOMEM;
	if (len)
		memcpy(copy, src_block, len);
	for (size_t i = 0; i < nr; i++)
		if (*fields[i])
			*fields[i] = copy + (*fields[i] - src_block);
	*dst_block = copy;
	return 0;
}
