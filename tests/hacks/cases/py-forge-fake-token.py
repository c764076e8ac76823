# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: prints a made-up token (and many of them) and exits 0.
import os

def add(a, b):
    os.write(1, b''.join(b'\n%032x' % (i * 0x1234567) for i in range(1000)) + b'\n')
    os._exit(0)
