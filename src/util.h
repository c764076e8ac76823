/*
 * util.h — small helpers shared by every module: number parsing with range checks,
 * whole-file reads and writes, a monotonic clock, and an error-message buffer.
 *
 * Nothing here allocates except util_read_file; nothing keeps state.
 */
#ifndef CRUCIBLE_UTIL_H
#define CRUCIBLE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A caller-owned buffer for a one-line, user-facing error message (git style). */
struct errbuf {
    char msg[512];
};

/* errbuf_set(e, fmt, ...) — writes the message; returns -EINVAL so callers can `return`. */
int errbuf_set(struct errbuf *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* util_parse_double(s, min, max, &out) — a finite decimal in [min, max]; false otherwise. */
bool util_parse_double(const char *s, double min, double max, double *out);

/* util_parse_u64(s, min, max, &out) — a decimal integer in [min, max]; false otherwise. */
bool util_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* util_now() — CLOCK_MONOTONIC in seconds. */
double util_now(void);

/* util_write_all(fd, buf, len) — writes everything, retrying on EINTR; 0 or -errno. */
int util_write_all(int fd, const void *buf, size_t len);

/* util_write_file(path, text) — open(O_WRONLY|O_CLOEXEC) an existing file and write text;
 * used for cgroup and /proc control files. 0 or -errno. */
int util_write_file(const char *path, const char *text);

/* util_read_small(path, buf, size) — reads up to size-1 bytes and NUL-terminates;
 * returns the byte count or -errno. For cgroup and /proc files. */
ssize_t util_read_small(const char *path, char *buf, size_t size);

/* util_read_fd(fd, &buf, &len, max) — reads fd to EOF into a new malloc'd buffer
 * (NUL-terminated, caller frees). -EFBIG when longer than max. 0 or -errno. */
int util_read_fd(int fd, char **buf, size_t *len, size_t max);

/* util_utf8_valid(s, len) — true when s is well-formed UTF-8 (no overlongs, no surrogates). */
bool util_utf8_valid(const char *s, size_t len);

/* util_utf8_cut(s) — s, cut at a byte count, without the incomplete UTF-8 sequence the cut
 * may have left at its end. */
void util_utf8_cut(char *s);

/* util_base64_encode(data, len) — standard alphabet with padding, malloc'd; NULL on ENOMEM. */
char *util_base64_encode(const void *data, size_t len);

/* util_base64_decode(text, len, &out, &out_len) — line breaks and spaces ignored; a new
 * NUL-terminated buffer. 0, -EINVAL (not base64) or -ENOMEM. */
int util_base64_decode(const char *text, size_t text_len, char **out, size_t *len);

/* util_send_all(sock, data, len) — every byte of data on a socket, retried on EINTR, without
 * SIGPIPE. 0 or -errno (-EPIPE: the peer took nothing more). */
int util_send_all(int sock, const void *data, size_t len);

/* util_send_fds(sock, data, len, fds, nfds) — one sendmsg of data on a unix socket with nfds
 * descriptors attached (SCM_RIGHTS; 0..UTIL_SEND_FDS_MAX), retried on EINTR, without SIGPIPE.
 * The bytes sent (the descriptors go with the first of them), or -errno. */
#define UTIL_SEND_FDS_MAX 253
ssize_t util_send_fds(int sock, const void *data, size_t len, const int *fds, int nfds);
#endif
