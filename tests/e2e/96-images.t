#!/usr/bin/env python3
"""The image store (docs/IMAGES.md): OCI and docker-save archives built here (two layers, a
static probe compiled with gcc -static, a whiteout and an opaque directory in the second layer;
gzip and zstd layers), imported, run with --image NAME:TAG and sha256:<hex>; hostile archives
refused with the store unchanged; tags moving; gc; a plain directory import; the server."""
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import CRUCIBLE, ok, skip, done  # noqa: E402

T = tempfile.mkdtemp(prefix="crucible-images-")
os.chmod(T, 0o755)
STATE = os.path.join(T, "state")
ENV = dict(os.environ, CRUCIBLE_STATE_DIR=STATE)

PROBE_C = r"""
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (lstat(argv[i], &st) < 0)
            printf("%s=absent\n", argv[i]);
        else
            printf("%s=%s%s\n", argv[i], S_ISDIR(st.st_mode) ? "dir" : "file",
                   st.st_mode & 06000 ? "+suid" : "");
    }
    return 0;
}
"""


def sha(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def tar_bytes(entries):
    """entries: (name, kind, payload, mode) with kind file|dir|symlink|hardlink|fifo|chr."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for e in entries:
            name, kind = e[0], e[1]
            payload = e[2] if len(e) > 2 else b""
            mode = e[3] if len(e) > 3 else (0o755 if kind == "dir" else 0o644)
            ti = tarfile.TarInfo(name)
            ti.mode = mode
            ti.uid = ti.gid = 0
            ti.mtime = 1700000000
            if kind == "file":
                ti.size = len(payload)
                tf.addfile(ti, io.BytesIO(payload))
                continue
            if kind == "dir":
                ti.type = tarfile.DIRTYPE
            elif kind == "symlink":
                ti.type, ti.linkname = tarfile.SYMTYPE, payload
            elif kind == "hardlink":
                ti.type, ti.linkname = tarfile.LNKTYPE, payload
            elif kind == "fifo":
                ti.type = tarfile.FIFOTYPE
            elif kind == "chr":
                ti.type, ti.devmajor, ti.devminor = tarfile.CHRTYPE, 1, 3
            tf.addfile(ti)
    return buf.getvalue()


def compress(data, how):
    if how == "gzip":
        return gzip.compress(data, mtime=0)
    if how == "zstd":
        return subprocess.run(["zstd", "-q", "-c"], input=data, stdout=subprocess.PIPE,
                               check=True).stdout
    return data


def outer(files):
    """A tarball of name -> bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, data in files.items():
            ti = tarfile.TarInfo(name)
            ti.size, ti.mode, ti.mtime = len(data), 0o644, 1700000000
            tf.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def oci(layers, compression=("gzip", "zstd"), env=None, mangle=None, blob_hook=None):
    """An OCI image-layout tarball; layers: lists of tar entries. mangle(what, obj) may damage
    the config, the manifest or the files before they are written; blob_hook(blob) a layer
    blob before its digest is taken."""
    files = {"oci-layout": b'{"imageLayoutVersion":"1.0.0"}'}
    descs, diff_ids = [], []
    for i, entries in enumerate(layers):
        raw = tar_bytes(entries)
        how = compression[i % len(compression)]
        blob = compress(raw, how)
        if blob_hook:
            blob = blob_hook(blob)
        diff_ids.append(sha(raw))
        mt = "application/vnd.oci.image.layer.v1.tar" + ({"gzip": "+gzip", "zstd": "+zstd"}.get(how, ""))
        descs.append({"mediaType": mt, "digest": sha(blob), "size": len(blob)})
        files["blobs/sha256/" + sha(blob)[7:]] = blob
    config = {"architecture": "amd64", "os": "linux",
              "config": {"Env": env or ["PATH=/bin", "IMG_VAR=hello"], "WorkingDir": "/srv",
                         "Cmd": ["/bin/probe"]},
              "rootfs": {"type": "layers", "diff_ids": diff_ids}}
    if mangle:
        mangle("config", config)
    cblob = json.dumps(config).encode()
    files["blobs/sha256/" + sha(cblob)[7:]] = cblob
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                           "digest": sha(cblob), "size": len(cblob)},
                "layers": descs}
    if mangle:
        mangle("manifest", manifest)
    mblob = json.dumps(manifest).encode()
    files["blobs/sha256/" + sha(mblob)[7:]] = mblob
    files["index.json"] = json.dumps({"schemaVersion": 2, "manifests": [
        {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": sha(mblob),
         "size": len(mblob), "platform": {"os": "linux", "architecture": "amd64"}}]}).encode()
    if mangle:
        mangle("files", files)
    return outer(files), sha(mblob)


def docker(layers):
    """A `docker save` tarball (the classic layout: <id>/layer.tar, <config-hex>.json)."""
    files, names, diff_ids = {}, [], []
    for i, entries in enumerate(layers):
        raw = tar_bytes(entries)
        diff_ids.append(sha(raw))
        names.append("layer%d/layer.tar" % i)
        files[names[-1]] = raw
    config = {"architecture": "amd64", "os": "linux", "config": {"Env": ["PATH=/bin"]},
              "rootfs": {"type": "layers", "diff_ids": diff_ids}}
    cblob = json.dumps(config).encode()
    files[sha(cblob)[7:] + ".json"] = cblob
    files["manifest.json"] = json.dumps([{"Config": sha(cblob)[7:] + ".json",
                                          "RepoTags": ["t/docker:1"], "Layers": names}]).encode()
    return outer(files)


def write(name, data):
    path = os.path.join(T, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def cru(*args, env=ENV):
    p = subprocess.run([CRUCIBLE] + list(args), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def snapshot():
    """Every path below the store with its kind and size: the store 'unchanged' test."""
    out = []
    for dirpath, dirnames, filenames in os.walk(STATE):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            out.append((os.path.relpath(p, STATE), st.st_mode, st.st_size if not os.path.isdir(p) else 0))
    return sorted(out)


# ---- the probe and the two layers --------------------------------------------------------
src = write("probe.c", PROBE_C.encode())
probe_path = os.path.join(T, "probe")
cc = subprocess.run(["gcc", "-static", "-O1", "-o", probe_path, src], stderr=subprocess.PIPE)
if cc.returncode != 0:
    skip("image store", "cannot build a static binary: " + cc.stderr.decode()[:200])
    done()
probe = open(probe_path, "rb").read()

LAYER1 = [("bin", "dir"), ("bin/probe", "file", probe, 0o755),
          ("bin/suid", "file", b"#!/bin/sh\n", 0o4755),
          ("etc", "dir"), ("etc/keep.txt", "file", b"kept\n"), ("etc/gone.txt", "file", b"x\n"),
          ("opq", "dir"), ("opq/old.txt", "file", b"old\n"), ("opq/sub", "dir"),
          ("opq/sub/deep", "file", b"deep\n"), ("srv", "dir"),
          ("usr", "dir"), ("usr/lib", "dir"), ("lib", "symlink", "usr/lib")]
LAYER2 = [("etc/.wh.gone.txt", "file"), ("etc/added.txt", "file", b"added\n"),
          ("opq", "dir"), ("opq/new.txt", "file", b"new\n"), ("opq/.wh..wh..opq", "file")]
CHECK = ["/etc/keep.txt", "/etc/gone.txt", "/etc/added.txt", "/opq/old.txt", "/opq/sub",
         "/opq/new.txt", "/bin/suid"]
WANT = ("/etc/keep.txt=file\n/etc/gone.txt=absent\n/etc/added.txt=file\n/opq/old.txt=absent\n"
        "/opq/sub=absent\n/opq/new.txt=file\n/bin/suid=file\n")

# ---- import an OCI archive (gzip and zstd layers) ------------------------------------------
HAVE_ZSTD = shutil.which("zstd") is not None
if not HAVE_ZSTD:
    skip("a zstd-compressed layer", "no zstd program (scripts/install-deps installs it)")
arch, digest1 = oci([LAYER1, LAYER2], compression=("gzip", "zstd") if HAVE_ZSTD else ("gzip",))
path = write("img.oci.tar", arch)
rc, out, err = cru("image", "import", "--name", "t/img:v1", path)
ok(rc == 0 and digest1 in out, "an OCI archive (gzip + zstd layers) imports, named by its "
   "manifest digest", (rc, out, err))
ok("setuid" in err, "the setuid bit it carried is reported stripped", err)
os.chmod(T, 0o755)
for d, _, _ in os.walk(STATE):
    os.chmod(d, os.stat(d).st_mode | 0o055)

rc, out, err = cru("image", "list")
ok(rc == 0 and "t/img:v1" in out and digest1[:19] in out, "image list shows the name and digest",
   (rc, out, err))

rc, out, err = cru("run", "--json", "--image", "t/img:v1", "--", "/bin/probe", *CHECK)
rec = json.loads(out) if out.startswith("{") else {}
ok(rc == 0 and rec.get("stdout") == WANT,
   "run --image NAME:TAG: the probe runs; the whiteout and the opaque directory applied, "
   "setuid stripped", (rc, out, err))
ok(rec.get("image") == digest1, "the result record carries the manifest digest", rec.get("image"))

rc, out, err = cru("run", "--json", "--image", digest1, "--", "/bin/probe", "/etc/keep.txt")
ok(rc == 0 and "keep.txt=file" in out, "run --image sha256:<hex> works too", (rc, out, err))

rc, out, err = cru("image", "inspect", "t/img:v1")
info = json.loads(out) if rc == 0 else {}
ok(info.get("digest") == digest1 and info.get("names") == ["t/img:v1"] and
   info.get("env") == ["PATH=/bin", "IMG_VAR=hello"] and info.get("workdir") == "/srv" and
   info.get("cmd") == ["/bin/probe"] and len(info.get("layers", [])) == 2 and info.get("size", 0) > 0,
   "inspect: digest, names, Env, WorkingDir, Cmd, layers, size", (rc, out, err))
rootfs = info.get("rootfs", "")
ok(os.path.islink(os.path.join(rootfs, "lib")) and not os.path.exists(os.path.join(rootfs, "etc/gone.txt")),
   "the stored root keeps the image's symlink and lacks the whited-out file")

rc, out, err = cru("image", "import", "--name", "t/img:again", path)
ok(rc == 0 and "already" in out, "importing the same archive again stores nothing new", (rc, out, err))

# ---- docker save ----------------------------------------------------------------------------
dpath = write("img.docker.tar", docker([LAYER1, LAYER2]))
rc, out, err = cru("image", "import", "--name", "t/docker", dpath)
ok(rc == 0 and "docker" in out, "a docker-save archive imports", (rc, out, err))
rc, out, err = cru("run", "--json", "--image", "t/docker:latest", "--", "/bin/probe", *CHECK)
rec = json.loads(out) if out.startswith("{") else {}
ok(rc == 0 and rec.get("stdout") == WANT, "NAME alone is NAME:latest; the docker image runs with "
   "its whiteouts applied", (rc, out, err))

# ---- hostile archives: each refused, the store unchanged -------------------------------------
def damage_blob(files):
    k = [k for k in files if k.startswith("blobs/") and files[k][:2] == b"\x1f\x8b"][0]
    files[k] = files[k][:-1] + bytes([files[k][-1] ^ 1])


def bad_diff_id(what, obj):
    if what == "config":
        obj["rootfs"]["diff_ids"][0] = "sha256:" + "0" * 64


hostile = [
    ("'..' in a path", [[("../escape.txt", "file", b"x")]], "climbs out"),
    ("an absolute path", [[("/abs.txt", "file", b"x")]], "absolute"),
    ("a symlink climbing out of the root", [[("up", "symlink", "../../../../etc")]], "outside the image root"),
    ("a path through a symlink", [[("evil", "symlink", T), ("evil/planted.txt", "file", b"x")]], "symlink"),
    ("a hard link to a file the layer did not make", [[("etc", "dir"), ("etc/pw", "hardlink", "etc/passwd")]], "hard link"),
    ("a hard link to another layer's file", [[("a.txt", "file", b"a")], [("b.txt", "hardlink", "a.txt")]], "hard link"),
    ("a hard link climbing out", [[("h", "hardlink", "../../etc/passwd")]], "climbs out"),
]
for what, layers, needle in hostile:
    before = snapshot()
    hpath = write("hostile.tar", oci(layers)[0])
    rc, out, err = cru("image", "import", "--name", "t/hostile", hpath)
    ok(rc == 2 and needle in err and "\n" not in err.strip(), "refused: %s" % what, (rc, out, err))
    print("# " + err.strip().split("': ", 1)[-1][:200])
    ok(snapshot() == before, "  and the store is unchanged")
ok(not os.path.exists(os.path.join(T, "planted.txt")) and not os.path.exists(os.path.join(T, "escape.txt")),
   "nothing was written outside the store")

cases = [
    ("a layer blob that does not match its digest", lambda w, o: damage_blob(o) if w == "files" else None, "digest mismatch"),
    ("a diff_id that does not match the layer", bad_diff_id, "diff_id"),
    ("a truncated layer (its digest declared as shipped)", None, "truncated"),
]
for what, mangle, needle in cases:
    before = snapshot()
    hook = (lambda b: b[: len(b) // 2]) if mangle is None else None
    hpath = write("hostile.tar", oci([LAYER1, LAYER2], compression=("gzip",), mangle=mangle,
                                     blob_hook=hook)[0])
    rc, out, err = cru("image", "import", "--name", "t/hostile", hpath)
    ok(rc == 2 and needle in err, "refused: %s" % what, (rc, out, err))
    print("# " + err.strip().split("': ", 1)[-1][:200])
    ok(snapshot() == before, "  and the store is unchanged")

before = snapshot()
full = write("truncated.tar", arch[: len(arch) // 2])
rc, out, err = cru("image", "import", full)
ok(rc == 2 and snapshot() == before, "a truncated archive is refused, the store unchanged", (rc, err))

bomb = oci([[("zeros", "file", bytes(8 << 20))]], compression=("gzip",))[0]
before = snapshot()
rc, out, err = cru("image", "import", "--max-size", "1M", write("bomb.tar", bomb))
ok(rc == 2 and "--max-size" in err and snapshot() == before,
   "a layer unpacking past --max-size (8 MiB of zeros, 8 KiB gzipped) is refused", (rc, err))
before = snapshot()
many = [("d", "dir")] + [("d/f%d" % i, "file", b"") for i in range(200)]
rc, out, err = cru("image", "import", "--max-entries", "100", write("many.tar", oci([many])[0]))
ok(rc == 2 and "--max-entries" in err and snapshot() == before, "more entries than --max-entries "
   "is refused", (rc, err))

dev = [("bin", "dir"), ("bin/probe", "file", probe, 0o755), ("dev", "dir"),
       ("dev/null2", "chr"), ("fifo", "fifo")]
rc, out, err = cru("image", "import", "--name", "t/dev", write("dev.tar", oci([dev])[0]))
ok(rc == 0 and "skipped 2 device nodes" in err, "device nodes and fifos are skipped (said on stderr)",
   (rc, out, err))
rc, out, err = cru("image", "inspect", "t/dev")
droot = json.loads(out)["rootfs"] if rc == 0 else T
ok(not os.path.lexists(os.path.join(droot, "dev/null2")) and not os.path.lexists(os.path.join(droot, "fifo")),
   "  and none is in the stored root")

# ---- tags move; the old digest stays runnable; rm; gc ---------------------------------------
LAYER2b = LAYER2 + [("etc/v2.txt", "file", b"two\n")]
path2 = write("img2.tar", oci([LAYER1, LAYER2b])[0])
rc, out, err = cru("image", "import", "--name", "t/img:v1", path2)
digest2 = out.split()[1] if rc == 0 else "?"
ok(rc == 0 and digest2 != digest1, "a new version imports under the same name", (rc, out, err))
rc, out, err = cru("run", "--json", "--image", "t/img:v1", "--", "/bin/probe", "/etc/v2.txt")
ok(rc == 0 and json.loads(out)["image"] == digest2 and "v2.txt=file" in out,
   "the name now runs the new digest", (rc, out, err))
rc, out, err = cru("run", "--json", "--image", digest1, "--", "/bin/probe", "/etc/v2.txt")
ok(rc == 0 and json.loads(out)["image"] == digest1 and "v2.txt=absent" in out,
   "the old digest is still runnable", (rc, out, err))

rc, out, err = cru("image", "tag", digest1, "t/old")
ok(rc == 0, "image tag points a new name at the old digest", (rc, out, err))
rc, out, err = cru("image", "rm", "t/img:again")
ok(rc == 0 and os.path.isdir(rootfs), "rm NAME keeps an image another name still uses", (rc, out, err))
blobs = os.path.join(STATE, "images/blobs/sha256")
nblobs = len(os.listdir(blobs))
rc, out, err = cru("image", "gc")
ok(rc == 0 and len(os.listdir(blobs)) == nblobs, "gc with every image in use removes nothing",
   (rc, out, err, nblobs))
rc, out, err = cru("image", "rm", "t/old")
ok(rc == 0 and not os.path.exists(rootfs), "rm of its last name removes the old image", (rc, out, err))
rc, out, err = cru("run", "--image", digest1, "--", "/bin/probe")
ok(rc == 2 and "no image" in err, "the removed digest no longer runs", (rc, err))
rc, out, err = cru("image", "gc")
left = set(os.listdir(blobs))
man2 = json.loads(cru("image", "inspect", digest2)[1])
needed = {digest2[7:], man2["config"][7:]} | {l["digest"][7:] for l in man2["layers"]}
ok(rc == 0 and "removed" in out and needed <= left and digest1[7:] not in left,
   "gc removes the old image's own blobs, keeps the shared layer and the live image's", (rc, out, err))
rc, out, err = cru("run", "--image", "t/img:v1", "--", "/bin/probe", "/etc/keep.txt")
ok(rc == 0 and "keep.txt=file" in out, "the live image still runs after gc", (rc, out, err))

# ---- a plain directory ----------------------------------------------------------------------
droot2 = os.path.join(T, "dirimg")
os.makedirs(os.path.join(droot2, "bin"))
shutil.copy(probe_path, os.path.join(droot2, "bin/probe"))
with open(os.path.join(droot2, "crucible-manifest.json"), "w") as f:
    json.dump({"packages": {"gcc": "12"}}, f)
rc, out, err = cru("image", "import", "--name", "t/dir", "--dir", droot2)
ok(rc == 0 and "dir" in out, "a directory imports", (rc, out, err))
rc2, out2, _ = cru("image", "import", "--dir", droot2)
ok(rc2 == 0 and out.split()[1] in out2, "the same directory gets the same digest", (out, out2))
rc, out, err = cru("image", "inspect", "t/dir")
ok(rc == 0 and json.loads(out).get("manifest") == {"packages": {"gcc": "12"}},
   "inspect shows the image's crucible-manifest.json", (rc, out, err))
rc, out, err = cru("run", "--image", "t/dir", "--", "/bin/probe", "/bin/probe")
ok(rc == 0 and "/bin/probe=file" in out, "the directory image runs", (rc, out, err))

# ---- the server: every request names stored images like registered ones --------------------
from serverlib import Server  # noqa: E402

srv = Server(env=ENV)
st, j, text = srv.post("/v1/run", {"command": ["/bin/probe", "/etc/v2.txt"], "image": "t/img:v1"})
ok(st == 200 and j and j.get("image") == digest2 and "v2.txt=file" in j.get("stdout", ""),
   "serve: a request naming NAME:TAG runs the stored image; the record has its digest", text[:300])
st, j, text = srv.post("/v1/run", {"command": ["/bin/probe", "/etc/v2.txt"], "image": digest2})
ok(st == 200 and j and j.get("image") == digest2, "serve: a request naming sha256:<hex>", text[:300])
st, j, text = srv.post("/v1/run", {"command": ["/bin/probe"], "image": rootfs})
ok(st == 400 and "host path" in text, "serve: a host path (a stored root's) is still refused", text[:300])
rc, out, err = cru("image", "tag", "t/dir", "t/img:v1")
st, j, text = srv.post("/v1/run", {"command": ["/bin/probe", "/bin/probe", "/etc/v2.txt"],
                                   "image": "t/img:v1"})
ok(st == 200 and j and "/etc/v2.txt=absent" in j.get("stdout", "") and j.get("image") != digest2,
   "serve: a tag moved while the server runs names the new image at once", text[:300])
st, j, text = srv.post("/v1/run", {"command": ["/bin/probe"], "image": "t/nosuch"})
ok(st == 400 and "t/nosuch" in text, "serve: an unknown NAME:TAG is a 400 naming it", text[:300])
srv.stop()

# ---- bad names ------------------------------------------------------------------------------
rc, out, err = cru("run", "--image", "t/nosuch:v9", "--", "/bin/true")
ok(rc == 2 and "t/nosuch:v9" in err, "an unknown NAME:TAG is refused, naming it", err)
rc, out, err = cru("image", "import", "--name", "host", path)
ok(rc == 2 and "reserved" in err, "'host' cannot name a stored image", err)
rc, out, err = cru("--state-dir", STATE, "image", "list", env=dict(os.environ, CRUCIBLE_STATE_DIR=""))
ok(rc == 0 and "t/img:v1" in out, "crucible --state-dir DIR finds the same store", (rc, out, err))
rc, out, err = cru("image", "list", "--state-dir", STATE, env=dict(os.environ, CRUCIBLE_STATE_DIR=""))
ok(rc == 0 and "t/img:v1" in out, "crucible image list --state-dir DIR: the option after the command", (rc, out, err))

shutil.rmtree(T, ignore_errors=True)
done()
