/*
 * cmd_tasks.c — `crucible tasks SUBCOMMAND`. `tasks convert --from FORMAT PATH` writes the
 * converted tasks as JSONL on stdout (one compact object per line, keys in a fixed
 * order) and reports bad input records on stderr, one line each (convert.h); for Kattis
 * packages also one line per converted package. Kattis time limits are calibrated by
 * running accepted submissions in sandboxes unless --no-calibrate is given.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cmd_tasks.h"
#include "library/convert.h"
#include "sandbox/image.h"
#include "sandbox/sandbox.h"

static void tasks_usage(FILE *f)
{
    fprintf(f, "usage: crucible tasks SUBCOMMAND [OPTIONS]\n\n"
               "subcommands:\n"
               "  convert    convert a public dataset to native tasks (JSONL on stdout)\n"
               "  import     add tasks to a task library (--db DB, SQLite)\n"
               "  list       the library's tasks with status, pass rate and bucket\n"
               "  show       one task, its versions and statistics\n"
               "  export     the library's current tasks as JSONL\n"
               "  validate   run references and stubs: valid, broken, flaky, weak_tests\n"
               "  stats      counts by status and difficulty bucket, a pass-rate histogram\n"
               "  sample     draw tasks whose pass rate lies in a band (curriculum)\n\n"
               "'crucible tasks SUBCOMMAND --help' lists the options of a subcommand.\n");
}

static void convert_usage(FILE *f)
{
    fprintf(f,
            "usage: crucible tasks convert --from FORMAT [--challenge] [--no-calibrate] PATH\n"
            "       > tasks.jsonl\n\n"
            "Converts a public benchmark to native tasks (docs/TASKS.md): one JSON object per\n"
            "line on stdout. Bad input records are named on stderr (FILE:LINE) and skipped.\n\n"
            "formats:\n"
            "  humaneval        HumanEval.jsonl[.gz] (OpenAI)\n"
            "  mbpp             mbpp.jsonl (Google Research)\n"
            "  mbpp-sanitized   sanitized-mbpp.json (a JSON array, or JSONL)\n"
            "  humaneval-x      humaneval_<lang>.jsonl[.gz] (lang: cpp go java js python rust),\n"
            "                   or a directory holding them\n"
            "  kattis           a problem package (problem.yaml; data/ with .in and .ans\n"
            "                   files), or a directory tree of them; legacy and 2023-07\n"
            "                   layouts (docs/DATASETS.md); one line per package on stderr\n"
            "                   says what was made of it\n\n"
            "options:\n"
            "  --from FORMAT    the input's format (required)\n"
            "  --challenge      mbpp: add challenge_test_list as tests challenge_1, ...\n"
            "  --no-calibrate   kattis: do not run the accepted submissions to set a time\n"
            "                   limit where the package gives none (.timelimit, time_limit);\n"
            "                   the statement's limit or a default is used, and noted\n"
            "  -h, --help       this text\n\n"
            "exit status: 0 everything converted; 1 some input records were bad (the others\n"
            "were written); 2 the command line is wrong or the input cannot be read.\n");
}

/* Where the tasks go, and the first write error (errno), if any. */
struct sink {
    FILE *out;
    int error;
};

/* emit_line — prints one task as a line of compact JSON. */
static int emit_line(json_t *task, void *arg)
{
    struct sink *k = arg;

    if (json_dumpf(task, k->out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15)) ||
        fputc('\n', k->out) == EOF) {
        k->error = errno ? errno : EIO;
        return -k->error;
    }
    return 0;
}

static int tasks_convert(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"from", required_argument, NULL, 'f'},
        {"challenge", no_argument, NULL, 'c'},
        {"no-calibrate", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct convert_opts o = {0};
    struct sandbox_runtime rt;
    struct image img;
    bool calibrate = true, have_rt = false;
    struct convert_stats st;
    struct errbuf err = {{0}};
    struct sink sink = {.out = stdout};
    const char *from = NULL;
    int c, e;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            from = optarg;
            break;
        case 'c':
            o.challenge = true;
            break;
        case 'n':
            calibrate = false;
            break;
        case 'h':
            convert_usage(stdout);
            return 0;
        default:
            fprintf(stderr,
                    "crucible tasks convert: unknown option or missing value '%s' (see "
                    "'crucible tasks convert --help')\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if (!from) {
        fprintf(stderr, "crucible tasks convert: --from FORMAT is required (%s)\n",
                convert_format_names());
        return 2;
    }
    if (!convert_format_find(from, &o.format)) {
        fprintf(stderr, "crucible tasks convert: unknown format '%s' (want %s)\n", from,
                convert_format_names());
        return 2;
    }
    if (optind == argc) {
        fprintf(stderr, "crucible tasks convert: missing PATH\n");
        return 2;
    }
    if (argc - optind > 1) {
        fprintf(stderr, "crucible tasks convert: one PATH only, got also '%s'\n", argv[optind + 1]);
        return 2;
    }
    if (o.format == CONVERT_KATTIS && calibrate) {
        if (sandbox_runtime_init(&rt, &err) < 0) {
            fprintf(stderr, "crucible tasks convert: cannot calibrate time limits: %s\n", err.msg);
            return 2;
        }
        have_rt = true;
        if (image_resolve("host", &img, &err) < 0) {
            fprintf(stderr, "crucible tasks convert: cannot calibrate time limits: %s\n", err.msg);
            sandbox_runtime_release(&rt);
            return 2;
        }
        o.rt = &rt;
        o.image = &img;
    }
    errno = 0;
    e = convert_path(&o, argv[optind], emit_line, &sink, stderr, &st, &err);
    if (have_rt)
        sandbox_runtime_release(&rt);
    if (!sink.error && (fflush(stdout) == EOF || ferror(stdout)))
        sink.error = errno ? errno : EIO;
    if (sink.error) {
        fprintf(stderr, "crucible tasks convert: cannot write the output: %s\n",
                strerror(sink.error));
        return 2;
    }
    if (e) {
        fprintf(stderr, "crucible tasks convert: %s\n", err.msg);
        return 2;
    }
    if (st.bad) {
        fprintf(stderr,
                "crucible tasks convert: %zu bad input record%s skipped, %zu task%s "
                "written\n",
                st.bad, st.bad == 1 ? "" : "s", st.tasks, st.tasks == 1 ? "" : "s");
        return 1;
    }
    return 0;
}

int cmd_tasks(int argc, char **argv)
{
    int r;

    if (argc < 2) {
        tasks_usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        tasks_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "convert") == 0)
        return tasks_convert(argc - 1, argv + 1);
    if ((r = cmd_tasks_library(argc - 1, argv + 1)) >= 0)
        return r;
    fprintf(stderr, "crucible tasks: unknown subcommand '%s' (see 'crucible tasks --help')\n",
            argv[1]);
    return 2;
}
