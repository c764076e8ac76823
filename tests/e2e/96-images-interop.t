#!/usr/bin/env python3
"""Images made by other people's tools, not by crucible's own test code: umoci builds an OCI
layout (two layers: files, then a whiteout of one of them; the config's Env and WorkingDir),
skopeo converts it to a `docker save` archive and to an OCI archive with zstd layers. Each
is imported, run, and shows the second layer's deletion and the config applied. Skipped where
umoci or skopeo is not installed (scripts/install-deps installs both)."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import CRUCIBLE, ok, skip, done  # noqa: E402

T = tempfile.mkdtemp(prefix="crucible-interop-")
os.chmod(T, 0o755)
STATE = os.path.join(T, "state")
ENV = dict(os.environ, CRUCIBLE_STATE_DIR=STATE)

PROBE_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
    char cwd[256];
    printf("cwd=%s\n", getcwd(cwd, sizeof(cwd)) ? cwd : "?");
    printf("GREETING=%s\n", getenv("GREETING") ? getenv("GREETING") : "(unset)");
    printf("kept=%s\n", access("/data/kept", F_OK) == 0 ? "present" : "absent");
    printf("gone=%s\n", access("/data/gone", F_OK) == 0 ? "present" : "absent");
    return 0;
}
"""


def run(*argv, env=None):
    p = subprocess.run(list(argv), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def cru(*args):
    return run(CRUCIBLE, *args, env=ENV)


def must(*argv):
    rc, out, err = run(*argv)
    if rc != 0:
        print("Bail out! %s failed: %s" % (" ".join(argv), err.strip()[-300:]))
        sys.exit(1)
    return out


tools = [t for t in ("umoci", "skopeo", "gcc") if not shutil.which(t)]
if tools:
    skip("images made by umoci and skopeo", "not installed: %s (scripts/install-deps)" % ", ".join(tools))
    done()
    sys.exit(0)

os.chdir(T)
with open("probe.c", "w") as f:
    f.write(PROBE_C)
rc, _, err = run("gcc", "-static", "-O2", "-o", "probe", "probe.c")
if rc != 0:
    skip("images made by umoci and skopeo", "no static C library to build the probe: " + err[-200:])
    done()
    sys.exit(0)

# layer 1: the probe and two data files; layer 2: one of them deleted; config: Env, WorkingDir
must("umoci", "init", "--layout", "lay")
must("umoci", "new", "--image", "lay:v1")
must("umoci", "unpack", "--rootless", "--image", "lay:v1", "b1")
os.makedirs("b1/rootfs/data")
shutil.copy("probe", "b1/rootfs/probe")
for n in ("kept", "gone"):
    with open("b1/rootfs/data/" + n, "w") as f:
        f.write(n + "\n")
must("umoci", "repack", "--image", "lay:v1", "b1")
shutil.rmtree("b1")
must("umoci", "unpack", "--rootless", "--image", "lay:v1", "b2")
os.unlink("b2/rootfs/data/gone")
must("umoci", "repack", "--image", "lay:v1", "b2")
must("umoci", "config", "--image", "lay:v1", "--config.env", "GREETING=from-config",
     "--config.workingdir", "/data")
must("tar", "-C", "lay", "-cf", "oci.tar", ".")
must("skopeo", "--insecure-policy", "copy", "oci:lay:v1", "docker-archive:docker.tar:interop/probe:v1")
must("skopeo", "--insecure-policy", "copy", "--dest-compress-format", "zstd", "oci:lay:v1",
     "oci-archive:zstd.tar")

digests = {}
for name, archive, fmt in (("oci", "oci.tar", "oci"), ("docker", "docker.tar", "docker"),
                           ("zstd", "zstd.tar", "oci")):
    ref = "interop/%s:v1" % name
    rc, out, err = cru("image", "import", "--name", ref, archive)
    ok(rc == 0 and "(%s, 2 layers" % fmt in out,
       "%s archive made by %s: imported as %s, two layers" % (name, "umoci" if name == "oci" else "skopeo", fmt),
       (rc, out, err))
    rc, out, err = cru("run", "--image", ref, "--", "/probe")
    ok(rc == 0 and "kept=present" in out and "gone=absent" in out,
       "%s: the second layer's whiteout applied, the first layer's files kept" % name, (rc, out, err))
    ok("GREETING=from-config" in out and "cwd=/data" in out,
       "%s: the config's Env and WorkingDir apply" % name, (rc, out, err))
    rc, out, err = cru("run", "--image", ref, "--env", "GREETING=mine", "--", "/probe")
    ok(rc == 0 and "GREETING=mine" in out, "%s: the caller's environment wins over the image's" % name,
       (rc, out, err))
    rc, out, err = cru("image", "inspect", ref)
    digests[name] = out

ok('"sha256:' in digests["oci"] and "GREETING=from-config" in digests["docker"],
   "inspect shows the digest and the config of an imported image", digests["oci"][:300])
done()
shutil.rmtree(T, ignore_errors=True)
