/* batch — batching policies of a cloud replica, as descriptors.
 *
 * A policy answers two questions for an idle replica with queued jobs:
 *   when   may the next iteration start? now, or at a later time when the
 *          replica looks again (the window policy's timer);
 *   pick   which jobs (and, for a chunked prefill, how many of its tokens)
 *          make up the iteration that starts now?
 * The queue and iteration mechanics (job pool, kicks, timers, KV admission,
 * the iteration's time and its callbacks) stay in sim/entity/cloud.c, which asks the
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
 * in sim/model/order.h, which builds the walk a pick follows.
 *
 * The registry (sim/model/batch.c) maps `cloud.batching.policy` names to
 * descriptors; the scenario loader takes its list of valid names from it and
 * stores the descriptor in batching_cfg_t. Adding a policy: one file
 * sim/batch_<name>.c defining `const batch_policy_t batch_<name>`, and one
 * X(<name>) entry in BATCH_REGISTRY (sim/model/batch.c). A policy with
 * parameters of its own also adds them to batching_cfg_t below and to the
 * batching keys of sim/config/scenario_keys.c.
 */
#ifndef SPECSIM_BATCH_H
#define SPECSIM_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "model/cloud_job.h"

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
                                (sim/model/order.h); NULL = fcfs */
} batching_cfg_t;

/* One replica's queue as a policy sees it. Job handles are indices into
 * jobs; head and jobs[i].next give arrival order. */
typedef struct batch_queue {
    const cloud_job_t *jobs;
    int head;                /* oldest queued job, -1 = none */
    int nqueue;
    double kv_free;          /* bytes of the replica's KV cache not reserved
                                (INFINITY when KV is not limited) */
} batch_queue_t;

/* The order a pick visits queued jobs in: next(q, -1, ctx) is the first,
 * next(q, i, ctx) the one after i; -1 ends. next NULL = arrival order,
 * which the pick walks along the queue's links without a call per job. */
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
     * for the next arrival. cfg holds the policy's parameters. NULL = always
     * at once (saves a call per kick). */
    double (*when)(const batching_cfg_t *cfg, const batch_queue_t *q,
                   double now);
    /* Fills out with the jobs of the iteration starting at now, visiting q
     * in `order`; s is the caller's scratch. out->n = 0 when nothing fits. */
    void (*pick)(const batching_cfg_t *cfg, const batch_queue_t *q, double now,
                 const batch_order_t *order, batch_cap_t cap,
                 batch_scratch_t *s, batch_pick_t *out);
};

/* The shared in-order, within-capacity pick described above (a policy's
 * pick may be this one). */
void batch_pack(const batching_cfg_t *cfg, const batch_queue_t *q, double now,
                const batch_order_t *order, batch_cap_t cap,
                batch_scratch_t *s, batch_pick_t *out);

/* ---- batch_pack's body, inline ----------------------------------------
 * The cloud picks once per iteration, mostly one or two jobs: a call per
 * pick cost more than the pick. sim/entity/cloud.c runs this body in place when
 * the policy's pick is batch_pack; batch_pack runs it for everyone else. */

/* Wipes the marks once the counter wraps (old marks could collide); the
 * first mark after. */
uint32_t batch_scratch_wrap(batch_scratch_t *s);

/* A fresh mark for a new pick; marks are never cleared otherwise. */
static inline uint32_t batch_next_mark(batch_scratch_t *s)
{
    return ++s->cur != 0 ? s->cur : batch_scratch_wrap(s);
}

/* Whether job j may join the pick although its tenant t already has a job
 * there: only with multi_block, only a verify block right after a verify
 * block of the same epoch. A tenant's jobs are visited in their order, so
 * the blocks that join are contiguous; the model computes each block's
 * context over the drafts of the blocks before it, so block k+1 attends to
 * block k's tokens as one longer draft sequence would. */
static inline int batch_joins(const batch_queue_t *q, const batch_scratch_t *s,
                              const batch_pick_t *out, int multi, int t,
                              const cloud_job_t *j)
{
    int p = s->slot[t];
    if (!multi || p < 0 || j->kind != CLOUD_VERIFY) return 0;
    const cloud_job_t *prev = &q->jobs[out->job[p]];
    return prev->kind == CLOUD_VERIFY && prev->epoch == j->epoch;
}

static inline void batch_pack_inline(const batching_cfg_t *cfg,
                                     const batch_queue_t *q,
                                     const batch_order_t *order, batch_cap_t cap,
                                     batch_scratch_t *s, batch_pick_t *out)
{
    (void)cfg;
    int budget = cap.max_tokens, nb = 0;
    if (q->nqueue == 1 && cap.max_batch > 0 && budget > 0) {
        /* One job queued, the usual case between iterations: the rules
         * below reduce to "it goes if it fits", and no mark is needed. */
        const cloud_job_t *j = &q->jobs[q->head];
        int take = j->kind == CLOUD_PREFILL && j->tokens > budget ? budget : j->tokens;
        if (take <= budget) {
            out->job[nb] = q->head;
            out->tokens[nb] = take;
            nb++;
        }
        out->n = nb;
        return;
    }
    uint32_t mark = batch_next_mark(s);
    int (*next)(const batch_queue_t *, int, void *) = order->next;
    for (int i = next ? next(q, -1, order->ctx) : q->head;
         i >= 0 && nb < cap.max_batch && budget > 0;
         i = next ? next(q, i, order->ctx) : q->jobs[i].next) {
        const cloud_job_t *j = &q->jobs[i];
        int t = j->tenant;
        if (s->stamp[t] == mark && !batch_joins(q, s, out, cap.multi_block, t, j)) {
            s->slot[t] = -1;   /* waits, and the tenant's later jobs with it */
            continue;
        }
        s->stamp[t] = mark;
        int take = j->tokens;
        if (j->kind == CLOUD_PREFILL && take > budget) take = budget;
        if (take > budget) {   /* waits, and keeps the tenant's later jobs behind */
            s->slot[t] = -1;
            continue;
        }
        s->slot[t] = nb;
        out->job[nb] = i;
        out->tokens[nb] = take;
        nb++;
        budget -= take;
    }
    out->n = nb;
}

/* Policy p's `when` (cfg, q, now as there), at once when it has none. */
static inline double batch_when(const batch_policy_t *p, const batching_cfg_t *cfg,
                                const batch_queue_t *q, double now)
{
    return p->when ? p->when(cfg, q, now) : now;
}

/* The registered policy called name, or NULL. */
const batch_policy_t *batch_policy_find(const char *name);
/* Writes up to max registered names, in registry order, into out; returns
 * how many there are (for the loader's list and its "did you mean"). */
size_t batch_policy_names(const char **out, size_t max);
/* The policy of a scenario that names none: `continuous`. */
const batch_policy_t *batch_policy_default(void);

#endif
