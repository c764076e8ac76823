/*
 * zygote.c — the inside of a fork server (see forkserver.h): the zygote and its jobs.
 *
 * The zygote is a fresh exec of crucible's binary by a fork server's sandbox init, with
 * CAP_SYS_ADMIN and CAP_NET_ADMIN ambient in the sandbox's user namespace and nothing else of
 * the supervisor. Its phases: seccomp program compiled → libpython loaded (dlopen from the
 * sandbox's root) and initialised as /usr/bin/python3 is (program name, environment, signal
 * handlers, site) → common modules imported → READY on fd 3 → jobs. It runs no code of a job's.
 *
 * A job (CTL_JOB): the zygote forks with new mount, pid, ipc and uts namespaces, and a network
 * namespace of its own: new for a loopback job, else one of the pool (netns_pool.h: new, or one
 * a finished job left exactly as it was new, never one another live job holds). The
 * child is the job's pid 1, its reaper: it joins the job's cgroup (the supervisor's "tasks"
 * files) and a cgroup namespace rooted there, keeps only the job's control socket, mounts a
 * fresh size-limited scratch tmpfs over /work and /tmp (as rootfs.c does for a sandbox) and a
 * fresh /proc of its pid namespace, brings up loopback when asked, and answers on the socket
 * as a sandbox's init: READY, then puts, gets and one exec. The exec's process (pid 2) is
 * forked and confined ahead, before READY (no capability, no_new_privs, seccomp: see "a job's
 * pid 2, made ahead"), takes the rest of init's payload steps at the request (stdio, start
 * directory, rlimits) before any job code runs, then either runs Python in the forked
 * interpreter or execve's as a cold payload. Its start is reported as init reports one: after
 * execve (a CLOEXEC pipe) or, for Python, once it is confined. The reaper reports its end with
 * the wait status and rusage (CTL_EXITED), reaps what the job leaves, and exits when the
 * supervisor hangs up; the supervisor's teardown kills the job's cgroup. Where crucible
 * carries the small init (jobinit.c), pid 1 execs it once pid 2 is forked, and it is the
 * reaper that answers: see "a job's small init".
 */
#include "sandbox/forkserver.h"
#include "sandbox/netns_pool.h"
#include "sandbox/prefault.h"
#include "sandbox/sandbox_int.h"
#include "sandbox/jobinit.inc" /* jobinit_image: the small init (Makefile), when built */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/mount.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

extern char **environ;

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* linux/memfd.h since 6.3: executable, whatever vm.memfd_noexec says */
#endif

/* Where libpython is looked for in the sandbox's root, newest first. */
static const struct {
    const char *name;
    int minor;
} python_libs[] = {
    {"libpython3.13.so.1.0", 13}, {"libpython3.12.so.1.0", 12}, {"libpython3.11.so.1.0", 11},
    {"libpython3.10.so.1.0", 10}, {"libpython3.9.so.1.0", 9},
};

#define PYTHON_EXE "/usr/bin/python3"

/* Imported once in the zygote, so that a job does not pay for them: what HumanEval- and
 * MBPP-style programs and the assert harness import. */
static const char preload[] =
    "list(map(__import__, ['re', 'math', 'json', 'collections', 'itertools', 'functools',"
    " 'typing', 'heapq', 'bisect', 'string', 'random', 'copy', 'operator', 'traceback',"
    " 'dataclasses', 'enum', 'io', 'ast', 'inspect', 'fractions', 'decimal', 'statistics']))\n";

/* A job's own environment and orig_argv, set in the forked interpreter before its code runs
 * (sys._crucible_env: "K=V" entries, sys._crucible_argv: argv, both NUL-separated bytes).
 * libc's environ is the job's already (run_python points it at the request's array): only
 * os.environ's dict (posix.environ, which os.environb shares) is made anew, as the interpreter
 * makes it at start-up (entries without '=' left out, the first of a name kept). Not through
 * os.environ's unsetenv and putenv: those write libc's copies of every entry into the zygote's
 * heap, about 170 pages each job copies. Defined in __main__ and removed from it at once;
 * removes itself from sys when called.
 *
 * And a job's end: what Py_FinalizeEx does that a program can see — non-daemon threads
 * joined, atexit functions, stdio flushed (120 when that fails), __main__'s names cleared
 * (None, underscored first) and a collection, so that its objects' finalizers run and its
 * unclosed files are flushed — without the teardown of every module, which in a forked
 * interpreter writes (copies) every page of the zygote's heap: measured, 3-5x the cost of
 * running `pass`. Held by the zygote in C only (sys has no trace of it). Then gc.freeze():
 * the zygote's objects are left out of a job's collections (no copy of their pages either). */
static const char job_setup[] =
    "def _crucible_job():\n"
    "    import sys, os\n"
    "    env, argv = sys._crucible_env, sys._crucible_argv\n"
    "    del sys._crucible_env, sys._crucible_argv, sys._crucible_job\n"
    "    data = os.environ._data\n"
    "    data.clear()\n"
    "    for kv in env.split(b'\\0'):\n"
    "        k, eq, v = kv.partition(b'=')\n"
    "        if eq:\n"
    "            data.setdefault(k, v)\n"
    "    sys.orig_argv = [os.fsdecode(a) for a in argv.split(b'\\0')]\n"
    "__import__('sys')._crucible_job = _crucible_job\n"
    "del _crucible_job\n"
    "def _crucible_end(atexit=__import__('atexit')):\n"
    "    import sys, gc\n"
    "    t = sys.modules.get('threading')\n"
    "    if t is not None:\n"
    "        t._shutdown()\n"
    "    atexit._run_exitfuncs()\n"
    "    def flush(first):\n"
    "        good = True\n"
    "        for f in (sys.stdout, sys.stderr):\n"
    "            try:\n"
    "                if f is not None and not f.closed:\n"
    "                    f.flush()\n"
    "            except Exception as e:\n"
    "                good = False\n"
    "                if first:\n"
    "                    try:\n"
    "                        sys.stderr.write('Exception ignored in: %r\\n' % (f,) + ''.join(\n"
    "                            __import__('traceback').format_exception_only(type(e), e)))\n"
    "                    except Exception:\n"
    "                        pass\n"
    "        return good\n"
    "    good = flush(True)\n"
    "    d = sys.modules['__main__'].__dict__\n"
    "    for k in [k for k in d if k[:1] == '_' and k[:2] != '__']:\n"
    "        d[k] = None\n"
    "    for k in [k for k in d if k != '__builtins__']:\n"
    "        d[k] = None\n"
    "    gc.collect()\n"
    "    flush(False)\n"
    "    return 0 if good else 120\n"
    "__import__('sys')._crucible_end = _crucible_end\n"
    "del _crucible_end\n"
    "__import__('gc').freeze()\n";

/* One preloaded module (forkserver_module), from sys._crucible_src ("NAME\0FILENAME\0SOURCE"):
 * made as the import system would make it from that file, less __spec__ and __loader__; left
 * out of sys.modules when it fails. */
static const char preload_one[] =
    "def _crucible_preload():\n"
    "    import sys\n"
    "    name, filename, src = sys._crucible_src.split(b'\\0', 2)\n"
    "    del sys._crucible_src\n"
    "    name, filename = name.decode(), filename.decode()\n"
    "    m = type(sys)(name)\n"
    "    m.__file__ = filename\n"
    "    sys.modules[name] = m\n"
    "    try:\n"
    "        exec(compile(src, filename, 'exec', dont_inherit=True), m.__dict__)\n"
    "    except BaseException:\n"
    "        del sys.modules[name]\n"
    "        raise\n"
    "_crucible_preload()\n"
    "del _crucible_preload\n";

#define PY_CF_IGNORE_COOKIE 0x0800

struct py_flags {
    int cf_flags;
    int cf_feature_version;
};

/* The few functions of libpython the zygote calls (no Python headers needed). */
struct py {
    int minor;
    void (*set_program_name)(const wchar_t *);
    void (*initialize_ex)(int);
    int (*run_string)(const char *, struct py_flags *);
    int (*run_file)(FILE *, const char *, int, struct py_flags *);
    void (*before_fork)(void);
    void (*after_fork_parent)(void);
    void (*after_fork_child)(void);
    wchar_t *(*decode_locale)(const char *, size_t *);
    void (*set_argv_ex)(int, wchar_t **, int);
    void *(*bytes_new)(const char *, ssize_t);
    int (*sys_set_object)(const char *, void *);
    void (*dec_ref)(void *);
    int *unhandled_sigint; /* _Py_UnhandledKeyboardInterrupt, when exported */
    void *(*sys_get_object)(const char *);
    void (*inc_ref)(void *);
    void *(*call_object)(void *, void *);
    long (*long_as_long)(void *);
    void *end; /* the job's end (job_setup's _crucible_end), a reference of the zygote's */
};

/* The zygote's state: one per process. */
struct zygote {
    struct py py;
    struct filter filter;
    char **env;              /* the zygote's own environment, as init gave it */
    struct netns_pool netns; /* network namespaces kept for jobs without loopback */
    char **warmups;          /* the preloaded modules' warm-ups (forkserver_module) */
    size_t nwarmups;
    struct prefault prefault; /* the zygote's pages a job writes, copied ahead by each pid 2 */
    int init_fd;              /* the small init's memfd (jobinit_load), or -1 */
    char *job_stack;          /* pid 1's stack while it shares the zygote's memory */
};

enum job_kind { JOB_EXECVE, JOB_PY_COMMAND, JOB_PY_FILE };

/* Set once this process is a zygote (and so in its jobs): LeakSanitizer's check at exit, in a
 * sanitized build, is off there. It needs ptrace, which a job's seccomp policy refuses (it
 * would end every job with its own failure), and a job's heap is the zygote's by design. The
 * one global of this file: the sanitizer's hook below can be told nothing else. */
static bool in_zygote;

int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
    return in_zygote;
}

/* py_load(py, err) — dlopen of the newest libpython found, and its functions. 0 or -errno. */
static int py_load(struct py *py, struct errbuf *err)
{
    void *lib = NULL;

    for (size_t i = 0; !lib && i < sizeof(python_libs) / sizeof(python_libs[0]); i++) {
        lib = dlopen(python_libs[i].name, RTLD_NOW | RTLD_GLOBAL);
        py->minor = python_libs[i].minor;
    }
    if (!lib)
        return errbuf_set(err, "no libpython3 in the image: %s", dlerror()), -ENOENT;
#define SYM(field, name)                                                                           \
    do {                                                                                           \
        *(void **)&py->field = dlsym(lib, name);                                                   \
        if (!py->field)                                                                            \
            return errbuf_set(err, "libpython has no '%s'", name), -ENOENT;                        \
    } while (0)
    SYM(set_program_name, "Py_SetProgramName");
    SYM(initialize_ex, "Py_InitializeEx");
    SYM(run_string, "PyRun_SimpleStringFlags");
    SYM(run_file, "PyRun_SimpleFileExFlags");
    SYM(before_fork, "PyOS_BeforeFork");
    SYM(after_fork_parent, "PyOS_AfterFork_Parent");
    SYM(after_fork_child, "PyOS_AfterFork_Child");
    SYM(decode_locale, "Py_DecodeLocale");
    SYM(set_argv_ex, "PySys_SetArgvEx");
    SYM(bytes_new, "PyBytes_FromStringAndSize");
    SYM(sys_set_object, "PySys_SetObject");
    SYM(dec_ref, "Py_DecRef");
    SYM(sys_get_object, "PySys_GetObject");
    SYM(inc_ref, "Py_IncRef");
    SYM(call_object, "PyObject_CallObject");
    SYM(long_as_long, "PyLong_AsLong");
#undef SYM
    py->unhandled_sigint = dlsym(lib, "_Py_UnhandledKeyboardInterrupt");
    return 0;
}

/* env_decides(e) — whether an environment entry changes how the interpreter starts (so a job
 * whose entries differ from the zygote's cannot use it). */
static bool env_decides(const char *e)
{
    return strncmp(e, "PYTHON", 6) == 0 || strncmp(e, "LC_", 3) == 0 || strncmp(e, "LANG=", 5) == 0;
}

static bool env_has(char *const *env, const char *e)
{
    for (; env && *env; env++)
        if (strcmp(*env, e) == 0)
            return true;
    return false;
}

/* job_kind_of(z, x) — whether x is `python3 -c CODE ...` or `python3 FILE ...` that the forked
 * interpreter can run as a fresh one would; FILE is checked later (a regular file). */
static enum job_kind job_kind_of(const struct zygote *z, const struct exec_req *x)
{
    char **argv = x->argv;
    bool python = strcmp(argv[0], PYTHON_EXE) == 0 ||
                  (strcmp(argv[0], "python3") == 0 && access("/usr/local/bin/python3", F_OK) < 0);

    if (!python || x->spec.argc < 2)
        return JOB_EXECVE;
    for (char **e = x->envp; *e; e++)
        if (env_decides(*e) && !env_has(z->env, *e))
            return JOB_EXECVE;
    for (char **e = z->env; *e; e++)
        if (env_decides(*e) && !env_has(x->envp, *e))
            return JOB_EXECVE;
    if (strcmp(argv[1], "-c") == 0 && x->spec.argc >= 3)
        return JOB_PY_COMMAND;
    if (argv[1][0] && argv[1][0] != '-')
        return JOB_PY_FILE;
    return JOB_EXECVE;
}

/* joined(v, n, &len) — the n strings of v joined by NULs (no trailing one); NULL when out of
 * memory. */
static char *joined(char *const *v, size_t n, size_t *len)
{
    size_t total = 0, at = 0;
    char *s;

    for (size_t i = 0; i < n; i++)
        total += strlen(v[i]) + 1;
    if (!(s = malloc(total + 1)))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(v[i]);
        memcpy(s + at, v[i], l);
        at += l;
        if (i + 1 < n)
            s[at++] = '\0';
    }
    *len = at;
    return s;
}

static int set_sys_bytes(struct py *py, const char *name, const char *data, size_t len)
{
    void *o = py->bytes_new(data, (ssize_t)len);
    int r;

    if (!o)
        return -1;
    r = py->sys_set_object(name, o);
    py->dec_ref(o);
    return r;
}

/* preload_modules(z, err) — the modules forkserver_start put in the zygote's stdin (a memfd:
 * "NAME\0FILENAME\0SOURCE\0WARMUP\0" each), imported, their warm-ups kept in z; the memfd
 * emptied. 0, or -errno with err set. */
static int preload_modules(struct zygote *z, struct errbuf *err)
{
    struct py *py = &z->py;
    char *buf = NULL, *at, *end;
    size_t len = 0, cap = 0;
    ssize_t n;

    for (;;) {
        if (len == cap) {
            char *nb = realloc(buf, cap = cap ? cap * 2 : 65536);
            if (!nb) {
                free(buf);
                return errbuf_set(err, "out of memory"), -ENOMEM;
            }
            buf = nb;
        }
        /* pread: the supervisor's writes moved the shared file offset to the end */
        n = pread(0, buf + len, cap - len, (off_t)len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            free(buf);
            return errbuf_set(err, "cannot read the modules to preload: %s", strerror(errno)),
                   -errno;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    for (at = buf, end = buf + len; at < end;) {
        const char *name = at, *file = memchr(at, '\0', (size_t)(end - at));
        const char *src = file ? memchr(file + 1, '\0', (size_t)(end - file - 1)) : NULL;
        const char *stop = src ? memchr(src + 1, '\0', (size_t)(end - src - 1)) : NULL;
        const char *warm = stop ? memchr(stop + 1, '\0', (size_t)(end - stop - 1)) : NULL;
        if (!warm) {
            free(buf);
            return errbuf_set(err, "malformed list of modules to preload"), -EPROTO;
        }
        if (warm > stop + 1) {
            char **w = realloc(z->warmups, (z->nwarmups + 1) * sizeof(*w));
            if (!w || !(w[z->nwarmups] = strdup(stop + 1))) {
                free(w ? w : z->warmups);
                z->warmups = NULL;
                free(buf);
                return errbuf_set(err, "out of memory"), -ENOMEM;
            }
            z->warmups = w;
            z->nwarmups++;
        }
        if (set_sys_bytes(py, "_crucible_src", name, (size_t)(stop - name)) != 0 ||
            py->run_string(preload_one, NULL) != 0) {
            errbuf_set(err,
                       "cannot preload the module '%s' (its traceback is on the zygote's "
                       "stderr)",
                       name);
            free(buf);
            return -EINVAL;
        }
        at = (char *)warm + 1;
    }
    free(buf);
    if (len && ftruncate(0, 0) < 0)
        return errbuf_set(err, "cannot empty the zygote's stdin: %s", strerror(errno)), -errno;
    return len ? (py->run_string("__import__('gc').freeze()\n", NULL) != 0 ? -EINVAL : 0) : 0;
}

/* run_python(z, x, kind) — in the job's confined pid 2: the forked interpreter becomes the
 * job's (after-fork hooks, environment, argv and sys.path[0] as python3 computes them), runs
 * the command or the file as python3 does, ends as job_setup says (threads, atexit, stdio
 * flushed, __main__ cleared) and exits with python3's status: 0, 1 after an uncaught exception,
 * SystemExit's code (which ends through Py_FinalizeEx, as python3's does), 120 when flushing
 * fails, killed by SIGINT after an uncaught KeyboardInterrupt. Never returns. */
/* The interpreter's after-fork steps (PyOS_AfterFork_Child: its thread state, the at-fork
 * hooks of the zygote's modules, such as random's reseed) done already in this process: pid 2
 * made ahead does them while it waits (see below). */
static bool after_fork_done;
/* Set in a trial fork (learn_job_pages): its end stops it, for the zygote to read its pages. */
static bool in_trial;

__attribute__((noreturn)) static void run_python(struct zygote *z, const struct exec_req *x,
                                                 enum job_kind kind)
{
    struct py *py = &z->py;
    struct py_flags flags = {.cf_flags = 0, .cf_feature_version = py->minor};
    size_t nenv = 0, len, nargs;
    wchar_t **wargv;
    char *blob, path[PATH_MAX + 8];
    int ret, rc;

    /* the name an execve of argv[0] gives (the reaper's otherwise) */
    prctl(PR_SET_NAME, strrchr(x->argv[0], '/') ? strrchr(x->argv[0], '/') + 1 : x->argv[0]);
    if (!after_fork_done) {
        prefault_apply(&z->prefault);
        py->after_fork_child();
    }
    while (x->envp[nenv])
        nenv++;
    environ = x->envp; /* as execve would make it; os.environ follows (job_setup) */
    if (!(blob = joined(x->envp, nenv, &len)) || set_sys_bytes(py, "_crucible_env", blob, len))
        _exit(126);
    free(blob);
    if (!(blob = joined(x->argv, x->spec.argc, &len)) ||
        set_sys_bytes(py, "_crucible_argv", blob, len))
        _exit(126);
    free(blob);
    if (py->run_string("__import__('sys')._crucible_job()\n", NULL) != 0)
        _exit(126);
    /* sys.argv: "-c" and what follows the command, or the file and what follows it */
    nargs = kind == JOB_PY_COMMAND ? x->spec.argc - 2 : x->spec.argc - 1;
    if (!(wargv = calloc(nargs + 1, sizeof(*wargv))))
        _exit(126);
    for (size_t i = 0; i < nargs; i++) {
        const char *a = kind == JOB_PY_COMMAND ? (i == 0 ? "-c" : x->argv[2 + i]) : x->argv[1 + i];
        if (!(wargv[i] = py->decode_locale(a, NULL)))
            _exit(126);
    }
    py->set_argv_ex((int)nargs, wargv, 1);
    if (kind == JOB_PY_COMMAND) {
        flags.cf_flags = PY_CF_IGNORE_COOKIE;
        ret = py->run_string(x->argv[2], &flags);
    } else {
        FILE *fp;
        /* __main__.__file__ is the absolute path, as python3 makes it (cwd joined, not
         * resolved) */
        if (x->argv[1][0] == '/')
            snprintf(path, sizeof(path), "%s", x->argv[1]);
        else if (getcwd(path, PATH_MAX))
            snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", x->argv[1]);
        else
            _exit(126);
        if (!(fp = fopen(path, "rb")))
            _exit(126);
        ret = py->run_file(fp, path, 1, &flags);
    }
    rc = ret != 0 ? 1 : 0;
    {
        void *r = py->call_object(py->end, NULL);
        if (!r || py->long_as_long(r) != 0)
            rc = 120;
    }
    if (py->unhandled_sigint && *py->unhandled_sigint) {
        /* python3 ends by SIGINT after an uncaught KeyboardInterrupt (Py_RunMain) */
        signal(SIGINT, SIG_DFL);
        kill(getpid(), SIGINT);
        rc = 128 + SIGINT;
    }
    /* C stdio flushed as exit() would, without its walk over every library's destructors: in
     * a forked interpreter that walk writes (copies) pages of each, and nothing of a job's
     * can see it */
    fflush(NULL);
    if (in_trial)
        raise(SIGSTOP);
    _exit(rc);
}

/* The zygote's signal handlers (the interpreter's; a sanitizer's too in such a build), set aside
 * by a job's pid 1 and given back to its pid 2. The kernel delivers a signal sent from inside a
 * pid namespace to its pid 1 only when pid 1 handles it: with a handler left, pid 2 could make
 * the reaper run it (a sanitizer's SIGSEGV report ends the process), as init's own reset of
 * every handler prevents (sandbox_init.c). Statics: a job's pid 1 is a process of its own,
 * and its pid 2 a fork of it. */
static struct sigaction zygote_handlers[NSIG];
static bool zygote_handled[NSIG];

/* handlers_set_aside() — in a job's pid 1: every handled signal back to its default action. */
static void handlers_set_aside(void)
{
    struct sigaction dfl;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &zygote_handlers[sig]) < 0)
            continue;
        zygote_handled[sig] = zygote_handlers[sig].sa_handler != SIG_DFL &&
                              zygote_handlers[sig].sa_handler != SIG_IGN;
        if (zygote_handled[sig])
            sigaction(sig, &dfl, NULL);
    }
}

/* handlers_restore() — in a job's pid 2: the handlers handlers_set_aside took away. */
static void handlers_restore(void)
{
    for (int sig = 1; sig < NSIG; sig++)
        if (zygote_handled[sig])
            sigaction(sig, &zygote_handlers[sig], NULL);
}

/* job_payload(z, x, stdio, report, kind, confined) — pid 2 of a job, between fork and the job's
 * code: init's payload steps (the session, the capabilities, no_new_privs and the filter done
 * already when `confined`: pid 2 made ahead), then Python or execve. A failure before the job's
 * code runs is written to report (stage << 16 | errno); success closes it (at execve, or before
 * Python runs). */
__attribute__((noreturn)) static void job_payload(struct zygote *z, const struct exec_req *x,
                                                  const int *stdio, int report, enum job_kind kind,
                                                  bool confined)
{
    sigset_t none;
    struct stat st;
    int stage, failure;

    handlers_restore(); /* the interpreter's own (SIGINT's KeyboardInterrupt, say) */
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (!confined) {
        setsid();
        prctl(PR_SET_PDEATHSIG, 0);
    }
    stage = sandbox__payload_io(x, stdio);
    if (!stage && kind == JOB_PY_FILE && (stat(x->argv[1], &st) < 0 || !S_ISREG(st.st_mode)))
        kind = JOB_EXECVE; /* python3's own message for a missing file or a directory */
    if (!stage) {
        prctl(PR_SET_DUMPABLE, 1); /* as after an execve: its /proc files are its own */
        stage = sandbox__payload_confine(&z->filter, confined);
    }
    if (!stage && kind == JOB_EXECVE) {
        sandbox__payload_execve(x);
        stage = 8;
    }
    if (stage) {
        failure = stage << 16 | (errno & 0xffff);
        if (write(report, &failure, sizeof(failure)) < 0)
            _exit(127);
        _exit(127);
    }
    syscall(SYS_close_range, 3, ~0U, 0); /* report included: the start is reported */
    /* The faults' default actions, as in a fresh python3 (a sanitized zygote has handlers) */
    signal(SIGSEGV, SIG_DFL);
    signal(SIGBUS, SIG_DFL);
    signal(SIGFPE, SIG_DFL);
    signal(SIGILL, SIG_DFL);
    run_python(z, x, kind);
}

/* ---- a job's pid 2, made ahead ----
 *
 * Once the job is set up, before it reports READY, pid 1 forks pid 2 ahead of the exec: a copy
 * of the interpreter that takes a session of its own, drops every capability, sets
 * no_new_privs and loads the seccomp filter (which the kernel compiles for each process that
 * loads one), takes the interpreter's after-fork steps, keeps only its two descriptors to
 * pid 1, and waits. The exec then costs pid 1 a message to it carrying the request's
 * descriptors, instead of a fork of the interpreter, a filter's compilation and the after-fork
 * steps on the request's path. It runs no code of the job's before the request:
 * it is confined already, as a payload is before its first instruction (the order init's
 * process made ahead has too, sandbox_init.c). It is forked after the job's cgroup is joined
 * and its mounts made, so it is accounted to the job and sees its scratch (files put later are
 * in the same mount namespace); it is the job's only process besides pid 1 until the exec.
 * When it cannot be made, or dies waiting, the exec forks pid 2 as before. */
struct prejob {
    pid_t pid;  /* 0: none */
    int go;     /* pid 1's end of the socketpair: the exec request's descriptors go there */
    int report; /* the read end of its start report pipe (as job_exec's) */
};

static void prejob_close(struct prejob *pre)
{
    if (pre->go >= 0)
        close(pre->go);
    if (pre->report >= 0)
        close(pre->report);
    *pre = (struct prejob){.pid = 0, .go = -1, .report = -1};
}

/* prejob_main(z, go, report) — pid 2 made ahead: confined, then waiting on go for the exec's
 * four descriptors (the request, stdin, stdout, stderr); reports its confinement on go first
 * (0, or stage << 16 | errno). */
__attribute__((noreturn)) static void prejob_main(struct zygote *z, int go, int report)
{
    int lo = go < report ? go : report, hi = go < report ? report : go;
    int fds[4], nfds = 4, stage, failure;
    struct exec_req x;
    struct ctl_msg m;

    /* only its two descriptors to pid 1: pid 1's control socket, signalfd and the rest are
     * pid 1's alone */
    syscall(SYS_close_range, 3, (unsigned)lo - 1, 0);
    syscall(SYS_close_range, (unsigned)lo + 1, (unsigned)hi - 1, 0);
    syscall(SYS_close_range, (unsigned)hi + 1, ~0U, 0);
    setsid();
    stage = sandbox__payload_confine(&z->filter, false);
    failure = stage ? stage << 16 | (errno & 0xffff) : 0;
    if (!failure) { /* the pages a job writes copied (the after-fork steps' among them), and
                     * the interpreter's after-fork steps, before any request */
        prefault_apply(&z->prefault);
        z->py.after_fork_child();
        after_fork_done = true;
    }
    if (write(go, &failure, sizeof(failure)) != (ssize_t)sizeof(failure) || failure)
        _exit(127);
    memset(&x, 0, sizeof(x));
    if (sandbox__ctl_recv(go, &m, fds, &nfds) < 0 || m.type != CTL_EXEC || nfds != 4 ||
        sandbox__parse_spec(fds[0], &x) < 0)
        _exit(127); /* pid 1 hung up (the job was dropped) or sent what it never sends */
    close(go);
    job_payload(z, &x, fds + 1, report, job_kind_of(z, &x), true);
}

/* prejob_make(z, pre) — pid 2 forked ahead and confined, or quietly none (pre->pid 0). */
static void prejob_make(struct zygote *z, struct prejob *pre)
{
    int sv[2], rep[2], failure = -1;
    pid_t pid;

    *pre = (struct prejob){.pid = 0, .go = -1, .report = -1};
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return;
    if (pipe2(rep, O_CLOEXEC) < 0) {
        close(sv[0]);
        close(sv[1]);
        return;
    }
    pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
    if (pid == 0)
        prejob_main(z, sv[1], rep[1]);
    close(sv[1]);
    close(rep[1]);
    *pre = (struct prejob){.pid = pid, .go = sv[0], .report = rep[0]};
    while (pid > 0 && read(pre->go, &failure, sizeof(failure)) < 0 && errno == EINTR)
        ;
    if (pid < 0 || failure != 0) {
        if (pid > 0) {
            kill(pid, SIGKILL);
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        }
        prejob_close(pre);
    }
}

/* prejob_take(pre, fds) — hands the exec's four descriptors to pid 2 made ahead; its pid, with
 * *report its start report's read end (the caller's from now), or 0 when there is none (or it
 * is gone: the exec forks pid 2 then). */
static pid_t prejob_take(struct prejob *pre, const int *fds, int *report)
{
    struct ctl_msg m;
    pid_t pid = pre->pid;

    if (pid <= 0)
        return 0;
    memset(&m, 0, sizeof(m));
    m.type = CTL_EXEC;
    if (sandbox__ctl_send(pre->go, &m, fds, 4) < 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        prejob_close(pre);
        return 0;
    }
    *report = pre->report;
    pre->report = -1;
    prejob_close(pre);
    return pid;
}

/* job_pid2_start(z, x, fds, pre, &failure, &why) — pid 2 for CTL_EXEC in a job whose pid 1 is
 * a copy of the zygote: pre's, when it was made ahead, else forked now (job_ops' start). */
static pid_t job_pid2_start(struct zygote *z, const struct exec_req *x, const int *fds,
                            struct prejob *pre, int *failure, const char **why)
{
    int rep[2], e;
    pid_t pid;

    if ((pid = prejob_take(pre, fds, &rep[0])) <= 0) {
        enum job_kind kind = job_kind_of(z, x);
        if (pipe2(rep, O_CLOEXEC) < 0) {
            *why = "cannot create the start report pipe";
            return -errno;
        }
        pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
        if (pid == 0) {
            close(rep[0]);
            job_payload(z, x, fds + 1, rep[1], kind, false);
        }
        e = errno;
        close(rep[1]);
        if (pid < 0) {
            close(rep[0]);
            *why = "cannot start the payload";
            return -e;
        }
    }
    while (read(rep[0], failure, sizeof(*failure)) < 0 && errno == EINTR)
        ;
    close(rep[0]);
    return pid;
}

/* job_mounts(disk_mb) — in the job's new mount namespace: nothing propagates out, a fresh
 * scratch tmpfs (one --disk for both) whose "work" and "tmp" are over /work and /tmp (rootfs.c's
 * sizes and modes), a fresh /proc of the job's pid namespace. 0 or -errno. */
static int job_mounts(uint64_t disk_mb)
{
    char size[32], inodes[32];
    int fs, s = -1, p, r = 0;

    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return -errno;
    snprintf(size, sizeof(size), "%llum", (unsigned long long)disk_mb);
    snprintf(inodes, sizeof(inodes), "%llu", (unsigned long long)(disk_mb * 256 + 64));
    fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0)
        return -errno;
    if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
        syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0 ||
        syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
        syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
        (s = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) <
            0)
        r = -errno;
    close(fs);
    if (r == 0 && (mkdirat(s, "work", 0755) < 0 || mkdirat(s, "tmp", 01777) < 0 ||
                   fchmodat(s, "tmp", 01777, 0) < 0))
        r = -errno;
    /* The scratch's root attached at /work, its "tmp" bound over /tmp and its "work" over /work,
     * on top of the root, which stays hidden under it. Not bound from the scratch while it is
     * still detached: closing a mount that was never attached unmounts it, and the kernel then
     * waits out an expedited RCU grace period in the job's pid 1, interrupting every other CPU
     * (measured: 1.4% of MBPP eval's time). */
    if (r == 0 && syscall(SYS_move_mount, s, "", AT_FDCWD, "/work", MOVE_MOUNT_F_EMPTY_PATH) < 0)
        r = -errno;
    if (r == 0)
        r = rootfs__bind_at(AT_FDCWD, "/work/tmp", AT_FDCWD, "/tmp", false, 0);
    if (r == 0)
        r = rootfs__bind_at(AT_FDCWD, "/work/work", AT_FDCWD, "/work", false, 0);
    if (s >= 0)
        close(s);
    if (r < 0)
        return r;
    fs = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
    if (fs < 0)
        return -errno;
    p = -1;
    if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
        (p = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                          MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) < 0 ||
        syscall(SYS_move_mount, p, "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH) < 0)
        r = -errno;
    if (p >= 0)
        close(p);
    close(fs);
    return r;
}

/* What a job's pid 1 starts from: the CTL_JOB request's descriptors and sizes, the zygote's
 * signal mask (the zygote blocks every signal around the fork), and where pid 2's stack goes
 * when pid 1 shares the zygote's memory (job_start). */
struct job_args {
    struct zygote *z;
    int ctl;
    const int *attach;
    int nattach;
    uint64_t disk_mb;
    bool loopback;
    sigset_t mask;
    uintptr_t pid2_stack;
};

/* job_prepare(a, keep) — the job's pid 1, first steps in its new namespaces: the zygote's
 * handlers set aside, the cgroup joined and a cgroup namespace rooted there, only the control
 * socket kept (as fd 3; and keep, when not -1), the scratch and /proc mounted, loopback up,
 * SIGCHLD blocked for a signalfd. Exits with the reason sent on ctl when a step fails. */
static void job_prepare(const struct job_args *a, int keep)
{
    sigset_t mask = a->mask;
    int ctl = a->ctl, r;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NAME, "crucible-job");
    handlers_set_aside();
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    for (int i = 0; i < a->nattach; i++)
        if (write(a->attach[i], "0", 1) != 1) {
            sandbox__reply(ctl, CTL_FAILED, errno, "cannot join the job's cgroup");
            _exit(1);
        }
    if (dup2(ctl, 3) < 0)
        _exit(1);
    ctl = 3;
    if (keep > 3) { /* the zygote's socket was 3 */
        syscall(SYS_close_range, 4, (unsigned)keep - 1, 0);
        syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0);
    } else {
        syscall(SYS_close_range, 4, ~0U, 0);
    }
    if (a->nattach > 0 && unshare(CLONE_NEWCGROUP) < 0) {
        sandbox__reply(ctl, CTL_FAILED, errno, "cannot create the job's cgroup namespace");
        _exit(1);
    }
    if ((r = job_mounts(a->disk_mb)) < 0) {
        sandbox__reply(ctl, CTL_FAILED, -r, "cannot mount the job's scratch and /proc");
        _exit(1);
    }
    if (a->loopback && (r = sandbox__loopback_up()) < 0) {
        sandbox__reply(ctl, CTL_FAILED, -r, "cannot bring up the loopback interface");
        _exit(1);
    }
    prctl(PR_SET_DUMPABLE, 0);
}

/* The zygote's copy of the interpreter as the job's pid 1: job_ops (sandbox_int.h). */
struct job_state {
    struct zygote *z;
    struct prejob pre;
};

static pid_t job_start_op(void *ctx, const struct exec_req *x, const int *fds, int *failure,
                          const char **why)
{
    struct job_state *st = ctx;
    return job_pid2_start(st->z, x, fds, &st->pre, failure, why);
}

static void job_reaped_op(void *ctx, pid_t pid)
{
    struct job_state *st = ctx;
    if (st->pre.pid && pid == st->pre.pid)
        prejob_close(&st->pre); /* died waiting: the exec forks pid 2 itself */
}

/* job_main(a) — the job's pid 1 as a copy of the zygote (a fork: no small init embedded, see
 * job_start), in the job's new namespaces. Never returns. */
__attribute__((noreturn)) static void job_main(const struct job_args *a)
{
    struct job_state st = {.z = a->z};
    struct job_ops ops = {.start = job_start_op, .reaped = job_reaped_op, .ctx = &st};
    sigset_t chld;
    int sfd;

    job_prepare(a, -1);
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        sandbox__reply(3, CTL_FAILED, errno, "cannot create a signalfd in the job");
        _exit(1);
    }
    prejob_make(a->z, &st.pre);
    sandbox__reply(3, CTL_READY, 0, NULL);
    sandbox__job_serve(3, sfd, &ops);
}

/* ---- a job's small init ----
 *
 * A job's pid 1 as a copy of the zygote costs the kernel a copy of the zygote's page tables at
 * its fork and their teardown at its end (measured: 0.2-0.45 ms a job, about 6% of MBPP eval's
 * CPU), for a process that forks pid 2 and then only answers requests and reaps. So, when
 * crucible carries the small init (jobinit.c, a static program), the zygote forks pid 1 sharing
 * its memory (CLONE_VM | CLONE_VFORK, on a stack of its own: the zygote waits until pid 1
 * execs), pid 1 takes the same steps (job_prepare), forks pid 2 ahead as a copy of the zygote,
 * and execs the small init from a sealed memfd with its three descriptors: the control socket
 * (3), pid 2's go socket (4) and the read end of pid 2's start report (5). The small init
 * answers as job_main does; what it cannot do is fork pid 2 anew, so a pid 2 that is gone
 * before the exec request fails the exec (crucible's error, not the job's).
 *
 * Pid 2 runs on the zygote's main stack below the zygote's frames (which it never returns
 * into), as it does when forked by a copy of the zygote: the interpreter keeps the main
 * thread's stack, which grows as a fresh python3's does. */
#define JOB_STACK_SIZE (256 << 10)
#define FD_HIGH        20 /* the memfd, and pid 1's descriptors while it arranges them, from here */

/* What pid 2 is forked with: the zygote, and its ends of the go socket and report pipe. */
struct prejob_pass {
    struct zygote *z;
    int go, report;
};

static int prejob_entry(void *arg)
{
    const struct prejob_pass *p = arg;
    prejob_main(p->z, p->go, p->report);
}

/* fd_high(fd) — fd moved to FD_HIGH or above (FD_CLOEXEC), out of the way of the numbers pid 1
 * hands the small init; -1 when it cannot be. */
static int fd_high(int fd)
{
    int h = fcntl(fd, F_DUPFD_CLOEXEC, FD_HIGH);
    close(fd);
    return h;
}

/* job_start(arg) — the job's pid 1 while it shares the zygote's memory (arg: struct job_args).
 * Writes nothing of the zygote's but its own stack, errno, and the handlers set aside. */
static int job_start(void *arg)
{
    const struct job_args *a = arg;
    struct zygote *z = a->z;
    char pidstr[16], *argv[] = {(char *)"crucible-job", pidstr, NULL}, *envp[] = {NULL};
    int sv[2], rep[2];
    struct prejob_pass pass;
    pid_t pid;

    job_prepare(a, z->init_fd);
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
        pipe2(rep, O_CLOEXEC) < 0) {
        sandbox__reply(3, CTL_FAILED, errno, "cannot create the job's descriptors");
        _exit(1);
    }
    pass = (struct prejob_pass){.z = z, .go = sv[1], .report = rep[1]};
    pid = clone(prejob_entry, (void *)a->pid2_stack, SIGCHLD, &pass);
    if (pid < 0) {
        sandbox__reply(3, CTL_FAILED, errno, "cannot fork the job's process");
        _exit(1);
    }
    close(sv[1]);
    close(rep[1]);
    if ((sv[0] = fd_high(sv[0])) < 0 || (rep[0] = fd_high(rep[0])) < 0 || dup2(sv[0], 4) < 0 ||
        dup2(rep[0], 5) < 0) {
        sandbox__reply(3, CTL_FAILED, errno, "cannot arrange the job's descriptors");
        _exit(1);
    }
    snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
    syscall(SYS_execveat, z->init_fd, "", argv, envp, AT_EMPTY_PATH);
    sandbox__reply(3, CTL_FAILED, errno, "cannot start the job's init");
    _exit(1); /* pid 2 goes with the namespace */
}

/* jobinit_load() — the small init in a sealed memfd at FD_HIGH or above, once it has
 * shown it runs here (a memfd may be refused execution: vm.memfd_noexec); -1 when crucible was
 * built without it or it cannot run (jobs' pid 1 is then a copy of the zygote). */
static int jobinit_load(void)
{
#if JOBINIT_EMBEDDED
    char *argv[] = {(char *)"crucible-job", (char *)"--probe", NULL}, *envp[] = {NULL};
    int fd, status = 0;
    pid_t pid;

    fd = memfd_create("crucible-job-init", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
    if (fd < 0 && errno == EINVAL) /* a kernel before 6.3 knows no MFD_EXEC */
        fd = memfd_create("crucible-job-init", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    if (util_write_all(fd, jobinit_image, sizeof(jobinit_image)) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
        (fd = fd_high(fd)) < 0) {
        close(fd);
        return -1;
    }
    pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
    if (pid == 0) {
        syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
        _exit(127);
    }
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        close(fd);
        return -1;
    }
    return fd;
#else
    return -1;
#endif
}

/* zygote_job(z, m, fds, nfds) — CTL_JOB: forks the job into its namespaces. A job without
 * loopback is given a network namespace of the pool (netns_pool.h: one a finished job left
 * unchanged, or a new one the pool keeps); a loopback job always a new one of its own. */
static void zygote_job(struct zygote *z, const struct ctl_msg *m, const int *fds, int nfds)
{
    struct job_args a;
    sigset_t all;
    int kept, e, flags;
    pid_t pid;

    if (nfds < 1)
        return;
    a = (struct job_args){.z = z,
                          .ctl = fds[0],
                          .attach = fds + 1,
                          .nattach = nfds - 1,
                          .disk_mb = (uint64_t)m->status,
                          .loopback = (m->mode & CTL_JOB_LOOPBACK) != 0,
                          /* pid 2's stack top: below this frame and clone's */
                          .pid2_stack = ((uintptr_t)&a - 16384) & ~(uintptr_t)63};
    kept = a.loopback ? -1 : netns_pool_enter(&z->netns);
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
            (kept >= 0 ? 0 : CLONE_NEWNET) | SIGCHLD;
    /* no signal reaches pid 1 before it has set the zygote's handlers aside */
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &a.mask);
    z->py.before_fork();
    if (z->init_fd >= 0) {
        pid = clone(job_start, z->job_stack + JOB_STACK_SIZE, CLONE_VM | CLONE_VFORK | flags, &a);
    } else {
        pid = (pid_t)syscall(SYS_clone, flags, 0, NULL, NULL, 0);
        if (pid == 0)
            job_main(&a);
    }
    e = errno;
    sigprocmask(SIG_SETMASK, &a.mask, NULL);
    if (kept >= 0)
        netns_pool_leave(&z->netns);
    z->py.after_fork_parent();
    if (kept >= 0)
        netns_pool_track(&z->netns, pid, kept);
    if (pid < 0)
        sandbox__reply(fds[0], CTL_FAILED, e, "cannot fork the job");
}

/* ---- the pages a job writes, learned before the first job (prefault.h) ----
 *
 * A trial fork of the zygote runs each preloaded module's warm-up (or `pass`) as a job's
 * `python3 -c` runs (run_python), except that os._exit, and the end, stop it instead of ending
 * it: stopped, its page map shows which of the zygote's pages it copied, and every job's pid 2
 * then copies those ahead in a few hundred system calls instead of a few hundred faults. The
 * trial runs the caller's code only, never a job's, unconfined as the zygote is. One that does
 * not stop within TRIAL_WAIT_MS is killed and teaches nothing; nor does a kernel without
 * MADV_POPULATE_WRITE (each job's copying is then a quiet no-op). */
#define TRIAL_WAIT_MS 2000
/* SIGSTOP's number is put in by the C side: importing `signal` for it would make the trial
 * copy the pages of an import no job makes (165 of the 523 a `pass` trial learned). */
static const char trial_prologue[] = "import os as _o\n"
                                     "_o._exit = lambda s, k=_o.kill, p=_o.getpid(): k(p, %d)\n"
                                     "del _o\n";

__attribute__((noreturn)) static void trial_main(struct zygote *z, const char *warmup)
{
    size_t len = strlen(trial_prologue) + 8 + strlen(warmup) + 1;
    char *code = malloc(len), *argv[4] = {(char *)PYTHON_EXE, (char *)"-c", code, NULL};
    struct exec_req x;
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);

    if (!code || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
        _exit(127);
    snprintf(code, len, trial_prologue, SIGSTOP);
    snprintf(code + strlen(code), len - strlen(code), "%s", warmup);
    prctl(PR_SET_DUMPABLE, 1); /* its page map readable by the zygote */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    z->py.after_fork_child();
    after_fork_done = true;
    in_trial = true;
    memset(&x, 0, sizeof(x));
    x.spec.argc = 3;
    x.argv = argv;
    x.envp = z->env;
    run_python(z, &x, JOB_PY_COMMAND);
}

static void learn_from(struct zygote *z, const char *warmup)
{
    struct errbuf err = {{0}};
    int status = 0;
    pid_t pid, got = 0;

    z->py.before_fork();
    pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0); /* as a job's pid 2 is forked */
    if (pid == 0)
        trial_main(z, warmup);
    z->py.after_fork_parent();
    if (pid < 0)
        return;
    for (int ms = 0; ms < TRIAL_WAIT_MS; ms++) {
        got = waitpid(pid, &status, WUNTRACED | WNOHANG);
        if (got != 0 || usleep(1000) < 0)
            break;
    }
    if (got == pid && WIFSTOPPED(status))
        (void)prefault_learn(&z->prefault, pid, &err); /* nothing learned: nothing copied */
    kill(pid, SIGKILL);
    if (got != pid || WIFSTOPPED(status)) /* still to be reaped */
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
}

static void learn_job_pages(struct zygote *z)
{
    if (z->nwarmups == 0)
        learn_from(z, "pass\n");
    for (size_t i = 0; i < z->nwarmups; i++) {
        learn_from(z, z->warmups[i]);
        free(z->warmups[i]);
    }
    free(z->warmups);
    z->warmups = NULL;
    z->nwarmups = 0;
}

int forkserver_zygote_main(int argc, char **argv)
{
    struct zygote z;
    struct errbuf err = {{0}};
    sigset_t chld;
    int sfd, r;

    (void)argc;
    (void)argv;
    memset(&z, 0, sizeof(z));
    in_zygote = true;
    prctl(PR_SET_NAME, "crucible-zygote");
    prctl(PR_SET_DUMPABLE, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    z.env = environ;
    netns_pool_init(&z.netns);
    z.init_fd = jobinit_load();
    if (z.init_fd >= 0) { /* a guard page below pid 1's stack */
        z.job_stack = mmap(NULL, JOB_STACK_SIZE + 4096, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (z.job_stack == MAP_FAILED || mprotect(z.job_stack, 4096, PROT_NONE) < 0) {
            close(z.init_fd);
            z.init_fd = -1;
        } else {
            z.job_stack += 4096;
        }
    }
    if ((r = filter_build(&z.filter, &err)) < 0 || (r = py_load(&z.py, &err)) < 0) {
        sandbox__reply(3, CTL_FAILED, -r, err.msg);
        return 1;
    }
    z.py.set_program_name(L"" PYTHON_EXE);
    z.py.initialize_ex(1);
    if (z.py.run_string(preload, NULL) != 0 || z.py.run_string(job_setup, NULL) != 0 ||
        !(z.py.end = z.py.sys_get_object("_crucible_end"))) {
        sandbox__reply(3, CTL_FAILED, EINVAL, "cannot preload the zygote's modules");
        return 1;
    }
    z.py.inc_ref(z.py.end);
    if (z.py.sys_set_object("_crucible_end", NULL) != 0) {
        sandbox__reply(3, CTL_FAILED, EINVAL, "cannot set up the zygote");
        return 1;
    }
    if ((r = preload_modules(&z, &err)) < 0) {
        sandbox__reply(3, CTL_FAILED, -r, err.msg);
        return 1;
    }
    /* The heap's free memory given back before the first fork: the imports leave about a fifth
     * of the zygote's anonymous memory free but resident (2 of 9.8 MiB measured), which every
     * fork would map and every exit unmap, and a job's first allocations there copy. */
    malloc_trim(0);
    learn_job_pages(&z);
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, NULL);
    sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        sandbox__reply(3, CTL_FAILED, errno, "cannot create a signalfd in the zygote");
        return 1;
    }
    {
        struct ctl_msg ready;
        memset(&ready, 0, sizeof(ready));
        ready.type = CTL_READY;
        ready.status = (int32_t)z.prefault.npages; /* forkserver_prefault_pages */
        ready.mode = z.init_fd >= 0 ? CTL_ZYGOTE_SMALL_INIT : 0;
        (void)sandbox__ctl_send(3, &ready, NULL, 0);
    }
    for (;;) {
        struct pollfd pf[2] = {{.fd = 3, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
        struct ctl_msg m;
        int fds[CTL_MAX_FDS], nfds = CTL_MAX_FDS;

        if (poll(pf, 2, -1) < 0 && errno != EINTR)
            _exit(1);
        if (pf[1].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) > 0)
                ;
            pid_t pid;
            while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
                netns_pool_ended(&z.netns, pid);
        }
        if (!pf[0].revents)
            continue;
        if (sandbox__ctl_recv(3, &m, fds, &nfds) < 0)
            _exit(0); /* the supervisor hung up */
        if (m.type == CTL_JOB)
            zygote_job(&z, &m, fds, nfds);
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
    }
}
