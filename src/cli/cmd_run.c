/*
 * cmd_run.c — `crucible run [OPTIONS] -- PROGRAM [ARG...]`.
 *
 * Parses and validates every option before any sandbox exists (a bad option is a
 * one-line error and exit 2), then runs the program once and prints either its output
 * (stdout to stdout, stderr to stderr, a one-line verdict on stderr when it did not end
 * ok) or, with --json, the result record. The exit status is the verdict (0/1/2), or with
 * --exit-status=program the program's own, in the convention of timeout(1) and docker run
 * (exit_statuses below).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/keep.h"
#include "sandbox/forkserver.h"
#include "sandbox/result.h"
#include "sandbox/sandbox.h"

#define MAX_FILES 256
#define MAX_ENV   256

static void run_usage(FILE *f)
{
    const struct sandbox_limit_range *r = sandbox_limit_ranges;

    fprintf(
        f,
        "usage: crucible run [OPTIONS] -- PROGRAM [ARG...]\n\n"
        "Runs PROGRAM once in a fresh sandbox (own namespaces, cgroup, seccomp policy,\n"
        "read-only image, private /tmp and work directory /work, no network).\n\n"
        "options:\n"
        "  --image NAME         'host' (default) or an absolute path to a root filesystem\n"
        "  --cpu-time S         CPU seconds for the whole process tree (%.10g..%.10g, default "
        "%.10g)\n"
        "  --wall-time S        wall-clock seconds (%.10g..%.10g, default %.10g)\n"
        "  --memory MB          memory of the whole process tree (%.10g..%.10g, default %.10g)\n"
        "  --pids N             processes and threads (%.10g..%.10g, default %.10g)\n"
        "  --output KB          output kept per stream; more ends the run (%.10g..%.10g, default "
        "%.10g)\n"
        "  --disk MB            scratch space for /tmp and /work (%.10g..%.10g, default %.10g)\n"
        "  --stdin FILE         feed FILE on standard input (default: empty)\n"
        "  --file DEST=SRC      copy host file SRC to /work/DEST (mode bits kept)\n"
        "  --env K=V            add K=V to the sandbox's environment\n"
        "  --network none|loopback   no network (default), or a private loopback only\n"
        "  --writable-root      the image's directories are writable (a private overlay in the\n"
        "                       scratch space: writes count against --disk, the image stays)\n"
        "  --json               print the result record as JSON on stdout\n"
        "  --exit-status MODE   'verdict' (default) or 'program': see below\n"
        "  --check              print which limits this host lets crucible enforce\n"
        "  --fork-server        run as a job forked from a Python zygote started in a sandbox\n"
        "                       for this run (experimental; the record says \"path\":\n"
        "                       \"fork_server\"; python3 -c/FILE runs in the forked interpreter)\n"
        "  --cold               make this run's sandbox now even when `crucible keep` runs\n"
        "                       (default: a keeper's ready sandbox when its image, --disk,\n"
        "                       --network and --writable-root are this run's; same record)\n"
        "  -h, --help           this text\n\n"
        "exit status (--exit-status=verdict): 0 the program exited 0; 1 it failed or hit a\n"
        "limit; 2 crucible failed or the command line is wrong.\n"
        "--exit-status=program (as timeout(1) and docker run): the program's own exit status;\n"
        "128+N killed by signal N; 124 the CPU or wall-time limit; 137 the memory limit\n"
        "(killed, as docker's OOM kill); 153 the output limit (128+SIGXFSZ); 126 PROGRAM\n"
        "cannot be executed, 127 not found; 125 crucible failed or the command line is wrong.\n"
        "A program that runs out of --pids sees its fork fail and exits as it chooses.\n",
        r[LIM_CPU].min, r[LIM_CPU].max, r[LIM_CPU].def, r[LIM_WALL].min, r[LIM_WALL].max,
        r[LIM_WALL].def, r[LIM_MEMORY].min, r[LIM_MEMORY].max, r[LIM_MEMORY].def, r[LIM_PIDS].min,
        r[LIM_PIDS].max, r[LIM_PIDS].def, r[LIM_OUTPUT].min, r[LIM_OUTPUT].max, r[LIM_OUTPUT].def,
        r[LIM_DISK].min, r[LIM_DISK].max, r[LIM_DISK].def);
}

static int usage_error(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "crucible run: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    return 2;
}

/* parse_limit(id, arg, out) — one numeric option against its range. */
static bool parse_limit(enum sandbox_limit_id id, const char *arg, double *out)
{
    const struct sandbox_limit_range *r = &sandbox_limit_ranges[id];
    uint64_t u;

    if (id == LIM_CPU || id == LIM_WALL)
        return util_parse_double(arg, r->min, r->max, out);
    if (!util_parse_u64(arg, (uint64_t)r->min, (uint64_t)r->max, &u))
        return false;
    *out = (double)u;
    return true;
}

/* What the exit status says: the verdict (0 ok, 1 failed, 2 crucible), or the program's. */
enum exit_mode { EXIT_VERDICT, EXIT_PROGRAM };

/* The exit statuses of --exit-status=program for what is not the program's own status:
 * timeout(1)'s 124 and 125, the shell's 126 and 127, docker's 137 for an OOM kill. */
enum {
    EXIT_TIMEOUT = 124,  /* the CPU or wall-time limit (timeout(1)) */
    EXIT_CRUCIBLE = 125, /* crucible failed, or its command line is wrong */
    EXIT_NOT_EXECUTABLE = 126,
    EXIT_NOT_FOUND = 127,
    EXIT_SIGNAL_BASE = 128,      /* + the signal that killed the program */
    EXIT_MEMORY = 128 + SIGKILL, /* 137: the memory limit's kill, as docker reports OOM */
    EXIT_OUTPUT = 128 + SIGXFSZ, /* 153: the output limit, the signal of a file size limit */
};

struct run_opts {
    const char *image;
    struct sandbox_limits limits;
    const char *stdin_path;
    struct sandbox_file files[MAX_FILES];
    size_t sizes[MAX_FILES]; /* of the files, when opened */
    size_t nfiles;
    char *env[MAX_ENV + 1];
    size_t nenv;
    bool json, check;
    bool fork_server; /* run as a job of a Python fork server (forkserver.h) */
    bool cold;        /* never through a keeper (keep.h) */
    enum exit_mode exit_mode;
};

static void close_files(struct run_opts *o)
{
    for (size_t i = 0; i < o->nfiles; i++)
        close(o->files[i].fd);
}

static int add_file(struct run_opts *o, char *spec)
{
    struct errbuf err = {{0}};
    struct stat st;
    char *eq = strchr(spec, '=');
    int fd;

    if (!eq || eq == spec || !eq[1])
        return usage_error("--file wants DEST=SRC, got '%s'%s", spec, "");
    if (o->nfiles == MAX_FILES)
        return usage_error("too many --file options (at most %s)%s", "256", "");
    *eq = '\0';
    if (!sandbox_dest_valid(spec, &err))
        return usage_error("--file: %s%s", err.msg, "");
    fd = open(eq + 1, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fprintf(stderr, "crucible run: --file: cannot open '%s': %s\n", eq + 1,
                       strerror(errno)),
               2;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return usage_error("--file: '%s' is not a regular file%s", eq + 1, "");
    }
    o->sizes[o->nfiles] = (size_t)st.st_size;
    o->files[o->nfiles++] =
        (struct sandbox_file){.dest = spec, .fd = fd, .mode = st.st_mode & 07777};
    return 0;
}

/* check_fits(o, prog_argv) — what the kernel would refuse is the command line's mistake, said
 * before any sandbox exists: --file destinations that cannot all exist (the same twice, a
 * file where another needs a directory), and a program line or environment execve would
 * not take (E2BIG). 0 or 2. */
static int check_fits(const struct run_opts *o, char *const *prog_argv)
{
    struct sandbox_dest dests[MAX_FILES];
    struct errbuf err = {{0}};

    for (size_t i = 0; i < o->nfiles; i++)
        dests[i] = (struct sandbox_dest){.path = o->files[i].dest, .len = o->sizes[i]};
    if (!sandbox_dests_check(dests, o->nfiles, o->limits.disk_mb, &err))
        return usage_error("--file: %s%s", err.msg, "");
    if (!sandbox_argv_fits(prog_argv, (char *const *)o->env, &err))
        return usage_error("%s%s", err.msg, "");
    return 0;
}

/* The options of `crucible run` (getopt_long with "+h": the first non-option is PROGRAM). */
enum {
    O_IMAGE = 256,
    O_STDIN,
    O_FILE,
    O_ENV,
    O_NETWORK,
    O_JSON,
    O_CHECK,
    O_EXIT_STATUS,
    O_FORK_SERVER,
    O_WRITABLE_ROOT,
    O_COLD,
    O_LIMIT = 300
};
static const struct option run_longopts[] = {
    {"image", required_argument, NULL, O_IMAGE},
    {"cpu-time", required_argument, NULL, O_LIMIT + LIM_CPU},
    {"wall-time", required_argument, NULL, O_LIMIT + LIM_WALL},
    {"memory", required_argument, NULL, O_LIMIT + LIM_MEMORY},
    {"pids", required_argument, NULL, O_LIMIT + LIM_PIDS},
    {"output", required_argument, NULL, O_LIMIT + LIM_OUTPUT},
    {"disk", required_argument, NULL, O_LIMIT + LIM_DISK},
    {"stdin", required_argument, NULL, O_STDIN},
    {"file", required_argument, NULL, O_FILE},
    {"env", required_argument, NULL, O_ENV},
    {"network", required_argument, NULL, O_NETWORK},
    {"json", no_argument, NULL, O_JSON},
    {"writable-root", no_argument, NULL, O_WRITABLE_ROOT},
    {"check", no_argument, NULL, O_CHECK},
    {"exit-status", required_argument, NULL, O_EXIT_STATUS},
    {"fork-server", no_argument, NULL, O_FORK_SERVER},
    {"cold", no_argument, NULL, O_COLD},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int parse(int argc, char **argv, struct run_opts *o, int *prog_index)
{
    bool wall_set = false;
    int c, r;

    o->image = "host";
    sandbox_limits_default(&o->limits);
    opterr = 0;
    optind = 1;
    /* '+': stop at the first non-option, so the program's own options are never ours. */
    while ((c = getopt_long(argc, argv, "+h", run_longopts, NULL)) != -1) {
        double v;
        switch (c) {
        case 'h':
            run_usage(stdout);
            return 1;
        case O_IMAGE:
            o->image = optarg;
            break;
        case O_STDIN:
            o->stdin_path = optarg;
            break;
        case O_FILE:
            if ((r = add_file(o, optarg)) != 0)
                return r;
            break;
        case O_ENV:
            if (!strchr(optarg, '=') || optarg[0] == '=')
                return usage_error("--env wants K=V, got '%s'%s", optarg, "");
            if (o->nenv == MAX_ENV)
                return usage_error("too many --env options (at most %s)%s", "256", "");
            o->env[o->nenv++] = optarg;
            break;
        case O_NETWORK:
            if (strcmp(optarg, "none") == 0)
                o->limits.loopback = false;
            else if (strcmp(optarg, "loopback") == 0)
                o->limits.loopback = true;
            else
                return usage_error("--network must be 'none' or 'loopback', not '%s'%s", optarg,
                                   "");
            break;
        case O_JSON:
            o->json = true;
            break;
        case O_COLD:
            o->cold = true;
            break;
        case O_WRITABLE_ROOT:
            o->limits.writable_root = true;
            break;
        case O_CHECK:
            o->check = true;
            break;
        case O_FORK_SERVER:
            o->fork_server = true;
            break;
        case O_EXIT_STATUS:
            if (strcmp(optarg, "verdict") == 0)
                o->exit_mode = EXIT_VERDICT;
            else if (strcmp(optarg, "program") == 0)
                o->exit_mode = EXIT_PROGRAM;
            else
                return usage_error("--exit-status must be 'verdict' or 'program', not '%s'%s",
                                   optarg, "");
            break;
        case '?':
            if (optopt)
                return usage_error("option '%s' needs an argument or is unknown%s",
                                   argv[optind - 1], "");
            return usage_error("unknown option '%s' (see 'crucible run --help')%s",
                               argv[optind - 1], "");
        default:
            if (c >= O_LIMIT && c < O_LIMIT + LIM_COUNT) {
                enum sandbox_limit_id id = (enum sandbox_limit_id)(c - O_LIMIT);
                const struct sandbox_limit_range *rg = &sandbox_limit_ranges[id];
                if (!parse_limit(id, optarg, &v)) {
                    fprintf(stderr,
                            "crucible run: --%s must be a %s from %.10g to %.10g, not '%s'\n",
                            rg->name, id == LIM_CPU || id == LIM_WALL ? "number" : "whole number",
                            rg->min, rg->max, optarg);
                    return 2;
                }
                switch (id) {
                case LIM_CPU:
                    o->limits.cpu_time = v;
                    break;
                case LIM_WALL:
                    o->limits.wall_time = v;
                    wall_set = true;
                    break;
                case LIM_MEMORY:
                    o->limits.memory_mb = (uint64_t)v;
                    break;
                case LIM_PIDS:
                    o->limits.pids = (uint64_t)v;
                    break;
                case LIM_OUTPUT:
                    o->limits.output_kb = (uint64_t)v;
                    break;
                case LIM_DISK:
                case LIM_COUNT:
                default:
                    o->limits.disk_mb = (uint64_t)v;
                    break;
                }
                break;
            }
            return usage_error("internal option error%s%s", "", "");
        }
    }
    /* Without an explicit wall limit, allow twice the CPU limit plus a second. */
    if (!wall_set && o->limits.cpu_time * 2 + 1 < o->limits.wall_time)
        o->limits.wall_time = o->limits.cpu_time * 2 + 1;
    if (o->check)
        return 0;
    if (optind < argc && strcmp(argv[optind - 1], "--") != 0 && argv[optind][0] == '-')
        return usage_error("unknown option '%s'%s", argv[optind], "");
    if (optind >= argc)
        return usage_error(
            "missing PROGRAM (usage: crucible run [OPTIONS] -- PROGRAM [ARG...])%s%s", "", "");
    if (!argv[optind][0])
        return usage_error("empty PROGRAM name%s%s", "", "");
    *prog_index = optind;
    return check_fits(o, argv + optind);
}

/* exit_mode_wanted(argc, argv) — the --exit-status the command line asks for, read by a
 * getopt pass of its own before parse, so that a usage error found before the option is
 * reached still exits as asked (125 for 'program'). The last one counts, as in parse. */
static enum exit_mode exit_mode_wanted(int argc, char **argv)
{
    enum exit_mode mode = EXIT_VERDICT;
    int c;

    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", run_longopts, NULL)) != -1)
        if (c == O_EXIT_STATUS)
            mode = strcmp(optarg, "program") == 0 ? EXIT_PROGRAM : EXIT_VERDICT;
    optind = 1;
    return mode;
}

/* program_status(res) — the exit status --exit-status=program gives for a run's record. */
static int program_status(const struct result *res)
{
    switch (res->status) {
    case RESULT_OK:
        return 0;
    case RESULT_RUNTIME_ERROR:
        if (res->exit_code == 127 && strncmp(res->message, "cannot execute", 14) == 0) {
            /* "cannot execute 'PROGRAM': strerror(errno)" (sandbox_init.c) */
            const char *colon = strrchr(res->message, ':');
            const char *why = colon && colon[1] == ' ' ? colon + 2 : "";
            bool found = strcmp(why, strerror(EACCES)) != 0 && strcmp(why, strerror(ENOEXEC)) != 0;
            return found ? EXIT_NOT_FOUND : EXIT_NOT_EXECUTABLE;
        }
        return res->exit_code >= 0 && res->exit_code <= 255 ? res->exit_code : EXIT_CRUCIBLE;
    case RESULT_SIGNALED:
        return EXIT_SIGNAL_BASE + res->signal;
    case RESULT_TIMEOUT:
        return EXIT_TIMEOUT;
    case RESULT_MEMORY_LIMIT:
        return EXIT_MEMORY;
    case RESULT_OUTPUT_LIMIT:
        return EXIT_OUTPUT;
    case RESULT_SANDBOX_ERROR:
    default:
        return EXIT_CRUCIBLE;
    }
}

static void print_text(const struct result *res)
{
    if (res->out.len)
        fwrite(res->out.data, 1, res->out.len, stdout);
    fflush(stdout);
    if (res->err.len)
        fwrite(res->err.data, 1, res->err.len, stderr);
    if (res->status != RESULT_OK) {
        fprintf(stderr, "crucible: %s", result_status_name(res->status));
        if (res->status == RESULT_RUNTIME_ERROR && res->exit_code >= 0)
            fprintf(stderr, " (exit code %d)", res->exit_code);
        if (res->status == RESULT_SIGNALED)
            fprintf(stderr, " (signal %d, %s)", res->signal, strsignal(res->signal));
        if (res->message[0])
            fprintf(stderr, ": %s", res->message);
        fprintf(stderr, "\n");
    }
}

/* report(o, res, program_said) — prints the record (its output and verdict, or --json) and
 * returns the exit status; *program_said when it is the program's (--exit-status=program). */
static int report(const struct run_opts *o, const struct result *res, bool *program_said)
{
    int status;

    if (o->json) {
        json_t *j = result_to_json(res);
        char *s = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
        if (s) {
            puts(s);
            free(s);
        } else {
            fprintf(stderr, "crucible run: cannot encode the result record\n");
        }
        json_decref(j);
    } else {
        print_text(res);
    }
    if (res->status == RESULT_SANDBOX_ERROR) {
        if (o->json)
            fprintf(stderr, "crucible run: %s\n", res->message);
        status = 2;
    } else if (res->status == RESULT_RUNTIME_ERROR && res->exit_code == 127 &&
               strncmp(res->message, "cannot execute", 14) == 0) {
        if (o->json)
            fprintf(stderr, "crucible run: %s\n", res->message);
        status = 2;
    } else {
        status = res->status == RESULT_OK ? 0 : 1;
    }
    if (o->exit_mode == EXIT_PROGRAM) {
        status = program_status(res);
        *program_said = true;
    }
    return status;
}

/* run_kept(o, img, argv, stdin_fd, stop_fd, res) — the run in a keeper's ready sandbox
 * (keep.h) when a keeper is there and takes it: true when res holds its verdict, or the
 * failure of a keeper that took the run and did not answer. With $CRUCIBLE_TRACE, says on
 * stderr which way the run went and why. */
static bool run_kept(const struct run_opts *o, const struct image *img, char *const *argv,
                     int stdin_fd, int stop_fd, struct result *res)
{
    struct keep_run kr = {.digest = img->digest,
                          .limits = &o->limits,
                          .argv = argv,
                          .env = (char *const *)o->env,
                          .files = o->files,
                          .nfiles = o->nfiles,
                          .stdin_fd = stdin_fd,
                          .fork_server = o->fork_server};
    char path[128], why[640];
    enum keep_outcome out;

    if (o->cold || !keep_socket_path(path, sizeof(path)))
        return false;
    out = keep_try(path, &kr, stop_fd, res, why, sizeof(why));
    if (out == KEEP_ANSWERED)
        result_set_image(res, img); /* the image as this run named it (the digest is one) */
    if (getenv("CRUCIBLE_TRACE"))
        fprintf(stderr, "crucible: keeper: %s\n",
                out == KEEP_DECLINED ? why
                : out == KEEP_FAILED ? res->message
                                     : "the run was the keeper's");
    return out != KEEP_DECLINED;
}

int cmd_run(int argc, char **argv)
{
    struct run_opts *o = calloc(1, sizeof(*o));
    struct sandbox_runtime rt;
    struct errbuf err = {{0}};
    struct image *img = calloc(1, sizeof(*img));
    struct result res;
    int prog = 0, r, status = 2, stdin_fd = -1, stop_fd = -1;
    bool program_said = false; /* status is the record's, by --exit-status=program */
    enum exit_mode want = exit_mode_wanted(argc, argv);
    sigset_t stop;

    if (!o || !img) {
        fprintf(stderr, "crucible run: out of memory\n");
        goto out_free;
    }
    o->exit_mode = want;
    r = parse(argc, argv, o, &prog);
    if (r != 0) {
        status = r == 1 ? 0 : r;
        goto out_files;
    }
    /* The image named only (a keeper compares digests); its entries are read when the run
     * goes cold, below. */
    if (!o->check && image_identify(o->image, img, &err) < 0) {
        fprintf(stderr, "crucible run: %s\n", err.msg);
        goto out_files;
    }
    if (o->stdin_path) {
        struct stat st;
        stdin_fd = open(o->stdin_path, O_RDONLY | O_CLOEXEC);
        if (stdin_fd < 0 || fstat(stdin_fd, &st) < 0 || S_ISDIR(st.st_mode)) {
            fprintf(stderr, "crucible run: --stdin: cannot read '%s': %s\n", o->stdin_path,
                    stdin_fd < 0 ? strerror(errno) : "is a directory");
            goto out_files;
        }
        if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > SANDBOX_STDIN_MAX) {
            fprintf(stderr,
                    "crucible run: --stdin: '%s' is larger than " SANDBOX_STDIN_MAX_TEXT
                    ", the most a process may be given\n",
                    o->stdin_path);
            goto out_files;
        }
    }
    /* SIGINT, SIGTERM and SIGHUP stop the run cleanly: the sandbox is torn down first,
     * then the signal is raised again so the caller sees how we ended. */
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    stop_fd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
    result_init(&res);
    if (!o->check && run_kept(o, img, argv + prog, stdin_fd, stop_fd, &res)) {
        status = report(o, &res, &program_said);
        result_release(&res);
        goto out_stop;
    }
    result_release(&res);
    if (!o->check && image_read_entries(img, &err) < 0) {
        fprintf(stderr, "crucible run: %s\n", err.msg);
        goto out_stop;
    }
    if (sandbox_runtime_init(&rt, &err) < 0) {
        fprintf(stderr, "crucible run: %s\n", err.msg);
        goto out_stop;
    }
    rt.trace = getenv("CRUCIBLE_TRACE") != NULL;
    rt.cancel_fd = stop_fd;
    if (o->check) {
        sandbox_runtime_describe(&rt, stdout);
        status = 0;
        goto out_rt;
    }
    result_init(&res);
    struct sandbox_proc proc = {.argv = argv + prog, .env = o->env, .stdin_fd = stdin_fd};
    if (o->fork_server) {
        struct forkserver *fs = forkserver_start(&rt, img, NULL, 0, &err);
        if (fs)
            forkserver_run(fs, &o->limits, o->files, o->nfiles, &proc, &res);
        else
            result_fail(&res, "%s", err.msg);
        forkserver_stop(fs);
    } else {
        sandbox_run(&rt, img, &o->limits, o->files, o->nfiles, &proc, &res);
    }
    status = report(o, &res, &program_said);
    result_release(&res);
out_rt:
    sandbox_runtime_release(&rt);
out_stop:
    if (stop_fd >= 0) {
        struct signalfd_siginfo si;
        if (read(stop_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
            fprintf(stderr, "crucible run: stopped by %s; nothing left behind\n",
                    strsignal((int)si.ssi_signo));
            close(stop_fd);
            sigprocmask(SIG_UNBLOCK, &stop, NULL);
            signal((int)si.ssi_signo, SIG_DFL);
            raise((int)si.ssi_signo);
        }
        close(stop_fd);
    }
out_files:
    if (stdin_fd >= 0)
        close(stdin_fd);
    close_files(o);
out_free:
    /* status 2 is crucible's failure or the command line's: 125 when the caller asked for
     * the program's status (a record's own verdict was mapped above). */
    if (status == 2 && !program_said && want == EXIT_PROGRAM)
        status = EXIT_CRUCIBLE;
    free(o);
    free(img);
    return status;
}
