/*
 * bench_http.c — the `http` case of `crucible bench` (bench.h): POST /v1/run of /bin/true to a
 * `crucible serve` this case starts on a loopback port for its turn of each round (default
 * slots and warm pool) and stops after it.
 *
 * A sample is one whole request as a client sees it: connect, send, the job on the server (a
 * warm sandbox when one is ready), the answer read to its end (http_client.h: one connection
 * per request). Requests are 20 ms apart, untimed, so that the pool has refilled between them:
 * the latency of the warm path, not of a queue.
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

#define HTTP_PAUSE_MS  20
#define HTTP_START_S   20.0 /* for the server to write its port */
#define HTTP_TIMEOUT_S 30.0 /* for one request */

struct http_case {
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

static int http_open(const struct bench_env *env, void **state, struct errbuf *err)
{
    struct http_case *h = calloc(1, sizeof(*h));
    int r;

    if (!h)
        return errbuf_set(err, "out of memory"), -ENOMEM;
    snprintf(h->port_file, sizeof(h->port_file), "%s/serve.port", env->scratch);
    snprintf(h->log, sizeof(h->log), "%s/serve.log", env->scratch);
    if ((r = server_start(env, h, err)) < 0) {
        free(h);
        return r;
    }
    *state = h;
    return 0;
}

static int http_sample(void *state, double *ms, struct errbuf *err)
{
    static const char body[] = "{\"command\":[\"/bin/true\"]}";
    struct http_case *h = state;
    struct http_client_request req = {
        .host = "127.0.0.1",
        .port = h->port,
        .method = "POST",
        .target = "/v1/run",
        .content_type = "application/json",
        .body = body,
        .len = sizeof(body) - 1,
        .timeout_s = HTTP_TIMEOUT_S,
    };
    struct http_client_answer ans = {0};
    double t0;
    int r;

    nanosleep(&(struct timespec){0, HTTP_PAUSE_MS * 1000 * 1000}, NULL);
    t0 = util_now();
    r = http_client_do(&req, &ans, err);
    *ms = (util_now() - t0) * 1e3;
    if (r < 0)
        return r;
    if (ans.status != 200 || !strstr(ans.body, "\"status\":\"ok\"")) {
        errbuf_set(err, "POST /v1/run answered %u: %.200s", ans.status, ans.body);
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
