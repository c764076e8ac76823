/*
 * image.c — resolving image names (see image.h).
 *
 * The /etc allow-list is data: the files that dynamic linking, name lookups, locale,
 * time zones, TLS roots and the language runtimes (Java's and Python's configuration
 * trees) read. Everything else in /etc stays invisible.
 */
#include "sandbox/image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/store.h"

static const char *const host_top[] = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"};

static const char *const host_etc_allow[] = {
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "localtime",
    "timezone",
    "mime.types",
    "protocols",
    "services",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "os-release",
    "debian_version",
    "java-*",
    "python3*",
    "perl",
    "bash.bashrc",
    "inputrc",
    "magic",
    "gcc",
    /* configuration the language table's toolchains read (docs/API.md): without it R finds no
     * Renviron and no default packages, Racket no compiled collections (it compiles them
     * anew, for tens of seconds), Mono no assembly map, LDC (D) no runtime library, PHP
     * none of the extensions Debian builds as modules (ctype, iconv, tokenizer...) */
    "R",
    "php",
    "racket",
    "mono",
    "ldc2.conf",
};

static int add_entry(struct image *img, const char *base, const char *rel, struct errbuf *err)
{
    char path[PATH_MAX + 256];
    struct image_entry *e;
    struct stat st;
    ssize_t n;

    snprintf(path, sizeof(path), "%s/%s", base, rel);
    if (lstat(path, &st) < 0)
        return 0; /* absent on this host: nothing to expose */
    if (img->nentries == IMAGE_MAX_ENTRIES)
        return errbuf_set(err, "image '%s' has too many top-level entries", img->name), -E2BIG;
    e = &img->entries[img->nentries];
    snprintf(e->path, sizeof(e->path), "%s", rel);
    if (S_ISLNK(st.st_mode)) {
        n = readlink(path, e->target, sizeof(e->target) - 1);
        if (n < 0)
            return 0;
        e->target[n] = '\0';
        e->kind = IMAGE_ENTRY_SYMLINK;
    } else if (S_ISDIR(st.st_mode)) {
        e->kind = IMAGE_ENTRY_DIR;
    } else if (S_ISREG(st.st_mode)) {
        e->kind = IMAGE_ENTRY_FILE;
    } else {
        return 0; /* devices, sockets and fifos are never exposed */
    }
    img->nentries++;
    return 0;
}

/* os_release_value(text, key, out, size) — the value of KEY= in os-release text, without
 * the quotes it may have; "" when absent. */
static void os_release_value(const char *text, const char *key, char *out, size_t size)
{
    size_t klen = strlen(key), n = 0;

    out[0] = '\0';
    for (const char *line = text; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, key, klen) != 0 || line[klen] != '=')
            continue;
        for (const char *v = line + klen + 1; *v && *v != '\n' && n + 1 < size; v++)
            if (*v != '"' && *v != '\'')
                out[n++] = *v;
        out[n] = '\0';
        return;
    }
}

/* host_os(img) — "ID VERSION_ID" of the host's os-release (/etc/os-release, else
 * /usr/lib/os-release) into img->os_release, "unknown" when neither says. */
static void host_os(struct image *img)
{
    char text[4096], id[64], ver[48];

    if (util_read_small("/etc/os-release", text, sizeof(text)) <= 0 &&
        util_read_small("/usr/lib/os-release", text, sizeof(text)) <= 0)
        text[0] = '\0';
    os_release_value(text, "ID", id, sizeof(id));
    os_release_value(text, "VERSION_ID", ver, sizeof(ver));
    if (!id[0])
        snprintf(img->os_release, sizeof(img->os_release), "unknown");
    else if (!ver[0])
        snprintf(img->os_release, sizeof(img->os_release), "%s", id);
    else
        snprintf(img->os_release, sizeof(img->os_release), "%s %s", id, ver);
}

/* identify_host(img) — the host image, named. */
static void identify_host(struct image *img)
{
    snprintf(img->root, sizeof(img->root), "/");
    snprintf(img->digest, sizeof(img->digest), "host");
    host_os(img);
    img->synth_etc = true;
}

/* host_entries(img, err) — the host image's entries: the top-level directories and the allowed
 * part of /etc. */
static int host_entries(struct image *img, struct errbuf *err)
{
    DIR *d;
    struct dirent *de;
    int r = 0;

    for (size_t i = 0; i < sizeof(host_top) / sizeof(host_top[0]) && r == 0; i++)
        r = add_entry(img, "", host_top[i], err);
    d = opendir("/etc");
    if (!d)
        return errbuf_set(err, "cannot read '/etc': %s", strerror(errno)), -errno;
    while (r == 0 && (de = readdir(d))) {
        char rel[300];
        if (de->d_name[0] == '.')
            continue;
        for (size_t i = 0; i < sizeof(host_etc_allow) / sizeof(host_etc_allow[0]); i++) {
            if (strchr(host_etc_allow[i], '/') == NULL &&
                fnmatch(host_etc_allow[i], de->d_name, 0) == 0) {
                snprintf(rel, sizeof(rel), "etc/%s", de->d_name);
                r = add_entry(img, "", rel, err);
                break;
            }
        }
    }
    closedir(d);
    return r;
}

/* identify_dir(name, img, err) — a root filesystem directory, named. */
static int identify_dir(const char *name, struct image *img, struct errbuf *err)
{
    struct stat st;

    if (!realpath(name, img->root))
        return errbuf_set(err, "unknown image '%s': %s", name, strerror(errno)), -ENOENT;
    if (stat(img->root, &st) < 0 || !S_ISDIR(st.st_mode))
        return errbuf_set(err, "image '%s' is not a directory", name), -ENOTDIR;
    if (strcmp(img->root, "/") == 0)
        return errbuf_set(err, "image '/' would expose the whole host; use 'host'"), -EINVAL;
    snprintf(img->digest, sizeof(img->digest), "dir:%s", img->root);
    img->synth_etc = false;
    img->whole_root = true;
    return 0;
}

/* dir_entries(img, err) — a directory image's top-level entries; an empty one is refused. */
static int dir_entries(struct image *img, struct errbuf *err)
{
    DIR *d;
    struct dirent *de;
    int r = 0;

    d = opendir(img->root);
    if (!d)
        return errbuf_set(err, "cannot read image '%s': %s", img->name, strerror(errno)), -errno;
    while (r == 0 && (de = readdir(d))) {
        static const char *const reserved[] = {".", "..", "proc", "dev", "sys", "tmp", "work"};
        bool skip = false;
        for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
            skip |= strcmp(de->d_name, reserved[i]) == 0;
        if (!skip && strlen(de->d_name) < 100)
            r = add_entry(img, img->root, de->d_name, err);
    }
    closedir(d);
    if (r == 0 && img->nentries == 0)
        return errbuf_set(err, "image '%s' is empty", img->name), -ENOENT;
    return r;
}

int image_read_entries(struct image *img, struct errbuf *err)
{
    img->nentries = 0;
    return img->whole_root ? dir_entries(img, err) : host_entries(img, err);
}

/* config_apply(img, text, err) — Env and WorkingDir from a stored image's meta JSON. */
static int config_apply(struct image *img, const char *text, struct errbuf *err)
{
    json_t *meta = json_loads(text, 0, NULL), *env, *v;
    const char *wd;
    size_t i, used = 0;

    if (!meta)
        return errbuf_set(err, "image '%s': its meta file is not JSON", img->name), -EINVAL;
    env = json_object_get(meta, "env");
    json_array_foreach(env, i, v)
    {
        const char *kv = json_string_value(v);
        size_t len = kv ? strlen(kv) : 0;
        if (!kv || !strchr(kv, '=') || kv[0] == '=')
            continue;
        if (used + len + 2 > sizeof(img->env)) {
            json_decref(meta);
            return errbuf_set(err, "image '%s': its Env is longer than %d bytes", img->name,
                              IMAGE_ENV_MAX),
                   -E2BIG;
        }
        memcpy(img->env + used, kv, len + 1);
        used += len + 1;
    }
    if (used) {
        img->env[used] = '\0';
        img->env_len = used + 1;
    }
    wd = json_string_value(json_object_get(meta, "workdir"));
    if (wd && wd[0] == '/') {
        if (strlen(wd) >= sizeof(img->workdir)) {
            json_decref(meta);
            return errbuf_set(err, "image '%s': its WorkingDir is longer than %zu bytes", img->name,
                              sizeof(img->workdir) - 1),
                   -E2BIG;
        }
        snprintf(img->workdir, sizeof(img->workdir), "%s", wd);
    }
    json_decref(meta);
    return 0;
}

/* identify_stored(st, name, digest, img, err) — the stored image digest (named `name` by
 * whoever asked) as a directory image: its rootfs, its config's Env and WorkingDir. */
static int identify_stored(struct image_store *st, const char *name, const char *digest,
                           struct image *img, struct errbuf *err)
{
    char root[PATH_MAX], *text;
    int r;

    image_store_rootfs(st, digest, root, sizeof(root));
    if ((r = identify_dir(root, img, err)) < 0)
        return r;
    snprintf(img->name, sizeof(img->name), "%s", name);
    snprintf(img->digest, sizeof(img->digest), "%s", digest);
    if ((r = image_store_meta(st, digest, &text, err)) < 0)
        return r;
    r = config_apply(img, text, err);
    free(text);
    return r;
}

int image_identify(const char *name, struct image *img, struct errbuf *err)
{
    struct image_store st;
    char digest[DIGEST_LEN + 1];
    struct errbuf why = {{0}};
    int r;

    memset(img, 0, sizeof(*img));
    if (!name || !*name)
        return errbuf_set(err, "empty image name"), -EINVAL;
    snprintf(img->name, sizeof(img->name), "%s", name);
    if (strcmp(name, "host") == 0) {
        identify_host(img);
        return 0;
    }
    if (name[0] == '/')
        return identify_dir(name, img, err);
    if ((r = image_store_open(&st, NULL, false, &why)) == 0 &&
        (r = image_store_lookup(&st, name, digest, &why)) == 0)
        r = identify_stored(&st, name, digest, img, &why);
    image_store_close(&st);
    if (r < 0)
        errbuf_set(err,
                   "unknown image '%s': %s (an image is 'host', an absolute path to a root "
                   "filesystem directory, NAME[:TAG] or sha256:<hex> of the image store)",
                   name, why.msg);
    return r < 0 ? -ENOENT : 0;
}

int image_resolve(const char *name, struct image *img, struct errbuf *err)
{
    int r = image_identify(name, img, err);

    return r < 0 ? r : image_read_entries(img, err);
}

/* ---- the registry of a server (see image.h) ---- */

#define STORED_MAX 4096 /* stored images a registry keeps resolved (name asked, digest) */
#define TAGS_MAX   256  /* NAME[:TAG] -> digest answers kept while the refs file is unchanged */

/* One answer of the refs file, good while the file is the one it came from. */
struct tag_answer {
    char name[IMAGE_NAME_MAX + 2 + 128]; /* as asked: NAME or NAME:TAG */
    char digest[DIGEST_LEN + 1];
};

struct image_registry {
    const struct image *host; /* borrowed */
    size_t n;
    struct image **images; /* owned; name is the registered NAME, root the directory */
    /* the image store: opened on first use (it may be made after the server starts);
     * images resolved from it stay, so the pointers handed out live as long as the registry */
    pthread_mutex_t lock;
    char state[PATH_MAX];
    struct image_store store;
    size_t nstored;
    struct image **stored;
    /* The refs file's identity when the answers below were read: a tag moves by a new file
     * renamed over the old (image/store.h), so an unchanged inode, size and mtime mean
     * unchanged answers, and a request needs one fstatat, not a read and parse of the file. */
    struct stat refs_st;
    size_t ntags;
    struct tag_answer tags[TAGS_MAX];
};

struct image_registry *image_registry_new(const struct image *host)
{
    struct image_registry *reg = calloc(1, sizeof(*reg));

    if (!reg)
        return NULL;
    reg->host = host;
    reg->store.fd = reg->store.lockfd = -1;
    if (image_store_state_dir(reg->state, sizeof(reg->state)) < 0)
        reg->state[0] = '\0';
    pthread_mutex_init(&reg->lock, NULL);
    return reg;
}

void image_registry_free(struct image_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++)
        free(reg->images[i]);
    free(reg->images);
    for (size_t i = 0; i < reg->nstored; i++)
        free(reg->stored[i]);
    free(reg->stored);
    image_store_close(&reg->store);
    pthread_mutex_destroy(&reg->lock);
    free(reg);
}

/* tag_lookup(reg, name, digest, err) — image_store_lookup, answered from reg->tags while the
 * refs file is the one they were read from. Under reg->lock. 0 or -errno with err set. */
static int tag_lookup(struct image_registry *reg, const char *name, char *digest,
                      struct errbuf *err)
{
    struct stat st;
    bool same;
    int r;

    if (strncmp(name, "sha256:", 7) == 0 || strlen(name) >= sizeof(reg->tags[0].name))
        return image_store_lookup(&reg->store, name, digest, err);
    if (fstatat(reg->store.fd, "refs", &st, AT_SYMLINK_NOFOLLOW) < 0)
        return image_store_lookup(&reg->store, name, digest, err); /* it says why */
    same = st.st_ino == reg->refs_st.st_ino && st.st_dev == reg->refs_st.st_dev &&
           st.st_size == reg->refs_st.st_size && st.st_mtim.tv_sec == reg->refs_st.st_mtim.tv_sec &&
           st.st_mtim.tv_nsec == reg->refs_st.st_mtim.tv_nsec;
    if (!same) {
        reg->ntags = 0;
        reg->refs_st = st;
    }
    for (size_t i = 0; i < reg->ntags; i++)
        if (strcmp(reg->tags[i].name, name) == 0) {
            memcpy(digest, reg->tags[i].digest, DIGEST_LEN + 1);
            return 0;
        }
    r = image_store_lookup(&reg->store, name, digest, err);
    if (r == 0 && reg->ntags < TAGS_MAX) {
        snprintf(reg->tags[reg->ntags].name, sizeof(reg->tags[0].name), "%s", name);
        memcpy(reg->tags[reg->ntags].digest, digest, DIGEST_LEN + 1);
        reg->ntags++;
    }
    return r;
}

/* find_stored(reg, name, err) — name (NAME[:TAG], sha256:<hex>) looked up in the store now
 * (refs move), resolved once per (name, digest). NULL with err when the store has no such
 * image; -ENOENT-like failures say so. Takes reg->lock. */
static const struct image *find_stored(struct image_registry *reg, const char *name,
                                       struct errbuf *err)
{
    char digest[DIGEST_LEN + 1];
    const struct image *found = NULL;
    struct image *img, **grown;

    if (!reg->state[0])
        return errbuf_set(err, "no image store"), NULL;
    pthread_mutex_lock(&reg->lock);
    if (reg->store.fd < 0 && image_store_open(&reg->store, reg->state, false, err) < 0)
        goto out_unlock;
    if (tag_lookup(reg, name, digest, err) < 0)
        goto out_unlock;
    for (size_t i = 0; i < reg->nstored && !found; i++)
        if (strcmp(reg->stored[i]->name, name) == 0 && strcmp(reg->stored[i]->digest, digest) == 0)
            found = reg->stored[i];
    if (found)
        goto out_unlock;
    if (reg->nstored >= STORED_MAX) {
        errbuf_set(err, "the server has resolved %d stored images already; restart it", STORED_MAX);
        goto out_unlock;
    }
    img = malloc(sizeof(*img));
    grown = realloc(reg->stored, (reg->nstored + 1) * sizeof(*grown));
    if (grown)
        reg->stored = grown;
    if (!img || !grown) {
        free(img);
        errbuf_set(err, "out of memory");
        goto out_unlock;
    }
    if (identify_stored(&reg->store, name, digest, img, err) < 0 ||
        image_read_entries(img, err) < 0) {
        free(img);
        goto out_unlock;
    }
    reg->stored[reg->nstored++] = img;
    found = img;
out_unlock:
    pthread_mutex_unlock(&reg->lock);
    return found;
}

/* name_valid(name, len) — [A-Za-z0-9][A-Za-z0-9._-]*, 1 to IMAGE_NAME_MAX characters. */
static bool name_valid(const char *name, size_t len)
{
    if (len == 0 || len > IMAGE_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
            return false;
    }
    return true;
}

static const struct image *lookup(const struct image_registry *reg, const char *name)
{
    if (strcmp(name, "host") == 0)
        return reg->host;
    for (size_t i = 0; i < reg->n; i++)
        if (strcmp(reg->images[i]->name, name) == 0)
            return reg->images[i];
    return NULL;
}

int image_registry_add(struct image_registry *reg, const char *spec, struct errbuf *err)
{
    const char *eq = strchr(spec, '=');
    size_t len = eq ? (size_t)(eq - spec) : 0;
    char name[IMAGE_NAME_MAX + 1];
    struct image *img, **grown;
    int r;

    if (!eq || !name_valid(spec, len))
        return errbuf_set(err,
                          "image '%s' must be NAME=DIR, NAME of letters, digits, '.', '_', '-' "
                          "(at most %d, starting with a letter or digit)",
                          spec, IMAGE_NAME_MAX),
               -EINVAL;
    memcpy(name, spec, len);
    name[len] = '\0';
    if (strcmp(name, "host") == 0)
        return errbuf_set(err, "image name 'host' is reserved for the host's own image"), -EEXIST;
    if (lookup(reg, name))
        return errbuf_set(err, "image '%s' is registered twice", name), -EEXIST;
    if (eq[1] != '/')
        return errbuf_set(err,
                          "image '%s': '%s' must be an absolute path to a root filesystem "
                          "directory",
                          name, eq + 1),
               -EINVAL;
    img = malloc(sizeof(*img));
    grown = realloc(reg->images, (reg->n + 1) * sizeof(*grown));
    if (!img || !grown) {
        free(img);
        if (grown)
            reg->images = grown;
        return errbuf_set(err, "out of memory"), -ENOMEM;
    }
    reg->images = grown;
    if ((r = image_resolve(eq + 1, img, err)) < 0) {
        free(img);
        return r;
    }
    /* Clients know it by its name: records report that, never the host directory. */
    snprintf(img->name, sizeof(img->name), "%s", name);
    snprintf(img->digest, sizeof(img->digest), "%s", name);
    reg->images[reg->n++] = img;
    return 0;
}

int image_registry_add_file(struct image_registry *reg, const char *path, struct errbuf *err)
{
    FILE *f = fopen(path, "re");
    char line[PATH_MAX + IMAGE_NAME_MAX + 8];
    unsigned lineno = 0;
    int r = 0;

    if (!f)
        return errbuf_set(err, "cannot open images file '%s': %s", path, strerror(errno)), -errno;
    while (r == 0 && fgets(line, sizeof(line), f)) {
        size_t len = strcspn(line, "\r\n");
        struct errbuf why = {{0}};
        lineno++;
        if (line[len] == '\0' && !feof(f)) {
            r = -EINVAL;
            errbuf_set(err, "%s:%u: line too long", path, lineno);
            break;
        }
        line[len] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        if ((r = image_registry_add(reg, line, &why)) < 0)
            errbuf_set(err, "%s:%u: %s", path, lineno, why.msg);
    }
    if (r == 0 && ferror(f)) {
        r = -EIO;
        errbuf_set(err, "cannot read images file '%s'", path);
    }
    fclose(f);
    return r;
}

void image_registry_list(const struct image_registry *reg,
                         void (*each)(void *arg, const char *name), void *arg)
{
    struct image_registry *r = (struct image_registry *)reg; /* the store opens lazily */
    struct errbuf err = {{0}};
    struct image_ref *refs = NULL;
    size_t n = 0;

    each(arg, "host");
    for (size_t i = 0; i < reg->n; i++)
        each(arg, reg->images[i]->name);
    if (!reg->state[0])
        return;
    pthread_mutex_lock(&r->lock);
    if ((r->store.fd >= 0 || image_store_open(&r->store, r->state, false, &err) == 0) &&
        image_store_refs(&r->store, &refs, &n, &err) == 0) {
        for (size_t i = 0; i < n; i++)
            each(arg, refs[i].name);
        free(refs);
    }
    pthread_mutex_unlock(&r->lock);
}

void image_registry_names(const struct image_registry *reg, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "host");

    for (size_t i = 0; i < reg->n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, ", %s", reg->images[i]->name);
}

const struct image *image_registry_find_registered(const struct image_registry *reg,
                                                   const char *name)
{
    return lookup(reg, name);
}

const struct image *image_registry_find(const struct image_registry *reg, const char *name,
                                        struct errbuf *err)
{
    const struct image *img = lookup(reg, name);
    struct errbuf why = {{0}};
    char names[512];

    if (img)
        return img;
    if (name[0] != '/' && (img = find_stored((struct image_registry *)reg, name, &why)))
        return img;
    image_registry_names(reg, names, sizeof(names));
    if (name[0] == '/')
        errbuf_set(err,
                   "image '%s' is a host path: a request names a registered image (here: %s); "
                   "the operator registers a directory with 'crucible serve --image NAME=DIR'",
                   name, names);
    else
        errbuf_set(err,
                   "unknown image '%s' (registered here: %s; image store: %s); the operator "
                   "registers one with 'crucible serve --image NAME=DIR' or imports one with "
                   "'crucible image import'",
                   name, names, why.msg[0] ? why.msg : "none");
    return NULL;
}
