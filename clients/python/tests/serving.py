"""``crucible serve`` for the client's tests: the binary (``$CRUCIBLE``, default
``<repo>/build/crucible``), why it cannot serve (a reason to skip), and a server on a free
loopback port that a test starts and stops. conftest.py makes fixtures of it."""
import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from crucible_client import Client, CrucibleError

REPO = Path(__file__).resolve().parents[3]
CRUCIBLE = os.environ.get("CRUCIBLE") or str(REPO / "build" / "crucible")


def no_serve_reason():
    if not os.access(CRUCIBLE, os.X_OK):
        return "no crucible binary at %s (build it with make, or set CRUCIBLE)" % CRUCIBLE
    try:
        r = subprocess.run([CRUCIBLE, "serve", "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "%s serve --help failed: %s" % (CRUCIBLE, e)
    if r.returncode != 0:
        out = r.stdout.decode("utf-8", "replace").strip().splitlines()
        return "%s has no 'serve' command yet (serve --help exited %d: %s)" % (
            CRUCIBLE, r.returncode, out[0] if out else "")
    return None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """``crucible serve`` on a free port; stopped with SIGTERM."""

    def __init__(self, *args):
        self.args = list(args)
        self.log = tempfile.NamedTemporaryFile(prefix="crucible-serve-", suffix=".log", delete=False)
        for attempt in range(3):
            self.port = free_port()
            self.url = "http://127.0.0.1:%d" % self.port
            self.proc = subprocess.Popen(
                [CRUCIBLE, "serve", "--listen", "127.0.0.1:%d" % self.port] + self.args,
                stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
            if self._wait_ready():
                return
            if self.proc.poll() is None or "in use" not in self.output():
                break
        out = self.output()
        self.stop()
        raise RuntimeError("crucible serve did not come up (%s):\n%s" % (" ".join(self.args), out))

    def _wait_ready(self, timeout=30.0):
        c = Client(self.url, timeout=2)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            try:
                c.health()  # /healthz needs no token
                return True
            except CrucibleError:
                time.sleep(0.1)
        return False

    def output(self):
        try:
            with open(self.log.name, "rb") as f:
                return f.read().decode("utf-8", "replace")[-4000:]
        except OSError:
            return ""

    def stop(self):
        """SIGTERM; the exit status (None if it had to be killed)."""
        status = self.proc.poll()
        if status is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                status = self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                status = None
        self.final_output = self.output()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass
        return status
