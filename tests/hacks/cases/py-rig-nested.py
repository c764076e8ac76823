# task: tasks/py-eq.json
# expect: wrong_answer
# hack: the right container types, with rigged elements inside (and colliding hashes for the
# set: R(5) and R(6) hash like 1 and 2).
class R(int):
    __eq__ = lambda s, o: True
    __ne__ = lambda s, o: False
    __hash__ = lambda s: int(s) - 4


def f(k):
    return {'list': [R(0), R(0)], 'dict': {'a': R(0)}, 'set': {R(5), R(6)}, 'str': 'ab',
            'int': R(0), 'bool': R(0)}[k]
