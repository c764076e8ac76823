/* Unit tests for src/lazy.c and the NAME_lazy.c wrappers: SQLite, libyaml, expat and zlib are
 * not mapped until first used, then work through the wrappers; a library that is missing, or
 * lacks a listed function, is unavailable as a whole without crashing. */
#include <dlfcn.h>
#include <expat.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "lazy.h"
#include "tap.h"

/* mapped(soname) — whether a file of that name is mapped in this process. */
static bool mapped(const char *soname)
{
    char line[4096];
    bool found = false;
    FILE *f = fopen("/proc/self/maps", "r");

    while (f && !found && fgets(line, sizeof(line), f)) {
        const char *slash = strrchr(line, '/');
        found = slash && strncmp(slash + 1, soname, strlen(soname)) == 0;
    }
    if (f)
        fclose(f);
    return found;
}

static int count_rows(void *arg, int n, char **values, char **columns)
{
    (void)n, (void)columns;
    *(int *)arg += values[0] && strcmp(values[0], "42") == 0;
    return 0;
}

int main(void)
{
    static const char *const sonames[] = {"libsqlite3.so.0", "libyaml-0.so.2", "libexpat.so.1",
                                          "libz.so.1"};
    for (size_t i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++)
        ok(!mapped(sonames[i]), "%s is not mapped at start", sonames[i]);
    ok(mapped("libc.so.6"), "the probe sees libc.so.6 mapped");

    sqlite3 *db = NULL;
    int rows = 0;
    is_int(sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
           SQLITE_OK, "sqlite3_open_v2 through the wrapper");
    ok(mapped("libsqlite3.so.0"), "libsqlite3.so.0 is mapped after the first call");
    is_int(sqlite3_exec(db, "SELECT 6 * 7", count_rows, &rows, NULL), SQLITE_OK,
           "sqlite3_exec runs a query");
    is_int(rows, 1, "and its callback sees the answer");
    sqlite3_close(db);
    ok(!mapped("libexpat.so.1"), "libexpat.so.1 is still not mapped: one library at a time");

    XML_Parser p = XML_ParserCreate(NULL);
    ok(p != NULL, "XML_ParserCreate through the wrapper");
    is_int(XML_Parse(p, "<a>", 3, 1), XML_STATUS_ERROR, "XML_Parse sees a truncated document");
    is_str(XML_ErrorString(XML_GetErrorCode(p)), "no element found", "with expat's own message");
    XML_ParserFree(p);

    void *fns[2];
    static const char *const none_names[] = {"nothing", NULL};
    struct lazy_lib none = LAZY_LIB_INIT("libcrucible-absent.so.0", "none", none_names, fns);
    ok(!lazy_load(&none), "a library that does not exist is unavailable");
    ok(!lazy_load(&none), "and stays so on the next call");

    static const char *const partial_names[] = {"gzread", "gz_crucible_absent", NULL};
    struct lazy_lib partial = LAZY_LIB_INIT("libz.so.1", "zlib1g", partial_names, fns);
    ok(!lazy_load(&partial), "a library without one of its listed functions is unavailable");

    static const char *const z_names[] = {"gzread", NULL};
    struct lazy_lib z = LAZY_LIB_INIT("libz.so.1", "zlib1g", z_names, fns);
    void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    ok(lazy_load(&z) && h && fns[0] == dlsym(h, "gzread"),
       "a library with every function: each address is the library's own");
    if (h)
        dlclose(h);
    return done_testing();
}
