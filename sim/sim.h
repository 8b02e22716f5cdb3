/* sim — one simulation of a scenario: builds the entities on an engine, runs
 * every replication and summarises the metrics.
 *
 * Re-entrant: no state outside the arguments, so sweeps run several sim_run
 * calls on different threads at once.
 */
#ifndef SPECSIM_SIM_H
#define SPECSIM_SIM_H

#include <stdio.h>

#include "err.h"
#include "metrics.h"
#include "scenario.h"

typedef struct sim_options {
    FILE *trace;      /* per-event timeline (CSV) of replication 0, or NULL */
    int quiet;        /* no progress on stderr */
} sim_options_t;

/* Runs s->replications replications of s->duration simulated seconds each and
 * fills *out. Returns 0, or -1 with err filled (ERR_RUNTIME for a failure
 * during the run, ERR_INPUT for a scenario the model cannot simulate). */
int sim_run(const scenario_t *s, const sim_options_t *opt,
            metrics_summary_t *out, err_t *err);

/* Where the service times came from, for the run report:
 * "fixed", "distribution", "table", "fitted" or "datasheet". */
typedef struct sim_sources {
    char edge[32];
    char cloud[32];
} sim_sources_t;
int sim_service_sources(const scenario_t *s, sim_sources_t *out, err_t *err);

#endif
