#!/usr/bin/env python3
"""One state forked into a group of rollouts (GRPO), each verified for its reward.

An episode reaches a state worth branching from — here: a repository with a bug and its
tests, after a setup step. Instead of replaying the episode N times, the session is forked
N times: each fork starts with a copy of the parent's files, and the rollouts diverge from
there (each "policy sample" writes its own candidate fix). Each fork is verified; the
parent is left as it was. The group's rewards are what GRPO normalises.

    PYTHONPATH=clients/python python3 clients/python/examples/grpo_fork.py --n 4

Exit status 0 when the rewards are those expected (the right candidates 1, the others 0)
and the parent is untouched.
"""

import argparse
import os
import sys
import time

from crucible_client import Client

BUGGY = "def clamp(x, lo, hi):\n    return max(lo, x)\n"
TESTS = """from clamp import clamp


def test_inside():
    assert clamp(5, 0, 10) == 5


def test_below():
    assert clamp(-3, 0, 10) == 0


def test_above():
    assert clamp(42, 0, 10) == 10
"""

# What N policy samples might write: two right, two wrong.
CANDIDATES = [
    "def clamp(x, lo, hi):\n    return min(hi, max(lo, x))\n",
    "def clamp(x, lo, hi):\n    return max(lo, x)\n",                  # unchanged: wrong
    "def clamp(x, lo, hi):\n    return lo if x < lo else hi if x > hi else x\n",
    "def clamp(x, lo, hi):\n    return min(hi, x)\n",                  # wrong below
]

TASK = {
    "id": "demo/clamp", "language": "python", "harness": "command",
    "files": {"test_clamp.py": TESTS},
    "command": ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "--junitxml=report.xml", "test_clamp.py"],
    "limits": {"cpu_time": 20},
}


def group(client, n, log=print):
    """Fork one state into n rollouts; returns (rewards, fork seconds, parent's clamp.py)."""
    with client.session() as parent:
        parent.write("clamp.py", BUGGY)
        parent.write("test_clamp.py", TESTS)
        parent.exec("python3 -c 'import clamp' && echo ready > state.txt", timeout_s=30)
        t0 = time.monotonic()
        forks = parent.fork(n)
        fork_s = time.monotonic() - t0
        log("forked %s into %d sessions in %.3f s" % (parent.id, n, fork_s))
        rewards = []
        try:
            for i, child in enumerate(forks):
                assert child.read("state.txt") == b"ready\n", "a fork has its parent's files"
                child.write("clamp.py", CANDIDATES[i % len(CANDIDATES)])
                rec = child.verify(TASK)
                rewards.append(rec["reward"])
                log("rollout %d (%s): %s, reward %s" % (i, child.id, rec["verdict"], rec["reward"]))
        finally:
            for child in forks:
                child.close()
        parent_code = parent.read("clamp.py").decode()
    return rewards, fork_s, parent_code


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default=os.environ.get("CRUCIBLE_URL", "http://127.0.0.1:8080"))
    ap.add_argument("--n", type=int, default=4, help="rollouts in the group (default 4)")
    args = ap.parse_args()
    rewards, _, parent_code = group(Client(args.url, timeout=300), args.n)
    want = [1.0 if i % len(CANDIDATES) in (0, 2) else 0.0 for i in range(args.n)]
    mean = sum(rewards) / len(rewards) if rewards else 0.0
    print("group rewards %s, mean %.2f (the GRPO baseline)" % (rewards, mean))
    ok = rewards == want and parent_code == BUGGY
    print("parent unchanged: %s" % (parent_code == BUGGY))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
