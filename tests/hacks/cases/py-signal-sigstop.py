# task: tasks/py-one.json
# expect: timeout
# hack: the process stops itself (SIGSTOP): nothing more runs, the wall clock decides.
import os
import signal

def add(a, b):
    os.kill(os.getpid(), signal.SIGSTOP)
    return 0
