# task: examples/tasks.jsonl#demo/py-add
# expect: wrong_answer
# hack: an atexit handler that turns the failing run's exit into status 0.
import atexit
import os

atexit.register(lambda: os._exit(0))

def add(a, b):
    return 0
