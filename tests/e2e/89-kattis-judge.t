#!/usr/bin/env bash
# Kattis packages judged as Kattis judges them, end to end through crucible verify and
# eval: the kattis checker (problemtools' default validator and its flags), custom output
# validators (checker "validator": compiled once, exit 42/43, judgemessage.txt, failures as
# infra_error), the interactive harness (solution and interactor cross-connected, the verdict
# rules, deadlocks, what the solution can see), per-test flags, groups and scores, Java's main
# class found whatever its name and assertions enabled; then the problemtools example
# packages 'different' (custom validator) and 'guess' (interactive), read from
# ../shared/datasets at test time: each submission in a supported language must get its
# folder's verdict. (A solution in another language than the task's is judged here through a
# task per language: the CLI's --language is another branch's.)
. "$(dirname "$0")/lib.sh"

plan 60

F=$T/f
mkdir -p "$F"
DS=$REPO_ROOT/../shared/datasets/kattis-problemtools

# verify TASK SOLUTION [ARG...] — crucible verify, record in $OUT.
verify() {
    local task=$1 sol=$2
    shift 2
    cru verify --task "$F/$task" --solution "$F/$sol" "$@"
}

"$PY" - "$F" <<'EOF'
import json, os, sys
F = sys.argv[1]

def w(name, text):
    with open(os.path.join(F, name), "w", encoding="utf-8") as f:
        f.write(text)

def task(name, t):
    w(name, json.dumps(t) + "\n")

# --- the kattis checker ---
task("kat.json", {"id": "e2e/kat", "language": "python", "harness": "stdio",
                  "checker": {"type": "kattis", "flags": "float_tolerance 1e-6"},
                  "tests": [{"name": "num", "stdin": "num\n", "expected": "2.0 YES\n"},
                            {"name": "cs", "stdin": "cs\n", "expected": "2.0 YES\n",
                             "flags": "case_sensitive float_tolerance 1e-6"}]})
# a test's flags replace the checker's: "case_sensitive" alone has no float tolerance
task("kat_replace.json", {"id": "e2e/kat-replace", "language": "python", "harness": "stdio",
                          "checker": {"type": "kattis", "flags": "float_tolerance 1e-6"},
                          "tests": [{"name": "cs", "stdin": "cs\n", "expected": "2.0 YES\n",
                                     "flags": "case_sensitive"}]})
w("kat_close.py", "print('2.0000001', 'YES' if input() == 'cs' else 'yes')\n")
w("kat_far.py", "print('2.1 YES')\n")
w("kat_case.py", "print('2.0 yes')\n")
w("kat_space.py", "import sys\nsys.stdout.write('  2e0\\n\\n  YES')\n")
task("kat_bad.json", {"id": "e2e/kat-bad", "language": "python", "harness": "stdio",
                      "checker": {"type": "kattis", "flags": "float_tol 1e-6"},
                      "tests": [{"name": "a", "stdin": "", "expected": "1\n"}]})

# --- checker validator ---
VALIDATOR_PY = r'''
import sys
inp, ans, fb = sys.argv[1:4]
flags = sys.argv[4:]
got = sys.stdin.read().split()
want = open(ans).read().split()
if "fail" in flags:
    sys.exit(1)
if "crash" in flags:
    import os, signal
    os.kill(os.getpid(), signal.SIGABRT)
if got == want and open(inp).read():
    sys.exit(42)
with open(fb + "judgemessage.txt", "a") as f:
    f.write("expected %s\ngot %s\nflags %s\n" % (" ".join(want), " ".join(got), " ".join(flags)))
sys.exit(43)
'''
tests = [{"name": "t1", "stdin": "1 2\n", "expected": "3\n"},
         {"name": "t2", "stdin": "2 2\n", "expected": "4\n", "flags": "x y"}]
task("val.json", {"id": "e2e/val", "language": "python", "harness": "stdio",
                  "checker": {"type": "validator", "language": "python", "code": VALIDATOR_PY,
                              "flags": "f1"},
                  "tests": tests})
w("add.py", "a, b = map(int, input().split())\nprint(a + b)\n")
w("sub.py", "a, b = map(int, input().split())\nprint(a - b)\n")
w("silent.py", "pass\n")
task("val_fail.json", {"id": "e2e/val-fail", "language": "python", "harness": "stdio",
                       "checker": {"type": "validator", "language": "python",
                                   "code": VALIDATOR_PY, "flags": "fail"},
                       "tests": tests[:1]})
task("val_crash.json", {"id": "e2e/val-crash", "language": "python", "harness": "stdio",
                        "checker": {"type": "validator", "language": "python",
                                    "code": VALIDATOR_PY},
                        "tests": [dict(tests[0], flags="crash")]})
task("val_nocompile.json", {"id": "e2e/val-nc", "language": "python", "harness": "stdio",
                            "checker": {"type": "validator", "language": "cpp",
                                        "code": "int main( { return 42; }\n"},
                            "tests": tests[:1]})
# several files: validate.cc includes validate.h (the Kattis layout)
task("val_multi.json", {"id": "e2e/val-multi", "language": "python", "harness": "stdio",
                        "checker": {"type": "validator", "language": "cpp", "files": {
                            "validate.h": "#include <cstdio>\n#include <string>\n"
                                          "static int verdict(long a, long b) "
                                          "{ return a == b ? 42 : 43; }\n",
                            "validate.cc": "#include \"validate.h\"\n"
                                           "int main(int argc, char **argv) {\n"
                                           "  FILE *f = fopen(argv[2], \"r\"); long want, got;\n"
                                           "  if (!f || fscanf(f, \"%ld\", &want) != 1) return 1;\n"
                                           "  if (scanf(\"%ld\", &got) != 1) {\n"
                                           "    std::string p = std::string(argv[3]) + "
                                           "\"judgemessage.txt\";\n"
                                           "    FILE *m = fopen(p.c_str(), \"w\");\n"
                                           "    fprintf(m, \"no number\\n\"); fclose(m); return 43; }\n"
                                           "  return verdict(want, got);\n}\n"}},
                        "tests": tests})

# --- interactive ---
INTERACTOR_PY = r'''
import sys
inp, ans, fb = sys.argv[1:4]
flags = sys.argv[4:]
def msg(s):
    with open(fb + "judgemessage.txt", "a") as f:
        f.write(s + "\n")
if "crash" in flags:
    sys.exit(3)
k = int(open(inp).read().split()[0])
print(k, flush=True)
line = sys.stdin.readline()
if not line:
    msg("no answer"); sys.exit(43)
if line.strip() != str(2 * k):
    msg("expected %d, got %s" % (2 * k, line.strip())); sys.exit(43)
if sys.stdin.read().strip():
    msg("trailing output"); sys.exit(43)
msg("ok; flags: " + " ".join(flags))
sys.exit(42)
'''
itests = [{"name": "i1", "stdin": "3\nINPUT" + "_SECRET_k9\n", "expected": "ANSWER" + "_SECRET_p4\n"},
          {"name": "i2", "stdin": "21\n", "expected": "", "flags": "per test"}]
itask = {"id": "e2e/inter", "language": "python", "harness": "interactive",
         "interactor": {"language": "python", "code": INTERACTOR_PY, "flags": "task wide"},
         "tests": itests, "limits": {"cpu_time": 1, "wall_time": 2}}
task("inter.json", itask)
task("inter_crash.json", dict(itask, id="e2e/inter-crash",
                              tests=[dict(itests[0], flags="crash")]))
w("double.py", "k = int(input())\nprint(2 * k)\n")
w("deadlock.py", "input()\ninput()\n")
w("crash_after.py", "import sys\nk = int(input())\nprint(2 * k, flush=True)\nsys.exit(3)\n")
w("wrong_spin.py", "print(-1, flush=True)\nwhile True:\n    pass\n")
# the solution looks for the input and the answer everywhere it can read
w("search.py", r'''import glob, subprocess, sys
k = int(input())
secrets = ["INPUT" + "_SECRET_k9", "ANSWER" + "_SECRET_p4"]
procs = glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline")
for s in secrets:
    r = subprocess.run(["timeout", "20", "grep", "-rlsF", "-D", "skip", "--exclude-dir=proc",
                        "--exclude-dir=usr", "-f", "-", "/"] + procs,
                       input=s.encode(), capture_output=True)
    sys.stderr.write("found=%s\n" % ",".join(sorted(r.stdout.decode().split())))
print(2 * k)
''')
task("inter_search.json", dict(itask, id="e2e/inter-search", tests=itests[:1],
                               limits={"cpu_time": 20, "wall_time": 30}))

# --- groups and scores ---
gtests = [{"name": "a", "stdin": "1 1\n", "expected": "2\n", "group": "secret/g1"},
          {"name": "b", "stdin": "2 1\n", "expected": "3\n", "group": "secret/g1"},
          {"name": "c", "stdin": "-5 7\n", "expected": "2\n", "group": "secret/g2"}]
task("groups.json", {"id": "e2e/groups", "language": "python", "harness": "stdio",
                     "checker": "kattis", "tests": gtests,
                     "groups": [{"name": "secret/g1", "score": 30},
                                {"name": "secret/g2", "score": 70}]})
w("add_pos.py", "a, b = map(int, input().split())\nprint(a + b if a > 0 else 0)\n")

# --- Java as judges run it ---
task("java.json", {"id": "e2e/java", "language": "java", "harness": "stdio", "checker": "kattis",
                   "tests": [{"name": "a", "stdin": "10 12\n", "expected": "2\n"}],
                   "limits": {"cpu_time": 5, "wall_time": 20}})
w("Different.java", "import java.util.*;\n\n/* not the class: public class Fake {} */\n"
                    "public class Different {\n"
                    "    public static void main(String[] args) {\n"
                    "        Scanner sc = new Scanner(System.in);\n"
                    "        long a = sc.nextLong(), b = sc.nextLong();\n"
                    "        System.out.println(Math.abs(a - b));\n    }\n}\n")
w("Assert.java", "public class Assert {\n  public static void main(String[] a) {\n"
                 "    assert false : \"assertions are on\";\n    System.out.println(2);\n  }\n}\n")
w("NoMain.java", "public class NoMain {\n  static void main(int x) {}\n}\n")
w("Nested.java", "import java.util.Scanner;\nclass Helper { static long d(long a, long b) "
                 "{ return Math.abs(a - b); } }\nclass Outer {\n  static class Inner {\n"
                 "    public static void main(String... args) {\n"
                 "      Scanner s = new Scanner(System.in);\n"
                 "      System.out.println(Helper.d(s.nextLong(), s.nextLong()));\n    }\n  }\n}\n")
EOF

# --- the kattis checker -------------------------------------------------------------
verify kat.json kat_close.py
jcheck 'd["verdict"] == "accepted" and d["passed"] == 2' \
    "kattis: float within float_tolerance, case-insensitive by default, case_sensitive per test"
verify kat_replace.json kat_close.py
jcheck 'd["verdict"] == "wrong_answer" and "token 1 differs" in d["tests"][0]["why"]' \
    "kattis: a test's flags replace the checker's, they do not add to them"
verify kat.json kat_far.py
jcheck 'd["verdict"] == "wrong_answer" and "beyond tolerance" in d["tests"][0]["why"]' \
    "kattis: a float beyond the tolerance is a wrong answer, saying so"
verify kat.json kat_case.py
jcheck '[t["verdict"] for t in d["tests"]] == ["accepted", "wrong_answer"] and
        "case_sensitive" in d["tests"][1]["why"]' \
    "kattis: the test's flags (case_sensitive) replace the checker's"
verify kat.json kat_space.py
jcheck 'd["tests"][0]["verdict"] == "accepted"' \
    "kattis: 2e0 is 2.0 with a tolerance; whitespace runs do not count"
verify kat_bad.json kat_far.py
[ "$RC" -eq 2 ] && grep -q "unknown kattis checker flag 'float_tol'" "$ERR"
ok $? "kattis: an unknown flag is refused before anything runs, naming it"

# --- checker validator --------------------------------------------------------------
verify val.json add.py
jcheck 'd["verdict"] == "accepted" and d["passed"] == 2' "validator: exit 42 accepts every test"
verify val.json sub.py
jcheck 'd["verdict"] == "wrong_answer" and d["tests"][0]["why"].startswith("validator: expected 3; got -1; flags f1")' \
    "validator: exit 43 is a wrong answer, judgemessage.txt the reason"
jcheck '"flags x y" in d["tests"][1]["why"]' "validator: a test's flags replace the validator's"
verify val.json silent.py
jcheck 'd["verdict"] == "wrong_answer"' "validator: a solution that prints nothing is not accepted"
verify val_fail.json add.py
jcheck 'd["verdict"] == "infra_error" and d["reward"] is None and
        "exit 1, not 42 or 43" in d["tests"][0]["why"]' \
    "validator: another exit is the validator's failure (infra_error, no reward)"
verify val_crash.json add.py
jcheck 'd["verdict"] == "infra_error" and "signal 6" in d["tests"][0]["why"]' \
    "validator: a crash is infra_error, never the solution's fault"
verify val_nocompile.json add.py
jcheck 'd["verdict"] == "infra_error" and "does not compile" in d["tests"][0]["why"]' \
    "validator: one that does not compile is infra_error"
verify val_multi.json add.py
jcheck 'd["verdict"] == "accepted"' "validator: validate.cc + validate.h compiled together"
verify val_multi.json silent.py
jcheck 'd["verdict"] == "wrong_answer" and d["tests"][0]["why"] == "validator: no number"' \
    "validator (C++): its judgemessage.txt is the reason"

# --- interactive -------------------------------------------------------------------
verify inter.json double.py
jcheck 'd["verdict"] == "accepted" and d["passed"] == 2' "interactive: a right solution is accepted"
jcheck '"flags: task wide" in d["tests"][0]["why"] and "flags: per test" in d["tests"][1]["why"]' \
    "interactive: the interactor gets the task's flags, or the test's own"
verify inter.json silent.py
jcheck 'd["verdict"] == "wrong_answer" and "no answer" in d["tests"][0]["why"]' \
    "interactive: a solution that prints nothing is not accepted"
verify inter.json deadlock.py
jcheck 'd["verdict"] == "timeout" and d["tests"][0]["limit"] == "wall"' \
    "interactive: both sides waiting for each other ends at the wall-time limit as timeout"
verify inter.json crash_after.py
jcheck 'd["verdict"] == "runtime_error" and "interactor: accepted" in d["tests"][0]["why"]' \
    "interactive: a crash after a right answer is a runtime error (the solution ended first)"
verify inter.json wrong_spin.py
jcheck 'd["verdict"] == "wrong_answer" and "before the solution ended" in d["tests"][0]["why"]' \
    "interactive: the interactor rejecting first decides, whatever the solution does after"
verify inter_crash.json double.py
jcheck 'd["verdict"] == "infra_error" and d["reward"] is None and
        "the interactor failed (exit 3" in d["tests"][0]["why"]' \
    "interactive: a failing interactor is infra_error, no reward"
verify inter_search.json search.py
jcheck 'd["verdict"] == "accepted" and d["tests"][0]["stderr"] == "found=\nfound=\n"' \
    "interactive: the solution finds neither the input file nor the answer anywhere"

# --- groups and scores --------------------------------------------------------------
verify groups.json add_pos.py --reward fraction
jcheck 'd["verdict"] == "wrong_answer" and d["score"] == 30 and d["max_score"] == 100 and
        abs(d["reward"] - 0.3) < 1e-9' \
    "groups: the passing group earns its score; fraction reward is score / max_score"
jcheck '[t.get("group") for t in d["tests"]] == ["secret/g1", "secret/g1", "secret/g2"]' \
    "groups: each test's group is in the record"
verify groups.json add_pos.py
jcheck 'd["reward"] == 0 and d["score"] == 30' "groups: binary reward stays 0 unless all pass"
verify groups.json add.py --reward fraction
jcheck 'd["verdict"] == "accepted" and d["score"] == 100 and d["reward"] == 1' \
    "groups: all groups passing earn the full score"
verify val.json add.py
jcheck '"score" not in d and "max_score" not in d' "no groups: no score fields"

# --- Java ---------------------------------------------------------------------------
verify java.json Different.java
jcheck 'd["verdict"] == "accepted"' "java: public class Different is compiled and run"
verify java.json Assert.java
jcheck 'd["verdict"] == "runtime_error" and "AssertionError" in d["tests"][0]["stderr"]' \
    "java: assertions are enabled (assert false fails)"
verify java.json NoMain.java
jcheck 'd["verdict"] == "compile_error" and
        "no class declares public static void main" in d["compile"]["stderr"]' \
    "java: no main method is a compile error saying so"
verify java.json Nested.java
jcheck 'd["verdict"] == "accepted"' "java: main in a nested class, several top-level classes"

# --- the problemtools example packages ----------------------------------------------
N_DATASET=28
if [ ! -d "$DS/different" ] || [ ! -d "$DS/guess" ]; then
    skip_n $N_DATASET "problemtools packages" "no $DS (the shared datasets)"
    exit 0
fi

# One task per (problem, language), built here from the package: the tests from data/,
# the validator or interactor from its directory; one solution line per submission.
"$PY" - "$DS" "$F" <<'EOF'
import json, os, sys
DS, F = sys.argv[1], sys.argv[2]
EXT = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".java": "java", ".py": "python", ".rs": "rust",
       ".go": "go", ".js": "javascript"}
FOLDER = {"accepted": "accepted", "wrong_answer": "wrong_answer",
          "time_limit_exceeded": "timeout", "run_time_error": "runtime_error"}

def read(p):
    with open(p, encoding="utf-8") as f:
        return f.read()

def files(d):
    return {n: read(os.path.join(d, n)) for n in sorted(os.listdir(d))}

def tests(p):
    out = []
    for sub in ("sample", "secret"):
        d = os.path.join(DS, p, "data", sub)
        for n in sorted(os.listdir(d)):
            if n.endswith(".in"):
                out.append({"name": sub + "/" + n[:-3], "stdin": read(os.path.join(d, n)),
                            "expected": read(os.path.join(d, n[:-3] + ".ans"))})
    return out

judges = {
    "different": ("stdio", "checker", dict(type="validator", language="cpp",
                  files=files(os.path.join(DS, "different/output_validators/different_validator")))),
    "guess": ("interactive", "interactor", dict(language="cpp",
              files=files(os.path.join(DS, "guess/output_validator/guess_validator")))),
}
tasks, sols, want = [], [], []
for prob, (harness, key, judge) in judges.items():
    t = tests(prob)
    for lang in sorted(set(EXT.values())):
        tasks.append({"id": "pt/%s-%s" % (prob, lang), "language": lang, "harness": harness,
                      key: judge, "tests": t,
                      # the JVM's start-up: more room for Java, as judges give it
                      "limits": {"cpu_time": 2, "wall_time": 4} if lang == "java"
                      else {"cpu_time": 1, "wall_time": 2}})
    base = os.path.join(DS, prob, "submissions")
    for folder in sorted(os.listdir(base)):
        for n in sorted(os.listdir(os.path.join(base, folder))):
            path = os.path.join(base, folder, n)
            lang = EXT.get(os.path.splitext(n)[1])
            if folder not in FOLDER or not lang or not os.path.isfile(path):
                continue
            code = read(path)
            if lang == "python" and "python2" in code.splitlines()[0]:
                continue  # Python 2
            sols.append({"task_id": "pt/%s-%s" % (prob, lang), "solution": code})
            want.append("%s/%s/%s %s" % (prob, folder, n, FOLDER[folder]))
with open(os.path.join(F, "pt_tasks.jsonl"), "w") as f:
    f.writelines(json.dumps(t) + "\n" for t in tasks)
with open(os.path.join(F, "pt_solutions.jsonl"), "w") as f:
    f.writelines(json.dumps(s) + "\n" for s in sols)
with open(os.path.join(F, "pt_want.txt"), "w") as f:
    f.writelines(x + "\n" for x in want)
EOF

timeout -k 5 600 "$CRUCIBLE" eval --tasks "$F/pt_tasks.jsonl" --solutions "$F/pt_solutions.jsonl" \
    -j 2 --out "$F/pt_results.jsonl" </dev/null >"$OUT" 2>"$ERR"
RC=$?
LAST_CMD="crucible eval --tasks pt_tasks.jsonl --solutions pt_solutions.jsonl -j 2"
is "$RC" 0 "eval over the packages' submissions ran"
"$PY" - "$F/pt_want.txt" "$F/pt_results.jsonl" >"$T/pt_lines" <<'EOF'
import json, os, sys
want = [l.split() for l in open(sys.argv[1])]
got = [json.loads(l) for l in open(sys.argv[2])] if os.path.exists(sys.argv[2]) else []
for (name, verdict), rec in zip(want, got):
    bad = [t for t in rec["tests"] if t["verdict"] != "accepted"]
    why = (bad[0]["name"] + ": " + (bad[0].get("why") or "")) if bad else rec["message"]
    print("%s\t%s\t%s\t%s" % (name, verdict, rec["verdict"], why[:200].replace("\t", " ")))
for name, verdict in want[len(got):]:
    print("%s\t%s\t<no record>\t" % (name, verdict))
EOF
while IFS=$'\t' read -r name want got why; do
    if [ "$want" = "$got" ]; then
        ok 0 "$name: $want"
    else
        ok 1 "$name: $want" || diag "got $got: $why"
    fi
done <"$T/pt_lines"
is "$(grep -c 'guess/time_limit_exceeded/guess_no_flush.cc	timeout	timeout' "$T/pt_lines")" 1 \
    "guess_no_flush.cc (never flushes): the deadlock ends at the limit as timeout"
"$PY" - "$F/pt_results.jsonl" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
guess = [r for r in recs if r["task_id"].startswith("pt/guess")]
ok = all(t.get("why", "").find("interactor:") >= 0 for r in guess for t in r["tests"]
         if t["verdict"] in ("accepted", "wrong_answer"))
sys.exit(0 if ok and guess else 1)
EOF
ok $? "guess: every judged test says what the interactor did"
"$PY" - "$F/pt_results.jsonl" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
diff = [r for r in recs if r["task_id"].startswith("pt/different") and r["verdict"] == "wrong_answer"]
sys.exit(0 if diff and all(any("judge answer =" in t.get("why", "") for t in r["tests"])
                           for r in diff) else 1)
EOF
ok $? "different: a wrong answer's reason is the validator's judgemessage.txt"
is "$(wc -l <"$F/pt_want.txt") $(grep -c '' "$F/pt_results.jsonl")" "23 23" \
    "23 submissions in supported languages, one record each"
