/*
 * cmd_verify.c — `crucible verify --task TASK.json --solution FILE|- [...]`: one solution
 * against one task; prints the verification record.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "library/store.h"
#include "judge/verify.h"

static void verify_usage(FILE *f)
{
    fprintf(
        f,
        "usage: crucible verify (--task FILE [--task-id ID] | --db DB --task-id ID [--model M])\n"
        "                       (--solution FILE | --completion FILE | --response FILE)\n"
        "                       [--repeats N] [--reward binary|fraction] [--pretty]\n\n"
        "Verifies one solution against one task (docs/TASKS.md) in sandboxes and prints the\n"
        "verification record as JSON. FILE may be '-' for standard input.\n\n"
        "  --task FILE        a task as JSON, or a JSONL file of tasks with --task-id\n"
        "  --task-id ID       which task of the file (or of the library)\n"
        "  --db DB            a task library (crucible tasks import): the task comes from it\n"
        "                     and the outcome is recorded in its statistics\n"
        "  --model M          the model tag the outcome is recorded under (default: default)\n"
        "  --solution FILE    a full program in the task's language\n"
        "  --completion FILE  code appended to the task's prompt (HumanEval samples)\n"
        "  --response FILE    a raw model response; its last fenced block is the code\n"
        "  --repeats N        run every test N times (1..100, default 1); flaky when they "
        "disagree\n"
        "  --reward POLICY    binary (default: 1 only if every test passes) or fraction\n"
        "  --pretty           indent the JSON\n\n"
        "exit status: 0 accepted; 1 not accepted; 2 crucible failed (infra_error) or bad "
        "usage.\n");
}

/* slurp(path) — a whole file (or stdin for "-") as a NUL-terminated string; NULL + message. */
static char *slurp(const char *path, const char *what)
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

int cmd_verify(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"task", required_argument, NULL, 't'},     {"task-id", required_argument, NULL, 'i'},
        {"solution", required_argument, NULL, 's'}, {"completion", required_argument, NULL, 'c'},
        {"response", required_argument, NULL, 'r'}, {"repeats", required_argument, NULL, 'n'},
        {"reward", required_argument, NULL, 'w'},   {"pretty", no_argument, NULL, 'p'},
        {"db", required_argument, NULL, 'd'},       {"model", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    const char *task_path = NULL, *task_id = NULL, *sol_path = NULL, *db_path = NULL, *model = NULL;
    struct store *store = NULL;
    struct task stored;
    bool have_stored = false;
    enum solution_kind kind = SOLUTION_PROGRAM;
    struct verify_opts o;
    struct sandbox_runtime rt;
    struct errbuf err = {{0}};
    struct task *tasks = NULL;
    size_t ntasks = 0;
    const struct task *t;
    struct verify_result vr;
    struct image img;
    char *text = NULL, *program = NULL, how[128];
    bool pretty = false;
    int c, status = 2, nsol = 0, bad;
    uint64_t u;

    verify_opts_default(&o);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (c) {
        case 't':
            task_path = optarg;
            break;
        case 'i':
            task_id = optarg;
            break;
        case 's':
        case 'c':
        case 'r':
            sol_path = optarg;
            kind = c == 's' ? SOLUTION_PROGRAM : c == 'c' ? SOLUTION_COMPLETION : SOLUTION_RESPONSE;
            nsol++;
            break;
        case 'n':
            if (!util_parse_u64(optarg, 1, 100, &u)) {
                fprintf(stderr,
                        "crucible verify: --repeats must be a whole number from 1 to "
                        "100, not '%s'\n",
                        optarg);
                return 2;
            }
            o.repeats = (unsigned)u;
            break;
        case 'w':
            if (!reward_policy_parse(optarg, &o.reward)) {
                fprintf(stderr,
                        "crucible verify: --reward must be 'binary' or 'fraction', not "
                        "'%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'p':
            pretty = true;
            break;
        case 'd':
            db_path = optarg;
            break;
        case 'm':
            if (!*optarg || strlen(optarg) > 200) {
                fprintf(stderr, "crucible verify: --model needs a tag of 1 to 200 characters\n");
                return 2;
            }
            model = optarg;
            break;
        case 'h':
            verify_usage(stdout);
            return 0;
        case '?':
        default:
            fprintf(stderr,
                    "crucible verify: unknown option or missing argument '%s' (see "
                    "'crucible verify --help')\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "crucible verify: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!task_path == !db_path || nsol != 1) {
        fprintf(stderr, "crucible verify: needs --task or --db (one of them), and exactly one "
                        "of --solution, --completion, --response\n");
        return 2;
    }
    if (model && !db_path) {
        fprintf(stderr, "crucible verify: --model applies with --db only (it tags the "
                        "recorded outcome)\n");
        return 2;
    }
    if (db_path) {
        if (!task_id) {
            fprintf(stderr, "crucible verify: --db needs --task-id ID\n");
            return 2;
        }
        if (store_open(db_path, false, &store, &err) < 0 ||
            store_task_load(store, task_id, NULL, &stored, &err) < 0) {
            fprintf(stderr, "crucible verify: %s\n", err.msg);
            if (store)
                task_release(&stored);
            store_close(store);
            return 2;
        }
        have_stored = true;
        t = &stored;
        goto have_task;
    }
    bad = task_list_load(task_path, &tasks, &ntasks, stderr, &err);
    if (bad < 0) {
        fprintf(stderr, "crucible verify: %s\n", err.msg);
        return 2;
    }
    if (ntasks == 0) {
        if (bad == 0) /* the bad lines have been named already */
            fprintf(stderr, "crucible verify: no task in '%s'\n", task_path);
        goto out_tasks;
    }
    t = task_id ? task_list_find(tasks, ntasks, task_id) : ntasks == 1 ? &tasks[0] : NULL;
    if (!t) {
        if (task_id && bad)
            ; /* the task may be one of the bad lines, named above */
        else if (task_id)
            fprintf(stderr, "crucible verify: no task '%s' in '%s'\n", task_id, task_path);
        else
            fprintf(stderr, "crucible verify: '%s' holds %zu tasks: name one with --task-id\n",
                    task_path, ntasks);
        goto out_tasks;
    }
have_task:
    text = slurp(sol_path, "solution");
    if (!text)
        goto out_tasks;
    program = verify_program_text(t, NULL, kind, text, how, sizeof(how));
    if (!program) {
        fprintf(stderr, "crucible verify: out of memory\n");
        goto out_tasks;
    }
    if (sandbox_runtime_init(&rt, &err) < 0 || image_resolve("host", &img, &err) < 0) {
        fprintf(stderr, "crucible verify: %s\n", err.msg);
        goto out_tasks;
    }
    o.image = &img;
    verify_run(&rt, t, program, &o, &vr);
    {
        json_t *j = verify_result_to_json(t, &vr);
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
    if (store && store_record(store, t->id, t->version, model, &vr, &err) < 0) {
        fprintf(stderr, "crucible verify: the outcome was not recorded: %s\n", err.msg);
        vr.verdict = VERDICT_INFRA_ERROR; /* exit 2: the caller asked for a record */
    }
    if (vr.verdict == VERDICT_INFRA_ERROR && vr.message[0])
        fprintf(stderr, "crucible verify: %s\n", vr.message);
    status = vr.verdict == VERDICT_ACCEPTED ? 0 : vr.verdict == VERDICT_INFRA_ERROR ? 2 : 1;
    verify_result_release(&vr);
    sandbox_runtime_release(&rt);
out_tasks:
    free(text);
    free(program);
    task_list_free(tasks, ntasks);
    if (have_stored)
        task_release(&stored);
    store_close(store);
    return status;
}
