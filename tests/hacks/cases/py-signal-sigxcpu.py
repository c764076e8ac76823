# task: tasks/py-one.json
# expect: runtime_error
# hack: SIGXCPU sent to itself, as if a CPU limit had been reached: a limit verdict would not
# be a wrong answer.
import os
import signal

def add(a, b):
    os.kill(os.getpid(), signal.SIGXCPU)
    return 0
