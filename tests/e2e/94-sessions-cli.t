#!/usr/bin/python3
# `crucible session` against a real server (docs/API.md, "Sessions"): create prints an id; sh
# and exec print the program's output and exit 1 when it did not end ok; put and get move
# bytes unchanged (0..255); ls lists; fork prints a new id whose files are the parent's; verify
# prints the record and exits by its verdict; rm deletes (then 404, exit 2); errors of the
# server, of usage and of an unreachable server exit 2 with a message. Standard library only.
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, tmpdir  # noqa: E402
from taplib import CRUCIBLE, done, ok  # noqa: E402

TMP = tmpdir("crucible-sessions-cli-")
srv = Server("--warm", "0", tmp=TMP)
ENV = dict(os.environ, CRUCIBLE_SERVER="127.0.0.1:%d" % srv.port)


def cli(*args, data=None):
    p = subprocess.run([CRUCIBLE, "session"] + list(args), input=data, capture_output=True,
                       env=ENV, timeout=120)
    return p.returncode, p.stdout, p.stderr.decode(errors="replace")


rc, out, err = cli("create", "--memory", "256", "--ttl", "600")
sid = out.decode().strip()
ok(rc == 0 and sid.startswith("s-") and len(sid) == 26, "create prints the new id", (rc, out, err))
rc, out, err = cli("sh", sid, "echo hello > f.txt; cat f.txt; echo oops >&2")
ok(rc == 0 and out == b"hello\n" and "oops" in err, "sh: stdout and stderr, exit 0", (rc, out, err))
rc, out, err = cli("exec", sid, "--timeout", "10", "--", "python3", "-c",
                   "import sys; print(sys.argv[1:])", "a b", "c")
ok(rc == 0 and out == b"['a b', 'c']\n", "exec: argv words reach the program as they are",
   (rc, out, err))
rc, out, err = cli("exec", sid, "--", "/bin/sh", "-c", "exit 3")
ok(rc == 1 and "runtime_error" in err and "exit status 3" in err,
   "a program that fails: exit 1, its status on stderr", (rc, out, err))
blob = bytes(range(256))
rc, out, err = cli("put", sid, "bin/all", data=blob)
ok(rc == 0 and json.loads(out)["size"] == 256, "put: from stdin", (rc, out, err))
rc, out, err = cli("get", sid, "bin/all")
ok(rc == 0 and out == blob, "get: the same bytes back", (rc, err))
rc, out, err = cli("ls", sid)
names = [e["name"] for e in json.loads(out)["entries"]] if rc == 0 else []
ok(names == ["bin", "f.txt"], "ls: the entries of /work", (rc, out, err))
rc, out, err = cli("fork", sid)
fid = out.decode().strip()
ok(rc == 0 and fid.startswith("s-") and fid != sid, "fork prints a new id", (rc, out, err))
rc, out, err = cli("sh", fid, "cat f.txt")
ok(rc == 0 and out == b"hello\n", "the fork has the parent's files", (rc, out, err))
task = {"id": "cli/t", "language": "python", "harness": "command",
        "command": ["python3", "-c",
                    "import sys; ok = open('f.txt').read() == 'fixed\\n'; "
                    "open('report.xml', 'w').write('<testsuite><testcase classname=\"t\" "
                    "name=\"f\">%s</testcase></testsuite>' % ('' if ok else '<failure/>')); "
                    "sys.exit(0 if ok else 1)"],
        "limits": {"cpu_time": 10, "wall_time": 30}}
with open(os.path.join(TMP, "task.json"), "w") as f:
    json.dump(task, f)
rc, out, err = cli("verify", fid, os.path.join(TMP, "task.json"))
ok(rc == 1 and json.loads(out)["reward"] == 0, "verify before the fix: the record, exit 1",
   (rc, out, err))
cli("sh", fid, "echo fixed > f.txt")
rc, out, err = cli("verify", fid, os.path.join(TMP, "task.json"))
ok(rc == 0 and json.loads(out)["reward"] == 1, "verify after the fix: reward 1, exit 0",
   (rc, out, err))
rc, out, err = cli("info", sid)
ok(rc == 0 and json.loads(out)["execs"] == 3, "info: the session's info (its execs)",
   (rc, out, err))
rc, out, err = cli("list")
ok(rc == 0 and json.loads(out)["count"] == 2, "list: both sessions", (rc, out, err))
rc, out, err = cli("rm", fid)
ok(rc == 0, "rm", (rc, out, err))
rc, out, err = cli("info", fid)
ok(rc == 2 and "404" in err, "info of a deleted session: exit 2, the server's 404", (rc, err))
rc, out, err = cli("create", "--memory", "1")
ok(rc == 2 and "memory_mb" in err, "a server's 400: exit 2 naming the field", (rc, err))
rc, out, err = cli("frobnicate")
ok(rc == 2 and "unknown command" in err, "an unknown command: exit 2", (rc, err))
rc, out, err = cli("--server", "127.0.0.1:1", "list")
ok(rc == 2 and "cannot connect" in err, "no server there: exit 2 saying so", (rc, err))
rc, out, err = cli("--help")
ok(rc == 0 and b"crucible session" in out, "--help", (rc, err))
ok(srv.stop() == 0, "the server stops cleanly")
done()
