/*
 * sqlite_lazy.c — SQLite (the task library, library/store.c), loaded on first use (lazy.h).
 *
 * Entry points: sqlite3_open_v2 and sqlite3_open answer SQLITE_CANTOPEN with no handle
 * when the library cannot be loaded, and sqlite3_errstr, which a caller may reach with no
 * handle, says so.
 */
#include <sqlite3.h>
#include <stddef.h>

#include "lazy.h"

/* The entry points, defined by hand below, then every other function crucible calls
 * (F returns a value, V returns void), defined by LAZY_DEF_. */
#define SQLITE_ENTRIES(F)                                                                          \
    F(int, sqlite3_open_v2, , ) F(int, sqlite3_open, , ) F(const char *, sqlite3_errstr, , )
#define SQLITE_FNS(F, V)                                                                           \
    F(int, sqlite3_bind_double, (sqlite3_stmt * s, int i, double v), (s, i, v))                    \
    F(int, sqlite3_bind_int, (sqlite3_stmt * s, int i, int v), (s, i, v))                          \
    F(int, sqlite3_bind_int64, (sqlite3_stmt * s, int i, sqlite3_int64 v), (s, i, v))              \
    F(int, sqlite3_bind_null, (sqlite3_stmt * s, int i), (s, i))                                   \
    F(int, sqlite3_bind_text, (sqlite3_stmt * s, int i, const char *v, int n, void (*d)(void *)),  \
      (s, i, v, n, d))                                                                             \
    F(int, sqlite3_busy_timeout, (sqlite3 * db, int ms), (db, ms))                                 \
    F(int, sqlite3_changes, (sqlite3 * db), (db))                                                  \
    F(int, sqlite3_close, (sqlite3 * db), (db))                                                    \
    F(double, sqlite3_column_double, (sqlite3_stmt * s, int i), (s, i))                            \
    F(int, sqlite3_column_int, (sqlite3_stmt * s, int i), (s, i))                                  \
    F(sqlite3_int64, sqlite3_column_int64, (sqlite3_stmt * s, int i), (s, i))                      \
    F(const unsigned char *, sqlite3_column_text, (sqlite3_stmt * s, int i), (s, i))               \
    F(int, sqlite3_column_type, (sqlite3_stmt * s, int i), (s, i))                                 \
    F(const char *, sqlite3_errmsg, (sqlite3 * db), (db))                                          \
    F(int, sqlite3_exec,                                                                           \
      (sqlite3 * db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg,         \
       char **errmsg),                                                                             \
      (db, sql, cb, arg, errmsg))                                                                  \
    F(int, sqlite3_extended_result_codes, (sqlite3 * db, int on), (db, on))                        \
    F(int, sqlite3_finalize, (sqlite3_stmt * s), (s))                                              \
    V(sqlite3_free, (void *p), (p))                                                                \
    F(int, sqlite3_prepare_v2,                                                                     \
      (sqlite3 * db, const char *sql, int n, sqlite3_stmt **s, const char **tail),                 \
      (db, sql, n, s, tail))                                                                       \
    F(int, sqlite3_reset, (sqlite3_stmt * s), (s))                                                 \
    F(int, sqlite3_step, (sqlite3_stmt * s), (s))

#define NAME_V(name, params, args) #name,
#define ENUM_V(name, params, args) LAZY_I_##name,
enum { SQLITE_ENTRIES(LAZY_ENUM_) SQLITE_FNS(LAZY_ENUM_, ENUM_V) SQLITE_NFNS };
static const char *const names[] = {SQLITE_ENTRIES(LAZY_NAME_) SQLITE_FNS(LAZY_NAME_, NAME_V) NULL};
static void *fns[SQLITE_NFNS];
static struct lazy_lib lib = LAZY_LIB_INIT("libsqlite3.so.0", "libsqlite3-0", names, fns);

int sqlite3_open_v2(const char *f, sqlite3 **db, int flags, const char *vfs)
{
    if (!lazy_load(&lib)) {
        *db = NULL;
        return SQLITE_CANTOPEN;
    }
    return ((int (*)(const char *, sqlite3 **, int, const char *))fns[LAZY_I_sqlite3_open_v2])(
        f, db, flags, vfs);
}

/* Used by the tests only (they make a database of another schema). */
int sqlite3_open(const char *f, sqlite3 **db)
{
    if (!lazy_load(&lib)) {
        *db = NULL;
        return SQLITE_CANTOPEN;
    }
    return ((int (*)(const char *, sqlite3 **))fns[LAZY_I_sqlite3_open])(f, db);
}

const char *sqlite3_errstr(int rc)
{
    if (!lazy_load(&lib))
        return "libsqlite3.so.0 cannot be loaded";
    return ((const char *(*)(int))fns[LAZY_I_sqlite3_errstr])(rc);
}

/* The others, each reached only through a handle sqlite3_open_v2 made. */
#define DEF(ret, name, params, args) LAZY_DEF_(lib, ret, name, params, args)
#define DEF_V(name, params, args)    LAZY_DEF_VOID_(lib, name, params, args)
SQLITE_FNS(DEF, DEF_V)
