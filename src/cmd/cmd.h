/*
 * cmd: the subcommands of the kerf binary.  Each returns the process exit
 * status: 0 success, 1 failure, 2 usage error.
 */
#ifndef KERF_CMD_CMD_H
#define KERF_CMD_CMD_H

#include <stdbool.h>

#include "cmd/output.h"

int kerf_cmd_sim(int argc, char **argv);
int kerf_cmd_sim_openb(int argc, char **argv);
int kerf_cmd_sim_demo(int argc, char **argv);
int kerf_cmd_sim_day(int argc, char **argv);
int kerf_cmd_sim_replay(int argc, char **argv);
int kerf_cmd_sim_gpuspec(int argc, char **argv);
int kerf_cmd_sim_check(int argc, char **argv);
int kerf_cmd_sim_run(int argc, char **argv);
int kerf_cmd_sim_mig(int argc, char **argv);
int kerf_cmd_sim_snapshot(int argc, char **argv);
int kerf_cmd_plan_mig(int argc, char **argv);
int kerf_cmd_serve(int argc, char **argv);
int kerf_cmd_get(int argc, char **argv);
int kerf_cmd_explain(int argc, char **argv);
int kerf_cmd_top(int argc, char **argv);
int kerf_cmd_what_if(int argc, char **argv);
int kerf_cmd_admission(int argc, char **argv);
int kerf_cmd_agent_metrics(int argc, char **argv);
int kerf_cmd_agent_mig(int argc, char **argv);
int kerf_cmd_agent(int argc, char **argv);
int kerf_cmd_agent_run(int argc, char **argv);
int kerf_cmd_agent_verify(int argc, char **argv);

struct kerf_scenario;
struct kerf_sim_out;

/*
 * Run a time-mode scenario and print its report; returns the exit status:
 * 0, 1 on failure, 3 when some workload is still pending at the end.  o
 * (cmd/sim_report.h), when not NULL, adds progress and --report.
 */
int kerf_sim_scenario_report(const struct kerf_scenario *sc,
			     enum kerf_cli_output fmt, struct kerf_sim_out *o);

/* Write the built-in scenario on stdout; 0, or 1 after a message. */
int kerf_sim_print_builtin(const char *prog);

#endif /* KERF_CMD_CMD_H */
