# task: tasks/py-eq.json
# expect: wrong_answer
# hack: set and dict comparisons: elements hashing like the expected ones and equal to anything.
class H:
    def __init__(self, h):
        self.h = h

    def __hash__(self):
        return self.h

    def __eq__(self, o):
        return True


def f(k):
    return {'set': {H(1), H(2)}, 'dict': {H(hash('a')): 1}, 'list': [H(1), H(2)]}.get(k, H(0))
