#!/usr/bin/python3
# A session whose sandbox died under it (issue 13): its init is killed from the host (SIGKILL to
# that one process, found as the server's child that is an ancestor of a process the session
# started); the next exec answers sandbox_error saying so, the session is reclaimed with reason
# "broken" (metric and log line) and its id answers 404; another session is untouched. Bounded:
# one signal to one process the test identified, nothing else. Standard library only.
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-sessions-broken-")
NAP = 986000 + os.getpid() % 1000  # a sleep length no other test uses: it names our process


def status_field(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return line.split()[1]
    return None


def sleeper():
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if f.read().split(b"\0")[:2] == [b"sleep", str(NAP).encode()]:
                    return int(p)
        except OSError:
            pass
    return None


def init_of(pid, server):
    """The ancestor of pid whose parent is the server: the sandbox's init."""
    for _ in range(64):
        ppid = int(status_field(pid, "PPid"))
        if ppid == server:
            return pid
        if ppid <= 1:
            return None
        pid = ppid
    return None


srv = Server("--warm", "0", tmp=TMP, quiet=False)
st, j, text = srv.post("/v1/sessions", {})
st2, j2, text2 = srv.post("/v1/sessions", {})
if st != 201 or st2 != 201:
    print("Bail out! cannot create sessions: %s %s" % (text, text2))
    sys.exit(255)
sid, other = j["id"], j2["id"]
st, j, text = srv.post("/v1/sessions/%s/exec" % sid,
                       {"command": "sleep %d >/dev/null 2>&1 & echo started" % NAP})
ok(st == 200 and j["stdout"] == "started\n", "a background sleep in the session", text)
pid = None
deadline = time.time() + 20
while time.time() < deadline and pid is None:
    pid = sleeper()
    time.sleep(0.05)
init = init_of(pid, srv.p.pid) if pid else None
ok(init is not None and init != pid, "its sandbox's init found on the host (pid %s)" % init)
if init:
    os.kill(init, signal.SIGKILL)
    # the sandbox dies with its init: wait for the sleep to be gone (bounded)
    deadline = time.time() + 20
    while time.time() < deadline and sleeper() is not None:
        time.sleep(0.05)
    st, j, text = srv.post("/v1/sessions/%s/exec" % sid, {"command": "echo alive"})
    ok(st == 200 and j["status"] == "sandbox_error" and "died" in j["message"],
       "the next exec answers sandbox_error saying the sandbox died", text)
    st, j, text = srv.request("GET", "/v1/sessions/" + sid)
    ok(st == 404, "the session is gone: 404", text)
    st, j, text = srv.post("/v1/sessions/%s/exec" % sid, {"command": "echo alive"})
    ok(st == 404, "an exec of its id: 404", text)
    ok(srv.metric('crucible_sessions_reclaimed_total{reason="broken"}') == 1,
       "sessions_reclaimed_total{reason=\"broken\"} is 1")
    ended = [e for e in srv.events("session_ended") if e.get("id") == sid]
    ok(len(ended) == 1 and ended[0]["reason"] == "broken", "logged session_ended, reason broken",
       str(ended))
st, j, text = srv.post("/v1/sessions/%s/exec" % other, {"command": "echo alive"})
ok(st == 200 and j["stdout"] == "alive\n", "the other session is untouched", text)
st, j, text = srv.request("GET", "/v1/sessions")
ok(st == 200 and [s["id"] for s in j["sessions"]] == [other], "the listing holds only it", text)
ok(srv.stop() == 0, "the server stops cleanly")
done()
