/*
 * forkserver.c — the Python fork server: jobs run as python3 runs in a cold sandbox (the same
 * verdict, field by field, for a set of programs run both ways), and nothing one job does is
 * visible to the next (each property: job 1 changes it, job 2 checks it).
 *
 * This binary is also the zygote: the fork server re-executes its supervisor's own binary.
 */
#include "sandbox/forkserver.h"
#include "sandbox/prefault.h"
#include "sandbox/sandbox.h"
#include "tap.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct sandbox_runtime rt;
static struct image img;
static struct forkserver *fs;

/* One program: files (main.py and the harness's module), argv, stdin. */
struct prog {
    const char *name;
    const char *main_py; /* put as main.py when not NULL */
    const char *argv[8];
    const char *stdin_text;
    const char *env[4]; /* extra environment entries */
    bool harness;       /* put the assert harness as _crucible_harness.py */
};

static char *harness_src; /* src/judge/harness/python.py */

static int memfd_of(const char *s)
{
    int fd = memfd_create("t", MFD_CLOEXEC);

    if (fd >= 0 && s && write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
        close(fd);
        return -1;
    }
    if (fd >= 0)
        lseek(fd, 0, SEEK_SET);
    return fd;
}

/* run(p, lim, fork_server, res) — p in a cold sandbox or a fork server's job. */
static void run(const struct prog *p, const struct sandbox_limits *lim, bool fork_server,
                struct result *res)
{
    struct sandbox_file files[2];
    size_t nfiles = 0;
    struct sandbox_proc proc = {.argv = (char *const *)p->argv,
                                .env = p->env[0] ? (char *const *)p->env : NULL,
                                .stdin_fd = -1,
                                .cwd = "/work"};

    result_init(res);
    if (p->main_py)
        files[nfiles++] = (struct sandbox_file){"main.py", memfd_of(p->main_py), 0644};
    if (p->harness)
        files[nfiles++] =
            (struct sandbox_file){"_crucible_harness.py", memfd_of(harness_src), 0644};
    if (p->stdin_text)
        proc.stdin_fd = memfd_of(p->stdin_text);
    if (fork_server)
        forkserver_run(fs, lim, files, nfiles, &proc, res);
    else
        sandbox_run(&rt, &img, lim, files, nfiles, &proc, res);
    for (size_t i = 0; i < nfiles; i++)
        close(files[i].fd);
    if (proc.stdin_fd >= 0)
        close(proc.stdin_fd);
}

/* same(p, lim) — p both ways: status, exit code, signal, limit, stdout, stderr, truncation. */
static void same(const struct prog *p, const struct sandbox_limits *lim)
{
    struct result cold, fork;
    bool eq;

    run(p, lim, false, &cold);
    run(p, lim, true, &fork);
    eq = cold.status == fork.status && cold.exit_code == fork.exit_code &&
         cold.signal == fork.signal && cold.limit == fork.limit && cold.out.len == fork.out.len &&
         memcmp(cold.out.data, fork.out.data, cold.out.len) == 0 && cold.err.len == fork.err.len &&
         memcmp(cold.err.data, fork.err.data, cold.err.len) == 0 &&
         cold.out.truncated == fork.out.truncated && cold.err.truncated == fork.err.truncated &&
         fork.fork_server && !cold.fork_server;
    if (!ok(eq, "same verdict both ways: %s (%s)", p->name, result_status_name(fork.status)) ||
        getenv("FORKSERVER_TEST_VERBOSE")) {
        diag("cold: %s exit %d sig %d msg '%s'\n--- out\n%s\n--- err\n%s",
             result_status_name(cold.status), cold.exit_code, cold.signal, cold.message,
             cold.out.data, cold.err.data);
        diag("fork: %s exit %d sig %d msg '%s'\n--- out\n%s\n--- err\n%s",
             result_status_name(fork.status), fork.exit_code, fork.signal, fork.message,
             fork.out.data, fork.err.data);
    }
    result_release(&cold);
    result_release(&fork);
}

/* job(code, lim, res) — `python3 -c code` as a fork server's job. */
static void job(const char *code, const struct sandbox_limits *lim, struct result *res)
{
    struct prog p = {"job", NULL, {"/usr/bin/python3", "-c", code, NULL}, NULL, {NULL}, false};

    run(&p, lim, true, res);
}

/* job_says(code, lim, want, what) — a job's stdout is exactly want and its status ok. */
static void job_says(const char *code, const struct sandbox_limits *lim, const char *want,
                     const char *what)
{
    struct result r;

    job(code, lim, &r);
    if (!ok(r.status == RESULT_OK && strcmp(r.out.data, want) == 0, "%s", what))
        diag("%s exit %d: out '%s' err '%s' msg '%s'", result_status_name(r.status), r.exit_code,
             r.out.data, r.err.data, r.message);
    result_release(&r);
}

#define PY(...)                                                                                    \
    {                                                                                              \
        "/usr/bin/python3", __VA_ARGS__, NULL                                                      \
    }

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "re");
    char *buf;
    long n;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = calloc(1, (size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* What a fresh python3 shows of itself and its start: the fork server's jobs must show the
 * same (sys.path[0], argv, flags, prefixes, __main__, environment, ids, pids, fds). */
static const char introspect[] =
    "import sys, os\n"
    "print(sys.executable, sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix)\n"
    "print(sys.flags)\n"
    "print(sys.path)\n"
    "print(sys.argv, sys.orig_argv)\n"
    "print(__name__, __file__, sorted(k for k in globals() if k not in ('sys', 'os')))\n"
    "print(sorted(os.environ.items()))\n"
    "print(os.getcwd(), os.getuid(), os.getgid(), os.getpid(), os.getppid(), os.uname().nodename)\n"
    "print(sorted(os.listdir('/proc/self/fd')), sorted(p for p in os.listdir('/proc') if "
    "p.isdigit()))\n"
    "print(sys.stdin.encoding, sys.stdout.encoding, sys.stderr.errors, sys.stdout.line_buffering,"
    " sys.stdin.seekable(), sys.stdout.seekable(), sys.getrecursionlimit())\n"
    "print(hash('abc'), os.umask(0o22), open('/proc/self/status').read().count('\\n') > 10)\n"
    "print(open('/proc/self/comm').read())\n"
    "import resource\n"
    "print([resource.getrlimit(getattr(resource, n)) for n in ('RLIMIT_CPU', 'RLIMIT_FSIZE',"
    " 'RLIMIT_NOFILE', 'RLIMIT_STACK', 'RLIMIT_CORE', 'RLIMIT_AS', 'RLIMIT_NPROC')])\n"
    "print(open('/proc/self/status').read().split('CapEff:')[1].split()[0],"
    " open('/proc/self/status').read().split('NoNewPrivs:')[1].split()[0],"
    " open('/proc/self/status').read().split('Seccomp:')[1].split()[0])\n"
    "import signal\n"
    "print([signal.getsignal(s) for s in (signal.SIGINT, signal.SIGPIPE, signal.SIGTERM, "
    "signal.SIGCHLD)])\n"
    /* libc's environment, as a program the job starts inherits it */
    "import subprocess\n"
    "print(sorted(subprocess.run(['/usr/bin/env'], capture_output=True).stdout.split(b'\\n')))\n";

static const char solution[] = "def add(a, b):\n    return a + b\n";
static const char tests_ok[] = "assert add(1, 2) == 3\nassert add('a', 'b') == 'ab'\n";
static const char tests_bad[] = "assert add(1, 2) == 3\nassert add(2, 2) == 5\n";

static void test_verdicts(const struct sandbox_limits *lim0)
{
    struct sandbox_limits lim = *lim0;
    static char harness_ok[4096], harness_bad[4096], off_ok[16], off_bad[16];
    const char *hcode = "import _crucible_harness as h; h._crucible_main()";

    snprintf(harness_ok, sizeof(harness_ok), "%s%s", solution, tests_ok);
    snprintf(harness_bad, sizeof(harness_bad), "%s%s", solution, tests_bad);
    snprintf(off_ok, sizeof(off_ok), "%zu", strlen(solution));
    snprintf(off_bad, sizeof(off_bad), "%zu", strlen(solution));
    const struct prog progs[] = {
        {"print", NULL, PY("-c", "print('hi')"), NULL, {NULL}, false},
        {"introspection, -c", NULL, PY("-c", introspect, "a1", "", "a 3"), NULL, {NULL}, false},
        {"introspection, file", introspect, PY("main.py", "x", "-y"), NULL, {NULL}, false},
        {"introspection, python3 by PATH and a caller's environment",
         introspect,
         {"python3", "main.py", NULL},
         NULL,
         {"FOO=bar", "HOME=/work", NULL},
         false},
        {"exit code", NULL, PY("-c", "import sys; sys.exit(3)"), NULL, {NULL}, false},
        {"SystemExit with text", NULL, PY("-c", "raise SystemExit('bye')"), NULL, {NULL}, false},
        {"uncaught exception, traceback",
         "def f():\n    raise ValueError('x')\nf()\n",
         PY("main.py"),
         NULL,
         {NULL},
         false},
        {"syntax error", "def f(:\n", PY("main.py"), NULL, {NULL}, false},
        {"recursion error",
         "def f(n): return f(n + 1)\nf(0)\n",
         PY("main.py"),
         NULL,
         {NULL},
         false},
        {"uncaught KeyboardInterrupt",
         NULL,
         PY("-c", "print('k'); raise KeyboardInterrupt"),
         NULL,
         {NULL},
         false},
        {"killed by a signal",
         NULL,
         PY("-c", "import os; os.kill(os.getpid(), 11)"),
         NULL,
         {NULL},
         false},
        {"os._exit skips atexit",
         NULL,
         PY("-c", "import atexit, os; atexit.register(print, 'no'); print('x', end=''); "
                  "__import__('sys').stdout.flush(); os._exit(5)"),
         NULL,
         {NULL},
         false},
        {"atexit and unflushed stdout",
         NULL,
         PY("-c", "import atexit, sys; atexit.register(print, 'bye'); print('x', end=''); "
                  "sys.stderr.write('e')"),
         NULL,
         {NULL},
         false},
        {"finalizers and threads at the end",
         "import threading, time\n"
         "class A:\n    def __del__(self):\n        print('del', flush=True)\n"
         "a = A()\n"
         "def late():\n    time.sleep(0.2)\n    print('late thread')\n"
         "threading.Thread(target=late).start()\n"
         "import atexit\natexit.register(print, 'atexit')\nprint('main done')\n",
         PY("main.py"),
         NULL,
         {NULL},
         false},
        {"stdout closed: flushing fails",
         NULL,
         PY("-c", "import sys, os; print('x'); os.close(1)"),
         NULL,
         {NULL},
         false},
        {"stdin",
         NULL,
         PY("-c", "import sys; print(sys.stdin.read().upper())"),
         "abc\ndef\n",
         {NULL},
         false},
        {"input() and EOF", NULL, PY("-c", "print(input()); input()"), "one\n", {NULL}, false},
        {"files written and read",
         "import os\nopen('out.txt', 'w').write('w')\n"
         "open('/tmp/t', 'w').write('t')\n"
         "print(sorted(os.listdir('.')), open('out.txt').read(),"
         " open('/tmp/t').read(), os.listdir('/tmp'))\n",
         PY("main.py"),
         NULL,
         {NULL},
         false},
        {"read-only image",
         NULL,
         PY("-c", "open('/usr/lib/python3/dist-packages/x', 'w')"),
         NULL,
         {NULL},
         false},
        {"threads",
         NULL,
         PY("-c", "import threading; t = threading.Thread(target=print, args=('t',)); "
                  "t.start(); t.join(); print(threading.active_count())"),
         NULL,
         {NULL},
         false},
        {"subprocess",
         NULL,
         PY("-c", "import subprocess; print(subprocess.run(['/bin/echo', 'sub'], "
                  "capture_output=True).stdout)"),
         NULL,
         {NULL},
         false},
        {"not python: execve as cold",
         NULL,
         {"/bin/sh", "-c", "echo sh; exit 4", NULL},
         NULL,
         {NULL},
         false},
        {"python3 with an option: execve",
         NULL,
         PY("-S", "-c", "import sys; print(sys.flags.no_site)"),
         NULL,
         {NULL},
         false},
        {"missing file", NULL, PY("nothere.py"), NULL, {NULL}, false},
        {"missing program", NULL, {"/nonexistent", NULL}, NULL, {NULL}, false},
        {"PYTHON* in the environment: execve",
         NULL,
         PY("-c", "import sys; print(sys.flags.optimize)"),
         NULL,
         {"PYTHONOPTIMIZE=1", NULL},
         false},
        {"assert harness, passing",
         harness_ok,
         PY("-c", hcode, "main.py", off_ok, "add"),
         "tok3n\n",
         {NULL},
         true},
        {"assert harness, failing",
         harness_bad,
         PY("-c", hcode, "main.py", off_bad, "add"),
         "tok3n\n",
         {NULL},
         true},
        {"assert harness, ctypes refused",
         "import ctypes\n",
         PY("-c", hcode, "main.py", "14", "x"),
         "tok3n\n",
         {NULL},
         true},
        {"output limit", NULL, PY("-c", "print('x' * 3000000)"), NULL, {NULL}, false},
    };
    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
        same(&progs[i], &lim);

    lim.cpu_time = 0.5;
    {
        struct prog p = {"CPU time limit", NULL, PY("-c", "while True: pass"), NULL, {NULL}, false};
        same(&p, &lim);
    }
    lim = *lim0;
    lim.wall_time = 1;
    {
        struct prog p = {
            "wall time limit", NULL, PY("-c", "import time; time.sleep(30)"), NULL, {NULL}, false};
        same(&p, &lim);
    }
    lim = *lim0;
    lim.memory_mb = 64;
    {
        struct prog p = {"memory limit", NULL,   PY("-c", "x = b'x' * (200 << 20); print(len(x))"),
                         NULL,           {NULL}, false};
        same(&p, &lim);
    }
    lim = *lim0;
    lim.disk_mb = 4;
    {
        struct prog p = {
            "disk full", NULL,   PY("-c", "open('/work/big', 'wb').write(b'x' * (8 << 20))"),
            NULL,        {NULL}, false};
        same(&p, &lim);
    }
    lim = *lim0;
    lim.pids = 8;
    {
        struct prog p = {"pids limit",
                         NULL,
                         PY("-c", "import os\nn = 0\ntry:\n    while n < 50:\n"
                                  "        if os.fork() == 0:\n            import time; "
                                  "time.sleep(5); os._exit(0)\n        n += 1\n"
                                  "except OSError as e:\n    print('limited', e.errno)\n"),
                         NULL,
                         {NULL},
                         false};
        same(&p, &lim);
    }
}

/* test_isolation(lim) — job 1 changes something, job 2 must not see it. */
static void test_isolation(const struct sandbox_limits *lim0)
{
    struct sandbox_limits lim = *lim0;
    struct result r1, r2;

    job_says("import os, sys, builtins, signal, random\n"
             "open('/work/leak', 'w').write('x'); open('/tmp/leak', 'w').write('x')\n"
             "open('/dev/shm/leak', 'w').write('x')\n"
             "sys.modules['leakmod'] = sys; import xml.dom\n"
             "builtins.LEAK = 1; os.LEAK = 1; sys.LEAK = 1; random.LEAK = 1\n"
             "signal.signal(signal.SIGTERM, lambda *a: None); signal.signal(signal.SIGINT, "
             "signal.SIG_IGN)\n"
             "os.environ['LEAK'] = '1'; os.putenv('LEAK2', '1')\n"
             "fd = os.open('/work/leak', os.O_RDONLY); os.dup2(fd, 50)\n"
             "import threading; threading.Thread(target=__import__('time').sleep, args=(30,), "
             "daemon=True).start()\n"
             "random.seed(1); sys.setrecursionlimit(50)\n"
             "print('changed')\n",
             &lim, "changed\n",
             "job 1 changes files, modules, globals, signals, env, fds, threads");
    job_says("import os, sys, builtins, signal, random, threading\n"
             "print([os.path.exists(p) for p in ('/work/leak', '/tmp/leak', '/dev/shm/leak')],"
             " 'leakmod' in sys.modules, 'xml.dom' in sys.modules,"
             " [hasattr(m, 'LEAK') for m in (builtins, os, sys, random)],"
             " signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,"
             " signal.getsignal(signal.SIGINT) is signal.default_int_handler,"
             " 'LEAK' in os.environ or 'LEAK2' in os.environ, sorted(os.listdir('/proc/self/fd')),"
             " threading.active_count(), sys.getrecursionlimit())\n",
             &lim,
             "[False, False, False] False False [False, False, False, False] True True False "
             "['0', '1', '2', '3'] 1 1000\n",
             "job 2 sees none of it");
    job("import random; print(random.random(), random.getrandbits(64))", &lim, &r1);
    job("import random; print(random.random(), random.getrandbits(64))", &lim, &r2);
    ok(r1.status == RESULT_OK && r2.status == RESULT_OK && strcmp(r1.out.data, r2.out.data) != 0,
       "random state differs between jobs (%s / %s)", r1.out.data, r2.out.data);
    result_release(&r1);
    result_release(&r2);
    job_says("import os\nfor p in range(1, 200):\n    try:\n        os.kill(p, 0)\n"
             "    except ProcessLookupError:\n        pass\n    else:\n        print(p)\n",
             &lim, "1\n2\n", "a job sees only its pid 1 and itself: not the zygote nor other jobs");
    job_says("import os\nprint(sorted(p for p in os.listdir('/proc') if p.isdigit()))\n", &lim,
             "['1', '2']\n", "the job's /proc is its own pid namespace's");
    job_says(
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "fd = os.open('/proc/self/ns/mnt', os.O_RDONLY)\n"
        "print(libc.setns(fd, 0), ctypes.get_errno(), libc.unshare(0x20000), ctypes.get_errno(),"
        " libc.unshare(0x20000000), ctypes.get_errno())\n",
        &lim, "-1 1 -1 1 -1 1\n",
        "a job cannot enter or make namespaces (no capabilities, seccomp)");

    /* bombs: each hits its own job's limit; the next job runs normally */
    lim.memory_mb = 64;
    job("x = b'x' * (300 << 20)", &lim, &r1);
    ok(r1.status == RESULT_MEMORY_LIMIT, "a memory bomb ends as memory_limit (%s)",
       result_status_name(r1.status));
    result_release(&r1);
    lim = *lim0;
    lim.pids = 16;
    job("import os, time\nfor i in range(1000):\n    try:\n        os.fork()\n    except OSError:\n"
        "        break\ntime.sleep(0.2)\n",
        &lim, &r1);
    ok(r1.status != RESULT_SANDBOX_ERROR, "a fork bomb stays in its job (%s: %s)",
       result_status_name(r1.status), r1.message);
    result_release(&r1);
    lim = *lim0;
    lim.disk_mb = 4;
    job("try:\n    open('/tmp/fill', 'wb').write(b'x' * (16 << 20))\nexcept OSError as e:\n"
        "    print(e.errno)\n",
        &lim, &r1);
    ok(r1.status == RESULT_OK && strcmp(r1.out.data, "28\n") == 0,
       "a disk bomb fills its own scratch (ENOSPC: %s)", r1.out.data);
    result_release(&r1);
    job_says("import shutil; u = shutil.disk_usage('/tmp'); print(u.used < (1 << 20))", &lim,
             "True\n", "the next job's scratch is empty");
    lim = *lim0;
    job_says("print('alive')", &lim, "alive\n", "and a plain job after the bombs runs normally");
}

/* netns_of(lim, code) — the network namespace a job that runs code (then prints it) had. */
static char *netns_of(const struct sandbox_limits *lim, const char *code)
{
    char prog[1024];
    struct result r;
    char *ns = NULL;

    snprintf(prog, sizeof(prog), "%s\nimport os; print(os.readlink('/proc/self/ns/net'))", code);
    job(prog, lim, &r);
    if (r.status == RESULT_OK && r.out.data)
        ns = strdup(r.out.data);
    else
        diag("%s: out '%s' err '%s' msg '%s'", result_status_name(r.status), r.out.data, r.err.data,
             r.message);
    result_release(&r);
    return ns;
}

/* kept_netns(lim) — a namespace a job that did nothing passed on: no-op jobs until one has the
 * namespace of the one before it (the supervisor sees a job's cgroup empty a moment before the
 * zygote can reap its pid 1, so a job asked for at once may find it not yet kept and get a new
 * one). NULL when five in a row did not. */
static char *kept_netns(const struct sandbox_limits *lim)
{
    char *prev = netns_of(lim, ""), *cur;

    for (int i = 0; prev && i < 5; i++) {
        cur = netns_of(lim, "");
        if (cur && strcmp(prev, cur) == 0) {
            free(prev);
            return cur;
        }
        free(prev);
        prev = cur;
    }
    free(prev);
    return NULL;
}

/* test_netns(lim0) — network namespaces kept for the next job (netns_pool.h): reused only when
 * the last job left no trace in it, never for loopback jobs. */
static void test_netns(const struct sandbox_limits *lim0)
{
    struct sandbox_limits lim = *lim0, lo = *lim0;
    char *b = NULL, *c = NULL, *d, *e, *f;

    lo.loopback = true;
    b = kept_netns(&lim);
    ok(b != NULL, "a job that left no trace: its namespace goes to the next (%s)", b);
    for (int i = 0; i < 3 && b && !(c && strcmp(b, c) == 0); i++) {
        free(b);
        free(c);
        b = kept_netns(&lim);
        c = b ? netns_of(&lim, "import socket\n"
                               "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
                               "try:\n    s.sendto(b'x', ('127.0.0.1', 9))\n"
                               "except OSError:\n    pass")
              : NULL;
    }
    d = netns_of(&lim, "");
    ok(b && c && d && strcmp(b, c) == 0 && strcmp(c, d) != 0,
       "a job that tried to send, in a kept namespace (%s): the next gets a new one (%s)", c, d);
    job_says("ip = [l.split()[1:] for l in open('/proc/net/snmp') if l.startswith('Ip:')]\n"
             "print(dict(zip(*ip))['OutNoRoutes'])",
             &lim, "0\n", "and sees none of its counters (Ip OutNoRoutes 0)");
    free(e = netns_of(&lim, "import socket, os\n"
                            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                            "s.bind(b'\\0crucible-left-behind')\n"
                            "os.set_inheritable(s.fileno(), True)\n"
                            "if os.fork() == 0:\n    import time; time.sleep(30)"));
    job_says("import socket\n"
             "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
             "try:\n    s.connect(b'\\0crucible-left-behind'); print('reached')\n"
             "except OSError as e:\n    print(e.errno)",
             &lim, "111\n", "an abstract socket a job's orphan held is gone for the next job");
    free(e = netns_of(&lim, "import socket, array\n"
                            "a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                            "c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
                            "c.bind(b'\\0crucible-cycle')\n"
                            "b.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,"
                            " array.array('i', [a.fileno(), c.fileno()]))])"));
    job_says("import socket\n"
             "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
             "try:\n    s.connect(b'\\0crucible-cycle'); print('reached')\n"
             "except OSError as e:\n    print(e.errno)",
             &lim, "111\n",
             "a socket that outlived its job (in flight to itself, for the kernel's collector) "
             "is not reachable from the next");
    e = netns_of(&lo, "");
    ok(e && d && strcmp(e, d) != 0, "a loopback job gets a namespace of its own (%s)", e);
    f = netns_of(&lim, "");
    ok(e && f && strcmp(e, f) != 0, "which is not kept for a later job (%s)", f);
    free(b);
    free(c);
    free(d);
    free(e);
    free(f);
}

/* test_preload(lim) — the preloaded harness is the zygote's, and a job's changes to it stay in
 * that job. */
static void test_preload(const struct sandbox_limits *lim)
{
    job_says("import sys, _crucible_harness as h\n"
             "print(h.__file__, h.__name__, h._crucible_main.__code__.co_filename,"
             " sys.modules['_crucible_harness'] is h)\n",
             lim, "/work/_crucible_harness.py _crucible_harness /work/_crucible_harness.py True\n",
             "a job imports the preloaded harness, named as its file would be");
    job_says("import _crucible_harness as h\nh.LEAK = 1\nh._crucible_main = None\n"
             "print('changed')\n",
             lim, "changed\n", "job 1 changes the preloaded module");
    job_says(
        "import _crucible_harness as h\nprint(hasattr(h, 'LEAK'), callable(h._crucible_main))\n",
        lim, "False True\n", "job 2 gets it as the zygote preloaded it");
}

/* test_preload_fails() — a module that fails to import is named, and no fork server starts. */
static void test_preload_fails(void)
{
    struct forkserver_module bad[] = {
        {"fine", "/work/fine.py", "x = 1\n", NULL},
        {"broken", "/work/broken.py", "raise ValueError('no')\n", NULL},
    };
    struct errbuf err = {{0}};
    struct forkserver *f = forkserver_start(&rt, &img, bad, 2, &err);

    ok(!f && strstr(err.msg, "'broken'"), "a preloaded module that raises: no fork server (%s)",
       err.msg);
    forkserver_stop(f);
    bad[0].filename = "";
    err.msg[0] = '\0';
    f = forkserver_start(&rt, &img, bad, 1, &err);
    ok(!f && strstr(err.msg, "no file name"), "a module without a file name is refused (%s)",
       err.msg);
    forkserver_stop(f);
}

/* A job's count of the probe module's pages (4 MiB the zygote wrote) that are its own copies
 * when its code starts: present and mapped by it alone (/proc/self/pagemap). */
static const char probe_src[] = "BIG = bytearray(4 << 20)\n";
static const char probe_warmup[] =
    "import _crucible_probe as m\nm.BIG[::4096] = b'\\1' * len(range(0, len(m.BIG), 4096))\n";
static const char probe_count[] =
    "import ctypes, _crucible_probe as m\n"
    "a = ctypes.addressof((ctypes.c_char * len(m.BIG)).from_buffer(m.BIG))\n"
    "first, n = a // 4096 + 1, len(m.BIG) // 4096 - 1\n"
    "with open('/proc/self/pagemap', 'rb') as f:\n"
    "    f.seek(first * 8)\n"
    "    d = f.read(n * 8)\n"
    "e = [int.from_bytes(d[i:i + 8], 'little') for i in range(0, len(d), 8)]\n"
    "print(sum(1 for x in e if x >> 63 & 1 and x >> 56 & 1), len(e))\n";

/* test_prefault(lim) — the pages a trial of the warm-up wrote are copied ahead into every job,
 * and only those: a fork server whose trial ran `pass` leaves the probe's pages shared with
 * the zygote; one whose trial wrote them gives each job its own copies before its code runs,
 * and its jobs still run as before. A warm-up that never stops teaches nothing and delays
 * the start by the trial's bound only. */
static void test_prefault(const struct sandbox_limits *lim)
{
    struct forkserver_module mods[] = {
        {"_crucible_probe", "/work/_crucible_probe.py", probe_src, probe_warmup}};
    struct forkserver *plain = fs;
    struct errbuf err = {{0}};
    struct timespec t0, t1;
    unsigned learned;

    ok(forkserver_prefault_pages(fs) > 0,
       "the trial of `pass` learned which pages a job writes (%u pages)",
       forkserver_prefault_pages(fs));
    job_says(probe_count, lim, "0 1023\n",
             "pages no trial wrote are not copied ahead: the probe's are the zygote's in a job");
    fs = forkserver_start(&rt, &img, mods, 1, &err);
    if (!ok(fs != NULL, "a fork server whose warm-up writes the probe's pages (%s)", err.msg)) {
        fs = plain;
        return;
    }
    learned = forkserver_prefault_pages(fs);
    ok(learned >= 1024 && learned <= PREFAULT_MAX_PAGES,
       "its trial learned them, and at most PREFAULT_MAX_PAGES (%u pages)", learned);
    job_says(probe_count, lim, "1023 1023\n",
             "each job has its own copy of every one before its code runs");
    job_says("import _crucible_probe as m\nprint(sum(m.BIG))\n", lim, "0\n",
             "and sees the zygote's contents in them, not the trial's");
    forkserver_stop(fs);

    mods[0].warmup = "import time\ntime.sleep(600)\n";
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fs = forkserver_start(&rt, &img, mods, 1, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (ok(fs != NULL, "a warm-up that never stops: the fork server starts anyway (%s)", err.msg)) {
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        ok(forkserver_prefault_pages(fs) == 0 && s < 30,
           "having learned nothing, its trial killed (%u pages, started in %.1f s)",
           forkserver_prefault_pages(fs), s);
        job_says("print('runs')\n", lim, "runs\n", "and its jobs run");
        forkserver_stop(fs);
    }
    fs = plain;
}

/* groups_of_mine() — this process's sandbox and job groups left in crucible's subtree. */
static int groups_of_mine(void)
{
    char prefix[32];
    int n = 0;

    snprintf(prefix, sizeof(prefix), "sb-%ld-", (long)getpid());
    for (int h = 0; h < rt.cg.nhier; h++) {
        DIR *d = opendir(rt.cg.hier[h].base);
        struct dirent *e;
        while (d && (e = readdir(d)))
            n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
        if (d)
            closedir(d);
    }
    return n;
}

/* wait_ready(want) — polls until want spares wait (a liveness bound of 20 s). */
static bool wait_ready(unsigned want, struct forkserver_spare_stats *st)
{
    for (int i = 0; i < 2000; i++) {
        forkserver_spare_stats(fs, st);
        if (st->ready >= want)
            return true;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    return false;
}

/* test_spares(lim) — jobs made ahead: made for the last job's kind, taken by the next runs,
 * with the run's own memory limit; every isolation test again with them on; none left after
 * the fork server stops. */
static void test_spares(const struct sandbox_limits *lim0)
{
    struct sandbox_limits lim = *lim0;
    struct forkserver_spare_stats st, st2;
    struct errbuf err = {{0}};
    struct result r;
    bool ready;

    forkserver_spare_stats(fs, &st);
    ok(st.ready == 0 && st.made == 0 && st.taken == 0, "no spares until asked for");
    ok(forkserver_set_spares(fs, 2, &err) == 0, "two spares asked for (%s)", err.msg);
    job_says("print('first')", &lim, "first\n", "a job: its limits are the spares' pattern");
    ready = wait_ready(2, &st);
    ok(ready, "two spares are made ahead (%u ready, %llu made)", st.ready,
       (unsigned long long)st.made);
    ok(groups_of_mine() >= 3, "their groups exist beside the zygote's (%d seen)", groups_of_mine());
    job_says("import os\nprint(os.listdir('/work'), os.listdir('/tmp'))", &lim, "[] []\n",
             "a spare's scratch is empty");
    forkserver_spare_stats(fs, &st2);
    ok(st2.taken == st.taken + 1, "that job was a spare (taken %llu -> %llu)",
       (unsigned long long)st.taken, (unsigned long long)st2.taken);

    /* a smaller memory limit than the spare was made with: set when it is taken */
    ok(wait_ready(2, &st), "the spares are made up again");
    lim.memory_mb = 64;
    job("x = b'x' * (300 << 20)", &lim, &r);
    forkserver_spare_stats(fs, &st2);
    ok(r.status == RESULT_MEMORY_LIMIT && st2.taken == st.taken + 1,
       "a spare taken by a run with a 64 MB limit ends it as memory_limit (%s)",
       result_status_name(r.status));
    result_release(&r);

    /* another scratch size: not from the spares; the pattern follows it */
    lim = *lim0;
    lim.disk_mb = 8;
    ok(wait_ready(2, &st), "the spares are made up again");
    job_says("import shutil; print(shutil.disk_usage('/tmp').total <= (8 << 20))", &lim, "True\n",
             "a job of another scratch size gets that size");
    forkserver_spare_stats(fs, &st2);
    ok(st2.taken == st.taken, "it was made on demand, not taken from the spares");
    ok(wait_ready(2, &st), "spares of the new size are made");
    job_says("import shutil; print(shutil.disk_usage('/tmp').total <= (8 << 20))", &lim, "True\n",
             "and the next job of that size takes one, of that size");

    diag("the isolation tests again, with jobs made ahead");
    test_isolation(lim0);
    forkserver_spare_stats(fs, &st);
    ok(st.taken >= 8, "most of those jobs were spares (%llu taken)", (unsigned long long)st.taken);

    /* a used job handed back (sandbox_discard) is torn down by the filler, not the caller */
    {
        struct sandbox *j;
        struct result res;
        char *argv[] = {"/usr/bin/python3", "-c", "print('used')", NULL};
        struct sandbox_proc p = {.argv = argv, .stdin_fd = -1};
        int before, after = -1;

        ok(wait_ready(2, &st), "the spares are made up again");
        before = groups_of_mine();
        j = forkserver_job(fs, lim0, &err);
        result_init(&res);
        if (ok(j != NULL, "a job taken (%s)", err.msg)) {
            sandbox_exec(j, &p, SANDBOX_EXEC_LAST, &res);
            ok(res.status == RESULT_OK && strcmp(res.out.data ? res.out.data : "", "used\n") == 0,
               "it ran (%s)", result_status_name(res.status));
            sandbox_discard(j);
            for (int i = 0; i < 2000 && (after = groups_of_mine()) > before; i++)
                nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
            ok(after <= before,
               "discarded, its cgroups are removed in the background (%d groups before the job "
               "was taken, %d now)",
               before, after);
        }
        result_release(&res);
    }

    ok(forkserver_set_spares(fs, 0, &err) == 0, "no spares asked for any more");
    for (int i = 0; i < 2000 && (forkserver_spare_stats(fs, &st), st.ready > 0); i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    ok(st.ready == 0, "the spares left are destroyed (%u ready)", st.ready);
    job_says("print('made now')", lim0, "made now\n", "and a job is made when asked for");
}

/* job_processes(pid1, pid2) — the one job alive (no spares): its pid 1 and its child, both
 * named crucible-job until the exec (the child is pid 2 made ahead), by their host pids; the
 * number of crucible-job processes seen. */
static int job_processes(pid_t *pid1, pid_t *pid2)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    int n = 0;

    *pid1 = *pid2 = 0;
    while (d && (de = readdir(d))) {
        char path[64], text[512], *close_paren;
        int ppid = 0;
        FILE *f;
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        if (fgets(text, sizeof(text), f) && strstr(text, "(crucible-job)") &&
            (close_paren = strrchr(text, ')')) && sscanf(close_paren + 2, "%*c %d", &ppid) == 1) {
            char ppath[64], pcomm[64] = "";
            FILE *pf;
            n++;
            snprintf(ppath, sizeof(ppath), "/proc/%d/comm", ppid);
            if ((pf = fopen(ppath, "r"))) {
                if (!fgets(pcomm, sizeof(pcomm), pf))
                    pcomm[0] = '\0';
                fclose(pf);
            }
            if (strcmp(pcomm, "crucible-job\n") == 0) {
                *pid2 = atoi(de->d_name);
                *pid1 = ppid;
            }
        }
        fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

/* status_field(pid, name, out, size) — a field of /proc/PID/status, "" when unreadable. */
static void status_field(pid_t pid, const char *name, char *out, size_t size)
{
    char path[64], line[256];
    size_t len = strlen(name);
    FILE *f;

    out[0] = '\0';
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "r")))
        return;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, name, len) == 0 && line[len] == ':') {
            snprintf(out, size, "%s", line + len + 1 + strspn(line + len + 1, " \t"));
            out[strcspn(out, "\n")] = '\0';
            break;
        }
    fclose(f);
}

/* test_made_ahead — a job's pid 2 is made before its exec and confined before any request
 * (zygote.c); when it is gone, the exec makes pid 2 itself, confined the same, or, under the
 * small init (which cannot), fails as crucible's error. The small init's pid 1 holds none of
 * the zygote's memory. */
static void test_made_ahead(const struct sandbox_limits *lim)
{
    static const char confinement[] =
        "s = open('/proc/self/status').read()\n"
        "print(*(s.split(k + ':')[1].split()[0] for k in ('CapEff', 'NoNewPrivs', 'Seccomp')))\n";
    char *argv[] = {"/usr/bin/python3", "-c", (char *)confinement, NULL};
    struct sandbox_proc p = {.argv = argv, .stdin_fd = -1};
    struct errbuf err = {{0}};

    for (int round = 0; round < 2; round++) {
        bool kill_it = round == 1;
        char caps[64], nnp[16], sec[16];
        struct sandbox *j = forkserver_job(fs, lim, &err);
        struct result res;
        pid_t pid1 = 0, pid2 = 0;
        int n = 0;

        if (!ok(j != NULL, "a job (%s)", err.msg))
            return;
        for (int i = 0; i < 500 && (n = job_processes(&pid1, &pid2)) != 2; i++)
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        ok(n == 2 && pid2 > 0, "before its exec a job is its pid 1 and one child of it (%d, %d)",
           (int)pid1, (int)pid2);
        if (forkserver_small_init(fs)) {
            char rss1[32], rss2[32];
            status_field(pid1, "VmRSS", rss1, sizeof(rss1));
            status_field(pid2, "VmRSS", rss2, sizeof(rss2));
            ok(atol(rss1) > 0 && atol(rss1) < 1024 && atol(rss2) > 4 * atol(rss1),
               "its pid 1 is the small init: none of the interpreter's memory (VmRSS %s, pid 2's "
               "%s)",
               rss1, rss2);
        }
        status_field(pid2, "CapEff", caps, sizeof(caps));
        status_field(pid2, "NoNewPrivs", nnp, sizeof(nnp));
        status_field(pid2, "Seccomp", sec, sizeof(sec));
        ok(strcmp(caps, "0000000000000000") == 0 && strcmp(nnp, "1") == 0 && strcmp(sec, "2") == 0,
           "the child waiting for the exec is confined already: no capability, no_new_privs, "
           "the filter (CapEff %s, NoNewPrivs %s, Seccomp %s)",
           caps, nnp, sec);
        if (kill_it && pid2 > 0) {
            kill(pid2, SIGKILL);
            for (int i = 0; i < 500 && job_processes(&pid1, &pid2) != 1; i++)
                nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
            ok(job_processes(&pid1, &pid2) == 1, "killed, it is gone (its pid 1 reaped it)");
        }
        result_init(&res);
        sandbox_exec(j, &p, SANDBOX_EXEC_LAST, &res);
        if (kill_it && forkserver_small_init(fs)) {
            ok(res.status == RESULT_SANDBOX_ERROR &&
                   strstr(res.message, "the job's process made ahead is gone"),
               "without it, the exec fails as crucible's error (%s: %s)",
               result_status_name(res.status), res.message);
        } else if (!ok(res.status == RESULT_OK &&
                           strcmp(res.out.data ? res.out.data : "", "0000000000000000 1 2\n") == 0,
                       "%s, the job's program runs confined (%s: '%s')",
                       kill_it ? "without it (pid 2 forked at the exec)" : "in it",
                       result_status_name(res.status), res.out.data ? res.out.data : ""))
            diag("err '%s' msg '%s'", res.err.data ? res.err.data : "", res.message);
        result_release(&res);
        sandbox_discard(j);
    }
}

int main(int argc, char **argv)
{
    struct errbuf err = {{0}};
    struct sandbox_limits lim;

    if (argc == 2 && strcmp(argv[1], FORKSERVER_ZYGOTE_ARG) == 0)
        return forkserver_zygote_main(argc, argv);
    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &img, &err) < 0) {
        diag("%s", err.msg);
        skip("sandbox runtime unavailable");
        return done_testing();
    }
    harness_src = read_text("src/judge/harness/python.py");
    if (!ok(harness_src != NULL, "the assert harness's source is readable (run from the tree)"))
        return done_testing();
    /* preloaded as eval's fork server preloads it (verify_forkserver_preload): the cold path
     * imports the file, the fork server's jobs get the zygote's module */
    struct forkserver_module mods[] = {
        {"_crucible_harness", "/work/_crucible_harness.py", harness_src, NULL},
        {"_crucible_probe", "/work/_crucible_probe.py", probe_src, NULL}, /* test_prefault */
    };
    fs = forkserver_start(&rt, &img, mods, 2, &err);
    if (!fs && errno == ENOTSUP) {
        diag("%s", err.msg);
        skip("no cgroups: no fork server");
        return done_testing();
    }
    if (!ok(fs != NULL, "fork server started (%s)", err.msg))
        return done_testing();
    sandbox_limits_default(&lim);
    lim.wall_time = 10;
    lim.cpu_time = 5;

    test_verdicts(&lim);
    test_isolation(&lim);
    test_netns(&lim);
    test_preload(&lim);
    test_made_ahead(&lim);
    test_spares(&lim);
    test_prefault(&lim);
    forkserver_stop(fs);
    ok(groups_of_mine() == 0,
       "no group of a job or spare is left once the fork server stops "
       "(%d)",
       groups_of_mine());
    test_preload_fails();
    sandbox_runtime_release(&rt);
    return done_testing();
}
