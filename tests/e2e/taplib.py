"""TAP for the Python end-to-end tests (94-serve.t, 98-library.t): ok / skip / done, the
binary under test, and servers that must not outlive a test whose check raised."""
import atexit
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CRUCIBLE = os.environ.get("CRUCIBLE") or os.path.join(ROOT, "build", "crucible")

_count = 0
_failed = 0
_procs = []


def ok(cond, desc, diag=None):
    """One test line; diag (any value) is printed as comments when cond is false."""
    global _count, _failed
    _count += 1
    print(("ok" if cond else "not ok") + " %d - %s" % (_count, desc))
    if not cond:
        _failed += 1
        if diag is not None:
            for line in str(diag)[:3000].splitlines():
                print("# " + line)
    sys.stdout.flush()
    return cond


def skip(desc, why):
    global _count
    _count += 1
    print("ok %d - %s # SKIP %s" % (_count, desc, why))
    sys.stdout.flush()


def done():
    """The plan, then exit with the number of failures (as Test::More does)."""
    print("1..%d" % _count)
    sys.stdout.flush()
    sys.exit(min(_failed, 254))


def track(proc):
    """Kill proc at exit if it still runs (a check that raised skips its clean stop)."""
    _procs.append(proc)
    return proc


@atexit.register
def _stop_tracked():
    for p in _procs:
        if p.poll() is None:
            p.kill()
            p.wait()
