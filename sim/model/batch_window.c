/* batch_window — the `window` batching policy: an idle replica waits until
 * max_batch jobs are queued or max_wait has passed since the oldest queued
 * job arrived, whichever comes first. The pick is batch_pack's. */
#include "model/batch.h"

static double when(const batching_cfg_t *cfg, const batch_queue_t *q, double now)
{
    if (q->nqueue >= cfg->max_batch) return now;
    double due = q->jobs[q->head].arrive + cfg->max_wait;
    return due > now ? due : now;
}

const batch_policy_t batch_window = {
    .name = "window",
    .when = when,
    .pick = batch_pack,
};
