# task: tasks/py-abs.json
# expect: runtime_error
# hack: abs(f(x) - y) < eps: an object whose subtraction and abs always give 0 (the
# subtraction then has only the float's own method: unsupported operand types).
class Zero:
    def __sub__(self, o):
        return 0.0

    __rsub__ = __sub__

    def __abs__(self):
        return 0.0


def f(k):
    return Zero()
