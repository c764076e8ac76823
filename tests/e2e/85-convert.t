#!/usr/bin/env bash
# crucible tasks convert: the real datasets in ../shared/datasets when present (counts,
# every line a valid task, ids unique), and bad input (exit statuses, FILE:LINE errors).
. "$(dirname "$0")/lib.sh"

plan 40
DS=$REPO_ROOT/../shared/datasets

# summary FILE — "tasks=N tests=M langs=L:n,..." when every line is a task with the
# required fields and the ids are unique; otherwise the first problem found.
summary() {
    "$PY" - "$1" <<'EOF'
import json, sys
ids, tests, langs = set(), 0, {}
for n, line in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    try:
        t = json.loads(line)
    except ValueError as e:
        print("line %d: not JSON: %s" % (n, e)); sys.exit(0)
    for k in ("id", "language", "harness"):
        if not isinstance(t.get(k), str) or not t[k]:
            print("line %d: no string %s" % (n, k)); sys.exit(0)
    if t["id"] in ids:
        print("line %d: duplicate id %s" % (n, t["id"])); sys.exit(0)
    ids.add(t["id"])
    ts = t.get("tests")
    if not isinstance(ts, list) or not ts:
        print("line %d: no tests" % n); sys.exit(0)
    want = ("code",) if t["harness"] == "assert" else ("stdin", "expected")
    for x in ts:
        if not isinstance(x.get("name"), str) or any(not isinstance(x.get(k), str) for k in want):
            print("line %d: bad test %r" % (n, x.get("name"))); sys.exit(0)
    for k in ("prompt", "reference", "entry_point", "source"):
        if k in t and not isinstance(t[k], str):
            print("line %d: %s not a string" % (n, k)); sys.exit(0)
    if not isinstance(t.get("tags", []), list):
        print("line %d: tags not a list" % n); sys.exit(0)
    tests += len(ts)
    langs[t["language"]] = langs.get(t["language"], 0) + 1
print("tasks=%d tests=%d langs=%s" % (len(ids), tests,
      ",".join("%s:%d" % kv for kv in sorted(langs.items()))))
EOF
}

# conv OUTFILE ARG... — crucible tasks convert ARG... with stdout to OUTFILE.
conv() {
    local out=$1
    shift
    LAST_CMD="crucible tasks convert $(printf '%q ' "$@")"
    "$CRUCIBLE" tasks convert "$@" >"$out" 2>"$ERR"
    RC=$?
}

# --- the real datasets ---------------------------------------------------------------
if [ ! -f "$DS/humaneval/HumanEval.jsonl.gz" ] || [ ! -f "$DS/mbpp/mbpp.jsonl" ] ||
    [ ! -d "$DS/humaneval-x" ] || [ ! -d "$DS/codejam-slice" ]; then
    skip_n 21 "datasets" "../shared/datasets not found (a user's clone does not have it)"
else
    conv "$T/he.jsonl" --from humaneval "$DS/humaneval/HumanEval.jsonl.gz"
    is "$RC" 0 "humaneval: exit 0"
    is "$(summary "$T/he.jsonl")" "tasks=164 tests=164 langs=python:164" \
        "humaneval: 164 valid tasks, unique ids"
    is "$(wc -c <"$ERR")" 0 "humaneval: nothing on stderr"

    conv "$T/mbpp.jsonl" --from mbpp "$DS/mbpp/mbpp.jsonl"
    is "$RC" 0 "mbpp: exit 0"
    is "$(summary "$T/mbpp.jsonl")" "tasks=974 tests=2922 langs=python:974" \
        "mbpp: 974 valid tasks (3 tests each), unique ids"
    "$PY" - "$T/mbpp.jsonl" >"$T/mbpp-check" <<'EOF'
import json, sys
ts = {t["id"]: t for t in map(json.loads, open(sys.argv[1]))}
a = ts["mbpp/367"]["tests"][0]["code"].startswith("root = Node(1)")
b = ts["mbpp/912"]["entry_point"] == "lobb_num"
c = all(t.get("entry_point") for t in ts.values())
print(a, b, c)
EOF
    is "$(cat "$T/mbpp-check")" "True True True" \
        "mbpp: 367's setup opens its tests' code; 912's entry point is lobb_num; every task has one"

    conv "$T/mbppc.jsonl" --from mbpp --challenge "$DS/mbpp/mbpp.jsonl"
    is "$RC" 0 "mbpp --challenge: exit 0"
    is "$("$PY" -c 'import json, sys; print(sum(any(x["name"].startswith("challenge_") for x in json.loads(l)["tests"]) for l in open(sys.argv[1])))' "$T/mbppc.jsonl")" \
        11 "mbpp --challenge: the 11 tasks with challenge tests get them"

    conv "$T/san.jsonl" --from mbpp-sanitized "$DS/mbpp/sanitized-mbpp.json"
    is "$RC" 0 "mbpp-sanitized: exit 0"
    like "$(summary "$T/san.jsonl")" '^tasks=427 tests=[0-9]+ langs=python:427$' \
        "mbpp-sanitized: 427 valid tasks, unique ids"

    conv "$T/hx.jsonl" --from humaneval-x "$DS/humaneval-x"
    is "$RC" 0 "humaneval-x: exit 0"
    is "$(summary "$T/hx.jsonl")" \
        "tasks=984 tests=984 langs=cpp:164,go:164,java:164,javascript:164,python:164,rust:164" \
        "humaneval-x: 164 valid tasks per language, unique ids"
    "$PY" - "$T/hx.jsonl" >"$T/hx-check" <<'EOF'
import json, sys
ts = [json.loads(l) for l in open(sys.argv[1])]
go = all("test_setup" in t for t in ts if t["language"] == "go")
js = all("needs:console-assert-fails" in t["tags"] for t in ts if t["language"] == "javascript")
rs = all("fn " in t["prompt"] for t in ts if t["language"] == "rust")
print(go, js, rs)
EOF
    is "$(cat "$T/hx-check")" "True True True" \
        "humaneval-x: go keeps test_setup, js carries the console.assert tag, rust prompts end in the signature"

    conv "$T/hxjs.jsonl" --from humaneval-x "$DS/humaneval-x/humaneval_js.jsonl.gz"
    is "$RC" 0 "humaneval-x one file: exit 0"
    is "$(summary "$T/hxjs.jsonl")" "tasks=164 tests=164 langs=javascript:164" \
        "humaneval-x one file: the language from the file name"

    conv "$T/cj.jsonl" --from kattis --no-calibrate "$DS/codejam-slice"
    is "$RC" 1 "kattis: exit 1 (two problem.yaml files are not YAML)"
    is "$(summary "$T/cj.jsonl")" "tasks=37 tests=127 langs=python:37" \
        "kattis: codejam-slice gives 37 tasks with 127 tests (samples ignored, earlier subtasks repeated)"
    like "$(cat "$ERR")" "new_elements_part_1: problem.yaml: line 5, column 19: mapping values are not allowed" \
        "kattis: an unparseable problem.yaml is named with its line"
    "$PY" - "$T/cj.jsonl" >"$T/cj-check" <<'EOF2'
import json, sys
ts = [json.loads(l) for l in open(sys.argv[1])]
a = all(t["checker"] == {"type": "kattis", "flags": "float_tolerance 1e-6"} for t in ts)
b = ts[0]["id"] == "kattis/2019/qualification_round/cryptopangrams"
c = all(t["limits"]["cpu_time"] > 0 and "time-limit:statement" in t["tags"] and "reference" not in t for t in ts)
d = all(t["groups"] and all(x.get("group") for x in t["tests"]) for t in ts)
print(a, b, c, d)
EOF2
    is "$(cat "$T/cj-check")" "True True True True" \
        "kattis: checker kattis with float_tolerance 1e-6, ids by path, time limits from the statements, groups"

    conv "$T/one.jsonl" --from kattis "$DS/codejam-slice/2021/qualification_round/reversort"
    is "$RC/$(summary "$T/one.jsonl")" "0/tasks=1 tests=1 langs=python:1" \
        "kattis: one package directory"
    like "$(cat "$ERR")" "^kattis/reversort: scoring, default validator, 1 test in groups" \
        "kattis: stderr says what was made of the package"
fi

# --- the command line ----------------------------------------------------------------
cru tasks --help
is "$RC" 0 "tasks --help exits 0"
like "$(cat "$OUT")" 'convert' "tasks --help lists convert"
cru tasks convert --help
is "$RC" 0 "tasks convert --help exits 0"
like "$(cat "$OUT")" 'humaneval-x' "tasks convert --help lists the formats"
cru tasks foo
is "$RC" 2 "tasks foo: exit 2"
like "$(cat "$ERR")" "unknown subcommand 'foo'" "tasks foo: unknown subcommand"

cru tasks convert --from nope /dev/null
is "$RC" 2 "unknown format: exit 2"
if one_line "$ERR" && grep -q "unknown format 'nope'" "$ERR"; then ok 0 "unknown format: one-line error naming it"; else ok 1 "unknown format: one-line error naming it"; fi
cru tasks convert --from mbpp
is "$RC" 2 "missing PATH: exit 2"
like "$(cat "$ERR")" 'missing PATH' "missing PATH: says so"
cru tasks convert --from mbpp "$T/no-such-file.jsonl"
is "$RC" 2 "nonexistent PATH: exit 2"
if one_line "$ERR" && grep -qF "$T/no-such-file.jsonl" "$ERR"; then ok 0 "nonexistent PATH: one-line error naming it"; else ok 1 "nonexistent PATH: one-line error naming it"; fi
cru tasks convert "$T/x"
is "$RC" 2 "no --from: exit 2"

# --- bad input records ---------------------------------------------------------------
good='{"task_id": "HumanEval/%d", "prompt": "def f():\\n", "entry_point": "f", "canonical_solution": "    return 1\\n", "test": "def check(c):\\n    assert c() == 1\\n"}'
{
    printf "$good\n" 0
    printf '{"task_id": "HumanEval/1", "prompt": \n'
    printf "$good\n" 2
    printf "$good\n" 0
} >"$T/bad.jsonl"
cru tasks convert --from humaneval "$T/bad.jsonl"
is "$RC" 1 "malformed line: exit 1"
is "$(grep -c '' "$OUT")" 2 "malformed line: the valid lines are still written"
like "$(cat "$ERR")" "bad.jsonl:2: not valid JSON" "malformed line: stderr names FILE:2"
like "$(cat "$ERR")" "bad.jsonl:4: duplicate id 'humaneval/0'" "duplicate id: stderr names FILE:4 and the id"

mkdir -p "$T/kt/p/data/secret"
printf 'name: P\n' >"$T/kt/p/problem.yaml"
printf '\377\376\n' >"$T/kt/p/data/secret/1.in"
printf 'x\n' >"$T/kt/p/data/secret/1.ans"
cru tasks convert --from kattis "$T/kt"
is "$RC/$(wc -c <"$OUT")" "1/0" "kattis non-UTF-8 test file: exit 1, nothing written"
like "$(cat "$ERR")" "1.in: not valid UTF-8; problem 'kattis/p' skipped" \
    "kattis non-UTF-8 test file: stderr names the file and the problem"
