/* order — the ordering registry, the ranked walk and the bookkeeping (see
 * order.h). */
#include "model/order.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The registry: one X(NAME) per ordering, NAME being the suffix of its file
 * sim/model/order_NAME.c and of its table order_NAME. Order = order of names in
 * messages. */
#define ORDER_REGISTRY(X) X(fcfs) X(edf) X(least_slack) X(fair) X(priority)

#define ORDER_DECLARE(n) extern const order_ops_t order_##n;
ORDER_REGISTRY(ORDER_DECLARE)
#define ORDER_ENTRY(n) &order_##n,
static const order_ops_t *const REGISTRY[] = {ORDER_REGISTRY(ORDER_ENTRY)};

#define NREG (sizeof REGISTRY / sizeof *REGISTRY)

const order_ops_t *order_find(const char *name)
{
    for (size_t i = 0; i < NREG; i++)
        if (strcmp(REGISTRY[i]->name, name) == 0) return REGISTRY[i];
    return NULL;
}

size_t order_names(const char **out, size_t max)
{
    for (size_t i = 0; i < NREG && i < max; i++) out[i] = REGISTRY[i]->name;
    return NREG;
}

const order_ops_t *order_default(void) { return &order_fcfs; }

double order_deadline(const cloud_job_t *j)
{
    return j->deadline > 0 ? j->deadline : INFINITY;
}

/* One queued job in the sort buffer: its tenant's key, its arrival rank. */
typedef struct order_ent {
    double key;
    int rank, job;
} order_ent_t;

int order_init(order_t *o, const order_ops_t *ops, int ntenants,
               order_cost_fn cost, const void *cost_ctx)
{
    memset(o, 0, sizeof *o);
    o->ops = ops ? ops : order_default();
    o->ntenants = ntenants;
    o->cost = cost;
    o->cost_ctx = cost_ctx;
    o->first = -1;
    size_t n = ntenants > 0 ? (size_t)ntenants : 1;
    o->tval = calloc(n, sizeof *o->tval);
    o->njobs = calloc(n, sizeof *o->njobs);
    o->stamp = calloc(n, sizeof *o->stamp);
    o->tkey = calloc(n, sizeof *o->tkey);
    if (o->tval && o->njobs && o->stamp && o->tkey) return 0;
    order_fini(o);
    return -1;
}

void order_fini(order_t *o)
{
    free(o->tval);
    free(o->njobs);
    free(o->stamp);
    free(o->tkey);
    free(o->succ);
    free(o->ent);
    memset(o, 0, sizeof *o);
}

void order_job_in(order_t *o, int t)
{
    if (o->njobs[t]++ == 0 && o->ops->wake) o->ops->wake(o, t);
}

void order_job_out(order_t *o, int t)
{
    if (o->njobs[t] > 0) o->njobs[t]--;
}

void order_served(order_t *o, int t, int tokens)
{
    if (o->ops->served) o->ops->served(o, t, tokens);
}

static int ent_cmp(const void *a, const void *b)
{
    const order_ent_t *x = a, *y = b;
    if (x->key < y->key) return -1;
    if (x->key > y->key) return 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int walk_next(const batch_queue_t *q, int i, void *ctx)
{
    (void)q;
    const order_t *o = ctx;
    return i < 0 ? o->first : o->succ[i];
}

/* Room for n entries and for job handles up to maxj. */
static int reserve(order_t *o, int n, int maxj)
{
    if (n > o->nent) {
        order_ent_t *e = realloc(o->ent, (size_t)n * 2 * sizeof *e);
        if (!e) return -1;
        o->ent = e;
        o->nent = n * 2;
    }
    if (maxj >= o->nsucc) {
        int *s = realloc(o->succ, (size_t)(maxj + 1) * 2 * sizeof *s);
        if (!s) return -1;
        o->succ = s;
        o->nsucc = (maxj + 1) * 2;
    }
    return 0;
}

/* A fresh tenant mark; wiped once when the counter wraps. */
static uint32_t next_mark(order_t *o)
{
    if (++o->mark == 0) {
        memset(o->stamp, 0, (size_t)o->ntenants * sizeof *o->stamp);
        o->mark = 1;
    }
    return o->mark;
}

const batch_order_t *order_walk(order_t *o, const batch_queue_t *q)
{
    if (!o->ops->key) return &batch_fcfs;
    int n = 0, maxj = 0;
    for (int i = q->head; i >= 0; i = q->jobs[i].next) {
        n++;
        if (i > maxj) maxj = i;
    }
    if (reserve(o, n > 0 ? n : 1, maxj) != 0) return NULL;
    uint32_t mark = next_mark(o);
    n = 0;
    for (int i = q->head; i >= 0; i = q->jobs[i].next) {
        int t = q->jobs[i].tenant;
        if (o->stamp[t] != mark) {
            o->stamp[t] = mark;
            o->tkey[t] = o->ops->key(o, &q->jobs[i]);
        }
        o->ent[n] = (order_ent_t){.key = o->tkey[t], .rank = n, .job = i};
        n++;
    }
    qsort(o->ent, (size_t)n, sizeof *o->ent, ent_cmp);
    o->first = n ? o->ent[0].job : -1;
    for (int k = 0; k < n; k++) o->succ[o->ent[k].job] = k + 1 < n ? o->ent[k + 1].job : -1;
    o->walk = (batch_order_t){.next = walk_next, .ctx = o};
    return &o->walk;
}
