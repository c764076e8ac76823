/*
 * workers.c — parallel runs with a progress bar and a clean stop (workers.h).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "cli/progress.h"
#include "cli/workers.h"

struct run {
    const struct workers_spec *spec;
    const struct sandbox_runtime *rt;
    const struct image *img;
    bool *finished;
    size_t next, done, counted;
    bool stop;
    pthread_mutex_t lock;
    pthread_cond_t progress;
};

static void *worker_main(void *arg)
{
    struct run *w = arg;

    for (;;) {
        struct pollfd pf = {.fd = w->rt->cancel_fd, .events = POLLIN};
        bool cancel = w->rt->cancel_fd >= 0 && poll(&pf, 1, 0) == 1, counts;
        size_t i;

        pthread_mutex_lock(&w->lock);
        if (cancel)
            w->stop = true; /* a signal came: take no new item, do not wait for the main loop */
        if (w->stop || w->next == w->spec->n) {
            pthread_mutex_unlock(&w->lock);
            return NULL;
        }
        i = w->next++;
        pthread_mutex_unlock(&w->lock);
        counts = w->spec->work(w->spec->ctx, i, w->rt, w->img);
        pthread_mutex_lock(&w->lock);
        w->finished[i] = true;
        w->done++;
        w->counted += counts;
        pthread_cond_broadcast(&w->progress);
        pthread_mutex_unlock(&w->lock);
    }
}

static void stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

int workers_run(const struct workers_spec *spec, struct workers_outcome *out, struct errbuf *err)
{
    struct run w = {.spec = spec};
    struct sandbox_runtime rt;
    struct image img;
    pthread_t *th;
    sigset_t stop;
    long jobs = spec->jobs < 1 ? 1 : spec->jobs;
    bool quiet = spec->quiet || !isatty(STDERR_FILENO);
    double t0;
    int sfd;

    memset(out, 0, sizeof(*out));
    stop_signals(&stop);
    sigprocmask(SIG_BLOCK, &stop, NULL); /* inherited by the workers */
    if (sandbox_runtime_init(&rt, err) < 0)
        return -EIO;
    rt.trace = getenv("CRUCIBLE_TRACE") != NULL; /* phase timings, as `run` and `serve` */
    if (image_resolve("host", &img, err) < 0) {
        sandbox_runtime_release(&rt);
        return -EIO;
    }
    if ((size_t)jobs > spec->n)
        jobs = (long)spec->n;
    w.finished = calloc(spec->n ? spec->n : 1, sizeof(*w.finished));
    th = calloc((size_t)(jobs ? jobs : 1), sizeof(*th));
    if (!w.finished || !th) {
        free(w.finished);
        free(th);
        sandbox_runtime_release(&rt);
        return errbuf_set(err, "out of memory"), -ENOMEM;
    }
    rt.cancel_fd = sfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
    w.rt = &rt;
    w.img = &img;
    pthread_mutex_init(&w.lock, NULL);
    pthread_cond_init(&w.progress, NULL);
    t0 = util_now();
    for (long i = 0; i < jobs; i++)
        if (pthread_create(&th[i], NULL, worker_main, &w) != 0)
            th[i] = 0;
    pthread_mutex_lock(&w.lock);
    for (;;) {
        struct pollfd pf = {.fd = sfd, .events = POLLIN};
        struct timespec ts;

        if (spec->drain)
            spec->drain(spec->ctx, w.finished);
        if (!quiet)
            progress_draw(stderr, w.done, spec->n, t0, spec->label, w.counted);
        if (w.done == spec->n)
            break;
        if (!w.stop && sfd >= 0 && poll(&pf, 1, 0) == 1)
            w.stop = true; /* no new item starts; running ones are interrupted */
        if (w.stop && w.done == w.next)
            break;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 200 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&w.progress, &w.lock, &ts);
    }
    pthread_mutex_unlock(&w.lock);
    for (long i = 0; i < jobs; i++)
        if (th[i])
            pthread_join(th[i], NULL);
    if (spec->drain)
        spec->drain(spec->ctx, w.finished);
    if (!quiet)
        fputc('\n', stderr);
    out->done = w.done;
    out->seconds = util_now() - t0;
    if (sfd >= 0) {
        /* A signal may have come while the last items ended: it still means "stopped". */
        struct signalfd_siginfo si;
        if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
            out->signal = (int)si.ssi_signo;
        else if (w.stop)
            out->signal = SIGTERM;
        close(sfd);
    }
    pthread_cond_destroy(&w.progress);
    pthread_mutex_destroy(&w.lock);
    free(th);
    free(w.finished);
    sandbox_runtime_release(&rt);
    return 0;
}

void workers_reraise(int sig)
{
    sigset_t stop;

    if (!sig)
        return;
    stop_signals(&stop);
    sigprocmask(SIG_UNBLOCK, &stop, NULL);
    signal(sig, SIG_DFL);
    raise(sig);
}
