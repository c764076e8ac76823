# task: examples/tasks.jsonl#demo/py-add
# expect: wrong_answer
# hack: writes a fake AssertionError report to stderr and exits 0 before the tests.
import os

os.write(2, b'Traceback (most recent call last):\nAssertionError\n')
os._exit(0)
