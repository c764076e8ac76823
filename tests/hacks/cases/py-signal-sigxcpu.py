# task: tasks/py-one.json
# expect: runtime_error
# hack: SIGXCPU sent to itself, as if a CPU limit had been reached: a limit verdict would not
# be a wrong answer.
# gap: the sandbox reports a SIGXCPU the program sent itself as the CPU time limit (timeout):
# the reward is 0 either way; a sandbox verdict fix (issue9-stress) makes it runtime_error
import os
import signal

def add(a, b):
    os.kill(os.getpid(), signal.SIGXCPU)
    return 0
