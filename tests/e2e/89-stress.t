#!/usr/bin/python3
# Verdicts that stay right under stress, and the caller's mistakes never blamed on crucible,
# end to end with the real binary:
#   - a stdio test killed by the memory limit does not make the later tests of the same
#     solution (same sandbox) memory_limit: each is judged on its own, fraction rewards too;
#   - a program that sends itself SIGXCPU is signaled, not a CPU-time limit;
#   - impossible requests are the caller's: an argv or environment the kernel's execve would
#     refuse (E2BIG), files that cannot all exist ('a' and 'a/b', a name over NAME_MAX, a path
#     over PATH_MAX), files where the program's code or a task's solution goes. The CLI exits
#     2 with a message and no record; HTTP answers 400 (every route that takes files or a
#     command); a task file with such files is refused when read. Never sandbox_error or
#     infra_error, and the service stays up.
import base64
import http.client
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import CRUCIBLE, done, ok, skip, track  # noqa: E402

TMP = tempfile.mkdtemp(prefix="crucible-stress-")


def cru(*args, **kw):
    return subprocess.run([CRUCIBLE] + list(args), capture_output=True, text=True, timeout=300,
                          **kw)


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def memory_enforced():
    out = cru("run", "--check").stdout
    return any(l.startswith("memory:") and "OOM reported" in l for l in out.splitlines())


# --- 1. one OOM-killed test does not poison the next ones --------------------------------
if memory_enforced():
    tasks = write("oom.jsonl", json.dumps({
        "id": "oom/1", "language": "python", "harness": "stdio",
        "limits": {"memory_mb": 64, "cpu_time": 5, "wall_time": 20},
        "tests": [{"name": "small0", "stdin": "small\n", "expected": "ok\n"},
                  {"name": "big", "stdin": "big\n", "expected": "ok\n"},
                  {"name": "small1", "stdin": "small\n", "expected": "ok\n"},
                  {"name": "small2", "stdin": "small\n", "expected": "ok\n"}]}) + "\n")
    sol = write("oom.py", "import sys\nif sys.stdin.read().strip() == 'big':\n"
                          "    x = bytearray(512 << 20)\nprint('ok')\n")
    p = cru("verify", "--task", tasks, "--solution", sol, "--reward", "fraction")
    d = json.loads(p.stdout)
    verdicts = [t["verdict"] for t in d["tests"]]
    ok(verdicts == ["accepted", "memory_limit", "accepted", "accepted"],
       "stdio: only the test that hit the memory limit is memory_limit", p.stdout[:1500])
    ok(d["verdict"] == "memory_limit" and abs(d["reward"] - 0.75) < 1e-9 and d["passed"] == 3,
       "...so the fraction reward is 3/4, not 0", p.stdout[:600])
    ok(max(t["memory_kb"] for t in d["tests"] if t["name"] != "big") < 48 * 1024,
       "...and the later tests report their own peak memory", [t["memory_kb"] for t in d["tests"]])
else:
    for _ in range(3):
        skip("OOM in one stdio test", "no memory cgroup here (crucible run --check)")

# --- 2. a self-sent SIGXCPU is not a timeout ---------------------------------------------
p = cru("run", "--json", "--", "/usr/bin/python3", "-c",
        "import os, signal; os.kill(os.getpid(), signal.SIGXCPU)")
d = json.loads(p.stdout or "{}")
ok(d.get("status") == "signaled" and d.get("signal") == 24 and d.get("limit") is None
   and p.returncode == 1, "run: a program that sends itself SIGXCPU is signaled (24), exit 1",
   p.stdout + p.stderr)
# Unprivileged, RLIMIT_CPU is the limit itself: its own SIGXCPU must stay a timeout.
if os.geteuid() == 0 and subprocess.run(["which", "setpriv"], capture_output=True).returncode == 0:
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", CRUCIBLE, "run", "--json"]
    p = subprocess.run(nobody + ["--", "/usr/bin/python3", "-c",
                                 "import os, signal; os.kill(os.getpid(), signal.SIGXCPU)"],
                       capture_output=True, text=True, timeout=60)
    d = json.loads(p.stdout or "{}")
    ok(d.get("status") == "signaled" and d.get("signal") == 24,
       "run as an ordinary user (rlimit fallback): a self-sent SIGXCPU is signaled", p.stdout + p.stderr)
    p = subprocess.run(nobody + ["--cpu-time", "1", "--", "/bin/sh", "-c", "while :; do :; done"],
                       capture_output=True, text=True, timeout=60)
    d = json.loads(p.stdout or "{}")
    ok(d.get("status") == "timeout" and d.get("limit") == "cpu",
       "...and the SIGXCPU of RLIMIT_CPU is a timeout", p.stdout + p.stderr)
else:
    skip("unprivileged SIGXCPU", "needs root and setpriv")
    skip("unprivileged RLIMIT_CPU", "needs root and setpriv")
tasks = write("xcpu.jsonl", json.dumps({
    "id": "xcpu/1", "language": "python", "harness": "stdio",
    "tests": [{"name": "t", "stdin": "", "expected": "x\n"}]}) + "\n")
sol = write("xcpu.py", "import os, signal\nprint('x', flush=True)\nos.kill(os.getpid(), signal.SIGXCPU)\n")
p = cru("verify", "--task", tasks, "--solution", sol)
d = json.loads(p.stdout)
ok(d["verdict"] == "runtime_error" and d["tests"][0]["status"] == "signaled",
   "verify: the same is a runtime_error, not a timeout", p.stdout[:800])

# --- 3. the caller's mistakes: the CLI ---------------------------------------------------
# A command line the host's execve still takes (with an unlimited stack, up to 6 MiB) but
# the sandbox's would not, once its fixed environment is added.
LIMIT = 6 << 20
pre = [CRUCIBLE, "run", "--json", "--", "/bin/true"]
args = ["a" * 100000 for _ in range(62)]
host = (len(CRUCIBLE) + 1) + sum(len(a) + 1 for a in pre + args + [""]) + 8 * (len(pre) + len(args) + 1)
last = "b" * (LIMIT - 64 - host)


def unlimited_stack():
    resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


try:
    p = subprocess.run(pre + args + [last], env={}, preexec_fn=unlimited_stack,
                       capture_output=True, text=True, timeout=120)
    ok(p.returncode == 2 and p.stdout == "" and "E2BIG" in p.stderr
       and "sandbox_error" not in p.stderr,
       "run: a command line over the kernel's execve limit is exit 2 with a message, no record",
       "exit %d\nstdout %s\nstderr %s" % (p.returncode, p.stdout[:400], p.stderr[:400]))
except (OSError, ValueError) as e:
    skip("run: E2BIG", "cannot raise the stack limit here: %s" % e)

src = write("f.txt", "x\n")
for files, needle, what in (
        (["a=" + src, "a/b=" + src], "'a' is a file, so nothing can be put below it ('a/b')",
         "a file where another needs a directory"),
        (["a=" + src, "a=" + src], "'a' is given twice", "the same destination twice"),
        (["d/" + "n" * 256 + "=" + src], "NAME_MAX", "a name over NAME_MAX")):
    argv = ["run", "--json"]
    for f in files:
        argv += ["--file", f]
    p = cru(*(argv + ["--", "/bin/true"]))
    ok(p.returncode == 2 and p.stdout == "" and needle in p.stderr,
       "run --file: %s is exit 2 naming it" % what, p.stderr[:400])

big = write("big-file", "x" * ((1 << 20) + 1))
p = cru("run", "--json", "--disk", "1", "--file", "data=" + big, "--", "/bin/true")
ok(p.returncode == 2 and p.stdout == "" and "scratch disk of 1 MB" in p.stderr,
   "run --file: files larger than the scratch disk are exit 2 naming it", p.stdout[:300] + p.stderr)

big = os.path.join(TMP, "big-stdin")
with open(big, "w") as f:
    f.truncate((1 << 30) + 1)  # sparse: costs no disk
p = cru("run", "--json", "--stdin", big, "--", "/bin/true")
ok(p.returncode == 2 and p.stdout == "" and "larger than 1 GiB" in p.stderr,
   "run --stdin: a file over 1 GiB is exit 2 naming it, no sandbox_error record", p.stdout[:300] + p.stderr)
os.unlink(big)

bad = write("bad.jsonl", json.dumps({
    "id": "bad/1", "language": "python", "harness": "stdio", "files": {"main.py": "print(1)"},
    "tests": [{"stdin": "", "expected": "1\n"}]}) + "\n")
sol = write("one.py", "print(1)\n")
p = cru("verify", "--task", bad, "--solution", sol)
ok(p.returncode == 2 and "'main.py' is where the solution goes" in p.stderr
   and "infra_error" not in p.stdout,
   "verify: a task whose files name its solution file is refused, exit 2", p.stdout[:300] + p.stderr)
p = cru("tasks", "import", "--db", os.path.join(TMP, "lib.db"), bad)
ok(p.returncode != 0 and "where the solution goes" in p.stderr,
   "tasks import: the same task is a bad line", p.stderr)

# --- 3. the caller's mistakes: HTTP -------------------------------------------------------
port_file = os.path.join(TMP, "port")
log = open(os.path.join(TMP, "serve.log"), "w+")
srv = track(subprocess.Popen([CRUCIBLE, "serve", "--listen", "127.0.0.1:0", "--port-file",
                              port_file], stdout=subprocess.DEVNULL, stderr=log))
deadline = time.time() + 10
while time.time() < deadline and not os.path.exists(port_file):
    time.sleep(0.02)
time.sleep(0.05)
port = int(open(port_file).read())


def post(path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("POST", path, body=json.dumps(body))
    r = c.getresponse()
    text = r.read().decode()
    c.close()
    try:
        return r.status, json.loads(text), text
    except ValueError:
        return r.status, None, text


B64 = base64.b64encode(b"x").decode()
TASK = {"id": "t", "language": "python", "harness": "stdio",
        "tests": [{"stdin": "", "expected": "\n"}]}
cases = (
    ("/v1/run", {"command": ["/bin/echo", "x" * (2 << 20)]}, "MAX_ARG_STRLEN",
     "a 2 MB command argument"),
    ("/v1/run", {"command": ["/bin/echo"] + ["y" * 100000] * 70}, "E2BIG",
     "7 MB of command arguments"),
    ("/v1/run", {"command": ["/bin/cat", "a/b"], "files": {"a": "1", "a/b": "2"}},
     "'a' is a file, so nothing can be put below it", "files 'a' and 'a/b'"),
    ("/v1/run", {"command": ["/bin/true"], "files": {"n" * 256: "1"}}, "NAME_MAX",
     "a file name over NAME_MAX"),
    ("/v1/run", {"command": ["/bin/true"], "files": {"d/" * 2045 + "f": "1"}}, "PATH_MAX",
     "a file path over PATH_MAX"),
    ("/v1/run", {"command": ["/bin/true"], "files": {"big": "x" * ((1 << 20) + 1)},
                 "limits": {"disk_mb": 1}}, "scratch disk of 1 MB", "files larger than the disk"),
    ("/v1/run", {"code": "print(1)", "language": "python", "files": {"main.py": "x"}},
     "'main.py' is where the program's code goes", "code with a file named as its source"),
    ("/v1/run", {"code": "print(1)", "language": "python", "files": {"main.py/x": "x"}},
     "'main.py' is where the program's code goes", "code with a file below its source"),
    ("/run_code", {"code": "print(1)", "language": "python", "files": {"main.py": B64}},
     "'main.py' is where the program's code goes", "/run_code with a file named as its source"),
    ("/v1/batch", {"items": [{"kind": "run", "command": ["/bin/true"],
                              "files": {"a": "1", "a/b": "2"}}]},
     "items[0]: files: 'a' is a file", "a batch item's files"),
    ("/v1/verify", {"task": dict(TASK, files={"main.py": "x"}), "solution": "print()"},
     "'main.py' is where the solution goes", "a task whose files name its solution"),
    ("/v1/verify", {"task": dict(TASK, files={"a": "1", "a/b": "2"}), "solution": "print()"},
     "'a' is a file", "a task's files 'a' and 'a/b'"),
    ("/v1/verify", {"task": dict(TASK, files={"f%d" % i: "" for i in range(400)},
                                 limits={"disk_mb": 1}), "solution": "print()"},
     "the scratch disk of 1 MB holds", "a task with more files than its disk holds"),
)
for path, body, needle, what in cases:
    st, j, text = post(path, body)
    msg = (j or {}).get("error", {}).get("message", "")
    ok(st == 400 and needle in msg, "%s: %s is a 400 naming it" % (path, what), text[:400])

st, j, text = post("/v1/run", {"command": ["/bin/echo", "still", "up"],
                               "files": {"a/b": "1", "a/c": "2", "a-b": "3"}})
ok(st == 200 and j["status"] == "ok" and j["stdout"] == "still up\n",
   "the service stays up, and files sharing a directory still run", text[:300])
srv.terminate()
srv.wait(timeout=30)
log.seek(0)
done()
