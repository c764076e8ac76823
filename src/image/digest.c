/*
 * digest.c — sha256 through libcrypto's EVP interface (see digest.h).
 *
 * libcrypto is loaded at the first digest, not linked: mapping and relocating it costs every
 * start of the binary 2-6 ms on the VM of docs/BENCHMARKS.md (an empty program linked with and
 * without it), and most commands (a one-shot `crucible run`) never hash anything. The six EVP
 * functions are found with dlopen and dlsym once (pthread_once), as serve does for
 * libmicrohttpd; without the library digest_init fails with -ENOSYS after one line on stderr.
 */
#include "image/digest.h"

#include <dlfcn.h>
#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CRYPTO_SONAME "libcrypto.so.3"

/* The EVP functions used, filled by evp_load in the order of its names. */
static struct {
    EVP_MD_CTX *(*ctx_new)(void);
    void (*ctx_free)(EVP_MD_CTX *);
    int (*init)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
    int (*update)(EVP_MD_CTX *, const void *, size_t);
    int (*final)(EVP_MD_CTX *, unsigned char *, unsigned int *);
    const EVP_MD *(*sha256)(void);
} evp;
static bool evp_ok;
static pthread_once_t evp_once = PTHREAD_ONCE_INIT;

static void evp_load(void)
{
    static const char *const names[] = {"EVP_MD_CTX_new",     "EVP_MD_CTX_free",
                                        "EVP_DigestInit_ex",  "EVP_DigestUpdate",
                                        "EVP_DigestFinal_ex", "EVP_sha256"};
    void *lib = dlopen(CRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    void **slots = (void **)&evp;

    if (!lib) {
        fprintf(stderr, "crucible: cannot load %s (Debian package libssl3): %s\n", CRYPTO_SONAME,
                dlerror());
        return;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!(slots[i] = dlsym(lib, names[i]))) {
            fprintf(stderr, "crucible: %s lacks %s\n", CRYPTO_SONAME, names[i]);
            return;
        }
    evp_ok = true;
}

int digest_init(struct digest_ctx *ctx)
{
    EVP_MD_CTX *md;

    ctx->md = NULL;
    pthread_once(&evp_once, evp_load);
    if (!evp_ok)
        return -ENOSYS;
    if (!(md = evp.ctx_new()))
        return -ENOMEM;
    if (evp.init(md, evp.sha256(), NULL) != 1) {
        evp.ctx_free(md);
        return -ENOMEM;
    }
    ctx->md = md;
    return 0;
}

void digest_update(struct digest_ctx *ctx, const void *data, size_t len)
{
    if (ctx->md && len)
        evp.update(ctx->md, data, len);
}

void digest_final(struct digest_ctx *ctx, char out[DIGEST_LEN + 1])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    static const char hex[] = "0123456789abcdef";

    memcpy(out, "sha256:", 7);
    if (ctx->md)
        evp.final(ctx->md, md, &n);
    for (unsigned i = 0; i < 32; i++) {
        out[7 + 2 * i] = i < n ? hex[md[i] >> 4] : '0';
        out[8 + 2 * i] = i < n ? hex[md[i] & 15] : '0';
    }
    out[DIGEST_LEN] = '\0';
    digest_release(ctx);
}

void digest_release(struct digest_ctx *ctx)
{
    if (ctx->md)
        evp.ctx_free(ctx->md);
    ctx->md = NULL;
}

int digest_buffer(const void *data, size_t len, char out[DIGEST_LEN + 1])
{
    struct digest_ctx ctx;

    if (digest_init(&ctx) < 0)
        return -ENOMEM;
    digest_update(&ctx, data, len);
    digest_final(&ctx, out);
    return 0;
}

int digest_fd(int fd, char out[DIGEST_LEN + 1], uint64_t *size)
{
    struct digest_ctx ctx;
    char buf[65536];
    uint64_t total = 0;
    ssize_t n;

    if (digest_init(&ctx) < 0)
        return -ENOMEM;
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            int e = errno;
            if (e == EINTR)
                continue;
            digest_release(&ctx);
            return -e;
        }
        digest_update(&ctx, buf, (size_t)n);
        total += (uint64_t)n;
    }
    digest_final(&ctx, out);
    if (size)
        *size = total;
    return 0;
}

bool digest_valid(const char *s)
{
    if (!s || strncmp(s, "sha256:", 7) != 0 || strlen(s) != DIGEST_LEN)
        return false;
    for (const char *p = s + 7; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}
