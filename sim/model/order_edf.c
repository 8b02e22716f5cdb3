/* order_edf — earliest deadline first: the SLO deadline its submitter gave
 * the job (sim/entity/ctenant.c: the TTFT bound for a prefill, the TPOT schedule's
 * due time of the next token for a verify or decode job); jobs without one
 * go last. */
#include "model/order.h"

static double key(const order_t *o, const cloud_job_t *j)
{
    (void)o;
    return order_deadline(j);
}

const order_ops_t order_edf = {.name = "edf", .key = key};
