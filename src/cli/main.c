/*
 * main.c — the crucible binary: dispatches to a subcommand (cmd.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "cli/cmd_tasks.h"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    {"run", cmd_run, "run one command in a fresh sandbox"},
    {"verify", cmd_verify, "verify one solution against one task"},
    {"eval", cmd_eval, "verify many solutions (or the references) against a task set"},
    {"serve", cmd_serve, "the HTTP service: run, verify, batch, SandboxFusion's /run_code"},
    {"tasks", cmd_tasks, "the task library: convert public datasets to native tasks"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: crucible COMMAND [OPTIONS]\n\n"
               "crucible runs untrusted, model-written code in isolated sandboxes and turns\n"
               "the evidence into results a trainer can trust.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'crucible COMMAND --help' lists the options of a command.\n");
}

int main(int argc, char **argv)
{
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
