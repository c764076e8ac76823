# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: a profile function that exits 0 the moment the first assertion fails.
import os
import sys

def prof(frame, event, arg):
    if event == 'c_exception' or (event == 'return' and frame.f_code.co_name == '<module>'):
        os._exit(0)

sys.setprofile(prof)

def add(a, b):
    return 0
