/*
 * verify_validator.c — Kattis output validators: the task's checker "validator" (stdio) and
 * the interactor of an interactive task, run the way problemtools runs them.
 *
 * A validator box is one sandbox of the validator's own, made and compiled once per
 * verification, that serves every test of it: each test's input and judge answer are put in
 * a directory of their own (.judge/N/input, .judge/N/answer, an empty .judge/N/feedback/),
 * and the validator runs as `VALIDATOR input answer feedback_dir/ FLAGS...`, reading the
 * solution's output on stdin. Exit 42 accepts, 43 rejects (feedback/judgemessage.txt says
 * why); any other end — another exit, a signal, a limit — is the validator's failure, so the
 * task's: infra_error, never the solution's fault. The solution's sandbox never holds the
 * input or the answer. Limits are problemtools' validation limits.
 */
#include "judge/verify_int.h"
#include "sandbox/pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALIDATION_CPU       60.0        /* s: problemtools' validation_time */
#define VALIDATION_OUTPUT_KB (8 * 1024)  /* validation_output: 8 MiB */
#define FEEDBACK_MAX         (8u << 20)  /* bytes of judgemessage.txt read */
#define STAGED_MAX           (32u << 20) /* test files kept before .judge/ is emptied */

void verify__validator_limits(const struct task *t, struct sandbox_limits *l)
{
    size_t largest = 0;

    sandbox_limits_default(l);
    for (size_t i = 0; i < t->ntests; i++)
        if (t->tests[i].stdin_len + t->tests[i].expected_len > largest)
            largest = t->tests[i].stdin_len + t->tests[i].expected_len;
    l->cpu_time = VALIDATION_CPU;
    l->wall_time = 2 * VALIDATION_CPU;
    l->memory_mb = VERIFY_VALIDATION_MEMORY_MB;
    l->output_kb = VALIDATION_OUTPUT_KB;
    l->pids = 256;
    l->disk_mb = 128 + (STAGED_MAX >> 20) + 2 * (uint64_t)(largest >> 20);
}

/* compile_limits(p, l) — the validator's build under its language's compile limits. */
static void compile_limits(const struct task_program *p, struct sandbox_limits *l)
{
    bool own = p->lang->compile_cpu > 0;

    l->cpu_time = own ? p->lang->compile_cpu : 30;
    l->wall_time = own ? p->lang->compile_wall : 60;
    l->memory_mb = own ? p->lang->compile_memory_mb : 1024;
    if (l->output_kb < 1024)
        l->output_kb = 1024;
}

/* box_open(rt, o, img, t, vb) — the sandbox, the files, the build. 0, or -1 with vb->why and
 * vb->broken (the validator does not compile: the task's fault) or not (ours: retry). */
static int box_open(const struct sandbox_runtime *rt, const struct verify_opts *o,
                    const struct image *img, const struct task *t, struct validator_box *vb)
{
    const struct task_program *p = t->validator;
    struct lang_file *lf = calloc(p->nfiles + 1, sizeof(*lf));
    struct errbuf err = {{0}};
    struct sandbox_limits lim, cl;
    struct result res;
    int r;

    vb->seq = 0;
    vb->staged = 0;
    if (!lf) {
        snprintf(vb->why, sizeof(vb->why), "out of memory");
        return -1;
    }
    for (size_t i = 0; i < p->nfiles; i++)
        lf[i] = (struct lang_file){p->files[i].path, p->files[i].data, p->files[i].len};
    r = lang_plan_files(p->lang, lf, p->nfiles, &vb->plan, &err);
    if (r == 0 && (r = lang_plan_image(p->lang, img, &vb->plan)) < 0)
        errbuf_set(&err, "out of memory");
    free(lf);
    if (r < 0) {
        snprintf(vb->why, sizeof(vb->why), "%s: %s", vb->what, err.msg);
        vb->broken = r == -EINVAL;
        return -1;
    }
    vb->planned = true;
    if (!lang_available(p->lang, img, &err)) {
        snprintf(vb->why, sizeof(vb->why), "%s: %s", vb->what, err.msg);
        vb->broken = true;
        return -1;
    }
    verify__validator_limits(t, &lim);
    vb->sb = pool_acquire(o->pool, rt, img, &lim, &err);
    if (!vb->sb) {
        snprintf(vb->why, sizeof(vb->why), "%s sandbox: %s", vb->what, err.msg);
        return -1;
    }
    for (size_t i = 0; i < p->nfiles; i++)
        if (verify__put_text(vb->sb, p->files[i].path, p->files[i].data, p->files[i].len, 0644,
                             &err) < 0)
            goto out_infra;
    if (vb->plan.compile) {
        cl = lim;
        compile_limits(p, &cl);
        if (sandbox_set_limits(vb->sb, &cl, &err) < 0)
            goto out_infra;
        sandbox_exec_input(vb->sb, vb->plan.compile, p->lang->env, NULL, 0, 0, &res);
        if (res.status != RESULT_OK) {
            const char *msg = res.err.len ? res.err.data : res.out.len ? res.out.data : "";
            vb->broken = res.status != RESULT_SANDBOX_ERROR;
            snprintf(vb->why, sizeof(vb->why), "%s does not compile (%s): %.160s", vb->what,
                     result_status_name(res.status), res.message[0] ? res.message : msg);
            if (!vb->broken)
                snprintf(vb->why, sizeof(vb->why), "%s compile step: %s", vb->what, res.message);
            result_release(&res);
            return -1;
        }
        result_release(&res);
        if (sandbox_set_limits(vb->sb, &lim, &err) < 0 || sandbox_kill_others(vb->sb, &err) < 0)
            goto out_infra;
    }
    return 0;
out_infra:
    snprintf(vb->why, sizeof(vb->why), "%s sandbox: %s", vb->what, err.msg);
    return -1;
}

void verify__validator_close(const struct verify_opts *o, struct validator_box *vb)
{
    if (vb->sb)
        pool_release(o->pool, vb->sb);
    vb->sb = NULL;
    if (vb->planned)
        lang_plan_release(&vb->plan);
    vb->planned = false;
}

int verify__validator_ready(const struct sandbox_runtime *rt, const struct verify_opts *o,
                            const struct image *img, const struct task *t, struct validator_box *vb)
{
    if (vb->sb)
        return 0;
    if (vb->broken)
        return -1;
    for (unsigned attempt = 0; attempt <= o->infra_retries; attempt++) {
        verify__validator_close(o, vb);
        if (box_open(rt, o, img, t, vb) == 0)
            return 0;
        if (vb->broken || verify__cancelled(rt))
            break;
    }
    verify__validator_close(o, vb);
    return -1;
}

int verify__validator_stage(const struct task_test *tt, struct validator_box *vb, size_t *n,
                            struct errbuf *err)
{
    char path[64];
    int r;

    if (vb->staged > STAGED_MAX) {
        /* earlier tests' files go: the scratch disk holds a few tests at a time */
        static const char *const rm[] = {"/bin/rm", "-rf", "/work/.judge", NULL};
        struct result res;
        sandbox_exec_input(vb->sb, rm, NULL, NULL, 0, 0, &res);
        r = res.status == RESULT_OK ? 0 : -EIO;
        if (r < 0)
            errbuf_set(err, "cannot remove earlier tests' files: %s",
                       res.message[0] ? res.message : result_status_name(res.status));
        result_release(&res);
        if (r < 0)
            return r;
        vb->staged = 0;
    }
    *n = vb->seq++;
    snprintf(path, sizeof(path), ".judge/%zu/input", *n);
    if ((r = verify__put_text(vb->sb, path, tt->stdin_data, tt->stdin_len, 0444, err)) < 0)
        return r;
    snprintf(path, sizeof(path), ".judge/%zu/answer", *n);
    if ((r = verify__put_text(vb->sb, path, tt->expected, tt->expected_len, 0444, err)) < 0)
        return r;
    snprintf(path, sizeof(path), ".judge/%zu/feedback/.crucible", *n);
    if ((r = verify__put_text(vb->sb, path, "", 0, 0644, err)) < 0)
        return r;
    vb->staged += tt->stdin_len + tt->expected_len;
    return 0;
}

/* flag_words(s, words, max) — s split on whitespace into at most max words (pointers into
 * a copy the caller frees); the copy, or NULL when out of memory. */
static char *flag_words(const char *s, char **words, size_t max, size_t *n)
{
    char *copy = strdup(s ? s : ""), *save = NULL;

    *n = 0;
    if (!copy)
        return NULL;
    for (char *w = strtok_r(copy, " \t\n\r\v\f", &save); w && *n < max;
         w = strtok_r(NULL, " \t\n\r\v\f", &save))
        words[(*n)++] = w;
    return copy;
}

#define MAX_FLAGS 256

char **verify__validator_argv(const struct task *t, const struct task_test *tt,
                              const struct validator_box *vb, size_t n)
{
    const char *flags = tt->flags ? tt->flags : t->validator->flags;
    char *words[MAX_FLAGS], *copy, **argv;
    size_t nrun = 0, nw, k = 0;

    while (vb->plan.run[nrun])
        nrun++;
    if (!(copy = flag_words(flags, words, MAX_FLAGS, &nw)))
        return NULL;
    argv = calloc(nrun + 3 + nw + 2, sizeof(*argv));
    if (!argv) {
        free(copy);
        return NULL;
    }
    for (size_t i = 0; i < nrun; i++)
        argv[k++] = (char *)vb->plan.run[i];
    /* three owned strings, then the flags (in one owned copy, kept after the NULL) */
    if (asprintf(&argv[k], "/work/.judge/%zu/input", n) < 0)
        argv[k] = NULL;
    k++;
    if (asprintf(&argv[k], "/work/.judge/%zu/answer", n) < 0)
        argv[k] = NULL;
    k++;
    if (asprintf(&argv[k], "/work/.judge/%zu/feedback/", n) < 0)
        argv[k] = NULL;
    k++;
    if (!argv[k - 1] || !argv[k - 2] || !argv[k - 3]) {
        free(argv[k - 1]);
        free(argv[k - 2]);
        free(argv[k - 3]);
        free(argv);
        free(copy);
        return NULL;
    }
    for (size_t i = 0; i < nw; i++)
        argv[k++] = words[i];
    argv[k] = NULL;
    argv[k + 1] = copy; /* freed by verify__validator_argv_free */
    return argv;
}

void verify__validator_argv_free(const struct validator_box *vb, char **argv)
{
    size_t nrun = 0, k;

    if (!argv)
        return;
    while (vb->plan.run[nrun])
        nrun++;
    for (k = nrun; k < nrun + 3; k++)
        free(argv[k]);
    while (argv[k])
        k++;
    free(argv[k + 1]);
    free(argv);
}

void verify__validator_message(struct validator_box *vb, size_t n, char *out, size_t size)
{
    struct errbuf err = {{0}};
    char path[64], *data = NULL;
    size_t len = 0, k = 0;

    out[0] = '\0';
    snprintf(path, sizeof(path), ".judge/%zu/feedback/judgemessage.txt", n);
    if (!vb->sb || sandbox_get_file(vb->sb, path, FEEDBACK_MAX, &data, &len, &err) < 0)
        return;
    /* one line: line breaks become "; ", runs of whitespace one space, ends trimmed */
    for (size_t i = 0; i < len && k + 3 < size; i++) {
        char c = data[i];
        if (c == '\n' || c == '\r') {
            while (k > 0 && out[k - 1] == ' ')
                k--;
            if (k > 0 && out[k - 1] != ' ' && !(k > 1 && out[k - 2] == ';')) {
                out[k++] = ';';
                out[k++] = ' ';
            }
        } else if (c == ' ' || c == '\t') {
            if (k > 0 && out[k - 1] != ' ')
                out[k++] = ' ';
        } else if (c != '\0') {
            out[k++] = c;
        }
    }
    while (k > 0 && (out[k - 1] == ' ' || out[k - 1] == ';'))
        k--;
    out[k] = '\0';
    free(data);
}

enum validator_exit verify__validator_exit(const struct result *res)
{
    if (res->status == RESULT_SANDBOX_ERROR)
        return VALIDATOR_OURS;
    if (res->status == RESULT_RUNTIME_ERROR && res->exit_code == 42)
        return VALIDATOR_ACCEPTED;
    if (res->status == RESULT_RUNTIME_ERROR && res->exit_code == 43)
        return VALIDATOR_REJECTED;
    return VALIDATOR_FAILED;
}

void verify__validator_failure(const char *what, const struct result *res, const char *msg,
                               char *why, size_t why_size)
{
    char how[200];

    if (res->status == RESULT_OK || res->status == RESULT_RUNTIME_ERROR)
        snprintf(how, sizeof(how), "exit %d, not 42 or 43", res->exit_code);
    else if (res->status == RESULT_SIGNALED)
        snprintf(how, sizeof(how), "killed by signal %d", res->signal);
    else
        snprintf(how, sizeof(how), "%s: %s", result_status_name(res->status), res->message);
    snprintf(why, why_size, "the %s failed (%s)%s%.120s", what, how, msg[0] ? ": " : "", msg);
    if (!msg[0] && res->err.len)
        snprintf(why + strlen(why), why_size - strlen(why), ": %.*s",
                 (int)strcspn(res->err.data, "\n"), res->err.data);
}

enum verdict verify__validator_judge(const struct sandbox_runtime *rt, const struct verify_opts *o,
                                     const struct image *img, const struct task *t,
                                     const struct task_test *tt, const struct result *run,
                                     struct validator_box *vb, char *why, size_t why_size)
{
    for (unsigned attempt = 0;; attempt++) {
        struct errbuf err = {{0}};
        char msg[256];
        struct result res;
        char **argv;
        size_t n;

        if (verify__validator_ready(rt, o, img, t, vb) < 0) {
            snprintf(why, why_size, "%s", vb->why);
            return VERDICT_INFRA_ERROR;
        }
        if (verify__validator_stage(tt, vb, &n, &err) < 0) {
            snprintf(vb->why, sizeof(vb->why), "%s sandbox: %s", vb->what, err.msg);
            goto ours;
        }
        argv = verify__validator_argv(t, tt, vb, n);
        if (!argv) {
            snprintf(why, why_size, "out of memory");
            return VERDICT_INFRA_ERROR;
        }
        sandbox_exec_input(vb->sb, (const char *const *)argv, t->validator->lang->env,
                           run->out.data ? run->out.data : "", run->out.len, 0, &res);
        verify__validator_argv_free(vb, argv);
        verify__validator_message(vb, n, msg, sizeof(msg));
        switch (verify__validator_exit(&res)) {
        case VALIDATOR_ACCEPTED:
            result_release(&res);
            if (sandbox_kill_others(vb->sb, NULL) < 0)
                verify__validator_close(o, vb);
            why[0] = '\0';
            return VERDICT_ACCEPTED;
        case VALIDATOR_REJECTED:
            result_release(&res);
            if (sandbox_kill_others(vb->sb, NULL) < 0)
                verify__validator_close(o, vb);
            snprintf(why, why_size, "%s%s", msg[0] ? "validator: " : "",
                     msg[0] ? msg : "the output validator rejected the output (exit 43)");
            return VERDICT_WRONG_ANSWER;
        case VALIDATOR_FAILED:
            verify__validator_failure("output validator", &res, msg, why, why_size);
            result_release(&res);
            if (sandbox_kill_others(vb->sb, NULL) < 0)
                verify__validator_close(o, vb);
            return VERDICT_INFRA_ERROR;
        case VALIDATOR_OURS:
        default:
            snprintf(vb->why, sizeof(vb->why), "%s sandbox: %s", vb->what, res.message);
            result_release(&res);
            break;
        }
    ours:
        verify__validator_close(o, vb);
        if (attempt >= o->infra_retries || verify__cancelled(rt)) {
            snprintf(why, why_size, "%s", vb->why);
            return VERDICT_INFRA_ERROR;
        }
    }
}
