#!/usr/bin/python3
# writable_root over HTTP (issue 12): /v1/run and /v1/verify (the request field, and the task
# field for a verification) give the job a writable root whose writes reach neither the
# image nor the next job; a warm read-only sandbox never serves a writable-root job, nor the
# other way round; a value that is not a boolean is a 400; records carry image, image_name and
# host_os. Standard library only.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import done, ok  # noqa: E402

TMP = tmpdir("crucible-wr-api-")
NAME = "crucible-e2e-wr-api-%d" % os.getpid()
WRITE = ["/bin/sh", "-c", "echo x > /usr/lib/%s && cat /usr/lib/%s && echo y >> /etc/%s" % (NAME, NAME, NAME)]
LOOK = ["/bin/sh", "-c", "cat /usr/lib/%s 2>&1; test -w /usr/lib; echo w=$?" % NAME]

s = Server("--warm", "2", tmp=TMP)
st, j, text = s.post("/v1/run", {"command": WRITE, "writable_root": True})
ok(st == 200 and j["status"] == "ok" and j["stdout"] == "x\n",
   "/v1/run writable_root: the job writes in /usr and /etc", text)
ok(st == 200 and j["image"] == "host" and j["image_name"] == "host" and j["host_os"],
   "the record carries image, image_name and the host's os-release", text)
ok(not os.path.exists("/usr/lib/" + NAME) and not os.path.exists("/etc/" + NAME),
   "nothing reached the host")
st, j, text = s.post("/v1/run", {"command": LOOK})
ok(st == 200 and "No such file" in j["stdout"] and "w=1" in j["stdout"],
   "the next job (a warm read-only sandbox) sees none of it and cannot write /usr", text)
st, j, text = s.post("/v1/run", {"command": LOOK, "writable_root": True})
ok(st == 200 and "No such file" in j["stdout"] and "w=0" in j["stdout"],
   "a second writable-root job starts from the image again", text)
for bad in ("yes", 1, [True]):
    st, j, text = s.post("/v1/run", {"command": ["true"], "writable_root": bad})
    ok(st == 400 and "writable_root" in text, "writable_root %r: 400 naming the field" % (bad,), text)

task = {"id": "wr/1", "language": "python", "harness": "assert",
        "tests": [{"name": "t", "code": "open('/usr/lib/%s', 'w').write('a')\nassert f() == 1" % NAME}]}
st, j, text = s.post("/v1/verify", {"task": task, "solution": "def f():\n    return 1\n"})
ok(st == 200 and j["verdict"] == "runtime_error",
   "/v1/verify: a task without writable_root cannot write /usr", text)
ok(st == 200 and j.get("image") == "host" and j.get("image_name") == "host" and j.get("host_os"),
   "the verification record carries image, image_name and host_os", text)
st, j, text = s.post("/v1/verify", {"task": task, "solution": "def f():\n    return 1\n",
                                    "writable_root": True})
ok(st == 200 and j["verdict"] == "accepted", "/v1/verify writable_root: the same task is accepted", text)
task["writable_root"] = True
st, j, text = s.post("/v1/verify", {"task": task, "solution": "def f():\n    return 1\n"})
ok(st == 200 and j["verdict"] == "accepted", "a task's own writable_root is honoured", text)
task["writable_root"] = "true"
st, j, text = s.post("/v1/verify", {"task": task, "solution": "def f():\n    return 1\n"})
ok(st == 400 and "writable_root" in text, "a task's writable_root that is no boolean: 400", text)
st, j, text = s.post("/v1/batch", {"items": [{"kind": "run", "command": WRITE, "writable_root": True},
                                             {"kind": "run", "command": LOOK}]})
ok(st == 200 and '"x\\n"' in text and "No such file" in text,
   "batch items take writable_root, and the next item sees none of it", text)
ok(not os.path.exists("/usr/lib/" + NAME), "still nothing on the host")
done()
