/*
 * program.c — see program.h. Compile and run share one sandbox; a failure of crucible's
 * (sandbox_error in either step) is retried on a fresh sandbox.
 */
#include "judge/program.h"

#include "judge/pyserver.h"
#include "sandbox/forkserver.h"
#include "sandbox/pool.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FETCH_MAX_BYTES (8u << 20)

/* program_job(rt, img, s, steps) — a job of the Python fork server for a Python program
 * with no compile step on the host image, or NULL: the program runs in a sandbox of the pool.
 * A job the fork server could not make is crucible's failure, not the program's: this run goes
 * to the pool, and the next one gets a new fork server (pyserver_failed). */
static struct sandbox *program_job(const struct sandbox_runtime *rt, const struct image *img,
                                   const struct program_spec *s, const struct lang_plan *steps)
{
    struct errbuf err = {{0}};
    struct forkserver *fs;
    struct sandbox *sb;

    if (!s->pyserver || steps->compile || s->limits.writable_root ||
        strcmp(s->lang->name, "python") != 0 || !(fs = pyserver_get(s->pyserver, img)))
        return NULL;
    if (!(sb = forkserver_job(fs, &s->limits, &err))) {
        pyserver_failed(s->pyserver, fs, err.msg);
        return NULL;
    }
    sandbox_set_cancel_fd(sb, rt->cancel_fd); /* the caller's, not the fork server's */
    return sb;
}

/* attempt_steps(…, steps, out) — one try in a fresh sandbox with the program's steps; false
 * when crucible failed (retry). */
static bool attempt_steps(const struct sandbox_runtime *rt, const struct image *img,
                          const struct program_spec *s, const struct lang_plan *plan,
                          struct program_result *out)
{
    const struct lang_plan steps = *plan;
    struct errbuf err = {{0}};
    struct sandbox *sb;

    out->ran = false;
    result_release(&out->run);
    result_init(&out->run);
    sb = program_job(rt, img, s, &steps);
    if (!sb)
        sb = pool_acquire(s->pool, rt, img, &s->limits, &err);
    if (!sb) {
        result_fail(&out->run, "%s", err.msg);
        return false;
    }
    if (sandbox_put_data(sb, steps.source, s->code, s->code_len, 0644, &err) < 0)
        goto infra;
    for (size_t i = 0; i < s->nfiles; i++)
        if (sandbox_put_data(sb, s->files[i].path, s->files[i].data, s->files[i].len, 0644, &err) <
            0)
            goto infra;
    if (steps.compile) {
        struct sandbox_limits cl = s->limits;
        cl.cpu_time = s->compile_time > 0 ? s->compile_time : s->lang->compile_cpu;
        cl.wall_time = 2 * cl.cpu_time + 5;
        cl.memory_mb = s->lang->compile_memory_mb;
        if (cl.pids < 256)
            cl.pids = 256;
        if (cl.output_kb < 1024)
            cl.output_kb = 1024;
        if (sandbox_set_limits(sb, &cl, &err) < 0)
            goto infra;
        if (out->has_compile)
            result_release(&out->compile);
        sandbox_exec_input(sb, steps.compile, s->lang->env, NULL, 0, 0, &out->compile);
        out->has_compile = true;
        if (out->compile.status == RESULT_SANDBOX_ERROR) {
            result_fail(&out->run, "compile step: %s", out->compile.message);
            pool_release(s->pool, sb);
            return false;
        }
        if (out->compile.status != RESULT_OK) {
            result_fail(&out->run, "not run: compilation failed");
            pool_release(s->pool, sb);
            return true;
        }
        if (sandbox_set_limits(sb, &s->limits, &err) < 0 || sandbox_kill_others(sb, &err) < 0)
            goto infra;
    }
    sandbox_exec_input(sb, steps.run, s->lang->env, s->stdin_data, s->stdin_len,
                       s->nfetch ? 0 : SANDBOX_EXEC_LAST, &out->run);
    out->ran = out->run.status != RESULT_SANDBOX_ERROR;
    if (out->ran && s->nfetch) {
        bool alive = out->run.status == RESULT_OK || out->run.status == RESULT_RUNTIME_ERROR ||
                     out->run.status == RESULT_SIGNALED;
        size_t left = s->fetch_max_total ? s->fetch_max_total : SIZE_MAX;
        out->files = calloc(s->nfetch, sizeof(*out->files));
        for (size_t i = 0; out->files && i < s->nfetch; i++) {
            struct program_file *f = &out->files[i];
            struct errbuf ferr = {{0}};
            size_t max = left < FETCH_MAX_BYTES ? left : FETCH_MAX_BYTES;
            int r;
            out->nfiles++;
            f->path = strdup(s->fetch[i]);
            if (!alive) {
                snprintf(f->err, sizeof(f->err), "the run ended by a limit; files not read");
                continue;
            }
            r = sandbox_get_file(sb, s->fetch[i], max, &f->data, &f->len, &ferr);
            if (r == -EFBIG && max < FETCH_MAX_BYTES)
                snprintf(f->err, sizeof(f->err),
                         "not read: the files before it took all but %zu of the %zu bytes a "
                         "request may read back",
                         left, s->fetch_max_total);
            else if (r < 0)
                snprintf(f->err, sizeof(f->err), "%s", ferr.msg);
            else
                left -= f->len;
        }
    }
    if (!s->nfetch) { /* the last exec tore everything down: the verdict is final */
        pool_release(s->pool, sb);
        return out->run.status != RESULT_SANDBOX_ERROR;
    }
    err.msg[0] = '\0';
    if (sandbox_destroy(sb, &err) < 0 && out->run.status != RESULT_SANDBOX_ERROR) {
        result_release(&out->run);
        result_init(&out->run);
        result_fail(&out->run, "%s", err.msg);
        out->ran = false;
    }
    return out->run.status != RESULT_SANDBOX_ERROR;
infra:
    result_fail(&out->run, "%s", err.msg);
    pool_release(s->pool, sb);
    return false;
}

/* attempt(…) — attempt_steps with the steps the language derives from the program's text
 * (Java: the file named after the public class, the class with main run). */
static bool attempt(const struct sandbox_runtime *rt, const struct image *img,
                    const struct program_spec *s, struct program_result *out)
{
    struct lang_plan plan;
    bool done;

    if (lang_plan_program(s->lang, false, s->code, s->code_len, &plan) < 0 ||
        lang_plan_image(s->lang, img, &plan) < 0) {
        result_release(&out->run);
        result_init(&out->run);
        result_fail(&out->run, "out of memory");
        return false;
    }
    done = attempt_steps(rt, img, s, &plan, out);
    lang_plan_release(&plan);
    return done;
}

void program_run(const struct sandbox_runtime *rt, const struct image *img,
                 const struct program_spec *spec, struct program_result *out)
{
    memset(out, 0, sizeof(*out));
    result_init(&out->run);
    for (unsigned i = 0; i <= spec->infra_retries; i++) {
        if (i) { /* a retry starts clean */
            for (size_t k = 0; k < out->nfiles; k++) {
                free(out->files[k].path);
                free(out->files[k].data);
            }
            free(out->files);
            out->files = NULL;
            out->nfiles = 0;
        }
        if (attempt(rt, img, spec, out))
            return;
        if (rt->cancel_fd >= 0 && strstr(out->run.message, "interrupted"))
            return;
    }
}

void program_result_release(struct program_result *r)
{
    if (r->has_compile)
        result_release(&r->compile);
    result_release(&r->run);
    for (size_t i = 0; i < r->nfiles; i++) {
        free(r->files[i].path);
        free(r->files[i].data);
    }
    free(r->files);
    memset(r, 0, sizeof(*r));
}
