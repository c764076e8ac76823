#!/usr/bin/env python3
"""HTML reports: `crucible eval --report` and `crucible report` with a baseline, checked
against the records themselves (counted here, not by the code under test); a record carrying
markup is escaped; bad input is refused with the reason. The browser side (the report opens
with no console error) is in 98-dashboard.t."""
import collections
import html
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import tmpdir  # noqa: E402
from taplib import CRUCIBLE, ROOT, done, ok  # noqa: E402

TMP = tmpdir("crucible-report-")
TASKS = os.path.join(ROOT, "examples", "tasks.jsonl")
SOLS = os.path.join(ROOT, "examples", "solutions.jsonl")


def run(*args):
    return subprocess.run([CRUCIBLE] + list(args), capture_output=True, text=True, timeout=600)


def table(page, ident):
    """The rows of <table id=ident>, each a list of its cells' text."""
    m = re.search(r'<table id="%s">(.*?)</table>' % ident, page, re.S)
    rows = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", m.group(1) if m else "", re.S)[1:]:
        rows.append([html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
                     for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)])
    return rows


out, rep = os.path.join(TMP, "now.jsonl"), os.path.join(TMP, "now.html")
r = run("eval", "--tasks", TASKS, "--solutions", SOLS, "-j", "2", "--out", out, "--report", rep)
recs = [json.loads(x) for x in open(out)] if os.path.exists(out) else []
ok(r.returncode == 0 and recs and os.path.exists(rep),
   "eval --report writes the report beside the records", r.stderr[-2000:])
page = open(rep).read() if os.path.exists(rep) else ""

want = collections.Counter(x["verdict"] for x in recs)
got = {row[0]: int(row[1]) for row in table(page, "verdicts")}
ok(got == dict(want), "the verdict mix is the records' (%s)" % dict(want), (got, dict(want)))
accepted = sum(1 for x in recs if x["verdict"] == "accepted")
ok('id="records">%d<' % len(recs) in page and 'id="accepted">%d<' % accepted in page,
   "the headline counts: %d records, %d accepted" % (len(recs), accepted))

tags = {}
for line in open(TASKS):
    t = json.loads(line)
    tags[t["id"]] = t.get("tags", [])
per_tag = collections.defaultdict(lambda: [set(), 0, 0])
for x in recs:
    for tg in tags.get(x["task_id"]) or ["(no tag)"]:
        per_tag[tg][0].add(x["task_id"])
        per_tag[tg][1] += 1
        per_tag[tg][2] += x["verdict"] == "accepted"
got = {row[0]: (int(row[1]), int(row[2]), int(row[3])) for row in table(page, "tags")}
ok(got == {k: (len(v[0]), v[1], v[2]) for k, v in per_tag.items()},
   "pass rates by tag: tasks, records and accepted per tag of the task file", got)
langs = {row[0] for row in table(page, "languages")}
ok(langs == {x["language"] for x in recs}, "pass rates by language: every language", langs)

fails = table(page, "failures")
ok(sum(int(row[1]) for row in fails) == len(recs) - accepted and
   any("assertion failed" in row[0] for row in fails),
   "failures grouped by message: every failed record in one group", fails)
walls = sorted((t["wall_time"] for x in recs for t in x.get("tests", [])), reverse=True)[:20]
slow = [float(row[2].split()[0]) for row in table(page, "slowest")]
ok(slow and len(slow) == len(walls) and all(abs(a - b) < 0.0015 for a, b in zip(slow, walls)),
   "the slowest tests, slowest first (%d)" % len(slow), (slow, walls))

# ---- two checkpoints: the references (all accepted) against the demo's solutions ------
base = os.path.join(TMP, "base.jsonl")
r = run("eval", "--tasks", TASKS, "--reference", "-j", "2", "--out", base)
diff_html = os.path.join(TMP, "diff.html")
r = run("report", out, "--baseline", base, "--tasks", TASKS, "--title", "step 200 vs reference",
        "--out", diff_html)
ok(r.returncode == 0, "crucible report RESULTS --baseline OLD writes the comparison", r.stderr)
page = open(diff_html).read() if os.path.exists(diff_html) else ""


def solved(path):
    by = collections.defaultdict(int)
    for line in open(path):
        x = json.loads(line)
        by[x["task_id"]] += x["verdict"] == "accepted"
    return by


now, then = solved(out), solved(base)
broken = sorted(t for t in now if now[t] == 0 and then.get(t, 0) > 0)
newly = sorted(t for t in now if now[t] > 0 and then.get(t, 1) == 0)
rows = table(page, "diff")
ok(sorted(row[0] for row in rows if row[1] == "newly broken") == broken and
   sorted(row[0] for row in rows if row[1] == "newly solved") == newly and broken,
   "newly broken: %s; newly solved: %s — as the two files say" % (broken, newly), rows)
ok("<title>step 200 vs reference</title>" in page, "--title names the report")
r = run("report", base, "--baseline", out)
rows = table(r.stdout, "diff")
ok(r.returncode == 0 and sorted(row[0] for row in rows if row[1] == "newly solved") == broken,
   "the other way round, the same tasks are newly solved", rows)

# ---- the task library's report: tasks stats --report ----------------------------------
db = os.path.join(TMP, "lib.db")
run("tasks", "import", "--db", db, TASKS)
for model, src in [("m-ref", ["--reference"]), ("m-demo", ["--solutions", SOLS])]:
    run("eval", "--db", db, "--model", model, "-j", "2", "--out", os.devnull, *src)
lib = os.path.join(TMP, "lib.html")
r = run("tasks", "stats", "--db", db, "--report", lib)
page = open(lib).read() if os.path.exists(lib) else ""
st = json.loads(run("tasks", "stats", "--db", db, "--json").stdout)
ok(r.returncode == 0 and {row[0]: int(row[1]) for row in table(page, "all-buckets")} ==
   st["buckets"] and {row[0]: int(row[1]) for row in table(page, "status")} == st["status"],
   "tasks stats --report: buckets and statuses as tasks stats --json counts them", r.stderr)
for i, model in enumerate(["m-demo", "m-ref"]):  # models by name
    ms = json.loads(run("tasks", "stats", "--db", db, "--model", model, "--json").stdout)
    hist = [int(row[1]) for row in table(page, "model-%d-histogram" % i)]
    ok(model in page and {row[0]: int(row[1]) for row in table(page, "model-%d-buckets" % i)} ==
       ms["buckets"] and hist == [h["tasks"] for h in ms["histogram"]],
       "... and per model (%s): its buckets and histogram" % model, (hist, ms))

# ---- a hostile record: its text is text, never markup ---------------------------------
evil = os.path.join(TMP, "evil.jsonl")
with open(evil, "w") as f:
    f.write(json.dumps({"task_id": "x/<img src=x onerror=alert(1)>", "language": "python",
                        "verdict": "wrong_answer", "reward": 0,
                        "message": "<script>alert(1)</script> & \"quotes\"",
                        "tests": [{"name": "<b>t</b>", "verdict": "wrong_answer",
                                   "wall_time": 1.5, "cpu_time": 1}]}) + "\n")
r = run("report", evil)
ok(r.returncode == 0 and "<script>" not in r.stdout and "<img" not in r.stdout and
   "<b>t</b>" not in r.stdout and "&lt;script&gt;alert(1)&lt;/script&gt; &amp;" in r.stdout,
   "a record's markup is escaped (script, img, b): the report runs nothing of a record's",
   r.stdout[-1500:])

# ---- bad input ------------------------------------------------------------------------
notrec = os.path.join(TMP, "notrec.jsonl")
with open(notrec, "w") as f:
    f.write(json.dumps(recs[0]) + "\n[1, 2]\n")
for args, needle, what in [
        ([os.path.join(TMP, "missing.jsonl")], "No such file", "a missing file"),
        ([notrec], "line 2: not a JSON object", "a line that is not a record, by its number"),
        ([], "exactly one results file", "no results file"),
        ([out, "--baseline", notrec], "line 2", "a bad baseline"),
        ([out, "--tasks", out], "line 1: not a task", "a results file given as --tasks"),
        ([out, "--out", os.path.join(TMP, "no", "such", "dir.html")], "No such file",
         "an --out that cannot be written")]:
    r = run("report", *args)
    ok(r.returncode == 2 and needle in r.stderr, "refused with the reason: " + what, r.stderr)
r = run("eval", "--tasks", TASKS, "--reference", "-j", "2", "--out", os.devnull, "--report",
        os.path.join(TMP, "no", "such.html"))
ok(r.returncode == 1 and "--report" in r.stderr and "No such file" in r.stderr,
   "eval --report to a path it cannot write: exit 1, saying so", r.stderr[-500:])
done()
