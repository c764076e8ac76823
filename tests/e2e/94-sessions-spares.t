#!/usr/bin/python3
# Spare sandboxes for sessions (serve --session-spares, issue 13): a create or a fork of a
# session of the default shape takes a sandbox made ahead. Checked through the server's own
# counters and through what the session sees: a session from a spare has an empty /work and
# the limits its request asked for (pids enforced), a fork into a spare has its parent's
# files, a session of another shape (writable_root) makes its own, a spare whose init was
# killed while it waited is not taken, and with --session-spares 0 nothing is taken. Standard
# library only.
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from procs import children_of  # noqa: E402
from serverlib import Server, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-sessions-spares-")


def hits(srv):
    return srv.metric("crucible_session_spares_hits_total") or 0


def create(srv, body):
    st, j, text = srv.post("/v1/sessions", body)
    if st != 201:
        print("Bail out! cannot create a session: %s" % text)
        sys.exit(255)
    return j["id"]


def create_from_spare(srv, body):
    """A session made from a spare: the spares fill in the background, so creates are retried
    (each one that made its own sandbox deleted) until one took a spare; None if none did."""
    for _ in range(100):
        before = hits(srv)
        sid = create(srv, body)
        if hits(srv) > before:
            return sid
        srv.request("DELETE", "/v1/sessions/" + sid)
        time.sleep(0.1)
    return None


def sh(srv, sid, cmd):
    st, j, text = srv.post("/v1/sessions/%s/exec" % sid, {"command": cmd})
    return j["stdout"] if st == 200 and j else text


srv = Server("--warm", "0", "--session-spares", "2", tmp=TMP)
sid = create_from_spare(srv, {"limits": {"pids": 6}})
ok(sid is not None, "a create took a spare sandbox (session_spares_hits_total went up)")
if sid:
    out = sh(srv, sid, "find /work /tmp -mindepth 1 | wc -l")
    ok(out == "0\n", "the session from a spare starts with an empty /work and /tmp", out)
    out = sh(srv, sid, "i=0; ok=0; while [ $i -lt 8 ]; do i=$((i+1)); "
                       "(sleep 20 &) 2>/dev/null && ok=$((ok+1)); done; echo $ok")
    ok(out.strip().isdigit() and int(out) < 8,
       "the spare took the request's pids limit (6): not 8 background processes (%s)" %
       out.strip())
    sh(srv, sid, "pkill sleep; true")
    st, j, text = srv.request("GET", "/v1/sessions/" + sid)
    ok(st == 200 and j["limits"]["pids"] == 6, "its info says pids 6", text)
    srv.request("DELETE", "/v1/sessions/" + sid)

parent = create(srv, {})
st, j, text = srv.request("PUT", "/v1/sessions/%s/files?path=/work/p.txt" % parent, b"parent's")
ok(st == 200, "a file put in a default session", text)
child = None
for _ in range(100):
    before = hits(srv)
    st, j, text = srv.post("/v1/sessions/%s/fork" % parent, {})
    if st != 201:
        break
    if hits(srv) > before:
        child = j["id"]
        break
    srv.request("DELETE", "/v1/sessions/" + j["id"])
    time.sleep(0.1)
ok(child is not None, "a fork took a spare sandbox", text)
if child:
    ok(sh(srv, child, "cat /work/p.txt") == "parent's", "the fork into the spare has the "
       "parent's file")
    st, j, text = srv.request("GET", "/v1/sessions/" + child)
    ok(st == 200 and j["parent"] == parent, "and names its parent", text)

misses = srv.metric("crucible_session_spares_misses_total") or 0
before = hits(srv)
wr = create(srv, {"writable_root": True})
ok(hits(srv) == before and (srv.metric("crucible_session_spares_misses_total") or 0) > misses,
   "a writable_root session (another shape) made its own sandbox: a miss, no hit")
ok(sh(srv, wr, "touch /usr/local/x && echo ok") == "ok\n", "and its root is writable")
ok(srv.stop() == 0, "the server stops cleanly with spares ready")


def state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def settled_children(pid, n):
    """The server's children once there are n of them and no other for a second (the spares
    are made in the background: one being made has an init too), or what there is after 60 s."""
    deadline = time.time() + 60
    last, since = None, time.time()
    while time.time() < deadline:
        kids = sorted(children_of(pid))
        if kids != last:
            last, since = kids, time.time()
        elif len(kids) == n and time.time() - since >= 1:
            break
        time.sleep(0.05)
    return last


# Spares whose init was killed while they waited (an admin, the OOM killer) are not handed
# out: with no session alive, every child of the server is a spare's init.
srv = Server("--warm", "0", "--session-spares", "2", tmp=TMP)
spares = settled_children(srv.p.pid, 2)
ok(len(spares) == 2, "two spares made: two children of the server (%s)" % spares)
for pid in spares:
    os.kill(pid, signal.SIGKILL)
deadline = time.time() + 20  # dead: zombies the server has not reaped yet (or reaped)
while time.time() < deadline and any(state(p) not in ("Z", None) for p in spares):
    time.sleep(0.05)
ok(all(state(p) in ("Z", None) for p in spares), "their inits are dead",
   [(p, state(p)) for p in spares])
sid = create(srv, {})
out = sh(srv, sid, "echo ok")
ok(out == "ok\n",
   "after their inits were killed, a new session still runs commands (no dead spare taken)",
   out)
ok(srv.stop() == 0, "that server stops cleanly")

srv = Server("--warm", "0", "--session-spares", "0", tmp=TMP)
sid = create(srv, {})
ok(srv.metric("crucible_session_spares_hits_total") is None,
   "--session-spares 0: no spares (no spares counters)")
ok(sh(srv, sid, "echo ok") == "ok\n", "and a session works all the same")
ok(srv.stop() == 0, "that server stops cleanly")
done()
