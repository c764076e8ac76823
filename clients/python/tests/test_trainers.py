"""The reward adapters called exactly as current verl and TRL call them, against a real
``crucible serve`` (``$CRUCIBLE``, see test_client.py).

The call shapes are re-created from the frameworks' sources (neither framework is
installed here: both pull in torch and a GPU stack), each with the file and commit it
comes from:

- verl: github.com/verl-project/verl at 1dda039b9c6311889a9c9a26040677e1254814f9
  (2026-08-22, version 0.10.0.dev) and, for the pkg:// loader's first release,
  github.com/volcengine/verl at b178a3cd56f58b2d502255daba591e92833930a7 (0.8.0.dev);
- TRL: github.com/huggingface/trl at f2cd57710ae345ea6428ae95363267fcf38a3dc8
  (2026-07-24, version 1.10.0.dev0).
"""

import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import threading
import warnings
from collections import defaultdict
from functools import partial

import pytest

from crucible_client import CrucibleInfraError
from crucible_client import rewards
from test_client import (  # the server helpers and samples of the client's own suite
    ADD_GOOD,
    ADD_TASK,
    ADD_WRONG,
    BROKEN_CHECKER_TASK,
    SUM_GOOD,
    SUM_GT,
    SUM_WRONG,
    fenced,
)

REWARDS_FILE = os.path.abspath(rewards.__file__)


# --- verl: loading the function -----------------------------------------------------------


def verl_load_module(module_path):
    """verl/utils/import_utils.py ``load_module`` (verl-project/verl 1dda039b; the pkg://
    branch arrived with volcengine/verl PR #4615, in b178a3cd): ``pkg://a/b`` or
    ``pkg://a.b`` is ``importlib.import_module("a.b")``; anything else (``file://`` or a
    plain path) is executed from the file under the name ``custom_module_<hash>``."""
    if module_path.startswith("pkg://"):
        return importlib.import_module(module_path[len("pkg://"):].replace("/", "."))
    if module_path.startswith("file://"):
        module_path = module_path[len("file://"):]
    spec = importlib.util.spec_from_file_location(
        "custom_module_%d" % hash(os.path.abspath(module_path)), module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
    # verl/trainer/ppo/reward.py (1dda039b): reward_kwargs from the config win over the call's.
    return raw_fn(*args, **{**kwargs, **extra_kwargs})


async def _call_with_kwargs_async(raw_fn, extra_kwargs, *args, **kwargs):
    return await raw_fn(*args, **{**kwargs, **extra_kwargs})


def verl_get_custom_reward_fn(reward_config):
    """verl/trainer/ppo/reward.py ``get_custom_reward_fn`` (1dda039b): it reads
    ``config.reward.custom_reward_function`` ({path, name, reward_kwargs}), loads the object
    and wraps it in a partial, async when ``inspect.iscoroutinefunction(raw_fn)``."""
    fn_cfg = reward_config.get("custom_reward_function") or {}
    if not fn_cfg.get("path"):
        return None
    raw_fn = getattr(verl_load_module(fn_cfg["path"]), fn_cfg["name"])
    reward_kwargs = dict(fn_cfg.get("reward_kwargs", {}))
    if not inspect.iscoroutinefunction(raw_fn):
        return partial(_call_with_kwargs, raw_fn, reward_kwargs)
    return partial(_call_with_kwargs_async, raw_fn, reward_kwargs)


async def verl_run_single(compute_score, data_source, response_str, ground_truth, extra_info,
                          reward_router_address=None, reward_model_tokenizer=None):
    """verl/experimental/reward_loop/reward_manager/naive.py ``NaiveRewardManager.run_single``
    (1dda039b; dapo.py, limited.py and gdpo.py call the same way): extra_info gains
    num_turns and rollout_reward_scores; the reward model's router and tokenizer are passed
    when one runs; a coroutine function is awaited, anything else runs in the loop's
    default executor; a dict result gives ``score`` and the extra info."""
    extra_info = dict(extra_info)
    extra_info["num_turns"] = None
    extra_info["rollout_reward_scores"] = {}
    extra_reward_kwargs = (
        {"reward_router_address": reward_router_address, "reward_model_tokenizer": reward_model_tokenizer}
        if reward_router_address is not None else {})
    if inspect.iscoroutinefunction(compute_score):
        result = await compute_score(data_source=data_source, solution_str=response_str,
                                     ground_truth=ground_truth, extra_info=extra_info, **extra_reward_kwargs)
    else:
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(None, lambda: compute_score(
            data_source=data_source, solution_str=response_str, ground_truth=ground_truth,
            extra_info=extra_info, **extra_reward_kwargs))
    if isinstance(result, dict):
        return {"reward_score": result["score"], "reward_extra_info": dict(result)}
    return {"reward_score": result, "reward_extra_info": {"acc": result}}


def reward_config(url, name="compute_score", path="pkg://crucible_client.rewards", **reward_kwargs):
    """The ``reward`` section of verl's config (verl/trainer/config/reward/reward.yaml,
    1dda039b) with a custom reward function."""
    return {"custom_reward_function": {"path": path, "name": name,
                                       "reward_kwargs": dict(reward_kwargs, url=url)}}


def test_verl_pkg_path_resolves_to_the_module():
    for path in ("pkg://crucible_client.rewards", "pkg://crucible_client/rewards"):
        mod = verl_load_module(path)
        assert mod is rewards
        assert mod.compute_score is rewards.compute_score
        assert inspect.iscoroutinefunction(mod.compute_score_async)
    # By file: the module runs under another name, and still imports the package.
    mod = verl_load_module("file://" + REWARDS_FILE)
    assert mod.__name__.startswith("custom_module_") and callable(mod.compute_score)


@pytest.mark.parametrize("path", ["pkg://crucible_client.rewards", REWARDS_FILE])
@pytest.mark.parametrize("name", ["compute_score", "compute_score_async"])
def test_verl_reward_loop_call_shapes(server, path, name):
    fn = verl_get_custom_reward_fn(reward_config(server.url, name=name, path=path))
    assert inspect.iscoroutinefunction(fn) == (name == "compute_score_async")

    async def step():
        rows = [
            ("codecontests", SUM_GOOD, SUM_GT, {"index": 0}, {}),
            ("codecontests", SUM_WRONG, json.loads(SUM_GT), {"index": 1}, {}),
            # with a reward model running: the router and its tokenizer come along
            ("humaneval", fenced(ADD_GOOD), json.dumps(ADD_TASK), {"index": 2},
             {"reward_router_address": "127.0.0.1:1", "reward_model_tokenizer": object()}),
        ]
        return await asyncio.gather(*(verl_run_single(fn, ds, sol, gt, ei, **rm) for ds, sol, gt, ei, rm in rows))

    out = asyncio.run(step())
    assert [r["reward_score"] for r in out] == [1.0, 0.0, 1.0]
    assert out[0]["reward_extra_info"] == {"acc": 1.0}


def test_verl_reward_loop_details_become_extra_info(server):
    fn = verl_get_custom_reward_fn(reward_config(server.url, name="compute_score_async", details=True))
    out = asyncio.run(verl_run_single(fn, "codecontests", SUM_GOOD, SUM_GT, {}))
    assert out["reward_score"] == 1.0
    assert out["reward_extra_info"] == {"score": 1.0, "accepted": 1.0, "passed": 3, "total": 3, "infra_error": 0.0}


def test_verl_prime_manager_positional_call(server):
    """verl/workers/reward_manager/prime.py ``single_compute_score`` (1dda039b): the
    function is called positionally, ``partial(evaluation_func, task, completion,
    reference, task_extra_info)`` in a process pool executor (a thread pool here)."""
    from concurrent.futures import ThreadPoolExecutor

    fn = verl_get_custom_reward_fn(reward_config(server.url))

    async def score(executor, task, completion, reference, task_extra_info):
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(executor, partial(fn, task, completion, reference, task_extra_info))
        return await asyncio.wait_for(future, timeout=300.0)

    async def run():
        with ThreadPoolExecutor(max_workers=4) as ex:
            return await asyncio.gather(score(ex, "apps", SUM_GOOD, SUM_GT, {}),
                                        score(ex, "apps", SUM_WRONG, SUM_GT, None),
                                        score(ex, "he", fenced(ADD_WRONG), ADD_TASK, {"language": "python"}))

    assert asyncio.run(run()) == [1.0, 0.0, 0.0]


def test_verl_legacy_batch_manager_call(server):
    """verl/workers/reward_manager/batch.py ``BatchRewardManager.verify`` (1dda039b, gone
    from the reward loop's managers): lists by keyword plus the manager's reward_kwargs."""
    scores = rewards.compute_score_batch(data_sources=["a", "b"], solution_strs=[SUM_GOOD, SUM_WRONG],
                                         ground_truths=[SUM_GT, SUM_GT], extra_infos=[{}, {}],
                                         url=server.url, reward_router_address=None)
    assert scores == [1.0, 0.0]


# --- verl: rows of other data sources ---------------------------------------------------------


class DefaultScorer:
    """Stands in for verl's default_compute_score (verl/utils/reward_score/__init__.py,
    1dda039b: ``default_compute_score(data_source, solution_str, ground_truth,
    extra_info=None, sandbox_fusion_url=None, concurrent_semaphore=None,
    memory_limit_mb=None, **kwargs)``), which cannot be imported without verl's torch
    stack: it scores a gsm8k-style answer by comparing the last line, and records calls."""

    def __init__(self):
        self.calls = []

    def __call__(self, data_source, solution_str, ground_truth, extra_info=None, sandbox_fusion_url=None,
                 concurrent_semaphore=None, memory_limit_mb=None, **kwargs):
        self.calls.append(dict(data_source=data_source, ground_truth=ground_truth, kwargs=kwargs))
        return 1.0 if solution_str.strip().splitlines()[-1] == str(ground_truth) else 0.0


def test_verl_other_data_sources_raise_unless_deferred(server):
    math_gt = "42"
    with pytest.raises(ValueError) as ei:
        rewards.compute_score("openai/gsm8k", "so 42", math_gt, {}, url=server.url)
    assert "defer_other_sources" in str(ei.value) and "openai/gsm8k" in str(ei.value)

    scorer = DefaultScorer()
    fn = verl_get_custom_reward_fn(reward_config(server.url, name="compute_score_async",
                                                 defer_other_sources=True, default_scorer=scorer))

    async def step():
        return await asyncio.gather(
            verl_run_single(fn, "openai/gsm8k", "so\n42", math_gt, {}),
            verl_run_single(fn, "openai/gsm8k", "so\n41", math_gt, {},
                            reward_router_address="127.0.0.1:1", reward_model_tokenizer="tok"),
            verl_run_single(fn, "codecontests", SUM_GOOD, SUM_GT, {}),
        )

    out = asyncio.run(step())
    assert [r["reward_score"] for r in out] == [1.0, 0.0, 1.0]
    assert [c["data_source"] for c in scorer.calls] == ["openai/gsm8k", "openai/gsm8k"]
    # the reward loop's own keywords reach the default scorer; crucible's options do not
    assert scorer.calls[1]["kwargs"] == {"reward_router_address": "127.0.0.1:1", "reward_model_tokenizer": "tok"}


def test_verl_data_sources_list_decides(server):
    scorer = DefaultScorer()
    kw = dict(url=server.url, data_sources=["codecontests", "apps"], default_scorer=scorer)
    assert rewards.compute_score("apps", SUM_GOOD, SUM_GT, {}, **kw) == 1.0
    with pytest.raises(ValueError) as ei:  # listed names only; others need the flag
        rewards.compute_score("taco", SUM_GOOD, SUM_GT, {}, **kw)
    assert "'taco' is not one of crucible's" in str(ei.value)
    # deferred even though its ground truth looks like a test set: the list decides
    assert rewards.compute_score("taco", "x\n3", {"inputs": ["1"], "outputs": ["3"]}, {},
                                 defer_other_sources=True, **kw) == 0.0
    assert rewards.compute_score("taco", "x\n3", "3", {}, defer_other_sources=True, details=True, **kw) == {
        "score": 1.0, "accepted": 0.0, "passed": 0, "total": 0, "infra_error": 0.0}
    # a listed source with a broken ground truth is a broken dataset, not a deferral
    with pytest.raises(ValueError):
        rewards.compute_score("apps", SUM_GOOD, "42", {}, defer_other_sources=True, **kw)


def test_verl_default_scorer_needs_verl(server):
    try:
        importlib.import_module("verl.utils.reward_score")
        pytest.skip("verl is installed here")
    except ImportError:
        pass
    with pytest.raises(ImportError) as ei:
        rewards.compute_score("openai/gsm8k", "42", "42", {}, url=server.url, defer_other_sources=True)
    assert "verl.utils.reward_score:default_compute_score" in str(ei.value) and "verl installed" in str(ei.value)


def test_verl_unknown_keyword_warns_and_scores(server):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert rewards.compute_score("apps", SUM_GOOD, SUM_GT, {}, url=server.url, on_infra_eror="zero") == 1.0
    assert any("on_infra_eror" in str(w.message) for w in seen)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # verl's own keywords are silent
        assert rewards.compute_score("apps", SUM_GOOD, SUM_GT, {}, url=server.url,
                                     reward_router_address=None, reward_model_tokenizer=None) == 1.0


def test_verl_async_infra_error_follows_on_infra_error(server):
    fn = verl_get_custom_reward_fn(reward_config(server.url, name="compute_score_async"))
    with pytest.raises(CrucibleInfraError):
        asyncio.run(verl_run_single(fn, "x", fenced("print(1)\n"), BROKEN_CHECKER_TASK, {}))
    fn = verl_get_custom_reward_fn(reward_config(server.url, name="compute_score_async", on_infra_error="zero"))
    assert asyncio.run(verl_run_single(fn, "x", fenced("print(1)\n"), BROKEN_CHECKER_TASK, {}))["reward_score"] == 0.0


# --- TRL ---------------------------------------------------------------------------------------


class TRLTrainer:
    """The parts of trl/trainer/grpo_trainer.py (f2cd5771) that call reward functions:
    ``_calculate_rewards`` builds the keyword arguments from the dataset rows (every column
    but prompt/completion/completion_ids, as a list per column), adds ``trainer_state``,
    ``log_extra`` and ``log_metric``, calls a plain function by keyword and gathers the
    coroutine functions on the trainer's own event loop (``self.async_loop``, a thread);
    ``_log_completion_extra`` and ``_log_metric`` collect what the functions log."""

    def __init__(self, reward_funcs):
        self.reward_funcs = reward_funcs
        self.state = object()  # transformers.TrainerState
        self._pending_metrics = defaultdict(list)
        self._pending_extra_logs = defaultdict(list)
        self.async_loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.async_loop.run_forever, daemon=True)
        self._thread.start()

    def close(self):
        self.async_loop.call_soon_threadsafe(self.async_loop.stop)
        self._thread.join(10)
        self.async_loop.close()

    def _log_completion_extra(self, column, values):
        self._pending_extra_logs[column].extend(values)

    def _log_metric(self, name, value):
        self._pending_metrics[name].append(value)

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = [[None] * len(self.reward_funcs) for _ in prompts]
        keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
        reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
        reward_kwargs["trainer_state"] = self.state
        reward_kwargs["log_extra"] = self._log_completion_extra
        reward_kwargs["log_metric"] = self._log_metric
        async_funcs_info = []
        for i, reward_func in enumerate(self.reward_funcs):
            if inspect.iscoroutinefunction(reward_func):
                async_funcs_info.append((i, reward_func))
            else:
                out = reward_func(prompts=prompts, completions=completions,
                                  completion_ids=completion_ids_list, **reward_kwargs)
                for row, r in enumerate(out):
                    rewards_per_func[row][i] = r if r is not None else float("nan")
        if async_funcs_info:
            async def _invoke_async(index, func):
                output = await func(prompts=prompts, completions=completions,
                                    completion_ids=completion_ids_list, **reward_kwargs)
                return index, [r if r is not None else float("nan") for r in output]

            async def _run_async_funcs():
                return await asyncio.gather(*(_invoke_async(i, f) for i, f in async_funcs_info))

            for idx, output in asyncio.run_coroutine_threadsafe(_run_async_funcs(), self.async_loop).result():
                for row, r in enumerate(output):
                    rewards_per_func[row][idx] = r
        return rewards_per_func


def math_reward_func(prompts, completions, task, **kwargs):
    # TRL's docs/source/grpo_trainer.md "Example 4: Multi-task reward functions" (f2cd5771)
    return [(1.0 if c == "4" else 0.0) if t == "math" else None for c, t in zip(completions, task)]


def multitask_rows():
    """A mixed dataset as in TRL's multi-task example: a ``task`` column of "math"/"code",
    and a ``crucible_task`` column for the code rows."""
    rows = [
        {"prompt": "What is 2+2?", "task": "math", "crucible_task": None},
        {"prompt": "Sum two ints.", "task": "code", "crucible_task": SUM_GT},
        {"prompt": "Sum two ints.", "task": "code", "crucible_task": json.loads(SUM_GT)},
        {"prompt": "add(a, b)", "task": "code", "crucible_task": json.dumps(ADD_TASK)},
        {"prompt": "add(a, b)", "task": "code", "crucible_task": BROKEN_CHECKER_TASK},
    ]
    completions = ["4", SUM_GOOD, SUM_WRONG, fenced(ADD_GOOD), fenced("print(1)\n")]
    return rows, completions


@pytest.mark.parametrize("make", ["make_reward_func", "make_async_reward_func"])
def test_trl_multitask_call_shape(server, make):
    f = getattr(rewards, make)(url=server.url)
    assert inspect.iscoroutinefunction(f) == (make == "make_async_reward_func")
    assert f.__name__ == "crucible"
    rows, completions = multitask_rows()
    trainer = TRLTrainer([math_reward_func, f])
    try:
        got = trainer._calculate_rewards(rows, [r["prompt"] for r in rows], completions, [[1, 2]] * len(rows))
    finally:
        trainer.close()
    crucible_col = [r[1] for r in got]
    assert crucible_col[1:4] == [1.0, 0.0, 1.0]
    assert crucible_col[0] != crucible_col[0] and crucible_col[4] != crucible_col[4]  # None -> NaN
    assert [r[0] for r in got][0] == 1.0
    m = trainer._pending_metrics
    assert m["crucible/task_rows"] == [pytest.approx(4 / 5)]
    assert m["crucible/verdict/accepted"] == [pytest.approx(2 / 4)]
    assert m["crucible/verdict/wrong_answer"] == [pytest.approx(1 / 4)]
    assert m["crucible/verdict/infra_error"] == [pytest.approx(1 / 4)]
    assert m["crucible/infra_error_rate"] == [pytest.approx(1 / 4)]
    assert set(m) == {"crucible/task_rows", "crucible/infra_error_rate"} | {
        "crucible/verdict/" + v for v in rewards.VERDICTS}
    assert trainer._pending_extra_logs["crucible_verdict"] == [
        "", "accepted", "wrong_answer", "accepted", "infra_error"]


def test_trl_task_column_of_labels_is_not_a_task(server):
    """A dataset with only TRL's ``task`` labels: with the default column nothing is
    crucible's; pointed at ``task`` (an older dataset of native tasks), labels are still
    not taken for tasks, and JSON tasks are."""
    rows, completions = multitask_rows()
    kw = {"task": [r["task"] for r in rows]}
    f = rewards.make_reward_func(url=server.url)
    assert f(prompts=[r["prompt"] for r in rows], completions=completions, **kw) == [None] * 5
    g = rewards.make_reward_func(url=server.url, task_key="task")
    mixed = ["math", SUM_GT, "code", "", None]
    assert g(completions=["4", SUM_GOOD, SUM_GOOD, SUM_GOOD, SUM_GOOD], task=mixed) == [None, 1.0, None, None, None]
    with pytest.raises(ValueError) as ei:  # looks like a task, is not one: a broken dataset
        g(completions=["x"], task=['{"inputs": [1]'])
    assert "column 'task', row 0" in str(ei.value)


def test_trl_rows_without_tasks_make_no_request():
    # An unreachable server: rows without a task never reach it, so nothing fails.
    f = rewards.make_reward_func(url="http://127.0.0.1:9", on_infra_error="raise")
    logged = {}
    assert f(completions=["a", "b"], crucible_task=[None, "math"], log_metric=logged.__setitem__) == [None, None]
    assert logged == {"crucible/task_rows": 0.0}


def test_trl_infra_error_rate_counts_failed_requests():
    f = rewards.make_reward_func(url="http://127.0.0.1:9", name="cr")
    logged, extra = {}, {}
    out = f(completions=[SUM_GOOD, "x"], crucible_task=[SUM_GT, None],
            log_metric=logged.__setitem__, log_extra=extra.__setitem__)
    assert out == [None, None]
    assert logged["cr/infra_error_rate"] == 1.0 and logged["cr/task_rows"] == 0.5
    assert extra == {"cr_verdict": ["request_failed", ""]}
