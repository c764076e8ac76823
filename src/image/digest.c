/*
 * digest.c — sha256 through libcrypto's EVP interface (see digest.h).
 */
#include "image/digest.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int digest_init(struct digest_ctx *ctx)
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();

    ctx->md = NULL;
    if (!md)
        return -ENOMEM;
    if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(md);
        return -ENOMEM;
    }
    ctx->md = md;
    return 0;
}

void digest_update(struct digest_ctx *ctx, const void *data, size_t len)
{
    if (ctx->md && len)
        EVP_DigestUpdate(ctx->md, data, len);
}

void digest_final(struct digest_ctx *ctx, char out[DIGEST_LEN + 1])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    static const char hex[] = "0123456789abcdef";

    memcpy(out, "sha256:", 7);
    if (ctx->md)
        EVP_DigestFinal_ex(ctx->md, md, &n);
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
        EVP_MD_CTX_free(ctx->md);
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
