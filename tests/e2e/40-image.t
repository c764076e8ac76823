#!/usr/bin/env bash
# --image: an absolute path to a root filesystem directory, and bad image names.
. "$(dirname "$0")/lib.sh"

plan 14

# --- bad image names (no rootfs needed) -----------------------------------------
cru run --image nonexistent -- /bin/true
is "$RC" 2 "--image nonexistent: exit 2"
check "--image nonexistent: one-line error naming it" \
    bash -c 'grep -q "nonexistent" "$1" && [ "$(grep -c "" "$1")" -eq 1 ]' _ "$ERR"
cru run --image "$T/no/such/dir" -- /bin/true
is "$RC" 2 "--image with a missing absolute path: exit 2"
check "--image missing path: one-line error naming it" \
    bash -c 'grep -qF "$2" "$1" && [ "$(grep -c "" "$1")" -eq 1 ]' _ "$ERR" "$T/no/such/dir"
cru run --image /etc/hostname -- /bin/true
is "$RC" 2 "--image naming a regular file: exit 2"

# --- a tiny root filesystem -------------------------------------------------------
# One statically linked test program, compiled here with cc -static; the
# checks are skipped where no static C library is installed.
ROOT=$T/rootfs
mkdir -p "$ROOT/bin"
have_image=
cat >"$T/probe.c" <<'EOF'
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    char cwd[256] = "?";
    const char *home = getenv("HOME");
    int fd;

    if (!getcwd(cwd, sizeof cwd))
        strcpy(cwd, "?");
    printf("static probe %s uid=%d cwd=%s home=%s\n", argc > 1 ? argv[1] : "-", (int)getuid(), cwd,
           home ? home : "-");
    fd = open("/probe-written", O_WRONLY | O_CREAT, 0644);
    printf("root write: %s\n", fd < 0 ? strerror(errno) : "allowed");
    fd = open("/tmp/t", O_WRONLY | O_CREAT, 0644);
    printf("tmp write: %s\n", fd < 0 ? strerror(errno) : "ok");
    fd = open("/work/in.txt", O_RDONLY);
    if (fd >= 0) {
        char b[64] = {0};
        ssize_t n = read(fd, b, sizeof b - 1);
        printf("work file: %s", n > 0 ? b : "(empty)\n");
    }
    fd = open("/etc/hostname", O_RDONLY);
    printf("host file visible: %s\n", fd < 0 ? "no" : "yes");
    return argc > 2 ? atoi(argv[2]) : 0;
}
EOF
if cc -static -O1 -o "$ROOT/bin/probe" "$T/probe.c" 2>"$T/cc.err"; then
    have_image=yes
fi
if [ -z "$have_image" ]; then
    for i in $(seq 9); do skip "--image DIR" "cannot build a static binary: $(head -n 1 "$T/cc.err")"; done
    exit 0
fi
chmod -R go+rX "$ROOT" "$T"
echo "from the host" >"$T/in.txt"

cru run --json --image "$ROOT" --file in.txt="$T/in.txt" -- /bin/probe arg1
is "$RC" 0 "--image DIR: a static program in the image runs (exit 0)"
jcheck 'd["status"] == "ok" and d["stdout"].startswith("static probe arg1 uid=1000 cwd=/work home=/tmp\n")' \
    "--image DIR: argv, uid 1000, cwd /work, HOME=/tmp"
jcheck '"root write: Read-only file system\n" in d["stdout"]' "--image DIR: / is read-only"
jcheck '"tmp write: ok\n" in d["stdout"]' "--image DIR: /tmp is writable"
jcheck '"work file: from the host\n" in d["stdout"]' "--image DIR: --file lands in /work"
jcheck '"host file visible: no\n" in d["stdout"]' "--image DIR: the host's files are not visible"
jcheck '"'"$ROOT"'" in d["image"]' "--image DIR: the record's image names the directory"
check "--image DIR: nothing was written into the image directory" test ! -e "$ROOT/probe-written"

cru run --json --image "$ROOT" -- /bin/probe x 7
jcheck 'd["status"] == "runtime_error" and d["exit_code"] == 7' "--image DIR: exit codes come through"
