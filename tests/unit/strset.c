/* Unit tests for src/strset.c: membership, growth past many doublings, release. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "strset.h"
#include "tap.h"

int main(void)
{
    struct strset set = STRSET_INIT;
    char key[32];
    int added = 0, again = 0;

    is_int(strset_add(&set, "mbpp/1"), 1, "a new string is added");
    is_int(strset_add(&set, "mbpp/1"), 0, "the same string again is found");
    is_int(strset_add(&set, "mbpp/10"), 1, "a string sharing a prefix is another string");
    is_int(strset_add(&set, ""), 1, "the empty string is a member like any other");
    for (int i = 0; i < 50000; i++) {
        snprintf(key, sizeof(key), "task/%d", i);
        added += strset_add(&set, key) == 1;
    }
    is_int(added, 50000, "50000 distinct strings are all added (the table grows)");
    for (int i = 0; i < 50000; i += 7) {
        snprintf(key, sizeof(key), "task/%d", i);
        again += strset_add(&set, key) == 0;
    }
    is_int(again, 7143, "and each is found afterwards");
    ok(set.n == 50003 && set.cap >= 2 * set.n, "count %zu, load at most one half (cap %zu)", set.n,
       set.cap);
    strset_release(&set);
    ok(set.n == 0 && set.cap == 0 && set.slot == NULL, "release empties the set");
    is_int(strset_add(&set, "x"), 1, "a released set is usable again");
    strset_release(&set);
    return done_testing();
}
