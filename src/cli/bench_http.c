/*
 * bench_http.c — the cases of `crucible bench` (bench.h) that ask a `crucible serve`, started
 * on a loopback port for the case's turn of each round (default slots, warm pool and fork
 * server) and stopped after it:
 *   http           POST /v1/run of /bin/true;
 *   run_code       POST /run_code of a small Python program with a test (SandboxFusion's
 *                  request, verl's path): a job of the Python fork server;
 *   run_code_warm  the same with "fork_server": false: python3 started in a warm sandbox.
 *
 * A sample is one whole request as a client sees it: connect, send, the job on the server (a
 * warm sandbox when one is ready), the answer read to its end (http_client.h: one connection
 * per request). Requests are 20 ms apart, untimed, so that the pool has refilled between them:
 * the latency of the warm path, not of a queue. The machine idles in those 20 ms, and its first
 * steps after them cost more than back to back: bare_paused (bench_spawn.c) is bare after the
 * same pause, the like-for-like base of http.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/bench.h"
#include "cli/http_client.h"

#define HTTP_START_S   20.0 /* for the server to write its port */
#define HTTP_TIMEOUT_S 30.0 /* for one request */

/* The /run_code program: a function and an assert on it, as a code model's answer is tested. */
#define RUN_CODE_BODY(FS)                                                                          \
    "{\"language\":\"python\",\"code\":\"def f(x):\\n    return x * x\\nassert f(3) == 9\\n"       \
    "print('ok')\\n\"" FS "}"

struct http_case {
    const char *target, *body, *want; /* the request, and what its answer must hold */
    pid_t server;
    char port[16];
    char port_file[4096];
    char log[4096];
};

/* server_stop(h) — SIGTERM, then SIGKILL if it has not ended after 10 s; reaps it. */
static void server_stop(struct http_case *h)
{
    int status;

    if (h->server <= 0)
        return;
    kill(h->server, SIGTERM);
    for (int i = 0; i < 1000; i++) {
        if (waitpid(h->server, &status, WNOHANG) != 0)
            goto out;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    kill(h->server, SIGKILL);
    waitpid(h->server, &status, 0);
out:
    h->server = 0;
}

/* server_start(env, h, err) — spawns the server and waits for its port. 0 or -errno. */
static int server_start(const struct bench_env *env, struct http_case *h, struct errbuf *err)
{
    char *argv[] = {(char *)env->self, "serve",      "--listen", "127.0.0.1:0",
                    "--port-file",     h->port_file, "--quiet",  NULL};
    double deadline = util_now() + HTTP_START_S;
    int r;

    unlink(h->port_file);
    if ((r = bench_spawn(argv, NULL, NULL, NULL, h->log, &h->server)) < 0)
        return errbuf_set(err, "cannot start 'crucible serve': %s", strerror(-r)), r;
    while (util_now() < deadline) {
        int status;
        ssize_t n = util_read_small(h->port_file, h->port, sizeof(h->port));
        if (n > 0 && h->port[n - 1] == '\n') {
            h->port[n - 1] = '\0';
            return 0;
        }
        if (waitpid(h->server, &status, WNOHANG) == h->server) {
            h->server = 0;
            return errbuf_set(err, "'crucible serve' ended before listening (its log: %s)", h->log),
                   -EIO;
        }
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    server_stop(h);
    return errbuf_set(err, "'crucible serve' wrote no port in %.0f s", HTTP_START_S), -ETIMEDOUT;
}

/* case_open(env, state, target, body, want, err) — a server for one case's turn. */
static int case_open(const struct bench_env *env, void **state, const char *target,
                     const char *body, const char *want, struct errbuf *err)
{
    struct http_case *h = calloc(1, sizeof(*h));
    int r;

    if (!h)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    h->target = target;
    h->body = body;
    h->want = want;
    snprintf(h->port_file, sizeof(h->port_file), "%s/serve.port", env->scratch);
    snprintf(h->log, sizeof(h->log), "%s/serve.log", env->scratch);
    if ((r = server_start(env, h, err)) < 0) {
        free(h);
        return r;
    }
    *state = h;
    return 0;
}

static int http_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    return case_open(env, state, "/v1/run", "{\"command\":[\"/bin/true\"]}", "\"status\":\"ok\"",
                     err);
}

static int http_sample(void *state, double *ms, struct errbuf *err);
static void http_close(void *state);

/* run_code_open(…) — as case_open, once a Python program of /v1/run has answered from the
 * fork server: where it cannot run (no cgroups, no libpython), the server would run every
 * program in a warm sandbox, and this case is skipped with that reason. */
static int run_code_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    struct http_case *h;
    double ms;
    int r;

    if ((r = case_open(env, state, "/v1/run", "{\"language\":\"python\",\"code\":\"pass\"}",
                       "\"path\":\"fork_server\"", err)) < 0)
        return r;
    h = *state;
    if ((r = http_sample(h, &ms, err)) != 0) {
        char why[sizeof(err->msg)];
        snprintf(why, sizeof(why), "%s", err->msg);
        http_close(h);
        *state = NULL;
        errbuf_set(err, "the server's Python fork server does not run here (%s)", why);
        return -ENOTSUP;
    }
    h->target = "/run_code";
    h->body = RUN_CODE_BODY("");
    h->want = "\"status\":\"Success\"";
    return 0;
}

static int run_code_warm_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    return case_open(env, state, "/run_code", RUN_CODE_BODY(",\"fork_server\":false"),
                     "\"status\":\"Success\"", err);
}

static int http_sample(void *state, double *ms, struct errbuf *err)
{
    struct http_case *h = state;
    struct http_client_request req = {
        .host = "127.0.0.1",
        .port = h->port,
        .method = "POST",
        .target = h->target,
        .content_type = "application/json",
        .body = h->body,
        .len = strlen(h->body),
        .timeout_s = HTTP_TIMEOUT_S,
    };
    struct http_client_answer ans = {0};
    double t0;
    int r;

    nanosleep(&(struct timespec){0, BENCH_HTTP_PAUSE_MS * 1000 * 1000}, NULL);
    t0 = util_now();
    r = http_client_do(&req, &ans, err);
    *ms = (util_now() - t0) * 1e3;
    if (r < 0)
        return r;
    if (ans.status != 200 || !strstr(ans.body, h->want)) {
        errbuf_set(err, "POST %s answered %u: %.200s", h->target, ans.status, ans.body);
        r = 1;
    }
    free(ans.body);
    return r;
}

static void http_close(void *state)
{
    struct http_case *h = state;

    server_stop(h);
    free(h);
}

const struct bench_case bench_case_http = {
    .name = "http",
    .what = "POST /v1/run of /bin/true to `crucible serve` on loopback, request to answer",
    .ratio = "bare",
    .open = http_open,
    .sample = http_sample,
    .close = http_close,
};

const struct bench_case bench_case_run_code = {
    .name = "run_code",
    .what = "POST /run_code of a Python function and its assert (a fork-server job), request to "
            "answer",
    .ratio = "python_bare",
    .optional = true,
    .open = run_code_open,
    .sample = http_sample,
    .close = http_close,
};

const struct bench_case bench_case_run_code_warm = {
    .name = "run_code_warm",
    .what = "the same with \"fork_server\": false: python3 started in a warm sandbox",
    .ratio = "python_bare",
    .open = run_code_warm_open,
    .sample = http_sample,
    .close = http_close,
};
