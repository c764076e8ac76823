/*
 * forkserver.c — the supervisor's side of a fork server (see forkserver.h; the inside is
 * zygote.c).
 *
 * forkserver_start makes a sandbox whose init keeps the capabilities a job's set-up needs
 * (sandbox__create with zygote), asks init to start the zygote (CTL_ZYGOTE) with a control
 * socket, a memfd as stdin and a pipe as stdout and stderr (the same kinds a job's streams
 * are, so the interpreter's stdio objects fit them; the pipe also carries the zygote's own
 * complaints), and waits for its READY. The memfd holds the modules to preload, if any; the
 * zygote reads them once and empties it.
 *
 * forkserver_run makes the job's half (sandbox__job_new: a cgroup of its own under crucible's
 * subtree and a control socket), hands the socket and the group's "tasks" files to the zygote
 * (CTL_JOB), waits for the job's READY, and then drives it with the sandbox API as any
 * one-shot run: files in, one exec (SANDBOX_EXEC_LAST), destroy. The verdict is made by
 * sandbox_exec from the job's cgroup, the wait status the job's pid 1 reports and the
 * supervisor's clock, as on the cold path.
 *
 * Jobs made ahead (forkserver_set_spares): a filler thread keeps up to n ready jobs for the
 * scratch size and network of the last job asked for, so that a run finds its job READY —
 * forked, in its namespaces and cgroup, its scratch mounted — instead of waiting for it. The
 * wait is worth hiding: the job's pid 1 joins its cgroup by writing to the group's "tasks"
 * (v1) or "cgroup.procs" (v2) file, and the kernel's first such migration after a quiet spell
 * waits for an RCU grace period (the cgroup_threadgroup_rwsem writer's rcu_sync): measured
 * 11-16 ms of a 16 ms /run_code on an idle machine, against ~5 ms when another migration had
 * just happened. A spare is used once, as a job made on demand is; memory and pids limits are
 * set when it is taken (sandbox_set_limits); one whose pid 1 has ended is destroyed and the
 * job made on demand.
 */
#include "sandbox/forkserver.h"
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define ZYGOTE_PIDS         4096 /* the zygote's sandbox: it and each job's pid 1 until it joins */
#define ZYGOTE_MEMORY_MB    1024
#define SPARE_RETRY_MS      200 /* the filler's pause after a job it could not make */
#define FORKSERVER_USED_MAX 16  /* used jobs waiting for the filler's teardown; more: now */

/* The jobs made ahead, and the filler thread that makes them. */
struct spares {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the filler's: a spare was taken, the pattern changed, stop */
    pthread_t filler;
    bool has_filler, stopping;
    unsigned want;                 /* how many to keep */
    bool has_pattern;              /* a job was asked for: pattern is its limits */
    struct sandbox_limits pattern; /* what the next spare is made with */
    struct sandbox *job[FORKSERVER_SPARES_MAX];
    struct sandbox_limits made[FORKSERVER_SPARES_MAX]; /* each one's creation limits */
    unsigned n;
    uint64_t taken, made_total, failed; /* counters (forkserver_spare_stats) */
    /* used jobs handed back (sandbox_discard), destroyed by the filler before it makes more */
    struct sandbox *used[FORKSERVER_USED_MAX];
    unsigned nused;
};

struct forkserver {
    const struct sandbox_runtime *rt;
    const struct image *img;
    struct sandbox *sb;   /* the zygote's sandbox */
    int sock;             /* the zygote's control socket */
    int diag;             /* read end of the zygote's stdout and stderr */
    pthread_mutex_t lock; /* one CTL_JOB at a time on sock */
    struct spares sp;
    unsigned prefault_pages; /* what the zygote's trial learned (its READY says) */
    bool small_init;         /* its jobs' pid 1 is the small init (its READY says) */
};

/* zygote_ready(fs, err) — waits for the zygote's READY; 0 or -errno with err set (what the
 * zygote said, or wrote on its stderr). */
static int zygote_ready(struct forkserver *fs, struct errbuf *err)
{
    struct pollfd pf = {.fd = fs->sock, .events = POLLIN};
    struct ctl_msg m;
    char text[512];
    ssize_t n;
    int r;

    r = poll(&pf, 1, (int)(SANDBOX_INIT_WAIT_S * 1000));
    if (r == 0)
        return errbuf_set(err, "the zygote did not start"), -ETIMEDOUT;
    r = r < 0 ? -errno : sandbox__ctl_recv(fs->sock, &m, NULL, NULL);
    if (r == 0 && m.type == CTL_READY) {
        fs->prefault_pages = m.status > 0 ? (unsigned)m.status : 0;
        fs->small_init = (m.mode & CTL_ZYGOTE_SMALL_INIT) != 0;
        return 0;
    }
    if (r == 0 && m.type == CTL_FAILED) {
        m.text[sizeof(m.text) - 1] = '\0';
        return errbuf_set(err, "the zygote failed: %s", m.text), m.err ? -m.err : -EIO;
    }
    fcntl(fs->diag, F_SETFL, O_NONBLOCK);
    n = read(fs->diag, text, sizeof(text) - 1);
    text[n > 0 ? n : 0] = '\0';
    errbuf_set(err, "the zygote ended before it was ready%s%.400s", n > 0 ? ": " : "", text);
    return r < 0 ? r : -EPROTO;
}

/* preload_write(fd, preload, n, err) — the modules as the zygote reads them on its stdin:
 * "NAME\0FILENAME\0SOURCE\0WARMUP\0" each (WARMUP empty for none). 0, or -errno with err
 * set. */
static int preload_write(int fd, const struct forkserver_module *preload, size_t n,
                         struct errbuf *err)
{
    for (size_t i = 0; i < n; i++) {
        const char *part[4] = {preload[i].name, preload[i].filename, preload[i].source,
                               preload[i].warmup ? preload[i].warmup : ""};
        for (int k = 0; k < 4; k++) {
            int w;
            if (!part[k] || (k < 2 && !*part[k]))
                return errbuf_set(err, "preloaded module %zu: no %s", i,
                                  k == 0   ? "name"
                                  : k == 1 ? "file name"
                                           : "source"),
                       -EINVAL;
            if ((w = util_write_all(fd, part[k], strlen(part[k]) + 1)) < 0)
                return errbuf_set(err, "cannot hand the zygote its modules: %s", strerror(-w)), w;
        }
    }
    return 0;
}

struct forkserver *forkserver_start(const struct sandbox_runtime *rt, const struct image *img,
                                    const struct forkserver_module *preload, size_t npreload,
                                    struct errbuf *err)
{
    struct forkserver *fs = calloc(1, sizeof(*fs));
    struct sandbox_limits l;
    int sv[2] = {-1, -1}, diag[2] = {-1, -1}, in = -1, fds[4];
    pid_t pid;

    if (!fs) {
        errbuf_set(err, "out of memory");
        return NULL;
    }
    if (rt->cg.nhier == 0) {
        /* a job's teardown is the kill of its cgroup: the supervisor knows no pid of it */
        errbuf_set(err, "a fork server needs cgroups (none usable here: see 'crucible run "
                        "--check')");
        free(fs);
        errno = ENOTSUP;
        return NULL;
    }
    fs->rt = rt;
    fs->img = img;
    fs->sock = fs->diag = -1;
    pthread_mutex_init(&fs->lock, NULL);
    pthread_mutex_init(&fs->sp.lock, NULL);
    pthread_cond_init(&fs->sp.wake, NULL);
    sandbox_limits_default(&l);
    l.pids = ZYGOTE_PIDS;
    l.memory_mb = ZYGOTE_MEMORY_MB;
    fs->sb = sandbox__create(rt, img, &l, true, err);
    if (!fs->sb)
        goto out_free;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
        pipe2(diag, O_CLOEXEC) < 0 ||
        (in = memfd_create("crucible-zygote-stdin", MFD_CLOEXEC)) < 0) {
        errbuf_set(err, "cannot create the zygote's sockets: %s", strerror(errno));
        goto out_close;
    }
    if (preload_write(in, preload, npreload, err) < 0)
        goto out_close;
    fds[0] = sv[1];
    fds[1] = in;
    fds[2] = fds[3] = diag[1];
    if (sandbox__zygote_start(fs->sb, fds, &pid, err) < 0)
        goto out_close;
    close(sv[1]);
    close(diag[1]);
    close(in);
    fs->sock = sv[0];
    fs->diag = diag[0];
    if (zygote_ready(fs, err) < 0) {
        forkserver_stop(fs);
        return NULL;
    }
    if (rt->trace)
        fprintf(stderr,
                "crucible: trace fork server ready: each job copies %u pages ahead; a job's "
                "pid 1 is %s\n",
                fs->prefault_pages, fs->small_init ? "the small init" : "a copy of the zygote");
    return fs;

out_close:
    for (int i = 0; i < 2; i++) {
        if (sv[i] >= 0)
            close(sv[i]);
        if (diag[i] >= 0)
            close(diag[i]);
    }
    if (in >= 0)
        close(in);
    sandbox_destroy(fs->sb, NULL);
out_free:
    pthread_mutex_destroy(&fs->lock);
    pthread_mutex_destroy(&fs->sp.lock);
    pthread_cond_destroy(&fs->sp.wake);
    free(fs);
    return NULL;
}

/* job_make(fs, limits, err) — a job made now: its half here, CTL_JOB to the zygote, READY. */
static struct sandbox *job_make(struct forkserver *fs, const struct sandbox_limits *limits,
                                struct errbuf *err)
{
    int fds[1 + CGROUP_MAX_HIER], nattach = 0, r;
    struct sandbox *job;
    struct ctl_msg m;

    if (limits->writable_root) {
        errbuf_set(err, "a fork server's job cannot have a writable root");
        return NULL;
    }
    job = sandbox__job_new(fs->rt, fs->img, limits, &fds[0], fds + 1, &nattach, err);
    if (!job)
        return NULL;
    memset(&m, 0, sizeof(m));
    m.type = CTL_JOB;
    m.status = (int32_t)limits->disk_mb;
    m.mode = limits->loopback ? CTL_JOB_LOOPBACK : 0;
    pthread_mutex_lock(&fs->lock);
    r = sandbox__ctl_send(fs->sock, &m, fds, 1 + nattach);
    pthread_mutex_unlock(&fs->lock);
    for (int i = 0; i < 1 + nattach; i++)
        close(fds[i]);
    if (r < 0) {
        errbuf_set(err, "cannot reach the zygote: %s", strerror(-r));
        sandbox_destroy(job, NULL);
        return NULL;
    }
    if (sandbox__job_ready(job, err) < 0) {
        sandbox_destroy(job, NULL);
        return NULL;
    }
    return job;
}

/* same_kind(a, b) — what a job fixes at creation (scratch size, network) agrees. */
static bool same_kind(const struct sandbox_limits *a, const struct sandbox_limits *b)
{
    return a->disk_mb == b->disk_mb && a->loopback == b->loopback;
}

/* spare_take(fs, limits) — a spare of limits' kind, taken; NULL when there is none. Records
 * limits as the pattern of the next spares and wakes the filler. */
static struct sandbox *spare_take(struct forkserver *fs, const struct sandbox_limits *limits)
{
    struct spares *sp = &fs->sp;
    struct sandbox *job = NULL;

    pthread_mutex_lock(&sp->lock);
    for (unsigned i = 0; i < sp->n && !job; i++)
        if (same_kind(&sp->made[i], limits)) {
            job = sp->job[i];
            sp->job[i] = sp->job[sp->n - 1];
            sp->made[i] = sp->made[sp->n - 1];
            sp->n--;
        }
    if (job)
        sp->taken++;
    sp->pattern = *limits;
    sp->has_pattern = true;
    if (sp->want > 0)
        pthread_cond_signal(&sp->wake);
    pthread_mutex_unlock(&sp->lock);
    return job;
}

/* filler(arg) — keeps sp->want spares of the pattern's kind; a spare of another kind (the
 * pattern changed), or beyond want (fewer asked for), is destroyed. Ends on stopping. */
static void *filler(void *arg)
{
    struct forkserver *fs = arg;
    struct spares *sp = &fs->sp;

    pthread_mutex_lock(&sp->lock);
    while (!sp->stopping) {
        struct sandbox_limits l;
        struct sandbox *job, *stale = NULL;
        struct errbuf err = {{0}};

        if (sp->nused > 0) /* a used job's cgroup and memory first: the next job needs them */
            stale = sp->used[--sp->nused];
        else if (sp->n > sp->want) /* fewer asked for: the newest goes */
            stale = sp->job[--sp->n];
        for (unsigned i = 0; i < sp->n && !stale; i++)
            if (!same_kind(&sp->made[i], &sp->pattern)) {
                stale = sp->job[i];
                sp->job[i] = sp->job[sp->n - 1];
                sp->made[i] = sp->made[sp->n - 1];
                sp->n--;
            }
        if (stale) {
            pthread_mutex_unlock(&sp->lock);
            sandbox_destroy(stale, NULL);
            pthread_mutex_lock(&sp->lock);
            continue;
        }
        if (!sp->has_pattern || sp->n >= sp->want) {
            pthread_cond_wait(&sp->wake, &sp->lock);
            continue;
        }
        l = sp->pattern;
        pthread_mutex_unlock(&sp->lock);
        job = job_make(fs, &l, &err);
        pthread_mutex_lock(&sp->lock);
        if (!job) {
            struct timespec until;
            sp->failed++;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += SPARE_RETRY_MS * 1000000L;
            until.tv_sec += until.tv_nsec / 1000000000L;
            until.tv_nsec %= 1000000000L;
            if (!sp->stopping)
                pthread_cond_timedwait(&sp->wake, &sp->lock, &until);
            continue;
        }
        if (sp->stopping || sp->n >= FORKSERVER_SPARES_MAX) {
            pthread_mutex_unlock(&sp->lock);
            sandbox_destroy(job, NULL);
            pthread_mutex_lock(&sp->lock);
            continue;
        }
        sp->job[sp->n] = job;
        sp->made[sp->n] = l;
        sp->n++;
        sp->made_total++;
    }
    pthread_mutex_unlock(&sp->lock);
    return NULL;
}

int forkserver_set_spares(struct forkserver *fs, unsigned n, struct errbuf *err)
{
    struct spares *sp = &fs->sp;
    int r = 0;

    if (n > FORKSERVER_SPARES_MAX)
        n = FORKSERVER_SPARES_MAX;
    pthread_mutex_lock(&sp->lock);
    sp->want = n;
    if (n > 0 && !sp->has_filler) {
        r = -pthread_create(&sp->filler, NULL, filler, fs);
        if (r < 0) {
            sp->want = 0;
            errbuf_set(err, "cannot start the fork server's filler thread: %s", strerror(-r));
        } else {
            sp->has_filler = true;
        }
    }
    pthread_cond_signal(&sp->wake);
    pthread_mutex_unlock(&sp->lock);
    return r;
}

void forkserver_spare_stats(struct forkserver *fs, struct forkserver_spare_stats *st)
{
    pthread_mutex_lock(&fs->sp.lock);
    st->ready = fs->sp.n;
    st->taken = fs->sp.taken;
    st->made = fs->sp.made_total;
    st->failed = fs->sp.failed;
    pthread_mutex_unlock(&fs->sp.lock);
}

/* spares_stop(fs) — the filler ended and every spare destroyed. */
static void spares_stop(struct forkserver *fs)
{
    struct spares *sp = &fs->sp;

    pthread_mutex_lock(&sp->lock);
    sp->stopping = true;
    pthread_cond_broadcast(&sp->wake);
    pthread_mutex_unlock(&sp->lock);
    if (sp->has_filler)
        pthread_join(sp->filler, NULL);
    sp->has_filler = false;
    while (sp->nused > 0)
        sandbox_destroy(sp->used[--sp->nused], NULL);
    while (sp->n > 0)
        sandbox_destroy(sp->job[--sp->n], NULL);
}

/* job_discard(ctx, job) — sandbox_discard of a job: handed to the filler, which destroys it
 * before it makes the next spare; destroyed now when there is no filler or it has enough. */
static void job_discard(void *ctx, struct sandbox *job)
{
    struct forkserver *fs = ctx;
    struct spares *sp = &fs->sp;

    sandbox_set_cancel_fd(job, -1); /* the caller's cancel fd is not the filler's to watch */
    pthread_mutex_lock(&sp->lock);
    if (sp->has_filler && !sp->stopping && sp->nused < FORKSERVER_USED_MAX) {
        sp->used[sp->nused++] = job;
        job = NULL;
        pthread_cond_signal(&sp->wake);
    }
    pthread_mutex_unlock(&sp->lock);
    if (job)
        sandbox_destroy(job, NULL);
}

static struct sandbox *job_get(struct forkserver *fs, const struct sandbox_limits *limits,
                               struct errbuf *err);

struct sandbox *forkserver_job(struct forkserver *fs, const struct sandbox_limits *limits,
                               struct errbuf *err)
{
    struct sandbox *job = job_get(fs, limits, err);

    if (job)
        sandbox__set_discard(job, job_discard, fs);
    return job;
}

/* job_get(fs, limits, err) — a spare, or a job made now. */
static struct sandbox *job_get(struct forkserver *fs, const struct sandbox_limits *limits,
                               struct errbuf *err)
{
    struct sandbox *job;

    if (limits->writable_root) {
        errbuf_set(err, "a fork server's job cannot have a writable root");
        return NULL;
    }
    job = spare_take(fs, limits);
    if (job) {
        if (sandbox__job_idle(job) && sandbox_set_limits(job, limits, NULL) == 0)
            return job;
        sandbox_destroy(job, NULL); /* its pid 1 ended (or its limits would not take) */
    }
    return job_make(fs, limits, err);
}

int forkserver_run(struct forkserver *fs, const struct sandbox_limits *limits,
                   const struct sandbox_file *files, size_t nfiles, const struct sandbox_proc *proc,
                   struct result *res)
{
    struct errbuf err = {{0}};
    struct sandbox *job;
    int r;

    result_set_image(res, fs->img);
    res->fork_server = true;
    if (limits->writable_root) {
        result_fail(res, "a fork server's job cannot have a writable root");
        return 0;
    }
    job = forkserver_job(fs, limits, &err);
    if (!job) {
        result_fail(res, "%s", err.msg);
        return 0;
    }
    for (size_t i = 0; i < nfiles; i++) {
        r = sandbox_put_file(job, files[i].dest, files[i].fd, files[i].mode, &err);
        if (r < 0) {
            result_fail(res, "%s", err.msg);
            sandbox_destroy(job, NULL);
            return 0;
        }
    }
    r = sandbox_exec(job, proc, SANDBOX_EXEC_LAST, res);
    err.msg[0] = '\0';
    if (sandbox_destroy(job, &err) < 0 && res->status != RESULT_SANDBOX_ERROR)
        result_fail(res, "%s", err.msg);
    return r == -EINVAL ? -EINVAL : 0;
}

bool forkserver_small_init(const struct forkserver *fs)
{
    return fs->small_init;
}

unsigned forkserver_prefault_pages(const struct forkserver *fs)
{
    return fs->prefault_pages;
}

const struct image *forkserver_image(const struct forkserver *fs)
{
    return fs->img;
}

void forkserver_stop(struct forkserver *fs)
{
    if (!fs)
        return;
    spares_stop(fs);
    if (fs->sock >= 0)
        close(fs->sock);
    if (fs->diag >= 0)
        close(fs->diag);
    sandbox_destroy(fs->sb, NULL);
    pthread_mutex_destroy(&fs->lock);
    pthread_mutex_destroy(&fs->sp.lock);
    pthread_cond_destroy(&fs->sp.wake);
    free(fs);
}
