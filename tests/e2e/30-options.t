#!/usr/bin/env bash
# --stdin, --file, --env, --network, --disk, --pids, --cpu-time, --wall-time.
. "$(dirname "$0")/lib.sh"

plan 35

# --- --stdin ----------------------------------------------------------------------
printf 'line one\nline two\n' >"$T/in.txt"
cru run --json --stdin "$T/in.txt" -- /bin/cat
jcheck 'd["status"] == "ok" and d["stdout"] == "line one\nline two\n"' "--stdin feeds the file to the program"
"$PY" -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 8)' >"$T/bin.dat"
cru run --json --stdin "$T/bin.dat" -- /bin/cat
jcheck 'base64.b64decode(d["stdout_base64"]) == bytes(range(256)) * 8' "--stdin passes binary bytes (NUL, 0xff) exactly"
head -c 3000000 /dev/urandom >"$T/big.dat"
cru run --json --stdin "$T/big.dat" -- /usr/bin/sha256sum
is "$(jf stdout | cut -d' ' -f1)" "$(sha256sum <"$T/big.dat" | cut -d' ' -f1)" "--stdin of 3 MB arrives intact"
cru run --json --wall-time 5 --stdin "$T/big.dat" -- /bin/true
jcheck 'd["status"] == "ok" and d["wall_time"] < 2' "--stdin of 3 MB to a program that never reads: no hang"

# --- --file -----------------------------------------------------------------------
printf '#!/bin/sh\necho "script ran: $1"\n' >"$T/x.sh"
chmod 0755 "$T/x.sh"
printf 'data\n' >"$T/ro.txt"
chmod 0640 "$T/ro.txt"
cru run --json --file x="$T/x.sh" -- ./x arg1
jcheck 'd["status"] == "ok" and d["stdout"] == "script ran: arg1\n"' "--file: an executable script runs as ./x"
cru run --json --file x="$T/x.sh" --file data.txt="$T/ro.txt" -- /bin/sh -c 'stat -c "%a %n" x data.txt; cat data.txt'
jcheck 'd["stdout"] == "755 x\n640 data.txt\ndata\n"' "--file keeps the mode bits (0755, 0640) and the content"
cru run --json --file a/b/c="$T/x.sh" -- /bin/sh -c 'test -d a && test -d a/b && ./a/b/c nested'
jcheck 'd["status"] == "ok" and d["stdout"] == "script ran: nested\n"' "--file a/b/c creates the directories"
cru run --json --file one="$T/ro.txt" --file sub/two="$T/ro.txt" -- /bin/sh -c 'cat one sub/two'
jcheck 'd["stdout"] == "data\ndata\n"' "--file may be given several times"
cru run --json --file x="$T/x.sh" -- /bin/sh -c 'echo changed > x && cat x'
jcheck 'd["stdout"] == "changed\n"' "--file copies are writable by the program"
is "$(cat "$T/x.sh")" $'#!/bin/sh\necho "script ran: $1"' "--file: the host's source file is untouched"
head -c 3000000 /dev/zero >"$T/3m.dat"
cru run --json --disk 1 --file big="$T/3m.dat" -- /bin/true
is "$RC" 2 "--file bigger than --disk: exit 2"
one_line "$ERR"
ok $? "--file bigger than --disk: a one-line error"

# --- --env --------------------------------------------------------------------------
export CRUCIBLE_E2E_SECRET=hunter2-do-not-leak
cru run --json --env FOO=bar --env 'K=a=b' --env EMPTY= -- /usr/bin/env
env_out=$(jf stdout)
like "$env_out" $'(^|\n)FOO=bar\n' "--env FOO=bar is visible"
like "$env_out" $'(^|\n)K=a=b\n' "--env K=a=b keeps the '=' in the value"
like "$env_out" $'(^|\n)EMPTY=\n' "--env EMPTY= gives an empty value"
unlike "$env_out" 'hunter2|CRUCIBLE_E2E_SECRET' "a host environment variable is not visible"
unlike "$env_out" $'(^|\n)(SUDO_[A-Z]*|SSH_[A-Z_]*|OLDPWD|MAKEFLAGS|CRUCIBLE)=' "no other host variables leak in"
for kv in HOME=/tmp PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 TZ=UTC PYTHONHASHSEED=0; do
    [[ $env_out =~ (^|$'\n')$kv($'\n'|$) ]] || missing_env="${missing_env-} $kv"
done
is "${missing_env-}" "" "the fixed entries are there (HOME PATH LANG TZ PYTHONHASHSEED)"
unset CRUCIBLE_E2E_SECRET

# --- --network -----------------------------------------------------------------------
cat >"$T/connect.py" <<'EOF'
import socket
s = socket.socket()
s.settimeout(2)
try:
    s.connect(("127.0.0.1", 9))
    print("connected")
except OSError as e:
    print("failed", e.errno)
EOF
cru run --json --network none --file c.py="$T/connect.py" -- /usr/bin/python3 c.py
jcheck 'd["stdout"].startswith("failed")' "--network none: connect to 127.0.0.1 fails"
cru run --json --file c.py="$T/connect.py" -- /usr/bin/python3 c.py
jcheck 'd["stdout"].startswith("failed")' "no --network: same as none"
cru run --json --network none -- /bin/sh -c 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "'
jcheck 'd["stdout"] in ("", "lo\n")' "--network none: no interface but (a down) lo"

cat >"$T/loop.py" <<'EOF'
import socket, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
srv.settimeout(5)
port = srv.getsockname()[1]
def serve():
    c, _ = srv.accept()
    c.sendall(c.recv(100).upper())
    c.close()
t = threading.Thread(target=serve, daemon=True)
t.start()
c = socket.create_connection(("127.0.0.1", port), timeout=5)
c.sendall(b"ping over loopback")
print(c.recv(100).decode())
t.join(5)
EOF
cru run --json --network loopback --wall-time 15 --file l.py="$T/loop.py" -- /usr/bin/python3 l.py
jcheck 'd["status"] == "ok" and d["stdout"].startswith("PING OVER LOOPBACK\n")' \
    "--network loopback: a server and a client on 127.0.0.1 talk"
cru run --json --network loopback -- /bin/sh -c 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "'
jcheck 'd["stdout"] == "lo\n"' "--network loopback: lo is the only interface"

# --- --disk ---------------------------------------------------------------------------
cat >"$T/fill.py" <<'EOF'
import errno, sys
n, path, chunk = 0, sys.argv[1], b"x" * 65536
try:
    with open(path, "wb") as f:
        while n < 64 << 20:
            f.write(chunk); f.flush(); n += len(chunk)
    print("wrote all", n)
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno), n)
EOF
cru run --json --disk 2 --file f.py="$T/fill.py" -- /usr/bin/python3 f.py /work/big
jcheck 'd["stdout"].startswith("ENOSPC ") and int(d["stdout"].split()[1]) <= 2 << 20' \
    "--disk 2: python filling /work gets ENOSPC at no more than 2 MB"
cru run --json --disk 2 --file f.py="$T/fill.py" -- /usr/bin/python3 f.py /tmp/big
jcheck 'd["stdout"].startswith("ENOSPC ")' "--disk 2: filling /tmp gets ENOSPC too"
cru run --json --disk 2 -- /bin/sh -c 'head -c 1500000 /dev/zero > /work/a; head -c 1500000 /dev/zero > /tmp/b; echo "rc=$?"'
jcheck 'd["stdout"] == "rc=1\n" and "No space left on device" in d["stderr"]' \
    "--disk 2: /tmp and /work share the cap (1.5 MB + 1.5 MB fails with ENOSPC)"
# A plain C program (head, not ignoring SIGXFSZ) writing one file over the cap
# must see the error (ENOSPC), not be killed by SIGXFSZ (exit 153).
cru run --json --disk 2 -- /bin/sh -c 'head -c 3000000 /dev/zero > /work/f; echo "rc=$?"'
jcheck 'd["stdout"] == "rc=1\n" and "No space left on device" in d["stderr"]' \
    "--disk 2: head writing one 3 MB file sees ENOSPC (not SIGXFSZ)"
cru run --json --disk 8 -- /bin/sh -c 'head -c 6000000 /dev/zero > /work/f && stat -c %s /work/f'
jcheck 'd["status"] == "ok" and d["stdout"] == "6000000\n"' "--disk 8: a 6 MB file fits"

# --- --pids -------------------------------------------------------------------------
cat >"$T/forks.py" <<'EOF'
import errno, os, sys, time
n, kids = 1, []
while n < 200:
    try:
        pid = os.fork()
    except OSError as e:
        print("procs", n, errno.errorcode.get(e.errno, e.errno)); break
    if pid == 0:
        time.sleep(5); os._exit(0)
    kids.append(pid); n += 1
else:
    print("procs", n, "unbounded")
for k in kids:
    os.kill(k, 9); os.waitpid(k, 0)
EOF
cru run --json --pids 8 --file f.py="$T/forks.py" -- /usr/bin/python3 f.py
jcheck 'd["stdout"].startswith("procs ") and d["stdout"].split()[2] == "EAGAIN" and int(d["stdout"].split()[1]) <= 8' \
    "--pids 8: fork fails with EAGAIN at no more than 8 processes"
if enforced pids; then
    jcheck 'int(d["stdout"].split()[1]) == 8' "--pids 8: the program may have exactly 8 processes"
    cru run --json --pids 1 -- /bin/echo one
    jcheck 'd["status"] == "ok" and d["stdout"] == "one\n"' "--pids 1 (the documented minimum) runs a single process"
    cru run --json --pids 2 -- /bin/sh -c '/bin/echo child'
    jcheck 'd["status"] == "ok" and d["stdout"] == "child\n"' "--pids 2: a shell can start one child"
else
    skip_n 3 "--pids exact count" "pids are counted per host uid here, not per sandbox (see run --check)"
fi
cru run --json --pids 20 --wall-time 5 -- /bin/sh -c 'b() { b | b & }; b; sleep 1; echo survived'
jcheck 'd["wall_time"] < 4' "--pids 20: a fork bomb is contained and the run ends"

# --- --cpu-time / --wall-time fractional and generous ------------------------------
cru run --json --cpu-time 1.5 --wall-time 2.5 -- /bin/echo fine
jcheck 'd["status"] == "ok" and d["stdout"] == "fine\n"' "fractional --cpu-time 1.5 and --wall-time 2.5 accepted"
cru run --json --cpu-time 0.05 -- /usr/bin/python3 -c 'while True: pass'
if enforced cpu; then
    jcheck 'd["status"] == "timeout" and d["limit"] == "cpu" and d["cpu_time"] < 0.5' "--cpu-time 0.05 stops a python loop early"
else
    jcheck 'd["status"] == "timeout" and d["limit"] == "cpu"' "--cpu-time 0.05 stops a python loop (RLIMIT_CPU: whole seconds)"
fi
