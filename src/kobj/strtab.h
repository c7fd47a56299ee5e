/*
 * strtab: the strings of one compact object in one allocation.  Strings
 * are added while decoding; kerf_strtab_finish moves them into a single
 * block and points every registered field at its copy.
 */
#ifndef KERF_KOBJ_STRTAB_H
#define KERF_KOBJ_STRTAB_H

#include <stddef.h>

#include "base/buf.h"

enum { KERF_STRTAB_MAX_FIELDS = 256, KERF_STRTAB_MAX_BYTES = 1 << 20 };

struct kerf_strtab {
	struct kerf_buf text;
	struct {
		const char **field;
		size_t off;
	} fix[KERF_STRTAB_MAX_FIELDS];
	size_t nr_fix;
	int rc;                 /* first error, sticky */
};

void kerf_strtab_init(struct kerf_strtab *t);
void kerf_strtab_release(struct kerf_strtab *t);

/* Make *field point at a copy of s (len bytes) once finished. */
void kerf_strtab_add_n(struct kerf_strtab *t, const char **field,
		       const char *s, size_t len);
void kerf_strtab_add(struct kerf_strtab *t, const char **field, const char *s);

/*
 * The block of *len bytes (kerf_slab's: the caller frees it with
 * kerf_slab_free(block, *len)), every field set; NULL and rc on error.
 */
char *kerf_strtab_finish(struct kerf_strtab *t, size_t *len, int *rc);

/*
 * A copy of the block src_block[0..len) into *dst_block (kerf_slab's, as
 * above) with every string
 * pointer of fields[] (pointing into src_block, or NULL) moved to the copy.
 */
int kerf_strtab_clone(const char *src_block, size_t len, char **dst_block,
		      const char **const *fields, size_t nr);

#endif
