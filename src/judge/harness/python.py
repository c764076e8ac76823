# crucible's assert harness for Python (see docs/TASKS.md, "What the assert and command
# harnesses can and cannot prove"). crucible writes this file beside the program (with its
# compiled form in __pycache__, used when the image's Python matches the build's) and runs
#
#     python3 -c "import _crucible_harness as h; h._crucible_main()" main.py OFFSET ENTRY_POINT
#
# main.py holds the solution, then, from byte OFFSET on, the test code. Before a line of the
# solution runs, this harness
#
#  1. reads the run's token from stdin (the assert harness gives nothing else there) and points
#     fd 0 at /dev/null: from then on the token is in no file, descriptor, argument or
#     environment variable, and the program file never held it. It lives only in the closure
#     of an audit hook, split in two random shares (no object ever holds it whole until the
#     tests are over), and the hook is reachable from no Python object;
#  2. compiles the solution and the test code separately (an unterminated string in the
#     solution cannot swallow the tests; `from __future__` in the solution stays first; line
#     numbers are those of main.py), rewriting the test code (see Rewriter): its comparisons
#     and arithmetic go through helpers that compute with the trusted side's semantics when
#     the other side's comes from the solution, and the builtins and standard-library modules
#     it names are those of a fresh interpreter, whatever the solution rebinds or patches;
#  3. installs the audit hook, which refuses what would reach or alter the harness's own
#     objects: tracing (sys.settrace/setprofile: a trace function can jump over an assert),
#     the garbage collector's object lists, ctypes, opening /proc/*/mem, reading the code of
#     the test code's and the harness's functions and frames, re-coding any function.
#
# Then it runs the solution and the test code in one __main__ namespace. Only when the test
# code returns normally does the hook write the token, on a line of its own, and end the
# process with status 0. Any other end (an exception, sys.exit, os._exit, a signal, a thread
# ending the process) leaves the token unwritten, and crucible fails the test.
#
# What needs neither the token nor the program (the helpers, their classes, the rewrite, the
# builtins as they are) is built when the module is imported: a fork server's zygote, which
# preloads this module, builds it once for all its jobs. _crucible_main takes it out of the
# module (_crucible_ready) before anything else, so that the solution, which can walk frames up
# to this module's globals, finds it empty.
#
# What this cannot stop: native code (the solution cannot load ctypes, but a C extension it
# compiles at run time, or another process reading this one's memory, is outside Python), and
# code that walks frames to this module's globals to break the harness itself (that only makes
# the run fail: every path that is not the normal end exits without the token).

import sys


def _crucible_main():
    """Runs the solution, then the test code; the audit hook ends the process (see above)."""
    import os

    _exit = os._exit  # captured: the solution may rebind anything it can reach
    _exec = exec
    _audit = sys.audit
    out, err = sys.stdout, sys.stderr
    setup = _crucible_ready.pop() if _crucible_ready else None
    if setup is None:
        os.write(2, b"crucible harness: _crucible_main runs once in a process\n")
        _exit(125)
    g, sol_code, report = setup(sys._getframe())
    del setup  # the frame's locals are the solution's to read
    status = 1
    try:
        _exec(sol_code, g)
        box = []
        _audit("crucible.tests", box)  # the hook hands over the test code, rewritten
        _exec(box.pop(), g)
        try:
            type(out).flush(out)
            type(err).flush(err)
        except BaseException:
            pass
        _audit("crucible.done")  # the hook writes the token and ends the process
    except SystemExit as e:
        c = e.code
        status = c if type(c) is int else 0 if c is None else 1
        if type(c) is not int and c is not None:
            try:
                os.write(2, ("%s\n" % (c,)).encode("utf-8", "replace"))
            except BaseException:
                pass
    except BaseException as e:
        try:
            _audit("crucible.fail")
            report(e)
        except BaseException:
            pass
        status = 130 if type(e) is KeyboardInterrupt else 1
    try:
        type(out).flush(out)
        type(err).flush(err)
    except BaseException:
        pass
    _exit(status)


def _crucible_kit():
    """What every run of the harness builds before it has a token or a program: the helpers
    the rewritten test code calls, their classes, the rewrite, the builtins as they are now and
    the ids of the harness's own code. Run once per interpreter, when the module is imported:
    a fork server's zygote builds it once for all its jobs, each of which has its own copy (a
    fork) and writes none of these objects' pages until it uses them. Returns setup, which
    _crucible_main takes from _crucible_ready (it is then reachable from no Python object but
    the helpers and the audit hook, as everything it holds)."""
    import os
    import _ast
    import _collections
    import _operator
    import _thread
    import _warnings
    import builtins

    _write = os.write
    FunctionType = type(_crucible_kit)
    CodeType = type(_crucible_kit.__code__)
    ModuleType = type(sys)
    WrapperType = type(int.__eq__)
    MethodDescType = type(dict.items)
    NOBASE = object()
    HEAP = 1 << 9
    mro_of = type.__dict__["__mro__"].__get__
    flags_of = type.__dict__["__flags__"].__get__
    dict_of = type.__dict__["__dict__"].__get__
    issub = issubclass
    OrderedDict = _collections.OrderedDict
    deque = _collections.deque

    # ---- what the rewritten test code calls (built before the solution runs) ----
    SCALARS = frozenset((int, float, complex, str, bytes, bool, type(None)))
    PLAIN = SCALARS | {list, tuple, dict, set, frozenset}
    KEYS_VIEW, VALUES_VIEW, ITEMS_VIEW = type({}.keys()), type({}.values()), type({}.items())
    CMP = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
    CONTAINS = CMP + ("__contains__", "__iter__", "__getitem__")
    # comparison operators, in Rewriter's order
    CMPF = (_operator.eq, _operator.ne, _operator.lt, _operator.le, _operator.gt, _operator.ge)
    BIN = (  # (AST class name, symbol, operator, dunder, reflected dunder)
        ("Add", "+", _operator.add, "__add__", "__radd__"),
        ("Sub", "-", _operator.sub, "__sub__", "__rsub__"),
        ("Mult", "*", _operator.mul, "__mul__", "__rmul__"),
        ("MatMult", "@", _operator.matmul, "__matmul__", "__rmatmul__"),
        ("Div", "/", _operator.truediv, "__truediv__", "__rtruediv__"),
        ("Mod", "%", _operator.mod, "__mod__", "__rmod__"),
        ("Pow", "**", _operator.pow, "__pow__", "__rpow__"),
        ("LShift", "<<", _operator.lshift, "__lshift__", "__rlshift__"),
        ("RShift", ">>", _operator.rshift, "__rshift__", "__rrshift__"),
        ("BitOr", "|", _operator.or_, "__or__", "__ror__"),
        ("BitXor", "^", _operator.xor, "__xor__", "__rxor__"),
        ("BitAnd", "&", _operator.and_, "__and__", "__rand__"),
        ("FloorDiv", "//", _operator.floordiv, "__floordiv__", "__rfloordiv__"),
    )
    UN = (
        ("UAdd", _operator.pos, "__pos__"),
        ("USub", _operator.neg, "__neg__"),
        ("Invert", _operator.invert, "__invert__"),
    )
    trusted_codes = set()  # ids of the test code's and the harness's code objects
    keep = []  # ... kept alive, so that no id is reused
    vetted = {}  # (class, name) -> function: library classes taken as they were at start
    vetted_types = set()

    def code_ids(code):
        keep.append(code)
        trusted_codes.add(id(code))
        for c in code.co_consts:
            if type(c) is CodeType:
                code_ids(c)

    def vet(c, t, name, v):
        """Is v, found as `name` in the dict of class c (in the MRO of t), trusted code?"""
        if c in vetted_types:
            if vetted.get((c, name)) is not v:
                raise TypeError("crucible: the solution altered %s.%s.%s" % (c.__module__, c.__qualname__, name))
            return c is t
        if type(v) is FunctionType:
            return id(v.__code__) in trusted_codes
        if type(v) is WrapperType or type(v) is MethodDescType:
            return v.__objclass__ is c  # a slot of a type implemented in C
        return False

    def honest(t, names):
        """True when the methods `names` of type t come from C, from the test code, or from a
        library class vetted at start (exact type only); False when one comes from the
        solution (its source, exec/eval, type(), a builtin or a borrowed method put there)."""
        if not flags_of(t) & HEAP:
            return True
        need = list(names)
        for c in mro_of(t):
            if not flags_of(c) & HEAP:
                return True
            d = dict_of(c)
            i = 0
            while i < len(need):
                n = need[i]
                if n in d:
                    if not vet(c, t, n, d[n]):
                        return False
                    del need[i]
                else:
                    i += 1
            if not need:
                return True
        return True

    def clean(v, depth=0):
        """True when a native comparison of v is trustworthy: v is made only of types whose
        comparisons are honest, through list, tuple, dict, set, frozenset, deque and the
        subclasses of those (read with the base type's own iteration)."""
        t = type(v)
        if t in SCALARS:
            return True
        if depth > 200:
            return False
        if t is list or t is tuple or t is set or t is frozenset:
            if set(map(type, v)) <= SCALARS:
                return True
            return all(type(e) in SCALARS or clean(e, depth + 1) for e in v)
        if t is dict:
            return clean_all(dict.keys(v), depth) and clean_all(dict.values(v), depth)
        if not honest(t, CMP):
            return False
        if issub(t, (list, tuple, set, frozenset)):
            base = list if issub(t, list) else tuple if issub(t, tuple) else set if issub(t, set) else frozenset
            return clean_all(base.__iter__(v), depth)
        if issub(t, dict):
            return clean_all(dict.keys(v), depth) and clean_all(dict.values(v), depth)
        if issub(t, deque):
            return clean_all(deque.__iter__(v), depth)
        if t is KEYS_VIEW or t is VALUES_VIEW or t is ITEMS_VIEW:
            return clean_all(v, depth)
        return True

    def clean_all(it, depth):
        for e in it:
            if type(e) not in SCALARS and not clean(e, depth + 1):
                return False
        return True

    def base_of(v, depth):
        """The value of the builtin type a value derives from (its own storage, read with the
        base type's methods), normalised; NOBASE when it derives from none."""
        t = type(v)
        if issub(t, int):
            return int.__int__(v)
        if issub(t, float):
            return float.__float__(v)
        if issub(t, str):
            return str.__str__(v)
        if issub(t, complex):
            return complex.__complex__(v)
        if issub(t, bytes):
            return bytes.__bytes__(v)
        if issub(t, list):
            return [norm(e, depth + 1) for e in list.__iter__(v)]
        if issub(t, tuple):
            return tuple([norm(e, depth + 1) for e in tuple.__iter__(v)])
        if issub(t, dict):
            return {norm(k, depth + 1): norm(x, depth + 1) for k, x in dict.items(v)}
        if issub(t, frozenset):
            return frozenset([norm(e, depth + 1) for e in frozenset.__iter__(v)])
        if issub(t, set):
            return set([norm(e, depth + 1) for e in set.__iter__(v)])
        if issub(t, deque):
            return deque([norm(e, depth + 1) for e in deque.__iter__(v)])
        return NOBASE

    class Foreign:
        """A value whose comparisons come from the solution, inside a normalised structure:
        equal to another Foreign as the solution's own == says (both sides are the
        solution's); compared with anything else through its builtin base value, if any."""

        __slots__ = ("v", "b")

        def __init__(self, v, b):
            self.v = v
            self.b = b

        def _op(self, o, i):
            if type(o) is Foreign:
                return CMPF[i](self.v, o.v)
            if self.b is NOBASE:
                return NotImplemented
            return CMPF[i](self.b, o)

        def __eq__(self, o):
            return self._op(o, 0)

        def __ne__(self, o):
            return self._op(o, 1)

        def __lt__(self, o):
            return self._op(o, 2)

        def __le__(self, o):
            return self._op(o, 3)

        def __gt__(self, o):
            return self._op(o, 4)

        def __ge__(self, o):
            return self._op(o, 5)

        def __hash__(self):
            try:
                return hash(self.b) if self.b is not NOBASE else 0
            except TypeError:
                return 0

        def __repr__(self):
            return "<solution-defined %s>" % type(self.v).__name__

    def norm(v, depth=0):
        """v with every part whose comparisons come from the solution made a Foreign."""
        t = type(v)
        if t in SCALARS:
            return v
        if depth > 200:
            raise RecursionError("structure too deep to compare")
        if t is list:
            return [norm(e, depth + 1) for e in v]
        if t is tuple:
            return tuple([norm(e, depth + 1) for e in v])
        if t is dict:
            return {norm(k, depth + 1): norm(x, depth + 1) for k, x in dict.items(v)}
        if t is set:
            return set([norm(e, depth + 1) for e in v])
        if t is frozenset:
            return frozenset([norm(e, depth + 1) for e in v])
        if honest(t, CMP):
            if t is OrderedDict:
                return OrderedDict([(norm(k, depth + 1), norm(x, depth + 1)) for k, x in OrderedDict.items(v)])
            if t is KEYS_VIEW or t is ITEMS_VIEW:
                return set([norm(e, depth + 1) for e in v])
            if issub(t, dict) and (t, "__eq__") in vetted:  # Counter: its own == (zero counts)
                return t({norm(k, depth + 1): x for k, x in dict.items(v)})
            if issub(t, (list, tuple, dict, set, frozenset, deque)):
                return base_of(v, depth)
            return v
        return Foreign(v, base_of(v, depth))

    def cmp(i, a, b):
        """a OP b for the comparison operator i (0-5: == != < <= > >=)."""
        ta = type(a)
        tb = type(b)
        if (ta in SCALARS and tb in SCALARS) or (clean(a) and clean(b)):
            return CMPF[i](a, b)
        if not honest(ta, CMP) and not honest(tb, CMP):
            return CMPF[i](a, b)  # both sides are the solution's: its own semantics
        return CMPF[i](norm(a), norm(b))

    def contains(a, b):
        """a in b."""
        ta = type(a)
        tb = type(b)
        if ta in SCALARS and tb in SCALARS:
            return a in b
        hb = honest(tb, CONTAINS)
        if hb and clean(a) and clean(b):
            return a in b
        ha = honest(ta, CMP)
        if not ha and not hb:
            return a in b  # both sides are the solution's
        if hb:
            nb = norm(b)
        else:
            nb = base_of(b, 0)
            if nb is NOBASE:
                # a container of the solution's own: its iteration, compared the trusted way
                for e in b:
                    if cmp(0, a, e):
                        return True
                return False
        return norm(a) in nb

    def compare(i, a, b):
        if i == 6:
            return contains(a, b)
        if i == 7:
            return not contains(a, b)
        if i == 8:
            return a is b
        if i == 9:
            return a is not b
        return cmp(i, a, b)

    def chain(ops, a, b, *rest):
        """a OP0 b OP1 c ...: later operands come as thunks (evaluated only when needed)."""
        r = compare(ops[0], a, b)
        for i in range(1, len(ops)):
            if not r:
                return r
            a, b = b, rest[i - 1]()
            r = compare(ops[i], a, b)
        return r

    def binop(i, a, b):
        """a OP b: with one side's arithmetic from the solution and the other trusted, the
        solution's operand counts as its builtin base value, or, having none, only the
        trusted side's own method is asked (no reflected call to the solution)."""
        _, sym, f, name, rname = BIN[i]
        ta = type(a)
        tb = type(b)
        if ta in PLAIN and tb in PLAIN:
            return f(a, b)
        ha = honest(ta, (name, rname))
        hb = honest(tb, (name, rname))
        if ha == hb:
            return f(a, b)
        other = b if ha else a
        base = base_of(other, 0)
        if base is not NOBASE:
            return f(a, base) if ha else f(base, b)
        m = getattr(ta if ha else tb, name if ha else rname, None)
        r = m(a, b) if m is not None and ha else m(b, a) if m is not None else NotImplemented
        if r is NotImplemented:
            raise TypeError(
                "unsupported operand type(s) for %s: '%s' and '%s'" % (sym, ta.__name__, tb.__name__)
            )
        return r

    def unop(i, v):
        _, f, name = UN[i]
        t = type(v)
        if t in SCALARS or honest(t, (name,)):
            return f(v)
        base = base_of(v, 0)
        return f(base) if base is not NOBASE else f(v)

    # ---- names: the builtins and the standard-library modules the test code uses ----
    MODULES = (
        "array bisect calendar cmath collections copy datetime decimal fractions functools "
        "hashlib heapq itertools json math numbers operator os random re statistics string "
        "struct sys textwrap time typing unicodedata"
    ).split()
    VETTED_CLASSES = {"fractions": ("Fraction",), "collections": ("Counter",)}
    real_import = builtins.__import__
    pristine_builtins = dict(builtins.__dict__)
    pristine = {}  # module name -> a copy of the module as it was at start
    real_of = {}  # id of a copy -> the module

    class TestModule(ModuleType):
        """The test code's copy of a module: read as it was at start; what the test code assigns
        (sys.stdout = ..., a mock) goes to the module too, where the solution sees it."""

        def __setattr__(self, name, value):
            ModuleType.__setattr__(self, name, value)
            setattr(real_of[id(self)], name, value)

        def __delattr__(self, name):
            ModuleType.__delattr__(self, name)
            delattr(real_of[id(self)], name)

    def preimport(name):
        """Imports a module the test code uses (MODULES only) and keeps a copy of it, and of
        its parent packages, as they are before the solution runs; the methods of the
        library's own value classes (Fraction, Counter) are taken as they are now."""
        try:
            real_import(name)
        except Exception:
            return
        for n in list(sys.modules):
            if (n == name or name.startswith(n + ".")) and n not in pristine:
                m = sys.modules[n]
                copy = TestModule(n)
                copy.__dict__.update(m.__dict__)
                pristine[n] = copy
                real_of[id(copy)] = m
        m = sys.modules.get(name)
        for cname in VETTED_CLASSES.get(name, ()):
            c = getattr(m, cname, None)
            if isinstance(c, type):
                vetted_types.add(c)
                for k, v in dict_of(c).items():
                    if type(v) is FunctionType:
                        vetted[(c, k)] = v

    def imp(name, sub):
        """import NAME (sub: `import NAME as X`): the start-time copy for modules of MODULES."""
        top = real_import(name)
        mod = sys.modules.get(name, top) if sub else top
        return pristine.get(mod.__name__, mod) if type(mod) is ModuleType else mod

    def imp_from(name, names, level):
        mod = real_import(name, None, None, names, level)
        mod = pristine.get(mod.__name__, mod) if type(mod) is ModuleType else mod
        out = []
        for n in names:
            try:
                out.append(getattr(mod, n))
            except AttributeError:
                full = mod.__name__ + "." + n
                real_import(full)
                out.append(imp(full, True))
        return tuple(out)

    # ---- the rewrite of the test code (step 2 in setup runs it) ----
    ph = [""]  # the run's placeholder prefix, "\0crucible:NONCE:" (setup makes NONCE)
    AST = _ast.AST
    Load = _ast.Load()
    Store = _ast.Store()
    CMP_OPS = {"Eq": 0, "NotEq": 1, "Lt": 2, "LtE": 3, "Gt": 4, "GtE": 5, "In": 6, "NotIn": 7, "Is": 8, "IsNot": 9}
    BIN_OPS = {b[0]: i for i, b in enumerate(BIN)}
    UN_OPS = {u[0]: i for i, u in enumerate(UN)}
    BUILTIN_NAMES = frozenset(n for n in pristine_builtins if not n.startswith("_") and n != "super")

    def bound_names(tree):
        out = set()
        stack = [tree]
        while stack:
            n = stack.pop()
            k = type(n).__name__
            if k == "Name" and type(n.ctx).__name__ != "Load":
                out.add(n.id)
            elif k in ("FunctionDef", "AsyncFunctionDef", "ClassDef"):
                out.add(n.name)
            elif k == "arg":
                out.add(n.arg)
            elif k == "alias":
                out.add(n.asname or n.name.split(".")[0])
            elif k in ("ExceptHandler", "MatchAs", "MatchStar") and n.name:
                out.add(n.name)
            elif k == "MatchMapping" and n.rest:
                out.add(n.rest)
            elif k in ("Global", "Nonlocal"):
                out.update(n.names)
            for f in n._fields:
                v = getattr(n, f, None)
                if isinstance(v, list):
                    stack.extend(x for x in v if isinstance(v, list) and isinstance(x, AST))
                elif isinstance(v, AST):
                    stack.append(v)
        return out

    def mk(cls, at, **kw):
        node = getattr(_ast, cls)(**kw)
        for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(at, a):
                setattr(node, a, getattr(at, a))
        return node

    def const(at, v):
        return mk("Constant", at, value=v, kind=None)

    def call(at, key, *args):
        return mk("Call", at, func=const(at, ph[0] + key), args=list(args), keywords=[])

    def fix(node, at):
        stack = [node]
        while stack:
            n = stack.pop()
            for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                if not hasattr(n, a) and hasattr(at, a) and a in n._attributes:
                    setattr(n, a, getattr(at, a))
            for f in n._fields:
                v = getattr(n, f, None)
                if isinstance(v, list):
                    stack.extend(x for x in v if isinstance(x, AST))
                elif isinstance(v, AST):
                    stack.append(v)

    names_used = set()  # free names that get the trusted object
    imported = set()  # module names the test code imports

    def rewrite(tree, bound):
        """The test code's tree, rewritten in place (see the file's comment)."""

        def visit(n, in_pattern=False):
            k = type(n).__name__
            for f in n._fields:
                v = getattr(n, f, None)
                sub = in_pattern or f == "pattern"
                if isinstance(v, list):
                    new = []
                    for x in v:
                        if isinstance(x, AST):
                            r = visit(x, sub)
                            new.extend(r) if isinstance(r, list) else new.append(r)
                        else:
                            new.append(x)
                    setattr(n, f, new)
                elif isinstance(v, AST):
                    setattr(n, f, visit(v, sub))
            if k == "Compare":
                ops = [CMP_OPS[type(o).__name__] for o in n.ops]
                if all(o >= 8 for o in ops):
                    return n
                if len(ops) == 1:
                    return call(n, "cmp", const(n, ops[0]), n.left, n.comparators[0])
                thunks = []
                for c in n.comparators[1:]:
                    args = mk("arguments", c, posonlyargs=[], args=[], vararg=None, kwonlyargs=[],
                              kw_defaults=[], kwarg=None, defaults=[])
                    thunks.append(mk("Lambda", c, args=args, body=c))
                return call(n, "chain", const(n, tuple(ops)), n.left, n.comparators[0], *thunks)
            if k == "BinOp":
                return call(n, "bin", const(n, BIN_OPS[type(n.op).__name__]), n.left, n.right)
            if k == "UnaryOp" and type(n.op).__name__ in UN_OPS:
                if type(n.operand).__name__ == "Constant":
                    return n  # -1: a literal
                return call(n, "un", const(n, UN_OPS[type(n.op).__name__]), n.operand)
            if k == "Name" and not in_pattern and type(n.ctx).__name__ == "Load":
                if n.id not in bound and (n.id in BUILTIN_NAMES or n.id in MODULES):
                    names_used.add(n.id)
                    return const(n, ph[0] + "name:" + n.id)
                return n
            if k == "Import":
                out = []
                for a in n.names:
                    imported.add(a.name)
                    target = a.asname or a.name.split(".")[0]
                    out.append(mk("Assign", n, targets=[mk("Name", n, id=target, ctx=Store)],
                                  value=call(n, "imp", const(n, a.name), const(n, bool(a.asname))),
                                  type_comment=None))
                return out
            if k == "ImportFrom" and n.level == 0 and all(a.name != "*" for a in n.names):
                imported.add(n.module)
                targets = [mk("Name", n, id=a.asname or a.name, ctx=Store) for a in n.names]
                value = call(n, "from", const(n, n.module), const(n, tuple(a.name for a in n.names)),
                             const(n, 0))
                return mk("Assign", n, targets=[mk("Tuple", n, elts=targets, ctx=Store)], value=value,
                          type_comment=None)
            return n

        visit(tree)
        last = tree.body[-1] if tree.body else None
        at = last if last is not None else mk("Pass", tree, lineno=1, col_offset=0)
        tree.body.append(mk("Expr", at, value=call(at, "end")))
        fix(tree, at)
        return tree

    class SyntaxWarningOfOurs:
        """A _warnings filter matcher: our placeholders are constants called as functions."""

        def match(self, text):
            return "object is not callable; perhaps you missed a comma" in text

    here = _crucible_kit.__code__.co_filename

    def report(exc):
        """Writes exc as Python would, without the harness's own frames."""
        try:
            import traceback

            te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
            for t in [te] + [c for c in (te.__cause__, te.__context__) if c is not None]:
                t.stack = traceback.StackSummary.from_list([f for f in t.stack if f.filename != here])
            text = "".join(te.format())
        except BaseException:
            text = "%s: %s\n" % (type(exc).__name__, exc)
        try:
            _write(2, text.encode("utf-8", "replace"))
        except BaseException:
            pass

    # the ids of the harness's own code: every code object nested in its two functions
    for f in (_crucible_main, _crucible_kit):
        code_ids(f.__code__)
    harness_codes = frozenset(trusted_codes)

    def setup(main_frame):
        """Reads the token, compiles, and installs the audit hook (which keeps the token and
        everything else that matters: nothing returned here reaches them). Returns the
        __main__ namespace, the solution's code and the failure reporter."""
        _exit = os._exit  # as the run starts (a fork server's trial stops there instead)

        def fail(msg, status=1):
            try:
                _write(2, ("crucible harness: %s\n" % msg).encode())
            finally:
                _exit(status)

        # ---- 1. the token: from stdin, before anything else; kept as two random shares ----
        buf = bytearray(80)
        got = 0
        while got < len(buf):
            n = os.readv(0, [memoryview(buf)[got:]])
            if n <= 0:
                break
            got += n
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        text = buf[:got].strip()
        shares = None
        if len(text) == 32 and all(c in b"0123456789abcdef" for c in text):
            a = int.from_bytes(os.urandom(16), "little")
            shares = (a, int(text, 16) ^ a)
            del a
        for b in (buf, text):
            b[:] = bytes(len(b))
        del buf, text

        if shares is None:
            fail("no test token on stdin", 125)
        if len(sys.argv) < 3:
            fail("usage: _crucible_main() with argv PROGRAM OFFSET [ENTRY_POINT]", 125)
        path = os.path.abspath(sys.argv[1])
        offset = int(sys.argv[2])
        entry = sys.argv[3] if len(sys.argv) > 3 else ""
        with open(path, "rb") as f:
            src = f.read()
        sol_src, test_src = src[:offset], src[offset:]
        # The test code is compiled after as many empty lines as the solution has: its line
        # numbers are those of main.py (tracebacks, the assertion shown).
        test_src = b"\n" * sol_src.count(b"\n") + test_src
        del src

        # ---- 2. compile: the solution as it is, the test code rewritten ----
        PH = ph[0] = "\0crucible:%s:" % os.urandom(8).hex()
        try:
            sol_code = compile(sol_src, path, "exec", 0, True)
            tree = compile(test_src, path, "exec", _ast.PyCF_ONLY_AST, True)
            tree = rewrite(tree, bound_names(tree))
            _warnings.filters.insert(0, ("ignore", SyntaxWarningOfOurs(), SyntaxWarning, None, 0))
            try:
                test_code = compile(tree, path, "exec", 0, True)
            finally:
                del _warnings.filters[0]
        except SyntaxError as e:
            e.__traceback__ = None
            report(e)
            _exit(1)
        del tree, sol_src, test_src
        for name in sorted(imported | (names_used & set(MODULES))):
            if name.split(".")[0] in MODULES:
                preimport(name)
        sol_codes = {id(c) for c in sol_code.co_consts if type(c) is CodeType}
        keep.append(sol_code)

        def solution_def(v, name):
            """Is v a function or class the solution's source defines at top level as name?"""
            if type(v) is FunctionType:
                return id(v.__code__) in sol_codes and v.__name__ == name
            return isinstance(v, type) and v.__module__ == "__main__" and v.__qualname__ == name

        state = {"ended": False, "tests": False, "printing": False}

        def end():
            """Called by the test code's last statement (appended by the rewrite): only from the
            test code's own module frame, run by the harness's main."""
            caller = sys._getframe(1)
            if caller.f_back is main_frame and caller.f_code is state.get("code"):
                state["ended"] = True

        helpers = {"cmp": compare, "chain": chain, "bin": binop, "un": unop, "imp": imp, "from": imp_from,
                   "end": end}

        def resolve(key, g):
            """The object a placeholder stands for, decided once the solution has run."""
            if not key.startswith("name:"):
                return helpers[key]
            name = key[5:]
            trusted = pristine_builtins[name] if name in BUILTIN_NAMES else pristine.get(name)
            have = name in g
            if trusted is None:  # a module that failed to import: what the namespace has
                return g[name] if have else pristine_builtins.get(name)
            if not have:
                return trusted
            v = g[name]
            if name == entry or (not entry and solution_def(v, name)):
                return v  # the function under test, named like a builtin (mbpp/126: sum)
            if name not in BUILTIN_NAMES and type(v) is not ModuleType:
                return v  # the solution's own variable that happens to share a module's name
            return trusted

        def inject(code, g):
            consts = []
            changed = False
            for c in code.co_consts:
                if type(c) is str and c.startswith(PH):
                    c = resolve(c[len(PH):], g)
                    changed = True
                elif type(c) is CodeType:
                    c2 = inject(c, g)
                    changed = changed or c2 is not c
                    c = c2
                consts.append(c)
            return code.replace(co_consts=tuple(consts)) if changed else code

        # ---- 3. the audit hook: holds the token and the test code, refuses introspection ----
        vetted_functions = frozenset(id(f) for f in vetted.values())
        protected = set(trusted_codes)  # the hook's own copy; grows with the test code's
        busy = set()  # threads inside the hook (its own attribute reads raise events too)
        CODE_ATTRS = {"f_code": "f_code", "__code__": "__code__", "gi_code": "gi_code", "gi_frame": "gi_code",
                      "cr_code": "cr_code", "cr_frame": "cr_code", "ag_code": "ag_code", "ag_frame": "ag_code"}
        DENY = {"sys.settrace", "sys.setprofile", "sys.addaudithook", "gc.get_objects", "gc.get_referrers",
                "gc.get_referents"}
        getframe = sys._getframe
        get_ident = _thread.get_ident
        basename = os.path.basename
        mod = ModuleType("__main__")
        g = mod.__dict__
        held = [test_code, shares, sys.modules["__main__"]]  # the harness module stays alive
        del test_code, shares

        def hook(event, args):
            me = get_ident()
            if me in busy:
                return
            busy.add(me)
            try:
                if event.startswith("crucible."):
                    if getframe(1) is not main_frame:
                        raise RuntimeError("crucible: %s is the harness's own event" % event)
                    if event == "crucible.tests" and not state["tests"]:
                        state["tests"] = True
                        code = inject(held[0], g)
                        held[0] = None
                        for c in (code,):
                            stack = [c]
                            while stack:
                                x = stack.pop()
                                keep.append(x)
                                protected.add(id(x))
                                trusted_codes.add(id(x))
                                stack.extend(y for y in x.co_consts if type(y) is CodeType)
                        fresh = ModuleType("builtins")
                        fresh.__dict__.update(pristine_builtins)
                        g["__builtins__"] = fresh
                        state["code"] = code
                        args[0].append(code)
                        return
                    if event == "crucible.done" and state["ended"]:
                        a, b = held[1]
                        _write(1, ("\n%032x\n" % (a ^ b)).encode())
                        _exit(0)
                    if event == "crucible.fail":
                        state["printing"] = True
                        return
                    raise RuntimeError("crucible: %s out of turn" % event)
                if state["printing"]:
                    return
                if event in DENY or event.startswith("ctypes."):
                    raise RuntimeError("crucible: %s is not allowed in an assert test" % event)
                if event == "object.__getattr__":
                    attr = CODE_ATTRS.get(args[1])
                    if attr is not None:
                        code = getattr(args[0], attr, None)
                        if id(code) in protected and id(getframe(1).f_code) not in harness_codes:
                            raise RuntimeError("crucible: the code of the tests and of the harness is not readable")
                elif event == "object.__setattr__":
                    if args[1] in ("__code__", "__defaults__", "__kwdefaults__") and (
                        id(args[0]) in vetted_functions or id(getattr(args[0], "__code__", None)) in protected
                    ):
                        raise RuntimeError("crucible: %s of this function cannot be replaced" % args[1])
                elif event == "function.__new__":
                    if id(args[0]) in protected:
                        raise RuntimeError("crucible: the code of the tests is not reusable")
                elif event == "open":
                    p = args[0]
                    if isinstance(p, bytes):
                        p = p.decode("utf-8", "replace")
                    if isinstance(p, str) and basename(p.rstrip("/")) == "mem":
                        raise RuntimeError("crucible: process memory is not readable in an assert test")
            finally:
                busy.discard(me)

        g["__file__"] = path
        g["__builtins__"] = builtins
        g["__cached__"] = None
        sys.modules["__main__"] = mod
        sys.modules.pop("_crucible_harness", None)
        sys.argv = [sys.argv[1]]
        sys.addaudithook(hook)
        return g, sol_code, report

    return setup


# Built when the module is imported (in a fork server's zygote, before its first job); taken
# by the first _crucible_main of the process.
_crucible_ready = [_crucible_kit()]


if __name__ == "__main__":
    _crucible_main()
