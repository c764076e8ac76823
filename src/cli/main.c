/*
 * main.c — the crucible binary: dispatches to a subcommand (cmd.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/cmd_tasks.h"
#include "sandbox/forkserver.h"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"run", cmd_run, "run one command in a fresh sandbox"},
    {"keep", cmd_keep, "keep sandboxes ready for `crucible run` on this machine"},
    {"verify", cmd_verify, "verify one solution against one task"},
    {"eval", cmd_eval, "verify many solutions (or the references) against a task set"},
    {"report", cmd_report, "an evaluation's records as an HTML report (against a baseline)"},
    {"serve", cmd_serve, "the HTTP service: run, verify, batch, SandboxFusion's /run_code"},
    {"worker", cmd_worker, "cluster mode: run the jobs of a broker's streams (docs/CLUSTER.md)"},
    {"session", cmd_session, "a running server's sessions: create, exec, put, get, fork, rm"},
    {"tasks", cmd_tasks, "the task library: convert public datasets to native tasks"},
    {"image", cmd_image, "environment images: import OCI/docker archives, list, tag, rm, gc"},
    {"bench", cmd_bench, "measure spawn latency, /v1/run latency and eval throughput here"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: crucible COMMAND [OPTIONS]\n\n"
               "crucible runs untrusted, model-written code in isolated sandboxes and turns\n"
               "the evidence into results a trainer can trust.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'crucible COMMAND --help' lists the options of a command.\n"
               "'crucible --state-dir DIR COMMAND' keeps state (the image store) in DIR\n"
               "(default: $CRUCIBLE_STATE_DIR, else /var/lib/crucible for root,\n"
               "$XDG_STATE_HOME/crucible or ~/.local/state/crucible for others).\n");
}

int main(int argc, char **argv)
{
    /* a fork server's zygote, exec'd by its sandbox's init (not a command) */
    if (argc == 2 && strcmp(argv[1], FORKSERVER_ZYGOTE_ARG) == 0)
        return forkserver_zygote_main(argc, argv);
    /* --state-dir before the command: every command that names images finds the store
     * through CRUCIBLE_STATE_DIR (image/store.h), set here while the process is one thread */
    while (argc >= 3 && strcmp(argv[1], "--state-dir") == 0) {
        if (argv[2][0] != '/') {
            fprintf(stderr, "crucible: --state-dir '%s' must be an absolute path\n", argv[2]);
            return 2;
        }
        setenv("CRUCIBLE_STATE_DIR", argv[2], 1);
        argc -= 2;
        argv += 2;
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("crucible %s\n", CRUCIBLE_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "crucible: unknown command '%s' (see 'crucible --help')\n", argv[1]);
    return 2;
}
