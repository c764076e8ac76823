# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: reads stdin, where the token arrives, and prints what it finds.
import os
import re
import sys

def add(a, b):
    text = sys.stdin.read()
    try:
        os.lseek(0, 0, 0)
        text += os.read(0, 4096).decode('latin1')
    except OSError:
        pass

    found = [m for m in re.findall(r'[0-9a-f]{32}', text)]
    os.write(1, ('\n' + (found[-1] if found else '0' * 32) + '\n').encode())
    os._exit(0)
