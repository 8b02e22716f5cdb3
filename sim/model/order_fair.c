/* order_fair — the virtual token counter of VTC (Sheng et al., "Fairness in
 * Serving Large Language Models", OSDI'24). Each tenant has a counter
 * (order_t.tval) that grows by every token of its jobs taken into an
 * iteration — prefill chunks, verified blocks (drafts and the bonus slot),
 * decoded tokens, all weighing the same — and the jobs of the tenant with
 * the least counter go first. A tenant that had no job at the cloud and
 * gets one is lifted to the least counter of the tenants that have jobs
 * there (VTC's rule), so idle time banks no credit; with none active it
 * keeps its own. Counters are the cluster's: one per tenant over all
 * replicas (a tenant's request stays on one replica anyway). The lift scans
 * the tenants, O(tenants) per wake. */
#include "model/order.h"

#include <math.h>

static double key(const order_t *o, const cloud_job_t *j)
{
    return o->tval[j->tenant];
}

static void wake(order_t *o, int t)
{
    double lo = INFINITY;
    for (int u = 0; u < o->ntenants; u++)
        if (u != t && o->njobs[u] > 0 && o->tval[u] < lo) lo = o->tval[u];
    if (lo != INFINITY && o->tval[t] < lo) o->tval[t] = lo;
}

static void served(order_t *o, int t, int tokens)
{
    o->tval[t] += tokens;
}

const order_ops_t order_fair = {.name = "fair", .key = key, .wake = wake,
                                .served = served};
