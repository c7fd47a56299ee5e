/*
 * fuzz: the entry point every libFuzzer target in fuzz/ defines.  The same
 * target links either with libFuzzer (clang -fsanitize=fuzzer) or with
 * replay.c, which feeds it the files of a corpus so that the corpus replays
 * under the normal test suite and its sanitizers.
 */
#ifndef KERF_FUZZ_FUZZ_H
#define KERF_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* One input; returns 0 and abort()s when a checked property fails. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* KERF_FUZZ_FUZZ_H */
