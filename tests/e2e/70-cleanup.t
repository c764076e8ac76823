#!/usr/bin/env bash
# Nothing is left behind on the host: no mounts, no sb-* cgroups under a
# crucible cgroup, no processes of the sandbox's host uid 65534 — after every
# kind of run, failures included, and when the supervisor itself is stopped.
. "$(dirname "$0")/lib.sh"

plan 25

# after_run DESC — the check that follows each run.
after_run() {
    local left
    left=$(state_leftovers "$before")
    is "$left" "" "nothing left behind: $1"
}

before=$(state_snapshot)

runs=(
    "ok|--json -- /bin/echo hi"
    "runtime_error|-- /bin/sh -c 'exit 3'"
    "signaled|-- /bin/sh -c 'kill -SEGV \$\$'"
    "cpu timeout|--cpu-time 0.2 -- /bin/sh -c 'while :; do :; done'"
    "wall timeout with children|--wall-time 0.3 -- /bin/sh -c 'sleep 30 & sleep 30 & sleep 30'"
    "memory_limit|--memory 32 -- /usr/bin/python3 -c 'x = bytearray(200 << 20)'"
    "output_limit|--output 1 -- /bin/sh -c 'yes'"
    "fork bomb under --pids|--pids 16 --wall-time 2 -- /bin/sh -c 'b() { b | b & }; b; sleep 5'"
    "daemon that escapes with setsid and exits|-- /bin/sh -c 'setsid /bin/sh -c \"sleep 60 &\" ; sleep 30 >/dev/null 2>&1 & echo bye'"
    "--network loopback|--network loopback -- /bin/sh -c 'cat /proc/net/dev >/dev/null'"
    "--disk full|--disk 1 -- /bin/sh -c 'cat /dev/zero > /tmp/f 2>/dev/null; exit 0'"
    "nonexistent program|-- /nope"
    "sandbox error (duplicate --file)|--file a=/etc/hostname --file a=/etc/hostname -- /bin/true"
    "bad usage|--memory 0 -- /bin/true"
)
for r in "${runs[@]}"; do
    desc=${r%%|*}
    eval "cru run ${r#*|}"
    after_run "$desc (exit $RC)"
done

# --- the supervisor is stopped mid-run ---------------------------------------------
# wait_started PID — until the run's cgroup exists (the payload is running).
wait_started() {
    local i
    for i in $(seq 50); do
        [ -n "$(_sb_cgroups | grep "/sb-$1-")" ] && return 0
        sleep 0.1
    done
    return 1
}

# clean_after PID — remove what a killed run PID left, so later checks start clean:
# kill its processes (found through its own cgroups), then remove the empty cgroups.
clean_after() {
    local d p i
    for i in 1 2 3 4 5; do
        for d in $(_sb_cgroups | grep "/sb-$1-"); do
            for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
            rmdir "$d" 2>/dev/null
        done
        [ -z "$(_sb_cgroups | grep "/sb-$1-")" ] && return 0
        sleep 0.2
    done
}

# start_bg — crucible run --wall-time 30 -- /bin/sleep 30 in the background, in
# its own session, with SIGINT back to default (a background job ignores it);
# sets pid to crucible's own pid.
start_bg() {
    rm -f "$T/bgpid"
    setsid -w "$PY" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
os.execv(sys.argv[2], sys.argv[2:])' "$T/bgpid" "$CRUCIBLE" run --wall-time 30 -- /bin/sleep 30 \
        </dev/null >/dev/null 2>&1 &
    bg=$!
    for _ in $(seq 50); do [ -s "$T/bgpid" ] && break; sleep 0.05; done
    pid=$(cat "$T/bgpid" 2>/dev/null || echo "$bg")
    track_pid "$pid"
}

if ! enforced cgroup; then
    skip_n 11 "supervisor stopped mid-run" "no crucible cgroup here to see the run by (see run --check)"
    exit 0
fi

for sig in TERM HUP INT; do
    start_bg
    if ! wait_started "$pid"; then
        ok 1 "SIG$sig to crucible: the run started" || true
        kill -KILL "$pid" 2>/dev/null
        wait "$bg" 2>/dev/null
        continue
    fi
    ok 0 "SIG$sig to crucible: the run started"
    t0=$(date +%s%N)
    # (stderr of the group: bash's own "Hangup ..." job notice)
    { kill -"$sig" "$pid"; wait "$bg"; } 2>/dev/null
    RC=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    LAST_CMD="crucible run --wall-time 30 -- /bin/sleep 30, then SIG$sig"
    : >"$OUT"
    : >"$ERR"
    [ "$ms" -lt 5000 ]
    ok $? "SIG$sig to crucible: it ends promptly (exit $RC after $ms ms)"
    left=$(state_leftovers "$before")
    is "$left" "" "SIG$sig to crucible mid-run: nothing left behind"
    clean_after "$pid"
done

# SIGKILL cannot be cleaned up after, but the payload must not outlive its supervisor.
start_bg
if wait_started "$pid"; then
    { kill -KILL "$pid"; wait "$bg"; } 2>/dev/null
    if is_root; then
        left=$(state_leftovers "$before" | grep '^proc ')
        is "$left" "" "SIGKILL to crucible mid-run: no sandbox process survives"
    else
        skip "SIGKILL to crucible: no process survives" "not root: cannot tell uid 65534's processes"
    fi
else
    ok 1 "SIGKILL to crucible: the run started" || true
    kill -KILL "$pid" 2>/dev/null
fi
clean_after "$pid"

if is_root; then
    is "$(state_leftovers "$before")" "" "after all of it (with the killed runs' cgroups removed by the test) the host is clean"
else
    skip "the host is clean at the end" "not root"
fi
