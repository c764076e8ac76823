/*
 * cmd_tasks.h — `crucible tasks`: the task library's subcommands. Today only `convert`
 * (public datasets to native tasks, convert.h); import, list, show, validate, stats and
 * sample (the SQLite library) are future work.
 */
#ifndef CRUCIBLE_CMD_TASKS_H
#define CRUCIBLE_CMD_TASKS_H

/* cmd_tasks(argc, argv) — argv[0] is "tasks". Returns the exit status: 0 success, 1 some
 * input records were bad (reported and skipped), 2 usage or input failure. */
int cmd_tasks(int argc, char **argv);

#endif
