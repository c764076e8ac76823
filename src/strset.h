/*
 * strset.h — a set of strings (open addressing, FNV-1a): duplicate ids in task files and
 * imports are found in linear time, not by comparing every pair.
 */
#ifndef CRUCIBLE_STRSET_H
#define CRUCIBLE_STRSET_H

#include <stdbool.h>
#include <stddef.h>

struct strset {
    char **slot; /* owned copies; NULL = empty */
    size_t cap, n;
};

#define STRSET_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* strset_add(set, s) — 1 when s was added (a copy is kept), 0 when it was there, -ENOMEM. */
int strset_add(struct strset *set, const char *s);

/* strset_has(set, s) — s is in the set. */
bool strset_has(const struct strset *set, const char *s);

/* strset_release(set) — frees the copies; the set is empty again. */
void strset_release(struct strset *set);

#endif
