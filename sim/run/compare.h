/* compare — two variants of one scenario on common random numbers, and
 * their differences with paired confidence intervals (`specsim compare`).
 *
 * Side a and side b are the same scenario with different overrides. Both
 * run with the same seed, so replication r of each draws from the same
 * streams (seed, r, entity, purpose) (sim/engine/rng.h): what the sides
 * have in common is drawn alike, and the per-replication difference
 * b_r - a_r is free of most of the noise both share (docs/guide.md,
 * "Compare", says which draws are shared and when sharing is lost).
 *
 * Statistics, per metric, over the n replications where both sides have a
 * value (metrics undefined in a replication, NaN, drop its pair):
 *   a, b        each side's mean; a_ci95, b_ci95 its own t half-width;
 *   diff        mean of d_r = b_r - a_r, half-width t(0.975, n-1)·sd(d)/√n
 *               (paired t);
 *   ratio       b/a (the ratio of the means), half-width by the delta
 *               method: t(0.975, n-1)·sd(e)/(√n·|a|) with e_r = b_r -
 *               ratio·a_r (first-order; symmetric; NaN when a is 0);
 *   diff_ci95_unpaired  the half-width the difference would have from
 *               independent runs of the same length: Welch's, t(0.975, df)
 *               ·√((s_a² + s_b²)/n) with Welch–Satterthwaite df, from each
 *               side's own spread (which common random numbers leave as
 *               it is);
 *   corr        the correlation of a_r and b_r: the paired variance is
 *               s_a² + s_b² - 2·corr·s_a·s_b.
 * With n < 2 every half-width is 0 (as in a run's summary); with n = 0
 * everything is NaN. A half-width within rounding of 0 relative to the
 * values (replications that agree) is 0.
 */
#ifndef SPECSIM_COMPARE_H
#define SPECSIM_COMPARE_H

#include "base/api.h"

#include <stdio.h>

#include "base/err.h"
#include "config/overrides.h"
#include "config/scenario.h"
#include "stat/metrics.h"

typedef struct compare_stat {
    int pairs;               /* replications where both sides have a value */
    double a, a_ci95;
    double b, b_ci95;
    double diff, diff_ci95;  /* b - a, paired t */
    double diff_ci95_unpaired;
    double ratio, ratio_ci95; /* b / a, delta method */
    double corr;             /* of the pairs; NaN when a side does not vary */
} compare_stat_t;

typedef struct compare_result {
    int reps;                         /* replications of each side */
    compare_stat_t m[METRIC_COUNT];   /* by metric id */
} compare_result_t;

/* The statistics of one metric from its per-replication values a[r], b[r],
 * r < n (NaN: no value; infinities count as none either). */
void compare_stat(const double *a, const double *b, int n, compare_stat_t *out);

/* Every metric of R paired replications (a[r], b[r]: sim_options_t's
 * rep_values of each side). 0, or -1 when memory runs out. */
int compare_pairs(const metrics_rep_t *a, const metrics_rep_t *b, int R,
                  compare_result_t *out);

/* One side: src loaded with the common overrides (the command's --set,
 * --seed, --reps) and then the side's own (--a or --b), so that the
 * side's win. *out as scenario_src_load leaves it (the caller frees it
 * with scenario_fini on success). 0, or -1 with err (ERR_INPUT: the
 * message names the override's position, --set:N:COL or --a:N:COL). */
SPECSIM_API int compare_load(const scenario_src_t *src, const overrides_t *common,
                             const overrides_t *side, scenario_t *out, err_t *err);

/* Runs sa and sb, s->replications each, and pairs them into *out. They
 * must have the same number of replications (ERR_INPUT otherwise); with
 * different seeds nothing is shared, which err_warn says. jobs is the
 * thread budget (<= 0: the cores), shared by the two sides as sweep
 * points share it (sim/run/pool.h): with 2 or more both sides run at
 * once, each on pool_share(jobs, 2, side) threads; the result is the same
 * for any jobs, wall_s and events_per_s aside. 0, or -1 with err. */
SPECSIM_API int compare_run(const scenario_t *sa, const scenario_t *sb, long jobs,
                            compare_result_t *out, err_t *err);

/* What a report shows besides the numbers: the sides as run, and each
 * side's own overrides as given (borrowed). */
typedef struct compare_report {
    const scenario_t *a, *b;
    const overrides_t *ova, *ovb;
    const compare_result_t *r;
} compare_report_t;

/* The readable table (`specsim compare`'s default): a header naming the
 * scenario, the two sides, seed and replications, then the summary's
 * sections with a line per metric: a, b, b-a with its paired and its
 * unpaired half-width, b/a with its half-width, the unit. */
SPECSIM_API int compare_print(FILE *f, const compare_report_t *rep);

/* One JSON object: "scenario", "version", "seed", "replications", "a",
 * "b" (the overrides as "PATH=VALUE" strings), "ratio_ci" ("delta"),
 * "unpaired_ci" ("welch"), then "metrics": {NAME: {"pairs", "a",
 * "a_ci95", "b", "b_ci95", "diff", "diff_ci95", "diff_ci95_unpaired",
 * "ratio", "ratio_ci95", "corr"}} in METRICS_LIST order. */
SPECSIM_API int compare_json(FILE *f, const compare_report_t *rep);

/* CSV: the header "metric,pairs,a,a_ci95,b,b_ci95,diff,diff_ci95,
 * diff_ci95_unpaired,ratio,ratio_ci95,corr" and a row per metric. */
int compare_csv(FILE *f, const compare_report_t *rep);

/* The report to path (.json: compare_json, .csv: compare_csv), atomically,
 * with the sidecar output_write_file writes (sim/run/output.h) for base
 * (the scenario before --a and --b), headed by comments giving each side's
 * overrides. 0, or -1 with err. */
SPECSIM_API int compare_write_file(const char *path, const scenario_t *base,
                                   const compare_report_t *rep, err_t *err);

#endif
