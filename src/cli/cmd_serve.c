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

#include "cluster/gateway.h"
#include "service/api.h"
#include "service/api_sessions.h"
#include "cli/cmd.h"
#include "service/http.h"
#include "sandbox/image.h"
#include "service/loop.h"
#include "service/offload.h"
#include "metrics.h"
#include "judge/pyserver.h"
#include "sandbox/pool.h"
#include "service/scheduler.h"
#include "library/store.h"
#include "util.h"

static const char USAGE[] =
    "usage: crucible serve [--listen HOST:PORT] [--slots N] [--queue N] [--memory MB]\n"
    "                      [--warm N] [--token-file FILE] [--max-body MB] [--port-file FILE]\n"
    "                      [--db PATH] [--quiet] [--image NAME=DIR]... [--images-file FILE]\n"
    "                      [--max-pids N] [--pids N]\n"
    "                      [--max-connections N] [--max-per-address N]\n"
    "                      [--header-timeout S] [--body-timeout S]\n"
    "                      [--max-output-kb KB] [--output-budget-mb MB]\n"
    "                      [--max-fetch-mb MB] [--stream-buffer-mb MB] [--stream-stall-s S]\n"
    "                      [--api-threads N] [--parse-budget MB]\n"
    "                      [--run-code-margin S]\n"
    "                      [--max-sessions N] [--session-ttl S] [--session-idle-ttl S]\n"
    "                      [--session-spares N] [--no-fork-server] [--broker URL]\n"
    "\n"
    "Serves the HTTP API (docs/API.md): /v1/run, /v1/verify, /v1/batch (NDJSON stream),\n"
    "/run_code (SandboxFusion-compatible), /healthz, /metrics (Prometheus), and with --db\n"
    "the task library: /v1/tasks (import, list), /v1/tasks/{id}, /v1/tasks/sample,\n"
    "/v1/tasks/stats, and /v1/verify with a task_id (outcomes recorded); sessions (stateful\n"
    "sandboxes: /v1/sessions, with exec, files, fork and verify).\n"
    "\n"
    "  --listen HOST:PORT  IPv4 address and port (default 127.0.0.1:8080; port 0: any free)\n"
    "  --slots N           jobs running at once (default: the number of CPUs)\n"
    "  --queue N           jobs waiting at most (default 1024); beyond it requests get 429\n"
    "                      (not /run_code: its requests wait, bounded by --run-code-margin)\n"
    "  --memory MB         memory that running jobs may reserve in all (default: 3/4 of RAM)\n"
    "  --warm N            sandboxes kept ready for the default limits (default: --slots;\n"
    "                      0: none), and as many fork-server jobs (at most 8); each serves\n"
    "                      one job and is destroyed\n"
    "  --no-fork-server    run every Python assert test and Python program of /v1/run and\n"
    "                      /run_code in a fresh sandbox (default: as jobs of a Python fork\n"
    "                      server, started on the first such run, where one can run; a\n"
    "                      request's \"fork_server\": false does the same)\n"
    "  --token-file FILE   require 'Authorization: Bearer TOKEN' (the file's first line)\n"
    "  --max-body MB       larger request bodies get 413 (default 64)\n"
    "  --api-threads N     threads that parse request bodies and do the task library's work,\n"
    "                      off the event loop (default 2)\n"
    "  --parse-budget MB   request bodies being parsed at once, server-wide (default 64); the\n"
    "                      others wait their turn; a larger body is parsed alone\n"
    "  --port-file FILE    write the bound port there once listening (for port 0)\n"
    "  --db PATH           the task library (SQLite; created when missing)\n"
    "  --quiet             no JSON log lines on stderr\n"
    "\n"
    "Trust boundaries (what a client may ask of this host):\n"
    "  --image NAME=DIR    register a root filesystem directory as image NAME (repeatable);\n"
    "                      requests and tasks name images ('host' or a registered NAME),\n"
    "                      never a host path\n"
    "  --images-file FILE  register every 'NAME=DIR' line of FILE ('#' comments)\n"
    "  --max-pids N        a job's limits.pids at most (default 1024, below --pids); more\n"
    "                      gets 400\n"
    "  --pids N            processes running jobs may reserve in all (default: a quarter\n"
    "                      of kernel.pid_max; at most half of it); a job waits for room\n"
    "\n"
    "Connections:\n"
    "  --max-connections N client connections in all (default 8192, at most the descriptor\n"
    "                      limit less 1024 kept for jobs); when full, the oldest connection\n"
    "                      still sending its request headers is dropped to make room\n"
    "  --max-per-address N connections from one client address (default 512; 0: no limit)\n"
    "  --header-timeout S  seconds a client gets to send a request's headers, and that an\n"
    "                      idle kept-alive connection stays open (default 30)\n"
    "  --body-timeout S    seconds a client gets to send a request's body (default 300)\n"
    "\n"
    "Memory held for jobs (docs/API.md, \"Memory the server holds for jobs\"):\n"
    "  --max-output-kb KB  most output a request or task may capture per stream\n"
    "                      (limits.output_kb; default 8192); more is a 400\n"
    "  --output-budget-mb MB  answers not yet sent, all jobs and session downloads together\n"
    "                      (default 1024); beyond it output is cut, the record's\n"
    "                      output_limited says so, and a download is a 503 (Retry-After)\n"
    "  --max-fetch-mb MB   bytes of /run_code fetch_files read back per request (default 32)\n"
    "  --stream-buffer-mb MB  unsent NDJSON of one batch before its further items wait\n"
    "                      (default 16)\n"
    "  --stream-stall-s S  a batch waiting that long on a client that reads nothing of it\n"
    "                      is cancelled (default 60)\n"
    "\n"
    "SandboxFusion clients (docs/API.md, /run_code \"Under load\"):\n"
    "  --run-code-margin S seconds a /run_code client waits beyond the request's\n"
    "                      compile_timeout + run_timeout (default 10, verl's); a request\n"
    "                      that cannot start in time to finish within that is answered 504\n"
    "                      (verl retries it); 0: it waits for a slot without limit\n"
    "\n"
    "Sessions (docs/API.md, \"Sessions\"):\n"
    "  --max-sessions N    live sessions at most (default 1000, less when the descriptor\n"
    "                      limit is small: each holds 4); beyond it creating one is\n"
    "                      answered 429\n"
    "  --session-ttl S     a session's life when its request gives no ttl_s (default 3600)\n"
    "  --session-idle-ttl S  a session with no request for that long is reclaimed, when its\n"
    "                      request gives no idle_ttl_s (default 600)\n"
    "  --session-spares N  sandboxes of a default session's shape (host image, default disk,\n"
    "                      loopback, no writable root) kept made ahead, so that creating such a\n"
    "                      session or forking one does not wait for a sandbox (default 2; 0:\n"
    "                      none)\n"
    "\n"
    "Cluster mode (docs/CLUSTER.md):\n"
    "  --broker URL        redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]: be a gateway. The job\n"
    "                      routes (/v1/run, /v1/verify, /v1/batch, /run_code) are put on the\n"
    "                      broker's streams and run by `crucible worker`s; --queue bounds the\n"
    "                      requests waiting for them. No sandbox runs here; sessions are not\n"
    "                      served by a gateway yet\n";

/* What the command line asks for; 0 (slots, memory) and UINT64_MAX (warm) mean "default". */
struct serve_args {
    char host[64];
    uint64_t port, slots, queue, memory, max_body, warm, api_threads, parse_budget;
    uint64_t max_pids, pids; /* per job (limits.pids) and for all running jobs; 0: default */
    const char **images;     /* --image NAME=DIR and --images-file FILE, in order (owned array) */
    bool *image_is_file;
    size_t nimages;
    uint64_t max_connections, max_per_address, header_timeout, body_timeout; /* 0: default */
    uint64_t max_output_kb, output_budget_mb, max_fetch_mb, stream_buffer_mb, stream_stall_s;
    uint64_t run_code_margin; /* seconds; 0: no start deadline for /run_code */
    uint64_t max_sessions, session_ttl, session_idle_ttl, session_spares;
    bool max_sessions_given; /* else the default shrinks to fit the descriptor limit */
    char *token;             /* owned */
    const char *db_path, *port_file;
    const char *broker; /* --broker URL: a gateway (cluster/gateway.h), or NULL */
    struct broker_url broker_url;
    bool quiet, help, no_fork_server;
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
    struct image_registry *images;
    struct metrics *m;
    struct pool *pool;
    struct pool *run_code_pool;  /* /run_code's shape: the default limits with lo up */
    struct pool *session_spares; /* a default session's shape (api_sessions_config.spares) */
    struct pyserver *pyserver;   /* NULL with --no-fork-server */
    struct store *store;
    struct api *api;
    struct api_config cfg;
    struct api_sessions *sessions;
    struct gateway *gateway; /* --broker */
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
    int t[] = {http_timeout_ms(s->http), sched_timeout_ms(s->sched), api_timeout_ms(s->api)};
    int min = -1;

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (t[i] >= 0 && (min < 0 || t[i] < min))
            min = t[i];
    return min;
}

static void tick(void *arg)
{
    struct serve *s = arg;

    sched_tick(s->sched);
    api_tick(s->api);
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

static void serve_args_release(struct serve_args *a)
{
    free(a->token);
    free(a->images);
    free(a->image_is_file);
    a->token = NULL;
    a->images = NULL;
    a->image_is_file = NULL;
}

/* parse_args(argc, argv, a) — the command line into a (the token file read); 0, or 2 after
 * saying what is wrong (a released). a->help: --help was asked for. */
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
        O_NO_FORK_SERVER,
        O_DB,
        O_IMAGE,
        O_IMAGES_FILE,
        O_MAX_PIDS,
        O_PIDS,
        O_MAXCONN,
        O_PERADDR,
        O_HEADERTO,
        O_BODYTO,
        O_MAXOUT,
        O_OUTBUDGET,
        O_MAXFETCH,
        O_STREAMBUF,
        O_STALL,
        O_APITHREADS,
        O_PARSEBUDGET,
        O_RCMARGIN,
        O_MAXSESSIONS,
        O_SESSIONTTL,
        O_SESSIONIDLE,
        O_SESSIONSPARES,
        O_BROKER
    };
    /* The memory options: a table, one range and one error each. */
    static const struct {
        int opt;
        uint64_t min, max;
        const char *name, *what;
    } ranges[] = {
        {O_MAXOUT, 1, 1u << 20, "max-output-kb", "kilobytes from 1 to 1048576"},
        {O_OUTBUDGET, 16, 1u << 20, "output-budget-mb", "megabytes from 16 to 1048576"},
        {O_MAXFETCH, 1, 1024, "max-fetch-mb", "megabytes from 1 to 1024"},
        {O_STREAMBUF, 1, 4096, "stream-buffer-mb", "megabytes from 1 to 4096"},
        {O_STALL, 1, 86400, "stream-stall-s", "seconds from 1 to 86400"},
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
        {"no-fork-server", no_argument, NULL, O_NO_FORK_SERVER},
        {"db", required_argument, NULL, O_DB},
        {"image", required_argument, NULL, O_IMAGE},
        {"images-file", required_argument, NULL, O_IMAGES_FILE},
        {"max-pids", required_argument, NULL, O_MAX_PIDS},
        {"pids", required_argument, NULL, O_PIDS},
        {"max-connections", required_argument, NULL, O_MAXCONN},
        {"max-per-address", required_argument, NULL, O_PERADDR},
        {"header-timeout", required_argument, NULL, O_HEADERTO},
        {"body-timeout", required_argument, NULL, O_BODYTO},
        {"max-output-kb", required_argument, NULL, O_MAXOUT},
        {"output-budget-mb", required_argument, NULL, O_OUTBUDGET},
        {"max-fetch-mb", required_argument, NULL, O_MAXFETCH},
        {"stream-buffer-mb", required_argument, NULL, O_STREAMBUF},
        {"stream-stall-s", required_argument, NULL, O_STALL},
        {"api-threads", required_argument, NULL, O_APITHREADS},
        {"parse-budget", required_argument, NULL, O_PARSEBUDGET},
        {"run-code-margin", required_argument, NULL, O_RCMARGIN},
        {"max-sessions", required_argument, NULL, O_MAXSESSIONS},
        {"session-ttl", required_argument, NULL, O_SESSIONTTL},
        {"session-idle-ttl", required_argument, NULL, O_SESSIONIDLE},
        {"session-spares", required_argument, NULL, O_SESSIONSPARES},
        {"broker", required_argument, NULL, O_BROKER},
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
    a->max_per_address = 512;
    a->header_timeout = 30;
    a->body_timeout = 300;
    a->max_output_kb = 8192;
    a->output_budget_mb = 1024;
    a->max_fetch_mb = 32;
    a->stream_buffer_mb = 16;
    a->stream_stall_s = 60;
    a->run_code_margin = 10;
    a->max_sessions = 1000;
    a->session_ttl = 3600;
    a->session_idle_ttl = 600;
    a->session_spares = 2;
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
        case O_NO_FORK_SERVER:
            a->no_fork_server = true;
            break;
        case O_BROKER:
            if (broker_url_parse(optarg, &a->broker_url, &err) < 0)
                rc = usage_error("--broker: %s", err.msg);
            a->broker = optarg;
            break;
        case O_DB:
            a->db_path = optarg;
            break;
        case O_IMAGE:
        case O_IMAGES_FILE:
            if (!a->images) {
                a->images = calloc((size_t)argc, sizeof(*a->images));
                a->image_is_file = calloc((size_t)argc, sizeof(*a->image_is_file));
                if (!a->images || !a->image_is_file) {
                    rc = usage_error("out of memory");
                    break;
                }
            }
            a->image_is_file[a->nimages] = c == O_IMAGES_FILE;
            a->images[a->nimages++] = optarg;
            break;
        case O_MAX_PIDS:
            if (!util_parse_u64(optarg, 1, (uint64_t)sandbox_limit_ranges[LIM_PIDS].max,
                                &a->max_pids))
                rc = usage_error("--max-pids wants an integer from 1 to %.0f, got '%s'",
                                 sandbox_limit_ranges[LIM_PIDS].max, optarg);
            break;
        case O_PIDS:
            if (!util_parse_u64(optarg, 64, 1u << 22, &a->pids))
                rc = usage_error("--pids wants an integer from 64 to half of kernel.pid_max, "
                                 "got '%s'",
                                 optarg);
            break;
        case O_MAXCONN:
            if (!util_parse_u64(optarg, 1, 1000000, &a->max_connections))
                rc = usage_error("--max-connections wants an integer from 1 to 1000000, got '%s'",
                                 optarg);
            break;
        case O_PERADDR:
            if (!util_parse_u64(optarg, 0, 1000000, &a->max_per_address))
                rc = usage_error("--max-per-address wants an integer from 0 (no limit) to "
                                 "1000000, got '%s'",
                                 optarg);
            break;
        case O_HEADERTO:
            if (!util_parse_u64(optarg, 1, 3600, &a->header_timeout))
                rc = usage_error("--header-timeout wants seconds from 1 to 3600, got '%s'", optarg);
            break;
        case O_BODYTO:
            if (!util_parse_u64(optarg, 1, 86400, &a->body_timeout))
                rc = usage_error("--body-timeout wants seconds from 1 to 86400, got '%s'", optarg);
            break;
        case O_MAXOUT:
        case O_OUTBUDGET:
        case O_MAXFETCH:
        case O_STREAMBUF:
        case O_STALL: {
            uint64_t *dst[] = {&a->max_output_kb, &a->output_budget_mb, &a->max_fetch_mb,
                               &a->stream_buffer_mb, &a->stream_stall_s};
            size_t k = (size_t)(c - O_MAXOUT);
            if (!util_parse_u64(optarg, ranges[k].min, ranges[k].max, dst[k]))
                rc = usage_error("--%s wants %s, got '%s'", ranges[k].name, ranges[k].what, optarg);
            break;
        }
        case O_RCMARGIN:
            /* the start deadline keeps 2 s of it for setup and the answer (api.c) */
            if (!util_parse_u64(optarg, 0, 3600, &a->run_code_margin) ||
                (a->run_code_margin > 0 && a->run_code_margin < 3))
                rc = usage_error("--run-code-margin wants 0 (no limit) or seconds from 3 to "
                                 "3600, got '%s'",
                                 optarg);
            break;
        case O_MAXSESSIONS:
            a->max_sessions_given = true;
            if (!util_parse_u64(optarg, 0, 1000000, &a->max_sessions))
                rc = usage_error("--max-sessions wants an integer from 0 (no sessions) to "
                                 "1000000, got '%s'",
                                 optarg);
            break;
        case O_SESSIONTTL:
        case O_SESSIONIDLE:
            if (!util_parse_u64(optarg, 1, 86400,
                                c == O_SESSIONTTL ? &a->session_ttl : &a->session_idle_ttl))
                rc = usage_error("--%s wants seconds from 1 to 86400, got '%s'",
                                 c == O_SESSIONTTL ? "session-ttl" : "session-idle-ttl", optarg);
            break;
        case O_SESSIONSPARES:
            if (!util_parse_u64(optarg, 0, 64, &a->session_spares))
                rc =
                    usage_error("--session-spares wants an integer from 0 to 64, got '%s'", optarg);
            break;
        default:
            rc = usage_error("unknown option or missing argument '%s'", argv[optind - 1]);
            break;
        }
    }
    if (rc == 0 && optind < argc)
        rc = usage_error("unexpected argument '%s'", argv[optind]);
    if (rc != 0)
        serve_args_release(a);
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

/* connection_budget(a) — raises the descriptor limit as far as the hard limit allows and
 * fits the connection limit under it, keeping 1024 descriptors (a quarter of a small limit)
 * for jobs, the library and the daemon: the default shrinks to fit, an explicit
 * --max-connections that does not fit is refused. 0, or 2 after saying why. */
#define SESSION_FDS                                                                                \
    1 /* descriptors the server holds per idle session: its sandbox's control                      \
       * socket (sandbox.c; an operation's own few come out of the 1024 kept) */

static int connection_budget(struct serve_args *a)
{
    struct rlimit nofile;
    uint64_t usable;

    if (getrlimit(RLIMIT_NOFILE, &nofile) < 0)
        return 0;
    if (nofile.rlim_cur < nofile.rlim_max) {
        struct rlimit want = {.rlim_cur = nofile.rlim_max, .rlim_max = nofile.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &want) == 0)
            nofile = want;
    }
    if (nofile.rlim_cur == RLIM_INFINITY)
        return 0;
    usable = nofile.rlim_cur >= 4096 ? nofile.rlim_cur - 1024 : nofile.rlim_cur * 3 / 4;
    /* Live sessions hold descriptors too (their sandboxes' control sockets, scratch and
     * cgroup): an explicit --max-sessions must fit with room for connections left; the
     * default takes at most half of what is usable. */
    if (a->max_sessions_given && a->max_sessions * SESSION_FDS + 64 > usable)
        return usage_error(
            "--max-sessions %llu needs %llu descriptors (%d per session); the "
            "descriptor limit (%llu, less %llu kept for jobs) leaves %llu: at most "
            "%llu sessions, or raise 'ulimit -n'",
            (unsigned long long)a->max_sessions,
            (unsigned long long)(a->max_sessions * SESSION_FDS), SESSION_FDS,
            (unsigned long long)nofile.rlim_cur, (unsigned long long)(nofile.rlim_cur - usable),
            (unsigned long long)usable, (unsigned long long)((usable - 64) / SESSION_FDS));
    if (!a->max_sessions_given && a->max_sessions * SESSION_FDS > usable / 2)
        a->max_sessions = usable / 2 / SESSION_FDS;
    usable -= a->max_sessions * SESSION_FDS;
    if (!a->max_connections)
        a->max_connections = usable < 8192 ? (usable ? usable : 1) : 8192;
    else if (a->max_connections > usable)
        return usage_error(
            "--max-connections %llu does not fit under the descriptor limit "
            "(%llu, less %llu kept for jobs): at most %llu, or raise 'ulimit -n'",
            (unsigned long long)a->max_connections, (unsigned long long)nofile.rlim_cur,
            (unsigned long long)(nofile.rlim_cur - usable), (unsigned long long)usable);
    return 0;
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

/* host_pid_max(void) — the most pids the kernel hands out: kernel.pid_max, or threads-max
 * when lower (every thread takes a pid); 32768 when neither can be read. */
static uint64_t host_pid_max(void)
{
    static const char *const files[] = {"/proc/sys/kernel/pid_max", "/proc/sys/kernel/threads-max"};
    uint64_t most = 0;

    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char buf[32];
        uint64_t v;
        if (util_read_small(files[i], buf, sizeof(buf)) > 0) {
            buf[strcspn(buf, "\n")] = '\0';
            if (util_parse_u64(buf, 1, UINT64_MAX, &v) && (most == 0 || v < most))
                most = v;
        }
    }
    return most ? most : 32768;
}

/* session_log — the sessions' log lines, through the api's log. */
static void session_log(void *ctx, const char *event, json_t *fields)
{
    api_log(ctx, event, fields);
}

/* session_output_take / _give — the sessions' downloads in the api's output budget. */
static bool session_output_take(void *ctx, uint64_t bytes)
{
    return api_output_take(ctx, bytes);
}

static void session_output_give(void *ctx, uint64_t bytes)
{
    api_output_give(ctx, bytes);
}

/* trust_setup(s, a) — what clients may ask of this host, in one place: the images they may
 * name (s->images: "host" and --image / --images-file), the pids a job may have
 * (--max-pids) and all running jobs together (--pids, well under the kernel's pid_max).
 * 0, or 2 after saying what is wrong. */
static int trust_setup(struct serve *s, struct serve_args *a)
{
    struct errbuf err = {{0}};
    uint64_t pid_max = host_pid_max();

    if (!a->pids)
        a->pids = pid_max / 4;
    if (!a->max_pids) /* 1024, or less on a small budget: a job of the cap must fit in it */
        a->max_pids = a->pids > 1024 ? 1024 : a->pids - 1;
    if (a->pids > pid_max / 2)
        return usage_error("--pids %llu is more than half of this host's pid_max (%llu)",
                           (unsigned long long)a->pids, (unsigned long long)pid_max);
    if (a->max_pids + 1 > a->pids)
        return usage_error("--max-pids %llu does not fit in --pids %llu (the budget of all "
                           "running jobs)",
                           (unsigned long long)a->max_pids, (unsigned long long)a->pids);
    if (!(s->images = image_registry_new(&s->host_img))) {
        fprintf(stderr, "crucible serve: out of memory\n");
        return 2;
    }
    for (size_t i = 0; i < a->nimages; i++) {
        int r = a->image_is_file[i] ? image_registry_add_file(s->images, a->images[i], &err)
                                    : image_registry_add(s->images, a->images[i], &err);
        if (r < 0)
            return usage_error("%s%s", a->image_is_file[i] ? "" : "--image: ", err.msg);
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
    s->sched = sched_new(s->loop, &s->rt, (unsigned)a->slots, a->memory, a->pids, a->queue, &err);
    if (!s->sched)
        goto out_error;
    s->offload =
        offload_new(s->loop, (unsigned)a->api_threads, (size_t)a->parse_budget << 20, &err);
    if (!s->offload)
        goto out_error;
    memset(&s->cfg, 0, sizeof(s->cfg));
    s->cfg.host = &s->host_img;
    s->cfg.images = s->images;
    s->cfg.max_pids = a->max_pids;
    sandbox_limits_default(&s->cfg.limits);
    if (s->cfg.limits.pids > a->max_pids)
        s->cfg.limits.pids = a->max_pids;           /* what a request that omits it gets */
    if (s->cfg.limits.output_kb > a->max_output_kb) /* the default fits the cap */
        s->cfg.limits.output_kb = a->max_output_kb;
    s->cfg.max_output_kb = a->max_output_kb;
    s->cfg.output_budget = a->output_budget_mb << 20;
    s->cfg.max_fetch_bytes = (size_t)a->max_fetch_mb << 20;
    s->cfg.stream_buffer = (size_t)a->stream_buffer_mb << 20;
    s->cfg.stream_stall_s = (double)a->stream_stall_s;
    s->cfg.run_code_margin = (double)a->run_code_margin;
    s->cfg.slot_memory_mb = a->memory / (a->slots ? a->slots : 1);
    if (a->warm && !(s->pool = pool_new(&s->rt, &s->host_img, &s->cfg.limits, (unsigned)a->warm,
                                        true, s->m, &err)))
        goto out_error;
    if (a->warm) {
        struct sandbox_limits shape = s->cfg.limits;
        shape.loopback = true;
        if (!(s->run_code_pool =
                  pool_new(&s->rt, &s->host_img, &shape, (unsigned)a->warm, true, s->m, &err)))
            goto out_error;
    }
    if (a->session_spares && a->max_sessions && !a->broker) {
        /* parse_create's defaults: the server's limits, lo up; each session sets its own
         * memory, pids and CPU on taking one (pool_take), disk and root must match */
        struct sandbox_limits shape = s->cfg.limits;
        shape.loopback = true;
        if (!(s->session_spares = pool_new(&s->rt, &s->host_img, &shape,
                                           (unsigned)a->session_spares, false, s->m, &err)))
            goto out_error;
    }
    if (a->db_path && store_open(a->db_path, true, &s->store, &err) < 0)
        goto out_error;
    s->cfg.store = s->store;
    s->cfg.offload = s->offload;
    s->cfg.trace = s->rt.trace;
    s->cfg.pool = s->pool;
    s->cfg.run_code_pool = s->run_code_pool;
    if (!a->no_fork_server && !(s->pyserver = pyserver_new(PYSERVER_AUTO, "crucible serve"))) {
        errbuf_set(&err, "out of memory");
        goto out_error;
    }
    /* Fork-server jobs made ahead, as many as the warm sandboxes (--warm; capped) */
    pyserver_set_spares(s->pyserver, (unsigned)a->warm);
    s->cfg.pyserver = s->pyserver;
    if (a->broker) {
        struct gateway_config gc = {.url = a->broker_url, .max_inflight = (size_t)a->queue};
        if (!(s->gateway = gateway_new(s->loop, &gc, &err)))
            goto out_error;
        s->cfg.gateway = s->gateway;
    }
    s->cfg.token = a->token;
    s->cfg.infra_retries = 2;
    s->cfg.max_batch = 10000;
    {
        struct api_sessions_config sc = {.rt = &s->rt,
                                         .host = &s->host_img,
                                         .images = s->images,
                                         .defaults = s->cfg.limits,
                                         .max_pids = a->max_pids,
                                         .max_output_kb = a->max_output_kb,
                                         .max_sessions = (size_t)a->max_sessions,
                                         .ttl_s = (double)a->session_ttl,
                                         .idle_ttl_s = (double)a->session_idle_ttl,
                                         .max_file_bytes = (size_t)a->max_body << 20,
                                         .spares = s->session_spares,
                                         .store = s->store};
        if (!a->broker && !(s->sessions = api_sessions_new(&sc, s->sched, s->offload, s->m))) {
            errbuf_set(&err, "out of memory");
            goto out_error;
        }
        s->cfg.sessions = s->sessions;
    }
    s->api = api_new(s->sched, s->m, &s->cfg, a->quiet ? NULL : stderr);
    if (s->api && s->sessions) {
        struct api_sessions_budget b = {s->cfg.output_budget, session_output_take,
                                        session_output_give, s->api};
        api_sessions_set_log(s->sessions, session_log, s->api);
        api_sessions_set_output_budget(s->sessions, &b);
    }
    {
        struct http_config hc = {.host = a->host,
                                 .port = (uint16_t)a->port,
                                 .max_body = (size_t)a->max_body << 20,
                                 .max_connections = (unsigned)a->max_connections,
                                 .max_per_address = (unsigned)a->max_per_address,
                                 .header_timeout_s = (unsigned)a->header_timeout,
                                 .body_timeout_s = (unsigned)a->body_timeout,
                                 .precheck = api_precheck};
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
    api_sessions_stop(s->sessions); /* sessions are destroyed here from now on */
    http_stop(s->http);       /* clients see their connections close; their jobs are cancelled */
    gateway_free(s->gateway); /* after http_stop: no request of it is left open */
    offload_free(s->offload); /* what is parsed is discarded: its clients have gone */
    sched_stop(s->sched);
    api_sessions_free(s->sessions); /* after the jobs and api workers that used them */
    pool_free(s->pool);             /* after the jobs: they hand their sandboxes back to it */
    pool_free(s->run_code_pool);
    pool_free(s->session_spares); /* after the sessions: they hand their sandboxes back to it */
    pyserver_free(s->pyserver);   /* after the jobs that use it */
    sched_free(s->sched);         /* after the pools: sandboxes of its jobs refer to its runtimes */
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
    if ((rc = connection_budget(&a)) != 0) {
        free(a.token);
        return rc;
    }
    memset(&s, 0, sizeof(s));
    s.sigfd = -1;
    if (sandbox_runtime_init(&s.rt, &err) < 0 || image_resolve("host", &s.host_img, &err) < 0) {
        fprintf(stderr, "crucible serve: %s\n", err.msg);
        serve_args_release(&a);
        return 2;
    }
    if ((rc = trust_setup(&s, &a)) != 0) {
        image_registry_free(s.images);
        sandbox_runtime_release(&s.rt);
        serve_args_release(&a);
        return rc;
    }
    s.rt.trace = getenv("CRUCIBLE_TRACE") != NULL;
    if (!a.slots)
        a.slots = s.rt.ncpu > 0 ? (uint64_t)s.rt.ncpu : 1;
    if (!a.memory)
        a.memory = default_memory_mb();
    if (a.warm == UINT64_MAX)
        a.warm = a.slots;
    if (a.broker) { /* a gateway runs no job itself: nothing to keep ready */
        a.warm = 0;
        a.session_spares = 0;
        a.max_sessions = 0;
        a.no_fork_server = true;
    }
    rc = 2;
    if (serve_start(&s, &a) == 0) {
        api_log(s.api, "listening",
                json_pack("{s:s,s:i,s:i,s:i,s:i,s:I,s:I,s:I,s:b}", "host", a.host, "port",
                          (int)http_port(s.http), "slots", (int)a.slots, "warm", (int)a.warm,
                          "queue", (int)a.queue, "memory_mb", (json_int_t)a.memory, "pids",
                          (json_int_t)a.pids, "max_pids", (json_int_t)a.max_pids, "auth",
                          a.token != NULL));
        if (loop_run(s.loop, timeout_ms, tick, &s) < 0)
            fprintf(stderr, "crucible serve: event loop failed: %s\n", strerror(errno));
        else
            rc = 0;
        api_log(s.api, "stopping", NULL);
    }
    serve_stop(&s);
    image_registry_free(s.images); /* after the jobs: they run in its images */
    sandbox_runtime_release(&s.rt);
    serve_args_release(&a);
    return rc;
}
