"""The client and the reward adapters against a real ``crucible serve``.

The binary is ``$CRUCIBLE`` (default ``<repo>/build/crucible``). A session server runs
with ``--slots 2`` on a free port; tests that need other options (a token, a tiny queue)
start their own. Everything is skipped when the binary has no ``serve`` command.
"""

import json
import threading
import time

import pytest

from crucible_client import (
    Client,
    CrucibleError,
    CrucibleInfraError,
    CrucibleOverloaded,
    CrucibleUnavailable,
    run_item,
    verify_item,
)
from crucible_client import rewards
from serving import free_port


ADD_TASK = {
    "id": "t/add", "language": "python", "harness": "assert", "entry_point": "add",
    "prompt": "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n",
    "tests": [{"name": "small", "code": "assert add(1, 2) == 3"},
              {"name": "negative", "code": "assert add(-5, 2) == -3"},
              {"name": "large", "code": "assert add(10**20, 1) == 10**20 + 1"}],
    "limits": {"cpu_time": 5},
}
ADD_GOOD = "def add(a, b):\n    return a + b\n"
ADD_WRONG = "def add(a, b):\n    return a - b\n"
# Right only when a > 100: passes 'large', fails 'small' and 'negative' (1 of 3).
ADD_PARTIAL = "def add(a, b):\n    return a + b if a > 100 else 0\n"

SUM_GT = json.dumps({"inputs": ["1 2\n", "10 -4\n", "0 0\n"], "outputs": ["3\n", "6\n", "0\n"]})
SUM_GOOD = "Read two ints and print their sum:\n\n```python\na, b = map(int, input().split())\nprint(a + b)\n```\n"
SUM_WRONG = "```python\na, b = map(int, input().split())\nprint(a * b)\n```"

# A native stdio task in Python (as converted Code Jam / Kattis tasks are) and solutions of
# it in Python, C++ and C.
SUM_TASK = {"id": "t/sum", "language": "python", "harness": "stdio",
            "tests": [{"name": "a", "stdin": "1 2\n", "expected": "3\n"},
                      {"name": "b", "stdin": "-5 20\n", "expected": "15\n"}]}
SUM_PY = "a, b = map(int, input().split())\nprint(a + b)\n"
SUM_CPP = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n"
SUM_C = ('#include <stdio.h>\nint main(void) { long a, b; scanf("%ld %ld", &a, &b); '
         'printf("%ld\\n", a + b); return 0; }\n')

# A stdio task whose checker program always crashes: crucible cannot judge -> infra_error.
BROKEN_CHECKER_TASK = {
    "id": "t/broken-checker", "language": "python", "harness": "stdio",
    "checker": {"type": "program", "language": "python", "code": "import sys\nsys.exit(3)\n"},
    "tests": [{"name": "a", "stdin": "", "expected": "1\n"}],
}


def fenced(code, lang="python"):
    return "Here is my solution.\n\n```%s\n%s```\n" % (lang, code)


# --- the server: serving.py, with the fixtures of conftest.py ---------------------------


def wait_idle(c, timeout):
    """Poll /healthz until nothing runs or waits; the last answer and the time it took."""
    t0 = time.monotonic()
    while True:
        h = c.health()
        if h["running"] == 0 and h["queued"] == 0:
            return h, time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            return h, time.monotonic() - t0
        time.sleep(0.1)


# --- health, metrics ---------------------------------------------------------------------


def test_health(client):
    h = client.health()
    assert h["status"] == "ok"
    assert h["slots"] == 2
    assert isinstance(h["running"], int) and isinstance(h["queued"], int)


def test_metrics(client):
    client.run(["/bin/true"])
    text = client.metrics()
    names = [line.split("{")[0].split()[0] for line in text.splitlines()
             if line.strip() and not line.startswith("#")]
    assert names, text
    # crucible's own families, and the process_* ones every Prometheus client library exports
    assert all(n.startswith(("crucible_", "process_")) for n in names), names
    assert "crucible_build_info" in names and "process_resident_memory_bytes" in names, names


# --- /v1/run -----------------------------------------------------------------------------


def test_run_command(client):
    r = client.run(["/bin/echo", "hi"])
    assert r["status"] == "ok" and r["exit_code"] == 0 and r["stdout"] == "hi\n"
    for key in ("signal", "limit", "cpu_time", "wall_time", "memory_kb", "stderr",
                "stdout_truncated", "stderr_truncated", "image", "message"):
        assert key in r, key


def test_run_command_failure(client):
    r = client.run("echo oops >&2; exit 3")
    assert r["status"] == "runtime_error" and r["exit_code"] == 3 and r["stderr"] == "oops\n"


def test_run_stdin_and_files_text_and_bytes(client):
    prog = ("import sys\n"
            "d = open('data/blob.bin', 'rb').read()\n"
            "t = open('note.txt').read()\n"
            "s = sys.stdin.buffer.read()\n"
            "print(d.hex(), t, s.hex())\n")
    r = client.run(["python3", "-c", prog], stdin=b"\x00\xffz",
                   files={"data/blob.bin": b"\x00\x01\xfe", "note.txt": "hello"})
    assert r["status"] == "ok", r
    assert r["stdout"] == "0001fe hello 00ff7a\n"
    r = client.run(["cat"], stdin="text stdin\n")
    assert r["stdout"] == "text stdin\n"


def test_run_code_python(client):
    r = client.run(code="import sys\nprint(6 * 7, sys.stdin.read())\n", language="python", stdin="x")
    assert r["status"] == "ok" and r["stdout"] == "42 x\n", r
    assert "compile" in r and r["compile"] is None


def test_run_code_compiled(client):
    r = client.run(code='#include <stdio.h>\nint main(void){puts("c!");return 0;}\n', language="c")
    assert r["status"] == "ok" and r["stdout"] == "c!\n", r
    assert isinstance(r["compile"], dict) and r["compile"]["status"] == "ok"
    r = client.run(code="int main(void){ return missing; }\n", language="c")
    assert r["status"] != "ok"
    assert r["compile"]["status"] == r["status"]  # the run was not attempted


def test_run_limits(client):
    r = client.run(["sleep", "10"], limits={"wall_time": 1})
    assert r["status"] == "timeout" and r["limit"] == "wall", r


# --- /v1/verify --------------------------------------------------------------------------


def test_verify_accepted(client):
    rec = client.verify(ADD_TASK, solution=ADD_GOOD)
    assert rec["verdict"] == "accepted" and rec["reward"] == 1.0
    assert rec["passed"] == rec["total"] == 3
    assert len(rec["tests"]) == 3


def test_verify_wrong(client):
    rec = client.verify(ADD_TASK, solution=ADD_WRONG)
    assert rec["verdict"] == "wrong_answer" and rec["reward"] == 0.0
    assert rec["passed"] < rec["total"]


def test_verify_completion_response_fraction(client):
    rec = client.verify(ADD_TASK, completion="    return a + b\n")
    assert rec["verdict"] == "accepted", rec
    rec = client.verify(json.dumps(ADD_TASK), response=fenced(ADD_GOOD))
    assert rec["verdict"] == "accepted", rec
    rec = client.verify(ADD_TASK, solution=ADD_PARTIAL, reward="fraction")
    assert rec["passed"] == 1 and rec["total"] == 3
    assert rec["reward"] == pytest.approx(1 / 3, abs=1e-6)


def test_verify_infra_error_has_null_reward(client):
    rec = client.verify(BROKEN_CHECKER_TASK, solution="print(1)\n")
    assert rec["verdict"] == "infra_error" and rec["reward"] is None


def test_verify_language(client):
    rec = client.verify(SUM_TASK, solution=SUM_CPP, language="cpp")
    assert rec["verdict"] == "accepted" and rec["language"] == "cpp", rec
    assert rec["compile"]["status"] == "ok"
    rec = client.verify(SUM_TASK, response=fenced(SUM_CPP, "cpp") + fenced("print(0)\n"), language="c++")
    assert rec["verdict"] == "accepted" and rec["language"] == "cpp", rec  # the cpp block
    rec = client.verify(SUM_TASK, solution=SUM_PY)
    assert rec["verdict"] == "accepted" and rec["language"] == "python", rec


def test_verify_language_the_task_cannot_take_is_400(client):
    with pytest.raises(CrucibleError) as ei:
        client.verify(ADD_TASK, solution=ADD_GOOD, language="cpp")
    assert ei.value.status == 400 and ei.value.code == "bad_request"
    assert "assert task in python" in ei.value.message and "not cpp" in ei.value.message
    with pytest.raises(CrucibleError) as ei:
        client.verify(SUM_TASK, solution=SUM_PY, language="cobol")
    assert ei.value.status == 400 and "unknown language 'cobol' (known: python" in ei.value.message
    with pytest.raises(CrucibleError) as ei:
        client.batch([verify_item(SUM_TASK, solution=SUM_CPP, language="cpp"),
                      verify_item(ADD_TASK, solution=ADD_GOOD, language="cpp")])
    assert ei.value.status == 400 and ei.value.message.startswith("items[1]: ")


# --- /v1/batch ---------------------------------------------------------------------------


def test_batch_verify_items_in_several_languages(client):
    items = [verify_item(SUM_TASK, solution=SUM_PY),
             verify_item(SUM_TASK, solution=SUM_CPP, language="cpp"),
             verify_item(SUM_TASK, solution=SUM_C, language="c"),
             verify_item(SUM_TASK, solution=SUM_CPP)]  # C++ run as the task's python
    with client.batch(items) as stream:
        got = {line["index"]: line["result"] for line in stream}
    assert [(got[i]["language"], got[i]["verdict"]) for i in range(4)] == [
        ("python", "accepted"), ("cpp", "accepted"), ("c", "accepted"), ("python", "runtime_error")]



def test_batch_streams_results_as_they_finish(client):
    items = [run_item(["sh", "-c", "sleep 4; echo slow"]),
             run_item(["echo", "fast"]),
             verify_item(ADD_TASK, solution=ADD_GOOD),
             verify_item(ADD_TASK, response=fenced(ADD_WRONG))]
    t0 = time.monotonic()
    arrivals = []
    with client.batch(items) as stream:
        for line in stream:
            arrivals.append((time.monotonic() - t0, line))
    assert sorted(line["index"] for _, line in arrivals) == [0, 1, 2, 3]
    by_index = {line["index"]: line for _, line in arrivals}
    assert by_index[0]["result"]["stdout"] == "slow\n"
    assert by_index[1]["result"]["stdout"] == "fast\n"
    assert by_index[2]["result"]["verdict"] == "accepted"
    assert by_index[3]["result"]["verdict"] == "wrong_answer"
    # completion order, streamed: the fast items arrive long before the slow one ends
    assert arrivals[-1][1]["index"] == 0
    assert arrivals[0][0] < 3.0, arrivals
    assert arrivals[-1][0] >= 4.0


def test_batch_after_dependencies(client):
    items = [run_item(["false"]),                       # 0 fails
             run_item(["echo", "never"], after=[0]),    # 1 skipped
             run_item(["echo", "ok"]),                  # 2 ok
             run_item(["echo", "then"], after=[2]),     # 3 runs after 2
             verify_item(ADD_TASK, solution=ADD_WRONG),  # 4 wrong answer
             verify_item(ADD_TASK, solution=ADD_GOOD, after=[4]),  # 5 skipped
             run_item(["echo", "both"], after=[2, 3])]  # 6 runs
    lines = client.batch(items).collect()
    assert [line["index"] for line in lines] == list(range(7))
    for i in (1, 5):
        assert lines[i].get("skipped") is True, lines[i]
        assert lines[i]["error"]["code"] == "dependency_failed"
        assert "result" not in lines[i]
    assert lines[0]["result"]["status"] == "runtime_error"
    assert lines[3]["result"]["stdout"] == "then\n"
    assert lines[4]["result"]["verdict"] == "wrong_answer"
    assert lines[6]["result"]["stdout"] == "both\n"
    order = {}
    with client.batch([run_item(["sh", "-c", "sleep 1; echo a"]),
                       run_item(["echo", "b"], after=[0])]) as stream:
        for n, line in enumerate(stream):
            order[line["index"]] = n
    assert order == {0: 0, 1: 1}  # 1 waited for 0


def test_batch_early_close_cancels(client):
    items = [run_item(["echo", "first"])] + [run_item(["sleep", "20"]) for _ in range(6)]
    stream = client.batch(items)
    first = next(stream)
    assert first["index"] == 0
    time.sleep(0.5)  # the sleepers are running / queued now
    busy = client.health()
    assert busy["running"] + busy["queued"] > 0, busy
    stream.close()
    h, took = wait_idle(client, 10)
    assert h["running"] == 0 and h["queued"] == 0, (
        "disconnecting did not cancel the batch's items: %r after %.1fs" % (h, took))


def test_batch_break_cancels(client):
    def consume_one():
        items = [run_item(["sleep", "20"]), run_item(["echo", "x"], after=[0]),
                 run_item(["echo", "y"]), run_item(["sleep", "20"])]
        for line in client.batch(items):
            return line  # leaving the loop drops the stream

    line = consume_one()
    assert line["index"] == 2
    h, took = wait_idle(client, 10)
    assert h["running"] == 0 and h["queued"] == 0, (h, took)


def test_batch_content_type(client):
    with client.batch([run_item(["true"])]) as stream:
        assert stream.headers.get("Content-Type", "").startswith("application/x-ndjson")
        assert [line["index"] for line in stream] == [0]


def test_batch_bad_item_is_400(client):
    with pytest.raises(CrucibleError) as ei:
        client.batch([run_item(["echo", "fine"]), {"kind": "frobnicate"}])
    assert ei.value.status == 400 and ei.value.code == "bad_request"
    assert "1" in ei.value.message  # names the item


# --- /run_code (SandboxFusion) -------------------------------------------------------------


def verl_run_code(client, code, stdin="", language="python"):
    # exactly the body verl's sandbox_fusion utility sends (plus memory_limit_MB)
    return client.run_code(code=code, language=language, compile_timeout=10, run_timeout=10,
                           memory_limit_MB=1024, stdin=stdin, files={}, fetch_files=[])


def test_run_code_success(client):
    r = verl_run_code(client, "a, b = map(int, input().split())\nprint(a + b)\n", stdin="2 3\n")
    assert r["status"] == "Success", r
    assert r["run_result"]["status"] == "Finished"
    assert r["run_result"]["return_code"] == 0
    assert r["run_result"]["stdout"] == "5\n"
    assert isinstance(r["run_result"]["execution_time"], (int, float))
    assert r["compile_result"] is None
    assert r["executor_pod_name"] == "crucible"
    assert "message" in r and "files" in r


def test_run_code_failed(client):
    r = verl_run_code(client, "import sys\nprint('no')\nsys.exit(1)\n")
    assert r["status"] == "Failed"
    assert r["run_result"]["status"] == "Finished" and r["run_result"]["return_code"] == 1
    r = verl_run_code(client, "while True:\n    pass\n")
    assert r["status"] == "Failed" and r["run_result"]["status"] == "TimeLimitExceeded"
    r = verl_run_code(client, "int main() { return nope; }\n", language="cpp")
    assert r["status"] == "Failed"
    assert r["compile_result"]["status"] in ("Finished", "Error")
    assert r["compile_result"]["status"] == "Error" or r["compile_result"]["return_code"] != 0
    assert r["run_result"] is None


def test_run_code_files_and_fetch(client):
    import base64

    code = ("data = open('in.bin', 'rb').read()\n"
            "open('out.txt', 'w').write(data[::-1].decode())\n"
            "print(len(data))\n")
    r = client.run_code(code=code, language="python", compile_timeout=10, run_timeout=10,
                        memory_limit_MB=-1, stdin="", files={"in.bin": b"abc"},
                        fetch_files=["out.txt"])
    assert r["status"] == "Success", r
    assert r["run_result"]["stdout"] == "3\n"
    assert base64.b64decode(r["files"]["out.txt"]) == b"cba"


# --- scheduling ----------------------------------------------------------------------------


def test_deadline_and_priority(make_server):
    srv = make_server("--slots", "1")
    c = Client(srv.url)
    done = []
    results = {}

    def job(name, **kw):
        # the time the job started, as the sandbox sees it: the order the server ran them in
        # (the order the client threads get their answers in can differ on a busy machine)
        cmd = "date +%%s%%N; sleep %s; echo %s" % (kw.pop("sleep", 0), name)
        results[name] = c.run(["sh", "-c", cmd], **kw)
        done.append(name)

    threads = [threading.Thread(target=job, args=("blocker",), kwargs={"sleep": 3})]
    threads[0].start()
    time.sleep(0.5)  # the blocker holds the only slot
    for name, kw in (("low", {"priority": "low"}), ("normal", {}),
                     ("late", {"deadline_s": 0.5}), ("high", {"priority": "high"})):
        t = threading.Thread(target=job, args=(name,), kwargs=kw)
        t.start()
        threads.append(t)
        time.sleep(0.2)  # admission order: low, normal, late, high
    for t in threads:
        t.join(60)
    assert results["late"]["status"] == "sandbox_error", results["late"]
    assert "deadline" in results["late"]["message"].lower(), results["late"]
    assert sorted(done) == ["blocker", "high", "late", "low", "normal"], done
    ran = sorted((int(results[n]["stdout"].split()[0]), n) for n in done if n != "late")
    assert [n for _, n in ran] == ["blocker", "high", "normal", "low"], ran
    for _, n in ran:
        assert results[n]["stdout"].split()[1:] == [n], results[n]


def test_verify_deadline_is_infra_error(make_server):
    srv = make_server("--slots", "1")
    c = Client(srv.url)
    t = threading.Thread(target=c.run, args=(["sleep", "2"],))
    t.start()
    time.sleep(0.5)
    rec = c.verify(ADD_TASK, solution=ADD_GOOD, deadline_s=0.3)
    rec2 = c.verify(SUM_TASK, solution=SUM_CPP, language="cpp", deadline_s=0.3)  # still busy
    t.join(30)
    assert rec["verdict"] == "infra_error" and rec["reward"] is None, rec
    assert "deadline" in rec["message"].lower(), rec
    assert rec["language"] == "python" and rec2["language"] == "cpp", (rec, rec2)
    assert rec2["verdict"] == "infra_error" and rec2["reward"] is None, rec2


def test_body_too_large_413(make_server):
    srv = make_server("--slots", "1", "--max-body", "1")
    with pytest.raises(CrucibleError) as ei:
        Client(srv.url).run(["true"], stdin="x" * (2 << 20))
    assert ei.value.status == 413 and ei.value.code == "too_large"


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("limits", [{"cpu_time": -1}, {"memory_mb": "lots"}, {"bogus": 1},
                                    {"cpu_time": 1e9}])
def test_bad_limits_400(client, limits):
    with pytest.raises(CrucibleError) as ei:
        client.run(["true"], limits=limits)
    e = ei.value
    assert e.status == 400 and e.code == "bad_request" and e.message
    assert not isinstance(e, CrucibleOverloaded)


def test_not_found_and_method(client):
    with pytest.raises(CrucibleError) as ei:
        client.request("GET", "/v1/nope")
    assert ei.value.status == 404 and ei.value.code == "not_found"
    with pytest.raises(CrucibleError) as ei:
        client.request("GET", "/v1/run")
    assert ei.value.status == 405 and ei.value.code == "method_not_allowed"


def test_bad_request_bodies(client):
    with pytest.raises(CrucibleError) as ei:
        client.request("POST", "/v1/run", {"command": ["echo"], "code": "x", "language": "python"})
    assert ei.value.status == 400
    with pytest.raises(CrucibleError) as ei:
        client.request("POST", "/v1/verify", {"task": ADD_TASK})  # no solution
    assert ei.value.status == 400
    with pytest.raises(CrucibleError) as ei:
        client.run(["true"], priority="urgent")
    assert ei.value.status == 400


def test_unauthorized(make_server, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("tok-123\n")
    srv = make_server("--slots", "1", "--token-file", str(token_file))
    assert Client(srv.url).health()["status"] == "ok"  # /healthz is open
    for token in (None, "wrong"):
        with pytest.raises(CrucibleError) as ei:
            Client(srv.url, token=token).run(["true"])
        assert ei.value.status == 401 and ei.value.code == "unauthorized"
        with pytest.raises(CrucibleError) as ei:
            Client(srv.url, token=token).metrics()
        assert ei.value.status == 401
    assert Client(srv.url, token="tok-123").run(["/bin/echo", "in"])["stdout"] == "in\n"


def test_overloaded_429(make_server):
    srv = make_server("--slots", "1", "--queue", "1")
    no_retry = Client(srv.url, max_retries=0)
    # a batch larger than the whole queue can never be admitted
    with pytest.raises(CrucibleOverloaded) as ei:
        no_retry.batch([run_item(["true"]) for _ in range(3)])
    e = ei.value
    assert e.status == 429 and e.code == "overloaded"
    assert e.retry_after is not None and e.retry_after >= 0

    # parallel requests beyond slots + queue: some get 429 without retries
    results, errors = [], []

    def one(c):
        try:
            results.append(c.run(["sleep", "2"]))
        except CrucibleError as ex:
            errors.append(ex)

    threads = [threading.Thread(target=one, args=(no_retry,)) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert any(isinstance(ex, CrucibleOverloaded) for ex in errors), (results, errors)
    assert all(isinstance(ex, CrucibleOverloaded) for ex in errors), errors
    assert all(r["status"] == "ok" for r in results)

    # with retries (short capped waits) every request gets through
    retrying = Client(srv.url, max_retries=30, max_retry_wait=0.5)
    results, errors = [], []
    threads = [threading.Thread(target=one, args=(retrying,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == [] and len(results) == 4


def test_unavailable():
    with pytest.raises(CrucibleUnavailable):
        Client("http://127.0.0.1:%d" % free_port(), timeout=5, resend_for=0).run(["true"])


# --- verl adapter --------------------------------------------------------------------------


def test_verl_compute_score_stdio(server):
    kw = dict(url=server.url)
    assert rewards.compute_score("codecontests", SUM_GOOD, SUM_GT, {"index": 0}, **kw) == 1.0
    assert rewards.compute_score("codecontests", SUM_WRONG, SUM_GT, {"index": 1}, **kw) == 0.0
    # verl calls it with keywords; ground truth may arrive as a dict
    score = rewards.compute_score(data_source="x", solution_str=SUM_GOOD,
                                  ground_truth=json.loads(SUM_GT), extra_info=None, **kw)
    assert score == 1.0 and isinstance(score, float)


def test_verl_compute_score_language_and_details(server):
    c_sum = fenced('#include <stdio.h>\nint main(void){long a,b;scanf("%ld %ld",&a,&b);'
                   'printf("%ld\\n",a+b);return 0;}\n', "c")
    d = rewards.compute_score("cc", c_sum, SUM_GT, {"language": "c"}, url=server.url, details=True)
    assert d == {"score": 1.0, "accepted": 1.0, "passed": 3, "total": 3, "infra_error": 0.0}
    d = rewards.compute_score("cc", SUM_WRONG, SUM_GT, None, url=server.url, details=True,
                              reward="fraction")
    assert d["score"] == pytest.approx(1 / 3, abs=1e-6) and d["passed"] == 1  # 0*0 == 0+0


def test_verl_compute_score_native_and_call_based(server):
    client = Client(server.url)
    assert rewards.compute_score("humaneval", fenced(ADD_GOOD), json.dumps(ADD_TASK), client=client) == 1.0
    assert rewards.compute_score("humaneval", fenced(ADD_WRONG), ADD_TASK, client=client) == 0.0
    gt = {"fn_name": "twoSum", "inputs": [[[2, 7, 11, 15], 9], [[3, 2, 4], 6]], "outputs": [[[0, 1]], [[1, 2]]]}
    good = fenced("class Solution:\n    def twoSum(self, nums, target):\n        seen = {}\n"
                  "        for i, x in enumerate(nums):\n            if target - x in seen:\n"
                  "                return [seen[target - x], i]\n            seen[x] = i\n")
    assert rewards.compute_score("leetcode", good, gt, client=client) == 1.0
    assert rewards.compute_score("leetcode", fenced("def twoSum(nums, target):\n    return [0, 0]\n"),
                                 gt, client=client) == 0.0


def test_verl_infra_error_is_not_zero(server):
    gt = json.dumps(BROKEN_CHECKER_TASK)
    resp = fenced("print(1)\n")
    with pytest.raises(CrucibleInfraError) as ei:
        rewards.compute_score("x", resp, gt, url=server.url)
    assert ei.value.record["verdict"] == "infra_error"
    assert rewards.compute_score("x", resp, gt, url=server.url, on_infra_error="zero") == 0.0
    assert rewards.compute_score("x", resp, gt, url=server.url, on_infra_error="none") is None


def test_verl_compute_score_batch(server):
    scores = rewards.compute_score_batch(["a", "b", "c"], [SUM_GOOD, SUM_WRONG, fenced(ADD_GOOD)],
                                         [SUM_GT, SUM_GT, ADD_TASK], [{}, {}, {}], url=server.url)
    assert scores == [1.0, 0.0, 1.0]
    scores = rewards.compute_score_batch(["a", "b"], [SUM_GOOD, fenced("print(1)\n")],
                                         [SUM_GT, BROKEN_CHECKER_TASK],
                                         None, url=server.url, on_infra_error="none")
    assert scores == [1.0, None]


def test_verl_sample_language_on_a_native_stdio_task(server):
    kw = dict(url=server.url)
    task = json.dumps(SUM_TASK)
    assert rewards.compute_score("kattis", fenced(SUM_CPP, "cpp"), task, {"language": "cpp"}, **kw) == 1.0
    assert rewards.compute_score("kattis", fenced(SUM_PY), task, {"language": "python"}, **kw) == 1.0
    assert rewards.compute_score("kattis", fenced(SUM_PY), task, None, **kw) == 1.0
    scores = rewards.compute_score_batch(
        ["kattis"] * 3, [fenced(SUM_PY), fenced(SUM_CPP, "cpp"), fenced(SUM_C, "c")], [task] * 3,
        [{"language": "python"}, {"language": "cpp"}, {"language": "c"}], **kw)
    assert scores == [1.0, 1.0, 1.0]
    with pytest.raises(CrucibleError) as ei:  # the caller's mistake: raises, whatever on_infra_error
        rewards.compute_score("he", fenced(ADD_GOOD), ADD_TASK, {"language": "cpp"}, on_infra_error="zero", **kw)
    assert ei.value.status == 400


# --- TRL adapter ----------------------------------------------------------------------------


def test_trl_reward_func_group(server):
    f = rewards.make_reward_func(url=server.url)
    assert f.__name__ == "crucible"
    completions = [
        SUM_GOOD,
        [{"role": "assistant", "content": SUM_GOOD}],               # conversational
        [{"role": "assistant", "content": SUM_WRONG}],
        [{"role": "assistant", "content": fenced(ADD_GOOD)}],
        [{"role": "assistant", "content": fenced("print(1)\n")}],   # broken checker: infra
    ]
    tasks = [SUM_GT, json.loads(SUM_GT), SUM_GT, json.dumps(ADD_TASK), BROKEN_CHECKER_TASK]
    prompts = [[{"role": "user", "content": "solve"}]] * len(completions)
    scores = f(prompts=prompts, completions=completions, completion_ids=[[1]] * 5, crucible_task=tasks,
               trainer_state=None)
    assert scores == [1.0, 1.0, 0.0, 1.0, None]


def test_trl_inputs_outputs_columns_and_default(server, monkeypatch):
    gt = json.loads(SUM_GT)
    n = 3
    cols = dict(inputs=[gt["inputs"]] * n, outputs=[gt["outputs"]] * n)
    completions = [[{"role": "assistant", "content": c}] for c in (SUM_GOOD, SUM_WRONG, "no code at all")]
    monkeypatch.setenv("CRUCIBLE_URL", server.url)
    assert rewards.reward_func(completions=completions, **cols) == [1.0, 0.0, 0.0]
    f = rewards.make_reward_func(url=server.url, reward="fraction", name="crucible_fraction")
    assert f.__name__ == "crucible_fraction"
    assert f(completions, **cols) == [1.0, pytest.approx(1 / 3, abs=1e-6), 0.0]


def test_trl_language_column_mixes_languages(server):
    f = rewards.make_reward_func(url=server.url, language_key="language")
    completions = [[{"role": "assistant", "content": fenced(code, lang)}]
                   for code, lang in ((SUM_PY, "python"), (SUM_CPP, "cpp"), (SUM_C, "c"), (SUM_CPP, "cpp"))]
    scores = f(completions, crucible_task=[SUM_TASK] * 4, language=["python", "cpp", "c", None])
    assert scores == [1.0, 1.0, 1.0, 0.0]  # the last row names no language: the task's python


# --- the task library (crucible serve --db) ---------------------------------------------------


def _lib_task(tid, fn, op, tags):
    return {"id": tid, "language": "python", "harness": "assert", "entry_point": fn,
            "prompt": "def %s(a, b):\n" % fn, "tags": tags,
            "tests": [{"name": "t1", "code": "assert %s(6, 3) == 6 %s 3" % (fn, op)},
                      {"name": "t2", "code": "assert %s(-2, 5) == -2 %s 5" % (fn, op)}],
            "limits": {"cpu_time": 5}}


# The ids have a '/' (kept in the path) and, for one, a space and a '+' (quoted).
LIB_TASKS = [_lib_task("lib/add", "add", "+", ["math", "easy"]),
             _lib_task("lib/sub", "sub", "-", ["math"]),
             _lib_task("other/mul 2+", "mul", "*", ["product"])]
LIB_GOOD = {"lib/add": "def add(a, b):\n    return a + b\n",
            "lib/sub": "def sub(a, b):\n    return a - b\n",
            "other/mul 2+": "def mul(a, b):\n    return a * b\n"}
SUB_WRONG = "def sub(a, b):\n    return a + b\n"
# three tasks, and a bad third line: listed by the server, the others imported
LIB_JSONL = "\n".join([json.dumps(LIB_TASKS[0]), json.dumps(LIB_TASKS[1]),
                       '{"id": "lib/broken", "language": "python"}',
                       json.dumps(LIB_TASKS[2])]) + "\n"


@pytest.fixture
def library(make_server, tmp_path):
    """A client of a fresh ``crucible serve --db <tmp>/lib.db`` holding the three tasks."""
    srv = make_server("--slots", "2", "--db", str(tmp_path / "lib.db"))
    c = Client(srv.url, timeout=120)
    c.import_answer = c.import_tasks(LIB_JSONL)
    return c


def test_library_import(library):
    a = library.import_answer
    assert (a["new"], a["changed"], a["unchanged"], a["bad"]) == (3, 0, 0, 1), a
    assert len(a["errors"]) == 1 and a["errors"][0]["line"] == 3, a
    assert a["errors"][0]["message"], a
    # an iterable of dicts (or their JSON text) gives the same tasks: nothing changes
    a = library.import_tasks([LIB_TASKS[0], json.dumps(LIB_TASKS[1]), LIB_TASKS[2]])
    assert (a["new"], a["changed"], a["unchanged"], a["bad"], a["errors"]) == (0, 0, 3, 0, []), a
    changed = dict(LIB_TASKS[1], prompt="def sub(a, b):\n    \"\"\"a - b\"\"\"\n")
    a = library.import_tasks(iter([changed]))
    assert (a["new"], a["changed"], a["unchanged"]) == (0, 1, 0), a
    assert library.task("lib/sub")["versions"] == 2
    a = library.import_tasks(json.dumps(LIB_TASKS[1]).encode() + b"\n")  # bytes: back to v1
    assert a["changed"] == 1, a
    # no valid line: a 400, raised as any other 4xx, with the server's answer attached
    with pytest.raises(CrucibleError) as ei:
        library.import_tasks('not json\n{"id": "x"}\n')
    e = ei.value
    assert e.status == 400 and e.code == "bad_request", e
    assert "line 1" in e.message and "line 2" in e.message, e.message
    assert e.body["bad"] == 2 and [x["line"] for x in e.body["errors"]] == [1, 2]
    with pytest.raises(CrucibleError) as ei:
        library.import_tasks([])
    assert ei.value.status == 400 and ei.value.code == "bad_request"


def test_library_list_filters(library):
    rows = library.tasks()
    assert sorted(r["id"] for r in rows) == sorted(LIB_GOOD)
    row = next(r for r in rows if r["id"] == "lib/add")
    assert row["status"] == "new" and row["bucket"] == "untried" and row["attempts"] == 0
    assert row["tags"] == ["math", "easy"] and row["source"] == "lib"
    assert sorted(r["id"] for r in library.tasks(tag="math")) == ["lib/add", "lib/sub"]
    assert [r["id"] for r in library.tasks(tag=["math", "easy"])] == ["lib/add"]
    assert [r["id"] for r in library.tasks(tag="math,easy")] == ["lib/add"]
    assert library.tasks(tag=["math", "product"]) == []
    assert [r["id"] for r in library.tasks(source="other")] == ["other/mul 2+"]
    assert [r["id"] for r in library.tasks(id_prefix="other/")] == ["other/mul 2+"]
    assert len(library.tasks(language="python", status=["new", "valid"])) == 3
    assert library.tasks(status="valid") == []
    assert len(library.tasks(limit=1)) == 1
    with pytest.raises(CrucibleError) as ei:
        library.tasks(status="shiny")
    assert ei.value.status == 400 and "status" in ei.value.message
    with pytest.raises(CrucibleError) as ei:
        library.tasks(min_pass=0.9, max_pass=0.1)
    assert ei.value.status == 400


def test_library_verify_by_task_id_records(library):
    for tid in ("lib/add", "other/mul 2+"):
        rec = library.verify(task_id=tid, model="m", solution=LIB_GOOD[tid])
        assert rec["verdict"] == "accepted" and rec["reward"] == 1.0, rec
        assert rec["recorded"] is True and rec["model"] == "m", rec
        assert rec["task_id"] == tid
    rec = library.verify(task_id="lib/sub", model="m", response=fenced(SUB_WRONG))
    assert rec["verdict"] == "wrong_answer" and rec["recorded"] is True
    rec = library.verify(task_id="lib/sub", solution=LIB_GOOD["lib/sub"])  # the default model
    assert rec["recorded"] is True and rec["model"] == "default"

    t = library.task("lib/add", model="m")
    assert t["id"] == "lib/add" and t["attempts"] == 1 and t["accepted"] == 1, t
    assert t["bucket"] != "untried"
    assert t["task"]["entry_point"] == "add"
    assert t["version_history"][0]["models"]["m"]["attempts"] == 1
    assert library.task("lib/add", model="other")["attempts"] == 0
    assert library.task("other/mul 2+", model="m")["attempts"] == 1  # a quoted id
    sub = library.task("lib/sub")  # all models
    assert sub["attempts"] == 2 and sub["accepted"] == 1
    assert library.task("lib/sub", model="m")["attempts"] == 1

    # batch items take task_id and model too
    items = [verify_item(task_id="lib/add", model="m", solution=LIB_GOOD["lib/add"]),
             verify_item(task_id="lib/sub", model="m", solution=SUB_WRONG),
             verify_item(ADD_TASK, solution=ADD_GOOD)]
    lines = library.batch(items).collect()
    assert [line["result"]["verdict"] for line in lines] == ["accepted", "wrong_answer", "accepted"]
    assert lines[0]["result"]["recorded"] is True and lines[0]["result"]["model"] == "m"
    assert "recorded" not in lines[2]["result"]
    assert library.task("lib/add", model="m")["attempts"] == 2
    assert library.task("lib/sub", model="m")["attempts"] == 2


def test_library_sample_reproducible(library):
    a = library.sample_tasks(2, seed=1234)
    assert a["seed"] == 1234 and a["count"] == 2 and len(a["tasks"]) == 2
    assert all("explore" in t for t in a["tasks"])
    b = library.sample_tasks(2, seed=1234)
    assert [t["id"] for t in a["tasks"]] == [t["id"] for t in b["tasks"]]
    ids = [t["id"] for t in library.sample_tasks(3, seed=99)["tasks"]]
    assert sorted(ids) == sorted(LIB_GOOD)  # untried tasks are exploration picks
    free = library.sample_tasks(3)  # the server picks a seed and says which
    assert isinstance(free["seed"], int)
    again = library.sample_tasks(3, seed=free["seed"])
    assert [t["id"] for t in again["tasks"]] == [t["id"] for t in free["tasks"]]
    assert [t["id"] for t in library.sample_tasks(5, tag="product", seed=3)["tasks"]] == ["other/mul 2+"]
    # in band only (explore 0): a task needs attempts; lib/add is solved once by "m"
    library.verify(task_id="lib/add", model="m", solution=LIB_GOOD["lib/add"])
    band = library.sample_tasks(3, min_pass=0.5, max_pass=1.0, model="m", explore=0, seed=5)
    assert [t["id"] for t in band["tasks"]] == ["lib/add"] and band["tasks"][0]["explore"] is False
    assert library.sample_tasks(3, min_pass=0.5, max_pass=1.0, model="m2", explore=0,
                                seed=5)["tasks"] == []
    with pytest.raises(CrucibleError) as ei:
        library.sample_tasks(0)
    assert ei.value.status == 400 and "n" in ei.value.message


def test_library_stats(library):
    s = library.task_stats()
    assert s["tasks"] == 3 and s["status"]["new"] == 3, s
    assert s["buckets"]["untried"] == 3 and s["attempts"] == 0
    assert len(s["histogram"]) == 10
    library.verify(task_id="lib/add", model="m", solution=LIB_GOOD["lib/add"])
    library.verify(task_id="lib/sub", model="m", solution=SUB_WRONG)
    s = library.task_stats(model="m")
    assert (s["tasks"], s["attempts"], s["accepted"]) == (3, 2, 1), s
    assert s["buckets"]["untried"] == 1
    assert sum(b["tasks"] for b in s["histogram"]) == 2
    assert library.task_stats(model="nobody")["attempts"] == 0
    s = library.task_stats(tag="math", model="m")
    assert s["tasks"] == 2 and s["attempts"] == 2
    assert library.task_stats(exclude=["new"])["tasks"] == 0


def test_library_argument_errors(library):
    with pytest.raises(ValueError, match="exactly one of task"):
        library.verify(ADD_TASK, task_id="lib/add", solution=ADD_GOOD)
    with pytest.raises(ValueError, match="exactly one of task"):
        library.verify(solution=ADD_GOOD)
    with pytest.raises(ValueError, match="needs task_id"):
        library.verify(ADD_TASK, model="m", solution=ADD_GOOD)
    with pytest.raises(ValueError):
        verify_item(ADD_TASK, task_id="lib/add", solution=ADD_GOOD)


def test_library_unknown_task(library):
    for call in (lambda: library.task("lib/nope"),
                 lambda: library.task("lib/nope", model="m"),
                 lambda: library.verify(task_id="lib/nope", model="m", solution="x = 1\n")):
        with pytest.raises(CrucibleError) as ei:
            call()
        e = ei.value
        assert e.status == 404 and e.code == "not_found" and "lib/nope" in e.message, e
    assert library.task_stats(model="m")["attempts"] == 0


def test_library_needs_db(client):
    with pytest.raises(CrucibleError) as ei:
        client.tasks()
    assert ei.value.status == 404 and ei.value.code == "no_library"
    with pytest.raises(CrucibleError) as ei:
        client.verify(task_id="lib/add", solution="x = 1\n")
    assert ei.value.status == 400 and "--db" in ei.value.message
