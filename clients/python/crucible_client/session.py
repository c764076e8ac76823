"""Sessions: a stateful sandbox kept alive between requests (docs/API.md, "Sessions").

A session is one sandbox that lives across many requests: files written by one exec are
there for the next, background processes keep running (within the session's limits), and
the whole state can be forked into new sessions — the shape agentic RL needs (edit code,
run the tests, read the error, edit again) without replaying the episode each turn.

>>> with client.session(limits={"memory_mb": 512}) as s:
...     s.write("main.py", "print(6 * 7)\\n")
...     s.exec(["python3", "main.py"])["stdout"]
'42\\n'

A :class:`Session` is a handle: its state lives in the server, which reclaims it after
``ttl_s`` seconds, or ``idle_ttl_s`` without a request, or on :meth:`Session.close`
(``DELETE``). Requests for a reclaimed session are ``404`` :class:`CrucibleError`. A session
does one operation at a time: a second one while another runs is ``409``
:class:`CrucibleSessionBusy`. The handle itself holds no connection, so handles may be used
from any thread (one operation per session at a time, as the server enforces).

Paths name places in the session's writable area: relative to ``/work`` (the work
directory, where execs start), or absolute under ``/work`` or ``/tmp``. The server refuses
``..``, empty components and symlinks on the way (``400``).
"""

from __future__ import annotations

import base64
import io
import os
import re
import tarfile
import threading
from typing import Any, Dict, List, Mapping, Optional, Union

from .client import Client, _program, _put, _query, _task
from .errors import CrucibleError

__all__ = ["Session", "SESSION_ID", "safe_extract_tar", "check_tar_members", "tar_of_dir",
           "UnsafeArchive"]

# A session id as the server makes them: "s-" and 24 lowercase hex digits. Checked before
# an id is put into a URL, so a handle can only ever address a session route.
SESSION_ID = re.compile(r"\As-[0-9a-f]{24}\Z")

Data = Union[str, bytes, bytearray, memoryview]


def _bytes(data: Data, what: str) -> bytes:
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError("%s must be str or bytes, not %s" % (what, type(data).__name__))


def _path(path: Any, what: str = "path") -> str:
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = p.decode("utf-8")
    if not isinstance(p, str) or not p:
        raise ValueError("%s must be a non-empty path (relative to /work, or under /work or /tmp)"
                         % what)
    return p


def _mode(mode: Union[int, str, None]) -> Optional[str]:
    """A file mode as the files route takes it: octal digits (``0755``)."""
    if mode is None:
        return None
    if isinstance(mode, bool):
        raise TypeError("mode must be an int (0o755) or octal digits ('755')")
    if isinstance(mode, int):
        value = mode
    elif isinstance(mode, str) and re.fullmatch(r"0?[0-7]{1,4}", mode):
        value = int(mode, 8)
    else:
        raise ValueError("mode must be an int (0o755) or octal digits ('755'), not %r" % (mode,))
    if not 0 <= value <= 0o7777:
        raise ValueError("mode %o is not a file mode" % value)
    return "0%o" % value


def _limits(limits: Optional[Mapping[str, Any]]) -> Optional[Dict[str, Any]]:
    if limits is None:
        return None
    if not isinstance(limits, Mapping):
        raise TypeError("limits must be a mapping (memory_mb, pids, disk_mb, cpu_time, output_kb)")
    return dict(limits)


def _create_body(image: Optional[str] = None, limits: Optional[Mapping[str, Any]] = None,
                 writable_root: Optional[bool] = None, ttl_s: Optional[float] = None,
                 idle_ttl_s: Optional[float] = None,
                 network: Optional[str] = None) -> Dict[str, Any]:
    body: Dict[str, Any] = {}
    _put(body, "image", image)
    _put(body, "limits", _limits(limits))
    if writable_root is not None:
        body["writable_root"] = bool(writable_root)
    _put(body, "ttl_s", ttl_s)
    _put(body, "idle_ttl_s", idle_ttl_s)
    if network is not None and network not in ("none", "loopback"):
        raise ValueError("network must be 'none' or 'loopback', not %r" % (network,))
    _put(body, "network", network)
    return body


def _exec_body(command: Any, code: Optional[str], language: Optional[str], cwd: Optional[str],
               env: Optional[Mapping[str, str]], stdin: Optional[Data],
               timeout_s: Optional[float]) -> Dict[str, Any]:
    body = _program(command, code, language)
    if cwd is not None:
        body["cwd"] = _path(cwd, "cwd")
    if env is not None:
        if not isinstance(env, Mapping):
            raise TypeError("env must be a mapping of str -> str")
        for k, v in env.items():
            if not isinstance(k, str) or not isinstance(v, str) or not k or "=" in k:
                raise ValueError("env: %r=%r is not a variable (str name without '=', str value)"
                                 % (k, v))
        body["env"] = dict(env)
    if stdin is not None:
        if isinstance(stdin, str):
            body["stdin"] = stdin
        elif isinstance(stdin, (bytes, bytearray, memoryview)):
            body["stdin_b64"] = base64.b64encode(bytes(stdin)).decode("ascii")
        else:
            raise TypeError("stdin must be str or bytes, not %s" % type(stdin).__name__)
    _put(body, "timeout_s", timeout_s)
    return body


def _read_timeout(client: Client, timeout_s: Optional[float]) -> Any:
    """The HTTP read timeout of an exec: the client's, or longer when the exec may run
    longer (its answer comes only when it ends), with a minute to spare for queueing and
    the answer itself."""
    if client.timeout is None or timeout_s is None:
        return "client"
    try:
        return max(float(client.timeout), float(timeout_s) + 60.0)
    except (TypeError, ValueError):
        return "client"  # a bad timeout_s: the server names the problem


# --- tar archives --------------------------------------------------------------------


class UnsafeArchive(ValueError):
    """A tar archive that would write outside its destination, or holds what a directory of
    files should not (devices, FIFOs, hard links): refused before anything is written."""


def _check_name(name: str, what: str) -> None:
    if not name or name.startswith("/") or "\0" in name:
        raise UnsafeArchive("%s %r: an absolute or empty path" % (what, name))
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafeArchive("%s %r: a '..' component" % (what, name))


def check_tar_members(members: List[tarfile.TarInfo]) -> None:
    """Refuse an archive (:class:`UnsafeArchive` naming the entry) unless every entry is a
    regular file, a directory or a symlink whose name and target are relative and without
    ``..``. A relative target without ``..`` can only lead further down from the link's own
    directory, so no chain of such links reaches outside the destination (a lexical check of
    targets with ``..`` would not do: ``a -> .`` then ``b -> a/..``)."""
    for m in members:
        _check_name(m.name, "entry")
        if m.issym():
            _check_name(m.linkname, "symlink %r ->" % m.name)
        elif not (m.isreg() or m.isdir()):
            raise UnsafeArchive("entry %r: a %s, not a file, directory or symlink"
                                % (m.name, "hard link" if m.islnk() else "device or fifo"))


def safe_extract_tar(data: bytes, dest: Union[str, os.PathLike]) -> int:
    """Unpack a tar (plain or gzip) into ``dest`` (made when missing); the number of entries.

    The archive came from a sandbox, so it is hostile: every entry is checked first
    (:func:`check_tar_members`) and nothing is written when one is refused. Extraction then
    uses tarfile's ``data`` filter where this Python has it (3.12, and the security releases
    of 3.8-3.11), which also drops setuid bits and ownership; without it, modes are masked to
    permission bits here. Links already in ``dest`` are the caller's: unpack into a new or
    empty directory."""
    dest = os.fspath(dest)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tf:
        members = tf.getmembers()
        check_tar_members(members)
        os.makedirs(dest, exist_ok=True)
        if hasattr(tarfile, "data_filter"):
            tf.extractall(dest, members=members, filter="data")
        else:
            for m in members:
                m.mode &= 0o777
                m.uid = m.gid = os.getuid()
                m.uname = m.gname = ""
            tf.extractall(dest, members=members)  # noqa: S202 - checked above
    return len(members)


def tar_of_dir(local_dir: Union[str, os.PathLike]) -> bytes:
    """An uncompressed tar of the tree at ``local_dir``, paths relative to it: regular files,
    directories and symlinks (stored as links, never followed); other kinds of file are left
    out. Ownership is cleared and modes kept to permission bits (no setuid), as the server's
    unpacker wants."""
    root = os.fspath(local_dir)
    if not os.path.isdir(root):
        raise NotADirectoryError("%s is not a directory" % root)

    def clean(ti: tarfile.TarInfo) -> Optional[tarfile.TarInfo]:
        if not (ti.isreg() or ti.isdir() or ti.issym()):
            return None
        ti.uid = ti.gid = 0
        ti.uname = ti.gname = ""
        ti.mode &= 0o777
        return ti

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name in sorted(os.listdir(root)):
            tf.add(os.path.join(root, name), arcname=name, recursive=True, filter=clean)
    return buf.getvalue()


# --- the session ---------------------------------------------------------------------


class Session:
    """A handle of one session of ``crucible serve``; a context manager that closes it.

    Make one with :meth:`Client.session` or :meth:`Session.create`; attach to an existing
    one with ``Session(client, id)``. ``info`` is the server's description of it as last
    seen (the ``POST`` answer, refreshed by :meth:`info`).
    """

    def __init__(self, client: Client, session_id: str, info: Optional[Mapping[str, Any]] = None):
        if not isinstance(session_id, str) or not SESSION_ID.match(session_id):
            raise ValueError("not a session id (s- and 24 hex digits): %r" % (session_id,))
        self.client = client
        self.id = session_id
        self.last_info: Dict[str, Any] = dict(info) if info else {"id": session_id}
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def create(cls, client: Client, *, image: Optional[str] = None,
               limits: Optional[Mapping[str, Any]] = None, writable_root: Optional[bool] = None,
               ttl_s: Optional[float] = None, idle_ttl_s: Optional[float] = None,
               network: Optional[str] = None) -> "Session":
        """``POST /v1/sessions``: a new session. ``image``: ``"host"`` (the default), a stored
        image ``NAME:TAG`` or ``sha256:...``. ``limits``: ``memory_mb``, ``pids``, ``disk_mb``,
        ``cpu_time`` (CPU seconds over all execs), ``output_kb``. ``writable_root``: the
        image's root writable (an overlay). ``ttl_s`` (server default 3600) and ``idle_ttl_s``
        (600): reclaimed after that long, or that long without a request. ``network``:
        ``"loopback"`` (default: the sandbox's own lo) or ``"none"``. Beyond the server's
        ``--max-sessions``: :class:`CrucibleOverloaded` (``429``, retried as configured)."""
        body = _create_body(image, limits, writable_root, ttl_s, idle_ttl_s, network)
        info = client.request("POST", "/v1/sessions", body)
        return cls(client, info["id"], info)

    def __repr__(self) -> str:
        return "Session(%r%s)" % (self.id, ", closed" if self._closed else "")

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called on this handle."""
        return self._closed

    def _path(self, tail: str = "") -> str:
        return "/v1/sessions/" + self.id + tail

    # --- running -----------------------------------------------------------------

    def exec(self, command: Any = None, *, code: Optional[str] = None,
             language: Optional[str] = None, cwd: Optional[str] = None,
             env: Optional[Mapping[str, str]] = None, stdin: Optional[Data] = None,
             timeout_s: Optional[float] = None, priority: Optional[str] = None) -> Dict[str, Any]:
        """``POST /v1/sessions/{id}/exec``: run a command (an argv list; a string runs under
        ``/bin/sh -c``) or a program (``code`` + ``language``, written to a file in ``/work``
        and run, compiled first where the language needs it) in the session.

        ``cwd`` defaults to ``/work``; ``env`` adds variables; ``stdin`` is text (str) or
        binary (bytes); ``timeout_s`` is the wall limit (server default 30 s); ``priority``
        (``high``, ``normal``, ``low``) places the exec among the server's jobs. Returns the
        result record, the shape of :meth:`Client.run`'s (``status``, ``exit_code``,
        ``stdout``, ``stderr``, ``wall_time``, ``cpu_time``, ``memory_kb``, ...) with
        ``session``. A ``timeout`` kills this exec's processes only: the session lives on."""
        body = _exec_body(command, code, language, cwd, env, stdin, timeout_s)
        _put(body, "priority", priority)
        return self.client.request("POST", self._path("/exec"), body,
                                   timeout=_read_timeout(self.client, timeout_s))

    # --- files -------------------------------------------------------------------

    def write(self, path: Any, data: Data, mode: Union[int, str, None] = None) -> Dict[str, Any]:
        """``PUT .../files?path=P``: create or replace the file at ``path`` (parents made)
        with ``data`` (str is written as UTF-8). ``mode``: ``0o755`` or ``"755"`` (server
        default 0644). Returns ``{"path", "size"}``. A full session disk is ``507``."""
        q = _query({"path": _path(path), "mode": _mode(mode)})
        return self.client.request("PUT", self._path("/files") + q, _bytes(data, "data"),
                                   content_type="application/octet-stream")

    def read(self, path: Any) -> bytes:
        """``GET .../files?path=P``: the bytes of the regular file at ``path`` (``404``
        missing; ``400`` a directory, a symlink on the way, or another kind of file)."""
        q = _query({"path": _path(path)})
        return self.client.request("GET", self._path("/files") + q, raw=True)

    def read_text(self, path: Any, encoding: str = "utf-8", errors: str = "replace") -> str:
        """:meth:`read` decoded."""
        return self.read(path).decode(encoding, errors)

    def listdir(self, path: Any = "/work") -> List[Dict[str, Any]]:
        """``GET .../files?path=DIR&list=1``: the entries of a directory, sorted by name:
        ``{"name", "type" ("file", "dir", "symlink", "other"), "size", "mode", "mtime"}``."""
        q = _query({"path": _path(path), "list": 1})
        return self.client.request("GET", self._path("/files") + q)["entries"]

    def upload_tar(self, remote_dir: Any, tar: bytes) -> Dict[str, Any]:
        """``PUT .../files?path=DIR&format=tar``: unpack a tar (or tar.gz) into ``remote_dir``
        (made when missing). A hostile archive (absolute paths, ``..``, devices, hard links,
        setuid bits) is a ``400`` naming the entry, and nothing of it is written."""
        q = _query({"path": _path(remote_dir, "remote_dir"), "format": "tar"})
        return self.client.request("PUT", self._path("/files") + q, _bytes(tar, "tar"),
                                   content_type="application/x-tar")

    def download_tar(self, remote_dir: Any = "/work") -> bytes:
        """``GET .../files?path=DIR&format=tar``: a tar of the tree at ``remote_dir``, paths
        relative to it. Its content is the sandbox's: see :func:`safe_extract_tar`."""
        q = _query({"path": _path(remote_dir, "remote_dir"), "format": "tar"})
        return self.client.request("GET", self._path("/files") + q, raw=True)

    def upload_dir(self, local_dir: Union[str, os.PathLike], remote_dir: Any = "/work") -> Dict[str, Any]:
        """Copy the local tree at ``local_dir`` into ``remote_dir`` in one request (a tar:
        regular files, directories and symlinks as links). Returns ``{"path", "entries"}``."""
        return self.upload_tar(remote_dir, tar_of_dir(local_dir))

    def download_dir(self, remote_dir: Any, local_dir: Union[str, os.PathLike]) -> int:
        """Copy the tree at ``remote_dir`` into ``local_dir`` (made when missing; best new or
        empty); the number of entries. The archive is checked before anything is written:
        absolute paths, ``..``, links leading out, devices and hard links raise
        :class:`UnsafeArchive` (the session's code could have made any of them)."""
        return safe_extract_tar(self.download_tar(remote_dir), local_dir)

    # --- fork, verify, info, close -----------------------------------------------

    def fork(self, n: Optional[int] = None, *, ttl_s: Optional[float] = None,
             idle_ttl_s: Optional[float] = None) -> Union["Session", List["Session"]]:
        """``POST .../fork``: a new session with a copy of this one's files (not its
        processes); its ``info["parent"]`` is this session's id. ``fork()`` returns one
        :class:`Session`; ``fork(n)`` a list of ``n`` (one state expanded into a group of
        rollouts). If one of the ``n`` fails, those already made are closed and the error
        raised."""
        body: Dict[str, Any] = {}
        _put(body, "ttl_s", ttl_s)
        _put(body, "idle_ttl_s", idle_ttl_s)
        if n is None:
            info = self.client.request("POST", self._path("/fork"), body)
            return Session(self.client, info["id"], info)
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError("n must be a count of forks (an int >= 0)")
        made: List[Session] = []
        try:
            for _ in range(n):
                info = self.client.request("POST", self._path("/fork"), body)
                made.append(Session(self.client, info["id"], info))
        except BaseException:
            for s in made:
                try:
                    s.close()
                except CrucibleError:
                    pass
            raise
        return made

    def verify(self, task: Any = None, *, task_id: Optional[str] = None,
               priority: Optional[str] = None) -> Dict[str, Any]:
        """``POST .../verify``: verify the session's current files against a task — a
        native task (dict or JSON text; e.g. a ``command``-harness task whose test command
        runs in ``/work``) or ``task_id`` (a task of the server's library, ``--db``).
        Returns the verification record (``verdict``, ``reward``, ``tests``, ...); the
        session lives on."""
        if (task is None) == (task_id is None):
            raise ValueError("give exactly one of task (a native task) or task_id")
        if task_id is not None:
            if not isinstance(task_id, str) or not task_id:
                raise TypeError("task_id must be a non-empty string")
            body: Dict[str, Any] = {"task_id": task_id}
        else:
            body = {"task": _task(task)}
        _put(body, "priority", priority)
        return self.client.request("POST", self._path("/verify"), body)

    def info(self) -> Dict[str, Any]:
        """``GET /v1/sessions/{id}``: the session's description with ``age_s``, ``idle_s``,
        ``execs``, ``busy`` and ``usage`` (``cpu_time_s``, ``memory_kb``,
        ``memory_peak_kb``, ``pids``, ``disk_kb``, ``disk_limit_kb``)."""
        info = self.client.request("GET", self._path())
        self.last_info = info
        return info

    def close(self) -> None:
        """``DELETE /v1/sessions/{id}``: end the session (its processes killed, its files
        gone). Idempotent: a second call, or a session the server already reclaimed
        (``404``), is not an error."""
        with self._lock:
            if self._closed:
                return
            try:
                self.client.request("DELETE", self._path())
            except CrucibleError as e:
                if e.status != 404:
                    raise
            self._closed = True

