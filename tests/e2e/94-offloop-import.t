#!/usr/bin/python3
# The task library's work is done off the event loop (issue 10): a 50,000-task import
# (POST /v1/tasks, generated here in the import format of docs/TASKS.md) runs on an api
# worker while /healthz keeps answering; the tasks are all there afterwards, a large list
# answers while /healthz does too, and the server's memory (VmRSS) is bounded afterwards.
# Memory is read from /proc/PID/status with generous bounds; no timing is asserted.
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import done, ok, skip  # noqa: E402
from offloop import SANITIZED, TMP, big_request_with_probes, serve  # noqa: E402

N = 50000


def task(i):
    return {"id": "gen/t%05d" % i, "language": "python", "harness": "assert",
            "entry_point": "f", "reference": "def f():\n    return %d\n" % i,
            "tags": ["generated", "bulk%d" % (i % 7)],
            "tests": [{"name": "t0", "code": "assert f() == %d" % i},
                      {"name": "t1", "code": "assert isinstance(f(), int)"}]}


body = "".join(json.dumps(task(i)) + "\n" for i in range(N)).encode()
s = serve("--slots", "1", "--warm", "0", "--db", os.path.join(TMP, "lib.db"))

# Warm up: the library's first answers (schema, caches) are part of the baseline.
small = "".join(json.dumps(task(N + i)) + "\n" for i in range(20))
st, j, text = s.request("POST", "/v1/tasks", small)
ok(st == 200 and j["new"] == 20, "a small import to start with", text)
s.request("GET", "/v1/tasks?limit=10")
time.sleep(0.3)
rss0 = s.status_kb("VmRSS")

st, text, before, probes = big_request_with_probes(s, "POST", "/v1/tasks", body, "application/x-ndjson")
try:
    j = json.loads(text)
except ValueError:
    j = {}
ok(st == 200 and j.get("new") == N and j.get("bad") == 0,
   "the %d tasks (%d bytes of JSONL) are imported" % (N, len(body)), text[:2000])
ok(before >= 3 and all(x == 200 for x in probes),
   "/healthz answered while the import ran (%d answers before the import's)" % before, probes[:20])

st, j, text = s.request("GET", "/v1/tasks/stats")
ok(st == 200 and "%d" % (N + 20) in text, "the library holds every task", text[:2000])
st, j, text = s.request("GET", "/v1/tasks/gen/t04242")
ok(st == 200 and j["id"] == "gen/t04242" and j["task"]["tests"][0]["code"] == "assert f() == 4242",
   "one of them, read back", text[:2000])

# A list of 50,000 rows is built on a worker too.
st, text, before, probes = big_request_with_probes(s, "GET", "/v1/tasks?tag=generated&limit=100000", b"")
try:
    j = json.loads(text)
except ValueError:
    j = {}
ok(st == 200 and j.get("count") == N + 20, "a list of the %d rows" % (N + 20), text[:500])
ok(before >= 3 and all(x == 200 for x in probes),
   "/healthz answered while the list was built (%d answers before the list)" % before, probes[:20])

del body, text, j
time.sleep(0.3)
s.request("GET", "/healthz")
rss1, hwm = s.status_kb("VmRSS"), s.status_kb("VmHWM")
if SANITIZED:
    skip("the memory check", "a sanitizer build: its RSS is the quarantine's, not the heap's")
else:
    ok(rss1 - rss0 < 32 * 1024,
       "afterwards the memory is bounded (VmRSS %d kB -> %d kB, peak %d kB)" % (rss0, rss1, hwm))

ok(s.stop() == 0, "the server stops cleanly on SIGTERM")
done()
