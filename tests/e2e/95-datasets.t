#!/usr/bin/env bash
# The public datasets end to end: every HumanEval and MBPP reference accepted, a stub
# rejected on every HumanEval task (MBPP's are in 98-library.t), through `crucible tasks convert` and `crucible eval` with the
# default limits and -j. Needs ../shared/datasets (CI and the workspace have it; a user's
# clone does not, and the tests say so and skip).
. "$(dirname "$0")/lib.sh"

plan 9
if [ -n "${CRUCIBLE_SKIP_DATASET_TESTS:-}" ]; then
    for i in $(seq 1 9); do skip "public datasets" "CRUCIBLE_SKIP_DATASET_TESTS is set (CI runs them in its plain leg)"; done
    exit 0
fi
DS=$REPO_ROOT/../shared/datasets
if [ ! -d "$DS/humaneval" ] || [ ! -f "$DS/mbpp/mbpp.jsonl" ]; then
    for i in $(seq 1 9); do skip "public datasets" "../shared/datasets not found (a user's clone does not have it)"; done
    exit 0
fi

# count VERDICT FILE — records whose (task-level) verdict is VERDICT
count() { "$PY" -c 'import json, sys; print(sum(json.loads(l)["verdict"] == sys.argv[1] for l in open(sys.argv[2])))' "$1" "$2"; }

"$CRUCIBLE" tasks convert --from humaneval "$DS/humaneval/HumanEval.jsonl.gz" >"$T/he.jsonl"
is "$(wc -l <"$T/he.jsonl")" "164" "HumanEval: 164 tasks converted"
"$CRUCIBLE" eval --tasks "$T/he.jsonl" --reference --quiet --out "$T/he-ref.jsonl" >/dev/null 2>"$T/err"
is "$(count accepted "$T/he-ref.jsonl")" "164" "HumanEval: all 164 references accepted"

"$PY" - "$T/he.jsonl" >"$T/he-stub.jsonl" <<'PYEOF'
import json, sys
for line in open(sys.argv[1]):
    t = json.loads(line)
    print(json.dumps({"task_id": t["id"], "completion": "    return None\n"}))
PYEOF
"$CRUCIBLE" eval --tasks "$T/he.jsonl" --solutions "$T/he-stub.jsonl" --quiet --out "$T/he-stub-res.jsonl" >/dev/null 2>&1
is "$(count accepted "$T/he-stub-res.jsonl")" "0" "HumanEval: a 'return None' body rejected on all 164"
is "$(wc -l <"$T/he-stub-res.jsonl")" "164" "HumanEval: one record per stub"

"$CRUCIBLE" tasks convert --from mbpp "$DS/mbpp/mbpp.jsonl" >"$T/mbpp.jsonl"
is "$(wc -l <"$T/mbpp.jsonl")" "974" "MBPP: 974 tasks converted"
"$CRUCIBLE" eval --tasks "$T/mbpp.jsonl" --reference --quiet --out "$T/mbpp-ref.jsonl" >/dev/null 2>&1
is "$(count accepted "$T/mbpp-ref.jsonl")" "974" "MBPP: all 974 references accepted (the slow task 123 included)"
verdict_of() { "$PY" -c 'import json, sys; print(" ".join(json.loads(l)["verdict"] for l in open(sys.argv[2]) if json.loads(l)["task_id"] in sys.argv[1].split()))' "$1" "$2"; }
is "$(verdict_of mbpp/123 "$T/mbpp-ref.jsonl")" "accepted" "MBPP 123 accepted under the default limits"
is "$(verdict_of "mbpp/367 mbpp/927" "$T/mbpp-ref.jsonl")" "accepted accepted" "MBPP 367 and 927 (setup after the solution) accepted"

# MBPP's stubs (the reference with its entry point rebound to return None) are 98-library.t's:
# `tasks validate` runs them on all 974 beside two repeats of each reference.
is "$(count infra_error "$T/mbpp-ref.jsonl")" "0" "no infra_error anywhere in the MBPP run"
