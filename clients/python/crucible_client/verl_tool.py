"""A code-interpreter tool for verl's multi-turn rollouts, backed by crucible sessions.

(Interfaces read from verl at commit b178a3cd, 2026-01-29: verl/tools/base_tool.py,
verl/tools/schemas.py, verl/tools/utils/tool_registry.py, and _call_tool in
verl/experimental/agent_loop/tool_agent_loop.py.)

verl's agent loop (``verl/experimental/agent_loop/tool_agent_loop.py``) hands a model's tool
calls to tools that follow ``verl.tools.base_tool.BaseTool``: ``create(instance_id=None,
**kwargs) -> (instance_id, ToolResponse)``, ``execute(instance_id, parameters, **kwargs) ->
(ToolResponse, reward, metrics)``, ``calc_reward(instance_id)`` and ``release(instance_id)``,
all coroutines; the tool is built as ``cls(config=..., tool_schema=...)`` from a tool-config
YAML (``examples/verl_crucible_tool_config.yaml``).

:class:`CrucibleSessionTool` runs each call in a crucible session (``crucible_client.session``)
that lives for the whole **trajectory**, so a file written or a package installed in one turn
is there in the next — unlike a stateless code tool, which starts from nothing every call.

Which calls share a session. The current agent loop creates and releases a tool instance
around *every* call, and passes the trajectory's ``AgentData`` as ``execute(...,
agent_data=...)``: there the session belongs to ``agent_data.request_id`` (the trajectory),
its id is put in ``agent_data.extra_fields["crucible_session"]`` (a reward function can
verify it), and it is deleted when the trajectory's ``AgentData`` is garbage-collected (or
by :meth:`CrucibleSessionTool.close_trajectory`; crucible's idle TTL reclaims it otherwise).
Callers that keep one instance for a whole trajectory and pass no ``agent_data`` (verl's
earlier sglang rollout did) get one session per instance, deleted by ``release``.

The module imports without verl: verl's ``BaseTool`` and ``ToolResponse`` are used when
importable, else same-shaped fallbacks (so the tool can be driven and tested on its own).
"""

from __future__ import annotations

import asyncio
import copy
import functools
import logging
import os
import threading
import uuid
import weakref
from typing import Any, Dict, Mapping, Optional, Tuple

from .client import DEFAULT_URL, Client
from .errors import CrucibleError
from .session import Session

__all__ = ["CrucibleSessionTool", "ToolResponse", "BaseTool", "HAVE_VERL", "DEFAULT_TOOL_SCHEMA",
           "format_result"]

log = logging.getLogger("crucible_client.verl_tool")

# The schema the tool offers the model when the YAML gives none: verl's usual
# code_interpreter, plus the optional language and timeout it understands.
DEFAULT_TOOL_SCHEMA: Dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "code_interpreter",
        "description": ("Run code in a persistent sandbox (files and installed packages are kept "
                        "between calls; the working directory is /work). Returns stdout and "
                        "stderr."),
        "parameters": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The code to run."},
                "language": {"type": "string",
                             "description": "The code's language (default python; or bash, c, cpp, ...)."},
            },
            "required": ["code"],
        },
    },
}

try:  # verl's own classes when verl is installed
    from verl.tools.base_tool import BaseTool  # type: ignore
    from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse  # type: ignore

    HAVE_VERL = True
except Exception:  # noqa: BLE001 - verl missing, or failing to import: stand alone
    HAVE_VERL = False

    class _Attrs:
        """A read-only attribute view of a schema dict (``schema.function.name``)."""

        def __init__(self, d: Mapping[str, Any]):
            self._d = dict(d)

        def __getattr__(self, name: str) -> Any:
            try:
                v = self._d[name]
            except KeyError:
                raise AttributeError(name) from None
            return _Attrs(v) if isinstance(v, Mapping) else v

        def model_dump(self, **_: Any) -> Dict[str, Any]:
            return copy.deepcopy(self._d)

    class OpenAIFunctionToolSchema:  # type: ignore[no-redef]
        """Stands in for verl's pydantic model: ``model_validate(dict)`` gives an object
        with attribute access and ``model_dump()``."""

        @staticmethod
        def model_validate(d: Mapping[str, Any]) -> Any:
            return _Attrs(d)

    class ToolResponse:  # type: ignore[no-redef]
        """verl's ``ToolResponse`` shape: ``text`` (and ``image``, ``video``)."""

        def __init__(self, text: Optional[str] = None, image: Any = None, video: Any = None):
            self.text = text
            self.image = image
            self.video = video

        def __repr__(self) -> str:
            return "ToolResponse(text=%r)" % (self.text,)

    class BaseTool:  # type: ignore[no-redef]
        """verl's ``BaseTool`` constructor and defaults, for use without verl."""

        def __init__(self, config: dict, tool_schema: Any):
            self.config = config
            self.tool_schema = tool_schema or self.get_openai_tool_schema()
            assert self.tool_schema is not None, "Tool schema is not set!"
            self.name = self.tool_schema.function.name

        def get_openai_tool_schema(self) -> Any:
            return self.tool_schema

        async def create(self, instance_id: Optional[str] = None, **kwargs: Any) -> Tuple[str, Any]:
            return instance_id or str(uuid.uuid4()), ToolResponse()

        async def execute(self, instance_id: str, parameters: Dict[str, Any],
                          **kwargs: Any) -> Tuple[Any, float, dict]:
            return ToolResponse(text="Updated the tool state."), 0.0, {}

        async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
            return 0.0

        async def release(self, instance_id: str, **kwargs: Any) -> None:
            pass


try:  # verl's rollout tracing of tool calls, as its own tools decorate execute
    from verl.utils.rollout_trace import rollout_trace_op  # type: ignore
except Exception:  # noqa: BLE001

    def rollout_trace_op(fn: Any) -> Any:
        return fn


def format_result(result: Mapping[str, Any], max_chars: int = 0) -> str:
    """The text a model sees for an exec's result record: its stdout, then its stderr, then
    a line naming how it ended when it did not exit 0 (``[exit code 1]`` when the program
    exited so, ``[status: timeout]`` and the like when a limit or crucible stopped it; a
    compile error shows the compiler's output). ``max_chars`` > 0 keeps the head and
    tail of longer text."""
    parts = []
    comp = result.get("compile")
    if isinstance(comp, Mapping) and comp.get("status") not in (None, "ok"):
        parts.append(str(comp.get("stdout") or "") + str(comp.get("stderr") or ""))
    parts.append(str(result.get("stdout") or ""))
    parts.append(str(result.get("stderr") or ""))
    text = "".join(p if not p or p.endswith("\n") else p + "\n" for p in parts)
    status, code = result.get("status"), result.get("exit_code")
    if code not in (None, 0) and status in (None, "ok", "runtime_error"):
        text += "[exit code %s]\n" % code  # the program's own failure
    elif status not in (None, "ok"):
        text += "[status: %s]\n" % status  # a limit, a compile error, crucible's failure
    if max_chars and len(text) > max_chars:
        half = max_chars // 2
        text = text[:half] + "\n...(%d characters cut)...\n" % (len(text) - 2 * half) + text[-half:]
    return text


class _Slot:
    """One session and the lock that serialises the calls made in it."""

    __slots__ = ("lock", "session", "opts", "__weakref__")

    def __init__(self, opts: Mapping[str, Any]):
        self.lock = threading.Lock()
        self.session: Optional[Session] = None
        self.opts = dict(opts)


class CrucibleSessionTool(BaseTool):
    """verl ``BaseTool``: a code interpreter whose calls in one trajectory share a crucible
    session.

    ``config`` (the YAML's ``config:``; all optional):

    - ``url`` / ``token``: the server (default ``$CRUCIBLE_URL`` / ``$CRUCIBLE_TOKEN``,
      else ``http://127.0.0.1:8080``); ``request_timeout`` (s, default 600);
    - ``image``, ``limits`` (``memory_mb``, ``pids``, ``disk_mb``, ``cpu_time``,
      ``output_kb``), ``writable_root``, ``network``, ``ttl_s``, ``idle_ttl_s`` (default
      600): the session's, as :meth:`Session.create` takes them;
    - ``default_language`` (``python``), ``default_timeout`` (30 s per call, capped by
      ``max_timeout``, default 120), ``max_output_chars`` (0: no cut; verl cuts too).

    Per trajectory, ``tools_kwargs: {<tool name>: {"create_kwargs": {...}}}`` in the data
    may give ``files`` (``{path: text}``, written when the session is made), ``setup`` (a
    shell command run then) and ``task`` (a native task: :meth:`calc_reward` verifies the
    session against it). A call's parameters: ``code`` (+ optional ``language``) or
    ``command`` (a shell command line), and optional ``timeout``.
    """

    def __init__(self, config: Optional[dict] = None, tool_schema: Any = None):
        config = dict(config or {})
        self._default_schema = OpenAIFunctionToolSchema.model_validate(DEFAULT_TOOL_SCHEMA)
        super().__init__(config, tool_schema)
        url = config.get("url") or os.environ.get("CRUCIBLE_URL") or DEFAULT_URL
        token = config.get("token") or os.environ.get("CRUCIBLE_TOKEN") or None
        self.client = Client(url, token=token, timeout=float(config.get("request_timeout", 600)))
        self.session_options: Dict[str, Any] = {
            k: config[k] for k in ("image", "limits", "writable_root", "network", "ttl_s")
            if config.get(k) is not None
        }
        self.session_options["idle_ttl_s"] = config.get("idle_ttl_s", 600)
        self.default_language = str(config.get("default_language", "python"))
        self.default_timeout = float(config.get("default_timeout", 30))
        self.max_timeout = float(config.get("max_timeout", 120))
        self.max_output_chars = int(config.get("max_output_chars", 0))
        self._lock = threading.Lock()
        self._instances: Dict[str, Dict[str, Any]] = {}  # instance id -> its create options
        self._slots: Dict[Tuple[str, str], _Slot] = {}  # ("trajectory"|"instance", id) -> slot

    def get_openai_tool_schema(self) -> Any:
        return self._default_schema

    # --- the BaseTool interface ----------------------------------------------------

    async def create(self, instance_id: Optional[str] = None, **kwargs: Any) -> Tuple[str, Any]:
        """Register an instance. Its options are ``create_kwargs`` (the agent loop's
        keyword) and any other keywords (``files``, ``setup``, ``task``). The session
        itself is made by the first call that needs it."""
        opts = dict(kwargs.pop("create_kwargs", None) or {})
        opts.update(kwargs)
        if instance_id is None:
            instance_id = str(uuid.uuid4())
        with self._lock:
            self._instances[instance_id] = opts
        return instance_id, ToolResponse()

    @rollout_trace_op
    async def execute(self, instance_id: str, parameters: Dict[str, Any],
                      **kwargs: Any) -> Tuple[Any, float, Dict[str, Any]]:
        """Run the call's code (or command) in the trajectory's session; the response text
        is :func:`format_result` of the exec's record, the reward 0.0, and the metrics
        ``{"status", "exit_code", "wall_time", "session"}``. Bad parameters and crucible
        errors become a response that says what went wrong (the model reads it); a session
        reclaimed by the server is made again, empty, and the response says so."""
        slot = self._slot(instance_id, kwargs.get("agent_data"))
        try:
            body = self._exec_args(parameters)
        except (TypeError, ValueError) as e:
            return ToolResponse(text="Error: %s" % e), 0.0, {"status": "bad_call"}
        agent_data = kwargs.get("agent_data")
        out = await _in_thread(self._run, slot, body)
        if agent_data is not None:
            self._note_trajectory(agent_data, slot)
        return out

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """The reward of the session's state against the instance's ``task`` (a verification
        in the session); 0.0 without a task or a session."""
        with self._lock:
            opts = self._instances.get(instance_id, {})
        task = opts.get("task")
        slot = self._slot(instance_id, kwargs.get("agent_data"), make=False)
        if task is None or slot is None or slot.session is None:
            return 0.0
        rec = await _in_thread(slot.session.verify, task)
        reward = rec.get("reward")
        return float(reward) if reward is not None else 0.0

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Forget the instance; a session of its own (no trajectory) is deleted."""
        with self._lock:
            self._instances.pop(instance_id, None)
            slot = self._slots.pop(("instance", instance_id), None)
        if slot is not None:
            await _in_thread(_close_slot, slot)

    # --- trajectories ------------------------------------------------------------

    def session_of(self, request_id: str) -> Optional[Session]:
        """The session of trajectory ``request_id`` (``AgentData.request_id``), if any."""
        with self._lock:
            slot = self._slots.get(("trajectory", request_id))
        return slot.session if slot is not None else None

    def close_trajectory(self, request_id: str) -> None:
        """Delete the session of trajectory ``request_id`` now (blocking)."""
        with self._lock:
            slot = self._slots.pop(("trajectory", request_id), None)
        if slot is not None:
            _close_slot(slot)

    def close_all(self) -> None:
        """Delete every session this tool holds (blocking)."""
        with self._lock:
            slots = list(self._slots.values())
            self._slots.clear()
        for slot in slots:
            _close_slot(slot)

    # --- helpers -----------------------------------------------------------------

    def _slot(self, instance_id: str, agent_data: Any, make: bool = True) -> Optional[_Slot]:
        request_id = getattr(agent_data, "request_id", None) if agent_data is not None else None
        key = ("trajectory", str(request_id)) if request_id else ("instance", instance_id)
        with self._lock:
            slot = self._slots.get(key)
            if slot is not None or not make:
                return slot
            slot = _Slot(self._instances.get(instance_id, {}))
            self._slots[key] = slot
        if key[0] == "trajectory":
            # The trajectory ends when the agent loop drops its AgentData: delete the session
            # then (in a thread of its own: a finalizer must not block the collector's caller).
            try:
                weakref.finalize(agent_data, _close_later, weakref.ref(self), key)
            except TypeError:
                log.warning("AgentData cannot be weakly referenced: session of trajectory %s is "
                            "left to the server's idle TTL", request_id)
        return slot

    def _exec_args(self, parameters: Any) -> Dict[str, Any]:
        if not isinstance(parameters, Mapping):
            raise TypeError("the tool's parameters must be an object")
        timeout = parameters.get("timeout", self.default_timeout)
        try:
            timeout = float(timeout)
        except (TypeError, ValueError):
            raise ValueError("timeout must be a number of seconds") from None
        timeout = min(max(timeout, 0.1), self.max_timeout)
        command = parameters.get("command")
        if command is not None:
            if not isinstance(command, str) or not command.strip():
                raise ValueError("command must be a non-empty shell command line")
            return {"command": command, "timeout_s": timeout}
        code = parameters.get("code")
        if not isinstance(code, str) or not code.strip():
            raise ValueError("give the code to run in 'code'")
        language = parameters.get("language") or self.default_language
        if not isinstance(language, str):
            raise ValueError("language must be a string")
        return {"code": code, "language": language, "timeout_s": timeout}

    def _open(self, slot: _Slot) -> Session:
        """Make the slot's session, with its files and setup (called with slot.lock held)."""
        session = Session.create(self.client, **self.session_options)
        try:
            for path, content in (slot.opts.get("files") or {}).items():
                session.write(path, content)
            setup = slot.opts.get("setup")
            if setup:
                r = session.exec(setup, timeout_s=self.max_timeout)
                if r.get("status") != "ok" or r.get("exit_code") not in (None, 0):
                    raise CrucibleError(None, "setup_failed", "setup %r: %s" % (
                        setup, format_result(r, 2000)))
        except BaseException:
            session.close()
            raise
        return session

    def _run(self, slot: _Slot, body: Dict[str, Any]) -> Tuple[Any, float, Dict[str, Any]]:
        note = ""
        with slot.lock:
            try:
                if slot.session is None:
                    slot.session = self._open(slot)
                try:
                    r = slot.session.exec(**body)
                except CrucibleError as e:
                    if e.status != 404:
                        raise
                    # Reclaimed by the server (TTL, idle TTL): start again, and say so.
                    slot.session = self._open(slot)
                    note = "[the sandbox had expired: this ran in a new, empty one]\n"
                    r = slot.session.exec(**body)
            except CrucibleError as e:
                return (ToolResponse(text="Error: the sandbox failed: %s" % e.message), 0.0,
                        {"status": "error", "error": e.code})
        metrics = {"status": r.get("status"), "exit_code": r.get("exit_code"),
                   "wall_time": r.get("wall_time"), "session": slot.session.id}
        return ToolResponse(text=note + format_result(r, self.max_output_chars)), 0.0, metrics

    def _note_trajectory(self, agent_data: Any, slot: _Slot) -> None:
        extra = getattr(agent_data, "extra_fields", None)
        if isinstance(extra, dict) and slot.session is not None:
            extra["crucible_session"] = slot.session.id


def _close_slot(slot: _Slot) -> None:
    with slot.lock:
        session, slot.session = slot.session, None
    if session is not None:
        try:
            session.close()
        except CrucibleError as e:
            log.warning("could not delete crucible session %s: %s", session.id, e)


def _close_later(tool_ref: Any, key: Tuple[str, str]) -> None:
    """The finalizer of a trajectory's AgentData. It may run inside any allocation of any
    thread — also one holding the tool's lock — so it only starts a thread that does the
    work (takes the lock, forgets the slot, deletes the session)."""
    tool = tool_ref()
    if tool is not None:
        threading.Thread(target=_forget, args=(tool, key), name="crucible-session-close",
                         daemon=True).start()


def _forget(tool: "CrucibleSessionTool", key: Tuple[str, str]) -> None:
    with tool._lock:
        slot = tool._slots.pop(key, None)
    if slot is not None:
        _close_slot(slot)


async def _in_thread(fn: Any, *args: Any) -> Any:
    """Run a blocking call off the event loop (the client is synchronous)."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, functools.partial(fn, *args))
