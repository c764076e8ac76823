#!/usr/bin/env bash
# The command harness end to end with a real test framework: pytest writes the JUnit XML
# report, crucible grades its cases (all of them, or SWE-bench style fail_to_pass /
# pass_to_pass node ids), and solutions that break the tests, tamper with the test files
# or hang are rejected. Skips when the image's python3 has no pytest (scripts/install-deps
# installs python3-pytest).
. "$(dirname "$0")/lib.sh"

plan 14
if ! /usr/bin/python3 -c 'import pytest' 2>/dev/null; then
    skip_n 14 "command harness with pytest" "/usr/bin/python3 has no pytest (apt install python3-pytest)"
    exit 0
fi

F=$T/f
mkdir -p "$F"
"$PY" - "$F" <<'PYEOF'
import json, os, sys
F = sys.argv[1]

def w(name, text):
    with open(os.path.join(F, name), "w", encoding="utf-8") as f:
        f.write(text)

tests = '''import pytest
from interval import merge

def test_disjoint():
    assert merge([(1, 2), (4, 5)]) == [(1, 2), (4, 5)]

def test_overlap():
    assert merge([(1, 3), (2, 6)]) == [(1, 6)]

@pytest.mark.parametrize("xs", [[], [(0, 0)]])
def test_trivial(xs):
    assert merge(xs) == xs

class TestOrder:
    def test_unsorted(self):
        assert merge([(5, 6), (1, 2)]) == [(1, 2), (5, 6)]

    def test_touching(self):
        assert merge([(1, 2), (2, 3)]) == [(1, 3)]
'''
good = '''def merge(xs):
    out = []
    for a, b in sorted(xs):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out
'''
# Merges overlaps but forgets to sort: test_unsorted fails.
unsorted = good.replace("sorted(xs)", "xs")
base = {"language": "python", "harness": "command", "solution_file": "interval.py",
        "files": {"tests/test_interval.py": tests},
        "command": ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "--junitxml=report.xml", "tests"],
        "limits": {"cpu_time": 5, "wall_time": 30}, "reference": good}
with open(os.path.join(F, "tasks.jsonl"), "w") as f:
    f.write(json.dumps(dict(base, id="cmd/merge")) + "\n")
    f.write(json.dumps(dict(base, id="cmd/merge-swe",
        fail_to_pass=["tests/test_interval.py::TestOrder::test_unsorted"],
        pass_to_pass=["tests/test_interval.py::test_overlap",
                      "tests/test_interval.py::test_trivial[xs1]"])) + "\n")
w("good.py", good)
w("unsorted.py", unsorted)
w("tamper.py", "open('tests/test_interval.py', 'w').write('def test_ok(): pass\\n')\n" + good)
w("rewrite.py", "import os\nos.unlink('tests/test_interval.py')\n" + good)
w("hang.py", "while True:\n    pass\n")
with open(os.path.join(F, "sols.jsonl"), "w") as f:
    for tid in ("cmd/merge", "cmd/merge-swe"):
        f.write(json.dumps({"task_id": tid, "solution": unsorted}) + "\n")
PYEOF

v() { cru verify --task "$F/tasks.jsonl" --task-id "$1" --solution "$F/$2" "${@:3}"; }

v cmd/merge good.py
jcheck 'd["verdict"] == "accepted" and d["passed"] == d["total"] == 6' \
    "pytest: a correct solution passes all 6 cases of the report"
jcheck '[t["name"] for t in d["tests"]][:3] == ["tests.test_interval.test_disjoint", "tests.test_interval.test_overlap", "tests.test_interval.test_trivial[xs0]"]' \
    "the tests are the report's cases, named classname.name, in order"
jcheck 'd["test_command"]["exit_code"] == 0 and "6 passed" in d["test_command"]["stdout"]' \
    "the record carries the test command's result"

v cmd/merge unsorted.py --reward fraction
jcheck 'd["verdict"] == "wrong_answer" and d["passed"] == 5 and abs(d["reward"] - 5/6) < 1e-6' \
    "one failing case: wrong answer, fraction reward 5/6"
jcheck '[t["name"] for t in d["tests"] if t["verdict"] != "accepted"] == ["tests.test_interval.TestOrder.test_unsorted"]' \
    "the failing case is named"
is "$RC" 1 "a rejected solution exits 1"

v cmd/merge-swe good.py
jcheck 'd["verdict"] == "accepted" and d["total"] == 3 and [t["group"] for t in d["tests"]] == ["fail_to_pass", "pass_to_pass", "pass_to_pass"]' \
    "SWE-bench style: pytest node ids graded, each test with its group"
v cmd/merge-swe unsorted.py
jcheck 'd["verdict"] == "wrong_answer" and d["passed"] == 2 and d["tests"][0]["verdict"] == "wrong_answer"' \
    "a fail_to_pass test that still fails: wrong answer"

v cmd/merge tamper.py
jcheck 'd["verdict"] != "accepted" and "Read-only file system" in d["test_command"]["stdout"]' \
    "the task's test files are read-only to the solution (a read-only mount: EROFS)"
v cmd/merge rewrite.py
jcheck 'd["verdict"] != "accepted"' \
    "deleting the tests leaves no passing report"
v cmd/merge hang.py
jcheck 'd["verdict"] == "timeout" and d["reward"] == 0' "a hanging solution times out"
is "$RC" 1 "...and is rejected (exit 1), not an infrastructure error"

cru eval --tasks "$F/tasks.jsonl" --reference --quiet --out "$T/ref.jsonl"
is "$("$PY" -c 'import json,sys; print(" ".join(json.loads(l)["verdict"] for l in open(sys.argv[1])))' "$T/ref.jsonl")" \
    "accepted accepted" "eval --reference: both command tasks accepted"
cru eval --tasks "$F/tasks.jsonl" --solutions "$F/sols.jsonl" --quiet --out "$T/sol.jsonl"
is "$("$PY" -c 'import json,sys; print(" ".join(json.loads(l)["verdict"] for l in open(sys.argv[1])))' "$T/sol.jsonl")" \
    "wrong_answer wrong_answer" "eval --solutions: the unsorted solution rejected on both"
