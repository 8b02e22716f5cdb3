/* batch_continuous — the `continuous` batching policy: an idle replica
 * starts an iteration as soon as it has queued jobs. "As soon as" is after
 * the cloud's zero-delay kick (sim/cloud.c), so that jobs arriving at the
 * same instant share the iteration. The pick is batch_pack's. */
#include "batch.h"

static double when(const batching_cfg_t *cfg, const batch_queue_t *q, double now)
{
    (void)cfg;
    (void)q;
    return now;
}

const batch_policy_t batch_continuous = {
    .name = "continuous",
    .when = when,
    .pick = batch_pack,
};
