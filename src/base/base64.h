/*
 * base64: standard base64 (RFC 4648 section 4, with padding), the form Go
 * writes a []byte field in JSON: a strict decoder for the kubeconfig's
 * *-data fields (PEM certificates and keys) and an encoder for the
 * AdmissionReview response's patch.
 *
 * Strict: the standard alphabet only, padding required (the length without
 * line breaks is a multiple of 4), '=' only at the very end and at most two
 * of them, and the unused bits of the last group zero, so every input has
 * exactly one meaning.  Line breaks (CR, LF) anywhere are skipped, as Go's
 * decoder does, since some tools wrap long values.
 */
#ifndef KERF_BASE_BASE64_H
#define KERF_BASE_BASE64_H

#include <stddef.h>

/*
 * in[0..len) decoded into a malloc'd buffer *out (NUL-terminated; *out_len
 * bytes, the NUL not counted).  Returns 0, -KERF_EPARSE when in is not
 * strict base64 (*out untouched) or -KERF_ENOMEM.
 */
int kerf_base64_decode(const char *in, size_t len, char **out,
		       size_t *out_len) __attribute__((warn_unused_result));

/*
 * in[0..len) encoded into a malloc'd NUL-terminated string *out of
 * *out_len characters (4 per 3 bytes, '=' padded, no line breaks).
 * Returns 0, or -KERF_ENOMEM (also when the length would overflow).
 */
int kerf_base64_encode(const void *in, size_t len, char **out,
		       size_t *out_len) __attribute__((warn_unused_result));

#endif /* KERF_BASE_BASE64_H */
