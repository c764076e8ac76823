/*
 * files.h — a live sandbox's files, read and written by the supervisor while the sandbox
 * runs: what a session's upload, download and listing do.
 *
 * PATHS. A path names a place in the sandbox's writable area: "/work/..." or "/tmp/..." (the
 * two directories of its scratch tmpfs), or a relative path, taken from /work. "/work" and
 * "/tmp" themselves name those directories. No ".." component, no empty component, no NUL,
 * at most PATH_MAX bytes, each component at most NAME_MAX: else -EINVAL with err naming the
 * problem (an HTTP 400). Every lookup is made beneath a descriptor of the scratch tmpfs that
 * init hands the supervisor once (openat2 with RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS,
 * RESOLVE_NO_MAGICLINKS, RESOLVE_NO_XDEV): a symlink the payload made anywhere on the way is
 * never followed (-ELOOP, a 400 "symlink"), a mount it could not make anyway is not crossed,
 * and nothing outside the scratch is ever reached, whatever the sandboxed code did.
 *
 * The contents are the sandbox's: untrusted. Sizes are bounded by the caller's max.
 * Files the supervisor writes belong to the sandbox's user (so the payload can change them),
 * with the permission bits given (0777 at most; 0644 when 0). Writes land in the scratch and
 * count against its size: -ENOSPC when it is full (a 507 or 413 for callers). Missing file or
 * directory: -ENOENT (404).
 *
 * Threading: as sandbox.h — one thread at a time per sandbox; may run while no exec runs,
 * and also while background processes of earlier execs run (they may race with us; the
 * result is theirs to live with, never the host's).
 */
#ifndef CRUCIBLE_SANDBOX_FILES_H
#define CRUCIBLE_SANDBOX_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/sandbox.h"
#include "util.h"

/* sandbox_file_write(sb, path, data, len, mode, err) — creates or replaces the regular file
 * at path (parent directories made as needed, 0755) with len bytes of data. Replacing is
 * atomic (a new file renamed over the old), so a running process never sees half of it; a
 * directory or other non-file at path is -EISDIR/-EEXIST. 0 or -errno with err set. */
int sandbox_file_write(struct sandbox *sb, const char *path, const void *data, size_t len,
                       mode_t mode, struct errbuf *err);

/* sandbox_file_read(sb, path, max, &data, &len, err) — the regular file at path into a new
 * buffer (NUL-terminated, not counted in len) the caller frees. -EFBIG beyond max bytes,
 * -EISDIR / -EINVAL when not a regular file. */
int sandbox_file_read(struct sandbox *sb, const char *path, size_t max, char **data, size_t *len,
                      struct errbuf *err);

enum sandbox_file_type { SBF_FILE, SBF_DIR, SBF_SYMLINK, SBF_OTHER };

struct sandbox_dirent {
    char *name; /* one component; the caller frees through sandbox_dirents_free */
    enum sandbox_file_type type;
    uint64_t size;
    mode_t mode;  /* permission bits */
    double mtime; /* seconds since the epoch */
};

/* sandbox_file_list(sb, path, max, &ents, &n, err) — the entries of the directory at path
 * ("." and ".." left out), sorted by name, at most max of them (-E2BIG beyond: a directory
 * the payload filled with a million files is the caller's 413, not our memory). */
int sandbox_file_list(struct sandbox *sb, const char *path, size_t max,
                      struct sandbox_dirent **ents, size_t *n, struct errbuf *err);
void sandbox_dirents_free(struct sandbox_dirent *ents, size_t n);

/* sandbox_file_put_tar(sb, dir, tar, len, err) — unpacks a tar archive (plain or gzip; read
 * with libarchive) into directory dir (made when missing). Only regular files, directories
 * and symlinks; entries with absolute paths or "..", device nodes, hard links and setuid /
 * setgid bits are refused with the entry named, and nothing of a refused archive is kept
 * (all entries are checked before the first is written). Symlinks in the archive are made
 * as symlinks, never followed (the rule above applies to every later entry). */
int sandbox_file_put_tar(struct sandbox *sb, const char *dir, const void *tar, size_t len,
                         struct errbuf *err);

/* sandbox_file_get_tar(sb, dir, max, &tar, &len, err) — a tar (ustar/pax, uncompressed) of
 * the tree at dir, paths relative to it; symlinks stored as symlinks; FIFOs and sockets
 * skipped. -EFBIG when the archive would pass max bytes. The caller frees tar. */
int sandbox_file_get_tar(struct sandbox *sb, const char *dir, size_t max, char **tar, size_t *len,
                         struct errbuf *err);

#endif
