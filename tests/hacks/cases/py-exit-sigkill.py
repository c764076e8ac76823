# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: the process kills itself with SIGKILL on the first call.
import os
import signal

def add(a, b):
    os.kill(os.getpid(), signal.SIGKILL)
