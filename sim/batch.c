/* batch — the policy registry, the FCFS order and the shared pick (see
 * batch.h). */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

/* The registry: one X(NAME) per policy (file sim/batch_NAME.c, table
 * batch_NAME), in the order messages list the names. */
#define BATCH_REGISTRY(X) X(continuous) X(window)

#define BATCH_DECLARE(n) extern const batch_policy_t batch_##n;
BATCH_REGISTRY(BATCH_DECLARE)
#define BATCH_ENTRY(n) &batch_##n,
static const batch_policy_t *const POLICIES[] = {BATCH_REGISTRY(BATCH_ENTRY)};

#define NPOLICIES ((int)(sizeof POLICIES / sizeof POLICIES[0]))

const batch_policy_t *batch_policy_find(const char *name)
{
    for (int i = 0; i < NPOLICIES; i++)
        if (strcmp(POLICIES[i]->name, name) == 0) return POLICIES[i];
    return NULL;
}

size_t batch_policy_names(const char **out, size_t max)
{
    for (int i = 0; i < NPOLICIES && (size_t)i < max; i++) out[i] = POLICIES[i]->name;
    return NPOLICIES;
}

const batch_policy_t *batch_policy_default(void) { return &batch_continuous; }

static int fcfs_next(const batch_queue_t *q, int i, void *ctx)
{
    (void)ctx;
    return i < 0 ? q->head : q->jobs[i].next;
}

const batch_order_t batch_fcfs = {.next = fcfs_next, .ctx = NULL};

int batch_scratch_init(batch_scratch_t *s, int ntenants)
{
    s->ntenants = ntenants;
    s->cur = 0;
    s->stamp = calloc((size_t)ntenants, sizeof *s->stamp);
    s->slot = malloc((size_t)ntenants * sizeof *s->slot);
    if (s->stamp && s->slot) return 0;
    batch_scratch_fini(s);
    return -1;
}

void batch_scratch_fini(batch_scratch_t *s)
{
    free(s->stamp);
    free(s->slot);
    s->stamp = NULL;
    s->slot = NULL;
}

/* A fresh mark for a new pick; marks are never cleared, so when the counter
 * wraps the old ones could collide and are wiped once. */
static uint32_t next_mark(batch_scratch_t *s)
{
    if (++s->cur == 0) {
        memset(s->stamp, 0, (size_t)s->ntenants * sizeof *s->stamp);
        s->cur = 1;
    }
    return s->cur;
}

/* Whether job j may join the pick although its tenant t already has a job
 * there: only with multi_block, only a verify block right after a verify
 * block of the same epoch. A tenant's jobs are visited in their order, so
 * the blocks that join are contiguous; the model computes each block's
 * context over the drafts of the blocks before it, so block k+1 attends to
 * block k's tokens as one longer draft sequence would. */
static int joins(const batch_queue_t *q, const batch_scratch_t *s,
                 const batch_pick_t *out, int multi, int t, const cloud_job_t *j)
{
    int p = s->slot[t];
    if (!multi || p < 0 || j->kind != CLOUD_VERIFY) return 0;
    const cloud_job_t *prev = &q->jobs[out->job[p]];
    return prev->kind == CLOUD_VERIFY && prev->epoch == j->epoch;
}

void batch_pack(const batching_cfg_t *cfg, const batch_queue_t *q, double now,
                const batch_order_t *order, batch_cap_t cap,
                batch_scratch_t *s, batch_pick_t *out)
{
    (void)cfg;
    (void)now;
    uint32_t mark = next_mark(s);
    int budget = cap.max_tokens, nb = 0;
    for (int i = order->next(q, -1, order->ctx);
         i >= 0 && nb < cap.max_batch && budget > 0;
         i = order->next(q, i, order->ctx)) {
        const cloud_job_t *j = &q->jobs[i];
        int t = j->tenant;
        if (s->stamp[t] == mark && !joins(q, s, out, cap.multi_block, t, j)) {
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
