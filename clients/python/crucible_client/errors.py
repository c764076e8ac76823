"""Exceptions raised by the crucible client.

Everything derives from :class:`CrucibleError`, so ``except CrucibleError`` catches any
failure of a request. The subclasses say what kind of failure it was:

- :class:`CrucibleOverloaded` — the server answered ``429`` (its queue is full); the
  client has already retried as configured. ``retry_after`` is the server's advice.
- :class:`CrucibleUnavailable` — no HTTP answer at all: connection refused or reset,
  timeout, a stream cut short. ``status`` is ``None``.
- :class:`CrucibleInfraError` (raised by the reward adapters) — crucible answered, but
  could not reach a verdict (``verdict == "infra_error"``, ``reward`` null).
- :class:`CrucibleSessionBusy` — ``409``: another operation (exec, file transfer, fork,
  verify) of the same session is running; nothing of this request ran.
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = [
    "CrucibleError",
    "CrucibleOverloaded",
    "CrucibleUnavailable",
    "CrucibleInfraError",
    "CrucibleSessionBusy",
]


class CrucibleError(Exception):
    """A request to crucible failed.

    ``status`` is the HTTP status (``None`` when there was no HTTP answer), ``code`` the
    error code of the body ``{"error": {"code", "message"}}`` (``bad_request``,
    ``unauthorized``, ``not_found``, ``method_not_allowed``, ``too_large``,
    ``overloaded``, ``internal``; or a client-side code such as ``unavailable``), and
    ``message`` the human-readable reason.
    """

    def __init__(self, status: Optional[int], code: str, message: str, body: Any = None):
        self.status = status
        self.code = code
        self.message = message
        self.body = body
        super().__init__(status, code, message)

    def __str__(self) -> str:
        where = "HTTP %d" % self.status if self.status is not None else "no answer"
        return "crucible: %s (%s): %s" % (self.code, where, self.message)


class CrucibleOverloaded(CrucibleError):
    """``429``: the server's queue is full and nothing of the request ran.

    ``retry_after`` is the server's ``Retry-After`` in seconds (``None`` when absent or
    unparsable).
    """

    def __init__(self, status: Optional[int], code: str, message: str, body: Any = None,
                 retry_after: Optional[float] = None):
        super().__init__(status, code, message, body)
        self.retry_after = retry_after


class CrucibleUnavailable(CrucibleError):
    """The server could not be reached, or the connection failed mid-answer."""

    def __init__(self, message: str, cause: Optional[BaseException] = None):
        super().__init__(None, "unavailable", message)
        self.cause = cause


class CrucibleInfraError(CrucibleError):
    """crucible could not produce a verdict (its own failure, not the solution's).

    ``record`` is the verification record (``verdict == "infra_error"``), or ``None``
    when the request itself failed (then ``__cause__`` is that failure).
    """

    def __init__(self, message: str, record: Any = None):
        super().__init__(None, "infra_error", message, record)
        self.record = record


class CrucibleSessionBusy(CrucibleError):
    """``409``: the session is running another operation (an exec, a file transfer, a fork
    or a verification); a session does one thing at a time. Nothing of the request ran, so
    it can be sent again once the other operation is over. Not retried by the client: which
    operation should wait is the caller's decision."""
