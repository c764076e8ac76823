#!/usr/bin/python3
# Two sessions of one server cannot see, signal or reach each other (issue 13): files, processes
# (/proc), signals (kill -0 of the other's host pid from inside), TCP on 127.0.0.1 and abstract
# unix sockets (each sandbox has its own network namespace), System V IPC (its own IPC
# namespace). Each refusal has a control: the same probe from the session that owns the thing
# succeeds, so a probe that cannot work at all does not pass. Probes only; nothing destructive.
# Standard library only.
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-sessions-iso-")
srv = Server("--warm", "0", tmp=TMP)
MARK = "crucible-iso-%d" % os.getpid()
PORT = 7000 + os.getpid() % 1000
PATTERN = MARK[:-1] + "[" + MARK[-1] + "]"  # a grep for MARK that does not match itself


def ex(sid, cmd, **kw):
    return srv.post("/v1/sessions/%s/exec" % sid, {"command": cmd, "timeout_s": 30}, **kw)


def new():
    st, j, text = srv.post("/v1/sessions", {})
    if st != 201:
        print("Bail out! cannot create a session: %s" % text)
        sys.exit(255)
    return j["id"]


A, B = new(), new()
LISTEN = r'''
import os, socket, sys, time
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", %d)); t.listen(8)
u = socket.socket(socket.AF_UNIX); u.bind("\0%s"); u.listen(8)
open("/tmp/ready", "w").write(str(os.getpid()))
while True:
    for s in (t, u):
        s.settimeout(0.05)
        try:
            s.accept()[0].close()
        except OSError:
            pass
''' % (PORT, MARK)
CONNECT = r'''
import socket, sys
ok = []
for fam, addr in ((socket.AF_INET, ("127.0.0.1", %d)), (socket.AF_UNIX, "\0%s")):
    s = socket.socket(fam); s.settimeout(3)
    try:
        s.connect(addr); ok.append("yes")
    except OSError as e:
        ok.append("no")
print(" ".join(ok))
''' % (PORT, MARK)

st, j, text = ex(A, "echo a-secret > /work/secret-a; echo a > /tmp/secret-a; "
                    "python3 -c '%s' >/dev/null 2>&1 & "
                    "for i in $(seq 200); do [ -s /tmp/ready ] && break; sleep 0.05; done; "
                    "cat /tmp/ready" % LISTEN.replace("'", "'\\''"))
ok(st == 200 and j["status"] == "ok" and j["stdout"].strip().isdigit(),
   "A: files written, a listener on 127.0.0.1:%d and @%s in the background" % (PORT, MARK), text)

# files
st, j, text = ex(B, "ls -a /work /tmp")
ok(st == 200 and "secret-a" not in j["stdout"] and j["status"] == "ok",
   "B sees none of A's files in /work or /tmp", text)
st, j, text = ex(A, "cat /work/secret-a")
ok(st == 200 and j["stdout"] == "a-secret\n", "(control: A sees its own)", text)

# processes
st, j, text = ex(B, "grep -l '%s' /proc/[0-9]*/cmdline 2>/dev/null | wc -l" % PATTERN)
ok(st == 200 and j["stdout"].strip() == "0", "B's /proc shows none of A's processes", text)
st, j, text = ex(A, "grep -l '%s' /proc/[0-9]*/cmdline 2>/dev/null | wc -l" % PATTERN)
ok(st == 200 and int(j["stdout"].strip() or 0) >= 1, "(control: A's /proc shows its listener)",
   text)


def host_pid(mark):
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if mark.encode() in cmdline and cmdline.startswith(b"python3"):
            return int(p)
    return None


hp = host_pid(MARK)
ok(hp is not None, "the host sees A's listener (its host pid %s)" % hp)
if hp is not None:
    st, j, text = ex(B, "kill -0 %d 2>/dev/null; echo rc=$?" % hp)
    ok(st == 200 and j["stdout"] == "rc=1\n", "B cannot signal A's listener (kill -0 host pid)",
       text)
    st, j, text = ex(B, "sleep 5 & kill -0 $! 2>/dev/null; echo own=$?; kill $!")
    ok(st == 200 and j["stdout"] == "own=0\n", "(control: B can signal its own process)", text)

# network and abstract unix sockets
st, j, text = srv.post("/v1/sessions/%s/exec" % A,
                       {"code": CONNECT, "language": "python", "timeout_s": 30})
ok(st == 200 and j["stdout"] == "yes yes\n",
   "(control: A connects to its own 127.0.0.1:%d and @%s)" % (PORT, MARK), text)
st, j, text = srv.post("/v1/sessions/%s/exec" % B,
                       {"code": CONNECT, "language": "python", "timeout_s": 30})
ok(st == 200 and j["stdout"] == "no no\n",
   "B cannot reach A's TCP port on 127.0.0.1 nor its abstract unix socket", text)

# System V IPC
st, j, text = ex(A, "ipcmk -M 4096 >/dev/null && ipcmk -Q >/dev/null && "
                    "ipcs -m | grep -c '^0x'; ipcs -q | grep -c '^0x'")
ok(st == 200 and j["stdout"].split() == ["1", "1"],
   "(control: A made a shared memory segment and a message queue, and sees them)", text)
st, j, text = ex(B, "ipcs -m | grep -c '^0x'; ipcs -q | grep -c '^0x'")
ok(st == 200 and j["stdout"].split() == ["0", "0"], "B sees none of A's System V IPC objects",
   text)

for sid in (A, B):
    srv.request("DELETE", "/v1/sessions/" + sid)
deadline = time.time() + 20
while time.time() < deadline and hp is not None and os.path.exists("/proc/%d" % hp):
    time.sleep(0.1)
ok(hp is None or not os.path.exists("/proc/%d" % hp),
   "deleting A ends its background processes")
ok(srv.stop() == 0, "the server stops cleanly")
done()
