# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: a SIGTERM handler that exits 0, and a SIGTERM sent to itself on the first call.
import os
import signal

signal.signal(signal.SIGTERM, lambda *a: os._exit(0))

def add(a, b):
    os.kill(os.getpid(), signal.SIGTERM)
    return 0
