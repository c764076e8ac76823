/*
 * cmd.h — the subcommands of the crucible binary. Each takes the arguments after its
 * name and returns the process exit status (0 success, 1 the program failed, 2 crucible
 * or usage failed).
 */
#ifndef CRUCIBLE_CMD_H
#define CRUCIBLE_CMD_H

#include "version.h"

/* cmd_run(argc, argv) — `crucible run`: one command in a fresh sandbox. */
int cmd_run(int argc, char **argv);

/* cmd_keep(argc, argv) — `crucible keep`: sandboxes kept ready for `crucible run` (keep.h). */
int cmd_keep(int argc, char **argv);

/* cmd_verify(argc, argv) — `crucible verify`: one solution against one task. */
int cmd_verify(int argc, char **argv);

/* cmd_eval(argc, argv) — `crucible eval`: many solutions against many tasks, in parallel. */
int cmd_eval(int argc, char **argv);

/* cmd_report(argc, argv) — `crucible report`: an evaluation's records as an HTML report. */
int cmd_report(int argc, char **argv);

/* cmd_serve(argc, argv) — `crucible serve`: the HTTP service (docs/API.md). */
int cmd_serve(int argc, char **argv);

/* cmd_worker(argc, argv) — `crucible worker`: a cluster's worker (docs/CLUSTER.md). */
int cmd_worker(int argc, char **argv);

/* cmd_session(argc, argv) — `crucible session`: a server's sessions by hand (docs/API.md). */
int cmd_session(int argc, char **argv);

/* cmd_image(argc, argv) — `crucible image`: import, list, inspect, tag, rm, gc (docs/IMAGES.md). */
int cmd_image(int argc, char **argv);

/* cmd_bench(argc, argv) — `crucible bench`: the benchmarks of docs/BENCHMARKS.md, here. */
int cmd_bench(int argc, char **argv);
#endif
