#!/usr/bin/python3
# crucible serve end to end, on loopback with the real binary: every route, batch streaming
# with dependencies and client disconnects, a solution's language on /v1/verify and batch
# items, SandboxFusion's /run_code as verl sends it (its pytest mode included), priorities, deadlines, overload (429) under a bounded load test, bad input, bearer-token
# auth, metrics, and a clean stop on SIGTERM. Standard library only.
import base64
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import CRUCIBLE, done, ok, track  # noqa: E402

TMP = tempfile.mkdtemp(prefix="crucible-serve-")


class Server:
    def __init__(self, *args):
        self.port_file = os.path.join(TMP, "port-%d" % time.monotonic_ns())
        self.log = open(os.path.join(TMP, "log-%d" % time.monotonic_ns()), "w+")
        self.p = subprocess.Popen([CRUCIBLE, "serve", "--listen", "127.0.0.1:0",
                                   "--port-file", self.port_file] + list(args),
                                  stdout=subprocess.DEVNULL, stderr=self.log)
        track(self.p)
        deadline = time.time() + 10
        while time.time() < deadline and not os.path.exists(self.port_file):
            if self.p.poll() is not None:
                break
            time.sleep(0.02)
        time.sleep(0.05)
        self.port = int(open(self.port_file).read())

    def conn(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=60):
        c = self.conn(timeout)
        data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
        c.request(method, path, body=data, headers=headers or {})
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        try:
            j = json.loads(text)
        except ValueError:
            j = None
        return r.status, j, text, r

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def rss_kb(self):
        for line in open("/proc/%d/status" % self.p.pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None


def batch_lines(srv, body, on_line=None):
    """POST /v1/batch; yields (seconds since start, parsed line) as lines arrive."""
    c = srv.conn()
    t0 = time.monotonic()
    c.request("POST", "/v1/batch", body=json.dumps(body))
    r = c.getresponse()
    out = []
    while True:
        line = r.readline()
        if not line:
            break
        out.append((time.monotonic() - t0, json.loads(line)))
        if on_line:
            on_line(out[-1])
    c.close()
    return r, out


ADD_TASK = {"id": "s/add", "language": "python", "harness": "assert",
            "tests": [{"name": "a", "code": "assert add(1, 2) == 3"},
                      {"name": "b", "code": "assert add(2, 2) == 4"}]}

# Images a request may name are registered by the operator (a host path over HTTP is a 400):
# one with a python3 but no pytest module, one with nothing to run.
bare_img = os.path.join(TMP, "no-pytest")
os.makedirs(os.path.join(bare_img, "usr", "bin"), exist_ok=True)
open(os.path.join(bare_img, "usr", "bin", "python3"), "w").close()
empty_img = os.path.join(TMP, "empty-image")
os.makedirs(empty_img, exist_ok=True)
open(os.path.join(empty_img, "README"), "w").close()
s = Server("--slots", "2", "--image", "no-pytest=" + bare_img, "--image", "bare=" + empty_img)
st, j, text, _ = s.request("GET", "/healthz")
ok(st == 200 and j["status"] == "ok" and j["slots"] == 2, "GET /healthz", text)

# --- /v1/run ----------------------------------------------------------------------------
st, j, text, _ = s.post("/v1/run", {"command": ["/bin/sh", "-c", "cat in.txt; cat"],
                                    "stdin": "from stdin\n",
                                    "files": {"in.txt": "from file\n",
                                              "b.bin": {"base64": base64.b64encode(b"\0\1").decode()}}})
ok(st == 200 and j["status"] == "ok" and j["stdout"] == "from file\nfrom stdin\n",
   "/v1/run: a command with files and stdin", text)
st, j, text, _ = s.post("/v1/run", {"command": ["/bin/sh", "-c", "while :; do :; done"],
                                    "limits": {"cpu_time": 0.5, "wall_time": 5}})
ok(st == 200 and j["status"] == "timeout" and j["limit"] == "cpu", "/v1/run: limits apply", text)
st, j, text, _ = s.post("/v1/run", {"code": "print(6 * 7)", "language": "python"})
ok(st == 200 and j["stdout"] == "42\n" and j["compile"] is None, "/v1/run: python code", text)
st, j, text, _ = s.post("/v1/run", {"code": "int main(void) { return 3 }", "language": "c"})
ok(st == 200 and j["status"] == "runtime_error" and j["compile"]["status"] == "runtime_error"
   and "error" in j["compile"]["stderr"], "/v1/run: C that does not compile: the compiler's record", text)
st, j, text, _ = s.post("/v1/run", {"code": "#include <stdio.h>\nint main(void){puts(\"c\");return 0;}",
                                    "language": "c"})
ok(st == 200 and j["stdout"] == "c\n" and j["compile"]["status"] == "ok", "/v1/run: C compiled and run", text)

# --- /v1/verify -------------------------------------------------------------------------
st, j, text, _ = s.post("/v1/verify", {"task": ADD_TASK, "solution": "def add(a, b):\n    return a + b\n"})
ok(st == 200 and j["verdict"] == "accepted" and j["reward"] == 1.0, "/v1/verify: accepted", text)
st, j, text, _ = s.post("/v1/verify", {"task": ADD_TASK, "response": "```python\ndef add(a, b):\n    return a - b\n```",
                                       "reward": "fraction"})
ok(st == 200 and j["verdict"] == "wrong_answer" and j["passed"] == 0 and "python" in j["extracted"],
   "/v1/verify: a response, extracted and rejected", text)
bare = {"id": "s/bare", "language": "python", "harness": "assert", "image": "bare",
        "tests": [{"code": "pass"}]}
st, j, text, _ = s.post("/v1/verify", {"task": bare, "solution": "x = 1"})
ok(st == 200 and j["verdict"] == "infra_error" and j["reward"] is None,
   "/v1/verify: crucible's failure is infra_error with reward null, not 0", text)

# --- the solution's language ----------------------------------------------------------------
# A stdio task in python (as converted Code Jam and Kattis tasks are) and rollouts of it in
# other languages.
SUM_TASK = {"id": "s/sum", "language": "python", "harness": "stdio",
            "tests": [{"name": "a", "stdin": "1 2\n", "expected": "3\n"},
                      {"name": "b", "stdin": "-5 20\n", "expected": "15\n"}]}
SUM_PY = "a, b = map(int, input().split())\nprint(a + b)\n"
SUM_CPP = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n"
SUM_C = "#include <stdio.h>\nint main(void) { long a, b; scanf(\"%ld %ld\", &a, &b); printf(\"%ld\\n\", a + b); }\n"
st, j, text, _ = s.post("/v1/verify", {"task": SUM_TASK, "language": "cpp", "solution": SUM_CPP})
ok(st == 200 and j["verdict"] == "accepted" and j["language"] == "cpp" and j["compile"]["status"] == "ok",
   "/v1/verify with language cpp: a C++ solution of a python stdio task is compiled and accepted", text)
st, j, text, _ = s.post("/v1/verify", {"task": SUM_TASK, "language": "C++",
                                       "response": "```cpp\n" + SUM_CPP + "```\nOr:\n```python\nprint(0)\n```\n"})
ok(st == 200 and j["verdict"] == "accepted" and j["language"] == "cpp" and "cpp" in j["extracted"],
   "/v1/verify with language C++ and a response: the cpp block is taken, not the last (python) one", text)
st, j, text, _ = s.post("/v1/verify", {"task": ADD_TASK, "language": "cpp", "solution": SUM_CPP})
ok(st == 400 and j["error"]["code"] == "bad_request"
   and "assert task in python" in j["error"]["message"] and "not cpp" in j["error"]["message"],
   "/v1/verify: a language an assert task cannot take is a 400 saying why", text)
st, j, text, _ = s.post("/v1/verify", {"task": SUM_TASK, "language": "cobol", "solution": SUM_PY})
ok(st == 400 and "unknown language 'cobol' (known: python, c, cpp" in j["error"]["message"],
   "/v1/verify: an unknown language is a 400 listing the known ones", text)
st, j, text, _ = s.post("/v1/verify", {"task": SUM_TASK, "language": ["cpp"], "solution": SUM_PY})
ok(st == 400 and "'language' must be a string" in j["error"]["message"],
   "/v1/verify: a language that is not a string is a 400", text)
r, lines = batch_lines(s, {"items": [
    {"kind": "verify", "task": SUM_TASK, "solution": SUM_PY},
    {"kind": "verify", "task": SUM_TASK, "language": "cpp", "solution": SUM_CPP},
    {"kind": "verify", "task": SUM_TASK, "language": "c", "solution": SUM_C},
    {"kind": "verify", "task": ADD_TASK, "language": "python", "solution": "def add(a, b):\n    return a + b\n"}]})
got = sorted((l.get("index"), (l.get("result") or {}).get("language"), (l.get("result") or {}).get("verdict"))
             for t, l in lines)
ok(got == [(0, "python", "accepted"), (1, "cpp", "accepted"), (2, "c", "accepted"), (3, "python", "accepted")],
   "/v1/batch: verify items in Python, C++ and C for one stdio task, each run as its language", lines)
st, j, text, _ = s.post("/v1/batch", {"items": [
    {"kind": "verify", "task": SUM_TASK, "language": "cpp", "solution": SUM_CPP},
    {"kind": "verify", "task": ADD_TASK, "language": "cpp", "solution": SUM_CPP}]})
ok(st == 400 and j["error"]["message"].startswith("items[1]: task 's/add' is an assert task in python")
   and "not cpp" in j["error"]["message"],
   "/v1/batch: an item whose language its task cannot take fails the batch with a 400 naming it", text)
# ?check=1: parsed and answered, nothing run (a gateway checks a batch so before splitting it)
def runs_done():
    return sum(float(l.split()[-1]) for l in s.request("GET", "/metrics")[2].splitlines()
               if l.startswith("crucible_jobs_completed_total"))


before = runs_done()
st, j, text, _ = s.post("/v1/batch?check=1", {"items": [
    {"kind": "run", "command": ["/bin/echo", "x"]},
    {"kind": "verify", "task": SUM_TASK, "language": "cpp", "solution": SUM_CPP, "after": [0]}]})
ok(st == 200 and j == {"valid": True, "items": 2} and runs_done() == before,
   "/v1/batch?check=1: a valid batch answered {valid, items}, none of its items run", text)
st, j, text, _ = s.post("/v1/batch?check=1", {"items": [
    {"kind": "run", "command": ["/bin/echo", "x"]},
    {"kind": "run", "command": ["/bin/echo", "x"], "limits": {"memory_mb": 10 ** 6}}]})
ok(st == 400 and j["error"]["message"].startswith("items[1]: needs") and runs_done() == before,
   "/v1/batch?check=1: an item larger than a slot is the same 400 as the batch itself", text)
st, j, text, _ = s.post("/v1/batch", {"items": [
    {"kind": "verify", "task": SUM_TASK, "language": "klingon", "solution": SUM_PY}]})
ok(st == 400 and j["error"]["message"].startswith("items[0]: unknown language 'klingon' (known:"),
   "/v1/batch: an unknown language in an item is a 400 naming the item", text)

# --- /v1/batch ----------------------------------------------------------------------------
items = [{"kind": "run", "command": ["/bin/sleep", "1.5"]},
         {"kind": "verify", "task": ADD_TASK, "solution": "def add(a, b):\n    return a + b\n"},
         {"kind": "verify", "task": ADD_TASK, "solution": "def add(a, b):\n    return 0\n"},
         {"kind": "run", "command": ["/bin/echo", "after 1"], "after": [1]},
         {"kind": "run", "command": ["/bin/echo", "after 2"], "after": [2]},
         {"kind": "run", "command": ["/bin/echo", "after 4"], "after": [4]}]
r, lines = batch_lines(s, {"items": items})
got = {l["index"]: (t, l) for t, l in lines}
ok(r.status == 200 and r.getheader("Content-Type") == "application/x-ndjson"
   and sorted(got) == list(range(6)), "/v1/batch: one NDJSON line per item", lines)
ok(got[1][0] < got[0][0] - 0.5, "/v1/batch: lines stream as items finish (a fast item before the slow one)",
   [(round(t, 3), l["index"]) for t, l in lines])
ok(got[3][1]["result"]["stdout"] == "after 1\n", "/v1/batch: an item after an accepted one runs", got[3])
ok(got[4][1].get("skipped") and got[4][1]["error"]["code"] == "dependency_failed"
   and got[5][1].get("skipped"), "/v1/batch: a failed dependency skips its dependents, transitively",
   [got[4], got[5]])

# A client that goes away cancels what is left: the sleeps are killed at once.
c = s.conn()
c.request("POST", "/v1/batch", body=json.dumps({"items": [
    {"kind": "run", "command": ["/bin/echo", "first"]}] +
    [{"kind": "run", "command": ["/bin/sleep", "60"]} for _ in range(5)]}))
resp = c.getresponse()
first = json.loads(resp.readline())
c.sock.shutdown(socket.SHUT_RDWR)
c.close()
t0 = time.time()
while time.time() - t0 < 10:
    h = s.request("GET", "/healthz")[1]
    if h["running"] == 0 and h["queued"] == 0:
        break
    time.sleep(0.1)
ok(first["index"] == 0 and h["running"] == 0 and h["queued"] == 0 and time.time() - t0 < 10,
   "/v1/batch: a disconnect cancels running and queued items (%.2f s)" % (time.time() - t0), h)
metrics = s.request("GET", "/metrics")[2]
ok('crucible_jobs_completed_total{kind="run",status="cancelled"} 5' in metrics,
   "cancelled jobs are counted as cancelled, not as errors",
   [l for l in metrics.splitlines() if "completed" in l or "infra" in l])

# --- /run_code, as verl's sandbox_fusion reward sends it -----------------------------------
def run_code(code, language="python", **extra):
    body = {"code": code, "language": language, "compile_timeout": 10, "run_timeout": 10,
            "memory_limit_MB": 1024, "stdin": "", "files": {}, "fetch_files": []}
    body.update(extra)
    return s.post("/run_code", body)

st, j, text, _ = run_code("print(input())", stdin="echo\n")
ok(st == 200 and j["status"] == "Success" and j["run_result"]["stdout"] == "echo\n"
   and j["run_result"]["return_code"] == 0 and j["compile_result"] is None,
   "/run_code: Success, stdout and return_code as SandboxFusion", text)
st, j, text, _ = run_code("import sys\nsys.exit(3)")
ok(j["status"] == "Failed" and j["run_result"]["status"] == "Finished" and j["run_result"]["return_code"] == 3,
   "/run_code: a non-zero exit is Failed / Finished", text)
st, j, text, _ = run_code("while True: pass", run_timeout=0.5)
ok(j["status"] == "Failed" and j["run_result"]["status"] == "TimeLimitExceeded" and j["run_result"]["return_code"] is None,
   "/run_code: TimeLimitExceeded", text)
st, j, text, _ = run_code("#include <cstdio>\nint main() { std::puts(\"hi\") }", language="cpp")
ok(j["status"] == "Failed" and j["compile_result"]["status"] == "Finished"
   and j["compile_result"]["return_code"] != 0 and j["run_result"] is None,
   "/run_code: a compile error is Failed with the compile_result", text)
st, j, text, _ = run_code("console.log(require('fs').readFileSync('data.txt', 'utf8').trim().toUpperCase());"
                          "require('fs').writeFileSync('out.txt', 'written')", language="nodejs",
                          files={"data.txt": base64.b64encode(b"abc\n").decode()},
                          fetch_files=["out.txt", "missing.txt"])
ok(j["status"] == "Success" and j["run_result"]["stdout"] == "ABC\n"
   and base64.b64decode(j["files"]["out.txt"]) == b"written" and "missing.txt" not in j["files"],
   "/run_code: nodejs, files in (base64) and fetch_files out", text)

# --- SandboxFusion's pytest mode: the code is a file of tests that pytest runs ---------------
PYTEST_CODE = """import helper


def triple(x):
    return 3 * x


def test_triple():
    assert triple(2) == 6


class TestFixtures:
    def test_files_and_capture(self, tmp_path, capfd):
        note = tmp_path / "note.txt"
        note.write_text("kept")
        print(note.read_text(), helper.double(21))
        assert capfd.readouterr().out == "kept 42\\n"
"""
HELPER = {"helper.py": base64.b64encode(b"def double(x):\n    return 2 * x\n").decode()}
FUSION_KEYS = {"status", "message", "compile_result", "run_result", "executor_pod_name", "files"}
STEP_KEYS = {"status", "execution_time", "return_code", "stdout", "stderr"}
st, j, text, _ = run_code(PYTEST_CODE, language="pytest", files=HELPER)
ok(st == 200 and j["status"] == "Success" and j["compile_result"] is None
   and j["run_result"]["status"] == "Finished" and j["run_result"]["return_code"] == 0
   and "2 passed" in j["run_result"]["stdout"],
   "/run_code pytest: passing tests (fixtures, a module from files) are Success with pytest's report", text)
failing = PYTEST_CODE.replace("== 6", "== 7")
st, j, text, _ = run_code(failing, language="pytest", files=HELPER)
ok(st == 200 and set(j) == FUSION_KEYS and set(j["run_result"]) == STEP_KEYS and j["status"] == "Failed"
   and j["message"] == "" and j["compile_result"] is None and j["run_result"]["status"] == "Finished"
   and j["run_result"]["return_code"] == 1 and j["files"] == {},
   "/run_code pytest: a failing test is Failed / Finished / return_code 1, shaped as SandboxFusion answers", text)
out = j["run_result"]["stdout"] if st == 200 else ""
ok("1 failed, 1 passed" in out and "FAILED test_main.py::test_triple" in out and "assert 6 == 7" in out,
   "/run_code pytest: stdout is pytest's report (the failing test, its assertion, the tally)", out)
st, j, text, _ = run_code(failing, files=HELPER)
ok(st == 200 and j["status"] == "Success",
   "/run_code python: the same file only defines its tests (Success, as SandboxFusion's python)", text)
st, j, text, _ = run_code("x = 1\n", language="pytest")
ok(st == 200 and j["status"] == "Failed" and j["run_result"]["return_code"] == 5
   and "no tests ran" in j["run_result"]["stdout"],
   "/run_code pytest: a file without tests is Failed (pytest's exit status 5)", text)
st, j, text, _ = s.post("/v1/run", {"code": failing, "language": "pytest",
                                    "files": {"helper.py": "def double(x):\n    return 2 * x\n"}})
ok(st == 200 and j["status"] == "runtime_error" and j["exit_code"] == 1 and j["compile"] is None
   and "1 failed, 1 passed" in j["stdout"],
   "/v1/run with language pytest: pytest runs the tests; failing ones are runtime_error, exit_code 1", text)
st, j, text, _ = s.post("/v1/run", {"code": PYTEST_CODE, "language": "pytest",
                                    "files": {"helper.py": "def double(x):\n    return 2 * x\n"}})
ok(st == 200 and j["status"] == "ok" and j["exit_code"] == 0 and "2 passed" in j["stdout"],
   "/v1/run with language pytest: passing tests are ok", text)
# "no-pytest": an image with a python3 but no pytest module
st, j, text, _ = s.post("/v1/run", {"code": PYTEST_CODE, "language": "pytest", "image": "no-pytest"})
ok(st == 200 and j["status"] == "sandbox_error" and "python3-pytest" in j["message"],
   "/v1/run pytest in an image without pytest: sandbox_error naming the package (not a test failure)", text)
st, j, text, _ = s.post("/v1/verify", {"task": SUM_TASK, "language": "pytest", "solution": SUM_PY})
ok(st == 400 and "unknown language 'pytest'" in j["error"]["message"],
   "/v1/verify: pytest is a run mode, not a solution's language (400)", text)

# --- bad input: a clear 4xx each, the server stays up ----------------------------------------
bad = [("/v1/run", b"{", 400, "not valid JSON"), ("/v1/run", b"[1]", 400, "JSON object"),
       ("/v1/run", {"command": []}, 400, "command"), ("/v1/run", {"command": ["ls"], "limits": {"cpu_time": -1}}, 400, "cpu_time"),
       ("/v1/run", {"command": ["ls"], "limits": {"memory_mb": 10 ** 9}}, 400, "memory_mb"),
       ("/v1/run", {"command": ["ls"], "limits": {"gpus": 1}}, 400, "unknown limit"),
       ("/v1/run", {"command": ["ls"], "comand": 1}, 400, "unknown field 'comand'"),
       ("/v1/run", {"command": ["ls"], "files": {"/etc/passwd": "x"}}, 400, "files"),
       ("/v1/run", {"command": ["ls"], "files": {"a": {"base64": "!!"}}}, 400, "base64"),
       ("/v1/run", {"command": ["ls"], "image": "no-such-image"}, 400, "image"),
       ("/v1/run", {"code": "x", "language": "cobol"}, 400, "unknown language"),
       ("/v1/run", {"command": ["ls"], "priority": "urgent"}, 400, "priority"),
       ("/v1/run", {"command": ["ls"], "deadline_s": -1}, 400, "deadline_s"),
       ("/v1/verify", {"task": {"id": "x"}, "solution": ""}, 400, "task:"),
       ("/v1/verify", {"task": ADD_TASK}, 400, "solution"),
       ("/v1/verify", {"task": ADD_TASK, "solution": "", "repeats": 0}, 400, "repeats"),
       ("/v1/batch", {"items": [{"kind": "run", "command": ["ls"]}, {"kind": "dance"}]}, 400, "items[1]"),
       ("/v1/batch", {"items": [{"kind": "run", "command": ["ls"], "after": [0]}]}, 400, "earlier item"),
       ("/run_code", {"code": "x", "language": "python", "run_timeout": "ten"}, 400, "run_timeout"),
       ("/run_code", {"code": "x", "language": "python", "files": {"../x": "YQ=="}}, 400, "files")]
bad_ok = []
for path, body, want, needle in bad:
    st, j, text, _ = s.post(path, body)
    good = st == want and j and needle in j["error"]["message"] and j["error"]["code"] == "bad_request"
    bad_ok.append(good or (path, body, st, text))
ok(all(x is True for x in bad_ok), "bad input: %d malformed requests, each a 400 naming the problem" % len(bad),
   [x for x in bad_ok if x is not True])
st, j, text, _ = s.request("GET", "/v1/nothing")
ok(st == 404 and j["error"]["code"] == "not_found", "unknown route: 404", text)
st, j, text, _ = s.request("GET", "/v1/run")
ok(st == 405 and j["error"]["code"] == "method_not_allowed", "wrong method: 405", text)
st, j, text, _ = s.request("GET", "/healthz")
ok(st == 200, "the server is still up after the bad input")

# --- metrics ------------------------------------------------------------------------------
metrics = s.request("GET", "/metrics")[2]
names = ["crucible_queue_depth{priority=\"normal\"}", "crucible_jobs_running", "crucible_slots",
         "crucible_jobs_completed_total{kind=\"verify\",status=\"accepted\"}",
         "crucible_queue_wait_seconds_bucket", "crucible_run_seconds_bucket", "crucible_job_seconds_count",
         "crucible_http_requests_total{route=\"/v1/run\",code=\"400\"}", "crucible_infra_errors_total"]
# crucible's own names are prefixed crucible_; the process_* families are the client libraries'
# standard ones (94-http-conventions.t checks them).
ok(all(x in metrics for x in names)
   and all(l.startswith(("#", "crucible_", "process_")) for l in metrics.splitlines()),
   "/metrics: Prometheus text, every name prefixed crucible_ (or process_)",
   [x for x in names if x not in metrics])
hits = [float(l.split()[1]) for l in metrics.splitlines() if l.startswith("crucible_pool_hits_total")]
ok(hits and hits[0] > 0 and "crucible_pool_ready" in metrics,
   "warm pool: jobs took ready sandboxes (%s hits)" % (hits[0] if hits else "no"))
# Stop with work in flight: a streaming batch and a single request, both mid-job.
def quietly(fn, *args):
    try:
        fn(*args)
    except Exception:
        pass
inflight = [threading.Thread(target=quietly, args=(batch_lines, s, {"items": [
                {"kind": "run", "command": ["/bin/sleep", "37.5"]}]})),
            threading.Thread(target=quietly, args=(s.post, "/v1/run",
                                                   {"command": ["/bin/sleep", "37.5"]}))]
for t in inflight:
    t.start()
time.sleep(0.7)
t0 = time.time()
rc = s.stop()
for t in inflight:
    t.join(10)
left = subprocess.run(["pgrep", "-f", "sleep 37.5"], capture_output=True, text=True).stdout.split()
ok(rc == 0 and time.time() - t0 < 10 and not left,
   "SIGTERM with jobs in flight: clean exit %s in %.2f s, their sandboxes gone" % (rc, time.time() - t0), left)
s.log.seek(0)
log_lines = [json.loads(l) for l in s.log.read().splitlines() if l.startswith("{")]
events = [l["event"] for l in log_lines]
ok(events and events[0] == "listening" and "stopping" in events and "answer" in events
   and "batch_cancelled" in events and all("ts" in l for l in log_lines),
   "logs: one JSON object per event (listening, answers, cancelled batches, stopping)", events[-5:])

# --- scheduling: priorities, deadlines, overload --------------------------------------------
s = Server("--slots", "1", "--queue", "4", "--quiet")
order = []
def submit(prio, tag, delay):
    time.sleep(delay)
    st, j, text, _ = s.post("/v1/run", {"command": ["/bin/echo", tag], "priority": prio})
    order.append(tag)
blocker = threading.Thread(target=lambda: s.post("/v1/run", {"command": ["/bin/sleep", "1"]}))
blocker.start()
ts = [threading.Thread(target=submit, args=("low", "low", 0.2)),
      threading.Thread(target=submit, args=("high", "high", 0.4))]
for t in ts:
    t.start()
for t in ts + [blocker]:
    t.join()
ok(order == ["high", "low"], "priority: a high job queued later starts before a low one", order)

results = {}
def timed(tag, body):
    results[tag] = s.post("/v1/run", body)
a = threading.Thread(target=timed, args=("slow", {"command": ["/bin/sleep", "1"]}))
a.start()
time.sleep(0.2)
b = threading.Thread(target=timed, args=("late", {"command": ["/bin/true"], "deadline_s": 0.3}))
b.start()
a.join()
b.join()
st, j, text, _ = results["late"]
ok(st == 200 and j["status"] == "sandbox_error" and "deadline" in j["message"],
   "deadline_s: a job not started in time ends as sandbox_error saying so", text)

# Bounded load: 10x more concurrent requests than slots+queue; every one 200 or 429.
codes = []
lock = threading.Lock()
rss0 = s.rss_kb()
def hammer():
    st, j, text, r = s.post("/v1/run", {"command": ["/bin/sleep", "0.2"]})
    with lock:
        codes.append((st, r.getheader("Retry-After"), j.get("status") if st == 200 else j["error"]["code"]))
threads = [threading.Thread(target=hammer) for _ in range(50)]
for t in threads:
    t.start()
for t in threads:
    t.join()
statuses = {c[0] for c in codes}
ok(len(codes) == 50 and statuses <= {200, 429} and 429 in statuses and 200 in statuses,
   "load: 50 concurrent requests on 1 slot + 4 queue places: each 200 or 429",
   sorted(set(codes)))
ok(all(c[2] == "ok" for c in codes if c[0] == 200) and all(c[1] == "1" and c[2] == "overloaded" for c in codes if c[0] == 429),
   "load: admitted requests all ran to ok; 429s carry Retry-After", sorted(set(codes)))
for _ in range(3):
    threads = [threading.Thread(target=hammer) for _ in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
rss1 = s.rss_kb()
ok(s.request("GET", "/healthz")[0] == 200 and rss1 - rss0 < 20000,
   "load: server up, memory bounded (RSS %d -> %d kB over 200 requests)" % (rss0, rss1))
s.stop()

# --- a verification reserves the memory of the solution's compile step -----------------------
# C++'s compile step takes 2048 MB; this server runs jobs of at most 1024 MB.
s = Server("--slots", "1", "--memory", "1024", "--warm", "0", "--quiet")
CPP_SUM_TASK = dict(SUM_TASK, id="s/sum-cpp", language="cpp", limits={"memory_mb": 256})
st, j, text, _ = s.post("/v1/verify", {"task": CPP_SUM_TASK, "language": "python", "solution": SUM_PY})
ok(st == 200 and j["verdict"] == "accepted" and j["language"] == "python",
   "memory: a Python solution of a C++ task reserves Python's memory (fits under --memory 1024)", text)
# 2048 MB, plus 26 MB for the compile record it answers with (2 streams x 1 MiB x 13).
st, j, text, _ = s.post("/v1/verify", {"task": CPP_SUM_TASK, "solution": SUM_CPP})
ok(st == 400 and "needs 2074 MB" in j["error"]["message"],
   "memory: a C++ solution reserves C++'s compile memory (2048 MB: a 400 here)", text)
st, j, text, _ = s.post("/v1/verify", {"task": dict(SUM_TASK, limits={"memory_mb": 256}),
                                       "language": "cpp", "solution": SUM_CPP})
ok(st == 400 and "needs 2074 MB" in j["error"]["message"],
   "memory: a C++ solution of a Python task reserves C++'s compile memory too", text)
relative = dict(CPP_SUM_TASK, time_limit={"factor": 3, "min": 1},
                reference="#include <cstdio>\nint main() { long a, b; std::scanf(\"%ld %ld\", &a, &b); "
                          "std::printf(\"%ld\\n\", a + b); }\n")
st, j, text, _ = s.post("/v1/verify", {"task": relative, "language": "python", "solution": SUM_PY})
ok(st == 400 and "needs 2048 MB" in j["error"]["message"],
   "memory: a Python solution of a C++ task whose relative time limit compiles the C++ reference "
   "first reserves C++'s compile memory", text)
s.stop()

# An interactor runs beside the solution (Kattis validation memory, 1024 MB): an interactive
# task with a 256 MB solution needs 1280 MB at once; an output validator runs after the
# solution, so 1024 MB is enough for it.
s = Server("--slots", "1", "--memory", "1200", "--warm", "0", "--quiet")
PY_PROG = {"language": "python", "code": "import sys\nsys.exit(42)\n"}
inter = {"id": "s/inter", "language": "python", "harness": "interactive", "interactor": PY_PROG,
         "tests": [{"name": "t", "stdin": "", "expected": ""}], "limits": {"memory_mb": 256}}
st, j, text, _ = s.post("/v1/verify", {"task": inter, "solution": "print(1)\n"})
ok(st == 400 and "needs 1280 MB" in j["error"]["message"],
   "memory: an interactive task reserves the solution's memory plus the interactor's", text)
valid = {"id": "s/valid", "language": "python", "harness": "stdio",
         "checker": dict(PY_PROG, type="validator"),
         "tests": [{"name": "t", "stdin": "", "expected": ""}], "limits": {"memory_mb": 256}}
st, j, text, _ = s.post("/v1/verify", {"task": valid, "solution": "print(1)\n"})
ok(st == 200 and j["verdict"] == "accepted",
   "memory: an output validator runs after the solution: 1024 MB fit under --memory 1200", text)
s.stop()

# --- bearer token ---------------------------------------------------------------------------
tok = os.path.join(TMP, "token")
with open(tok, "w") as f:
    f.write("s3cret-token\n")
s = Server("--slots", "1", "--quiet", "--token-file", tok)
st, j, text, _ = s.post("/v1/run", {"command": ["/bin/true"]})
ok(st == 401 and j["error"]["code"] == "unauthorized", "token: no Authorization header is 401", text)
st, j, text, _ = s.post("/v1/run", {"command": ["/bin/true"]}, headers={"Authorization": "Bearer s3cret-tokex"})
ok(st == 401, "token: a wrong token is 401")
st, j, text, _ = s.post("/v1/run", {"command": ["/bin/true"]}, headers={"Authorization": "Bearer s3cret-token"})
ok(st == 200 and j["status"] == "ok", "token: the right token runs", text)
ok(s.request("GET", "/healthz")[0] == 200, "token: /healthz stays open for probes")
p = subprocess.run([CRUCIBLE, "serve", "--quiet", "--listen", "127.0.0.1:%d" % s.port],
                   capture_output=True, text=True, timeout=10)
ok(p.returncode == 2 and "already in use" in p.stderr,
   "a second server on a port in use fails instead of sharing it", p.stderr)
s.stop()

# --- bad command lines ------------------------------------------------------------------------
bad_cli = [["--listen", "nohost"], ["--slots", "0"], ["--queue", "x"], ["--token-file", "/nonexistent"],
           ["--listen", "999.1.1.1:80"], ["extra"]]
msgs = []
for args in bad_cli:
    p = subprocess.run([CRUCIBLE, "serve"] + args, capture_output=True, text=True, timeout=10)
    msgs.append((p.returncode, p.stderr.strip()))
ok(all(rc == 2 and err.startswith("crucible serve:") and err.count("\n") == 0 for rc, err in msgs),
   "bad command lines: exit 2 with one line naming the problem", msgs)

done()
