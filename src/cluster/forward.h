/*
 * forward.h — the API's routes on a gateway (`crucible serve --broker`, docs/CLUSTER.md): what
 * each request needs before gateway.h forwards it — its stream (priority), its session's
 * worker, its Idempotency-Key — and the one thing a worker cannot do: a verification by
 * task_id, whose task and outcome live in the gateway's task library (--db). The gateway
 * loads the task, sends it inline, and records the worker's verdict in the library before it
 * answers, adding "recorded" and "model" as a single node does.
 *
 * Both calls run on the loop thread and return 0 when the request was forwarded (the
 * gateway answers it, and counts it, later), or the status it was answered with now.
 */
#ifndef CRUCIBLE_FORWARD_H
#define CRUCIBLE_FORWARD_H

#include "cluster/gateway.h"
#include "service/http.h"

struct store;

struct forward_config {
    struct gateway *gateway;
    struct store *store; /* the task library (--db), or NULL */
};

/* forward_job(cfg, r, route) — POST /v1/run, /v1/verify, /v1/batch, /run_code. */
unsigned forward_job(const struct forward_config *cfg, struct http_request *r, const char *route);

/* forward_session(cfg, r, &route) — a /v1/sessions request; route: its name for the counters
 * ("/v1/sessions/{id}/exec"...). */
unsigned forward_session(const struct forward_config *cfg, struct http_request *r,
                         const char **route);

#endif
