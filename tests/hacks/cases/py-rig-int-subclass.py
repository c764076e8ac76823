# task: tasks/py-eq.json
# expect: wrong_answer
# hack: subclasses of int, str, list and dict whose == always holds.
class R(int):
    __eq__ = lambda s, o: True
    __ne__ = lambda s, o: False
    __hash__ = int.__hash__


class S(str):
    __eq__ = lambda s, o: True
    __ne__ = lambda s, o: False
    __hash__ = str.__hash__


class L(list):
    __eq__ = lambda s, o: True
    __ne__ = lambda s, o: False


class D(dict):
    __eq__ = lambda s, o: True
    __ne__ = lambda s, o: False


def f(k):
    return {'list': L(), 'str': S(), 'dict': D(), 'set': L(), 'int': R(0), 'bool': R(0)}[k]
