/*
 * cmd_serve.c — `crucible serve`: the HTTP service (docs/API.md). Wires the loop, the HTTP
 * daemon, the scheduler and the routes together; SIGINT/SIGTERM stop it cleanly (running
 * jobs are cancelled and their sandboxes torn down).
 *
 * In steps: the command line (parse_args), the sandbox runtime and defaults (cmd_serve),
 * everything the loop drives (serve_start), the loop, then the teardown (serve_stop).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
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
#include "service/offload.h"
#include "metrics.h"
#include "sandbox/pool.h"
#include "service/scheduler.h"
#include "library/store.h"
#include "util.h"

static const char USAGE[] =
    "usage: crucible serve [--listen HOST:PORT] [--slots N] [--queue N] [--memory MB]\n"
    "                      [--warm N] [--token-file FILE] [--max-body MB] [--port-file FILE]\n"
    "                      [--api-threads N] [--parse-budget MB] [--db PATH] [--quiet]\n"
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
    "  --api-threads N     threads that parse request bodies and do the task library's work,\n"
    "                      off the event loop (default 2)\n"
    "  --parse-budget MB   request bodies being parsed at once, server-wide (default 64); the\n"
    "                      others wait their turn; a larger body is parsed alone\n"
    "  --port-file FILE    write the bound port there once listening (for port 0)\n"
    "  --db PATH           the task library (SQLite; created when missing)\n"
    "  --quiet             no JSON log lines on stderr\n";

/* What the command line asks for; 0 (slots, memory) and UINT64_MAX (warm) mean "default". */
struct serve_args {
    char host[64];
    uint64_t port, slots, queue, memory, max_body, warm, api_threads, parse_budget;
    char *token; /* owned */
    const char *db_path, *port_file;
    bool quiet, help;
};

/* The running service: what the event loop drives and everything it owns. */
struct serve {
    struct loop *loop;
    struct http_server *http;
    struct sched *sched;
    struct offload *offload;
    int sigfd;
    struct sandbox_runtime rt;
    struct image host_img;
    struct metrics *m;
    struct pool *pool;
    struct store *store;
    struct api *api;
    struct api_config cfg;
};

/* usage_error(fmt, ...) — one line on stderr pointing at --help; returns 2. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "crucible serve: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'crucible serve --help')\n");
    va_end(ap);
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

/* parse_args(argc, argv, a) — the command line into a (the token file read); 0, or 2 after
 * saying what is wrong (a->token freed). a->help: --help was asked for. */
static int parse_args(int argc, char **argv, struct serve_args *a)
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
        O_DB,
        O_APITHREADS,
        O_PARSEBUDGET
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
        {"api-threads", required_argument, NULL, O_APITHREADS},
        {"parse-budget", required_argument, NULL, O_PARSEBUDGET},
        {NULL, 0, NULL, 0},
    };
    struct errbuf err = {{0}};
    const char *colon;
    int c, rc = 0;

    memset(a, 0, sizeof(*a));
    snprintf(a->host, sizeof(a->host), "127.0.0.1");
    a->port = 8080;
    a->queue = 1024;
    a->max_body = 64;
    a->api_threads = 2;
    a->parse_budget = 64;
    a->warm = UINT64_MAX;
    opterr = 0;
    optind = 1;
    while (rc == 0 && (c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            a->help = true;
            return 0;
        case O_LISTEN:
            colon = strrchr(optarg, ':');
            if (!colon || colon == optarg || (size_t)(colon - optarg) >= sizeof(a->host) ||
                !util_parse_u64(colon + 1, 0, 65535, &a->port)) {
                rc =
                    usage_error("--listen wants HOST:PORT (e.g. 127.0.0.1:8080), got '%s'", optarg);
                break;
            }
            memcpy(a->host, optarg, (size_t)(colon - optarg));
            a->host[colon - optarg] = '\0';
            break;
        case O_SLOTS:
            if (!util_parse_u64(optarg, 1, 1024, &a->slots))
                rc = usage_error("--slots wants an integer from 1 to 1024, got '%s'", optarg);
            break;
        case O_QUEUE:
            if (!util_parse_u64(optarg, 1, 10000000, &a->queue))
                rc = usage_error("--queue wants an integer from 1 to 10000000, got '%s'", optarg);
            break;
        case O_MEMORY:
            if (!util_parse_u64(optarg, 64, 1ull << 30, &a->memory))
                rc = usage_error("--memory wants megabytes (at least 64), got '%s'", optarg);
            break;
        case O_WARM:
            if (!util_parse_u64(optarg, 0, 1024, &a->warm))
                rc = usage_error("--warm wants an integer from 0 to 1024, got '%s'", optarg);
            break;
        case O_TOKEN:
            free(a->token);
            a->token = NULL;
            if (read_token(optarg, &a->token, &err) < 0)
                rc = usage_error("%s", err.msg);
            break;
        case O_MAXBODY:
            if (!util_parse_u64(optarg, 1, 4096, &a->max_body))
                rc = usage_error("--max-body wants megabytes from 1 to 4096, got '%s'", optarg);
            break;
        case O_APITHREADS:
            if (!util_parse_u64(optarg, 1, 64, &a->api_threads))
                rc = usage_error("--api-threads wants an integer from 1 to 64, got '%s'", optarg);
            break;
        case O_PARSEBUDGET:
            if (!util_parse_u64(optarg, 1, 4096, &a->parse_budget))
                rc = usage_error("--parse-budget wants megabytes from 1 to 4096, got '%s'", optarg);
            break;
        case O_PORTFILE:
            a->port_file = optarg;
            break;
        case O_QUIET:
            a->quiet = true;
            break;
        case O_DB:
            a->db_path = optarg;
            break;
        default:
            rc = usage_error("unknown option or missing argument '%s'", argv[optind - 1]);
            break;
        }
    }
    if (rc == 0 && optind < argc)
        rc = usage_error("unexpected argument '%s'", argv[optind]);
    if (rc != 0) {
        free(a->token);
        a->token = NULL;
    }
    return rc;
}

/* take_host_resources(void) — as many descriptors as the hard limit allows (many clients
 * at once), no SIGPIPE, SIGINT/SIGTERM blocked (into *sigs, for the signalfd) before any
 * worker thread starts, jansson's hash seed set once before any thread, and glibc's heap
 * set to give memory back: a large request leaves millions of small blocks freed on an api
 * worker's arena, and with fastbins (small blocks kept unmerged until a later malloc) and
 * the dynamic trim threshold (twice the largest block freed) that arena stays resident —
 * about 60 MB after one 60 MiB body, measured (tests/e2e/94-offloop-parse.t). */
static void take_host_resources(sigset_t *sigs)
{
    struct rlimit nofile;

    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &nofile);
    }
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(sigs);
    sigaddset(sigs, SIGINT);
    sigaddset(sigs, SIGTERM);
    sigprocmask(SIG_BLOCK, sigs, NULL); /* the workers inherit it */
    json_object_seed(0);
    (void)mallopt(M_MXFAST, 0);                  /* freed blocks merge at once */
    (void)mallopt(M_TRIM_THRESHOLD, 128 * 1024); /* glibc's default, no longer dynamic */
}

/* write_port_file(path, port) — the bound port, for callers that asked for port 0. */
static int write_port_file(const char *path, unsigned port)
{
    FILE *pf = fopen(path, "w");

    if (!pf || fprintf(pf, "%u\n", port) < 0 || fclose(pf) != 0) {
        fprintf(stderr, "crucible serve: cannot write '%s': %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* serve_start(s, a) — the event loop, scheduler, warm pool, library, routes and HTTP
 * daemon, listening (s->rt initialised already). 0, or -1 after saying what failed (what
 * was started is stopped by serve_stop). */
static int serve_start(struct serve *s, const struct serve_args *a)
{
    struct errbuf err = {{0}};
    sigset_t sigs;

    take_host_resources(&sigs);
    s->loop = loop_new();
    s->m = metrics_new();
    s->sigfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (!s->loop || !s->m || s->sigfd < 0 ||
        loop_add(s->loop, s->sigfd, EPOLLIN, on_signal, s) < 0) {
        fprintf(stderr, "crucible serve: cannot set up the event loop: %s\n", strerror(errno));
        return -1;
    }
    s->sched = sched_new(s->loop, &s->rt, (unsigned)a->slots, a->memory, a->queue, &err);
    if (!s->sched)
        goto out_error;
    s->offload =
        offload_new(s->loop, (unsigned)a->api_threads, (size_t)a->parse_budget << 20, &err);
    if (!s->offload)
        goto out_error;
    memset(&s->cfg, 0, sizeof(s->cfg));
    s->cfg.host = &s->host_img;
    sandbox_limits_default(&s->cfg.limits);
    if (a->warm &&
        !(s->pool = pool_new(&s->rt, &s->host_img, &s->cfg.limits, (unsigned)a->warm, s->m, &err)))
        goto out_error;
    if (a->db_path && store_open(a->db_path, true, &s->store, &err) < 0)
        goto out_error;
    s->cfg.store = s->store;
    s->cfg.offload = s->offload;
    s->cfg.trace = s->rt.trace;
    s->cfg.pool = s->pool;
    s->cfg.token = a->token;
    s->cfg.infra_retries = 2;
    s->cfg.max_batch = 10000;
    s->api = api_new(s->sched, s->m, &s->cfg, a->quiet ? NULL : stderr);
    {
        struct http_config hc = {.host = a->host,
                                 .port = (uint16_t)a->port,
                                 .max_body = (size_t)a->max_body << 20,
                                 .max_connections = 4096};
        if (!s->api) {
            errbuf_set(&err, "out of memory");
            goto out_error;
        }
        if (!(s->http = http_start(s->loop, &hc, api_handle, s->api, &err)))
            goto out_error;
    }
    if (a->port_file && write_port_file(a->port_file, http_port(s->http)) < 0)
        return -1;
    return 0;
out_error:
    fprintf(stderr, "crucible serve: %s\n", err.msg);
    return -1;
}

/* serve_stop(s) — everything serve_start made, in an order that lets jobs finish cleanly. */
static void serve_stop(struct serve *s)
{
    http_stop(s->http);       /* clients see their connections close; their jobs are cancelled */
    offload_free(s->offload); /* what is parsed is discarded: its clients have gone */
    sched_free(s->sched);
    pool_free(s->pool); /* after the jobs: they hand their sandboxes back to it */
    api_free(s->api);
    store_close(s->store); /* after the jobs: they record their outcomes in it */
    metrics_free(s->m);
    if (s->sigfd >= 0)
        close(s->sigfd);
    loop_free(s->loop);
}

int cmd_serve(int argc, char **argv)
{
    struct serve_args a;
    struct serve s;
    struct errbuf err = {{0}};
    int rc;

    if ((rc = parse_args(argc, argv, &a)) != 0)
        return rc;
    if (a.help) {
        fputs(USAGE, stdout);
        return 0;
    }
    memset(&s, 0, sizeof(s));
    s.sigfd = -1;
    if (sandbox_runtime_init(&s.rt, &err) < 0 || image_resolve("host", &s.host_img, &err) < 0) {
        fprintf(stderr, "crucible serve: %s\n", err.msg);
        free(a.token);
        return 2;
    }
    s.rt.trace = getenv("CRUCIBLE_TRACE") != NULL;
    if (!a.slots)
        a.slots = s.rt.ncpu > 0 ? (uint64_t)s.rt.ncpu : 1;
    if (!a.memory)
        a.memory = default_memory_mb();
    if (a.warm == UINT64_MAX)
        a.warm = a.slots;
    rc = 2;
    if (serve_start(&s, &a) == 0) {
        api_log(s.api, "listening",
                json_pack("{s:s,s:i,s:i,s:i,s:i,s:I,s:b}", "host", a.host, "port",
                          (int)http_port(s.http), "slots", (int)a.slots, "warm", (int)a.warm,
                          "queue", (int)a.queue, "memory_mb", (json_int_t)a.memory, "auth",
                          a.token != NULL));
        if (loop_run(s.loop, timeout_ms, tick, &s) < 0)
            fprintf(stderr, "crucible serve: event loop failed: %s\n", strerror(errno));
        else
            rc = 0;
        api_log(s.api, "stopping", NULL);
    }
    serve_stop(&s);
    sandbox_runtime_release(&s.rt);
    free(a.token);
    return rc;
}
