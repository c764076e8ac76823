/*
 * fleet — simulated crucible workers for bench/cluster: how far one gateway and one Redis go
 * when the machines behind them are many. Each simulated worker is a thread with its own
 * connection, in the consumer group like a real worker, with its own heartbeat; it takes a
 * job, sleeps instead of running it, answers it on the job's reply stream with a canned
 * /v1/run record, then acknowledges and deletes it — the same Redis traffic per job as
 * `crucible worker` (src/cluster/worker.c), without the sandbox.
 *
 *   fleet REDIS_PORT WORKERS JOB_MS
 *
 * Runs until SIGTERM or SIGINT, then prints "jobs=N" (answered) and removes its heartbeats.
 */
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int port, job_ms;
static atomic_long jobs;
static atomic_bool stop;

static const char *const RECORD =
    "{\"status\":\"ok\",\"exit_code\":0,\"signal\":null,\"limit\":null,\"cpu_time\":0.0,"
    "\"wall_time\":0.0,\"memory_kb\":0,\"stdout\":\"\",\"stderr\":\"\",\"message\":\"simulated\"}";

static const char *field(redisReply *f, const char *name)
{
    for (size_t i = 0; i + 1 < f->elements; i += 2)
        if (strcmp(f->element[i]->str, name) == 0)
            return f->element[i + 1]->str;
    return "";
}

static void *worker(void *arg)
{
    long n = (long)arg;
    char name[64], key[96];
    struct timeval tv = {5, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    redisReply *r;

    if (!c || c->err) {
        fprintf(stderr, "fleet: cannot connect\n");
        return NULL;
    }
    snprintf(name, sizeof(name), "sim-%d-%ld", (int)getpid(), n);
    snprintf(key, sizeof(key), "crucible:worker:%s", name);
    freeReplyObject(
        redisCommand(c, "XGROUP CREATE crucible:jobs:normal crucible-workers 0 MKSTREAM"));
    while (!stop) {
        freeReplyObject(redisCommand(c, "SET %s {\"simulated\":true} PX 5000", key));
        r = redisCommand(c,
                         "XREADGROUP GROUP crucible-workers %s COUNT 1 BLOCK 1000 STREAMS "
                         "crucible:jobs:normal >",
                         name);
        if (!r)
            break;
        if (r->type == REDIS_REPLY_ARRAY && r->elements == 1) {
            redisReply *e = r->element[0]->element[1]->element[0], *f = e->element[1];
            if (job_ms)
                usleep((useconds_t)job_ms * 1000);
            freeReplyObject(redisCommand(c,
                                         "XADD %s * id %s seq %s status 200 ctype "
                                         "application/json body %s worker %s",
                                         field(f, "reply"), field(f, "id"), field(f, "seq"), RECORD,
                                         name));
            freeReplyObject(redisCommand(c, "XACK crucible:jobs:normal crucible-workers %s",
                                         e->element[0]->str));
            freeReplyObject(redisCommand(c, "XDEL crucible:jobs:normal %s", e->element[0]->str));
            jobs++;
        }
        freeReplyObject(r);
    }
    freeReplyObject(redisCommand(c, "DEL %s", key));
    redisFree(c);
    return NULL;
}

static void on_signal(int sig)
{
    (void)sig;
    stop = true;
}

int main(int argc, char **argv)
{
    pthread_attr_t attr;
    pthread_t *t;
    int n;

    if (argc != 4 || (port = atoi(argv[1])) <= 0 || (n = atoi(argv[2])) <= 0 ||
        (job_ms = atoi(argv[3])) < 0) {
        fprintf(stderr, "usage: fleet REDIS_PORT WORKERS JOB_MS\n");
        return 2;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 << 10);
    t = calloc((size_t)n, sizeof(*t));
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], &attr, worker, (void *)i);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("jobs=%ld\n", (long)jobs);
    free(t);
    return 0;
}
