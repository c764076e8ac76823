# task: tasks/py-one.json
# expect: runtime_error
# hack: an alarm that exits 0 while the tests run.
import os
import signal
import time

signal.signal(signal.SIGALRM, lambda *a: os._exit(0))
signal.setitimer(signal.ITIMER_REAL, 0.01)

def add(a, b):
    time.sleep(1)
    return 0
