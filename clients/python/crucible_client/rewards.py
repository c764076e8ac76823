"""Reward functions for RL trainers, backed by crucible.

- verl: :func:`compute_score` (and :func:`compute_score_async`, which verl's reward loop
  awaits) is a custom reward function: ``reward.custom_reward_function.path`` =
  ``pkg://crucible_client.rewards`` (verl >= 0.7.1; ``custom_reward_function.*`` before),
  ``.name`` = ``compute_score``. It takes the keyword arguments the reward loop adds and
  can hand rows of other data sources to verl's default scorer (``defer_other_sources``).
  :func:`compute_score_batch` fits the ``batch`` reward manager of verl <= 0.7.0.
- TRL: :func:`make_reward_func` (and :func:`make_async_reward_func`) builds a reward
  function for ``GRPOTrainer``; :data:`reward_func` is one ready to use with the default
  server. Rows without a crucible task score ``None``.

The server is ``$CRUCIBLE_URL`` (default ``http://127.0.0.1:8080``) with the bearer token
``$CRUCIBLE_TOKEN`` unless a ``client`` or ``url`` is given.

Infra errors are not zero rewards
---------------------------------
When crucible cannot reach a verdict (its own failure: the sandbox could not be set up, a
checker program crashed, the server is unreachable or overloaded), the verification record
has ``verdict: "infra_error"`` and ``reward: null``. Scoring that as 0 would tell the policy
that a possibly correct program was wrong — a training signal that is pure noise, and biased
against whatever the infrastructure happens to choke on (long outputs, heavy programs). So by
default the verl adapter raises :class:`CrucibleInfraError` (the step fails loudly instead of
learning from a fabricated reward), and the TRL adapter returns ``None`` for that row (TRL's
"no reward from this function"). ``on_infra_error`` selects otherwise:

- ``"raise"``: raise :class:`CrucibleInfraError`;
- ``"zero"``: score 0.0 (a conscious choice: cheaper than a failed step, biased as above);
- ``"none"``: score ``None``.

Request errors that are the caller's fault (a ``4xx`` other than ``429``: a malformed task,
a bad token) always raise: no setting turns a broken dataset into rewards.

The language of a sample
------------------------
A sample's language (``extra_info["language"]`` for verl, a column named by
``language_key`` for TRL, or the adapters' ``language`` argument) names the language the
model wrote in. It is sent with the verification, so a ``stdio`` task — a native one in
Python, as converted Code Jam and Kattis tasks are, or one built from an
``{"inputs", "outputs"}`` test set — judges C++ and Python rollouts alike, each compiled and
run as its own language. An ``assert`` or ``command`` task takes only its own language:
another one is the caller's mistake (a ``400``), and raises. Without a language the task's
is used (Python for built test sets).

This module imports the package absolutely, so verl can load this file by path.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib
import json
import os
import threading
import warnings
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from crucible_client.client import DEFAULT_URL, Client, verify_item
from crucible_client.errors import CrucibleError, CrucibleInfraError

__all__ = [
    "compute_score",
    "compute_score_async",
    "compute_score_batch",
    "make_reward_func",
    "make_async_reward_func",
    "reward_func",
    "task_from_ground_truth",
    "completion_text",
    "default_client",
    "CrucibleInfraError",
]

_ON_INFRA = ("raise", "zero", "none")

VERDICTS = ("accepted", "wrong_answer", "runtime_error", "timeout", "memory_limit", "output_limit",
            "compile_error", "constraint_violation", "infra_error", "not_run")  # src/judge/verify.c

MAX_BATCH = 10000  # items per /v1/batch request (docs/API.md); larger groups go in chunks

_clients: Dict[str, Client] = {}
_clients_lock = threading.Lock()


def default_client(url: Optional[str] = None) -> Client:
    """A shared client for ``url`` (default: ``$CRUCIBLE_URL`` or http://127.0.0.1:8080),
    with the token ``$CRUCIBLE_TOKEN`` if set."""
    url = url or os.environ.get("CRUCIBLE_URL") or DEFAULT_URL
    with _clients_lock:
        c = _clients.get(url)
        if c is None:
            c = _clients[url] = Client(url, token=os.environ.get("CRUCIBLE_TOKEN") or None)
        return c


def _resolve(client: Optional[Client], url: Optional[str]) -> Client:
    if client is not None:
        return client
    return default_client(url)


def _check_on_infra(on_infra_error: str) -> None:
    if on_infra_error not in _ON_INFRA:
        raise ValueError("on_infra_error must be one of %s, not %r" % (", ".join(_ON_INFRA), on_infra_error))


# --- ground truth -> native task -------------------------------------------------------


def _plain(x: Any) -> Any:
    """Plain JSON values from what trainers hand over (numpy arrays and scalars from
    parquet/pandas, tuples)."""
    if isinstance(x, (str, bytes, bool, int, float)) or x is None:
        return x
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    tolist = getattr(x, "tolist", None)  # numpy.ndarray, numpy scalars
    if callable(tolist):
        return _plain(tolist())
    item = getattr(x, "item", None)
    if callable(item):
        return item()
    return x


def _stdio_text(x: Any) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, list) and all(isinstance(s, str) for s in x):
        return "".join(s if s.endswith("\n") else s + "\n" for s in x)
    return str(x)


def _auto_id(obj: Any) -> str:
    digest = hashlib.sha1(json.dumps(obj, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    return "gt/" + digest[:16]


_CALL_TEST = """import json as _cr_json
_cr_args = _cr_json.loads({args!r})
_cr_want = _cr_json.loads({want!r})
_cr_fn = globals().get({fn!r})
if _cr_fn is None and "Solution" in globals():
    _cr_fn = getattr(Solution(), {fn!r})
if _cr_fn is None:
    raise AssertionError("no function named {fn}")
_cr_got = _cr_fn(*_cr_args) if isinstance(_cr_args, list) else _cr_fn(_cr_args)
# Compare plain JSON values: tuples become lists, and objects with a forged __eq__ fail here.
_cr_got = _cr_json.loads(_cr_json.dumps(_cr_got))
assert _cr_got == _cr_want or (isinstance(_cr_want, list) and len(_cr_want) == 1
                               and _cr_got == _cr_want[0]), "got %r, want %r" % (_cr_got, _cr_want)
"""


def task_from_ground_truth(ground_truth: Any, *, language: str = "python",
                           task_id: Optional[str] = None,
                           limits: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """A native task from a ground truth in one of the shapes trainers use:

    - a native task (dict or JSON text with ``harness``; docs/TASKS.md). A missing ``id``
      or ``language`` is filled in;
    - ``{"inputs": [...], "outputs": [...]}`` (verl / PRIME / APPS / TACO stdio style): a
      ``stdio`` task, one test per pair, compared by the ``lines`` checker. An input or
      output given as a list of lines is joined with newlines;
    - ``{"fn_name": F, "inputs": [[args...], ...], "outputs": [...]}`` (APPS call-based,
      Python only): an ``assert`` task calling ``F(*args)`` (a top-level function, or a
      method of ``Solution()``, LeetCode style) and comparing the JSON value of the result
      with the output, or with its only element (APPS wraps return values in a list).

    ``language`` applies when the ground truth does not name one; ``limits`` to tasks
    without their own.
    """
    gt = _plain(ground_truth)
    if isinstance(gt, bytes):
        gt = gt.decode("utf-8")
    if isinstance(gt, str):
        try:
            gt = json.loads(gt)
        except ValueError as e:
            raise ValueError("ground_truth is text but not JSON (want a native task or "
                             "{\"inputs\", \"outputs\"}): %s" % e) from e
    if not isinstance(gt, dict):
        raise ValueError("ground_truth must be a JSON object, not %s" % type(gt).__name__)

    if "harness" in gt:
        task = dict(gt)
        task.setdefault("language", language)
        if not task.get("id"):
            task["id"] = task_id or _auto_id(gt)
        if limits is not None and "limits" not in task:
            task["limits"] = dict(limits)
        return task

    if "inputs" not in gt or "outputs" not in gt:
        raise ValueError("ground_truth is neither a native task (no 'harness') nor an "
                         "{'inputs': [...], 'outputs': [...]} test set; keys: %s" % sorted(gt))
    inputs, outputs = gt["inputs"], gt["outputs"]
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise ValueError("ground_truth 'inputs' and 'outputs' must be lists")
    if len(inputs) != len(outputs):
        raise ValueError("ground_truth has %d inputs but %d outputs" % (len(inputs), len(outputs)))
    if not inputs:
        raise ValueError("ground_truth has no test cases")
    lang = gt.get("language") or language
    task: Dict[str, Any] = {"id": task_id or _auto_id(gt), "language": lang}
    fn_name = gt.get("fn_name")
    if fn_name:
        if lang.lower() not in ("python", "py", "python3"):
            raise ValueError("call-based ground truth (fn_name) is supported for Python only, "
                             "not %r; give a native task instead" % lang)
        if not isinstance(fn_name, str) or not fn_name.isidentifier():
            raise ValueError("fn_name must be a Python identifier, not %r" % (fn_name,))
        task["harness"] = "assert"
        task["entry_point"] = fn_name
        task["tests"] = [
            {"name": "case-%d" % i,
             "code": _CALL_TEST.format(args=json.dumps(a), want=json.dumps(w), fn=fn_name)}
            for i, (a, w) in enumerate(zip(inputs, outputs))
        ]
    else:
        task["harness"] = "stdio"
        task["checker"] = "lines"
        task["tests"] = [
            {"name": "case-%d" % i, "stdin": _stdio_text(a), "expected": _stdio_text(w)}
            for i, (a, w) in enumerate(zip(inputs, outputs))
        ]
    if limits is not None:
        task["limits"] = dict(limits)
    return task


# --- records -> scores --------------------------------------------------------------------


def _is_infra(record: Mapping[str, Any]) -> bool:
    return record.get("reward") is None or record.get("verdict") == "infra_error"


def _infra_message(record: Mapping[str, Any]) -> str:
    msg = record.get("message") or ""
    return "crucible could not verify (verdict %s)%s" % (record.get("verdict"), ": " + msg if msg else "")


def _caller_fault(e: CrucibleError) -> bool:
    return e.status is not None and 400 <= e.status < 500 and e.status != 429


def _infra_value(on_infra_error: str, message: str, record: Any = None,
                 cause: Optional[BaseException] = None) -> Optional[float]:
    if on_infra_error == "zero":
        return 0.0
    if on_infra_error == "none":
        return None
    err = CrucibleInfraError(message, record)
    if cause is not None:
        raise err from cause
    raise err


def _details(score: Optional[float], record: Optional[Mapping[str, Any]], infra: bool) -> Dict[str, Any]:
    record = record or {}
    return {
        "score": score,
        "accepted": 1.0 if record.get("verdict") == "accepted" else 0.0,
        "passed": int(record.get("passed") or 0),
        "total": int(record.get("total") or 0),
        "infra_error": 1.0 if infra else 0.0,
    }


def _extra(extra_info: Any) -> Mapping[str, Any]:
    extra = _plain(extra_info) if extra_info is not None else {}
    return extra if isinstance(extra, Mapping) else {}


def _language(value: Any, what: str) -> Optional[str]:
    """A sample's language as sent: ``None`` when not given (None or empty)."""
    value = _plain(value)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise TypeError("%s must be a language name (a string), not %r" % (what, value))
    return value


def _sample_language(language: Optional[str], extra_info: Any) -> Optional[str]:
    """verl: the ``language`` keyword, else ``extra_info["language"]``, else None."""
    if language:
        return _language(language, "language")
    return _language(_extra(extra_info).get("language"), 'extra_info["language"]')


# --- verl ------------------------------------------------------------------------------

# Keyword arguments verl's reward loop passes to a custom reward function beside the four
# it documents (verl/experimental/reward_loop/reward_manager/{naive,dapo,limited,gdpo}.py:
# the reward model's router and tokenizer when a reward model runs too), and those its
# default scorer takes (verl/utils/reward_score/__init__.py). They are accepted, ignored
# by crucible and handed on to verl's default scorer for deferred rows.
VERL_KWARGS = frozenset({"reward_router_address", "reward_model_tokenizer", "sandbox_fusion_url",
                         "concurrent_semaphore", "memory_limit_mb"})

DEFAULT_SCORER = "verl.utils.reward_score:default_compute_score"


def _looks_like_task(ground_truth: Any) -> bool:
    """Whether a ground truth is one :func:`task_from_ground_truth` reads: a native task
    (an object with ``harness``) or a test set (an object with ``inputs`` and ``outputs``),
    as an object or as JSON text. A math answer ("42"), a list or other text is not."""
    gt = _plain(ground_truth)
    if isinstance(gt, bytes):
        gt = gt.decode("utf-8", "replace")
    if isinstance(gt, str):
        if not gt.lstrip().startswith("{"):
            return False
        try:
            gt = json.loads(gt)
        except ValueError:
            return True  # meant as a task but broken: task_from_ground_truth says why
    return isinstance(gt, Mapping) and ("harness" in gt or ("inputs" in gt and "outputs" in gt))


def _source_names(data_sources: Union[str, Iterable[Any], None]) -> Optional[frozenset]:
    if data_sources is None:
        return None
    if isinstance(data_sources, str):
        return frozenset([data_sources])
    return frozenset(str(_plain(x)) for x in data_sources)


def _load_scorer(default_scorer: Union[str, Callable[..., Any], None]) -> Callable[..., Any]:
    """The scorer for deferred rows: a callable, or ``"module:name"`` (default verl's
    ``default_compute_score``), imported when first needed."""
    if callable(default_scorer):
        return default_scorer
    spec = default_scorer or DEFAULT_SCORER
    module, _, name = str(spec).partition(":")
    if not module or not name:
        raise ValueError("default_scorer must be a callable or 'module:function', not %r" % (spec,))
    try:
        fn = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise ImportError("defer_other_sources needs the scorer %r, which cannot be loaded (is verl "
                          "installed in this environment?): %s" % (spec, e)) from e
    if not callable(fn):
        raise TypeError("default_scorer %r is not callable" % (spec,))
    return fn


def _check_kwargs(kwargs: Mapping[str, Any]) -> None:
    """Warn (once per name and call site, by the warnings module) about keyword arguments
    that are neither crucible's nor verl's: most likely a misspelt ``reward_kwargs`` key."""
    for key in kwargs:
        if key not in VERL_KWARGS:
            warnings.warn("crucible_client.rewards.compute_score ignores the keyword argument %r "
                          "(a misspelt reward_kwargs key?)" % key, RuntimeWarning, stacklevel=3)


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None, *,
                  client: Optional[Client] = None, url: Optional[str] = None,
                  on_infra_error: str = "raise", details: bool = False,
                  reward: Optional[str] = None, language: Optional[str] = None,
                  limits: Optional[Mapping[str, Any]] = None,
                  data_sources: Union[str, Iterable[Any], None] = None,
                  defer_other_sources: bool = False,
                  default_scorer: Union[str, Callable[..., Any], None] = None,
                  **kwargs: Any) -> Any:
    """verl custom reward function: ``compute_score(data_source, solution_str, ground_truth,
    extra_info, **kwargs)``, called by keyword (verl's reward loop and legacy naive/dapo
    managers) or positionally (the legacy prime manager).

    ``solution_str`` (the raw model response) is sent as ``response``: crucible verifies
    its last fenced code block. ``ground_truth``: see :func:`task_from_ground_truth`. The
    sample's language is ``language``, else ``extra_info["language"]``; when given it is
    the solution's language (sent with the request: a stdio task takes any, an assert or
    command task only its own, else a ``400`` raises) and the language of a task built from
    a test set; without one, the task's language (``python`` for built tasks). Returns the
    reward as a float (``reward``: ``binary`` 1.0/0.0, or ``fraction`` of tests passed), or
    with ``details=True`` a dict ``{"score", "accepted", "passed", "total", "infra_error"}``
    (all numbers, so verl can aggregate them as reward_extra_info). Infra errors follow
    ``on_infra_error`` (module docstring).

    Rows that are not crucible's: with ``data_sources`` (a name or a list of names), a row
    whose ``data_source`` is not listed; without it, a row whose ground truth is neither a
    native task nor a test set (a math answer, say). By default such a row raises (a
    ``ValueError`` naming it: a mixed dataset needs a decision). With
    ``defer_other_sources=True`` it is scored by ``default_scorer`` — verl's
    ``default_compute_score`` unless another callable or ``"module:function"`` is given —
    called by keyword with the row and the verl keyword arguments received, and its result
    returned as it is (a number becomes a details dict when ``details`` is set).

    Other keywords come from verl: the reward loop's own (``reward_router_address``,
    ``reward_model_tokenizer``: accepted and ignored) and ``reward_kwargs`` from the
    config (``reward.custom_reward_function.reward_kwargs``), which set the options above.
    An unknown keyword is ignored with a ``RuntimeWarning``.
    """
    _check_on_infra(on_infra_error)
    _check_kwargs(kwargs)
    sources = _source_names(data_sources)
    ours = (str(_plain(data_source)) in sources) if sources is not None else _looks_like_task(ground_truth)
    if not ours:
        if defer_other_sources:
            scorer = _load_scorer(default_scorer)
            passed = {k: v for k, v in kwargs.items() if k in VERL_KWARGS}
            result = scorer(data_source=data_source, solution_str=solution_str,
                            ground_truth=ground_truth, extra_info=extra_info, **passed)
            if details and isinstance(result, (int, float)) and not isinstance(result, bool):
                return _details(float(result), None, False)
            return result
        if sources is not None:
            raise ValueError("data source %r is not one of crucible's (data_sources: %s); set "
                             "defer_other_sources=True to score it with verl's default scorer"
                             % (_plain(data_source), ", ".join(sorted(sources))))
    lang = _sample_language(language, extra_info)
    try:
        task = task_from_ground_truth(ground_truth, language=lang or "python", limits=limits)
    except ValueError as e:
        raise ValueError("data source %r: %s (rows of other data sources can go to verl's default "
                         "scorer: defer_other_sources=True)" % (_plain(data_source), e)) from e
    c = _resolve(client, url)
    try:
        record = c.verify(task, response=solution_str, reward=reward, language=lang)
    except CrucibleError as e:
        if _caller_fault(e):
            raise
        score = _infra_value(on_infra_error, "crucible request failed: %s" % e, cause=e)
        return _details(score, None, True) if details else score
    if _is_infra(record):
        score = _infra_value(on_infra_error, _infra_message(record), record)
        return _details(score, record, True) if details else score
    score = float(record["reward"])
    return _details(score, record, False) if details else score


async def compute_score_async(data_source: Any, solution_str: str, ground_truth: Any,
                              extra_info: Any = None, **kwargs: Any) -> Any:
    """:func:`compute_score` as a coroutine function, for verl's reward loop, which awaits a
    custom reward function that is one (``inspect.iscoroutinefunction``) on its event loop
    instead of running it in a thread. The blocking HTTP exchange (and a deferred row's
    scorer) runs in the loop's default executor, so the loop keeps scheduling other rows
    while crucible works. Same arguments and result. (verl's ``remote`` reward manager
    refuses coroutine functions: use :func:`compute_score` there.)"""
    loop = asyncio.get_running_loop()
    call = functools.partial(compute_score, data_source, solution_str, ground_truth, extra_info, **kwargs)
    return await loop.run_in_executor(None, call)


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str],
                        ground_truths: Sequence[Any], extra_infos: Optional[Sequence[Any]] = None, *,
                        client: Optional[Client] = None, url: Optional[str] = None,
                        on_infra_error: str = "raise", details: bool = False,
                        reward: Optional[str] = None, language: Optional[str] = None,
                        limits: Optional[Mapping[str, Any]] = None,
                        priority: Optional[str] = None,
                        deadline_s: Optional[float] = None, **kwargs: Any) -> List[Any]:
    """verl ``BatchRewardManager`` form (verl <= 0.7.0; later releases cannot select it):
    lists in, a list of scores out, verified in one ``/v1/batch`` call. Same conventions
    as :func:`compute_score`, except that every row must be crucible's (no deferring)."""
    _check_on_infra(on_infra_error)
    _check_kwargs(kwargs)
    n = len(solution_strs)
    if len(ground_truths) != n:
        raise ValueError("%d solutions but %d ground truths" % (n, len(ground_truths)))
    extras = list(extra_infos) if extra_infos is not None else [None] * n
    items = []
    for i in range(n):
        lang = _sample_language(language, extras[i] if i < len(extras) else None)
        task = task_from_ground_truth(ground_truths[i], language=lang or "python", limits=limits)
        items.append(verify_item(task, response=solution_strs[i], reward=reward, language=lang))
    records = _verify_all(_resolve(client, url), items, on_infra_error, priority, deadline_s)
    out: List[Any] = []
    for rec, failure in records:
        if rec is not None and not _is_infra(rec):
            score: Optional[float] = float(rec["reward"])
            infra = False
        else:
            infra = True
            msg = _infra_message(rec) if rec is not None else failure or "no result"
            score = _infra_value(on_infra_error, msg, rec)
        out.append(_details(score, rec, infra) if details else score)
    return out


def _verify_all(c: Client, items: List[Dict[str, Any]], on_infra_error: str,
                priority: Optional[str], deadline_s: Optional[float]) -> List[Any]:
    """(record or None, failure message or None) per item, from ``/v1/batch`` calls of at
    most MAX_BATCH items. With ``on_infra_error="raise"``, the first infra error raises
    (and closing the stream cancels the rest)."""
    out: List[Any] = [(None, "no result")] * len(items)
    try:
        for start in range(0, len(items), MAX_BATCH):
            _verify_chunk(c, items, start, out, on_infra_error, priority, deadline_s)
    except CrucibleInfraError:
        raise
    except CrucibleError as e:
        if _caller_fault(e):
            raise
        if on_infra_error == "raise":
            raise CrucibleInfraError("crucible request failed: %s" % e) from e
        msg = "crucible request failed: %s" % e
        out = [(rec, fail if rec is not None else msg) for rec, fail in out]
    return out


def _verify_chunk(c: Client, items: List[Dict[str, Any]], start: int, out: List[Any],
                  on_infra_error: str, priority: Optional[str], deadline_s: Optional[float]) -> None:
    chunk = items[start:start + MAX_BATCH]
    with c.batch(chunk, priority=priority, deadline_s=deadline_s) as stream:
        for line in stream:
            j = line.get("index")
            if not isinstance(j, int) or not 0 <= j < len(chunk):
                raise CrucibleError(200, "bad_response", "batch line with a bad index: %r" % (j,))
            i = start + j
            rec = line.get("result")
            if isinstance(rec, Mapping):
                if on_infra_error == "raise" and _is_infra(rec):
                    raise CrucibleInfraError("item %d: %s" % (i, _infra_message(rec)), rec)
                out[i] = (rec, None)
            else:
                err = line.get("error") or {}
                msg = "item %d not verified: %s" % (i, err.get("message") or err.get("code") or line)
                if on_infra_error == "raise":
                    raise CrucibleInfraError(msg, line)
                out[i] = (None, msg)


# --- TRL ---------------------------------------------------------------------------------


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):  # multimodal parts: [{"type": "text", "text": ...}]
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, Mapping) and isinstance(p.get("text"), str):
                parts.append(p["text"])
        return "".join(parts)
    return str(content)


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string as is; for a conversational completion (a
    list of ``{"role", "content"}`` messages), the content of the last assistant message."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _content_text(completion.get("content"))
    if isinstance(completion, Sequence):
        for msg in reversed(completion):
            if isinstance(msg, Mapping) and msg.get("role", "assistant") == "assistant":
                return _content_text(msg.get("content"))
        raise ValueError("conversational completion without an assistant message")
    raise TypeError("completion must be a string or a list of messages, not %s" % type(completion).__name__)


def _row_value(kwargs: Mapping[str, Any], key: Optional[str], i: int) -> Any:
    """Row ``i`` of the dataset column ``key`` as TRL passes it (a list per column), or
    None when there is no such column."""
    col = kwargs.get(key) if key else None
    if col is None or isinstance(col, (str, bytes, Mapping)) or not hasattr(col, "__getitem__"):
        return None
    return col[i] if i < len(col) else None


def _crucible_cell(value: Any) -> bool:
    """Whether a task column's cell holds a crucible task: an object, or text that is a JSON
    object (it starts with ``{``). None, an empty cell or other text — a task-type label
    such as TRL's multi-task ``"math"``/``"code"`` — is not one: that row is not crucible's."""
    value = _plain(value)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value.lstrip().startswith("{")
    return isinstance(value, Mapping)


def make_reward_func(client: Optional[Client] = None, url: Optional[str] = None,
                     task_key: str = "crucible_task", language: Optional[str] = None, *,
                     inputs_key: str = "inputs", outputs_key: str = "outputs",
                     fn_name_key: str = "fn_name", language_key: Optional[str] = None,
                     reward: Optional[str] = None, on_infra_error: str = "none",
                     priority: Optional[str] = None, deadline_s: Optional[float] = None,
                     limits: Optional[Mapping[str, Any]] = None,
                     name: str = "crucible", log: bool = True) -> Callable[..., List[Optional[float]]]:
    """A reward function for TRL's ``GRPOTrainer``:
    ``reward_func(completions, **kwargs) -> list[float | None]``.

    TRL calls it by keyword with ``prompts``, ``completions``, ``completion_ids``, every
    other dataset column (a list per column), ``trainer_state``, ``log_extra`` and
    ``log_metric`` (trl/trainer/grpo_trainer.py, ``_calculate_rewards``).

    Each row's task is the dataset column ``task_key`` (default ``crucible_task``: a native
    task as a dict or JSON text — or any ground truth :func:`task_from_ground_truth`
    accepts), else the columns ``inputs_key`` / ``outputs_key`` (and ``fn_name_key`` if
    present) as a stdio (or call-based) test set. A cell of the task column that is not an
    object nor JSON object text (None, ``""``, a label such as ``"math"``) carries no
    crucible task. A row with no task scores ``None``: TRL's "this function does not apply
    here", so that a multi-task run can combine this function with others; with TRL >= 1.6 a
    row for which every function returned ``None`` is left out of its group's baseline.
    A cell that looks like a task but is not a valid one raises: a broken dataset.

    Each completion (a string, or messages: the last assistant message) is sent as a raw
    ``response``. The group's tasks are verified in one ``/v1/batch`` call and results
    matched back by index.

    A row's language is its ``language_key`` column when set, else ``language``: the
    language of the completion's code, sent with its verification (a stdio task takes any,
    an assert or command task only its own, else a ``400`` raises), and the language of a
    task built from a test set. Without either, the task's own (``python`` for test sets).

    Infra errors give ``None`` by default (``on_infra_error``): with TRL >= 1.6 such a row is
    then left out of the baseline when no other function scored it (older TRL sums the
    remaining rewards with ``nansum``, i.e. 0 — use ``"raise"`` there to stop instead).

    With ``log`` (the default) and when TRL passes ``log_metric`` / ``log_extra``, each call
    logs, over the rows that carry a task: ``{name}/verdict/{v}`` (the fraction with verdict
    ``v``, for every verdict crucible has), ``{name}/infra_error_rate`` (infra verdicts and
    failed requests) and ``{name}/task_rows`` (the fraction of rows with a task); and the
    completions-table column ``{name}_verdict`` (the verdict per row, ``""`` without a
    task, ``"request_failed"`` when no record came back). The function's ``__name__``
    (``name``) labels it in TRL's logs.
    """
    _check_on_infra(on_infra_error)

    default_lang = _language(language, "language")

    def row_language(kwargs: Mapping[str, Any], i: int) -> Optional[str]:
        value = _row_value(kwargs, language_key, i)
        if value is not None:
            lang = _language(value, "column %r, row %d" % (language_key, i))
            if lang is not None:
                return lang
        return default_lang

    def row_task(kwargs: Mapping[str, Any], i: int, lang: str) -> Optional[Dict[str, Any]]:
        cell = _row_value(kwargs, task_key, i)
        if cell is not None and _crucible_cell(cell):
            try:
                return task_from_ground_truth(cell, language=lang, limits=limits)
            except ValueError as e:
                raise ValueError("column %r, row %d: %s" % (task_key, i, e)) from e
        ins, outs = _row_value(kwargs, inputs_key, i), _row_value(kwargs, outputs_key, i)
        if ins is not None and outs is not None:
            gt: Dict[str, Any] = {"inputs": _plain(ins), "outputs": _plain(outs)}
            fn = _row_value(kwargs, fn_name_key, i)
            if fn:
                gt["fn_name"] = fn
            try:
                return task_from_ground_truth(gt, language=lang, limits=limits)
            except ValueError as e:
                raise ValueError("columns %r/%r, row %d: %s" % (inputs_key, outputs_key, i, e)) from e
        return None

    def log_rows(kwargs: Mapping[str, Any], n: int, verdicts: List[Optional[str]], infra: int) -> None:
        log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
        judged = [v for v in verdicts if v is not None]
        if callable(log_metric) and judged:
            for v in VERDICTS:
                log_metric("%s/verdict/%s" % (name, v), sum(1 for x in judged if x == v) / len(judged))
            log_metric("%s/infra_error_rate" % name, infra / len(judged))
        if callable(log_metric) and n:
            log_metric("%s/task_rows" % name, len(judged) / n)
        if callable(log_extra):
            log_extra("%s_verdict" % name, [v if v is not None else "" for v in verdicts])

    def crucible_reward(completions: Sequence[Any], **kwargs: Any) -> List[Optional[float]]:
        n = len(completions)
        items: List[Dict[str, Any]] = []
        rows: List[int] = []
        for i, comp in enumerate(completions):
            lang = row_language(kwargs, i)
            task = row_task(kwargs, i, lang or "python")
            if task is None:
                continue
            rows.append(i)
            items.append(verify_item(task, response=completion_text(comp), reward=reward, language=lang))
        scores: List[Optional[float]] = [None] * n
        verdicts: List[Optional[str]] = [None] * n
        infra = 0
        records = _verify_all(_resolve(client, url), items, on_infra_error, priority, deadline_s) if items else []
        for i, (rec, failure) in zip(rows, records):
            if rec is not None and not _is_infra(rec):
                scores[i] = float(rec["reward"])
                verdicts[i] = str(rec.get("verdict"))
            else:
                infra += 1
                verdicts[i] = str(rec.get("verdict") or "infra_error") if rec is not None else "request_failed"
                msg = _infra_message(rec) if rec is not None else failure or "no result"
                scores[i] = _infra_value(on_infra_error, msg, rec)
        if log:
            log_rows(kwargs, n, verdicts, infra)
        return scores

    crucible_reward.__name__ = name
    crucible_reward.__qualname__ = name
    return crucible_reward


def make_async_reward_func(*args: Any, **kwargs: Any) -> Callable[..., Awaitable[List[Optional[float]]]]:
    """:func:`make_reward_func` (same arguments) as a coroutine function. TRL runs the
    coroutine reward functions of a step concurrently on its own event loop
    (``asyncio.gather``), so crucible's verification overlaps the other async functions
    instead of running before them. The blocking ``/v1/batch`` exchange runs in the loop's
    default executor."""
    sync = make_reward_func(*args, **kwargs)

    async def crucible_reward_async(completions: Sequence[Any], **kw: Any) -> List[Optional[float]]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, functools.partial(sync, completions, **kw))

    crucible_reward_async.__name__ = sync.__name__
    crucible_reward_async.__qualname__ = sync.__name__
    return crucible_reward_async


_default_reward: Optional[Callable[..., List[Optional[float]]]] = None


def reward_func(completions: Sequence[Any], **kwargs: Any) -> List[Optional[float]]:
    """TRL reward function with the defaults of :func:`make_reward_func` and the server
    ``$CRUCIBLE_URL`` (default http://127.0.0.1:8080): tasks from the ``crucible_task``
    column (or ``inputs``/``outputs``), Python for stdio test sets, ``None`` for rows
    without a task and on infra errors."""
    global _default_reward
    if _default_reward is None:
        _default_reward = make_reward_func()
    return _default_reward(completions, **kwargs)
