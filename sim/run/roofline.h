/* roofline — the cloud verify iteration time against batch tokens M from
 * the service model, beside its memory and compute bounds, and the measured
 * points of a calibration table (the data of the verify-time figure).
 *
 * Library code: both functions write CSV to the FILE* they are given and
 * report errors through err_t (the command line, sim/cli/cli_roofline.c,
 * prints them).
 */
#ifndef SPECSIM_ROOFLINE_H
#define SPECSIM_ROOFLINE_H

#include "base/api.h"

#include <stdio.h>

#include "base/err.h"
#include "config/scenario.h"

/* For `points` batch sizes B log-spaced from 1 to bmax (repeats after
 * rounding dropped), one verify iteration of B blocks of gamma+1 tokens,
 * each over `context` cached tokens, on s's cloud (its one replica group's
 * card when it has cloud.replica_groups; several groups are refused):
 *   batch,m,context,time_s,memory_s,compute_s,overhead_s,datasheet_s
 * 0, or -1 with err filled. */
SPECSIM_API int roofline_curve(FILE *f, const scenario_t *s, int bmax, int context, int points,
                   err_t *err);

/* The whole-step rows (op: token) of the calibration table at `table`
 * beside the service model's time for the same step composed from the
 * table's operator rows:
 *   m,context,time_s,composed_s,composed_ratio,step_factor,in_table
 * model_ref: the model card (NULL: models/llm/<table model>.yaml). 0, or -1
 * with err filled. */
SPECSIM_API int roofline_measured(FILE *f, const char *table, const char *model_ref, err_t *err);

#endif
