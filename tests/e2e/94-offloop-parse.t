#!/usr/bin/python3
# Request bodies are parsed off the event loop (issue 10): while a 60 MiB JSON body is parsed
# by an api worker, /healthz keeps answering; afterwards the server's memory (VmRSS) is back
# near its baseline. Also: JSON nested deeper than the limit is refused before it is parsed,
# a client that leaves while its body is parsed crashes nothing, and the new options are
# checked. Memory is read from /proc/PID/status with generous bounds; no timing is asserted.
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import CRUCIBLE, done, ok, skip  # noqa: E402
from offloop import SANITIZED, big_request_with_probes, serve  # noqa: E402

MB = 1 << 20

# --- options ------------------------------------------------------------------------------
for args, want in ((["--api-threads", "0"], "--api-threads wants an integer from 1 to 64"),
                   (["--parse-budget", "lots"], "--parse-budget wants megabytes from 1 to 4096")):
    p = subprocess.run([CRUCIBLE, "serve"] + args, capture_output=True, text=True, timeout=30)
    ok(p.returncode == 2 and want in p.stderr, "serve %s: exit 2 saying what is wrong" % " ".join(args),
       p.stderr)
p = subprocess.run([CRUCIBLE, "serve", "--help"], capture_output=True, text=True, timeout=30)
ok("--api-threads" in p.stdout and "--parse-budget" in p.stdout, "serve --help lists the new options",
   p.stdout)

s = serve("--slots", "1", "--warm", "0", "--api-threads", "1")

# Warm the server up: a few requests of each kind it will see, so the baseline includes
# what every server holds after its first answers.
for _ in range(3):
    s.request("GET", "/healthz")
    s.request("POST", "/v1/batch", json.dumps({"items": ["x"] * 20}))
time.sleep(0.3)
rss0 = s.status_kb("VmRSS")

# --- a 60 MiB body: the loop keeps answering -------------------------------------------------
# Short strings: jansson spends about 5 bytes of memory per byte of them, and seconds of
# parsing; the batch is refused (too many items) only once it has been parsed.
item = b'"crucible-%07d",'
n = 60 * MB // len(item % 0)
body = b'{"items": [' + b"".join(item % i for i in range(n))[:-1] + b"]}"
ok(len(body) >= 60 * MB, "the body is 60 MiB (%d bytes)" % len(body))
st, text, before, probes = big_request_with_probes(s, "POST", "/v1/batch", body)
ok(st == 400 and "at most 10000 items" in text, "the 60 MiB batch is parsed and refused with a 400", text)
ok(before >= 3 and all(x == 200 for x in probes),
   "/healthz answered while the 60 MiB body was parsed (%d answers before the big request's)" % before,
   probes[:20])
del body
hwm = s.status_kb("VmHWM")
time.sleep(0.3)
s.request("GET", "/healthz")
rss1 = s.status_kb("VmRSS")
if SANITIZED:
    skip("the memory checks", "a sanitizer build: its RSS is the quarantine's, not the heap's")
else:
    ok(hwm - rss0 > 100 * 1024, "parsing took memory (peak %d kB over a baseline of %d kB)" % (hwm, rss0))
    ok(rss1 - rss0 < 32 * 1024,
       "afterwards the memory is back near the baseline (VmRSS %d kB -> %d kB, peak %d kB)"
       % (rss0, rss1, hwm))

# --- nesting ----------------------------------------------------------------------------------
deep = "[" * 100000 + "]" * 100000
st, j, text = s.request("POST", "/v1/run", '{"command": ["true"], "stdin": ' + deep + "}")
ok(st == 400 and "deeper than 64 levels" in j["error"]["message"],
   "JSON nested 100000 deep is refused with a 400 naming the limit", text)
st, j, text = s.request("POST", "/v1/run",
                        '{"command": ["/bin/true"], "files": {"a": "' + "[{" * 100 + '\\"]}"}}')
ok(st == 200 and j["status"] == "ok", "brackets inside strings are not nesting", text)

# --- a client that leaves while its body is parsed ----------------------------------------
for _ in range(3):
    small = b'{"items": [' + b",".join(b'"x"' for _ in range(2 * MB)) + b"]}"
    c = s.connect(b"POST /v1/batch HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(small)
                  + small, timeout=None)
    time.sleep(0.1)  # the body is in: its parse has started (pacing only, not asserted)
    c.close()
st, j, text = s.request("GET", "/healthz")
ok(st == 200 and s.p.poll() is None, "clients gone while their bodies were parsed: the server is fine", text)
st, j, text = s.request("POST", "/v1/run", json.dumps({"command": ["/bin/echo", "still here"]}))
ok(st == 200 and j["stdout"] == "still here\n", "and it still runs requests", text)

# --- small bodies are parsed on the loop, larger ones by an api worker: the same answers -----
# A /v1/run body of at most 16 KiB is parsed on the loop thread; one naming an image that is
# not registered goes to an api worker all the same (the image store is read there). Each
# pair differs only in a padding field of stdin that puts it on one side of the line or the other.
def run_pair(body):
    answers = []
    for pad in (0, 20 << 10):
        b = dict(body, stdin="x" * pad)
        st, j, text = s.request("POST", "/v1/run", json.dumps(b))
        answers.append((st, j))
    return answers

(st1, j1), (st2, j2) = run_pair({"command": ["/bin/echo", "same"]})
ok(st1 == st2 == 200 and j1["stdout"] == j2["stdout"] == "same\n",
   "/v1/run parsed on the loop (small) and by an api worker (over 16 KiB): the same run", (j1, j2))
for body, what in (({"command": ["/bin/true"], "image": "t/nosuch:v1"}, "an unknown stored image"),
                   ({"command": ["/bin/true"], "image": "/"}, "a host path as image"),
                   ({"command": ["/bin/true"], "limits": {"cpu_time": -1}}, "a bad limit"),
                   ({"command": []}, "an empty command")):
    (st1, j1), (st2, j2) = run_pair(body)
    m1 = j1 and j1.get("error", {}).get("message", "")
    m2 = j2 and j2.get("error", {}).get("message", "")
    ok(st1 == st2 == 400 and m1 and m1 == m2,
       "/v1/run with %s: the same 400 from either parse" % what, (st1, m1, st2, m2))
st, j, text = s.request("POST", "/run_code", json.dumps({"code": "print(6*7)", "language": "python"}))
ok(st == 200 and j.get("status") == "Success" and j["run_result"]["stdout"] == "42\n",
   "/run_code with a small body (parsed on the loop) runs", text[:300])

ok(s.stop() == 0, "the server stops cleanly on SIGTERM")
done()
