/*
 * cmd_worker.c — `crucible worker`: a machine's share of a cluster (docs/CLUSTER.md).
 *
 * The worker runs a single node of its own — `crucible serve` on a loopback port, its
 * child, with the slots, pools, fork servers and images of any node — and feeds it the jobs
 * of the broker's streams (cluster/worker.h): each job is the request a gateway received,
 * sent to the node as is, and the node's answer is the gateway's answer. So a job runs in
 * a cluster exactly as it would on one machine.
 *
 * SIGTERM or SIGINT drains: no new job is taken, the running ones are answered, jobs taken
 * over but not started go back to their streams, the heartbeat is removed, then the node
 * stops. If the node dies, the worker stops taking jobs and exits 1; what it held is taken
 * over by the other workers once its heartbeat expires.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/http_client.h"
#include "cluster/worker.h"
#include "util.h"

extern char **environ;

static const char USAGE[] =
    "usage: crucible worker --broker redis://HOST[:PORT][/DB] [--slots N] [--max-attempts N]\n"
    "                       [--claim-idle S] [--heartbeat S] [-- SERVE-OPTION...]\n"
    "\n"
    "Takes jobs from the broker's streams (put there by `crucible serve --broker`) and runs\n"
    "them on a single node of its own: `crucible serve` on a loopback port, started with\n"
    "--slots N and the SERVE-OPTIONs after '--' (--image NAME=DIR, --memory MB, --warm N,\n"
    "...). The node's answer to a job is the gateway's answer to its client.\n"
    "\n"
    "  --broker URL       redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]; the password may come\n"
    "                     from $CRUCIBLE_BROKER_PASSWORD instead\n"
    "  --slots N          jobs at once (default: the number of CPUs)\n"
    "  --max-attempts N   deliveries of one job to workers that died before it is moved to\n"
    "                     the dead-letter stream crucible:dead and answered infra_error\n"
    "                     (default 3)\n"
    "  --claim-idle S     a dead worker's job is taken over after S seconds (default 5)\n"
    "  --heartbeat S      seconds between heartbeats; a worker silent for 3 is dead\n"
    "                     (default 1)\n"
    "\n"
    "SIGTERM drains the worker: running jobs finish and are answered, then it exits 0.\n";

struct node {
    pid_t pid;
    char port[8];
};

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "crucible worker: %s%s%s (see 'crucible worker --help')\n", msg,
            arg ? ": " : "", arg ? arg : "");
    return 2;
}

/* run_job — a job sent to the node as the request it was; -1 when the node is gone. */
static int run_job(void *ctx, const struct worker_job *job, struct worker_answer *ans)
{
    struct node *n = ctx;
    struct http_client_request req = {.host = "127.0.0.1",
                                      .port = n->port,
                                      .method = job->method,
                                      .target = job->target,
                                      .content_type = job->ctype,
                                      .body = job->body,
                                      .len = job->len,
                                      .timeout_s = 86400};
    struct http_client_answer a = {0};

    for (int tries = 0; tries < 3; tries++) {
        struct errbuf err = {{0}};
        if (http_client_do(&req, &a, &err) == 0) {
            ans->status = a.status;
            snprintf(ans->ctype, sizeof(ans->ctype), "%s",
                     a.content_type[0] ? a.content_type : "application/json");
            ans->body = a.body;
            ans->len = a.len;
            return 0;
        }
        fprintf(stderr, "crucible worker: job %s: the node did not answer: %s\n", job->id, err.msg);
        if (waitpid(n->pid, NULL, WNOHANG) != 0)
            return -1;
        usleep(200000);
    }
    return -1;
}

/* node_get(n, target) — the node's JSON answer to GET target, or NULL (not 200, not JSON). */
static json_t *node_get(const struct node *n, const char *target)
{
    struct http_client_request req = {
        .host = "127.0.0.1", .port = n->port, .method = "GET", .target = target, .timeout_s = 10};
    struct http_client_answer a = {0};
    struct errbuf err = {{0}};
    json_t *j = NULL;

    if (http_client_do(&req, &a, &err) == 0 && a.status == 200)
        j = json_loadb(a.body, a.len, 0, NULL);
    free(a.body);
    return j;
}

/* node_capacity(n, &job_memory_mb) — the names its /healthz?images=1 says a job may give as
 * "image" (a JSON array, ["host"] when it could not be asked), and the most memory it takes
 * for one job (0: unknown). */
static json_t *node_capacity(const struct node *n, uint64_t *job_memory_mb)
{
    json_t *h = node_get(n, "/healthz?images=1"), *images = json_object_get(h, "images");
    json_int_t mb = json_integer_value(json_object_get(h, "job_memory_mb"));

    images = json_is_array(images) ? json_incref(images) : json_pack("[s]", "host");
    *job_memory_mb = mb > 0 ? (uint64_t)mb : 0;
    json_decref(h);
    return images;
}

/* node_sessions(ctx) — the ids of the sessions the node holds (its GET /v1/sessions), for
 * re-pinning them when the broker lost their pins; NULL when it could not be asked. */
static json_t *node_sessions(void *ctx)
{
    json_t *list = node_get(ctx, "/v1/sessions"), *ids = list ? json_array() : NULL, *s;
    size_t i;

    json_array_foreach(json_object_get(list, "sessions"), i, s)
    {
        if (json_is_string(json_object_get(s, "id")))
            json_array_append(ids, json_object_get(s, "id"));
    }
    json_decref(list);
    return ids;
}

/* memory_mb() — the machine's memory (MemTotal), for the heartbeat; 0 when unknown. */
static long memory_mb(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    long kb = 0;

    if (f) {
        if (fscanf(f, "MemTotal: %ld kB", &kb) != 1)
            kb = 0;
        fclose(f);
    }
    return kb / 1024;
}

/* start_node(slots, extra, nextra, n) — `crucible serve` on a loopback port; 0 once
 * it listens. */
static int start_node(unsigned slots, char **extra, int nextra, struct node *n)
{
    char dir[] = "/tmp/crucible-worker-XXXXXX", portfile[64], slots_s[16];
    char **argv = calloc((size_t)nextra + 12, sizeof(*argv));
    int argc = 0, rc = -1;
    pid_t parent = getpid();

    if (!argv || !mkdtemp(dir)) {
        free(argv);
        return -1;
    }
    snprintf(portfile, sizeof(portfile), "%s/port", dir);
    snprintf(slots_s, sizeof(slots_s), "%u", slots);
    argv[argc++] = "crucible";
    argv[argc++] = "serve";
    argv[argc++] = "--listen";
    argv[argc++] = "127.0.0.1:0";
    argv[argc++] = "--port-file";
    argv[argc++] = portfile;
    argv[argc++] = "--slots";
    argv[argc++] = slots_s;
    for (int i = 0; i < nextra; i++)
        argv[argc++] = extra[i];
    argv[argc] = NULL;
    /* The node ends with the worker, however the worker ends (SIGKILL too): its jobs are
     * taken over by other workers, and a node without its worker would only hold memory. */
    n->pid = fork();
    if (n->pid < 0) {
        fprintf(stderr, "crucible worker: cannot start its node: %s\n", strerror(errno));
        goto out;
    }
    if (n->pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
            _exit(127);
        execve("/proc/self/exe", argv, environ);
        fprintf(stderr, "crucible worker: cannot start its node: %s\n", strerror(errno));
        _exit(127);
    }
    for (int i = 0; i < 600; i++) { /* up to a minute: the node builds its pools */
        FILE *f = fopen(portfile, "r");
        if (f) {
            bool got = fgets(n->port, sizeof(n->port), f) != NULL;
            fclose(f);
            n->port[strcspn(n->port, "\n")] = '\0';
            if (got && n->port[0]) {
                rc = 0;
                break;
            }
        }
        if (waitpid(n->pid, NULL, WNOHANG) != 0) {
            fprintf(stderr, "crucible worker: its node exited at start (see its message above)\n");
            n->pid = 0;
            break;
        }
        usleep(100000);
    }
out:
    unlink(portfile);
    rmdir(dir);
    free(argv);
    return rc;
}

static void stop_node(struct node *n)
{
    if (n->pid <= 0)
        return;
    kill(n->pid, SIGTERM);
    waitpid(n->pid, NULL, 0);
    n->pid = 0;
}

int cmd_worker(int argc, char **argv)
{
    static const struct option opts[] = {{"broker", required_argument, NULL, 'b'},
                                         {"slots", required_argument, NULL, 's'},
                                         {"max-attempts", required_argument, NULL, 'a'},
                                         {"claim-idle", required_argument, NULL, 'c'},
                                         {"heartbeat", required_argument, NULL, 'H'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    struct worker_config cfg = {.max_attempts = 3, .claim_idle_s = 5, .heartbeat_s = 1};
    struct errbuf err = {{0}};
    const char *broker = NULL;
    struct node node = {0};
    struct worker *w;
    sigset_t sigs;
    int c, sfd, rc = 0;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    char host[64] = "";
    json_t *cap, *images;
    const char **names = NULL;

    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        uint64_t v;
        switch (c) {
        case 'b':
            broker = optarg;
            break;
        case 's':
            if (!util_parse_u64(optarg, 1, 1024, &v))
                return usage_error("--slots takes a whole number 1..1024", optarg);
            cfg.slots = (unsigned)v;
            break;
        case 'a':
            if (!util_parse_u64(optarg, 1, 100, &v))
                return usage_error("--max-attempts takes a whole number 1..100", optarg);
            cfg.max_attempts = (unsigned)v;
            break;
        case 'c':
            if (!util_parse_double(optarg, 0.1, 86400, &cfg.claim_idle_s))
                return usage_error("--claim-idle takes seconds, 0.1..86400", optarg);
            break;
        case 'H':
            if (!util_parse_double(optarg, 0.1, 3600, &cfg.heartbeat_s))
                return usage_error("--heartbeat takes seconds, 0.1..3600", optarg);
            break;
        case 'h':
            fputs(USAGE, stdout);
            return 0;
        default:
            return usage_error("unknown option or missing argument", NULL);
        }
    }
    if (!broker)
        return usage_error("--broker redis://HOST[:PORT] is required", NULL);
    if (broker_url_parse(broker, &cfg.url, &err) < 0)
        return usage_error(err.msg, NULL);
    if (!cfg.slots)
        cfg.slots = ncpu > 0 ? (unsigned)ncpu : 1;

    /* Signals are read from a descriptor, blocked once the node runs (it keeps the mask
     * it was started with: none blocked). */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGCHLD);
    if (start_node(cfg.slots, argv + optind, argc - optind, &node) < 0) {
        stop_node(&node);
        return 2;
    }
    sigprocmask(SIG_BLOCK, &sigs, NULL);
    if ((sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
        stop_node(&node);
        return 2;
    }
    gethostname(host, sizeof(host) - 1);
    images = node_capacity(&node, &cfg.job_memory_mb);
    if ((names = calloc(json_array_size(images) + 1, sizeof(*names))))
        for (size_t i = 0; i < json_array_size(images); i++)
            if (json_is_string(json_array_get(images, i)))
                names[cfg.nimages++] = json_string_value(json_array_get(images, i));
    cfg.images = names;
    cap = json_pack("{s:s,s:i,s:I,s:s,s:s,s:O,s:I,s:I}", "host", host, "slots", (int)cfg.slots,
                    "pid", (json_int_t)getpid(), "version", CRUCIBLE_VERSION, "node_port",
                    node.port, "images", images, "memory_mb", (json_int_t)memory_mb(),
                    "job_memory_mb", (json_int_t)cfg.job_memory_mb);
    cfg.capacity = cap ? json_dumps(cap, JSON_COMPACT) : NULL;
    json_decref(cap);
    cfg.run = run_job;
    cfg.sessions = node_sessions;
    cfg.ctx = &node;
    if (!(w = worker_start(&cfg, &err))) {
        fprintf(stderr, "crucible worker: %s\n", err.msg);
        stop_node(&node);
        free((char *)cfg.capacity);
        free(names);
        json_decref(images);
        return 2;
    }
    {
        char where[320];
        broker_url_show(&cfg.url, where, sizeof(where));
        fprintf(stderr, "crucible worker: %s taking jobs from %s with %u slots (node on port %s)\n",
                worker_name(w), where, cfg.slots, node.port);
    }
    for (;;) {
        struct signalfd_siginfo si;
        struct timeval tv = {0, 500000};
        fd_set fds;

        FD_ZERO(&fds);
        FD_SET(sfd, &fds);
        if (select(sfd + 1, &fds, NULL, NULL, &tv) > 0 &&
            read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) && si.ssi_signo != SIGCHLD) {
            fprintf(stderr, "crucible worker: %s: draining\n", strsignal((int)si.ssi_signo));
            break;
        }
        if (waitpid(node.pid, NULL, WNOHANG) != 0) {
            fprintf(stderr, "crucible worker: its node exited; stopping (the jobs it held are "
                            "taken over by other workers)\n");
            node.pid = 0;
            rc = 1;
            break;
        }
        if (worker_failed(w)) {
            fprintf(stderr, "crucible worker: its node stopped answering; stopping\n");
            rc = 1;
            break;
        }
    }
    worker_drain(w);
    {
        struct worker_stats st;
        worker_stats(w, &st);
        fprintf(stderr,
                "crucible worker: stopped: %llu jobs answered, %llu taken over, %llu moved to "
                "the dead-letter stream, %llu answered by an earlier run\n",
                (unsigned long long)st.done, (unsigned long long)st.reclaimed,
                (unsigned long long)st.dead_lettered, (unsigned long long)st.superseded);
    }
    worker_free(w);
    stop_node(&node);
    close(sfd);
    free((char *)cfg.capacity);
    free(names);
    json_decref(images);
    return rc;
}
