/*
 * cmd_eval.c — `crucible eval --tasks TASKS.jsonl (--reference | --solutions S.jsonl)`.
 *
 * Verifies many solutions in parallel (-j worker threads, each running its own sandboxes),
 * writes one verification record per input line, in input order, as soon as the records
 * before it are done, shows a progress bar on a terminal, and ends with a summary table.
 *
 * In steps: the command line (parse_args), the tasks (load_tasks), the jobs (reference_jobs,
 * or load_solutions with solution_line for each line), the run (run_jobs, with verify_job on
 * the workers and write_ready draining records in order), then the summary (report).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/judging.h"
#include "cli/report.h"
#include "cli/workers.h"
#include "library/store.h"
#include "judge/verify.h"
#include "judge/pyserver.h"

struct job {
    const struct task *task;
    const struct lang *lang; /* the solution's language, or NULL for the task's */
    char *program;           /* owned */
    char how[128];
    size_t line;  /* input line (solutions file) or task index + 1 */
    char *record; /* JSON line, set by the worker; NULL until done */
    enum verdict verdict;
    bool reward_null, flaky, done;
    double reward;
};

/* What the command line asks for (the verify options and the model tag go to struct eval). */
struct eval_args {
    const char *tasks_path, *sol_path, *out_path, *db_path, *report_path;
    bool reference, quiet, help;
    enum pyserver_mode fork_server; /* --fork-server required, --no-fork-server off */
    long jobs;                      /* worker threads */
};

struct eval {
    struct verify_opts opts;
    struct job *jobs;
    size_t njobs;
    size_t written; /* records written, in input order (drain, under the workers' lock) */
    FILE *out;
    struct store *store; /* --db: outcomes are recorded here, under model */
    const char *model;
    size_t unrecorded; /* atomically: outcomes the library did not take */
};

static void eval_usage(FILE *f)
{
    fprintf(
        f,
        "usage: crucible eval (--tasks TASKS.jsonl | --db DB [--model M])\n"
        "                     (--reference | --solutions SOLUTIONS.jsonl)\n"
        "                     [-j N] [--out RESULTS.jsonl] [--repeats N] "
        "[--reward binary|fraction]\n"
        "                     [--writable-root] [--fork-server | --no-fork-server]\n"
        "                     [--report REPORT.html]\n\n"
        "Verifies every solution against its task in sandboxes, N at a time (default: the\n"
        "number of cores). SOLUTIONS.jsonl lines are {\"task_id\": ..., \"solution\": full "
        "program}\nor {\"task_id\", \"completion\"} (appended to the task's prompt) or "
        "{\"task_id\", \"response\"}\n(raw model text; its last fenced block is the code). "
        "A line may name the solution's\nlanguage: \"language\": \"cpp\" (else it is the "
        "task's); a stdio task takes any language,\nassert and command tasks only their own "
        "(other lines are reported as bad).\n--reference verifies each task's own reference. "
        "RESULTS.jsonl gets one\nverification record per line, in input order (stdout "
        "without --out; the summary\nthen goes to stderr).\n\n"
        "With --db DB the tasks are the current versions in a task library (crucible tasks\n"
        "import) and every outcome is recorded in its statistics under model tag M (default:\n"
        "default); infra errors are recorded but never count as attempts.\n\n"
        "--report writes the records as an HTML report too (crucible report: verdicts, pass\n"
        "rates by tag and language, failures grouped by message, the slowest tests).\n\n"
        "--writable-root runs every task with a writable root filesystem (the task field\n"
        "writable_root): writes land in each sandbox's own scratch space.\n\n"
        "The tests of Python assert tasks on the host image run as jobs forked from one Python\n"
        "interpreter started in a sandbox, when it can start here (each job in its own\n"
        "namespaces, cgroup and scratch; records say \"path\": \"fork_server\"); the others, and\n"
        "all of them where it cannot, in a fresh sandbox each. --fork-server makes it\n"
        "required (eval fails when it cannot start); --no-fork-server turns it off.\n\n"
        "exit status: 0 all ran; 1 some input was bad or crucible failed on some (infra_error);\n"
        "2 bad usage or nothing could run.\n");
}

/* verify_job — one job on a worker thread (workers.h): its record, and its outcome recorded
 * in the library with --db. True when accepted (the progress bar's count). */
static bool verify_job(void *ctx, size_t i, const struct sandbox_runtime *rt,
                       const struct image *img)
{
    struct eval *ev = ctx;
    struct job *jb = &ev->jobs[i];
    struct verify_opts o = ev->opts;
    struct verify_result vr;
    json_t *j;

    o.image = img;
    o.lang = jb->lang;
    verify_run(rt, jb->task, jb->program, &o, &vr);
    j = verify_result_to_json(jb->task, &vr);
    if (j && strcmp(jb->how, "full program") != 0)
        json_object_set_new(j, "extracted", json_string(jb->how));
    if (j)
        json_object_set_new(j, "input_line", json_integer((json_int_t)jb->line));
    if (ev->store) {
        struct errbuf err = {{0}};
        if (store_record(ev->store, jb->task->id, jb->task->version, ev->model, &vr, &err) < 0) {
            fprintf(stderr, "\ncrucible eval: %s: the outcome was not recorded: %s\n", jb->task->id,
                    err.msg);
            __atomic_add_fetch(&ev->unrecorded, 1, __ATOMIC_RELAXED);
        }
    }
    jb->record =
        j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;
    if (!jb->record)
        jb->record = strdup("{\"verdict\":\"infra_error\",\"reward\":null,"
                            "\"message\":\"cannot encode the record\"}");
    jb->verdict = vr.verdict;
    jb->reward = vr.reward;
    jb->reward_null = vr.reward_null;
    jb->flaky = vr.flaky;
    jb->done = true;
    json_decref(j);
    verify_result_release(&vr);
    return jb->verdict == VERDICT_ACCEPTED;
}

/* write_ready — the records whose predecessors are all written, in input order. */
static void write_ready(void *ctx, const bool *finished)
{
    struct eval *ev = ctx;

    while (ev->written < ev->njobs && finished[ev->written]) {
        const char *rec = ev->jobs[ev->written].record;
        if (rec) {
            fputs(rec, ev->out);
            fputc('\n', ev->out);
        }
        ev->written++;
    }
    fflush(ev->out);
}

static int by_id(const void *a, const void *b)
{
    return strcmp((*(const struct task *const *)a)->id, (*(const struct task *const *)b)->id);
}

/* find_task(index, n, id) — the task with that id in an index sorted by id, or NULL: a
 * large library times many solution lines must not cost their product. */
static const struct task *find_task(const struct task *const *index, size_t n, const char *id)
{
    struct task key = {.id = (char *)id};
    const struct task *k = &key, *const *hit = bsearch(&k, index, n, sizeof(*index), by_id);

    return hit ? *hit : NULL;
}

/* solution_line(path, lineno, j, index, n, ev, jb) — the job of one solution line (a JSON
 * object): its task, its language ("language", else the task's) and its program. 0, or -1
 * after naming the line's problem on stderr. */
static int solution_line(const char *path, size_t lineno, const json_t *j,
                         const struct task *const *index, size_t ntasks, const struct eval *ev,
                         struct job *jb)
{
    static const char *const keys[] = {"solution", "completion", "response"};
    const json_t *id = json_object_get(j, "task_id"), *lv = json_object_get(j, "language");
    const struct lang *lang = NULL;
    const struct task *t;
    const char *text = NULL;
    struct errbuf err = {{0}};
    int kind = -1;

    for (int k = 0; k < 3; k++) {
        json_t *v = json_object_get(j, keys[k]);
        if (v && json_is_string(v)) {
            if (kind >= 0)
                kind = -2;
            else
                kind = k, text = json_string_value(v);
        }
    }
    if (!json_is_string(id) || kind < 0) {
        fprintf(stderr,
                "%s:%zu: needs a string \"task_id\" and exactly one of "
                "\"solution\", \"completion\", \"response\"\n",
                path, lineno);
        return -1;
    }
    t = find_task(index, ntasks, json_string_value(id));
    if (!t) {
        fprintf(stderr, "%s:%zu: no task '%s' in %s\n", path, lineno, json_string_value(id),
                ev->store ? "the task library" : "the task file");
        return -1;
    }
    if (lv && !json_is_null(lv)) {
        if (!json_is_string(lv)) {
            fprintf(stderr, "%s:%zu: \"language\" must be a string naming a language\n", path,
                    lineno);
            return -1;
        }
        if (!(lang = judging_lang_named(json_string_value(lv), &err)) ||
            verify_language_check(t, lang, &err) < 0) {
            fprintf(stderr, "%s:%zu: %s\n", path, lineno, err.msg);
            return -1;
        }
    }
    memset(jb, 0, sizeof(*jb));
    jb->task = t;
    jb->lang = lang;
    jb->line = lineno;
    jb->program =
        verify_program_text(t, lang, (enum solution_kind)kind, text, jb->how, sizeof(jb->how));
    if (!jb->program) {
        fprintf(stderr, "%s:%zu: out of memory\n", path, lineno);
        return -1;
    }
    return 0;
}

/* task_index(tasks, n) — pointers to the tasks sorted by id (find_task); NULL on ENOMEM. */
static const struct task **task_index(const struct task *tasks, size_t ntasks)
{
    const struct task **index = malloc((ntasks ? ntasks : 1) * sizeof(*index));

    if (!index)
        return NULL;
    for (size_t i = 0; i < ntasks; i++)
        index[i] = &tasks[i];
    qsort(index, ntasks, sizeof(*index), by_id);
    return index;
}

/* load_solutions(path, tasks, n, ev) — jobs from a solutions file; the number of bad lines
 * (each reported), or -1 when the file cannot be read. */
static int load_solutions(const char *path, const struct task *tasks, size_t ntasks,
                          struct eval *ev)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
    char *line = NULL;
    size_t lcap = 0, lineno = 0, cap = 0;
    ssize_t len;
    int bad = 0;
    const struct task **index;

    if (!f) {
        fprintf(stderr, "crucible eval: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    if (!(index = task_index(tasks, ntasks))) {
        fprintf(stderr, "crucible eval: out of memory\n");
        if (f != stdin)
            fclose(f);
        return -1;
    }
    while ((len = getline(&line, &lcap, f)) >= 0) {
        json_error_t je;
        json_t *j;

        lineno++;
        if (strspn(line, " \t\r\n") == (size_t)len)
            continue;
        j = json_loadb(line, (size_t)len, 0, &je);
        if (!j || !json_is_object(j)) {
            fprintf(stderr, "%s:%zu: not a JSON object%s%s\n", path, lineno, j ? "" : ": ",
                    j ? "" : je.text);
            json_decref(j);
            bad++;
            continue;
        }
        if (ev->njobs == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            struct job *nj = realloc(ev->jobs, ncap * sizeof(*nj));
            if (!nj) {
                fprintf(stderr, "%s:%zu: out of memory\n", path, lineno);
                json_decref(j);
                bad++;
                break;
            }
            ev->jobs = nj;
            cap = ncap;
        }
        if (solution_line(path, lineno, j, index, ntasks, ev, &ev->jobs[ev->njobs]) == 0)
            ev->njobs++;
        else
            bad++;
        json_decref(j);
    }
    free(line);
    free(index);
    if (f != stdin)
        fclose(f);
    return bad;
}

/* reference_jobs(tasks, n, label, ev) — one job per task with a reference, in its own
 * language; the number of tasks without one (each reported). -1 on ENOMEM. */
static int reference_jobs(const struct task *tasks, size_t ntasks, const char *label,
                          struct eval *ev)
{
    int bad = 0;

    ev->jobs = calloc(ntasks ? ntasks : 1, sizeof(*ev->jobs));
    if (!ev->jobs) {
        fprintf(stderr, "crucible eval: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < ntasks; i++) {
        struct job *jb = &ev->jobs[ev->njobs];
        if (!tasks[i].reference) {
            fprintf(stderr, "%s: task '%s' has no reference; skipped\n", label, tasks[i].id);
            bad++;
            continue;
        }
        jb->task = &tasks[i];
        jb->line = i + 1;
        jb->program = verify_program_text(&tasks[i], NULL, SOLUTION_PROGRAM, tasks[i].reference,
                                          jb->how, sizeof(jb->how));
        if (jb->program)
            ev->njobs++;
    }
    return bad;
}

struct library_load {
    struct store *store;
    struct task *tasks;
    size_t n, cap;
    struct errbuf *err;
};

static int load_one(const struct store_task *row, void *arg)
{
    struct library_load *l = arg;

    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        struct task *v = realloc(l->tasks, cap * sizeof(*v));
        if (!v)
            return errbuf_set(l->err, "out of memory"), -ENOMEM;
        l->tasks = v;
        l->cap = cap;
    }
    if (store_task_load(l->store, row->id, row->version, &l->tasks[l->n], l->err) < 0) {
        task_release(&l->tasks[l->n]);
        return -EINVAL;
    }
    l->n++;
    return 0;
}

/* load_library(s, tasks, n, err) — the current version of every task of a library. */
static int load_library(struct store *s, struct task **tasks, size_t *n, struct errbuf *err)
{
    struct library_load l = {.store = s, .err = err};
    int r = store_list(s, NULL, load_one, &l, err);

    if (r < 0) {
        task_list_free(l.tasks, l.n);
        return r;
    }
    *tasks = l.tasks;
    *n = l.n;
    return 0;
}

static void summary(FILE *f, const struct eval *ev, double secs)
{
    unsigned counts[VERDICT_COUNT] = {0};
    double rsum = 0;
    size_t rn = 0, flaky = 0, done = 0;

    for (size_t i = 0; i < ev->njobs; i++) {
        const struct job *jb = &ev->jobs[i];
        if (!jb->done)
            continue;
        done++;
        counts[jb->verdict]++;
        if (!jb->reward_null) {
            rsum += jb->reward;
            rn++;
        }
        flaky += jb->flaky;
    }
    fprintf(f, "\n%-22s %8s %7s\n", "verdict", "count", "share");
    for (int v = 0; v < VERDICT_COUNT; v++)
        if (counts[v])
            fprintf(f, "%-22s %8u %6.1f%%\n", verdict_name((enum verdict)v), counts[v],
                    100.0 * counts[v] / (double)(done ? done : 1));
    fprintf(f, "%-22s %8zu\n", "total", done);
    fprintf(f, "\npass rate   %.2f%% (%u of %zu accepted)\n",
            100.0 * counts[VERDICT_ACCEPTED] / (double)(done ? done : 1), counts[VERDICT_ACCEPTED],
            done);
    fprintf(f, "mean reward %.4f over %zu records (infra errors carry no reward)\n",
            rn ? rsum / (double)rn : 0.0, rn);
    if (flaky)
        fprintf(f, "flaky       %zu\n", flaky);
    fprintf(f, "time        %.1f s, %.1f verifications/s\n", secs,
            secs > 0 ? (double)done / secs : 0.0);
}

/* usage_error(fmt, ...) — one line on stderr; returns 2 (the exit status). */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "crucible eval: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

/* parse_args(argc, argv, a, ev) — the command line into a (and ev's verify options and model
 * tag); 0, or 2 after saying what is wrong. a->help: --help was asked for. */
static int parse_args(int argc, char **argv, struct eval_args *a, struct eval *ev)
{
    static const struct option longopts[] = {
        {"tasks", required_argument, NULL, 't'},
        {"reference", no_argument, NULL, 'R'},
        {"solutions", required_argument, NULL, 's'},
        {"jobs", required_argument, NULL, 'j'},
        {"out", required_argument, NULL, 'o'},
        {"report", required_argument, NULL, 'P'},
        {"repeats", required_argument, NULL, 'n'},
        {"reward", required_argument, NULL, 'w'},
        {"quiet", no_argument, NULL, 'q'},
        {"db", required_argument, NULL, 'd'},
        {"model", required_argument, NULL, 'm'},
        {"writable-root", no_argument, NULL, JUDGING_OPT_WRITABLE_ROOT},
        {"fork-server", no_argument, NULL, 'F'},
        {"no-fork-server", no_argument, NULL, 'N'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct errbuf err = {{0}};
    uint64_t u;
    int c, r;

    memset(a, 0, sizeof(*a));
    a->jobs = sysconf(_SC_NPROCESSORS_ONLN);
    a->fork_server = PYSERVER_AUTO;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+hj:", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            a->tasks_path = optarg;
            break;
        case 'R':
            a->reference = true;
            break;
        case 's':
            a->sol_path = optarg;
            break;
        case 'j':
            if (!util_parse_u64(optarg, 1, 256, &u))
                return usage_error("-j must be a whole number from 1 to 256, not '%s'", optarg);
            a->jobs = (long)u;
            break;
        case 'o':
            a->out_path = optarg;
            break;
        case 'P':
            a->report_path = optarg;
            break;
        case 'q':
            a->quiet = true;
            break;
        case 'F':
            a->fork_server = PYSERVER_REQUIRED;
            break;
        case 'N':
            a->fork_server = PYSERVER_OFF;
            break;
        case 'd':
            a->db_path = optarg;
            break;
        case 'h':
            a->help = true;
            return 0;
        case '?':
        default:
            if ((r = judging_option(c, optarg, &ev->opts, &ev->model, &err)) < 0)
                return usage_error("%s", err.msg);
            if (r > 0)
                break;
            return usage_error("unknown option or missing argument '%s' (see 'crucible eval "
                               "--help')",
                               argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (!a->tasks_path == !a->db_path || a->reference == (a->sol_path != NULL))
        return usage_error("needs --tasks or --db (one of them), and exactly one of "
                           "--reference, --solutions");
    if (ev->model && !a->db_path)
        return usage_error("--model applies with --db only (it tags the recorded outcomes)");
    return 0;
}

/* load_tasks(a, ev, tasks, n, bad) — the library's current tasks (--db, opened into
 * ev->store) or the task file's; *bad counts the file's bad lines (reported). 0, or 2 after
 * saying why nothing can be loaded. */
static int load_tasks(const struct eval_args *a, struct eval *ev, struct task **tasks,
                      size_t *ntasks, int *bad)
{
    struct errbuf err = {{0}};

    *bad = 0;
    if (a->db_path) {
        if (store_open(a->db_path, false, &ev->store, &err) < 0 ||
            load_library(ev->store, tasks, ntasks, &err) < 0) {
            fprintf(stderr, "crucible eval: %s\n", err.msg);
            return 2;
        }
        return 0;
    }
    if ((*bad = task_list_load(a->tasks_path, tasks, ntasks, stderr, &err)) < 0) {
        fprintf(stderr, "crucible eval: %s\n", err.msg);
        return 2;
    }
    return 0;
}

/* run_jobs(a, ev, wo) — every job on the workers, records to --out or stdout as they come
 * in order. 0, or -1 after saying why nothing ran. */
static int run_jobs(const struct eval_args *a, struct eval *ev, struct workers_outcome *wo)
{
    struct errbuf err = {{0}};
    struct workers_spec ws = {.n = ev->njobs,
                              .jobs = a->jobs,
                              .quiet = a->quiet,
                              .label = "accepted",
                              .ctx = ev,
                              .work = verify_job,
                              .drain = write_ready};
    int r;

    ev->out = stdout;
    if (a->out_path && !(ev->out = fopen(a->out_path, "we"))) {
        fprintf(stderr, "crucible eval: cannot write '%s': %s\n", a->out_path, strerror(errno));
        ev->out = stdout;
        return -1;
    }
    /* The Python fork server (pyserver.h): started by the first run that can use it, or now
     * when it is required. */
    if (a->fork_server != PYSERVER_OFF &&
        (ev->opts.pyserver = pyserver_new(a->fork_server, "crucible eval")))
        pyserver_set_spares(ev->opts.pyserver, (unsigned)a->jobs); /* one job ahead per worker */
    if (a->fork_server != PYSERVER_OFF &&
        (!ev->opts.pyserver ||
         (a->fork_server == PYSERVER_REQUIRED && pyserver_start(ev->opts.pyserver, &err) < 0))) {
        fprintf(stderr, "crucible eval: --fork-server: %s\n",
                ev->opts.pyserver ? err.msg : "out of memory");
        pyserver_free(ev->opts.pyserver);
        ev->opts.pyserver = NULL;
        if (ev->out != stdout)
            fclose(ev->out);
        ev->out = NULL;
        return -1;
    }
    r = workers_run(&ws, wo, &err);
    if (r < 0)
        fprintf(stderr, "crucible eval: %s\n", err.msg);
    pyserver_free(ev->opts.pyserver);
    ev->opts.pyserver = NULL;
    if (ev->out != stdout)
        fclose(ev->out);
    ev->out = NULL;
    return r < 0 ? -1 : 0;
}

/* report(a, ev, bad, wo) — the summary table (stdout with --out, else stderr) and the exit
 * status: 0 all ran, 1 bad input lines, infra errors or outcomes the library missed. */
static int report(const struct eval_args *a, const struct eval *ev, int bad,
                  const struct workers_outcome *wo)
{
    int status = bad || ev->unrecorded ? 1 : 0;

    summary(a->out_path ? stdout : stderr, ev, wo->seconds);
    fflush(stdout);
    for (size_t i = 0; i < ev->njobs; i++)
        if (ev->jobs[i].done && ev->jobs[i].verdict == VERDICT_INFRA_ERROR)
            status = 1;
    if (wo->signal)
        fprintf(stderr,
                "crucible eval: stopped; %zu of %zu written (runs cut short are "
                "infra_error)\n",
                ev->written, ev->njobs);
    return status;
}

/* write_report(a, ev) — --report: the records written, as HTML (report.h), the tasks' tags
 * grouping them; 0, or 1 after saying why it could not be written. */
static int write_report(const struct eval_args *a, const struct eval *ev)
{
    json_t *records = json_array(), *tags = json_object();
    struct report_input in = {.title = "crucible eval report", .records = records, .tags = tags};
    int rc = 0;

    for (size_t i = 0; i < ev->written; i++) {
        const struct job *jb = &ev->jobs[i];
        json_t *rec = jb->record ? json_loads(jb->record, 0, NULL) : NULL;
        json_t *tg = json_object_get(jb->task->json, "tags");
        if (rec)
            json_array_append_new(records, rec);
        if (json_is_array(tg))
            json_object_set(tags, jb->task->id, tg);
    }
    if (report_save(a->report_path, "crucible eval: --report", report_html_write, &in) < 0)
        rc = 1;
    json_decref(records);
    json_decref(tags);
    return rc;
}

static void jobs_free(struct eval *ev)
{
    for (size_t i = 0; i < ev->njobs; i++) {
        free(ev->jobs[i].program);
        free(ev->jobs[i].record);
    }
    free(ev->jobs);
}

int cmd_eval(int argc, char **argv)
{
    struct eval_args a;
    struct eval ev;
    struct task *tasks = NULL;
    size_t ntasks = 0;
    struct workers_outcome wo = {0};
    int bad, more, status;

    memset(&ev, 0, sizeof(ev));
    verify_opts_default(&ev.opts);
    if ((status = parse_args(argc, argv, &a, &ev)) != 0)
        return status;
    if (a.help) {
        eval_usage(stdout);
        return 0;
    }
    if ((status = load_tasks(&a, &ev, &tasks, &ntasks, &bad)) != 0)
        goto out_tasks;
    status = 2;
    more = a.reference ? reference_jobs(tasks, ntasks, a.db_path ? a.db_path : a.tasks_path, &ev)
                       : load_solutions(a.sol_path, tasks, ntasks, &ev);
    if (more < 0)
        goto out_jobs;
    bad += more;
    if (ev.njobs == 0) {
        fprintf(stderr, "crucible eval: nothing to verify\n");
        goto out_jobs;
    }
    if (run_jobs(&a, &ev, &wo) < 0)
        goto out_jobs;
    status = report(&a, &ev, bad, &wo);
    if (a.report_path && write_report(&a, &ev) != 0 && status == 0)
        status = 1;
out_jobs:
    jobs_free(&ev);
out_tasks:
    task_list_free(tasks, ntasks);
    store_close(ev.store);
    workers_reraise(wo.signal);
    return status;
}
