/*
 * verify_interactive.c — the interactive harness: the solution and the task's interactor
 * (a Kattis output validator that talks) run at the same time, each in a sandbox of its
 * own, the solution's stdout piped to the interactor's stdin and the interactor's stdout to
 * the solution's stdin. The interactor reads the test's input file and judge answer (which
 * the solution never sees) and decides, as problemtools' interactive runner has it.
 *
 * sandbox_exec blocks until its process ends, so each side runs on a thread of its own; the
 * pipes are the supervisor's (pipe2), and only their ends cross into the sandboxes. The
 * supervisor keeps a copy of each end, released as problemtools' runner releases them, so
 * that which side ended first is known before the other can notice it:
 *   - the solution's stdout (write end) closes after the solution is seen to end, so the
 *     interactor reads end of file only then;
 *   - the interactor's stdout (write end) closes after the interactor is seen to end;
 *   - the read end of the solution's output closes early only when the interactor ended
 *     first without accepting (a solution still writing then gets EPIPE); otherwise it stays
 *     open, so that a solution writing its last words while an accepting interactor exits is
 *     not killed by SIGPIPE;
 *   - the read end of the interactor's output is drained once the solution has ended, so the
 *     interactor never blocks (nor gets SIGPIPE) writing to a solution that is gone.
 *
 * The verdict, in problemtools' order (its _run_interactive):
 *   1. the interactor failed (exit other than 42/43, a signal, a limit): infra_error;
 *   2. it exited 43 and ended first: wrong_answer, whatever the solution did afterwards;
 *   3. the solution hit its time limit (CPU, or wall: a deadlock of two sides each waiting
 *      for the other ends there): timeout;
 *   4. the solution failed otherwise: runtime_error (memory_limit, output_limit as such);
 *   5. otherwise the interactor's verdict: 42 accepted, 43 wrong_answer.
 * crucible's own failures (sandbox_error on either side) are retried on fresh sandboxes.
 * The test's run record is the solution's; `why` says what the interactor did.
 */
#include "judge/verify_int.h"
#include "sandbox/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PIPE_BYTES (1 << 20) /* as problemtools' runner asks for */

enum side { SIDE_NONE, SIDE_SOLUTION, SIDE_INTERACTOR };

/* What the two threads share for one test. */
struct duel {
    pthread_mutex_t lock;
    enum side first; /* the side seen to end first */
    bool int_first_rejected;
    int sol_in, sol_out; /* the solution's stdin (read end) and stdout (write end) */
    int int_in, int_out; /* the interactor's */
};

struct side_run {
    struct duel *d;
    struct sandbox *sb;
    const char *const *argv;
    const char *const *env;
    unsigned flags;
    struct result res;
    bool destroyed; /* its other processes would not die: the sandbox was destroyed */
};

/* clear(s) — every process of the side's sandbox but init killed, so that none holds a pipe
 * end; when that fails, the whole sandbox goes (the caller must not use it again). */
static void clear(struct side_run *s)
{
    if (sandbox_kill_others(s->sb, NULL) < 0) {
        sandbox_destroy(s->sb, NULL);
        s->destroyed = true;
    }
}

/* closefd(fd) — closes *fd once. */
static void closefd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void *run_solution(void *arg)
{
    struct side_run *s = arg;
    struct duel *d = s->d;
    struct sandbox_proc p = {.argv = (char *const *)s->argv,
                             .env = (char *const *)s->env,
                             .stdin_fd = d->sol_in,
                             .stdout_fd = d->sol_out,
                             .pipes = SANDBOX_PROC_STDIN_PIPE | SANDBOX_PROC_STDOUT_PIPE};
    char buf[65536];

    result_init(&s->res);
    if (sandbox_exec(s->sb, &p, s->flags, &s->res) < 0 && s->res.status != RESULT_SANDBOX_ERROR)
        result_fail(&s->res, "cannot start the solution on pipes");
    pthread_mutex_lock(&d->lock);
    if (d->first == SIDE_NONE)
        d->first = SIDE_SOLUTION;
    pthread_mutex_unlock(&d->lock);
    /* nothing of the solution's may keep its stdout open: then the interactor sees the end */
    if (!(s->flags & SANDBOX_EXEC_LAST))
        clear(s);
    closefd(&d->sol_out);
    /* what the interactor still writes goes nowhere, until it ends */
    for (;;) {
        ssize_t n = read(d->sol_in, buf, sizeof(buf));
        if (n == 0 || (n < 0 && errno != EINTR))
            break;
    }
    closefd(&d->sol_in);
    return NULL;
}

static void *run_interactor(void *arg)
{
    struct side_run *s = arg;
    struct duel *d = s->d;
    struct sandbox_proc p = {.argv = (char *const *)s->argv,
                             .env = (char *const *)s->env,
                             .stdin_fd = d->int_in,
                             .stdout_fd = d->int_out,
                             .pipes = SANDBOX_PROC_STDIN_PIPE | SANDBOX_PROC_STDOUT_PIPE};

    result_init(&s->res);
    if (sandbox_exec(s->sb, &p, 0, &s->res) < 0 && s->res.status != RESULT_SANDBOX_ERROR)
        result_fail(&s->res, "cannot start the interactor on pipes");
    pthread_mutex_lock(&d->lock);
    if (d->first == SIDE_NONE) {
        d->first = SIDE_INTERACTOR;
        /* ended first without accepting: the solution's writes may fail from now on */
        if (verify__validator_exit(&s->res) != VALIDATOR_ACCEPTED) {
            d->int_first_rejected = true;
            closefd(&d->int_in);
        }
    }
    pthread_mutex_unlock(&d->lock);
    clear(s);
    closefd(&d->int_out);
    return NULL;
}

/* side_word(r) — how a side ended, for the reason. */
static const char *side_word(const struct result *r, char *buf, size_t n)
{
    if (r->status == RESULT_RUNTIME_ERROR || r->status == RESULT_OK)
        snprintf(buf, n, "exit %d", r->exit_code);
    else if (r->status == RESULT_SIGNALED)
        snprintf(buf, n, "signal %d", r->signal);
    else
        snprintf(buf, n, "%s", result_status_name(r->status));
    return buf;
}

/* decide(…) — the verdict of one exchange (see the top of the file); why says what the
 * interactor did. VERDICT_INFRA_ERROR with *ours set: crucible's failure (retry). */
static enum verdict decide(const struct task *t, const struct task_test *tt,
                           const struct result *sol, const struct result *itr, enum side first,
                           const char *msg, bool *ours, char *why, size_t why_size)
{
    enum validator_exit ie = verify__validator_exit(itr);
    char said[320], how[48], swhy[256];
    enum verdict v;

    *ours = false;
    if (sol->status == RESULT_SANDBOX_ERROR || ie == VALIDATOR_OURS) {
        *ours = true;
        snprintf(why, why_size, "%s",
                 sol->status == RESULT_SANDBOX_ERROR ? sol->message : itr->message);
        return VERDICT_INFRA_ERROR;
    }
    if (ie == VALIDATOR_FAILED) {
        verify__validator_failure("interactor", itr, msg, why, why_size);
        return VERDICT_INFRA_ERROR;
    }
    snprintf(said, sizeof(said), "interactor: %s (exit %d) %s the solution ended%s%s",
             ie == VALIDATOR_ACCEPTED ? "accepted" : "wrong answer", itr->exit_code,
             first == SIDE_INTERACTOR ? "before" : "after", msg[0] ? ": " : "", msg);
    if (ie == VALIDATOR_REJECTED && first == SIDE_INTERACTOR) {
        snprintf(why, why_size, "%s", said);
        return VERDICT_WRONG_ANSWER;
    }
    v = verify__run_verdict(t, tt, sol, swhy, sizeof(swhy));
    if (v == VERDICT_ACCEPTED)
        v = ie == VALIDATOR_ACCEPTED ? VERDICT_ACCEPTED : VERDICT_WRONG_ANSWER;
    if (v == VERDICT_ACCEPTED || v == VERDICT_WRONG_ANSWER)
        snprintf(why, why_size, "%s", said);
    else
        snprintf(why, why_size, "%s (%s); %s", swhy[0] ? swhy : "the solution failed",
                 side_word(sol, how, sizeof(how)), said);
    return v;
}

/* exchange(…) — one test: both sides run, then the verdict. sol_sb is the solution's
 * sandbox (with last, torn down by this exec); res gets the solution's run. *sol_gone: the
 * solution's sandbox was destroyed (its processes would not die); vb may be closed. */
static enum verdict exchange(const struct verify_opts *o, const struct task *t,
                             const struct task_test *tt, struct sandbox *sol_sb,
                             const struct lang_plan *plan, bool last, struct validator_box *vb,
                             struct result *res, bool *ours, bool *sol_gone, char *why,
                             size_t why_size)
{
    struct duel d = {.first = SIDE_NONE, .sol_in = -1, .sol_out = -1, .int_in = -1, .int_out = -1};
    struct side_run sol = {.d = &d,
                           .sb = sol_sb,
                           .argv = plan->run,
                           .env = t->lang->env,
                           .flags = last ? SANDBOX_EXEC_LAST : 0};
    struct side_run itr = {.d = &d, .sb = vb->sb, .env = t->validator->lang->env};
    struct errbuf err = {{0}};
    struct sandbox_limits lim;
    pthread_t ts, ti;
    int s2i[2] = {-1, -1}, i2s[2] = {-1, -1};
    char **argv = NULL, msg[256];
    enum verdict v = VERDICT_INFRA_ERROR;
    size_t n;

    *ours = true;
    *sol_gone = false;
    result_init(res);
    verify__validator_limits(t, &lim);
    lim.wall_time = t->limits.wall_time + lim.cpu_time; /* it waits for the solution */
    if (verify__validator_stage(tt, vb, &n, &err) < 0 ||
        sandbox_set_limits(vb->sb, &lim, &err) < 0) {
        snprintf(why, why_size, "interactor sandbox: %s", err.msg);
        result_fail(res, "%s", why);
        return v;
    }
    if (!(argv = verify__validator_argv(t, tt, vb, n)) || pipe2(s2i, O_CLOEXEC) < 0 ||
        pipe2(i2s, O_CLOEXEC) < 0) {
        snprintf(why, why_size, "cannot set up the pipes: %s",
                 argv ? strerror(errno) : "out of memory");
        result_fail(res, "%s", why);
        goto out;
    }
    (void)fcntl(s2i[1], F_SETPIPE_SZ, PIPE_BYTES);
    (void)fcntl(i2s[1], F_SETPIPE_SZ, PIPE_BYTES);
    d.sol_in = i2s[0];
    d.sol_out = s2i[1];
    d.int_in = s2i[0];
    d.int_out = i2s[1];
    s2i[0] = s2i[1] = i2s[0] = i2s[1] = -1; /* d holds them now */
    itr.argv = (const char *const *)argv;
    if (pthread_mutex_init(&d.lock, NULL) != 0) {
        snprintf(why, why_size, "cannot make a lock");
        result_fail(res, "%s", why);
        goto out;
    }
    if (pthread_create(&ti, NULL, run_interactor, &itr) != 0) {
        snprintf(why, why_size, "cannot start a thread");
        result_fail(res, "%s", why);
        goto out_lock;
    }
    if (pthread_create(&ts, NULL, run_solution, &sol) != 0) {
        /* the interactor alone: it ends reading end of file */
        closefd(&d.sol_out);
        closefd(&d.sol_in);
        pthread_join(ti, NULL);
        result_release(&itr.res);
        snprintf(why, why_size, "cannot start a thread");
        result_fail(res, "%s", why);
        goto out_lock;
    }
    pthread_join(ts, NULL);
    pthread_join(ti, NULL);
    if (!itr.destroyed)
        verify__validator_message(vb, n, msg, sizeof(msg));
    else
        msg[0] = '\0';
    v = decide(t, tt, &sol.res, &itr.res, d.first, msg, ours, why, why_size);
    *res = sol.res; /* the test's run is the solution's */
    *sol_gone = sol.destroyed;
    result_release(&itr.res);
    if (itr.destroyed) {
        vb->sb = NULL; /* destroyed already */
        verify__validator_close(o, vb);
    }
out_lock:
    pthread_mutex_destroy(&d.lock);
out:
    closefd(&d.sol_in);
    closefd(&d.sol_out);
    closefd(&d.int_in);
    closefd(&d.int_out);
    closefd(&s2i[0]);
    closefd(&s2i[1]);
    closefd(&i2s[0]);
    closefd(&i2s[1]);
    if (argv)
        verify__validator_argv_free(vb, argv);
    return v;
}

bool verify__interactive_repeat(const struct sandbox_runtime *rt, const struct image *img,
                                const struct task *t, const char *solution,
                                const struct verify_opts *o, struct verify_result *vr,
                                struct tally *tys, struct validator_box *vb)
{
    struct sandbox *sb = NULL;
    struct lang_plan plan = {0};
    unsigned failures = 0;
    char why[256];
    size_t i = 0;

    while (i < t->ntests) {
        const struct task_test *tt = &t->tests[i];
        bool last = i + 1 == t->ntests, ours, gone;
        struct result res;
        enum verdict v;

        switch (verify__box_next(rt, o, img, t, solution, &sb, &plan, vr, tys, &i, &failures)) {
        case BOX_NEXT_COMPILE_ERROR:
            return false;
        case BOX_NEXT_AGAIN:
            continue;
        case BOX_NEXT_READY:
        default:
            break;
        }
        if (verify__validator_ready(rt, o, img, t, vb) < 0) {
            /* the interactor cannot run: the task's fault (or crucible's, retried inside) */
            result_init(&res);
            result_fail(&res, "%s", vb->why);
            verify__test_record(&vr->tests[i], &tys[i], VERDICT_INFRA_ERROR, &res, vb->why);
            result_release(&res);
            i++;
            continue;
        }
        v = exchange(o, t, tt, sb, &plan, last, vb, &res, &ours, &gone, why, sizeof(why));
        if (gone) {
            sb = NULL;
        } else if (last || res.status == RESULT_SANDBOX_ERROR) {
            pool_release(o->pool, sb); /* torn down by its last exec, or not to be trusted */
            sb = NULL;
        }
        if (v == VERDICT_INFRA_ERROR && ours) {
            verify__validator_close(o, vb);
            if (++failures <= o->infra_retries && !verify__cancelled(rt)) {
                if (sb) {
                    pool_release(o->pool, sb);
                    sb = NULL;
                }
                result_release(&res);
                continue;
            }
        }
        verify__test_record(&vr->tests[i], &tys[i], v, &res, why);
        result_release(&res);
        failures = 0;
        i++;
    }
    if (sb)
        pool_release(o->pool, sb);
    lang_plan_release(&plan);
    return true;
}
