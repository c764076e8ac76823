# task: tasks/py-float.json
# expect: wrong_answer
# hack: monkeypatched builtins (abs returning 0 in builtins and as a global) and math.isclose.
import builtins
import math

builtins.abs = lambda x: 0
abs = lambda x: 0
math.isclose = lambda *a, **k: True
isclose = math.isclose


def f(k):
    return 123.0
