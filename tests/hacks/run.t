#!/usr/bin/env python3
"""crucible's reward-hacking suite (TAP, run by prove; Python 3 standard library only).

Every tests/hacks/cases/NAME.EXT is a solution that tries to get a reward it has not earned;
its first comment lines say against which task and what verdict it must get (README.md):

    # task: tasks/py-values.json              (or examples/tasks.jsonl#demo/py-add)
    # expect: wrong_answer                     (alternatives with |)
    # hack: what it tries
    # gap: why crucible cannot stop it         (optional: a known gap, reported as TODO)

All cases run in one `crucible eval` of the real binary ($CRUCIBLE, else build/crucible), each
against its own copy of its task, and each gives one TAP line: the verdict is the expected one
and the reward is 0 (a case expecting `accepted` must get 1). A case marked `gap:` is reported
`# TODO known gap: ...`, so that prove counts it without hiding it; when crucible starts
catching it, prove says the TODO passed and the marker should go. Cases of a language whose
toolchain is missing are skipped, saying so. Then two more lines: every task of the suite
accepts its reference (a case fails for its hack, not for a broken task), and no run ended in
infra_error.
"""

import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CRUCIBLE = os.environ.get("CRUCIBLE") or os.path.join(REPO, "build", "crucible")
HEADER = re.compile(r"^\s*(?:#|//)\s*(task|expect|hack|gap)\s*:\s*(.*?)\s*$")
CONT = re.compile(r"^\s*(?:#|//) +(.*)$")
VERDICTS = {"accepted", "wrong_answer", "runtime_error", "timeout", "memory_limit",
            "output_limit", "compile_error", "constraint_violation", "infra_error"}

count = 0
failed = 0


def tap(good, desc, directive="", diag=None):
    global count, failed
    count += 1
    desc = desc.replace("\\", "\\\\").replace("#", "\\#")  # TAP: a bare # starts a directive
    print("%s %d - %s%s" % ("ok" if good else "not ok", count, desc, directive))
    if not good and not directive:
        failed += 1
    if not good and diag:
        for line in str(diag)[:3000].splitlines():
            print("# " + line)
    sys.stdout.flush()


def parse(path):
    """The case's headers: task, expect (a set), hack, gap (continuation lines joined)."""
    h = {}
    last = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = HEADER.match(line)
            if m:
                last = m.group(1)
                h[last] = m.group(2)
                continue
            c = CONT.match(line)
            if c and last in ("hack", "gap") and c.group(1).strip():
                h[last] += " " + c.group(1).strip()
                continue
            if line.strip():
                break
    for k in ("task", "expect", "hack"):
        if k not in h:
            raise ValueError("%s: no '%s:' header" % (os.path.basename(path), k))
    h["expect"] = set(v.strip() for v in h["expect"].split("|"))
    bad = h["expect"] - VERDICTS
    if bad:
        raise ValueError("%s: unknown verdict %s" % (os.path.basename(path), ", ".join(sorted(bad))))
    return h


def load_task(ref):
    """tasks/NAME.json (one task) or FILE.jsonl#ID, relative to this folder or the repo root."""
    path, _, tid = ref.partition("#")
    for base in (HERE, REPO):
        p = os.path.join(base, path)
        if os.path.exists(p):
            break
    else:
        raise ValueError("task file '%s' not found" % path)
    if not tid:
        with open(p, encoding="utf-8") as f:
            return json.load(f)
    with open(p, encoding="utf-8") as f:
        for line in f:
            if line.strip() and json.loads(line)["id"] == tid:
                return json.loads(line)
    raise ValueError("task '%s' not in %s" % (tid, path))


def main():
    paths = sorted(glob.glob(os.path.join(HERE, "cases", "*")))
    cases, tasks = [], {}
    for p in paths:
        name = os.path.basename(p)
        try:
            h = parse(p)
            task = load_task(h["task"])
        except (ValueError, OSError) as e:
            tap(False, "%s: a readable case" % name, diag=e)
            continue
        tasks[h["task"]] = task
        cases.append((name, p, h, task))

    with tempfile.TemporaryDirectory(prefix="crucible-hacks.") as tmp:
        tfile = os.path.join(tmp, "tasks.jsonl")
        sfile = os.path.join(tmp, "solutions.jsonl")
        rfile = os.path.join(tmp, "results.jsonl")
        with open(tfile, "w") as tf, open(sfile, "w") as sf:
            for name, p, h, task in cases:
                t = dict(task, id="hacks-case/" + name)
                tf.write(json.dumps(t) + "\n")
                with open(p, encoding="utf-8") as f:
                    sf.write(json.dumps({"task_id": t["id"], "solution": f.read()}) + "\n")
            for ref, task in sorted(tasks.items()):
                t = dict(task, id="hacks-reference/" + ref)
                tf.write(json.dumps(t) + "\n")
                sf.write(json.dumps({"task_id": t["id"], "solution": task["reference"]}) + "\n")
        r = subprocess.run([CRUCIBLE, "eval", "--tasks", tfile, "--solutions", sfile, "--out",
                            rfile, "-j", os.environ.get("CRUCIBLE_HACKS_JOBS", "2"), "--quiet"],
                           capture_output=True, text=True)
        try:
            with open(rfile) as f:
                results = {d["task_id"]: d for d in map(json.loads, f)}
        except (OSError, ValueError) as e:
            tap(False, "crucible eval ran the suite", diag="%s\n%s" % (e, r.stderr))
            results = {}

    infra = []
    for name, p, h, task in cases:
        d = results.get("hacks-case/" + name)
        hack = h["hack"]
        if d is None:
            tap(False, "%s: a record" % name, diag=r.stderr)
            continue
        if d["verdict"] == "infra_error" and "toolchain" in d.get("message", ""):
            count_skip(name, d["message"])
            continue
        if d["verdict"] == "infra_error":
            infra.append(name)
        want = h["expect"]
        good = d["verdict"] in want and (d["reward"] == 1.0 if want == {"accepted"} else d["reward"] == 0.0)
        desc = "%s: %s -> %s" % (name, hack[:90] + ("..." if len(hack) > 90 else ""), "|".join(sorted(want)))
        directive = " # TODO known gap: %s" % h["gap"] if "gap" in h else ""
        why = [(t["name"], t["verdict"], t.get("why", ""), t["stderr"][-300:]) for t in d["tests"]]
        tap(good, desc, directive, diag="got %s (reward %s)\n%s" % (d["verdict"], d["reward"], why))

    refs = [(ref, results.get("hacks-reference/" + ref)) for ref in sorted(tasks)]
    missing = [ref for ref, d in refs if d is None]
    bad = [(ref, d["verdict"], d["message"]) for ref, d in refs if d is not None and d["verdict"] != "accepted"
           and not (d["verdict"] == "infra_error" and "toolchain" in d.get("message", ""))]
    tap(not bad and not missing, "every task of the suite accepts its reference", diag=bad or missing)
    tap(not infra, "no case ended in infra_error (crucible's own failure)", diag=infra)
    print("1..%d" % count)
    sys.exit(min(failed, 254))


def count_skip(name, why):
    global count
    count += 1
    print("ok %d - %s # SKIP %s" % (count, name, why))


if __name__ == "__main__":
    main()
