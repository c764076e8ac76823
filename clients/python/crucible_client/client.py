"""The HTTP client of ``crucible serve`` (docs/API.md), standard library only."""

from __future__ import annotations

import base64
import email.utils
import http.client
import json
import logging
import math
import os
import random
import socket
import time
import urllib.parse
import uuid
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from .errors import CrucibleError, CrucibleOverloaded, CrucibleSessionBusy, CrucibleUnavailable

__all__ = ["Client", "BatchStream", "run_item", "verify_item", "DEFAULT_URL"]

DEFAULT_URL = "http://127.0.0.1:8080"

log = logging.getLogger("crucible_client")

Blob = Union[str, bytes, bytearray, memoryview, Mapping[str, str]]

_SOLUTION_KINDS = ("solution", "completion", "response")


# --- request bodies ------------------------------------------------------------------


def _blob(value: Any, what: str) -> Any:
    """A text or binary value as the API wants it: text as is, bytes as {"base64": ...}."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"base64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, Mapping) and list(value.keys()) == ["base64"]:
        return dict(value)  # already encoded by the caller
    raise TypeError("%s must be str or bytes, not %s" % (what, type(value).__name__))


def _files(files: Optional[Mapping[Any, Blob]]) -> Optional[Dict[str, Any]]:
    if files is None:
        return None
    if not isinstance(files, Mapping):
        raise TypeError("files must be a mapping of relative path -> str/bytes")
    out = {}
    for path, content in files.items():
        name = os.fspath(path)
        if isinstance(name, bytes):
            name = name.decode("utf-8")
        out[name] = _blob(content, "files[%r]" % (name,))
    return out


def _put(body: Dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        body[key] = value


def _command(command: Any) -> List[str]:
    if isinstance(command, str):
        # A string is a shell command line, as a task's "command" string is.
        return ["/bin/sh", "-c", command]
    if isinstance(command, (bytes, bytearray)) or not isinstance(command, Sequence):
        raise TypeError("command must be a list of strings (argv) or a shell command string")
    argv = [os.fspath(a) for a in command]
    if not argv or not all(isinstance(a, str) for a in argv):
        raise ValueError("command must be a non-empty list of strings")
    return argv


def _program(command: Any, code: Optional[str], language: Optional[str]) -> Dict[str, Any]:
    """The start of a run or exec body: either a command or code with its language."""
    if (command is None) == (code is None):
        raise ValueError("give exactly one of command or code (with language)")
    body: Dict[str, Any] = {}
    if command is not None:
        if language is not None:
            raise ValueError("language goes with code, not with command")
        body["command"] = _command(command)
    else:
        if not isinstance(code, str):
            raise TypeError("code must be a string")
        if not language:
            raise ValueError("code needs a language (python, c, cpp, java, go, rust, javascript, bash, ...)")
        body["code"] = code
        body["language"] = language
    return body


def _run_body(command: Any, code: Optional[str], language: Optional[str], stdin: Optional[Blob],
              files: Optional[Mapping[Any, Blob]], limits: Optional[Mapping[str, Any]],
              image: Optional[str]) -> Dict[str, Any]:
    body = _program(command, code, language)
    if stdin is not None:
        body["stdin"] = _blob(stdin, "stdin")
    _put(body, "files", _files(files))
    _put(body, "limits", dict(limits) if limits is not None else None)
    _put(body, "image", image)
    return body


def _task(task: Any) -> Dict[str, Any]:
    if isinstance(task, (str, bytes, bytearray)):
        task = json.loads(task)
    if not isinstance(task, Mapping):
        raise TypeError("task must be a native task (a dict, or its JSON text)")
    return dict(task)


def _verify_body(task: Any, solution: Optional[str], completion: Optional[str],
                 response: Optional[str], repeats: Optional[int], reward: Optional[str],
                 task_id: Optional[str] = None, model: Optional[str] = None,
                 language: Optional[str] = None) -> Dict[str, Any]:
    if (task is None) == (task_id is None):
        raise ValueError("give exactly one of task (a native task) or task_id (a task of the "
                         "server's library, crucible serve --db)")
    if task_id is not None and (not isinstance(task_id, str) or not task_id):
        raise TypeError("task_id must be a non-empty string")
    if model is not None:
        if task_id is None:
            raise ValueError("model tags a verification of a library task: it needs task_id")
        if not isinstance(model, str) or not model:
            raise TypeError("model must be a non-empty string")
    if language is not None and (not isinstance(language, str) or not language):
        raise TypeError("language must be a non-empty string naming the solution's language "
                        "(python, c, cpp, java, go, rust, javascript, bash, ...)")
    given = [(k, v) for k, v in zip(_SOLUTION_KINDS, (solution, completion, response)) if v is not None]
    if len(given) != 1:
        raise ValueError("give exactly one of solution, completion or response")
    kind, text = given[0]
    if not isinstance(text, str):
        raise TypeError("%s must be a string" % kind)
    body: Dict[str, Any] = {}
    if task_id is not None:
        body["task_id"] = task_id
        _put(body, "model", model)
    else:
        body["task"] = _task(task)
    body[kind] = text
    _put(body, "language", language)
    _put(body, "repeats", repeats)
    _put(body, "reward", reward)
    return body


def _after(after: Optional[Iterable[int]]) -> Optional[List[int]]:
    if after is None:
        return None
    return [int(i) for i in after]


def run_item(command: Any = None, *, code: Optional[str] = None, language: Optional[str] = None,
             stdin: Optional[Blob] = None, files: Optional[Mapping[Any, Blob]] = None,
             limits: Optional[Mapping[str, Any]] = None, image: Optional[str] = None,
             after: Optional[Iterable[int]] = None) -> Dict[str, Any]:
    """A ``run`` item of a batch (same arguments as :meth:`Client.run`, plus ``after``)."""
    item = {"kind": "run"}
    item.update(_run_body(command, code, language, stdin, files, limits, image))
    _put(item, "after", _after(after))
    return item


def verify_item(task: Any = None, *, task_id: Optional[str] = None, model: Optional[str] = None,
                solution: Optional[str] = None, completion: Optional[str] = None,
                response: Optional[str] = None, language: Optional[str] = None,
                repeats: Optional[int] = None, reward: Optional[str] = None,
                after: Optional[Iterable[int]] = None) -> Dict[str, Any]:
    """A ``verify`` item of a batch (same arguments as :meth:`Client.verify`, plus ``after``)."""
    item = {"kind": "verify"}
    item.update(_verify_body(task, solution, completion, response, repeats, reward, task_id, model,
                             language))
    _put(item, "after", _after(after))
    return item


def _batch_item(item: Mapping[str, Any], i: int) -> Dict[str, Any]:
    if not isinstance(item, Mapping):
        raise TypeError("batch item %d must be a dict (see run_item / verify_item)" % i)
    out = dict(item)
    if "stdin" in out and out["stdin"] is not None:
        out["stdin"] = _blob(out["stdin"], "items[%d].stdin" % i)
    if "files" in out and out["files"] is not None:
        out["files"] = _files(out["files"])
    if "task" in out and isinstance(out["task"], (str, bytes, bytearray)):
        out["task"] = _task(out["task"])
    return out


# --- the task library ----------------------------------------------------------------


def _csv(value: Any, what: str, empty: Optional[str] = None) -> Optional[str]:
    """A list query value: a string as is, a sequence of strings comma-joined (``empty``
    for an empty one)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)) or not isinstance(value, Iterable):
        raise TypeError("%s must be a string or a list of strings" % what)
    words = list(value)
    for w in words:
        if not isinstance(w, str) or not w:
            raise TypeError("%s: each entry must be a non-empty string, not %r" % (what, w))
        if "," in w:
            raise ValueError("%s: %r contains a comma (the list separator)" % (what, w))
    return ",".join(words) if words else empty


def _query(params: Mapping[str, Any]) -> str:
    """``?k=v&...`` (urlencoded) of the parameters that are not None; ``""`` if none is."""
    pairs = []
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            raise TypeError("query parameter %s must be a number or string, not a bool" % key)
        pairs.append((key, value))
    return "?" + urllib.parse.urlencode(pairs) if pairs else ""


def _library_filters(tag: Any = None, source: Optional[str] = None,
                     language: Optional[str] = None, id_prefix: Optional[str] = None,
                     status: Any = None, exclude: Any = None, min_pass: Optional[float] = None,
                     max_pass: Optional[float] = None,
                     model: Optional[str] = None) -> Dict[str, Any]:
    """The query parameters of the library's filters (docs/LIBRARY.md, "Filters")."""
    return {"tag": _csv(tag, "tag"), "source": source, "language": language,
            "id_prefix": id_prefix, "status": _csv(status, "status"),
            "exclude": _csv(exclude, "exclude", empty="none"), "min_pass": min_pass,
            "max_pass": max_pass, "model": model}


def _jsonl(tasks: Any) -> bytes:
    """The body of ``POST /v1/tasks``: JSONL text as is, or one line per task of an iterable
    of tasks (dicts, or their JSON text)."""
    if isinstance(tasks, str):
        return tasks.encode("utf-8")
    if isinstance(tasks, (bytes, bytearray, memoryview)):
        return bytes(tasks)
    if isinstance(tasks, Mapping) or not isinstance(tasks, Iterable):
        raise TypeError("tasks must be an iterable of native tasks (dicts), or JSONL text")
    lines = [json.dumps(_task(t), ensure_ascii=False, allow_nan=False) for t in tasks]
    return "".join(line + "\n" for line in lines).encode("utf-8")


# --- responses -----------------------------------------------------------------------


def _parse_retry_after(value: Optional[str]) -> Optional[float]:
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - datetime.now(timezone.utc)).total_seconds()
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def _error_from(status: int, headers: Any, raw: bytes) -> CrucibleError:
    body: Any = None
    code = "http_%d" % status
    text = raw.decode("utf-8", "replace")
    message = text.strip()[:500] or http.client.responses.get(status, "")
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        err = body["error"]
        code = str(err.get("code") or code)
        message = str(err.get("message") or "")
    if isinstance(body, Mapping) and isinstance(body.get("errors"), list) and body["errors"]:
        # POST /v1/tasks with no valid line: the answer lists the bad lines; name the first.
        if status == 400 and code.startswith("http_"):
            code = "bad_request"
        bad = [e for e in body["errors"] if isinstance(e, Mapping)]
        detail = "; ".join("line %s: %s" % (e.get("line"), e.get("message")) for e in bad[:3])
        if len(bad) > 3:
            detail += "; ..."
        message = "%s: %s" % (message or "no valid task (%s bad)" % body.get("bad", len(bad)),
                              detail)
    if status == 409:  # a session's one-operation-at-a-time rule (code session_busy)
        return CrucibleSessionBusy(status, code, message, body)
    if status == 429:
        return CrucibleOverloaded(status, code, message, body,
                                  retry_after=_parse_retry_after(headers.get("Retry-After")))
    return CrucibleError(status, code, message, body)


# The routes whose requests are jobs: sent with an Idempotency-Key, and sent again with it
# when the connection fails (Client's resend_for).
_JOB_ROUTES = ("/v1/run", "/v1/verify", "/run_code")  # and /v1/batch: Client.batch


class _Exchange:
    """One HTTP request on its own connection; owns the socket until closed."""

    __slots__ = ("conn", "sock", "resp")

    def __init__(self, conn: http.client.HTTPConnection, sock: Optional[socket.socket],
                 resp: http.client.HTTPResponse):
        self.conn = conn
        self.sock = sock
        self.resp = resp

    def close(self) -> None:
        # Shut the socket down first: the response's file object keeps a reference to it,
        # and only a real shutdown tells the server at once that we are gone.
        if self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        try:
            self.resp.close()
        except Exception:  # noqa: BLE001 - closing must not raise
            pass
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001
            pass
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None


class BatchStream:
    """The streamed answer of ``POST /v1/batch``: an iterator of dicts, one per item, in
    completion order (``{"index", "result"}`` or ``{"index", "skipped", "error"}``).

    Lines are read off the connection as they arrive. :meth:`close` (also called by
    ``with``, by ``break`` out of a ``for`` loop once the stream is garbage-collected,
    and on any error) closes the connection, and the server then cancels the items not
    yet finished. A stream that ends before every item was reported raises
    :class:`CrucibleUnavailable` — unless the batch was sent with an Idempotency-Key
    (``reopen``): a stream cut by a reset or an early end is then sent again with the key,
    and the lines of items already reported are skipped (a gateway answers the finished
    items from their kept answers and waits for those in flight: none runs twice).
    """

    # Reopened at most this many times in a row without a new line in between.
    _REOPENS_WITHOUT_PROGRESS = 3

    def __init__(self, exchange: _Exchange, total: int, reopen: Optional[Any] = None):
        self._ex: Optional[_Exchange] = exchange
        self.total = total
        self.headers = exchange.resp.headers  # the answer's HTTP headers
        self.seen: set = set()
        self._reopen = reopen
        self._reopens = 0  # in a row, since the last new line
        self.reopened = 0  # times the stream was sent again

    def _again(self, why: str, cause: Optional[BaseException]) -> bool:
        """The stream broke (why): sent again with its key when it may be; True if so."""
        if self._reopen is None or self._reopens >= self._REOPENS_WITHOUT_PROGRESS:
            return False
        if cause is not None and not isinstance(cause, (ConnectionError, http.client.IncompleteRead)):
            return False  # a timeout: the items may still run; waiting is the caller's choice
        self.close()
        log.info("crucible batch stream broke after %d of %d items (%s); sending it again",
                 len(self.seen), self.total, why)
        self._ex = self._reopen()  # raises when the server stays away past resend_for
        self._reopens += 1
        self.reopened += 1
        return True

    @property
    def closed(self) -> bool:
        return self._ex is None

    def __iter__(self) -> "BatchStream":
        return self

    def __next__(self) -> Dict[str, Any]:
        while True:
            ex = self._ex
            if ex is None:
                raise StopIteration
            try:
                line = ex.resp.readline()
            except (OSError, http.client.HTTPException) as e:
                if self._again(str(e), e):
                    continue
                self.close()
                raise CrucibleUnavailable(
                    "batch stream broke after %d of %d items: %s" % (len(self.seen), self.total, e), e
                ) from e
            if not line:
                if len(self.seen) < self.total and self._again("the stream ended early", None):
                    continue
                self.close()
                if len(self.seen) < self.total:
                    raise CrucibleUnavailable(
                        "batch stream ended after %d of %d items" % (len(self.seen), self.total))
                raise StopIteration
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                self.close()
                raise CrucibleError(200, "bad_response",
                                    "batch line is not JSON: %r" % line[:200]) from e
            if not isinstance(obj, dict) or "index" not in obj:
                self.close()
                err = obj.get("error") if isinstance(obj, dict) else None
                if isinstance(err, Mapping):
                    raise CrucibleError(200, str(err.get("code") or "batch_error"),
                                        str(err.get("message") or ""), obj)
                raise CrucibleError(200, "bad_response", "batch line without an index: %r" % line[:200],
                                    obj)
            if obj["index"] in self.seen:  # reported before the stream was sent again
                continue
            self.seen.add(obj["index"])
            self._reopens = 0
            return obj

    def close(self) -> None:
        """Close the connection (the server cancels the items not finished yet)."""
        ex, self._ex = self._ex, None
        if ex is not None:
            ex.close()

    def collect(self) -> List[Dict[str, Any]]:
        """Read the whole stream; the lines, ordered by index."""
        try:
            return sorted(self, key=lambda d: d["index"])
        finally:
            self.close()

    def __enter__(self) -> "BatchStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass


class Client:
    """A client of ``crucible serve``.

    ``url``: the server (``http://host:port``, optionally with a path prefix; ``https``
    works too). ``token``: the bearer token of a server started with ``--token-file``.
    ``timeout``: seconds for connecting and for each read (for a batch stream: the longest
    wait for the next line).

    Overload: a ``429`` is retried up to ``max_retries`` times (``0`` disables retries),
    sleeping for the server's ``Retry-After`` (or ``retry_backoff * 2**attempt`` without
    one) capped at ``max_retry_wait`` seconds, plus up to 10% jitter within that cap.
    Once retries are exhausted, :class:`CrucibleOverloaded` is raised.

    Jobs (``run``, ``verify``, ``run_code``, ``batch``) are sent with an ``Idempotency-Key`` header, and
    when their connection is refused or reset (a gateway restarting, a load balancer
    moving the client) they are sent again with the same key for up to ``resend_for``
    seconds: a gateway (``crucible serve --broker``) answers a key it admitted before with
    that job's answer instead of running it again; a single node runs it again (a sandboxed
    job has no effect outside itself). ``resend_for=0`` turns this off. Nothing else is
    retried: a request that reached the server may have run.

    The client holds no connection between calls, so one instance can be shared by threads
    (and is cheap to re-create in worker processes).
    """

    def __init__(self, url: str = DEFAULT_URL, token: Optional[str] = None,
                 timeout: Optional[float] = 600, *, max_retries: int = 5,
                 max_retry_wait: float = 30.0, retry_backoff: float = 1.0,
                 user_agent: Optional[str] = None, resend_for: float = 10.0):
        if "://" not in url:
            url = "http://" + url
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ValueError("crucible url must be http:// or https://, not %r" % url)
        if not parts.hostname:
            raise ValueError("crucible url has no host: %r" % url)
        self.url = url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self.token = token
        self.timeout = timeout
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.max_retries = int(max_retries)
        self.max_retry_wait = float(max_retry_wait)
        self.retry_backoff = float(retry_backoff)
        if resend_for < 0:
            raise ValueError("resend_for must be >= 0")
        self.resend_for = float(resend_for)
        from . import __version__

        self.user_agent = user_agent or "crucible-client/%s" % __version__
        self._sleep = time.sleep  # tests replace it

    def __repr__(self) -> str:
        return "Client(%r)" % self.url

    # --- transport ---------------------------------------------------------------

    def _connection(self, timeout: Optional[float]) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(self._host, self._port, timeout=timeout)
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout)

    def _open(self, method: str, path: str, body: Any, accept: str,
              content_type: Optional[str] = None, timeout: Any = "client",
              key: Optional[str] = None) -> _Exchange:
        """Send one request; an _Exchange for a 2xx answer, else the mapped exception.
        ``body``: a JSON value, or bytes sent as they are with ``content_type``; ``key``: its
        Idempotency-Key."""
        headers = {"Accept": accept, "User-Agent": self.user_agent, "Connection": "close"}
        if key:
            headers["Idempotency-Key"] = key
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        data = None
        if isinstance(body, (bytes, bytearray, memoryview)):
            data = bytes(body)
            headers["Content-Type"] = content_type or "application/octet-stream"
        elif body is not None:
            data = json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        conn = self._connection(self.timeout if timeout == "client" else timeout)
        sock = None
        what = "%s %s%s" % (method, self.url, path)
        try:
            conn.connect()
            sock = conn.sock
            try:
                conn.request(method, self._prefix + path, body=data, headers=headers)
            except OSError as send_error:
                # The server may answer (413, 401, ...) and close before reading the whole
                # body: its answer, if it got through, says more than the broken pipe.
                try:
                    resp = conn.getresponse()
                except (OSError, http.client.HTTPException):
                    raise send_error from None
            else:
                resp = conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            conn.close()
            if sock is not None:
                sock.close()
            raise CrucibleUnavailable("%s: %s" % (what, e or type(e).__name__), e) from e
        ex = _Exchange(conn, sock, resp)
        if resp.status < 400:
            return ex
        try:
            raw = resp.read()
        except (OSError, http.client.HTTPException):
            raw = b""
        finally:
            ex.close()
        raise _error_from(resp.status, resp.headers, raw)

    def _retrying(self, fn: Any, resend: bool = False) -> Any:
        attempt = 0
        resend_until = time.monotonic() + self.resend_for
        resend_wait = 0.25
        while True:
            try:
                return fn()
            except CrucibleUnavailable as e:
                # A keyed job whose connection was refused or cut: sent again with its key
                # (not after a timeout: the job may still be running, and waiting longer is
                # the caller's choice of timeout).
                if not resend or not isinstance(e.cause, ConnectionError) or \
                        time.monotonic() + resend_wait > resend_until:
                    raise
                log.info("crucible connection lost (%s); sending again in %.2fs", e.message,
                         resend_wait)
                self._sleep(resend_wait)
                resend_wait = min(resend_wait * 2, 2.0)
            except CrucibleOverloaded as e:
                if attempt >= self.max_retries:
                    raise
                wait = e.retry_after
                if wait is None:
                    wait = self.retry_backoff * (2 ** attempt)
                wait = min(wait * (1.0 + 0.1 * random.random()), self.max_retry_wait)
                attempt += 1
                log.info("crucible overloaded (%s); retry %d/%d in %.2fs",
                         e.message, attempt, self.max_retries, wait)
                if wait > 0:
                    self._sleep(wait)

    def request(self, method: str, path: str, body: Any = None, *, text: bool = False,
                raw: bool = False, content_type: Optional[str] = None,
                timeout: Any = "client") -> Any:
        """One request with the client's retries; the decoded JSON answer (``text=True``:
        the body as a string; ``raw=True``: the body as bytes). ``path`` starts with ``/``.
        ``body`` is sent as JSON, or as is when it is bytes (with ``content_type``).
        ``timeout``: seconds for connecting and each read of this request (``None``: no
        limit), instead of the client's."""
        accept = "text/plain" if text else "*/*" if raw else "application/json"
        key = uuid.uuid4().hex if method == "POST" and path in _JOB_ROUTES else None

        def once() -> Any:
            ex = self._open(method, path, body, accept, content_type, timeout, key)
            try:
                data = ex.resp.read()
            except (OSError, http.client.HTTPException) as e:
                raise CrucibleUnavailable("%s %s: answer cut short: %s" % (method, path, e), e) from e
            finally:
                ex.close()
            if raw:
                return data
            if text:
                return data.decode("utf-8", "replace")
            try:
                return json.loads(data)
            except ValueError as e:
                raise CrucibleError(ex.resp.status, "bad_response",
                                    "%s %s: answer is not JSON: %r" % (method, path, data[:200])) from e

        return self._retrying(once, resend=key is not None and self.resend_for > 0)

    # --- the API -----------------------------------------------------------------

    def run(self, command: Any = None, *, code: Optional[str] = None,
            language: Optional[str] = None, stdin: Optional[Blob] = None,
            files: Optional[Mapping[Any, Blob]] = None,
            limits: Optional[Mapping[str, Any]] = None, image: Optional[str] = None,
            priority: Optional[str] = None, deadline_s: Optional[float] = None) -> Dict[str, Any]:
        """``POST /v1/run``: run a command (argv list; a string runs under ``/bin/sh -c``) or
        a program (``code`` + ``language``). ``stdin`` and ``files`` values are text (str)
        or binary (bytes, sent as base64). Returns the result record (with ``compile`` for
        ``code``)."""
        body = _run_body(command, code, language, stdin, files, limits, image)
        _put(body, "priority", priority)
        _put(body, "deadline_s", deadline_s)
        return self.request("POST", "/v1/run", body)

    def verify(self, task: Any = None, *, task_id: Optional[str] = None,
               model: Optional[str] = None, solution: Optional[str] = None,
               completion: Optional[str] = None, response: Optional[str] = None,
               language: Optional[str] = None, repeats: Optional[int] = None,
               reward: Optional[str] = None, priority: Optional[str] = None,
               deadline_s: Optional[float] = None) -> Dict[str, Any]:
        """``POST /v1/verify``: verify one solution of a task.

        The task is exactly one of ``task`` (a native task, docs/TASKS.md: a dict or its
        JSON text) or ``task_id`` (the current version of a task in the library of a server
        started with ``--db``; a ``404`` :class:`CrucibleError` when it has none). With
        ``task_id`` the outcome is recorded under ``model`` (the server's default tag is
        ``"default"``) and the record carries ``recorded`` and ``model``; ``model`` without
        ``task_id`` is a ``ValueError``.

        Exactly one of ``solution`` (a full program), ``completion`` (appended to the
        task's prompt) or ``response`` (raw model text; crucible takes its last fenced
        block). ``language`` names the solution's language (default: the task's): a
        ``stdio`` task takes a solution in any language crucible knows, so C++ and Python
        rollouts of one problem verify against the same task; an ``assert`` or ``command``
        task only its own, and another language (or an unknown name) is a ``400``
        :class:`CrucibleError` saying why. A response's fenced block is looked for in that
        language. ``reward``: ``"binary"`` or ``"fraction"``. Returns the verification
        record (its ``language`` is the one the solution ran as); its ``reward`` is ``None``
        when ``verdict`` is ``"infra_error"``."""
        body = _verify_body(task, solution, completion, response, repeats, reward, task_id, model,
                            language)
        _put(body, "priority", priority)
        _put(body, "deadline_s", deadline_s)
        return self.request("POST", "/v1/verify", body)

    def batch(self, items: Iterable[Mapping[str, Any]], *, priority: Optional[str] = None,
              deadline_s: Optional[float] = None) -> BatchStream:
        """``POST /v1/batch``: run and verify many items; returns a :class:`BatchStream`
        yielding one dict per item as it finishes.

        ``items`` are dicts with ``kind`` (``run`` or ``verify``), the body of that
        request, and optionally ``after: [indices]`` — build them with :func:`run_item`
        and :func:`verify_item`. The request is sent (and a 4xx/429 raised) by this call;
        results are read lazily. Close the stream (``with``, ``break``, ``.close()``) to
        cancel what has not finished.

        The batch carries an ``Idempotency-Key`` (item ``i`` runs under ``KEY.i`` on a
        gateway): when the connection is refused, reset or cut mid-stream, it is sent again
        with the key for up to ``resend_for`` seconds, and the stream goes on without
        repeating lines already read."""
        body_items = [_batch_item(item, i) for i, item in enumerate(items)]
        body: Dict[str, Any] = {"items": body_items}
        _put(body, "priority", priority)
        _put(body, "deadline_s", deadline_s)
        key = uuid.uuid4().hex if self.resend_for > 0 else None

        def open_stream() -> _Exchange:
            return self._retrying(
                lambda: self._open("POST", "/v1/batch", body, "application/x-ndjson", key=key),
                resend=key is not None)

        return BatchStream(open_stream(), len(body_items), open_stream if key else None)

    # --- the task library (crucible serve --db; docs/LIBRARY.md) ------------------

    def import_tasks(self, tasks: Union[str, bytes, Iterable[Any]]) -> Dict[str, Any]:
        """``POST /v1/tasks``: import native tasks into the server's library.

        ``tasks``: an iterable of tasks (dicts, or their JSON text), or JSONL text (str or
        bytes, one task per line). The valid tasks are imported in one transaction; returns
        ``{"new", "changed", "unchanged", "bad", "errors": [{"line", "message"}]}`` (bad
        lines are listed, at most 100, and skipped). When no line is valid the server
        answers ``400``: a :class:`CrucibleError` (``code`` ``"bad_request"``) whose
        ``body`` is that answer. The whole input is one request (``--max-body``, default
        64 MiB, bounds it)."""
        return self.request("POST", "/v1/tasks", _jsonl(tasks), content_type="application/x-ndjson")

    def tasks(self, *, tag: Union[str, Iterable[str], None] = None, source: Optional[str] = None,
              language: Optional[str] = None, id_prefix: Optional[str] = None,
              status: Union[str, Iterable[str], None] = None,
              exclude: Union[str, Iterable[str], None] = None,
              min_pass: Optional[float] = None, max_pass: Optional[float] = None,
              model: Optional[str] = None, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        """``GET /v1/tasks``: the library's tasks matching the filters, one row each (``id``,
        ``version``, ``status``, ``tags``, ``attempts``, ``accepted``, ``pass_rate``,
        ``bucket``, ...).

        ``tag``: a tag or a list of them (all required). ``status`` and ``exclude``: a
        status (``new``, ``valid``, ``broken``, ``flaky``, ``weak_tests``,
        ``no_reference``) or a list of them (an empty ``exclude`` list excludes nothing).
        ``min_pass`` / ``max_pass``: the band of estimated pass rates, for ``model`` (all
        models' attempts without it). ``limit``: at most that many rows."""
        params = _library_filters(tag, source, language, id_prefix, status, exclude,
                                  min_pass, max_pass, model)
        params["limit"] = limit
        return self.request("GET", "/v1/tasks" + _query(params))["tasks"]

    def task(self, task_id: str, model: Optional[str] = None) -> Dict[str, Any]:
        """``GET /v1/tasks/{id}``: one task's row (statistics for ``model``, all models
        without it), its ``version_history`` (statistics per version and model) and the
        ``task`` itself. An unknown id is a ``404`` :class:`CrucibleError` (``not_found``)."""
        if not isinstance(task_id, str) or not task_id:
            raise TypeError("task_id must be a non-empty string")
        path = "/v1/tasks/" + urllib.parse.quote(task_id, safe="/")
        return self.request("GET", path + _query({"model": model}))

    def sample_tasks(self, n: int, *, min_pass: Optional[float] = None,
                     max_pass: Optional[float] = None, model: Optional[str] = None,
                     seed: Optional[int] = None, explore: Optional[float] = None,
                     exclude: Union[str, Iterable[str], None] = None,
                     tag: Union[str, Iterable[str], None] = None, source: Optional[str] = None,
                     language: Optional[str] = None, id_prefix: Optional[str] = None,
                     status: Union[str, Iterable[str], None] = None) -> Dict[str, Any]:
        """``GET /v1/tasks/sample``: draw ``n`` tasks whose estimated pass rate for ``model``
        lies in [``min_pass``, ``max_pass``], plus a share ``explore`` (server default 0.2)
        of tasks with little evidence (``"explore": true`` in their row).

        Returns ``{"seed", "count", "tasks"}``: the same library, filters and ``seed`` give
        the same tasks in the same order; without ``seed`` the server picks one and returns
        it. ``exclude`` defaults (server-side) to ``broken,flaky,weak_tests``; an empty list
        keeps all. The other filters are those of :meth:`tasks`."""
        params: Dict[str, Any] = {"n": n}
        params.update(_library_filters(tag, source, language, id_prefix, status, exclude,
                                       min_pass, max_pass, model))
        params["seed"] = seed
        params["explore"] = explore
        return self.request("GET", "/v1/tasks/sample" + _query(params))

    def task_stats(self, *, tag: Union[str, Iterable[str], None] = None,
                   source: Optional[str] = None, language: Optional[str] = None,
                   id_prefix: Optional[str] = None, status: Union[str, Iterable[str], None] = None,
                   exclude: Union[str, Iterable[str], None] = None,
                   min_pass: Optional[float] = None, max_pass: Optional[float] = None,
                   model: Optional[str] = None) -> Dict[str, Any]:
        """``GET /v1/tasks/stats``: counts of the matching tasks — ``tasks``, ``status`` (by
        status), ``buckets`` (by difficulty bucket), a 10-bin ``histogram`` of the estimated
        pass rates, ``attempts``, ``accepted``, ``infra_errors`` — for ``model`` (all
        models without it). The filters are those of :meth:`tasks`."""
        params = _library_filters(tag, source, language, id_prefix, status, exclude,
                                  min_pass, max_pass, model)
        return self.request("GET", "/v1/tasks/stats" + _query(params))

    def run_code(self, **fields: Any) -> Dict[str, Any]:
        """``POST /run_code``, the SandboxFusion-compatible route: ``code``, ``language``,
        ``compile_timeout``, ``run_timeout``, ``memory_limit_MB``, ``stdin``, ``files``
        (path -> base64 text; bytes values are encoded here), ``fetch_files``."""
        body = dict(fields)
        files = body.get("files")
        if isinstance(files, Mapping):
            body["files"] = {
                os.fspath(k): (base64.b64encode(bytes(v)).decode("ascii")
                               if isinstance(v, (bytes, bytearray, memoryview)) else v)
                for k, v in files.items()
            }
        return self.request("POST", "/run_code", body)

    # --- sessions (docs/API.md, "Sessions"; crucible_client.session) --------------

    def session(self, *, image: Optional[str] = None, limits: Optional[Mapping[str, Any]] = None,
                writable_root: Optional[bool] = None, ttl_s: Optional[float] = None,
                idle_ttl_s: Optional[float] = None, network: Optional[str] = None) -> Any:
        """``POST /v1/sessions``: a new :class:`~crucible_client.session.Session` (a context
        manager that deletes it); the arguments are those of :meth:`Session.create`."""
        from .session import Session

        return Session.create(self, image=image, limits=limits, writable_root=writable_root,
                              ttl_s=ttl_s, idle_ttl_s=idle_ttl_s, network=network)

    def sessions(self) -> Dict[str, Any]:
        """``GET /v1/sessions``: ``{"sessions": [session info, ...], "count", "max"}``."""
        return self.request("GET", "/v1/sessions")

    def health(self) -> Dict[str, Any]:
        """``GET /healthz``: ``{"status", "slots", "running", "queued"}``."""
        return self.request("GET", "/healthz")

    def metrics(self) -> str:
        """``GET /metrics``: the Prometheus text."""
        return self.request("GET", "/metrics", text=True)

    def wait_ready(self, timeout: float = 30.0, interval: float = 0.1) -> Dict[str, Any]:
        """Poll ``/healthz`` until the server answers; its answer, or the last error."""
        end = time.monotonic() + timeout
        while True:
            try:
                return self.health()
            except CrucibleUnavailable:
                if time.monotonic() >= end:
                    raise
                time.sleep(interval)
