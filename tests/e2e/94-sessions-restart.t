#!/usr/bin/python3
# A server killed with SIGKILL leaves nothing of its sessions behind (issue 13): three sessions,
# each with a background `sleep` started by an exec; SIGKILL the server; once a new server
# has started on the same machine: no process of the old sandboxes, none of their cgroups under
# crucible's subtree, no new mount in the host's mount table, and the new server lists no
# session and answers 404 for the old ids. Standard library only.
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from procs import cgroups_of  # noqa: E402
from serverlib import Server, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-sessions-restart-")
# a sleep length no other test uses: it names the old sessions' processes on the host
NAPS = [987000 + os.getpid() % 1000 * 3 + i for i in range(3)]


def mounts():
    with open("/proc/self/mountinfo") as f:
        return sorted(" ".join(line.split()[3:5]) for line in f)


def procs_sleeping(nap):
    """Host pids of processes whose command line is `sleep NAP`."""
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if f.read().split(b"\0")[:2] == [b"sleep", str(nap).encode()]:
                    out.append(int(p))
        except OSError:
            pass
    return out

before = mounts()
srv = Server("--warm", "0", tmp=TMP)
ids = []
for nap in NAPS:
    st, j, text = srv.post("/v1/sessions", {})
    if st != 201:
        print("Bail out! cannot create a session: %s" % text)
        sys.exit(255)
    ids.append(j["id"])
    st, j, text = srv.post("/v1/sessions/%s/exec" % ids[-1],
                           {"command": "sleep %d >/dev/null 2>&1 & echo started" % nap})
    ok(st == 200 and j["stdout"] == "started\n", "session %d: a background sleep" % len(ids),
       text)
# a background child may still be between its fork and its execve when its exec answers
deadline = time.time() + 20
while time.time() < deadline and not all(len(procs_sleeping(n)) == 1 for n in NAPS):
    time.sleep(0.05)
pids = {nap: procs_sleeping(nap) for nap in NAPS}
ok(all(len(p) == 1 for p in pids.values()),
   "the host sees the three background processes after their execs ended", pids)
groups = sorted({d for p in pids.values() for pid in p for d in cgroups_of(pid)
                 if os.path.isdir(d)})
ok(len(groups) >= 3, "they live in cgroups below crucible's subtree", groups)

srv.p.send_signal(signal.SIGKILL)
srv.p.wait()
# The kernel ends the old sandboxes (their init dies with the supervisor); wait for that
# before the new server starts, as a restart under a supervisor would.
deadline = time.time() + 30
while time.time() < deadline and any(procs_sleeping(n) for n in NAPS):
    time.sleep(0.1)
srv2 = Server("--warm", "0", tmp=TMP)
left = {n: procs_sleeping(n) for n in NAPS}
ok(not any(left.values()), "no process of the old sandboxes is left", left)
ok(not [d for d in groups if os.path.isdir(d)],
   "no cgroup of the old sandboxes is left (the new server's start reclaims them)",
   [d for d in groups if os.path.isdir(d)])
extra = [m for m in mounts() if m not in before]
ok(not extra, "no mount was left on the host", extra[:10])
st, j, text = srv2.request("GET", "/v1/sessions")
ok(st == 200 and j["sessions"] == [] and j["count"] == 0, "the new server lists no session",
   text)
for sid in ids:
    st, j, text = srv2.request("GET", "/v1/sessions/" + sid)
    ok(st == 404, "the old id %s answers 404" % sid, text)
ok(srv2.stop() == 0, "the new server stops cleanly")
done()
