# tests/e2e/lib.sh — a tiny TAP helper for crucible's end-to-end tests.
#
# Sourced by every tests/e2e/NN-name.t (bash). Run from the repo root by prove
# (`make check` exports CRUCIBLE, the absolute path of the binary under test;
# without it, build/crucible of this checkout is used).
#
#   plan N                       print the TAP plan
#   ok COND_STATUS DESC          (use as: [ test ]; ok $? "desc")
#   check DESC CMD [ARG...]      ok when CMD exits 0
#   is GOT WANT DESC             string equality
#   like GOT ERE DESC            extended-regex match
#   unlike GOT ERE DESC          no match
#   skip DESC REASON             ok N # SKIP;  skip_n N DESC REASON: N of them
#   enforced KIND                cgroup-backed limit? (memory cpu pids cgroup)
#   cru [ARG...]                 run crucible: stdout in $OUT, stderr in $ERR, status in $RC
#                                (its pid joins MY_PIDS; track_pid PID adds others)
#   jf KEY / jj KEY              field of the JSON in $OUT: raw text / JSON-encoded
#   jcheck PYEXPR DESC           ok when the Python expression (d = record) is true
#   state_snapshot / state_leftovers SNAP
#                                mounts, sb-* cgroups, sandbox-uid processes: what is new
#                                and ours (cgroup sb-PID-N of a pid in MY_PIDS)

set -u

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$E2E_DIR/../.." && pwd)
: "${CRUCIBLE:=$REPO_ROOT/build/crucible}"
case $CRUCIBLE in /*) ;; *) CRUCIBLE=$REPO_ROOT/$CRUCIBLE ;; esac
export CRUCIBLE
# Runs are cold unless a test asks for a keeper (95-keep.t): a keeper left running on this
# machine at the default path must not change what the other tests see.
: "${CRUCIBLE_KEEP:=off}"
export CRUCIBLE_KEEP

if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi

T=$(mktemp -d "${TMPDIR:-/tmp}/crucible-e2e.XXXXXX")
# (files reach the sandbox through --file/--stdin, which crucible opens itself)
OUT=$T/out
ERR=$T/err
RC=0
LAST_CMD=
_tap_n=0
_tap_planned=0
_tap_failed=0

_tap_end() {
    rm -rf "$T"
    if [ "$_tap_planned" -ne "$_tap_n" ]; then
        echo "# planned $_tap_planned tests but ran $_tap_n"
        exit 255
    fi
    # like Test::More: the exit status is the number of failures
    [ "$_tap_failed" -gt 0 ] && exit $((_tap_failed > 254 ? 254 : _tap_failed))
    exit 0
}
trap _tap_end EXIT

plan() {
    _tap_planned=$1
    echo "1..$1"
}

diag() {
    local line
    while IFS= read -r line; do echo "# $line"; done <<<"$*"
}

# _tap_last_run — what the last cru call did, for diagnostics.
_tap_last_run() {
    [ -n "$LAST_CMD" ] || return 0
    diag "command: $LAST_CMD"
    diag "exit status: $RC"
    diag "stdout: $(head -c 1500 "$OUT" 2>/dev/null)"
    diag "stderr: $(head -c 1500 "$ERR" 2>/dev/null)"
}

ok() {
    local st=$1 desc=$2
    _tap_n=$((_tap_n + 1))
    if [ "$st" -eq 0 ]; then
        echo "ok $_tap_n - $desc"
    else
        echo "not ok $_tap_n - $desc"
        _tap_failed=$((_tap_failed + 1))
        _tap_last_run
    fi
    return "$st"
}

check() {
    local desc=$1
    shift
    "$@"
    ok $? "$desc"
}

is() {
    if [ "$1" == "$2" ]; then
        ok 0 "$3"
    else
        ok 1 "$3" || true
        diag "got:  '$1'"
        diag "want: '$2'"
        return 1
    fi
}

like() {
    if [[ $1 =~ $2 ]]; then
        ok 0 "$3"
    else
        ok 1 "$3" || true
        diag "got:  '$1'"
        diag "want match: /$2/"
        return 1
    fi
}

unlike() {
    if [[ $1 =~ $2 ]]; then
        ok 1 "$3" || true
        diag "got:  '$1'"
        diag "want no match: /$2/"
        return 1
    fi
    ok 0 "$3"
}

skip() {
    _tap_n=$((_tap_n + 1))
    echo "ok $_tap_n # SKIP $2 ($1)"
}

# Supervisor pids of this script's runs: the sb-PID-N cgroups they name are ours,
# anything else under a crucible cgroup may be a concurrent run's.
MY_PIDS=()
track_pid() { MY_PIDS+=("$1"); }

# cru ARG... — run crucible with stdin from /dev/null and a hard time bound;
# the pid is learned by exec'ing crucible from a shell that wrote its own pid.
cru() {
    LAST_CMD="crucible $(printf '%q ' "$@")"
    rm -f "$T/pid"
    timeout -k 5 120 bash -c 'echo $$ >"$0"; exec "$@"' "$T/pid" "$CRUCIBLE" "$@" \
        </dev/null >"$OUT" 2>"$ERR"
    RC=$?
    [ -s "$T/pid" ] && track_pid "$(cat "$T/pid")"
    return 0
}

# jf KEY — the field as text (strings raw, other values JSON); <missing> / <no-json>.
jf() {
    "$PY" - "$OUT" "$1" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1], encoding="utf-8"))
except Exception:
    sys.stdout.write("<no-json>"); sys.exit(0)
k = sys.argv[2]
if k not in d:
    sys.stdout.write("<missing>")
elif isinstance(d[k], str):
    sys.stdout.write(d[k])
else:
    sys.stdout.write(json.dumps(d[k]))
EOF
}

# jj KEY — the field JSON-encoded (so trailing newlines survive $(...)).
jj() {
    "$PY" - "$OUT" "$1" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1], encoding="utf-8"))
except Exception:
    sys.stdout.write("<no-json>"); sys.exit(0)
sys.stdout.write(json.dumps(d[sys.argv[2]]) if sys.argv[2] in d else "<missing>")
EOF
}

# jcheck PYEXPR DESC — evaluate PYEXPR with d bound to the JSON record in $OUT.
jcheck() {
    "$PY" - "$OUT" "$1" <<'EOF'
import base64, json, sys
try:
    d = json.load(open(sys.argv[1], encoding="utf-8"))
except Exception as e:
    print("# no JSON record: %s" % e); sys.exit(1)
try:
    sys.exit(0 if eval("(" + sys.argv[2] + "\n)") else 1)
except Exception as e:
    print("# %s: %r" % (sys.argv[2], e)); sys.exit(1)
EOF
    ok $? "$2"
}

# one_line FILE — true when FILE holds exactly one non-empty line.
one_line() {
    [ "$(wc -l <"$1")" -le 1 ] && [ -n "$(tr -d '\n' <"$1")" ] &&
        [ "$(grep -c '' "$1")" -eq 1 ]
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# enforced KIND — does this host let crucible enforce KIND over the whole
# process tree (cgroups)? KIND: memory, pids, cpu, cgroup. From 'run --check';
# without root crucible falls back to per-process rlimits, and the checks that
# need the cgroup behaviour are skipped.
_check_out=
enforced() {
    [ -n "$_check_out" ] || _check_out=$("$CRUCIBLE" run --check 2>&1)
    case $1 in
    memory) grep -q '^memory:.*whole process tree' <<<"$_check_out" ;;
    cpu) grep -q '^cpu time:.*whole process tree' <<<"$_check_out" ;;
    pids) grep -q '^pids:.*cgroup' <<<"$_check_out" ;;
    cgroup) grep -q '^cgroup:' <<<"$_check_out" ;;
    *) return 1 ;;
    esac
}

# skip_n N DESC REASON — N skipped tests.
skip_n() {
    local i
    for ((i = 0; i < $1; i++)); do skip "$2" "$3"; done
}

# --- what a run may leave behind on the host ---------------------------------
# Mounts are counted in this (the host's) mount namespace. Cgroups and
# processes are attributed to a run by the sb-PID-N cgroup its supervisor PID
# creates, so concurrent runs of other suites on this machine don't count.

_sb_cgroups() {
    find /sys/fs/cgroup -maxdepth 8 -type d -path '*crucible*' -name 'sb-*' 2>/dev/null | sort
}

# _nobody_procs — "PID CGROUP-NAME" for processes of the sandboxes' host uids (as root:
# 0x40000000 + the pid of the sandbox's init).
_nobody_procs() {
    local p
    is_root || return 0
    for p in $(ps -e -o uid=,pid= 2>/dev/null | awk '$1 >= 1073741824 && $1 < 1077936128 { print $2 }'); do
        echo "$p $(grep -o 'sb-[0-9]*-[0-9]*' "/proc/$p/cgroup" 2>/dev/null | head -n 1)"
    done | sort
}

# state_snapshot — the host's state: "mounts N", "cgroup PATH", "proc PID SB".
state_snapshot() {
    echo "mounts $(grep -c '' /proc/self/mountinfo)"
    _sb_cgroups | sed 's/^/cgroup /'
    _nobody_procs | sed 's/^/proc /'
}

# _mine — keep the lines that belong to this script's runs (and mount counts).
_mine() {
    local re="sb-(${MY_PIDS[*]:-none})-[0-9]+"
    re=${re// /|}
    grep -E "^mounts |$re" || true
}

# state_leftovers SNAP — what of ours is new since SNAP (empty when nothing).
# Things that vanish within ~2 s (a zombie being reaped) don't count.
state_leftovers() {
    local before=$1 now new i
    for i in 1 2 3 4 5 6 7 8 9 10; do
        now=$(state_snapshot)
        new=$(comm -13 <(printf '%s\n' "$before" | sort) <(printf '%s\n' "$now" | sort) |
            sed '/^$/d' | _mine)
        [ -z "$new" ] && return 0
        sleep 0.2
    done
    printf '%s\n' "$new"
}
