/* batch — batching policies of a cloud replica, as descriptors.
 *
 * A policy answers two questions for an idle replica with queued jobs:
 *   when   may the next iteration start? now, or at a later time when the
 *          replica looks again (the window policy's timer);
 *   pick   which jobs (and, for a chunked prefill, how many of its tokens)
 *          make up the iteration that starts now?
 * The queue and iteration mechanics (job pool, kicks, timers, KV admission,
 * the iteration's time and its callbacks) stay in sim/cloud.c, which asks the
 * replica's policy through this table. KV is reserved per request at
 * admission (cloud_reserve), so it does not bound a pick.
 *
 * The shared pick, batch_pack, fills one iteration in queue order within the
 * capacity: up to max_batch jobs and max_tokens tokens; a prefill is chunked to fit the
 * tokens left (Sarathi-style) and stays queued until its last chunk; verify
 * and decode jobs never split, and one that does not fit waits. One job per
 * tenant enters, except with multi_block: then a verify block may follow its
 * tenant's verify block of the same epoch (async pipelining). A job that waits
 * holds its tenant's later jobs too, so a tenant's work stays in order.
 *
 * The pick walks the queue in the order a batch_order_t gives, so an ordering
 * policy (which queued jobs go first: deadline, slack, fairness) plugs in
 * beside the batching policy without changing it. An order must visit each
 * tenant's jobs in the tenant's own queue order (jobs[i].tnext), which the
 * tenant rules above rely on. batch_fcfs is arrival order; the orderings of
 * `cloud.batching.order` (edf, least-slack, fair, priority) are descriptors
 * in sim/order.h, which builds the walk a pick follows.
 *
 * The registry (sim/batch.c) maps `cloud.batching.policy` names to
 * descriptors; the scenario loader takes its list of valid names from it and
 * stores the descriptor in batching_cfg_t. Adding a policy: one file
 * sim/batch_<name>.c defining `const batch_policy_t batch_<name>`, and its
 * declaration and entry in the registry of sim/batch.c. A policy with
 * parameters of its own also adds them to batching_cfg_t below and to the
 * batching keys of sim/scenario.c.
 */
#ifndef SPECSIM_BATCH_H
#define SPECSIM_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "cloud_job.h"

typedef struct batch_policy batch_policy_t;
struct order_ops;

/* The scenario's cloud.batching section. */
typedef struct batching_cfg {
    const batch_policy_t *policy;   /* from the registry; NULL (a zeroed
                                       config) = batch_policy_default() */
    int max_batch;           /* jobs per iteration, >= 1 */
    double max_wait;         /* window policy: s to wait for a full batch */
    int max_tokens;          /* tokens per iteration; 0 = unlimited */
    int multi_block;         /* async: several queued blocks of one tenant
                                may share an iteration (default 1) */
    const struct order_ops *order; /* which queued jobs go first
                                (sim/order.h); NULL = fcfs */
} batching_cfg_t;

/* One replica's queue as a policy sees it. Job handles are indices into
 * jobs; head and jobs[i].next give arrival order. */
typedef struct batch_queue {
    const cloud_job_t *jobs;
    int head;                /* oldest queued job, -1 = none */
    int nqueue;
} batch_queue_t;

/* The order a pick visits queued jobs in: next(q, -1, ctx) is the first,
 * next(q, i, ctx) the one after i; -1 ends. */
typedef struct batch_order {
    int (*next)(const batch_queue_t *q, int i, void *ctx);
    void *ctx;
} batch_order_t;

/* Arrival order (first come, first served). */
extern const batch_order_t batch_fcfs;

/* What one iteration may hold. */
typedef struct batch_cap {
    int max_batch;           /* jobs, >= 1 */
    int max_tokens;          /* tokens (INT_MAX = no limit) */
    int multi_block;         /* a tenant's verify blocks may share it */
} batch_cap_t;

/* Per-tenant marks a pick uses to apply the one-job-per-tenant and
 * tenant-order rules without clearing anything per iteration. */
typedef struct batch_scratch {
    int ntenants;
    uint32_t cur;            /* mark of the pick in progress */
    uint32_t *stamp;         /* tenant seen in the pick marked cur */
    int *slot;               /* valid when stamped: the pick slot of its
                                last job taken, -1 = its later jobs wait */
} batch_scratch_t;

/* Allocates the marks for ntenants (owned; release with batch_scratch_fini).
 * 0, or -1 when out of memory (s is then safe to fini). */
int batch_scratch_init(batch_scratch_t *s, int ntenants);
void batch_scratch_fini(batch_scratch_t *s);

/* The jobs of one iteration, in the order they were taken: job[k] is the
 * handle, tokens[k] what it processes in this iteration (a prefill chunk,
 * else all its tokens). The caller provides both arrays with cap.max_batch
 * entries. */
typedef struct batch_pick {
    int n;
    int *job;
    int *tokens;
} batch_pick_t;

struct batch_policy {
    const char *name;
    /* Time at which an iteration may start on an idle replica whose queue q
     * is not empty: now to start at once, a later time to look again then
     * (an arrival or an iteration end looks again anyway), INFINITY to wait
     * for the next arrival. cfg holds the policy's parameters. */
    double (*when)(const batching_cfg_t *cfg, const batch_queue_t *q,
                   double now);
    /* Fills out with the jobs of the iteration starting now, visiting q in
     * `order`; s is the caller's scratch. out->n = 0 when nothing fits. */
    void (*pick)(const batching_cfg_t *cfg, const batch_queue_t *q,
                 const batch_order_t *order, batch_cap_t cap,
                 batch_scratch_t *s, batch_pick_t *out);
};

/* The shared in-order, within-capacity pick described above (a policy's
 * pick may be this one). */
void batch_pack(const batching_cfg_t *cfg, const batch_queue_t *q,
                const batch_order_t *order, batch_cap_t cap,
                batch_scratch_t *s, batch_pick_t *out);

/* The registered policy called name, or NULL. */
const batch_policy_t *batch_policy_find(const char *name);
/* Writes up to max registered names, in registry order, into out; returns
 * how many there are (for the loader's list and its "did you mean"). */
size_t batch_policy_names(const char **out, size_t max);
/* The policy of a scenario that names none: `continuous`. */
const batch_policy_t *batch_policy_default(void);

#endif
