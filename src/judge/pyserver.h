/*
 * pyserver.h — the Python fork server that verify's runs use (forkserver.h), chosen
 * automatically: started on the first run that can use it, shared by every thread, given up
 * (with one line on stderr) where it cannot run, and restarted when it fails.
 *
 * A run can use it when it is an assert task's run in Python on the host image, with no
 * compile step and no writable root (verify.c decides). Every other run, and every run once
 * the fork server is off, takes the cold path; so does a run whose job could not be made (the
 * run is retried cold at once: the verdict never depends on which path was there).
 */
#ifndef CRUCIBLE_PYSERVER_H
#define CRUCIBLE_PYSERVER_H

#include "util.h"

#include <stdbool.h>
#include <stdint.h>

struct forkserver;
struct image;

enum pyserver_mode {
    PYSERVER_OFF,     /* never (--no-fork-server) */
    PYSERVER_AUTO,    /* when it can start; the cold path when it cannot (the default) */
    PYSERVER_REQUIRED /* --fork-server: pyserver_start must succeed */
};

struct pyserver;

/* pyserver_new(mode, who) — a fork server not started yet; who prefixes its one stderr line
 * ("crucible eval"). NULL when out of memory. */
struct pyserver *pyserver_new(enum pyserver_mode mode, const char *who);

/* pyserver_set_spares(ps, n) — every fork server it starts keeps n jobs made ahead
 * (forkserver_set_spares; capped there): a caller running N runs at once sets N. Before the
 * first run; NULL is a no-op. */
void pyserver_set_spares(struct pyserver *ps, unsigned n);

/* pyserver_start(ps, err) — starts it now (for PYSERVER_REQUIRED, before any run). 0, or
 * -errno with err set. */
int pyserver_start(struct pyserver *ps, struct errbuf *err);

/* pyserver_get(ps, img) — the fork server for a run on img, started on first use; NULL when
 * ps is NULL or off, img is not the host image, or it cannot run here. Thread-safe. The
 * pointer stays valid until pyserver_free (a failed one is kept, not stopped, until then). */
struct forkserver *pyserver_get(struct pyserver *ps, const struct image *img);

/* pyserver_failed(ps, fs, why) — a job of fs could not be made: fs is set aside and a new
 * one started on the next pyserver_get, up to a few times; then the fork server is off. */
void pyserver_failed(struct pyserver *ps, struct forkserver *fs, const char *why);

struct pyserver_stats {
    bool running;
    uint64_t starts, failures;
};
void pyserver_stats(struct pyserver *ps, struct pyserver_stats *st);

/* pyserver_free(ps) — stops every fork server it started; NULL is a no-op. */
void pyserver_free(struct pyserver *ps);

#endif
