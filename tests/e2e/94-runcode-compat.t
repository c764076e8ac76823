#!/usr/bin/python3
# /run_code against SandboxFusion's own conventions (github.com/bytedance/SandboxFusion, commit
# 469de0845cb7, 2026-07-14), each answer checked against its response model
# (sandbox/server/sandbox_api.py RunCodeResponse, sandbox/runners/types.py CommandRunResult):
# - output that is not UTF-8 keeps run_result (SandboxFusion decodes it as text, never null);
# - output over the limit: SandboxFusion reads a program's pipes only once it exited, so such a
#   program blocks until run_timeout and the answer is TimeLimitExceeded (return_code null):
#   crucible answers the same, with a message; never "Failed" with "Finished" and return code 0;
# - memory_limit_MB -1 (its default) and 0 set no limit of the request's own (runners/base.py:
#   `if args.memory_limit_MB > 0`);
# - run_timeout and compile_timeout are not bounded by an hour (RunCodeRequest: plain floats);
# - networking: programs talk to themselves over 127.0.0.1, two at once on one port, and reach
#   nothing outside (modelled on sandbox/tests/runners/test_isolation.py:
#   test_isolation_network_server_localhost and ..._port_conflict; crucible's own code).
# Standard library only.
import base64
import http.client
import json
import os
import random
import socket
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-runcode-compat-")


def model_errors(j):
    """What in j does not fit SandboxFusion's RunCodeResponse (empty: it fits)."""
    errs = []
    if not isinstance(j, dict):
        return ["not an object"]
    if j.get("status") not in ("Success", "Failed", "SandboxError"):
        errs.append("status %r" % j.get("status"))
    if not isinstance(j.get("message"), str):
        errs.append("message %r" % j.get("message"))
    for k in ("compile_result", "run_result"):
        r = j.get(k)
        if r is None:
            continue
        if r.get("status") not in ("Finished", "Error", "TimeLimitExceeded"):
            errs.append("%s.status %r" % (k, r.get("status")))
        for f in ("stdout", "stderr"):
            if r.get(f) is not None and not isinstance(r[f], str):
                errs.append("%s.%s not a string" % (k, f))
        if r.get("return_code") is not None and not isinstance(r["return_code"], int):
            errs.append("%s.return_code %r" % (k, r["return_code"]))
        if r.get("execution_time") is not None and not isinstance(r["execution_time"],
                                                                  (int, float)):
            errs.append("%s.execution_time %r" % (k, r["execution_time"]))
        # one answer, one story: a failed step is never "Finished" with return code 0
        if (j.get("status") == "Failed" and r.get("status") == "Finished"
                and r.get("return_code") == 0 and k == "run_result" and not j.get("message")):
            errs.append("Failed with a run Finished, return code 0 and no message")
    if not isinstance(j.get("files", {}), dict):
        errs.append("files")
    if j.get("status") == "Success" and not (j.get("run_result") or {}).get("status") == "Finished":
        errs.append("Success without a finished run")
    return errs


def run_code(srv, body, timeout=120):
    """POST /run_code: (status, the answer's JSON or None, its text)."""
    return srv.post("/run_code", body, timeout=timeout)


def run_of(j):
    """j's run_result as a dict ({} when the answer has none: a failed check, not a crash)."""
    return ((j or {}).get("run_result") or {}) if isinstance(j, dict) else {}


s = Server("--memory", "4096", "--slots", "2", tmp=TMP, quiet=False)

# --- bytes that are not UTF-8 --------------------------------------------------------------
st, j, text = run_code(s, {"language": "python", "code":
                           "import os\nos.write(1, b'ok \\xff\\xfe end\\n')\n"
                           "os.write(2, b'bad \\xc3( tail')\n"})
ok(st == 200 and not model_errors(j) and j["status"] == "Success" and bool(run_of(j))
   and run_of(j).get("stdout", "").startswith("ok ") and run_of(j).get("stdout", "").endswith(" end\n")
   and "tail" in run_of(j).get("stderr", ""),
   "output that is not UTF-8: run_result kept, text around the bad bytes intact",
   (st, model_errors(j), text[:600]))
st, j, text = run_code(s, {"language": "cpp", "code":
                           "#include <cstdio>\nint main(){fputs(\"x\\xff\\n\", stdout);"
                           "fputs(\"\\xfe\", stderr);return 3;}\n"})
ok(st == 200 and not model_errors(j) and j["status"] == "Failed"
   and run_of(j).get("return_code") == 3 and run_of(j).get("stdout", "").startswith("x"),
   "a compiled program's bad bytes and exit code 3: Failed with its run_result",
   (st, model_errors(j), text[:600]))

# --- output over the limit -------------------------------------------------------------------
st, j, text = run_code(s, {"language": "python", "run_timeout": 10,
                           "code": "import sys\nsys.stdout.write('x' * (20 << 20))\n"})
rr = (j or {}).get("run_result") or {}
ok(st == 200 and not model_errors(j) and j["status"] == "Failed"
   and rr.get("status") == "TimeLimitExceeded" and rr.get("return_code") is None
   and "output" in j["message"] and len(rr.get("stdout", "")) > 0,
   "20 MiB of output: Failed, TimeLimitExceeded as SandboxFusion, the output so far, a message",
   (st, model_errors(j), {k: (v if k != "run_result" else {kk: str(vv)[:80] for kk, vv in
                                                            (v or {}).items()})
                          for k, v in (j or {}).items()}))

# --- memory_limit_MB: -1 and 0 set no limit of the request's own ---------------------------
ALLOC = "b = bytearray(900 << 20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\nprint('ok')\n"
for mb in (-1, 0, None):
    body = {"language": "python", "code": ALLOC, "run_timeout": 30}
    if mb is not None:
        body["memory_limit_MB"] = mb
    st, j, text = run_code(s, body)
    ok(st == 200 and not model_errors(j) and j["status"] == "Success"
       and run_of(j).get("stdout") == "ok\n",
       "memory_limit_MB %s: 900 MB fit (a slot's share of --memory, not the 512 MB default)"
       % ("omitted" if mb is None else mb), (st, text[:500]))
st, j, text = run_code(s, {"language": "python", "code": ALLOC, "run_timeout": 30,
                           "memory_limit_MB": 256})
ok(st == 200 and not model_errors(j) and j["status"] == "Failed",
   "memory_limit_MB 256: the same program fails", (st, text[:500]))
st, j, text = run_code(s, {"language": "python", "code": "print(1)", "memory_limit_MB": -2})
ok(st == 400 and "memory_limit_MB" in j["error"]["message"], "memory_limit_MB -2: 400", text)

# --- timeouts above an hour ------------------------------------------------------------------
st, j, text = run_code(s, {"language": "python", "code": "print(1)", "run_timeout": 7200,
                           "compile_timeout": 5000})
ok(st == 200 and not model_errors(j) and j["status"] == "Success",
   "run_timeout 7200 and compile_timeout 5000: accepted (SandboxFusion bounds neither)",
   (st, text[:400]))
st, j, text = run_code(s, {"language": "cpp", "code": "int main(){return 0;}",
                           "run_timeout": 3601, "compile_timeout": 3601})
ok(st == 200 and not model_errors(j) and j["status"] == "Success",
   "a compiled language with both timeouts above an hour runs", (st, text[:400]))
st, j, text = run_code(s, {"language": "python", "code": "print(1)", "run_timeout": 100000})
ok(st == 400 and "run_timeout" in j["error"]["message"] and "86400" in j["error"]["message"],
   "run_timeout above a day: 400 naming crucible's most", text)

# --- loopback networking ---------------------------------------------------------------------
SERVE = '''
import http.server, socketserver, threading, time, urllib.request
PORT = %d
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"a special string")
    def log_message(self, *a):
        pass
socketserver.TCPServer.allow_reuse_address = True
httpd = socketserver.TCPServer(("", PORT), Handler)
threading.Thread(target=httpd.serve_forever, daemon=True).start()
time.sleep(%s)
for host in ("127.0.0.1", "localhost"):
    body = urllib.request.urlopen("http://%%s:%%d" %% (host, PORT), timeout=5).read()
    print("Test Passed" if b"special string" in body else "Test Failed", host)
'''
port = random.randint(30000, 60000)
st, j, text = run_code(s, {"language": "python", "code": SERVE % (port, 0.1), "run_timeout": 10})
ok(st == 200 and not model_errors(j) and j["status"] == "Success"
   and run_of(j).get("stdout", "").count("Test Passed") == 2,
   "a program serves and calls itself on 127.0.0.1 and localhost", (st, text[:800]))
res = [None, None]
ths = [threading.Thread(target=lambda k=k: res.__setitem__(
    k, run_code(s, {"language": "python", "code": SERVE % (port, 1), "run_timeout": 10})))
    for k in range(2)]
for t in ths:
    t.start()
for t in ths:
    t.join()
ok(all(r[0] == 200 and r[1]["status"] == "Success" and run_of(r[1]).get("stdout", "").count(
    "Test Passed") == 2 for r in res),
   "two programs at once on the same port: each its own loopback", [r[2][:300] for r in res])
# nothing leaves: a listener of this test on the host's 127.0.0.1 is out of reach
lsock = socket.socket()
lsock.bind(("127.0.0.1", 0))
lsock.listen(4)
lsock.settimeout(0.1)
hport = lsock.getsockname()[1]
st, j, text = run_code(s, {"language": "python", "run_timeout": 10, "code":
                           "import socket\ntry:\n    socket.create_connection(('127.0.0.1', %d),"
                           " timeout=2)\n    print('reached')\nexcept OSError as e:\n"
                           "    print('refused', e)\n" % hport})
accepted = False
try:
    lsock.accept()
    accepted = True
except OSError:
    pass
ok(st == 200 and run_of(j).get("stdout", "").startswith("refused") and not accepted,
   "the host's 127.0.0.1 is not reachable from the sandbox", (st, text[:400], accepted))

# --- absolute paths in files and fetch_files ------------------------------------------------
# SandboxFusion takes a file's path as given (restore_files: os.path.join(dir, path), which an
# absolute path replaces) and fetches os.path.abspath(os.path.join(cwd, path)). crucible's
# program runs in /work, the sandbox's one place for files: "/work/..." is taken there, as
# SandboxFusion would; an absolute path elsewhere is a 400 naming the rule.
b64 = base64.b64encode(b"data 42\n").decode()
st, j, text = run_code(s, {"language": "python", "code":
                           "import os\nprint(open('/work/in/a.txt').read().strip(), os.getcwd())\n"
                           "open('/work/out.txt', 'w').write('written')\n",
                           "files": {"/work/in/a.txt": b64},
                           "fetch_files": ["/work/out.txt", "out.txt", "/work/missing.txt"]})
ok(st == 200 and not model_errors(j) and j["status"] == "Success"
   and run_of(j).get("stdout") == "data 42 /work\n"
   and base64.b64decode(j["files"].get("/work/out.txt", "")) == b"written"
   and "/work/missing.txt" not in j["files"],
   "files and fetch_files under /work/ by absolute path; the answer keyed as requested",
   (st, text[:600]))
for field, val in (("files", {"/etc/x": b64}), ("fetch_files", ["/tmp/x"]),
                   ("fetch_files", ["/work/../etc/passwd"])):
    st, j, text = run_code(s, {"language": "python", "code": "print(1)", field: val})
    ok(st == 400 and field in j["error"]["message"],
       "%s %s: 400 naming the field" % (field, json.dumps(val)), text)
s.stop()
done()
