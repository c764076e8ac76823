/*
 * cmd_session.c — `crucible session`: a running server's sessions by hand (docs/API.md,
 * "Sessions"): create one, run commands in it, move files in and out, fork, verify, delete.
 * Each subcommand is one HTTP request (http_client.h) to the server named by --server or
 * $CRUCIBLE_SERVER (default 127.0.0.1:8080); a JSON answer is printed as it came, a file's bytes
 * as they are.
 *
 * Exit status: 0 done; 1 an exec's program did not end ok (its status on stderr) or a
 * verification was not accepted; 2 the request failed (usage, the server unreachable, an
 * error answer: its message on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cli/http_client.h"
#include "util.h"

#define TARGET_MAX 8192
#define INPUT_MAX  ((size_t)1 << 30)

static const char USAGE[] =
    "usage: crucible session [--server HOST:PORT] [--token-file FILE] COMMAND ...\n"
    "\n"
    "Drives the sessions of a running 'crucible serve' (docs/API.md, \"Sessions\"):\n"
    "  create [--image NAME] [--ttl S] [--idle-ttl S] [--memory MB] [--pids N] [--disk MB]\n"
    "         [--cpu-time S] [--writable-root] [--network none|loopback] [--json]\n"
    "                          make one; prints its id (the whole answer with --json)\n"
    "  list                    the live sessions (JSON)\n"
    "  info ID                 one session: times, execs, usage (JSON)\n"
    "  exec ID [--timeout S] [--cwd DIR] [--json] -- PROGRAM [ARG...]\n"
    "  sh ID [--timeout S] [--json] 'SHELL COMMAND'\n"
    "                          run in the session; its stdout and stderr are printed (the\n"
    "                          result record with --json); exit 1 when it did not end ok\n"
    "  put ID PATH [FILE]      upload FILE (default: stdin) to PATH (relative: in /work)\n"
    "  get ID PATH             the file's bytes on stdout\n"
    "  ls ID [DIR]             the entries of DIR (default /work), JSON\n"
    "  fork ID                 a copy of its files as a new session; prints the new id\n"
    "  verify ID TASK.json     a command task's tests over its files (the record, JSON);\n"
    "                          exit 1 when not accepted\n"
    "  rm ID                   delete it\n"
    "\n"
    "  --server HOST:PORT      the server (default $CRUCIBLE_SERVER, else 127.0.0.1:8080)\n"
    "  --token-file FILE       its bearer token (the file's first line)\n";

struct client {
    char host[256], port[16];
    char *token;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "crucible session: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'crucible session --help')\n");
    va_end(ap);
    return 2;
}

/* call(c, method, target, ctype, body, len, timeout, ans) — one request; 0 when it got a 2xx
 * answer, else 2 after saying why on stderr (the server's error message when it gave one). */
static int call(const struct client *c, const char *method, const char *target, const char *ctype,
                const void *body, size_t len, double timeout, struct http_client_answer *ans)
{
    struct http_client_request req = {.host = c->host,
                                      .port = c->port,
                                      .method = method,
                                      .target = target,
                                      .token = c->token,
                                      .content_type = ctype,
                                      .body = body,
                                      .len = len,
                                      .timeout_s = timeout};
    struct errbuf err = {{0}};
    json_t *j, *msg;

    if (http_client_do(&req, ans, &err) < 0) {
        fprintf(stderr, "crucible session: %s\n", err.msg);
        return 2;
    }
    if (ans->status >= 200 && ans->status < 300)
        return 0;
    j = json_loadb(ans->body, ans->len, 0, NULL);
    msg = json_object_get(json_object_get(j, "error"), "message");
    fprintf(stderr, "crucible session: %s %s: %u %s\n", method, target, ans->status,
            json_is_string(msg) ? json_string_value(msg) : ans->body);
    json_decref(j);
    return 2;
}

static int print_body(const struct http_client_answer *ans)
{
    fwrite(ans->body, 1, ans->len, stdout);
    if (ans->len && ans->body[ans->len - 1] != '\n' &&
        strncmp(ans->content_type, "application/json", 16) == 0)
        putchar('\n');
    return fflush(stdout) == 0 ? 0 : 2;
}

/* post_json(c, target, j, timeout, ans) — j (stolen) as the body of a POST. */
static int post_json(const struct client *c, const char *target, json_t *j, double timeout,
                     struct http_client_answer *ans)
{
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    int rc;

    json_decref(j);
    if (!text) {
        fprintf(stderr, "crucible session: out of memory\n");
        return 2;
    }
    rc = call(c, "POST", target, "application/json", text, strlen(text), timeout, ans);
    free(text);
    return rc;
}

/* print_id(ans, json) — a created session's id (or the whole answer). */
static int print_id(const struct http_client_answer *ans, bool json)
{
    json_t *j, *id;
    int rc = 2;

    if (json)
        return print_body(ans);
    j = json_loadb(ans->body, ans->len, 0, NULL);
    if (json_is_string(id = json_object_get(j, "id"))) {
        printf("%s\n", json_string_value(id));
        rc = 0;
    }
    json_decref(j);
    return rc;
}

/* target_of(out, id, suffix, path, query) — "/v1/sessions/ID/SUFFIX?path=P&QUERY". */
static bool target_of(char out[TARGET_MAX], const char *id, const char *suffix, const char *path,
                      const char *query)
{
    char esc_id[256], esc_path[TARGET_MAX / 2];
    int n;

    if (!http_client_escape(id, esc_id, sizeof(esc_id)) ||
        (path && !http_client_escape(path, esc_path, sizeof(esc_path))))
        return false;
    n = snprintf(out, TARGET_MAX, "/v1/sessions/%s%s%s%s%s%s%s", esc_id, suffix ? "/" : "",
                 suffix ? suffix : "", path ? "?path=" : "", path ? esc_path : "",
                 query ? (path ? "&" : "?") : "", query ? query : "");
    return n > 0 && n < TARGET_MAX;
}

static int sub_create(const struct client *c, int argc, char **argv)
{
    enum { O_IMAGE = 256, O_TTL, O_IDLE, O_MEMORY, O_PIDS, O_DISK, O_CPU, O_WR, O_NET, O_JSON };
    static const struct option longopts[] = {
        {"image", required_argument, NULL, O_IMAGE},
        {"ttl", required_argument, NULL, O_TTL},
        {"idle-ttl", required_argument, NULL, O_IDLE},
        {"memory", required_argument, NULL, O_MEMORY},
        {"pids", required_argument, NULL, O_PIDS},
        {"disk", required_argument, NULL, O_DISK},
        {"cpu-time", required_argument, NULL, O_CPU},
        {"writable-root", no_argument, NULL, O_WR},
        {"network", required_argument, NULL, O_NET},
        {"json", no_argument, NULL, O_JSON},
        {NULL, 0, NULL, 0},
    };
    json_t *body = json_object(), *limits = json_object();
    struct http_client_answer ans = {0};
    bool json = false;
    int o, rc;
    double d;

    optind = 1;
    while ((o = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
        const char *key = NULL, *lkey = NULL;
        switch (o) {
        case O_IMAGE:
            json_object_set_new(body, "image", json_string(optarg));
            continue;
        case O_WR:
            json_object_set_new(body, "writable_root", json_true());
            continue;
        case O_NET:
            json_object_set_new(body, "network", json_string(optarg));
            continue;
        case O_JSON:
            json = true;
            continue;
        case O_TTL:
            key = "ttl_s";
            break;
        case O_IDLE:
            key = "idle_ttl_s";
            break;
        case O_MEMORY:
            lkey = "memory_mb";
            break;
        case O_PIDS:
            lkey = "pids";
            break;
        case O_DISK:
            lkey = "disk_mb";
            break;
        case O_CPU:
            lkey = "cpu_time";
            break;
        default:
            json_decref(body);
            json_decref(limits);
            return usage_error("create: unknown option or missing argument '%s'", argv[optind - 1]);
        }
        if (!util_parse_double(optarg, 0, 1e9, &d)) {
            json_decref(body);
            json_decref(limits);
            return usage_error("create: '%s' is not a number", optarg);
        }
        /* the server checks the ranges and says which field is wrong */
        json_object_set_new(key ? body : limits, key ? key : lkey, json_real(d));
    }
    if (optind < argc) {
        json_decref(body);
        json_decref(limits);
        return usage_error("create: unexpected argument '%s'", argv[optind]);
    }
    if (json_object_size(limits))
        json_object_set_new(body, "limits", limits);
    else
        json_decref(limits);
    rc = post_json(c, "/v1/sessions", body, 120, &ans);
    if (rc == 0)
        rc = print_id(&ans, json);
    free(ans.body);
    return rc;
}

/* print_stream(rec, name, f) — a record's stream (its base64 form when the text was escaped). */
static void print_stream(const json_t *rec, const char *name, FILE *f)
{
    char key[32];
    const json_t *b64, *text;
    char *raw = NULL;
    size_t len = 0;

    snprintf(key, sizeof(key), "%s_base64", name);
    if (json_is_string(b64 = json_object_get(rec, key)) &&
        util_base64_decode(json_string_value(b64), json_string_length(b64), &raw, &len) == 0) {
        fwrite(raw, 1, len, f);
        free(raw);
    } else if (json_is_string(text = json_object_get(rec, name))) {
        fwrite(json_string_value(text), 1, json_string_length(text), f);
    }
    fflush(f);
}

static int sub_exec(const struct client *c, int argc, char **argv, bool shell)
{
    static const struct option longopts[] = {
        {"timeout", required_argument, NULL, 't'},
        {"cwd", required_argument, NULL, 'C'},
        {"json", no_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
    };
    struct http_client_answer ans = {0};
    char target[TARGET_MAX];
    json_t *body, *cmd, *rec, *status;
    double timeout = 30;
    const char *cwd = NULL, *id;
    bool json = false;
    int o, rc;

    if (argc < 2)
        return usage_error(shell ? "sh wants ID 'SHELL COMMAND'"
                                 : "exec wants ID [OPTIONS] -- PROGRAM [ARG...]");
    id = argv[1];
    argc--, argv++; /* the options follow the id */
    optind = 1;
    while ((o = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
        if (o == 't' && util_parse_double(optarg, 0.01, 86400, &timeout))
            continue;
        if (o == 'C' && !shell) {
            cwd = optarg;
            continue;
        }
        if (o == 'j') {
            json = true;
            continue;
        }
        return usage_error("%s: bad option or argument '%s'", shell ? "sh" : "exec",
                           argv[optind - 1]);
    }
    if (shell ? optind + 1 != argc : optind >= argc)
        return usage_error(shell ? "sh wants ID 'SHELL COMMAND' (one argument)"
                                 : "exec wants ID [OPTIONS] -- PROGRAM [ARG...]");
    if (!target_of(target, id, "exec", NULL, NULL))
        return usage_error("the id is too long");
    if (shell) {
        cmd = json_string(argv[optind]);
    } else {
        cmd = json_array();
        for (int i = optind; i < argc; i++)
            json_array_append_new(cmd, json_string(argv[i]));
    }
    body = json_pack("{s:o,s:f}", "command", cmd, "timeout_s", timeout);
    if (body && cwd)
        json_object_set_new(body, "cwd", json_string(cwd));
    rc = post_json(c, target, body, timeout + 60, &ans);
    if (rc != 0) {
        free(ans.body);
        return rc;
    }
    if (json) {
        rc = print_body(&ans);
    } else if (!(rec = json_loadb(ans.body, ans.len, 0, NULL))) {
        fprintf(stderr, "crucible session: the answer is not JSON\n");
        rc = 2;
    } else {
        print_stream(rec, "stdout", stdout);
        print_stream(rec, "stderr", stderr);
        status = json_object_get(rec, "status");
        if (!json_is_string(status) || strcmp(json_string_value(status), "ok") != 0) {
            json_t *code = json_object_get(rec, "exit_code"),
                   *msg = json_object_get(rec, "message");
            fprintf(stderr, "crucible session: %s",
                    json_is_string(status) ? json_string_value(status) : "no status");
            if (json_is_integer(code))
                fprintf(stderr, ", exit status %lld", (long long)json_integer_value(code));
            if (json_is_string(msg) && json_string_length(msg))
                fprintf(stderr, ": %s", json_string_value(msg));
            fputc('\n', stderr);
            rc = 1;
        }
        json_decref(rec);
    }
    free(ans.body);
    return rc;
}

/* read_input(path, &data, &len) — a file's bytes, or stdin's when path is NULL or "-". */
static int read_input(const char *path, char **data, size_t *len)
{
    int fd = path && strcmp(path, "-") != 0 ? open(path, O_RDONLY | O_CLOEXEC) : 0, r;

    if (fd < 0) {
        fprintf(stderr, "crucible session: cannot open '%s': %s\n", path, strerror(errno));
        return 2;
    }
    r = util_read_fd(fd, data, len, INPUT_MAX);
    if (fd > 0)
        close(fd);
    if (r < 0) {
        fprintf(stderr, "crucible session: cannot read '%s': %s\n", path ? path : "stdin",
                strerror(-r));
        return 2;
    }
    return 0;
}

static int sub_files(const struct client *c, const char *what, int argc, char **argv)
{
    struct http_client_answer ans = {0};
    char target[TARGET_MAX], *data = NULL;
    size_t len = 0;
    int rc;

    if (strcmp(what, "put") == 0) {
        if (argc < 3 || argc > 4)
            return usage_error("put wants ID PATH [FILE]");
        if (!target_of(target, argv[1], "files", argv[2], NULL))
            return usage_error("the id or path is too long");
        if ((rc = read_input(argc == 4 ? argv[3] : NULL, &data, &len)) != 0)
            return rc;
        rc = call(c, "PUT", target, "application/octet-stream", data, len, 600, &ans);
        free(data);
    } else if (strcmp(what, "get") == 0) {
        if (argc != 3)
            return usage_error("get wants ID PATH");
        if (!target_of(target, argv[1], "files", argv[2], NULL))
            return usage_error("the id or path is too long");
        rc = call(c, "GET", target, NULL, NULL, 0, 600, &ans);
        if (rc == 0 && (fwrite(ans.body, 1, ans.len, stdout) != ans.len || fflush(stdout) != 0))
            rc = 2;
        free(ans.body);
        return rc;
    } else {
        if (argc < 2 || argc > 3)
            return usage_error("ls wants ID [DIR]");
        if (!target_of(target, argv[1], "files", argc == 3 ? argv[2] : "/work", "list=1"))
            return usage_error("the id or path is too long");
        rc = call(c, "GET", target, NULL, NULL, 0, 600, &ans);
    }
    if (rc == 0)
        rc = print_body(&ans);
    free(ans.body);
    return rc;
}

static int sub_verify(const struct client *c, int argc, char **argv)
{
    struct http_client_answer ans = {0};
    char target[TARGET_MAX], *text = NULL;
    json_t *task, *rec, *verdict;
    json_error_t je;
    size_t len;
    int rc;

    if (argc != 3)
        return usage_error("verify wants ID TASK.json");
    if (!target_of(target, argv[1], "verify", NULL, NULL))
        return usage_error("the id is too long");
    if ((rc = read_input(argv[2], &text, &len)) != 0)
        return rc;
    task = json_loadb(text, len, 0, &je);
    free(text);
    if (!json_is_object(task)) {
        json_decref(task);
        fprintf(stderr, "crucible session: '%s' is not a JSON task object: %s\n", argv[2], je.text);
        return 2;
    }
    rc = post_json(c, target, json_pack("{s:o}", "task", task), 3600, &ans);
    if (rc == 0) {
        rc = print_body(&ans);
        rec = json_loadb(ans.body, ans.len, 0, NULL);
        verdict = json_object_get(rec, "verdict");
        if (rc == 0 &&
            !(json_is_string(verdict) && strcmp(json_string_value(verdict), "accepted") == 0))
            rc = 1;
        json_decref(rec);
    }
    free(ans.body);
    return rc;
}

static int sub_simple(const struct client *c, const char *what, int argc, char **argv)
{
    struct http_client_answer ans = {0};
    char target[TARGET_MAX];
    int rc;

    if (strcmp(what, "list") == 0) {
        if (argc != 1)
            return usage_error("list takes no argument");
        rc = call(c, "GET", "/v1/sessions", NULL, NULL, 0, 60, &ans);
    } else {
        if (argc != 2)
            return usage_error("%s wants ID", what);
        if (!target_of(target, argv[1], strcmp(what, "fork") == 0 ? "fork" : NULL, NULL, NULL))
            return usage_error("the id is too long");
        if (strcmp(what, "info") == 0)
            rc = call(c, "GET", target, NULL, NULL, 0, 60, &ans);
        else if (strcmp(what, "rm") == 0)
            rc = call(c, "DELETE", target, NULL, NULL, 0, 60, &ans);
        else
            rc = call(c, "POST", target, "application/json", "{}", 2, 600, &ans);
    }
    if (rc == 0)
        rc = strcmp(what, "fork") == 0 ? print_id(&ans, false)
             : strcmp(what, "rm") == 0 ? 0
                                       : print_body(&ans);
    free(ans.body);
    return rc;
}

int cmd_session(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"server", required_argument, NULL, 's'},
        {"token-file", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0},
    };
    struct client c = {.token = NULL};
    const char *server = getenv("CRUCIBLE_SERVER"), *token_file = NULL, *colon, *what;
    int o, rc;

    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (o == 'h') {
            fputs(USAGE, stdout);
            return 0;
        }
        if (o == 's')
            server = optarg;
        else if (o == 't')
            token_file = optarg;
        else
            return usage_error("unknown option or missing argument '%s'", argv[optind - 1]);
    }
    if (optind >= argc)
        return usage_error("which command? (create, list, info, exec, sh, put, get, ls, fork, "
                           "verify, rm)");
    if (!server || !*server)
        server = "127.0.0.1:8080";
    if (!(colon = strrchr(server, ':')) || colon == server || !colon[1] ||
        (size_t)(colon - server) >= sizeof(c.host) || strlen(colon + 1) >= sizeof(c.port))
        return usage_error("--server wants HOST:PORT, got '%s'", server);
    snprintf(c.host, sizeof(c.host), "%.*s", (int)(colon - server), server);
    snprintf(c.port, sizeof(c.port), "%s", colon + 1);
    if (token_file) {
        char *buf = NULL;
        size_t len;
        if ((rc = read_input(token_file, &buf, &len)) != 0)
            return rc;
        buf[strcspn(buf, "\r\n")] = '\0';
        c.token = buf;
    }
    what = argv[optind];
    argc -= optind;
    argv += optind;
    if (strcmp(what, "create") == 0)
        rc = sub_create(&c, argc, argv);
    else if (strcmp(what, "exec") == 0 || strcmp(what, "sh") == 0)
        rc = sub_exec(&c, argc, argv, strcmp(what, "sh") == 0);
    else if (strcmp(what, "put") == 0 || strcmp(what, "get") == 0 || strcmp(what, "ls") == 0)
        rc = sub_files(&c, what, argc, argv);
    else if (strcmp(what, "verify") == 0)
        rc = sub_verify(&c, argc, argv);
    else if (strcmp(what, "list") == 0 || strcmp(what, "info") == 0 || strcmp(what, "rm") == 0 ||
             strcmp(what, "fork") == 0)
        rc = sub_simple(&c, what, argc, argv);
    else
        rc = usage_error("unknown command '%s'", what);
    free(c.token);
    return rc;
}
