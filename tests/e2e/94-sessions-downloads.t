#!/usr/bin/python3
# A session's downloads count against the server's output budget (serve --output-budget-mb,
# issue 13), as run outputs do. With the smallest budget (16 MB): a file larger than the budget
# is refused (413) though --max-body would allow it; a 15 MB download answers whole; while a
# client that does not read holds a 15 MB download, another download (one file or a tar) is
# answered 503 output_budget with Retry-After; once that client read its answer, the budget is
# free again (output_held_bytes back to 0) and the download works. Standard library only.
import http.client
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-sessions-downloads-")
MB = 1 << 20

srv = Server("--warm", "0", "--session-spares", "0", "--output-budget-mb", "16",
             "--max-body", "64", tmp=TMP)
st, j, text = srv.post("/v1/sessions", {"limits": {"disk_mb": 64}})
if st != 201:
    print("Bail out! cannot create a session: %s" % text)
    sys.exit(255)
sid = j["id"]
big = os.urandom(15 * MB)
st, j, text = srv.request("PUT", "/v1/sessions/%s/files?path=/work/big" % sid, big)
ok(st == 200, "a 15 MB file put in the session", text)
st, j, text = srv.request("PUT", "/v1/sessions/%s/files?path=/work/huge" % sid,
                          os.urandom(17 * MB))
ok(st == 200, "a 17 MB file put in the session (--max-body 64)", text)

r, data = srv.exchange("GET", "/v1/sessions/%s/files?path=/work/huge" % sid)
ok(r.status == 413 and b"too_large" in data,
   "a 17 MB download is refused: bounded by the 16 MB budget, not --max-body", data[:300])
r, data = srv.exchange("GET", "/v1/sessions/%s/files?path=/work/big" % sid)
ok(r.status == 200 and data == big, "a 15 MB download answers whole")
ok(srv.metric("crucible_output_held_bytes") == 0, "nothing held once it was read")

# A client that asks for the 15 MB file and reads nothing: its answer stays in the server (more
# than the loopback socket buffers take) and holds the budget.
slow = socket.create_connection(("127.0.0.1", srv.port))
slow.sendall(("GET /v1/sessions/%s/files?path=/work/big HTTP/1.1\r\nHost: x\r\n"
              "Connection: close\r\n\r\n" % sid).encode())
held, busy = 0, True
deadline = time.time() + 30
# busy first: while the file is read the whole budget is reserved, and the read's exact size
# is held from before the session is free again, so a held read after "not busy" is final
while time.time() < deadline and (busy or held < 15 * MB):  # until read and answered
    busy = srv.request("GET", "/v1/sessions/" + sid)[1]["busy"]
    held = srv.metric("crucible_output_held_bytes") or 0
    time.sleep(0.05)
ok(held == len(big), "the unread download holds its 15 MB of the budget (%d bytes)" % held)
r, data = srv.exchange("GET", "/v1/sessions/%s/files?path=/work/big" % sid)
ok(r.status == 503 and b"output_budget" in data and r.getheader("Retry-After"),
   "meanwhile another download is answered 503 output_budget with Retry-After", data[:300])
r, data = srv.exchange("GET", "/v1/sessions/%s/files?path=/work&format=tar" % sid)
ok(r.status == 503 and b"output_budget" in data, "and so is a tar", data[:300])
st, j, text = srv.post("/v1/sessions/%s/exec" % sid, {"command": "echo ok"})
ok(st == 200 and j["stdout"] == "ok\n", "the session itself still works", text)

got = b""
slow.settimeout(30)
try:
    while True:
        chunk = slow.recv(1 << 20)
        if not chunk:
            break
        got += chunk
except OSError:
    pass
slow.close()
ok(got.endswith(big), "the slow client gets its whole answer once it reads")
deadline = time.time() + 30
while time.time() < deadline and srv.metric("crucible_output_held_bytes") != 0:
    time.sleep(0.05)
ok(srv.metric("crucible_output_held_bytes") == 0, "then the budget is free again")
r, data = srv.exchange("GET", "/v1/sessions/%s/files?path=/work/big" % sid)
ok(r.status == 200 and data == big, "and a download works again")
ok(srv.stop() == 0, "the server stops cleanly")
done()
