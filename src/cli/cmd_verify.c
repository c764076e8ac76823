/*
 * cmd_verify.c — `crucible verify --task TASK.json --solution FILE|- [...]`: one solution
 * against one task; prints the verification record.
 *
 * In four steps: the command line (parse_args), the task (load_task: a task file or the
 * library), the solution and its language (read_solution, solution_language), then the
 * run and its report (print_record, exit_status).
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
#include "library/store.h"
#include "judge/verify.h"

/* What the command line asks for. */
struct verify_args {
    const char *task_path, *task_id, *db_path, *model;
    const char *sol_path;
    enum solution_kind kind;
    int nsol;                /* how many of --solution, --completion, --response */
    const struct lang *lang; /* --language, or NULL */
    struct verify_opts opts;
    bool pretty, help;
};

/* The task to verify against, and what holds it. */
struct verify_task {
    struct store *store; /* --db */
    struct task stored;
    bool have_stored;
    struct task *tasks; /* --task */
    size_t ntasks;
    const struct task *t;
};

static void verify_usage(FILE *f)
{
    fprintf(
        f,
        "usage: crucible verify (--task FILE [--task-id ID] | --db DB --task-id ID [--model M])\n"
        "                       (--solution FILE | --completion FILE | --response FILE)\n"
        "                       [--language L] [--repeats N] [--reward binary|fraction] "
        "[--pretty]\n\n"
        "Verifies one solution against one task (docs/TASKS.md) in sandboxes and prints the\n"
        "verification record as JSON. FILE may be '-' for standard input.\n\n"
        "  --task FILE        a task as JSON, or a JSONL file of tasks with --task-id\n"
        "  --task-id ID       which task of the file (or of the library)\n"
        "  --db DB            a task library (crucible tasks import): the task comes from it\n"
        "                     and the outcome is recorded in its statistics\n"
        "  --model M          the model tag the outcome is recorded under (default: default)\n"
        "  --solution FILE    a full program (in the task's language unless said otherwise)\n"
        "  --completion FILE  code appended to the task's prompt (HumanEval samples)\n"
        "  --response FILE    a raw model response; its last fenced block is the code\n"
        "  --language L       the solution's language (python, c, cpp, java, ...): stdio and\n"
        "                     interactive tasks take a solution in any language; assert\n"
        "                     and command tasks only their own\n"
        "  --repeats N        run every test N times (1..100, default 1); flaky when they "
        "disagree\n"
        "  --reward POLICY    binary (default: 1 only if every test passes) or fraction\n"
        "  --writable-root    run every task with a writable root (as the task field does)\n"
        "  --pretty           indent the JSON\n\n"
        "The solution's language: --language when given; else, for a stdio or interactive\n"
        "task and "
        "--solution FILE, the language FILE's extension names (.py, .c, .cpp, .cc, .cxx,\n"
        ".java, .js, .sh, .go, .rs, .ts, .php, .cs, .rb, .pl, .lua, .R, .rkt, .d, .v, .sv,\n"
        ".scala, .kts); else the task's. The record's \"language\" says which.\n\n"
        "exit status: 0 accepted; 1 not accepted; 2 crucible failed (infra_error) or bad "
        "usage (a language the task cannot take included).\n");
}

/* usage_error(fmt, ...) — one line on stderr; returns 2 (the exit status). */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "crucible verify: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

/* parse_args(argc, argv, a) — fills a from the command line; 0, or 2 after saying what is
 * wrong. a->help: --help was asked for (nothing else is checked). */
static int parse_args(int argc, char **argv, struct verify_args *a)
{
    static const struct option longopts[] = {
        {"task", required_argument, NULL, 't'},
        {"task-id", required_argument, NULL, 'i'},
        {"solution", required_argument, NULL, 's'},
        {"completion", required_argument, NULL, 'c'},
        {"response", required_argument, NULL, 'r'},
        {"repeats", required_argument, NULL, 'n'},
        {"reward", required_argument, NULL, 'w'},
        {"pretty", no_argument, NULL, 'p'},
        {"db", required_argument, NULL, 'd'},
        {"model", required_argument, NULL, 'm'},
        {"language", required_argument, NULL, 'l'},
        {"writable-root", no_argument, NULL, JUDGING_OPT_WRITABLE_ROOT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct errbuf err = {{0}};
    int c, r;

    memset(a, 0, sizeof(*a));
    a->kind = SOLUTION_PROGRAM;
    verify_opts_default(&a->opts);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            a->task_path = optarg;
            break;
        case 'i':
            a->task_id = optarg;
            break;
        case 's':
        case 'c':
        case 'r':
            a->sol_path = optarg;
            a->kind = c == 's'   ? SOLUTION_PROGRAM
                      : c == 'c' ? SOLUTION_COMPLETION
                                 : SOLUTION_RESPONSE;
            a->nsol++;
            break;
        case 'p':
            a->pretty = true;
            break;
        case 'd':
            a->db_path = optarg;
            break;
        case 'l':
            if (!(a->lang = judging_lang_named(optarg, &err)))
                return usage_error("--language: %s", err.msg);
            break;
        case 'h':
            a->help = true;
            return 0;
        case '?':
        default:
            if ((r = judging_option(c, optarg, &a->opts, &a->model, &err)) < 0)
                return usage_error("%s", err.msg);
            if (r > 0)
                break;
            return usage_error("unknown option or missing argument '%s' (see 'crucible verify "
                               "--help')",
                               argv[optind - 1]);
        }
    }
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    if (!a->task_path == !a->db_path || a->nsol != 1)
        return usage_error("needs --task or --db (one of them), and exactly one of --solution, "
                           "--completion, --response");
    if (a->model && !a->db_path)
        return usage_error("--model applies with --db only (it tags the recorded outcome)");
    if (a->db_path && !a->task_id)
        return usage_error("--db needs --task-id ID");
    return 0;
}

static void verify_task_release(struct verify_task *vt)
{
    task_list_free(vt->tasks, vt->ntasks);
    if (vt->have_stored)
        task_release(&vt->stored);
    store_close(vt->store);
}

/* load_task(a, vt) — the task from the library (--db) or the task file; 0, or 2 after
 * saying why (vt released either way on failure). */
static int load_task(const struct verify_args *a, struct verify_task *vt)
{
    struct errbuf err = {{0}};
    int bad;

    memset(vt, 0, sizeof(*vt));
    if (a->db_path) {
        if (store_open(a->db_path, false, &vt->store, &err) < 0)
            goto out_error;
        vt->have_stored = true; /* released even when only partly loaded */
        if (store_task_load(vt->store, a->task_id, NULL, &vt->stored, &err) < 0)
            goto out_error;
        vt->t = &vt->stored;
        return 0;
    }
    bad = task_list_load(a->task_path, &vt->tasks, &vt->ntasks, stderr, &err);
    if (bad < 0)
        goto out_error;
    if (vt->ntasks == 0) {
        if (bad == 0) /* the bad lines have been named already */
            fprintf(stderr, "crucible verify: no task in '%s'\n", a->task_path);
        goto out_release;
    }
    vt->t = a->task_id        ? task_list_find(vt->tasks, vt->ntasks, a->task_id)
            : vt->ntasks == 1 ? &vt->tasks[0]
                              : NULL;
    if (vt->t)
        return 0;
    if (a->task_id && bad)
        ; /* the task may be one of the bad lines, named above */
    else if (a->task_id)
        fprintf(stderr, "crucible verify: no task '%s' in '%s'\n", a->task_id, a->task_path);
    else
        fprintf(stderr, "crucible verify: '%s' holds %zu tasks: name one with --task-id\n",
                a->task_path, vt->ntasks);
    goto out_release;
out_error:
    fprintf(stderr, "crucible verify: %s\n", err.msg);
out_release:
    verify_task_release(vt);
    return 2;
}

/* solution_language(a, t, out) — the solution's language: --language, else (a stdio or
 * interactive task, --solution FILE) the one FILE's extension names, else NULL (the task's). 0, or
 * 2 after saying why t cannot take it. */
static int solution_language(const struct verify_args *a, const struct task *t,
                             const struct lang **out)
{
    struct errbuf err = {{0}};

    *out = a->lang;
    if (!*out && a->kind == SOLUTION_PROGRAM && verify_any_language(t))
        *out = judging_lang_of_file(a->sol_path);
    if (verify_language_check(t, *out, &err) < 0)
        return usage_error("%s", err.msg);
    return 0;
}

/* read_solution(path, what) — a whole file (or stdin for "-") as a NUL-terminated string;
 * NULL after saying why. */
static char *read_solution(const char *path, const char *what)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
    char *buf;
    size_t len;
    int r;

    if (!f) {
        fprintf(stderr, "crucible verify: %s: cannot open '%s': %s\n", what, path, strerror(errno));
        return NULL;
    }
    r = util_read_fd(fileno(f), &buf, &len, 64 << 20);
    if (f != stdin)
        fclose(f);
    if (r < 0) {
        fprintf(stderr, "crucible verify: %s: cannot read '%s': %s\n", what, path,
                r == -EFBIG ? "larger than 64 MiB" : strerror(-r));
        return NULL;
    }
    if (strlen(buf) != len) {
        fprintf(stderr, "crucible verify: %s: '%s' contains NUL bytes\n", what, path);
        free(buf);
        return NULL;
    }
    return buf;
}

/* print_record(t, vr, kind, how, pretty) — the verification record on stdout, with what
 * was extracted when the solution was not a full program. */
static void print_record(const struct task *t, const struct verify_result *vr,
                         enum solution_kind kind, const char *how, bool pretty)
{
    json_t *j = verify_result_to_json(t, vr);
    char *s;

    if (j && kind != SOLUTION_PROGRAM)
        json_object_set_new(j, "extracted", json_string(how));
    s = j ? json_dumps(j, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_PRESERVE_ORDER |
                              JSON_REAL_PRECISION(9))
          : NULL;
    if (s)
        puts(s);
    else
        fprintf(stderr, "crucible verify: cannot encode the record\n");
    free(s);
    json_decref(j);
}

/* record_and_report(vt, a, vr) — records the outcome in the library (--db), says why on
 * infra_error, and gives the exit status: 0 accepted, 1 not, 2 crucible failed. */
static int record_and_report(const struct verify_task *vt, const struct verify_args *a,
                             struct verify_result *vr)
{
    struct errbuf err = {{0}};

    if (vt->store && store_record(vt->store, vt->t->id, vt->t->version, a->model, vr, &err) < 0) {
        fprintf(stderr, "crucible verify: the outcome was not recorded: %s\n", err.msg);
        vr->verdict = VERDICT_INFRA_ERROR; /* exit 2: the caller asked for a record */
    }
    if (vr->verdict == VERDICT_INFRA_ERROR && vr->message[0])
        fprintf(stderr, "crucible verify: %s\n", vr->message);
    return vr->verdict == VERDICT_ACCEPTED ? 0 : vr->verdict == VERDICT_INFRA_ERROR ? 2 : 1;
}

int cmd_verify(int argc, char **argv)
{
    struct verify_args a;
    struct verify_task vt;
    struct sandbox_runtime rt;
    struct errbuf err = {{0}};
    struct verify_result vr;
    struct image img;
    char *text = NULL, *program = NULL, how[128];
    int status;

    if ((status = parse_args(argc, argv, &a)) != 0)
        return status;
    if (a.help) {
        verify_usage(stdout);
        return 0;
    }
    if ((status = load_task(&a, &vt)) != 0)
        return status;
    status = 2;
    if (solution_language(&a, vt.t, &a.opts.lang) != 0 ||
        !(text = read_solution(a.sol_path, "solution")))
        goto out_task;
    program = verify_program_text(vt.t, a.opts.lang, a.kind, text, how, sizeof(how));
    if (!program) {
        fprintf(stderr, "crucible verify: out of memory\n");
        goto out_task;
    }
    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &img, &err) < 0) {
        fprintf(stderr, "crucible verify: %s\n", err.msg);
        goto out_task;
    }
    a.opts.image = &img;
    verify_run(&rt, vt.t, program, &a.opts, &vr);
    print_record(vt.t, &vr, a.kind, how, a.pretty);
    status = record_and_report(&vt, &a, &vr);
    verify_result_release(&vr);
    sandbox_runtime_release(&rt);
out_task:
    free(text);
    free(program);
    verify_task_release(&vt);
    return status;
}
