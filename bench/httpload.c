/*
 * httpload — a small closed-loop HTTP/1.1 load generator for bench/serve.
 *
 *   httpload PORT PATH BODY CONCURRENCY REQUESTS_PER_CONNECTION [PAUSE_MS]
 *
 * Opens CONCURRENCY keep-alive connections to 127.0.0.1:PORT, each sending its requests
 * back to back (POST PATH with BODY as JSON) — or PAUSE_MS apart, for latency on an idle
 * server — and prints one line:
 *   requests=N ok=N rps=R mean_ms=X p50_ms=X p90_ms=X p99_ms=X
 * where ok counts 200 answers. With HTTPLOAD_KEYS=1 each request carries an Idempotency-Key
 * of its own (a cluster gateway's exactly-once path). Latencies are per request, from the first
 * byte written to the last byte of the answer read.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int port, per_conn, pause_ms;
static bool keys; /* $HTTPLOAD_KEYS=1: each request with an Idempotency-Key of its own */
static const char *path, *body;
static double *lat;
static int *status_ok;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* one_request(fd, req, len) — HTTP status, or -1 on a broken connection. */
static int one_request(int fd, const char *req, size_t len)
{
    static __thread char buf[1 << 16];
    size_t have = 0, need = 0;
    char *hdr_end = NULL;
    int status;

    if (write(fd, req, len) != (ssize_t)len)
        return -1;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
        if (n <= 0)
            return -1;
        have += (size_t)n;
        buf[have] = '\0';
        if (!hdr_end && (hdr_end = strstr(buf, "\r\n\r\n"))) {
            char *cl = strcasestr(buf, "Content-Length:");
            need = (size_t)(hdr_end + 4 - buf) + (cl ? strtoul(cl + 15, NULL, 10) : 0);
        }
        if (hdr_end && have >= need)
            break;
        if (have == sizeof(buf) - 1)
            return -1;
    }
    if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    return status;
}

static void *conn_main(void *arg)
{
    long id = (long)arg;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    char req[65536];
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    size_t len;

    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        perror("httpload: connect");
        return NULL;
    }
    for (int i = 0; i < per_conn; i++) {
        double t0;
        char key[96] = "";
        if (keys) /* a new key per request: each one a job of its own */
            snprintf(key, sizeof(key), "Idempotency-Key: load-%d-%d-%d\r\n", (int)getpid(), (int)id,
                     i);
        len = (size_t)snprintf(req, sizeof(req),
                               "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: "
                               "application/json\r\nContent-Length: %zu\r\n\r\n%s",
                               path, key, strlen(body), body);
        t0 = now();
        int st = one_request(fd, req, len);
        lat[id * per_conn + i] = now() - t0;
        status_ok[id * per_conn + i] = st == 200;
        if (st < 0)
            break;
        if (pause_ms) {
            struct timespec ts = {pause_ms / 1000, (long)(pause_ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
        }
    }
    close(fd);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int conc, total, ok = 0;
    pthread_t *th;
    double t0, wall;

    if (argc != 6 && argc != 7) {
        fprintf(stderr,
                "usage: httpload PORT PATH BODY CONCURRENCY REQUESTS_PER_CONNECTION [PAUSE_MS]\n");
        return 2;
    }
    port = atoi(argv[1]);
    path = argv[2];
    body = argv[3];
    conc = atoi(argv[4]);
    per_conn = atoi(argv[5]);
    pause_ms = argc == 7 ? atoi(argv[6]) : 0;
    keys = getenv("HTTPLOAD_KEYS") && strcmp(getenv("HTTPLOAD_KEYS"), "1") == 0;
    total = conc * per_conn;
    lat = calloc((size_t)total, sizeof(*lat));
    status_ok = calloc((size_t)total, sizeof(*status_ok));
    th = calloc((size_t)conc, sizeof(*th));
    t0 = now();
    for (long i = 0; i < conc; i++)
        pthread_create(&th[i], NULL, conn_main, (void *)i);
    for (int i = 0; i < conc; i++)
        pthread_join(th[i], NULL);
    wall = now() - t0;
    for (int i = 0; i < total; i++)
        ok += status_ok[i];
    qsort(lat, (size_t)total, sizeof(*lat), cmp);
    {
        double sum = 0;
        for (int i = 0; i < total; i++)
            sum += lat[i];
        printf("requests=%d ok=%d rps=%.1f mean_ms=%.3f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f\n",
               total, ok, total / wall, sum / total * 1e3, lat[total / 2] * 1e3,
               lat[(int)(total * 0.9)] * 1e3, lat[(int)(total * 0.99)] * 1e3);
    }
    return ok == total ? 0 : 1;
}
