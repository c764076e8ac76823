# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: sys.exit(0) when the program starts, before any test runs.
import sys

def add(a, b):
    return 0

sys.exit(0)
