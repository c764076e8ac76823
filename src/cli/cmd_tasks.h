/*
 * cmd_tasks.h — `crucible tasks`: `convert` (public datasets to native tasks, convert.h)
 * and the task library's subcommands (import, list, show, export, validate, stats, sample;
 * cmd_library.c over store.h).
 */
#ifndef CRUCIBLE_CMD_TASKS_H
#define CRUCIBLE_CMD_TASKS_H

/* cmd_tasks(argc, argv) — argv[0] is "tasks". Returns the exit status: 0 success, 1 some
 * input records were bad (reported and skipped), 2 usage or input failure. */
int cmd_tasks(int argc, char **argv);

/* cmd_tasks_library(argc, argv) — argv[0] is a library subcommand; -1 when it is not one. */
int cmd_tasks_library(int argc, char **argv);

#endif
