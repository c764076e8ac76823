/*
 * loop.h — the service's event loop: one thread, epoll, callbacks per file descriptor.
 *
 * Everything that must not block waits here: the HTTP daemon's sockets, the eventfd that
 * workers ring when a job is done, the signalfd (SIGINT/SIGTERM), timers (timerfd).
 * Callbacks run on the loop thread, one at a time.
 */
#ifndef CRUCIBLE_LOOP_H
#define CRUCIBLE_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;

/* loop_cb(arg, events) — fd is ready; events are EPOLLIN/EPOLLOUT/EPOLLHUP... bits. */
typedef void (*loop_cb)(void *arg, uint32_t events);

/* loop_new() — NULL with errno set. */
struct loop *loop_new(void);
void loop_free(struct loop *l);

/* loop_add(l, fd, events, cb, arg) — watch fd (level-triggered). 0 or -errno. */
int loop_add(struct loop *l, int fd, uint32_t events, loop_cb cb, void *arg);
/* loop_mod(l, fd, events) — change what fd is watched for. 0 or -errno. */
int loop_mod(struct loop *l, int fd, uint32_t events);
/* loop_del(l, fd) — stop watching; safe from inside a callback (even fd's own). */
void loop_del(struct loop *l, int fd);

/* loop_run(l, timeout_ms_fn, arg) — dispatches until loop_stop. Before each wait,
 * timeout_ms_fn(arg) (may be NULL) gives the longest the loop may sleep (-1: forever);
 * the loop then calls tick(arg) after every wakeup. Returns 0 or -errno. */
int loop_run(struct loop *l, int (*timeout_ms_fn)(void *), void (*tick)(void *), void *arg);

/* loop_stop(l) — loop_run returns after the current dispatch round. */
void loop_stop(struct loop *l);

#endif
