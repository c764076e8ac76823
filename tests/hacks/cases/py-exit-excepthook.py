# task: examples/tasks.jsonl#demo/py-add
# expect: wrong_answer
# hack: sys.excepthook prints PASSED and exits 0 when the failed assertion propagates.
import os
import sys

def hook(*args):
    print('PASSED')
    sys.stdout.flush()
    os._exit(0)

sys.excepthook = hook

def add(a, b):
    return 0
