/*
 * archive_lazy.c — libarchive, loaded on first use rather than at every start.
 *
 * libarchive brings eleven more libraries into the process (libxml2, ICU and its 30 MB data
 * library, libstdc++, nettle, acl, lzma, zstd, lz4, bz2), and the dynamic loader maps and
 * relocates each of them at every start of the binary, though most commands never read or
 * write an archive: measured on the 2-CPU VM of docs/BENCHMARKS.md, an empty program linked
 * with crucible's libraries started in 17-20 ms, 9-15 ms without libarchive, /bin/true in 3.6
 * (a cold `crucible run` pays it in full). So the binary is not linked with it: each function
 * crucible calls is defined here, with libarchive's own prototype (archive.h is included, so a
 * wrong signature does not compile), and forwards to the real one, which the first call finds
 * with dlopen and dlsym (as serve does for libmicrohttpd).
 *
 * When the library cannot be loaded, the constructors (archive_read_new, archive_write_new,
 * archive_entry_new) return NULL, as libarchive's do when out of memory, after one line on
 * stderr naming the library; every other function is reached only through an object one of
 * them made. Thread-safe: the library is loaded once (pthread_once), and each function's
 * address is stored atomically.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#define ARCHIVE_SONAME "libarchive.so.13"

static void *lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_load(void)
{
    lib = dlopen(ARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fprintf(stderr, "crucible: cannot load %s (Debian package libarchive13): %s\n",
                ARCHIVE_SONAME, dlerror());
}

/* real(name) — libarchive's own function of that name, or NULL when it cannot be loaded. */
static void *real(const char *name)
{
    pthread_once(&lib_once, lib_load);
    return lib ? dlsym(lib, name) : NULL;
}

/* LAZY(ret, name, params, args) — defines name with libarchive's signature, forwarding. */
#define RESOLVE(name, params, ret)                                                                 \
    static ret(*fp) params;                                                                        \
    ret(*f) params = __atomic_load_n(&fp, __ATOMIC_ACQUIRE);                                       \
    if (!f) {                                                                                      \
        f = (ret(*) params)real(#name);                                                            \
        __atomic_store_n(&fp, f, __ATOMIC_RELEASE);                                                \
    }
#define LAZY(ret, name, params, args)                                                              \
    ret name params                                                                                \
    {                                                                                              \
        RESOLVE(name, params, ret)                                                                 \
        return f args;                                                                             \
    }
#define LAZY_VOID(name, params, args)                                                              \
    void name params                                                                               \
    {                                                                                              \
        RESOLVE(name, params, void)                                                                \
        f args;                                                                                    \
    }
/* A constructor: NULL (errno ENOSYS) when the library cannot be loaded. */
#define LAZY_NEW(ret, name)                                                                        \
    ret name(void)                                                                                 \
    {                                                                                              \
        RESOLVE(name, (void), ret)                                                                 \
        if (!f) {                                                                                  \
            errno = ENOSYS;                                                                        \
            return NULL;                                                                           \
        }                                                                                          \
        return f();                                                                                \
    }

typedef struct archive *archive_p;
typedef struct archive_entry *entry_p;

LAZY_NEW(archive_p, archive_read_new)
LAZY_NEW(archive_p, archive_write_new)
LAZY_NEW(entry_p, archive_entry_new)

LAZY(entry_p, archive_entry_clear, (struct archive_entry * e), (e))
LAZY(__LA_MODE_T, archive_entry_filetype, (struct archive_entry * e), (e))
LAZY_VOID(archive_entry_free, (struct archive_entry * e), (e))
LAZY(la_int64_t, archive_entry_gid, (struct archive_entry * e), (e))
LAZY(const char *, archive_entry_hardlink, (struct archive_entry * e), (e))
LAZY(time_t, archive_entry_mtime, (struct archive_entry * e), (e))
LAZY(long, archive_entry_mtime_nsec, (struct archive_entry * e), (e))
LAZY(const char *, archive_entry_pathname, (struct archive_entry * e), (e))
LAZY(__LA_MODE_T, archive_entry_perm, (struct archive_entry * e), (e))
LAZY_VOID(archive_entry_set_filetype, (struct archive_entry * e, unsigned int t), (e, t))
LAZY_VOID(archive_entry_set_gid, (struct archive_entry * e, la_int64_t g), (e, g))
LAZY_VOID(archive_entry_set_mtime, (struct archive_entry * e, time_t t, long ns), (e, t, ns))
LAZY_VOID(archive_entry_set_pathname, (struct archive_entry * e, const char *p), (e, p))
LAZY_VOID(archive_entry_set_perm, (struct archive_entry * e, __LA_MODE_T m), (e, m))
LAZY_VOID(archive_entry_set_size, (struct archive_entry * e, la_int64_t s), (e, s))
LAZY_VOID(archive_entry_set_symlink, (struct archive_entry * e, const char *p), (e, p))
LAZY_VOID(archive_entry_set_uid, (struct archive_entry * e, la_int64_t u), (e, u))
LAZY(la_int64_t, archive_entry_size, (struct archive_entry * e), (e))
LAZY(int, archive_entry_size_is_set, (struct archive_entry * e), (e))
LAZY(const char *, archive_entry_symlink, (struct archive_entry * e), (e))
LAZY(la_int64_t, archive_entry_uid, (struct archive_entry * e), (e))

LAZY(const char *, archive_error_string, (struct archive * a), (a))
LAZY(la_ssize_t, archive_read_data, (struct archive * a, void *buf, size_t len), (a, buf, len))
LAZY(int, archive_read_data_block,
     (struct archive * a, const void **buf, size_t *len, la_int64_t *off), (a, buf, len, off))
LAZY(int, archive_read_data_skip, (struct archive * a), (a))
LAZY(int, archive_read_free, (struct archive * a), (a))
LAZY(int, archive_read_next_header, (struct archive * a, struct archive_entry **e), (a, e))
LAZY(int, archive_read_open,
     (struct archive * a, void *data, archive_open_callback *open, archive_read_callback *read,
      archive_close_callback *close),
     (a, data, open, read, close))
LAZY(int, archive_read_open_fd, (struct archive * a, int fd, size_t block), (a, fd, block))
LAZY(int, archive_read_open_filename, (struct archive * a, const char *name, size_t block),
     (a, name, block))
LAZY(int, archive_read_open_memory, (struct archive * a, const void *buf, size_t len),
     (a, buf, len))
LAZY(int, archive_read_support_filter_all, (struct archive * a), (a))
LAZY(int, archive_read_support_format_raw, (struct archive * a), (a))
LAZY(int, archive_read_support_format_tar, (struct archive * a), (a))
LAZY(int, archive_write_add_filter_none, (struct archive * a), (a))
LAZY(int, archive_write_close, (struct archive * a), (a))
LAZY(la_ssize_t, archive_write_data, (struct archive * a, const void *buf, size_t len),
     (a, buf, len))
LAZY(int, archive_write_free, (struct archive * a), (a))
LAZY(int, archive_write_header, (struct archive * a, struct archive_entry *e), (a, e))
LAZY(int, archive_write_open,
     (struct archive * a, void *data, archive_open_callback *open, archive_write_callback *write,
      archive_close_callback *close),
     (a, data, open, write, close))
/* Used by the tests only (they build archives to read). */
LAZY_VOID(archive_entry_set_hardlink, (struct archive_entry * e, const char *p), (e, p))
LAZY_VOID(archive_entry_set_rdev, (struct archive_entry * e, dev_t d), (e, d))
LAZY(int, archive_write_add_filter_gzip, (struct archive * a), (a))
LAZY(int, archive_write_open_memory, (struct archive * a, void *buf, size_t size, size_t *used),
     (a, buf, size, used))

LAZY(int, archive_write_set_bytes_in_last_block, (struct archive * a, int bytes), (a, bytes))
LAZY(int, archive_write_set_format_pax_restricted, (struct archive * a), (a))

/* archive_set_error is variadic: the message is formatted here and passed on as "%s". */
void archive_set_error(struct archive *a, int err, const char *fmt, ...)
{
    RESOLVE(archive_set_error, (struct archive *, int, const char *, ...), void)
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    f(a, err, "%s", msg);
}
