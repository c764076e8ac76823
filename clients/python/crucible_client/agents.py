"""``Sandbox`` adapters: a crucible session behind the interfaces agent frameworks use.

Agent-RL frameworks drive their environments through a small sandbox interface and plug
providers (Docker, Modal, E2B, Daytona, ...) in behind it. These classes make crucible one
of those providers, one session per sandbox:

- :class:`Sandbox` — synchronous, the shape of rllm's sandbox protocol
  (``rllm/sandbox/protocol.py``): ``exec(command, timeout=None, user=None) -> stdout``
  (raising on a non-zero exit, as rllm's backends do), ``upload_file``, ``upload_dir``,
  ``close``; plus ``run`` (the exit code, stdout and stderr without raising),
  ``read_file``, ``write_file``, ``download_file``, ``download_dir``, ``fork`` and
  ``is_alive``.
- :class:`AsyncSandbox` — asynchronous, the shape of slime's agent sandbox
  (``slime/agent/sandbox.py``): ``async with``, ``exec(cmd, *, user, env, timeout, check)
  -> (exit_code, stdout, stderr)``, ``write_file(path, str | bytes | Path)``,
  ``read_file(path) -> str``, ``sandbox_id``; plus the transfers and ``close``.

Differences to know: a session runs everything as its one unprivileged user, so ``user``
is accepted and ignored; paths are those of the session (relative to ``/work``, or under
``/work`` or ``/tmp``); the network is the sandbox's own loopback at most, so there is no
``get_endpoint``. ``exec`` and ``run`` take a shell command line (run by ``/bin/sh -c``).
"""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from .client import DEFAULT_URL, Client
from .errors import CrucibleError
from .session import Session

__all__ = ["Sandbox", "AsyncSandbox", "CommandFailed", "exit_code_of"]

# What a result that did not exit by itself reports as its exit code: timeout(1)'s 124 for
# a timeout, 137 (128 + SIGKILL) for the other limits, 1 for crucible's own failures.
_LIMIT_CODES = {"timeout": 124, "memory_limit": 137, "output_limit": 137, "cpu_limit": 137}


def exit_code_of(result: Mapping[str, Any]) -> int:
    """A shell-style exit code for an exec's result record: the program's own when it
    exited; 128 + the signal when it was killed; 124 for a timeout, 137 for another limit,
    1 for anything else (such as ``sandbox_error``)."""
    code = result.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    sig = result.get("signal")
    if isinstance(sig, int) and not isinstance(sig, bool) and sig > 0:
        return 128 + sig
    return _LIMIT_CODES.get(str(result.get("status")), 1)


class CommandFailed(subprocess.CalledProcessError, RuntimeError):
    """A command exited non-zero (or hit a limit): ``returncode``, ``cmd``, ``output``
    (stdout), ``stderr``, and ``result`` (crucible's record). Both a
    ``subprocess.CalledProcessError`` (what rllm's backends raise) and a ``RuntimeError``
    (what slime's E2B backend raises on ``check=True``), so either's handlers catch it."""

    def __init__(self, returncode: int, cmd: str, output: str, stderr: str,
                 result: Mapping[str, Any]):
        super().__init__(returncode, cmd, output, stderr)
        self.result = dict(result)

    def __str__(self) -> str:
        tail = (self.stderr or "").strip()[-400:]
        return "command %r exited %d (%s)%s" % (self.cmd, self.returncode,
                                               self.result.get("status"),
                                               ": " + tail if tail else "")


def _content(content: Union[str, bytes, bytearray, Path]) -> bytes:
    if isinstance(content, Path):
        return content.read_bytes()
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, (bytes, bytearray, memoryview)):
        return bytes(content)
    raise TypeError("content must be str, bytes or a pathlib.Path, not %s" % type(content).__name__)


class Sandbox:
    """A crucible session as a synchronous agent sandbox (rllm's protocol, and more).

    ``Sandbox(url=..., token=..., **session_options)`` makes a new session (the options
    of :meth:`Session.create`: ``image``, ``limits``, ``writable_root``, ``ttl_s``,
    ``idle_ttl_s``, ``network``); ``Sandbox(session=s)`` wraps an existing
    :class:`Session`. A context manager: leaving it closes the session.
    """

    def __init__(self, url: Optional[str] = None, *, token: Optional[str] = None,
                 client: Optional[Client] = None, session: Optional[Session] = None,
                 default_timeout: float = 300.0, **session_options: Any):
        if session is not None:
            if client is not None or session_options:
                raise ValueError("give session, or the options of a new one, not both")
            self.session = session
        else:
            if client is None:
                client = Client(url or os.environ.get("CRUCIBLE_URL") or DEFAULT_URL,
                                token=token or os.environ.get("CRUCIBLE_TOKEN") or None)
            elif url is not None or token is not None:
                raise ValueError("give client, or url and token, not both")
            self.session = Session.create(client, **session_options)
        self.default_timeout = float(default_timeout)

    @property
    def sandbox_id(self) -> str:
        """The session id."""
        return self.session.id

    def __repr__(self) -> str:
        return "Sandbox(%r)" % self.session.id

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- commands ------------------------------------------------------------------

    def run(self, command: str, *, timeout: Optional[float] = None,
            env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
            stdin: Union[str, bytes, None] = None, check: bool = False) -> Tuple[int, str, str]:
        """Run a shell command line; ``(exit_code, stdout, stderr)`` (see
        :func:`exit_code_of`). ``check=True`` raises :class:`CommandFailed` unless it
        exited 0."""
        r = self.session.exec(command, timeout_s=timeout if timeout is not None else self.default_timeout,
                              env=env, cwd=cwd, stdin=stdin)
        code = exit_code_of(r)
        out, err = str(r.get("stdout") or ""), str(r.get("stderr") or "")
        if check and (code != 0 or r.get("status") != "ok"):
            raise CommandFailed(code, command, out, err, r)
        return code, out, err

    def exec(self, command: str, timeout: Optional[float] = None,
             user: Optional[str] = None) -> str:  # noqa: ARG002 - user: one user in a session
        """rllm's ``exec``: run a shell command line, return its stdout; a non-zero exit or
        a limit raises :class:`CommandFailed` (a ``subprocess.CalledProcessError``)."""
        return self.run(command, timeout=timeout, check=True)[1]

    def run_code(self, code: str, language: str = "python", *,
                 timeout: Optional[float] = None) -> Dict[str, Any]:
        """Run a program (written to a file in ``/work``, compiled where needed); the
        result record."""
        return self.session.exec(code=code, language=language,
                                 timeout_s=timeout if timeout is not None else self.default_timeout)

    # --- files ---------------------------------------------------------------------

    def write_file(self, path: str, content: Union[str, bytes, Path], *,
                   mode: Union[int, str, None] = None) -> None:
        """Write ``content`` (text as UTF-8, bytes, or the bytes of a local ``Path``)."""
        self.session.write(path, _content(content), mode=mode)

    def read_file(self, path: str) -> str:
        """The file's text (UTF-8, undecodable bytes replaced); ``download_file`` for bytes."""
        return self.session.read_text(path)

    def download_file(self, path: str) -> bytes:
        """The file's bytes."""
        return self.session.read(path)

    def upload_file(self, local_path: Union[str, os.PathLike], remote_path: str) -> None:
        """Copy a local file into the sandbox, keeping its permission bits."""
        local = Path(local_path)
        self.session.write(remote_path, local.read_bytes(), mode=local.stat().st_mode & 0o777)

    def upload_dir(self, local_path: Union[str, os.PathLike], remote_path: str) -> None:
        """Copy a local tree into ``remote_path`` (one tar request)."""
        self.session.upload_dir(local_path, remote_path)

    def download_dir(self, remote_path: str, local_path: Union[str, os.PathLike]) -> int:
        """Copy the tree at ``remote_path`` into ``local_path`` (checked: see
        :func:`crucible_client.session.safe_extract_tar`); the number of entries."""
        return self.session.download_dir(remote_path, local_path)

    def listdir(self, path: str = "/work") -> list:
        """The directory's entries (``name``, ``type``, ``size``, ``mode``, ``mtime``)."""
        return self.session.listdir(path)

    # --- lifecycle -----------------------------------------------------------------

    def fork(self) -> "Sandbox":
        """A new sandbox with a copy of this one's files (not its processes)."""
        return Sandbox(session=self.session.fork(), default_timeout=self.default_timeout)

    def is_alive(self) -> bool:
        """Whether the server still holds the session."""
        if self.session.closed:
            return False
        try:
            self.session.info()
            return True
        except CrucibleError as e:
            if e.status == 404:
                return False
            raise

    def close(self) -> None:
        """Delete the session (idempotent)."""
        self.session.close()


class AsyncSandbox:
    """A crucible session as an asynchronous agent sandbox (slime's interface, and more).

    ``async with AsyncSandbox(url=..., **session_options) as sb:`` makes the session on
    entry and deletes it on exit (``await sb.start()`` / ``await sb.close()`` do the same
    by hand). The client is synchronous: each call runs in the loop's default executor."""

    def __init__(self, url: Optional[str] = None, *, token: Optional[str] = None,
                 client: Optional[Client] = None, default_timeout: float = 120.0,
                 **session_options: Any):
        self._args = dict(url=url, token=token, client=client, default_timeout=default_timeout,
                          **session_options)
        self.sync: Optional[Sandbox] = None
        self.sandbox_id = ""

    async def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(fn, *args, **kwargs))

    def _sb(self) -> Sandbox:
        if self.sync is None:
            raise RuntimeError("the sandbox is not started (async with AsyncSandbox(...), or start())")
        return self.sync

    async def start(self) -> "AsyncSandbox":
        """Make the session (``__aenter__``)."""
        if self.sync is None:
            self.sync = await self._call(lambda: Sandbox(**self._args))
            self.sandbox_id = self.sync.sandbox_id
        return self

    async def __aenter__(self) -> "AsyncSandbox":
        return await self.start()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        await self.close()

    async def exec(self, cmd: str, *, user: str = "root",  # noqa: ARG002 - one user in a session
                   env: Optional[Dict[str, str]] = None, timeout: float = 120,
                   check: bool = False) -> Tuple[int, str, str]:
        """slime's ``exec``: ``(exit_code, stdout, stderr)``; ``check=True`` raises
        :class:`CommandFailed` (a ``RuntimeError``, as slime's E2B backend raises) unless it
        exited 0."""
        return await self._call(self._sb().run, cmd, timeout=timeout, env=env, check=check)

    async def write_file(self, sandbox_path: str, content: Union[str, bytes, Path], *,
                         user: str = "root") -> None:  # noqa: ARG002
        """Write ``content`` (text, bytes, or a local ``Path`` streamed from the host)."""
        await self._call(self._sb().write_file, sandbox_path, content)

    async def read_file(self, sandbox_path: str, *, user: str = "root") -> str:  # noqa: ARG002
        """The file's text; like slime's E2B backend, ``""`` when it cannot be read (missing,
        not a file)."""
        try:
            return await self._call(self._sb().read_file, sandbox_path)
        except CrucibleError as e:
            if e.status in (400, 404):
                return ""
            raise

    async def upload_dir(self, local_path: Union[str, os.PathLike], remote_path: str) -> None:
        await self._call(self._sb().upload_dir, local_path, remote_path)

    async def download_dir(self, remote_path: str, local_path: Union[str, os.PathLike]) -> int:
        return await self._call(self._sb().download_dir, remote_path, local_path)

    async def fork(self) -> "AsyncSandbox":
        """A new, started sandbox with a copy of this one's files."""
        child = AsyncSandbox(default_timeout=self._sb().default_timeout)
        child.sync = await self._call(self._sb().fork)
        child.sandbox_id = child.sync.sandbox_id
        return child

    async def close(self) -> None:
        """Delete the session (idempotent)."""
        if self.sync is not None:
            await self._call(self.sync.close)
