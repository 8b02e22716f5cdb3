/* sim — one simulation of a scenario: builds the entities on an engine, runs
 * every replication and summarises the metrics.
 *
 * Re-entrant: no state outside the arguments, so sweeps run several sim_run
 * calls on different threads at once, and one sim_run may run its
 * replications on threads of its own (sim_options_t.jobs).
 */
#ifndef SPECSIM_SIM_H
#define SPECSIM_SIM_H

#include "base/api.h"

#include <stdio.h>

#include "base/err.h"
#include "stat/metrics.h"
#include "run/output.h"
#include "config/scenario.h"
#include "stat/tally.h"

/* The warm-up diagnostic of a run (sim/stat/mser.h): MSER-5's truncation point
 * on each replication's committed-token series. */
typedef struct sim_warmup_diag {
    double bin_s;          /* width of the series' time bins */
    double pick_max_s;     /* the latest pick over the replications */
    double pick_mean_s;
    int rep_of_max;        /* the replication it came from */
    double used_s;         /* the warm-up the metrics deleted (auto: the
                              mean of the per-replication picks) */
} sim_warmup_diag_t;

/* A bound a run with precision: must settle (optimize's constraints,
 * sim/run/optimize.h): replications are added until the 95% interval
 * of `metric` (the one a constraint is judged by) lies on one side of
 * `bound`, or is no wider than precision.relative of |bound| either side
 * (nearer than that the bound cannot be told apart at the precision
 * asked). A point near a bound so gets more replications than one far
 * from it. */
typedef struct sim_bound {
    int metric;            /* sim/stat/metrics.h id */
    double bound;
} sim_bound_t;

/* What a run with precision: (sim/desc/scenario.h) came to. */
typedef struct sim_precision {
    int replications;      /* those the results are over */
    int met;               /* every target was met and every bound settled
                              (else the cap ended it) */
    int bounds, settled;   /* sim_options_t's bounds; those settled */
    /* Per metric of precision.metrics, in order: the interval's half-width
     * at precision.confidence over |mean| (INFINITY when not judged). */
    double relative[PRECISION_METRICS_MAX];
} sim_precision_t;

/* "met after N replications (target ±1% at 95%): itl_mean_s ±0.62%, ..."
 * or "NOT met at the cap of N replications ...", into buf (n bytes,
 * truncated to fit): what a run with precision: came to, for a report. */
SPECSIM_API void sim_precision_text(const scenario_t *s, const sim_precision_t *p,
                                    char *buf, size_t n);

/* The replications every run of s makes: s->replications, or with
 * precision: its first round (at least 10, at most the cap), which the
 * run never stops before. --trace-rep may pick any of them. */
SPECSIM_API int sim_first_round(const scenario_t *s);

typedef struct sim_options {
    FILE *trace;      /* per-event timeline of one replication, or NULL */
    const struct trace_ops *trace_format; /* its sink (sim/io/trace.h); NULL:
                                             CSV */
    int trace_rep;    /* which replication it shows (< replications) */
    sim_warmup_diag_t *warmup; /* filled when not NULL */
    /* Called after each replication with the number done and the total
     * (the library prints nothing: the command line shows progress), or
     * NULL. */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
    /* Per tenant group: s->ngroups summaries the run fills (their `groups`
     * left NULL), or NULL. */
    metrics_summary_t *groups;
    /* `run --per-tenant`: CSV of one row per tenant per replication
     * (output_tenant_header / output_tenant_row, output.h), or NULL. */
    FILE *per_tenant;
    /* Threads for the replications (at most replications of them are
     * started); 0 or 1: all in the calling thread. The results are the same
     * for any value (sim.c: replications are summarised, their rows
     * written and progress reported in replication order); only wall_s
     * and events_per_s differ. The progress callback is called from the
     * calling thread; the trace is written by the thread that runs its
     * replication. */
    int jobs;
    /* When not NULL: s->replications records, caller-owned, that a run
     * which succeeds fills with each replication's own values in
     * replication order (events and wall_s those of the replication
     * alone), for a caller that pairs them (sim/run/compare.h). */
    metrics_rep_t *rep_values;
    /* With precision: filled when not NULL (replications used, targets
     * met); rep_values then needs precision.max_replications records. */
    sim_precision_t *precision;
    /* With precision: bounds to settle too (sim_bound_t), caller-owned;
     * ignored without precision. */
    const sim_bound_t *bounds;
    int nbounds;
    /* Filled when not NULL: the part of wall_s spent building the
     * replications' worlds (every tenant's state, the cloud, the first
     * events): wall_s times set-up's share of the replications' own time
     * (with threads they overlap), reported apart for large fleets. */
    double *setup_s;
} sim_options_t;

/* Runs s->replications replications of s->duration simulated seconds each and
 * fills *out. s is a scenario the loader accepted (sim/config/scenario.h makes every
 * check, so `check` accepts exactly what `run` does) or one built in code
 * with the same limits; in one built in code a NULL protocol, gamma policy
 * or batching policy means the registry's default. Uses the service models
 * the loader built; a scenario built in code gets its own for the run.
 * Returns 0, or -1 with err filled (ERR_RUNTIME for a failure during the
 * run; ERR_INPUT when a service model of a scenario built in code cannot be
 * made, or when it holds what the loader refuses and the run could not
 * survive: gamma or the policy's limit outside [1, GAMMA_MAX], a
 * token limit below it + 1, no KV room, no tenants, ...). */
SPECSIM_API int sim_run(const scenario_t *s, const sim_options_t *opt,
            metrics_summary_t *out, err_t *err);

/* sim_run plus the raw totals of replication 0 in *tot (may be NULL). */
int sim_run_detailed(const scenario_t *s, const sim_options_t *opt,
                     metrics_summary_t *out, tally_totals_t *tot, err_t *err);

/* Where the service times came from, for the run report (output_sources_t:
 * output.h); release with output_sources_fini. */
SPECSIM_API int sim_service_sources(const scenario_t *s, output_sources_t *out, err_t *err);

/* Tenant group g's edge (draft) source, one of the names above (a static
 * string), or NULL with err filled when its service cannot be built. */
const char *sim_edge_source(const scenario_t *s, int g, err_t *err);

/* The pieces of a run that a wall-clock driver (the testbed, testbed/)
 * builds its own replications from, as sim_run builds them:
 * sim_shared_init fills *sh (sim/entity/repl.h: the services and KV sizing every
 * replication shares; 0, or -1 with err and *sh left empty), released with
 * sim_shared_fini; sim_tally_create returns a tally for s's groups, their
 * protocols, SLOs and the cloud's power and price (caller frees with
 * tally_free; NULL when out of memory). */
struct repl_shared;
int sim_shared_init(const scenario_t *s, struct repl_shared *sh, err_t *err);
void sim_shared_fini(struct repl_shared *sh);
tally_t *sim_tally_create(const scenario_t *s);

#endif
