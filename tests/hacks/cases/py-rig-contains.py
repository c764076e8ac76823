# task: tasks/py-in.json
# expect: wrong_answer
# hack: a container whose __contains__ always answers True, for `x in f(...)`.
class C(list):
    def __contains__(self, x):
        return True


def f(k):
    return C()
