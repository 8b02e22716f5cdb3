/* order_priority — the tenant group's `priority:` (higher first), arrival
 * order among equals. */
#include "model/order.h"

static double key(const order_t *o, const cloud_job_t *j)
{
    (void)o;
    return -(double)j->priority;
}

const order_ops_t order_priority = {.name = "priority", .key = key};
