#!/usr/bin/env bash
# crucible eval end to end: --reference, a solutions file with --out and without, -j,
# bad solution lines, solution lines in several languages for one stdio task, bad usage,
# and SIGINT in the middle of a long run.
. "$(dirname "$0")/lib.sh"

plan 69

TASKS=$REPO_ROOT/examples/tasks.jsonl
SOLS=$REPO_ROOT/examples/solutions.jsonl
F=$T/f
mkdir -p "$F"

"$PY" - "$F" "$SOLS" <<'EOF'
import json, os, sys
F, sols = sys.argv[1], sys.argv[2]

def w(name, text):
    with open(os.path.join(F, name), "w", encoding="utf-8") as f:
        f.write(text)

# The demo solutions without the two slow ones (the quadratic primes, the fork bomb):
# cheap enough to run again with -j 1. quick_lines maps to lines of the full file.
lines = [l for l in open(sols, encoding="utf-8") if l.strip()]
keep = [i for i, l in enumerate(lines) if json.loads(l)["note"].split(":")[0] not in ("slow",)
        and "fork bomb" not in json.loads(l)["note"]]
w("quick.jsonl", "".join(lines[i] for i in keep))
w("quick_lines.json", json.dumps(keep))

add = "def add(a, b):\n    return a + b\n"
w("mixed.jsonl", "\n".join([
    json.dumps({"task_id": "demo/py-add", "solution": add}),                          # 1 ok
    "this is not json",                                                               # 2
    json.dumps({"solution": add}),                                                    # 3
    "",                                                                               # 4 blank
    json.dumps({"task_id": "demo/nope", "solution": add}),                            # 5
    json.dumps({"task_id": "demo/py-add", "solution": add,
                "completion": "    return a + b\n"}),                                 # 6
    json.dumps({"task_id": "demo/py-add", "completion": "    return a - b\n"}),       # 7 ok
    "[1, 2]",                                                                         # 8
    json.dumps({"task_id": 5, "solution": add}),                                      # 9
]) + "\n")

# Rollouts of one stdio task (demo/py-primes, a python task) in Python, C++ and C, each line
# naming its language; then lines whose language is wrong.
py = ("n = int(input())\ns = bytearray([1]) * max(n, 2)\ns[0:2] = b'\\0\\0'\n"
      "for i in range(2, int(n ** 0.5) + 1):\n    if s[i]:\n"
      "        s[i*i::i] = bytearray(len(s[i*i::i]))\nprint(sum(s[:n]))\n")
sieve = ("long n; if (scanf(\"%ld\", &n) != 1) return 1; long c = 0; char *s = (char *)calloc(n > 2 ? n : 2, 1);\n"
         "for (long i = 2; i < n; i++) if (!s[i]) { c++; for (long j = i * i; j < n; j += i) s[j] = 1; }\n"
         "printf(\"%ld\\n\", c); return 0; }\n")
cpp = "#include <cstdio>\n#include <cstdlib>\nusing namespace std;\nint main() { " + sieve
c = "#include <stdio.h>\n#include <stdlib.h>\nint main(void) { " + sieve
w("langs.jsonl", "\n".join([
    json.dumps({"task_id": "demo/py-primes", "solution": py}),                            # 1 python
    json.dumps({"task_id": "demo/py-primes", "language": "cpp", "solution": cpp}),        # 2 cpp
    json.dumps({"task_id": "demo/py-primes", "language": "C++",
                "response": "```cpp\n" + cpp + "```\nIn Python:\n```python\nprint(0)\n```\n"}),  # 3 cpp
    json.dumps({"task_id": "demo/py-primes", "language": "c", "solution": c}),            # 4 c
    json.dumps({"task_id": "demo/py-add", "language": "cpp", "solution": add}),           # 5 assert task
    json.dumps({"task_id": "demo/py-primes", "language": "cobol", "solution": py}),       # 6 unknown
    json.dumps({"task_id": "demo/py-primes", "language": 3, "solution": py}),             # 7 not a name
    json.dumps({"task_id": "demo/py-add", "language": "python", "solution": add}),        # 8 its own
    json.dumps({"task_id": "demo/py-primes", "language": None, "solution": py}),          # 9 null: the task's
]) + "\n")

# Trivial solutions: sandboxes are created while the worker threads are still starting.
w("tasks_small.jsonl", json.dumps({"id": "e2e/one", "language": "python", "harness": "assert",
                                   "tests": [{"name": "a", "code": "assert f() == 1"}]}) + "\n"
  + json.dumps({"id": "e2e/sleep", "language": "python", "harness": "assert",
                "limits": {"cpu_time": 5, "wall_time": 20},
                "tests": [{"name": "a", "code": "assert f() == 1"}]}) + "\n")
w("trivial.jsonl", "".join(json.dumps({"task_id": "e2e/one", "solution": "def f():\n    return 1\n"})
                           + "\n" for _ in range(16)))
sleepy = json.dumps({"task_id": "e2e/sleep",
                     "solution": "import time\ntime.sleep(5)\ndef f():\n    return 1\n"}) + "\n"
w("sleep8.jsonl", sleepy * 8)
w("sleep1.jsonl", sleepy)
EOF

# records FILE — true when every line of FILE is a JSON object (and there is one).
records() {
    "$PY" - "$1" <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
ok = bool(lines) and all(isinstance(json.loads(l), dict) for l in lines)
sys.exit(0 if ok else 1)
EOF
}

# rcheck FILE PYEXPR DESC — PYEXPR over r (the list of records in FILE) and s (the
# solution lines of $SOLS, parsed) is true.
rcheck() {
    "$PY" - "$1" "$SOLS" "$F/quick_lines.json" "$2" <<'EOF'
import json, sys
try:
    r = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8").read().splitlines()]
    s = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
    quick = json.load(open(sys.argv[3]))
    sys.exit(0 if eval("(" + sys.argv[4] + "\n)") else 1)
except Exception as e:
    print("# %s: %r" % (sys.argv[4], e))
    sys.exit(1)
EOF
    ok $? "$3"
}

# sumcheck SUMMARY RECORDS DESC — the summary table agrees with the records: a count per
# verdict, the total, the pass rate and the mean reward (over non-null rewards).
sumcheck() {
    "$PY" - "$1" "$2" <<'EOF'
import collections, json, re, sys
text = open(sys.argv[1], encoding="utf-8").read()
recs = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8").read().splitlines() if l]
want = collections.Counter(r["verdict"] for r in recs)
got = {m.group(1): int(m.group(2))
       for m in re.finditer(r"^([a-z_]+)\s+(\d+)\s+[\d.]+%$", text, re.M)}
bad = []
if got != dict(want):
    bad.append("verdict counts %r, records say %r" % (got, dict(want)))
m = re.search(r"^total\s+(\d+)$", text, re.M)
if not m or int(m.group(1)) != len(recs):
    bad.append("total %s, %d records" % (m and m.group(1), len(recs)))
acc = want.get("accepted", 0)
m = re.search(r"pass rate\s+([\d.]+)% \((\d+) of (\d+) accepted\)", text)
if not m or int(m.group(2)) != acc or int(m.group(3)) != len(recs) or \
        abs(float(m.group(1)) - 100.0 * acc / max(len(recs), 1)) > 0.01:
    bad.append("pass rate line %r" % (m and m.group(0)))
rw = [r["reward"] for r in recs if r["reward"] is not None]
m = re.search(r"mean reward\s+([\d.]+) over (\d+) records", text)
if not m or int(m.group(2)) != len(rw) or \
        abs(float(m.group(1)) - (sum(rw) / len(rw) if rw else 0)) > 0.0001:
    bad.append("mean reward line %r, rewards %r" % (m and m.group(0), rw))
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
EOF
    ok $? "$3"
}

before=$(state_snapshot)

# --- --reference ---------------------------------------------------------------------------
cru eval --tasks "$TASKS" --reference
is "$RC" 0 "--reference: exit 0"
records "$OUT"
ok $? "--reference: stdout holds only JSON records (no --out)"
cp "$OUT" "$T/ref.jsonl"
rcheck "$T/ref.jsonl" '[x["task_id"] for x in r] == [json.loads(l)["id"] for l in open("'"$TASKS"'") if l.strip()]' \
    "--reference: one record per task, in the task file's order"
rcheck "$T/ref.jsonl" 'all(x["verdict"] == "accepted" and x["reward"] == 1.0 for x in r)' \
    "--reference: every reference is accepted"
rcheck "$T/ref.jsonl" 'all("extracted" not in x for x in r)' '--reference: no "extracted" (full programs)'
sumcheck "$ERR" "$T/ref.jsonl" "--reference: the summary (on stderr) matches the records"

# --- --solutions --out, -j 4 -----------------------------------------------------------------
cru eval --tasks "$TASKS" --solutions "$SOLS" --out "$T/res4.jsonl" -j 4
is "$RC" 0 "--solutions --out -j 4: exit 0"
records "$T/res4.jsonl"
ok $? "--out: the file holds JSON records"
rcheck "$T/res4.jsonl" 'len(r) == len(s) and [x["task_id"] for x in r] == [y["task_id"] for y in s]' \
    "--out: one record per solution line, in input order"
rcheck "$T/res4.jsonl" 'all(("extracted" in x) == ("solution" not in y) for x, y in zip(r, s))' \
    '--out: "extracted" on the completion and response records only'
rcheck "$T/res4.jsonl" 'all((x["verdict"] == "accepted") == y["note"].startswith("correct") for x, y in zip(r, s))' \
    "--out: the correct solutions are accepted, no other"
rcheck "$T/res4.jsonl" '[x["verdict"] for x in r][1] == "wrong_answer" and r[5]["verdict"] == "memory_limit"
        and r[7]["verdict"] == "compile_error" and r[8]["verdict"] == "wrong_answer"' \
    "--out: wrong → wrong_answer, memory hog → memory_limit, syntax error → compile_error, imprecise → wrong_answer"
grep -q '^{' "$OUT"
[ $? -ne 0 ]
ok $? "--out: no record on stdout"
sumcheck "$OUT" "$T/res4.jsonl" "--out: the summary (on stdout) matches the records: counts, total, pass rate, mean reward"
grep -q '^{' "$ERR"
[ $? -ne 0 ]
ok $? "--out: no record on stderr"

# --- no --out, -j 1 ------------------------------------------------------------------------
cru eval --tasks "$TASKS" --solutions "$F/quick.jsonl" -j 1
is "$RC" 0 "without --out, -j 1: exit 0"
records "$OUT"
ok $? "without --out: stdout holds only the records"
cp "$OUT" "$T/res1.jsonl"
sumcheck "$ERR" "$T/res1.jsonl" "without --out: the summary (on stderr) matches the records"
rcheck "$T/res1.jsonl" '[x["verdict"] for x in r] == [json.loads(l)["verdict"] for i, l in enumerate(open("'"$T/res4.jsonl"'")) if i in quick]' \
    "-j 1 and -j 4 give the same verdicts, line for line"

# --- bad solution lines ----------------------------------------------------------------------
cru eval --tasks "$TASKS" --solutions "$F/mixed.jsonl" -j 1
is "$RC" 1 "bad solution lines: exit 1"
like "$(cat "$ERR")" "mixed\.jsonl:2:[^"$'\n'"]*JSON" "bad line 2 (not JSON) reported with its line number"
like "$(cat "$ERR")" "mixed\.jsonl:3:[^"$'\n'"]*task_id" "bad line 3 (no task_id) reported"
like "$(cat "$ERR")" "mixed\.jsonl:5:[^"$'\n'"]*demo/nope" "bad line 5 (unknown task id) reported, naming the id"
like "$(cat "$ERR")" "mixed\.jsonl:6:[^"$'\n'"]*exactly one" "bad line 6 (solution and completion) reported"
like "$(cat "$ERR")" "mixed\.jsonl:8:" "bad line 8 (a JSON array) reported"
like "$(cat "$ERR")" "mixed\.jsonl:9:" "bad line 9 (task_id not a string) reported"
unlike "$(cat "$ERR")" "mixed\.jsonl:[147]:" "good and blank lines (1, 4, 7) are not reported"
records "$OUT"
ok $? "bad solution lines: stdout still holds only records"
cp "$OUT" "$T/mixed.out"
rcheck "$T/mixed.out" '[(x["task_id"], x["verdict"]) for x in r] == [("demo/py-add", "accepted"), ("demo/py-add", "wrong_answer")]' \
    "bad solution lines: the valid lines (1 and 7) still get their records, in order"

# --- solution lines in several languages -----------------------------------------------------
cru eval --tasks "$TASKS" --solutions "$F/langs.jsonl" -j 2
is "$RC" 1 "per-line languages: exit 1 (three lines name a language their task cannot take)"
cp "$OUT" "$T/langs.out"
rcheck "$T/langs.out" '[(x["input_line"], x["task_id"], x["language"], x["verdict"]) for x in r] == [
        (1, "demo/py-primes", "python", "accepted"), (2, "demo/py-primes", "cpp", "accepted"),
        (3, "demo/py-primes", "cpp", "accepted"), (4, "demo/py-primes", "c", "accepted"),
        (8, "demo/py-add", "python", "accepted"), (9, "demo/py-primes", "python", "accepted")]' \
    "per-line languages: Python, C++ and C rollouts of one stdio task are each accepted, run as their own language"
rcheck "$T/langs.out" 'r[1]["compile"]["status"] == "ok" and r[0]["compile"] is None and "cpp" in r[2]["extracted"]' \
    "per-line languages: the C++ line was compiled, the Python one not; the response's cpp block was taken"
like "$(cat "$ERR")" "langs\.jsonl:5: task 'demo/py-add' is an assert task in python[^"$'\n'"]*not cpp" \
    "a language an assert task cannot take: the line is reported with why"
like "$(cat "$ERR")" "langs\.jsonl:6: unknown language 'cobol' \(known: python, c, cpp" \
    "an unknown language: the line is reported with the known ones"
like "$(cat "$ERR")" "langs\.jsonl:7: [^"$'\n'"]*language" "a language that is not a string: the line is reported"
unlike "$(cat "$ERR")" "langs\.jsonl:[123489]:" "the good lines (1-4, 8, 9) are not reported"

# --- bad usage: exit 2, one line naming the problem, nothing on stdout -----------------------
bad() {
    local needle=$1
    shift
    cru eval "$@"
    is "$RC" 2 "bad usage ($needle): exit 2"
    if [ ! -s "$OUT" ] && one_line "$ERR" && grep -qF -- "$needle" "$ERR"; then
        ok 0 "bad usage ($needle): one line on stderr naming it, nothing on stdout"
    else
        ok 1 "bad usage ($needle): one line on stderr naming it, nothing on stdout" || true
    fi
}
bad --tasks --reference
bad --reference --tasks "$TASKS" --reference --solutions "$SOLS"
bad --solutions --tasks "$TASKS"
bad "'0'" --tasks "$TASKS" --reference -j 0
bad "'999'" --tasks "$TASKS" --reference -j 999
bad "'x'" --tasks "$TASKS" --reference -j x
bad --bogus --tasks "$TASKS" --reference --bogus
bad "$F/none.jsonl" --tasks "$F/none.jsonl" --reference
bad "$F/none.jsonl" --tasks "$TASKS" --solutions "$F/none.jsonl"

# --- parallel start ------------------------------------------------------------------------
t0=$(date +%s.%N)
cru eval --tasks "$F/tasks_small.jsonl" --solutions "$F/trivial.jsonl" -j 8 --out "$T/trivial.out"
secs=$(echo "$(date +%s.%N) - $t0" | bc)
rcheck "$T/trivial.out" 'len(r) == 16 and all(x["verdict"] == "accepted" for x in r)' "-j 8: 16 trivial solutions accepted"
[ "$(echo "$secs < 5" | bc)" = 1 ]
ok $? "-j 8: 16 trivial solutions take well under 5 s (took ${secs} s; no sandbox start stalls while the workers start)"

# --- SIGINT ------------------------------------------------------------------------------------
# bg_eval OUT ERR ARG... — crucible eval in the background: BG is its pid.
bg_eval() {
    local o=$1 e=$2
    shift 2
    "$CRUCIBLE" eval "$@" </dev/null >"$o" 2>"$e" &
    BG=$!
    track_pid "$BG"
}
# wait_running PID — until a sandbox of PID exists, then half a second more.
wait_running() {
    local i
    for i in $(seq 100); do
        if [ -n "$(_sb_cgroups | grep "/sb-$1-")" ]; then
            sleep 0.5
            return 0
        fi
        sleep 0.05
    done
    return 1
}
# interrupt — SIGINT to BG; sets ST (its exit status) and SECS (SIGINT to exit).
interrupt() {
    local t0
    wait_running "$BG"
    t0=$(date +%s.%N)
    kill -INT "$BG"
    wait "$BG"
    ST=$?
    SECS=$(echo "$(date +%s.%N) - $t0" | bc)
}

# 8 solutions that sleep 5 s, 2 at a time: 20 s if nothing stops them.
bg_eval "$T/int.stdout" "$T/int.stderr" --tasks "$F/tasks_small.jsonl" --solutions "$F/sleep8.jsonl" \
    -j 2 --out "$T/int.jsonl"
interrupt
LAST_CMD="crucible eval --tasks tasks_small.jsonl --solutions sleep8.jsonl -j 2 --out int.jsonl; SIGINT"
RC=$ST
cp "$T/int.stdout" "$OUT"
cp "$T/int.stderr" "$ERR"
[ "$(echo "$SECS < 3" | bc)" = 1 ]
ok $? "SIGINT (--out): the eval stops within 3 s (took ${SECS} s)"
is "$ST" 130 "SIGINT (--out): crucible dies by SIGINT (status 130)"
like "$(cat "$T/int.stderr")" "stopped" "SIGINT (--out): stderr says it stopped"
like "$(cat "$T/int.stdout")" "total +[0-7]"$'\n' "SIGINT (--out): a partial summary on stdout (fewer than 8 verified)"
[ "$(grep -c '' "$T/int.jsonl")" -lt 8 ] && { [ ! -s "$T/int.jsonl" ] || records "$T/int.jsonl"; }
ok $? "SIGINT (--out): fewer than 8 records, each a whole JSON line"
is "$(state_leftovers "$before")" "" "SIGINT (--out): nothing left behind"

bg_eval "$T/int2.stdout" "$T/int2.stderr" --tasks "$F/tasks_small.jsonl" --solutions "$F/sleep8.jsonl" -j 2
interrupt
LAST_CMD="crucible eval --tasks tasks_small.jsonl --solutions sleep8.jsonl -j 2; SIGINT"
RC=$ST
cp "$T/int2.stdout" "$OUT"
cp "$T/int2.stderr" "$ERR"
[ "$(echo "$SECS < 3" | bc)" = 1 ]
ok $? "SIGINT (no --out): the eval stops within 3 s (took ${SECS} s)"
is "$ST" 130 "SIGINT (no --out): crucible dies by SIGINT (status 130)"
like "$(cat "$T/int2.stderr")" "total +[0-7]"$'\n' "SIGINT (no --out): a partial summary on stderr"
{ [ ! -s "$T/int2.stdout" ] || records "$T/int2.stdout"; }
ok $? "SIGINT (no --out): stdout holds only whole records"
is "$(state_leftovers "$before")" "" "SIGINT (no --out): nothing left behind"

# One solution, one worker: SIGINT while the only verification runs (three times: racy).
sts=
for i in 1 2 3; do
    bg_eval "$T/int3.stdout" "$T/int3.stderr" --tasks "$F/tasks_small.jsonl" --solutions "$F/sleep1.jsonl" -j 1
    interrupt
    sts="$sts$ST "
done
LAST_CMD=
is "$sts" "130 130 130 " "SIGINT during the last running verification: crucible still dies by SIGINT (3 tries)"
is "$(state_leftovers "$before")" "" "nothing left behind after all of it"
