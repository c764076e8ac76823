#!/usr/bin/python3
# The Python fork server chosen automatically (issue 14): `crucible eval`, `tasks validate` and
# `serve` run Python assert tests (serve: Python programs of /v1/run and /run_code too) as
# fork-server jobs by default, say so in their records ("path": "fork_server"), and give the same verdicts, statuses and outputs as the cold path
# (--no-fork-server, or a request's "fork_server": false) on programs that pass, fail, raise,
# exit early, end by a signal, loop, print or write files. Other languages and stdio tasks
# stay cold. Where the fork server cannot start (no cgroups, no libpython) eval says so once
# on stderr and every test runs cold: the checks that need it are skipped with that reason.
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import CRUCIBLE, done, ok, skip  # noqa: E402

TMP = tmpdir("crucible-fs-e2e-")


def task(tid, tests, timeout=None):
    t = {"id": tid, "language": "python", "harness": "assert", "entry_point": "f",
         "tests": [{"name": "t%d" % i, "code": c} for i, c in enumerate(tests)]}
    if timeout:
        t["limits"] = {"cpu_time": timeout, "wall_time": timeout * 3}
    return t


# Each case: a task and a solution; the verdicts of the two paths must agree field by field.
CASES = [
    (task("fs/pass", ["assert f(2) == 4", "assert f(3) == 9"]), "def f(x):\n    return x * x\n"),
    (task("fs/wrong", ["assert f(2) == 4", "assert f(3) == 10"]), "def f(x):\n    return x * x\n"),
    (task("fs/raise", ["assert f(1) == 1"]), "def f(x):\n    raise ValueError('no %d' % x)\n"),
    (task("fs/syntax", ["assert f(1) == 1"]), "def f(x) return x\n"),
    (task("fs/exit0", ["assert f(1) == 2"]), "import sys\ndef f(x):\n    sys.exit(0)\n"),
    (task("fs/os_exit", ["assert f(1) == 2"]), "import os\ndef f(x):\n    os._exit(0)\n"),
    (task("fs/kill", ["assert f(1) == 2"]),
     "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGKILL)\n"),
    (task("fs/loop", ["assert f(1) == 2"], timeout=1), "def f(x):\n    while True:\n        pass\n"),
    (task("fs/print", ["assert f(1) == 1"]),
     "import sys\ndef f(x):\n    print('out', x)\n    print('err', x, file=sys.stderr)\n    return x\n"),
    (task("fs/files", ["assert f(1) == 1"]),
     "def f(x):\n    open('/work/a', 'w').write('x')\n    open('/tmp/b', 'w').write('y')\n"
     "    return len(open('/work/a').read())\n"),
    (task("fs/bool-trick", ["assert f(1) == 1"]),
     "class T:\n    def __eq__(self, o):\n        return True\ndef f(x):\n    return T()\n"),
    # a failure inside the harness's comparison: its traceback leaves the harness's frames
    # out on both paths (a fork server's job is not given the harness's file: it has it
    # imported)
    (task("fs/eq-raises", ["assert f(1) == 1"]),
     "class T:\n    def __eq__(self, o):\n        raise RuntimeError('eq')\ndef f(x):\n    return T()\n"),
    (task("fs/import", ["assert f('a,b') == ['a', 'b']"]),
     "import re, collections\ndef f(s):\n    return re.split(',', s)\n"),
]
STDIO = {"id": "fs/stdio", "language": "python", "harness": "stdio",
         "tests": [{"name": "t", "stdin": "3\n", "expected": "9\n"}]}
C_TASK = {"id": "fs/c", "language": "c", "harness": "stdio",
          "tests": [{"name": "t", "stdin": "", "expected": "hi\n"}]}

tasks_path = os.path.join(TMP, "tasks.jsonl")
sols_path = os.path.join(TMP, "sols.jsonl")
with open(tasks_path, "w") as f:
    for t, _ in CASES:
        f.write(json.dumps(t) + "\n")
    f.write(json.dumps(STDIO) + "\n")
    f.write(json.dumps(C_TASK) + "\n")
with open(sols_path, "w") as f:
    for t, s in CASES:
        f.write(json.dumps({"task_id": t["id"], "solution": s}) + "\n")
    f.write(json.dumps({"task_id": "fs/stdio", "solution": "print(int(input()) ** 2)\n"}) + "\n")
    f.write(json.dumps({"task_id": "fs/c", "solution":
                        "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n"}) + "\n")


def evaluate(*opts):
    out = os.path.join(TMP, "res-%d.jsonl" % len(os.listdir(TMP)))
    p = subprocess.run([CRUCIBLE, "eval", "--tasks", tasks_path, "--solutions", sols_path,
                        "-j", "2", "--quiet", "--out", out] + list(opts),
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=300, text=True)
    recs = [json.loads(l) for l in open(out)] if os.path.exists(out) else []
    return p, {r["task_id"]: r for r in recs}


def essence(r):
    """What must not depend on the path: the verdict and each test's outcome and output."""
    return (r["verdict"], r["passed"], r["total"], r["reward"],
            [(t["name"], t["verdict"], t["status"], t["exit_code"], t["signal"], t["limit"],
              t["stdout"], t["stderr"]) for t in r["tests"]])


cold_p, cold = evaluate("--no-fork-server")
auto_p, auto = evaluate()
ok(cold_p.returncode == 0 and len(cold) == len(CASES) + 2,
   "eval --no-fork-server: every line verified", cold_p.stderr)
ok(auto_p.returncode == 0 and len(auto) == len(CASES) + 2, "eval (default): every line verified",
   auto_p.stderr)
off = "fork server is off" in auto_p.stderr
ok(not any(t.get("path") for r in cold.values() for t in r["tests"]),
   "--no-fork-server: no record says fork_server", cold)
if off:
    for _ in range(len(CASES) + 2):
        skip("fork-server path", auto_p.stderr.strip())
else:
    for t, _ in CASES:
        a, c = auto.get(t["id"]), cold.get(t["id"])
        ok(a and c and essence(a) == essence(c)
           and all(x.get("path") == "fork_server" for x in a["tests"]),
           "%s: %s on both paths, the default's on the fork server" % (t["id"], c and c["verdict"]),
           json.dumps([a, c], indent=1))
    for tid in ("fs/stdio", "fs/c"):
        a = auto.get(tid)
        ok(a and a["verdict"] == "accepted" and not any(x.get("path") for x in a["tests"]),
           "%s: stays on the cold path" % tid, a)
ok(auto_p.stderr.count("fork server is off") <= 1, "at most one line says the fork server is off",
   auto_p.stderr)

# --fork-server requires it; both options: the last one counts.
p, recs = evaluate("--fork-server")
if off:
    ok(p.returncode != 0 and "--fork-server" in p.stderr and not recs,
       "--fork-server where it cannot start: eval fails, naming the option", p.stderr)
else:
    ok(p.returncode == 0 and all(x.get("path") == "fork_server"
                                 for x in recs["fs/pass"]["tests"]),
       "--fork-server: the fork server's records", p.stderr)
p, recs = evaluate("--fork-server", "--no-fork-server")
ok(p.returncode == 0 and not any(x.get("path") for r in recs.values() for x in r["tests"]),
   "--fork-server --no-fork-server: the last one counts (cold)", p.stderr)

# tasks validate: the same statuses on both paths.
db = os.path.join(TMP, "lib.db")
refs = os.path.join(TMP, "refs.jsonl")
with open(refs, "w") as f:
    for (t, s) in CASES[:3]:
        f.write(json.dumps(dict(t, reference=s)) + "\n")
subprocess.run([CRUCIBLE, "tasks", "import", "--db", db, refs], check=True,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)


def validate(*opts):
    p = subprocess.run([CRUCIBLE, "tasks", "validate", "--db", db, "--all", "--json", "--quiet"]
                       + list(opts), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300, text=True)
    return p, sorted((j["id"], j["status"]) for j in map(json.loads, p.stdout.splitlines()))


vp_cold, v_cold = validate("--no-fork-server")
vp_auto, v_auto = validate()
ok(v_cold and v_cold == v_auto and dict(v_cold)["fs/pass"] == "valid"
   and dict(v_cold)["fs/wrong"] == "broken",
   "tasks validate: the same statuses with and without the fork server (%s)" % v_auto,
   vp_auto.stderr + vp_cold.stderr)
ok(vp_auto.returncode == 0, "tasks validate (default) exits 0", vp_auto.stderr)

# serve: /v1/verify on the fork server by default, "fork_server": false turns it off.
s = Server(tmp=TMP)
t, sol = CASES[1]
st, j, text = s.post("/v1/verify", {"task": t, "solution": sol})
st2, j2, text2 = s.post("/v1/verify", {"task": t, "solution": sol, "fork_server": False})
ok(st == 200 and st2 == 200 and essence(j) == essence(j2),
   "/v1/verify: the same record with and without \"fork_server\": false", [text, text2])
ok(st2 == 200 and not any(x.get("path") for x in j2["tests"]),
   "\"fork_server\": false: the cold path", text2)
if off:
    skip("/v1/verify on the fork server", auto_p.stderr.strip())
    skip("/metrics counts the fork server's start", auto_p.stderr.strip())
else:
    ok(st == 200 and all(x.get("path") == "fork_server" for x in j["tests"]),
       "/v1/verify (default): the fork server's record", text)
    ok(s.metric("crucible_fork_server_starts_total") == 1 and
       s.metric("crucible_fork_server_running") == 1,
       "/metrics: one fork server started and running", s.metrics())
for bad in ("no", 0, [False]):
    st, j, text = s.post("/v1/verify", {"task": t, "solution": sol, "fork_server": bad})
    ok(st == 400 and "fork_server" in text, "\"fork_server\": %r is a 400 naming the field" % (bad,),
       text)

# /v1/run and /run_code (SandboxFusion's, verl's path): a Python program is a fork-server job
# too, with the same answer as the cold path ("fork_server": false).
PROGRAMS = [
    ("stdin", "import sys\nd = sys.stdin.read()\nprint(d.upper())\nprint('e', file=sys.stderr)\n"),
    ("exit3", "raise SystemExit(3)\n"),
    ("raise", "def g():\n    raise ValueError('no')\ng()\n"),
    ("syntax", "def f(x) return x\n"),
    ("os_exit", "import os\nprint('lost', end='')\nos._exit(7)\n"),
    ("kill", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"),
    ("loop", "while True:\n    pass\n"),
    ("where", "import os, sys\nprint(os.getpid(), os.getppid(), os.getcwd(), sys.argv, __name__,"
              " __file__, sorted(os.environ), sys.path[0], len(sys.argv))\n"),
    ("eof", "input()\n"),
    ("big", "print('x' * 200000)\n"),
    ("file", "open('out.txt', 'w').write('made ' + input())\n"),
    ("atexit", "import atexit\natexit.register(lambda: print('bye'))\nprint('hi')\n"),
    # C stdio's buffer (a pipe: fully buffered) is flushed at the end on both paths, after
    # Python's own
    ("cstdio", "import ctypes\nctypes.CDLL(None).printf(b'c-level %d\\n', 7)\nprint('py')\n"),
]


def run_essence(j):
    return {k: j.get(k) for k in ("status", "exit_code", "signal", "limit", "stdout", "stderr")}


def run_code_essence(j):
    r = dict(j.get("run_result") or {})
    r.pop("execution_time", None)
    return (j.get("status"), r, j.get("files"))


for name, code in PROGRAMS:
    req = {"code": code, "language": "python", "stdin": "abc"}
    st, j, text = s.post("/v1/run", dict(req, limits={"wall_time": 2, "cpu_time": 1}))
    st2, j2, text2 = s.post("/v1/run", dict(req, limits={"wall_time": 2, "cpu_time": 1},
                                            fork_server=False))
    ok(st == 200 and st2 == 200 and run_essence(j) == run_essence(j2) and j2.get("path") is None
       and (off or j.get("path") == "fork_server"),
       "/v1/run %s: %s, the same answer on both paths" % (name, j2 and j2.get("status")),
       [text[:600], text2[:600]])
    req = {"code": code, "language": "python", "stdin": "abc", "run_timeout": 1,
           "fetch_files": ["out.txt"]}
    st, j, text = s.post("/run_code", req)
    st2, j2, text2 = s.post("/run_code", dict(req, fork_server=False))
    ok(st == 200 and st2 == 200 and run_code_essence(j) == run_code_essence(j2),
       "/run_code %s: %s, the same answer on both paths" % (name, j2 and j2.get("status")),
       [text[:600], text2[:600]])
st, j, text = s.post("/run_code", {"code": "print(1)", "language": "python", "fork_server": "no"})
ok(st == 400 and "fork_server" in text, "/run_code: \"fork_server\": \"no\" is a 400", text)
st, j, text = s.post("/v1/run", {"command": ["true"], "fork_server": False})
ok(st == 400 and "'fork_server' goes with 'code'" in text,
   "/v1/run: \"fork_server\" with a command is a 400 saying why", text)
st, j, text = s.post("/v1/run", {"code": "int main(){return 0;}", "language": "c"})
ok(st == 200 and j.get("status") == "ok" and j.get("path") is None, "/v1/run of C: cold", text)
if not off:
    ok(s.metric("crucible_fork_server_starts_total") == 1,
       "/metrics: still the one fork server for runs and verifications", s.metrics())
ok(s.stop() == 0, "the server stops cleanly with its fork server")
s = Server("--no-fork-server", tmp=TMP)
st, j, text = s.post("/v1/verify", {"task": t, "solution": sol})
ok(st == 200 and not any(x.get("path") for x in j["tests"])
   and s.metric("crucible_fork_server_starts_total") is None,
   "serve --no-fork-server: the cold path, no fork server metrics", text)
s.stop()
done()
