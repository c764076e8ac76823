/* Unit tests for src/image/unpack.c: layers applied in order, whiteouts, opaque directories,
 * and every hostile entry refused or neutralised without touching anything outside the root. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image/unpack.h"
#include "image_tar.h"
#include "tap.h"

static char base[64];

/* apply(u, t, err) — the archive in t applied as one layer. */
static int apply(struct unpack *u, struct tarbuf *t, struct errbuf *err)
{
    struct archive *a = archive_read_new();
    int r;

    archive_read_support_format_tar(a);
    archive_read_open_memory(a, t->data, t->used);
    r = unpack_layer(u, a, err);
    archive_read_free(a);
    free(t->data);
    return r;
}

static bool exists(const char *rel)
{
    char p[256];
    struct stat st;

    snprintf(p, sizeof(p), "%s/root/%s", base, rel);
    return lstat(p, &st) == 0;
}

static mode_t mode_of(const char *rel)
{
    char p[256];
    struct stat st;

    snprintf(p, sizeof(p), "%s/root/%s", base, rel);
    return lstat(p, &st) == 0 ? st.st_mode : 0;
}

/* fresh(u) — an empty root and a new unpack state with small limits. */
static void fresh(struct unpack *u)
{
    char p[128];

    unpack_release(u);
    if (u->rootfd > 0)
        close(u->rootfd);
    snprintf(p, sizeof(p), "%s/root", base);
    unpack_remove_tree(AT_FDCWD, p);
    mkdir(p, 0755);
    memset(u, 0, sizeof(*u));
    u->rootfd = open(p, O_RDONLY | O_DIRECTORY);
    u->lim.max_bytes = 1 << 20;
    u->lim.max_entries = 1000;
    u->chown = geteuid() == 0;
}

static void hostile(struct unpack *u, const char *what, const char *needle,
                    void (*build)(struct tarbuf *))
{
    struct tarbuf t;
    struct errbuf err = {{0}};

    fresh(u);
    tar_begin(&t, 4 << 20);
    build(&t);
    tar_end(&t);
    ok(apply(u, &t, &err) < 0 && strstr(err.msg, needle), "%s refused (%s)", what, err.msg);
}

static void b_dotdot(struct tarbuf *t)
{
    tar_file(t, "a/../../escape", "x");
}
static void b_abs(struct tarbuf *t)
{
    tar_file(t, "/etc/x", "x");
}
static void b_through(struct tarbuf *t)
{
    tar_link(t, "out", base);
    tar_file(t, "out/planted", "x");
}
static void b_escape_link(struct tarbuf *t)
{
    tar_dir(t, "a");
    tar_link(t, "a/up", "../../x");
}
static void b_hard_out(struct tarbuf *t)
{
    tar_hardlink(t, "h", "etc/passwd");
}
static void b_big(struct tarbuf *t)
{
    static char big[(1 << 20) + 10];
    memset(big, 'z', sizeof(big) - 1);
    tar_file(t, "big", big);
}
static void b_many(struct tarbuf *t)
{
    char name[32];
    for (int i = 0; i < 1001; i++) {
        snprintf(name, sizeof(name), "f%d", i);
        tar_file(t, name, "");
    }
}

int main(void)
{
    struct unpack u = {0};
    struct tarbuf t;
    struct errbuf err = {{0}};
    char p[256];

    snprintf(base, sizeof(base), "/tmp/crucible-unpack-XXXXXX");
    if (!mkdtemp(base))
        return 1;
    fresh(&u);

    /* two layers: the second whites out, makes a directory opaque, replaces a symlink */
    tar_begin(&t, 1 << 16);
    tar_dir(&t, "./etc");
    tar_file(&t, "./etc/keep", "k");
    tar_file(&t, "./etc/gone", "g");
    tar_dir(&t, "opq");
    tar_file(&t, "opq/old", "o");
    tar_dir(&t, "opq/sub2");
    tar_file(&t, "opq/sub2/lower", "l");
    tar_mode(&t, "bin-suid", "s", 04755);
    tar_link(&t, "abs", "/etc/keep");
    tar_link(&t, "victim", base);
    tar_file(&t, "f1", "one");
    tar_hardlink(&t, "f1-link", "f1");
    tar_special(&t, "fifo", AE_IFIFO);
    tar_special(&t, "dev", AE_IFCHR);
    tar_end(&t);
    ok(apply(&u, &t, &err) == 0, "layer 1 applies (%s)", err.msg);
    ok(exists("etc/keep") && exists("f1-link") && S_ISLNK(mode_of("abs")),
       "files, hard links within the layer and absolute symlinks are made");
    ok(!(mode_of("bin-suid") & 06000) && u.stripped == 1, "setuid is stripped and counted");
    ok(!exists("fifo") && !exists("dev") && u.skipped == 2, "fifos and device nodes are skipped");

    tar_begin(&t, 1 << 16);
    tar_file(&t, "etc/.wh.gone", "");
    tar_dir(&t, "opq");
    tar_file(&t, "opq/new", "n");
    tar_file(&t, "opq/sub2/deep", "d"); /* no entry of its own for opq/sub2 */
    tar_file(&t, "opq/.wh..wh..opq", "");
    tar_file(&t, "victim", "replaced");
    tar_file(&t, ".wh.nothing-here", "");
    tar_end(&t);
    ok(apply(&u, &t, &err) == 0, "layer 2 applies (%s)", err.msg);
    ok(exists("etc/keep") && !exists("etc/gone"), "a whiteout removes the lower file only");
    ok(!exists("opq/old") && exists("opq/new"),
       "an opaque directory loses the lower layer's entries, keeps its own (marker after them)");
    ok(exists("opq/sub2/deep") && !exists("opq/sub2/lower"),
       "  and inside a directory the layer only passed through, the same");
    ok(S_ISREG(mode_of("victim")), "a symlink is replaced by a file, never written through");
    snprintf(p, sizeof(p), "%s/planted", base);
    ok(access(p, F_OK) != 0, "nothing was written outside the root");

    tar_begin(&t, 1 << 16);
    tar_hardlink(&t, "f2", "f1");
    tar_end(&t);
    ok(apply(&u, &t, &err) < 0 && strstr(err.msg, "did not create"),
       "a hard link to a lower layer's file is refused (%s)", err.msg);
    ok(unpack_finish(&u, &err) == 0, "directory modes applied at the end");

    hostile(&u, "'..'", "climbs out", b_dotdot);
    hostile(&u, "an absolute path", "absolute", b_abs);
    hostile(&u, "a path through a symlink", "goes through", b_through);
    snprintf(p, sizeof(p), "%s/planted", base);
    ok(access(p, F_OK) != 0, "  and nothing was planted through the link");
    hostile(&u, "a relative symlink out of the root", "outside the image root", b_escape_link);
    hostile(&u, "a hard link out of the layer", "did not create", b_hard_out);
    hostile(&u, "a file past the byte limit", "unpacked-size limit", b_big);
    hostile(&u, "more entries than the limit", "entries", b_many);

    unpack_release(&u);
    close(u.rootfd);
    unpack_remove_tree(AT_FDCWD, base);
    return done_testing();
}
