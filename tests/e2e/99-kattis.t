#!/usr/bin/python3
# Kattis / problemtools packages end to end: `crucible tasks convert --from kattis` on the four
# example packages of problemtools (hello and different: legacy layout, default and custom
# output validator; oddecho: 2023-07, scoring with test groups; guess: 2023-07, interactive),
# the tasks' fields checked; then every shipped submission in a language crucible has is
# verified against its converted task and must get the verdict of the folder it sits in
# (accepted, wrong_answer, time_limit_exceeded -> timeout, run_time_error -> runtime_error or
# memory_limit, partially_accepted -> not accepted with 0 < reward < 1, slow_accepted ->
# accepted or timeout, as problemtools does not judge it). Submissions in languages crucible
# lacks (Python 2, Kotlin, ...) are listed as skipped. Symlinked test data (oddecho's upstream
# layout), a symlink loop and a link out of the package are built in a temporary copy.
# Needs ../shared/datasets (skips without it).
import concurrent.futures
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import CRUCIBLE, ROOT, done, ok, skip  # noqa: E402

DS = os.path.join(ROOT, "..", "shared", "datasets", "kattis-problemtools")
PACKAGES = ["hello", "different", "oddecho", "guess"]
TMP = tempfile.mkdtemp(prefix="crucible-kattis-")

# problemtools' languages.yaml (globs, priority) and crucible's name for each, None when
# crucible lacks it: the test's own copy, so that it checks the converter's table.
LANGS = [
    ("c", 950, "*.c", "c"), ("cpp", 1000, "*.cc *.C *.cpp *.cxx *.c++", "cpp"),
    ("csharp", 700, "*.cs", None), ("cobol", 50, "*.cob", None), ("fsharp", 675, "*.fs", None),
    ("go", 400, "*.go", "go"), ("haskell", 600, "*.hs *.c", None),
    ("java", 800, "*.java", "java"), ("javascript", 500, "*.js", "javascript"),
    ("kotlin", 250, "*.kt", None), ("lisp", 200, "*.lisp *.cl", None),
    ("ocaml", 375, "*.ml", None), ("objectivec", 300, "*.m *.c", None),
    ("pascal", 350, "*.pas", None), ("php", 450, "*.php", None), ("prolog", 100, "*.pl", None),
    ("python2", 860, "*.py *.py2", None), ("python3", 850, "*.py *.py3", "python"),
    ("ruby", 650, "*.rb", None), ("rust", 575, "*.rs", "rust"), ("scala", 550, "*.sc *.scala", None),
]


def detect(files):
    """(problemtools id, crucible name) of a program's files, as problemtools detects it."""
    best, count = None, 0
    for lid, prio, globs, cru in LANGS:
        n = 0
        for f in files:
            base = os.path.basename(f)
            if not any(fnmatch.fnmatchcase(base, g) for g in globs.split()):
                continue
            if lid == "python2" and fnmatch.fnmatchcase(base, "*.py"):
                with open(f, encoding="utf-8", errors="replace") as fh:
                    if not re.search(r"^#!.*python2\b", fh.readline()):
                        continue
            n += 1
        if n and (n > count or (n == count and prio > best[1])):
            best, count = (lid, prio, cru), n
    return (best[0], best[2]) if best else (None, None)


def convert(path, *opts, timeout=900):
    p = subprocess.run([CRUCIBLE, "tasks", "convert", "--from", "kattis", *opts, path],
                       capture_output=True, text=True, timeout=timeout)
    tasks = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    return p.returncode, tasks, p.stderr


if os.environ.get("CRUCIBLE_SKIP_DATASET_TESTS"):
    skip("Kattis example packages", "CRUCIBLE_SKIP_DATASET_TESTS is set (CI runs them in its "
         "plain leg)")
    done()
if not os.path.isdir(DS):
    skip("Kattis example packages", "../shared/datasets/kattis-problemtools not found (a "
         "user's clone does not have it)")
    done()

# --- conversion, with calibration (the default) ---------------------------------------------
tasks, errs = {}, {}
for name in PACKAGES:
    rc, ts, err = convert(os.path.join(DS, name))
    ok(rc == 0 and len(ts) == 1, "%s: converts to one task" % name, err)
    tasks[name] = ts[0] if ts else {}
    errs[name] = err
    ok(re.search(r"^kattis/%s: " % name, err, re.M) is not None,
       "%s: stderr says what was made of the package" % name, err)


def test_names(t):
    return [x["name"] for x in t.get("tests", [])]


def read(*parts):
    with open(os.path.join(DS, *parts), encoding="utf-8") as f:
        return f.read()


h = tasks["hello"]
ok(h.get("harness") == "stdio" and h.get("checker") == {"type": "kattis", "flags": ""},
   "hello: stdio, problemtools' default validator (case-insensitive tokens)", h.get("checker"))
ok(test_names(h) == ["secret/hello"] and h["tests"][0]["expected"] == read(
    "hello", "data", "secret", "hello.ans"), "hello: its one test case", test_names(h))
ok(h.get("limits", {}).get("memory_mb") == 512 and h["limits"].get("output_kb") == 8192,
   "hello: memory from problem.yaml (512 MiB), output problemtools' default 8 MiB",
   h.get("limits"))
ok(h.get("reference") == read("hello", "submissions", "accepted", "hello.py")
   and h.get("language") == "python", "hello: the reference is accepted/hello.py (Python 3)")
ok({"source:kattis", "kattis:pass-fail", "format:legacy", "validation:default"}
   <= set(h.get("tags", [])), "hello: tags", h.get("tags"))
tl = [x for x in h.get("tags", []) if x.startswith("time-limit:")]
ok(len(tl) == 1 and "Time limit" in h.get("notes", ""),
   "hello: the time limit's origin is tagged and noted (%s)" % (tl[0] if tl else None),
   h.get("notes"))
ok("Hello World" in h.get("prompt", ""), "hello: the English statement is the prompt")

d = tasks["different"]
c = d.get("checker", {})
ok(c.get("type") == "validator" and c.get("language") == "cpp"
   and sorted(c.get("files", {})) == ["validate.cc", "validate.h"]
   and c["files"]["validate.cc"] == read("different", "output_validators",
                                         "different_validator", "validate.cc"),
   "different: output_validators/different_validator is checker 'validator' (C++, two files)",
   {k: v for k, v in c.items() if k != "files"})
ok(test_names(d) == ["sample/1", "secret/01", "secret/02_extreme_cases"],
   "different: sample and secret tests in problemtools' order", test_names(d))
ok(d.get("reference") == read("different", "submissions", "accepted", "different_py3.py"),
   "different: the reference is the Python 3 submission (different_py2.py is Python 2)")
ok("validation:custom" in d.get("tags", []), "different: tagged validation:custom")

o = tasks["oddecho"]
ok(o.get("groups") == [{"name": "secret/subtask1", "score": 50},
                       {"name": "secret/subtask2", "score": 50}],
   "oddecho: groups with the scores problemtools computes (min of accept_score 50)",
   o.get("groups"))
ok(len(o.get("tests", [])) == 16 and all(x["name"].startswith(x.get("group", "?") + "/")
                                         for x in o.get("tests", [])),
   "oddecho: 16 secret tests, each in its group; the samples are ignored by the grader "
   "(ignore_sample) and left out", test_names(o))
ok({"kattis:scoring", "format:2023-07"} <= set(o.get("tags", [])) and "ignore_sample" in
   o.get("notes", ""), "oddecho: scoring, 2023-07, the left-out samples noted", o.get("notes"))
ok(o.get("checker") == {"type": "kattis", "flags": ""} and "Sample Input 1" in o.get("prompt", ""),
   "oddecho: default validator; the prompt shows the samples")

g = tasks["guess"]
i = g.get("interactor", {})
ok(g.get("harness") == "interactive" and "checker" not in g and i.get("language") == "cpp"
   and sorted(i.get("files", {})) == ["validate.cc", "validate.h"],
   "guess: harness interactive, the validator in output_validator/ is the interactor",
   {k: v for k, v in i.items() if k != "files"})
ok(test_names(g) == ["secret/%02d" % n for n in range(1, 11)]
   and g["tests"][0]["stdin"] == read("guess", "data", "secret", "01.in"),
   "guess: the 10 secret tests (input for the interactor); .interaction samples are not tests",
   test_names(g))
ok("Sample Interaction 1" in g.get("prompt", "") and g.get("language") == "cpp",
   "guess: the interactions are in the prompt; the reference is accepted/guess.cc")
ok({"kattis:interactive", "validation:interactive"} <= set(g.get("tags", [])),
   "guess: tagged interactive", g.get("tags"))

# --- without calibration --------------------------------------------------------------------
rc, ts, err = convert(os.path.join(DS, "hello"), "--no-calibrate")
ok(rc == 0 and ts and "time-limit:default" in ts[0]["tags"] and ts[0]["limits"]["cpu_time"] == 10
   and "--no-calibrate" in ts[0]["notes"] and "time limit 10 s (default)" in err,
   "--no-calibrate: the default limit, tagged, noted and said on stderr", err)

# --- symlinks -------------------------------------------------------------------------------
odd = os.path.join(TMP, "oddecho")
shutil.copytree(os.path.join(DS, "oddecho"), odd)
for root, dirs, files in os.walk(odd):
    os.chmod(root, 0o755)
    for f in files:
        os.chmod(os.path.join(root, f), 0o644)
# Upstream, subtask2/1..3.{in,ans} are symlinks to ../subtask1; the shared copy holds git's
# stand-ins for them (text files naming the target). The copy gets real symlinks.
linked = 0
s1, s2 = (os.path.join(odd, "data", "secret", s) for s in ("subtask1", "subtask2"))
for f in sorted(os.listdir(s2)):
    with open(os.path.join(s2, f), encoding="utf-8") as fh:
        text = fh.read()
    if "\n" not in text and os.path.isfile(os.path.join(s2, text)):
        os.unlink(os.path.join(s2, f))
        os.symlink(text, os.path.join(s2, f))
        linked += 1
rc, ts, err = convert(odd, "--no-calibrate")
rc0, ts0, _ = convert(os.path.join(DS, "oddecho"), "--no-calibrate")
ok(linked == 6 and rc == 0 and ts and ts0 and ts[0]["tests"] == ts0[0]["tests"],
   "oddecho with its upstream symlinks (subtask2/1..3 -> ../subtask1): the same tests", err)
sub1 = [x for x in o.get("tests", []) if x["name"] == "secret/subtask1/1"]
sub2 = [x for x in o.get("tests", []) if x["name"] == "secret/subtask2/1"]
ok(sub1 and sub2 and sub1[0]["stdin"] == sub2[0]["stdin"] == read(
    "oddecho", "data", "secret", "subtask1", "1.in") and "stand-in for a symlink" in o["notes"],
   "oddecho from the shared copy: git's symlink stand-ins are followed, and noted",
   sub2[0]["stdin"][:80] if sub2 else None)
os.symlink("..", os.path.join(s1, "loop"))
rc, ts, err = convert(odd, "--no-calibrate", timeout=60)
ok(rc == 1 and not ts and "symlink loop" in err and "kattis/oddecho" in err,
   "a symlink loop refuses the package with a message (not thousands of tests)", err)
os.unlink(os.path.join(s1, "loop"))
with open(os.path.join(TMP, "outside.in"), "w") as f:
    f.write("5\na\nb\nc\nd\ne\n")
os.symlink(os.path.join("..", "..", "..", "..", "outside.in"), os.path.join(s1, "9.in"))
shutil.copy(os.path.join(s1, "1.ans"), os.path.join(s1, "9.ans"))
rc, ts, err = convert(odd, "--no-calibrate", timeout=60)
ok(rc == 1 and not ts and "leaves the package" in err,
   "a symlink leaving the package refuses it with a message", err)

# --- every submission against its task ------------------------------------------------------
FOLDERS = {
    "accepted": (lambda r, f: r["verdict"] == "accepted" and r["reward"] == 1, "accepted"),
    "wrong_answer": (lambda r, f: r["verdict"] == "wrong_answer", "wrong_answer"),
    "time_limit_exceeded": (lambda r, f: r["verdict"] == "timeout", "timeout"),
    "run_time_error": (lambda r, f: r["verdict"] in ("runtime_error", "memory_limit"),
                       "runtime_error or memory_limit (Kattis says run-time error for both)"),
    "partially_accepted": (lambda r, f: r["verdict"] != "accepted" and r["reward"] is not None
                           and 0 < r["reward"] < 1,
                           "not accepted, 0 < reward < 1 (--reward fraction)"),
    "slow_accepted": (lambda r, f: r["verdict"] in ("accepted", "timeout"),
                      "accepted or timeout (problemtools does not judge slow_accepted)"),
}
jobs = []
for name in PACKAGES:
    subdir = os.path.join(DS, name, "submissions")
    for folder in sorted(os.listdir(subdir)):
        for entry in sorted(os.listdir(os.path.join(subdir, folder))):
            path = os.path.join(subdir, folder, entry)
            label = "%s: %s/%s" % (name, folder, entry)
            if os.path.isdir(path):
                files = [os.path.join(r, f) for r, _, fs in os.walk(path) for f in fs]
                lid, cru = detect(files)
                skip(label, "a program of %d files in %s: crucible takes one-file solutions"
                     % (len(files), lid))
                continue
            lid, cru = detect([path])
            if folder not in FOLDERS:
                skip(label, "folder %s is not one problemtools judges" % folder)
            elif cru is None:
                skip(label, "%s: crucible has no such language" % (lid or "no language"))
            else:
                jobs.append((name, folder, entry, path, cru, label))


def verify(job):
    name, folder, entry, path, lang, label = job
    task = dict(tasks[name])
    args = [CRUCIBLE, "verify", "--solution", path]
    if folder == "partially_accepted":
        args += ["--reward", "fraction"]
    if name != "guess":
        args += ["--language", lang]
    # guess (interactive) relies on verify's own rule: a solution file's extension names its
    # language (.cc, .c, .java, .py) for a task that takes any language
    tf = os.path.join(TMP, "%s-%s-%s.json" % (name, folder, entry))
    with open(tf, "w", encoding="utf-8") as f:
        json.dump(task, f)
    args += ["--task", tf]
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=900)
    except subprocess.TimeoutExpired as e:
        return job, None, "timed out after %ss" % e.timeout
    try:
        return job, json.loads(p.stdout), p.stderr
    except ValueError:
        return job, None, "exit %d, stdout %r, stderr %r" % (p.returncode, p.stdout[:500],
                                                              p.stderr[-1500:])


with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for job, rec, err in pool.map(verify, jobs):
        name, folder, entry, path, lang, label = job
        check, want = FOLDERS[folder]
        good = rec is not None and check(rec, folder)
        got = None if rec is None else {k: rec.get(k) for k in ("verdict", "reward", "passed",
                                                                 "total", "message")}
        if rec is not None and not good:
            got["tests"] = [(t.get("name"), t.get("verdict"), t.get("why"))
                            for t in rec.get("tests", [])][:6]
        ok(good, "%s (%s) gets %s" % (label, lang, want), got if rec is not None else err)

shutil.rmtree(TMP, ignore_errors=True)
done()
