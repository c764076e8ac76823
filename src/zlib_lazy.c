/*
 * zlib_lazy.c — zlib (gzipped dataset files, library/convert.c), loaded on first use
 * (lazy.h). The entry points, gzdopen and gzopen, return NULL (as when out of memory) when
 * the library cannot be loaded.
 */
#include <stddef.h>
#include <zlib.h>

#include "lazy.h"

#define ZLIB_ENTRIES(F) F(gzFile, gzdopen, , ) F(gzFile, gzopen, , )
#define ZLIB_FNS(F, V)                                                                             \
    F(int, gzread, (gzFile f, voidp buf, unsigned len), (f, buf, len))                             \
    F(int, gzwrite, (gzFile f, voidpc buf, unsigned len), (f, buf, len))                           \
    F(const char *, gzerror, (gzFile f, int *errnum), (f, errnum))                                 \
    F(int, gzclose, (gzFile f), (f))

#define NAME_V(name, params, args) #name,
#define ENUM_V(name, params, args) LAZY_I_##name,
enum { ZLIB_ENTRIES(LAZY_ENUM_) ZLIB_FNS(LAZY_ENUM_, ENUM_V) ZLIB_NFNS };
static const char *const names[] = {ZLIB_ENTRIES(LAZY_NAME_) ZLIB_FNS(LAZY_NAME_, NAME_V) NULL};
static void *fns[ZLIB_NFNS];
static struct lazy_lib lib = LAZY_LIB_INIT("libz.so.1", "zlib1g", names, fns);

gzFile gzdopen(int fd, const char *mode)
{
    if (!lazy_load(&lib))
        return NULL;
    return ((gzFile(*)(int, const char *))fns[LAZY_I_gzdopen])(fd, mode);
}

/* Used by the tests only (they write gzipped datasets). */
gzFile gzopen(const char *path, const char *mode)
{
    if (!lazy_load(&lib))
        return NULL;
    return ((gzFile(*)(const char *, const char *))fns[LAZY_I_gzopen])(path, mode);
}

/* The others, each reached only through a file gzdopen or gzopen made. */
#define DEF(ret, name, params, args) LAZY_DEF_(lib, ret, name, params, args)
#define DEF_V(name, params, args)    LAZY_DEF_VOID_(lib, name, params, args)
ZLIB_FNS(DEF, DEF_V)
