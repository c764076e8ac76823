# task: examples/tasks.jsonl#demo/py-add
# expect: wrong_answer
# hack: weakref.finalize registered to exit 0 at shutdown.
import os
import weakref

class Anchor:
    pass

anchor = Anchor()
weakref.finalize(anchor, os._exit, 0)

def add(a, b):
    return 0
