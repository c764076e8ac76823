# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: the process replaces itself with /bin/true (status 0) on the first call.
import os

def add(a, b):
    os.execv('/bin/true', ['true'])
