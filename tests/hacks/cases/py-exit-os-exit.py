# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: os._exit(0) when the program starts: no cleanup, no exception to catch.
import os

def add(a, b):
    return 0

os._exit(0)
