/* batch_continuous — the `continuous` batching policy: an idle replica
 * starts an iteration as soon as it has queued jobs. "As soon as" is after
 * the cloud's zero-delay kick (sim/entity/cloud.c), so that jobs arriving at the
 * same instant share the iteration. The pick is batch_pack's. */
#include "model/batch.h"

const batch_policy_t batch_continuous = {
    .name = "continuous",
    .when = NULL,   /* an iteration starts as soon as the replica is idle */
    .pick = batch_pack,
};
