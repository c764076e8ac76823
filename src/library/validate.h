/*
 * validate.h — is a task fit to train on? Its reference must be accepted on every repeat,
 * and solutions that solve nothing must be rejected (docs/LIBRARY.md, "Validation").
 */
#ifndef CRUCIBLE_VALIDATE_H
#define CRUCIBLE_VALIDATE_H

#include "library/store.h"
#include "judge/verify.h"

struct validation {
    enum store_status status; /* valid, broken, flaky, weak_tests or no_reference */
    char reason[512];         /* what failed, "" when valid */
    double ref_time;          /* CPU seconds of the reference's slowest test; < 0 unknown */
};

/* validate_task(rt, t, o, repeats, v) — runs the reference `repeats` times, then each stub
 * (the empty program; for a Python task with an entry point, the reference with that
 * function rebound to return None) once. o gives the image, pool and infra retries. An
 * infra_error anywhere leaves the task as it was: returns -EAGAIN with v->reason set. */
int validate_task(const struct sandbox_runtime *rt, const struct task *t,
                  const struct verify_opts *o, unsigned repeats, struct validation *v);

#endif
