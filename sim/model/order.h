/* order — verification ordering policies: which queued jobs a cloud
 * replica's pick visits first (`cloud.batching.order`). When an iteration
 * starts is the batching policy's business (sim/model/batch.h); the ordering only
 * decides the walk that batch_pack follows. No preemption: a running
 * iteration is never touched.
 *
 * An ordering is a descriptor: a rank key per job (lower goes first), and
 * optional hooks that keep per-tenant state in order_t (the fair ordering's
 * virtual token counters). A walk ranks every queued job by the key of its
 * tenant's oldest job in the queue, ties by arrival, so each tenant's jobs
 * stay together and in their own order (the rule batch_pack relies on).
 * That costs O(queue log queue) per pick; `fcfs` has no key and keeps the
 * plain linked-list walk (sim/model/batch.c batch_fcfs).
 *
 * Job fields the keys read (sim/model/cloud_job.h): deadline (0 = the job's
 * request has no SLO bound for it: such jobs go last, FCFS among them) and
 * priority. Their submitter (sim/entity/ctenant.c) sets them.
 *
 * Adding an ordering: one file sim/order_<name>.c defining
 * `const order_ops_t order_<name>`, and one X(<name>) in ORDER_REGISTRY of
 * sim/model/order.c; the loader takes the list of names from the registry.
 */
#ifndef SPECSIM_ORDER_H
#define SPECSIM_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "model/batch.h"
#include "model/cloud_job.h"

typedef struct order order_t;

typedef struct order_ops {
    const char *name;
    /* Rank of job j, lower first; NULL = arrival order (no sorting). */
    double (*key)(const order_t *o, const cloud_job_t *j);
    /* Tenant t had no job at the cloud and now has one (NULL = nothing). */
    void (*wake)(order_t *o, int t);
    /* Tenant t's job got `tokens` tokens into an iteration (NULL = nothing). */
    void (*served)(order_t *o, int t, int tokens);
} order_ops_t;

/* The service time a job would take alone in an iteration, s (least-slack's
 * estimate); ctx is the caller's. */
typedef double (*order_cost_fn)(const void *ctx, const cloud_job_t *j);

/* One cloud's ordering state. Fields are the orderings' to read and
 * change; the walk arrays are private to sim/model/order.c. */
struct order {
    const order_ops_t *ops;
    int ntenants;
    double *tval;          /* per tenant: the ordering's value (fair: VTC) */
    int *njobs;            /* per tenant: jobs at the cloud, queued or running */
    order_cost_fn cost;    /* least-slack's estimate (NULL = 0) */
    const void *cost_ctx;
    /* the walk of the last pick */
    batch_order_t walk;
    int first;
    int *succ;             /* by job handle: the next job of the walk */
    int nsucc;
    struct order_ent *ent; /* sort buffer */
    int nent;
    uint32_t mark, *stamp; /* per tenant: its key computed in this walk */
    double *tkey;
};

/* Initialises o for ops (NULL = fcfs) and ntenants tenants; the per-tenant
 * arrays are owned (release with order_fini). 0, or -1 when out of memory
 * (o is then safe to fini). */
int order_init(order_t *o, const order_ops_t *ops, int ntenants,
               order_cost_fn cost, const void *cost_ctx);
void order_fini(order_t *o);

/* The walk a pick over q should follow: batch_fcfs for an ordering without
 * a key, else q's jobs ranked as described above (valid until the next
 * call). NULL when out of memory. */
const batch_order_t *order_walk(order_t *o, const batch_queue_t *q);

/* Bookkeeping the cloud reports: a job of tenant t entered the cloud /
 * left it (finished or purged), and a job of t was taken into an iteration
 * with `tokens` tokens. */
void order_job_in(order_t *o, int t);
void order_job_out(order_t *o, int t);
void order_served(order_t *o, int t, int tokens);

/* The deadline a key compares: j->deadline, or INFINITY when it has none. */
double order_deadline(const cloud_job_t *j);

/* The registered ordering called name, or NULL; the registered names in
 * registry order (returns how many there are); the default (fcfs). */
const order_ops_t *order_find(const char *name);
size_t order_names(const char **out, size_t max);
const order_ops_t *order_default(void);

#endif
