/*
 * util.c — helpers with no module of their own (see util.h for the contracts).
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int errbuf_set(struct errbuf *e, const char *fmt, ...)
{
    va_list ap;

    if (!e)
        return -EINVAL;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return -EINVAL;
}

bool util_parse_double(const char *s, double min, double max, double *out)
{
    char *end;
    double v;

    if (!s || !*s || *s == ' ' || *s == '\t')
        return false;
    errno = 0;
    v = strtod(s, &end);
    if (errno || *end || !isfinite(v) || v < min || v > max)
        return false;
    *out = v;
    return true;
}

bool util_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!s || *s < '0' || *s > '9')
        return false;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

double util_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int util_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int util_write_file(const char *path, const char *text)
{
    int fd, r;

    fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    r = util_write_all(fd, text, strlen(text));
    close(fd);
    return r;
}

ssize_t util_read_small(const char *path, char *buf, size_t size)
{
    int fd;
    ssize_t n, total = 0;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    while ((size_t)total < size - 1) {
        n = read(fd, buf + total, size - 1 - (size_t)total);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            total = -errno;
            break;
        }
        if (n == 0)
            break;
        total += n;
    }
    close(fd);
    if (total >= 0)
        buf[total] = '\0';
    return total;
}

int util_read_fd(int fd, char **bufp, size_t *lenp, size_t max)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap), *nb;

    if (!buf)
        return -ENOMEM;
    for (;;) {
        ssize_t n;
        if (len + 1 >= cap) {
            cap *= 2;
            nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                return -ENOMEM;
            }
            buf = nb;
        }
        n = read(fd, buf + len, cap - len - 1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            free(buf);
            return -errno;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > max) {
            free(buf);
            return -EFBIG;
        }
    }
    buf[len] = '\0';
    *bufp = buf;
    *lenp = len;
    return 0;
}

void util_utf8_cut(char *s)
{
    size_t n = strlen(s), i = n;

    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--; /* continuation bytes */
    if (i > 0 && (unsigned char)s[i - 1] >= 0xC0) {
        unsigned char lead = (unsigned char)s[i - 1];
        size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        if (n - (i - 1) < want)
            s[i - 1] = '\0';
    }
}

bool util_utf8_valid(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;

    while (i < len) {
        unsigned char c = s[i];
        size_t n;
        uint32_t cp;

        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            n = 1;
            cp = c & 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2;
            cp = c & 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + n >= len)
            return false;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += n + 1;
    }
    return true;
}

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *util_base64_encode(const void *data, size_t len)
{
    const unsigned char *in = data;
    char *out = malloc(4 * ((len + 2) / 3) + 1), *o = out;

    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)in[i] << 16;
        if (i + 1 < len)
            v |= (unsigned)in[i + 1] << 8;
        if (i + 2 < len)
            v |= in[i + 2];
        *o++ = b64_alphabet[(v >> 18) & 63];
        *o++ = b64_alphabet[(v >> 12) & 63];
        *o++ = i + 1 < len ? b64_alphabet[(v >> 6) & 63] : '=';
        *o++ = i + 2 < len ? b64_alphabet[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

int util_base64_decode(const char *text, size_t text_len, char **out, size_t *len)
{
    char *buf = malloc(text_len / 4 * 3 + 4), *o = buf;
    unsigned v = 0;
    int bits = 0, pad = 0;

    if (!buf)
        return -ENOMEM;
    for (size_t i = 0; i < text_len; i++) {
        const char *p;
        char c = text[i];
        if (c == '\n' || c == '\r' || c == ' ')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        if (pad || !(p = strchr(b64_alphabet, c)) || !c) {
            free(buf);
            return -EINVAL;
        }
        v = (v << 6) | (unsigned)(p - b64_alphabet);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *o++ = (char)((v >> bits) & 0xff);
        }
    }
    if (pad > 2 || bits >= 6) {
        free(buf);
        return -EINVAL;
    }
    *o = '\0';
    *len = (size_t)(o - buf);
    *out = buf;
    return 0;
}

int util_send_all(int sock, const void *data, size_t len)
{
    const char *p = data;

    while (len > 0) {
        ssize_t n = send(sock, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EPIPE;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

ssize_t util_send_fds(int sock, const void *data, size_t len, const int *fds, int nfds)
{
    char cbuf[CMSG_SPACE(sizeof(int) * UTIL_SEND_FDS_MAX)];
    struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    ssize_t n;

    if (nfds < 0 || nfds > UTIL_SEND_FDS_MAX)
        return -EINVAL;
    if (nfds > 0) {
        struct cmsghdr *c;
        memset(cbuf, 0, sizeof(cbuf));
        mh.msg_control = cbuf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
    }
    do
        n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : n;
}
