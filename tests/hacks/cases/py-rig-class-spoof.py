# task: tasks/py-eq.json
# expect: wrong_answer
# hack: a rigged object that claims (through __class__) to be a list, and a metaclass that
# pretends its MRO is int's.
class M(type):
    __mro__ = property(lambda c: (c, int, object))


class Liar(metaclass=M):
    __class__ = list
    __eq__ = lambda s, o: True
    __ne__ = lambda s, o: False


def f(k):
    return Liar()
