/*
 * pyserver.c — the fork server verify's Python runs use, chosen automatically (pyserver.h).
 *
 * The fork server has a sandbox runtime of its own (its sandboxes and jobs are counted and
 * torn down apart from the callers' workers) and the host image resolved once. Starting takes
 * a few hundred milliseconds (an interpreter with the common modules and the assert harness
 * imported), so it happens once, under the lock, on the first run that needs it; the threads
 * that arrive meanwhile wait for it rather than start their own.
 */
#include "judge/pyserver.h"
#include "judge/verify.h"
#include "sandbox/forkserver.h"
#include "sandbox/image.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PYSERVER_MAX_STARTS 4 /* the first and three restarts after failures */

struct pyserver {
    char who[64];
    pthread_mutex_t lock;
    bool tried_runtime, have_runtime;
    struct sandbox_runtime rt;
    struct image host;
    struct forkserver *current;                      /* NULL: none running */
    struct forkserver *started[PYSERVER_MAX_STARTS]; /* every one, until pyserver_free */
    unsigned nstarted;
    uint64_t failures;
    bool off;        /* given up: every run takes the cold path */
    unsigned spares; /* jobs each fork server keeps made ahead (forkserver_set_spares) */
};

struct pyserver *pyserver_new(enum pyserver_mode mode, const char *who)
{
    struct pyserver *ps = calloc(1, sizeof(*ps));

    if (!ps)
        return NULL;
    ps->off = mode == PYSERVER_OFF;
    snprintf(ps->who, sizeof(ps->who), "%s", who ? who : "crucible");
    pthread_mutex_init(&ps->lock, NULL);
    return ps;
}

void pyserver_set_spares(struct pyserver *ps, unsigned n)
{
    if (!ps)
        return;
    pthread_mutex_lock(&ps->lock);
    ps->spares = n;
    pthread_mutex_unlock(&ps->lock);
}

/* runtime_locked(ps, err) — the fork server's own runtime and host image, made once. 0, or
 * -ENOTSUP with err set. */
static int runtime_locked(struct pyserver *ps, struct errbuf *err)
{
    if (!ps->tried_runtime) {
        ps->tried_runtime = true;
        if (sandbox_runtime_init(&ps->rt, err) < 0)
            return -ENOTSUP;
        ps->rt.trace = getenv("CRUCIBLE_TRACE") != NULL; /* its jobs' phases, as the CLI's */
        if (image_resolve("host", &ps->host, err) < 0) {
            sandbox_runtime_release(&ps->rt);
            return -ENOTSUP;
        }
        ps->have_runtime = true;
    }
    return ps->have_runtime ? 0 : (errbuf_set(err, "no sandbox runtime"), -ENOTSUP);
}

/* start_locked(ps, err) — a fork server as ps->current. 0 or -errno with err set. */
static int start_locked(struct pyserver *ps, struct errbuf *err)
{
    size_t npreload;
    const struct forkserver_module *preload = verify_forkserver_preload(&npreload);
    struct forkserver *fs;
    int r;

    if (ps->current)
        return 0;
    if (ps->off)
        return errbuf_set(err, "the fork server is off"), -ENOTSUP;
    if (ps->nstarted == PYSERVER_MAX_STARTS)
        return errbuf_set(err, "the fork server failed %u times", PYSERVER_MAX_STARTS), -EIO;
    if ((r = runtime_locked(ps, err)) < 0)
        return r;
    errno = 0;
    fs = forkserver_start(&ps->rt, &ps->host, preload, npreload, err);
    if (!fs)
        return errno == ENOTSUP ? -ENOTSUP : -EIO;
    ps->started[ps->nstarted++] = fs;
    ps->current = fs;
    if (ps->spares > 0 && forkserver_set_spares(fs, ps->spares, err) < 0)
        fprintf(stderr, "%s: %s: every job is made when a run asks for it\n", ps->who, err->msg);
    return 0;
}

int pyserver_start(struct pyserver *ps, struct errbuf *err)
{
    int r;

    pthread_mutex_lock(&ps->lock);
    r = start_locked(ps, err);
    pthread_mutex_unlock(&ps->lock);
    return r;
}

struct forkserver *pyserver_get(struct pyserver *ps, const struct image *img)
{
    struct errbuf err = {{0}};
    struct forkserver *fs = NULL;

    if (!ps || !img)
        return NULL;
    pthread_mutex_lock(&ps->lock);
    if (ps->off) {
        pthread_mutex_unlock(&ps->lock);
        return NULL;
    }
    if (runtime_locked(ps, &err) == 0 && strcmp(img->digest, ps->host.digest) != 0) {
        pthread_mutex_unlock(&ps->lock); /* another image: the cold path, nothing started */
        return NULL;
    }
    if (err.msg[0] || start_locked(ps, &err) < 0) {
        /* said once; then the cold path for good */
        ps->off = true;
        fprintf(stderr,
                "%s: the Python fork server is off (%s): Python tests run in cold "
                "sandboxes\n",
                ps->who, err.msg);
    }
    fs = ps->current;
    pthread_mutex_unlock(&ps->lock);
    return fs;
}

void pyserver_failed(struct pyserver *ps, struct forkserver *fs, const char *why)
{
    if (!ps)
        return;
    pthread_mutex_lock(&ps->lock);
    if (ps->current == fs) {
        ps->current = NULL;
        (void)forkserver_set_spares(fs, 0, NULL); /* no more jobs made ahead of a failed one */
        ps->failures++;
        fprintf(stderr, "%s: the Python fork server failed (%s)%s\n", ps->who, why,
                ps->nstarted < PYSERVER_MAX_STARTS ? ": starting another"
                                                   : ": Python tests run in cold sandboxes");
        if (ps->nstarted == PYSERVER_MAX_STARTS)
            ps->off = true;
    }
    pthread_mutex_unlock(&ps->lock);
}

void pyserver_stats(struct pyserver *ps, struct pyserver_stats *st)
{
    memset(st, 0, sizeof(*st));
    if (!ps)
        return;
    pthread_mutex_lock(&ps->lock);
    st->running = ps->current != NULL;
    st->starts = ps->nstarted;
    st->failures = ps->failures;
    pthread_mutex_unlock(&ps->lock);
}

void pyserver_free(struct pyserver *ps)
{
    if (!ps)
        return;
    for (unsigned i = 0; i < ps->nstarted; i++)
        forkserver_stop(ps->started[i]);
    if (ps->have_runtime)
        sandbox_runtime_release(&ps->rt);
    pthread_mutex_destroy(&ps->lock);
    free(ps);
}
