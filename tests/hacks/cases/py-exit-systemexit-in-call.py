# task: examples/tasks.jsonl#demo/py-add
# expect: runtime_error
# hack: the function under test raises SystemExit(0): the process ends with status 0 on the
# first call, before any assertion can fail.
def add(a, b):
    raise SystemExit(0)
