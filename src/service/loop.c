/*
 * loop.c — epoll dispatch (see loop.h). Watches live in a small array indexed by slot; the
 * epoll data carries the slot and a generation, so an event for a watch removed earlier in
 * the same round is recognised and dropped.
 */
#include "service/loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

struct watch {
    int fd; /* -1: free */
    uint32_t gen;
    loop_cb cb;
    void *arg;
};

struct loop {
    int epfd;
    bool stop;
    struct watch *w;
    size_t nw;
};

struct loop *loop_new(void)
{
    struct loop *l = calloc(1, sizeof(*l));

    if (!l)
        return NULL;
    l->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (l->epfd < 0) {
        free(l);
        return NULL;
    }
    return l;
}

void loop_free(struct loop *l)
{
    if (!l)
        return;
    close(l->epfd);
    free(l->w);
    free(l);
}

static uint64_t pack(size_t slot, uint32_t gen)
{
    return ((uint64_t)gen << 32) | (uint64_t)slot;
}

static struct watch *find(struct loop *l, int fd)
{
    for (size_t i = 0; i < l->nw; i++)
        if (l->w[i].fd == fd)
            return &l->w[i];
    return NULL;
}

int loop_add(struct loop *l, int fd, uint32_t events, loop_cb cb, void *arg)
{
    struct epoll_event ev = {.events = events};
    size_t slot = l->nw;

    for (size_t i = 0; i < l->nw; i++)
        if (l->w[i].fd < 0) {
            slot = i;
            break;
        }
    if (slot == l->nw) {
        struct watch *nw = realloc(l->w, (l->nw + 1) * sizeof(*nw));
        if (!nw)
            return -ENOMEM;
        l->w = nw;
        l->w[l->nw].gen = 0;
        l->nw++;
    }
    l->w[slot].fd = fd;
    l->w[slot].gen++;
    l->w[slot].cb = cb;
    l->w[slot].arg = arg;
    ev.data.u64 = pack(slot, l->w[slot].gen);
    if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
        l->w[slot].fd = -1;
        return -errno;
    }
    return 0;
}

int loop_mod(struct loop *l, int fd, uint32_t events)
{
    struct watch *w = find(l, fd);
    struct epoll_event ev = {.events = events};

    if (!w)
        return -ENOENT;
    ev.data.u64 = pack((size_t)(w - l->w), w->gen);
    return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

void loop_del(struct loop *l, int fd)
{
    struct watch *w = find(l, fd);

    if (!w)
        return;
    (void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
    w->fd = -1;
    w->gen++;
}

int loop_run(struct loop *l, int (*timeout_ms_fn)(void *), void (*tick)(void *), void *arg)
{
    struct epoll_event evs[64];

    l->stop = false;
    while (!l->stop) {
        int ms = timeout_ms_fn ? timeout_ms_fn(arg) : -1;
        int n = epoll_wait(l->epfd, evs, 64, ms);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        for (int i = 0; i < n; i++) {
            size_t slot = (size_t)(evs[i].data.u64 & 0xffffffffu);
            uint32_t gen = (uint32_t)(evs[i].data.u64 >> 32);
            if (slot >= l->nw || l->w[slot].fd < 0 || l->w[slot].gen != gen)
                continue; /* removed earlier in this round */
            l->w[slot].cb(l->w[slot].arg, evs[i].events);
        }
        if (tick)
            tick(arg);
    }
    return 0;
}

void loop_stop(struct loop *l)
{
    l->stop = true;
}
