/*
 * cmd_report.c — `crucible report RESULTS.jsonl [--baseline OLD.jsonl] [--tasks TASKS.jsonl]...
 * [--title T] [--out report.html]`: an evaluation's records as an HTML report (report.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/report.h"

static void report_usage(FILE *f)
{
    fprintf(f,
            "usage: crucible report RESULTS.jsonl [--baseline OLD.jsonl] [--tasks TASKS.jsonl]...\n"
            "                       [--title TEXT] [--out REPORT.html]\n\n"
            "Writes an evaluation's records (crucible eval --out) as one self-contained HTML\n"
            "file (stdout without --out): the verdict mix, pass rates by tag and by language, the\n"
            "failures grouped by message, the slowest tests. --baseline compares with an\n"
            "earlier checkpoint's records: the tasks newly solved and newly broken. --tasks\n"
            "names task files whose tags the report groups by (repeatable).\n\n"
            "exit status: 0 written; 2 bad usage or an unreadable file.\n");
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"baseline", required_argument, NULL, 'b'}, {"tasks", required_argument, NULL, 't'},
        {"title", required_argument, NULL, 'T'},    {"out", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    struct report_input in = {0};
    struct errbuf err = {{0}};
    const char *out_path = NULL, *baseline_path = NULL;
    json_t *tags = json_object(), *records = NULL, *baseline = NULL;
    int c, rc = 2;

    optind = 1;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        switch (c) {
        case 'b':
            baseline_path = optarg;
            break;
        case 't':
            if (report_read_tags(optarg, tags, &err) < 0) {
                fprintf(stderr, "crucible report: --tasks %s\n", err.msg);
                goto done;
            }
            break;
        case 'T':
            in.title = optarg;
            break;
        case 'o':
            out_path = optarg;
            break;
        case 'h':
            report_usage(stdout);
            rc = 0;
            goto done;
        default:
            report_usage(stderr);
            goto done;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "crucible report: needs exactly one results file (see --help)\n");
        goto done;
    }
    if (!(records = report_read_records(argv[optind], &err)) ||
        (baseline_path && !(baseline = report_read_records(baseline_path, &err)))) {
        fprintf(stderr, "crucible report: %s\n", err.msg);
        goto done;
    }
    in.records = records;
    in.baseline = baseline;
    in.baseline_name = baseline_path;
    in.tags = tags;
    if (out_path) {
        if (report_save(out_path, "crucible report: --out", report_html_write, &in) < 0)
            goto done;
    } else if (report_html(stdout, &in) < 0 || fflush(stdout) != 0) {
        fprintf(stderr, "crucible report: cannot write stdout\n");
        goto done;
    }
    rc = 0;
done:
    json_decref(records);
    json_decref(baseline);
    json_decref(tags);
    return rc;
}
