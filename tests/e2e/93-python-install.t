#!/usr/bin/env bash
# Installing the Python client (clients/python) with no package index: `pip install
# --no-index ./clients/python` in a fresh venv with build isolation on (pip's default), a
# wheel built by `pip wheel --no-index` and installed into another fresh venv, an editable
# install and an install from the sdist. Each installed copy is then imported from outside
# the source tree and used against a real `crucible serve`: a run, and a verification
# through verl's `pkg://crucible_client.rewards` path. Skips when /usr/bin/python3 cannot
# make a venv with pip (apt install python3-venv).
. "$(dirname "$0")/lib.sh"

plan 12
if ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
    skip_n 12 "python client install" "$PY cannot make a venv with pip (apt install python3-venv)"
    exit 0
fi

# pip must not find anything but what it is given: no index, no config, no find-links,
# no build isolation switched off from the environment.
unset PIP_NO_BUILD_ISOLATION PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PYTHONPATH
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
export PIP_NO_INPUT=1

# A copy of the client, so the builds cannot write into the repository.
mkdir -p "$T/w/clients"
cp -R "$REPO_ROOT/clients/python" "$T/w/clients/python"
find "$T/w/clients/python" -name __pycache__ -prune -exec rm -rf {} +

# run_in DESC CMD... — run in $T/w (so ./clients/python resolves); output in $OUT/$ERR.
run_in() {
    LAST_CMD="$*"
    (cd "$T/w" && timeout -k 10 300 "$@") >"$OUT" 2>"$ERR"
    RC=$?
}

# The check an installed copy must pass: import it from outside the source tree (the file
# must come from the venv, or from SRC for an editable install), start crucible serve and
# run and verify through it, loading the reward function the way verl resolves
# `pkg://crucible_client.rewards` (verl/utils/import_utils.py, load_module).
cat >"$T/check.py" <<'EOF'
import importlib, os, sys
want_under = sys.argv[1]
sys.path.insert(0, os.environ["E2E_DIR"])
from serverlib import Server
import crucible_client
from crucible_client import Client
where = os.path.realpath(crucible_client.__file__)
assert where.startswith(os.path.realpath(want_under)), "imported from %s, not under %s" % (where, want_under)
srv = Server("--slots", "1", tmp=os.environ["T"], quiet=False)
try:
    c = Client("http://127.0.0.1:%d" % srv.port, timeout=120)
    c.wait_ready(30)
    r = c.run(code="print(6 * 7)", language="python")
    assert r["stdout"] == "42\n", r
    path = "pkg://crucible_client.rewards"
    mod = importlib.import_module(path[len("pkg://"):].replace("/", "."))
    gt = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
    good = "```python\na, b = map(int, input().split())\nprint(a + b)\n```\n"
    score = mod.compute_score("codecontests", good, gt, {}, client=c)
    assert score == 1.0, score
    print("ok", crucible_client.__version__, where)
finally:
    srv.stop()
EOF
export T E2E_DIR

# venv NAME — a fresh venv at $T/NAME (no system site packages).
venv() {
    run_in "$PY" -m venv "$T/$1"
    [ "$RC" -eq 0 ] || diag "$(tail -n 20 "$ERR")"
}

serve_ok=1
"$CRUCIBLE" serve --help >/dev/null 2>&1 || serve_ok=0

# check NAME UNDER DESC — the import-and-use check with venv NAME's python.
check_venv() {
    if [ "$serve_ok" -eq 0 ]; then
        skip "$3" "$CRUCIBLE has no 'serve' command"
        return
    fi
    run_in "$T/$1/bin/python" "$T/check.py" "$2"
    is "$RC" 0 "$3 ($(tail -n 1 "$OUT"))" || diag "$(tail -n 30 "$ERR")"
}

# 1. pip install --no-index ./clients/python, build isolation on.
venv v1
run_in "$T/v1/bin/python" -m pip install --no-index ./clients/python
is "$RC" 0 "pip install --no-index ./clients/python in a fresh venv" || diag "$(tail -n 30 "$ERR")"
like "$(cat "$OUT")" "Successfully installed crucible-client-" "pip says it installed crucible-client"
check_venv v1 "$T/v1/lib" "the installed client imports from the venv and works against crucible serve"

# 2. pip wheel --no-index, then that wheel into another fresh venv.
run_in "$T/v1/bin/python" -m pip wheel --no-index -w "$T/wheels" ./clients/python
is "$RC" 0 "pip wheel --no-index ./clients/python" || diag "$(tail -n 30 "$ERR")"
wheel=$(ls "$T"/wheels/crucible_client-*-py3-none-any.whl 2>/dev/null | head -n 1)
ok "$([ -n "$wheel" ] && echo 0 || echo 1)" "the wheel is pure Python: ${wheel##*/}"
venv v2
run_in "$T/v2/bin/python" -m pip install --no-index "${wheel:-$T/wheels/missing.whl}"
is "$RC" 0 "pip install --no-index of the built wheel in a fresh venv" || diag "$(tail -n 30 "$ERR")"
check_venv v2 "$T/v2/lib" "the wheel's client works against crucible serve"

# 3. An editable install: imports from the source copy.
venv v3
run_in "$T/v3/bin/python" -m pip install --no-index -e ./clients/python
is "$RC" 0 "pip install --no-index -e ./clients/python (editable)" || diag "$(tail -n 30 "$ERR")"
check_venv v3 "$T/w/clients/python" "the editable install imports from the source tree and works"

# 4. The sdist from the backend's build_sdist hook, installed with --no-index.
run_in "$T/v3/bin/python" -c 'import os, sys
os.chdir(sys.argv[2])
sys.path.insert(0, os.path.join(sys.argv[2], "_build"))
import crucible_build
print(crucible_build.build_sdist(sys.argv[1]))' "$T/sdist" "$T/w/clients/python"
is "$RC" 0 "the backend builds an sdist ($(cat "$OUT"))" || diag "$(tail -n 30 "$ERR")"
sdist=$T/sdist/$(cat "$OUT")
venv v4
run_in "$T/v4/bin/python" -m pip install --no-index "$sdist"
is "$RC" 0 "pip install --no-index of the sdist in a fresh venv" || diag "$(tail -n 30 "$ERR")"
check_venv v4 "$T/v4/lib" "the sdist's client works against crucible serve"
