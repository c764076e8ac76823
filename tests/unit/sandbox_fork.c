/*
 * Unit tests for src/sandbox/fork.c: sandbox_fork on real sandboxes. The child sees the
 * parent's files as they were (contents, modes, times, symlinks, FIFOs, hard links, holes,
 * its own user as owner); writes in either do not reach the other; the parent's processes
 * are not copied, and the parent's background process keeps running after the fork; a
 * writable root's changes (new files, a removed file's whiteout, a directory made opaque) are
 * copied too.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/files.h"
#include "sandbox/sandbox.h"
#include "tap.h"

static struct sandbox_runtime rt;
static struct image img;

/* sh_flags(sb, script, flags) — script's stdout (caller frees), or NULL when it did not exit
 * 0; sh: without flags. */
static char *sh_flags(struct sandbox *sb, const char *script, unsigned flags)
{
    const char *argv[] = {"/bin/sh", "-c", script, NULL};
    struct result res;
    char *out = NULL;

    sandbox_exec_input(sb, argv, NULL, NULL, 0, flags, &res);
    if (res.status == RESULT_OK)
        out = strdup(res.out.data ? res.out.data : "");
    else
        diag("script failed (%s): %s %s", script, res.message, res.err.data ? res.err.data : "");
    result_release(&res);
    return out;
}

static char *sh(struct sandbox *sb, const char *script)
{
    return sh_flags(sb, script, 0);
}

static void sh_is(struct sandbox *sb, const char *script, const char *want, const char *name)
{
    char *out = sh(sb, script);
    is_str(out, want, name);
    free(out);
}

/* The processes of a sandbox, by name, sorted, without the shell asking. */
#define PROCS "for p in /proc/[0-9]*; do cat $p/comm 2>/dev/null; done | sort -u | tr '\\n' ' '"

static void test_fork(const struct sandbox_limits *lim)
{
    struct errbuf err = {{0}};
    struct sandbox *parent, *child;
    char bin[4096], *data = NULL, *out;
    size_t len = 0;

    for (size_t i = 0; i < sizeof(bin); i++)
        bin[i] = (char)(i * 13);
    parent = sandbox_create(&rt, &img, lim, &err);
    if (!ok(parent != NULL, "parent created (%s)", err.msg))
        return;
    ok(sandbox_file_write(parent, "/work/dir/b.bin", bin, sizeof(bin), 0640, &err) == 0 &&
           sandbox_file_write(parent, "/work/a.txt", "parent", 6, 0, &err) == 0 &&
           sandbox_file_write(parent, "/tmp/t", "in tmp", 6, 0, &err) == 0,
       "files written into the parent (%s)", err.msg);
    /* A session's exec (KEEP): what it leaves running lives under a keeper, pid 1 of a pid
     * namespace of its own, which the fork stops and continues too. */
    out = sh_flags(parent,
                   "cd /work && ln -s / rootlink && ln -s a.txt link && mkfifo fifo && ln a.txt "
                   "hard && chmod 600 a.txt "
                   "&& touch -d @1000000000 old && truncate -s 100M sparse && mkdir -m 700 private "
                   "&& cp /bin/sleep /tmp/bgsleeper && (/tmp/bgsleeper 1000 >/dev/null 2>&1 &) && "
                   "(while :; do echo x >> /work/ticks; sleep 0.05; done >/dev/null 2>&1 &) && "
                   "echo ok",
                   SANDBOX_EXEC_KEEP);
    is_str(out, "ok\n",
           "the parent makes links, a FIFO, a sparse file of 100 MB and background "
           "processes");
    free(out);
    child = sandbox_fork(parent, &err);
    if (!ok(child != NULL, "forked (%s)", err.msg)) {
        sandbox_destroy(parent, NULL);
        return;
    }
    ok(sandbox_file_read(child, "/work/dir/b.bin", 1 << 20, &data, &len, &err) == 0 &&
           len == sizeof(bin) && memcmp(data, bin, len) == 0,
       "the child has the parent's file byte for byte");
    free(data);
    sh_is(child,
          "cd /work && cat a.txt /tmp/t && echo && readlink link && test -p fifo && "
          "stat -c '%a %u %g %h' a.txt dir dir/b.bin private /tmp && "
          "test $(stat -c %i a.txt) = $(stat -c %i hard) && stat -c %Y old && "
          "stat -c '%s %b' sparse",
          "parentin tmp\na.txt\n600 1000 1000 2\n755 1000 1000 2\n640 1000 1000 1\n"
          "700 1000 1000 2\n1777 1000 1000 2\n1000000000\n104857600 0\n",
          "contents, symlink, FIFO, modes, the child's user as owner, the hard link, mtime, "
          "and the 100 MB hole kept a hole in a 64 MB scratch");
    sh_is(child, "test -L /work/rootlink && readlink /work/rootlink", "/\n",
          "a symlink to / is copied as a symlink, not followed");
    out = sh(child, PROCS);
    ok(out && !strstr(out, "bgsleeper") && strstr(out, "crucible-init"),
       "processes are not copied (%s)", out ? out : "");
    free(out);
    out = sh(parent, "for p in /proc/[0-9]*; do [ \"$(cat $p/comm)\" = bgsleeper ] && "
                     "sed -n 's/^State:\t\\(.\\).*/\\1/p' $p/status; done; true");
    ok(out && strcmp(out, "S\n") == 0,
       "the parent's background process is continued after the fork: sleeping, not stopped "
       "(%s)",
       out ? out : "");
    free(out);
    out = sh(parent, "for p in /proc/[0-9]*; do sed -n 's/^State:\t\\(.\\).*/\\1/p' $p/status; "
                     "done | sort -u | tr -d '\\n'");
    ok(out && *out && !strchr(out, 'T') && !strchr(out, 't'),
       "no process of the parent is left stopped, its exec's keeper included (states %s)",
       out ? out : "");
    free(out);
    sh_is(parent,
          "a=$(wc -l < /work/ticks); sleep 0.5; b=$(wc -l < /work/ticks); "
          "[ $b -gt $a ] && echo ticking",
          "ticking\n", "the parent's background loop keeps running");
    /* Divergence, both ways. */
    ok(sandbox_file_write(child, "/work/a.txt", "child", 5, 0, &err) == 0 &&
           sandbox_file_write(parent, "/work/only-parent", "p", 1, 0, &err) == 0,
       "writes in both");
    ok(sandbox_file_read(parent, "/work/a.txt", 100, &data, &len, &err) == 0 &&
           strcmp(data, "parent") == 0,
       "the child's write is not in the parent");
    free(data);
    ok(sandbox_file_read(child, "/work/only-parent", 100, &data, &len, &err) == -ENOENT,
       "the parent's write is not in the child");
    sh_is(child, "echo more > /work/dir/new && rm /work/hard && cat /work/a.txt", "child",
          "the child changes its tree");
    sh_is(parent, "ls /work/dir && cat /work/hard", "b.bin\nparent",
          "the parent's tree is as it was");
    /* A fork of a fork. */
    {
        struct sandbox *grandchild = sandbox_fork(child, &err);
        ok(grandchild != NULL, "a fork of the fork (%s)", err.msg);
        if (grandchild)
            sh_is(grandchild, "cat /work/a.txt /work/dir/new", "childmore\n",
                  "... sees the fork's state");
        sandbox_destroy(grandchild, NULL);
    }
    /* A tree deeper than a fork copies: refused whole, the parent continued all the same. */
    sh_is(child, "d=/work/deep; for i in $(seq 1 300); do d=$d/d; done; mkdir -p $d && echo ok",
          "ok\n", "the fork makes a tree 300 directories deep");
    {
        struct sandbox *deep = sandbox_fork(child, &err);
        ok(!deep && strstr(err.msg, "directories deep"), "a fork of it is refused (%.120s)",
           err.msg);
        sandbox_destroy(deep, NULL);
    }
    sh_is(child, "cat /work/a.txt", "child", "... and the sandbox goes on");
    ok(sandbox_destroy(child, &err) == 0, "child destroyed");
    sh_is(parent, "cat /work/a.txt", "parent", "the parent is unaffected by the child's end");
    ok(sandbox_destroy(parent, &err) == 0, "parent destroyed");
}

/* A writable root: changes to the image's directories live in the scratch (an overlay's
 * upper directory) and are copied with it. */
static void test_writable_root(const struct image *image, const struct sandbox_limits *base)
{
    struct sandbox_limits lim = *base;
    struct errbuf err = {{0}};
    struct sandbox *parent, *child;

    diag("writable root of image '%s' (%s)", image->name,
         image->whole_root ? "one overlay of its root" : "an overlay per directory");
    char yes[512], local[512];
    snprintf(yes, sizeof(yes), "%s/usr/bin/yes", image->root);
    snprintf(local, sizeof(local), "%s/usr/local/forktest", image->root);
    if (access("/usr/share/common-licenses/GPL-3", F_OK) < 0 || access(yes, F_OK) < 0) {
        skip("the host lacks /usr/share/common-licenses or /usr/bin/yes");
        return;
    }
    lim.writable_root = true;
    parent = sandbox_create(&rt, image, &lim, &err);
    if (!ok(parent != NULL, "writable-root parent created (%s)", err.msg))
        return;
    sh_is(parent,
          "echo local > /usr/local/forktest && rm /usr/bin/yes && "
          "rm -rf /usr/share/common-licenses && mkdir /usr/share/common-licenses && "
          "touch /usr/share/common-licenses/new && echo ok",
          "ok\n", "the parent adds a file, removes one and replaces a directory of the image");
    child = sandbox_fork(parent, &err);
    if (ok(child != NULL, "forked (%s)", err.msg))
        sh_is(child,
              "cat /usr/local/forktest; test -e /usr/bin/yes || echo yes-gone; "
              "ls /usr/share/common-licenses; test -x /usr/bin/env && echo env-kept; "
              "echo x > /dev/null && head -c 3 /dev/urandom | wc -c",
              "local\nyes-gone\nnew\nenv-kept\n3\n",
              "the child has the new file, the removal (a whiteout) and the opaque directory; the "
              "rest of the image and its devices are there");
    ok(access(yes, F_OK) == 0 && access(local, F_OK) < 0, "the image's directories are untouched");
    sandbox_destroy(child, NULL);
    sandbox_destroy(parent, NULL);
}

/* A payload that runs commands in a loop in the background: dash starts each with vfork, so
 * a pause often finds the shell inside vfork, waiting for a child the pause has stopped. Every
 * fork must still be made, and the parent left running. */
static void test_fork_vfork_loop(const struct sandbox_limits *lim)
{
    struct errbuf err = {{0}};
    struct sandbox *parent, *child;
    int made = 0;

    if (!(parent = sandbox_create(&rt, &img, lim, &err))) {
        diag("%s", err.msg);
        skip("cannot create a sandbox");
        return;
    }
    free(sh_flags(parent,
                  "(i=0; while [ $i -lt 1000000 ]; do i=$((i+1)); /bin/true; "
                  "echo $i > /work/n.t; mv /work/n.t /work/n; done) >/dev/null 2>&1 &",
                  SANDBOX_EXEC_KEEP));
    for (int i = 0; i < 5; i++) {
        if ((child = sandbox_fork(parent, &err))) {
            made++;
            sandbox_destroy(child, NULL);
        } else {
            diag("fork %d: %s", i, err.msg);
        }
    }
    ok(made == 5,
       "5 forks of a sandbox whose background loop runs a command per turn (vfork): "
       "all made (%d)",
       made);
    /* the loop renames each count into place, so a read never sees a half-written file; it
     * is given 10 s to count on, which a running loop does in a few ms even on a loaded host */
    sh_is(parent,
          "a=$(cat /work/n); for k in $(seq 100); do sleep 0.1; b=$(cat /work/n); "
          "[ $b -gt $a ] && echo on && break; done",
          "on\n", "the loop keeps running after the forks");
    sandbox_destroy(parent, NULL);
}

/* sandbox_fork_into: the copy lands in a child made ahead (as a pool's spare is), with the
 * parent's files; a child of another scratch size or network is refused before any copy. */
static void test_fork_into(const struct sandbox_limits *lim)
{
    struct errbuf err = {{0}};
    struct sandbox_limits other = *lim;
    struct sandbox *parent, *child, *odd;
    struct sandbox_runtime copy = rt; /* a pool makes its spares with a copy of the runtime */

    parent = sandbox_create(&rt, &img, lim, &err);
    child = sandbox_create(&copy, &img, lim, &err);
    other.disk_mb = lim->disk_mb * 2;
    odd = sandbox_create(&rt, &img, &other, &err);
    if (!ok(parent && child && odd,
            "parent, a child made ahead and one of another disk size "
            "(%s)",
            err.msg))
        goto out;
    ok(sandbox_file_write(parent, "/work/into.txt", "made ahead", 10, 0, &err) == 0,
       "a file written into the parent (%s)", err.msg);
    ok(sandbox_fork_into(parent, child, &err) == 0, "forked into the child made ahead (%s)",
       err.msg);
    sh_is(child, "cat /work/into.txt", "made ahead", "the child has the parent's file");
    err.msg[0] = '\0';
    ok(sandbox_fork_into(parent, odd, &err) == -EINVAL && strstr(err.msg, "scratch size"),
       "a child of another disk size is refused (%s)", err.msg);
    sh_is(odd, "ls /work | wc -l", "0\n", "and nothing was copied into it");
out:
    if (parent)
        sandbox_destroy(parent, NULL);
    if (child)
        sandbox_destroy(child, NULL);
    if (odd)
        sandbox_destroy(odd, NULL);
}

int main(void)
{
    struct errbuf err = {{0}};
    struct sandbox_limits lim;

    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &img, &err) < 0) {
        diag("%s", err.msg);
        skip("sandbox runtime unavailable");
        return done_testing();
    }
    sandbox_limits_default(&lim);
    test_fork(&lim);
    test_fork_vfork_loop(&lim);
    test_fork_into(&lim);
    test_writable_root(&img, &lim);
    {
        /* A directory image, a small root filesystem made here from the host's programs: a
         * writable root is then one overlay of all of it (whole_root), as for a stored image. */
        static struct image whole;
        char dir[] = "/tmp/crucible-fork-root-XXXXXX", cmd[1024];
        if (mkdtemp(dir)) {
            snprintf(cmd, sizeof(cmd),
                     "set -e; R=%s; mkdir -p $R/usr/bin $R/usr/local $R/tmp $R/work $R/proc "
                     "$R/dev $R/usr/share/common-licenses; ln -s usr/bin $R/bin; "
                     "echo gpl > $R/usr/share/common-licenses/GPL-3; "
                     "for p in /bin/sh /bin/rm /bin/mkdir /bin/ls /bin/cat /bin/touch "
                     "/usr/bin/test /usr/bin/head /usr/bin/wc; do "
                     "cp $p $R/usr/bin/; for l in $(ldd $p | grep -o '/[^ ]*'); do "
                     "cp --parents -L $l $R; done; done; cp $R/usr/bin/test $R/usr/bin/yes; "
                     "cp $R/usr/bin/test $R/usr/bin/env",
                     dir);
            if (system(cmd) == 0 && image_resolve(dir, &whole, &err) == 0 && whole.whole_root)
                test_writable_root(&whole, &lim);
            else
                skip("cannot make a directory image");
            snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
            (void)!system(cmd);
        }
    }
    sandbox_runtime_release(&rt);
    return done_testing();
}
