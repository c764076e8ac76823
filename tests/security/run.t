#!/usr/bin/env python3
"""crucible security suite (TAP, run by prove; Python 3 standard library only).

Every tests/security/cases/NN-name.c is a small hostile program (built statically by the Makefile
to $CRUCIBLE_BUILD/security/NN-name). For each one this script runs

    $CRUCIBLE run --json <run: options> --file prog=<binary> --env CRUCIBLE_SEC_...=... -- ./prog <args:>

and prints three TAP lines:

  1. the result record has the status of the case's "expect:" header (alternatives with "|"),
     plus its "limit:", "signal:", "exit_code:" headers; crucible's exit code agrees with the
     status; neither stream contains "ESCAPED"; the run ended within "within:" seconds;
  2. nothing of the sandbox outlives the run: no sb-<crucible pid>-* cgroup directory, no process
     named "prog" or "sec-*", and (as root) no new process of the sandbox's host uid 65534;
  3. the host is unaffected: mount table unchanged, marker directory empty, sentinel file and
     /etc/passwd unchanged, the host TCP and abstract-socket listeners got no connection, the
     SIGCONT watcher got no signal, the host's SysV/POSIX IPC objects are untouched, no core file,
     and neither the host secret nor the answer-key token appears in the record.

Then: a noisy-neighbour test (a normal job beside a fork bomb and a memory bomb), a neighbour
test for per-user kernel limits (inotify), "--" handling, and --file destinations that try to
leave /work. Case headers (in the first comment of each .c file):

    expect: STATUS[|STATUS]   run: CRUCIBLE OPTIONS   args: PROGRAM ARGS (shell words)
    limit: cpu|wall           signal: N               exit_code: N
    within: SECONDS (host-side bound on the whole run; default wall time + 5)
    repeat: N (run N times in a row, each with its own lines)

Cases that expect memory_limit are skipped when `crucible run --check` says no memory limit is
enforced (unprivileged, no delegated memory cgroup). In run:/args:, @SUID_COPY@ becomes a
root-owned mode-4755 copy of the case's binary and @SENTINEL@ the path of the host's
world-writable sentinel file.
"""

import ctypes
import ctypes.util
import glob
import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SANDBOX_UID = 65534  # the watcher's uid: an unprivileged host account
SANDBOX_HOST_IDS = range(0x40000000, 0x40000000 + (1 << 22))  # sandboxes' host uids as root
# CRUCIBLE_SEC_RUN: extra `crucible run` options for every case (e.g. "--fork-server": the same
# hostile programs as jobs of a fork server; cases whose options a fork server refuses, such as
# --writable-root, are skipped then).
EXTRA_RUN = shlex.split(os.environ.get("CRUCIBLE_SEC_RUN", ""))
HEADER_KEYS = ("expect", "run", "args", "limit", "signal", "exit_code", "within", "repeat")


def repo_path(p):
    return p if os.path.isabs(p) else os.path.join(REPO, p)


CRUCIBLE = repo_path(os.environ.get("CRUCIBLE", "build/crucible"))
BUILD = repo_path(os.environ.get("CRUCIBLE_BUILD", "build"))
IS_ROOT = os.geteuid() == 0


def memory_enforced():
    """Whether this crucible can enforce and report a memory limit here (`run --check`); an
    unprivileged crucible without a delegated memory cgroup falls back to RLIMIT_AS."""
    try:
        out = subprocess.run([CRUCIBLE, "run", "--check"], capture_output=True, text=True).stdout
    except OSError:
        return True
    line = next((l for l in out.splitlines() if l.startswith("memory:")), None)
    return line is None or "OOM reported" in line


MEMORY_ENFORCED = True  # set in main()

# ---------------------------------------------------------------- TAP output

_count = 0
_failed = 0


def tap(passed, name, diags=(), skip=None):
    global _count, _failed
    _count += 1
    if skip is not None:
        print(f"ok {_count} - {name} # SKIP {skip}", flush=True)
        return True
    if not passed:
        _failed += 1
    print(f"{'' if passed else 'not '}ok {_count} - {name}", flush=True)
    for d in diags:
        for line in str(d).splitlines() or [""]:
            print(f"# {line}", flush=True)
    return passed


def diag(msg):
    for line in str(msg).splitlines():
        print(f"# {line}", flush=True)


def bail(msg):
    print(f"Bail out! {msg}", flush=True)
    sys.exit(255)


# ---------------------------------------------------------------- cases


def parse_case(path):
    """The header keys of one case file, from its leading comment."""
    text = open(path, encoding="utf-8").read()
    m = re.match(r"\s*/\*(.*?)\*/", text, re.S)
    hdr = {}
    for line in (m.group(1) if m else "").splitlines():
        mm = re.match(r"\s*\*?\s*([a-z_]+):\s*(.*?)\s*$", line)
        if mm and mm.group(1) in HEADER_KEYS:
            hdr[mm.group(1)] = mm.group(2)
    name = os.path.basename(path)[:-2]
    if "expect" not in hdr:
        bail(f"{name}: no 'expect:' header")
    return {
        "name": name,
        "binary": os.path.join(BUILD, "security", name),
        "expect": hdr["expect"].split("|"),
        "run": shlex.split(hdr.get("run", "")),
        "args": shlex.split(hdr.get("args", "")),
        "limit": hdr.get("limit"),
        "signal": int(hdr["signal"]) if "signal" in hdr else None,
        "exit_code": int(hdr["exit_code"]) if "exit_code" in hdr else None,
        "within": float(hdr["within"]) if "within" in hdr else None,
        "repeat": int(hdr.get("repeat", "1")),
    }


def opt_value(opts, name, default):
    for i, o in enumerate(opts):
        if o == name and i + 1 < len(opts):
            return float(opts[i + 1])
        if o.startswith(name + "="):
            return float(o.split("=", 1)[1])
    return default


# ---------------------------------------------------------------- host fixtures


class Host:
    """Everything run.t keeps on the host for the sandbox to try to reach."""

    def __init__(self):
        try:
            self.setup()
        except BaseException:
            self.close()
            raise

    def setup(self):
        self.token = secrets.token_hex(12)
        self.dir = tempfile.mkdtemp(prefix="crucible-sec-")
        os.chmod(self.dir, 0o755)
        self.marker = os.path.join(self.dir, "marker")
        os.mkdir(self.marker)
        os.chmod(self.marker, 0o777)
        self.sentinel = os.path.join(self.dir, "sentinel")
        self.sentinel_text = f"sentinel {self.token}\n"
        with open(self.sentinel, "w") as f:
            f.write(self.sentinel_text)
        os.chmod(self.sentinel, 0o666)
        self.answer = os.path.join(self.dir, "answer-key")
        self.answer_token = f"answer-{self.token}"
        with open(self.answer, "w") as f:
            f.write(self.answer_token + "\n")
        os.chmod(self.answer, 0o644)
        self.rundir = os.path.join(self.dir, "run")
        os.mkdir(self.rundir)
        self.secret = f"crucible-host-secret-{self.token}"
        self.passwd_hash = self.hash("/etc/passwd")

        # A TCP listener on 127.0.0.1 (and ::1 on the same port when possible).
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.tcp.setblocking(False)
        self.port = self.tcp.getsockname()[1]
        self.listeners = [self.tcp]
        try:
            t6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            t6.bind(("::1", self.port))
            t6.listen(16)
            t6.setblocking(False)
            self.listeners.append(t6)
        except OSError:
            pass
        # An abstract UNIX socket listener.
        self.abstract = f"crucible-sec-host-{self.token}"
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.unix.bind("\0" + self.abstract)
        self.unix.listen(16)
        self.unix.setblocking(False)
        self.listeners.append(self.unix)

        # SysV objects with a known key (mode 0666: if visible at all, they open).
        self.libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self.sysv_key = 0x0C5E0000 | (os.getpid() & 0xFFFF)
        self.msq = self.libc.msgget(self.sysv_key, 0o1666)  # IPC_CREAT | 0666
        self.shm = self.libc.shmget(self.sysv_key, 4096, 0o1666)
        self.sem = self.libc.semget(self.sysv_key, 1, 0o1666)

        self.suid_copies = {}
        self.foreign_seen = set()
        self.watcher = self.start_watcher()
        self.baseline_nobody = set(self.procs_of(SANDBOX_HOST_IDS)) if IS_ROOT else set()
        self.mount_lines = self.count_mounts()
        self.my_memcg = self.own_memcg()

    @staticmethod
    def hash(path):
        try:
            with open(path, "rb") as f:
                return hashlib.sha256(f.read()).hexdigest()
        except OSError as e:
            return f"unreadable: {e}"

    @staticmethod
    def count_mounts():
        with open("/proc/self/mountinfo") as f:
            return len(f.readlines())

    @staticmethod
    def own_memcg():
        with open("/proc/self/cgroup") as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3 and "memory" in parts[1].split(","):
                    return parts[2]
        return None

    def start_watcher(self):
        """A host process that records every SIGCONT; it runs as the sandbox's host uid when we
        are root, so only the pid namespace stands between it and kill(-1, SIGCONT)."""
        code = (
            "import os, signal, sys\n"
            "open('/proc/self/comm', 'w').write('sec-watcher')\n"
            "signal.signal(signal.SIGCONT, lambda *a: os.write(1, b'CONT\\n'))\n"
            "os.write(1, b'ready\\n')\n"
            "sys.stdin.buffer.read()\n"
        )
        kw, python = {}, sys.executable
        if IS_ROOT:
            kw = {"user": SANDBOX_UID, "group": SANDBOX_UID, "extra_groups": []}
            # The uid must be able to reach the interpreter (not one under /root).
            python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else python
        p = subprocess.Popen(
            [python, "-c", code],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd="/",
            start_new_session=True,
            **kw,
        )
        if p.stdout.readline() != b"ready\n":
            bail("the SIGCONT watcher did not start")
        os.set_blocking(p.stdout.fileno(), False)
        return p

    def watcher_signals(self):
        try:
            data = self.watcher.stdout.read() or b""
        except (BlockingIOError, TypeError):
            data = b""
        return data.count(b"CONT")

    def suid_copy(self, binary):
        if binary not in self.suid_copies:
            dst = os.path.join(self.dir, "suid-" + os.path.basename(binary))
            shutil.copyfile(binary, dst)
            if IS_ROOT:
                os.chown(dst, 0, 0)
            os.chmod(dst, 0o4755)
            self.suid_copies[binary] = dst
        return self.suid_copies[binary]

    def env_args(self):
        env = {
            "CRUCIBLE_SEC_PORT": str(self.port),
            "CRUCIBLE_SEC_MARKER": self.marker,
            "CRUCIBLE_SEC_SENTINEL": self.sentinel,
            "CRUCIBLE_SEC_ANSWER": self.answer,
            "CRUCIBLE_SEC_WATCHER": str(self.watcher.pid),
            "CRUCIBLE_SEC_ABSTRACT": self.abstract,
            "CRUCIBLE_SEC_SYSVKEY": str(self.sysv_key),
        }
        out = []
        for k, v in env.items():
            out += ["--env", f"{k}={v}"]
        return out

    def crucible_env(self):
        """crucible's own environment: the host secret and variables that must not leak."""
        env = dict(os.environ)
        env.update(
            {
                "CRUCIBLE_HOST_SECRET": self.secret,
                "LD_PRELOAD": "/nonexistent-crucible-sec.so",
                "LD_LIBRARY_PATH": "/nonexistent-crucible-sec",
                "PYTHONPATH": "/nonexistent-crucible-sec",
                "BASH_ENV": "/nonexistent-crucible-sec.sh",
                "ENV": "/nonexistent-crucible-sec.sh",
                "PERL5LIB": "/nonexistent-crucible-sec",
                "NODE_OPTIONS": "--require /nonexistent-crucible-sec.js",
            }
        )
        return env

    # ------------------------------------------------------------ observations

    @staticmethod
    def procs_of(uids):
        out = []
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    if os.stat(f"/proc/{d}").st_uid in uids:
                        out.append(int(d))
                except OSError:
                    pass
        return out

    @staticmethod
    def comm(pid):
        try:
            with open(f"/proc/{pid}/comm") as f:
                return f.read().strip()
        except OSError:
            return None

    @staticmethod
    def cgroups(pid):
        """{hierarchy controllers: path} of one process, or None when it is gone."""
        try:
            with open(f"/proc/{pid}/cgroup") as f:
                return {p[1]: p[2] for p in (l.rstrip("\n").split(":", 2) for l in f) if len(p) == 3}
        except OSError:
            return None

    def attribute(self, pid, ours):
        """'ours' when the process sits in a cgroup of one of our crucible runs (sb-<pid>-*) or,
        outside any sandbox cgroup, under this session's own memory cgroup; else 'foreign' (other
        sessions on this machine may run crucible at the same time)."""
        cgs = self.cgroups(pid)
        if cgs is None:
            return None
        for path in cgs.values():
            for m in re.finditer(r"/sb-(\d+)-", path):
                return "ours" if int(m.group(1)) in ours else "foreign"
        mem = next((v for k, v in cgs.items() if "memory" in k.split(",")), None)
        if self.my_memcg in (None, "/") or mem is None:
            return "ours"
        return "ours" if (mem + "/").startswith(self.my_memcg.rstrip("/") + "/") else "foreign"

    def leftover_processes(self, ours):
        """Processes of our sandboxes that are still alive: named prog or sec-*, or (as root) of
        the sandbox's host uid and not there when the suite started."""
        found = []
        nobody = set(self.procs_of(SANDBOX_HOST_IDS)) - self.baseline_nobody if IS_ROOT else set()
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == self.watcher.pid:
                continue
            pid, c = int(d), self.comm(d)
            if c is None or not (c == "prog" or c.startswith("sec-") or pid in nobody):
                continue
            who = self.attribute(pid, ours)
            if who == "ours":
                found.append(f"pid {pid} ({c}) cgroups {self.cgroups(pid)}")
            elif who == "foreign" and pid not in self.foreign_seen:
                self.foreign_seen.add(pid)
                diag(f"ignored pid {pid} ({c}): it belongs to another session's crucible")
        return found

    def leftover_cgroups(self, pids):
        """Sandbox cgroup directories left behind: sb-<pid>-* of our crucible runs under any
        *crucible* directory, and any sb-* under this session's own memory cgroup (no other
        session creates cgroups there)."""
        found = []
        mine = None
        if self.my_memcg and self.my_memcg != "/":
            mine = os.path.normpath("/sys/fs/cgroup/memory" + self.my_memcg)
        for base, dirs, _files in os.walk("/sys/fs/cgroup"):
            if base.count("/") > 9:
                dirs[:] = []
                continue
            if "crucible" in os.path.basename(base):
                for d in dirs:
                    m = re.match(r"sb-(\d+)-", d)
                    if (m and int(m.group(1)) in pids) or (
                        d.startswith("sb-") and mine and base.startswith(mine + "/")
                    ):
                        found.append(os.path.join(base, d))
                dirs[:] = [d for d in dirs if not d.startswith("sb-")]
        return found

    def drain_listeners(self):
        got = []
        for s in self.listeners:
            while True:
                try:
                    c, addr = s.accept()
                except (BlockingIOError, OSError):
                    break
                got.append(f"{s.getsockname()!r} from {addr!r}")
                c.close()
        return got

    def sysv_objects(self):
        """Objects the sandbox tried to create (key + 1, its POSIX shm, the stale key)."""
        found = []
        for key in (self.sysv_key + 1, 0x0C5EC0DE):
            if self.libc.msgget(key, 0) >= 0:
                found.append(f"SysV message queue key {key:#x} on the host")
        for name in ("crucible-sec-posix", "crucible-sec-stale"):
            if os.path.exists(f"/dev/shm/{name}"):
                found.append(f"/dev/shm/{name} on the host")
        if self.libc.msgget(self.sysv_key, 0) != self.msq:
            found.append("the host message queue is gone")
        return found

    def host_problems(self, record_text):
        probs = []
        n = self.count_mounts()
        if n != self.mount_lines:
            probs.append(f"host mountinfo has {n} lines, was {self.mount_lines}")
            self.mount_lines = n
        left = os.listdir(self.marker)
        if left:
            probs.append(f"marker directory not empty: {left}")
            for f in left:
                p = os.path.join(self.marker, f)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
        try:
            text = open(self.sentinel).read()
        except OSError as e:
            text = f"<{e}>"
        st = os.lstat(self.sentinel) if os.path.lexists(self.sentinel) else None
        if text != self.sentinel_text or not st or (st.st_mode & 0o7777) != 0o666:
            probs.append(f"sentinel changed: {text!r} mode {oct(st.st_mode) if st else None}")
            with open(self.sentinel, "w") as f:
                f.write(self.sentinel_text)
            os.chmod(self.sentinel, 0o666)
        if self.hash("/etc/passwd") != self.passwd_hash:
            probs.append("/etc/passwd changed")
        conns = self.drain_listeners()
        if conns:
            probs.append(f"host listener got connections: {conns}")
        sigs = self.watcher_signals()
        if sigs:
            probs.append(f"the host watcher received SIGCONT {sigs} time(s)")
        if self.watcher.poll() is not None:
            probs.append("the host watcher died")
        probs += self.sysv_objects()
        cores = [f for f in os.listdir(self.rundir) if f.startswith("core")]
        if cores:
            probs.append(f"core files on the host: {cores}")
            for f in cores:
                os.unlink(os.path.join(self.rundir, f))
        for what, value in (("host secret", self.secret), ("answer-key token", self.answer_token)):
            if value in record_text:
                probs.append(f"the {what} appears in the run's output")
        return probs

    def close(self):
        """Undo setup(); safe on a half-built Host."""
        w = getattr(self, "watcher", None)
        if w:
            try:
                w.stdin.close()
                w.wait(timeout=5)
            except Exception:
                w.kill()
        for s in getattr(self, "listeners", []):
            s.close()
        libc = getattr(self, "libc", None)
        if libc:
            for rm, ident in ((libc.msgctl, "msq"), (libc.shmctl, "shm")):
                if getattr(self, ident, -1) >= 0:
                    rm(getattr(self, ident), 0, None)  # IPC_RMID
            if getattr(self, "sem", -1) >= 0:
                libc.semctl(self.sem, 0, 0)
        if getattr(self, "dir", None):
            shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- running crucible


class Run:
    """One crucible invocation: its record, exit code and host-side duration."""

    def __init__(self, host, binary, opts=(), args=(), program=None, timeout=60, files=None):
        self.cmd = [CRUCIBLE, "run", "--json", *EXTRA_RUN, *opts]
        if binary:
            self.cmd += ["--file", f"prog={binary}"]
        for f in files or ():
            self.cmd += ["--file", f]
        self.cmd += host.env_args() + ["--"] + (program or ["./prog"]) + list(args)
        self.timeout = timeout
        self.host = host
        self.proc = None
        self.record = None
        self.error = None

    def start(self):
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            self.cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.host.rundir,
            env=self.host.crucible_env(),
            start_new_session=True,
        )
        self.pid = self.proc.pid
        return self

    def wait(self):
        try:
            out, err = self.proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the group we created for this run
            out, err = self.proc.communicate()
            self.error = f"crucible did not finish within {self.timeout:.0f} s (killed)"
        self.elapsed = time.monotonic() - self.t0
        self.rc = self.proc.returncode
        self.out = out.decode("utf-8", "replace")
        self.err = err.decode("utf-8", "replace")
        if not self.error:
            try:
                self.record = json.loads(self.out)
                if not isinstance(self.record, dict):
                    raise ValueError("not an object")
            except ValueError as e:
                self.error = f"stdout is not one JSON object ({e})"
        return self

    def run(self):
        return self.start().wait()

    def summary(self):
        lines = [f"command: {shlex.join(self.cmd)}", f"exit code {self.rc}, {self.elapsed:.2f} s"]
        if self.record is not None:
            r = dict(self.record)
            for k in ("stdout", "stderr"):
                if isinstance(r.get(k), str) and len(r[k]) > 1500:
                    r[k] = r[k][:1500] + f"... ({len(self.record[k])} chars)"
            lines.append("record: " + json.dumps(r, indent=1))
        else:
            lines.append(f"stdout: {self.out[:1500]!r}")
        if self.err.strip():
            lines.append(f"crucible stderr: {self.err[:1500]!r}")
        return lines


EXIT_FOR = {"ok": 0, "sandbox_error": 2}
RECORD_FIELDS = ("status", "exit_code", "signal", "limit", "cpu_time", "wall_time", "memory_kb",
                 "stdout", "stderr", "stdout_truncated", "stderr_truncated", "image", "image_name",
                 "host_os", "message")


def judge_status(case, run):
    """Problems with one case's record (empty list = pass)."""
    if run.error:
        return [run.error]
    r = run.record
    probs = [f"record lacks {k!r}" for k in RECORD_FIELDS if k not in r]
    status = r.get("status")
    if status not in case["expect"]:
        probs.append(f"status {status!r}, expected {'|'.join(case['expect'])}")
    want_rc = EXIT_FOR.get(status, 1)
    if run.rc != want_rc:
        probs.append(f"crucible exited {run.rc} for status {status!r} (contract: {want_rc})")
    for stream in ("stdout", "stderr"):
        if "ESCAPED" in (r.get(stream) or ""):
            esc = [l for l in r[stream].splitlines() if "ESCAPED" in l]
            probs.append(f"{stream} reports an escape: {esc[:8]}")
    if case["limit"] and r.get("limit") != case["limit"]:
        probs.append(f"limit {r.get('limit')!r}, expected {case['limit']!r}")
    if case["signal"] is not None and r.get("signal") != case["signal"]:
        probs.append(f"signal {r.get('signal')!r}, expected {case['signal']}")
    if case["exit_code"] is not None and r.get("exit_code") != case["exit_code"]:
        probs.append(f"exit_code {r.get('exit_code')!r}, expected {case['exit_code']}")
    wall = opt_value(case["run"], "--wall-time", 20)
    cpu = opt_value(case["run"], "--cpu-time", 10)
    within = case["within"] or wall + 5
    if run.elapsed > within:
        probs.append(f"the run took {run.elapsed:.2f} s on the host, bound {within:.1f} s")
    if status == "timeout" and r.get("limit") == "cpu" and (r.get("cpu_time") or 0) < 0.9 * cpu:
        probs.append(f"timeout/cpu with cpu_time {r.get('cpu_time')} under the {cpu} s limit")
    if status == "timeout" and r.get("limit") == "wall" and (r.get("wall_time") or 0) < 0.9 * wall:
        probs.append(f"timeout/wall with wall_time {r.get('wall_time')} under the {wall} s limit")
    if status == "output_limit":
        cap = int(opt_value(case["run"], "--output", 1024) * 1024)
        for stream in ("stdout", "stderr"):
            if len((r.get(stream) or "").encode("utf-8", "surrogateescape")) > cap:
                probs.append(f"{stream} holds {len(r[stream])} bytes, cap {cap}")
        if not (r.get("stdout_truncated") or r.get("stderr_truncated")):
            probs.append("output_limit without a truncated stream")
    return probs


def substitute(host, case, words):
    """Replace the @NAME@ placeholders of run:/args: headers."""
    out = []
    for w in words:
        if "@SUID_COPY@" in w:
            w = w.replace("@SUID_COPY@", host.suid_copy(case["binary"]))
        out.append(w.replace("@SENTINEL@", host.sentinel))
    return out


def run_case(host, case, ours, reference):
    if "--fork-server" in EXTRA_RUN and "--writable-root" in case["run"]:
        for _ in range(3 * case["repeat"]):
            tap(True, case["name"], skip="a fork server's job has no writable root")
        return
    if "memory_limit" in case["expect"] and not MEMORY_ENFORCED:
        for _ in range(3 * case["repeat"]):
            tap(True, case["name"], skip="crucible cannot enforce a memory limit here (run --check)")
        return
    opts = substitute(host, case, case["run"])
    args = substitute(host, case, case["args"])
    for i in range(case["repeat"]):
        label = case["name"] + (f" (run {i + 1} of {case['repeat']})" if case["repeat"] > 1 else "")
        wall = opt_value(case["run"], "--wall-time", 20)
        run = Run(host, case["binary"], opts, args, timeout=wall + 30).run()
        ours.add(run.pid)
        probs = judge_status(case, run)
        if not probs and reference and case["name"] == reference[0]:
            if run.record.get("stdout") != reference[1]:
                probs.append(f"stdout {run.record.get('stdout')!r}, bare run gave {reference[1]!r}")
        expect = "|".join(case["expect"])
        tap(not probs, f"{label}: {expect}", probs + (run.summary() if probs else []))
        if run.record:
            for line in (run.record.get("stdout") or "").splitlines():
                if line.startswith("warning: "):
                    diag(f"{case['name']}: {line}")
        check_nothing_left(host, label, ours)
        check_host(host, label, run.out + run.err)


def check_nothing_left(host, label, ours):
    procs = host.leftover_processes(ours)
    cgs = host.leftover_cgroups(ours)
    if procs or cgs:  # report how long they linger, but fail either way
        time.sleep(1)
        gone_p = [p for p in procs if not os.path.exists(f"/proc/{p.split()[1]}")]
        gone_c = [c for c in cgs if not os.path.isdir(c)]
    probs = [f"left process: {p}" for p in procs] + [f"left cgroup: {c}" for c in cgs]
    if procs or cgs:
        probs.append(f"of these, gone 1 s later: {gone_p + gone_c}")
    tap(not probs, f"{label}: nothing of the sandbox outlives the run", probs)


def check_host(host, label, text):
    probs = host.host_problems(text)
    tap(not probs, f"{label}: host unaffected", probs)


# ---------------------------------------------------------------- extra tests


def noisy_neighbour(host, cases, ours, reference):
    """A normal job beside a fork bomb and a memory bomb keeps its status, answer and speed."""
    bombs = [cases.get("01-fork-bomb"), cases.get("03-heap-bomb")]
    normal = cases.get("51-checksum")
    if not all(bombs) or not normal or not reference:
        for _ in range(4):
            tap(True, "noisy neighbour", skip="fork bomb, heap bomb or checksum case missing")
        return
    stop = threading.Event()
    bomb_runs = []

    def loop(case):
        while not stop.is_set():
            r = Run(host, case["binary"], case["run"], timeout=60).run()
            bomb_runs.append((case["name"], r))

    threads = [threading.Thread(target=loop, args=(c,)) for c in bombs]
    for t in threads:
        t.start()
    time.sleep(0.3)
    results = [Run(host, normal["binary"], ["--wall-time", "10"], timeout=40).run() for _ in range(3)]
    stop.set()
    for t in threads:
        t.join()
    for _, r in bomb_runs:
        ours.add(r.pid)
    for r in results:
        ours.add(r.pid)
    probs = []
    for i, r in enumerate(results):
        if r.error or r.record.get("status") != "ok" or r.record.get("stdout") != reference[1]:
            probs.append(f"normal job {i + 1}: {r.error or r.record.get('status')}, "
                         f"stdout {r.record.get('stdout') if r.record else None!r}")
            probs += r.summary()
    walls = [round(r.record.get("wall_time", 0), 2) for r in results if r.record]
    counts = {}
    for name, r in bomb_runs:
        st = r.record.get("status") if r.record else r.error
        counts.setdefault(name, []).append(st)
    tap(not probs, "noisy neighbour: a normal job beside a fork bomb and a memory bomb is ok "
        "with the right answer", probs)
    diag(f"normal job wall times {walls}; neighbour runs: "
         + "; ".join(f"{k}: {v}" for k, v in counts.items()))
    bad = [f"{n}: {r.error or r.record.get('status')}" for n, r in bomb_runs
           if r.error or r.record.get("status") not in cases[n]["expect"]]
    if MEMORY_ENFORCED:
        tap(not bad, "noisy neighbour: every bomb run got its expected status", bad)
    else:
        tap(True, "noisy neighbour: bomb statuses", skip="no memory limit enforced here (run --check)")
    check_nothing_left(host, "noisy neighbour", ours)
    check_host(host, "noisy neighbour", "".join(r.out for r in results))


def inotify_neighbour(host, cases, ours):
    """Per-user kernel objects: a sandbox holding every inotify instance it can get must not
    starve a neighbouring sandbox (both run as the same host uid)."""
    case = cases.get("46-exhaust-namespaces")
    if not case:
        tap(True, "inotify neighbour", skip="46-exhaust-namespaces missing")
        return
    hog = Run(host, case["binary"], ["--wall-time", "10"], ["inotify-hold"], timeout=40).start()
    time.sleep(1.0)
    victim = Run(host, case["binary"], [], ["inotify-one"], timeout=40).run()
    hog.wait()
    ours.update((hog.pid, victim.pid))
    probs = []
    if victim.error or victim.record.get("status") != "ok":
        probs.append("a sandbox could not create one inotify instance while its neighbour held "
                     "all it could get (per-user limit shared across sandboxes)")
        probs += victim.summary() + hog.summary()
    tap(not probs, "inotify neighbour: one sandbox cannot exhaust another's inotify instances",
        probs)


def dashdash(host, ours):
    """Words after -- belong to the program, even when they look like crucible options."""
    r = Run(host, None, [], ["--wall-time", "0.01", "--json", "--memory", "1"],
            program=["/bin/echo"], timeout=30).run()
    ours.add(r.pid)
    probs = [r.error] if r.error else []
    if not probs and (r.record.get("status") != "ok"
                      or r.record.get("stdout") != "--wall-time 0.01 --json --memory 1\n"):
        probs.append(f"status {r.record.get('status')!r}, stdout {r.record.get('stdout')!r}")
    tap(not probs, "words after -- reach the program verbatim", probs + (r.summary() if probs else []))


def file_traversal(host, ours):
    """--file destinations that try to leave /work must not write on the host."""
    src = os.path.join(BUILD, "security", "51-checksum")
    dests = [
        "../../../../../../.." + host.marker + "/dotdot",
        host.marker + "/absolute",
        "sub/../../../../../../.." + host.marker + "/nested",
    ]
    probs = []
    for d in dests:
        r = Run(host, None, [], [], program=["/bin/true"], files=[f"{d}={src}"], timeout=30).run()
        ours.add(r.pid)
        status = r.record.get("status") if r.record else r.error
        diag(f"--file {d}=...: crucible exit {r.rc}, status {status}")
        left = os.listdir(host.marker)
        if left:
            probs.append(f"--file {d}: wrote {left} into the host marker directory")
            for f in left:
                os.unlink(os.path.join(host.marker, f))
    tap(not probs, "--file destinations outside /work write nothing on the host", probs)


def serve_init_cmdline(host):
    """Inside a sandbox of `crucible serve --token-file ... --db ...`, pid 1 (init, a copy of
    the server's memory) shows nothing of the server's command line or environment: not the
    token file's path, not the host directory, not an option, not the host secret. Two runs:
    one may take a warm sandbox (made on the pool's thread), one cannot (other limits)."""
    import http.client

    token = f"tok-{host.token}"
    tokfile = os.path.join(host.dir, "serve-token")
    with open(tokfile, "w") as f:
        f.write(token + "\n")
    portfile = os.path.join(host.dir, "serve-port")
    db = os.path.join(host.dir, "serve.db")
    log = open(os.path.join(host.dir, "serve.log"), "w+")
    p = subprocess.Popen([CRUCIBLE, "serve", "--listen", "127.0.0.1:0", "--port-file", portfile,
                          "--token-file", tokfile, "--db", db, "--warm", "1", "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=log, env=host.crucible_env())
    probs, outs = [], []
    try:
        deadline = time.time() + 15
        while not os.path.exists(portfile) and time.time() < deadline and p.poll() is None:
            time.sleep(0.02)
        time.sleep(0.05)
        if not os.path.exists(portfile):
            log.seek(0)
            probs.append(f"crucible serve did not start: {log.read()[-500:]}")
        else:
            port = int(open(portfile).read())
            script = ("tr '\\000' ' ' < /proc/1/cmdline; echo; "
                      "tr '\\000' ' ' < /proc/1/environ 2>&1; echo; cat /proc/1/comm")
            for limits in ({}, {"pids": 17}):
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                c.request("POST", "/v1/run",
                          body=json.dumps({"command": ["/bin/sh", "-c", script], "limits": limits}),
                          headers={"Authorization": "Bearer " + token})
                r = c.getresponse()
                text = r.read().decode(errors="replace")
                c.close()
                try:
                    rec = json.loads(text)
                except ValueError:
                    rec = {}
                out = rec.get("stdout", "")
                outs.append(out)
                diag(f"serve, limits {limits}: /proc/1 shows {out!r}")
                if r.status != 200 or rec.get("status") != "ok":
                    probs.append(f"limits {limits}: HTTP {r.status}, {text[:300]}")
                first = out.split("\n", 1)[0]
                for what, needle in (("the token file's path", tokfile), ("the host directory",
                                     host.dir), ("the token", token), ("the host secret",
                                     host.secret), ("an option", "--"), ("a path", "/")):
                    if needle in (first if needle == "/" else text):
                        probs.append(f"limits {limits}: pid 1 shows {what} ({needle!r})")
    finally:
        p.terminate()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        log.close()
    tap(not probs, "crucible serve --token-file: /proc/1 in a sandbox shows nothing of the server",
        probs + (outs if probs else []))


# ---------------------------------------------------------------- main


def main():
    global MEMORY_ENFORCED
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))  # run the cleanup in finally:
    if not os.access(CRUCIBLE, os.X_OK):
        print("1..0 # SKIP no crucible binary at " + CRUCIBLE)
        return 0
    MEMORY_ENFORCED = memory_enforced()
    paths = sorted(glob.glob(os.path.join(HERE, "cases", "*.c")))
    cases = {}
    for p in paths:
        c = parse_case(p)
        cases[c["name"]] = c
    missing = [c["name"] for c in cases.values() if not os.access(c["binary"], os.X_OK)]
    if missing:
        bail(f"case binaries not built (make check-security): {missing}")

    n_extra = 1 + 4 + 1 + 1 + 1 + 1  # uid check, noisy neighbour (4), inotify, --, --file, serve
    print(f"1..{sum(3 * c['repeat'] for c in cases.values()) + n_extra}", flush=True)
    host = Host()
    ours = set()
    try:
        tap(True, "leftover processes of host uid 65534 are checked",
            skip=None if IS_ROOT else "not root: the sandbox's host uid is not 65534")
        reference = None
        if "51-checksum" in cases:
            bare = subprocess.run([cases["51-checksum"]["binary"]], capture_output=True, text=True)
            reference = ("51-checksum", bare.stdout)
            diag(f"bare checksum run: {bare.stdout.strip()}")
        for name in sorted(cases):
            run_case(host, cases[name], ours, reference)
        noisy_neighbour(host, cases, ours, reference)
        inotify_neighbour(host, cases, ours)
        dashdash(host, ours)
        file_traversal(host, ours)
        serve_init_cmdline(host)
    finally:
        host.close()
    return 1 if _failed else 0


if __name__ == "__main__":
    sys.exit(main())
