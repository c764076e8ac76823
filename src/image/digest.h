/*
 * digest.h — sha256 digests as the image store names content: "sha256:<64 lowercase hex>".
 *
 * A thin wrapper over OpenSSL's EVP interface (libcrypto): a context fed in pieces, the
 * digest of a whole file, and the syntax check every digest from outside goes through.
 */
#ifndef CRUCIBLE_IMAGE_DIGEST_H
#define CRUCIBLE_IMAGE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DIGEST_HEX_LEN 64                   /* hex digits of a sha256 */
#define DIGEST_LEN     (7 + DIGEST_HEX_LEN) /* "sha256:" and the hex, without the NUL */

struct digest_ctx {
    void *md; /* EVP_MD_CTX, owned */
};

/* digest_init(ctx) — a fresh sha256 context; 0 or -ENOMEM. */
int digest_init(struct digest_ctx *ctx);

/* digest_update(ctx, data, len) — feeds bytes. */
void digest_update(struct digest_ctx *ctx, const void *data, size_t len);

/* digest_final(ctx, out) — writes "sha256:<hex>" (DIGEST_LEN + 1 bytes) and releases the
 * context (digest_release is then a no-op). */
void digest_final(struct digest_ctx *ctx, char out[DIGEST_LEN + 1]);

/* digest_release(ctx) — frees a context that was not finalised. */
void digest_release(struct digest_ctx *ctx);

/* digest_buffer(data, len, out) — the digest of a buffer; 0 or -ENOMEM. */
int digest_buffer(const void *data, size_t len, char out[DIGEST_LEN + 1]);

/* digest_fd(fd, out, &size) — the digest of what fd reads from its current offset to EOF and
 * the byte count (size may be NULL). 0 or -errno. */
int digest_fd(int fd, char out[DIGEST_LEN + 1], uint64_t *size);

/* digest_valid(s) — s is exactly "sha256:" and 64 lowercase hex digits. */
bool digest_valid(const char *s);

#endif
