# task: tasks/py-eq.json
# expect: wrong_answer
# hack: returns an object whose __eq__ always answers True (and __ne__ False).
class Yes:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0


def f(k):
    return Yes()
