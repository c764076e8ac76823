#!/usr/bin/env bash
# crucible verify end to end: the verification record, rewards, repeats, the three ways
# of giving a solution, task selection, the solution's language (--language, a file's
# extension), compile errors, the stdio checkers, a missing toolchain, hostile solutions,
# and bad command lines.
. "$(dirname "$0")/lib.sh"

plan 160

TASKS=$REPO_ROOT/examples/tasks.jsonl
F=$T/f
mkdir -p "$F" "$T/img/bin"

# cru_in FILE ARG... — cru with standard input from FILE.
cru_in() {
    local in=$1
    shift
    LAST_CMD="crucible $(printf '%q ' "$@")<$in"
    rm -f "$T/pid"
    timeout -k 5 120 bash -c 'echo $$ >"$0"; exec "$@"' "$T/pid" "$CRUCIBLE" "$@" \
        <"$in" >"$OUT" 2>"$ERR"
    RC=$?
    [ -s "$T/pid" ] && track_pid "$(cat "$T/pid")"
    return 0
}

# --- fixtures ---------------------------------------------------------------------
"$PY" - "$F" "$T/img" <<'EOF'
import json, os, sys
F, img = sys.argv[1], sys.argv[2]

def w(name, text):
    with open(os.path.join(F, name), "w", encoding="utf-8") as f:
        f.write(text)

def task(name, t, pretty=False):
    w(name, json.dumps(t, indent=2 if pretty else None) + "\n")

# Solutions for demo/py-add.
w("add.py", "def add(a, b):\n    return a + b\n")
w("sub.py", "def add(a, b):\n    return a - b\n")
w("three.py", "def add(a, b):\n    return 3\n")              # passes 'small' only
w("completion.txt", "    return a + b\n")
w("completion_wrong.txt", "    return a - b\n")
w("response.txt", "First try:\n```python\ndef add(a, b):\n    return a - b\n```\n"
                  "Fixed:\n```python\ndef add(a, b):\n    return a + b\n```\nDone.\n")
w("response_bad_last.txt", "```python\ndef add(a, b):\n    return a + b\n```\n"
                           "Or shorter:\n```python\ndef add(a, b):\n    return a * b\n```\n")
w("primes.py", "n = int(input())\ns = bytearray([1]) * max(n, 2)\ns[0:2] = b'\\0\\0'\n"
               "for i in range(2, int(n ** 0.5) + 1):\n    if s[i]:\n"
               "        s[i*i::i] = bytearray(len(s[i*i::i]))\nprint(sum(s[:n]))\n")
w("gcd.c", "#include <stdio.h>\nint main(void) { long a, b; while (scanf(\"%ld %ld\", &a, &b) == 2)"
           " { while (b) { long t = a % b; a = b; b = t; } printf(\"%ld\\n\", a < 0 ? -a : a); } }\n")
# The solution's language: a C++ sieve for demo/py-primes (a python stdio task), under a
# name that says nothing (.txt), one that says C++ (.cpp), and Python code named .cpp.
cpp_primes = ("#include <cstdio>\n#include <vector>\nint main() { long n; if (std::scanf(\"%ld\", &n) != 1)"
              " return 1; std::vector<char> s(n > 2 ? n : 2, 1); long c = 0;\n"
              "for (long i = 2; i < n; i++) if (s[i]) { c++; for (long j = i * i; j < n; j += i) s[j] = 0; }\n"
              "std::printf(\"%ld\\n\", c); }\n")
w("primes_cpp.txt", cpp_primes)
w("primes.cpp", cpp_primes)
w("primes_py.cpp", open(os.path.join(F, "primes.py")).read())
w("add.cpp", "def add(a, b):\n    return a + b\n")
w("response_cpp.txt", "In C++:\n```cpp\n" + cpp_primes + "```\nOr in Python:\n```python\nprint(0)\n```\n")
w("broken.c", "#include <stdio.h>\nint main(void) { printf(\"6\\n1\\n\") }\n")

# A flaky solution: right or wrong at random, so 20 repeats disagree (but 2^-19).
task("coin.json", {"id": "e2e/coin", "language": "python", "harness": "assert",
                   "tests": [{"name": "coin", "code": "assert f()"}]})
w("coin.py", "import os\ndef f():\n    return os.urandom(1)[0] % 2 == 0\n")

# The task version follows the task's content.
base = {"id": "e2e/ver", "language": "python", "harness": "assert",
        "tests": [{"name": "a", "code": "assert add(1, 2) == 3"}]}
task("ver1.json", base)
task("ver1_pretty.json", base, pretty=True)
task("ver2.json", dict(base, tests=[{"name": "a", "code": "assert add(2, 2) == 4"}]))
w("ver1_lead.json", "\n" + json.dumps(base, indent=2) + "\n")   # a blank line first
# a pretty-printed task with a syntax error on line 5
w("pretty_bad.json", '{\n  "id": "e2e/pb",\n  "language": "python",\n  "harness": "assert",\n'
                     '  "tests": [oops]\n}\n')

# One stdio task per checker; the solution prints argv-free fixed text.
checkers = {
    "exact":  ("exact", "1 2\n3\n", "1 2\n3\n", "1 2 \n3\n"),
    "lines":  ("lines", "a b\nc\n", "a b  \nc\t\n\n\n", "a  b\nc\n"),
    "tokens": ("tokens", "1 2\n3\n", "1\n2   3", "1 2 4\n"),
    "float":  ({"type": "float", "abs_tol": 1e-3, "rel_tol": 0}, "3.14159 x\n", "3.1412 x\n",
               "3.15 x\n"),
}
for name, (ck, expected, good, bad) in checkers.items():
    task("ck_%s.json" % name, {"id": "e2e/ck-" + name, "language": "python", "harness": "stdio",
                               "checker": ck,
                               "tests": [{"name": "t", "stdin": "", "expected": expected}]})
    w("ck_%s_good.py" % name, "import sys\nsys.stdout.write(%r)\n" % good)
    w("ck_%s_bad.py" % name, "import sys\nsys.stdout.write(%r)\n" % bad)

# An image without any toolchain: just an empty bin/.
task("noimg.json", {"id": "e2e/no-toolchain", "language": "python", "harness": "assert",
                    "image": img, "tests": [{"name": "a", "code": "assert add(1, 2) == 3"}]})

# --- hostile ---
w("exit0.py", "import sys\ndef add(a, b):\n    return 0\nsys.exit(0)\n")
w("osexit0.py", "import os\ndef add(a, b):\n    return 0\nos._exit(0)\n")
w("hook.py", "import os, sys\ndef add(a, b):\n    return 0\n"
             "def hook(*args):\n    print('PASSED')\n    sys.stdout.flush()\n    os._exit(0)\n"
             "sys.excepthook = hook\nprint('All tests PASSED')\n")
# The assert harness proves the test code ran to its end with a token the epilogue
# prints; the solution prints it itself (it is in its environment) and leaves.
w("forge.py", "import os\ndef add(a, b):\n    return 0\n"
              "tok = os.environ.get('CRUCIBLE_TEST_TOKEN', '')\n"
              "os.write(1, ('\\n' + tok + '\\n').encode())\nos._exit(0)\n")
w("fake_passed_wrong.py", "print('PASSED')\nprint('ok 1 - all tests passed')\n"
                          "def add(a, b):\n    return a - b\n")
w("fake_passed_right.py", "print('FAILED')\ndef add(a, b):\n    return a + b\n")
w("fake_passed_stdio.py", "print('PASSED')\nprint('Accepted')\n")

# The expected output of a stdio test stays outside the sandbox: the solution searches
# every file it can see for it. The canary, written by the solution itself, proves the
# search works. Patterns reach grep on a pipe (not argv, which /proc would show), and are
# built at run time (the solution's own source must not match). Skipped: /proc (the
# sandbox's fresh procfs; processes' environ and cmdline are searched explicitly) and the
# host's 9 GB read-only /usr (shared by every run, never written by crucible).
secret_parts = ["EXPECTED", "_SECRET_", "q7Zx"]
task("secret.json", {"id": "e2e/secret", "language": "python", "harness": "stdio",
                     "checker": "exact", "limits": {"cpu_time": 20, "wall_time": 30},
                     "tests": [{"name": "s", "stdin": "go\n",
                                "expected": "".join(secret_parts) + "\n"}]})
w("search.py", """import glob, subprocess, sys
secret = %s
canary = "CANARY" + "_" + "w3Rk"
with open("/tmp/canary.txt", "w") as f:
    f.write(canary + "\\n")
procs = glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline")
for name, pattern in (("canary", canary), ("secret", secret)):
    r = subprocess.run(["timeout", "20", "grep", "-rlsF", "-D", "skip", "--exclude-dir=proc",
                        "--exclude-dir=usr", "-f", "-", "/"] + procs,
                       input=pattern.encode(), capture_output=True)
    print(name, "rc=%%d" %% r.returncode, "files=" + ",".join(sorted(r.stdout.decode().split())))
""" % (" + ".join(repr(p) for p in secret_parts),))

limits = {"cpu_time": 1, "wall_time": 2, "memory_mb": 64, "pids": 32}
task("bomb.json", {"id": "e2e/bomb", "language": "python", "harness": "stdio", "limits": limits,
                   "tests": [{"name": "t", "stdin": "1\n", "expected": "1\n"}]})
w("forkbomb.py", "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n"
                 "        pass\n")
w("hog.py", "x = bytearray(1 << 30)\nprint(len(x))\n")
task("bashbomb.json", {"id": "e2e/bash-bomb", "language": "bash", "harness": "stdio",
                       "limits": limits, "tests": [{"name": "t", "stdin": "1\n", "expected": "1\n"}]})
w("bomb.sh", "b() { b | b & }\nb\n")

# --- bad input ---
w("bad1.json", '{"id": "e2e/bad", "language": "python", oops}\n')
w("bad3.jsonl", json.dumps(base) + "\n\n" + '{"id": "e2e/other", "language": \n')
task("cobol.json", {"id": "e2e/cobol", "language": "cobol", "harness": "assert",
                    "tests": [{"name": "a", "code": "x"}]})
w("nul.py", "def add(a, b):\n    return a + b\x00\n")
EOF

# the record's shape, common to every verdict
fields_ok='list(d)[:11] == ["task_id", "task_version", "language", "verdict", "reward", "passed",
 "total", "repeats", "flaky", "compile", "tests"] and "wall_time" in d and "message" in d'
test_fields_ok='all(isinstance(t["name"], str) and isinstance(t["verdict"], str)
 and isinstance(t["status"], str) and (t["exit_code"] is None or isinstance(t["exit_code"], int))
 and isinstance(t["cpu_time"], (int, float)) and t["cpu_time"] >= 0
 and isinstance(t["wall_time"], (int, float)) and t["wall_time"] >= 0
 and isinstance(t["memory_kb"], int) and t["memory_kb"] >= 0
 and isinstance(t["stdout"], str) and isinstance(t["stderr"], str) for t in d["tests"])'

before=$(state_snapshot)

# --- accepted ---------------------------------------------------------------------
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/add.py"
is "$RC" 0 "accepted: exit 0"
jcheck "$fields_ok" "accepted: the record has every field, in order"
jcheck 'd["task_id"] == "demo/py-add" and d["verdict"] == "accepted" and d["reward"] == 1.0
        and d["passed"] == 3 and d["total"] == 3 and d["repeats"] == 1 and d["flaky"] is False' \
    "accepted: task_id, verdict, reward 1, passed 3 of 3, repeats 1, not flaky"
jcheck 'd["compile"] is None and d["message"] == ""' "accepted: no compile step (python), empty message"
jcheck 'isinstance(d["task_version"], str) and len(d["task_version"]) >= 8
        and all(c in "0123456789abcdef" for c in d["task_version"])' "accepted: task_version is a hex digest"
jcheck '[t["name"] for t in d["tests"]] == ["small", "negative", "large"]' \
    "accepted: tests[] in the task's order, by name"
jcheck "$test_fields_ok" "accepted: every test has name/verdict/status/exit_code/cpu_time/wall_time/memory_kb/stdout/stderr"
jcheck 'all(t["verdict"] == "accepted" and t["status"] == "ok" and t["exit_code"] == 0 for t in d["tests"])' \
    "accepted: every test accepted, status ok, exit_code 0"
jcheck 'isinstance(d["wall_time"], (int, float)) and 0 < d["wall_time"] < 30
        and d["wall_time"] >= max(t["wall_time"] for t in d["tests"])' \
    "accepted: wall_time covers the tests"
is "$(cat "$ERR")" "" "accepted: nothing on stderr"
jcheck '"extracted" not in d' "--solution: no \"extracted\" field"
one_line "$OUT"
ok $? "accepted: the record is one line of JSON"

cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --pretty
jcheck 'd["verdict"] == "accepted"' "--pretty: still one JSON document"
[ "$(grep -c '' "$OUT")" -gt 10 ]
ok $? "--pretty: indented over many lines"

# --- task_version -------------------------------------------------------------------
cru verify --task "$F/ver1.json" --solution "$F/add.py"
v1=$(jf task_version)
cru verify --task "$F/ver1_pretty.json" --solution "$F/add.py"
v1p=$(jf task_version)
cru verify --task "$F/ver2.json" --solution "$F/add.py"
v2=$(jf task_version)
is "$RC" 0 "a single task given as one JSON object (no --task-id needed)"
is "$v1p" "$v1" "task_version: the same task (pretty-printed) has the same version"
cru verify --task "$F/ver1_lead.json" --solution "$F/add.py"
jcheck 'd["verdict"] == "accepted" and d["task_version"] == "'"$v1"'"' \
    "a pretty-printed task after a blank line is read like the same task"
cru_in "$F/ver1_pretty.json" verify --task - --solution "$F/add.py"
jcheck 'd["verdict"] == "accepted" and d["task_version"] == "'"$v1"'"' \
    "--task -: a pretty-printed task on stdin is read"
cru verify --task "$F/pretty_bad.json" --solution "$F/add.py"
is "$RC" 2 "a pretty-printed task with a syntax error: exit 2"
like "$(head -n 1 "$ERR")" 'pretty_bad\.json:5: .*oops' "a pretty-printed task with a syntax error: FILE:5 (its line) and the bad token named"
unlike "$(cat "$ERR")" 'pretty_bad\.json:[^5]' "a pretty-printed task with a syntax error: no errors reported for other lines"
[ "$v1" != "$v2" ] && [ -n "$v1" ]
ok $? "task_version: changing a test changes the version ($v1 vs $v2)"

# --- wrong ------------------------------------------------------------------------
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/sub.py"
is "$RC" 1 "wrong: exit 1"
jcheck 'd["verdict"] == "wrong_answer" and d["reward"] == 0.0 and d["passed"] == 0 and d["total"] == 3' \
    "wrong: verdict wrong_answer, reward 0, passed 0 of 3"
jcheck 'all(t["verdict"] == "wrong_answer" for t in d["tests"])
        and "AssertionError" in d["tests"][0]["stderr"]' "wrong: every test wrong_answer, the assertion in its stderr"
is "$(cat "$ERR")" "" "wrong: nothing on stderr (the record says it all)"

# --- rewards ----------------------------------------------------------------------
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/three.py"
jcheck 'd["verdict"] == "wrong_answer" and d["passed"] == 1 and d["reward"] == 0.0' \
    "binary reward (default): 1 of 3 passed gives 0"
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/three.py" --reward fraction
is "$RC" 1 "--reward fraction: partly right is still exit 1"
jcheck 'd["verdict"] == "wrong_answer" and d["passed"] == 1 and abs(d["reward"] - 1/3) < 1e-6
        and [t["verdict"] for t in d["tests"]] == ["accepted", "wrong_answer", "wrong_answer"]' \
    "--reward fraction: 1 of 3 passed gives reward 1/3"
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --reward fraction
jcheck 'd["reward"] == 1.0' "--reward fraction: all passed gives 1"
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --reward binary
jcheck 'd["reward"] == 1.0 and d["verdict"] == "accepted"' "--reward binary: accepted gives 1"

# --- repeats ----------------------------------------------------------------------
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --repeats 3
is "$RC" 0 "--repeats 3: accepted"
jcheck 'd["repeats"] == 3 and d["flaky"] is False and all(t["agree"] == 3 for t in d["tests"])' \
    "--repeats 3: repeats 3, every test's 3 runs agree, not flaky"
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/three.py" --repeats 3
jcheck 'd["repeats"] == 3 and d["verdict"] == "wrong_answer" and d["flaky"] is False
        and [t["agree"] for t in d["tests"]] == [3, 3, 3]' "--repeats 3: a consistently wrong solution is not flaky"
cru verify --task "$F/coin.json" --solution "$F/coin.py" --repeats 20
jcheck 'd["flaky"] is True and d["repeats"] == 20 and 10 <= d["tests"][0]["agree"] < 20' \
    "--repeats 20: a coin-flip solution is flaky, agree counts the majority"

# --- completion, response, stdin ----------------------------------------------------
cru verify --task "$TASKS" --task-id demo/py-add --completion "$F/completion.txt"
is "$RC" 0 "--completion: the task's prompt + the completion is accepted"
jcheck 'd["verdict"] == "accepted" and "prompt" in d["extracted"] and "completion" in d["extracted"]' \
    '--completion: "extracted" says prompt + completion'
cru verify --task "$TASKS" --task-id demo/py-add --completion "$F/completion_wrong.txt"
jcheck 'd["verdict"] == "wrong_answer" and d["extracted"] == "prompt + completion"' "--completion: a wrong body is wrong_answer"
cru verify --task "$TASKS" --task-id demo/py-add --response "$F/response.txt"
is "$RC" 0 "--response: the last fenced block (the fixed one) is accepted"
jcheck 'd["verdict"] == "accepted" and isinstance(d.get("extracted"), str) and "last" in d["extracted"]' \
    '--response: "extracted" says which block was taken'
cru verify --task "$TASKS" --task-id demo/py-add --response "$F/response_bad_last.txt"
jcheck 'd["verdict"] == "wrong_answer"' "--response: a wrong last block fails even when an earlier one is right"
cru_in "$F/add.py" verify --task "$TASKS" --task-id demo/py-add --solution -
is "$RC" 0 "--solution -: the solution is read from stdin"
jcheck 'd["verdict"] == "accepted" and d["task_id"] == "demo/py-add"' "--solution -: accepted"
cru_in "$F/completion.txt" verify --task "$TASKS" --task-id demo/py-add --completion -
jcheck 'd["verdict"] == "accepted"' "--completion -: from stdin"

# --- --task-id picks one task of several ----------------------------------------------
cru verify --task "$TASKS" --task-id demo/py-primes --solution "$F/primes.py"
is "$RC" 0 "--task-id demo/py-primes: accepted"
jcheck 'd["task_id"] == "demo/py-primes" and d["total"] == 3
        and [t["name"] for t in d["tests"]] == ["ten", "hundred", "million"]
        and d["tests"][2]["stdout"] == "78498\n"' "--task-id: the record is that task's (its tests, its output)"
cru verify --task "$TASKS" --task-id demo/c-gcd --solution "$F/gcd.c"
is "$RC" 0 "--task-id demo/c-gcd: a C solution is compiled and accepted"
jcheck 'd["task_id"] == "demo/c-gcd" and d["compile"]["status"] == "ok" and d["compile"]["exit_code"] == 0' \
    "C: the compile record is there, status ok"
cru verify --task "$TASKS" --task-id demo/py-primes --solution "$F/add.py"
is "$RC" 1 "--task-id: the same file, another task: the add solution fails the primes task"

# --- the solution's language ------------------------------------------------------------
cru verify --task "$TASKS" --task-id demo/py-primes --solution "$F/primes_cpp.txt" --language cpp
is "$RC" 0 "--language cpp on a python stdio task: accepted"
jcheck 'd["language"] == "cpp" and d["verdict"] == "accepted" and d["compile"]["status"] == "ok"
        and d["tests"][2]["stdout"] == "78498\n"' \
    "--language cpp: compiled and run as C++ (the record's language is cpp)"
cru verify --task "$TASKS" --task-id demo/py-primes --solution "$F/primes_cpp.txt"
jcheck 'd["language"] == "python" and d["verdict"] != "accepted"' \
    "the same file without --language (no telling extension) runs as the task's python, and fails"
cru verify --task "$TASKS" --task-id demo/py-primes --solution "$F/primes.cpp"
is "$RC" 0 "a .cpp solution file on a stdio task: accepted without --language"
jcheck 'd["language"] == "cpp" and d["compile"]["status"] == "ok"' "the extension .cpp names the language"
cru verify --task "$TASKS" --task-id demo/py-primes --solution "$F/primes_py.cpp" --language python
jcheck 'd["language"] == "python" and d["verdict"] == "accepted" and d["compile"] is None' \
    "--language wins over the extension (Python code in a .cpp file, --language python)"
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/add.cpp"
jcheck 'd["language"] == "python" and d["verdict"] == "accepted"' \
    "an assert task ignores the extension (the solution is in the task's language)"
cru verify --task "$TASKS" --task-id demo/py-primes --response "$F/response_cpp.txt" --language c++
jcheck 'd["language"] == "cpp" and d["verdict"] == "accepted" and "cpp" in d["extracted"]' \
    "--response with --language c++: the \`\`\`cpp block is taken though a python block comes last"
"$CRUCIBLE" tasks import --db "$T/lib.db" "$TASKS" >/dev/null 2>&1
cru verify --db "$T/lib.db" --task-id demo/py-primes --solution "$F/primes_cpp.txt" --language cpp
jcheck 'd["language"] == "cpp" and d["verdict"] == "accepted"' "--db with --language cpp: accepted as C++"

# --- compile error --------------------------------------------------------------------
cru verify --task "$TASKS" --task-id demo/c-gcd --solution "$F/broken.c"
is "$RC" 1 "compile error: exit 1"
jcheck 'd["verdict"] == "compile_error" and d["reward"] == 0.0 and d["passed"] == 0' \
    "compile error: verdict compile_error, reward 0"
jcheck 'd["compile"]["status"] != "ok" and "error" in d["compile"]["stderr"]
        and "expected" in d["compile"]["stderr"] and "main" in d["compile"]["stderr"]' \
    "compile error: the compiler's message is in compile.stderr"
jcheck '"compil" in d["message"]' "compile error: the message says compilation failed"
jcheck 'all(t["verdict"] != "infra_error" for t in d["tests"])' \
    "compile error: no test is reported as infra_error (crucible did not fail; the tests never ran)"
cru verify --task "$TASKS" --task-id demo/c-gcd --solution "$F/broken.c" --reward fraction
jcheck 'd["verdict"] == "compile_error" and d["reward"] == 0.0' "compile error: reward 0 under --reward fraction too"

# --- stdio checkers ---------------------------------------------------------------------
for ck in exact lines tokens float; do
    cru verify --task "$F/ck_$ck.json" --solution "$F/ck_${ck}_good.py"
    jcheck 'd["verdict"] == "accepted" and d["tests"][0]["verdict"] == "accepted"' \
        "checker $ck: accepts $(cat "$F/ck_${ck}_good.py" | tail -n 1)"
    is "$RC" 0 "checker $ck: accepted is exit 0"
    cru verify --task "$F/ck_$ck.json" --solution "$F/ck_${ck}_bad.py"
    jcheck 'd["verdict"] == "wrong_answer" and d["tests"][0]["status"] == "ok"
            and d["tests"][0].get("why")' \
        "checker $ck: rejects $(cat "$F/ck_${ck}_bad.py" | tail -n 1) (status ok, a why)"
    is "$RC" 1 "checker $ck: rejected is exit 1"
done

# --- the image lacks the toolchain ---------------------------------------------------------
cru verify --task "$F/noimg.json" --solution "$F/add.py"
is "$RC" 2 "no toolchain in the image: exit 2"
jcheck 'd["verdict"] == "infra_error" and d["reward"] is None' "no toolchain: verdict infra_error, reward null"
jcheck '"python" in d["message"] and "\n" not in d["message"]' "no toolchain: the message names the missing toolchain"
one_line "$ERR"
ok $? "no toolchain: one line on stderr"
like "$(cat "$ERR")" 'python' "no toolchain: stderr names it too"

# --- hostile solutions ------------------------------------------------------------------------
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/exit0.py"
is "$RC" 1 "sys.exit(0) before the tests: exit 1"
jcheck 'd["verdict"] != "accepted" and d["reward"] == 0.0 and d["passed"] == 0' "sys.exit(0) before the tests: not accepted"
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/osexit0.py"
jcheck 'd["verdict"] != "accepted" and d["reward"] == 0.0 and d["passed"] == 0' "os._exit(0) before the tests: not accepted"
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/osexit0.py" --reward fraction
jcheck 'd["reward"] == 0.0' "os._exit(0) before the tests: reward 0 under --reward fraction"
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/hook.py"
jcheck 'd["verdict"] != "accepted" and d["passed"] == 0' \
    "an excepthook that prints PASSED and exits 0 when an assertion fails: not accepted"
# The token that proves the test code ran to its end is no longer in the environment (it comes
# on stdin, read by the harness before the solution runs): printing the variable forges nothing.
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/forge.py"
jcheck 'd["verdict"] != "accepted" and d["passed"] == 0' \
    "a solution printing the environment's end-of-test token and exiting 0: not accepted"
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/fake_passed_wrong.py"
jcheck 'd["verdict"] == "wrong_answer" and "PASSED" in d["tests"][0]["stdout"]' \
    "a wrong solution printing PASSED / 'ok 1 - all tests passed' is still wrong_answer"
cru verify --task "$TASKS" --task-id demo/py-add --solution "$F/fake_passed_right.py"
jcheck 'd["verdict"] == "accepted"' "a right solution printing FAILED is still accepted (assert output is not parsed)"
cru verify --task "$TASKS" --task-id demo/py-primes --solution "$F/fake_passed_stdio.py"
jcheck 'd["verdict"] == "wrong_answer" and d["passed"] == 0' "stdio: printing PASSED / Accepted is wrong_answer"

cru verify --task "$F/secret.json" --solution "$F/search.py"
jcheck 'd["verdict"] == "wrong_answer"' "expected-output search: verdict wrong_answer"
jcheck '"canary rc=" in d["tests"][0]["stdout"] and "/tmp/canary.txt" in d["tests"][0]["stdout"]
        and "rc=124" not in d["tests"][0]["stdout"]' \
    "expected-output search: the search works (finds the solution's own canary file, no timeout)"
jcheck '"secret rc=" in d["tests"][0]["stdout"] and "secret rc=0" not in d["tests"][0]["stdout"]
        and "files=\n" in d["tests"][0]["stdout"].split("secret ", 1)[1]' \
    "expected-output search: the expected output is in no file the sandbox can read (searched everything but /usr and /proc; /proc/*/environ, cmdline searched)"

cru verify --task "$F/bomb.json" --solution "$F/forkbomb.py"
is "$RC" 1 "fork bomb: exit 1"
jcheck 'd["verdict"] == "timeout" and d["reward"] == 0.0' "fork bomb: verdict timeout"
cru verify --task "$F/bomb.json" --solution "$F/hog.py"
jcheck 'd["verdict"] == "memory_limit" and d["reward"] == 0.0' "memory hog (1 GiB under 64 MB): verdict memory_limit"
cru verify --task "$F/bashbomb.json" --solution "$F/bomb.sh"
jcheck 'd["verdict"] != "accepted"' "bash fork bomb left running in the background (no answer printed): not accepted"
is "$(state_leftovers "$before")" "" "hostile solutions: nothing left behind (mounts, cgroups, processes)"

# --- bad input: exit 2, one line on stderr naming the problem, nothing on stdout ------------
# bad NEEDLE ARG... — crucible verify ARG...; NEEDLE must be in the stderr line.
bad() {
    local needle=$1
    shift
    cru verify "$@"
    is "$RC" 2 "bad input ($needle): exit 2"
    is "$(wc -c <"$OUT")" 0 "bad input ($needle): nothing on stdout"
    if one_line "$ERR" && grep -qF -- "$needle" "$ERR"; then
        ok 0 "bad input ($needle): one line on stderr naming it"
    else
        ok 1 "bad input ($needle): one line on stderr naming it" || true
    fi
}
bad --task --solution "$F/add.py"
bad --solution --task "$TASKS" --task-id demo/py-add
bad "exactly one" --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --completion "$F/completion.txt"
bad --bogus --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --bogus
bad "'0'" --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --repeats 0
bad "'abc'" --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --repeats abc
bad "'101'" --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --repeats 101
bad "'bogus'" --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --reward bogus
bad "$F/nonexistent.jsonl" --task "$F/nonexistent.jsonl" --solution "$F/add.py"
bad "$F/nonexistent.py" --task "$TASKS" --task-id demo/py-add --solution "$F/nonexistent.py"
bad "bad1.json:1" --task "$F/bad1.json" --solution "$F/add.py"
bad "bad3.jsonl:3" --task "$F/bad3.jsonl" --task-id e2e/other --solution "$F/add.py"
bad "cobol" --task "$F/cobol.json" --solution "$F/add.py"
bad "--task-id" --task "$TASKS" --solution "$F/add.py"
bad "demo/nope" --task "$TASKS" --task-id demo/nope --solution "$F/add.py"
bad "NUL" --task "$TASKS" --task-id demo/py-add --solution "$F/nul.py"
bad "an assert task in python: its tests are python code, so the solution must be python, not cpp" \
    --task "$TASKS" --task-id demo/py-add --solution "$F/add.py" --language cpp
bad "demo/py-stack" --task "$TASKS" --task-id demo/py-stack --solution "$F/add.py" --language c
bad "unknown language 'cobol' (known: python, c, cpp" \
    --task "$TASKS" --task-id demo/py-primes --solution "$F/primes.py" --language cobol

is "$(state_leftovers "$before")" "" "nothing left behind after all of it"
