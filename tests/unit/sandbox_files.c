/*
 * Unit tests for src/sandbox/files.c through files.h, on a real sandbox: binary-safe round
 * trips in /work and /tmp, atomic replace, nested directories owned by the payload's user,
 * the path rules, symlinks the payload planted (to /, to /proc/self/root, in the middle of a
 * path) never followed, listings bounded, hostile archives refused whole, and archives of a
 * tree that store a symlink to / as a symlink.
 */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sandbox/files.h"
#include "sandbox/sandbox.h"
#include "tap.h"

static struct sandbox_runtime rt;
static struct image img;

/* sh(sb, script) — runs script with /bin/sh in sb; its stdout (the caller frees) or NULL
 * when it did not exit 0. */
static char *sh(struct sandbox *sb, const char *script)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    struct result res;
    char *out = NULL;

    sandbox_exec_input(sb, argv, NULL, NULL, 0, 0, &res);
    if (res.status == RESULT_OK)
        out = strdup(res.out.data ? res.out.data : "");
    else
        diag("script failed (%s): %s %s", script, res.message, res.err.data ? res.err.data : "");
    result_release(&res);
    return out;
}

/* sh_is(sb, script, want, name) — one check: the script's stdout is want. */
static void sh_is(struct sandbox *sb, const char *script, const char *want, const char *name)
{
    char *out = sh(sb, script);
    is_str(out, want, name);
    free(out);
}

/* An entry of a test archive. */
struct tent {
    const char *path;
    mode_t type; /* AE_IF* */
    mode_t perm;
    const char *data; /* a regular file's contents (len bytes), or a symlink's target */
    size_t len;
    const char *hardlink;
};

/* make_tar(ents, n, gzip, &len) — an archive of the entries in memory (caller frees). */
static char *make_tar(const struct tent *ents, size_t n, bool gzip, size_t *len)
{
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    struct archive *a = archive_write_new();
    struct archive_entry *e = archive_entry_new();

    archive_write_set_format_pax_restricted(a);
    if (gzip)
        archive_write_add_filter_gzip(a);
    archive_write_open_memory(a, buf, cap, len);
    for (size_t i = 0; i < n; i++) {
        archive_entry_clear(e);
        archive_entry_set_pathname(e, ents[i].path);
        archive_entry_set_filetype(e, ents[i].type);
        archive_entry_set_perm(e, ents[i].perm);
        if (ents[i].hardlink)
            archive_entry_set_hardlink(e, ents[i].hardlink);
        if (ents[i].type == AE_IFLNK)
            archive_entry_set_symlink(e, ents[i].data);
        if (ents[i].type == AE_IFCHR)
            archive_entry_set_rdev(e, makedev(1, 3));
        archive_entry_set_size(e, ents[i].type == AE_IFREG ? (la_int64_t)ents[i].len : 0);
        archive_write_header(a, e);
        if (ents[i].type == AE_IFREG && ents[i].len)
            archive_write_data(a, ents[i].data, ents[i].len);
    }
    archive_write_close(a);
    archive_write_free(a);
    archive_entry_free(e);
    return buf;
}

static void test_paths(struct sandbox *sb)
{
    static const char *const bad[] = {"../x",
                                      "/work/../etc/passwd",
                                      "/etc/passwd",
                                      "/work//a",
                                      "",
                                      "/workx/a",
                                      "a/./b",
                                      "/work/a/",
                                      "/",
                                      "/proc/1/environ"};
    struct errbuf err = {{0}};
    char *data = NULL;
    size_t len = 0;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ok(sandbox_file_write(sb, bad[i], "x", 1, 0, &err) == -EINVAL, "write '%s' refused: %s",
           bad[i], err.msg);
        ok(sandbox_file_read(sb, bad[i], 100, &data, &len, &err) == -EINVAL && !data,
           "read '%s' refused", bad[i]);
    }
    ok(sandbox_file_read(sb, "/work/missing", 100, &data, &len, &err) == -ENOENT &&
           strstr(err.msg, "/work/missing"),
       "a missing file is -ENOENT, named (%s)", err.msg);
    ok(sandbox_file_read(sb, "/work/nodir/f", 100, &data, &len, &err) == -ENOENT,
       "a missing directory on the way is -ENOENT");
}

static void test_round_trips(struct sandbox *sb)
{
    struct errbuf err = {{0}};
    char bin[600], *data = NULL;
    size_t len = 0;

    for (size_t i = 0; i < sizeof(bin); i++)
        bin[i] = (char)(i * 7); /* NUL bytes included */
    ok(sandbox_file_write(sb, "/work/a.bin", bin, sizeof(bin), 0, &err) == 0, "write binary (%s)",
       err.msg);
    ok(sandbox_file_read(sb, "/work/a.bin", 4096, &data, &len, &err) == 0 && len == sizeof(bin) &&
           memcmp(data, bin, len) == 0 && data[len] == '\0',
       "read it back byte for byte, NUL-terminated");
    free(data);
    sh_is(sb, "od -An -tx1 /work/a.bin | tr -d ' \\n' | cut -c1-16", "00070e151c232a31\n",
          "the payload reads the same bytes");
    ok(sandbox_file_read(sb, "/work/a.bin", 599, &data, &len, &err) == -EFBIG && !data,
       "read beyond max is -EFBIG (%s)", err.msg);
    ok(sandbox_file_write(sb, "rel.txt", "relative", 8, 0, &err) == 0 &&
           sandbox_file_read(sb, "/work/rel.txt", 100, &data, &len, &err) == 0 &&
           strcmp(data, "relative") == 0,
       "a relative path is below /work");
    free(data);
    ok(sandbox_file_write(sb, "/tmp/t.txt", "in tmp", 6, 0600, &err) == 0, "write in /tmp");
    sh_is(sb, "cat /tmp/t.txt; stat -c ' %a %u' /tmp/t.txt", "in tmp 600 1000\n",
          "the payload sees it in /tmp, mode 0600, its own");
    ok(sandbox_file_write(sb, "/work/a.bin", "new", 3, 0, &err) == 0 &&
           sandbox_file_read(sb, "/work/a.bin", 100, &data, &len, &err) == 0 && len == 3 &&
           strcmp(data, "new") == 0,
       "replace an existing file");
    free(data);
    sh_is(sb, "cat /work/a.bin; ls -a /work | grep -c crucible || true", "new0\n",
          "the payload sees the new contents and no temporary name");
    ok(sandbox_file_write(sb, "/work/d1/d2/d3/f", "deep", 4, 0, &err) == 0,
       "write with missing parents (%s)", err.msg);
    sh_is(sb, "stat -c '%a %u %g' /work/d1 /work/d1/d2/d3 /work/d1/d2/d3/f",
          "755 1000 1000\n755 1000 1000\n644 1000 1000\n",
          "parents made 0755, file 0644, all the payload user's");
    sh_is(sb, "test -O /work/a.bin && echo >> /work/d1/d2/d3/f && mkdir /work/d1/mine && echo ok",
          "ok\n", "the payload owns and can change what was written");
    ok(sandbox_file_write(sb, "/work/d1", "x", 1, 0, &err) == -EISDIR, "writing over a directory "
                                                                       "is -EISDIR");
    ok(sandbox_file_read(sb, "/work/d1", 100, &data, &len, &err) == -EISDIR, "reading a "
                                                                             "directory is "
                                                                             "-EISDIR");
    ok(sandbox_file_write(sb, "/work", "x", 1, 0, &err) == -EISDIR, "writing /work is -EISDIR");
    sh_is(sb, "mkfifo /work/fifo && echo made", "made\n", "the payload makes a FIFO");
    ok(sandbox_file_read(sb, "/work/fifo", 100, &data, &len, &err) == -EINVAL,
       "reading a FIFO is -EINVAL, without hanging (%s)", err.msg);
    ok(sandbox_file_write(sb, "/work/fifo", "x", 1, 0, &err) == -EEXIST,
       "writing over a FIFO is -EEXIST");
    ok(sandbox_file_write(sb, "/work/d1/d2/d3/f/g", "x", 1, 0, &err) == -ENOTDIR,
       "a file on the way is -ENOTDIR (%s)", err.msg);
}

/* A full scratch: the write fails as -ENOSPC and leaves no temporary file; an archive that
 * says it holds more than the scratch is refused before anything is written. */
static void test_full(void)
{
    struct sandbox_limits lim;
    struct errbuf err = {{0}};
    struct sandbox *sb;
    size_t big = (size_t)3 << 20, len;
    char *data = calloc(1, big), *tar;

    sandbox_limits_default(&lim);
    lim.disk_mb = 2;
    sb = sandbox_create(&rt, &img, &lim, &err);
    if (!ok(sb != NULL && data, "a sandbox with a 2 MB scratch (%s)", err.msg)) {
        free(data);
        return;
    }
    ok(sandbox_file_write(sb, "/work/big", data, big, 0, &err) == -ENOSPC &&
           strstr(err.msg, "scratch disk full"),
       "3 MB into 2 MB is -ENOSPC (%s)", err.msg);
    sh_is(sb, "ls -a /work | wc -l", "2\n", "... and no temporary file is left");
    {
        struct tent e[2] = {{"small", AE_IFREG, 0644, "x", 1, NULL},
                            {"big", AE_IFREG, 0644, data, big, NULL}};
        tar = make_tar(e, 2, true, &len);
        struct sandbox_dirent *ents;
        size_t n;
        ok(sandbox_file_put_tar(sb, "/work/t", tar, len, &err) == -ENOSPC &&
               sandbox_file_list(sb, "/work/t", 10, &ents, &n, NULL) == -ENOENT,
           "a (gzip) archive holding more than the scratch is refused first (%s)", err.msg);
        free(tar);
    }
    ok(sandbox_file_write(sb, "/work/ok", "fine", 4, 0, &err) == 0,
       "the sandbox takes files again");
    sandbox_destroy(sb, NULL);
    free(data);
}

static void test_symlinks(struct sandbox *sb)
{
    struct errbuf err = {{0}};
    char *data = NULL, host[128];
    size_t len = 0;
    struct sandbox_dirent *ents;
    size_t n;

    sh_is(sb,
          "ln -s / /work/out && ln -s /proc/self/root /work/pr && mkdir /work/real && "
          "ln -s /work/real /work/mid && ln -s /etc/passwd /work/pw && echo ok",
          "ok\n", "the payload plants symlinks");
    ok(sandbox_file_read(sb, "/work/out/etc/passwd", 1 << 20, &data, &len, &err) == -ELOOP &&
           !data && len == 0 && strstr(err.msg, "symlink"),
       "a symlink to / is not followed: -ELOOP, nothing read (%s)", err.msg);
    ok(sandbox_file_read(sb, "/work/pr/etc/passwd", 1 << 20, &data, &len, &err) == -ELOOP && !data,
       "a symlink to /proc/self/root is not followed");
    ok(sandbox_file_read(sb, "/work/pw", 1 << 20, &data, &len, &err) == -ELOOP && !data,
       "a symlink as the last component is not followed");
    ok(sandbox_file_read(sb, "/work/mid/x", 100, &data, &len, &err) == -ELOOP,
       "a symlink in the middle of a path is not followed");
    snprintf(host, sizeof(host), "/tmp/crucible-files-test-%d", (int)getpid());
    unlink(host);
    {
        char through[200];
        snprintf(through, sizeof(through), "/work/out%s", host);
        ok(sandbox_file_write(sb, through, "x", 1, 0, &err) == -ELOOP && access(host, F_OK) < 0,
           "a write through a symlink to / is -ELOOP and creates nothing on the host");
    }
    ok(sandbox_file_write(sb, "/work/mid/new", "x", 1, 0, &err) == -ELOOP,
       "a write through a symlink in the middle is -ELOOP");
    sh_is(sb, "ls /work/real | wc -l", "0\n", "... and nothing was written there");
    ok(sandbox_file_list(sb, "/work/out", 100, &ents, &n, &err) == -ELOOP,
       "listing through a symlink is -ELOOP");
    ok(sandbox_file_write(sb, "/work/pw", "x", 1, 0, &err) == -EEXIST,
       "a write over a symlink is -EEXIST, the link left alone");
    sh_is(sb, "readlink /work/pw", "/etc/passwd\n", "... the symlink is unchanged");
}

/* A payload that keeps swapping a directory for a symlink to / while the supervisor writes
 * through its name: every write lands in the directory or is refused, none on the host. A
 * bounded probe: at most 20000 writes (fewer once both outcomes were seen 20 times), the
 * swapping loop killed after. */
static void test_race(struct sandbox *sb)
{
    struct errbuf err = {{0}};
    char host[128], path[200];
    int landed = 0, refused = 0, other = 0;

    snprintf(host, sizeof(host), "/tmp/crucible-files-race-%d", (int)getpid());
    unlink(host);
    snprintf(path, sizeof(path), "/work/race%s", host);
    sh_is(sb,
          "mkdir -p /work/race/tmp && (for i in $(seq 1 100000); do rm -rf /work/race; "
          "ln -s / /work/race; rm /work/race; mkdir -p /work/race/tmp; done >/dev/null 2>&1 &) "
          "&& echo started",
          "started\n", "the payload swaps /work/race between a directory and a symlink to /");
    for (int i = 0; i < 20000 && (landed < 20 || refused < 20); i++) {
        int r = sandbox_file_write(sb, path, "x", 1, 0, &err);
        if (r == 0)
            landed++;
        else if (r == -ELOOP || r == -ENOENT)
            refused++;
        else
            other++;
    }
    diag("race: %d writes landed in the directory, %d refused, %d other failures", landed, refused,
         other);
    ok(access(host, F_OK) < 0, "no write reached the host through the swapped symlink");
    ok(sandbox_kill_others(sb, &err) == 0, "the swapping loop is stopped (%s)", err.msg);
}

static void test_list(struct sandbox *sb)
{
    struct errbuf err = {{0}};
    struct sandbox_dirent *ents = NULL;
    size_t n = 0;

    sh_is(sb,
          "mkdir /work/l && cd /work/l && printf 12345 > b && mkdir c && ln -s b a && "
          "mkdir many && for i in $(seq 1 50); do : > many/f$i; done && echo ok",
          "ok\n", "the payload fills directories");
    ok(sandbox_file_list(sb, "/work/l", 10, &ents, &n, &err) == 0 && n == 4, "list (%s)", err.msg);
    if (n == 4) {
        ok(strcmp(ents[0].name, "a") == 0 && ents[0].type == SBF_SYMLINK, "sorted: a, a symlink");
        ok(strcmp(ents[1].name, "b") == 0 && ents[1].type == SBF_FILE && ents[1].size == 5 &&
               ents[1].mode == 0644 && ents[1].mtime > 1e9,
           "b, a file of 5 bytes, 0644, with its mtime");
        ok(strcmp(ents[2].name, "c") == 0 && ents[2].type == SBF_DIR, "c, a directory");
        ok(strcmp(ents[3].name, "many") == 0, "many");
    }
    sandbox_dirents_free(ents, n);
    ok(sandbox_file_list(sb, "/work/l/many", 10, &ents, &n, &err) == -E2BIG && !ents,
       "more entries than max is -E2BIG (%s)", err.msg);
    ok(sandbox_file_list(sb, "/work/l/many", 50, &ents, &n, &err) == 0 && n == 50,
       "exactly max entries are listed");
    sandbox_dirents_free(ents, n);
    ok(sandbox_file_list(sb, "/tmp", 1000, &ents, &n, &err) == 0, "list /tmp itself");
    sandbox_dirents_free(ents, n);
    ok(sandbox_file_list(sb, "/work/l/b", 10, &ents, &n, &err) == -ENOTDIR,
       "listing a file is -ENOTDIR");
}

static void test_put_tar(struct sandbox *sb)
{
    static const char nul3[] = {'x', '\0', 'y'};
    const struct tent good[] = {
        {"./", AE_IFDIR, 0755, NULL, 0, NULL},
        {"./dir/", AE_IFDIR, 0750, NULL, 0, NULL},
        {"./dir/f.bin", AE_IFREG, 0640, nul3, 3, NULL},
        {"./dir/link", AE_IFLNK, 0777, "f.bin", 0, NULL},
        {"top.txt", AE_IFREG, 0644, "top", 3, NULL},
        {"implicit/parent/file", AE_IFREG, 0600, "deep", 4, NULL},
    };
    struct errbuf err = {{0}};
    struct sandbox_dirent *ents;
    char *tar, *data = NULL;
    size_t len, dlen, n;

    for (int gz = 0; gz < 2; gz++) {
        const char *dest = gz ? "/work/upgz" : "/work/up";
        char script[256];
        tar = make_tar(good, sizeof(good) / sizeof(good[0]), gz, &len);
        ok(sandbox_file_put_tar(sb, dest, tar, len, &err) == 0, "%s archive unpacked (%s)",
           gz ? "a gzip" : "a plain", err.msg);
        free(tar);
        snprintf(script, sizeof(script),
                 "cd %s && od -An -c dir/f.bin | tr -s ' ' && readlink dir/link && cat top.txt "
                 "implicit/parent/file && stat -c '%%a %%u' dir dir/f.bin implicit",
                 dest);
        sh_is(sb, script, " x \\0 y\nf.bin\ntopdeep750 1000\n640 1000\n755 1000\n",
              "files, NUL bytes, symlinks, modes and the payload's ownership as in the archive");
    }
    ok(sandbox_file_read(sb, "/work/up/dir/f.bin", 10, &data, &dlen, &err) == 0 && dlen == 3 &&
           memcmp(data, nul3, 3) == 0,
       "read back what the archive held");
    free(data);

    /* Hostile archives: a harmless first entry, then the bad one. Each is refused whole. */
    static const struct {
        struct tent bad[2];
        const char *what;
    } hostile[] = {
        {{{"../x", AE_IFREG, 0644, "x", 1, NULL}}, "'..'"},
        {{{"/abs", AE_IFREG, 0644, "x", 1, NULL}}, "an absolute path"},
        {{{"hl", AE_IFREG, 0644, NULL, 0, "ok.txt"}}, "a hard link"},
        {{{"dev", AE_IFCHR, 0644, NULL, 0, NULL}}, "a device node"},
        {{{"fifo", AE_IFIFO, 0644, NULL, 0, NULL}}, "a FIFO"},
        {{{"suid", AE_IFREG, 04755, "x", 1, NULL}}, "a setuid bit"},
        {{{"sgid", AE_IFDIR, 02755, NULL, 0, NULL}}, "a setgid directory"},
        {{{"s", AE_IFLNK, 0777, "/", 0, NULL}, {"s/etc/evil", AE_IFREG, 0644, "x", 1, NULL}},
         "a symlink, then a file through it"},
        {{{"f", AE_IFREG, 0644, "x", 1, NULL}, {"f/g", AE_IFREG, 0644, "x", 1, NULL}},
         "a file, then a file below it"},
        {{{"a/b/../../../x", AE_IFREG, 0644, "x", 1, NULL}}, "'..' inside"},
        {{{"twice", AE_IFREG, 0644, "x", 1, NULL}, {"twice", AE_IFREG, 0644, "y", 1, NULL}},
         "an entry given twice"},
    };
    for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
        struct tent ents3[3] = {{"ok.txt", AE_IFREG, 0644, "fine", 4, NULL}};
        char dest[64];
        int k = 1;
        for (int j = 0; j < 2 && hostile[i].bad[j].path; j++)
            ents3[k++] = hostile[i].bad[j];
        snprintf(dest, sizeof(dest), "/work/h%zu", i);
        tar = make_tar(ents3, (size_t)k, false, &len);
        int r = sandbox_file_put_tar(sb, dest, tar, len, &err);
        free(tar);
        ok(r < 0 && sandbox_file_list(sb, dest, 10, &ents, &n, NULL) == -ENOENT,
           "%s is refused and nothing is written (%s)", hostile[i].what, err.msg);
    }
    /* The destination's own symlinks count too. */
    sh_is(sb, "mkdir /work/hd && ln -s / /work/hd/esc && echo ok", "ok\n",
          "the payload plants a symlink in the destination");
    {
        struct tent e[2] = {{"ok.txt", AE_IFREG, 0644, "fine", 4, NULL},
                            {"esc/tmp/evil", AE_IFREG, 0644, "x", 1, NULL}};
        tar = make_tar(e, 2, false, &len);
        ok(sandbox_file_put_tar(sb, "/work/hd", tar, len, &err) == -EINVAL,
           "an entry through the destination's symlink is refused (%s)", err.msg);
        free(tar);
        sh_is(sb, "ls /work/hd", "esc\n", "... and nothing was written");
    }
    tar = make_tar(good, 2, false, &len);
    ok(sandbox_file_put_tar(sb, "/work/up/top.txt", tar, len, &err) < 0,
       "unpacking into a file is refused");
    free(tar);
    ok(sandbox_file_put_tar(sb, "/work/junk", "not a tar at all, just text", 27, &err) == -EINVAL &&
           sandbox_file_list(sb, "/work/junk", 10, &ents, &n, NULL) == -ENOENT,
       "garbage is not an archive (%s)", err.msg);
}

/* tar_entries(tar, len, names, size) — "path type [target|size]" lines of an archive. */
static int tar_entries(const char *tar, size_t len, char *out, size_t size)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e;
    size_t used = 0;
    int count = 0;

    archive_read_support_format_tar(a);
    if (archive_read_open_memory(a, tar, len) != ARCHIVE_OK)
        return -1;
    out[0] = '\0';
    while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
        mode_t t = archive_entry_filetype(e);
        used += (size_t)snprintf(out + used, size - used, "%s %s %s;", archive_entry_pathname(e),
                                 t == AE_IFDIR   ? "dir"
                                 : t == AE_IFLNK ? "link"
                                                 : "file",
                                 t == AE_IFLNK ? archive_entry_symlink(e) : "");
        count++;
    }
    archive_read_free(a);
    return count;
}

static void test_get_tar(struct sandbox *sb)
{
    struct errbuf err = {{0}};
    char *tar = NULL, *data = NULL, list[1024];
    size_t len = 0, dlen;

    sh_is(sb,
          "mkdir -p /work/g/sub && printf 'x\\0y' > /work/g/sub/b && ln -s / /work/g/root && "
          "mkfifo /work/g/fifo && echo ok",
          "ok\n", "the payload makes a tree with a symlink to / and a FIFO");
    ok(sandbox_file_get_tar(sb, "/work/g", 1 << 20, &tar, &len, &err) == 0 && len > 0,
       "archive of the tree (%s)", err.msg);
    is_int(tar_entries(tar, len, list, sizeof(list)), 3, "three entries: the FIFO skipped");
    is_str(list, "root link /;sub/ dir ;sub/b file ;",
           "the symlink to / stored as a link, nothing of the host's root below it");
    ok(sandbox_file_put_tar(sb, "/work/g2", tar, len, &err) == 0 &&
           sandbox_file_read(sb, "/work/g2/sub/b", 10, &data, &dlen, &err) == 0 && dlen == 3 &&
           memcmp(data, "x\0y", 3) == 0,
       "the archive unpacks again, bytes intact (%s)", err.msg);
    free(data);
    free(tar);
    tar = NULL;
    ok(sandbox_file_get_tar(sb, "/work/g", 1024, &tar, &len, &err) == -EFBIG && !tar,
       "an archive beyond max is -EFBIG (%s)", err.msg);
    ok(sandbox_file_get_tar(sb, "/work/g/root", 1 << 20, &tar, &len, &err) == -ELOOP,
       "archiving through a symlink is -ELOOP");
    sh_is(sb, "d=/work/deep; for i in $(seq 1 300); do d=$d/d; done; mkdir -p $d && echo ok",
          "ok\n", "the payload makes a tree 300 directories deep");
    ok(sandbox_file_get_tar(sb, "/work/deep", 1 << 20, &tar, &len, &err) == -ELOOP && !tar &&
           strstr(err.msg, "directories deep"),
       "archiving it is refused, bounded (%.100s)", err.msg);
}

int main(void)
{
    struct errbuf err = {{0}};
    struct sandbox_limits lim;
    struct sandbox *sb;

    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &img, &err) < 0) {
        diag("%s", err.msg);
        skip("sandbox runtime unavailable");
        return done_testing();
    }
    sandbox_limits_default(&lim);
    sb = sandbox_create(&rt, &img, &lim, &err);
    if (!ok(sb != NULL, "sandbox created (%s)", err.msg))
        return done_testing();
    test_paths(sb);
    test_round_trips(sb);
    test_symlinks(sb);
    test_race(sb);
    test_list(sb);
    test_put_tar(sb);
    test_get_tar(sb);
    ok(sandbox_destroy(sb, &err) == 0, "destroyed");
    test_full();
    sandbox_runtime_release(&rt);
    return done_testing();
}
