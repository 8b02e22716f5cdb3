/* drift — see drift.h. */
#include "model/drift.h"

#include <gsl/gsl_randist.h>

double drift_factor(gsl_rng *r, double cv)
{
    if (!(cv > 0)) return 1;
    double z = gsl_ran_gaussian_ziggurat(r, 1.0);
    if (z > DRIFT_CLIP) z = DRIFT_CLIP;
    if (z < -DRIFT_CLIP) z = -DRIFT_CLIP;
    return 1 + cv * z;
}
