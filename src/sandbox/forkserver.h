/*
 * forkserver.h — a Python fork server inside a sandbox: an interpreter started once, with the
 * common standard library imported, that forks one job per run.
 *
 * The zygote is a fresh exec of crucible's own binary (never a copy of the supervisor's
 * memory, which may hold other tasks' hidden tests), started by the init of a sandbox made
 * for it, in the hidden mode FORKSERVER_ZYGOTE_ARG. It loads libpython from the sandbox's root
 * with dlopen, initialises it as a plain /usr/bin/python3 would be, imports the common modules,
 * then waits for jobs. Each job is a fork of it into fresh mount, pid, ipc, uts and network
 * namespaces, its own cgroup (made by the supervisor), a fresh scratch tmpfs over /work and
 * /tmp and a fresh /proc; its pid 1 is a small reaper that answers the supervisor as a
 * sandbox's init does (files in, one exec, files out), so the verdict is sandbox_exec's own.
 * The exec's process (pid 2) is confined as a cold payload (rlimits, every capability dropped,
 * no_new_privs, the seccomp policy) and then runs `python3 -c CODE ARGS` or `python3 FILE
 * ARGS` in the forked interpreter; any other argv, or an environment whose PYTHON*, LANG or
 * LC_* entries differ from the zygote's, is an execve as on the cold path.
 *
 * Known differences from a fresh interpreter: sys.modules holds the preloaded modules; the
 * str hash secret is the zygote's (the sandbox fixes PYTHONHASHSEED=0 anyway); memory peaks
 * count only the pages a job touches and those copied ahead for it (the interpreter's own are
 * the zygote's; prefault.h: about 3 MiB with the assert harness), so a job's memory_kb is smaller
 * than the cold path's and its memory limit slightly more lenient; /proc/self/exe and
 * /proc/self/cmdline are the zygote's (crucible's binary, "__zygote"); a job ends without the
 * teardown of every module (zygote.c: finalizers of objects held outside __main__ do not run, as
 * after os._exit), except through SystemExit, which ends as python3's does. A stdin pipe
 * (interactive) reaches the job through an object made for a seekable file. The jobs of one fork
 * server share its sandbox's host uid: they are kept apart by their namespaces, cgroups and
 * seccomp, not by ids.
 *
 * Threading: forkserver_run may be called from several threads at once on one fork server
 * (the request to the zygote is sent under a lock; each job has its own socket and cgroup).
 * Jobs made ahead (forkserver_set_spares) are made by a thread of the fork server's own.
 */
#ifndef CRUCIBLE_FORKSERVER_H
#define CRUCIBLE_FORKSERVER_H

#include "sandbox/sandbox.h"

/* argv[1] of the zygote's exec: a program that links the sandbox and may be a fork server's
 * supervisor must call forkserver_zygote_main first thing when it sees it. */
#define FORKSERVER_ZYGOTE_ARG "__zygote"

struct forkserver;

/* A module the zygote imports once, from its source, before the first job: what a caller's
 * every job imports (the assert harness, say), so that no job reads, unmarshals or runs it
 * again. It is in sys.modules under name, its __file__ and its code's file name are filename
 * (the path where a job finds its copy, so tracebacks and linecache read the same file), and
 * it has no __spec__ or __loader__ (a module made from source, not by the import system).
 * Only a caller whose jobs would import that very file should preload it: a job's import
 * of name gets the preloaded module, whatever file the job holds. */
struct forkserver_module {
    const char *name;
    const char *filename;
    const char *source; /* Python source text (it can hold no NUL) */
    /* NULL, or Python code that uses the module as a typical job does (no job's code: the
     * caller's own). The zygote runs it once, as a job's `python3 -c` would run, in a trial
     * fork that ends at its os._exit or its end, to learn which of its pages a job writes;
     * every job then copies those ahead (prefault.h). Without one, the trial runs `pass`. */
    const char *warmup;
};

/* forkserver_start(rt, img, preload, npreload, err) — a sandbox of img (read-only root; rt and
 * img must outlive it) with a Python zygote ready in it, the npreload modules of preload
 * imported (NULL, 0: none). NULL with err set (no libpython in the image, say; ENOTSUP: no
 * cgroups, which a job's teardown needs; a preloaded module that fails to import). */
struct forkserver *forkserver_start(const struct sandbox_runtime *rt, const struct image *img,
                                    const struct forkserver_module *preload, size_t npreload,
                                    struct errbuf *err);

/* forkserver_run(fs, limits, files, nfiles, proc, res) — one job: as sandbox_run (res
 * result_init'ed by the caller and filled the same way, path "fork_server"), in a job forked
 * from the zygote. limits->writable_root is refused (sandbox_error). 0, or -EINVAL for misuse
 * as sandbox_exec. */
int forkserver_run(struct forkserver *fs, const struct sandbox_limits *limits,
                   const struct sandbox_file *files, size_t nfiles, const struct sandbox_proc *proc,
                   struct result *res);

/* forkserver_job(fs, limits, err) — a job forked by the zygote, ready for the sandbox API:
 * sandbox_put_file, one sandbox_exec (SANDBOX_EXEC_LAST), sandbox_get_file, then
 * sandbox_destroy or sandbox_discard (the caller's; discarded, the job is torn down by the
 * thread that makes spares, when there is one, off the caller's path). For callers that drive
 * sandboxes themselves (verify); forkserver_run is this plus the files, the exec and the
 * destroy. NULL with err set. */
struct sandbox *forkserver_job(struct forkserver *fs, const struct sandbox_limits *limits,
                               struct errbuf *err);

/* forkserver_set_spares(fs, n) — keeps up to n jobs (at most FORKSERVER_SPARES_MAX) made
 * ahead by a thread of its own, for the scratch size and network of the last job asked for:
 * forkserver_job and forkserver_run then take a ready one instead of waiting for it to be
 * made (its memory and pids limits are set then). 0 (the default): every job is made when
 * asked for; spares beyond a smaller n are destroyed. Thread-safe. 0, or -errno with err
 * (may be NULL) set: the thread could not start; jobs are then made when asked for. */
#define FORKSERVER_SPARES_MAX 8
int forkserver_set_spares(struct forkserver *fs, unsigned n, struct errbuf *err);

struct forkserver_spare_stats {
    unsigned ready;               /* spares waiting now */
    uint64_t made, taken, failed; /* made ahead, used, could not be made */
};
void forkserver_spare_stats(struct forkserver *fs, struct forkserver_spare_stats *st);

/* forkserver_prefault_pages(fs) — how many of the zygote's pages each job copies ahead: what
 * its trial of the warm-ups learned (prefault.h); 0 where nothing could be learned. */
unsigned forkserver_prefault_pages(const struct forkserver *fs);

/* forkserver_small_init(fs) — whether its jobs' pid 1 is the small init (a static program that
 * holds none of the interpreter's memory: zygote.c, "a job's small init"), not a copy of the
 * zygote: false when crucible was built without musl-gcc or the kernel will not run it. */
bool forkserver_small_init(const struct forkserver *fs);

/* forkserver_image(fs) — the image its sandbox and jobs run. */
const struct image *forkserver_image(const struct forkserver *fs);

/* forkserver_stop(fs) — ends the zygote and its sandbox; NULL is a no-op. */
void forkserver_stop(struct forkserver *fs);

/* forkserver_zygote_main(argc, argv) — the zygote's whole life (fd 3 its control socket);
 * returns only its exit status. */
int forkserver_zygote_main(int argc, char **argv);

#endif
