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
