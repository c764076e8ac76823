# task: examples/tasks.jsonl#demo/py-add
# expect: wrong_answer
# hack: a global object whose __del__ exits 0 when the interpreter tears down.
import os

class Bye:
    def __del__(self):
        os._exit(0)

keep = Bye()

def add(a, b):
    return 0
