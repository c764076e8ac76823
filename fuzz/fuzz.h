/*
 * fuzz.h — what the fuzz targets share (docs/TESTING.md, "Fuzzing").
 *
 * A target is one file fuzz/NAME.c defining LLVMFuzzerTestOneInput for one parser of outside
 * input. It is linked two ways: with clang's libFuzzer (make fuzz, make fuzz-smoke:
 * build-fuzz/fuzz/NAME) and with fuzz/replay.c's main (BUILD/fuzz/NAME, any compiler),
 * which runs it once over each file named (make check replays fuzz/regress/NAME/).
 *
 * A target must be deterministic, must not leak, and may keep state only in statics set up
 * once (a scratch directory, a parsed config): the process runs millions of inputs.
 */
#ifndef CRUCIBLE_FUZZ_H
#define CRUCIBLE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* fuzz_split(data, size, &a, &alen, &b, &blen) — the input cut at its first NUL byte into
 * two parts (b empty when there is none): how a target gets two inputs from one. */
static inline void fuzz_split(const uint8_t *data, size_t size, const char **a, size_t *alen,
                              const char **b, size_t *blen)
{
    const uint8_t *z = size ? memchr(data, 0, size) : NULL;

    *a = (const char *)data;
    *alen = z ? (size_t)(z - data) : size;
    *b = z ? (const char *)z + 1 : (const char *)data + size;
    *blen = z ? size - *alen - 1 : 0;
}

/* fuzz_strndup(data, size) — a NUL-terminated copy (the caller frees); aborts on ENOMEM,
 * which a fuzz run reports. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
