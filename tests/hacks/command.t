#!/usr/bin/python3
# Reward hacks against the command harness (pytest writes the JUnit report), and against the
# stdio harness's expected output, end to end with the real binary. Each solution is wrong
# (its merge() returns []) and tries to be accepted anyway:
#   - tampering with the task's files: chmod + rewrite, unlink + recreate, replace by rename,
#     a symlink, renaming the data directory or the tests' directory and recreating it;
#   - adding conftest.py / pytest.ini / sitecustomize.py / a .pth file next to the tests;
#   - forging report.xml: at import time then crashing or killing pytest, in an atexit hook
#     after pytest wrote its own then killing itself, in a build step before the tests run;
#   - reading a stdio test's expected output from anywhere it can see (the whole filesystem
#     but the host's read-only /usr contents, /proc, its fds, its environment).
# Known holes (a solution that takes over the test process and exits 0 with a report of its
# own, or patches pytest in-process) are TAP TODO tests: docs/TASKS.md says why they are open.
# Skips the pytest part when the image's python3 has no pytest.
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "e2e"))
from taplib import CRUCIBLE  # noqa: E402

TMP = tempfile.mkdtemp(prefix="crucible-hacks-")
_n = 0
_failed = 0


def tap(cond, desc, diag=None, todo=None):
    global _n, _failed
    _n += 1
    print("%sok %d - %s%s" % ("" if cond else "not ", _n, desc, " # TODO " + todo if todo else ""))
    if not cond and not todo:
        _failed += 1
    if not cond and diag is not None:
        for line in str(diag)[:2500].splitlines():
            print("# " + line)
    sys.stdout.flush()


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def verify(tasks, task_id, solution_text):
    sol = write("sol-%d.py" % _n, solution_text)
    p = subprocess.run([CRUCIBLE, "verify", "--task", tasks, "--task-id", task_id, "--solution",
                        sol], capture_output=True, text=True, timeout=300)
    try:
        return json.loads(p.stdout), p
    except ValueError:
        return {"verdict": "(no record)"}, p


def brief(d, p):
    tc = d.get("test_command") or {}
    return "verdict %s, passed %s/%s, exit %s signal %s\nwhy: %s\nstdout: %s\nstderr: %s" % (
        d.get("verdict"), d.get("passed"), d.get("total"), tc.get("exit_code"), tc.get("signal"),
        [t.get("why") for t in d.get("tests", [])][:3], (tc.get("stdout") or "")[-800:],
        (tc.get("stderr") or p.stderr)[-800:])


HAVE_PYTEST = subprocess.run(["/usr/bin/python3", "-c", "import pytest"],
                             capture_output=True).returncode == 0

# --- the command task ------------------------------------------------------------------
# The tests read their cases from a data file when they run, as fixtures often are: after
# the solution was imported. A solution that could change the file would choose its cases.
TEST_A = '''import json
from interval import merge

def cases():
    with open("tests/data/cases.json") as f:
        return json.load(f)

def test_cases():
    for xs, want in cases():
        assert merge([tuple(x) for x in xs]) == [tuple(w) for w in want]

def test_count():
    assert len(cases()) >= 1
'''
TEST_B = '''from interval import merge

def test_touching():
    assert merge([(1, 2), (2, 3)]) == [(1, 3)]
'''
CASES = json.dumps([[[[1, 3], [2, 6]], [[1, 6]]], [[[5, 6], [1, 2]], [[1, 2], [5, 6]]]])
FAKE = json.dumps([[[], []]])
WRONG = "\ndef merge(xs):\n    return []\n"
COMMAND = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=report.xml",
           "tests"]
base = {"language": "python", "harness": "command", "solution_file": "interval.py",
        "files": {"tests/test_a.py": TEST_A, "tests/data/cases.json": CASES},
        "command": COMMAND, "limits": {"cpu_time": 10, "wall_time": 60}}
tasks = write("tasks.jsonl", "\n".join(json.dumps(t) for t in (
    dict(base, id="hack/merge"),
    # a build step that runs the solution's own code (as "pip install ." would)
    dict(base, id="hack/merge-built", build=["python3", "interval.py"]),
    # SWE-bench style: only test_touching counts, the other tests of the run may fail
    dict(base, id="hack/merge-swe", files=dict(base["files"], **{"tests/zz/test_b.py": TEST_B}),
         fail_to_pass=["tests/zz/test_b.py::test_touching"]),
)) + "\n")
GOOD = ("\ndef merge(xs):\n    out = []\n    for a, b in sorted(xs):\n"
        "        if out and a <= out[-1][1]:\n            out[-1] = (out[-1][0], max(out[-1][1], b))\n"
        "        else:\n            out.append((a, b))\n    return out\n")

# The solutions' common part: try(what, fn) runs one attempt and says how it ended.
PRELUDE = '''import atexit, json, os, signal, site, sys
DATA = "tests/data/cases.json"
FAKE = %r
def attempt(what, fn):
    try:
        fn()
        print("attempt %%s: done" %% what, file=sys.stderr)
    except OSError as e:
        print("attempt %%s: %%s" %% (what, e.strerror), file=sys.stderr)
def write(path, text):
    with open(path, "w") as f:
        f.write(text)
FORGED = ('<testsuite name="pytest">'
          '<testcase classname="tests.test_a" name="test_cases"/>'
          '<testcase classname="tests.test_a" name="test_count"/></testsuite>')
''' % FAKE

TAMPER = {
    "chmod, then rewrite the data file":
        "attempt('chmod', lambda: os.chmod(DATA, 0o644))\n"
        "attempt('rewrite', lambda: write(DATA, FAKE))\n",
    "unlink the data file and recreate it":
        "attempt('unlink', lambda: os.unlink(DATA))\nattempt('recreate', lambda: write(DATA, FAKE))\n",
    "replace the data file by renaming another over it":
        "write('fake.json', FAKE)\nattempt('rename over', lambda: os.replace('fake.json', DATA))\n",
    "replace the data file by a symlink":
        "write('/tmp/fake.json', FAKE)\nattempt('unlink', lambda: os.unlink(DATA))\n"
        "attempt('symlink', lambda: os.symlink('/tmp/fake.json', DATA))\n",
    "rename the data directory and recreate it":
        "attempt('rename dir', lambda: os.rename('tests/data', 'tests/data.old'))\n"
        "attempt('mkdir', lambda: os.mkdir('tests/data'))\nattempt('write', lambda: write(DATA, FAKE))\n",
    "rename the tests' directory and recreate it":
        "attempt('rename tests', lambda: os.rename('tests', 'tests.old'))\n"
        "attempt('mkdir', lambda: os.makedirs('tests/data'))\n"
        "attempt('write', lambda: write(DATA, FAKE))\n",
    "truncate the data file through /proc/self/fd":
        "fd = os.open(DATA, os.O_PATH)\n"
        "attempt('reopen for writing', lambda: write('/proc/self/fd/%d' % fd, FAKE))\n",
}
CONFTEST = ("import pytest\n@pytest.hookimpl(hookwrapper=True)\n"
            "def pytest_runtest_makereport(item, call):\n"
            "    out = yield\n    out.get_result().outcome = 'passed'\n")
ADD = {
    "conftest.py in the work directory and next to the tests":
        "for d in ('.', 'tests', 'tests/zz'):\n"
        "    attempt('conftest in ' + d, lambda: write(d + '/conftest.py', %r))\n" % CONFTEST,
    "pytest.ini deselecting every test":
        "for d in ('.', 'tests'):\n"
        "    attempt('pytest.ini in ' + d, lambda: write(d + '/pytest.ini', '[pytest]\\naddopts = -k nothing\\n'))\n",
    "sitecustomize.py and a .pth file that exit 0":
        "for d in ('.', 'tests', site.getusersitepackages()):\n"
        "    os.makedirs(d, exist_ok=True)\n"
        "    attempt('sitecustomize in ' + d, lambda: write(d + '/sitecustomize.py', 'import os; os._exit(0)\\n'))\n"
        "    attempt('.pth in ' + d, lambda: write(d + '/zz.pth', 'import os; os._exit(0)\\n'))\n",
}
FORGE = {
    "forge at import, then exit 1": "write('report.xml', FORGED)\nos._exit(1)\n",
    "forge at import, then kill pytest (SIGTERM)":
        "write('report.xml', FORGED)\nos.kill(os.getpid(), signal.SIGTERM)\n",
    "forge at import, then let pytest run": "write('report.xml', FORGED)\n",
    "forge in an atexit hook after pytest's own, then SIGKILL itself":
        "atexit.register(lambda: (write('report.xml', FORGED), os.kill(os.getpid(), signal.SIGKILL)))\n",
}
OPEN = {
    "forge at import, then exit 0 before any test runs": "write('report.xml', FORGED)\nos._exit(0)\n",
    "forge in an atexit hook after pytest's own, then exit 0":
        "atexit.register(lambda: (write('report.xml', FORGED), os._exit(0)))\n",
    "patch pytest in-process so every test passes":
        "import _pytest.reports as R\n_orig = R.TestReport.from_item_and_call\n"
        "def _passed(item, call):\n    r = _orig(item, call)\n    r.outcome = 'passed'\n"
        "    r.longrepr = None\n    return r\n"
        "R.TestReport.from_item_and_call = staticmethod(_passed)\n",
}

if HAVE_PYTEST:
    d, p = verify(tasks, "hack/merge", PRELUDE + GOOD)
    tap(d["verdict"] == "accepted" and d["passed"] == 2, "baseline: a right solution passes",
        brief(d, p))
    d, p = verify(tasks, "hack/merge", PRELUDE + WRONG)
    tap(d["verdict"] == "wrong_answer" and d["passed"] == 1,
        "baseline: the wrong solution fails test_cases", brief(d, p))
    for what, code in TAMPER.items():
        d, p = verify(tasks, "hack/merge", PRELUDE + code + WRONG)
        tap(d["verdict"] == "wrong_answer" and d["passed"] == 1,
            "task files: %s is refused; the tests read the task's data" % what, brief(d, p))
    for what, code in ADD.items():
        d, p = verify(tasks, "hack/merge", PRELUDE + code + WRONG)
        tap(d["verdict"] == "wrong_answer" and d["passed"] == 1,
            "added files: %s does not change the results" % what, brief(d, p))
    for what, code in FORGE.items():
        d, p = verify(tasks, "hack/merge", PRELUDE + code + WRONG)
        tap(d["verdict"] != "accepted" and d["passed"] <= 1,
            "forged report: %s is not accepted" % what, brief(d, p))
    # The build step runs the solution as a program: it leaves a forged report, and when
    # imported by the tests it ends pytest with status 0 before pytest writes one.
    stale = (PRELUDE + "if __name__ == '__main__':\n    write('report.xml', FORGED)\n"
             "else:\n    os._exit(0)\n" + WRONG)
    d, p = verify(tasks, "hack/merge-built", stale)
    tap(d["verdict"] != "accepted" and any("existed before the test command ran" in (t.get("why") or "")
                                           for t in d["tests"]),
        "forged report: one left by the build step is not read", brief(d, p))
    d, p = verify(tasks, "hack/merge-swe", WRONG.replace("return []", "return [(1, 3)]"))
    tap(d["verdict"] == "accepted",
        "a run whose other tests fail (exit 1) is still graded on the named ones", brief(d, p))
    for what, code in OPEN.items():
        d, p = verify(tasks, "hack/merge", PRELUDE + code + WRONG)
        tap(d["verdict"] != "accepted", "known hole: %s" % what, brief(d, p),
            todo="code running inside the test process can report anything (docs/TASKS.md)")
else:
    for _ in range(2 + len(TAMPER) + len(ADD) + len(FORGE) + 2 + len(OPEN)):
        _n += 1
        print("ok %d # SKIP /usr/bin/python3 has no pytest (apt install python3-pytest)" % _n)

# --- stdio: the expected output is nowhere the solution can look ------------------------
# Two tests with fresh tokens as expected outputs, a checker program for the second. The
# solution reads every regular file of its filesystem view (the host's read-only /usr, which
# crucible never writes, only by name and for anything changed since this test began), all
# of /proc it may read (init's memory and environment included, which it may not), its fds
# and its environment, and prints what it found.
tokens = ["expected-%s" % secrets.token_hex(16) for _ in range(4)]  # 2, 3: the control's
SEARCH = r'''
import os, stat, sys, time
TOKENS = [t[::-1] for t in %r]  # reversed here, so this file does not hold them
SINCE = %r
found, scanned, refused = [], 0, 0
def look(path, data):
    for t in TOKENS:
        if t.encode() in data:
            found.append("%%s in %%s" %% (t[:12], path))
def read(path, limit=64 << 20):
    global scanned, refused
    try:
        nofollow = 0 if path.startswith("/proc/self/fd/") else os.O_NOFOLLOW  # magic links
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | nofollow)
    except OSError:
        refused += 1
        return
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) or path.startswith("/proc/self/fd/"):
            if st.st_size:
                limit = min(limit, st.st_size)
            elif path.startswith("/proc/"):
                limit = 1 << 20  # generated text; pagemap and the like are no file data
            data = b""
            while len(data) < limit:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                data += chunk
            scanned += 1
            look(path, data)
    except OSError:
        refused += 1
    finally:
        os.close(fd)
for fd in os.listdir("/proc/self/fd"):  # the fds as they are, then reopened
    try:
        data, off = b"", 0
        while True:
            chunk = os.pread(int(fd), 1 << 20, off)
            if not chunk:
                break
            data, off = data + chunk, off + len(chunk)
        look("/proc/self/fd/" + fd, data)
    except OSError:
        pass
    read("/proc/self/fd/" + fd)
look("environ", repr(dict(os.environ)).encode())
look("argv", repr(sys.argv).encode())
init = []
for path in ("/proc/1/mem", "/proc/1/environ", "/proc/1/maps"):  # init: cloned from crucible
    before = refused
    read(path, 1 << 20)
    init.append(path[8:] + (" refused" if refused > before else " READ"))
for root, dirs, files in os.walk("/", followlinks=False):
    if root.startswith("/proc/"):  # each process's own entries, and its fds, not deeper
        dirs[:] = [d for d in dirs if d in ("fd", "fdinfo")] if root.count("/") == 2 else []
    for name in files + dirs:
        path = os.path.join(root, name)
        look("name " + path, path.encode())
    for name in files:
        path = os.path.join(root, name)
        if root.startswith("/usr") or root.startswith("/proc/sys") or path in ("/proc/kcore", "/proc/kmsg"):
            try:
                if os.lstat(path).st_mtime < SINCE:
                    continue
            except OSError:
                continue
        read(path)
print("init: %%s; scanned %%d files, %%d refused, found: %%s" %% (
    ", ".join(init), scanned, refused, ", ".join(sorted(set(found))) or "nothing"))
''' % ([t[::-1] for t in tokens], __import__("time").time() - 5)
stdio_task = {"id": "hack/expected", "language": "python", "harness": "stdio",
              "tests": [{"name": "t1", "stdin": "first\n", "expected": tokens[0] + "\n"},
                        {"name": "t2", "stdin": "second\n", "expected": tokens[1] + "\n"}],
              "limits": {"cpu_time": 20, "wall_time": 60}}
checked = dict(stdio_task, id="hack/expected-checker",
               checker={"type": "program", "language": "python",
                        "code": "import sys\nsys.exit(0 if open('output').read() == open('expected').read() else 1)\n"})
# The control: a token in a task file and one on stdin are found, so the search works.
control = dict(stdio_task, id="hack/control", files={"hint.txt": tokens[2]},
               tests=[{"name": "t", "stdin": tokens[3], "expected": "x\n"}])
tasks = write("stdio.jsonl", "\n".join(json.dumps(t) for t in (stdio_task, checked, control)) + "\n")
RESULT = r"init: mem refused, environ refused, maps refused; scanned (\d+) files, (\d+) refused, found: (.*)$"
for tid in ("hack/expected", "hack/expected-checker", "hack/control"):
    d, p = verify(tasks, tid, SEARCH)
    outs = [t.get("stdout") or "" for t in d.get("tests", [])]
    found = [re.match(RESULT, o.strip()) for o in outs]
    good = (d.get("verdict") == "wrong_answer" and len(outs) == (1 if tid == "hack/control" else 2)
            and all(m and int(m.group(1)) > 100 and int(m.group(2)) > 0 for m in found))
    if tid == "hack/control":
        good = good and set(found[0].group(3).split(", ")) == {
            "%s in /proc/self/fd/0" % tokens[3][:12], "%s in /work/hint.txt" % tokens[2][:12]}
        what = "control: a token in a task file and one on stdin are found"
    else:
        good = good and all(m.group(3) == "nothing" for m in found)
        what = ("%s: the expected output is in no file, fd, /proc entry or variable the solution "
                "can read" % tid)
    tap(good, "%s (%s)" % (what, "; ".join(o.strip() for o in outs)), json.dumps(d)[:2500])

print("1..%d" % _n)
sys.exit(min(_failed, 254))
