#!/usr/bin/env bash
# Every result status, its exit code, its JSON record and its plain verdict line.
. "$(dirname "$0")/lib.sh"

plan 47


# verdict STATUS — without --json, stderr's last line is the one verdict line.
verdict_is() {
    local status=$1 desc=$2 last
    last=$(tail -n 1 "$ERR")
    like "$last" "^crucible: $status" "$desc"
}

# --- ok ----------------------------------------------------------------------
cru run --json -- /bin/true
is "$RC" 0 "ok: exit 0"
jcheck 'd["status"] == "ok" and d["exit_code"] == 0 and d["message"] == ""' "ok: status ok, exit_code 0"

# --- runtime_error keeps the exit code ----------------------------------------
cru run --json -- /bin/sh -c 'echo partial; echo oops >&2; exit 3'
is "$RC" 1 "runtime_error: exit 1"
jcheck 'd["status"] == "runtime_error" and d["exit_code"] == 3 and d["signal"] is None
        and d["limit"] is None' "runtime_error: exit_code 3 kept, no signal, no limit"
jcheck 'd["stdout"] == "partial\n" and d["stderr"] == "oops\n"' "runtime_error: the output is kept"
cru run --json -- /bin/sh -c 'exit 255'
jcheck 'd["status"] == "runtime_error" and d["exit_code"] == 255' "runtime_error: exit_code 255 kept"
cru run -- /bin/sh -c 'exit 3'
is "$RC" 1 "runtime_error without --json: exit 1"
verdict_is runtime_error "runtime_error without --json: verdict line"
is "$(grep -c '' "$ERR")" 1 "runtime_error without --json: exactly one line on stderr"

# --- signaled --------------------------------------------------------------------
cru run --json -- /bin/sh -c 'kill -SEGV $$'
is "$RC" 1 "signaled: exit 1"
jcheck 'd["status"] == "signaled" and d["signal"] == 11 and d["exit_code"] is None' \
    "signaled: signal 11, exit_code null"
cru run --json -- /usr/bin/python3 -c 'import os; os.abort()'
jcheck 'd["status"] == "signaled" and d["signal"] == 6' "signaled: abort() gives signal 6"
cru run -- /bin/sh -c 'kill -KILL $$'
is "$RC" 1 "signaled without --json: exit 1"
verdict_is signaled "signaled without --json: verdict line"
like "$(tail -n 1 "$ERR")" '9' "signaled without --json: the verdict names the signal number"

# --- timeout: cpu -----------------------------------------------------------------
cru run --json --cpu-time 0.3 --wall-time 10 -- /bin/sh -c 'while :; do :; done'
is "$RC" 1 "timeout cpu: exit 1"
jcheck 'd["status"] == "timeout" and d["limit"] == "cpu"' 'timeout cpu: status timeout, limit "cpu"'
jcheck '0.25 <= d["cpu_time"] <= 1.5 and d["wall_time"] < 5' \
    "timeout cpu: fractional --cpu-time 0.3 honoured (cpu_time ~0.3 s)"
jcheck 'd["message"] != "" and "\n" not in d["message"]' "timeout cpu: a one-line message"

# CPU time counts the whole process tree: two spinning children.
if enforced cpu; then
    cru run --json --cpu-time 0.4 --wall-time 10 -- /bin/sh -c \
        'spin() { while :; do :; done; }; spin & spin & wait'
    jcheck 'd["status"] == "timeout" and d["limit"] == "cpu" and d["cpu_time"] < 2' \
        "timeout cpu: children's CPU time counts against the limit"
else
    skip "children's CPU time counts" "CPU time is per process here (see run --check)"
fi

cru run --cpu-time 0.2 -- /bin/sh -c 'while :; do :; done'
is "$RC" 1 "timeout cpu without --json: exit 1"
verdict_is timeout "timeout cpu without --json: verdict line"

# --- timeout: wall ----------------------------------------------------------------
cru run --json --wall-time 0.3 -- /bin/sleep 30
is "$RC" 1 "timeout wall: exit 1"
jcheck 'd["status"] == "timeout" and d["limit"] == "wall"' 'timeout wall: status timeout, limit "wall"'
jcheck '0.29 <= d["wall_time"] < 3 and d["cpu_time"] < 0.5' "timeout wall: wall_time ~0.3 s"
cru run --wall-time 0.2 -- /bin/sleep 30
verdict_is timeout "timeout wall without --json: verdict line"

# --- memory_limit -------------------------------------------------------------------
if enforced memory; then
    cru run --json --memory 32 -- /usr/bin/python3 -c 'x = bytearray(200 * 1024 * 1024); print(len(x))'
    is "$RC" 1 "memory_limit: exit 1"
    jcheck 'd["status"] == "memory_limit" and d["stdout"] == ""' "memory_limit: status memory_limit"
    jcheck 'd["memory_kb"] <= 40 * 1024' "memory_limit: memory_kb does not exceed the cap by much"
    # A child's memory counts too (the whole tree).
    cru run --json --memory 48 -- /bin/sh -c \
        '/usr/bin/python3 -c "x = bytearray(30 << 20); import time; time.sleep(2)" &
         /usr/bin/python3 -c "x = bytearray(30 << 20); import time; time.sleep(2)" & wait'
    jcheck 'd["status"] == "memory_limit"' "memory_limit: two children of 30 MB exceed --memory 48 together"
    cru run --memory 32 -- /usr/bin/python3 -c 'x = bytearray(200 * 1024 * 1024)'
    verdict_is memory_limit "memory_limit without --json: verdict line"
else
    skip_n 5 "memory_limit" "memory is not limited per process tree here (see run --check)"
fi

# --- output_limit -------------------------------------------------------------------
cru run --json --output 1 -- /bin/sh -c 'yes | head -c 5000'
is "$RC" 1 "output_limit: exit 1"
jcheck 'd["status"] == "output_limit"' "output_limit: status output_limit"
jcheck 'len(d["stdout"]) == 1024 and d["stdout"] == "y\n" * 512' "output_limit: stdout truncated to exactly 1 KB"
jcheck 'd["stdout_truncated"] is True and d["stderr_truncated"] is False' \
    "output_limit: stdout_truncated true, stderr_truncated false"
cru run --json --output 1 -- /bin/sh -c 'yes | head -c 5000 >&2'
jcheck 'd["status"] == "output_limit" and len(d["stderr"]) == 1024 and d["stderr_truncated"] is True
        and d["stdout_truncated"] is False' "output_limit on stderr: stderr truncated to 1 KB"
cru run --json --output 2 -- /bin/sh -c 'head -c 2048 /dev/zero | tr "\0" a'
jcheck 'd["status"] == "ok" and len(d["stdout"]) == 2048 and d["stdout_truncated"] is False' \
    "output exactly at the cap is ok and not truncated"
cru run --output 1 -- /bin/sh -c 'head -c 5000 /dev/zero | tr "\0" a'
is "$(wc -c <"$OUT")" 1024 "output_limit without --json: exactly the cap is passed through"
verdict_is output_limit "output_limit without --json: verdict line"

# --- sandbox_error: crucible itself cannot set the run up ---------------------------
# (a source that fails to read while init copies it: /proc/self/mem has no page at 0; files
# larger than --disk are the command line's mistake, found before any sandbox exists)
cru run --json --file big.dat=/proc/self/mem -- /bin/true
is "$RC" 2 "sandbox_error: exit 2"
jcheck 'd["status"] == "sandbox_error" and "big.dat" in d["message"] and "\n" not in d["message"]' \
    "sandbox_error: status sandbox_error, a one-line message naming the file"
one_line "$ERR"
ok $? "sandbox_error with --json: one line on stderr too"
cru run --file big.dat=/proc/self/mem -- /bin/true
is "$RC$(wc -c <"$OUT")" "20" "sandbox_error without --json: exit 2, nothing on stdout"
like "$(cat "$ERR")" '^crucible[^'$'\n'']*big\.dat[^'$'\n'']*$' "sandbox_error without --json: one line naming the file"

# --- a limit hit never looks like success -------------------------------------------
cru run --json --output 1 -- /bin/sh -c 'head -c 5000 /dev/zero | tr "\0" a; exit 0'
jcheck 'd["status"] == "output_limit"' "output_limit wins over a clean exit 0"
cru run --json --wall-time 0.3 -- /bin/sh -c 'trap "" TERM INT HUP; sleep 30'
jcheck 'd["status"] == "timeout" and d["limit"] == "wall" and d["wall_time"] < 3' \
    "timeout wall: a program ignoring TERM/INT/HUP still ends on time"
cru run --json --wall-time 2 -- /bin/sh -c 'sleep 100 & echo started'
jcheck 'd["status"] == "ok" and d["stdout"] == "started\n" and d["wall_time"] < 1.5' \
    "a background child left behind doesn't hold the run until the wall limit"
