/*
 * restart: the simulator's controller restarted mid-run (see restart.c):
 * state exported as JSON, rebuilt from nodes, tenants, running and pending
 * workloads, then the export imported.  A restarted run must decide
 * exactly what the uninterrupted run decides (kerf sim check compares).
 */
#ifndef KERF_SIM_RESTART_H
#define KERF_SIM_RESTART_H

#include "base/err.h"
#include "sim/timesim.h"

int kerf_timesim_restart(struct kerf_timesim *ts, struct kerf_err *err);

#endif /* KERF_SIM_RESTART_H */
