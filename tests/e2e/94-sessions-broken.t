#!/usr/bin/python3
# A session whose sandbox died under it (issue 13): its init is killed from the host (SIGKILL to
# that one process, found as the server's child that is an ancestor of a process the session
# started). While the session is idle, the server's reaper notices within seconds: the session
# is reclaimed with reason "broken" (metric and log line), its id answers 404 and no process or
# cgroup of it is left. While an exec runs, that exec answers sandbox_error saying so, and the
# session is reclaimed the same way. Another session is untouched. Bounded: one signal to one
# process the test identified, each time, nothing else. Standard library only.
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from procs import cgroups_of, children_of, wait_for  # noqa: E402
from serverlib import Server, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-sessions-broken-")
NAP = 986000 + os.getpid() % 1000  # a sleep length no other test uses: it names our process
NAP_EXEC = NAP + 1000  # the same, for the sleep an exec runs in the foreground


def status_field(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return line.split()[1]
    return None


def sleeper(nap=NAP):
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if f.read().split(b"\0")[:2] == [b"sleep", str(nap).encode()]:
                    return int(p)
        except OSError:
            pass
    return None


def find_init(nap):
    """The init of the sandbox running `sleep nap`, once that sleep is seen (bounded)."""
    pid = None
    deadline = time.time() + 20
    while time.time() < deadline and pid is None:
        pid = sleeper(nap)
        time.sleep(0.05)
    return init_of(pid, srv.p.pid) if pid else None


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
ids = []
for _ in range(3):
    st, j, text = srv.post("/v1/sessions", {})
    if st != 201:
        print("Bail out! cannot create sessions: %s" % text)
        sys.exit(255)
    ids.append(j["id"])
sid, busy, other = ids

# ---- killed while idle: the reaper notices ---------------------------------------------------
st, j, text = srv.post("/v1/sessions/%s/exec" % sid,
                       {"command": "sleep %d >/dev/null 2>&1 & echo started" % NAP})
ok(st == 200 and j["stdout"] == "started\n", "a background sleep in the session", text)
init = find_init(NAP)
ok(init is not None and init != sleeper(), "its sandbox's init found on the host (pid %s)" % init)
groups = cgroups_of(init) if init else []
ok(groups and all(os.path.isdir(d) for d in groups), "its cgroup seen on the host", groups)
if init:
    os.kill(init, signal.SIGKILL)
    # no request on the session: only the reaper (every second) can find out
    ok(wait_for(lambda: srv.request("GET", "/v1/sessions/" + sid)[0] == 404),
       "without any request on it, GET of the session answers 404 within seconds")
    st, j, text = srv.post("/v1/sessions/%s/exec" % sid, {"command": "echo alive"})
    ok(st == 404, "an exec of its id: 404, not an infra error", text)
    ok(srv.metric('crucible_sessions_reclaimed_total{reason="broken"}') == 1,
       "sessions_reclaimed_total{reason=\"broken\"} is 1")
    ended = [e for e in srv.events("session_ended") if e.get("id") == sid]
    ok(len(ended) == 1 and ended[0]["reason"] == "broken", "logged session_ended, reason broken",
       str(ended))
    ok(wait_for(lambda: sleeper() is None and init not in children_of(srv.p.pid)),
       "no process of it is left (its sleep is gone, its init reaped)")
    ok(wait_for(lambda: not any(os.path.isdir(d) for d in groups)),
       "no cgroup of it is left", [d for d in groups if os.path.isdir(d)])

# ---- killed during an exec: the exec says so ------------------------------------------------
answer = []
t = threading.Thread(target=lambda: answer.append(
    srv.post("/v1/sessions/%s/exec" % busy, {"command": ["sleep", str(NAP_EXEC)],
                                             "timeout_s": 120})))
t.start()
init = find_init(NAP_EXEC)
ok(init is not None, "the busy session's init found on the host (pid %s)" % init)
if init:
    os.kill(init, signal.SIGKILL)
t.join(60)
st, j, text = answer[0] if answer else (None, None, "no answer")
ok(st == 200 and j["status"] == "sandbox_error" and "died" in j["message"],
   "the running exec answers sandbox_error saying the sandbox died", text)
st, j, text = srv.request("GET", "/v1/sessions/" + busy)
ok(st == 404, "that session is gone: 404", text)
ok(srv.metric('crucible_sessions_reclaimed_total{reason="broken"}') == 2,
   "sessions_reclaimed_total{reason=\"broken\"} is 2")
ended = [e for e in srv.events("session_ended") if e.get("id") == busy]
ok(len(ended) == 1 and ended[0]["reason"] == "broken", "logged session_ended, reason broken",
   str(ended))

st, j, text = srv.post("/v1/sessions/%s/exec" % other, {"command": "echo alive"})
ok(st == 200 and j["stdout"] == "alive\n", "the other session is untouched", text)
st, j, text = srv.request("GET", "/v1/sessions")
ok(st == 200 and [s["id"] for s in j["sessions"]] == [other], "the listing holds only it", text)
ok(srv.stop() == 0, "the server stops cleanly")
done()
