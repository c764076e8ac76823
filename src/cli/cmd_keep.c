/*
 * cmd_keep.c — `crucible keep`: sandboxes kept ready for `crucible run` on this machine
 * (keep.h, docs/KEEP.md).
 *
 * One process: a pool of ready sandboxes of one shape (pool.h: each used by one run and then
 * destroyed in the background), a unix socket only its own user can reach, and a thread per
 * run. A run's request is read whole and checked (build, image, shape, limits, argv, files)
 * before anything runs; what the keeper cannot take it declines, and the run goes on cold.
 * The run's connection is its sandbox's cancel fd: a run stopped by a signal half-closes it,
 * and its sandbox is torn down at once. SIGINT, SIGTERM or SIGHUP stops the keeper: no new
 * runs, the running ones cancelled and answered, the socket removed, the pool destroyed.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/keep.h"
#include "sandbox/forkserver.h"
#include "sandbox/pool.h"
#include "sandbox/result.h"
#include "sandbox/sandbox.h"

#define KEEP_RUNS_MAX     256 /* runs at once; more are declined (they go cold) */
#define KEEP_WARM_MAX     64
#define KEEP_READ_TIMEOUT 5 /* seconds a connection has to send its request */
#define KEEP_JOB_SPARES   2 /* fork-server jobs made ahead (--fork-server) */

struct keeper {
    struct sandbox_runtime rt;
    struct image img;
    struct sandbox_limits shape;
    struct pool *pool;
    struct forkserver *fs; /* --fork-server: a Python zygote for `run --fork-server` */
    pthread_mutex_t mu;
    pthread_cond_t idle;
    unsigned running;
    int conns[KEEP_RUNS_MAX]; /* the running runs' connections, for the keeper's stop */
};

static void keep_usage(FILE *f)
{
    fprintf(
        f,
        "usage: crucible keep [OPTIONS]\n\n"
        "Keeps sandboxes ready for `crucible run` on this machine, so that a run does not\n"
        "wait for one to be made. A run uses the keeper when its image, --disk, --network\n"
        "and --writable-root are the keeper's, and goes on cold otherwise; its verdict and\n"
        "record are the same either way. Each sandbox serves one run and is destroyed.\n\n"
        "options:\n"
        "  --socket PATH        where to listen (default: $CRUCIBLE_KEEP, else\n"
        "                       /run/crucible/keep.sock as root, else\n"
        "                       $XDG_RUNTIME_DIR/crucible/keep.sock); its directory is\n"
        "                       made 0700 when missing, and must not be writable by others\n"
        "  --warm N             sandboxes kept ready (1..%d, default 2)\n"
        "  --image NAME         the sandboxes' image, as `crucible run --image` (default host)\n"
        "  --disk MB            their scratch size, as `crucible run --disk` (default %.10g)\n"
        "  --network none|loopback   as `crucible run --network` (default none)\n"
        "  --writable-root      as `crucible run --writable-root`\n"
        "  --fork-server        also keep a Python fork server (a zygote in a sandbox of\n"
        "                       the image, %d jobs made ahead) for `crucible run\n"
        "                       --fork-server`, whatever the run's --disk and --network\n"
        "  -h, --help           this text\n\n"
        "A run finds the keeper at the same default path, or at $CRUCIBLE_KEEP\n"
        "(CRUCIBLE_KEEP=off, or `crucible run --cold`, runs cold). Stop the keeper with\n"
        "SIGINT or SIGTERM: running runs are cancelled and answered, then it exits.\n",
        KEEP_WARM_MAX, sandbox_limit_ranges[LIM_DISK].def, KEEP_JOB_SPARES);
}

/* limits_fit(l, why, whysize) — every limit within crucible run's ranges. */
static bool limits_fit(const struct sandbox_limits *l, char *why, size_t whysize)
{
    const struct sandbox_limit_range *r = sandbox_limit_ranges;
    double v[LIM_COUNT] = {
        [LIM_CPU] = l->cpu_time,
        [LIM_WALL] = l->wall_time,
        [LIM_MEMORY] = (double)l->memory_mb,
        [LIM_PIDS] = (double)l->pids,
        [LIM_OUTPUT] = (double)l->output_kb,
        [LIM_DISK] = (double)l->disk_mb,
    };

    for (int i = 0; i < LIM_COUNT; i++)
        if (!(v[i] >= r[i].min && v[i] <= r[i].max)) {
            snprintf(why, whysize, "%s %.10g is outside %.10g..%.10g", r[i].name, v[i], r[i].min,
                     r[i].max);
            return false;
        }
    return true;
}

/* check(k, req, why, whysize) — may the keeper run req? */
static bool check(const struct keeper *k, const struct keep_request *req, char *why, size_t whysize)
{
    struct errbuf err = {{0}};

    if (strcmp(req->digest, k->img.digest) != 0)
        return snprintf(why, whysize, "another image"), false;
    if (req->fork_server && !k->fs)
        return snprintf(why, whysize, "no fork server (crucible keep --fork-server)"), false;
    if (!req->fork_server &&
        (req->limits.disk_mb != k->shape.disk_mb || req->limits.loopback != k->shape.loopback ||
         req->limits.writable_root != k->shape.writable_root))
        return snprintf(why, whysize, "another scratch size, network or root"), false;
    if (!limits_fit(&req->limits, why, whysize))
        return false;
    for (size_t i = 0; req->env[i]; i++)
        if (req->env[i][0] == '=' || !strchr(req->env[i], '='))
            return snprintf(why, whysize, "an environment entry that is not K=V"), false;
    if (!sandbox_argv_fits(req->argv, req->env, &err))
        return snprintf(why, whysize, "%s", err.msg), false;
    for (size_t i = 0; i < req->nfiles; i++)
        if (!sandbox_dest_valid(req->files[i].dest, &err))
            return snprintf(why, whysize, "%s", err.msg), false;
    return true;
}

/* take(k, conn, req, res) — the run's sandbox, its cancel fd the run's connection: a job of
 * the fork server for a --fork-server run, else one of the pool's, or one made now when none
 * is ready. NULL with res failed. */
static struct sandbox *take(struct keeper *k, int conn, const struct keep_request *req,
                            struct result *res)
{
    struct errbuf err = {{0}};
    struct sandbox *sb;

    if (req->fork_server) {
        res->fork_server = true;
        if (req->limits.writable_root) {
            result_fail(res, "a fork server's job cannot have a writable root");
            return NULL;
        }
        sb = forkserver_job(k->fs, &req->limits, &err);
    } else {
        sb = pool_take(k->pool, &k->img, &req->limits, conn, &err);
        if (!sb) {
            err.msg[0] = '\0';
            sb = sandbox_create(&k->rt, &k->img, &req->limits, &err);
        }
    }
    if (!sb) {
        result_fail(res, "%s", err.msg);
        return NULL;
    }
    sandbox_set_cancel_fd(sb, conn);
    return sb;
}

/* run(k, conn, req, res) — req in its sandbox, as sandbox_run (forkserver_run for a
 * --fork-server run) does it cold. The sandbox is torn down off the run's path: by the pool's
 * thread, or the fork server's for a job. */
static void run(struct keeper *k, int conn, const struct keep_request *req, struct result *res)
{
    struct errbuf err = {{0}};
    struct sandbox_proc proc = {.argv = req->argv, .env = req->env, .stdin_fd = req->stdin_fd};
    struct pool *owner = req->fork_server ? NULL : k->pool; /* NULL: a job, discarded */
    struct sandbox *sb;

    result_set_image(res, &k->img);
    if (!(sb = take(k, conn, req, res)))
        return;
    for (size_t i = 0; i < req->nfiles; i++)
        if (sandbox_put_file(sb, req->files[i].dest, req->files[i].fd, req->files[i].mode, &err) <
            0) {
            result_fail(res, "%s", err.msg);
            pool_release(owner, sb);
            return;
        }
    sandbox_exec(sb, &proc, SANDBOX_EXEC_LAST, res);
    pool_release(owner, sb);
}

struct conn_job {
    struct keeper *k;
    int fd, slot;
};

static void *conn_main(void *arg)
{
    struct conn_job *job = arg;
    struct keeper *k = job->k;
    struct timeval tv = {.tv_sec = KEEP_READ_TIMEOUT};
    struct keep_request req;
    char why[512];

    setsockopt(job->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (keep_request_read(job->fd, &req, why, sizeof(why)) < 0 ||
        !check(k, &req, why, sizeof(why))) {
        (void)keep_decline(job->fd, why);
    } else {
        struct result res;
        result_init(&res);
        run(k, job->fd, &req, &res);
        (void)keep_answer(job->fd, &res);
        result_release(&res);
    }
    keep_request_release(&req);
    pthread_mutex_lock(&k->mu);
    k->conns[job->slot] = -1;
    close(job->fd);
    if (--k->running == 0)
        pthread_cond_broadcast(&k->idle);
    pthread_mutex_unlock(&k->mu);
    free(job);
    return NULL;
}

/* accept_one(k, lfd) — a connection of this user's gets a thread; anyone else's is closed. */
static void accept_one(struct keeper *k, int lfd)
{
    struct ucred cred;
    socklen_t clen = sizeof(cred);
    struct conn_job *job;
    pthread_attr_t attr;
    pthread_t t;
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), slot = -1;

    if (fd < 0)
        return;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 || cred.uid != geteuid()) {
        close(fd);
        return;
    }
    pthread_mutex_lock(&k->mu);
    for (int i = 0; i < KEEP_RUNS_MAX && slot < 0; i++)
        if (k->conns[i] < 0)
            slot = i;
    if (slot >= 0) {
        k->conns[slot] = fd;
        k->running++;
    }
    pthread_mutex_unlock(&k->mu);
    if (slot < 0) {
        (void)keep_decline(fd, "the keeper is running as many runs as it takes");
        close(fd);
        return;
    }
    job = malloc(sizeof(*job));
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (job) {
        *job = (struct conn_job){.k = k, .fd = fd, .slot = slot};
        if (pthread_create(&t, &attr, conn_main, job) == 0) {
            pthread_attr_destroy(&attr);
            return;
        }
        free(job);
    }
    pthread_attr_destroy(&attr);
    (void)keep_decline(fd, "the keeper cannot start a thread");
    pthread_mutex_lock(&k->mu);
    k->conns[slot] = -1;
    k->running--;
    close(fd);
    pthread_mutex_unlock(&k->mu);
}

/* listen_at(path) — the keeper's socket, owned by this user and only reachable by it: its
 * directory made 0700 when missing and refused when others may write to it; a socket left
 * by a keeper that is gone is replaced, one that answers is another keeper's. fd or -1. */
static int listen_at(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char dir[sizeof(sa.sun_path)], *slash;
    struct stat st;
    int fd;

    snprintf(dir, sizeof(dir), "%s", path);
    slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
            fprintf(stderr, "crucible keep: cannot create %s: %s\n", dir, strerror(errno));
            return -1;
        }
    } else {
        snprintf(dir, sizeof(dir), "%s", slash ? "/" : ".");
    }
    if (stat(dir, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
        fprintf(stderr,
                "crucible keep: %s must be a directory of this user's that others cannot write "
                "to\n",
                dir);
        return -1;
    }
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fprintf(stderr, "crucible keep: socket: %s\n", strerror(errno));
        return -1;
    }
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            fprintf(stderr, "crucible keep: %s exists and is not a socket\n", path);
            close(fd);
            return -1;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
            fprintf(stderr, "crucible keep: a keeper already listens at %s\n", path);
            close(fd);
            return -1;
        }
        close(fd);
        unlink(path); /* a keeper that is gone left it */
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            fprintf(stderr, "crucible keep: socket: %s\n", strerror(errno));
            return -1;
        }
    }
    mode_t old = umask(077);
    int r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
    umask(old);
    if (r < 0 || listen(fd, 128) < 0) {
        fprintf(stderr, "crucible keep: cannot listen at %s: %s\n", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static int parse(int argc, char **argv, struct keeper *k, const char **image, char *path,
                 size_t psize, unsigned *warm, bool *fork_server)
{
    enum { O_SOCKET = 256, O_WARM, O_IMAGE, O_DISK, O_NETWORK, O_WRITABLE, O_FORK_SERVER };
    static const struct option opts[] = {
        {"socket", required_argument, NULL, O_SOCKET},
        {"warm", required_argument, NULL, O_WARM},
        {"image", required_argument, NULL, O_IMAGE},
        {"disk", required_argument, NULL, O_DISK},
        {"network", required_argument, NULL, O_NETWORK},
        {"writable-root", no_argument, NULL, O_WRITABLE},
        {"fork-server", no_argument, NULL, O_FORK_SERVER},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const struct sandbox_limit_range *disk = &sandbox_limit_ranges[LIM_DISK];
    bool have_path = keep_socket_path(path, psize);
    uint64_t u;
    int c;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'h':
            keep_usage(stdout);
            return 1;
        case O_SOCKET:
            if (!optarg[0] || strlen(optarg) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
                fprintf(stderr,
                        "crucible keep: --socket: '%s' is empty or too long for a "
                        "socket path\n",
                        optarg);
                return 2;
            }
            snprintf(path, psize, "%s", optarg);
            have_path = true;
            break;
        case O_WARM:
            if (!util_parse_u64(optarg, 1, KEEP_WARM_MAX, &u)) {
                fprintf(stderr, "crucible keep: --warm must be 1..%d, not '%s'\n", KEEP_WARM_MAX,
                        optarg);
                return 2;
            }
            *warm = (unsigned)u;
            break;
        case O_IMAGE:
            *image = optarg;
            break;
        case O_DISK:
            if (!util_parse_u64(optarg, (uint64_t)disk->min, (uint64_t)disk->max, &u)) {
                fprintf(stderr, "crucible keep: --disk must be %.10g..%.10g MB, not '%s'\n",
                        disk->min, disk->max, optarg);
                return 2;
            }
            k->shape.disk_mb = u;
            break;
        case O_NETWORK:
            if (strcmp(optarg, "none") != 0 && strcmp(optarg, "loopback") != 0) {
                fprintf(stderr,
                        "crucible keep: --network must be 'none' or 'loopback', not "
                        "'%s'\n",
                        optarg);
                return 2;
            }
            k->shape.loopback = strcmp(optarg, "loopback") == 0;
            break;
        case O_WRITABLE:
            k->shape.writable_root = true;
            break;
        case O_FORK_SERVER:
            *fork_server = true;
            break;
        default:
            fprintf(stderr, "crucible keep: unknown option or missing value '%s' (see --help)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "crucible keep: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!have_path) {
        fprintf(stderr, "crucible keep: no socket path: give --socket, or set CRUCIBLE_KEEP or "
                        "XDG_RUNTIME_DIR\n");
        return 2;
    }
    return 0;
}

/* serve_runs(k, lfd, stop) — accepts runs until a signal arrives on stop. */
static int serve_runs(struct keeper *k, int lfd, int stop)
{
    struct signalfd_siginfo si;

    for (;;) {
        struct pollfd pf[2] = {{.fd = lfd, .events = POLLIN}, {.fd = stop, .events = POLLIN}};
        if (poll(pf, 2, -1) < 0 && errno != EINTR)
            return -1;
        if (pf[1].revents && read(stop, &si, sizeof(si)) == (ssize_t)sizeof(si))
            return (int)si.ssi_signo;
        if (pf[0].revents)
            accept_one(k, lfd);
    }
}

int cmd_keep(int argc, char **argv)
{
    static struct keeper k; /* its threads' for as long as the process lives */
    struct errbuf err = {{0}};
    const char *image = "host";
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    unsigned warm = 2;
    bool fork_server = false;
    sigset_t stop;
    int lfd, sfd, r, sig;

    sandbox_limits_default(&k.shape);
    for (int i = 0; i < KEEP_RUNS_MAX; i++)
        k.conns[i] = -1;
    r = parse(argc, argv, &k, &image, path, sizeof(path), &warm, &fork_server);
    if (r)
        return r == 1 ? 0 : r;
    if (image_resolve(image, &k.img, &err) < 0) {
        fprintf(stderr, "crucible keep: %s\n", err.msg);
        return 2;
    }
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, NULL); /* before any thread: every thread inherits it */
    sfd = signalfd(-1, &stop, SFD_CLOEXEC);
    if (sfd < 0 || sandbox_runtime_init(&k.rt, &err) < 0) {
        fprintf(stderr, "crucible keep: %s\n", sfd < 0 ? strerror(errno) : err.msg);
        return 2;
    }
    k.rt.trace = getenv("CRUCIBLE_TRACE") != NULL;
    lfd = listen_at(path);
    if (lfd < 0) {
        sandbox_runtime_release(&k.rt);
        return 2;
    }
    k.pool = pool_new(&k.rt, &k.img, &k.shape, warm, true, NULL, &err);
    if (!k.pool) {
        fprintf(stderr, "crucible keep: %s\n", err.msg);
        unlink(path);
        close(lfd);
        sandbox_runtime_release(&k.rt);
        return 2;
    }
    if (fork_server && (!(k.fs = forkserver_start(&k.rt, &k.img, NULL, 0, &err)) ||
                        forkserver_set_spares(k.fs, KEEP_JOB_SPARES, &err) < 0)) {
        fprintf(stderr, "crucible keep: --fork-server: %s\n", err.msg);
        forkserver_stop(k.fs);
        pool_free(k.pool);
        unlink(path);
        close(lfd);
        sandbox_runtime_release(&k.rt);
        return 2;
    }
    pthread_mutex_init(&k.mu, NULL);
    pthread_cond_init(&k.idle, NULL);
    fprintf(stderr, "crucible keep: listening at %s, %u sandboxes of image %s kept ready%s\n", path,
            warm, image, k.fs ? ", and a Python fork server" : "");
    sig = serve_runs(&k, lfd, sfd);
    /* Stop: no new runs; the running ones cancelled (their cancel fd turns readable) and
     * answered; then the pool. */
    unlink(path);
    close(lfd);
    pthread_mutex_lock(&k.mu);
    for (int i = 0; i < KEEP_RUNS_MAX; i++)
        if (k.conns[i] >= 0)
            shutdown(k.conns[i], SHUT_RD);
    while (k.running)
        pthread_cond_wait(&k.idle, &k.mu);
    pthread_mutex_unlock(&k.mu);
    forkserver_stop(k.fs);
    pool_free(k.pool);
    sandbox_runtime_release(&k.rt);
    close(sfd);
    fprintf(stderr, "crucible keep: stopped%s%s\n", sig > 0 ? " by " : "",
            sig > 0 ? strsignal(sig) : "");
    return 0;
}
