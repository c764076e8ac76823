/*
 * cmd_library.c — the task library's subcommands: `crucible tasks import | list | show |
 * export | validate | stats | sample --db DB ...` (docs/LIBRARY.md). Each opens the
 * SQLite library (store.h), does one thing, and prints a table for people or, with
 * --json, one JSON object per line.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd_tasks.h"
#include "cli/report.h"
#include "library/convert.h"
#include "cli/workers.h"
#include "judge/pyserver.h"
#include "library/rng.h"
#include "library/store.h"
#include "strset.h"
#include "library/validate.h"

#define MAX_TAGS 32

/* The options every library subcommand shares; which ones apply is per subcommand. */
struct lib_opts {
    const char *cmd; /* "import", ... for messages */
    const char *db;
    struct store_filter filter;
    const char *tags[MAX_TAGS];
    bool json;
    bool status_given, exclude_given;
};

enum {
    OPT_DB = 256,
    OPT_TAG,
    OPT_SOURCE,
    OPT_LANGUAGE,
    OPT_STATUS,
    OPT_EXCLUDE,
    OPT_MIN_PASS,
    OPT_MAX_PASS,
    OPT_MODEL,
    OPT_JSON,
    OPT_FROM,
    OPT_CHALLENGE,
    OPT_REPEATS,
    OPT_ALL,
    OPT_SEED,
    OPT_EXPLORE,
    OPT_REPORT,
    OPT_QUIET,
    OPT_PREFIX,
    OPT_NO_FORK_SERVER,
};

#define COMMON_OPTS                                                                                \
    {"db", required_argument, NULL, OPT_DB}, {"json", no_argument, NULL, OPT_JSON},                \
    {                                                                                              \
        "help", no_argument, NULL, 'h'                                                             \
    }
#define FILTER_OPTS                                                                                \
    {"tag", required_argument, NULL, OPT_TAG}, {"source", required_argument, NULL, OPT_SOURCE},    \
        {"language", required_argument, NULL, OPT_LANGUAGE},                                       \
        {"status", required_argument, NULL, OPT_STATUS},                                           \
        {"exclude", required_argument, NULL, OPT_EXCLUDE},                                         \
        {"min-pass", required_argument, NULL, OPT_MIN_PASS},                                       \
        {"max-pass", required_argument, NULL, OPT_MAX_PASS},                                       \
        {"model", required_argument, NULL, OPT_MODEL},                                             \
    {                                                                                              \
        "id-prefix", required_argument, NULL, OPT_PREFIX                                           \
    }

static const char filter_help[] =
    "  --tag T            tasks carrying tag T (repeat: all of them)\n"
    "  --source S         tasks from source S (the task's \"source\", else its id up to '/')\n"
    "  --language L       tasks in language L\n"
    "  --id-prefix P      tasks whose id starts with P\n"
    "  --status LIST      only these statuses (new,valid,broken,flaky,weak_tests,no_reference)\n"
    "  --exclude LIST     not these statuses ('none' for none)\n"
    "  --min-pass A       estimated pass rate at least A (0..1)\n"
    "  --max-pass B       estimated pass rate at most B (0..1)\n"
    "  --model M          statistics of model tag M (default: all models together)\n";

/* filter_option(o, c, arg) — takes a common or filter option; 1 taken, 0 not ours, -1 bad
 * (reported). */
static int filter_option(struct lib_opts *o, int c, const char *arg)
{
    struct errbuf err = {{0}};
    double d;

    switch (c) {
    case OPT_DB:
        o->db = arg;
        return 1;
    case OPT_JSON:
        o->json = true;
        return 1;
    case OPT_TAG:
        if (o->filter.ntags == MAX_TAGS) {
            fprintf(stderr, "crucible tasks %s: at most %d --tag options\n", o->cmd, MAX_TAGS);
            return -1;
        }
        o->tags[o->filter.ntags++] = arg;
        o->filter.tags = o->tags;
        return 1;
    case OPT_SOURCE:
        o->filter.source = arg;
        return 1;
    case OPT_LANGUAGE:
        if (!lang_find(arg)) {
            fprintf(stderr, "crucible tasks %s: unknown language '%s'\n", o->cmd, arg);
            return -1;
        }
        o->filter.language = lang_find(arg)->name;
        return 1;
    case OPT_PREFIX:
        o->filter.id_prefix = arg;
        return 1;
    case OPT_MODEL:
        if (!*arg) {
            fprintf(stderr, "crucible tasks %s: --model needs a non-empty tag\n", o->cmd);
            return -1;
        }
        o->filter.model = arg;
        return 1;
    case OPT_STATUS:
    case OPT_EXCLUDE:
        if (store_status_mask_parse(
                arg, c == OPT_STATUS ? &o->filter.status_mask : &o->filter.exclude_mask, &err) <
            0) {
            fprintf(stderr, "crucible tasks %s: --%s: %s\n", o->cmd,
                    c == OPT_STATUS ? "status" : "exclude", err.msg);
            return -1;
        }
        if (c == OPT_STATUS)
            o->status_given = true;
        else
            o->exclude_given = true;
        return 1;
    case OPT_MIN_PASS:
    case OPT_MAX_PASS:
        if (!util_parse_double(arg, 0, 1, &d)) {
            fprintf(stderr, "crucible tasks %s: --%s must be a number from 0 to 1, not '%s'\n",
                    o->cmd, c == OPT_MIN_PASS ? "min-pass" : "max-pass", arg);
            return -1;
        }
        if (!o->filter.band) {
            o->filter.band = true;
            o->filter.min_pass = 0;
            o->filter.max_pass = 1;
        }
        if (c == OPT_MIN_PASS)
            o->filter.min_pass = d;
        else
            o->filter.max_pass = d;
        return 1;
    default:
        return 0;
    }
}

/* opts_done(o) — checks what all subcommands need; false after reporting. */
static bool opts_done(struct lib_opts *o)
{
    if (!o->db)
        o->db = getenv("CRUCIBLE_DB");
    if (!o->db || !*o->db) {
        fprintf(stderr, "crucible tasks %s: --db PATH is required (or set CRUCIBLE_DB)\n", o->cmd);
        return false;
    }
    if (o->filter.band && o->filter.min_pass > o->filter.max_pass) {
        fprintf(stderr, "crucible tasks %s: --min-pass %.3g is above --max-pass %.3g\n", o->cmd,
                o->filter.min_pass, o->filter.max_pass);
        return false;
    }
    return true;
}

static void bad_option(const struct lib_opts *o, char **argv)
{
    fprintf(stderr,
            "crucible tasks %s: unknown option or missing value '%s' (see 'crucible tasks %s "
            "--help')\n",
            o->cmd, argv[optind - 1], o->cmd);
}

/* take_option(o, c, argv) — a common or filter option into o; false after naming an
 * unknown option or a bad value. */
static bool take_option(struct lib_opts *o, int c, char **argv)
{
    int r = filter_option(o, c, optarg);

    if (r == 0)
        bad_option(o, argv);
    return r > 0;
}

/* no_operands(o, argc, argv) — false after naming the first unexpected argument. */
static bool no_operands(const struct lib_opts *o, int argc, char **argv)
{
    if (optind < argc) {
        fprintf(stderr, "crucible tasks %s: unexpected argument '%s'\n", o->cmd, argv[optind]);
        return false;
    }
    return true;
}

/* open_store(o) — the library; only import creates a new one (a mistyped --db elsewhere
 * is an error, not a new empty library). */
static struct store *open_store(const struct lib_opts *o)
{
    struct errbuf err = {{0}};
    struct store *s;

    if (store_open(o->db, strcmp(o->cmd, "import") == 0, &s, &err) < 0) {
        fprintf(stderr, "crucible tasks %s: %s\n", o->cmd, err.msg);
        return NULL;
    }
    return s;
}

static void print_json_line(json_t *j)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    if (s)
        puts(s);
    free(s);
}

/* ---- import ------------------------------------------------------------------------ */

struct importer {
    struct store *store;
    struct strset seen; /* ids of this import, to refuse duplicates */
    const char *where;  /* the input's name, for messages */
    size_t counts[3];   /* by enum store_import_outcome */
    size_t bad;
    int fatal; /* a database failure: -errno */
    struct errbuf err;
};

/* import_one(im, t, line) — imports one parsed task; bad ones are reported and counted. */
static void import_one(struct importer *im, const struct task *t, size_t line)
{
    enum store_import_outcome out;
    int r = strset_add(&im->seen, t->id);

    if (r == 0) {
        fprintf(stderr, "%s:%zu: duplicate task id '%s' (an earlier line has it); skipped\n",
                im->where, line, t->id);
        im->bad++;
        return;
    }
    if (r < 0 || (r = store_import(im->store, t, &out, &im->err)) < 0) {
        if (r == -ENOMEM)
            errbuf_set(&im->err, "out of memory");
        im->fatal = r;
        return;
    }
    im->counts[out]++;
}

/* import_file(im, path) — a JSONL file of native tasks, line by line. */
static int import_file(struct importer *im, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t len;

    if (!f) {
        fprintf(stderr, "crucible tasks import: cannot open '%s': %s\n", path, strerror(errno));
        return -errno;
    }
    while (!im->fatal && (len = getline(&line, &cap, f)) >= 0) {
        struct task t;
        struct errbuf err = {{0}};
        json_error_t je;
        json_t *j;

        lineno++;
        if (strspn(line, " \t\r\n") == (size_t)len)
            continue;
        j = json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &je);
        if (!j) {
            fprintf(stderr, "%s:%zu: not valid JSON: %s\n", im->where, lineno, je.text);
            im->bad++;
            continue;
        }
        if (task_from_json(j, &t, &err) < 0) {
            fprintf(stderr, "%s:%zu: %s\n", im->where, lineno, err.msg);
            im->bad++;
        } else {
            import_one(im, &t, lineno);
        }
        task_release(&t);
        json_decref(j);
    }
    if (ferror(f)) {
        fprintf(stderr, "crucible tasks import: cannot read '%s': %s\n", path, strerror(errno));
        im->fatal = -EIO;
        errbuf_set(&im->err, "cannot read '%s'", path);
    }
    free(line);
    if (f != stdin)
        fclose(f);
    return 0;
}

struct convert_sink {
    struct importer *im;
    size_t n;
};

static int import_converted(json_t *j, void *arg)
{
    struct convert_sink *k = arg;
    struct errbuf err = {{0}};
    struct task t;

    k->n++;
    if (task_from_json(j, &t, &err) < 0) {
        fprintf(stderr, "%s: converted task %zu: %s\n", k->im->where, k->n, err.msg);
        k->im->bad++;
    } else {
        import_one(k->im, &t, k->n);
    }
    task_release(&t);
    return k->im->fatal;
}

static void import_usage(FILE *f)
{
    fprintf(f,
            "usage: crucible tasks import --db DB (FILE | --from FORMAT PATH) [--json]\n\n"
            "Adds native tasks (JSONL; '-' reads standard input) or a converted public dataset\n"
            "(formats as 'crucible tasks convert') to the library. A task whose content changed\n"
            "gets a new version (the old version's statistics are kept apart); an unchanged one\n"
            "is left alone. Bad lines and duplicate ids are named (FILE:LINE) and skipped; the\n"
            "valid tasks are committed together, in one transaction.\n\n"
            "exit status: 0 all imported; 1 some lines were bad (the rest imported); 2 usage,\n"
            "unreadable input or library failure (nothing imported).\n");
}

static int tasks_import(int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMON_OPTS,
        {"from", required_argument, NULL, OPT_FROM},
        {"challenge", no_argument, NULL, OPT_CHALLENGE},
        {NULL, 0, NULL, 0},
    };
    struct lib_opts o = {.cmd = "import"};
    struct convert_opts co = {0};
    struct importer im = {0};
    const char *from = NULL;
    int c, r, status = 2;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == OPT_FROM)
            from = optarg;
        else if (c == OPT_CHALLENGE)
            co.challenge = true;
        else if (c == 'h')
            return import_usage(stdout), 0;
        else if (c == OPT_DB || c == OPT_JSON)
            filter_option(&o, c, optarg);
        else
            return bad_option(&o, argv), 2;
    }
    if (!opts_done(&o))
        return 2;
    if (optind == argc) {
        fprintf(stderr, "crucible tasks import: missing FILE (or --from FORMAT PATH)\n");
        return 2;
    }
    if (argc - optind > 1) {
        fprintf(stderr, "crucible tasks import: one input only, got also '%s'\n", argv[optind + 1]);
        return 2;
    }
    if (from && !convert_format_find(from, &co.format)) {
        fprintf(stderr, "crucible tasks import: unknown format '%s' (want %s)\n", from,
                convert_format_names());
        return 2;
    }
    if (!(im.store = open_store(&o)))
        return 2;
    im.where = argv[optind];
    if (store_begin(im.store, &im.err) < 0) {
        fprintf(stderr, "crucible tasks import: %s\n", im.err.msg);
        goto out;
    }
    if (from) {
        struct convert_sink k = {.im = &im};
        struct convert_stats st;
        struct errbuf err = {{0}};
        r = convert_path(&co, argv[optind], import_converted, &k, stderr, &st, &err);
        im.bad += st.bad;
        if (r < 0 && !im.fatal) {
            fprintf(stderr, "crucible tasks import: %s\n", err.msg);
            store_rollback(im.store);
            goto out;
        }
    } else if (import_file(&im, argv[optind]) < 0) {
        store_rollback(im.store);
        goto out;
    }
    if (im.fatal) {
        fprintf(stderr, "crucible tasks import: %s; nothing imported\n", im.err.msg);
        store_rollback(im.store);
        goto out;
    }
    if (store_commit(im.store, &im.err) < 0) {
        fprintf(stderr, "crucible tasks import: %s; nothing imported\n", im.err.msg);
        goto out;
    }
    if (o.json) {
        json_t *j =
            json_pack("{s:s, s:I, s:I, s:I, s:I}", "input", argv[optind], "new",
                      (json_int_t)im.counts[STORE_IMPORT_NEW], "changed",
                      (json_int_t)im.counts[STORE_IMPORT_CHANGED], "unchanged",
                      (json_int_t)im.counts[STORE_IMPORT_UNCHANGED], "bad", (json_int_t)im.bad);
        print_json_line(j);
        json_decref(j);
    } else {
        printf("%s: %zu new, %zu changed (new version), %zu unchanged, %zu bad\n", argv[optind],
               im.counts[STORE_IMPORT_NEW], im.counts[STORE_IMPORT_CHANGED],
               im.counts[STORE_IMPORT_UNCHANGED], im.bad);
    }
    status = im.bad ? 1 : 0;
out:
    strset_release(&im.seen);
    store_close(im.store);
    return status;
}

/* ---- list, export ------------------------------------------------------------------ */

struct lister {
    const struct lib_opts *o;
    struct store *store;
    size_t n, limit;
    int error;
};

static void table_header(void)
{
    printf("%-28s %-10s %-12s %-8s %9s %7s %-18s %-8s\n", "id", "language", "status", "attempts",
           "accepted", "pass", "interval (90%)", "bucket");
}

static void table_row(const struct store_task *row)
{
    char iv[32];

    snprintf(iv, sizeof(iv), "%.2f-%.2f", row->est.lo, row->est.hi);
    printf("%-28s %-10s %-12s %8lu %9lu %7.3f %-18s %-8s\n", row->id, row->language,
           store_status_name(row->status), row->attempts, row->accepted, row->est.mean, iv,
           store_bucket_name(row->bucket));
}

static int list_row(const struct store_task *row, void *arg)
{
    struct lister *l = arg;

    if (l->limit && l->n == l->limit)
        return 1;
    if (l->o->json) {
        json_t *j = store_row_json(row);
        print_json_line(j);
        json_decref(j);
    } else {
        table_row(row);
    }
    l->n++;
    return 0;
}

static int export_row(const struct store_task *row, void *arg)
{
    struct lister *l = arg;
    json_t *j = store_task_body(l->store, row->id, row->version);

    if (!j) {
        fprintf(stderr, "crucible tasks export: cannot read task '%s'\n", row->id);
        l->error = 1;
        return 0;
    }
    if (json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) ||
        fputc('\n', stdout) == EOF) {
        json_decref(j);
        return -EIO;
    }
    json_decref(j);
    l->n++;
    return 0;
}

static void list_usage(FILE *f, const char *cmd)
{
    if (strcmp(cmd, "export") == 0)
        fprintf(f, "usage: crucible tasks export --db DB [FILTERS] > tasks.jsonl\n\n"
                   "Writes the current version of every matching task as native JSONL (what\n"
                   "'tasks import' reads).\n\n");
    else
        fprintf(f,
                "usage: crucible tasks list --db DB [FILTERS] [--limit N] [--json]\n\n"
                "One line per matching task, in id order: status, attempts, the estimated pass\n"
                "rate with its 90%% interval (a Beta posterior: 1 of 1 is 0.67, not 1), and the\n"
                "difficulty bucket. --json prints one object per line.\n\n");
    fprintf(f, "filters:\n%s", filter_help);
}

static int tasks_list(int argc, char **argv, bool export)
{
    static const struct option longopts[] = {
        COMMON_OPTS,
        FILTER_OPTS,
        {"limit", required_argument, NULL, 'n'},
        {NULL, 0, NULL, 0},
    };
    struct lib_opts o = {.cmd = export ? "export" : "list"};
    struct lister l = {.o = &o};
    struct errbuf err = {{0}};
    uint64_t u;
    int c, r;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hn:", longopts, NULL)) != -1) {
        if (c == 'h')
            return list_usage(stdout, o.cmd), 0;
        if (c == 'n' && !export) {
            if (!util_parse_u64(optarg, 1, UINT32_MAX, &u)) {
                fprintf(stderr,
                        "crucible tasks list: --limit must be a positive whole number, "
                        "not '%s'\n",
                        optarg);
                return 2;
            }
            l.limit = u;
            continue;
        }
        if ((r = filter_option(&o, c, optarg)) < 0)
            return 2;
        if (r == 0 || (export && c == OPT_JSON)) {
            bad_option(&o, argv);
            return 2;
        }
    }
    if (!no_operands(&o, argc, argv))
        return 2;
    if (!opts_done(&o) || !(l.store = open_store(&o)))
        return 2;
    if (!export && !o.json)
        table_header();
    r = store_list(l.store, &o.filter, export ? export_row : list_row, &l, &err);
    if (r < 0)
        fprintf(stderr, "crucible tasks %s: %s\n", o.cmd,
                r == -EIO && !err.msg[0] ? "cannot write the output" : err.msg);
    store_close(l.store);
    if (fflush(stdout) == EOF)
        r = -EIO;
    return r < 0 ? 2 : l.error ? 1 : 0;
}

/* ---- show -------------------------------------------------------------------------- */

static int tasks_show(int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMON_OPTS,
        {"model", required_argument, NULL, OPT_MODEL},
        {NULL, 0, NULL, 0},
    };
    struct lib_opts o = {.cmd = "show"};
    struct store_task row;
    struct errbuf err = {{0}};
    struct store *s;
    json_t *j, *versions, *body;
    int c, r;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            printf("usage: crucible tasks show --db DB ID [--model M] [--json]\n\n"
                   "One task: its current version's status and statistics, every version with\n"
                   "its statistics per model, and (with --json) the task itself.\n");
            return 0;
        }
        if (!take_option(&o, c, argv))
            return 2;
    }
    if (!opts_done(&o))
        return 2;
    if (argc - optind != 1) {
        fprintf(stderr, "crucible tasks show: needs exactly one task ID\n");
        return 2;
    }
    if (!(s = open_store(&o)))
        return 2;
    if ((r = store_get(s, argv[optind], o.filter.model, &row, &err)) < 0) {
        fprintf(stderr, "crucible tasks show: %s\n", err.msg);
        store_close(s);
        return r == -ENOENT ? 1 : 2;
    }
    j = store_row_json(&row);
    versions = store_versions_json(s, row.id, &err);
    body = store_task_body(s, row.id, row.version);
    if (o.json) {
        json_object_set_new(j, "version_history", versions ? versions : json_array());
        json_object_set_new(j, "task", body ? body : json_null());
        print_json_line(j);
    } else {
        size_t i;
        json_t *v;
        printf("id           %s\nversion      %s (%u in all)\nstatus       %s%s%s\n", row.id,
               row.version, row.nversions, store_status_name(row.status), row.reason[0] ? ": " : "",
               row.reason);
        printf("source       %s\nlanguage     %s\nharness      %s\ntags         %s\n", row.source,
               row.language, row.harness, row.tags);
        if (row.ref_time >= 0)
            printf("reference    %.3f s CPU (slowest test)\n", row.ref_time);
        printf("attempts     %lu (%lu accepted, %lu infra errors not counted)%s%s\n", row.attempts,
               row.accepted, row.infra_errors, o.filter.model ? " for model " : "",
               o.filter.model ? o.filter.model : "");
        printf("pass rate    %.3f (90%% interval %.3f-%.3f), bucket %s\n", row.est.mean, row.est.lo,
               row.est.hi, store_bucket_name(row.bucket));
        printf("versions\n");
        json_array_foreach(versions, i, v)
        {
            const char *k;
            json_t *m;
            printf("  %s%s  %s\n", json_string_value(json_object_get(v, "version")),
                   json_is_true(json_object_get(v, "current")) ? " (current)" : "",
                   json_string_value(json_object_get(v, "status")));
            json_object_foreach(json_object_get(v, "models"), k, m)
                printf("    model %-20s %lld attempts, %lld accepted, pass rate %.3f\n", k,
                       (long long)json_integer_value(json_object_get(m, "attempts")),
                       (long long)json_integer_value(json_object_get(m, "accepted")),
                       json_real_value(json_object_get(m, "pass_rate")));
        }
        json_decref(versions);
        json_decref(body);
    }
    json_decref(j);
    store_task_release(&row);
    store_close(s);
    return 0;
}

/* ---- stats ------------------------------------------------------------------------- */

/* stats_report(path, s, filter) — --report: the tally as HTML, then one per model with
 * recorded verifications (report_library_html); 0, or 2 after saying why. */
static int stats_report(const char *path, struct store *s, const struct store_filter *filter,
                        const struct store_tally *all)
{
    struct errbuf err = {{0}};
    json_t *models = store_models_json(s, &err), *per = json_array(), *m;
    size_t i;
    int rc = 0;

    if (!models) {
        fprintf(stderr, "crucible tasks stats: %s\n", err.msg);
        json_decref(per);
        return 2;
    }
    json_array_foreach(models, i, m)
    {
        struct store_filter mf = *filter;
        struct store_tally t;
        if (filter->model && strcmp(filter->model, json_string_value(json_object_get(m, "model"))))
            continue; /* --model names the one to show */
        mf.model = json_string_value(json_object_get(m, "model"));
        if (store_tally(s, &mf, &t, &err) < 0) {
            fprintf(stderr, "crucible tasks stats: %s\n", err.msg);
            rc = 2;
            break;
        }
        json_array_append_new(per, store_tally_json(&t, mf.model));
    }
    if (rc == 0) {
        json_t *total = store_tally_json(all, NULL);
        struct report_library lib = {"crucible task library", total, per};
        if (report_save(path, "crucible tasks stats: --report", report_library_write, &lib) < 0)
            rc = 2;
        json_decref(total);
    }
    json_decref(models);
    json_decref(per);
    return rc;
}

static int tasks_stats(int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMON_OPTS,
        FILTER_OPTS,
        {"report", required_argument, NULL, OPT_REPORT},
        {NULL, 0, NULL, 0},
    };
    const char *report_path = NULL;
    struct lib_opts o = {.cmd = "stats"};
    struct store_tally t;
    struct errbuf err = {{0}};
    struct store *s;
    size_t tried = 0, most = 0;
    int c, r;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            printf("usage: crucible tasks stats --db DB [FILTERS] [--json] [--report FILE.html]\n\n"
                   "Counts of matching tasks by status and by difficulty bucket (untried;\n"
                   "unsolved < 0.1 <= hard < 0.4 <= medium < 0.7 <= easy < 0.9 <= solved, on the\n"
                   "estimated pass rate), and a histogram of the estimates of tried tasks.\n"
                   "--report also writes them as an HTML file, with the buckets and histogram of\n"
                   "every model that has recorded verifications (or --model's).\n\n"
                   "filters:\n%s",
                   filter_help);
            return 0;
        }
        if (c == OPT_REPORT) {
            report_path = optarg;
            continue;
        }
        if (!take_option(&o, c, argv))
            return 2;
    }
    if (!no_operands(&o, argc, argv))
        return 2;
    if (!opts_done(&o) || !(s = open_store(&o)))
        return 2;
    r = store_tally(s, &o.filter, &t, &err);
    if (r == 0 && report_path && stats_report(report_path, s, &o.filter, &t) != 0) {
        store_close(s);
        return 2;
    }
    store_close(s);
    if (r < 0) {
        fprintf(stderr, "crucible tasks stats: %s\n", err.msg);
        return 2;
    }
    if (o.json) {
        json_t *j = store_tally_json(&t, o.filter.model);
        print_json_line(j);
        json_decref(j);
        return 0;
    }
    printf("tasks        %zu\nattempts     %lu (%lu accepted, %lu infra errors not counted)\n\n",
           t.tasks, t.attempts, t.accepted, t.infra_errors);
    printf("%-14s %8s\n", "status", "tasks");
    for (int i = 0; i < STORE_STATUS_COUNT; i++)
        printf("%-14s %8zu\n", store_status_name((enum store_status)i), t.by_status[i]);
    printf("\n%-14s %8s\n", "bucket", "tasks");
    for (int i = 0; i < STORE_BUCKET_COUNT; i++)
        printf("%-14s %8zu\n", store_bucket_name((enum store_bucket)i), t.by_bucket[i]);
    for (int i = 0; i < 10; i++) {
        tried += t.hist[i];
        most = t.hist[i] > most ? t.hist[i] : most;
    }
    printf("\nestimated pass rate of the %zu tried tasks\n", tried);
    for (int i = 0; i < 10; i++) {
        int w = most ? (int)(40.0 * (double)t.hist[i] / (double)most + 0.5) : 0;
        printf("  %.1f-%.1f %6zu %.*s\n", i / 10.0, (i + 1) / 10.0, t.hist[i], w,
               "########################################");
    }
    return 0;
}

/* ---- sample ------------------------------------------------------------------------ */

struct sampler {
    bool json;
    size_t n;
};

static int sample_row(const struct store_task *row, bool explored, void *arg)
{
    struct sampler *sp = arg;

    if (sp->json) {
        json_t *j = store_row_json(row);
        json_object_set_new(j, "explore", json_boolean(explored));
        print_json_line(j);
        json_decref(j);
    } else {
        table_row(row);
        if (explored)
            printf("%28s (exploration pick: little evidence yet)\n", "");
    }
    sp->n++;
    return 0;
}

static int tasks_sample(int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMON_OPTS,
        FILTER_OPTS,
        {"seed", required_argument, NULL, OPT_SEED},
        {"explore", required_argument, NULL, OPT_EXPLORE},
        {NULL, 0, NULL, 0},
    };
    struct lib_opts o = {.cmd = "sample"};
    struct sampler sp = {0};
    struct errbuf err = {{0}};
    struct store *s;
    uint64_t n = 0, seed = 0;
    double explore = 0.2;
    bool seeded = false;
    int c, r;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hn:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            printf("usage: crucible tasks sample --db DB -n N [--min-pass A] [--max-pass B]\n"
                   "         [--exclude LIST] [--seed S] [--explore F] [FILTERS] [--json]\n\n"
                   "Draws N distinct tasks whose estimated pass rate lies in [A, B] (for model M\n"
                   "with --model). Up to a share F (default 0.2) of the draw goes to tasks with\n"
                   "fewer than %d attempts whose 90%% interval still overlaps the band, so new\n"
                   "tasks get a fair chance; they are marked \"explore\": true. --explore 0 draws\n"
                   "in-band tasks only. Broken, flaky and weak_tests tasks are excluded unless\n"
                   "--exclude says otherwise. The same library and --seed give the same draw.\n\n"
                   "filters:\n%s",
                   STORE_EXPLORE_ATTEMPTS, filter_help);
            return 0;
        case 'n':
            if (!util_parse_u64(optarg, 1, 1000000, &n)) {
                fprintf(stderr,
                        "crucible tasks sample: -n must be a whole number from 1 to "
                        "1000000, not '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case OPT_SEED:
            if (!util_parse_u64(optarg, 0, UINT64_MAX, &seed)) {
                fprintf(stderr,
                        "crucible tasks sample: --seed must be a whole number, not "
                        "'%s'\n",
                        optarg);
                return 2;
            }
            seeded = true;
            break;
        case OPT_EXPLORE:
            if (!util_parse_double(optarg, 0, 1, &explore)) {
                fprintf(stderr,
                        "crucible tasks sample: --explore must be a number from 0 to 1, not "
                        "'%s'\n",
                        optarg);
                return 2;
            }
            break;
        default:
            if (!take_option(&o, c, argv))
                return 2;
        }
    }
    if (!no_operands(&o, argc, argv))
        return 2;
    if (!n) {
        fprintf(stderr, "crucible tasks sample: -n N (how many tasks) is required\n");
        return 2;
    }
    if (!opts_done(&o))
        return 2;
    if (!o.exclude_given)
        o.filter.exclude_mask = 1u << STORE_BROKEN | 1u << STORE_FLAKY | 1u << STORE_WEAK_TESTS;
    if (!seeded) {
        struct rng rng;
        rng_seed_from_entropy(&rng);
        seed = rng_next(&rng);
    }
    if (!(s = open_store(&o)))
        return 2;
    sp.json = o.json;
    if (!o.json)
        table_header();
    r = store_sample(s, &o.filter, n, explore, seed, sample_row, &sp, &err);
    store_close(s);
    if (r < 0) {
        fprintf(stderr, "crucible tasks sample: %s\n", err.msg);
        return 2;
    }
    if (sp.n < n)
        fprintf(stderr, "crucible tasks sample: only %zu matching task%s for %llu asked\n", sp.n,
                sp.n == 1 ? "" : "s", (unsigned long long)n);
    if (!seeded && !o.json)
        fprintf(stderr, "crucible tasks sample: seed %llu (pass --seed to repeat this draw)\n",
                (unsigned long long)seed);
    return 0;
}

/* ---- validate ---------------------------------------------------------------------- */

struct vjob {
    char *id;
    char version[17];
    struct validation v;
    int r;
    bool done;
};

struct validator {
    struct store *store;
    unsigned repeats;
    struct pyserver *pyserver; /* NULL with --no-fork-server */
    struct vjob *jobs;
    size_t n;
};

static int collect_job(const struct store_task *row, void *arg)
{
    struct validator *vd = arg;
    struct vjob *jb;

    if (vd->n % 256 == 0) {
        struct vjob *v = realloc(vd->jobs, (vd->n + 256) * sizeof(*v));
        if (!v)
            return -ENOMEM;
        vd->jobs = v;
    }
    jb = &vd->jobs[vd->n];
    memset(jb, 0, sizeof(*jb));
    if (!(jb->id = strdup(row->id)))
        return -ENOMEM;
    memcpy(jb->version, row->version, sizeof(jb->version));
    vd->n++;
    return 0;
}

/* validate_job — one task on a worker thread (workers.h); true when it is valid. */
static bool validate_job(void *ctx, size_t i, const struct sandbox_runtime *rt,
                         const struct image *img)
{
    struct validator *vd = ctx;
    struct vjob *jb = &vd->jobs[i];
    struct verify_opts o;
    struct errbuf err = {{0}};
    struct task t;

    verify_opts_default(&o);
    o.image = img;
    o.pyserver = vd->pyserver;
    jb->r = store_task_load(vd->store, jb->id, jb->version, &t, &err);
    if (jb->r < 0) {
        snprintf(jb->v.reason, sizeof(jb->v.reason), "%s", err.msg);
    } else {
        jb->r = validate_task(rt, &t, &o, vd->repeats, &jb->v);
        if (jb->r == 0 && store_set_status(vd->store, jb->id, jb->version, jb->v.status,
                                           jb->v.reason, jb->v.ref_time, &err) < 0) {
            jb->r = -EIO;
            snprintf(jb->v.reason, sizeof(jb->v.reason), "%s", err.msg);
        }
    }
    task_release(&t);
    jb->done = true;
    return jb->r == 0 && jb->v.status == STORE_VALID;
}

static int tasks_validate(int argc, char **argv)
{
    static const struct option longopts[] = {
        COMMON_OPTS,
        FILTER_OPTS,
        {"repeats", required_argument, NULL, OPT_REPEATS},
        {"all", no_argument, NULL, OPT_ALL},
        {"jobs", required_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, OPT_QUIET},
        {"no-fork-server", no_argument, NULL, OPT_NO_FORK_SERVER},
        {NULL, 0, NULL, 0},
    };
    struct lib_opts o = {.cmd = "validate"};
    struct validator vd = {.repeats = 3};
    struct workers_outcome wo = {0};
    struct errbuf err = {{0}};
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    bool all = false, quiet = false, fork_server = true;
    size_t counts[STORE_STATUS_COUNT] = {0}, infra = 0, done = 0;
    uint64_t u;
    int c, r, status = 2;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "hj:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h':
            printf("usage: crucible tasks validate --db DB [--all] [--repeats K] [-j N]\n"
                   "         [FILTERS] [--quiet] [--no-fork-server]\n\n"
                   "Checks tasks in sandboxes: the reference must be accepted on all K repeats\n"
                   "(default 3; else broken, or flaky when the repeats disagree), and the empty\n"
                   "program and, for Python tasks with an entry point, the reference with that\n"
                   "function rebound to return None must be rejected (else weak_tests). The\n"
                   "reference's slowest test time is stored: relative time limits use it.\n"
                   "Without --all only tasks whose current version is new are validated (and the\n"
                   "filters apply). N tasks at a time (default: the number of cores).\n"
                   "Python assert tasks run as jobs of a Python fork server where one can\n"
                   "start, as in crucible eval; --no-fork-server runs every test cold.\n\n"
                   "exit status: 0 done; 1 crucible failed on some tasks (they stay new);\n"
                   "2 bad usage or library failure.\n\nfilters:\n%s",
                   filter_help);
            return 0;
        case OPT_REPEATS:
            if (!util_parse_u64(optarg, 1, 20, &u)) {
                fprintf(stderr,
                        "crucible tasks validate: --repeats must be a whole number from "
                        "1 to 20, not '%s'\n",
                        optarg);
                return 2;
            }
            vd.repeats = (unsigned)u;
            break;
        case 'j':
            if (!util_parse_u64(optarg, 1, 256, &u)) {
                fprintf(stderr,
                        "crucible tasks validate: -j must be a whole number from 1 to "
                        "256, not '%s'\n",
                        optarg);
                return 2;
            }
            jobs = (long)u;
            break;
        case OPT_ALL:
            all = true;
            break;
        case OPT_QUIET:
            quiet = true;
            break;
        case OPT_NO_FORK_SERVER:
            fork_server = false;
            break;
        default:
            if (!take_option(&o, c, argv))
                return 2;
        }
    }
    if (!no_operands(&o, argc, argv))
        return 2;
    if (!opts_done(&o) || !(vd.store = open_store(&o)))
        return 2;
    if (fork_server && !(vd.pyserver = pyserver_new(PYSERVER_AUTO, "crucible tasks validate"))) {
        fprintf(stderr, "crucible tasks validate: out of memory\n");
        goto out;
    }
    pyserver_set_spares(vd.pyserver, (unsigned)jobs); /* NULL (--no-fork-server): no-op */
    if (!all && !o.status_given)
        o.filter.status_mask = 1u << STORE_NEW;
    r = store_list(vd.store, &o.filter, collect_job, &vd, &err);
    if (r < 0) {
        fprintf(stderr, "crucible tasks validate: %s\n", r == -ENOMEM ? "out of memory" : err.msg);
        goto out;
    }
    if (vd.n == 0) {
        printf("nothing to validate (%s)\n",
               all ? "no task matches" : "no new task; --all validates every task again");
        status = 0;
        goto out;
    }
    {
        struct workers_spec ws = {.n = vd.n,
                                  .jobs = jobs,
                                  .quiet = quiet,
                                  .label = "valid",
                                  .ctx = &vd,
                                  .work = validate_job};
        if (workers_run(&ws, &wo, &err) < 0) {
            fprintf(stderr, "crucible tasks validate: %s\n", err.msg);
            goto out;
        }
    }
    for (size_t i = 0; i < vd.n; i++) {
        const struct vjob *jb = &vd.jobs[i];
        if (!jb->done)
            continue; /* stopped before it started */
        done++;
        if (jb->r == 0)
            counts[jb->v.status]++;
        else
            infra++;
        if (jb->r < 0)
            fprintf(stderr, "%s: not validated (stays new): %s\n", jb->id, jb->v.reason);
        else if (jb->v.status != STORE_VALID && !o.json)
            printf("%s: %s: %s\n", jb->id, store_status_name(jb->v.status), jb->v.reason);
        if (o.json && jb->r == 0) {
            json_t *j =
                json_pack("{s:s, s:s, s:s, s:s}", "id", jb->id, "version", jb->version, "status",
                          store_status_name(jb->v.status), "reason", jb->v.reason);
            json_object_set_new(j, "ref_time",
                                jb->v.ref_time >= 0 ? json_real(jb->v.ref_time) : json_null());
            print_json_line(j);
            json_decref(j);
        }
    }
    {
        FILE *f = o.json ? stderr : stdout;
        fprintf(f, "\n%-14s %8s\n", "status", "tasks");
        for (int i = STORE_VALID; i < STORE_STATUS_COUNT; i++)
            fprintf(f, "%-14s %8zu\n", store_status_name((enum store_status)i), counts[i]);
        if (infra)
            fprintf(f, "%-14s %8zu (crucible failed; they stay new)\n", "not validated", infra);
        fprintf(f, "%-14s %8zu in %.1f s\n", "total", done, wo.seconds);
    }
    status = infra || wo.signal ? 1 : 0;
    if (wo.signal)
        fprintf(stderr, "crucible tasks validate: stopped; %zu of %zu validated\n", wo.done, vd.n);
out:
    for (size_t i = 0; i < vd.n; i++)
        free(vd.jobs[i].id);
    free(vd.jobs);
    pyserver_free(vd.pyserver);
    store_close(vd.store);
    workers_reraise(wo.signal);
    return status;
}

int cmd_tasks_library(int argc, char **argv)
{
    const char *sub = argv[0];

    if (strcmp(sub, "import") == 0)
        return tasks_import(argc, argv);
    if (strcmp(sub, "list") == 0)
        return tasks_list(argc, argv, false);
    if (strcmp(sub, "export") == 0)
        return tasks_list(argc, argv, true);
    if (strcmp(sub, "show") == 0)
        return tasks_show(argc, argv);
    if (strcmp(sub, "stats") == 0)
        return tasks_stats(argc, argv);
    if (strcmp(sub, "sample") == 0)
        return tasks_sample(argc, argv);
    if (strcmp(sub, "validate") == 0)
        return tasks_validate(argc, argv);
    return -1;
}
