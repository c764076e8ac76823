#!/usr/bin/env bash
# `crucible keep`: a run through a keeper's ready sandbox gives the record a cold run gives;
# what the keeper cannot take goes cold; a socket anyone else could have planted is never
# used; a request that is not one is declined and the keeper goes on; a stopped run takes its
# sandbox with it; a stopped keeper removes its socket.
. "$(dirname "$0")/lib.sh"

plan 56

K=$T/keep
SOCK=$K/keep.sock
"$CRUCIBLE" keep --socket "$SOCK" --warm 2 2>"$T/keeper.err" &
KPID=$!
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
check "the keeper listens" test -S "$SOCK"
is "$(stat -c %a "$K")" 700 "the socket's directory is made 0700"
is "$(stat -c %a "$SOCK")" 700 "the socket is its user's only"

export CRUCIBLE_KEEP=$SOCK
kept() { CRUCIBLE_TRACE=1 cru run "$@"; }
went_kept() { grep -q "crucible: keeper: the run was the keeper's" "$ERR"; }

# --- the same record either way ------------------------------------------------------
fields='{k: d[k] for k in ("status","exit_code","signal","limit","stdout","stderr",
         "stdout_truncated","stderr_truncated","image","image_name","host_os","message")}'
rec() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps($fields, sort_keys=True))" "$OUT"; }
same_record() { # DESC ARG... : the run kept and cold
    local desc=$1 a b
    shift
    kept --json "$@"
    went_kept
    ok $? "$desc: the keeper ran it"
    a=$(rec)
    cru run --cold --json "$@"
    b=$(rec)
    is "$a" "$b" "$desc: the record is a cold run's"
}
same_record "echo" -- /bin/echo hi
same_record "exit 3 with both streams" -- /bin/sh -c 'echo out; echo err >&2; exit 3'
same_record "a signal" -- /bin/sh -c 'kill -9 $$'
same_record "the CPU limit" --cpu-time 0.2 -- /bin/sh -c 'while :; do :; done'
same_record "the output limit" --output 1 -- /bin/sh -c 'head -c 5000 /dev/zero'
same_record "a program not found" -- /no/such/program

printf 'line one\n' >"$T/in.txt"
printf 'data\n' >"$T/a.txt"
kept --stdin "$T/in.txt" --file a.txt="$T/a.txt" --env FOO=bar -- /bin/sh -c 'cat; cat a.txt; echo "$FOO"'
is "$(cat "$OUT")" $'line one\ndata\nbar' "stdin, a file and the environment reach the kept sandbox"
went_kept
ok $? "... through the keeper"

kept --exit-status program -- /bin/sh -c 'exit 7'
is "$RC" 7 "--exit-status=program gives the program's status through the keeper"

# --- each run a fresh sandbox --------------------------------------------------------
kept -- /bin/sh -c 'echo left >/tmp/mark; echo left >/work/mark'
kept -- /bin/sh -c 'test -e /tmp/mark || test -e /work/mark; echo $?'
is "$(cat "$OUT")" 1 "a run does not see what the run before it left in /tmp or /work"
kept -- /bin/sh -c "test -e '$SOCK' || test -e '$K'; echo \$?"
is "$(cat "$OUT")" 1 "a sandbox does not see the keeper's socket"

# --- a hostile run -------------------------------------------------------------------
kept -- /bin/sh -c 'kill -KILL -1; kill -TERM -1; exit 0'
kept -- /bin/echo survived
is "$(cat "$OUT")" survived "a run that signals every process it can reach leaves the keeper serving"
check "the keeper is alive" kill -0 "$KPID"

# --- runs at once ----------------------------------------------------------------------
seq 1 24 | xargs -P 8 -I{} timeout -k 5 60 sh -c \
    'CRUCIBLE_TRACE=1 "$1" run -- /bin/sh -c "echo run-$2" >"$3/par.$2" 2>"$3/par.$2.err"' \
    _ "$CRUCIBLE" {} "$T"
right=0 kept_n=0
for i in $(seq 1 24); do
    [ "$(cat "$T/par.$i" 2>/dev/null)" = "run-$i" ] && right=$((right + 1))
    grep -q "keeper: the run was the keeper's" "$T/par.$i.err" 2>/dev/null && kept_n=$((kept_n + 1))
done
is "$right" 24 "24 runs, 8 at a time: each prints its own output"
is "$kept_n" 24 "... and each was the keeper's (a run that finds no ready sandbox gets one made)"

# --- what the keeper does not take goes cold ------------------------------------------
kept --network loopback -- /bin/echo lo
is "$(cat "$OUT")" lo "a run of another network shape runs"
like "$(cat "$ERR")" "keeper declined: another scratch size, network or root" "... cold, and says why"
kept --disk 32 -- /bin/true
like "$(cat "$ERR")" "keeper declined" "another --disk goes cold"
kept --cold -- /bin/true
unlike "$(cat "$ERR")" "keeper" "--cold does not ask the keeper"
# The run names its image to the keeper without reading it; one it reads when it goes cold.
mkdir "$T/empty"
kept --image "$T/empty" -- /bin/true
is "$RC" 2 "an empty directory as the image is refused with a keeper there too"
like "$(cat "$ERR")" "keeper declined: another image" "... once the keeper declined it"
like "$(cat "$ERR")" "image '$T/empty' is empty" "... saying the image is empty"

# --- a socket someone else could have planted -----------------------------------------
mkdir -m 1777 "$T/open"
"$PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1); time.sleep(30)' "$T/open/keep.sock" &
PLANT=$!
for _ in $(seq 50); do [ -S "$T/open/keep.sock" ] && break; sleep 0.1; done
CRUCIBLE_KEEP=$T/open/keep.sock kept -- /bin/echo safe
is "$(cat "$OUT")" safe "a run beside a socket in a directory others can write to runs"
like "$(cat "$ERR")" "is not a directory only this user can write to" "... cold: that socket is never used"
kill "$PLANT" 2>/dev/null
wait "$PLANT" 2>/dev/null

# --- requests that are not a run's ----------------------------------------------------
answer=$("$PY" - "$SOCK" <<'EOF'
import socket, struct, sys
def ask(body, magic=b"CRK1"):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    s.sendall(magic + struct.pack("<I", len(body)) + body)
    data = b""
    while True:
        c = s.recv(65536)
        if not c: break
        data += c
    return data
def st(x): return struct.pack("<I", len(x)) + x + b"\0"
out = []
out.append(ask(st(b"0.0.0 not-this-build") + b"\0" * 64))   # another build
out.append(ask(b"\xff" * 40))                                  # garbage after the magic
out.append(ask(b"", magic=b"HTTP"))                            # not a request at all
for d in out:
    print(repr(d[13:13 + 120]) if len(d) > 13 and d[12:13] == b"N" else "no-decline:%r" % d[:20])
EOF
)
like "$answer" "another build of crucible" "a request of another build is declined, saying so"
is "$(grep -c "^b'" <<<"$answer")" 3 "malformed requests are declined, not run"
kept -- /bin/echo still
is "$(cat "$OUT")" still "the keeper goes on after them"
went_kept
ok $? "... and runs the next run itself"

# --- a keeper with a Python fork server ----------------------------------------------
kept --fork-server -- /usr/bin/python3 -c 'print(1)'
like "$(cat "$ERR")" "keeper declined: no fork server" "a keeper without a fork server declines --fork-server runs"
is "$(cat "$OUT")" 1 "... which run cold on a zygote of their own"
FSOCK=$T/fs/keep.sock
"$CRUCIBLE" keep --socket "$FSOCK" --fork-server 2>"$T/fs.err" &
FPID=$!
for _ in $(seq 300); do
    [ -S "$FSOCK" ] && break
    kill -0 "$FPID" 2>/dev/null || break
    sleep 0.1
done
if [ -S "$FSOCK" ]; then
    CRUCIBLE_KEEP=$FSOCK same_record "a Python job" --fork-server -- /usr/bin/python3 -c 'import sys; print(6 * 7); sys.exit(4)'
    CRUCIBLE_KEEP=$FSOCK kept --json --fork-server --disk 16 -- /usr/bin/python3 -c 'open("/tmp/mark", "w").write("x"); print(2)'
    jcheck 'd["path"] == "fork_server" and d["stdout"] == "2\n"' "the record of a kept job says path fork_server"
    CRUCIBLE_KEEP=$FSOCK kept --fork-server --disk 16 -- /usr/bin/python3 -c 'import os; print(os.path.exists("/tmp/mark"))'
    is "$(cat "$OUT")" False "a job does not see what the job before it left (any --disk: jobs are made per run)"
    went_kept
    ok $? "... through the keeper"
    kill -TERM "$FPID"
    wait "$FPID"
    is "$?" 0 "the keeper with a fork server stops cleanly"
else
    wait "$FPID" 2>/dev/null
    skip_n 6 "a keeper with a fork server" "it could not start here: $(tail -n 1 "$T/fs.err")"
fi

# --- a run stopped by a signal ----------------------------------------------------------
CRUCIBLE_TRACE=1 timeout -k 5 60 "$CRUCIBLE" run -- /bin/sh -c 'exec sleep 31.5' \
    </dev/null >"$T/stop.out" 2>"$T/stop.err" &
RUNPID=$!
for _ in $(seq 50); do pgrep -f "^sleep 31.5" >/dev/null && break; sleep 0.1; done
check "the stopped run's program was running" sh -c 'pgrep -f "^sleep 31.5" >/dev/null'
t0=$(date +%s%N)
kill -INT "$RUNPID"
wait "$RUNPID"
rc=$?
t1=$(date +%s%N)
is "$rc" 130 "the run ends by SIGINT, as a cold one does"
ok $(((t1 - t0) < 5000000000 ? 0 : 1)) "within seconds ($(((t1 - t0) / 1000000)) ms)"
like "$(cat "$T/stop.err")" "stopped by Interrupt" "... and says so"
like "$(cat "$T/stop.err")" "keeper: the run was the keeper's" "... and it was the keeper's run that stopped"
gone=1
for _ in $(seq 30); do pgrep -f "^sleep 31.5" >/dev/null || { gone=0; break; }; sleep 0.1; done
ok $gone "its program is gone with it"

# --- the keeper's own ends ----------------------------------------------------------
"$CRUCIBLE" keep --socket "$SOCK" 2>"$T/second.err"
is "$?" 2 "a second keeper on the same socket refuses to start"
like "$(cat "$T/second.err")" "already listens" "... saying why"
kill -TERM "$KPID"
wait "$KPID"
is "$?" 0 "SIGTERM stops the keeper cleanly"
check "its socket is gone" test ! -e "$SOCK"
kept -- /bin/echo after
like "$(cat "$OUT")$(cat "$ERR")" "after.*no keeper at" "with no keeper a run goes cold"
