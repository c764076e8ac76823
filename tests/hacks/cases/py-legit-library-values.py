# task: tasks/py-library-values.json
# expect: accepted
# hack: none: a correct solution whose values are of library types (namedtuple, OrderedDict,
# Counter, defaultdict, Decimal, Fraction) compared with builtin and library values, bool
# with int, int with float; it must stay accepted.
from __future__ import annotations

from collections import Counter, OrderedDict, defaultdict, namedtuple
from decimal import Decimal
from fractions import Fraction

P = namedtuple('P', 'x y')


def f(k: str) -> object:
    dd = defaultdict(list)
    dd['a'].append(1)
    return {'nt': P(1, 2), 'od': OrderedDict(a=1, b=2), 'counter': Counter('aab'), 'dd': dd,
            'true': True, 'three': 3, 'dec': Decimal('1.1'), 'frac': Fraction(1, 2), 'half': 0.5,
            'nested': [(1, 'a'), {'k': {1, 2}}], 'pi': 3.14159, 'none': None}[k]
