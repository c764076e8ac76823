#!/usr/bin/python3
# A hostile model inside a session (issue 13, docs/API.md "Sessions"), each probe bounded
# and harmless to the host: a scratch filled then written to and forked; the pids limit
# filled by background processes, then another exec (a clear error, the session alive and
# forkable); a gigabyte of stdout; 100k files listed, tarred and forked; symlinks swapped
# against a host-only file while tars of the tree are downloaded (never followed); a
# background writer racing forks; stopped and traced processes at a fork; 8 threads making
# and deleting sessions at once (no fd, process or cgroup left). Standard library only.
import io
import os
import secrets
import sys
import tarfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from procs import cgroups_of, children_of, wait_for  # noqa: E402
from serverlib import Server, ok_rss, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-sessions-hostile-")
# no spare sandboxes: every sandbox process and cgroup the test sees is a session's
srv = Server("--warm", "0", "--max-sessions", "16", "--session-spares", "0", tmp=TMP)


def create(limits, server=srv):
    st, j, text = server.post("/v1/sessions", {"limits": limits})
    if st != 201:
        print("Bail out! cannot create a session: %s" % text)
        raise SystemExit(255)
    return j["id"]


def ex(sid, cmd, **kw):
    body = {"command": cmd}
    body.update(kw)
    return srv.post("/v1/sessions/%s/exec" % sid, body)


def alive(sid):
    st, j, _ = ex(sid, "echo alive")
    return st == 200 and j["status"] == "ok" and j["stdout"] == "alive\n"


def fork(sid):
    return srv.post("/v1/sessions/%s/fork" % sid, {})


def delete(sid):
    return srv.request("DELETE", "/v1/sessions/" + sid)[0]


def clean_status(st):
    """A fork or upload refused cleanly: a 4xx, or 507 for a full disk (never a 5xx crash)."""
    return st in (201, 200) or 400 <= st < 500 or st == 507


# ---- a full scratch, then an upload and a fork ----------------------------------------------
A = create({"disk_mb": 16, "pids": 64})
st, j, text = ex(A, "dd if=/dev/zero of=/work/fill bs=1M count=64 2>/dev/null; "
                    "df -k /work | tail -1")
ok(st == 200 and "100%" in j["stdout"], "the payload fills the session's 16 MB scratch", text)
st, j, text = srv.request("PUT", "/v1/sessions/%s/files?path=more.bin" % A, b"x" * (1 << 20))
ok(st == 507 and j["error"]["code"] == "disk_full", "an upload to the full scratch: 507 disk_full",
   text)
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w") as tf:
    info = tarfile.TarInfo("big.bin")
    info.size = 1 << 20
    tf.addfile(info, io.BytesIO(b"y" * info.size))
st, j, text = srv.request("PUT", "/v1/sessions/%s/files?path=in&format=tar" % A, buf.getvalue())
ok(st == 507, "a tar upload to the full scratch: 507", text)
st, j, text = fork(A)
ok(st == 201, "a fork of the full scratch: 201 (the child's disk is the parent's size)", text)
if st == 201:
    st, c, text = ex(j["id"], "stat -c %s /work/fill")
    ok(st == 200 and c["stdout"] == "16777216\n", "the child holds the full file", text)
    delete(j["id"])
ok(alive(A), "the session with a full scratch still runs commands")
delete(A)

# ---- the pids limit filled by background processes -------------------------------------------
A = create({"pids": 32})
st, j, text = ex(A, "for i in $(seq 100); do sleep 1000 & done; echo never")
ok(st == 200 and j["status"] == "runtime_error" and "never" not in j["stdout"],
   "an exec that leaves background processes until the pids limit stops it: runtime_error", text)
st, j, text = ex(A, "echo hi")
ok(st == 200 and j["status"] == "runtime_error" and "pids limit (32)" in j["message"] and
   "background processes" in j["message"],
   "the next exec cannot start: runtime_error naming the pids limit, not a sandbox error", text)
st, j, text = srv.request("GET", "/v1/sessions/" + A)
ok(st == 200 and j["busy"] is False, "the session is alive and free", text)
st, j, text = fork(A)
ok(st == 201, "it can be forked (files, not processes)", text)
if st == 201:
    ok(alive(j["id"]), "the fork runs commands")
    delete(j["id"])
ok(delete(A) == 200, "it can be deleted")

# ---- a gigabyte of stdout ---------------------------------------------------------------------
A = create({"output_kb": 1024})
st, j, text = ex(A, "head -c 1073741824 /dev/zero", timeout_s=60)
ok(st == 200 and j["status"] == "output_limit" and j["stdout_truncated"] is True and
   len(text) < 16 << 20, "1 GiB of stdout: output_limit, the answer bounded", j and j["status"])
ok_rss(srv.status_kb("VmHWM") < 256 * 1024, "the server's peak RSS stayed below 256 MB",
       srv.status_kb("VmHWM"))
ok(alive(A), "the session runs commands after it")
delete(A)

# ---- 100k files -------------------------------------------------------------------------------
A = create({"disk_mb": 512})
st, j, text = ex(A, "mkdir d && cd d && seq 1 100001 | xargs touch && ls | wc -l", timeout_s=300)
ok(st == 200 and j["stdout"] == "100001\n", "the payload makes 100,001 files in /work/d", text[:300])
st, j, text = srv.request("GET", "/v1/sessions/%s/files?path=d&list=1" % A)
ok(st in (200, 413) and (st == 200 or "100000" in j["error"]["message"]),
   "listing them: an answer or a clear 413 (more than the listing's bound)", text[:300])
r, data = srv.exchange("GET", "/v1/sessions/%s/files?path=d&format=tar" % A)
ok(r.status in (200, 413), "a tar of them: the tar, or a clear 413", (r.status, data[:300]))
if r.status == 200:
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        n = sum(1 for m in tf if m.isfile())
    ok(n == 100001, "the tar holds every file", n)
st, j, text = fork(A)
ok(clean_status(st), "a fork of 100k files: made, or a clear error", text[:300])
if st == 201:
    st, c, text = ex(j["id"], "ls d | wc -l")
    ok(st == 200 and c["stdout"] == "100001\n", "the fork holds the 100k files", text)
    delete(j["id"])
ok(alive(A), "the session runs commands after it")
delete(A)

# ---- symlinks swapped against a host-only file during tar downloads -------------------------
secret = "host-only-" + secrets.token_hex(8)
secret_dir = tmpdir("crucible-hostile-secret-")
with open(os.path.join(secret_dir, "secret"), "w") as f:
    f.write(secret)
os.chmod(secret_dir, 0o755)
A = create({"pids": 64})
swap = ("mkdir -p r; (i=0; while [ $i -lt 200000 ]; do i=$((i+1)); rm -rf r/x; "
        "ln -s %s r/x; rm -f r/x; mkdir r/x; ln -s %s/secret r/x/f; rm -rf r/x; "
        "ln -s / r/x; done) >/dev/null 2>&1 &" % (secret_dir, secret_dir))
st, j, text = ex(A, swap)
ok(st == 200 and j["status"] == "ok", "a background process swaps r/x between a directory and "
   "symlinks to a host-only directory and /", text)
leaked, answers = False, set()
for _ in range(40):
    r, data = srv.exchange("GET", "/v1/sessions/%s/files?path=r&format=tar" % A)
    answers.add(r.status)
    leaked = leaked or secret.encode() in data
    r, data = srv.exchange("GET", "/v1/sessions/%s/files?path=r/x/f" % A)
    answers.add(r.status)
    leaked = leaked or secret.encode() in data
ok(not leaked, "40 tars of the tree and reads through it never hold the host-only file")
ok(all(s < 500 for s in answers), "every answer is a tar, a file or a 4xx", sorted(answers))
ex(A, "pkill -f 'while' || true")
ok(alive(A), "the session runs commands after it")
delete(A)

# ---- a background writer racing forks --------------------------------------------------------
# (each pause of the parent must stop a vfork's parent too: dash's commands start so)
A = create({"disk_mb": 32, "pids": 64})
st, j, text = ex(A, "(i=0; while [ $i -lt 100000 ]; do i=$((i+1)); echo $i >> /work/log; "
                    "head -c 65536 /dev/zero > /work/f$((i % 200)); done) >/dev/null 2>&1 &")
ok(st == 200, "a background process keeps writing", text)
statuses, children = [], []
for _ in range(3):
    st, j, text = fork(A)
    statuses.append(st)
    if st == 201:
        children.append(j["id"])
ok(statuses == [201] * 3, "3 forks while it writes (and runs a command per line, dash's vfork "
   "among them): all made", statuses)
ok(all(alive(c) for c in children), "every fork runs commands")
for c in children:
    delete(c)
ok(alive(A), "the writer's session runs commands")
delete(A)

# ---- stopped and traced processes at a fork --------------------------------------------------
A = create({"pids": 64})
st, j, text = ex(A, "kill -STOP $$; echo resumed", timeout_s=2)
ok(st == 200 and j["status"] == "timeout", "an exec that stops itself ends at its timeout", text)
st, j, text = ex(A, "sleep 1000 & kill -STOP $!; python3 -c '\n"
                    "import ctypes, os, signal\n"
                    "if os.fork() == 0:\n"
                    "    ctypes.CDLL(None).ptrace(0, 0, 0, 0)\n"
                    "    os.kill(os.getpid(), signal.SIGSTOP)\n"
                    "    os._exit(0)\n' & sleep 0.5; echo ok")
ok(st == 200 and j["status"] == "ok", "a stopped and a (maybe) traced background process", text)
st, j, text = fork(A)
ok(st == 201, "the fork of a session with stopped processes is made", text)
if st == 201:
    ok(alive(j["id"]), "the fork runs commands")
    delete(j["id"])
ok(alive(A), "the session runs commands after the fork")
delete(A)

# ---- 8 threads making and deleting sessions --------------------------------------------------
def churn(rounds, seen, failures):
    for _ in range(rounds):
        st, j, text = srv.post("/v1/sessions", {})
        if st == 429:
            continue
        if st != 201:
            failures.append(text)
            continue
        for pid in children_of(srv.p.pid):
            seen.update(cgroups_of(pid))
        if delete(j["id"]) != 200:
            failures.append("delete " + j["id"])


def wait_idle():
    deadline = time.time() + 60
    while time.time() < deadline:
        st, j, _ = srv.request("GET", "/v1/sessions")
        if st == 200 and j["count"] == 0 and not children_of(srv.p.pid):
            return True
        time.sleep(0.1)
    return False


def fd_targets():
    """What the server's fds point at: sockets, pipes, files."""
    out = []
    base = "/proc/%d/fd" % srv.p.pid
    for fd in os.listdir(base):
        try:
            out.append(os.readlink(base + "/" + fd))
        except OSError:
            pass
    return sorted(out)


def wait_fds(limit):
    deadline = time.time() + 10
    while srv.fd_count() > limit and time.time() < deadline:
        time.sleep(0.1)
    return srv.fd_count() <= limit


seen, failures = set(), []
churn(4, seen, failures)  # warm up: the worker threads and caches exist from here
wait_idle()
fds0 = srv.fd_count()
threads = [threading.Thread(target=churn, args=(10, seen, failures)) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
ok(not failures, "8 threads x 10 creates and deletes: every answer 201/429 and 200", failures[:3])
ok(wait_idle(), "the table empties and no sandbox process is left")
ok(wait_fds(fds0), "the server holds no more fds than before (a connection the clients closed "
   "is given 10 s to be seen closed; a leaked fd stays)", (fds0, fd_targets()))
# A deleted session's cgroup is removed by the background teardown, after its processes are
# reaped: given 20 s (a liveness bound); a leaked one stays.
wait_for(lambda: not any(os.path.isdir(d) for d in seen))
left = sorted(d for d in seen if os.path.isdir(d))
ok(seen and not left, "no cgroup of the %d seen is left" % len(seen), left[:5])
ok_rss(srv.status_kb("VmRSS") < 128 * 1024, "the server's RSS stays below 128 MB",
       srv.status_kb("VmRSS"))

srv.stop()
done()
