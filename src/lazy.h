/*
 * lazy.h — shared libraries loaded on first use rather than at every start of the binary.
 *
 * Every library in the binary's DT_NEEDED list is mapped and relocated by the dynamic loader
 * at each start, before main, though most commands use few of them: `crucible run` needs
 * none of SQLite (the task library), libyaml (Kattis problems), expat (JUnit reports) or
 * zlib (gzipped datasets). Each such library has a file NAME_lazy.c that defines the
 * functions crucible calls, with the library's own prototypes (its header is included, so
 * a wrong signature does not compile), forwarding to the real ones; the first call loads
 * the library with dlopen and finds every function on its list at once. archive_lazy.c
 * does the same for libarchive with its own loader.
 *
 * A library that cannot be loaded, or lacks a function on its list, is unavailable as a
 * whole: one line on stderr names it and its Debian package, and the entry points (the
 * functions that make the library's objects: sqlite3_open_v2, XML_ParserCreate, ...) fail
 * as the library's own do when out of memory or unable to open; every other function is
 * reached only through such an object. Thread-safe.
 */
#ifndef CRUCIBLE_LAZY_H
#define CRUCIBLE_LAZY_H

#include <pthread.h>
#include <stdbool.h>

/* One library: its names are the caller's, its state is lazy.c's. */
struct lazy_lib {
    const char *soname;       /* e.g. "libsqlite3.so.0" */
    const char *package;      /* the Debian package that installs it, for the message */
    const char *const *names; /* the functions crucible calls, NULL-terminated */
    void **fns;               /* their addresses, as many slots as names, filled by lazy_load */
    pthread_mutex_t lock;     /* serializes the one load */
    int state;                /* 0 not tried, 1 loaded, -1 unavailable (atomic) */
};

#define LAZY_LIB_INIT(soname, package, names, fns)                                                 \
    {                                                                                              \
        (soname), (package), (names), (fns), PTHREAD_MUTEX_INITIALIZER, 0                          \
    }

/* lazy_load(lib) — loads lib on the first call and resolves every name; true when all of
 * them were found (then lib->fns[i] is names[i]'s address). Later calls return the first
 * answer without trying again. */
bool lazy_load(struct lazy_lib *lib);

/* lazy_fn(lib, i) — names[i]'s address, loading lib when needed. For the functions other
 * than the entry points: reached without the library loaded, it aborts (a bug in the
 * caller, not a condition to handle), instead of calling through a NULL pointer. */
void *lazy_fn(struct lazy_lib *lib, int i);

/* Definitions from an X-macro list: LAZY_ENUM_(ret, name, params, args) gives the index
 * LAZY_I_name, LAZY_NAME_ the names array entry, LAZY_DEF_ a forwarding definition and
 * LAZY_DEF_VOID_ the same for a function returning void. */
#define LAZY_ENUM_(ret, name, params, args) LAZY_I_##name,
#define LAZY_NAME_(ret, name, params, args) #name,
#define LAZY_DEF_(lib, ret, name, params, args)                                                    \
    ret name params                                                                                \
    {                                                                                              \
        return ((ret(*) params)lazy_fn(&(lib), LAZY_I_##name))args;                                \
    }
#define LAZY_DEF_VOID_(lib, name, params, args)                                                    \
    void name params                                                                               \
    {                                                                                              \
        ((void(*) params)lazy_fn(&(lib), LAZY_I_##name)) args;                                     \
    }

#endif
