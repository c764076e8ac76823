/*
 * lazy.c — loading a shared library on first use (lazy.h).
 */
#include "lazy.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

/* load(lib) — under lib->lock: dlopen and every dlsym; 1 or -1, one line on stderr then. */
static int load(struct lazy_lib *lib)
{
    void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);

    if (!h) {
        fprintf(stderr, "crucible: cannot load %s (Debian package %s): %s\n", lib->soname,
                lib->package, dlerror());
        return -1;
    }
    for (int i = 0; lib->names[i]; i++) {
        lib->fns[i] = dlsym(h, lib->names[i]);
        if (!lib->fns[i]) {
            fprintf(stderr, "crucible: %s has no function '%s' (Debian package %s too old?)\n",
                    lib->soname, lib->names[i], lib->package);
            dlclose(h);
            return -1;
        }
    }
    return 1;
}

bool lazy_load(struct lazy_lib *lib)
{
    int s = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);

    if (s == 0) {
        pthread_mutex_lock(&lib->lock);
        s = lib->state;
        if (s == 0) {
            s = load(lib);
            __atomic_store_n(&lib->state, s, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&lib->lock);
    }
    return s > 0;
}

void *lazy_fn(struct lazy_lib *lib, int i)
{
    if (!lazy_load(lib)) {
        fprintf(stderr, "crucible: %s called without %s loaded\n", lib->names[i], lib->soname);
        abort();
    }
    return lib->fns[i];
}
