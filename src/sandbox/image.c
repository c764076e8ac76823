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
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int resolve_host(struct image *img, struct errbuf *err)
{
    DIR *d;
    struct dirent *de;
    int r = 0;

    snprintf(img->root, sizeof(img->root), "/");
    snprintf(img->digest, sizeof(img->digest), "host");
    img->synth_etc = true;
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

static int resolve_dir(const char *name, struct image *img, struct errbuf *err)
{
    DIR *d;
    struct dirent *de;
    struct stat st;
    int r = 0;

    if (!realpath(name, img->root))
        return errbuf_set(err, "unknown image '%s': %s", name, strerror(errno)), -ENOENT;
    if (stat(img->root, &st) < 0 || !S_ISDIR(st.st_mode))
        return errbuf_set(err, "image '%s' is not a directory", name), -ENOTDIR;
    if (strcmp(img->root, "/") == 0)
        return errbuf_set(err, "image '/' would expose the whole host; use 'host'"), -EINVAL;
    snprintf(img->digest, sizeof(img->digest), "dir:%s", img->root);
    img->synth_etc = false;
    d = opendir(img->root);
    if (!d)
        return errbuf_set(err, "cannot read image '%s': %s", name, strerror(errno)), -errno;
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
        return errbuf_set(err, "image '%s' is empty", name), -ENOENT;
    return r;
}

int image_resolve(const char *name, struct image *img, struct errbuf *err)
{
    memset(img, 0, sizeof(*img));
    if (!name || !*name)
        return errbuf_set(err, "empty image name"), -EINVAL;
    snprintf(img->name, sizeof(img->name), "%s", name);
    if (strcmp(name, "host") == 0)
        return resolve_host(img, err);
    if (name[0] == '/')
        return resolve_dir(name, img, err);
    return errbuf_set(err,
                      "unknown image '%s' (use 'host' or an absolute path to a root "
                      "filesystem directory)",
                      name),
           -ENOENT;
}

/* ---- the registry of a server (see image.h) ---- */

struct image_registry {
    const struct image *host; /* borrowed */
    size_t n;
    struct image **images; /* owned; name is the registered NAME, root the directory */
};

struct image_registry *image_registry_new(const struct image *host)
{
    struct image_registry *reg = calloc(1, sizeof(*reg));

    if (reg)
        reg->host = host;
    return reg;
}

void image_registry_free(struct image_registry *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++)
        free(reg->images[i]);
    free(reg->images);
    free(reg);
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

void image_registry_names(const struct image_registry *reg, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "host");

    for (size_t i = 0; i < reg->n && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, ", %s", reg->images[i]->name);
}

const struct image *image_registry_find(const struct image_registry *reg, const char *name,
                                        struct errbuf *err)
{
    const struct image *img = lookup(reg, name);
    char names[512];

    if (img)
        return img;
    image_registry_names(reg, names, sizeof(names));
    if (name[0] == '/')
        errbuf_set(err,
                   "image '%s' is a host path: a request names a registered image (here: %s); "
                   "the operator registers a directory with 'crucible serve --image NAME=DIR'",
                   name, names);
    else
        errbuf_set(err,
                   "unknown image '%s' (registered here: %s); the operator registers one with "
                   "'crucible serve --image NAME=DIR'",
                   name, names);
    return NULL;
}
