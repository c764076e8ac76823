/*
 * store.c — the image store's layout, refs, locks, removal and garbage collection
 * (see store.h). Importing is import.c's; this file owns what is already stored.
 *
 * Every change is a rename of something complete: the refs file is rewritten whole under
 * refs.lock; an image becomes visible when its meta file is renamed into place and stops
 * being one when that file is removed, before its root filesystem goes.
 */
#include "image/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/unpack.h"
#include "strset.h"

#define REFS_MAX (16u << 20) /* bytes of the refs file */
#define META_MAX (16u << 20)

static const char *const store_dirs[] = {"blobs", "blobs/sha256", "rootfs", "meta", "tmp"};

int image_store_state_dir(char *buf, size_t size)
{
    const char *env = getenv("CRUCIBLE_STATE_DIR"), *xdg, *home;
    int n;

    if (env && *env)
        n = snprintf(buf, size, "%s", env);
    else if (geteuid() == 0)
        n = snprintf(buf, size, "/var/lib/crucible");
    else if ((xdg = getenv("XDG_STATE_HOME")) && xdg[0] == '/')
        n = snprintf(buf, size, "%s/crucible", xdg);
    else if ((home = getenv("HOME")) && home[0] == '/')
        n = snprintf(buf, size, "%s/.local/state/crucible", home);
    else
        return -ENOENT;
    return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* mkdir_p(path) — path and its missing parents (0755). 0 or -errno. */
static int mkdir_p(const char *path)
{
    char tmp[PATH_MAX];

    if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

int image_store_open(struct image_store *st, const char *state, bool create, struct errbuf *err)
{
    char def[PATH_MAX];
    int r;

    st->fd = st->lockfd = -1;
    if (!state) {
        if (image_store_state_dir(def, sizeof(def)) < 0)
            return errbuf_set(err, "no state directory: set --state-dir or CRUCIBLE_STATE_DIR"),
                   -ENOENT;
        state = def;
    }
    if (state[0] != '/')
        return errbuf_set(err, "state directory '%s' must be an absolute path", state), -EINVAL;
    if (snprintf(st->dir, sizeof(st->dir), "%s/images", state) >= (int)sizeof(st->dir))
        return errbuf_set(err, "state directory '%s' is too long", state), -ENAMETOOLONG;
    if (create && (r = mkdir_p(st->dir)) < 0)
        return errbuf_set(err, "cannot create image store '%s': %s", st->dir, strerror(-r)), r;
    st->fd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (st->fd < 0) {
        r = -errno;
        if (r == -ENOENT)
            return errbuf_set(err,
                              "no image store at '%s' (import an image first: 'crucible image "
                              "import')",
                              st->dir),
                   r;
        return errbuf_set(err, "cannot open image store '%s': %s", st->dir, strerror(-r)), r;
    }
    for (size_t i = 0; create && i < sizeof(store_dirs) / sizeof(store_dirs[0]); i++)
        if (mkdirat(st->fd, store_dirs[i], 0755) < 0 && errno != EEXIST) {
            r = -errno;
            errbuf_set(err, "cannot create '%s/%s': %s", st->dir, store_dirs[i], strerror(-r));
            image_store_close(st);
            return r;
        }
    return 0;
}

void image_store_close(struct image_store *st)
{
    if (st->lockfd >= 0)
        close(st->lockfd);
    if (st->fd >= 0)
        close(st->fd);
    st->fd = st->lockfd = -1;
}

/* take_lock(st, name, how, err) — an fd holding flock(how) on the file `name`. */
static int take_lock(struct image_store *st, const char *name, int how, struct errbuf *err)
{
    int fd = openat(st->fd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

    if (fd < 0)
        return errbuf_set(err, "cannot open '%s/%s': %s", st->dir, name, strerror(errno)), -errno;
    while (flock(fd, how) < 0) {
        if (errno == EINTR)
            continue;
        int e = errno;
        close(fd);
        return errbuf_set(err, "cannot lock '%s/%s': %s", st->dir, name, strerror(e)), -e;
    }
    return fd;
}

int image_store_lock(struct image_store *st, bool exclusive, struct errbuf *err)
{
    int fd;

    if (st->lockfd >= 0)
        return 0;
    fd = take_lock(st, "lock", exclusive ? LOCK_EX : LOCK_SH, err);
    if (fd < 0)
        return fd;
    st->lockfd = fd;
    return 0;
}

void image_store__path(const char *digest, char kind, char *buf, size_t size)
{
    const char *hex = strncmp(digest, "sha256:", 7) == 0 ? digest + 7 : digest;

    if (kind == 'b')
        snprintf(buf, size, "blobs/sha256/%s", hex);
    else if (kind == 'r')
        snprintf(buf, size, "rootfs/%s", hex);
    else
        snprintf(buf, size, "meta/%s.json", hex);
}

void image_store_rootfs(const struct image_store *st, const char *digest, char *buf, size_t size)
{
    char rel[128];

    image_store__path(digest, 'r', rel, sizeof(rel));
    snprintf(buf, size, "%s/%s", st->dir, rel);
}

/* name_char(c) — a letter, digit, '.', '_' or '-'. */
static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

int image_ref_normalize(const char *ref, char *out, size_t size, struct errbuf *err)
{
    const char *colon = strrchr(ref, ':'), *slash = strrchr(ref, '/');
    size_t nlen, tlen;
    const char *tag = "latest";

    if (colon && (!slash || colon > slash)) {
        nlen = (size_t)(colon - ref);
        tag = colon + 1;
    } else {
        nlen = strlen(ref);
    }
    tlen = strlen(tag);
    if (nlen == 0 || tlen == 0 || tlen > 128 || nlen + tlen + 2 > size || nlen + tlen + 2 > 200)
        goto bad;
    for (size_t i = 0; i < nlen; i++) {
        char c = ref[i];
        bool start = i == 0 || ref[i - 1] == '/';
        if (c == '/' ? start || i + 1 == nlen : !name_char(c) || (start && !name_char(c)))
            goto bad;
        if (start && (c == '.' || c == '_' || c == '-'))
            goto bad;
    }
    for (size_t i = 0; i < tlen; i++)
        if (!name_char(tag[i]) || (i == 0 && (tag[i] == '.' || tag[i] == '-')))
            goto bad;
    if (nlen == 4 && strncmp(ref, "host", 4) == 0)
        return errbuf_set(err, "image name 'host' is reserved for the host's own image");
    if (nlen == 6 && strncmp(ref, "sha256", 6) == 0)
        return errbuf_set(err, "'%s' is not a valid digest (sha256: and 64 lowercase hex digits)",
                          ref);
    snprintf(out, size, "%.*s:%s", (int)nlen, ref, tag);
    return 0;
bad:
    return errbuf_set(err,
                      "invalid image reference '%s' (NAME or NAME:TAG: NAME of letters, digits, "
                      "'.', '_', '-' in parts separated by '/', TAG at most 128 of those)",
                      ref);
}

int image_store_refs(struct image_store *st, struct image_ref **refs, size_t *n, struct errbuf *err)
{
    int fd = openat(st->fd, "refs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    char *text = NULL, *line, *save = NULL;
    size_t len = 0, cap = 0;
    int r;

    *refs = NULL;
    *n = 0;
    if (fd < 0)
        return errno == ENOENT
                   ? 0
                   : (errbuf_set(err, "cannot open '%s/refs': %s", st->dir, strerror(errno)),
                      -errno);
    r = util_read_fd(fd, &text, &len, REFS_MAX);
    close(fd);
    if (r < 0)
        return errbuf_set(err, "cannot read '%s/refs': %s", st->dir, strerror(-r)), r;
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        if (!sp || (size_t)(sp - line) >= IMAGE_REF_MAX || !digest_valid(sp + 1))
            continue; /* not ours: never written by image_store_set_ref */
        if (*n == cap) {
            struct image_ref *grown;
            cap = cap ? 2 * cap : 16;
            if (!(grown = realloc(*refs, cap * sizeof(*grown)))) {
                free(text);
                free(*refs);
                *refs = NULL;
                *n = 0;
                return errbuf_set(err, "out of memory"), -ENOMEM;
            }
            *refs = grown;
        }
        snprintf((*refs)[*n].name, IMAGE_REF_MAX, "%.*s", (int)(sp - line), line);
        snprintf((*refs)[*n].digest, DIGEST_LEN + 1, "%s", sp + 1);
        (*n)++;
    }
    free(text);
    return 0;
}

int image_store_set_ref(struct image_store *st, const char *name, const char *digest,
                        struct errbuf *err)
{
    struct image_ref *refs;
    size_t n;
    char tmp[64];
    FILE *f;
    int lfd, fd, r;
    bool found = false;

    if ((lfd = take_lock(st, "refs.lock", LOCK_EX, err)) < 0)
        return lfd;
    if ((r = image_store_refs(st, &refs, &n, err)) < 0)
        goto out_unlock;
    snprintf(tmp, sizeof(tmp), "tmp/refs.%d", (int)getpid());
    fd = openat(st->fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        r = -errno;
        if (fd >= 0)
            close(fd);
        errbuf_set(err, "cannot write '%s/%s': %s", st->dir, tmp, strerror(-r));
        goto out_free;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(refs[i].name, name) == 0) {
            found = true;
            if (digest)
                fprintf(f, "%s %s\n", name, digest);
        } else {
            fprintf(f, "%s %s\n", refs[i].name, refs[i].digest);
        }
    }
    if (!found && digest)
        fprintf(f, "%s %s\n", name, digest);
    if (fflush(f) != 0 || fsync(fileno(f)) < 0 || ferror(f)) {
        r = -EIO;
        fclose(f);
        unlinkat(st->fd, tmp, 0);
        errbuf_set(err, "cannot write '%s/%s'", st->dir, tmp);
        goto out_free;
    }
    fclose(f);
    if (renameat(st->fd, tmp, st->fd, "refs") < 0) {
        r = -errno;
        unlinkat(st->fd, tmp, 0);
        errbuf_set(err, "cannot replace '%s/refs': %s", st->dir, strerror(-r));
    }
out_free:
    free(refs);
out_unlock:
    close(lfd);
    return r;
}

bool image_store_has(struct image_store *st, const char *digest)
{
    char rel[128];
    struct stat s;

    if (!digest_valid(digest))
        return false;
    image_store__path(digest, 'm', rel, sizeof(rel));
    return fstatat(st->fd, rel, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(s.st_mode);
}

int image_store_lookup(struct image_store *st, const char *ref, char *digest, struct errbuf *err)
{
    char name[IMAGE_REF_MAX];
    struct image_ref *refs;
    size_t n;
    int r;

    if (strncmp(ref, "sha256:", 7) == 0) {
        if (!digest_valid(ref))
            return errbuf_set(err, "invalid digest '%s' (sha256: and 64 lowercase hex digits)",
                              ref);
        if (!image_store_has(st, ref))
            return errbuf_set(err, "no image '%s' in the image store '%s'", ref, st->dir), -ENOENT;
        snprintf(digest, DIGEST_LEN + 1, "%s", ref);
        return 0;
    }
    if ((r = image_ref_normalize(ref, name, sizeof(name), err)) < 0)
        return r;
    if ((r = image_store_refs(st, &refs, &n, err)) < 0)
        return r;
    r = errbuf_set(err, "no image '%s' in the image store '%s' (see 'crucible image list')", name,
                   st->dir);
    r = -ENOENT;
    for (size_t i = 0; i < n; i++)
        if (strcmp(refs[i].name, name) == 0) {
            snprintf(digest, DIGEST_LEN + 1, "%s", refs[i].digest);
            r = 0;
        }
    free(refs);
    if (r == 0 && !image_store_has(st, digest))
        return errbuf_set(err, "image '%s' names '%s', which is not in the store", name, digest),
               -ENOENT;
    return r;
}

int image_store_meta(struct image_store *st, const char *digest, char **text, struct errbuf *err)
{
    char rel[128];
    size_t len;
    int fd, r;

    image_store__path(digest, 'm', rel, sizeof(rel));
    fd = openat(st->fd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return errbuf_set(err, "no image '%s' in the image store '%s'", digest, st->dir), -errno;
    r = util_read_fd(fd, text, &len, META_MAX);
    close(fd);
    if (r < 0)
        return errbuf_set(err, "cannot read '%s/%s': %s", st->dir, rel, strerror(-r)), r;
    return 0;
}

/* drop_image(st, digest, err) — the meta file first (the image is gone), then its root
 * filesystem, renamed into tmp/ before it is deleted so no half-removed tree keeps its name. */
static int drop_image(struct image_store *st, const char *digest, struct errbuf *err)
{
    char rel[128], trash[128];
    int r;

    image_store__path(digest, 'm', rel, sizeof(rel));
    if (unlinkat(st->fd, rel, 0) < 0 && errno != ENOENT)
        return errbuf_set(err, "cannot remove '%s/%s': %s", st->dir, rel, strerror(errno)), -errno;
    image_store__path(digest, 'r', rel, sizeof(rel));
    snprintf(trash, sizeof(trash), "tmp/rm-%.16s-%d", digest + 7, (int)getpid());
    /* a root under rootfs/ is always complete: never delete one in place */
    if (renameat(st->fd, rel, st->fd, trash) < 0 && errno != ENOENT)
        return errbuf_set(err, "cannot move '%s/%s' aside: %s", st->dir, rel, strerror(errno)),
               -errno;
    r = unpack_remove_tree(st->fd, trash);
    if (r < 0)
        return errbuf_set(err, "cannot remove '%s/%s': %s", st->dir, trash, strerror(-r)), r;
    return 0;
}

int image_store_remove(struct image_store *st, const char *ref, struct errbuf *err)
{
    char digest[DIGEST_LEN + 1], name[IMAGE_REF_MAX];
    struct image_ref *refs;
    size_t n;
    bool by_digest = strncmp(ref, "sha256:", 7) == 0, other = false;
    int r;

    if ((r = image_store_lock(st, true, err)) < 0)
        return r;
    if (by_digest && (r = image_store_lookup(st, ref, digest, err)) < 0)
        return r;
    if (!by_digest && image_ref_normalize(ref, name, sizeof(name), err) < 0)
        return -EINVAL;
    if ((r = image_store_refs(st, &refs, &n, err)) < 0)
        return r;
    if (!by_digest) { /* the ref itself, even when its image is gone */
        r = -ENOENT;
        for (size_t i = 0; i < n; i++)
            if (strcmp(refs[i].name, name) == 0) {
                snprintf(digest, sizeof(digest), "%s", refs[i].digest);
                r = 0;
            }
        if (r < 0) {
            free(refs);
            return errbuf_set(err, "no image '%s' in the image store '%s'", name, st->dir), r;
        }
    }
    for (size_t i = 0; i < n && r == 0; i++) {
        if (strcmp(refs[i].digest, digest) != 0)
            continue;
        if (by_digest || strcmp(refs[i].name, name) == 0)
            r = image_store_set_ref(st, refs[i].name, NULL, err);
        else
            other = true;
    }
    free(refs);
    if (r == 0 && !other)
        r = drop_image(st, digest, err);
    return r;
}

/* used_blobs(st, used, err) — every blob an imported image's meta lists (manifest, config,
 * layers) added to used. */
static int used_blobs(struct image_store *st, struct strset *used, struct errbuf *err)
{
    DIR *d;
    struct dirent *de;
    int fd = openat(st->fd, "meta", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

    if (fd < 0 || !(d = fdopendir(fd))) {
        if (fd >= 0)
            close(fd);
        return errbuf_set(err, "cannot read '%s/meta': %s", st->dir, strerror(errno)), -errno;
    }
    while (r == 0 && (de = readdir(d))) {
        char digest[DIGEST_LEN + 8], *text;
        json_t *meta, *layers, *v;
        size_t i;
        if (strlen(de->d_name) != DIGEST_HEX_LEN + 5 || !strstr(de->d_name, ".json"))
            continue;
        snprintf(digest, sizeof(digest), "sha256:%.*s", DIGEST_HEX_LEN, de->d_name);
        if (image_store_meta(st, digest, &text, err) < 0)
            continue;
        meta = json_loads(text, 0, NULL);
        free(text);
        if (!meta) {
            r = errbuf_set(err, "'%s/meta/%s' is not JSON; gc stops rather than guess", st->dir,
                           de->d_name);
            break;
        }
        if (strset_add(used, digest) < 0 ||
            ((v = json_object_get(meta, "config")) && json_is_string(v) &&
             strset_add(used, json_string_value(v)) < 0))
            r = -ENOMEM;
        layers = json_object_get(meta, "layers");
        json_array_foreach(layers, i, v)
        {
            json_t *dg = json_object_get(v, "digest");
            if (r == 0 && json_is_string(dg) && strset_add(used, json_string_value(dg)) < 0)
                r = -ENOMEM;
        }
        json_decref(meta);
    }
    closedir(d);
    if (r == -ENOMEM)
        errbuf_set(err, "out of memory");
    return r;
}

int image_store_gc(struct image_store *st, struct image_gc_stats *stats, struct errbuf *err)
{
    struct strset used = STRSET_INIT;
    struct dirent *de;
    DIR *d;
    int fd, r;

    memset(stats, 0, sizeof(*stats));
    if ((r = image_store_lock(st, true, err)) < 0)
        return r;
    if ((r = used_blobs(st, &used, err)) < 0)
        goto out_release;
    /* blobs no image uses */
    fd = openat(st->fd, "blobs/sha256", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && (d = fdopendir(fd))) {
        while ((de = readdir(d))) {
            char digest[DIGEST_LEN + 8];
            struct stat s;
            if (de->d_name[0] == '.')
                continue;
            snprintf(digest, sizeof(digest), "sha256:%.64s", de->d_name);
            if (strset_has(&used, digest) && strlen(de->d_name) == DIGEST_HEX_LEN)
                continue;
            if (fstatat(dirfd(d), de->d_name, &s, AT_SYMLINK_NOFOLLOW) == 0)
                stats->bytes += (uint64_t)s.st_size;
            if (unpack_remove_tree(dirfd(d), de->d_name) == 0)
                stats->blobs++;
        }
        closedir(d);
    } else if (fd >= 0) {
        close(fd);
    }
    /* root filesystems without a meta file */
    fd = openat(st->fd, "rootfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && (d = fdopendir(fd))) {
        while ((de = readdir(d))) {
            char digest[DIGEST_LEN + 8];
            if (de->d_name[0] == '.')
                continue;
            snprintf(digest, sizeof(digest), "sha256:%.64s", de->d_name);
            if (strlen(de->d_name) == DIGEST_HEX_LEN && image_store_has(st, digest))
                continue;
            if (unpack_remove_tree(dirfd(d), de->d_name) == 0)
                stats->rootfs++;
        }
        closedir(d);
    } else if (fd >= 0) {
        close(fd);
    }
    /* what imports cut short left (they hold the lock shared, so none is running) */
    fd = openat(st->fd, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0 && (d = fdopendir(fd))) {
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.' || strncmp(de->d_name, "refs.", 5) == 0)
                continue;
            if (unpack_remove_tree(dirfd(d), de->d_name) == 0)
                stats->tmp++;
        }
        closedir(d);
    } else if (fd >= 0) {
        close(fd);
    }
out_release:
    strset_release(&used);
    return r;
}
