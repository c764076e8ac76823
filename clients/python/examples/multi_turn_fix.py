#!/usr/bin/env python3
"""A full multi-turn agent episode in one crucible session, without a model.

The turns an agent makes when it fixes code: write a solution, run the tests, read the
failure, write a fix, run the tests again, and finally verify the session's state against
the task — the reward of the episode. The "agent" here is scripted (a buggy median, then
the right one), so the example runs anywhere `crucible serve` does:

    build/crucible serve --listen 127.0.0.1:8080 --slots 2 &
    PYTHONPATH=clients/python python3 clients/python/examples/multi_turn_fix.py

Exit status 0 when the episode ends with reward 1.
"""

import argparse
import os
import sys

from crucible_client import Client

BUGGY = """def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]
"""

FIXED = """def median(xs):
    xs = sorted(xs)
    n, mid = len(xs), len(xs) // 2
    return xs[mid] if n % 2 else (xs[mid - 1] + xs[mid]) / 2
"""

TESTS = """from stats import median


def test_odd():
    assert median([3, 1, 2]) == 2


def test_even():
    assert median([4, 1, 3, 2]) == 2.5
"""

# The task the episode is judged by: a command-harness task whose tests run over the
# session's files. Its own copy of the tests is written before they run, so whatever the
# agent did to test_stats.py, the reward is earned against these.
TASK = {
    "id": "demo/median", "language": "python", "harness": "command",
    "files": {"test_stats.py": TESTS},
    "command": ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "--junitxml=report.xml", "test_stats.py"],
    "limits": {"cpu_time": 20},
}

RUN_TESTS = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_stats.py"]


def episode(client, log=print):
    """Run the scripted episode; returns (test results of each turn, verification record)."""
    turns = []
    with client.session(limits={"memory_mb": 512}) as s:
        log("session %s" % s.id)
        # Turn 1: the environment gives the tests, the agent writes a first attempt.
        s.write("test_stats.py", TESTS)
        s.write("stats.py", BUGGY)
        r = s.exec(RUN_TESTS, timeout_s=60)
        turns.append(r)
        log("turn 1: pytest exit %s\n%s" % (r["exit_code"], r["stdout"].strip()))
        # Turn 2: the agent reads the failure and fixes the even case.
        if "test_even" in r["stdout"]:
            s.write("stats.py", FIXED)
        r = s.exec(RUN_TESTS, timeout_s=60)
        turns.append(r)
        log("turn 2: pytest exit %s\n%s" % (r["exit_code"], r["stdout"].strip()))
        # The end of the episode: the reward of the session's state.
        rec = s.verify(TASK)
        log("verify: verdict %s, reward %s" % (rec["verdict"], rec["reward"]))
    return turns, rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=os.environ.get("CRUCIBLE_URL", "http://127.0.0.1:8080"))
    args = ap.parse_args()
    _, rec = episode(Client(args.url, timeout=300))
    return 0 if rec["reward"] == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
