/* optimize — the `optimize:` section of a scenario and the searches that
 * answer it: the best point of a grid of knobs for one objective under
 * constraints, every point a whole simulation (sweep_eval_src, sim/run/sweep.h).
 *
 *   optimize:
 *     knobs:                              # the axes of a sweep: section
 *       tenants.count: {from: 1, to: 64, step: 1}
 *     max: tenants.count                  # or min: METRIC; a metric name
 *                                         # (docs/metrics.md) or a knob
 *     constraints:                        # all must hold; optional
 *       - itl_p99_s <= 80ms
 *       - slo_attainment >= 0.99
 *     search: auto                        # auto | bisect | coordinate | grid
 *     monotone: true                      # one knob: the constraints fail
 *                                         # on one side of a boundary
 *
 * Knobs are read by sweepspec (sim/config/sweepspec.h), so lists and ranges, units
 * and messages are a sweep's; a knob's points are numbered as a sweep's.
 *
 * Noise: a constraint is met only when its 95% confidence interval lies on
 * the right side of the bound (`<=`: value + ci95 <= bound; `>=`: value -
 * ci95 >= bound). That needs replications >= 2, so a section with
 * constraints is refused with fewer (a CI of 0 would make the test the
 * noisy one it is meant to avoid); and at each point, two replications
 * with a value of the constraint's metric (those without one are left out
 * of its mean): with fewer the point is not judged, so not feasible, and
 * the report counts it.
 *
 * Searches:
 *   grid        every point (exhaustive; the reference the others are
 *               tested against).
 *   bisect      one knob whose feasibility is monotone along its values
 *               (capacity planning: more tenants only ever break an SLO).
 *               Evaluates both ends, then halves the interval between a
 *               feasible and an infeasible point: 2 + ceil(log2 n) points.
 *               Assumes the objective improves towards the boundary (as
 *               `max: tenants.count` does); the answer is the best
 *               feasible point evaluated.
 *   coordinate  from the first value of every knob, a line search over
 *               each knob's values in turn (all values of one knob in
 *               parallel), moving only on a strict improvement, until a
 *               whole cycle moves nothing. A local search: it finds the
 *               grid's answer when the landscape has one optimum per line.
 *   auto        bisect when `monotone: true`, else coordinate.
 * A point ranks above another when it is feasible and the other is not;
 * among feasible points by the objective, among infeasible ones by the
 * summed relative violation of the constraints; ties go to the lower point
 * number, so every search and every -j gives the same answer.
 *
 * Errors are ERR_INPUT "FILE:LINE:COL: optimize.KEY: what".
 */
#ifndef SPECSIM_OPTIMIZE_H
#define SPECSIM_OPTIMIZE_H

#include "base/api.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "stat/metrics.h"
#include "config/scenario.h"
#include "config/sweepspec.h"

/* More points than this in a grid search, or knob values in all in a
 * coordinate search, is a mistake (each point keeps its summary in
 * memory). */
#define OPTIMIZE_MAX_GRID 100000ULL

typedef enum optimize_search {
    OPTIMIZE_AUTO = 0,
    OPTIMIZE_BISECT,
    OPTIMIZE_COORDINATE,
    OPTIMIZE_GRID
} optimize_search_t;

typedef enum optimize_op { OPTIMIZE_LE = 0, OPTIMIZE_GE } optimize_op_t;

typedef struct optimize_constraint {
    int metric;            /* metric id (metrics.h) */
    optimize_op_t op;
    double bound;          /* in the metric's unit (seconds for a duration) */
    char text[128];        /* as written, for messages and output */
} optimize_constraint_t;

typedef struct optimize_spec {
    sweepspec_t knobs;     /* owned; knobs.file names the scenario */
    int maximize;
    int objective;         /* metric id, or -1 when objective_knob >= 0 */
    int objective_knob;    /* knob index, or -1 */
    char objective_name[128];
    optimize_constraint_t *cons;   /* owned, ncons entries */
    int ncons;
    int cons_line, cons_col;       /* mark of `constraints:` */
    char cons_src[SCEN_PATH_MAX];  /* its file, or "--constraint" */
    optimize_search_t search;      /* as resolved: never OPTIMIZE_AUTO */
    int line, col;                 /* mark of `optimize:` */
} optimize_spec_t;

/* Reads the optimize: section of a scenario file (from its text when `text`
 * is not NULL). A file without one is an ERR_INPUT error. The caller frees
 * *out with optimize_spec_fini (also after a failed load). */
int optimize_spec_load(const char *path, const char *text, optimize_spec_t *out,
                       err_t *err);

/* The section's parts given on the command line (`specsim optimize`). Each
 * part given replaces that part of the section whole; the parts not given
 * come from the section (a scenario without one needs --knob and --max or
 * --min):
 *   --knob PATH=VALUES   (repeatable) replaces knobs: VALUES is what the
 *                        section's axis takes ([1, 2, 4] or {from: 1, to: 64,
 *                        step: 1}), or 1,2,4, or FROM..TO[:STEP] (step 1 when
 *                        not given): 1..64, 10ms..100ms:10ms
 *   --max/--min METRIC   replaces max:/min:
 *   --constraint 'M<=V'  (repeatable) replaces constraints:
 *   --search S           replaces search: (monotone: still applies to auto)
 * Messages name them as --set's are named: "--knob:N:COL" (N: the option's
 * place among the --knob options), "--constraint:N:1", "--max", "--search". */
typedef struct optimize_flags {
    const char *const *knobs;  /* "PATH=VALUES" */
    int nknobs;
    const char *objective;     /* NULL: the section's */
    int maximize;              /* --max (1) or --min (0) */
    const char *const *cons;   /* "METRIC <= VALUE" */
    int ncons;
    const char *search;        /* NULL: the section's */
} optimize_flags_t;

/* optimize_spec_load with the parts fl gives (fl may be NULL). */
SPECSIM_API int optimize_spec_load_flags(const char *path, const char *text,
                             const optimize_flags_t *fl, optimize_spec_t *out,
                             err_t *err);

/* For `specsim check`: when the scenario src (read once, sim/config/scenario.h)
 * has an optimize: section, reads it into *out and checks
 * it as `specsim optimize` does before evaluating any point (every knob
 * value loads with the base overrides sets, constraints have replications);
 * without one, *out is left empty (knobs.naxes 0). 0, or -1 with err. The
 * caller frees *out with optimize_spec_fini. */
SPECSIM_API int optimize_check(const scenario_src_t *src, const scenario_override_t *sets, int nsets,
                   optimize_spec_t *out, err_t *err);

/* Writes the section back as YAML, resolved: knobs as explicit lists,
 * constraints with their bounds in the metric's unit (seconds), the search
 * actually run. Nothing when sp has no knobs. 0, or -1 on a write error. */
SPECSIM_API int optimize_write_yaml(const optimize_spec_t *sp, FILE *f);
SPECSIM_API void optimize_spec_fini(optimize_spec_t *sp);

/* "grid", "bisect", "coordinate". */
SPECSIM_API const char *optimize_search_name(optimize_search_t s);

typedef struct optimize_eval {
    uint64_t point;        /* the point number of the knobs' grid */
    metrics_summary_t m;
    int feasible;
    int unjudged;          /* constraints that could not be judged here
                              (OPTIMIZE_UNJUDGED); such a point is not
                              feasible */
    double violation;      /* summed relative violation; 0 when feasible,
                              infinite when a constraint is unjudged */
} optimize_eval_t;

typedef struct optimize_result {
    optimize_eval_t *evals;    /* owned; every point evaluated, ascending point */
    size_t nevals;
    long best;                 /* index into evals; -1: no feasible point
                                  with a value of the objective */
    size_t nunjudged;          /* points with an unjudged constraint */
    int has_slo;               /* the base scenario has an SLO (slo: ttft or
                                  tpot, top-level or a group's) */
    int precision;             /* it has precision: points' replications
                                  differ (each eval's m.reps), and are shown */
    size_t *frontier;          /* owned; indices into evals, ascending in the
                                  first constraint's metric; 0 without one */
    size_t nfrontier;
} optimize_result_t;

typedef struct optimize_opts {
    const char *scenario;              /* the scenario file */
    const scenario_override_t *sets;   /* base --set options (not owned) */
    int nsets;
    long jobs;                         /* threads; <= 0: number of cores */
    const char *out;                   /* the CSV to be written, or NULL: refused
                                          before the search when it is a file
                                          the scenario reads */
} optimize_opts_t;

/* Validates the knobs against the scenario (every value loads, as sweep
 * checks them), checks replications, runs the search. Fills *res (the
 * caller frees it with optimize_result_fini, also after a failure). 0, or
 * -1 with err (ERR_INPUT for the section or the scenario, ERR_RUNTIME for a
 * failed point). */
SPECSIM_API int optimize_run(const optimize_opts_t *o, const optimize_spec_t *sp,
                 optimize_result_t *res, err_t *err);
SPECSIM_API void optimize_result_fini(optimize_result_t *res);

/* The objective's value at an evaluated point (the knob's number or the
 * metric's mean); NAN when it has none. */
SPECSIM_API double optimize_objective(const optimize_spec_t *sp, const optimize_eval_t *e);

/* A constraint at one point: met, not met, or not judged — its metric has
 * no value there, or only one replication has one (metrics_summary_t's
 * `valued`): a single value has a half-width of 0, which would let one
 * lucky replication meet any bound. An unjudged constraint is not met. */
typedef enum optimize_verdict {
    OPTIMIZE_NOT_MET = 0,
    OPTIMIZE_MET,
    OPTIMIZE_UNJUDGED
} optimize_verdict_t;
optimize_verdict_t optimize_constraint_judge(const optimize_constraint_t *c,
                                             const metrics_summary_t *m);
/* Whether constraint c holds at summary m (CI-aware, see above): judged
 * and met. */
int optimize_constraint_met(const optimize_constraint_t *c, const metrics_summary_t *m);

/* Why a result has no best point (res->best < 0), in one sentence for the
 * report: a constraint whose metric has no value anywhere (an SLO metric in
 * a scenario without an slo: section says so), the objective without a
 * value at every feasible point, points that could not be judged, or no
 * point meeting the constraints. Writes buf (size n) and returns 1; 0 and
 * nothing written when there is a best. */
SPECSIM_API int optimize_why_none(const optimize_spec_t *sp, const optimize_result_t *res,
                                  char *buf, size_t n);

#endif
