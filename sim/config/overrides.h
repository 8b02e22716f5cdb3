/* overrides — the scenario overrides of a command line, in the order given:
 * --set PATH=VALUE, --seed N (seed=N), --reps R (replications=R) and
 * --precision P (precision.relative=P: sim/desc/scenario.h), for
 * every program that takes them (build/specsim's commands through
 * sim/cli/cli_opt.c, build/testbed). No limit on their number. */
#ifndef SPECSIM_OVERRIDES_H
#define SPECSIM_OVERRIDES_H

#include "base/api.h"

#include <stdint.h>

#include "base/err.h"
#include "config/scenario.h"

typedef enum overrides_kind {
    OVERRIDES_SET,    /* --set PATH=VALUE */
    OVERRIDES_SEED,   /* --seed N */
    OVERRIDES_REPS,   /* --reps R */
    OVERRIDES_PRECISION /* --precision P (precision.relative=P) */
} overrides_kind_t;

typedef struct overrides {
    scenario_override_t *ov;   /* owned, [n]: for scenario_load */
    int n;
    char **owned;              /* owned "PATH\0VALUE" copies ov points into */
    int nowned;
} overrides_t;

/* Appends the override that option `kind` with `value` stands for (seed and
 * replications are marked with the option typed, so that messages name it
 * and --set:N counts only the --set options). `value` must outlive *s
 * unless it is a --set, which is copied. Returns 0; -1 with err ERR_INPUT
 * "--set needs PATH=VALUE, got 'V'" or "--seed needs a non-negative
 * integer, got 'V'", or ERR_RUNTIME when memory runs out. Free with
 * overrides_fini (a zeroed overrides_t is empty). */
SPECSIM_API int overrides_add(overrides_t *s, overrides_kind_t kind, const char *value,
                  err_t *err);
/* Appends PATH=VALUE given as the n-th (1-based) use of a command-line
 * option other than --set (compare's --a and --b): messages about it read
 * "OPT:N:COL: PATH: ..." (COL: 1-based column inside "PATH=VALUE"), and it
 * does not count as a --set. opt must outlive *s; value is copied. An
 * empty VALUE is refused here, with that position. Returns 0, or -1 with
 * err as overrides_add. */
SPECSIM_API int overrides_add_opt(overrides_t *s, const char *opt, int n,
                                  const char *value, err_t *err);
SPECSIM_API void overrides_fini(overrides_t *s);

/* A non-negative decimal integer: digits only (no sign, no spaces), no
 * overflow. 0, or -1. */
SPECSIM_API int overrides_u64(const char *s, uint64_t *out);

#endif
