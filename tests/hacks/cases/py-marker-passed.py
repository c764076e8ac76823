# task: examples/tasks.jsonl#demo/py-add
# expect: wrong_answer
# hack: prints PASSED, "ok 1 - all tests passed" and "Accepted" before failing its asserts.
print('PASSED')
print('ok 1 - all tests passed')
print('Accepted')


def add(a, b):
    return a - b
