#!/usr/bin/env bash
# --writable-root: writes land in the sandbox's own scratch, never in the image or a
# neighbour; the size limit applies; a read-only sandbox still cannot write; records carry
# the image's digest, the name asked for and (host) the host's os-release.
. "$(dirname "$0")/lib.sh"

plan 30

cat >"$T/fsop.c" <<'EOF'
/* fsop OP ARGS... [-- OP ARGS...]: file operations for the test, one line of output each.
 *   write P TEXT | append P TEXT | cat P | rm P | rmdir P | ls P | mkdir P | sleep S |
 *   fill P MB */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        const char *op = argv[i], *p = i + 1 < argc ? argv[i + 1] : "";
        int fd, r = 0;
        if (!strcmp(op, "write") || !strcmp(op, "append")) {
            fd = open(p, O_WRONLY | O_CREAT | (op[0] == 'w' ? O_TRUNC : O_APPEND), 0644);
            r = fd < 0 || write(fd, argv[i + 2], strlen(argv[i + 2])) < 0 || close(fd) < 0;
            i += 2;
        } else if (!strcmp(op, "cat")) {
            char b[256] = {0};
            fd = open(p, O_RDONLY);
            r = fd < 0 || read(fd, b, sizeof b - 1) < 0;
            if (!r)
                printf("cat %s: %s\n", p, b);
            i++;
        } else if (!strcmp(op, "rm")) {
            r = unlink(p) < 0;
            i++;
        } else if (!strcmp(op, "rmdir")) {
            r = rmdir(p) < 0;
            i++;
        } else if (!strcmp(op, "ls")) {
            DIR *d = opendir(p);
            struct dirent *e;
            r = d == NULL;
            if (!r) {
                printf("ls %s:", p);
                while ((e = readdir(d)))
                    if (e->d_name[0] != '.')
                        printf(" %s", e->d_name);
                printf("\n");
                closedir(d);
            }
            i++;
        } else if (!strcmp(op, "mkdir")) {
            r = mkdir(p, 0755) < 0;
            i++;
        } else if (!strcmp(op, "sleep")) {
            usleep((useconds_t)(atof(p) * 1e6));
            i++;
        } else if (!strcmp(op, "fill")) {
            static char blk[65536];
            long want = atol(argv[i + 2]) << 20, done = 0;
            fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
            r = fd < 0;
            while (!r && done < want) {
                ssize_t n = write(fd, blk, sizeof blk);
                r = n < 0;
                done += n > 0 ? n : 0;
            }
            if (fd >= 0)
                close(fd);
            i += 2;
        } else {
            fprintf(stderr, "unknown op %s\n", op);
            return 2;
        }
        if (r) {
            printf("%s %s: %s\n", op, p, strerror(errno));
            bad = 1;
        } else if (strcmp(op, "cat") != 0 && strcmp(op, "ls") != 0) {
            printf("%s %s: ok\n", op, p);
        }
    }
    return bad;
}
EOF
if ! cc -static -O1 -o "$T/fsop" "$T/fsop.c" 2>"$T/cc.err"; then
    for i in $(seq 1 30); do skip "writable root" "no static C library: $(head -c 100 "$T/cc.err")"; done
    exit 0
fi

# A directory image: the helper, an /etc file, a data file and a 3 MiB file.
chmod 755 "$T" # the sandbox user (not root) reads the image below it
IMG=$T/img
mkdir -p "$IMG/bin" "$IMG/etc" "$IMG/usr/share" "$IMG/data"
cp "$T/fsop" "$IMG/bin/fsop"
echo original >"$IMG/etc/y"
echo keep >"$IMG/data/z"
head -c 3145728 /dev/zero >"$IMG/data/big"
# What a root filesystem may carry where the sandbox mounts its own: a /dev and a /work with
# files in them; and a top-level file too large to be copied into a read-only root.
mkdir -p "$IMG/dev" "$IMG/work"
echo stale >"$IMG/dev/evil"
echo stale >"$IMG/work/stale"
head -c 300000 /dev/zero >"$IMG/bigtop"
tree_sum() { (cd "$1" && find . -printf '%p %y %m %U:%G %s %T@\n' | sort && find . -type f -exec sha256sum {} + | sort) | sha256sum; }
BEFORE=$(tree_sum "$IMG")

# --- writes anywhere in the root, all of them private ---------------------------
cru run --json --writable-root --image "$IMG" -- /bin/fsop write /usr/x made append /etc/y +more \
    rm /data/z mkdir /newtop write /newtop/f top cat /usr/x cat /etc/y cat /newtop/f
is "$(jf status)" ok "writable root: create, modify and delete anywhere: ok ($(head -c 200 "$ERR"))"
like "$(jf stdout)" "cat /usr/x: made" "a new file in /usr reads back"
like "$(jf stdout)" "cat /etc/y: original.?\+more" "a modified image file reads back modified"
like "$(jf stdout)" "cat /newtop/f: top" "a new top-level directory holds its file"
is "$(tree_sum "$IMG")" "$BEFORE" "the image directory on the host is unchanged, byte for byte"
is "$(jf image)" "dir:$(realpath "$IMG")" "the record's image is the image's digest"
is "$(jf image_name)" "$IMG" "the record's image_name is the name asked for"
is "$(jf host_os)" null "a directory image has no host_os"

# --- the next sandbox sees none of it ---------------------------------------------
cru run --json --writable-root --image "$IMG" -- /bin/fsop cat /etc/y cat /data/z cat /usr/x
like "$(jf stdout)" "cat /etc/y: original" "the next sandbox sees the image's /etc/y"
like "$(jf stdout)" "cat /data/z: keep" "the next sandbox still has the deleted file"
like "$(jf stdout)" "cat /usr/x: No such file" "the next sandbox has no /usr/x"

# --- the image as one overlay: its /dev and /work hidden, a removed directory stays gone ---
cru run --json --writable-root --image "$IMG" -- /bin/fsop ls /dev cat /work/stale \
    rm /data/z rm /data/big rmdir /data mkdir /data ls /data append /bigtop x
like "$(jf stdout)" "ls /dev: [a-z ]*null" "the sandbox's /dev has its own nodes"
unlike "$(jf stdout)" "evil" "... and nothing of the image's /dev"
like "$(jf stdout)" "cat /work/stale: No such file" "/work is the sandbox's scratch, not the image's"
like "$(jf stdout)" "ls /data:.append" "a directory removed and made again is empty (the image's hidden)"
like "$(jf stdout)" "append /bigtop: ok" "a large top-level file of the image is writable"

# --- neighbours at the same time ------------------------------------------------------
for who in A B; do
    timeout 60 "$CRUCIBLE" run --json --writable-root --image "$IMG" -- /bin/fsop \
        write /usr/shared "$who" write /etc/y "$who" sleep 1 cat /usr/shared cat /etc/y \
        >"$T/nb-$who" 2>&1 &
done
wait
like "$(cat "$T/nb-A")" "cat /usr/shared: A.*cat /etc/y: A" "neighbour A sees only its own writes"
like "$(cat "$T/nb-B")" "cat /usr/shared: B.*cat /etc/y: B" "neighbour B sees only its own writes"
is "$(tree_sum "$IMG")" "$BEFORE" "the image is unchanged after the neighbours"

# --- the size limit -------------------------------------------------------------------
cru run --json --writable-root --disk 2 --image "$IMG" -- /bin/fsop fill /usr/fill 8
is "$(jf status)" runtime_error "writing past --disk in the writable root fails"
like "$(jf stdout)" "fill /usr/fill: No space left on device" "... with ENOSPC"
cru run --json --writable-root --disk 2 --image "$IMG" -- /bin/fsop append /data/big x
like "$(jf stdout)" "append /data/big: No space left on device" \
    "copying up an image file larger than --disk fails with ENOSPC"
is "$(tree_sum "$IMG")" "$BEFORE" "the image is unchanged after the failed writes"

# --- read-only stays read-only --------------------------------------------------------
cru run --json --image "$IMG" -- /bin/fsop write /usr/x no append /etc/y no
like "$(jf stdout)" "write /usr/x: Read-only file system" "without --writable-root /usr is read-only"
like "$(jf stdout)" "append /etc/y: (Read-only file system|Permission denied)" "... and so is /etc/y"

# --- host image ------------------------------------------------------------------------
ENV_SUM=$(sha256sum /usr/bin/env)
NAME=crucible-e2e-wr-$$
cru run --json --writable-root --file fsop="$T/fsop" -- ./fsop write "/usr/lib/$NAME" x \
    append /usr/bin/env x write "/etc/$NAME" y
if is_root; then
    is "$(jf status)" ok "host image, writable root: writes in /usr and /etc succeed ($(jf stdout))"
else
    skip "host image writable root" "unprivileged: the host's root-owned files are not the sandbox user's"
fi
check "the host has none of the sandbox's files" \
    bash -c '[ ! -e "/usr/lib/$1" ] && [ ! -e "/etc/$1" ]' _ "$NAME"
is "$(sha256sum /usr/bin/env)" "$ENV_SUM" "the host's /usr/bin/env is unchanged"
is "$(jf image)" host "host: the record's image is host"
OS=$(. /etc/os-release && echo "$ID${VERSION_ID:+ $VERSION_ID}")
is "$(jf host_os)" "$OS" "host: host_os is the host's os-release ID and VERSION_ID"
