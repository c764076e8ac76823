"""A real `crucible serve` on loopback for the Python end-to-end tests (94-http-*.t,
94-memory-*.t, 94-offloop-*.t, 94-runcode-*.t, 94-trust-boundaries.t, 95-langs*.t, and the
installed-client check of 93-python-install.t).

Server(*args, ...) starts the binary taplib chose ($CRUCIBLE, else the checkout's
build/crucible) on 127.0.0.1 port 0 with a port file, waits for the port and bails out
naming the log when the server does not start. Every server still running at exit is
killed, even when a check raised, and the temporary directories made by tmpdir() are
removed after that (CRUCIBLE_KEEP_TMP=1 keeps them for a post-mortem).

    srv.request(method, path, body=None, headers=None, timeout=None)
                                  -> (status, parsed JSON or None, text)
    srv.post(path, body, **kw)    -> the same, for POST
    srv.exchange(...)             -> (http.client response, body bytes): headers too
    srv.connect(data=b"", timeout=10, source=None) -> a raw socket that sent data
    srv.healthz(timeout=5)        -> /healthz's status, or the error that stopped it
    srv.metrics() / srv.metric(name) -> /metrics' text / one sample's value or None
    srv.status_kb(field)          -> a field of /proc/PID/status in kB (VmRSS, VmHWM)
    srv.fd_count()                -> descriptors the server holds (/proc/PID/fd)
    srv.events(name)              -> the log's JSON events of that name
    srv.stop(timeout=None)        -> SIGTERM, then the exit status (None if it was killed)
A body that is not bytes, str or None is sent as JSON. Standard library only."""
import atexit
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from taplib import CRUCIBLE, ok, skip, track

# Under AddressSanitizer freed memory sits in a quarantine and every block has redzones: the
# server's RSS says nothing about its heap then, and memory bounds are not asserted.
with open(CRUCIBLE, "rb") as _f:
    SANITIZED = b"__asan_init" in _f.read()


def ok_rss(cond, desc, *diag):
    """ok() for a bound on the server's resident memory; skipped for a sanitizer build."""
    if SANITIZED:
        skip(desc, "a sanitizer build: its RSS is the quarantine's, not the heap's")
    else:
        ok(cond, desc, *diag)

_servers = []
_tmpdirs = []
_shared_tmp = []


def tmpdir(prefix="crucible-e2e-"):
    """A fresh temporary directory, removed at exit once the servers are gone."""
    d = tempfile.mkdtemp(prefix=prefix)
    _tmpdirs.append(d)
    return d


def _default_tmp():
    if not _shared_tmp:
        _shared_tmp.append(tmpdir())
    return _shared_tmp[0]


@atexit.register
def _cleanup():
    for srv in _servers:
        if srv.p.poll() is None:
            srv.p.kill()
            srv.p.wait()
        srv.log.close()
    if os.environ.get("CRUCIBLE_KEEP_TMP"):
        return
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)


def read_all(s, limit=1 << 20):
    """What s receives until the peer closes (or resets, or the socket times out), at most
    about limit bytes."""
    data = b""
    try:
        while len(data) < limit:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except (ConnectionResetError, socket.timeout):
        pass
    return data


class Server:
    """One `crucible serve --listen 127.0.0.1:0`; args are further serve options.

    tmp      where the port file and the log go (default: a directory of this module's own)
    quiet    pass --quiet (no per-request log lines; events() needs quiet=False)
    env      the server's environment (default: this process's)
    timeout  the default timeout of request() in seconds
    stop_timeout  the default time stop() waits for the exit before it kills
    settle   seconds to wait once the port is known (pacing only, never asserted)
    start_timeout  how long to wait for the port file: a liveness bound, far above a start
             (a sanitizer build on a loaded machine took more than 20 s); a server that
             exits fails at once"""

    def __init__(self, *args, tmp=None, quiet=True, env=None, timeout=60, stop_timeout=30,
                 start_timeout=120, settle=0.05):
        tmp = tmp or _default_tmp()
        stamp = time.monotonic_ns()
        self.port_file = os.path.join(tmp, "port-%d" % stamp)
        self.log_path = os.path.join(tmp, "log-%d" % stamp)
        self.log = open(self.log_path, "w+")
        self.timeout = timeout
        self.stop_timeout = stop_timeout
        self.started = time.time()
        cmd = [CRUCIBLE, "serve", "--listen", "127.0.0.1:0", "--port-file", self.port_file]
        cmd += (["--quiet"] if quiet else []) + list(args)
        self.p = track(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.log,
                                        env=env))
        _servers.append(self)
        self.port = None
        deadline = time.time() + start_timeout
        while time.time() < deadline and self.p.poll() is None:
            self.port = self._read_port()
            if self.port is not None:
                break
            time.sleep(0.02)
        if self.port is None:
            self.log.seek(0)
            why = self.log.read()[-500:].strip().replace("\n", " ")
            print("Bail out! crucible serve did not start (%s): %s" % (" ".join(cmd[1:]), why))
            sys.stdout.flush()
            raise SystemExit(255)
        time.sleep(settle)

    def _read_port(self):
        try:
            with open(self.port_file) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def exchange(self, method, path, body=None, headers=None, timeout=None):
        """One request on a fresh connection: (response, body bytes)."""
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        c = http.client.HTTPConnection("127.0.0.1", self.port,
                                       timeout=self.timeout if timeout is None else timeout)
        try:
            c.request(method, path, body=body, headers=headers or {})
            r = c.getresponse()
            return r, r.read()
        finally:
            c.close()

    def request(self, method, path, body=None, headers=None, timeout=None):
        """(status, the answer parsed as JSON or None, the answer as text)."""
        r, data = self.exchange(method, path, body, headers, timeout)
        text = data.decode(errors="replace")
        try:
            j = json.loads(text)
        except ValueError:
            j = None
        return r.status, j, text

    def post(self, path, body, **kw):
        return self.request("POST", path, body, **kw)

    def connect(self, data=b"", timeout=10, source=None):
        """A raw connection (from source, an address of 127/8, if given) that sent data."""
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if source is not None:
                s.bind((source, 0))
            s.settimeout(timeout)
            s.connect(("127.0.0.1", self.port))
            if data:
                s.sendall(data)
        except OSError:
            s.close()
            raise
        return s

    def healthz(self, timeout=5):
        """/healthz's status, or repr() of the error that stopped it."""
        try:
            return self.request("GET", "/healthz", timeout=timeout)[0]
        except (OSError, http.client.HTTPException) as e:
            return repr(e)

    def metrics(self, headers=None):
        return self.request("GET", "/metrics", headers=headers)[2]

    def metric(self, name, headers=None):
        """The value of the first sample of name on /metrics, or None."""
        for line in self.metrics(headers).splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        return None

    def status_kb(self, field):
        """A field of /proc/PID/status in kB (VmRSS, VmHWM...); 0 when absent."""
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def fd_count(self):
        return len(os.listdir("/proc/%d/fd" % self.p.pid))

    def events(self, name):
        """The JSON lines of the server's log whose "event" is name."""
        out = []
        with open(self.log_path) as f:
            for line in f:
                try:
                    j = json.loads(line)
                except ValueError:
                    continue
                if isinstance(j, dict) and j.get("event") == name:
                    out.append(j)
        return out

    def stop(self, timeout=None):
        """SIGTERM and wait: the exit status, or None when it had to be killed."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout=self.stop_timeout if timeout is None else timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return None
