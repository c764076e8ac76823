#!/usr/bin/env bash
# A stdio task from the Code Jam slice (Kattis package format, checker kattis with
# float_tolerance 1e-6): a solution written for this test is accepted on the secret data (the
# grader ignores the sample), a wrong one is a wrong answer with the checker's reason. Needs
# ../shared/datasets (skips without it).
. "$(dirname "$0")/lib.sh"

plan 5
if [ -n "${CRUCIBLE_SKIP_DATASET_TESTS:-}" ]; then
    for i in $(seq 1 5); do skip "Code Jam slice" "CRUCIBLE_SKIP_DATASET_TESTS is set (CI runs them in its plain leg)"; done
    exit 0
fi
CJ=$REPO_ROOT/../shared/datasets/codejam-slice
if [ ! -d "$CJ" ]; then
    for i in $(seq 1 5); do skip "Code Jam slice" "../shared/datasets not found (a user's clone does not have it)"; done
    exit 0
fi

"$CRUCIBLE" tasks convert --from kattis "$CJ" >"$T/cj.jsonl" 2>"$T/cj.err"
is "$(wc -l <"$T/cj.jsonl")" "37" "the slice converts to 37 stdio tasks (2 problem.yaml are not YAML)"

cat >"$T/reversort.py" <<'PYEOF'
import sys

def reversort_cost(values):
    cost = 0
    for i in range(len(values) - 1):
        j = values.index(min(values[i:]), i)
        values[i:j + 1] = values[i:j + 1][::-1]
        cost += j - i + 1
    return cost

data = sys.stdin.read().split()
cases, pos = int(data[0]), 1
for case in range(1, cases + 1):
    n = int(data[pos])
    values = [int(x) for x in data[pos + 1:pos + 1 + n]]
    pos += 1 + n
    print(f"Case #{case}: {reversort_cost(values)}")
PYEOF
sed 's/cost += j - i + 1/cost += j - i/' "$T/reversort.py" >"$T/reversort-wrong.py"

ID=kattis/2021/qualification_round/reversort
cru verify --task "$T/cj.jsonl" --task-id "$ID" --solution "$T/reversort.py"
jcheck 'd["verdict"] == "accepted" and d["passed"] == d["total"] >= 1' \
    "Reversort: our solution is accepted on every secret data file"
is "$RC" "0" "accepted exits 0"
cru verify --task "$T/cj.jsonl" --task-id "$ID" --solution "$T/reversort-wrong.py"
jcheck 'd["verdict"] == "wrong_answer" and d["reward"] == 0 and d["tests"][0]["why"]' \
    "an off-by-one variant is a wrong answer, with the checker's reason"
is "$RC" "1" "a wrong answer exits 1"
