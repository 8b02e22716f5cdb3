/* sweepspec — the `sweep:` section of a scenario file: axes addressed by
 * dotted path, expanded into the list of points a sweep runs.
 *
 *   sweep:
 *     zip: false                  # optional: pair axes instead of crossing them
 *     independent_seeds: false    # optional: per-point seeds (default: CRN)
 *     protocol.gamma: [1, 2, 4, 8]                        # a list
 *     tenants.network.rtt: {from: 10ms, to: 100ms, step: 10ms}
 *     cloud.batching.max_batch: {from: 1, to: 64, count: 7, scale: log,
 *                                integer: true}
 *
 * Every key other than zip/independent_seeds is an axis; an axis is a list
 * (items are scalars or flow nodes such as distributions) or a range:
 * {from, to, step} or {from, to, count[, scale: lin|log][, integer: BOOL]}.
 * A range may be written in any unit `--set` accepts (sim/base/units.h:
 * durations, bit and byte rates up to Tbps and TB/s, sizes, arrival rates);
 * its values keep the unit of `from` (`to` and `step` may use another unit
 * of the same quantity and are converted), so `10ms` ranges produce "10ms",
 * "20ms", ... and `1MB/s` ones "1MB/s", "2MB/s", ... — the strings handed to
 * the scenario loader as `--set PATH=VALUE`. Values print with 10
 * significant digits, so decimal steps read as a hand count gives them
 * (0.1 + 2 x 0.1 is "0.3").
 *
 * Points are numbered 0..npoints-1: Cartesian product with the first axis
 * outermost (the last axis varies fastest), or with zip the i-th value of
 * every axis. Errors are ERR_INPUT with "FILE:LINE:COLUMN: sweep.PATH: ...".
 */
#ifndef SPECSIM_SWEEPSPEC_H
#define SPECSIM_SWEEPSPEC_H

#include "base/api.h"

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "config/scenario.h"

/* More points than this is certainly a mistake (and would overflow row
 * bookkeeping); the limit is an input error. */
#define SWEEPSPEC_MAX_POINTS 100000000ULL
/* All axes together hold at most this many values (each a string kept in
 * memory), counted before they are made: a range counts every step, also
 * the repeats that `integer: true` drops. The point limit alone does not
 * bound them: zipped axes of equal length add values and no points, and
 * every axis is expanded before the points are counted. Ten million is
 * also the most one axis may hold, and more than any product sweep under
 * the point limit needs. */
#define SWEEPSPEC_MAX_VALUES 10000000L

typedef struct sweep_axis {
    char *path;          /* dotted path, owned */
    char **values;       /* owned strings, nvalues >= 1: the --set values */
    int *vline, *vcol;   /* 1-based mark of the node each value came from */
    unsigned char *vflow;/* 1: the value is a flow node (a distribution...)
                            as YAML text, 0: a scalar's own text */
    int nvalues;
    int line, col;       /* 1-based mark of the axis key */
} sweep_axis_t;

typedef struct sweepspec {
    char file[SCEN_PATH_MAX];
    sweep_axis_t *axes;  /* owned, naxes >= 1 */
    int naxes;
    int zip;
    int independent_seeds;
    int line, col;       /* mark of the `sweep:` key */
    uint64_t npoints;
} sweepspec_t;

/* Reads the `sweep:` section of a scenario file. A file
 * without a `sweep:` section is an ERR_INPUT error. The caller owns *out and
 * frees it with sweepspec_fini (also safe after a failed load). */
int sweepspec_load(const char *path, sweepspec_t *out, err_t *err);
/* Same from a YAML string; `name` stands for the file in messages. */
int sweepspec_load_string(const char *name, const char *yaml, sweepspec_t *out,
                          err_t *err);
SPECSIM_API void sweepspec_fini(sweepspec_t *sp);
/* Reads axes written as a sweep: section's from the value of `key` (a pair
 * of a ynode tree, sim/io/ynode.h) of file `name`: how other sections (the
 * optimize: knobs, sim/run/optimize.h) reuse the axis syntax. Messages name the
 * axes sweep.PATH. Same ownership as sweepspec_load. */
struct ynode_pair;
int sweepspec_from_node(const char *name, const struct ynode_pair *key,
                        sweepspec_t *out, err_t *err);

/* The value of every axis at `point` (< npoints): values[a] points into sp;
 * or its index into each axis's values. */
SPECSIM_API void sweepspec_point(const sweepspec_t *sp, uint64_t point,
                     const char **values);
void sweepspec_point_index(const sweepspec_t *sp, uint64_t point, int *idx);

/* 1 when an axis sets the precision: section (the whole section, as
 * `precision`, or one of its keys, `precision.relative`): every point then
 * stops at a precision, each at its own count. Else 0. */
int sweepspec_sets_precision(const sweepspec_t *sp);
/* With precision: the CSV gives every point a `replications` column (what
 * it ran), and an axis over `replications` (its first round) would write a
 * second column of that name: 0 when sp has none, else -1 with err at the
 * axis key; `section` names it in the message ("sweep", "optimize.knobs"). */
int sweepspec_refuse_replications_axis(const sweepspec_t *sp, const char *section,
                                       err_t *err);

/* The override that sets axis a to its value i. It is marked where the
 * sweep: section wrote them, so the loader's messages point at the axis key
 * or value in the file (not at a `--set` the user never gave). Its strings
 * point into sp. */
scenario_override_t sweepspec_override(const sweepspec_t *sp, int a, int i);

/* Checks every axis value as `specsim run` would before simulating (the
 * loader makes every check), on a scenario parsed once
 * (sim/config/scenario.h): loads it with the overrides `base` followed by
 * each axis set to each of its values (the other axes at their first
 * value; with zip, the values that go together). Each load copies the
 * tree without the sweep: section, so checking an axis of N values costs
 * N loads of the scenario, not N parses of a text that holds the N values.
 * An unknown path or a bad value is an ERR_INPUT error at the axis key's
 * or the value's FILE:LINE:COLUMN naming sweep.PATH. Returns the number of
 * scenario loads done (>= 1) or -1. */
int sweepspec_validate_src(const sweepspec_t *sp, const scenario_src_t *src,
                           const scenario_override_t *base, int nbase, err_t *err);

/* For `specsim check`: when the scenario's text (file `scenario`, "-" for
 * standard input) has a sweep: section, reads it into *out and validates it
 * as `specsim sweep` does before running any point; without one, *out is
 * left empty (naxes 0). 0, or -1 with err. The caller frees *out with
 * sweepspec_fini. */
int sweepspec_check(const char *scenario, const char *text,
                    const scenario_override_t *base, int nbase, sweepspec_t *out,
                    err_t *err);

/* sweepspec_check of a scenario parsed once. */
SPECSIM_API int sweepspec_check_src(const scenario_src_t *src, const scenario_override_t *base,
                        int nbase, sweepspec_t *out, err_t *err);

/* A value's scalars put through fn: fn returns s itself, or its
 * replacement written into buf (size n). A scalar value is one scalar; a
 * flow value (vflow: a distribution, a mapping) is parsed and every scalar
 * in it (mapping values, sequence items, never keys) mapped, then written
 * again. A new malloc'ed value, or NULL out of memory. */
typedef const char *(*sweepspec_map_fn)(const char *s, void *ctx, char *buf, size_t n);
char *sweepspec_value_map(const char *v, int is_flow, sweepspec_map_fn fn, void *ctx);
/* Every axis value through sweepspec_value_map, in place: how a sweep
 * names the files its axes read by absolute path (sim/run/sweep.c). 0, or
 * -1 out of memory (values already mapped stay mapped). */
int sweepspec_map_values(sweepspec_t *sp, sweepspec_map_fn fn, void *ctx);

/* Writes the section back as YAML (`sweep:` with every axis as an explicit
 * list), so a sidecar is itself a runnable sweep. 0 or -1 on write error. */
SPECSIM_API int sweepspec_write_yaml(const sweepspec_t *sp, FILE *f);
/* Only the axes, as there, every line started with `indent` (how the
 * optimize: section's knobs are printed, sim/run/optimize.h). 0 or -1. */
int sweepspec_write_axes(const sweepspec_t *sp, const char *indent, FILE *f);

#endif
