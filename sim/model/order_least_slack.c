/* order_least_slack — least slack first: the job's deadline minus the time
 * it would take alone in an iteration (the cloud's estimate, order_t.cost),
 * so that of two jobs due together the longer one (a big prefill chunk, a
 * long context) starts first. Without a deadline the slack is infinite: last. */
#include "model/order.h"

#include <math.h>

static double key(const order_t *o, const cloud_job_t *j)
{
    double d = order_deadline(j);
    if (isinf(d) || !o->cost) return d;
    return d - o->cost(o->cost_ctx, j);
}

const order_ops_t order_least_slack = {.name = "least-slack", .key = key};
