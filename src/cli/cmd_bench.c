/*
 * cmd_bench.c — `crucible bench [--json] [--quick] [--rounds R] [-n N] [-j N] [--pause MS]
 *                [--only CASES]`:
 * the core figures of docs/BENCHMARKS.md measured on this machine, side by side in one run,
 * with no dataset and no network: spawn latency of /bin/true (bare, cold, cli, warm, bwrap),
 * POST /v1/run latency (http), eval throughput on the bundled task set against the same
 * programs unsandboxed (bench.h lists the cases).
 *
 * Every selected case is first tried once (a case that cannot run is an error, or skipped with
 * the reason when optional: bwrap). Then come R rounds; each runs every case in turn, the order
 * rotating from round to round as bench/run does, so that drift of a shared machine hits all
 * cases alike: a latency case takes 2 untimed samples then N timed ones, a throughput case one
 * whole run. Figures are over the samples of all rounds pooled; ratios are of medians.
 *
 * Exit status: 0 when every sample ran as it must, 1 when some did not (reported), 2 on bad
 * usage or a case that cannot run. SIGINT, SIGTERM and SIGHUP stop the run at the next sample
 * with nothing left behind (the server a case started, the scratch directory), then end the
 * process by the same signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "cli/bench.h"
#include "cli/bench_stats.h"
#include "cli/cmd.h"
#include "commit.h"
#include "image/unpack.h"

#define WARMUP 2 /* untimed samples of a latency case at the start of its turn */

/* The cases in the order they are reported. */
static const struct bench_case *const cases[] = {
    &bench_case_bare,          &bench_case_cold,
    &bench_case_cli,           &bench_case_cli_kept,
    &bench_case_warm,          &bench_case_bwrap,
    &bench_case_python_bare,   &bench_case_python_cold,
    &bench_case_forkserver,    &bench_case_http,
    &bench_case_bare_paused,   &bench_case_run_code,
    &bench_case_run_code_warm, &bench_case_eval_unsandboxed,
    &bench_case_eval,          &bench_case_eval_cold,
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

struct bench_opts {
    bool json, quick;
    unsigned rounds, n, jobs;
    unsigned pause_ms; /* --pause: untimed, before each sample of a latency case (0: none) */
    bool selected[NCASES];
};

/* What a case gave. */
struct case_state {
    bool selected;
    char skipped[512]; /* why, when not measured */
    char note[1024];
    struct bench_samples samples;
    unsigned long failures;
    char failure[512]; /* the first failure's message */
    struct bench_summary sum;
    bool have_sum;
};

static void bench_usage(FILE *f)
{
    fprintf(f, "usage: crucible bench [--json] [--quick] [--rounds R] [-n N] [-j N] "
               "[--pause MS]\n                      [--only CASE[,CASE...]]\n\n"
               "Measures crucible on this machine, side by side in one run, and prints the\n"
               "medians, p90s and ratios with a description of the machine. Needs no dataset\n"
               "and no network. Cases:\n");
    for (size_t i = 0; i < NCASES; i++)
        fprintf(f, "  %-17s %s\n", cases[i]->name, cases[i]->what);
    fprintf(f, "\noptions:\n"
               "  --rounds R        interleaved rounds, the case order rotating (1..1000, "
               "default 5)\n"
               "  -n N              timed samples per latency case per round (1..100000,\n"
               "                    default 100); the eval cases take one whole run per round\n"
               "  -j N              tasks at a time in the eval cases (1..64, default: CPUs)\n"
               "  --pause MS        an untimed pause before each sample of every latency case\n"
               "                    (0..1000 ms, default 0: back to back), so that each one\n"
               "                    meets an idle machine, as a run called now and then does\n"
               "  --only CASES      only these cases, comma-separated (ratios need 'bare')\n"
               "  --quick           2 rounds of 5 samples: a smoke test, not a measurement\n"
               "  --json            one JSON object on stdout instead of the table\n"
               "  -h, --help        this text\n\n"
               "exit status: 0 every sample ran as it must; 1 some did not (the output says\n"
               "which); 2 bad usage or a case that cannot run here.\n");
}

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "crucible bench: ");
    fprintf(stderr, msg, arg);
    fprintf(stderr, "\n");
    return 2;
}

/* parse_only(list, o) — --only's comma-separated case names. 0 or 2. */
static int parse_only(const char *list, struct bench_opts *o)
{
    char buf[1024], names[512] = "";
    char *save;

    if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf) || !*list)
        return usage_error("--only wants case names, got '%s'", list);
    for (size_t i = 0; i < NCASES; i++)
        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
                 cases[i]->name);
    memset(o->selected, 0, sizeof(o->selected));
    for (char *s = strtok_r(buf, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < NCASES && strcmp(s, cases[i]->name) != 0)
            i++;
        if (i == NCASES) {
            fprintf(stderr, "crucible bench: --only: unknown case '%s' (cases: %s)\n", s, names);
            return 2;
        }
        o->selected[i] = true;
    }
    return 0;
}

/* parse_count(opt, arg, max, out) — a whole number from 1 to max. 0 or 2. */
static int parse_count(const char *opt, const char *arg, unsigned max, unsigned *out)
{
    uint64_t v;

    if (!util_parse_u64(arg, 1, max, &v)) {
        fprintf(stderr, "crucible bench: %s must be a whole number from 1 to %u, not '%s'\n", opt,
                max, arg);
        return 2;
    }
    *out = (unsigned)v;
    return 0;
}

enum { O_JSON = 256, O_QUICK, O_ROUNDS, O_ONLY, O_PAUSE };
static const struct option bench_longopts[] = {
    {"json", no_argument, NULL, O_JSON},
    {"quick", no_argument, NULL, O_QUICK},
    {"rounds", required_argument, NULL, O_ROUNDS},
    {"only", required_argument, NULL, O_ONLY},
    {"pause", required_argument, NULL, O_PAUSE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* parse(argc, argv, o) — 0, 1 (--help printed) or 2 (usage error said). */
static int parse(int argc, char **argv, struct bench_opts *o)
{
    bool rounds_set = false, n_set = false;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int c, r = 0;

    *o = (struct bench_opts){.rounds = 5, .n = 100, .jobs = cpus > 0 && cpus < 64 ? cpus : 2};
    for (size_t i = 0; i < NCASES; i++)
        o->selected[i] = true;
    opterr = 0;
    optind = 1;
    while (r == 0 && (c = getopt_long(argc, argv, "hn:j:", bench_longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            bench_usage(stdout);
            return 1;
        case O_JSON:
            o->json = true;
            break;
        case O_QUICK:
            o->quick = true;
            break;
        case O_ROUNDS:
            r = parse_count("--rounds", optarg, 1000, &o->rounds);
            rounds_set = true;
            break;
        case 'n':
            r = parse_count("-n", optarg, 100000, &o->n);
            n_set = true;
            break;
        case 'j':
            r = parse_count("-j", optarg, 64, &o->jobs);
            break;
        case O_ONLY:
            r = parse_only(optarg, o);
            break;
        case O_PAUSE: {
            uint64_t v;
            if (!util_parse_u64(optarg, 0, 1000, &v))
                return usage_error("--pause must be a whole number of milliseconds from 0 to "
                                   "1000, not '%s'",
                                   optarg);
            o->pause_ms = (unsigned)v;
            break;
        }
        case '?':
            if (optopt && strchr("nj", optopt))
                return usage_error("option '%s' needs a number", optopt == 'n' ? "-n" : "-j");
            if (optopt)
                return usage_error("option '%s' needs an argument", argv[optind - 1]);
            return usage_error("unknown option '%s' (see 'crucible bench --help')",
                               argv[optind - 1]);
        default:
            return usage_error("internal option error%s", "");
        }
    }
    if (r != 0)
        return r;
    if (optind < argc)
        return usage_error("unexpected argument '%s' (see 'crucible bench --help')", argv[optind]);
    if (o->quick) {
        o->rounds = rounds_set ? o->rounds : 2;
        o->n = n_set ? o->n : 5;
    }
    return 0;
}

#define STOPPED 3 /* measure's "a stop signal came": nothing is printed, the signal is raised */

/* stopped(env) — a stop signal is pending (left unread on the signalfd for cmd_bench). */
static bool stopped(const struct bench_env *env)
{
    struct pollfd p = {.fd = env->stop_fd, .events = POLLIN};

    return env->stop_fd >= 0 && poll(&p, 1, 0) > 0;
}

/* probe(env, k, st) — opens case k and runs it once, untimed: 0 when it runs, 2 when a case
 * that must run cannot (said on stderr); an optional case that cannot is marked skipped. */
static int probe(const struct bench_env *env, size_t k, struct case_state *st)
{
    const struct bench_case *bc = cases[k];
    struct errbuf err = {{0}};
    void *state = NULL;
    double ms;
    int r = bc->open(env, &state, &err);

    if (r == 0) {
        if (bc->note && bc->note(state))
            snprintf(st->note, sizeof(st->note), "%s", bc->note(state));
        r = bc->sample(state, &ms, &err);
        bc->close(state);
    }
    if (stopped(env))
        return STOPPED;
    if (r == 0)
        return 0;
    if (bc->optional) {
        snprintf(st->skipped, sizeof(st->skipped), "%s", err.msg);
        return 0;
    }
    fprintf(stderr, "crucible bench: case '%s' cannot run here: %s\n", bc->name, err.msg);
    return 2;
}

/* take_turn(env, o, k, st) — case k's turn in one round. 0, 2 when it cannot run, STOPPED. */
static int take_turn(const struct bench_env *env, const struct bench_opts *o, size_t k,
                     struct case_state *st)
{
    const struct bench_case *bc = cases[k];
    long n = bc->whole ? 1 : (long)o->n, warm = bc->whole ? 0 : WARMUP;
    struct errbuf err = {{0}};
    void *state = NULL;
    int r = bc->open(env, &state, &err);

    for (long i = -warm; r == 0 && i < n; i++) {
        double ms;
        if (!bc->whole && o->pause_ms)
            nanosleep(&(struct timespec){o->pause_ms / 1000, (long)(o->pause_ms % 1000) * 1000000},
                      NULL);
        if (stopped(env))
            break;
        r = bc->sample(state, &ms, &err);
        if (stopped(env))
            break; /* its outcome may be the stop's (a cancelled sandbox) */
        if (r == 0 && i >= 0 && bench_samples_add(&st->samples, ms) < 0) {
            errbuf_set(&err, "out of memory");
            r = -ENOMEM;
        }
        if (r == 1 && i >= 0 && st->failures++ == 0)
            snprintf(st->failure, sizeof(st->failure), "%s", err.msg);
        if (r == 1)
            r = 0;
    }
    if (state)
        bc->close(state);
    if (stopped(env))
        return STOPPED;
    if (r == 0)
        return 0;
    fprintf(stderr, "crucible bench: case '%s' stopped: %s\n", bc->name, err.msg);
    return 2;
}

/* measure(env, o, st) — the probes, then the rounds. 0, 2 or STOPPED. */
static int measure(const struct bench_env *env, const struct bench_opts *o, struct case_state *st)
{
    size_t active[NCASES], nactive = 0;
    int r;

    for (size_t k = 0; k < NCASES; k++) {
        st[k].selected = o->selected[k];
        if (!o->selected[k]) {
            snprintf(st[k].skipped, sizeof(st[k].skipped), "not selected (--only)");
            continue;
        }
        if (!o->json)
            fprintf(stderr, "crucible bench: trying %s\n", cases[k]->name);
        if ((r = probe(env, k, &st[k])) != 0)
            return r;
        if (!st[k].skipped[0])
            active[nactive++] = k;
    }
    for (unsigned round = 0; round < o->rounds; round++) {
        if (!o->json)
            fprintf(stderr, "crucible bench: round %u of %u\n", round + 1, o->rounds);
        for (size_t i = 0; i < nactive; i++) {
            size_t k = active[(i + round) % nactive];
            if ((r = take_turn(env, o, k, &st[k])) != 0)
                return r;
        }
    }
    for (size_t k = 0; k < NCASES; k++)
        st[k].have_sum = !st[k].skipped[0] && bench_summarize(&st[k].samples, &st[k].sum);
    return 0;
}

/* ratio_base(st, k) — the summary case k's ratio is to, or NULL. */
static const struct bench_summary *ratio_base(const struct case_state *st, size_t k)
{
    if (!cases[k]->ratio || !st[k].have_sum)
        return NULL;
    for (size_t b = 0; b < NCASES; b++)
        if (strcmp(cases[b]->name, cases[k]->ratio) == 0)
            return st[b].have_sum && st[b].sum.median > 0 ? &st[b].sum : NULL;
    return NULL;
}

/* ---- output -------------------------------------------------------------------------------- */

/* A ratio of medians worth naming on its own: the targets. */
static const struct {
    const char *name, *num, *den;
} headline[] = {
    {"warm/bare", "warm", "bare"},
    {"http/bare", "http", "bare"},
    {"http/bare_paused", "http", "bare_paused"},
    {"bwrap/cli", "bwrap", "cli"},
    {"bwrap/cli_kept", "bwrap", "cli_kept"},
    {"bwrap/cold", "bwrap", "cold"},
    {"forkserver/python_bare", "forkserver", "python_bare"},
    {"python_cold/forkserver", "python_cold", "forkserver"},
    {"eval/eval_unsandboxed", "eval", "eval_unsandboxed"},
    {"eval_cold/eval", "eval_cold", "eval"},
    {"run_code_warm/run_code", "run_code_warm", "run_code"},
};

static const struct case_state *by_name(const struct case_state *st, const char *name)
{
    for (size_t k = 0; k < NCASES; k++)
        if (strcmp(cases[k]->name, name) == 0)
            return st[k].have_sum ? &st[k] : NULL;
    return NULL;
}

static void now_utc(char *buf, size_t size)
{
    time_t t = time(NULL);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, size, "%Y-%m-%d %H:%M UTC", &tm);
}

static json_t *case_json(const struct case_state *st, size_t k)
{
    const struct case_state *s = &st[k];
    const struct bench_summary *base = ratio_base(st, k);
    json_t *j = json_pack("{s:s}", "what", cases[k]->what);

    if (s->skipped[0]) {
        json_object_set_new(j, "skipped", json_string(s->skipped));
        return j;
    }
    json_object_set_new(j, "unit", json_string(cases[k]->whole ? "ms per task set" : "ms"));
    if (s->have_sum) {
        json_object_set_new(j, "median_ms", json_real(s->sum.median));
        json_object_set_new(j, "p90_ms", json_real(s->sum.p90));
        json_object_set_new(j, "mean_ms", json_real(s->sum.mean));
    }
    json_object_set_new(j, "samples", json_integer((json_int_t)s->samples.n));
    json_object_set_new(j, "failures", json_integer((json_int_t)s->failures));
    if (s->failures)
        json_object_set_new(j, "first_failure", json_string(s->failure));
    if (s->note[0])
        json_object_set_new(j, "note", json_string(s->note));
    if (base) {
        json_object_set_new(j, "ratio_to", json_string(cases[k]->ratio));
        json_object_set_new(j, "ratio", json_real(s->sum.median / base->median));
    }
    return j;
}

static int print_json(const struct bench_opts *o, const struct bench_machine *m,
                      const struct case_state *st)
{
    json_t *cs = json_object(), *ratios = json_object(), *only = json_array(), *root;
    char date[64], *text;

    now_utc(date, sizeof(date));
    for (size_t k = 0; k < NCASES; k++) {
        json_object_set_new(cs, cases[k]->name, case_json(st, k));
        if (o->selected[k])
            json_array_append_new(only, json_string(cases[k]->name));
    }
    for (size_t i = 0; i < sizeof(headline) / sizeof(headline[0]); i++) {
        const struct case_state *a = by_name(st, headline[i].num),
                                *b = by_name(st, headline[i].den);
        json_object_set_new(ratios, headline[i].name,
                            a && b && b->sum.median > 0 ? json_real(a->sum.median / b->sum.median)
                                                        : json_null());
    }
    root = json_pack("{s:{s:s,s:s},s:s,s:{s:s,s:I,s:s,s:I,s:s,s:[f,f]},s:{s:I,s:I,s:I,s:I,s:b,s:o},"
                     "s:o,s:o}",
                     "crucible", "version", CRUCIBLE_VERSION, "commit", CRUCIBLE_COMMIT, "date",
                     date, "machine", "kernel", m->kernel, "cpus", (json_int_t)m->cpus, "cpu_model",
                     m->model, "memory_mb", (json_int_t)m->memory_mb, "cgroup", m->cgroup,
                     "load_average", m->load[0], m->load[1], "settings", "rounds",
                     (json_int_t)o->rounds, "samples_per_round", (json_int_t)o->n, "jobs",
                     (json_int_t)o->jobs, "pause_ms", (json_int_t)o->pause_ms, "quick", o->quick,
                     "cases", only, "cases", cs, "ratios", ratios);
    text = root ? json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(root);
    if (!text)
        return fprintf(stderr, "crucible bench: cannot encode the results\n"), 2;
    puts(text);
    free(text);
    return 0;
}

static void print_text(const struct bench_opts *o, const struct bench_machine *m,
                       const struct case_state *st)
{
    char date[64];

    now_utc(date, sizeof(date));
    printf("crucible bench: crucible %s%s%s, %s\n", CRUCIBLE_VERSION, CRUCIBLE_COMMIT[0] ? " " : "",
           CRUCIBLE_COMMIT, date);
    printf("machine: %s, %ld CPUs (%s), %llu MiB memory, cgroup %s\n", m->kernel, m->cpus, m->model,
           (unsigned long long)m->memory_mb, m->cgroup);
    printf("load average: %.2f at the start, %.2f at the end (what else ran weighs on every "
           "figure)\n",
           m->load[0], m->load[1]);
    printf("method: %u interleaved rounds; %u samples per latency case per round after %d "
           "untimed;\n",
           o->rounds, o->n, WARMUP);
    if (o->pause_ms)
        printf("        an untimed pause of %u ms before each latency sample;\n", o->pause_ms);
    printf("        eval cases: one whole run of the task set per round, -j %u\n\n", o->jobs);
    printf("%-17s %11s %11s %8s %9s  %s\n", "case", "median ms", "p90 ms", "samples", "ratio",
           "what");
    for (size_t k = 0; k < NCASES; k++) {
        const struct case_state *s = &st[k];
        const struct bench_summary *base = ratio_base(st, k);
        char ratio[32] = "-";
        if (!s->selected)
            continue;
        if (s->skipped[0] || !s->have_sum) {
            printf("%-17s %11s %11s %8s %9s  skipped: %s\n", cases[k]->name, "-", "-", "-", "-",
                   s->skipped[0] ? s->skipped : "no sample ran as it must");
            continue;
        }
        if (base)
            snprintf(ratio, sizeof(ratio), "%.2fx", s->sum.median / base->median);
        printf("%-17s %11.3f %11.3f %8zu %9s  %s\n", cases[k]->name, s->sum.median, s->sum.p90,
               s->sum.n, ratio, cases[k]->what);
    }
    printf("\nratios are of medians: to bare, the python cases to python_bare, eval to\n"
           "eval_unsandboxed. Of the issue's targets, and the fork server's gain:\n");
    for (size_t i = 0; i < sizeof(headline) / sizeof(headline[0]); i++) {
        const struct case_state *a = by_name(st, headline[i].num),
                                *b = by_name(st, headline[i].den);
        if (a && b && b->sum.median > 0)
            printf("  %-22s %.2fx\n", headline[i].name, a->sum.median / b->sum.median);
    }
    for (size_t k = 0; k < NCASES; k++) {
        if (st[k].note[0] && (k == 0 || strcmp(st[k].note, st[k - 1].note) != 0))
            printf("note (%s): %s\n", cases[k]->name, st[k].note);
        if (st[k].failures)
            printf("FAILED (%s): %lu samples did not run as they must; first: %s\n", cases[k]->name,
                   st[k].failures, st[k].failure);
    }
}

/* make_env(env, rt, img, self, scratch) — the runtime, the host image, this binary's path and a
 * private scratch directory. 0 or 2 (said on stderr). */
static int make_env(struct bench_env *env, struct sandbox_runtime *rt, struct image *img,
                    char *self, char *scratch)
{
    struct errbuf err = {{0}};
    const char *tmp = getenv("TMPDIR");
    ssize_t n = readlink("/proc/self/exe", self, PATH_MAX - 1);

    if (n <= 0)
        return fprintf(stderr, "crucible bench: cannot read /proc/self/exe: %s\n", strerror(errno)),
               2;
    self[n] = '\0';
    if (sandbox_runtime_init(rt, &err) < 0)
        return fprintf(stderr, "crucible bench: %s\n", err.msg), 2;
    rt->trace = getenv("CRUCIBLE_TRACE") != NULL; /* phase timings, as `run` and `serve` */
    if (image_resolve("host", img, &err) < 0) {
        sandbox_runtime_release(rt);
        return fprintf(stderr, "crucible bench: %s\n", err.msg), 2;
    }
    snprintf(scratch, PATH_MAX, "%s/crucible-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch)) {
        fprintf(stderr, "crucible bench: cannot make a directory in '%s': %s\n",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        sandbox_runtime_release(rt);
        return 2;
    }
    env->rt = rt;
    env->img = img;
    env->self = self;
    env->scratch = scratch;
    return 0;
}

/* raise_stop(fd, stop) — says which signal stopped the run and raises it again, unblocked and
 * with its default action: the process ends as that signal says. */
static void raise_stop(int fd, const sigset_t *stop)
{
    struct signalfd_siginfo si;

    if (read(fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
        return;
    fprintf(stderr, "crucible bench: stopped by %s; nothing left behind\n",
            strsignal((int)si.ssi_signo));
    close(fd);
    signal((int)si.ssi_signo, SIG_DFL);
    sigprocmask(SIG_UNBLOCK, stop, NULL);
    raise((int)si.ssi_signo);
}

int cmd_bench(int argc, char **argv)
{
    struct case_state *st = calloc(NCASES, sizeof(*st));
    char self[PATH_MAX], scratch[PATH_MAX];
    struct bench_machine machine;
    struct sandbox_runtime rt;
    struct bench_env env = {.stop_fd = -1};
    struct bench_opts o;
    struct image img;
    int r = parse(argc, argv, &o);
    bool failed = false;
    sigset_t stop;

    if (r != 0 || !st) {
        free(st);
        return r == 1 ? 0 : r ? r : (fprintf(stderr, "crucible bench: out of memory\n"), 2);
    }
    /* SIGINT, SIGTERM and SIGHUP stop the run cleanly: read from a signalfd (also the sandbox
     * runtime's cancel fd), the run ends at the next sample, the scratch and the server go,
     * then the signal is raised again so that the caller sees how we ended (as crucible run) */
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    if ((r = make_env(&env, &rt, &img, self, scratch)) != 0) {
        free(st);
        return r;
    }
    rt.cancel_fd = env.stop_fd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
    env.jobs = o.jobs;
    bench_machine_read(&machine);
    r = measure(&env, &o, st);
    machine.load[1] = bench_load();
    if (r == 0)
        r = o.json ? print_json(&o, &machine, st) : (print_text(&o, &machine, st), 0);
    for (size_t k = 0; k < NCASES; k++) {
        failed |= st[k].failures > 0 || (st[k].selected && !st[k].skipped[0] && !st[k].have_sum);
        bench_samples_release(&st[k].samples);
    }
    unpack_remove_tree(AT_FDCWD, scratch);
    sandbox_runtime_release(&rt);
    free(st);
    if (r == STOPPED)
        raise_stop(env.stop_fd, &stop);
    if (env.stop_fd >= 0)
        close(env.stop_fd);
    return r == STOPPED ? 2 : r ? r : failed ? 1 : 0;
}
