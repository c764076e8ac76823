/*
 * report.c — see report.h. The page is static HTML and CSS: tables with bars drawn as
 * widths, so that it opens anywhere (a file attached to a ticket, a CI artefact) with
 * nothing to load and nothing to run.
 */
#include "cli/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "version.h"

#define SLOWEST     20  /* tests listed by wall time */
#define GROUPS_MAX  30  /* failure messages listed */
#define EXAMPLES    5   /* task ids shown per failure message */
#define MESSAGE_MAX 160 /* a failure message is grouped by its first line, cut here */

/* esc(f, s) — s as HTML text. */
static void esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static bool accepted(const json_t *rec)
{
    return strcmp(str(rec, "verdict"), "accepted") == 0;
}

/* bar(f, share) — a row's bar, share in [0, 1]. */
static void bar(FILE *f, double share)
{
    fprintf(f, "<td class=\"bar\"><span style=\"width:%.1f%%\"></span></td>",
            share < 0   ? 0
            : share > 1 ? 100
                        : share * 100);
}

/* tally — counts under one key (a verdict, a tag, a message). */
struct tally {
    char *key;
    size_t records, accepted;
    json_t *tasks; /* {task_id: true}: distinct tasks, examples */
};

struct tallies {
    struct tally *t;
    size_t n;
};

static struct tally *tally_of(struct tallies *ts, const char *key)
{
    struct tally *t;

    for (size_t i = 0; i < ts->n; i++)
        if (strcmp(ts->t[i].key, key) == 0)
            return &ts->t[i];
    if (!(t = realloc(ts->t, (ts->n + 1) * sizeof(*t))))
        return NULL;
    ts->t = t;
    t = &ts->t[ts->n];
    memset(t, 0, sizeof(*t));
    if (!(t->key = strdup(key)) || !(t->tasks = json_object())) {
        free(t->key);
        json_decref(t->tasks);
        return NULL;
    }
    ts->n++;
    return t;
}

static void tally_add(struct tallies *ts, const char *key, const json_t *rec)
{
    struct tally *t = tally_of(ts, key);

    if (!t)
        return;
    t->records++;
    t->accepted += accepted(rec);
    json_object_set_new(t->tasks, str(rec, "task_id"), json_true());
}

static void tallies_free(struct tallies *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        free(ts->t[i].key);
        json_decref(ts->t[i].tasks);
    }
    free(ts->t);
}

static int by_records(const void *a, const void *b)
{
    const struct tally *x = a, *y = b;
    return x->records != y->records ? (x->records < y->records ? 1 : -1) : strcmp(x->key, y->key);
}

static int by_key(const void *a, const void *b)
{
    return strcmp(((const struct tally *)a)->key, ((const struct tally *)b)->key);
}

/* pass_table(f, title, ts, total) — rows of key, tasks, records, accepted, pass rate. */
static void pass_table(FILE *f, const char *id, const char *title, struct tallies *ts)
{
    if (ts->n) /* qsort's array may not be NULL, even empty */
        qsort(ts->t, ts->n, sizeof(*ts->t), by_key);
    fprintf(f,
            "<h2>%s</h2>\n<table id=\"%s\"><tr><th></th><th>tasks</th><th>records</th>"
            "<th>accepted</th><th>pass rate</th><th></th></tr>\n",
            title, id);
    for (size_t i = 0; i < ts->n; i++) {
        const struct tally *t = &ts->t[i];
        double rate = t->records ? (double)t->accepted / (double)t->records : 0;
        fputs("<tr><td>", f);
        esc(f, t->key);
        fprintf(f, "</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%.1f%%</td>",
                json_object_size(t->tasks), t->records, t->accepted, 100 * rate);
        bar(f, rate);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* failure_message(rec, out, size) — what a failed record says first: its message, else
 * the first failing test's reason (why), stderr's last line, or its status. */
static void failure_message(const json_t *rec, char *out, size_t size)
{
    const char *m = str(rec, "message");
    const json_t *t;
    size_t i;

    if (!*m) {
        json_array_foreach(json_object_get(rec, "tests"), i, t)
        {
            if (strcmp(str(t, "verdict"), "accepted") == 0)
                continue;
            m = *str(t, "why") ? str(t, "why") : str(t, "status");
            break;
        }
    }
    if (!*m)
        m = str(rec, "verdict");
    snprintf(out, size, "%s", m);
    out[strcspn(out, "\n")] = '\0';
    if (strlen(out) > MESSAGE_MAX) {
        out[MESSAGE_MAX - 3] = '\0';
        util_utf8_cut(out);
        strcat(out, "...");
    }
}

struct slow {
    double wall;
    const json_t *rec, *test;
};

static int by_wall(const void *a, const void *b)
{
    const struct slow *x = a, *y = b;
    return x->wall < y->wall ? 1 : x->wall > y->wall ? -1 : 0;
}

static void head(FILE *f, const char *title)
{
    fputs("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'\">\n<title>",
          f);
    esc(f, title);
    fputs("</title>\n<style>\n"
          "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1a202c}\n"
          "h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em}\n"
          "table{border-collapse:collapse;margin:.4em 0}th,td{text-align:left;padding:.2em "
          ".7em;border-bottom:1px solid #e2e8f0;vertical-align:top}\n"
          "td.bar{width:220px}td.bar span{display:block;height:.9em;background:#4a90c2}\n"
          ".dim{color:#6b7280}.good{color:#276749}.bad{color:#c53030}\n"
          "code{font-size:.95em}.cards{display:flex;gap:1em;flex-wrap:wrap}\n"
          ".card{background:#f7fafc;border:1px solid #e2e8f0;border-radius:6px;padding:.5em "
          "1em}.card b{font-size:1.4em;display:block}\n"
          "</style></head><body>\n<h1>",
          f);
    esc(f, title);
    fputs("</h1>\n", f);
}

/* per_task(records) — {task_id: [records, accepted]}. */
static json_t *per_task(const json_t *records)
{
    json_t *m = json_object(), *rec;
    size_t i;

    json_array_foreach(records, i, rec)
    {
        const char *id = str(rec, "task_id");
        json_t *c = json_object_get(m, id);
        if (!*id || strcmp(str(rec, "verdict"), "infra_error") == 0)
            continue; /* crucible's failure says nothing of the model */
        if (!c)
            json_object_set_new(m, id, c = json_pack("[i,i]", 0, 0));
        json_array_set_new(c, 0, json_integer(json_integer_value(json_array_get(c, 0)) + 1));
        json_array_set_new(c, 1,
                           json_integer(json_integer_value(json_array_get(c, 1)) + accepted(rec)));
    }
    return m;
}

/* diff(f, in) — the checkpoints compared task by task: solved (any record accepted) then and
 * now, and the pass-rate change of the tasks both have. */
static void diff(FILE *f, const struct report_input *in)
{
    json_t *now = per_task(in->records), *then = per_task(in->baseline), *c;
    const char *id;
    size_t solved = 0, broken = 0, both = 0, only_now = 0;
    double delta = 0;

    fputs("<h2>Against the baseline</h2>\n<p class=\"dim\">baseline: ", f);
    esc(f, in->baseline_name ? in->baseline_name : "(records)");
    fputs("</p>\n", f);
    fputs("<table id=\"diff\"><tr><th>task</th><th>change</th><th>baseline</th><th>now</th></tr>\n",
          f);
    json_object_foreach(now, id, c)
    {
        json_t *b = json_object_get(then, id);
        long n = (long)json_integer_value(json_array_get(c, 0));
        long a = (long)json_integer_value(json_array_get(c, 1));
        long bn, ba;
        const char *change;
        if (!b) {
            only_now++;
            continue;
        }
        both++;
        bn = (long)json_integer_value(json_array_get(b, 0));
        ba = (long)json_integer_value(json_array_get(b, 1));
        delta += (double)a / (double)n - (double)ba / (double)bn;
        if (a > 0 && ba == 0) {
            change = "newly solved";
            solved++;
        } else if (a == 0 && ba > 0) {
            change = "newly broken";
            broken++;
        } else {
            continue;
        }
        fprintf(f, "<tr class=\"%s\"><td>", a > 0 ? "good" : "bad");
        esc(f, id);
        fprintf(f, "</td><td>%s</td><td>%ld of %ld</td><td>%ld of %ld</td></tr>\n", change, ba, bn,
                a, n);
    }
    fputs("</table>\n", f);
    fprintf(f,
            "<p id=\"diff-summary\"><b>%zu</b> newly solved, <b>%zu</b> newly broken, of %zu "
            "tasks in both; mean pass-rate change %+.1f points; %zu tasks only now, %zu only in "
            "the baseline.</p>\n",
            solved, broken, both, both ? 100 * delta / (double)both : 0.0, only_now,
            json_object_size(then) - both);
    json_decref(now);
    json_decref(then);
}

int report_html(FILE *f, const struct report_input *in)
{
    struct tallies verdicts = {0}, tags = {0}, langs = {0}, msgs = {0};
    size_t nrec = json_array_size(in->records), nacc = 0, ninfra = 0, nslow = 0, i, k;
    double reward = 0;
    size_t nreward = 0;
    struct slow *slow = calloc(1, sizeof(*slow));
    const json_t *rec, *t;
    time_t now = time(NULL);
    char when[64], msg[MESSAGE_MAX + 8];

    json_array_foreach(in->records, i, rec)
    {
        const json_t *tg = in->tags ? json_object_get(in->tags, str(rec, "task_id")) : NULL;
        const json_t *r = json_object_get(rec, "reward");
        tally_add(&verdicts, *str(rec, "verdict") ? str(rec, "verdict") : "(none)", rec);
        tally_add(&langs, *str(rec, "language") ? str(rec, "language") : "(none)", rec);
        if (json_array_size(tg) == 0)
            tally_add(&tags, "(no tag)", rec);
        json_array_foreach(tg, k, t) if (json_is_string(t))
            tally_add(&tags, json_string_value(t), rec);
        nacc += accepted(rec);
        if (strcmp(str(rec, "verdict"), "infra_error") == 0)
            ninfra++;
        if (json_is_number(r)) {
            reward += json_number_value(r);
            nreward++;
        }
        if (!accepted(rec)) {
            failure_message(rec, msg, sizeof(msg));
            tally_add(&msgs, msg, rec);
        }
        json_array_foreach(json_object_get(rec, "tests"), k, t)
        {
            struct slow *s = slow ? realloc(slow, (nslow + 1) * sizeof(*slow)) : NULL;
            if (!s)
                break;
            slow = s;
            slow[nslow++] =
                (struct slow){json_number_value(json_object_get(t, "wall_time")), rec, t};
        }
    }

    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
    head(f, in->title ? in->title : "crucible eval report");
    fprintf(f, "<p class=\"dim\">written %s by crucible %s</p>\n", when, CRUCIBLE_VERSION);
    fprintf(
        f,
        "<div class=\"cards\"><div class=\"card\">records<b id=\"records\">%zu</b></div>"
        "<div class=\"card\">accepted<b id=\"accepted\">%zu</b></div>"
        "<div class=\"card\">pass rate<b id=\"pass-rate\">%.1f%%</b></div>"
        "<div class=\"card\">mean reward<b>%.4f</b></div>"
        "<div class=\"card\">infra errors (crucible's own)<b id=\"infra\">%zu</b></div></div>\n",
        nrec, nacc, nrec ? 100.0 * (double)nacc / (double)nrec : 0.0,
        nreward ? reward / (double)nreward : 0.0, ninfra);

    if (verdicts.n)
        qsort(verdicts.t, verdicts.n, sizeof(*verdicts.t), by_records);
    fputs("<h2>Verdicts</h2>\n<table id=\"verdicts\"><tr><th>verdict</th><th>records</th>"
          "<th>share</th><th></th></tr>\n",
          f);
    for (i = 0; i < verdicts.n; i++) {
        double share = (double)verdicts.t[i].records / (double)(nrec ? nrec : 1);
        fputs("<tr><td>", f);
        esc(f, verdicts.t[i].key);
        fprintf(f, "</td><td>%zu</td><td>%.1f%%</td>", verdicts.t[i].records, 100 * share);
        bar(f, share);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);

    if (in->baseline)
        diff(f, in);
    pass_table(f, "tags", "Pass rate by tag", &tags);
    pass_table(f, "languages", "Pass rate by language", &langs);

    if (msgs.n)
        qsort(msgs.t, msgs.n, sizeof(*msgs.t), by_records);
    fputs("<h2>Failures, grouped by message</h2>\n<table id=\"failures\"><tr><th>message</th>"
          "<th>records</th><th>tasks</th><th>for example</th></tr>\n",
          f);
    for (i = 0; i < msgs.n && i < GROUPS_MAX; i++) {
        const char *id;
        json_t *v;
        size_t shown = 0;
        fputs("<tr><td><code>", f);
        esc(f, msgs.t[i].key);
        fprintf(f, "</code></td><td>%zu</td><td>%zu</td><td>", msgs.t[i].records,
                json_object_size(msgs.t[i].tasks));
        json_object_foreach(msgs.t[i].tasks, id, v)
        {
            if (shown++ == EXAMPLES)
                break;
            fputs(shown > 1 ? ", " : "", f);
            esc(f, id);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (msgs.n > GROUPS_MAX)
        fprintf(f, "<p class=\"dim\">and %zu more messages</p>\n", msgs.n - GROUPS_MAX);

    if (slow && nslow)
        qsort(slow, nslow, sizeof(*slow), by_wall);
    fputs("<h2>Slowest tests</h2>\n<table id=\"slowest\"><tr><th>task</th><th>test</th>"
          "<th>wall</th><th>cpu</th><th>verdict</th></tr>\n",
          f);
    for (i = 0; i < nslow && i < SLOWEST; i++) {
        fputs("<tr><td>", f);
        esc(f, str(slow[i].rec, "task_id"));
        fputs("</td><td>", f);
        esc(f, str(slow[i].test, "name"));
        fprintf(f, "</td><td>%.3f s</td><td>%.3f s</td><td>", slow[i].wall,
                json_number_value(json_object_get(slow[i].test, "cpu_time")));
        esc(f, str(slow[i].test, "verdict"));
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n</body></html>\n", f);

    free(slow);
    tallies_free(&verdicts);
    tallies_free(&tags);
    tallies_free(&langs);
    tallies_free(&msgs);
    return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

/* tally_tables(f, id, t) — one tally: its counts by bucket and the histogram of estimates,
 * bars scaled to the largest row. */
static void tally_tables(FILE *f, const char *id, const json_t *t)
{
    const json_t *buckets = json_object_get(t, "buckets"), *h = json_object_get(t, "histogram");
    const char *key;
    json_t *v;
    size_t i;
    json_int_t most = 1;

    json_object_foreach((json_t *)buckets, key, v) most =
        json_integer_value(v) > most ? json_integer_value(v) : most;
    fprintf(f, "<table id=\"%s-buckets\"><tr><th>bucket</th><th>tasks</th><th></th></tr>\n", id);
    json_object_foreach((json_t *)buckets, key, v)
    {
        fputs("<tr><td>", f);
        esc(f, key);
        fprintf(f, "</td><td>%lld</td>", (long long)json_integer_value(v));
        bar(f, (double)json_integer_value(v) / (double)most);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    most = 1;
    json_array_foreach(h, i, v) most = json_integer_value(json_object_get(v, "tasks")) > most
                                           ? json_integer_value(json_object_get(v, "tasks"))
                                           : most;
    fprintf(f,
            "<table id=\"%s-histogram\"><tr><th>estimated pass rate</th><th>tasks</th><th></th>"
            "</tr>\n",
            id);
    json_array_foreach(h, i, v)
    {
        json_int_t n = json_integer_value(json_object_get(v, "tasks"));
        fprintf(f, "<tr><td>%.1f&ndash;%.1f</td><td>%lld</td>",
                json_number_value(json_object_get(v, "lo")),
                json_number_value(json_object_get(v, "hi")), (long long)n);
        bar(f, (double)n / (double)most);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

int report_library_html(FILE *f, const char *title, const json_t *all, const json_t *per_model)
{
    const char *key;
    json_t *v;
    const json_t *m;
    size_t i;

    head(f, title);
    fprintf(f,
            "<div class=\"cards\"><div class=\"card\">tasks<b id=\"tasks\">%lld</b></div>"
            "<div class=\"card\">attempts<b id=\"attempts\">%lld</b></div>"
            "<div class=\"card\">accepted<b>%lld</b></div>"
            "<div class=\"card\">infra errors (not counted)<b>%lld</b></div></div>\n",
            (long long)json_integer_value(json_object_get(all, "tasks")),
            (long long)json_integer_value(json_object_get(all, "attempts")),
            (long long)json_integer_value(json_object_get(all, "accepted")),
            (long long)json_integer_value(json_object_get(all, "infra_errors")));
    fputs("<h2>Tasks by status</h2>\n<table id=\"status\"><tr><th>status</th><th>tasks</th>"
          "</tr>\n",
          f);
    json_object_foreach(json_object_get(all, "status"), key, v)
    {
        fputs("<tr><td>", f);
        esc(f, key);
        fprintf(f, "</td><td>%lld</td></tr>\n", (long long)json_integer_value(v));
    }
    fputs("</table>\n<h2>All models</h2>\n", f);
    tally_tables(f, "all", all);
    json_array_foreach(per_model, i, m)
    {
        char id[32];
        snprintf(id, sizeof(id), "model-%zu", i);
        fputs("<h2>Model <code>", f);
        esc(f, str(m, "model"));
        fprintf(f, "</code> <span class=\"dim\">%lld attempts, %lld accepted</span></h2>\n",
                (long long)json_integer_value(json_object_get(m, "attempts")),
                (long long)json_integer_value(json_object_get(m, "accepted")));
        tally_tables(f, id, m);
    }
    fputs("</body></html>\n", f);
    return fflush(f) == 0 && !ferror(f) ? 0 : -EIO;
}

json_t *report_read_records(const char *path, struct errbuf *err)
{
    FILE *f = fopen(path, "r");
    json_t *out = json_array();
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;

    if (!f || !out) {
        errbuf_set(err, "%s: %s", path, f ? "out of memory" : strerror(errno));
        if (f)
            fclose(f);
        json_decref(out);
        return NULL;
    }
    while ((n = getline(&line, &cap, f)) >= 0) {
        json_error_t je;
        json_t *j;
        lineno++;
        if (strspn(line, " \t\r\n") == (size_t)n)
            continue;
        if (!(j = json_loads(line, 0, &je)) || !json_is_object(j)) {
            errbuf_set(err, "%s: line %zu: %s", path, lineno,
                       j ? "not a JSON object (a verification record)" : je.text);
            json_decref(j);
            json_decref(out);
            out = NULL;
            break;
        }
        if (!json_is_string(json_object_get(j, "verdict"))) {
            errbuf_set(err, "%s: line %zu: no \"verdict\": not a verification record", path,
                       lineno);
            json_decref(j);
            json_decref(out);
            out = NULL;
            break;
        }
        json_array_append_new(out, j);
    }
    free(line);
    fclose(f);
    return out;
}

int report_read_tags(const char *path, json_t *tags, struct errbuf *err)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    int rc = 0;

    if (!f)
        return errbuf_set(err, "%s: %s", path, strerror(errno)), -1;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        json_error_t je;
        json_t *j, *t;
        lineno++;
        if (strspn(line, " \t\r\n") == (size_t)n)
            continue;
        j = json_loads(line, 0, &je);
        t = json_object_get(j, "tags");
        if (!json_is_object(j) || !json_is_string(json_object_get(j, "id"))) {
            /* a results file given as --tasks, say: said, not silently left without tags */
            errbuf_set(err, "%s: line %zu: %s", path, lineno,
                       j ? "not a task (an object with an \"id\")" : je.text);
            rc = -1;
        } else if (json_is_array(t)) {
            json_object_set(tags, json_string_value(json_object_get(j, "id")), t);
        }
        json_decref(j);
    }
    free(line);
    fclose(f);
    return rc;
}

int report_save(const char *path, const char *label, int (*write)(FILE *, const void *),
                const void *ctx)
{
    FILE *f = fopen(path, "we");

    if (!f) {
        fprintf(stderr, "%s %s: %s\n", label, path, strerror(errno));
        return -1;
    }
    if ((write(f, ctx) < 0) | (fclose(f) != 0)) {
        fprintf(stderr, "%s %s: cannot write it\n", label, path);
        return -1;
    }
    return 0;
}

int report_html_write(FILE *f, const void *in)
{
    return report_html(f, in);
}

int report_library_write(FILE *f, const void *lib)
{
    const struct report_library *l = lib;

    return report_library_html(f, l->title, l->all, l->per_model);
}
