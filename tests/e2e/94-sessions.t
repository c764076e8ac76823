#!/usr/bin/python3
# Sessions over HTTP (issue 13, docs/API.md "Sessions"): create, list, get, delete; state that
# persists across execs (files, a background process); an exec's timeout that leaves the
# session alive; the {code, language} form; 404 for bad and gone ids, 400 for bad fields and
# paths, 405 for wrong methods, 409 for a second operation at once, 429 beyond
# --max-sessions; TTL and idle reclamation with their metrics; usage numbers; binary-safe
# upload and download, listing, tar in and out, a hostile tar refused; fork diverging from
# its parent; verify giving reward 0, then 1 once a file is fixed. Standard library only.
import io
import json
import os
import sys
import tarfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-sessions-")
srv = Server("--warm", "0", "--max-sessions", "4", tmp=TMP)


def create(body=None, server=srv):
    return server.post("/v1/sessions", body if body is not None else {})


def ex(sid, body, server=srv, **kw):
    if isinstance(body, (str, list)):
        body = {"command": body}
    return server.post("/v1/sessions/%s/exec" % sid, body, **kw)


def put(sid, path, data, query="", server=srv):
    return server.request("PUT", "/v1/sessions/%s/files?path=%s%s" % (sid, path, query), data)


def get_raw(sid, path, query="", server=srv):
    r, data = server.exchange("GET", "/v1/sessions/%s/files?path=%s%s" % (sid, path, query))
    return r.status, r.getheader("Content-Type"), data


def live_ids(server=srv):
    """The ids GET /v1/sessions lists (a listing does not touch any session's idle clock)."""
    st, j, _ = server.request("GET", "/v1/sessions")
    return [s["id"] for s in j["sessions"]] if st == 200 else None


def wait_gone(sid, server=srv, limit=30):
    deadline = time.time() + limit
    while time.time() < deadline:
        if sid not in live_ids(server):
            return True
        time.sleep(0.2)
    return False


# ---- create, list, get, delete ------------------------------------------------------------
st, a, text = create({"limits": {"memory_mb": 256, "pids": 32, "disk_mb": 16, "cpu_time": 60}})
ok(st == 201 and a["id"].startswith("s-") and len(a["id"]) == 26 and
   all(c in "0123456789abcdef" for c in a["id"][2:]), "create: 201 with an id s-<24 hex>", text)
A = a["id"] if st == 201 else "s-" + "0" * 24
ok(st == 201 and a["image"] == "host" and a["parent"] is None and a["ttl_s"] == 3600 and
   a["idle_ttl_s"] == 600 and a["expires_at"] - a["created_at"] == 3600 and
   a["limits"]["memory_mb"] == 256 and a["limits"]["pids"] == 32 and
   a["limits"]["disk_mb"] == 16 and a["limits"]["cpu_time"] == 60 and
   a["writable_root"] is False and a["network"] == "loopback",
   "create: the answer has image, times, ttls, limits, writable_root, network, parent", text)
st, j, text = srv.request("GET", "/v1/sessions")
ok(st == 200 and j["count"] == 1 and j["max"] == 4 and j["sessions"][0]["id"] == A,
   "list: the session, count and max", text)
st, j, text = srv.request("GET", "/v1/sessions/" + A)
ok(st == 200 and j["id"] == A and j["execs"] == 0 and j["busy"] is False and
   j["age_s"] >= 0 and j["idle_s"] >= 0 and "usage" in j,
   "get: age_s, idle_s, execs, busy, usage", text)

# ---- state persists across execs ----------------------------------------------------------
st, j, text = ex(A, "echo state-1 > note.txt && export GONE=1 && echo $PWD")
ok(st == 200 and j["status"] == "ok" and j["stdout"] == "/work\n" and j["session"] == A,
   "exec (shell string): runs in /work, the record names the session", text)
st, j, text = ex(A, ["/bin/sh", "-c", "cat /work/note.txt; echo env=${GONE:-unset}"])
ok(st == 200 and j["stdout"] == "state-1\nenv=unset\n",
   "exec (argv): a file of the last exec is there; its environment is not", text)
st, j, text = ex(A, {"command": ["/bin/sh", "-c", "pwd; echo $K; cat"], "cwd": "/tmp",
                     "env": {"K": "v1"}, "stdin": "in-text"})
ok(st == 200 and j["stdout"] == "/tmp\nv1\nin-text", "exec: cwd, env and stdin", text)
st, j, text = ex(A, {"command": "od -An -tx1", "stdin_b64": "AAEC/w=="})
ok(st == 200 and j["stdout"].split() == ["00", "01", "02", "ff"],
   "exec: stdin_b64 reaches the process byte for byte", text)

# a background process keeps running between execs: its tick file grows after its exec ended
st, j, text = ex(A, "(while :; do echo t >> /tmp/ticks; sleep 0.1; done) >/dev/null 2>&1 & "
                    "for i in $(seq 100); do [ -s /tmp/ticks ] && break; sleep 0.1; done; "
                    "echo started")
ok(st == 200 and j["stdout"] == "started\n", "exec: a background loop is started", text)
st, j, text = ex(A, "a=$(wc -l < /tmp/ticks); for i in $(seq 100); do sleep 0.1; "
                    "b=$(wc -l < /tmp/ticks); [ $b -gt $a ] && echo grows && exit 0; done; "
                    "echo still $a", timeout=60)
ok(st == 200 and j["stdout"] == "grows\n",
   "the next exec sees the background process still at work", text)

# ---- an exec's timeout kills that exec only -------------------------------------------------
st, j, text = ex(A, {"command": "sleep 30", "timeout_s": 1})
ok(st == 200 and j["status"] == "timeout" and j["limit"] == "wall",
   "exec timeout_s 1 of sleep 30: timeout (wall)", text)
st, j, text = ex(A, "cat note.txt; a=$(wc -l < /tmp/ticks); sleep 0.5; "
                    "for i in $(seq 100); do b=$(wc -l < /tmp/ticks); [ $b -gt $a ] && break; "
                    "sleep 0.1; done; [ $b -gt $a ] && echo alive")
ok(st == 200 and j["stdout"] == "state-1\nalive\n",
   "after the timeout the session lives: its files and its background process are there", text)

# ---- {code, language} ------------------------------------------------------------------------
st, j, text = ex(A, {"code": "import os\nprint(open('note.txt').read().strip(), os.getcwd())",
                     "language": "python"})
ok(st == 200 and j["status"] == "ok" and j["stdout"] == "state-1 /work\n" and
   j["compile"] is None, "exec {code, language: python}: runs in /work over the session's files",
   text)
st, j, text = ex(A, {"code": "#include <stdio.h>\nint main(void){puts(\"compiled\");return 0;}",
                     "language": "c"}, timeout=120)
ok(st == 200 and j["status"] == "ok" and j["stdout"] == "compiled\n" and
   j["compile"]["status"] == "ok", "exec {code, language: c}: compiled, then run", text)
st, j, text = ex(A, {"code": "int main(void){ syntax error }", "language": "c"}, timeout=120)
ok(st == 200 and j["status"] != "ok" and "compilation failed" in j.get("message", ""),
   "a compile error is the answer, the program not run", text)

# ---- usage -----------------------------------------------------------------------------------
st, j, text = ex(A, "head -c 2000000 /dev/zero > big.bin && echo ok")
st, j, text = srv.request("GET", "/v1/sessions/" + A)
u = j.get("usage", {}) if j else {}
ok(st == 200 and u.get("disk_kb", 0) >= 1900 and u.get("disk_limit_kb", 0) >= 16000 and
   u.get("cpu_time_s", 0) > 0 and u.get("pids", 0) >= 1 and u.get("memory_kb", 0) > 0,
   "usage after writing 2 MB: disk_kb, disk_limit_kb, cpu_time_s, pids, memory_kb", text)
ok(st == 200 and j["execs"] >= 8, "execs counts the session's execs", text)

# ---- 404, 400, 405 ---------------------------------------------------------------------------
for bad_id in ("s-" + "0" * 24, "nope", "s-" + "A" * 24, "s-123"):
    st, j, text = ex(bad_id, "true")
    ok(st == 404 and j["error"]["code"] == "not_found", "exec in %r: 404" % bad_id, text)
st, j, text = ex(A, {"command": "true", "stdin": "x" * (1 << 20)})
ok(st == 413 and "PUT" in j["error"]["message"],
   "a JSON body over 1 MiB: 413 pointing at file uploads", text)
st, j, text = srv.request("GET", "/v1/sessions/%s/whatever" % A)
ok(st == 404, "an unknown action: 404", text)
st, j, text = srv.request("PUT", "/v1/sessions/%s/exec" % A, "{}")
ok(st == 405, "PUT on exec: 405", text)
for method, action, allow in (("POST", "", "GET, DELETE"), ("DELETE", "/files", "GET, PUT"),
                              ("POST", "/files", "GET, PUT"), ("GET", "/fork", "POST"),
                              ("GET", "/verify", "POST"), ("GET", "/exec", "POST")):
    resp, data = srv.exchange(method, "/v1/sessions/%s%s" % (A, action))
    ok(resp.status == 405 and resp.getheader("Allow") == allow,
       "%s on the session%s: 405, Allow: %s" % (method, action, allow),
       (resp.status, resp.getheader("Allow"), data[:200]))
for action in ("exec/x", "exe", "execs", "files/", "fork/"):
    st, j, text = srv.request("POST", "/v1/sessions/%s/%s" % (A, action), "{}")
    ok(st == 404 and "exec, files, fork and verify" in j["error"]["message"],
       "POST .../%s: 404 naming the session's routes" % action, text)
for body, what in (({"command": []}, "an empty argv"), ({"command": "x", "code": "y"}, "both forms"),
                   ({"command": "x", "timeout_s": 999999}, "timeout_s beyond the ttl"),
                   ({"command": "x", "cwd": "rel"}, "a relative cwd"),
                   ({"command": "x", "bogus": 1}, "an unknown field"),
                   ({"code": "x", "language": "cobol-77"}, "an unknown language"),
                   ({"command": "x", "env": {"A=B": "c"}}, "an env name with '='")):
    st, j, text = ex(A, body)
    ok(st == 400 and j["error"]["message"], "exec with %s: 400 naming it" % what, text)
for body, what in (({"limits": {"wall_time": 5}}, "limits.wall_time"),
                   ({"limits": {"memory_mb": 1}}, "memory_mb below the range"),
                   ({"ttl_s": 0}, "ttl_s 0"), ({"network": "host"}, "network host"),
                   ({"image": "/"}, "a host path as image"), ({"x": 1}, "an unknown field")):
    st, j, text = create(body)
    ok(st == 400 and j["error"]["message"], "create with %s: 400" % what, text)
for path, what in (("../etc/passwd", "'..'"), ("/etc/passwd", "a path outside /work and /tmp"),
                   ("a//b", "an empty component"), ("", "no path")):
    st, j, text = put(A, path, b"x")
    ok(st == 400, "upload to %s: 400" % what, text)
st, j, text = srv.request("GET", "/v1/sessions/%s/files?path=missing.txt" % A)
ok(st == 404, "download of a missing file: 404", text)
st, j, text = srv.request("GET", "/v1/sessions/%s/files?path=/tmp" % A)
ok(st == 400, "download of a directory: 400", text)
ex(A, "ln -sf /etc/passwd /work/link")
st, j, text = srv.request("GET", "/v1/sessions/%s/files?path=link" % A)
ok(st == 400 and "root:" not in text, "download through a symlink the payload made: 400", text)
st, j, text = srv.request("GET", "/v1/sessions/%ff%fe")
ok(st == 404 and j["error"]["code"] == "not_found", "an id that is not UTF-8: 404", text)
st, j, text = put(A, "a%00b", b"x")
ok(st == 400 and "NUL" in j["error"]["message"], "a path with an escaped NUL: 400", text)
st, j, text = put(A, "%ff.txt", b"x")
ok(st == 400 and "UTF-8" in j["error"]["message"], "a path that is not UTF-8: 400", text)
ex(A, "mkdir -p odd && touch \"odd/$(printf '\\377')x\"")
st, j, text = srv.request("GET", "/v1/sessions/%s/files?path=odd&list=1" % A)
ok(st == 200 and j["entries"][0]["name"] == "\\xffx" and j["entries"][0]["name_b64"] == "/3g=",
   "a listed name that is not UTF-8: escaped, with its bytes in name_b64", text)
st, j, text = put(A, "f", b"x", "&mode=9")
ok(st == 400, "upload with mode 9 (not octal): 400", text)

# ---- files -----------------------------------------------------------------------------------
blob = bytes(range(256)) * 64
st, j, text = put(A, "bin/all.bytes", blob, "&mode=0755")
ok(st == 200 and j["path"] == "bin/all.bytes" and j["size"] == len(blob),
   "upload of bytes 0..255: 200 with path and size", text)
st, ctype, data = get_raw(A, "bin/all.bytes")
ok(st == 200 and data == blob and ctype == "application/octet-stream",
   "download gives the same bytes back (binary-safe)")
st, j, text = ex(A, "sha256sum bin/all.bytes | cut -c1-16; stat -c %a bin/all.bytes")
import hashlib  # noqa: E402
ok(st == 200 and j["stdout"] == hashlib.sha256(blob).hexdigest()[:16] + "\n755\n",
   "the sandbox sees the uploaded bytes, with mode 0755", text)
st, j, text = srv.request("GET", "/v1/sessions/%s/files?path=/work&list=1" % A)
names = {e["name"]: e for e in j["entries"]} if st == 200 else {}
ok(st == 200 and names.get("bin", {}).get("type") == "dir" and
   names.get("note.txt", {}).get("type") == "file" and names["note.txt"]["size"] == 8 and
   names.get("link", {}).get("type") == "symlink" and "mtime" in names["note.txt"] and
   isinstance(names["note.txt"]["mode"], int), "list=1: names, types, sizes, modes, mtimes",
   text)
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w:gz") as tf:
    for name, data in (("pkg/__init__.py", b""), ("pkg/mod.py", b"X = 42\n")):
        ti = tarfile.TarInfo(name)
        ti.size = len(data)
        tf.addfile(ti, io.BytesIO(data))
st, j, text = put(A, "/work/proj", buf.getvalue(), "&format=tar")
ok(st == 200 and j["entries"] == 2, "tar.gz upload: 200 with the number of entries", text)
st, j, text = ex(A, "cd proj && python3 -c 'import pkg.mod; print(pkg.mod.X)'")
ok(st == 200 and j["stdout"] == "42\n", "the unpacked tree is there", text)
st, ctype, data = get_raw(A, "/work/proj", "&format=tar")
members = {}
if st == 200:
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        members = {m.name.lstrip("./"): (tf.extractfile(m).read() if m.isfile() else None)
                   for m in tf.getmembers()}
ok(st == 200 and ctype == "application/x-tar" and members.get("pkg/mod.py") == b"X = 42\n",
   "tar download of the tree", sorted(members))
ex(A, "mkdir -p sl && ln -sf /etc/passwd sl/pw && ln -sf / sl/root")
st, ctype, data = get_raw(A, "sl", "&format=tar")
kinds = {}
if st == 200:
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        kinds = {m.name.lstrip("./"): (m.issym(), m.linkname) for m in tf.getmembers()}
ok(st == 200 and kinds.get("pw") == (True, "/etc/passwd") and kinds.get("root") == (True, "/") and
   b"root:x:0:0" not in data, "a tar of symlinks the session made holds the links, not what "
   "they point to", kinds)
evil = io.BytesIO()
with tarfile.open(fileobj=evil, mode="w") as tf:
    ok_entry = tarfile.TarInfo("fine.txt")
    ok_entry.size = 2
    tf.addfile(ok_entry, io.BytesIO(b"ok"))
    bad = tarfile.TarInfo("../escape.txt")
    bad.size = 2
    tf.addfile(bad, io.BytesIO(b"no"))
st, j, text = put(A, "/work/evil", evil.getvalue(), "&format=tar")
ok(st == 400 and "escape" in text, "a tar with '..': 400 naming the entry", text)
st, j, text = srv.request("GET", "/v1/sessions/%s/files?path=/work/evil/fine.txt" % A)
ok(st == 404, "nothing of the refused archive was written", text)

# a full disk: 507
st, small, text = create({"limits": {"disk_mb": 1}})
if st == 201:
    st, j, text = put(small["id"], "big.bin", b"\0" * (3 << 20))
    ok(st == 507 and j["error"]["code"] == "disk_full", "an upload beyond disk_mb: 507 disk_full",
       text)
    st, j, text = ex(small["id"], "ls /work")
    ok(st == 200 and j["status"] == "ok", "and the session lives on", text)
    srv.request("DELETE", "/v1/sessions/" + small["id"])
else:
    ok(False, "a session of disk_mb 1", text)
    ok(False, "and the session lives on")

# ---- 409: one operation at a time ------------------------------------------------------------
slow = {}


def slow_exec():
    slow["r"] = ex(A, {"command": "sleep 3", "timeout_s": 20})


t = threading.Thread(target=slow_exec)
t.start()
busy = False
deadline = time.time() + 20
while time.time() < deadline and not busy:
    st, j, _ = srv.request("GET", "/v1/sessions/" + A)
    busy = st == 200 and j["busy"]
    if not busy:
        time.sleep(0.02)
st, j, text = ex(A, "true")
st2, j2, text2 = put(A, "x.txt", b"x")
t.join()
ok(busy and st == 409 and j["error"]["code"] == "session_busy",
   "a second exec while one runs: 409 session_busy", text)
ok(busy and st2 == 409, "a file upload while an exec runs: 409", text2)
ok(slow["r"][0] == 200 and slow["r"][1]["status"] == "ok", "the first exec finished normally",
   slow["r"][2])

# ---- fork --------------------------------------------------------------------------------------
st, f, text = srv.post("/v1/sessions/%s/fork" % A, {"ttl_s": 600})
F = f["id"] if st == 201 else "s-" + "0" * 24
ok(st == 201 and f["parent"] == A and F != A and f["ttl_s"] == 600 and
   f["limits"] == a["limits"], "fork: 201, a new id, parent set, the parent's limits", text)
st, j, text = ex(F, "cat note.txt; cat bin/all.bytes | wc -c; ls /tmp/ticks >/dev/null && "
                    "echo ticks-copied")
ok(st == 200 and j["stdout"] == "state-1\n16384\nticks-copied\n",
   "the fork has the parent's files (/work and /tmp)", text)
st, j, text = ex(F, "echo child > note.txt; rm big.bin; echo forked-only > mine.txt")
st, j, text = ex(A, "cat note.txt; ls mine.txt 2>&1 >/dev/null | grep -c 'No such'; "
                    "ls big.bin")
ok(st == 200 and j["stdout"] == "state-1\n1\nbig.bin\n",
   "changes in the fork do not reach the parent", text)
ex(A, "echo parent-later > later.txt")
st, j, text = ex(F, "cat note.txt; ls later.txt 2>/dev/null || echo no-later")
ok(st == 200 and j["stdout"] == "child\nno-later\n",
   "nor the parent's later changes the fork", text)

# ---- 429 beyond --max-sessions (4: A, F and two more) ---------------------------------------
extra = [create() for _ in range(2)]
ok(all(e[0] == 201 for e in extra), "up to --max-sessions: 201", [e[2] for e in extra])
r, data = srv.exchange("POST", "/v1/sessions", "{}")
ok(r.status == 429 and json.loads(data)["error"]["code"] == "too_many_sessions" and
   r.getheader("Retry-After"), "beyond --max-sessions: 429 too_many_sessions with Retry-After",
   data)
st, j, text = srv.post("/v1/sessions/%s/fork" % A, {})
ok(st == 429, "a fork beyond --max-sessions: 429", text)
for e in extra:
    st, j, text = srv.request("DELETE", "/v1/sessions/" + e[1]["id"])
    ok(st == 200 and j == {"id": e[1]["id"], "deleted": True}, "delete: 200 {id, deleted}", text)
st, j, text = srv.request("DELETE", "/v1/sessions/" + extra[0][1]["id"])
ok(st == 404, "delete again: 404", text)
st, j, text = ex(extra[0][1]["id"], "true")
ok(st == 404, "exec in a deleted session: 404", text)

# ---- verify: reward 0, fix a file, reward 1 -----------------------------------------------------
RUNNER = r'''import sys
try:
    from calc import add
    good = add(2, 3) == 5 and add(-1, 1) == 0
    why = "wrong sum"
except Exception as e:
    good, why = False, repr(e)
case = ('<testcase classname="t" name="test_add"/>' if good else
        '<testcase classname="t" name="test_add"><failure message="%s"/></testcase>' % why)
open("report.xml", "w").write('<testsuite name="t" tests="1">%s</testsuite>' % case)
sys.exit(0 if good else 1)
'''
task = {"id": "sess/calc", "language": "python", "harness": "command",
        "files": {"test_calc.py": RUNNER}, "command": ["python3", "test_calc.py"],
        "limits": {"cpu_time": 10, "wall_time": 30}}
put(F, "calc.py", b"def add(a, b):\n    return a - b\n")
st, j, text = srv.post("/v1/sessions/%s/verify" % F, {"task": task})
ok(st == 200 and j["verdict"] != "accepted" and j["reward"] == 0 and j["session"] == F,
   "verify over a buggy file: reward 0", text)
put(F, "calc.py", b"def add(a, b):\n    return a + b\n")
st, j, text = srv.post("/v1/sessions/%s/verify" % F, {"task": task})
ok(st == 200 and j["verdict"] == "accepted" and j["reward"] == 1,
   "verify after fixing the file: reward 1", text)
st, j, text = ex(F, "cat note.txt")
ok(st == 200 and j["stdout"] == "child\n", "the session lives on after verify", text)
st, j, text = srv.post("/v1/sessions/%s/verify" % F,
                       {"task": dict(task, harness="stdio", tests=[{"stdin": "", "expected": ""}])})
ok(st == 400, "verify of a task that is not a command task: 400", text)

# ---- TTL and idle reclamation ----------------------------------------------------------------
srv.request("DELETE", "/v1/sessions/" + F)
st, t1, text = create({"ttl_s": 1})
ok(st == 201 and wait_gone(t1["id"]), "a session with ttl_s 1 is reclaimed", text)
st, j, text = srv.request("GET", "/v1/sessions/" + t1["id"])
ok(st == 404, "and its id answers 404", text)
st, i1, text = create({"idle_ttl_s": 1})
ok(st == 201 and wait_gone(i1["id"]), "a session idle for idle_ttl_s 1 is reclaimed", text)
m = srv.metrics()
ok('crucible_sessions_reclaimed_total{reason="ttl"} 1' in m and
   'crucible_sessions_reclaimed_total{reason="idle"} 1' in m and
   'crucible_sessions_reclaimed_total{reason="deleted"} 4' in m,
   "crucible_sessions_reclaimed_total by reason: ttl 1, idle 1, deleted 4",
   [x for x in m.splitlines() if "sessions" in x])
ok(srv.metric("crucible_sessions") == 1 and srv.metric("crucible_sessions_created_total") == 7,
   "crucible_sessions (gauge) and crucible_sessions_created_total",
   [x for x in m.splitlines() if "crucible_sessions" in x])
ok("crucible_session_exec_seconds_count" in m, "session exec latency is a histogram")
st, j, text = srv.request("DELETE", "/v1/sessions/" + A)
ok(st == 200 and live_ids() == [], "every session deleted: the list is empty", text)
ok(srv.stop() == 0, "the server stops cleanly")

# ---- defaults from the command line ------------------------------------------------------------
s2 = Server("--warm", "0", "--session-ttl", "120", "--session-idle-ttl", "30",
            "--max-sessions", "1", tmp=TMP, quiet=False)
st, j, text = create(server=s2)
ok(st == 201 and j["ttl_s"] == 120 and j["idle_ttl_s"] == 30,
   "--session-ttl and --session-idle-ttl are the defaults", text)
st, j, text = create(server=s2)
ok(st == 429, "--max-sessions 1: the second is 429", text)
st, j, text = s2.request("GET", "/v1/sessions")
sid = j["sessions"][0]["id"] if st == 200 and j["sessions"] else None
st, j, text = s2.request("DELETE", "/v1/sessions/%s" % sid)
made = [e for e in s2.events("session_created") if e.get("id") == sid]
ended = [e for e in s2.events("session_ended") if e.get("id") == sid]
ok(len(made) == 1 and made[0]["image"] == "host" and made[0]["parent"] is None and
   len(ended) == 1 and ended[0]["reason"] == "deleted" and ended[0]["execs"] == 0,
   "the log has session_created and session_ended (reason, execs) lines", (made, ended))
st, j, text = create(server=s2)
ok(s2.stop() == 0, "a server with a live session stops cleanly")

import resource  # noqa: E402
import subprocess  # noqa: E402
from taplib import CRUCIBLE, skip  # noqa: E402
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
if hard != resource.RLIM_INFINITY and hard < 4 * 1000000:
    p = subprocess.run([CRUCIBLE, "serve", "--listen", "127.0.0.1:0", "--max-sessions", "1000000"],
                       capture_output=True, timeout=60)
    ok(p.returncode == 2 and b"--max-sessions 1000000 needs" in p.stderr and b"at most" in p.stderr,
       "--max-sessions beyond the descriptor limit: refused at start, naming the most that fits",
       p.stderr)
else:
    skip("--max-sessions beyond the descriptor limit", "the descriptor limit is too large here")
done()
