/*
 * validate.c — task validation (validate.h): the reference on k repeats, then stubs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "library/validate.h"

/* first_failure(vr, buf, size) — "test NAME: verdict: why" of the first test not passed,
 * or the record's message. */
static void first_failure(const struct verify_result *vr, char *buf, size_t size)
{
    for (size_t i = 0; i < vr->total; i++) {
        const struct verify_test *vt = &vr->tests[i];
        if (vt->verdict != VERDICT_ACCEPTED) {
            snprintf(buf, size, "test %s: %s%s%.200s", vt->name ? vt->name : "?",
                     verdict_name(vt->verdict), vt->why[0] ? ": " : "", vt->why);
            return;
        }
    }
    snprintf(buf, size, "%.300s", vr->message);
}

/* python_stub(t) — the reference with the entry point rebound to return None (how the
 * BASELINE of the public datasets builds its stub), or NULL when that does not apply. */
static char *python_stub(const struct task *t)
{
    char *s = NULL;

    if (strcmp(t->lang->name, "python") != 0 || !t->entry_point || !t->reference)
        return NULL;
    if (asprintf(&s, "%s\n\n\ndef %s(*args, **kwargs):\n    return None\n", t->reference,
                 t->entry_point) < 0)
        return NULL;
    return s;
}

int validate_task(const struct sandbox_runtime *rt, const struct task *t,
                  const struct verify_opts *o, unsigned repeats, struct validation *v)
{
    struct verify_opts ro = *o;
    struct verify_result vr;
    char *stubs[2] = {NULL, NULL};
    const char *stub_names[2] = {"the empty program", "the entry point returning None"};
    char why[400];
    int r = 0;

    memset(v, 0, sizeof(*v));
    v->ref_time = -1;
    if (!t->reference) {
        v->status = STORE_NO_REFERENCE;
        snprintf(v->reason, sizeof(v->reason), "the task has no reference solution");
        return 0;
    }
    ro.repeats = repeats ? repeats : 1;
    verify_run(rt, t, t->reference, &ro, &vr);
    for (size_t i = 0; i < vr.total; i++)
        if (vr.tests[i].verdict != VERDICT_NOT_RUN && vr.tests[i].run.cpu_time > v->ref_time)
            v->ref_time = vr.tests[i].run.cpu_time;
    if (vr.verdict == VERDICT_INFRA_ERROR) {
        snprintf(v->reason, sizeof(v->reason), "crucible failed running the reference: %.400s",
                 vr.message);
        verify_result_release(&vr);
        return -EAGAIN;
    }
    if (vr.flaky) {
        first_failure(&vr, why, sizeof(why));
        v->status = STORE_FLAKY;
        snprintf(v->reason, sizeof(v->reason), "the reference's %u repeats disagree (%s)",
                 vr.repeats, why);
    } else if (vr.verdict != VERDICT_ACCEPTED) {
        first_failure(&vr, why, sizeof(why));
        v->status = STORE_BROKEN;
        snprintf(v->reason, sizeof(v->reason), "the reference is not accepted: %s: %s",
                 verdict_name(vr.verdict), why);
    }
    verify_result_release(&vr);
    if (v->status == STORE_FLAKY || v->status == STORE_BROKEN)
        return 0;
    v->status = STORE_VALID;
    stubs[0] = strdup("");
    stubs[1] = python_stub(t);
    ro.repeats = 1;
    ro.verdict_only = true;
    for (int i = 0; i < 2 && r == 0; i++) {
        if (!stubs[i])
            continue;
        verify_run(rt, t, stubs[i], &ro, &vr);
        if (vr.verdict == VERDICT_INFRA_ERROR) {
            snprintf(v->reason, sizeof(v->reason), "crucible failed running a stub: %.400s",
                     vr.message);
            r = -EAGAIN;
        } else if (vr.verdict == VERDICT_ACCEPTED) {
            v->status = STORE_WEAK_TESTS;
            snprintf(v->reason, sizeof(v->reason), "%s is accepted", stub_names[i]);
        }
        verify_result_release(&vr);
        if (v->status == STORE_WEAK_TESTS)
            break;
    }
    free(stubs[0]);
    free(stubs[1]);
    return r;
}
