#!/usr/bin/python3
# Memory crucible serve holds for a job's output, measured from the server's own RSS
# (/proc/PID/status VmHWM, the peak) with generous bounds: captured output is capped per
# request (--max-output-kb: 400 above it), held answers fit a server-wide budget
# (--output-budget-mb: cut, and the record says so), and /run_code's fetch_files are read
# once per distinct path, capped in count and in bytes (--max-fetch-mb), with what could
# not be read reported in fetch_errors. Standard library only.
import base64
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import Server, ok_rss, tmpdir  # noqa: E402
from taplib import CRUCIBLE, done, ok  # noqa: E402

TMP = tmpdir("crucible-memory-")
MB = 1024


def serve(*args):
    """A server with no warm sandboxes that logs its events (no --quiet)."""
    return Server("--warm", "0", *args, tmp=TMP, quiet=False, timeout=120)


def spew(n_mb):
    """A command writing n_mb MiB of 0xff to stdout and to stderr (not UTF-8: the costliest)."""
    return ["python3", "-c", "import os\nb = b'\\xff' * (1 << 20)\nfor _ in range(%d):\n"
            "    os.write(1, b)\n    os.write(2, b)\n" % n_mb]


# --- the output a request may capture is capped (--max-output-kb, default 8192) -----------
s = serve("--slots", "2")
st, j, text = s.post("/v1/run", {"command": ["true"]})  # warm up: the baseline after one job
base = s.status_kb("VmHWM")
st, j, text = s.post("/v1/run", {"command": spew(32), "limits": {"output_kb": 1 << 20}})
ok(st == 400 and "limits.output_kb" in j["error"]["message"] and "8192" in j["error"]["message"]
   and "--max-output-kb" in j["error"]["message"],
   "output_kb above the server's cap: 400 naming the field and the cap", text[:400])
st, j, text = s.post("/v1/run", {"command": spew(32), "limits": {"output_kb": 8192}})
grew = s.status_kb("VmHWM") - base
ok(st == 200 and j["status"] == "output_limit" and j["stdout_truncated"]
   and len(base64.b64decode(j["stdout_base64"])) == 8192 * 1024,
   "32 MiB of 0xff per stream at the cap: output_limit, truncated at 8 MiB", str(text[:300]))
# 8 MiB per stream of bytes that are not UTF-8 answered as escaped text plus base64: about
# 16 MiB x 13 at the very worst; the old server took over 1 GB for this job's 32 MiB.
ok_rss(grew < 300 * MB, "server peak RSS grew %d MiB (< 300) for it" % (grew // MB))
st, j, text = s.post("/v1/verify", {"task": {"id": "big-out", "language": "python", "harness": "stdio",
                                             "limits": {"output_kb": 65536},
                                             "tests": [{"name": "t", "stdin": "", "expected": "1\n"}]},
                                    "solution": "print(1)"})
ok(st == 400 and "task's limits.output_kb" in j["error"]["message"],
   "a task asking more output than the cap: 400", text[:300])
# A verification keeps excerpts of each test's output, not the output: 30 tests printing
# 7 MiB each held 210 MiB until the last one ran.
s.stop()
s = serve("--slots", "2")
st, j, text = s.post("/v1/run", {"command": ["true"]})
base = s.status_kb("VmHWM")
st, j, text = s.post("/v1/verify", {"task": {"id": "many-big", "language": "python", "harness": "stdio",
                                             "limits": {"output_kb": 8192},
                                             "tests": [{"name": "t%d" % i, "stdin": "", "expected": "1\n"}
                                                       for i in range(30)]},
                                    "solution": "import os\nos.write(1, b'x' * (7 << 20))\n"})
grew = s.status_kb("VmHWM") - base
ok(st == 200 and j["verdict"] == "wrong_answer" and len(j["tests"]) == 30
   and all(len(t["stdout"]) == 512 for t in j["tests"]),
   "a verification of 30 tests printing 7 MiB each: answered with 512-byte excerpts", str(text[:300]))
ok_rss(grew < 120 * MB, "server peak RSS grew %d MiB (< 120) for it" % (grew // MB))
s.stop()

# --- the server-wide budget for answers not yet sent ---------------------------------------
s = serve("--slots", "2", "--output-budget-mb", "16")
st, j, text = s.post("/v1/run", {"command": ["true"]})
base = s.status_kb("VmHWM")
st, j, text = s.post("/v1/run", {"command": spew(8), "limits": {"output_kb": 8192}})
grew = s.status_kb("VmHWM") - base
ok(st == 200 and "output_limited" in j and "--output-budget-mb" in j["output_limited"]
   and j["stdout_truncated"] and len(base64.b64decode(j["stdout_base64"])) < 1 << 20,
   "over the output budget: the output is cut and output_limited says why",
   json.dumps({k: v for k, v in (j or {}).items() if "std" not in k})[:400])
ok_rss(grew < 150 * MB, "server peak RSS grew %d MiB (< 150) with a 16 MB budget" % (grew // MB))
st, j, text = s.post("/v1/run", {"command": ["echo", "small"]})
ok(st == 200 and j["stdout"] == "small\n" and "output_limited" not in j,
   "the budget is given back once answered: the next job's output is whole", text[:300])
s.stop()

# --- fetch_files: de-duplicated, capped, unreadable entries reported ----------------------
s = serve("--slots", "2", "--max-fetch-mb", "12")
st, j, text = s.post("/run_code", {"code": "print(1)", "language": "python"})
base = s.status_kb("VmHWM")
make8 = "open('big.bin', 'wb').write(b'x' * (8 << 20))\n"
st, j, text = s.post("/run_code", {"code": make8, "language": "python",
                                   "fetch_files": ["big.bin"] * 20})
grew = s.status_kb("VmHWM") - base
ok(st == 200 and j["status"] == "Success" and list(j["files"]) == ["big.bin"]
   and len(base64.b64decode(j["files"]["big.bin"])) == 8 << 20,
   "fetch_files naming one 8 MiB file 20 times: read once", str(text[:300]))
ok_rss(grew < 100 * MB, "server peak RSS grew %d MiB (< 100; 20 reads took ~190 MiB before)" % (grew // MB))
st, j, text = s.post("/run_code", {"code": "import os\nos.write(1, b'\\xffok\\n')\n", "language": "python"})
ok(st == 200 and j["run_result"] and j["run_result"]["stdout"] == "\\xffok\n",
   "/run_code output that is not UTF-8: escaped text, not a lost run_result", text[:300])
st, j, text = s.post("/run_code", {"code": "print(1)", "language": "python",
                                   "fetch_files": ["f%d" % i for i in range(101)]})
ok(st == 400 and "fetch_files" in j["error"]["message"] and "100" in j["error"]["message"],
   "fetch_files naming 101 distinct paths: 400 naming the cap", text[:300])
st, j, text = s.post("/run_code", {"code": "open('a.txt', 'w').write('A')\n", "language": "python",
                                   "fetch_files": ["a.txt", "missing.txt"]})
ok(st == 200 and j["files"] == {"a.txt": base64.b64encode(b"A").decode()}
   and "missing.txt" in j.get("fetch_errors", {}) and "missing.txt" not in j["files"],
   "a missing fetch file: left out of files (as SandboxFusion) and reported in fetch_errors",
   text[:400])
st, j, text = s.post("/run_code", {"code": "for n in 'ab':\n    open(n, 'wb').write(b'x' * (7 << 20))\n",
                                   "language": "python", "fetch_files": ["a", "b"]})
ok(st == 200 and list(j["files"]) == ["a"] and "request may read back" in j.get("fetch_errors", {}).get("b", ""),
   "fetched bytes over --max-fetch-mb: the file that does not fit is reported, not read",
   str(text[:400]))
s.stop()

# --- the options are validated ----------------------------------------------------------
bad = []
for opt, val in [("--max-output-kb", "0"), ("--output-budget-mb", "1"), ("--max-fetch-mb", "x"),
                 ("--stream-buffer-mb", "5000"), ("--stream-stall-s", "0")]:
    p = subprocess.run([CRUCIBLE, "serve", opt, val], capture_output=True, text=True, timeout=30)
    if p.returncode != 2 or opt not in p.stderr or len(p.stderr.splitlines()) != 1:
        bad.append((opt, val, p.returncode, p.stderr))
help_text = subprocess.run([CRUCIBLE, "serve", "--help"], capture_output=True, text=True).stdout
ok(not bad and all(o in help_text for o in ("--max-output-kb", "--output-budget-mb", "--max-fetch-mb",
                                             "--stream-buffer-mb", "--stream-stall-s")),
   "bad values of the memory options: exit 2, one line naming the option; all in --help", bad)

done()
