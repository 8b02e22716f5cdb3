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
 * fills *out. s is a scenario the loader accepted (sim/scenario.h makes every
 * check, so `check` accepts exactly what `run` does) or one built in code
 * with the same limits. Uses the service models the loader built; a scenario
 * built in code gets its own for the run. Returns 0, or -1 with err filled
 * (ERR_RUNTIME for a failure during the run; ERR_INPUT when a service model
 * of a scenario built in code cannot be made). */
int sim_run(const scenario_t *s, const sim_options_t *opt,
            metrics_summary_t *out, err_t *err);

/* Whole-replication totals, not clipped to the warm-up, for conservation
 * and Little's-law checks (tests) — replication 0 of a sim_run_detailed. */
typedef struct sim_totals {
    double end;               /* simulated time covered (duration) */
    /* tokens */
    double drafted;           /* draft tokens completed (+ partial ones discarded) */
    double discarded;         /* drafted then thrown away */
    double draft_committed;   /* drafted tokens that were committed */
    double extra_committed;   /* corrections, bonus tokens, cloud-only tokens */
    double first_tokens;      /* first tokens (from prefill) committed */
    double committed;         /* every token committed at the edges */
    double pending_drafts;    /* drafted, undecided at the end (blocks in flight) */
    /* cloud queue: jobs waiting to enter their first iteration */
    double queue_area;        /* integral of the number waiting over [0, end] */
    double queue_arrivals;    /* jobs that entered a queue */
    double queue_started;     /* jobs that entered an iteration */
    double queue_purged;      /* jobs purged (stale) before starting */
    double queue_delay_sum;   /* sum of arrival -> first iteration, started jobs */
    double queue_purged_sojourn; /* sum of arrival -> purge, purged jobs */
    double queue_open_sojourn;   /* sum of arrival -> end, jobs still waiting */
    double queue_waiting_end; /* jobs waiting at the end */
    /* verification */
    double verdicts;          /* verify jobs decided (non-stale) */
    double verified_tokens;   /* (gamma+1) per verify job computed */
    double stale_tokens;      /* of which in stale blocks */
    double blocks_dropped;    /* stale blocks dropped on arrival */
    double busy_s;            /* GPU busy seconds, all replicas */
    double iterations;
    double requests_done;
} sim_totals_t;

/* sim_run plus the raw totals of replication 0 in *tot (may be NULL). */
int sim_run_detailed(const scenario_t *s, const sim_options_t *opt,
                     metrics_summary_t *out, sim_totals_t *tot, err_t *err);

/* Where the service times came from, for the run report:
 * "fixed", "distribution", "table", "fitted" or "datasheet". `edge` is the
 * source every tenant group shares, or "mixed" when they differ;
 * edge_group[g] is group g's own. sim_service_sources fills it all (free
 * with sim_sources_fini); a record filled by hand may leave ngroups 0. */
typedef struct sim_sources {
    char edge[32];
    char cloud[32];
    int ngroups;              /* entries of edge_group; 0 = not known */
    const char **edge_group;  /* owned array of static strings, in the
                                 scenario's group order */
} sim_sources_t;
int sim_service_sources(const scenario_t *s, sim_sources_t *out, err_t *err);
void sim_sources_fini(sim_sources_t *src);

/* Tenant group g's edge (draft) source, one of the names above (a static
 * string), or NULL with err filled when its service cannot be built. */
const char *sim_edge_source(const scenario_t *s, int g, err_t *err);

#endif
