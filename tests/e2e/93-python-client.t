#!/usr/bin/env bash
# The Python client (clients/python) with its pytest suite: the offline tests (request
# shapes, 429 retries, batch streaming against a scripted server, the reward adapters'
# helpers), then the tests against a real 'crucible serve' that the suite starts itself
# ($CRUCIBLE): the client's, and the reward adapters called as current verl and TRL call
# them (test_trainers.py). Skips when /usr/bin/python3 has no pytest (apt install
# python3-pytest) or the binary has no 'serve' command. Nothing is installed: PYTHONPATH points at the sources.
. "$(dirname "$0")/lib.sh"

plan 3
if ! /usr/bin/python3 -c 'import pytest' 2>/dev/null; then
    skip_n 3 "python client tests" "/usr/bin/python3 has no pytest (apt install python3-pytest)"
    exit 0
fi

# pyt NAME — run clients/python/tests/NAME; its output in $OUT, status in $RC.
pyt() {
    LAST_CMD="python3 -m pytest -q clients/python/tests/$1"
    (cd "$REPO_ROOT" &&
        PYTHONPATH=$REPO_ROOT/clients/python PYTHONDONTWRITEBYTECODE=1 CRUCIBLE=$CRUCIBLE \
            timeout -k 10 900 /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider \
            "clients/python/tests/$1") >"$OUT" 2>"$ERR"
    RC=$?
}

pyt test_offline.py
is "$RC" 0 "python client: offline tests ($(tail -n 1 "$OUT"))" || diag "$(tail -n 60 "$OUT")"

if ! "$CRUCIBLE" serve --help >/dev/null 2>&1; then
    skip_n 2 "python client against crucible serve" "$CRUCIBLE has no 'serve' command"
    exit 0
fi
# served NAME DESC — run NAME against crucible serve: everything passes, nothing skips.
served() {
    pyt "$1"
    if [ "$RC" -eq 0 ] && grep -q ' passed' "$OUT" && ! grep -q ' skipped' "$OUT"; then
        ok 0 "$2 ($(tail -n 1 "$OUT"))"
    else
        ok 1 "$2 ($(tail -n 1 "$OUT"))" || true
        diag "$(tail -n 80 "$OUT")"
    fi
}
served test_client.py "python client against crucible serve"
served test_trainers.py "reward adapters in verl's and TRL's call shapes against crucible serve"
