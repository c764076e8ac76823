"""Client behaviour that needs no crucible: request shapes, error mapping, 429 retries,
batch streaming and early close, against a small scripted HTTP server in a thread; and
the pure helpers of the reward adapters. The real server is exercised by test_client.py.
"""

import base64
import io
import os
import json
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from crucible_client import (
    Client,
    CrucibleError,
    CrucibleInfraError,
    CrucibleOverloaded,
    CrucibleUnavailable,
    run_item,
    verify_item,
)
from crucible_client import rewards


class Stub:
    """A scripted server: ``routes[(method, path)] = fn(handler, body)`` (``path`` with its
    query string, or without it to match any); requests are recorded in ``seen`` as
    (method, path, headers, body): a JSON body decoded, any other as bytes."""

    def __init__(self):
        self.routes = {}
        self.seen = []
        self.events = []
        stub = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _any(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                if raw and self.headers.get("Content-Type") == "application/json":
                    body = json.loads(raw)
                else:
                    body = raw or None  # other bodies (JSONL) as bytes
                stub.seen.append((self.command, self.path, dict(self.headers), body))
                fn = stub.routes.get((self.command, self.path)) or stub.routes.get(
                    (self.command, self.path.split("?")[0]))  # a route without its query
                if fn is None:
                    self.reply(404, {"error": {"code": "not_found", "message": "no route"}})
                    return
                fn(self, body)

            do_GET = do_POST = do_PUT = do_DELETE = _any

            def reply(self, status, obj, headers=None, raw=None):
                data = raw if raw is not None else json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def chunk(self, data):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        # polled every 50 ms for shutdown (the default 0.5 s was half a second per test)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.close()


def fast(url, **kw):
    c = Client(url, **kw)
    c.slept = []
    c._sleep = c.slept.append  # record the waits instead of sleeping
    return c


# --- request shapes ------------------------------------------------------------------


def test_run_body_and_bytes(stub):
    stub.routes[("POST", "/v1/run")] = lambda h, b: h.reply(200, {"status": "ok"})
    c = fast(stub.url, token="s3cret")
    assert c.run(["python3", "-c", "print(1)"], stdin=b"\x00\xff", files={"a.txt": "text", "b.bin": b"\x01"},
                 limits={"cpu_time": 2}, image="host", priority="high", deadline_s=5) == {"status": "ok"}
    method, path, headers, body = stub.seen[-1]
    assert headers["Authorization"] == "Bearer s3cret"
    assert headers["Content-Type"] == "application/json"
    assert body == {"command": ["python3", "-c", "print(1)"],
                    "stdin": {"base64": base64.b64encode(b"\x00\xff").decode()},
                    "files": {"a.txt": "text", "b.bin": {"base64": "AQ=="}},
                    "limits": {"cpu_time": 2}, "image": "host", "priority": "high", "deadline_s": 5}
    c.run(code="print(1)", language="python", stdin="text in")
    assert stub.seen[-1][3] == {"code": "print(1)", "language": "python", "stdin": "text in"}
    c.run("echo hi | tr a-z A-Z")
    assert stub.seen[-1][3] == {"command": ["/bin/sh", "-c", "echo hi | tr a-z A-Z"]}


def test_run_argument_errors():
    c = Client("http://127.0.0.1:9")
    with pytest.raises(ValueError):
        c.run()
    with pytest.raises(ValueError):
        c.run(["true"], code="x", language="python")
    with pytest.raises(ValueError):
        c.run(code="print(1)")
    with pytest.raises(TypeError):
        c.run(["cat"], stdin=123)
    with pytest.raises(ValueError):
        c.verify({"id": "t"}, solution="a", response="b")
    with pytest.raises(ValueError):
        c.verify({"id": "t"})


def test_verify_and_batch_body(stub):
    stub.routes[("POST", "/v1/verify")] = lambda h, b: h.reply(200, {"verdict": "accepted", "reward": 1.0})
    c = fast(stub.url)
    task = {"id": "t", "language": "python", "harness": "stdio", "tests": []}
    c.verify(json.dumps(task), completion="x", repeats=3, reward="fraction")
    assert stub.seen[-1][3] == {"task": task, "completion": "x", "repeats": 3, "reward": "fraction"}
    assert run_item(["true"], after=[1]) == {"kind": "run", "command": ["true"], "after": [1]}
    assert verify_item(task, response="r") == {"kind": "verify", "task": task, "response": "r"}


def test_verify_language_body(stub):
    stub.routes[("POST", "/v1/verify")] = lambda h, b: h.reply(200, {"verdict": "accepted", "reward": 1.0})
    c = fast(stub.url)
    task = {"id": "t", "language": "python", "harness": "stdio", "tests": []}
    c.verify(task, solution="int main() {}", language="cpp")
    assert stub.seen[-1][3] == {"task": task, "solution": "int main() {}", "language": "cpp"}
    c.verify(task_id="kattis/hello", model="m", response="r", language="c++")
    assert stub.seen[-1][3] == {"task_id": "kattis/hello", "model": "m", "response": "r",
                                "language": "c++"}
    assert verify_item(task, response="r", language="c", after=[0]) == {
        "kind": "verify", "task": task, "response": "r", "language": "c", "after": [0]}
    assert "language" not in verify_item(task, solution="s")
    for bad in ("", 7, ["cpp"]):
        with pytest.raises(TypeError):
            c.verify(task, solution="s", language=bad)
        with pytest.raises(TypeError):
            verify_item(task, solution="s", language=bad)
    assert len([x for x in stub.seen if x[1] == "/v1/verify"]) == 2  # nothing sent for those


def test_run_code_files_bytes(stub):
    stub.routes[("POST", "/run_code")] = lambda h, b: h.reply(200, {"status": "Success"})
    c = fast(stub.url)
    c.run_code(code="print(1)", language="python", files={"x": b"\x00", "y": "AA=="}, fetch_files=[])
    assert stub.seen[-1][3]["files"] == {"x": "AA==", "y": "AA=="}


def test_url_prefix_and_metrics(stub):
    stub.routes[("GET", "/pre/fix/metrics")] = lambda h, b: h.reply(200, None, raw=b"crucible_up 1\n")
    assert Client(stub.url + "/pre/fix/").metrics() == "crucible_up 1\n"


# --- the task library ---------------------------------------------------------------


def query_of(path):
    """The query string of a recorded path, as a dict (each parameter once)."""
    parts = urllib.parse.urlsplit(path)
    q = urllib.parse.parse_qs(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query))
    assert all(len(v) == 1 for v in q.values()), q
    return parts.path, {k: v[0] for k, v in q.items()}


def test_library_query_strings(stub):
    stub.routes[("GET", "/v1/tasks")] = lambda h, b: h.reply(200, {"count": 0, "tasks": []})
    stub.routes[("GET", "/v1/tasks/sample")] = lambda h, b: h.reply(200, {"seed": 1, "count": 0, "tasks": []})
    stub.routes[("GET", "/v1/tasks/stats")] = lambda h, b: h.reply(200, {"tasks": 0})
    c = fast(stub.url)
    assert c.tasks() == []
    assert stub.seen[-1][1] == "/v1/tasks"  # no filter, no "?"
    c.tasks(tag=["math", "easy"], source="mbpp", language="python", id_prefix="mbpp/1",
            status=["new", "valid"], exclude="broken", min_pass=0.1, max_pass=0.9,
            model="step 120/a&b", limit=5)
    assert query_of(stub.seen[-1][1]) == ("/v1/tasks", {
        "tag": "math,easy", "source": "mbpp", "language": "python", "id_prefix": "mbpp/1",
        "status": "new,valid", "exclude": "broken", "min_pass": "0.1", "max_pass": "0.9",
        "model": "step 120/a&b", "limit": "5"})
    assert "&b" not in stub.seen[-1][1].split("model=")[1].split("&")[0]  # quoted
    c.tasks(tag="a,b", exclude=[], model=None)  # a string as is; an empty exclude: none
    assert query_of(stub.seen[-1][1]) == ("/v1/tasks", {"tag": "a,b", "exclude": "none"})

    assert c.sample_tasks(8, seed=0, explore=0, min_pass=0.2, model="m", tag=("x",)) == {
        "seed": 1, "count": 0, "tasks": []}
    assert query_of(stub.seen[-1][1]) == ("/v1/tasks/sample", {
        "n": "8", "seed": "0", "explore": "0", "min_pass": "0.2", "model": "m", "tag": "x"})
    c.sample_tasks(3)
    assert stub.seen[-1][1] == "/v1/tasks/sample?n=3"
    c.task_stats(model="m", status="valid")
    assert query_of(stub.seen[-1][1]) == ("/v1/tasks/stats", {"model": "m", "status": "valid"})
    c.task_stats()
    assert stub.seen[-1][1] == "/v1/tasks/stats"

    with pytest.raises(ValueError, match="comma"):
        c.tasks(tag=["a,b"])
    with pytest.raises(TypeError):
        c.tasks(tag=[1])
    with pytest.raises(TypeError):
        c.tasks(exclude=b"broken")
    with pytest.raises(TypeError):
        c.tasks(tags="x")  # a misspelt filter is no silent no-op
    with pytest.raises(TypeError):
        c.sample_tasks(2, explore=True)


def test_library_task_path_quoted(stub):
    stub.routes[("GET", "/v1/tasks/mbpp/2")] = lambda h, b: h.reply(200, {"id": "mbpp/2"})
    stub.routes[("GET", "/v1/tasks/a%20b%3Fc%23d%25e%2B")] = lambda h, b: h.reply(200, {"id": "odd"})
    stub.routes[("GET", "/v1/tasks/caf%C3%A9")] = lambda h, b: h.reply(200, {"id": "cafe"})
    c = fast(stub.url)
    assert c.task("mbpp/2") == {"id": "mbpp/2"}
    assert stub.seen[-1][1] == "/v1/tasks/mbpp/2"  # the "/" is kept
    c.task("mbpp/2", model="step-1")
    assert stub.seen[-1][1] == "/v1/tasks/mbpp/2?model=step-1"
    assert c.task("a b?c#d%e+") == {"id": "odd"}
    assert c.task("caf\u00e9") == {"id": "cafe"}
    with pytest.raises(TypeError):
        c.task("")


def test_library_import_body(stub):
    answer = {"new": 2, "changed": 0, "unchanged": 0, "bad": 0, "errors": []}
    stub.routes[("POST", "/v1/tasks")] = lambda h, b: h.reply(200, answer)
    c = fast(stub.url, token="t")
    t1 = {"id": "a/1", "language": "python", "harness": "stdio", "tests": [], "prompt": "\u00e9\n"}
    t2 = {"id": "a/2", "language": "c", "harness": "stdio", "tests": []}
    assert c.import_tasks([t1, json.dumps(t2)]) == answer
    _, path, headers, body = stub.seen[-1]
    assert path == "/v1/tasks" and headers["Content-Type"] == "application/x-ndjson"
    assert headers["Authorization"] == "Bearer t"
    lines = body.decode("utf-8").split("\n")
    assert lines[-1] == "" and [json.loads(x) for x in lines[:-1]] == [t1, t2]
    c.import_tasks(t for t in [t1])  # any iterable
    assert json.loads(stub.seen[-1][3]) == t1
    text = '{"id": "x"}\nnot json\n'
    c.import_tasks(text)
    assert stub.seen[-1][3] == text.encode()  # JSONL text is sent as is, bad lines and all
    c.import_tasks(text.encode())
    assert stub.seen[-1][3] == text.encode()
    with pytest.raises(TypeError):
        c.import_tasks(t1)  # one task is not an iterable of tasks
    with pytest.raises(TypeError):
        c.import_tasks(42)


def test_library_import_no_valid_line_is_400(stub):
    bad = {"new": 0, "changed": 0, "unchanged": 0, "bad": 2,
           "errors": [{"line": 1, "message": "not valid JSON"}, {"line": 2, "message": "missing field 'id'"}]}
    stub.routes[("POST", "/v1/tasks")] = lambda h, b: h.reply(400, bad)
    with pytest.raises(CrucibleError) as ei:
        fast(stub.url).import_tasks("x\n{}\n")
    e = ei.value
    assert (e.status, e.code) == (400, "bad_request") and e.body == bad
    assert "line 1: not valid JSON" in e.message and "line 2: missing field 'id'" in e.message
    route, state = overloaded_then_ok(1, "1")  # 429 is retried as for any request
    stub.routes[("POST", "/v1/tasks")] = route
    c = fast(stub.url)
    assert c.import_tasks([{"id": "a"}]) == {"status": "ok"}
    assert state["n"] == 2 and len(c.slept) == 1


def test_verify_by_task_id_body(stub):
    stub.routes[("POST", "/v1/verify")] = lambda h, b: h.reply(200, {"verdict": "accepted"})
    c = fast(stub.url)
    c.verify(task_id="mbpp/2", model="step-120", response="r", reward="fraction")
    assert stub.seen[-1][3] == {"task_id": "mbpp/2", "model": "step-120", "response": "r",
                                "reward": "fraction"}
    c.verify(task_id="mbpp/2", solution="s")
    assert stub.seen[-1][3] == {"task_id": "mbpp/2", "solution": "s"}
    assert verify_item(task_id="t/1", model="m", completion="c", after=[0]) == {
        "kind": "verify", "task_id": "t/1", "model": "m", "completion": "c", "after": [0]}
    task = {"id": "t"}
    for bad in (dict(task=task, task_id="t"), dict(), dict(task=task, model="m")):
        with pytest.raises(ValueError):
            c.verify(solution="s", **bad)
        with pytest.raises(ValueError):
            verify_item(solution="s", **bad)
    with pytest.raises(TypeError):
        c.verify(task_id=7, solution="s")
    with pytest.raises(TypeError):
        c.verify(task_id="t", model="", solution="s")
    assert len([x for x in stub.seen if x[1] == "/v1/verify"]) == 2  # nothing sent for those


# --- errors --------------------------------------------------------------------------


def test_error_mapping(stub):
    stub.routes[("POST", "/v1/run")] = lambda h, b: h.reply(
        400, {"error": {"code": "bad_request", "message": "limits.cpu_time: out of range"}})
    stub.routes[("GET", "/healthz")] = lambda h, b: h.reply(502, None, raw=b"<html>bad gateway</html>")
    c = fast(stub.url)
    with pytest.raises(CrucibleError) as ei:
        c.run(["true"], limits={"cpu_time": -1})
    e = ei.value
    assert (e.status, e.code, e.message) == (400, "bad_request", "limits.cpu_time: out of range")
    assert not isinstance(e, (CrucibleOverloaded, CrucibleUnavailable))
    assert "bad_request" in str(e)
    with pytest.raises(CrucibleError) as ei:
        c.health()
    assert ei.value.status == 502 and ei.value.code == "http_502" and "bad gateway" in ei.value.message
    assert c.slept == []  # nothing but 429 is retried


def test_unavailable():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    with pytest.raises(CrucibleUnavailable) as ei:
        Client("http://127.0.0.1:%d" % port, timeout=5).health()
    assert ei.value.status is None and ei.value.code == "unavailable"
    assert isinstance(ei.value, CrucibleError)


def test_job_resent_with_its_key_after_a_reset(stub):
    # A gateway restarting cuts the connection: the job is sent again with the same
    # Idempotency-Key (the gateway answers it from the first admission); a health check is not.
    calls = []

    def flaky(h, b):
        calls.append(h.headers.get("Idempotency-Key"))
        if len(calls) < 3:
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)  # no answer: a reset
            return
        h.reply(200, {"status": "ok"})

    stub.routes[("POST", "/v1/run")] = flaky
    c = fast(stub.url)
    assert c.run(["true"]) == {"status": "ok"}
    assert len(calls) == 3 and calls[0] and len(set(calls)) == 1
    assert c.slept == [0.25, 0.5]
    assert c.run(["true"]) == {"status": "ok"}
    assert calls[3] != calls[0]  # each job its own key
    stub.routes[("POST", "/v1/run")] = lambda h, b: h.connection.shutdown(socket.SHUT_RDWR)
    with pytest.raises(CrucibleUnavailable):
        fast(stub.url, resend_for=0).run(["true"])  # turned off: the first failure raised
    assert [x[2].get("Idempotency-Key") for x in stub.seen if x[1] == "/healthz"] == []


def test_timeout_is_unavailable(stub):
    stub.routes[("GET", "/healthz")] = lambda h, b: time.sleep(2)
    with pytest.raises(CrucibleUnavailable):
        Client(stub.url, timeout=0.3).health()


def overloaded_then_ok(n_429, retry_after="2"):
    state = {"n": 0}

    def route(h, body):
        state["n"] += 1
        if state["n"] <= n_429:
            hdr = {"Retry-After": retry_after} if retry_after is not None else {}
            h.reply(429, {"error": {"code": "overloaded", "message": "queue full"}}, hdr)
        else:
            h.reply(200, {"status": "ok"})

    return route, state


def test_429_retried_with_retry_after(stub):
    route, state = overloaded_then_ok(2, "2")
    stub.routes[("POST", "/v1/run")] = route
    c = fast(stub.url)
    assert c.run(["true"]) == {"status": "ok"}
    assert state["n"] == 3
    assert len(c.slept) == 2 and all(2.0 <= s <= 2.2 for s in c.slept)


def test_429_sleep_capped_and_backoff(stub):
    route, _ = overloaded_then_ok(1, "3600")
    stub.routes[("POST", "/v1/run")] = route
    c = fast(stub.url, max_retry_wait=1.5)
    c.run(["true"])
    assert c.slept == [1.5]
    route, _ = overloaded_then_ok(3, None)  # no Retry-After: exponential backoff
    stub.routes[("POST", "/v1/run")] = route
    c = fast(stub.url, retry_backoff=0.5)
    c.run(["true"])
    assert [round(s, 1) for s in c.slept] == [pytest.approx(0.5, abs=0.06), pytest.approx(1.0, abs=0.11),
                                             pytest.approx(2.0, abs=0.21)]


def test_429_retries_exhausted_or_disabled(stub):
    route, state = overloaded_then_ok(100, "1")
    stub.routes[("POST", "/v1/run")] = route
    c = fast(stub.url, max_retries=2)
    with pytest.raises(CrucibleOverloaded) as ei:
        c.run(["true"])
    assert state["n"] == 3 and len(c.slept) == 2
    assert ei.value.status == 429 and ei.value.code == "overloaded" and ei.value.retry_after == 1.0
    state["n"] = 0
    c = fast(stub.url, max_retries=0)
    with pytest.raises(CrucibleOverloaded):
        c.run(["true"])
    assert state["n"] == 1 and c.slept == []


def test_retry_after_http_date(stub):
    from email.utils import formatdate

    route, _ = overloaded_then_ok(1, formatdate(time.time() + 5, usegmt=True))
    stub.routes[("POST", "/v1/run")] = route
    c = fast(stub.url)
    c.run(["true"])
    assert 3.0 <= c.slept[0] <= 6.0


# --- batch streaming -----------------------------------------------------------------


def streaming_route(lines, delay, gate=None, events=None):
    def route(h, body):
        h.send_response(200)
        h.send_header("Content-Type", "application/x-ndjson")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        try:
            for line in lines:
                data = (json.dumps(line) + "\n").encode()
                # split each line over two chunks: the client must reassemble them
                h.chunk(data[:5])
                h.chunk(data[5:])
                if gate is not None:
                    gate.wait(10)
                time.sleep(delay)
            h.wfile.write(b"0\r\n\r\n")
            h.wfile.flush()
            if events is not None:
                events.append("finished")
        except OSError:
            if events is not None:
                events.append("client gone")
        h.close_connection = True

    return route


def test_batch_lines_arrive_incrementally(stub):
    lines = [{"index": 1, "result": {"status": "ok"}}, {"index": 0, "result": {"status": "ok"}}]
    stub.routes[("POST", "/v1/batch")] = streaming_route(lines, 1.0)
    c = fast(stub.url)
    t0 = time.monotonic()
    stream = c.batch([run_item(["true"]), run_item(["true"], after=[0])], priority="low", deadline_s=9)
    first = next(stream)
    assert first == lines[0]
    assert time.monotonic() - t0 < 0.8  # not waiting for the whole body
    rest = list(stream)
    assert rest == [lines[1]] and stream.closed
    body = stub.seen[-1][3]
    assert body["priority"] == "low" and body["deadline_s"] == 9
    assert body["items"][1]["after"] == [0]


def test_batch_early_close_drops_connection(stub):
    events = []
    lines = [{"index": i, "result": {}} for i in range(50)]
    stub.routes[("POST", "/v1/batch")] = streaming_route(lines, 0.05, events=events)
    c = fast(stub.url)
    for line in c.batch([run_item(["true"])] * 50):
        break  # the stream is dropped here: its connection must close
    deadline = time.monotonic() + 5
    while not events and time.monotonic() < deadline:
        time.sleep(0.05)
    assert events == ["client gone"]


def test_batch_stream_cut_short(stub):
    def route(h, body):
        h.send_response(200)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        h.chunk(b'{"index": 0, "result": {}}\n')
        h.wfile.write(b"0\r\n\r\n")
        h.close_connection = True

    stub.routes[("POST", "/v1/batch")] = route
    stream = fast(stub.url).batch([run_item(["true"]), run_item(["true"])])
    assert next(stream)["index"] == 0
    with pytest.raises(CrucibleUnavailable, match="1 of 2"):
        next(stream)


def test_batch_resent_with_its_key_after_a_cut(stub):
    # A gateway restarting mid-batch cuts the stream: the batch is sent again with the same
    # Idempotency-Key, and the lines already read are not yielded twice.
    keys = []

    def route(h, body):
        keys.append(h.headers.get("Idempotency-Key"))
        h.send_response(200)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for i in (range(2) if len(keys) == 1 else (1, 0, 3, 2)):
            h.chunk(json.dumps({"index": i, "result": {"n": len(keys)}}).encode() + b"\n")
        if len(keys) == 1:
            h.connection.shutdown(socket.SHUT_RDWR)  # cut: no last chunk
        else:
            h.wfile.write(b"0\r\n\r\n")
        h.close_connection = True

    stub.routes[("POST", "/v1/batch")] = route
    stream = fast(stub.url).batch([run_item(["true"])] * 4)
    got = [(x["index"], x["result"]["n"]) for x in stream]
    assert got == [(0, 1), (1, 1), (3, 2), (2, 2)] and stream.reopened == 1
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]
    keys.clear()
    with pytest.raises(CrucibleUnavailable, match="2 of 4"):
        list(fast(stub.url, resend_for=0).batch([run_item(["true"])] * 4))
    assert keys == [None]  # no key, sent once


def test_batch_429_and_400_raise_at_call(stub):
    stub.routes[("POST", "/v1/batch")] = lambda h, b: h.reply(
        400, {"error": {"code": "bad_request", "message": "items[0]: unknown kind"}})
    with pytest.raises(CrucibleError) as ei:
        fast(stub.url).batch([{"kind": "nope"}])
    assert ei.value.status == 400 and "items[0]" in ei.value.message
    route, state = overloaded_then_ok(1, "1")
    stub.routes[("POST", "/v1/batch")] = route
    with pytest.raises(CrucibleOverloaded):
        fast(stub.url, max_retries=0).batch([run_item(["true"])])


# --- reward helpers ------------------------------------------------------------------


def test_task_from_ground_truth_shapes():
    native = {"id": "n/1", "language": "c", "harness": "stdio",
              "tests": [{"name": "a", "stdin": "", "expected": "1\n"}]}
    assert rewards.task_from_ground_truth(json.dumps(native)) == native
    t = rewards.task_from_ground_truth({"harness": "assert", "tests": [{"name": "x", "code": "pass"}]},
                                       language="python")
    assert t["language"] == "python" and t["id"].startswith("gt/")
    t = rewards.task_from_ground_truth('{"inputs": ["1 2\\n", ["3", "4"]], "outputs": ["3", "7\\n"]}',
                                       language="cpp")
    assert t["harness"] == "stdio" and t["checker"] == "lines" and t["language"] == "cpp"
    assert [x["stdin"] for x in t["tests"]] == ["1 2\n", "3\n4\n"]
    assert [x["expected"] for x in t["tests"]] == ["3", "7\n"]
    t = rewards.task_from_ground_truth({"fn_name": "f", "inputs": [[1, 2]], "outputs": [[3]]})
    assert t["harness"] == "assert" and t["entry_point"] == "f" and len(t["tests"]) == 1
    with pytest.raises(ValueError, match="Python only"):
        rewards.task_from_ground_truth({"fn_name": "f", "inputs": [[1]], "outputs": [1]}, language="java")
    with pytest.raises(ValueError, match="2 inputs but 1 outputs"):
        rewards.task_from_ground_truth({"inputs": ["a", "b"], "outputs": ["a"]})
    with pytest.raises(ValueError, match="neither"):
        rewards.task_from_ground_truth({"answer": 42})
    with pytest.raises(ValueError, match="not JSON"):
        rewards.task_from_ground_truth("42 is the answer")


def test_task_from_numpy_like_ground_truth():
    class Arr:  # what pandas/pyarrow hand verl for list columns
        def __init__(self, xs):
            self.xs = xs

        def tolist(self):
            return list(self.xs)

    t = rewards.task_from_ground_truth({"inputs": Arr(["1\n"]), "outputs": Arr(["1\n"])})
    json.dumps(t)
    assert t["tests"][0]["stdin"] == "1\n"


def test_completion_text():
    assert rewards.completion_text("x") == "x"
    conv = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a1"},
            {"role": "tool", "content": "t"}, {"role": "assistant", "content": [{"type": "text", "text": "a2"}]}]
    assert rewards.completion_text(conv) == "a2"
    assert rewards.completion_text([{"content": "only"}]) == "only"
    with pytest.raises(ValueError):
        rewards.completion_text([{"role": "user", "content": "q"}])


def test_on_infra_error_validated():
    with pytest.raises(ValueError):
        rewards.compute_score("d", "x", '{"inputs": ["1"], "outputs": ["1"]}', on_infra_error="ignore")
    with pytest.raises(ValueError):
        rewards.make_reward_func(on_infra_error="zero!")


def test_adapters_on_unreachable_server():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    url = "http://127.0.0.1:%d" % s.getsockname()[1]
    s.close()
    gt = '{"inputs": ["1\\n"], "outputs": ["1\\n"]}'
    # the shared client the adapters make for url: a refused job is still sent again, for
    # half a second instead of the default's seconds (the test took a minute)
    rewards.default_client(url).resend_for = 0.5
    with pytest.raises(CrucibleInfraError) as ei:
        rewards.compute_score("d", "x", gt, url=url)
    assert isinstance(ei.value.__cause__, CrucibleUnavailable)
    assert rewards.compute_score("d", "x", gt, url=url, on_infra_error="zero") == 0.0
    assert rewards.compute_score("d", "x", gt, url=url, on_infra_error="none") is None
    d = rewards.compute_score("d", "x", gt, url=url, on_infra_error="zero", details=True)
    assert d["score"] == 0.0 and d["infra_error"] == 1.0
    f = rewards.make_reward_func(url=url)
    assert f(["a", "b"], inputs=[["1"], ["1"]], outputs=[["1"], ["1"]]) == [None, None]
    with pytest.raises(CrucibleInfraError):
        rewards.make_reward_func(url=url, on_infra_error="raise")(["a"], crucible_task=[gt])


def test_adapters_raise_on_caller_fault(stub):
    stub.routes[("POST", "/v1/verify")] = lambda h, b: h.reply(
        400, {"error": {"code": "bad_request", "message": "task: tests[0]: no expected"}})
    stub.routes[("POST", "/v1/batch")] = stub.routes[("POST", "/v1/verify")]
    gt = '{"inputs": ["1\\n"], "outputs": ["1\\n"]}'
    for mode in ("raise", "zero", "none"):
        with pytest.raises(CrucibleError) as ei:
            rewards.compute_score("d", "x", gt, url=stub.url, on_infra_error=mode)
        assert ei.value.status == 400
        with pytest.raises(CrucibleError):
            rewards.make_reward_func(url=stub.url, on_infra_error=mode)(["x"], crucible_task=[gt])


def test_reward_batches_chunked_and_matched_by_index(stub, monkeypatch):
    def route(h, body):
        h.send_response(200)
        h.send_header("Content-Type", "application/x-ndjson")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for i in reversed(range(len(body["items"]))):  # completion order != input order
            item = body["items"][i]
            good = item["response"] == "good"
            rec = {"verdict": "accepted" if good else "wrong_answer", "reward": 1.0 if good else 0.0,
                   "passed": int(good), "total": 1}
            h.chunk((json.dumps({"index": i, "result": rec}) + "\n").encode())
        h.wfile.write(b"0\r\n\r\n")
        h.close_connection = True

    stub.routes[("POST", "/v1/batch")] = route
    monkeypatch.setattr(rewards, "MAX_BATCH", 2)
    completions = ["good", "bad", [{"role": "assistant", "content": "good"}], "bad", "good"]
    gt = {"inputs": ["1\n"], "outputs": ["1\n"]}
    f = rewards.make_reward_func(url=stub.url)
    assert f(completions, crucible_task=[gt] * 5) == [1.0, 0.0, 1.0, 0.0, 1.0]
    batches = [b for m, p, h, b in stub.seen if p == "/v1/batch"]
    assert [len(b["items"]) for b in batches] == [2, 2, 1]
    assert rewards.compute_score_batch(["d"] * 3, ["bad", "good", "good"], [gt] * 3,
                                       url=stub.url) == [0.0, 1.0, 1.0]


def accept_everything(h, body):
    """/v1/verify and /v1/batch: every verification accepted (batch lines in input order)."""
    rec = {"verdict": "accepted", "reward": 1.0, "passed": 1, "total": 1}
    if "items" not in body:
        h.reply(200, rec)
        return
    h.send_response(200)
    h.send_header("Content-Type", "application/x-ndjson")
    h.send_header("Transfer-Encoding", "chunked")
    h.end_headers()
    for i in range(len(body["items"])):
        h.chunk((json.dumps({"index": i, "result": rec}) + "\n").encode())
    h.wfile.write(b"0\r\n\r\n")
    h.close_connection = True


def test_adapters_send_the_sample_language(stub):
    stub.routes[("POST", "/v1/verify")] = accept_everything
    stub.routes[("POST", "/v1/batch")] = accept_everything
    native = {"id": "kattis/hello", "language": "python", "harness": "stdio",
              "tests": [{"name": "a", "stdin": "", "expected": "1\n"}]}
    gt = {"inputs": ["1\n"], "outputs": ["1\n"]}

    def last():
        return stub.seen[-1][3]

    # verl: extra_info["language"] is the solution's language, sent with the request
    assert rewards.compute_score("d", "x", native, {"language": "cpp"}, url=stub.url) == 1.0
    assert last()["language"] == "cpp" and last()["task"]["language"] == "python"
    rewards.compute_score("d", "x", gt, {"language": "cpp"}, url=stub.url)
    assert last()["language"] == "cpp" and last()["task"]["language"] == "cpp"
    rewards.compute_score("d", "x", native, {"index": 3}, url=stub.url)
    assert "language" not in last() and last()["task"]["language"] == "python"
    rewards.compute_score("d", "x", gt, None, url=stub.url)
    assert "language" not in last() and last()["task"]["language"] == "python"
    rewards.compute_score("d", "x", native, {"language": "c"}, url=stub.url, language="java")
    assert last()["language"] == "java"  # the keyword (reward_kwargs) wins, as for built tasks
    rewards.compute_score_batch(["d"] * 3, ["a", "b", "c"], [native] * 3,
                                [{"language": "cpp"}, {}, {"language": "python"}], url=stub.url)
    assert [it.get("language") for it in last()["items"]] == ["cpp", None, "python"]
    with pytest.raises(TypeError):
        rewards.compute_score("d", "x", native, {"language": 3}, url=stub.url)

    # TRL: the language_key column, else the function's language
    f = rewards.make_reward_func(url=stub.url, language_key="lang")
    assert f(["a", "b", "c"], crucible_task=[native] * 3, lang=["cpp", None, ""]) == [1.0, 1.0, 1.0]
    assert [it.get("language") for it in last()["items"]] == ["cpp", None, None]
    f = rewards.make_reward_func(url=stub.url, language="c", language_key="lang")
    f(["a", "b"], inputs=[["1"], ["1"]], outputs=[["1"], ["1"]], lang=["cpp", None])
    assert [it.get("language") for it in last()["items"]] == ["cpp", "c"]
    assert [it["task"]["language"] for it in last()["items"]] == ["cpp", "c"]
    rewards.make_reward_func(url=stub.url)(["a"], inputs=[["1"]], outputs=[["1"]])
    assert "language" not in last()["items"][0] and last()["items"][0]["task"]["language"] == "python"


# --- the in-tree build backend ------------------------------------------------------------------


def _backend():
    import importlib.util
    import os

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    spec = importlib.util.spec_from_file_location("crucible_build", os.path.join(root, "_build", "crucible_build.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, os.path.normpath(root)


def test_backend_toml_fallback_reads_pyproject_as_tomllib_does():
    # Pythons before 3.11 have no tomllib: the backend's own reader must agree with it on
    # this project's pyproject.toml, and refuse what it cannot read.
    tomllib = pytest.importorskip("tomllib")
    mod, root = _backend()
    with open(root + "/pyproject.toml", encoding="utf-8") as f:
        text = f.read()
    assert mod._parse_toml_subset(text) == tomllib.loads(text)
    extra = '[a]\nx = "v # not a comment" # a comment\ny = [\n  "p", # one\n  "q",\n]\nz = true\n'
    assert mod._parse_toml_subset(extra) == tomllib.loads(extra)
    with pytest.raises(ValueError) as ei:
        mod._parse_toml_subset("[a]\nn = 3\n")
    assert "line 2" in str(ei.value)


def test_backend_metadata_and_version(tmp_path, monkeypatch):
    import zipfile

    import crucible_client

    mod, root = _backend()
    monkeypatch.chdir(root)
    name = mod.build_wheel(str(tmp_path))
    assert name == "crucible_client-%s-py3-none-any.whl" % crucible_client.__version__
    with zipfile.ZipFile(str(tmp_path / name)) as z:
        names = z.namelist()
        meta = z.read("crucible_client-%s.dist-info/METADATA" % crucible_client.__version__).decode()
        record = z.read("crucible_client-%s.dist-info/RECORD" % crucible_client.__version__).decode()
    assert "crucible_client/py.typed" in names and not any("__pycache__" in n for n in names)
    assert "Name: crucible-client\n" in meta and "Requires-Python: >=3.9\n" in meta
    assert 'Requires-Dist: pytest; extra == "test"' in meta
    assert all(n in record for n in names)


# --- sessions: request shapes, errors, tar safety, the verl tool's and adapters' helpers ---

SID = "s-0123456789abcdef01234567"


def session_info(sid=SID, parent=None):
    return {"id": sid, "image": "host", "parent": parent, "limits": {}, "ttl_s": 3600}


def test_session_create_and_exec_bodies(stub):
    from crucible_client import Session

    stub.routes[("POST", "/v1/sessions")] = lambda h, b: h.reply(201, session_info())
    stub.routes[("POST", "/v1/sessions/%s/exec" % SID)] = lambda h, b: h.reply(200, {"status": "ok"})
    c = fast(stub.url)
    s = c.session(image="py:3.11", limits={"memory_mb": 256}, writable_root=True, ttl_s=60,
                  idle_ttl_s=10, network="none")
    assert isinstance(s, Session) and s.id == SID and s.last_info["ttl_s"] == 3600
    assert stub.seen[-1][3] == {"image": "py:3.11", "limits": {"memory_mb": 256},
                                "writable_root": True, "ttl_s": 60, "idle_ttl_s": 10,
                                "network": "none"}
    Session.create(c)
    assert stub.seen[-1][3] is None or stub.seen[-1][3] == {}
    s.exec(["ls", "-l"], cwd="/tmp", env={"A": "1"}, stdin="text", timeout_s=5)
    assert stub.seen[-1][3] == {"command": ["ls", "-l"], "cwd": "/tmp", "env": {"A": "1"},
                                "stdin": "text", "timeout_s": 5}
    s.exec("echo hi | wc -c", stdin=b"\x00\xff")
    assert stub.seen[-1][3] == {"command": ["/bin/sh", "-c", "echo hi | wc -c"],
                                "stdin_b64": base64.b64encode(b"\x00\xff").decode()}
    s.exec(code="print(1)", language="python", priority="high")
    assert stub.seen[-1][3] == {"code": "print(1)", "language": "python", "priority": "high"}
    for bad in (lambda: s.exec(), lambda: s.exec(["a"], code="x", language="python"),
                lambda: s.exec(code="x"), lambda: s.exec(["a"], language="python"),
                lambda: s.exec(["a"], env={"A=B": "c"}), lambda: s.exec(["a"], env={"A": 1}),
                lambda: c.session(network="host")):
        with pytest.raises((TypeError, ValueError)):
            bad()


def test_session_files_requests(stub):
    from crucible_client import Session

    base = "/v1/sessions/%s/files" % SID
    stub.routes[("PUT", base)] = lambda h, b: h.reply(200, {"path": "x", "size": 3})
    stub.routes[("GET", base)] = lambda h, b: h.reply(200, None, raw=b"\x00raw\xff")
    c = fast(stub.url)
    s = Session(c, SID)
    assert s.write("dir/a b.txt", "h\u00e9") == {"path": "x", "size": 3}
    method, path, headers, body = stub.seen[-1]
    assert method == "PUT" and headers["Content-Type"] == "application/octet-stream"
    assert body == "h\u00e9".encode()
    assert query_of(path)[1] == {"path": "dir/a b.txt"}
    s.write("run.sh", b"#!", mode=0o755)
    assert query_of(stub.seen[-1][1])[1] == {"path": "run.sh", "mode": "0755"}
    s.write("run.sh", b"", mode="644")
    assert query_of(stub.seen[-1][1])[1]["mode"] == "0644" and stub.seen[-1][3] is None
    for bad in (True, "rwx", 0o17777, "8"):
        with pytest.raises((TypeError, ValueError)):
            s.write("x", "y", mode=bad)
    with pytest.raises(ValueError):
        s.write("", "y")
    assert s.read("a&b=c") == b"\x00raw\xff"
    assert query_of(stub.seen[-1][1])[1] == {"path": "a&b=c"}
    s.upload_tar("/work/proj", b"TAR")
    method, path, headers, body = stub.seen[-1]
    assert headers["Content-Type"] == "application/x-tar" and body == b"TAR"
    assert query_of(path)[1] == {"path": "/work/proj", "format": "tar"}
    s.download_tar()
    assert query_of(stub.seen[-1][1])[1] == {"path": "/work", "format": "tar"}
    stub.routes[("GET", base)] = lambda h, b: h.reply(200, {"path": "d", "entries": [{"name": "f"}]})
    assert s.listdir("d") == [{"name": "f"}]
    assert query_of(stub.seen[-1][1])[1] == {"path": "d", "list": "1"}


def test_session_fork_verify_close(stub):
    from crucible_client import Session

    made = []

    def fork(h, b):
        sid = "s-%024x" % (len(made) + 1)
        made.append(sid)
        if len(made) == 3:
            h.reply(429, {"error": {"code": "too_many_sessions", "message": "max 2"}})
            return
        h.reply(201, session_info(sid, parent=SID))

    stub.routes[("POST", "/v1/sessions/%s/fork" % SID)] = fork
    stub.routes[("DELETE", "/v1/sessions/s-%024x" % 1)] = lambda h, b: h.reply(200, {"deleted": True})
    stub.routes[("DELETE", "/v1/sessions/s-%024x" % 2)] = lambda h, b: h.reply(200, {"deleted": True})
    stub.routes[("POST", "/v1/sessions/%s/verify" % SID)] = lambda h, b: h.reply(200, {"reward": 1.0})
    c = fast(stub.url, max_retries=0)
    s = Session(c, SID)
    one = s.fork(ttl_s=30)
    assert isinstance(one, Session) and one.last_info["parent"] == SID
    assert stub.seen[-1][3] == {"ttl_s": 30}
    made.clear()
    with pytest.raises(CrucibleOverloaded):
        s.fork(3)  # the third fork is refused: the two made are deleted again
    deletes = [p for m, p, _, _ in stub.seen if m == "DELETE"]
    assert deletes == ["/v1/sessions/s-%024x" % 1, "/v1/sessions/s-%024x" % 2]
    with pytest.raises(ValueError):
        s.fork(-1)
    assert s.verify({"id": "t", "harness": "command"}) == {"reward": 1.0}
    assert stub.seen[-1][3] == {"task": {"id": "t", "harness": "command"}}
    s.verify(task_id="lib/1", priority="low")
    assert stub.seen[-1][3] == {"task_id": "lib/1", "priority": "low"}
    with pytest.raises(ValueError):
        s.verify()
    # close: a 404 is fine (already reclaimed), and a second close sends nothing.
    stub.routes[("DELETE", "/v1/sessions/%s" % SID)] = lambda h, b: h.reply(
        404, {"error": {"code": "not_found", "message": "no session"}})
    n = len(stub.seen)
    with s:
        pass
    assert s.closed and len(stub.seen) == n + 1
    s.close()
    assert len(stub.seen) == n + 1
    stub.routes[("DELETE", "/v1/sessions/%s" % SID)] = lambda h, b: h.reply(
        500, {"error": {"code": "internal", "message": "oops"}})
    s2 = Session(c, SID)
    with pytest.raises(CrucibleError):
        s2.close()
    assert not s2.closed


def test_session_ids_and_busy(stub):
    from crucible_client import CrucibleSessionBusy, Session

    c = fast(stub.url)
    for bad in ("s-123", "../v1/run", "s-0123456789ABCDEF01234567", SID + "/x", None):
        with pytest.raises(ValueError):
            Session(c, bad)
    stub.routes[("POST", "/v1/sessions/%s/exec" % SID)] = lambda h, b: h.reply(
        409, {"error": {"code": "session_busy", "message": "an exec is running"}})
    with pytest.raises(CrucibleSessionBusy) as ei:
        Session(c, SID).exec(["true"])
    assert (ei.value.status, ei.value.code) == (409, "session_busy") and c.slept == []


def _tar(entries):
    """A tar of (name, kind, payload) — kind: file, dir, sym, hard, fifo."""
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, kind, payload in entries:
            ti = tarfile.TarInfo(name)
            if kind == "file":
                ti.size = len(payload)
                tf.addfile(ti, io.BytesIO(payload))
                continue
            ti.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                       "fifo": tarfile.FIFOTYPE}[kind]
            if kind in ("sym", "hard"):
                ti.linkname = payload
            tf.addfile(ti)
    return buf.getvalue()


@pytest.mark.parametrize("entries,named", [
    ([("/abs.txt", "file", b"x")], "/abs.txt"),
    ([("a/../../x", "file", b"x")], "a/../../x"),
    ([("l", "sym", "/etc/passwd")], "l"),
    ([("l", "sym", "../out")], "l"),
    ([("r", "sym", "."), ("up", "sym", "r/..")], "up"),  # lexically inside, physically out
    ([("f", "file", b"x"), ("h", "hard", "f")], "h"),
    ([("p", "fifo", None)], "p"),
])
def test_safe_extract_refuses_before_writing(tmp_path, entries, named):
    from crucible_client import UnsafeArchive
    from crucible_client.session import safe_extract_tar

    data = _tar([("ok.txt", "file", b"fine")] + entries)
    with pytest.raises(UnsafeArchive) as ei:
        safe_extract_tar(data, tmp_path / "d")
    assert repr(named) in str(ei.value)
    assert not (tmp_path / "d").exists()  # nothing written, not even the good entry


def test_tar_of_dir_and_safe_extract_round_trip(tmp_path):
    import gzip

    from crucible_client.session import safe_extract_tar, tar_of_dir

    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "b.bin").write_bytes(bytes(range(256)))
    (src / "x.sh").write_text("#!/bin/sh\n")
    (src / "x.sh").chmod(0o4755)  # setuid is dropped on the way
    os.symlink("sub/b.bin", src / "link")
    os.mkfifo(src / "fifo")  # left out
    data = tar_of_dir(src)
    import tarfile

    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        names = {m.name: m for m in tf.getmembers()}
    assert set(names) == {"sub", "sub/b.bin", "x.sh", "link"}
    assert names["x.sh"].mode == 0o755 and names["x.sh"].uid == 0 and names["link"].issym()
    assert safe_extract_tar(gzip.compress(data), tmp_path / "dst") == 4  # gzip is read too
    assert (tmp_path / "dst" / "sub" / "b.bin").read_bytes() == bytes(range(256))
    assert os.readlink(tmp_path / "dst" / "link") == "sub/b.bin"
    with pytest.raises(NotADirectoryError):
        tar_of_dir(src / "x.sh")


def test_format_result_and_exit_codes():
    from crucible_client.agents import exit_code_of
    from crucible_client.verl_tool import format_result

    assert format_result({"status": "ok", "exit_code": 0, "stdout": "a", "stderr": ""}) == "a\n"
    assert format_result({"status": "runtime_error", "exit_code": 2, "stdout": "", "stderr": "e\n"}) == "e\n[exit code 2]\n"
    assert format_result({"status": "memory_limit", "exit_code": None, "signal": 9}) == "[status: memory_limit]\n"
    assert format_result({"status": "timeout", "stdout": "x\n"}) == "x\n[status: timeout]\n"
    assert format_result({"status": "compile_error", "compile": {"status": "runtime_error", "stderr": "bad syntax"},
                          "stdout": "", "stderr": ""}) == "bad syntax\n[status: compile_error]\n"
    cut = format_result({"status": "ok", "exit_code": 0, "stdout": "a" * 100 + "z" * 100}, max_chars=20)
    assert cut.startswith("a" * 10) and cut.endswith("z" * 9 + "\n") and "characters cut" in cut
    assert exit_code_of({"exit_code": 3}) == 3
    assert exit_code_of({"exit_code": None, "signal": 9, "status": "runtime_error"}) == 137
    assert exit_code_of({"exit_code": None, "status": "timeout"}) == 124
    assert exit_code_of({"status": "sandbox_error"}) == 1


def test_verl_tool_without_verl(stub):
    """The tool imports and is built as verl builds it with no verl installed; bad calls
    are answered to the model, not raised."""
    import asyncio

    from crucible_client import verl_tool

    tool = verl_tool.CrucibleSessionTool(config={"type": "native", "url": stub.url}, tool_schema=None)
    assert tool.name == "code_interpreter"
    assert tool.get_openai_tool_schema().model_dump()["function"]["parameters"]["required"] == ["code"]
    schema = verl_tool.OpenAIFunctionToolSchema.model_validate(
        {"type": "function", "function": {"name": "python", "description": "d"}})
    assert verl_tool.CrucibleSessionTool(config={"url": stub.url}, tool_schema=schema).name == "python"

    async def run():
        iid, resp = await tool.create()
        out = [await tool.execute(iid, p) for p in ({}, {"code": ""}, {"code": "x", "timeout": "soon"},
                                                      {"command": 3}, "not a dict")]
        await tool.release(iid)
        return iid, resp, out

    iid, resp, out = asyncio.run(run())
    assert isinstance(iid, str) and resp.text is None
    for text, reward, metrics in ((r.text, rw, m) for r, rw, m in out):
        assert text.startswith("Error:") and reward == 0.0 and metrics == {"status": "bad_call"}
    assert not any(m == "POST" for m, *_ in stub.seen)  # nothing was sent for bad calls


def test_verl_tool_reports_crucible_errors(stub):
    import asyncio

    from crucible_client import verl_tool

    stub.routes[("POST", "/v1/sessions")] = lambda h, b: h.reply(
        503, {"error": {"code": "unavailable", "message": "cannot make a sandbox: out of memory"}})
    tool = verl_tool.CrucibleSessionTool(config={"url": stub.url})

    async def run():
        iid, _ = await tool.create()
        return await tool.execute(iid, {"code": "print(1)"})

    resp, reward, metrics = asyncio.run(run())
    assert "cannot make a sandbox" in resp.text and metrics == {"status": "error", "error": "unavailable"}


def test_verl_tool_uses_verls_classes_when_importable(tmp_path):
    """With a package named verl on the path (here a minimal one with verl's module names and
    constructor shapes — verl itself needs pydantic and ray), the tool subclasses verl's
    BaseTool and answers with verl's ToolResponse."""
    import subprocess
    import sys
    import textwrap

    tools = tmp_path / "verl" / "tools"
    tools.mkdir(parents=True)
    (tmp_path / "verl" / "__init__.py").write_text("")
    (tools / "__init__.py").write_text("")
    (tools / "schemas.py").write_text(textwrap.dedent("""
        class _NS:
            def __init__(self, d):
                for k, v in d.items():
                    setattr(self, k, _NS(v) if isinstance(v, dict) else v)
        class OpenAIFunctionToolSchema(_NS):
            @classmethod
            def model_validate(cls, d):
                return cls(d)
        class ToolResponse:
            def __init__(self, text=None, image=None, video=None):
                self.text, self.image, self.video = text, image, video
    """))
    (tools / "base_tool.py").write_text(textwrap.dedent("""
        from .schemas import ToolResponse
        class BaseTool:
            def __init__(self, config, tool_schema):
                self.config = config
                self.tool_schema = tool_schema or self.get_openai_tool_schema()
                self.name = self.tool_schema.function.name
            def get_openai_tool_schema(self):
                return self.tool_schema
    """))
    code = textwrap.dedent("""
        import asyncio
        from verl.tools.base_tool import BaseTool
        from verl.tools.schemas import ToolResponse
        from crucible_client import verl_tool
        assert verl_tool.HAVE_VERL and verl_tool.BaseTool is BaseTool
        tool = verl_tool.CrucibleSessionTool(config={"type": "native", "url": "http://127.0.0.1:9"},
                                             tool_schema=None)
        assert isinstance(tool, BaseTool) and tool.name == "code_interpreter"
        async def run():
            iid, resp = await tool.create(create_kwargs={})
            out = await tool.execute(iid, {"code": ""})
            await tool.release(iid)
            return resp, out
        resp, (answer, reward, metrics) = asyncio.run(run())
        assert type(resp) is ToolResponse and type(answer) is ToolResponse, (resp, answer)
        print("ok", answer.text)
    """)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), pkg]), PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       env=env, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith(b"ok Error:"), r.stdout.decode()


def test_long_exec_waits_longer_than_the_client_timeout(stub):
    """An exec's answer comes when it ends: a timeout_s beyond the client's read timeout
    stretches that one request's timeout, not the client's."""
    from crucible_client import Session

    def slow(h, b):
        time.sleep(1.0)
        h.reply(200, {"status": "ok"})

    stub.routes[("POST", "/v1/sessions/%s/exec" % SID)] = slow
    c = fast(stub.url, timeout=0.3)
    s = Session(c, SID)
    with pytest.raises(CrucibleUnavailable):
        s.exec(["sleep", "1"])  # the client's 0.3 s
    assert s.exec(["sleep", "1"], timeout_s=5) == {"status": "ok"}
    assert c.timeout == 0.3
