/* Unit tests for src/image.c: the host image's allow-list and directory images. */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/image.h"
#include "tap.h"

static const struct image_entry *find(const struct image *img, const char *path)
{
    for (int i = 0; i < img->nentries; i++)
        if (strcmp(img->entries[i].path, path) == 0)
            return &img->entries[i];
    return NULL;
}

/* registry(host, dir) — a server's images: "host" and registered names, never a path. */
static void registry(const struct image *host, const char *dir)
{
    struct image_registry *reg = image_registry_new(host);
    struct errbuf err = {{0}};
    const struct image *img;
    char spec[512], file[] = "/tmp/crucible-images-XXXXXX";
    int fd;

    ok(reg != NULL, "a registry");
    ok(image_registry_find(reg, "host", &err) == host, "'host' is the host image");
    ok(!image_registry_find(reg, dir, &err) && strstr(err.msg, "host path") &&
           strstr(err.msg, "--image NAME=DIR"),
       "a path is refused, saying how to register one (%s)", err.msg);
    snprintf(spec, sizeof(spec), "py=%s", dir);
    ok(image_registry_add(reg, spec, &err) == 0, "NAME=DIR registers (%s)", err.msg);
    img = image_registry_find(reg, "py", &err);
    ok(img && strcmp(img->name, "py") == 0 && strcmp(img->digest, "py") == 0 && img->nentries > 0,
       "a registered name resolves, named by its name (not its directory)");
    ok(!image_registry_find(reg, dir, &err), "its directory is still refused by path");
    ok(!image_registry_find(reg, "other", &err) && strstr(err.msg, "unknown image 'other'") &&
           strstr(err.msg, "host, py"),
       "an unknown name lists the registered ones (%s)", err.msg);
    ok(image_registry_add(reg, spec, &err) == -EEXIST, "a name registered twice is refused");
    snprintf(spec, sizeof(spec), "host=%s", dir);
    ok(image_registry_add(reg, spec, &err) == -EEXIST, "'host' cannot be registered");
    ok(image_registry_add(reg, "bad name=/tmp", &err) == -EINVAL, "a name with a space refused");
    ok(image_registry_add(reg, "noequals", &err) == -EINVAL, "a spec without '=' refused");
    ok(image_registry_add(reg, "x=rel/dir", &err) == -EINVAL, "a relative directory refused");
    ok(image_registry_add(reg, "x=/", &err) < 0, "'/' refused");
    fd = mkstemp(file);
    if (fd >= 0) {
        char text[600];
        int n = snprintf(text, sizeof(text), "# images\n\nfiled=%s\nbroken\n", dir);
        ok(write(fd, text, (size_t)n) == n, "images file written");
        close(fd);
        ok(image_registry_add_file(reg, file, &err) < 0 && strstr(err.msg, ":4:"),
           "a bad line of an images file is named by its number (%s)", err.msg);
        ok(image_registry_find(reg, "filed", &err) != NULL, "the lines before it registered");
        unlink(file);
    }
    image_registry_free(reg);
}

int main(void)
{
    static struct image img;
    struct errbuf err = {{0}};
    char dir[] = "/tmp/crucible-image-XXXXXX", path[256];

    ok(image_resolve("host", &img, &err) == 0, "host resolves (%s)", err.msg);
    ok(find(&img, "usr") && find(&img, "usr")->kind == IMAGE_ENTRY_DIR, "host exposes /usr");
    ok(find(&img, "etc/ld.so.cache") != NULL, "host exposes the loader cache");
    ok(find(&img, "etc/shadow") == NULL, "host never exposes /etc/shadow");
    ok(find(&img, "etc/gshadow") == NULL, "host never exposes /etc/gshadow");
    ok(find(&img, "etc/passwd") == NULL, "host's passwd is replaced by a generated one");
    ok(find(&img, "etc/sudoers") == NULL, "host never exposes sudoers");
    ok(find(&img, "root") == NULL && find(&img, "home") == NULL, "no /root or /home");
    ok(img.synth_etc, "host image gets generated /etc files");
    is_str(img.digest, "host", "host digest");
    {
        /* the os-release the records carry for host: ID and VERSION_ID, without quotes */
        char want[128] = "", line[256], id[64] = "", ver[64] = "";
        FILE *f = fopen("/etc/os-release", "r");
        while (f && fgets(line, sizeof(line), f)) {
            char *v = strchr(line, '=');
            if (!v)
                continue;
            *v++ = '\0';
            v[strcspn(v, "\n")] = '\0';
            if (*v == '"' && v[strlen(v) - 1] == '"')
                v[strlen(v) - 1] = '\0', v++;
            if (strcmp(line, "ID") == 0)
                snprintf(id, sizeof(id), "%s", v);
            else if (strcmp(line, "VERSION_ID") == 0)
                snprintf(ver, sizeof(ver), "%s", v);
        }
        if (f)
            fclose(f);
        snprintf(want, sizeof(want), "%s%s%s", id, ver[0] ? " " : "", ver);
        if (id[0])
            is_str(img.os_release, want, "host carries the host's os-release (ID VERSION_ID)");
        else
            skip("no /etc/os-release with an ID here");
    }

    /* image_identify: the same identity as image_resolve's, without the entries */
    {
        static struct image id;
        ok(image_identify("host", &id, &err) == 0, "host is identified (%s)", err.msg);
        ok(id.nentries == 0, "identifying reads no entries (%d)", id.nentries);
        ok(strcmp(id.digest, img.digest) == 0 && strcmp(id.os_release, img.os_release) == 0 &&
               strcmp(id.root, img.root) == 0 && id.synth_etc,
           "host's identity is its resolve's (digest, os-release, root, generated /etc)");
        ok(image_read_entries(&id, &err) == 0 && id.nentries == img.nentries &&
               strcmp(id.entries[0].path, img.entries[0].path) == 0,
           "its entries, read after, are image_resolve's (%d of %d)", id.nentries, img.nentries);
        ok(image_identify("nosuch", &id, &err) < 0 && strstr(err.msg, "unknown image 'nosuch'"),
           "identifying an unknown name is the same error");
        ok(image_identify("/nonexistent/dir", &id, &err) < 0 && strstr(err.msg, "/nonexistent/dir"),
           "identifying a missing directory is an error naming it");
        ok(image_identify("/", &id, &err) < 0, "identifying '/' is refused");
    }

    ok(image_resolve("nosuch", &img, &err) < 0 && strstr(err.msg, "unknown image 'nosuch'"),
       "unknown name is an error naming it");
    ok(image_resolve("/nonexistent/dir", &img, &err) < 0 && strstr(err.msg, "/nonexistent/dir"),
       "missing directory is an error naming it");
    ok(image_resolve("", &img, &err) < 0, "empty name rejected");
    ok(image_resolve("/", &img, &err) < 0, "'/' refused (would be the whole host)");

    if (!mkdtemp(dir))
        return 1;
    ok(image_resolve(dir, &img, &err) < 0 && strstr(err.msg, "empty"), "empty directory rejected");
    {
        static struct image id;
        char want[PATH_MAX + 8], real[PATH_MAX];
        snprintf(want, sizeof(want), "dir:%s", realpath(dir, real) ? real : dir);
        ok(image_identify(dir, &id, &err) == 0 && strcmp(id.digest, want) == 0 && id.nentries == 0,
           "a directory is identified by its real path, unread (%s)", id.digest);
        ok(image_read_entries(&id, &err) < 0 && strstr(err.msg, "is empty"),
           "... and refused as empty once its entries are read (%s)", err.msg);
    }
    snprintf(path, sizeof(path), "%s/bin", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/proc", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/lib", dir);
    if (symlink("usr/lib", path) < 0)
        return 1;
    ok(image_resolve(dir, &img, &err) == 0, "directory image resolves (%s)", err.msg);
    ok(find(&img, "bin") && find(&img, "bin")->kind == IMAGE_ENTRY_DIR, "its bin is a directory");
    ok(find(&img, "lib") && strcmp(find(&img, "lib")->target, "usr/lib") == 0,
       "its symlink is kept");
    ok(find(&img, "proc") == NULL, "reserved names are not exposed");
    ok(!img.synth_etc, "directory images keep their own /etc");
    registry(&img, dir);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/lib", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/bin", dir);
    rmdir(path);
    snprintf(path, sizeof(path), "%s/proc", dir);
    rmdir(path);
    rmdir(dir);
    return done_testing();
}
