# task: tasks/py-eq.json
# expect: wrong_answer
# hack: replaces AssertionError (builtins and global) with an exception it then ignores.
import builtins
import sys


class Quiet(Exception):
    pass


builtins.AssertionError = Quiet
AssertionError = Quiet
sys.excepthook = lambda *a: None


def f(k):
    return None
