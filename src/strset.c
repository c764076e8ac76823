/*
 * strset.c — the string set (strset.h). The table doubles when half full.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strset.h"

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int grow(struct strset *set)
{
    size_t cap = set->cap ? 2 * set->cap : 1024;
    char **slot = calloc(cap, sizeof(*slot));

    if (!slot)
        return -ENOMEM;
    for (size_t i = 0; i < set->cap; i++) {
        size_t k;
        if (!set->slot[i])
            continue;
        for (k = hash(set->slot[i]) & (cap - 1); slot[k]; k = (k + 1) & (cap - 1))
            ;
        slot[k] = set->slot[i];
    }
    free(set->slot);
    set->slot = slot;
    set->cap = cap;
    return 0;
}

int strset_add(struct strset *set, const char *s)
{
    size_t k;

    if (2 * (set->n + 1) > set->cap && grow(set) < 0)
        return -ENOMEM;
    for (k = hash(s) & (set->cap - 1); set->slot[k]; k = (k + 1) & (set->cap - 1))
        if (strcmp(set->slot[k], s) == 0)
            return 0;
    if (!(set->slot[k] = strdup(s)))
        return -ENOMEM;
    set->n++;
    return 1;
}

bool strset_has(const struct strset *set, const char *s)
{
    if (!set->cap)
        return false;
    for (size_t k = hash(s) & (set->cap - 1); set->slot[k]; k = (k + 1) & (set->cap - 1))
        if (strcmp(set->slot[k], s) == 0)
            return true;
    return false;
}

void strset_release(struct strset *set)
{
    for (size_t i = 0; i < set->cap; i++)
        free(set->slot[i]);
    free(set->slot);
    set->slot = NULL;
    set->cap = set->n = 0;
}
