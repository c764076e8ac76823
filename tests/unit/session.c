/* Unit tests for src/service/session.c: ids, lookup, the maximum, unlinking, and which
 * sessions are due for reclamation (ttl, idle; busy and unmade ones never). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "service/session.h"
#include "tap.h"
#include "util.h"

int main(void)
{
    struct session_table *t = session_table_new(3);
    struct session *a, *b, *c, *s;
    enum session_reclaim why = SESSION_LIVE;
    double now;
    char upper[SESSION_ID_LEN + 1];

    ok(t != NULL, "a table of at most 3");
    a = session_new(t);
    b = session_new(t);
    ok(a && b && session_id_valid(a->id) && session_id_valid(b->id) && strcmp(a->id, b->id) != 0,
       "two sessions with distinct valid ids (%s, %s)", a ? a->id : "-", b ? b->id : "-");
    ok(!session_id_valid("s-123") && !session_id_valid("x-0123456789abcdef01234567") &&
           !session_id_valid("s-0123456789abcdef0123456g") && !session_id_valid("") &&
           !session_id_valid(NULL) && !session_id_valid("s-0123456789abcdef012345678"),
       "malformed ids are refused (length, prefix, digits)");
    snprintf(upper, sizeof(upper), "s-0123456789ABCDEF01234567");
    ok(!session_id_valid(upper) && session_id_valid("s-0123456789abcdef01234567"),
       "hex digits are lowercase only");
    ok(session_find(t, a->id) == a && session_find(t, b->id) == b, "each is found by its id");
    ok(session_find(t, "s-000000000000000000000000") == NULL, "an unknown id is not found");
    c = session_new(t);
    errno = 0;
    s = session_new(t);
    ok(c && !s && errno == EAGAIN, "the fourth of a table of 3: NULL with EAGAIN");
    is_int((int)session_count(t), 3, "three counted");

    session_unlink(t, b, SESSION_DELETED);
    ok(session_find(t, b->id) == NULL && b->reclaim == SESSION_DELETED && session_count(t) == 2 &&
           session_first(t) == a && a->next == c,
       "unlinked: not found, marked, the list closes over the gap");
    session_free(b);

    /* due: nothing without a sandbox; then by ttl, by idle; never while busy */
    now = util_now();
    a->ttl_s = c->ttl_s = 100;
    a->idle_ttl_s = c->idle_ttl_s = 10;
    ok(session_due(t, now + 1000, &why) == NULL, "sessions still being made are never due");
    a->sb = c->sb = (struct sandbox *)1; /* never dereferenced by the table */
    ok(session_due(t, now + 1, &why) == NULL, "nothing is due before its times");
    ok(session_due(t, now + 11, &why) == a && why == SESSION_IDLE, "idle for 11 s of 10: idle");
    a->last_used = now + 50;
    c->last_used = now + 50;
    ok(session_due(t, now + 55, &why) == NULL, "a request restarts the idle clock");
    ok(session_due(t, now + 101, &why) == a && why == SESSION_TTL,
       "past its ttl: ttl, whatever its idle time");
    a->busy = true;
    ok(session_due(t, now + 101, &why) == c, "a busy session is passed over");
    c->busy = true;
    ok(session_due(t, now + 1000, &why) == NULL, "all busy: none due");
    is_str(session_reclaim_name(SESSION_IDLE), "idle", "reason names: idle");
    is_str(session_reclaim_name(SESSION_TTL), "ttl", "reason names: ttl");
    a->sb = c->sb = NULL;
    session_table_free(t);
    return done_testing();
}
