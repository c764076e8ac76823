#!/usr/bin/env bash
# The done-when run, the JSON record's shape, the sandbox's fixed environment,
# pass-through without --json, and '--' handling.
. "$(dirname "$0")/lib.sh"

plan 33

# --- done-when ---------------------------------------------------------------
cru run --json -- /bin/echo hi
is "$RC" 0 "run --json -- /bin/echo hi exits 0"
is "$(jf status)" ok "status is ok"
is "$(jj stdout)" '"hi\n"' "stdout is \"hi\\n\""
is "$(jf exit_code)" 0 "exit_code is 0"
jcheck 'set(d) >= {"status","exit_code","signal","limit","cpu_time","wall_time","memory_kb",
                   "stdout","stderr","stdout_truncated","stderr_truncated","image","image_name",
                   "host_os","message"}' \
    "the record has every documented field"
jcheck 'd["signal"] is None and d["limit"] is None and d["stderr"] == "" and
        d["stdout_truncated"] is False and d["stderr_truncated"] is False and
        d["image"] == "host" and "stdout_base64" not in d' \
    "an ok run: no signal, no limit, nothing truncated, image host, no base64 for UTF-8"
jcheck 'all(isinstance(d[k], (int, float)) and not isinstance(d[k], bool) and d[k] >= 0
            for k in ("cpu_time", "wall_time", "memory_kb")) and d["wall_time"] < 5' \
    "cpu_time, wall_time, memory_kb are non-negative numbers"
is "$(grep -c '' "$OUT")" 1 "--json prints exactly one line on stdout"
is "$(wc -c <"$ERR")" 0 "--json and an ok run: nothing on stderr"

# --- the fixed environment -------------------------------------------------------
cat >"$T/probe.sh" <<'EOF'
echo "uid=$(id -u) gid=$(id -g)"
echo "cwd=$(pwd)"
echo "host=$(hostname)"
for v in HOME PATH LANG TZ PYTHONHASHSEED; do eval "echo $v=\${$v-UNSET}"; done
touch /tmp/t && echo tmp=writable
touch /work/w && echo work=writable
touch /etc/crucible-e2e 2>/dev/null && echo etc=writable || echo etc=readonly
touch /crucible-e2e 2>/dev/null && echo root=writable || echo root=readonly
touch /usr/crucible-e2e 2>/dev/null && echo usr=writable || echo usr=readonly
EOF
cru run --json --file probe.sh="$T/probe.sh" -- /bin/sh probe.sh
is "$RC" 0 "the environment probe runs"
p=$(jf stdout)
like "$p" $'(^|\n)uid=1000 ' "runs as uid 1000 inside"
like "$p" $'(^|\n)cwd=/work\n' "cwd is /work"
like "$p" $'(^|\n)host=crucible\n' "hostname is crucible"
like "$p" $'(^|\n)HOME=/tmp\n' "HOME=/tmp"
like "$p" $'(^|\n)PATH=/usr/local/bin:/usr/bin:/bin\n' "PATH=/usr/local/bin:/usr/bin:/bin"
like "$p" $'(^|\n)LANG=C.UTF-8\n' "LANG=C.UTF-8"
like "$p" $'(^|\n)TZ=UTC\n' "TZ=UTC"
like "$p" $'(^|\n)PYTHONHASHSEED=0\n' "PYTHONHASHSEED=0"
like "$p" $'(^|\n)tmp=writable\n' "/tmp is writable"
like "$p" $'(^|\n)work=writable\n' "/work is writable"
like "$p" $'(^|\n)etc=readonly\n(root=readonly\n)?usr=readonly' "/, /etc and /usr are read-only"
check "nothing the program wrote reached the host" test ! -e /etc/crucible-e2e -a ! -e /usr/crucible-e2e

# --- stdin is empty by default -------------------------------------------------------
cru run --json --wall-time 5 -- /bin/cat
jcheck 'd["status"] == "ok" and d["stdout"] == ""' "stdin is empty by default (cat ends at once)"

# --- without --json: pass-through and a one-line verdict ----------------------------
cru run -- /bin/sh -c 'printf "out1\nout2\n"; printf "err1\n" >&2'
is "$RC" 0 "plain run of a program exiting 0 exits 0"
is "$(cat "$OUT")" $'out1\nout2' "plain run passes the program's stdout through"
is "$(cat "$ERR")" "err1" "plain run passes stderr through and adds no verdict for ok"

cru run -- /bin/sh -c 'echo out; echo err >&2; exit 4'
is "$RC" 1 "plain run of a failing program exits 1"
is "$(cat "$OUT")" "out" "failing program's stdout passed through"
is "$(head -n 1 "$ERR")" "err" "failing program's stderr passed through"
like "$(tail -n +2 "$ERR")" '^crucible: runtime_error[^'$'\n'']*4[^'$'\n'']*$' \
    "then exactly one verdict line naming runtime_error and the exit code"

# --- '--' and options after the program ------------------------------------------
cru run --json -- /bin/echo --json
jcheck 'd["status"] == "ok" and d["stdout"] == "--json\n"' "options after PROGRAM belong to it (echo --json)"
cru run --json -- /bin/echo --cpu-time abc -- x
jcheck 'd["stdout"] == "--cpu-time abc -- x\n"' "bad-looking options after PROGRAM are passed on verbatim"
cru run --json -- /bin/echo 'two words' '' "q\"uote"
jcheck 'd["stdout"] == "two words  q\"uote\n"' "arguments keep spaces, empty strings and quotes"
