/*
 * cmd: the subcommands of the kerf binary.  Each returns the process exit
 * status: 0 success, 1 failure, 2 usage error.
 */
#ifndef KERF_CMD_CMD_H
#define KERF_CMD_CMD_H

int kerf_cmd_sim(int argc, char **argv);
int kerf_cmd_sim_openb(int argc, char **argv);
int kerf_cmd_sim_demo(int argc, char **argv);

#endif /* KERF_CMD_CMD_H */
