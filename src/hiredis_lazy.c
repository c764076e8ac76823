/*
 * hiredis_lazy.c — hiredis (the Redis client of cluster mode, cluster/broker.c), loaded on
 * first use (lazy.h): only `crucible serve --broker` and `crucible worker` talk to Redis.
 *
 * Entry point: redisConnectWithTimeout answers NULL when the library cannot be loaded (as
 * hiredis does when it cannot allocate a context); every other function is reached only
 * through a context.
 */
#include <hiredis/hiredis.h>
#include <stddef.h>

#include "lazy.h"

#define HIREDIS_ENTRIES(F) F(redisContext *, redisConnectWithTimeout, , )
#define HIREDIS_FNS(F, V)                                                                          \
    F(void *, redisCommandArgv,                                                                    \
      (redisContext * c, int argc, const char **argv, const size_t *argvlen),                      \
      (c, argc, argv, argvlen))                                                                    \
    F(int, redisSetTimeout, (redisContext * c, const struct timeval tv), (c, tv))                  \
    V(redisFree, (redisContext * c), (c))                                                          \
    V(freeReplyObject, (void *reply), (reply))

#define NAME_V(name, params, args) #name,
#define ENUM_V(name, params, args) LAZY_I_##name,
enum { HIREDIS_ENTRIES(LAZY_ENUM_) HIREDIS_FNS(LAZY_ENUM_, ENUM_V) HIREDIS_NFNS };
static const char *const names[] = {HIREDIS_ENTRIES(LAZY_NAME_) HIREDIS_FNS(LAZY_NAME_, NAME_V)
                                        NULL};
static void *fns[HIREDIS_NFNS];
static struct lazy_lib lib = LAZY_LIB_INIT("libhiredis.so.0.14", "libhiredis0.14", names, fns);

redisContext *redisConnectWithTimeout(const char *ip, int port, const struct timeval tv)
{
    if (!lazy_load(&lib))
        return NULL;
    return ((redisContext * (*)(const char *, int, const struct timeval))
                fns[LAZY_I_redisConnectWithTimeout])(ip, port, tv);
}

#define DEF_F(ret, name, params, args) LAZY_DEF_(lib, ret, name, params, args)
#define DEF_V(name, params, args)      LAZY_DEF_VOID_(lib, name, params, args)
HIREDIS_FNS(DEF_F, DEF_V)
