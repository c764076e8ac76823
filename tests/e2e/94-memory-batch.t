#!/usr/bin/python3
# Memory crucible serve holds for /v1/batch, measured from the server's own RSS
# (/proc/PID/status VmHWM, the peak) with generous bounds: a client that stops reading the
# NDJSON stream holds back the batch's further items (--stream-buffer-mb) and is cancelled
# with a logged reason (--stream-stall-s, or 4x the buffer unsent) while /healthz keeps
# answering; a 10,000-item batch naming an image resolves it once, not once per item.
# Standard library only.
import http.client
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, ok_rss, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-memory-")
MB = 1024


def serve(*args):
    """A server with no warm sandboxes that logs its events (no --quiet)."""
    return Server("--warm", "0", *args, tmp=TMP, quiet=False, timeout=60)


# Each item prints 2 MiB: a 2 MiB line of the stream.
TWO_MB = {"kind": "run", "command": ["python3", "-c", "import os\nos.write(1, b'a' * (2 << 20))\n"],
          "limits": {"output_kb": 4096}}

# --- a client that reads keeps getting every line ----------------------------------------
s = serve("--slots", "2", "--stream-buffer-mb", "1", "--stream-stall-s", "3")
s.request("POST", "/v1/run", {"command": ["true"]})
c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=60)
c.request("POST", "/v1/batch", body=json.dumps({"items": [TWO_MB] * 12}))
r = c.getresponse()
lines = [json.loads(x) for x in r.read().splitlines()]
c.close()
ok(r.status == 200 and len(lines) == 12 and all(len(x["result"]["stdout"]) == 2 << 20 for x in lines),
   "a client that reads gets all 12 lines of 2 MiB (the window and the pauses lose nothing)",
   [x.get("index") for x in lines])

s.stop()

# --- a client that stops reading ---------------------------------------------------------
s = serve("--slots", "2", "--stream-buffer-mb", "1", "--stream-stall-s", "3")
s.request("POST", "/v1/run", {"command": ["true"]})
base = s.status_kb("VmHWM")
sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
sock.connect(("127.0.0.1", s.port))
body = json.dumps({"items": [TWO_MB] * 150}).encode()
sock.sendall(b"POST /v1/batch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Content-Length: %d\r\n\r\n" % len(body) + body)
# ... and never reads. The old server ran all 150 items and kept their 300 MB of lines.
t0 = time.time()
health = []
cancelled = []
while time.time() - t0 < 40 and not cancelled:
    st, h, _ = s.request("GET", "/healthz", timeout=10)
    health.append(st)
    cancelled = [e for e in s.events("batch_cancelled") if "did not read" in e.get("reason", "")]
    time.sleep(0.5)
grew = s.status_kb("VmHWM") - base
ok(cancelled, "a batch whose client stops reading is cancelled, with the reason logged",
   s.events("batch_cancelled"))
ok(cancelled and cancelled[0]["finished"] < 40,
   "... after few of its 150 items ran (back-pressure held the rest)", cancelled)
ok_rss(grew < 120 * MB, "server peak RSS grew %d MiB (< 120) meanwhile" % (grew // MB))
ok(health and all(x == 200 for x in health), "/healthz answered throughout (%d probes)" % len(health))
time.sleep(0.5)
st, h, _ = s.request("GET", "/healthz")
ok(st == 200 and h["running"] == 0 and h["queued"] == 0, "nothing of the batch is left running", h)
sock.close()
s.stop()

# --- a 10,000-item batch naming an image holds it once ------------------------------------
img = os.path.join(TMP, "rootfs")
for d in ("usr", "bin", "lib", "etc"):
    os.makedirs(os.path.join(img, d), exist_ok=True)
s = serve("--slots", "2", "--queue", "20000", "--image", "small=" + img)
s.request("POST", "/v1/run", {"command": ["true"]})
base = s.status_kb("VmHWM")
items = [{"kind": "run", "command": ["false"]}] + \
    [{"kind": "run", "command": ["true"], "image": "small", "after": [0]} for _ in range(9999)]
st, _, text = s.request("POST", "/v1/batch", {"items": items}, timeout=120)
grew = s.status_kb("VmHWM") - base
lines = [json.loads(x) for x in text.splitlines()]
ok(st == 200 and len(lines) == 10000 and sum(1 for x in lines if x.get("skipped")) == 9999,
   "a 10,000-item batch naming an image: answered (its items skipped after item 0 failed)",
   text[:300])
ok_rss(grew < 120 * MB, "server peak RSS grew %d MiB (< 120; 345 MB before)" % (grew // MB))
s.stop()

done()
