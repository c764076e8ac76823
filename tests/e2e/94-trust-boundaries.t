#!/usr/bin/python3
# crucible serve's trust boundaries, end to end on loopback with the real binary (issue 10):
#   images   over HTTP only images the operator registered (--image NAME=DIR, --images-file) may
#            be named, in a request and in a task (inline or from the library); a host path is a
#            400 and nothing runs; the CLI keeps taking a directory;
#   pids     limits.pids above --max-pids is a 400; running jobs never reserve more pids than
#            --pids together (observed on /metrics while they run, no timing threshold);
#   batch    "after": [0, 0] completes (one dependency); self and forward references are 400s;
#   timeouts every timeout below the minimum (0.01 s) is refused: 400 over HTTP, exit 2 on the CLI.
# Standard library only.
import http.client
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import CRUCIBLE, done, ok, skip  # noqa: E402

TMP = tmpdir("crucible-trust-")
os.chmod(TMP, 0o755)  # the sandbox user walks to a directory image through it


def ran(srv):
    """Jobs the server finished (any kind, any status)."""
    return sum(float(l.rsplit(" ", 1)[1]) for l in srv.metrics().splitlines()
               if l.startswith("crucible_jobs_completed_total"))


def serve_exit(*args):
    """crucible serve's exit code and stderr for a command line it must refuse at once."""
    p = subprocess.run([CRUCIBLE, "serve", "--listen", "127.0.0.1:0", "--quiet"] + list(args),
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stderr


def batch(srv, body, timeout=30):
    """POST /v1/batch: (status, parsed lines, text); a stream that never ends is status None
    (the old server waited for a second completion of a repeated dependency forever)."""
    try:
        st, j, text = srv.post("/v1/batch", body, timeout=timeout)
    except (TimeoutError, OSError) as e:
        return None, [], "no end of the stream: %r" % e
    lines = [json.loads(l) for l in text.splitlines() if l.strip()] if st == 200 else []
    return st, lines, text


def err_of(j):
    return (j or {}).get("error", {}).get("message", "")


# --- a registered image: a directory holding one static program ------------------------------
img = os.path.join(TMP, "image")
os.makedirs(img)
src = os.path.join(TMP, "hello.c")
with open(src, "w") as f:
    f.write('#include <stdio.h>\nint main(void) { puts("inside the registered image"); return 0; }\n')
cc = subprocess.run(["cc", "-static", "-O1", "-o", os.path.join(img, "hello"), src],
                    capture_output=True, text=True)
have_img = cc.returncode == 0
# A host directory a client must never mount: it holds the server's token file.
secret_dir = os.path.join(TMP, "secrets")
os.makedirs(secret_dir)
with open(os.path.join(secret_dir, "token"), "w") as f:
    f.write("s3cret-token\n")
images_file = os.path.join(TMP, "images")
with open(images_file, "w") as f:
    f.write("# registered from a file\n\nfiled=%s\n" % img)

# --- option validation: a clear error, exit 2 ------------------------------------------------
for args, what in ((["--image", "noequals"], "NAME=DIR"), (["--image", "host=" + img], "reserved"),
                   (["--image", "x=relative/dir"], "absolute"), (["--image", "x=/no/such/dir"], "unknown image"),
                   (["--image", "a=" + img, "--image", "a=" + img], "twice"),
                   (["--images-file", "/no/such/file"], "images file"),
                   (["--max-pids", "0"], "--max-pids"), (["--max-pids", "100000"], "--max-pids"),
                   (["--pids", "10"], "--pids"), (["--pids", "99999999"], "--pids"),
                   (["--max-pids", "300", "--pids", "200"], "does not fit")):
    rc, err = serve_exit(*args)
    ok(rc == 2 and what in err, "serve %s: exit 2 naming the problem" % " ".join(args), (rc, err))
help_text = subprocess.run([CRUCIBLE, "serve", "--help"], capture_output=True, text=True).stdout
ok(all(o in help_text for o in ("--image NAME=DIR", "--images-file", "--max-pids", "--pids")),
   "serve --help lists --image, --images-file, --max-pids, --pids", help_text)

# --- images over HTTP --------------------------------------------------------------------------
db = os.path.join(TMP, "lib.db")
args = ["--slots", "2", "--db", db, "--images-file", images_file]
if have_img:
    args += ["--image", "hello=" + img]
s = Server(*args, tmp=TMP)
before = ran(s)
probe = {"command": ["/bin/cat", "/token"], "image": secret_dir}
st, j, text = s.post("/v1/run", probe)
ok(st == 400 and "'%s'" % secret_dir in err_of(j) and "--image NAME=DIR" in err_of(j)
   and "host path" in err_of(j), "/v1/run with a host directory as image: 400 saying how to register one", text)
st, j, text = s.post("/v1/run", {"command": ["/bin/true"], "image": "no-such"})
ok(st == 400 and "unknown image 'no-such'" in err_of(j) and "host" in err_of(j) and "filed" in err_of(j),
   "/v1/run with an unknown name: 400 listing the registered ones", text)
st, j, text = s.post("/v1/run", {"code": "print(1)", "language": "python", "image": "/"})
ok(st == 400 and "image" in err_of(j), "/v1/run code with image '/': 400", text)
task = {"id": "t/img", "language": "python", "harness": "assert", "image": secret_dir,
        "tests": [{"code": "assert open('/token').read()"}]}
st, j, text = s.post("/v1/verify", {"task": task, "solution": "x = 1"})
ok(st == 400 and "task: image" in err_of(j) and "--image NAME=DIR" in err_of(j),
   "/v1/verify with an inline task whose image is a host directory: 400", text)
st, j, text = s.post("/v1/batch", {"items": [{"kind": "run", "command": ["/bin/true"]},
                                             {"kind": "run", "command": ["/bin/ls"], "image": secret_dir}]})
ok(st == 400 and "items[1]" in err_of(j) and "image" in err_of(j),
   "/v1/batch with an item naming a host directory: 400 for the whole batch", text)
st, j, text = s.post("/v1/tasks", json.dumps(task) + "\n")
imported = st == 200
st, j, text = s.post("/v1/verify", {"task_id": "t/img", "solution": "x = 1"})
ok(imported and st == 400 and "task: image" in err_of(j),
   "/v1/verify of a library task whose image is a host directory: 400", text)
ok(ran(s) == before, "nothing ran for any of the refused requests", (before, ran(s)))
if have_img:
    st, j, text = s.post("/v1/run", {"command": ["/hello"], "image": "hello"})
    ok(st == 200 and j["status"] == "ok" and j["stdout"] == "inside the registered image\n"
       and j["image"] == "hello", "/v1/run in a registered image (--image): runs; the record names it, not its path", text)
    st, j, text = s.post("/v1/run", {"command": ["/hello"], "image": "filed"})
    ok(st == 200 and j["status"] == "ok" and j["image"] == "filed",
       "/v1/run in an image registered by --images-file", text)
    # CLI: the local user still gives a directory
    p = subprocess.run([CRUCIBLE, "run", "--json", "--image", img, "--", "/hello"],
                       capture_output=True, text=True, timeout=60)
    rec = json.loads(p.stdout or "{}")
    ok(p.returncode == 0 and rec.get("stdout") == "inside the registered image\n",
       "crucible run --image DIR: the CLI takes a directory", (p.returncode, p.stdout, p.stderr))
else:
    for d in ("/v1/run in a registered image", "/v1/run in an --images-file image", "crucible run --image DIR"):
        skip(d, "no static C toolchain to build the image's program: " + cc.stderr[-200:])
st, j, text = s.post("/v1/run", {"command": ["/bin/true"], "image": "host"})
ok(st == 200 and j["status"] == "ok" and j["image"] == "host", "/v1/run image 'host' still works", text)

# --- batch dependencies ------------------------------------------------------------------------
st, lines, text = batch(s, {"items": [{"kind": "run", "command": ["/bin/echo", "a"]},
                                     {"kind": "run", "command": ["/bin/echo", "b"], "after": [0, 0, 0]}]})
ok(st == 200 and sorted(x["index"] for x in lines) == [0, 1] and lines[-1]["result"]["stdout"] == "b\n",
   "/v1/batch: after [0, 0, 0] is one dependency; the stream completes", text)
st, lines, text = batch(s, {"items": [{"kind": "run", "command": ["/bin/false"]},
                                     {"kind": "run", "command": ["/bin/true"], "after": [0, 0]}]})
ok(st == 200 and len(lines) == 2 and lines[1].get("skipped") is True,
   "/v1/batch: after [0, 0] on a failed item: skipped once, the stream completes", text)
for after, why in (([1], "the item itself"), ([2], "a later item"), ([-1], "a negative number"),
                   (["0"], "a non-integer")):
    st, j, text = s.post("/v1/batch", {"items": [{"kind": "run", "command": ["/bin/true"]},
                                                 {"kind": "run", "command": ["/bin/true"], "after": after},
                                                 {"kind": "run", "command": ["/bin/true"]}]})
    ok(st == 400 and "items[1]" in err_of(j) and why in err_of(j),
       "/v1/batch: after %s is refused (%s)" % (json.dumps(after), why), text)

# --- timeouts below the minimum ------------------------------------------------------------------
for path, body, field in (
        ("/run_code", {"code": "print(1)", "language": "python", "run_timeout": 0.001}, "run_timeout"),
        ("/run_code", {"code": "print(1)", "language": "python", "run_timeout": 0}, "run_timeout"),
        ("/run_code", {"code": "int main(){}", "language": "cpp", "compile_timeout": 0.005}, "compile_timeout"),
        ("/v1/run", {"command": ["/bin/true"], "limits": {"cpu_time": 0.001}}, "cpu_time"),
        ("/v1/run", {"command": ["/bin/true"], "limits": {"wall_time": 0.005}}, "wall_time"),
        ("/v1/verify", {"task": dict(task, image="host", limits={"wall_time": 0.001}), "solution": "x = 1"}, "wall_time"),
        ("/v1/verify", {"task": dict(task, image="host", time_limit={"factor": 2, "min": 0.001,
                                                                    "reference_time": 0.1}), "solution": "x = 1"}, "min")):
    st, j, text = s.post(path, body)
    ok(st == 400 and field in err_of(j) and "0.01" in err_of(j),
       "%s: %s below 0.01 s is a 400 naming the minimum" % (path, field), text)
st, j, text = s.post("/run_code", {"code": "print(1)", "language": "python", "run_timeout": 0.01})
ok(st == 200 and j.get("status") in ("Success", "Failed"), "/run_code: run_timeout 0.01 (the minimum) is taken", text)
for opt in ("--cpu-time", "--wall-time"):
    p = subprocess.run([CRUCIBLE, "run", opt, "0.001", "--", "/bin/true"], capture_output=True, text=True)
    ok(p.returncode == 2 and opt in p.stderr and "0.01" in p.stderr,
       "crucible run %s 0.001: exit 2 naming the minimum" % opt, (p.returncode, p.stderr))
rc = s.stop()
ok(rc == 0, "the server stops cleanly on SIGTERM", rc)

# --- pids: a cap per job, a budget for all running jobs -------------------------------------------
s = Server("--slots", "2", "--max-pids", "150", "--pids", "200", "--warm", "0", tmp=TMP)
st, j, text = s.post("/v1/run", {"command": ["/bin/true"], "limits": {"pids": 151}})
ok(st == 400 and "limits.pids" in err_of(j) and "--max-pids" in err_of(j),
   "/v1/run limits.pids above --max-pids: 400 naming the option", text)
st, j, text = s.post("/v1/verify", {"task": dict(task, image="host", limits={"pids": 1000}), "solution": "x = 1"})
ok(st == 400 and "task: limits.pids" in err_of(j), "/v1/verify of a task whose pids exceed the cap: 400", text)
st, j, text = s.post("/v1/run", {"code": "int main(void){return 0;}", "language": "c", "limits": {"pids": 10}})
ok(st == 400 and "processes" in err_of(j) and "--pids" in err_of(j),
   "/v1/run of C code (its build step needs 256 pids) beyond the --pids budget: 400", text)
ok(s.metric("crucible_pids_budget") == 200, "/metrics: crucible_pids_budget", s.metric("crucible_pids_budget"))

seen = {"running": 0, "pids": 0}
stop = threading.Event()


def watch():
    while not stop.is_set():
        try:
            r, p = s.metric("crucible_jobs_running"), s.metric("crucible_pids_reserved")
        except OSError:
            continue
        seen["running"] = max(seen["running"], r or 0)
        seen["pids"] = max(seen["pids"], p or 0)
        time.sleep(0.02)


def batch_of_two(pids):
    item = {"kind": "run", "command": ["/bin/sleep", "1.5"], "limits": {"pids": pids}}
    return batch(s, {"items": [item, item]}, timeout=120)


# Two jobs of 100 pids each (101 with init): both fit in 200? No: one at a time.
seen.update(running=0, pids=0)
t = threading.Thread(target=watch)
t.start()
st, lines, text = batch_of_two(100)
stop.set()
t.join()
ok(st == 200 and len(lines) == 2 and all(x["result"]["status"] == "ok" for x in lines),
   "a batch of two 100-pid jobs completes", text)
ok(seen["running"] == 1 and 0 < seen["pids"] <= 200,
   "with --pids 200, two jobs of 101 pids never run together (jobs_running at most 1, pids_reserved <= 200)", seen)
# The control: small jobs do run side by side on the same server (the watcher sees it).
stop.clear()
seen.update(running=0, pids=0)
t = threading.Thread(target=watch)
t.start()
st, lines, text = batch_of_two(20)
stop.set()
t.join()
ok(st == 200 and seen["running"] == 2 and seen["pids"] == 42,
   "two jobs of 21 pids run together (jobs_running 2, pids_reserved 42)", seen)
ok(s.metric("crucible_pids_reserved") == 0, "pids_reserved returns to 0", s.metric("crucible_pids_reserved"))
rc = s.stop()
ok(rc == 0, "the server stops cleanly on SIGTERM (exit 0; a sanitizer's report would change it)", rc)
done()
