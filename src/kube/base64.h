/*
 * base64: a strict decoder for the kubeconfig's *-data fields (PEM
 * certificates and keys written as standard base64, RFC 4648 section 4).
 *
 * Strict: the standard alphabet only, padding required (the length without
 * line breaks is a multiple of 4), '=' only at the very end and at most two
 * of them, and the unused bits of the last group zero, so every input has
 * exactly one meaning.  Line breaks (CR, LF) anywhere are skipped, as Go's
 * decoder does, since some tools wrap long values.
 */
#ifndef KERF_KUBE_BASE64_H
#define KERF_KUBE_BASE64_H

#include <stddef.h>

/*
 * in[0..len) decoded into a malloc'd buffer *out (NUL-terminated; *out_len
 * bytes, the NUL not counted).  Returns 0, -KERF_EPARSE when in is not
 * strict base64 (*out untouched) or -KERF_ENOMEM.
 */
int kerf_base64_decode(const char *in, size_t len, char **out,
		       size_t *out_len) __attribute__((warn_unused_result));

#endif /* KERF_KUBE_BASE64_H */
