#!/usr/bin/python3
# crucible serve's connection limits, on loopback with the real binary: one client address
# cannot hold more than --max-per-address connections; 4,200 idle half-sent requests from many
# addresses do not stop /healthz from answering, and the header timeout closes them (the
# server's descriptors, counted in /proc/PID/fd, come back near their baseline); a full table
# makes room by dropping the oldest connection still sending headers; a client that trickles
# its headers or its body a byte at a time is dropped at the timeout although it never idles.
# Loopback accepts any 127/8 source address. Standard library only.
import http.client
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import CRUCIBLE, done, ok, skip  # noqa: E402

TMP = tmpdir("crucible-http-conns-")
PARTIAL = b"POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Type: applic"


def serve(*args):
    """A server for these tests: one slot, no warm sandboxes."""
    return Server("--slots", "1", "--warm", "0", *args, tmp=TMP, settle=0.1)


def fds_settle(srv, below, within):
    """Waits until the server holds fewer than `below` descriptors; the last count."""
    t0 = time.time()
    n = srv.fd_count()
    while n >= below and time.time() - t0 < within:
        time.sleep(0.2)
        n = srv.fd_count()
    return n


def stall(srv, addr, data=PARTIAL):
    """A connection from addr that sends part of a request and then waits; None if refused."""
    try:
        return srv.connect(data, timeout=10, source=addr)
    except OSError:
        return None


def closed_by_server(s):
    """True when the server has closed s (end of file or reset), without waiting."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if hard != resource.RLIM_INFINITY and hard < 6000:
    skip("connection limits", "the descriptor hard limit (%d) is below 6000" % hard)
    done()
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

# --- options are validated ---------------------------------------------------------------------
bad = [["--max-connections", "0"], ["--max-connections", "99999999"], ["--max-per-address", "x"],
       ["--header-timeout", "0"], ["--body-timeout", "-1"]]
res = [subprocess.run([CRUCIBLE, "serve"] + b, capture_output=True, text=True, timeout=10) for b in bad]
ok(all(p.returncode == 2 and b[0] in p.stderr for p, b in zip(res, bad)),
   "bad connection options: exit 2 naming the option", [(b, p.returncode, p.stderr) for p, b in zip(res, bad)])
helptext = subprocess.run([CRUCIBLE, "serve", "--help"], capture_output=True, text=True).stdout
ok(all(o in helptext for o in ("--max-connections", "--max-per-address", "--header-timeout",
                               "--body-timeout")), "serve --help lists the connection options")

# --- one address, many connections -------------------------------------------------------------
s = serve("--header-timeout", "4", "--max-per-address", "50")
base = s.fd_count()
socks = [stall(s, "127.0.0.2") for _ in range(300)]
time.sleep(1)
held = [c for c in socks if c is not None and not closed_by_server(c)]
n = s.fd_count()
ok(len(held) <= 50 and n <= base + 50 + 5,
   "--max-per-address 50: 300 connections from 127.0.0.2, %d kept (server: %d fds, baseline %d)"
   % (len(held), n, base))
st = s.healthz()
ok(st == 200, "... and /healthz from 127.0.0.1 answers", st)
for c in socks:
    if c is not None:
        c.close()

# --- 4,200 idle half-sent requests from 200 addresses, 21 each ------------------------------
t0 = time.time()
socks = [stall(s, "127.0.%d.%d" % (1 + i // 200, 2 + i % 200)) for i in range(4200)]
opened = time.time() - t0
kept = sum(1 for c in socks if c is not None)
st = s.healthz()
n = s.fd_count()
ok(st == 200, "4,200 idle half-sent requests from 200 addresses (%d accepted in %.1f s; server: %d fds): /healthz answers"
   % (kept, opened, n), st)
after = fds_settle(s, base + 10, 15)
gone = sum(1 for c in socks if c is not None and closed_by_server(c))
ok(after < base + 10 and gone == kept,
   "the header timeout closed them: %d of %d closed by the server, %d fds (baseline %d)"
   % (gone, kept, after, base))
for c in socks:
    if c is not None:
        c.close()

# --- trickling: a byte a second is never idle, and still dropped at the timeout ------------------
def trickle(data, seconds):
    c = stall(s, "127.0.0.3", data[:1])
    t0 = time.time()
    i = 1
    while time.time() - t0 < seconds:
        if closed_by_server(c):
            return time.time() - t0
        c.setblocking(True)
        try:
            c.sendall(data[i:i + 1] or b"x")
        except OSError:
            return time.time() - t0
        i += 1
        time.sleep(0.5)
    c.close()
    return None


t = trickle(PARTIAL + b"ation/json\r\n" * 20, 12)
ok(t is not None and t < 10, "headers trickled a byte every 0.5 s: dropped at the 4 s header timeout (%s s)"
   % (t and round(t, 1)))
s.stop()

s = serve("--body-timeout", "3")
head = b"POST /v1/run HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
c = stall(s, "127.0.0.4", head)
t0 = time.time()
dropped = None
while time.time() - t0 < 12:
    if closed_by_server(c):
        dropped = time.time() - t0
        break
    c.setblocking(True)
    try:
        c.sendall(b" ")
    except OSError:
        dropped = time.time() - t0
        break
    time.sleep(0.5)
c.close()
ok(dropped is not None and dropped < 9, "a body trickled a byte every 0.5 s: dropped at the 3 s body timeout (%s s)"
   % (dropped and round(dropped, 1)))
s.stop()

# --- a full table: the oldest connection still sending headers makes room -----------------------
s = serve("--max-connections", "200", "--header-timeout", "60")
base = s.fd_count()
socks = [stall(s, "127.0.1.%d" % (2 + i % 100)) for i in range(600)]
time.sleep(0.5)
n = s.fd_count()
st = s.healthz()
oldest_closed = sum(1 for c in socks[:300] if c is not None and closed_by_server(c))
newest_open = sum(1 for c in socks[-100:] if c is not None and not closed_by_server(c))
ok(st == 200 and n <= base + 200 + 70,
   "--max-connections 200, 600 stalled clients from 100 addresses: /healthz answers (%s), %d fds (baseline %d)"
   % (st, n, base))
ok(oldest_closed == 300 and newest_open >= 90,
   "... the oldest were dropped to make room (%d of the first 300 closed, %d of the last 100 open)"
   % (oldest_closed, newest_open))
# A request in progress is not dropped for room: a running job keeps its connection.
c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
c.request("POST", "/v1/run", body=json.dumps({"command": ["/bin/sh", "-c", "sleep 1; echo kept"]}))
more = [stall(s, "127.0.2.%d" % (2 + i % 100)) for i in range(300)]
try:
    r = c.getresponse()
    res = (r.status, json.loads(r.read())["stdout"])
except (OSError, http.client.HTTPException, ValueError) as e:
    res = repr(e)
ok(res == (200, "kept\n"), "... while a request being answered keeps its connection", res)
for x in socks + more:
    if x is not None:
        x.close()
s.stop()

done()
