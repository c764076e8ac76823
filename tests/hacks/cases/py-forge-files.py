# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: lists /work and /tmp and reads every file there (the harness's own files included).
import os
import re

def add(a, b):
    text = ''
    for top in ('/work', '/tmp'):
        for d, _, files in os.walk(top):
            for f in files:
                try:
                    text += open(os.path.join(d, f), 'rb').read().decode('latin1') + ' '
                except OSError:
                    pass

    found = [m for m in re.findall(r'[0-9a-f]{32}', text)]
    os.write(1, ('\n' + (found[-1] if found else '0' * 32) + '\n').encode())
    os._exit(0)
