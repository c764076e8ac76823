"""Shared pieces of the 94-offloop-*.t tests: a real `crucible serve` on loopback, its memory
from /proc/PID/status, and a large request sent while /healthz is polled on other connections
(the loop must keep answering while an api worker parses or imports)."""
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import tempfile
import time

from taplib import CRUCIBLE, track

TMP = tempfile.mkdtemp(prefix="crucible-offloop-")

# Under AddressSanitizer freed memory sits in a quarantine and every block has redzones: the
# server's RSS says nothing about its heap then, and the memory checks are skipped.
with open(CRUCIBLE, "rb") as _f:
    SANITIZED = b"__asan_init" in _f.read()


class Server:
    def __init__(self, *args):
        stamp = time.monotonic_ns()
        self.port_file = os.path.join(TMP, "port-%d" % stamp)
        self.log = open(os.path.join(TMP, "log-%d" % stamp), "w+")
        self.p = track(subprocess.Popen([CRUCIBLE, "serve", "--listen", "127.0.0.1:0", "--quiet",
                                         "--port-file", self.port_file] + list(args),
                                        stdout=subprocess.DEVNULL, stderr=self.log))
        deadline = time.time() + 20
        while time.time() < deadline and not os.path.exists(self.port_file):
            if self.p.poll() is not None:
                break
            time.sleep(0.02)
        time.sleep(0.05)
        self.port = int(open(self.port_file).read())

    def request(self, method, path, body=None, timeout=120):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        c.request(method, path, body=body)
        r = c.getresponse()
        text = r.read().decode()
        c.close()
        try:
            j = json.loads(text)
        except ValueError:
            j = None
        return r.status, j, text

    def status_kb(self, field):
        """VmRSS, VmHWM... of the server, in kB."""
        for line in open("/proc/%d/status" % self.p.pid):
            if line.startswith(field + ":"):
                return int(line.split()[1])
        return 0

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None


def big_request_with_probes(srv, method, path, body, content_type="application/json"):
    """Sends one large request on a raw socket; once all of its body is written, polls
    GET /healthz on fresh connections until the large request's answer starts to arrive.
    Returns (status of the large request, its answer text, number of /healthz answers that
    came back after the body was sent and before the large answer was readable, all
    /healthz statuses). An ordering, not a timing: on a loop that parses the body itself,
    the first probe waits until the answer is already out."""
    s = socket.create_connection(("127.0.0.1", srv.port))
    head = ("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
            "Connection: close\r\n\r\n" % (method, path, content_type, len(body))).encode()
    s.sendall(head + body)
    time.sleep(0.2)  # lets the server take the last bytes in (pacing only, not asserted)
    before, statuses = 0, []
    while True:
        readable = select.select([s], [], [], 0)[0]
        if readable:
            break
        st, j, _ = srv.request("GET", "/healthz")
        statuses.append(st)
        if not select.select([s], [], [], 0)[0]:
            before += 1
        if len(statuses) > 100000:
            break
        time.sleep(0.01)  # pacing: the machine is shared
    chunks = []
    while True:
        b = s.recv(1 << 16)
        if not b:
            break
        chunks.append(b)
    s.close()
    raw = b"".join(chunks).decode(errors="replace")
    status = int(raw.split(" ", 2)[1]) if raw.startswith("HTTP/") else 0
    text = raw.split("\r\n\r\n", 1)[1] if "\r\n\r\n" in raw else raw
    return status, text, before, statuses
