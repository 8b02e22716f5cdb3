/* batch — the policy registry, the FCFS order and the shared pick (see
 * batch.h). */
#include "model/batch.h"

#include <stdlib.h>
#include <string.h>

/* The registry: one X(NAME) per policy (file sim/model/batch_NAME.c, table
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

/* No hook: batch_pack follows the queue's links itself (no call per step). */
const batch_order_t batch_fcfs = {.next = NULL, .ctx = NULL};

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

uint32_t batch_scratch_wrap(batch_scratch_t *s)
{
    memset(s->stamp, 0, (size_t)s->ntenants * sizeof *s->stamp);
    s->cur = 1;
    return s->cur;
}

void batch_pack(const batching_cfg_t *cfg, const batch_queue_t *q, double now,
                const batch_order_t *order, batch_cap_t cap,
                batch_scratch_t *s, batch_pick_t *out)
{
    (void)now;
    batch_pack_inline(cfg, q, order, cap, s, out);
}
