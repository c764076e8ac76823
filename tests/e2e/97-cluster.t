#!/usr/bin/python3
# Cluster mode (docs/CLUSTER.md): a real redis-server on loopback, a gateway (`crucible serve
# --broker`) and workers (`crucible worker`), all started here. What a user must be able to
# count on:
#   - answers through the gateway are the single node's answers (/v1/run, /run_code, a 400);
#   - 1,000 jobs with a worker killed by SIGKILL in the middle: every one answered once, with
#     its own output, none lost;
#   - the broker killed and restarted (empty: no persistence) in the middle of a batch: the
#     batch completes;
#   - a job whose workers keep dying lands in crucible:dead and is answered as an
#     infrastructure failure;
#   - no worker, or no broker: 503 with Retry-After, never a hang;
#   - a worker drained with SIGTERM answers the job it holds and exits 0;
#   - a verification by task_id through a gateway with --db: verdict recorded in its library;
#   - sessions through the gateway live on one worker (state kept between requests, files,
#     fork, delete); a session whose worker died answers 410, whether asked before or after;
#   - a gateway SIGKILLed mid-batch and started again: clients that resend with their
#     Idempotency-Key get every job's answer, and no job runs twice.
# Skipped, saying so, when redis-server is not installed (scripts/install-deps installs it).
import concurrent.futures
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import CRUCIBLE, done, ok, skip, track  # noqa: E402

REDIS = shutil.which("redis-server")
if not REDIS:
    print("1..0 # SKIP redis-server is not installed (scripts/install-deps installs it)")
    sys.exit(0)

TMP = tmpdir("crucible-cluster-")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


RPORT = free_port()
BROKER = "redis://127.0.0.1:%d" % RPORT


def start_redis():
    p = track(subprocess.Popen([REDIS, "--port", str(RPORT), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", TMP],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", RPORT), timeout=1).close()
            return p
        except OSError:
            time.sleep(0.05)
    print("Bail out! redis-server did not start on port %d" % RPORT)
    sys.exit(255)


def redis(*args):
    """One command through redis-cli; its output, stripped."""
    r = subprocess.run(["redis-cli", "-p", str(RPORT)] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=10)
    return r.stdout.strip()


WORKER_LOGS = []


def start_worker(*extra, serve=()):
    log = open(os.path.join(TMP, "worker-%d.log" % len(WORKER_LOGS)), "w+")
    WORKER_LOGS.append(log)
    return track(subprocess.Popen([CRUCIBLE, "worker", "--broker", BROKER, "--slots", "1",
                                   "--claim-idle", "1.5", "--heartbeat", "0.5",
                                   "--max-attempts", "2"] + list(extra) +
                                  ["--", "--quiet", "--warm", "1"] + list(serve),
                                  stdout=subprocess.DEVNULL, stderr=log))


def wait_for(cond, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.1)
    return cond()


def health(gw):
    st, j, _ = gw.request("GET", "/healthz")
    return j if st == 200 else {}


def run_echo(gw, n, sleep="0.02"):
    """/v1/run of a command that prints n, as a well-behaved client sends it (a 503 is
    retried after its Retry-After, up to 30 times): (status, stdout or the answer's text)."""
    body = {"command": ["/bin/sh", "-c", "sleep %s; echo %d" % (sleep, n)]}
    last = None
    for _ in range(30):
        try:
            r, data = gw.exchange("POST", "/v1/run", body, timeout=120)
        except OSError as e:
            last = (None, str(e))
            time.sleep(0.2)
            continue
        text = data.decode(errors="replace")
        if r.status == 503 and r.getheader("Retry-After"):
            RETRIED.append(n)
            last = (503, text)
            time.sleep(float(r.getheader("Retry-After")))
            continue
        try:
            return r.status, json.loads(text).get("stdout", text)
        except ValueError:
            return r.status, text
    return last


RETRIED = []


def children(pid):
    """The pids of pid's children (its node, `crucible serve`)."""
    out = []
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


redis_p = start_redis()
gw = Server("--broker", BROKER, "--queue", "5000", tmp=TMP)

# ---- no worker yet: 503, not a hang -------------------------------------------------
ok(wait_for(lambda: health(gw).get("broker") is True, 10),
   "the gateway reaches the broker (/healthz broker: true)", health(gw))
r, body = gw.exchange("POST", "/v1/run", {"command": ["/bin/true"]})
ok(r.status == 503 and r.getheader("Retry-After") and b"no_workers" in body,
   "with no worker alive a job request is answered 503 no_workers with Retry-After",
   (r.status, body))

workers = [start_worker() for _ in range(3)]
ok(wait_for(lambda: health(gw).get("workers") == 3, 60), "three workers heartbeat",
   health(gw))

st, j, text = gw.request("GET", "/v1/stats")[:3]
series = lambda name: (j or {}).get("metrics", {}).get(name, {}).get("series", [])  # noqa: E731
ok(st == 200 and j.get("role") == "gateway" and
   [x["value"] for x in series("crucible_cluster_workers")] == [3] and
   {x["labels"].get("priority") for x in series("crucible_cluster_stream_depth")} ==
   {"high", "normal", "low"},
   "the dashboard's GET /v1/stats on a gateway: role gateway, the cluster's workers and streams",
   text[:1500])
st, _, page = gw.request("GET", "/")[:3]
ok(st == 200 and "/ui/app.js" in page, "... and the gateway serves the dashboard's page")

# ---- the single node's answers ------------------------------------------------------
single = Server(tmp=TMP)
for path, req in [("/v1/run", {"command": ["/bin/sh", "-c", "echo out; echo err >&2; exit 3"]}),
                  ("/run_code", {"code": "print(6*7)", "language": "python"}),
                  ("/v1/run", {"code": "import sys; print(sys.argv)", "language": "python"}),
                  ("/v1/run", {"command": ["/bin/true"], "limits": {"wall_time": -1}}),
                  ("/v1/run", {"cmd": ["/bin/true"]})]:
    s1, j1, t1 = single.post(path, req)
    s2, j2, t2 = gw.post(path, req)
    keep = ("status", "exit_code", "stdout", "stderr", "compile_result", "message", "error")

    def strip(j):
        if not isinstance(j, dict):
            return j
        out = {k: v for k, v in j.items() if k in keep}
        rr = j.get("run_result")
        if isinstance(rr, dict):
            out["run_result"] = {k: rr.get(k) for k in ("status", "return_code", "stdout")}
        return out
    ok(s1 == s2 and strip(j1) == strip(j2),
       "%s %s: the gateway answers as a single node does (%d)" % (path, json.dumps(req)[:60], s2),
       (s1, t1[:300], s2, t2[:300]))
single.stop()

# ---- an entry acknowledged but left in its stream is swept ----------------------------
# Made atomically (one script: added, delivered to a consumer of the workers' group, then
# acknowledged) so that no worker reads it first: done, yet still in crucible:jobs:low.
left = redis("EVAL", "local id = redis.call('XADD', KEYS[1], '*', 'probe', '1'); "
             "redis.call('XREADGROUP', 'GROUP', 'crucible-workers', 'probe', 'COUNT', '1', "
             "'STREAMS', KEYS[1], '>'); redis.call('XACK', KEYS[1], 'crucible-workers', id); "
             "return id", "1", "crucible:jobs:low")
ok(wait_for(lambda: redis("XLEN", "crucible:jobs:low") == "0", 15),
   "an entry acknowledged but left in its stream is deleted by a worker's sweep",
   (left, redis("XRANGE", "crucible:jobs:low", "-", "+")))
for lg in WORKER_LOGS:
    lg.flush()
ok(any("deleted 1 acknowledged entry left in crucible:jobs:low" in
       open(lg.name).read() for lg in WORKER_LOGS), "... and the worker says so in its log")

# ---- the Python client, unchanged, against the gateway -------------------------------
sys.path.insert(0, os.path.join(os.path.dirname(CRUCIBLE), "..", "clients", "python"))
from crucible_client import Client, run_item, verify_item  # noqa: E402

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "tasks.jsonl")) as f:
    TASK = json.loads(f.readline())  # demo/py-add, an assert task
cl = Client("http://127.0.0.1:%d" % gw.port, timeout=60)
res = cl.verify(task=TASK, solution=TASK["reference"])
ok(res.get("verdict") == "accepted" and res.get("reward") == 1.0,
   "Client.verify through the gateway: the reference is accepted", res)
res = cl.verify(task=TASK, solution="def add(a, b):\n    return a - b\n")
ok(res.get("verdict") == "wrong_answer" and res.get("reward") == 0.0,
   "Client.verify through the gateway: a wrong solution is wrong_answer", res)
lines = sorted(cl.batch([run_item(["/bin/echo", "a"]), verify_item(TASK, solution=TASK["reference"]),
                         run_item(["/bin/echo", "c"], after=[0])]), key=lambda x: x["index"])
got = [x.get("result", {}).get("stdout", x.get("result", {}).get("verdict")) for x in lines]
ok(got == ["a\n", "accepted", "c\n"],
   "Client.batch through the gateway: three items, one after another, answered", lines)
rc = cl.run_code(code="print(sum(range(10)))", language="python")
ok(rc.get("status") == "Success" and rc.get("run_result", {}).get("stdout") == "45\n",
   "Client.run_code (SandboxFusion's route, verl's path) through the gateway", rc)

# ---- a verification by task_id: the gateway's library, the workers' sandboxes -----------
LIB = os.path.join(TMP, "lib.db")
TASKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                     "tasks.jsonl")
subprocess.run([CRUCIBLE, "tasks", "import", "--db", LIB, TASKS], capture_output=True, check=True)
gwdb = Server("--broker", BROKER, "--db", LIB, tmp=TMP)
wait_for(lambda: health(gwdb).get("workers") == 3, 20)
st, j, text = gwdb.post("/v1/verify", {"task_id": TASK["id"], "solution": TASK["reference"],
                                       "model": "step-1"})
st2, j2, _ = gwdb.post("/v1/verify", {"task_id": TASK["id"], "model": "step-1",
                                      "solution": "def add(a, b):\n    return a - b\n"})
ok(st == 200 and j.get("verdict") == "accepted" and j.get("recorded") is True and
   j.get("model") == "step-1" and st2 == 200 and j2.get("verdict") == "wrong_answer",
   "POST /v1/verify with task_id and model through a gateway with --db: the task sent to a "
   "worker, the verdict recorded", (st, text[:300]))
st, row, text = gwdb.request("GET", "/v1/tasks/%s?model=step-1" % TASK["id"])
st0, row0, _ = gwdb.request("GET", "/v1/tasks/%s?model=step-0" % TASK["id"])
ok(st == 200 and row.get("attempts") == 2 and row.get("accepted") == 1 and
   row0.get("attempts") == 0,
   "the library counts both attempts of step-1 (one accepted)", (st, text[:400]))
st, j, text = gwdb.post("/v1/verify", {"task_id": "no/such-task", "solution": "x"})
ok(st == 404 and "no/such-task" in text, "an unknown task_id through the gateway: 404",
   (st, text[:200]))
st, j, text = gw.post("/v1/verify", {"task_id": TASK["id"], "solution": "x"})
ok(st == 400 and "--db" in text,
   "a gateway without --db answers a task_id 400, saying to start it with --db or send the task",
   (st, text[:200]))
r, data = gwdb.exchange("POST", "/v1/batch", {"items": [
    {"kind": "verify", "task_id": TASK["id"], "solution": TASK["reference"], "model": "step-2"},
    {"kind": "verify", "task_id": TASK["id"], "solution": "def add(a, b):\n    return 0\n",
     "model": "step-2", "after": [0]}]}, timeout=120)
blines = sorted((json.loads(x) for x in data.splitlines() if x.strip()), key=lambda x: x["index"])
st, row, text = gwdb.request("GET", "/v1/tasks/%s?model=step-2" % TASK["id"])
ok(r.status == 200 and [x.get("result", {}).get("verdict") for x in blines] ==
   ["accepted", "wrong_answer"] and all(x["result"].get("recorded") for x in blines) and
   row.get("attempts") == 2 and row.get("accepted") == 1,
   "a batch of verifications by task_id through the gateway: each inlined, run, and recorded",
   (blines, text[:300]))
st, text = r.status, data
r, data = gwdb.exchange("POST", "/v1/batch", {"items": [
    {"kind": "verify", "task_id": TASK["id"], "solution": "x"},
    {"kind": "verify", "task_id": "no/such-task", "solution": "x"}]})
ok(r.status == 404 and b"items[1]" in data and b"no/such-task" in data,
   "a batch item naming an unknown task_id: 404 naming the item", (r.status, data[:300]))
gwdb.stop()

# ---- sessions, pinned to the worker that holds them ------------------------------------
from crucible_client import Session  # noqa: E402


def worker_pid(name):
    return int(name.rsplit("-", 1)[1])


st, info, text = gw.request("POST", "/v1/sessions", {})
sid = (info or {}).get("id", "")
owner = redis("GET", "crucible:session:" + sid) if sid else ""
ok(st == 201 and owner and worker_pid(owner) in [w.pid for w in workers],
   "POST /v1/sessions through the gateway: 201, the session pinned to one of the workers",
   (st, text[:300], owner))
outs = []
for cmd in ("echo one > f", "echo two >> f", "cat f"):
    st, j, text = gw.request("POST", "/v1/sessions/%s/exec" % sid,
                             {"command": ["/bin/sh", "-c", cmd]})
    outs.append((st, (j or {}).get("stdout")))
ok(outs == [(200, ""), (200, ""), (200, "one\ntwo\n")],
   "three execs through the gateway ran in the same session (its files kept between them)",
   outs)
r, data = gw.exchange("PUT", "/v1/sessions/%s/files?path=/work/b.bin" % sid, b"\x00\x01bin",
                      headers={"Content-Type": "application/octet-stream"})
r2, back = gw.exchange("GET", "/v1/sessions/%s/files?path=/work/b.bin" % sid)
ok(r.status == 200 and r2.status == 200 and back == b"\x00\x01bin",
   "a file uploaded through the gateway (a query, a binary body) reads back the same",
   (r.status, data[:200], r2.status, back[:50]))
st, lst, _ = gw.request("GET", "/v1/sessions")
ok(st == 200 and {"id": sid, "worker": owner, "alive": True} in (lst or {}).get("sessions", []),
   "GET /v1/sessions through the gateway lists it with its worker", lst)
cs = Session(Client("http://127.0.0.1:%d" % gw.port, timeout=60), sid)
fork = cs.fork()
fowner = redis("GET", "crucible:session:" + fork.id)
ok(fowner == owner and fork.exec(["/bin/cat", "f"]).get("stdout") == "one\ntwo\n",
   "Session.fork through the gateway: the fork lives on the same worker, with the files",
   (fork.id, fowner, owner))
fork.close()
ok(redis("EXISTS", "crucible:session:" + fork.id) == "0",
   "Session.close through the gateway: deleted, and its pin removed")
st, j, text = gw.request("GET", "/v1/sessions/%s" % fork.id)
ok(st == 404, "the deleted session: 404", (st, text[:200]))
st, j, text = gw.request("POST", "/v1/sessions/0123/exec", {"command": ["/bin/true"]})
ok(st == 404 and "no session" in text, "an unknown session: 404", (st, text[:200]))
st, j, text = gw.request("POST", "/v1/sessions/../x", {})
ok(st == 404, "a session id that is not one: 404", (st, text[:200]))
# its worker killed while a request waits on it: 410, then 410 for the next one
victim = [w for w in workers if w.pid == worker_pid(owner)][0]
with concurrent.futures.ThreadPoolExecutor(1) as ex:
    t0 = time.time()
    fut = ex.submit(gw.request, "POST", "/v1/sessions/%s/exec" % sid,
                    {"command": ["/bin/sleep", "30"]}, None, 60)
    time.sleep(1.0)
    victim.kill()
    st, j, text = fut.result(timeout=60)
    waited = time.time() - t0
ok(st == 410 and "session_lost" in text and waited < 20,
   "a session's request waiting when its worker is SIGKILLed: 410 session_lost after %.1f s, "
   "not a hang" % waited, (st, text[:300]))
st, j, text = gw.request("POST", "/v1/sessions/%s/exec" % sid, {"command": ["/bin/true"]})
ok(st == 410 and owner in text, "the next request to that session: 410 naming its worker",
   (st, text[:300]))
victim.wait(10)
workers = [w for w in workers if w is not victim] + [start_worker()]
ok(wait_for(lambda: health(gw).get("workers") == 3, 30), "a new worker replaces it", health(gw))

# ---- placement: a job naming an image goes to a worker that holds it --------------------
os.chmod(TMP, 0o755)  # the sandbox's own user opens the images below


def bare_image(name):
    """An image root holding one static program, /NAME, that prints NAME."""
    root = os.path.join(TMP, name + "-image")
    os.makedirs(root, exist_ok=True)
    src = os.path.join(TMP, name + ".c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\nint main(void) { puts("%s"); return 0; }\n' % name)
    subprocess.run(["cc", "-static", "-O1", "-o", os.path.join(root, name), src], check=True)
    return root


bare = bare_image("bare")
holder_w = start_worker(serve=("--image", "bare=" + bare))
ok(wait_for(lambda: health(gw).get("workers") == 4, 30), "a fourth worker, holding image 'bare'",
   health(gw))
hb = [json.loads(redis("GET", k)) for k in redis("KEYS", "crucible:worker:*").split()]
mine = [h for h in hb if h.get("pid") == holder_w.pid]
ok(mine and "bare" in mine[0].get("images", []) and mine[0].get("memory_mb", 0) > 0 and
   all(h.get("images", [None])[0] == "host" for h in hb),
   "heartbeats carry the images each node holds and the machine's memory", hb)
time.sleep(1.5)  # the gateway's next look at the heartbeats
placed = [gw.post("/v1/run", {"command": ["/bare"], "image": "bare"}) for _ in range(8)]
placed = [(st, (j or {}).get("stdout")) for st, j, _ in placed]
ok(placed == [(200, "bare\n")] * 8,
   "eight runs naming image 'bare' all ran on the worker holding it (the three others would "
   "have answered 400 for an image they do not have)", placed)
st, j, text = gw.post("/v1/run", {"command": ["/bin/true"], "image": "nobody-has-it"})
ok(st == 503 and "no_worker_for_image" in text and "bare" in text,
   "an image no live worker holds: 503 no_worker_for_image, naming the images they hold",
   (st, text[:300]))

# ---- a batch split across workers: each item placed by its image, streamed as answered ---
bare2 = bare_image("bare2")
holder2 = start_worker(serve=("--image", "bare2=" + bare2))
ok(wait_for(lambda: health(gw).get("workers") == 5, 30), "a fifth worker, holding image 'bare2'",
   health(gw))
time.sleep(1.5)  # the gateway's next look at the heartbeats


def batch_lines(server, body, headers=None):
    """POST /v1/batch: (status, its lines parsed, or the error text)."""
    r, data = server.exchange("POST", "/v1/batch", body, headers=headers, timeout=120)
    text = data.decode(errors="replace")
    if r.status != 200:
        return r.status, text
    return 200, sorted((json.loads(x) for x in text.splitlines() if x.strip()),
                       key=lambda x: x["index"])


st, lines = batch_lines(gw, {"items": [
    {"kind": "run", "command": ["/bare"], "image": "bare"},
    {"kind": "run", "command": ["/bare2"], "image": "bare2"},
    {"kind": "run", "command": ["/bin/echo", "host"]},
    {"kind": "run", "command": ["/bare2"], "image": "bare2", "after": [0, 1]}]})
ok(st == 200 and [x.get("result", {}).get("stdout") for x in lines] ==
   ["bare\n", "bare2\n", "host\n", "bare2\n"],
   "a batch naming 'bare' and 'bare2', each held by one worker only: every item ran (each was "
   "placed by its own image; one worker could not have run them all)", lines)
st, text = batch_lines(gw, {"items": [
    {"kind": "run", "command": ["/bare"], "image": "bare"},
    {"kind": "run", "command": ["/bare2"], "image": "bare2", "limits": {"wall_time": -1}}]})
ok(st == 400 and "items[1]: " in text and "wall_time" in text,
   "an item refused by the worker checking its image's items: 400 naming the batch's index, "
   "before anything runs", (st, text[:300]))
st, text = batch_lines(gw, {"items": [{"kind": "run", "command": ["/bin/true"]},
                                      {"kind": "run", "command": ["/bin/true"], "after": [1]}]})
ok(st == 400 and "items[1]: after[0]" in text, "an 'after' naming the item itself: 400 as on a "
   "single node", (st, text[:300]))
st, text = batch_lines(gw, {"items": [{"kind": "run", "command": ["/x"], "image": "nobody"}]})
ok(st == 503 and "no_worker_for_image" in text,
   "a batch item naming an image no live worker holds: 503 no_worker_for_image", (st, text[:300]))
st, lines = batch_lines(gw, {"items": [{"kind": "run", "command": ["/bin/false"]},
                                       {"kind": "run", "command": ["/bin/true"], "after": [0]}]})
ok(st == 200 and lines[1].get("skipped") is True and
   lines[1].get("error", {}).get("code") == "dependency_failed",
   "an item after a failed one is skipped, as on a single node", lines)

# streamed: the quick item's line comes while the slow one still runs
c = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=60)
c.request("POST", "/v1/batch", json.dumps({"items": [
    {"kind": "run", "command": ["/bin/sleep", "4"]},
    {"kind": "run", "command": ["/bin/echo", "quick"]}]}))
resp = c.getresponse()
first = json.loads(resp.readline())
inflight_then = health(gw).get("inflight")
rest = [json.loads(x) for x in resp.read().splitlines() if x.strip()]
c.close()
ok(first.get("index") == 1 and inflight_then >= 1 and [x["index"] for x in rest] == [0],
   "a batch's lines are streamed as items finish: the quick item's line arrived while the slow "
   "one was still in flight (%s)" % inflight_then, (first, rest))

# exactly once: the same batch resent with its Idempotency-Key is answered from the kept answers
rnd = {"items": [{"kind": "run", "command": ["/bin/sh", "-c", "od -An -tx8 -N8 /dev/urandom"]}
                 for _ in range(6)]}
key = {"Idempotency-Key": "batch-%d" % os.getpid()}
replayed0 = gw.metric("crucible_cluster_replayed_total") or 0
st1, l1 = batch_lines(gw, rnd, key)
st2, l2 = batch_lines(gw, rnd, key)
outs1 = [x.get("result", {}).get("stdout") for x in l1] if st1 == 200 else l1
outs2 = [x.get("result", {}).get("stdout") for x in l2] if st2 == 200 else l2
ok(st1 == st2 == 200 and outs1 == outs2 and len(set(outs1)) == 6 and
   (gw.metric("crucible_cluster_replayed_total") or 0) - replayed0 == 6,
   "a batch resent with its Idempotency-Key: each item answered from its kept answer (KEY.i), "
   "none run again", (outs1, outs2))
# A job run twice (reclaimed from a worker only thought dead): the answer kept first is the
# job's answer. Planted here while the job runs, as the other run would have kept it.
dkey = "twice-%d" % os.getpid()
planted = json.dumps({"status": "ok", "stdout": "the first run's\n"})
twice = {}
tw = threading.Thread(target=lambda: twice.update(r=gw.exchange(
    "POST", "/v1/run", {"command": ["/bin/sh", "-c", "sleep 1.5; echo the second run"]},
    headers={"Idempotency-Key": dkey}, timeout=60)))
tw.start()
ok(wait_for(lambda: redis("EXISTS", "crucible:idem:" + dkey) == "1", 10),
   "a keyed job is admitted (its key is claimed)")
redis("HSET", "crucible:answer:" + dkey, "status", "200", "ctype", "application/json",
      "body", planted, "worker", "another")
tw.join(60)
r, data = twice.get("r", (None, b""))
ok(r is not None and r.status == 200 and data.decode() == planted,
   "a job whose answer another run kept first is answered with that answer, not its own run's",
   data[:300])
for lg in WORKER_LOGS:
    lg.flush()
ok(any("key %s was answered already by another run" % dkey in open(lg.name).read()
       for lg in WORKER_LOGS), "... and the worker says so in its log")
r, data = gw.exchange("POST", "/v1/batch", rnd, headers={"Idempotency-Key": "k" * 127})
ok(r.status == 400 and b"too long" in data,
   "a batch's key too long to name its items: 400", (r.status, data[:200]))

# the client leaving mid-batch: nothing more is sent
admitted0 = gw.metric("crucible_cluster_admitted_total")
c = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=60)
c.request("POST", "/v1/batch", json.dumps({"items": [
    {"kind": "run", "command": ["/bin/sleep", "0.3"]} for _ in range(40)]}))
resp = c.getresponse()
resp.readline()
c.sock.shutdown(socket.SHUT_RDWR)
c.close()
ok(wait_for(lambda: health(gw).get("inflight") == 0, 30),
   "a batch whose client left: what was sent is answered or dropped, nothing left in flight",
   health(gw))
sent = gw.metric("crucible_cluster_admitted_total") - admitted0
ok(2 <= sent < 40, "... and its remaining items were never sent (%d of 40 were: the check and "
   "the window)" % sent)

m = {k: gw.metric("crucible_cluster_" + k) for k in
     ("batches_total", "batches_refused_total", "batch_items_total", "batch_items_skipped_total",
      "batches_cancelled_total", "slots")}
ok(m["batches_total"] >= 7 and m["batches_refused_total"] >= 4 and m["batch_items_total"] >= 20 and
   m["batch_items_skipped_total"] >= 1 and m["batches_cancelled_total"] >= 1 and m["slots"] == 5,
   "/metrics counts the batches split, refused and cancelled, their items sent and skipped, and "
   "the live workers' slots", m)

holder2.send_signal(signal.SIGTERM)
holder2.wait(30)
holder_w.send_signal(signal.SIGTERM)
holder_w.wait(30)
ok(wait_for(lambda: health(gw).get("workers") == 3, 10), "the image workers drained away")

# ---- placement by memory: a job naming more memory than a small worker's node takes -------
small = start_worker(serve=("--memory", "1024"))
ok(wait_for(lambda: health(gw).get("workers") == 4, 30), "a fourth worker, its node taking jobs of "
   "at most 1024 MB", health(gw))
hb = [json.loads(redis("GET", k)) for k in redis("KEYS", "crucible:worker:*").split()]
ok(sorted(h.get("job_memory_mb", 0) for h in hb)[0] == 1024 and
   all(h.get("job_memory_mb", 0) > 1024 for h in hb if h.get("pid") != small.pid),
   "heartbeats carry the most memory each node takes for one job", hb)
time.sleep(1.5)  # the gateway's next look at the heartbeats
big = {"command": ["/bin/echo", "big"], "limits": {"memory_mb": 1500}}
placed = [gw.post("/v1/run", big) for _ in range(8)]
placed = [(st, (j or {}).get("status")) for st, j, _ in placed]
st, lines = batch_lines(gw, {"items": [dict(big, kind="run") for _ in range(4)]})
ok(placed == [(200, "ok")] * 8 and st == 200 and
   [x.get("result", {}).get("status") for x in lines] == ["ok"] * 4,
   "eight runs and a batch of four naming 1500 MB all ran on the workers whose nodes take it "
   "(the small one would have answered 400)", (placed, lines))
st, j, text = gw.post("/v1/run", {"command": ["/bin/true"], "limits": {"memory_mb": 1000000}})
ok(st == 503 and "no_worker_for_memory" in text,
   "a job naming more memory than any live worker's node takes: 503 no_worker_for_memory",
   (st, text[:300]))
small.send_signal(signal.SIGTERM)
small.wait(30)
ok(wait_for(lambda: health(gw).get("workers") == 3, 10), "the small worker drained away")

# ---- 1,000 jobs, one worker SIGKILLed in the middle -----------------------------------
N = 1000
answers = {}
killed = {}


def one(n):
    answers[n] = run_echo(gw, n)
    if len(answers) == 300 and not killed:
        killed["pid"] = workers[0].pid
        killed["node"] = children(workers[0].pid)
        os.kill(workers[0].pid, signal.SIGKILL)


t0 = time.time()
with concurrent.futures.ThreadPoolExecutor(32) as ex:
    list(ex.map(one, range(N)))
wrong = [(n, a) for n, a in answers.items() if a != (200, "%d\n" % n)]
ok(len(answers) == N and not wrong,
   "%d jobs through the gateway with a worker SIGKILLed after 300: every one answered with its "
   "own output (%.1f s)" % (N, time.time() - t0), wrong[:5])
ok(workers[0].wait(10) == -signal.SIGKILL, "the killed worker is gone")
ok(killed.get("node") and wait_for(lambda: not [p for p in killed["node"] if alive(p)], 30),
   "its node (crucible serve) ended with it", killed)
ok(wait_for(lambda: health(gw).get("inflight") == 0, 10), "nothing is left in flight",
   health(gw))
answered = gw.metric("crucible_cluster_answered_total")
ok(answered is not None and answered >= N + 5,
   "crucible_cluster_answered_total counts each request once (%s)" % answered)
ok(wait_for(lambda: redis("XLEN", "crucible:jobs:normal") == "0", 10),
   "the job stream is empty afterwards: every job acknowledged and deleted",
   (redis("XRANGE", "crucible:jobs:normal", "-", "+")[:1500],
    redis("XPENDING", "crucible:jobs:normal", "crucible-workers", "-", "+", "10"),
    redis("XINFO", "CONSUMERS", "crucible:jobs:normal", "crucible-workers")[:1500]))
workers = workers[1:] + [start_worker()]
ok(wait_for(lambda: health(gw).get("workers") == 3, 30), "three workers again", health(gw))
time.sleep(1.5)  # the gateway's next look at the heartbeats: the window counts their slots

# ---- a batch of 1,000 items split across the workers, one SIGKILLed in the middle -------
c = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=120)
c.request("POST", "/v1/batch", json.dumps({"items": [
    {"kind": "run", "command": ["/bin/echo", str(n)]} for n in range(N)]}))
resp = c.getresponse()
got, victim = [], None
t0 = time.time()
for raw in resp:
    if raw.strip():
        got.append(json.loads(raw))
    if len(got) == 300 and victim is None:
        victim = workers[0]
        victim.kill()
c.close()
idx = sorted(x.get("index") for x in got)
wrong = [x for x in got if x.get("result", {}).get("stdout") != "%d\n" % x.get("index")]
ok(resp.status == 200 and idx == list(range(N)) and not wrong,
   "a batch of %d items with a worker SIGKILLed after 300 lines: every item answered exactly "
   "once, with its own output (%.1f s)" % (N, time.time() - t0),
   (resp.status, len(got), len(set(idx)), wrong[:3]))
victim.wait(10)
workers = workers[1:] + [start_worker()]

# ---- the broker restarted mid-batch ---------------------------------------------------
st, info, _ = gw.request("POST", "/v1/sessions", {})
kept_sid = (info or {}).get("id", "")
gw.request("POST", "/v1/sessions/%s/exec" % kept_sid, {"command": ["/bin/sh", "-c", "echo kept > k"]})
answers = {}
restarted = {}


def one_r(n):
    answers[n] = run_echo(gw, n)
    if len(answers) == 80 and not restarted:
        restarted["at"] = time.time()
        redis_p.kill()
        redis_p.wait()
        time.sleep(1)
        restarted["p"] = start_redis()


with concurrent.futures.ThreadPoolExecutor(16) as ex:
    list(ex.map(one_r, range(300)))
redis_p = restarted.get("p", redis_p)
bad = [(n, a) for n, a in answers.items() if a != (200, "%d\n" % n)]
ok(restarted and len(answers) == 300 and not bad,
   "300 jobs with the broker killed and restarted empty after 80: every job answered with its "
   "own output (%d requests were refused 503 with Retry-After while it was down, and retried)"
   % len(set(RETRIED)), bad[:5])
ok(wait_for(lambda: health(gw).get("workers") == 3, 20), "the workers came back to the broker",
   health(gw))


def cat_kept():
    j = gw.request("POST", "/v1/sessions/%s/exec" % kept_sid, {"command": ["/bin/cat", "k"]})[1]
    return j if (j or {}).get("stdout") == "kept\n" else None


st = wait_for(cat_kept, 20) or {}
ok(st.get("stdout") == "kept\n",
   "a session made before the broker lost its data is reachable again: its worker pinned it "
   "anew", st)
resent = gw.metric("crucible_cluster_resent_total")
ok(resent is not None and resent > 0, "the gateway sent the lost jobs again (%s)" % resent)

# ---- a gateway SIGKILLed mid-batch, then started again on its port --------------------


def node_runs():
    """/v1/run requests the workers' nodes answered (their own /metrics, on the port each
    heartbeat names): how many times jobs ran."""
    total = 0
    for key in redis("KEYS", "crucible:worker:*").split():
        port = json.loads(redis("GET", key))["node_port"]
        c = http.client.HTTPConnection("127.0.0.1", int(port), timeout=10)
        c.request("GET", "/metrics")
        for line in c.getresponse().read().decode().splitlines():
            if line.startswith("crucible_http_requests_total{") and 'route="/v1/run"' in line:
                total += float(line.split()[-1])
        c.close()
    return total


GPORT = free_port()
gw3 = Server("--broker", BROKER, "--listen", "127.0.0.1:%d" % GPORT, tmp=TMP)
ok(gw3.port == GPORT and wait_for(lambda: health(gw3).get("workers") == 3, 20),
   "a second gateway on a port of its own", (gw3.port, GPORT))
runs0 = node_runs()
kc = Client("http://127.0.0.1:%d" % GPORT, timeout=120, resend_for=60)
answers = {}
cut = {}


def one_k(n):
    try:
        answers[n] = kc.run(["/bin/sh", "-c", "sleep 0.3; echo %d" % n]).get("stdout")
    except Exception as e:  # noqa: BLE001
        answers[n] = repr(e)
    if len(answers) == 20 and not cut:
        cut["at"] = time.time()
        gw3.p.kill()
        gw3.p.wait()
        time.sleep(1)
        cut["gw"] = Server("--broker", BROKER, "--listen", "127.0.0.1:%d" % GPORT, tmp=TMP)


with concurrent.futures.ThreadPoolExecutor(12) as ex:
    list(ex.map(one_k, range(90)))
bad = [(n, a) for n, a in answers.items() if a != "%d\n" % n]
gw4 = cut.get("gw")
ok(gw4 and len(answers) == 90 and not bad,
   "90 jobs with the gateway SIGKILLed after 20 answers and started again: every client got "
   "its own job's answer", bad[:5])
time.sleep(1)
runs = node_runs() - runs0
ok(runs == 90, "each job ran once: the resent ones were answered from the job admitted before "
   "(%s runs on the workers' nodes for 90 jobs)" % runs)
ok(gw4 and (gw4.metric("crucible_cluster_attached_total") or 0) +
   (gw4.metric("crucible_cluster_replayed_total") or 0) > 0,
   "the restarted gateway attached resent jobs to their first admission, or replayed their "
   "kept answers", gw4 and (gw4.metric("crucible_cluster_attached_total"),
                           gw4.metric("crucible_cluster_replayed_total")))
r, body = gw.exchange("POST", "/v1/run", {"command": ["/bin/true"]},
                      headers={"Idempotency-Key": "not a key!"})
ok(r.status == 400 and b"Idempotency-Key" in body, "a malformed Idempotency-Key: 400 naming it",
   (r.status, body[:200]))

# the same for a batch: Client.batch resends it with its key, item i runs under KEY.i
runs0 = node_runs()
stream = kc.batch([run_item(["/bin/sh", "-c", "sleep 0.2; echo %d" % n]) for n in range(30)])
blines, gw5 = [], None
for line in stream:
    blines.append(line)
    if len(blines) == 8 and gw4 and gw5 is None:
        gw4.p.kill()
        gw4.p.wait()
        time.sleep(0.5)
        gw5 = Server("--broker", BROKER, "--listen", "127.0.0.1:%d" % GPORT, tmp=TMP)
bad = [x for x in blines if x.get("result", {}).get("stdout") != "%d\n" % x.get("index")]
ok(gw5 and sorted(x["index"] for x in blines) == list(range(30)) and not bad and
   stream.reopened >= 1,
   "Client.batch of 30 items with its gateway SIGKILLed after 8 lines and started again: the "
   "batch resent with its key, each item's line read once (%d resends)" % stream.reopened,
   (len(blines), bad[:3]))
time.sleep(1)
runs = node_runs() - runs0
ok(runs == 30, "... and each item ran once (%s runs on the workers' nodes for 30 items)" % runs)
for g in (gw5, gw4 if gw5 is None else None):
    if g:
        g.stop()

# ---- a poison job: its workers keep dying ---------------------------------------------
poison = {}


def post_poison():
    poison["answer"] = gw.post("/v1/run", {"command": ["/bin/sleep", "50"],
                                           "limits": {"wall_time": 60}}, timeout=120)


def holder():
    """The pid of the worker holding the poison job (XPENDING's consumer: HOST-PID)."""
    out = redis("XPENDING", "crucible:jobs:normal", "crucible-workers", "-", "+", "10").split()
    return int(out[1].rsplit("-", 1)[1]) if len(out) >= 2 else None


with concurrent.futures.ThreadPoolExecutor(1) as ex:
    fut = ex.submit(post_poison)
    victims = []
    for attempt in range(2):
        pid = wait_for(lambda: (lambda h: h if h and h not in victims else None)(holder()), 30)
        if pid:
            victims.append(pid)
            os.kill(pid, signal.SIGKILL)
    fut.result(timeout=90)
st, j, text = poison.get("answer", (None, None, ""))
ok(len(victims) == 2, "the poison job was delivered to two workers, each killed", victims)
ok(st == 200 and j and j.get("status") == "sandbox_error" and "crucible:dead" in j.get("message", ""),
   "after --max-attempts deliveries it is answered sandbox_error, naming the dead-letter stream",
   text[:400])
ok(redis("XLEN", "crucible:dead") == "1", "crucible:dead holds it",
   redis("XLEN", "crucible:dead"))
reason = redis("XRANGE", "crucible:dead", "-", "+")
ok("/bin/sleep" in reason and "delivered to 2 workers" in reason,
   "the dead letter keeps the job and the reason", reason[:300])
workers = [w for w in workers if w.poll() is None]
while len(workers) < 2:
    workers.append(start_worker())

# ---- backpressure: beyond --queue requests in flight, 429 ------------------------------
gw2 = Server("--broker", BROKER, "--queue", "2", tmp=TMP)
wait_for(lambda: health(gw2).get("workers", 0) >= 1, 10)


def slow(_):
    r, data = gw2.exchange("POST", "/v1/run", {"command": ["/bin/sleep", "1"]}, timeout=60)
    return r.status, r.getheader("Retry-After")


with concurrent.futures.ThreadPoolExecutor(6) as ex:
    got = list(ex.map(slow, range(6)))
ok(sorted(st for st, _ in got).count(200) >= 2 and
   all(st == 200 or (st == 429 and ra) for st, ra in got) and any(st == 429 for st, _ in got),
   "a gateway with --queue 2 answers 429 with Retry-After beyond two requests in flight, "
   "and the admitted ones 200", got)
gw2.stop()

# ---- a worker drained with SIGTERM answers what it holds ------------------------------
for w in workers[1:]:
    w.send_signal(signal.SIGTERM)
    w.wait(30)
workers = workers[:1]
ok(wait_for(lambda: health(gw).get("workers") == 1, 10), "one worker left", health(gw))
with concurrent.futures.ThreadPoolExecutor(1) as ex:
    fut = ex.submit(run_echo, gw, 7, "1.5")
    time.sleep(0.7)
    workers[0].send_signal(signal.SIGTERM)
    rc = workers[0].wait(30)
    res = fut.result(timeout=30)
ok(res == (200, "7\n") and rc == 0,
   "a worker drained with SIGTERM mid-job answers it, then exits 0", (res, rc))
ok(wait_for(lambda: health(gw).get("workers") == 0, 10),
   "its heartbeat is removed at once", health(gw))

# ---- no broker: 503 -------------------------------------------------------------------
redis_p.kill()
redis_p.wait()
ok(wait_for(lambda: health(gw).get("broker") is False, 10), "the gateway sees the broker gone",
   health(gw))
r, body = gw.exchange("POST", "/v1/run", {"command": ["/bin/true"]})
ok(r.status == 503 and r.getheader("Retry-After") and b"broker_unavailable" in body,
   "with the broker down a job request is answered 503 broker_unavailable with Retry-After",
   (r.status, body))
r, body = gw.exchange("POST", "/v1/sessions", {})
ok(r.status == 503 and b"broker_unavailable" in body,
   "with the broker down a session's create is 503 too", (r.status, body))
ok(gw.stop() == 0, "the gateway stops cleanly")
for log in WORKER_LOGS:
    log.seek(0)
    text = log.read()
    at = max(text.find("ERROR: AddressSanitizer"), text.find("runtime error:"))
    if at >= 0:  # the report's head: what went wrong and where (its tail is shadow bytes)
        ok(False, "worker log %s is clean (its node's and its own sanitizer reports)" % log.name,
           text[max(0, at - 200):at + 2800])
done()
