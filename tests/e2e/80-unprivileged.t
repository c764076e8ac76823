#!/usr/bin/env bash
# crucible run as an ordinary user: user namespaces only, no cgroup it may write, so the
# rlimit fallbacks must hold the limits and --check must say so. Run as uid 65534 with
# setpriv (no user account is created).
. "$(dirname "$0")/lib.sh"

plan 9

if ! is_root || ! command -v setpriv >/dev/null; then
    for i in $(seq 1 9); do skip "unprivileged mode" "needs root and setpriv to drop to uid 65534"; done
    exit 0
fi

nobody() {
    LAST_CMD="(uid 65534) crucible $(printf '%q ' "$@")"
    timeout -k 5 60 setpriv --reuid=65534 --regid=65534 --clear-groups "$CRUCIBLE" "$@" \
        </dev/null >"$OUT" 2>"$ERR"
    RC=$?
}

nobody run --check
like "$(cat "$OUT")" "unprivileged" "--check says it runs unprivileged"
like "$(cat "$OUT")" "RLIMIT_AS fallback" "--check names the memory fallback"

nobody run --json -- /bin/sh -c 'id -u; grep CapEff /proc/self/status'
jcheck 'd["status"] == "ok" and d["stdout"].startswith("1000\nCapEff:\t0000000000000000")' \
    "echo works as uid 1000 inside, without capabilities"

nobody run --json --cpu-time 1 --wall-time 10 -- /bin/sh -c 'while :; do :; done'
jcheck 'd["status"] == "timeout" and d["limit"] == "cpu" and d["wall_time"] < 4' \
    "CPU limit enforced by RLIMIT_CPU"

nobody run --json --wall-time 1 -- /bin/sleep 20
jcheck 'd["status"] == "timeout" and d["limit"] == "wall"' "wall limit enforced"

nobody run --json --memory 64 -- /usr/bin/python3 -c 'x = bytearray(512 << 20); print("allocated")'
jcheck 'd["status"] != "ok" and "allocated" not in d["stdout"]' \
    "memory limit enforced per process (RLIMIT_AS)"

nobody run --json --pids 4 -- /usr/bin/python3 -c '
import os, time
n = 0
for i in range(40):
    try:
        if os.fork() == 0:
            time.sleep(2); os._exit(0)
        n += 1
    except OSError:
        break
print(n)' unpriv-marker-$$
jcheck 'd["status"] == "ok" and int(d["stdout"]) < 40' "process count bounded by RLIMIT_NPROC"

nobody run --json -- /bin/sh -c 'cat /etc/shadow; ls /root; echo x > /usr/x'
jcheck 'd["status"] == "runtime_error" and "x" not in d["stdout"]' "host files stay out of reach"

sleep 0.2
left=$(pgrep -f "unpriv-marker-$$" | wc -l)
is "$left" "0" "the forked children did not outlive the run"
