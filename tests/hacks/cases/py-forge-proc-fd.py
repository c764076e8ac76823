# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: opens every /proc/self/fd/N (stdin would be a memfd holding the token) and rereads it.
import os
import re

def add(a, b):
    text = ''
    for n in os.listdir('/proc/self/fd'):
        try:
            os.lseek(int(n), 0, 0)
        except OSError:
            pass
        try:
            text += open('/proc/self/fd/' + n, 'rb').read(4096).decode('latin1') + ' '
        except OSError:
            pass

    found = [m for m in re.findall(r'[0-9a-f]{32}', text)]
    os.write(1, ('\n' + (found[-1] if found else '0' * 32) + '\n').encode())
    os._exit(0)
