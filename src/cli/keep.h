/*
 * keep.h — `crucible keep`, a process that keeps sandboxes ready for `crucible run` on this
 * machine, and the wire between the two (docs/KEEP.md).
 *
 * A run finds the keeper's socket (keep_socket_path), checks that it and its directory are
 * its own user's and that the process listening is too, sends what it would run (program,
 * environment, limits, the image's digest) with its stdin and --file descriptors attached,
 * and waits for the verdict. The keeper takes one of its ready sandboxes (each used once,
 * exactly as a cold run's: pool.h), runs the program there as the last exec and answers with
 * the whole result record. A keeper that cannot take the run (another image, scratch size,
 * network or root, another build of crucible, too many runs at once) says so before anything
 * runs, and the run goes on cold. The record is the same either way.
 */
#ifndef CRUCIBLE_KEEP_H
#define CRUCIBLE_KEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/result.h"
#include "sandbox/sandbox.h"

/* At most this many descriptors go with one request (stdin and the --file sources): one
 * SCM_RIGHTS message. A run with more goes cold. */
#define KEEP_MAX_FDS 250

/* A request's frame, at most (argv, environment, destinations). */
#define KEEP_REQUEST_MAX (8u << 20)

/* keep_socket_path(buf, size) — the keeper's socket: $CRUCIBLE_KEEP when set ("off": none),
 * else /run/crucible/keep.sock for root and $XDG_RUNTIME_DIR/crucible/keep.sock for anyone
 * else (none without XDG_RUNTIME_DIR). false when there is none or it does not fit. */
bool keep_socket_path(char *buf, size_t size);

/* What a run asks the keeper for. */
struct keep_run {
    const char *digest; /* the image's (struct image.digest) */
    const struct sandbox_limits *limits;
    char *const *argv; /* NULL-terminated */
    char *const *env;  /* NULL-terminated, may be NULL */
    const struct sandbox_file *files;
    size_t nfiles;
    int stdin_fd;     /* -1: none */
    bool fork_server; /* as a job of the keeper's Python fork server (forkserver.h) */
};

enum keep_outcome {
    KEEP_ANSWERED, /* res holds the keeper's verdict */
    KEEP_DECLINED, /* nothing ran: no keeper, or it would not take the run (why says) */
    KEEP_FAILED,   /* the keeper took the run and did not answer: res is sandbox_error */
};

/* keep_try(path, run, stop_fd, res, why, whysize) — asks the keeper at path to run `run`.
 * stop_fd (-1: none) turning readable stops the run: the keeper is told, and its answer (the
 * run cancelled, the sandbox gone) is awaited for a few seconds. res is result_init'ed by
 * the caller. */
enum keep_outcome keep_try(const char *path, const struct keep_run *run, int stop_fd,
                           struct result *res, char *why, size_t whysize);

/* The keeper's side of the wire (cmd_keep.c). */
struct keep_request {
    char *frame; /* owns every string below */
    const char *build, *digest;
    struct sandbox_limits limits;
    char **argv, **env;
    struct sandbox_file *files;
    size_t nfiles;
    int stdin_fd; /* -1: none */
    bool fork_server;
    int fds[KEEP_MAX_FDS]; /* as received, closed by keep_request_release */
    int nfds;
};

/* keep_request_read(fd, req, why, whysize) — one request from a connection: 0, or -1 with
 * why set (another build's request, a malformed or oversized one, a read error or timeout).
 * Nothing has run then: the keeper declines with why, and the run goes on cold. */
int keep_request_read(int fd, struct keep_request *req, char *why, size_t whysize);
void keep_request_release(struct keep_request *req);

/* keep_answer(fd, res) and keep_decline(fd, why) — the keeper's reply. 0 or -errno. */
int keep_answer(int fd, const struct result *res);
int keep_decline(int fd, const char *why);

/* keep_build() — what must match between a run and its keeper: version and commit. */
const char *keep_build(void);

#endif
