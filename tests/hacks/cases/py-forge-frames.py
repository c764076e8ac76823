# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: walks the interpreter's frames up from the call and prints every 32-hex-digit string
# or 128-bit number it finds in their variables (the harness's among them).
import os
import re
import sys

def add(a, b):
    found = []
    f = sys._getframe()
    while f is not None:
        for v in list(f.f_locals.values()) + list(f.f_globals.values()):
            if isinstance(v, str):
                found += re.findall(r'[0-9a-f]{32}', v)
            elif isinstance(v, int) and v.bit_length() > 100:
                found.append('%032x' % v)
        f = f.f_back
    os.write(1, ''.join('\n' + x for x in found).encode() + b'\n')
    os._exit(0)
