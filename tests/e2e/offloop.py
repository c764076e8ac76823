"""Shared pieces of the 94-offloop-*.t tests: a real `crucible serve` on loopback
(serverlib.Server), and a large request sent while /healthz is polled on other connections
(the loop must keep answering while an api worker parses or imports)."""
import select
import time

from serverlib import SANITIZED, Server, tmpdir  # noqa: F401 (SANITIZED: for the tests)

TMP = tmpdir("crucible-offloop-")

def serve(*args):
    """A server with these tests' patience: 120 s for an answer, 60 s to stop."""
    return Server(*args, tmp=TMP, timeout=120, stop_timeout=60)


def big_request_with_probes(srv, method, path, body, content_type="application/json"):
    """Sends one large request on a raw socket; once all of its body is written, polls
    GET /healthz on fresh connections until the large request's answer starts to arrive.
    Returns (status of the large request, its answer text, number of /healthz answers that
    came back after the body was sent and before the large answer was readable, all
    /healthz statuses). An ordering, not a timing: on a loop that parses the body itself,
    the first probe waits until the answer is already out."""
    head = ("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
            "Connection: close\r\n\r\n" % (method, path, content_type, len(body))).encode()
    s = srv.connect(head + body, timeout=None)
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
