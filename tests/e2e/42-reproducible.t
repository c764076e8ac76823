#!/usr/bin/env bash
# What crucible pins (docs/REPRODUCIBILITY.md): the same program, task, solution and image
# give the same record on repeated runs — the environment, hostname, ids, time zone, locale,
# umask and hash seeds a program can see are fixed, not the host's or the caller's.
. "$(dirname "$0")/lib.sh"

plan 8

cat >"$T/probe.py" <<'EOF'
import hashlib, locale, os, socket, subprocess, sys, time
print("env", sorted(os.environ.items()))
print("host", socket.gethostname(), os.uname().nodename)
print("ids", os.getuid(), os.getgid(), os.geteuid(), os.getgroups(), os.getpid())
print("tz", time.tzname, time.strftime("%z"), time.localtime(0).tm_hour)
print("locale", locale.setlocale(locale.LC_ALL, ""), sys.getfilesystemencoding())
um = os.umask(0); print("umask", oct(um))
print("cwd", os.getcwd())
print("hash", hash("crucible"), hash(("a", 1)), list({"x", "y", "z", "crucible"}))
print("perl", subprocess.run(["perl", "-e", "my %h = map { $_ => 1 } ('a'..'p'); print join(',', keys %h)"],
      capture_output=True, text=True).stdout)
print("sha", hashlib.sha256(b"crucible").hexdigest())
EOF
strip_times() {
    "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in ("cpu_time","wall_time","memory_kb"): d.pop(k,None)
for t in d.get("tests",[]):
    for k in ("cpu_time","wall_time","memory_kb"): t.pop(k,None)
d.pop("wall_time",None); print(json.dumps(d,sort_keys=True))' "$1"
}

# The caller's own environment, umask and time zone must not reach the program.
runs=()
for i in 1 2 3; do
    TZ=America/New_York LANG=de_DE.UTF-8 PYTHONHASHSEED=$i bash -c "umask $((i == 2 ? 77 : 22)); \"\$0\" run --json --file probe.py=\"\$1\" -- python3 probe.py" \
        "$CRUCIBLE" "$T/probe.py" </dev/null >"$T/run$i" 2>"$T/err$i"
    runs+=("$(strip_times "$T/run$i")")
done
OUT=$T/run1
is "$(jf status)" ok "the probe runs ($(head -c 200 "$T/err1"))"
is "${runs[1]}" "${runs[0]}" "a second run, under another umask and caller environment, gives the same record"
is "${runs[2]}" "${runs[0]}" "a third run gives the same record"
p=$(jf stdout)
like "$p" "host crucible crucible" "the hostname is fixed"
like "$p" "tz \\('UTC', 'UTC'\\) \\+0000 0" "the time zone is UTC"
like "$p" "umask 0o22" "the umask is 022, not the caller's"
like "$p" "hash $(PYTHONHASHSEED=0 python3 -c 'print(hash("crucible"))') " \
    "Python's string hash is the one of PYTHONHASHSEED=0"

# The same through a verification: a stdio task whose expected answer is that hash.
want=$(PYTHONHASHSEED=0 python3 -c 'print(hash("crucible"))')
printf '{"id":"repro/1","language":"python","harness":"stdio","tests":[{"name":"t","stdin":"","expected":"%s\\n"}]}\n' "$want" >"$T/task.json"
echo 'import os; print(hash("crucible"))' >"$T/sol.py"
recs=()
for i in 1 2 3; do
    PYTHONHASHSEED=$i "$CRUCIBLE" verify --task "$T/task.json" --solution "$T/sol.py" </dev/null \
        >"$T/v$i" 2>/dev/null
    recs+=("$(strip_times "$T/v$i")")
done
OUT=$T/v1
check "three verifications: accepted, with the same record each time ($(jf verdict))" \
    bash -c '[ "$1" = accepted ] && [ "$2" = "$3" ] && [ "$2" = "$4" ]' _ "$(jf verdict)" \
    "${recs[0]}" "${recs[1]}" "${recs[2]}"
