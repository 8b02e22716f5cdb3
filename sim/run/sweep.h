/* sweep — run a scenario's `sweep:` section point by point on a thread
 * pool, append each finished point to a CSV in point order, resume
 * interrupted sweeps and shard them across machines (sweepfile.h merges the
 * shards back into the file an unsharded run writes).
 *
 * Library code: it prints nothing; progress goes to a callback the caller
 * supplies (the command line, sim/cli/cli_sweep.c, draws a progress line).
 */
#ifndef SPECSIM_SWEEP_H
#define SPECSIM_SWEEP_H

#include "base/api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "stat/metrics.h"
#include "config/scenario.h"
#include "config/sweepspec.h"
#include "run/sim.h"

/* Points written so far: done of total (this shard's points), of which
 * done_at_start were already in the file when the sweep resumed; final is 1
 * on the last call. */
typedef struct sweep_progress {
    uint64_t done, total, done_at_start;
    int final;
} sweep_progress_t;

typedef struct sweep_opts {
    const char *scenario;              /* the sweep scenario file */
    const char *out;                   /* NULL: the sweep's output.file, else
                                          "-" (standard output) */
    long jobs;                         /* the thread budget, shared by the
                                          points and their replications
                                          (sim/run/pool.h); <= 0: number of
                                          cores */
    uint64_t shard_i, shard_n;         /* points i, i+n, ...; n >= 1 */
    int resume, force, independent_seeds;
    int per_group;                     /* GROUP.metric columns (--per-group):
                                          every point must keep the base
                                          scenario's tenant groups */
    const scenario_override_t *sets;   /* base --set options (not owned) */
    int nsets;
    /* Called after each batch of rows written and once at the end, from
     * the calling thread; NULL for none. */
    void (*progress)(void *ctx, const sweep_progress_t *p);
    void *progress_ctx;
} sweep_opts_t;

/* Runs (or resumes) the sweep. 0, or -1 with err filled (ERR_INPUT for a
 * bad sweep spec or option combination, ERR_RUNTIME for a failed point or
 * I/O; rows written before a failure are kept). */
SPECSIM_API int sweep_run(const sweep_opts_t *o, err_t *err);

/* Runs the points points[0..n) of sp — each the scenario src (read and
 * parsed once, sim/config/scenario.h, so that a search calling this batch
 * after batch reads its inputs once) with the overrides sets[0..nsets)
 * then sp's axes at that point, common random numbers — on a budget of
 * `jobs` threads shared as sweep_run shares it (sim/run/pool.h; <= 0:
 * number of cores) and stores the summary of points[k] in out[k]
 * (caller-owned, n entries; wall-clock metrics left NAN as in sweep
 * files). For searches that pick the next points from the last ones
 * (sim/run/optimize.h). With precision:, each point also settles the
 * nbounds bounds (sim_bound_t, sim/run/sim.h; caller-owned, may be NULL
 * with 0). 0, or -1 with err: the first failed point in the order given,
 * naming it. */
int sweep_eval_src(const scenario_src_t *src, const sweepspec_t *sp,
                   const scenario_override_t *sets, int nsets,
                   const uint64_t *points, size_t n, long jobs,
                   const sim_bound_t *bounds, int nbounds,
                   metrics_summary_t *out, err_t *err);

/* Writes to f the `specsim run` command line that reproduces point `row`
 * (its --set options), from any directory: after the "# read PATH sha256
 * HEX" lines of the files the point reads, the scenario and every --set
 * value that names one of those files by absolute path. 0, or -1 with err
 * filled. */
SPECSIM_API int sweep_explain(FILE *f, const sweep_opts_t *o, uint64_t row, err_t *err);

#endif
