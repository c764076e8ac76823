#!/usr/bin/python3
# /run_code under a trainer's load: 64 concurrent clients that behave exactly like verl's
# SandboxFusion client, a quarter of them infinite loops, against `crucible serve` with its
# default options (one slot per CPU, the default queue). Every correct solution must be scored
# correct the way verl scores it: a request the server cannot start in time is answered 504
# (which verl retries) before the client's own timeout, never 429 and never a client timeout.
#
# The client below follows verl's call shape: volcengine/verl commit b178a3cd56f5 (2026-01-29),
# verl/utils/reward_score/sandbox_fusion/utils.py, call_sandbox_api() and
# _process_single_case(): the same payload fields, timeout = compile_timeout + run_timeout +
# API_TIMEOUT (10), MAX_RETRIES 3 retrying HTTP 504 only with a linear delay of 1 s, 2 s,
# every other HTTP error or exception scored -1, and "Success" with run_result "Finished" and
# matching stdout scored True. (Written for this test; not verl's code.) verl posts with
# requests.post(..., timeout=request_timeout): a connect and a read timeout of that many
# seconds each; http.client's socket timeout below is the same bound (the server sends nothing
# before its answer), so the test needs no third-party package.
import http.client
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import CRUCIBLE, done, ok  # noqa: E402



class RequestException(Exception):
    """What requests raises for a timeout or a refused or reset connection."""


def post(url, headers, data, timeout):
    """requests.post(url, headers=, data=, timeout=) reduced to (status, body)."""
    hostport, path = url[len("http://"):].split("/", 1)
    host, port = hostport.split(":")
    try:
        c = http.client.HTTPConnection(host, int(port), timeout=timeout)
        c.request("POST", "/" + path, body=data, headers=headers)
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, body
    except OSError as e:  # socket.timeout is an OSError
        raise RequestException("%s: %s" % (type(e).__name__, e))

CLIENTS = 64          # verl's default sandbox_fusion.max_concurrent
TIMEOUT = 2           # verl's per-case `timeout`: both compile_timeout and run_timeout
API_TIMEOUT = 10
MAX_RETRIES = 3
INITIAL_RETRY_DELAY = 1

CORRECT = "import sys\na, b = map(int, sys.stdin.read().split())\nprint(a + b)\n"
LOOP = "while True:\n    pass\n"


def call_sandbox_api(url, code, stdin, compile_timeout, run_timeout, memory_limit_mb, language):
    """verl's call_sandbox_api: (json, None) or (None, error); retries 504 only."""
    payload = json.dumps({"compile_timeout": compile_timeout, "run_timeout": run_timeout,
                          "code": code, "stdin": stdin, "memory_limit_MB": memory_limit_mb,
                          "language": language, "files": {}, "fetch_files": []})
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    request_timeout = compile_timeout + run_timeout + API_TIMEOUT
    last_error, statuses = None, []
    for attempt in range(MAX_RETRIES):
        try:
            status, body = post(url, headers=headers, data=payload, timeout=request_timeout)
            statuses.append(status)
            if status == 504:
                last_error = "Gateway Timeout (504) on attempt %d" % (attempt + 1)
                if attempt < MAX_RETRIES - 1:
                    time.sleep(INITIAL_RETRY_DELAY * (attempt + 1))
                continue
            if status >= 400:  # response.raise_for_status()
                raise RequestException("HTTP %d: %s" % (status, body[:200]))
            return json.loads(body), None, statuses
        except RequestException as e:
            if not statuses or statuses[-1] < 400:
                statuses.append(str(e).split(":")[0])
            last_error = "API Request Error: %s" % e
            break
        except ValueError as e:
            last_error = "API Response JSON Decode Error: %s" % e
            break
    return None, last_error or "API Call Failed after retries", statuses


def score(api_response, error_msg, expected):
    """verl's _process_single_case verdicts: True, False, -1 api/sandbox, -2 runtime, -3 timeout."""
    if error_msg:
        return -1
    if not api_response:
        return -1
    status = api_response.get("status")
    run = api_response.get("run_result")
    if status == "SandboxError":
        return -1
    if status == "Failed":
        if run and run.get("status") == "TimeLimitExceeded":
            return -3
        if run and (run.get("status") == "Error" or
                    (run.get("status") == "Finished" and run.get("return_code") != 0)):
            return -2
        return -1
    if status == "Success":
        if run and run.get("status") == "Finished":
            out = run.get("stdout") if run.get("stdout") is not None else ""
            return str(out).rstrip("\n") == str(expected).rstrip("\n")
        return -1
    return -1


tmp = tmpdir("crucible-runcode-load-")
server = Server(tmp=tmp, quiet=False, settle=0.1)
url = "http://127.0.0.1:%d/run_code" % server.port

results = [None] * CLIENTS
barrier = threading.Barrier(CLIENTS)


def client(i):
    loop = i % 4 == 3  # a quarter of the clients: infinite loops
    a, b = i, 1000 + i
    barrier.wait()
    t0 = time.monotonic()
    resp, err, statuses = call_sandbox_api(url, LOOP if loop else CORRECT, "%d %d\n" % (a, b),
                                           TIMEOUT, TIMEOUT, 1024, "python")
    results[i] = (loop, score(resp, err, str(a + b)), err, statuses, time.monotonic() - t0)


t_start = time.monotonic()
threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
wall = time.monotonic() - t_start

correct = [r for r in results if not r[0]]
loops = [r for r in results if r[0]]
bad = [(i, r) for i, r in enumerate(results) if not r[0] and r[1] is not True]
ok(not bad, "every correct solution of %d verl clients is scored correct (%.1f s)" % (CLIENTS, wall),
   "\n".join("client %d: score %r after %.1f s, statuses %r, %s" % (i, r[1], r[4], r[3], r[2])
             for i, r in bad[:20]))
ok(all(r[1] == -3 for r in loops), "every infinite loop is scored a timeout (-3), not an API error",
   [(r[1], r[3], r[2]) for r in loops if r[1] != -3][:10])
statuses = [s for r in results for s in r[3]]
ok(429 not in statuses and all(isinstance(s, int) for s in statuses),
   "no 429 and no client-side timeout (%d requests, %d answered 504)"
   % (len(statuses), statuses.count(504)), sorted(set(map(str, statuses))))
ok(len(correct) == 48, "48 correct solutions, 16 loops")
server.stop()

# --- a full queue waits (no 429); a client that left holds nothing -----------------------
# One slot, a queue of one: an infinite loop holds the slot for 3 s while six clients queue
# behind it (past --queue) and give up after half a second; then one more client asks.
server = Server("--slots", "1", "--queue", "1", tmp=tmp, quiet=False, settle=0.1)
url = "http://127.0.0.1:%d/run_code" % server.port


def run_code(code, run_timeout, timeout):
    body = json.dumps({"code": code, "language": "python", "stdin": "2 3\n",
                       "run_timeout": run_timeout, "compile_timeout": 1})
    try:
        st, text = post(url, {"Content-Type": "application/json"}, body, timeout)
        return st, json.loads(text) if st == 200 else text
    except RequestException as e:
        return str(e).split(":")[0], None


holder = {}
th = threading.Thread(target=lambda: holder.update(r=run_code(LOOP, 3, 30)))
th.start()
time.sleep(0.5)
left = [None] * 6
lt = [threading.Thread(target=lambda k=k: left.__setitem__(k, run_code(CORRECT, 1, 0.5)))
      for k in range(6)]
for t in lt:
    t.start()
for t in lt:
    t.join()
ok(all(r[0] == "TimeoutError" for r in left),
   "six clients past --queue 1 wait (no 429) until they give up", left)
st, j = run_code(CORRECT, 5, 30)
th.join()
ok(st == 200 and j["status"] == "Success" and j["run_result"]["stdout"] == "5\n",
   "the next client is answered once the loop ends", (st, j))
ok(holder["r"][0] == 200 and holder["r"][1]["run_result"]["status"] == "TimeLimitExceeded",
   "the loop ran to its time limit", holder)
text = server.request("GET", "/metrics", timeout=10)[2]
cancelled = [l for l in text.splitlines()
             if l.startswith("crucible_jobs_completed_total") and 'kind="run_code"' in l
             and 'status="cancelled"' in l]
ran = [l for l in text.splitlines()
       if l.startswith("crucible_run_seconds_count") and 'kind="run_code"' in l]
ok(len(cancelled) == 1 and cancelled[0].endswith(" 6") and len(ran) == 1 and ran[0].endswith(" 2"),
   "the six that left were cancelled in the queue and never ran (2 jobs ran)",
   "\n".join(cancelled + ran))
server.stop()

# --- the option: validated, listed ---------------------------------------------------------
for bad in ("2", "-1", "3601", "ten"):
    r = subprocess.run([CRUCIBLE, "serve", "--run-code-margin", bad], capture_output=True,
                       text=True, timeout=30)
    ok(r.returncode == 2 and "--run-code-margin" in r.stderr and bad in r.stderr,
       "--run-code-margin %s: exit 2 naming the option and the value" % bad, r.stderr)
r = subprocess.run([CRUCIBLE, "serve", "--help"], capture_output=True, text=True, timeout=30)
ok("--run-code-margin S" in r.stdout + r.stderr, "serve --help lists --run-code-margin")
done()
