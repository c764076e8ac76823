#!/usr/bin/python3
# Spare sandboxes for sessions (serve --session-spares, issue 13): a create or a fork of a
# session of the default shape takes a sandbox made ahead. Checked through the server's own
# counters and through what the session sees: a session from a spare has an empty /work and
# the limits its request asked for (pids enforced), a fork into a spare has its parent's
# files, a session of another shape (writable_root) makes its own, and with --session-spares 0
# nothing is taken. Standard library only.
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
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

srv = Server("--warm", "0", "--session-spares", "0", tmp=TMP)
sid = create(srv, {})
ok(srv.metric("crucible_session_spares_hits_total") is None,
   "--session-spares 0: no spares (no spares counters)")
ok(sh(srv, sid, "echo ok") == "ok\n", "and a session works all the same")
ok(srv.stop() == 0, "that server stops cleanly")
done()
