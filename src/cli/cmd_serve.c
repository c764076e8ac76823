/*
 * cmd_serve.c — `crucible serve`: the HTTP service (docs/API.md). Wires the loop, the HTTP
 * daemon, the scheduler and the routes together; SIGINT/SIGTERM stop it cleanly (running
 * jobs are cancelled and their sandboxes torn down).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "service/api.h"
#include "cli/cmd.h"
#include "service/http.h"
#include "sandbox/image.h"
#include "service/loop.h"
#include "metrics.h"
#include "sandbox/pool.h"
#include "service/scheduler.h"
#include "library/store.h"
#include "util.h"

static const char USAGE[] =
    "usage: crucible serve [--listen HOST:PORT] [--slots N] [--queue N] [--memory MB]\n"
    "                      [--warm N] [--token-file FILE] [--max-body MB] [--port-file FILE]\n"
    "                      [--db PATH] [--quiet]\n"
    "\n"
    "Serves the HTTP API (docs/API.md): /v1/run, /v1/verify, /v1/batch (NDJSON stream),\n"
    "/run_code (SandboxFusion-compatible), /healthz, /metrics (Prometheus), and with --db\n"
    "the task library: /v1/tasks (import, list), /v1/tasks/{id}, /v1/tasks/sample,\n"
    "/v1/tasks/stats, and /v1/verify with a task_id (outcomes recorded).\n"
    "\n"
    "  --listen HOST:PORT  IPv4 address and port (default 127.0.0.1:8080; port 0: any free)\n"
    "  --slots N           jobs running at once (default: the number of CPUs)\n"
    "  --queue N           jobs waiting at most (default 1024); beyond it requests get 429\n"
    "  --memory MB         memory that running jobs may reserve in all (default: 3/4 of RAM)\n"
    "  --warm N            sandboxes kept ready for the default limits (default: --slots;\n"
    "                      0: none); each serves one job and is destroyed\n"
    "  --token-file FILE   require 'Authorization: Bearer TOKEN' (the file's first line)\n"
    "  --max-body MB       larger request bodies get 413 (default 64)\n"
    "  --port-file FILE    write the bound port there once listening (for port 0)\n"
    "  --db PATH           the task library (SQLite; created when missing)\n"
    "  --quiet             no JSON log lines on stderr\n";

struct serve {
    struct loop *loop;
    struct http_server *http;
    struct sched *sched;
    int sigfd;
};

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "crucible serve: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'crucible serve --help')\n");
    return 2;
}

static int timeout_ms(void *arg)
{
    struct serve *s = arg;
    int a = http_timeout_ms(s->http), b = sched_timeout_ms(s->sched);

    if (a < 0)
        return b;
    if (b < 0)
        return a;
    return a < b ? a : b;
}

static void tick(void *arg)
{
    struct serve *s = arg;

    sched_tick(s->sched);
    http_run(s->http);
}

static void on_signal(void *arg, uint32_t events)
{
    struct serve *s = arg;
    struct signalfd_siginfo si;

    (void)events;
    while (read(s->sigfd, &si, sizeof(si)) == sizeof(si))
        ;
    loop_stop(s->loop);
}

/* read_token(path, out, err) — the first line of the file, non-empty. */
static int read_token(const char *path, char **out, struct errbuf *err)
{
    char *buf;
    size_t len;
    int fd = open(path, O_RDONLY | O_CLOEXEC), r;

    if (fd < 0)
        return errbuf_set(err, "cannot open token file '%s': %s", path, strerror(errno));
    r = util_read_fd(fd, &buf, &len, 4096);
    close(fd);
    if (r < 0)
        return errbuf_set(err, "cannot read token file '%s': %s", path, strerror(-r));
    buf[strcspn(buf, "\r\n")] = '\0';
    if (!buf[0]) {
        free(buf);
        return errbuf_set(err, "token file '%s' has an empty first line", path);
    }
    *out = buf;
    return 0;
}

static uint64_t default_memory_mb(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

    if (pages <= 0 || size <= 0)
        return 4096;
    return (uint64_t)pages / 1024 * (uint64_t)size / 1024 * 3 / 4;
}

int cmd_serve(int argc, char **argv)
{
    enum {
        O_LISTEN = 256,
        O_SLOTS,
        O_QUEUE,
        O_MEMORY,
        O_WARM,
        O_TOKEN,
        O_MAXBODY,
        O_PORTFILE,
        O_QUIET,
        O_DB
    };
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"listen", required_argument, NULL, O_LISTEN},
        {"slots", required_argument, NULL, O_SLOTS},
        {"queue", required_argument, NULL, O_QUEUE},
        {"memory", required_argument, NULL, O_MEMORY},
        {"warm", required_argument, NULL, O_WARM},
        {"token-file", required_argument, NULL, O_TOKEN},
        {"max-body", required_argument, NULL, O_MAXBODY},
        {"port-file", required_argument, NULL, O_PORTFILE},
        {"quiet", no_argument, NULL, O_QUIET},
        {"db", required_argument, NULL, O_DB},
        {NULL, 0, NULL, 0},
    };
    char host[64] = "127.0.0.1", *token = NULL;
    const char *db_path = NULL;
    struct store *store = NULL;
    const char *port_file = NULL;
    uint64_t port = 8080, slots = 0, queue = 1024, memory = 0, max_body = 64, warm = UINT64_MAX;
    bool quiet = false;
    struct errbuf err = {{0}};
    struct sandbox_runtime rt;
    struct image host_img;
    struct serve s = {0};
    struct metrics *m = NULL;
    struct api *a = NULL;
    struct pool *pool = NULL;
    struct api_config cfg;
    struct rlimit nofile;
    sigset_t sigs;
    int c, rc = 2;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            fputs(USAGE, stdout);
            return 0;
        case O_LISTEN: {
            const char *colon = strrchr(optarg, ':');
            if (!colon || colon == optarg || (size_t)(colon - optarg) >= sizeof(host) ||
                !util_parse_u64(colon + 1, 0, 65535, &port))
                return usage_error("--listen wants HOST:PORT (e.g. 127.0.0.1:8080), got '%s'",
                                   optarg);
            memcpy(host, optarg, (size_t)(colon - optarg));
            host[colon - optarg] = '\0';
            break;
        }
        case O_SLOTS:
            if (!util_parse_u64(optarg, 1, 1024, &slots))
                return usage_error("--slots wants an integer from 1 to 1024, got '%s'", optarg);
            break;
        case O_QUEUE:
            if (!util_parse_u64(optarg, 1, 10000000, &queue))
                return usage_error("--queue wants an integer from 1 to 10000000, got '%s'", optarg);
            break;
        case O_MEMORY:
            if (!util_parse_u64(optarg, 64, 1ull << 30, &memory))
                return usage_error("--memory wants megabytes (at least 64), got '%s'", optarg);
            break;
        case O_WARM:
            if (!util_parse_u64(optarg, 0, 1024, &warm))
                return usage_error("--warm wants an integer from 0 to 1024, got '%s'", optarg);
            break;
        case O_TOKEN:
            if (read_token(optarg, &token, &err) < 0)
                return usage_error("%s", err.msg);
            break;
        case O_MAXBODY:
            if (!util_parse_u64(optarg, 1, 4096, &max_body))
                return usage_error("--max-body wants megabytes from 1 to 4096, got '%s'", optarg);
            break;
        case O_PORTFILE:
            port_file = optarg;
            break;
        case O_QUIET:
            quiet = true;
            break;
        case O_DB:
            db_path = optarg;
            break;
        default:
            free(token);
            return usage_error("unknown option or missing argument '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) {
        free(token);
        return usage_error("unexpected argument '%s'", argv[optind]);
    }
    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &host_img, &err) < 0) {
        fprintf(stderr, "crucible serve: %s\n", err.msg);
        free(token);
        return 2;
    }
    rt.trace = getenv("CRUCIBLE_TRACE") != NULL;
    if (!slots)
        slots = rt.ncpu > 0 ? (uint64_t)rt.ncpu : 1;
    if (!memory)
        memory = default_memory_mb();
    if (warm == UINT64_MAX)
        warm = slots;

    /* Many clients at once: as many descriptors as the hard limit allows. */
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &nofile);
    }
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigprocmask(SIG_BLOCK, &sigs, NULL); /* before the workers start: they inherit it */
    json_object_seed(0);                 /* jansson's hash seed, once, before any thread */

    s.loop = loop_new();
    m = metrics_new();
    s.sigfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (!s.loop || !m || s.sigfd < 0 || loop_add(s.loop, s.sigfd, EPOLLIN, on_signal, &s) < 0) {
        fprintf(stderr, "crucible serve: cannot set up the event loop: %s\n", strerror(errno));
        goto out;
    }
    s.sched = sched_new(s.loop, &rt, (unsigned)slots, memory, queue, &err);
    if (!s.sched) {
        fprintf(stderr, "crucible serve: %s\n", err.msg);
        goto out;
    }
    memset(&cfg, 0, sizeof(cfg));
    cfg.host = &host_img;
    sandbox_limits_default(&cfg.limits);
    if (warm && !(pool = pool_new(&rt, &host_img, &cfg.limits, (unsigned)warm, m, &err))) {
        fprintf(stderr, "crucible serve: %s\n", err.msg);
        goto out;
    }
    if (db_path && store_open(db_path, true, &store, &err) < 0) {
        fprintf(stderr, "crucible serve: %s\n", err.msg);
        goto out;
    }
    cfg.store = store;
    cfg.trace = rt.trace;
    cfg.pool = pool;
    cfg.token = token;
    cfg.infra_retries = 2;
    cfg.max_batch = 10000;
    a = api_new(s.sched, m, &cfg, quiet ? NULL : stderr);
    {
        struct http_config hc = {.host = host,
                                 .port = (uint16_t)port,
                                 .max_body = (size_t)max_body << 20,
                                 .max_connections = 4096};
        if (!a || !(s.http = http_start(s.loop, &hc, api_handle, a, &err))) {
            fprintf(stderr, "crucible serve: %s\n", a ? err.msg : "out of memory");
            goto out;
        }
    }
    if (port_file) {
        FILE *pf = fopen(port_file, "w");
        if (!pf || fprintf(pf, "%u\n", http_port(s.http)) < 0 || fclose(pf) != 0) {
            fprintf(stderr, "crucible serve: cannot write '%s': %s\n", port_file, strerror(errno));
            goto out;
        }
    }
    api_log(a, "listening",
            json_pack("{s:s,s:i,s:i,s:i,s:i,s:I,s:b}", "host", host, "port", (int)http_port(s.http),
                      "slots", (int)slots, "warm", (int)warm, "queue", (int)queue, "memory_mb",
                      (json_int_t)memory, "auth", token != NULL));
    if (loop_run(s.loop, timeout_ms, tick, &s) < 0)
        fprintf(stderr, "crucible serve: event loop failed: %s\n", strerror(errno));
    else
        rc = 0;
    api_log(a, "stopping", NULL);
out:
    http_stop(s.http); /* clients see their connections close; their jobs are cancelled */
    sched_free(s.sched);
    pool_free(pool); /* after the jobs: they hand their sandboxes back to it */
    api_free(a);
    store_close(store); /* after the jobs: they record their outcomes in it */
    metrics_free(m);
    if (s.sigfd >= 0)
        close(s.sigfd);
    loop_free(s.loop);
    sandbox_runtime_release(&rt);
    free(token);
    return rc;
}
