# task: tasks/py-ne.json
# expect: wrong_answer
# hack: a rigged __ne__ only, for the test that asserts `not (x != y)`.
class R(int):
    __ne__ = lambda s, o: False


def f(k):
    return R(99)
