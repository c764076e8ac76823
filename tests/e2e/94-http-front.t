#!/usr/bin/python3
# crucible serve's front door, on loopback with the real binary: with a token, auth and routing
# are decided on the headers before any body is read (401 before 404/405; a 60 MiB body is
# never buffered, checked from the server's own RSS; no "100 Continue" for a refused request;
# 413 on a declared length at once, on a chunked body once it ended), a client that
# half-closes its socket after sending still gets its answer (single requests and batch
# streams), one that leaves for good still has its job cancelled, and an expired batch item
# never reports a negative deadline. Standard library only.
import concurrent.futures
import http.client
import json
import os
import select
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, read_all, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-http-front-")
TOKEN = "front-door-token"
AUTH = {"Authorization": "Bearer " + TOKEN}


tok = os.path.join(TMP, "token")
with open(tok, "w") as f:
    f.write(TOKEN + "\n")
s = Server("--slots", "1", "--warm", "0", "--token-file", tok, tmp=TMP, timeout=30)

# --- 1. auth and routing on the headers -----------------------------------------------------
probes = [("GET", "/v1/run"), ("PUT", "/v1/batch"), ("GET", "/no/such/route"), ("POST", "/metrics"),
          ("GET", "/metrics"), ("DELETE", "/v1/tasks/x"), ("GET", "/v1/tasks")]
got = [(m, p, s.request(m, p)[0]) for m, p in probes]
ok(all(st == 401 for _, _, st in got),
   "token: without it, every route but /healthz answers 401 — wrong methods and unknown paths too", got)
ok(s.request("GET", "/healthz")[0] == 200, "token: /healthz stays open")
st405, st404 = s.request("GET", "/v1/run", headers=AUTH)[0], s.request("GET", "/nope", headers=AUTH)[0]
ok(st405 == 405 and st404 == 404, "token: with it, a wrong method is 405 and an unknown path 404",
   (st405, st404))

# Headers declaring a 60 MiB body, no token, then body bytes streamed: the 401 comes back
# before the body, and the server never holds it.
hwm0 = s.status_kb("VmHWM")
c = s.connect(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % (60 << 20))
chunk = b"[" * (1 << 20)
sent, answer = 0, b""
t0 = time.time()
while sent < (60 << 20) and time.time() - t0 < 30:
    if select.select([c], [], [], 0)[0]:
        break
    try:
        c.sendall(chunk)
    except OSError:
        break
    sent += len(chunk)
answer = read_all(c)
c.close()
time.sleep(0.2)
grown = s.status_kb("VmHWM") - hwm0
ok(answer.startswith(b"HTTP/1.1 401") and b"unauthorized" in answer,
   "a 60 MiB body without a token: 401 before the body (%d MiB of it sent)" % (sent >> 20), answer[:300])
ok(grown < 16 * 1024, "... and the server's peak RSS grew by %d KiB, not by the body" % grown)

# Expect: 100-continue on a refused request: the refusal, never a "100 Continue" first.
c = s.connect(b"POST /v1/verify HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
              b"Content-Length: 1000\r\n\r\n")
answer = read_all(c)
c.close()
ok(answer.startswith(b"HTTP/1.1 401"), "Expect: 100-continue without a token: a 401, no 100", answer[:200])
c = s.connect(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
              b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % (TOKEN.encode(), 65 << 20))
answer = read_all(c)
c.close()
ok(answer.startswith(b"HTTP/1.1 413") and b"too_large" in answer,
   "Expect: 100-continue with a declared 65 MiB body: 413 at once, no 100", answer[:200])
body = json.dumps({"command": ["/bin/echo", "continued"]}).encode()
c = s.connect(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
              b"Expect: 100-continue\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
              % (TOKEN.encode(), len(body)))
first = c.recv(100)
c.sendall(body)
answer = first + read_all(c)
c.close()
ok(first.startswith(b"HTTP/1.1 100") and b"HTTP/1.1 200" in answer and b"continued" in answer,
   "Expect: 100-continue on an accepted request: 100, then the body is read and answered", answer[:300])

# --- 3. half-close ------------------------------------------------------------------------------
# http.client as a client that shuts down its sending side once the request is out.
c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
t0 = time.time()
c.request("POST", "/v1/run", body=json.dumps({"command": ["/bin/sh", "-c", "sleep 1; echo half"]}),
          headers=AUTH)
c.sock.shutdown(socket.SHUT_WR)
try:
    r = c.getresponse()
    j = json.loads(r.read())
    res = (r.status, j.get("stdout"))
except (OSError, http.client.HTTPException, ValueError) as e:
    res = repr(e)
c.close()
ok(res == (200, "half\n"), "half-closed client: the answer of a 1 s /v1/run still arrives (%.2f s)"
   % (time.time() - t0), res)

# A batch stream to a half-closed client: every line arrives and parses as JSON.
c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
c.request("POST", "/v1/batch", headers=AUTH, body=json.dumps({"items": [
    {"kind": "run", "command": ["/bin/sh", "-c", "sleep 0.5; echo one"]},
    {"kind": "run", "command": ["/bin/echo", "two"], "after": [0]}]}))
c.sock.shutdown(socket.SHUT_WR)
try:
    r = c.getresponse()
    lines = [json.loads(line) for line in r.read().decode().splitlines()]
    res = sorted((l["index"], l["result"]["stdout"]) for l in lines)
except (OSError, http.client.HTTPException, ValueError) as e:
    res = repr(e)
c.close()
ok(res == [(0, "one\n"), (1, "two\n")], "half-closed client: a /v1/batch stream arrives whole", res)

# Many half-closed clients at once (the daemon used to read their end of file when resumed
# and close the connection as aborted, racing its answer: about one in ten was lost).
# A server of two slots with warm sandboxes: answers come fast, as the race needs.
s2 = Server("--slots", "2", "--token-file", tok)


def half_closed_run(i):
    body = json.dumps({"command": ["/bin/echo", "n%d" % i]}).encode()
    sock = socket.create_connection(("127.0.0.1", s2.port), timeout=60)
    sock.sendall(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                 b"Content-Length: %d\r\n\r\n" % (TOKEN.encode(), len(body)) + body)
    sock.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        b = sock.recv(65536)
        if not b:
            break
        got += b
    sock.close()
    return b"HTTP/1.1 200" in got and (b'"stdout":"n%d\\n"' % i) in got


with concurrent.futures.ThreadPoolExecutor(6) as ex:
    answered = list(ex.map(half_closed_run, range(48)))
ok(all(answered), "48 half-closed clients, 6 at a time: every one gets its own answer (%d of 48)"
   % sum(answered))
s2.stop()

# A client that really leaves while its job runs: the job is cancelled, not run out.
c = s.connect(b"")
body = json.dumps({"command": ["/bin/sleep", "30"]}).encode()
c.sendall(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n"
          % (TOKEN.encode(), len(body)) + body)
t0 = time.time()
while time.time() - t0 < 10 and s.request("GET", "/healthz")[1]["running"] == 0:
    time.sleep(0.05)
c.close()
t0 = time.time()
while time.time() - t0 < 10:
    h = s.request("GET", "/healthz")[1]
    if h["running"] == 0 and h["queued"] == 0:
        break
    time.sleep(0.1)
metrics = s.request("GET", "/metrics", headers=AUTH)[2]
ok(h["running"] == 0 and time.time() - t0 < 10
   and 'crucible_jobs_completed_total{kind="run",status="cancelled"} 1' in metrics,
   "a client that closed its socket: its running job is cancelled (%.2f s)" % (time.time() - t0), h)
ok(s.request("GET", "/healthz")[0] == 200, "the server is still up")
s.stop()

# --- chunked bodies without a Content-Length: capped while read --------------------------------
s = Server("--slots", "1", "--warm", "0", "--max-body", "1", tmp=TMP, timeout=30)
c = s.connect(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
              b"Connection: close\r\n\r\n")
piece = b"%x\r\n%s\r\n" % (64 << 10, b" " * (64 << 10))
try:
    for _ in range(48):  # 3 MiB
        c.sendall(piece)
    c.sendall(b"0\r\n\r\n")
except OSError:
    pass
answer = read_all(c)
c.close()
ok(answer.startswith(b"HTTP/1.1 413") and b"too_large" in answer,
   "a 3 MiB chunked body under --max-body 1: 413", answer[:200])
body = json.dumps({"command": ["/bin/echo", "chunked"]}).encode()
c = s.connect(b"POST /v1/run HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
              b"Connection: close\r\n\r\n" + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
answer = read_all(c)
c.close()
ok(answer.startswith(b"HTTP/1.1 200") and b"chunked\\n" in answer, "a small chunked body is read and run",
   answer[:300])

# --- 4. an expired batch item never reports a negative deadline ---------------------------------
c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
c.request("POST", "/v1/batch", body=json.dumps({"items": [
    {"kind": "run", "command": ["/bin/sleep", "1"]},
    {"kind": "run", "command": ["/bin/echo", "late"], "after": [0], "deadline_s": 0.3}]}))
lines = [json.loads(line) for line in c.getresponse().read().decode().splitlines()]
c.close()
late = [l for l in lines if l["index"] == 1]
msg = late[0].get("result", {}).get("message", "") if late else ""
ok(late and "deadline" in msg and "-" not in msg and "0.3 s" in msg,
   "an item whose deadline passed while it waited on another: its own deadline, never negative", lines)
s.stop()

done()
