#!/usr/bin/python3
"""bench/fork_floor.py DIR JOBS [--unshare NS,...] [--fork2] [--harness FILE] — the programs of DIR (*.py) run as an unsandboxed fork server
would run them: JOBS interpreters, each with the zygote's common modules imported, fork one
child per program, which runs it (stdout and stderr to /dev/null) and exits with its status.
No namespaces, cgroups, seccomp or verdicts: what a fork server can give at best on this
machine, measured beside the fresh-interpreter baseline (bench/eval-mbpp). Prints
"SECONDS EXIT0_COUNT".

To see what the isolation adds, --unshare makes each child enter new namespaces first (net,
mnt, ipc, uts, pid, cgroup; needs root) and --fork2 forks once more so that the program runs
as the child's child (as a job's pid 2 does; implied by pid, whose namespace only a child
enters).

--harness FILE runs each program as crucible's assert harness runs it (src/judge/harness/
python.py, imported once per worker as the zygote preloads it): DIR/NNNN.off beside each
NNNN.py holds "OFFSET [ENTRY_POINT]" (where the test code starts, as crucible puts it in the
harness's argv), the child gets a fresh token on its stdin and calls _crucible_main(). What
the harness costs over running the program bare, with no sandbox around either.
"""
import ctypes
import os
import struct
import sys
import time

# As the zygote's preload list (src/sandbox/zygote.c).
COMMON = ["re", "math", "json", "collections", "itertools", "functools", "typing", "heapq",
          "bisect", "string", "random", "copy", "operator", "traceback", "dataclasses", "enum",
          "io", "ast", "inspect", "fractions", "decimal", "statistics"]


NAMESPACES = {"net": 0x40000000, "mnt": 0x00020000, "ipc": 0x08000000, "uts": 0x04000000,
              "pid": 0x20000000, "cgroup": 0x02000000}


def child(path):
    """In the forked child: the program as `python3 PATH` would run it, then _exit."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    status = 0
    try:
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
        exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        status = 1
    try:
        sys.stdout.flush()
    except Exception:
        pass
    os._exit(status & 0xff)


def harnessed(path, harness):
    """In the forked child: path run by the assert harness, as a job runs it."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    with open(path[:-3] + ".off") as f:
        off, _, entry = f.read().strip().partition(" ")
    r, w = os.pipe()
    os.write(w, os.urandom(16).hex().encode() + b"\n")
    os.close(w)
    os.dup2(r, 0)
    os.close(r)
    sys.argv = ["-c", path, off, entry]
    harness._crucible_main()  # ends the process
    os._exit(125)


def isolated(path, flags, fork2, harness=None):
    """In the forked child: the namespaces, the second fork, then the program."""
    if flags and ctypes.CDLL(None, use_errno=True).unshare(flags) != 0:
        os._exit(99)
    run = (lambda: harnessed(path, harness)) if harness else (lambda: child(path))
    if fork2:
        pid = os.fork()
        if pid == 0:
            run()
        _, status = os.waitpid(pid, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xff)
    run()


def zygote(paths, queue, results, flags, fork2, harness_file):
    """One worker: takes program indices from the queue pipe until it is empty."""
    for m in COMMON:
        __import__(m)
    harness = None
    if harness_file:
        import importlib.util
        spec = importlib.util.spec_from_file_location("_crucible_harness", harness_file)
        harness = importlib.util.module_from_spec(spec)
        sys.modules["_crucible_harness"] = harness
        spec.loader.exec_module(harness)
    while True:
        rec = os.read(queue, 4)
        if len(rec) < 4:
            break
        i = struct.unpack("I", rec)[0]
        pid = os.fork()
        if pid == 0:
            isolated(paths[i], flags, fork2, harness)
        _, status = os.waitpid(pid, 0)
        os.write(results, b"1" if os.waitstatus_to_exitcode(status) == 0 else b"0")
    os._exit(0)


def main():
    paths = sorted(os.path.join(sys.argv[1], p) for p in os.listdir(sys.argv[1])
                   if p.endswith(".py"))
    jobs = int(sys.argv[2])
    flags, fork2, harness, args = 0, False, None, sys.argv[3:]
    while args:
        a = args.pop(0)
        if a == "--fork2":
            fork2 = True
        elif a == "--harness" and args:
            harness = args.pop(0)
        elif a == "--unshare" and args:
            for name in args.pop(0).split(","):
                if name not in NAMESPACES:
                    sys.exit("fork_floor.py: unknown namespace '%s' (%s)" % (
                        name, ", ".join(NAMESPACES)))
                flags |= NAMESPACES[name]
        else:
            sys.exit("fork_floor.py: unknown argument '%s'" % a)
    fork2 = fork2 or bool(flags & NAMESPACES["pid"])
    qr, qw = os.pipe()
    rr, rw = os.pipe()
    start = time.monotonic()
    for _ in range(jobs):
        if os.fork() == 0:
            os.close(qw)
            os.close(rr)
            zygote(paths, qr, rw, flags, fork2, harness)
    os.close(qr)
    os.close(rw)
    for i in range(len(paths)):  # 4-byte records: each read by one worker whole
        os.write(qw, struct.pack("I", i))
    os.close(qw)
    done = b""
    while True:
        chunk = os.read(rr, 4096)
        if not chunk:
            break
        done += chunk
    while True:
        try:
            os.wait()
        except ChildProcessError:
            break
    print("%.3f %d" % (time.monotonic() - start, done.count(b"1")))


main()
