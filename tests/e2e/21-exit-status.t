#!/usr/bin/env bash
# `crucible run --exit-status=program`: the program's own exit status passed through, in the
# convention of timeout(1) and docker run — 128+N for a signal, 124 for a time limit, 137
# for the memory limit, 153 for the output limit, 126/127 for a program that cannot be
# executed / is not found, 125 for crucible's own failure or a wrong command line — while the
# default (and --exit-status=verdict) stays 0/1/2.
. "$(dirname "$0")/lib.sh"

plan 34

# --- the default is unchanged ----------------------------------------------------------
cru run -- /bin/sh -c 'exit 3'
is "$RC" 1 "default: a program exiting 3 gives 1"
cru run --exit-status=verdict -- /bin/sh -c 'exit 3'
is "$RC" 1 "--exit-status=verdict: a program exiting 3 gives 1"
cru run --bogus -- /bin/true
is "$RC" 2 "default: a wrong option gives 2"

# --- the program's own status -------------------------------------------------------------
cru run --exit-status=program -- /bin/true
is "$RC" 0 "program: exit 0 gives 0"
cru run --exit-status=program -- /bin/sh -c 'echo out; echo err >&2; exit 3'
is "$RC" 3 "program: exit 3 gives 3"
is "$(cat "$OUT")" "out" "program: the program's stdout is still printed"
like "$(tail -n 1 "$ERR")" "^crucible: runtime_error \(exit code 3\)" \
    "program: the verdict line is still on stderr"
cru run --exit-status program -- /bin/sh -c 'exit 255'
is "$RC" 255 "program (separate argument): exit 255 gives 255"
cru run --exit-status=program --json -- /bin/sh -c 'exit 7'
is "$RC" 7 "program with --json: exit 7 gives 7"
jcheck 'd["status"] == "runtime_error" and d["exit_code"] == 7' "program with --json: the record is printed"
cru run --exit-status=verdict --exit-status=program -- /bin/sh -c 'exit 9'
is "$RC" 9 "the last --exit-status counts"

# --- signals: 128+N ------------------------------------------------------------------------
cru run --exit-status=program -- /bin/sh -c 'kill -SEGV $$'
is "$RC" 139 "program: killed by SIGSEGV gives 139"
cru run --exit-status=program -- /bin/sh -c 'kill -TERM $$'
is "$RC" 143 "program: killed by SIGTERM gives 143"
cru run --exit-status=program -- /usr/bin/python3 -c 'import os; os.abort()'
is "$RC" 134 "program: abort() gives 134"

# --- limits -----------------------------------------------------------------------------------
cru run --exit-status=program --wall-time 0.5 -- /bin/sleep 10
is "$RC" 124 "program: the wall-time limit gives 124 (timeout(1))"
cru run --exit-status=program --json --wall-time 0.5 -- /bin/sleep 10
jcheck 'd["status"] == "timeout" and d["limit"] == "wall"' "program: the record says timeout, wall"
cru run --exit-status=program --cpu-time 0.3 --wall-time 10 -- /bin/sh -c 'while :; do :; done'
is "$RC" 124 "program: the CPU-time limit gives 124"
cru run --exit-status=program --json --cpu-time 0.3 --wall-time 10 -- /bin/sh -c 'while :; do :; done'
jcheck 'd["status"] == "timeout" and d["limit"] == "cpu"' "program: the record says timeout, cpu"
if enforced memory; then
    cru run --exit-status=program --memory 32 -- /usr/bin/python3 -c 'x = bytearray(200 * 1024 * 1024)'
    is "$RC" 137 "program: the memory limit gives 137 (docker's OOM kill)"
    verdict_line=$(tail -n 1 "$ERR")
    like "$verdict_line" "^crucible: memory_limit" "program: the verdict line says memory_limit"
else
    skip_n 2 "memory_limit" "memory is not limited per process tree here (see run --check)"
fi
cru run --exit-status=program --output 1 -- /bin/sh -c 'yes | head -c 5000'
is "$RC" 153 "program: the output limit gives 153 (128+SIGXFSZ)"
cru run --exit-status=program --pids 8 -- /usr/bin/python3 -c '
import os, sys, time
for i in range(16):
    try:
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
    except OSError:
        sys.exit(4)
sys.exit(0)'
is "$RC" 4 "program: --pids exhausted, the program's own status (its forks failed)"
cru run --exit-status=program -- /bin/sh -c 'exit 2'
is "$RC" 2 "program: a program exiting 2 gives 2 (not crucible's 125)"

# --- a program that cannot run ------------------------------------------------------------
cru run --exit-status=program -- /nonexistent/prog
is "$RC" 127 "program: a program that is not found gives 127"
printf 'not a program\n' >"$T/data.txt"
chmod 0644 "$T/data.txt"
cru run --exit-status=program --file data.txt="$T/data.txt" -- /work/data.txt
is "$RC" 126 "program: a file that is not executable gives 126"
cru run -- /nonexistent/prog
is "$RC" 2 "default: a program that is not found gives 2, as before"

# --- crucible's own failure: 125 ----------------------------------------------------------
cru run --exit-status=program --bogus -- /bin/true
is "$RC" 125 "program: a wrong option gives 125"
cru run --bogus --exit-status=program -- /bin/true
is "$RC" 125 "program: a wrong option before --exit-status gives 125 too"
cru run --wall-time 5 --bogus --exit-status=program -- /bin/true
is "$RC" 125 "program: ... also after an option with a value"
cru run --exit-status=program --image /nonexistent/rootfs -- /bin/true
is "$RC" 125 "program: an image that cannot be used gives 125"
one_line "$ERR"
ok $? "program: crucible's failure is one line on stderr"
cru run --exit-status=sometimes -- /bin/true
is "$RC" 2 "--exit-status with an unknown mode gives 2"
like "$(cat "$ERR")" "--exit-status must be 'verdict' or 'program', not 'sometimes'" \
    "--exit-status with an unknown mode: the message names both modes and the value"

# --- documented ---------------------------------------------------------------------------------
"$CRUCIBLE" run --help >"$OUT" 2>&1
grep -q -- "--exit-status MODE" "$OUT" && grep -q "124" "$OUT" && grep -q "125" "$OUT" &&
    grep -q "128+N" "$OUT"
ok $? "run --help describes --exit-status and its codes"
