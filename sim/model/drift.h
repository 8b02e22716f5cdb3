/* drift — the small timing noise of real clocks and devices, which keeps
 * identical tenants from running in lockstep (docs/design.md, "Drift";
 * the scenario's drift: section, docs/formats.md).
 *
 * With fixed service times, no jitter and no think time, tenants that start
 * together stay together forever in a simulator; no real system does,
 * because its clocks and devices vary a little from step to step. A drifting
 * step takes its modelled time times a factor of mean exactly 1, so means
 * stay where the service model puts them and ties break within a block.
 */
#ifndef SPECSIM_DRIFT_H
#define SPECSIM_DRIFT_H

#include <gsl/gsl_rng.h>

/* Largest coefficient of variation a scenario may give: the factor never
 * falls below 1 - DRIFT_CLIP * cv, which stays >= 0. */
#define DRIFT_CV_MAX 0.25
#define DRIFT_CLIP 4.0

/* One factor 1 + cv·Z, Z standard normal clipped to [-DRIFT_CLIP,
 * DRIFT_CLIP]: the clip is symmetric, so the mean is exactly 1; the CV is
 * cv to within 0.1% (the clipped tails hold 6e-5 of the mass). cv == 0
 * returns 1 without a draw. */
double drift_factor(gsl_rng *r, double cv);

#endif
