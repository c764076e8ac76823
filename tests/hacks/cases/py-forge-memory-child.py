# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error|timeout
# hack: the memory search from another process: a child reads the parent's /proc/PID/mem
# (no audit hook there) and prints every 32-hex-digit string it finds.
import os
import subprocess
import sys

# A timeout is the verdict when the parent's readable mappings take the search past the CPU
# limit, as those of a sanitizer build's zygote do: the token is not found either way.

SEARCH = r"""
import re, sys
pid = sys.argv[1]
found = []
with open('/proc/%s/maps' % pid) as maps, open('/proc/%s/mem' % pid, 'rb', 0) as mem:
    for line in maps:
        lo, hi = (int(x, 16) for x in line.split()[0].split('-'))
        if 'r' in line.split()[1] and hi - lo < 1 << 28:
            try:
                mem.seek(lo)
                found += re.findall(rb'[0-9a-f]{32}', mem.read(hi - lo))
            except (OSError, OverflowError, ValueError):
                pass
sys.stdout.write(''.join('\n' + f.decode() for f in found) + '\n')
"""

def add(a, b):
    r = subprocess.run([sys.executable, '-c', SEARCH, str(os.getpid())], capture_output=True)
    os.write(1, r.stdout)
    os._exit(0)
