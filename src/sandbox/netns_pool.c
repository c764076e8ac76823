/*
 * netns_pool.c — network namespaces a fork server's zygote keeps for the next job (see
 * netns_pool.h).
 */
#include "sandbox/netns_pool.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATE_MAX (32 << 10) /* about 9 KiB here: sockstat, snmp, netstat and snmp6 together */

/* What a job's namespace shows of its use: the per-namespace socket counts of sockstat and
 * sockstat6 (its memory figures are the machine's, so they are left out), and every SNMP
 * counter. */
static const struct {
    const char *path;
    bool counts_only; /* only the "used", "inuse" and "tw" figures */
} state_files[] = {
    {"/proc/self/net/sockstat", true}, {"/proc/self/net/sockstat6", true},
    {"/proc/self/net/snmp", false},    {"/proc/self/net/netstat", false},
    {"/proc/self/net/snmp6", false},
};

/* append_counts(out, len, text) — of "PROTO: key n key n...\n" lines, the keys that count
 * sockets of this namespace, with their figures. */
static void append_counts(char *out, size_t *len, char *text)
{
    char *save = NULL;

    for (char *tok = strtok_r(text, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
        bool label = tok[strlen(tok) - 1] == ':'; /* "TCP:" */
        bool count =
            strcmp(tok, "used") == 0 || strcmp(tok, "inuse") == 0 || strcmp(tok, "tw") == 0;
        char *fig = count ? strtok_r(NULL, " \n", &save) : NULL;
        int n = label || count
                    ? snprintf(out + *len, STATE_MAX - *len, "%s %s\n", tok, fig ? fig : "")
                    : 0;
        if (n > 0 && (size_t)n < STATE_MAX - *len)
            *len += (size_t)n;
    }
}

/* state_here(&state, &len) — the state (see state_files) of the caller's namespace. 0 or
 * -errno. */
static int state_here(char **state, size_t *len)
{
    char *out = malloc(STATE_MAX);
    int r = 0;

    *len = 0;
    if (!out)
        return -ENOMEM;
    for (size_t i = 0; r == 0 && i < sizeof(state_files) / sizeof(state_files[0]); i++) {
        int f = open(state_files[i].path, O_RDONLY | O_CLOEXEC);
        char *text = NULL;
        size_t n = 0;
        if (f < 0) {
            r = errno == ENOENT ? 0 : -errno; /* no IPv6 here: no sockstat6 nor snmp6 */
            continue;
        }
        r = util_read_fd(f, &text, &n, STATE_MAX);
        close(f);
        if (r == 0 && state_files[i].counts_only) {
            append_counts(out, len, text);
        } else if (r == 0 && n <= STATE_MAX - *len) {
            memcpy(out + *len, text, n);
            *len += n;
        } else if (r == 0) {
            r = -EFBIG;
        }
        free(text);
    }
    if (r < 0) {
        free(out);
        *len = 0;
        return r;
    }
    *state = realloc(out, *len ? *len : 1) ?: out;
    return 0;
}

/* entry_drop(e) — the entry's namespace let go (the kernel frees it with its last user). */
static void entry_drop(struct netns_entry *e)
{
    if (e->fd >= 0)
        close(e->fd);
    free(e->state);
    memset(e, 0, sizeof(*e));
    e->fd = -1;
}

void netns_pool_init(struct netns_pool *p)
{
    memset(p, 0, sizeof(*p));
    for (size_t i = 0; i < NETNS_POOL_MAX; i++)
        p->e[i].fd = -1;
    p->own = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
}

int netns_pool_enter(struct netns_pool *p)
{
    struct netns_entry *e = NULL;

    if (p->own < 0)
        return -1;
    for (int i = 0; i < NETNS_POOL_MAX; i++) {
        if (p->e[i].fd >= 0 && p->e[i].job == 0) {
            if (setns(p->e[i].fd, CLONE_NEWNET) == 0)
                return i;
            entry_drop(&p->e[i]);
        }
        if (!e && p->e[i].fd < 0)
            e = &p->e[i];
    }
    if (!e || unshare(CLONE_NEWNET) < 0)
        return -1; /* the pool is full (or no new one here): the clone makes it */
    e->fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    if (e->fd < 0 || state_here(&e->state, &e->len) < 0) {
        entry_drop(e);
        netns_pool_leave(p);
        return -1;
    }
    return (int)(e - p->e);
}

void netns_pool_leave(struct netns_pool *p)
{
    if (setns(p->own, CLONE_NEWNET) < 0)
        _exit(1);
}

void netns_pool_track(struct netns_pool *p, pid_t pid, int entry)
{
    if (entry >= 0 && entry < NETNS_POOL_MAX && pid > 0)
        p->e[entry].job = pid; /* else: idle, for the next job */
}

void netns_pool_ended(struct netns_pool *p, pid_t pid)
{
    for (size_t i = 0; i < NETNS_POOL_MAX; i++) {
        struct netns_entry *e = &p->e[i];
        char *now = NULL;
        size_t len = 0;
        bool same;

        if (e->fd < 0 || e->job != pid)
            continue;
        if (setns(e->fd, CLONE_NEWNET) < 0) {
            entry_drop(e);
            return;
        }
        same = state_here(&now, &len) == 0 && len == e->len && memcmp(now, e->state, len) == 0;
        netns_pool_leave(p);
        if (same) {
            e->job = 0; /* unchanged: kept for the next job */
        } else {
            entry_drop(e);
        }
        free(now);
        return;
    }
}
