#include "entity/cloud.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_rng.h>

#include "model/batch.h"
#include "model/drift.h"
#include "model/order.h"

/* A replica group as the replicas see it: what its iterations cost, and
 * its ordering. */
typedef struct cgroup {
    const service_t *sv;
    const dist_t *vt;              /* fixed verify time, or NULL */
    const service_t *dsv;          /* draft steps: the draft model, */
    const service_heads_t *dh;     /* or draft heads, */
    const dist_t *dt;              /* or their fixed time; NULL: none */
    double kv_bpt, ref_time;
    double noise_cv;               /* drift.cloud (0 = none) */
    order_t ord;                   /* the order picks visit its queues in */
    /* The roofline time of the linear layers by batch tokens M (-1 = not
     * yet asked), for gpu_roofline_util: every iteration asks, and M takes
     * few values. Grown on demand up to CLOUD_ROOF_MEMO_MAX entries. */
    double *roof_lin;
    int roof_n;
} cgroup_t;

typedef struct replica {
    cgroup_t *g;                   /* its group */
    int gi;                        /* and that group's index */
    int head, tail, nqueue;        /* job FIFO */
    int busy, kick_pending;
    uint32_t timer_gen;            /* window timers: only the newest counts */
    double timer_at;               /* pending timer's time, or -1 */
    double iter_start;
    int nbatch;
    int *bjob;                     /* running batch: job index */
    int *btok;                     /* and its tokens, as picked */
    service_job_t *sjob;           /* and its target jobs' tokens, context */
    service_job_t *djob;           /* and its draft steps' (CLOUD_DRAFT) */
    double kv_cap, kv_used;
    double kv_t;                   /* kv_used held since */
    double roof, iter_end;         /* the running iteration's roofline time, end */
    int adm_head, adm_tail;        /* tenants waiting for KV (linked) */
    int lru_head, lru_tail;        /* cached prefixes, least recent first */
    double kv_cached;              /* their bytes (part of kv_used) */
    int pinned;
    gsl_rng *vrng;
    gsl_rng *drng;                 /* cloud.draft_time draws */
    gsl_rng *nrng;                 /* drift.cloud's factors (NULL: none) */
} replica_t;

struct cloud {
    const cloud_cfg_t *cfg;
    cgroup_t *grp;
    int ngrp;
    int weighted;                  /* groups differ in ref_time: routing
                                      weighs load by it */
    engine_t *eng;
    uint32_t ev_iter, ev_kick;
    cloud_cb_t cb;
    tally_t *tally;
    trace_t *trace;
    replica_t *rep;
    int nrep, ntenants;
    const batch_policy_t *policy;
    gsl_rng *prng;                 /* power-of-two pinning's draws */
    /* Least-loaded pinning: a tournament tree over the replicas, ptree[1]
     * the lightest (sim/entity/cloud.c, pin_tree_fix); leaves from pleaf.
     * NULL under the other pinnings. */
    int *ptree;
    int pleaf;
    batch_cap_t cap;
    batch_scratch_t scratch;       /* the policy's pick marks */
    cloud_job_t *jobs;             /* pool; indices are stable */
    int jcap, jfree;               /* capacity, free-list head */
    int *thead, *ttail;            /* per tenant: its queued jobs, in order */
    int *adm_next;                 /* per tenant: admission queue link */
    double *adm_bytes;
    /* cloud.prefix_cache lru, per tenant (NULL when off): its cached
     * prefix's replica (-1: none), LRU links and bytes. */
    int *pc_rep, *pc_prev, *pc_next;
    double *pc_bytes;
    long pc_evictions;
    int rr;
    /* Jobs waiting for their first iteration, integrated over time for the
     * Little's-law check. */
    int nwaiting;
    double area_t;
};

#define CLOUD_ROOF_MEMO_MAX 65536
/* The entity of the pinning stream: beyond every tenant (0..2^32) and
 * replica (2^32 + i) id, so that it shifts no other stream. */
#define CLOUD_PIN_ENTITY (1ULL << 33)

/* Kick payloads: 0 = start if idle; else (gen << 1) | 1 = the policy's timer. */
#define KICK 0u

static int pin_tree_init(cloud_t *c);

static void record_queue_len(const cloud_t *c, int ri, double now)
{
    if (c->trace) trace_queue(c->trace, now, ri, c->rep[ri].nqueue);
}

static void area_to(cloud_t *c, double now)
{
    c->tally->raw.queue_area += c->nwaiting * (now - c->area_t);
    c->area_t = now;
}

/* Accounts the KV held since the last change, before it changes. */
static void kv_to(cloud_t *c, replica_t *r, double now)
{
    if (isfinite(r->kv_cap) && r->kv_cap > 0)
        tally_kv(c->tally, r->kv_used / r->kv_cap, r->kv_t, now);
    r->kv_t = now;
}

static int job_alloc(cloud_t *c)
{
    if (c->jfree < 0) {
        int ncap = c->jcap ? 2 * c->jcap : 64;
        cloud_job_t *j = realloc(c->jobs, (size_t)ncap * sizeof *j);
        if (!j) return -1;
        c->jobs = j;
        for (int i = ncap - 1; i >= c->jcap; i--) {
            j[i].next = c->jfree;
            c->jfree = i;
        }
        c->jcap = ncap;
    }
    int i = c->jfree;
    c->jfree = c->jobs[i].next;
    return i;
}

static void job_release(cloud_t *c, int i)
{
    c->jobs[i].next = c->jfree;
    c->jfree = i;
}

/* Unlinks job i from its replica queue and from its tenant's list (it is
 * always the tenant's oldest when taken into a batch or finished; a purge
 * walks the tenant list itself). */
static void unlink_queue(cloud_t *c, replica_t *r, int i)
{
    cloud_job_t *j = &c->jobs[i];
    if (j->prev >= 0) c->jobs[j->prev].next = j->next; else r->head = j->next;
    if (j->next >= 0) c->jobs[j->next].prev = j->prev; else r->tail = j->prev;
    r->nqueue--;
}

static void unlink_tenant_head(cloud_t *c, int i)
{
    int t = c->jobs[i].tenant;
    c->thead[t] = c->jobs[i].tnext;
    if (c->thead[t] < 0) c->ttail[t] = -1;
}

static int on_iter_end(void *ctx, const engine_event_t *ev);
static int on_kick(void *ctx, const engine_event_t *ev);

/* A draft step's time alone (the draft's pass over one job). */
static double draft_cost(const cgroup_t *g, const cloud_job_t *j)
{
    if (g->dt) return dist_mean(g->dt);
    if (g->dh) return service_heads_time(g->dh, j->tokens);
    service_job_t one = {.tokens = j->tokens, .context = j->context};
    return g->dsv ? service_iter_time(g->dsv, &one, 1) : 0;
}

/* least-slack's estimate of a job's service time on a replica of group
 * ctx: the iteration it would take alone (the verify time's mean when that
 * is given; a draft step's, the draft's pass). */
static double job_cost(const void *ctx, const cloud_job_t *j)
{
    const cgroup_t *g = ctx;
    if (j->kind == CLOUD_DRAFT) return draft_cost(g, j);
    if (g->vt) return dist_mean(g->vt);
    /* A prefill computes its last row's logits only (sim/model/service.h). */
    service_job_t one = {.tokens = j->tokens, .context = j->context,
                         .nohead = j->kind == CLOUD_PREFILL ? j->tokens - 1 : 0};
    return service_iter_time(g->sv, &one, 1);
}

double cloud_ref_time(const service_t *sv, const dist_t *verify_time)
{
    return verify_time ? dist_mean(verify_time) : service_ref_time(sv);
}

/* The groups' runtime parts; every replica points at its own. */
static int groups_init(cloud_t *c, const cloud_group_t *groups, int ngroups, int ntenants)
{
    c->grp = calloc((size_t)ngroups, sizeof *c->grp);
    if (!c->grp) return -1;
    c->ngrp = ngroups;
    int roof = 1, kvn = 0;
    for (int k = 0, i = 0; k < ngroups; k++) {
        cgroup_t *g = &c->grp[k];
        const cloud_group_t *G = &groups[k];
        g->sv = G->sv;
        g->vt = G->verify_time;
        g->dsv = G->dsv;
        g->dh = G->dheads;
        g->dt = G->draft_time;
        g->kv_bpt = G->kv_bytes_per_token;
        g->ref_time = G->ref_time;
        g->noise_cv = G->noise_cv;
        if (order_init(&g->ord, G->order, ntenants, job_cost, g) != 0) return -1;
        if (g->ref_time != c->grp[0].ref_time) c->weighted = 1;
        roof &= !g->vt && g->sv != NULL && !g->dt;
        int finite = isfinite(G->kv_capacity) && G->kv_capacity > 0;
        for (int r = 0; r < G->count; r++, i++) {
            c->rep[i].g = g;
            c->rep[i].gi = k;
            c->rep[i].kv_cap = G->kv_capacity;
            kvn += finite;
        }
    }
    c->tally->kv_known = kvn > 0;
    c->tally->kv_replicas = kvn;
    c->tally->roof_known = roof;
    return 0;
}

cloud_t *cloud_create(const cloud_cfg_t *cfg, int ntenants,
                      const service_t *sv, double kv_capacity, engine_t *eng,
                      uint32_t ev_iter, uint32_t ev_kick, const cloud_cb_t *cb,
                      tally_t *tally, trace_t *trace, uint64_t seed, int rep,
                      err_t *err)
{
    cloud_group_t g = {.count = cfg->replicas, .sv = sv,
                       .verify_time = cfg->has_verify_time ? &cfg->verify_time : NULL,
                       .kv_capacity = kv_capacity,
                       .kv_bytes_per_token = sv ? service_kv_bytes_per_token(sv) : 0,
                       .order = cfg->batching.order, .ref_time = 1};
    return cloud_create_groups(cfg, ntenants, &g, 1, eng, ev_iter, ev_kick, cb, tally,
                               trace, seed, rep, err);
}

cloud_t *cloud_create_groups(const cloud_cfg_t *cfg, int ntenants,
                             const cloud_group_t *groups, int ngroups, engine_t *eng,
                             uint32_t ev_iter, uint32_t ev_kick, const cloud_cb_t *cb,
                             tally_t *tally, trace_t *trace, uint64_t seed, int rep,
                             err_t *err)
{
    cloud_t *c = calloc(1, sizeof *c);
    if (!c) goto oom;
    c->cfg = cfg;
    c->eng = eng;
    c->ev_iter = ev_iter;
    c->ev_kick = ev_kick;
    c->cb = *cb;
    c->tally = tally;
    c->trace = trace;
    c->nrep = 0;
    for (int k = 0; k < ngroups; k++) c->nrep += groups[k].count;
    c->ntenants = ntenants;
    c->policy = cfg->batching.policy ? cfg->batching.policy : batch_policy_default();
    c->cap.max_batch = cfg->batching.max_batch;
    c->cap.max_tokens = cfg->batching.max_tokens > 0 ? cfg->batching.max_tokens : INT_MAX;
    c->cap.multi_block = cfg->batching.multi_block != 0;
    c->jfree = -1;
    c->rep = calloc((size_t)c->nrep, sizeof *c->rep);
    c->thead = malloc((size_t)ntenants * sizeof *c->thead);
    c->ttail = malloc((size_t)ntenants * sizeof *c->ttail);
    c->adm_next = malloc((size_t)ntenants * sizeof *c->adm_next);
    c->adm_bytes = calloc((size_t)ntenants, sizeof *c->adm_bytes);
    if (!c->rep || !c->thead || !c->ttail || !c->adm_next || !c->adm_bytes ||
        batch_scratch_init(&c->scratch, ntenants) != 0 ||
        groups_init(c, groups, ngroups, ntenants) != 0)
        goto oom;
    if (cfg->prefix_cache.policy == PREFIX_CACHE_LRU) {
        c->pc_rep = malloc((size_t)ntenants * sizeof *c->pc_rep);
        c->pc_prev = malloc((size_t)ntenants * sizeof *c->pc_prev);
        c->pc_next = malloc((size_t)ntenants * sizeof *c->pc_next);
        c->pc_bytes = calloc((size_t)ntenants, sizeof *c->pc_bytes);
        if (!c->pc_rep || !c->pc_prev || !c->pc_next || !c->pc_bytes) goto oom;
        for (int t = 0; t < ntenants; t++) c->pc_rep[t] = -1;
    }
    if (cfg->pinning == PIN_LEAST_LOADED && c->nrep > 1 && pin_tree_init(c) != 0) goto oom;
    if (cfg->pinning == PIN_POWER_OF_TWO && c->nrep > 1) {
        c->prng = rng_stream(seed, (uint64_t)rep, CLOUD_PIN_ENTITY, RNG_PIN);
        if (!c->prng) goto oom;
    }
    for (int t = 0; t < ntenants; t++) c->thead[t] = c->ttail[t] = -1;
    for (int i = 0; i < c->nrep; i++) {
        replica_t *r = &c->rep[i];
        r->head = r->tail = -1;
        r->adm_head = r->adm_tail = -1;
        r->lru_head = r->lru_tail = -1;
        r->timer_at = -1;
        r->bjob = malloc((size_t)c->cap.max_batch * sizeof *r->bjob);
        r->btok = malloc((size_t)c->cap.max_batch * sizeof *r->btok);
        r->sjob = malloc((size_t)c->cap.max_batch * sizeof *r->sjob);
        r->djob = malloc((size_t)c->cap.max_batch * sizeof *r->djob);
        if (!r->bjob || !r->btok || !r->sjob || !r->djob) goto oom;
        if (r->g->vt && r->g->vt->kind != DIST_CONST) {
            r->vrng = rng_stream(seed, (uint64_t)rep, (1ULL << 32) + (uint64_t)i,
                                 RNG_VERIFY_TIME);
            if (!r->vrng) goto oom;
        }
        if (r->g->dt && r->g->dt->kind != DIST_CONST) {
            r->drng = rng_stream(seed, (uint64_t)rep, (1ULL << 32) + (uint64_t)i,
                                 RNG_CLOUD_DRAFT_TIME);
            if (!r->drng) goto oom;
        }
        if (r->g->noise_cv > 0) {
            r->nrng = rng_stream(seed, (uint64_t)rep, (1ULL << 32) + (uint64_t)i, RNG_DRIFT);
            if (!r->nrng) goto oom;
        }
    }
    if (engine_on(eng, ev_iter, on_iter_end, c) || engine_on(eng, ev_kick, on_kick, c)) {
        cloud_free(c);
        err_set(err, ERR_RUNTIME, "cloud: bad event type");
        return NULL;
    }
    return c;
oom:
    cloud_free(c);
    err_set(err, ERR_RUNTIME, "cloud: out of memory");
    return NULL;
}

void cloud_free(cloud_t *c)
{
    if (!c) return;
    if (c->rep) {
        for (int i = 0; i < c->nrep; i++) {
            free(c->rep[i].bjob);
            free(c->rep[i].btok);
            free(c->rep[i].sjob);
            free(c->rep[i].djob);
            if (c->rep[i].vrng) gsl_rng_free(c->rep[i].vrng);
            if (c->rep[i].drng) gsl_rng_free(c->rep[i].drng);
            if (c->rep[i].nrng) gsl_rng_free(c->rep[i].nrng);
        }
    }
    free(c->rep);
    free(c->jobs);
    free(c->thead);
    free(c->ttail);
    batch_scratch_fini(&c->scratch);
    for (int k = 0; c->grp && k < c->ngrp; k++) {
        order_fini(&c->grp[k].ord);
        free(c->grp[k].roof_lin);
    }
    free(c->grp);
    if (c->prng) gsl_rng_free(c->prng);
    free(c->ptree);
    free(c->adm_next);
    free(c->adm_bytes);
    free(c->pc_rep);
    free(c->pc_prev);
    free(c->pc_next);
    free(c->pc_bytes);
    free(c);
}

/* service_roofline_linear at m, kept per m (service_t is shared by threads,
 * so the memo lives here, one per group and replication). */
static double roof_linear(cgroup_t *c, int m)
{
    if (m >= c->roof_n && m < CLOUD_ROOF_MEMO_MAX) {
        int n = c->roof_n ? c->roof_n : 256;
        while (n <= m) n *= 2;
        if (n > CLOUD_ROOF_MEMO_MAX) n = CLOUD_ROOF_MEMO_MAX;
        double *v = realloc(c->roof_lin, (size_t)n * sizeof *v);
        if (v) {
            for (int k = c->roof_n; k < n; k++) v[k] = -1;
            c->roof_lin = v;
            c->roof_n = n;
        }
    }
    if (m >= c->roof_n) return service_roofline_linear(c->sv, m);
    if (c->roof_lin[m] < 0) c->roof_lin[m] = service_roofline_linear(c->sv, m);
    return c->roof_lin[m];
}

/* The batch's pure roofline time (sim/model/service.h): the linear term
 * from the memo plus attention. */
static double roof_time(cgroup_t *g, const service_job_t *jobs, int n)
{
    int m = 0;
    for (int b = 0; b < n; b++) m += jobs[b].tokens;
    if (m <= 0) return 0;
    return roof_linear(g, m) + service_roofline_attention(g->sv, jobs, n);
}

/* Tokens of n draft steps (a token tree's level drafts several at once). */
static int draft_tokens(const service_job_t *jobs, int n)
{
    int m = 0;
    for (int k = 0; k < n; k++) m += jobs[k].tokens;
    return m;
}

/* The draft's pass over a batch's nd draft steps (r->djob, one token
 * each, a token tree's level several): its fixed time, the heads' step, or
 * the draft model's iteration. */
static double draft_pass(const replica_t *r, int nd)
{
    const cgroup_t *g = r->g;
    if (g->dt) return dist_sample(g->dt, r->drng);
    if (g->dh) return service_heads_time(g->dh, draft_tokens(r->djob, nd));
    return g->dsv ? service_iter_time(g->dsv, r->djob, nd) : 0;
}

/* The draft's pure roofline time over the batch's draft steps (0 with a
 * fixed draft time, whose runs leave the roofline unknown). */
static double roof_draft(const cgroup_t *g, const service_job_t *jobs, int n)
{
    if (n <= 0) return 0;
    if (g->dh) return service_heads_roofline(g->dh, draft_tokens(jobs, n));
    if (!g->dsv) return 0;
    return service_roofline_linear(g->dsv, n) + service_roofline_attention(g->dsv, jobs, n);
}

/* 1 when replica a is less loaded than b (ties to the lower index): fewer
 * pinned requests, or with groups of different speeds the less reference
 * time (pinned + 1) × ref_time. */
static int lighter(const cloud_t *c, int a, int b)
{
    const replica_t *ra = &c->rep[a], *rb = &c->rep[b];
    if (!c->weighted)
        return ra->pinned < rb->pinned || (ra->pinned == rb->pinned && a < b);
    double la = (ra->pinned + 1) * ra->g->ref_time, lb = (rb->pinned + 1) * rb->g->ref_time;
    return la < lb || (la == lb && a < b);
}

/* Least-loaded pinning picks the least replica by lighter(), a strict
 * total order (ties go to the lower index). A scan over every replica per
 * request was 30% of a run with 3,200 replicas (scenarios/bench/
 * tenants-1m.yaml); the tournament tree gives the same replica in
 * O(log replicas) per change of load. Node k holds the lighter of its
 * children's winners; -1 (a leaf past the last replica) loses to all. */
static int pin_winner(const cloud_t *c, int a, int b)
{
    if (a < 0) return b;
    if (b < 0) return a;
    return lighter(c, b, a) ? b : a;
}

/* Replica i's load changed: replays its matches up to the root. */
static void pin_tree_fix(cloud_t *c, int i)
{
    if (!c->ptree) return;
    for (int k = (c->pleaf + i) / 2; k >= 1; k /= 2)
        c->ptree[k] = pin_winner(c, c->ptree[2 * k], c->ptree[2 * k + 1]);
}

/* Builds the tree over all replicas; 0, or -1 out of memory. */
static int pin_tree_init(cloud_t *c)
{
    int m = 1;
    while (m < c->nrep) m *= 2;
    c->pleaf = m;
    c->ptree = malloc(2 * (size_t)m * sizeof *c->ptree);
    if (!c->ptree) return -1;
    for (int k = 0; k < m; k++) c->ptree[m + k] = k < c->nrep ? k : -1;
    for (int k = m - 1; k >= 1; k--)
        c->ptree[k] = pin_winner(c, c->ptree[2 * k], c->ptree[2 * k + 1]);
    return 0;
}

/* Two distinct replicas drawn uniformly; the one with fewer pinned requests,
 * ties to the lower index (so that with two replicas it is least-loaded). */
static int pin_two(cloud_t *c)
{
    if (!c->prng) return 0;
    int a = (int)gsl_rng_uniform_int(c->prng, (unsigned long)c->nrep);
    int b = (int)gsl_rng_uniform_int(c->prng, (unsigned long)c->nrep - 1);
    if (b >= a) b++;
    return lighter(c, a, b) ? a : b;
}

int cloud_pin(cloud_t *c)
{
    int best = 0;
    if (c->cfg->pinning == PIN_ROUND_ROBIN) {
        best = c->rr;
        c->rr = (c->rr + 1) % c->nrep;
    } else if (c->cfg->pinning == PIN_POWER_OF_TWO) {
        best = pin_two(c);
    } else if (c->ptree) {
        best = c->ptree[1];
    }
    c->rep[best].pinned++;
    pin_tree_fix(c, best);
    return best;
}

void cloud_unpin(cloud_t *c, int replica)
{
    c->rep[replica].pinned--;
    pin_tree_fix(c, replica);
}

void cloud_pin_to(cloud_t *c, int replica)
{
    c->rep[replica].pinned++;
    pin_tree_fix(c, replica);
}

static int fits(const replica_t *r, double bytes)
{
    return r->kv_used + bytes <= r->kv_cap || r->kv_used <= 0;
}

/* Takes `bytes` out of the replica's KV (a release or an eviction). */
static void kv_sub(cloud_t *c, replica_t *r, double bytes, double now)
{
    kv_to(c, r, now);
    r->kv_used -= bytes;
    if (r->kv_used < 1e-9 * r->kv_cap || r->kv_used < 0) r->kv_used = 0;
}

/* ---- prefix cache (cloud.prefix_cache lru) ------------------------------
 * A cached prefix stays in kv_used (kv_util counts it) and in the
 * replica's LRU list until its tenant's next turn takes it back into a
 * request, its tenant drops it, or admission evicts it. */

static void lru_unlink(cloud_t *c, replica_t *r, int t)
{
    int p = c->pc_prev[t], n = c->pc_next[t];
    if (p >= 0) c->pc_next[p] = n; else r->lru_head = n;
    if (n >= 0) c->pc_prev[n] = p; else r->lru_tail = p;
    r->kv_cached -= c->pc_bytes[t];
    if (r->lru_head < 0) r->kv_cached = 0;   /* no rounding left behind */
    c->pc_rep[t] = -1;
}

/* Evicts least recently used prefixes until `bytes` fit, but only when
 * evicting them all would make room: a request that waits for running
 * requests to end leaves the cache as it is. */
static void make_room(cloud_t *c, replica_t *r, double bytes, double now)
{
    if (r->lru_head < 0 || fits(r, bytes)) return;
    double held = r->kv_used - r->kv_cached;
    if (!(held + bytes <= r->kv_cap || held <= 1e-9 * r->kv_cap)) return;
    while (r->lru_head >= 0 && !fits(r, bytes)) {
        int t = r->lru_head;
        double b = c->pc_bytes[t];
        lru_unlink(c, r, t);
        kv_sub(c, r, b, now);
        c->pc_evictions++;
    }
}

void cloud_cache_put(cloud_t *c, int replica, int tenant, double bytes)
{
    replica_t *r = &c->rep[replica];
    c->pc_bytes[tenant] = bytes;
    c->pc_rep[tenant] = replica;
    c->pc_prev[tenant] = r->lru_tail;
    c->pc_next[tenant] = -1;
    if (r->lru_tail >= 0) c->pc_next[r->lru_tail] = tenant; else r->lru_head = tenant;
    r->lru_tail = tenant;
    r->kv_cached += bytes;
}

int cloud_cache_replica(const cloud_t *c, int tenant)
{
    return c->pc_rep ? c->pc_rep[tenant] : -1;
}

double cloud_cache_take(cloud_t *c, int tenant)
{
    int ri = cloud_cache_replica(c, tenant);
    if (ri < 0) return 0;
    double b = c->pc_bytes[tenant];
    lru_unlink(c, &c->rep[ri], tenant);
    return b;
}

int cloud_cache_drop(cloud_t *c, int tenant, double now)
{
    int ri = cloud_cache_replica(c, tenant);
    if (ri < 0) return 0;
    return cloud_release(c, ri, cloud_cache_take(c, tenant), now);
}

long cloud_cache_evictions(const cloud_t *c) { return c->pc_evictions; }
double cloud_kv_used(const cloud_t *c, int replica) { return c->rep[replica].kv_used; }

int cloud_reserve(cloud_t *c, int replica, int tenant, double bytes)
{
    replica_t *r = &c->rep[replica];
    if (r->adm_head < 0) make_room(c, r, bytes, engine_now(c->eng));
    if (r->adm_head < 0 && fits(r, bytes)) {
        kv_to(c, r, engine_now(c->eng));
        r->kv_used += bytes;
        return 1;
    }
    /* FIFO admission: nobody overtakes a waiting request. */
    c->adm_next[tenant] = -1;
    c->adm_bytes[tenant] = bytes;
    if (r->adm_tail >= 0) c->adm_next[r->adm_tail] = tenant; else r->adm_head = tenant;
    r->adm_tail = tenant;
    return 0;
}

int cloud_release(cloud_t *c, int replica, double bytes, double now)
{
    replica_t *r = &c->rep[replica];
    kv_sub(c, r, bytes, now);
    while (r->adm_head >= 0) {
        make_room(c, r, c->adm_bytes[r->adm_head], now);
        if (!fits(r, c->adm_bytes[r->adm_head])) break;
        int t = r->adm_head;
        r->adm_head = c->adm_next[t];
        if (r->adm_head < 0) r->adm_tail = -1;
        r->kv_used += c->adm_bytes[t];
        if (c->cb.admitted(c->cb.ctx, t, replica, now) != 0) return -1;
    }
    return 0;
}

static int schedule_kick(cloud_t *c, int ri, double now)
{
    replica_t *r = &c->rep[ri];
    if (r->kick_pending) return 0;
    r->kick_pending = 1;
    return engine_schedule(c->eng, now, c->ev_kick, (uint32_t)ri, KICK);
}

/* Job j leaves the waiting count at its first iteration; a prefill split
 * over several iterations waits only once. */
static void first_start(cloud_t *c, cloud_job_t *j, double now, int count)
{
    tally_t *tl = c->tally;
    double d = now - j->arrive;
    j->started = 1;
    area_to(c, now);
    c->nwaiting--;
    tl->raw.queue_started++;
    tl->raw.queue_delay_sum += d;
    if (count) tally_queue_delay(tl, j->tenant, now, d);
}

static batch_queue_t queue_of(const cloud_t *c, const replica_t *r)
{
    return (batch_queue_t){.jobs = c->jobs, .head = r->head, .nqueue = r->nqueue,
                           .kv_free = r->kv_cap - r->kv_used};
}

/* Has the policy pick the batch, takes it out of the queue (a prefill stays
 * until its last chunk) and starts its iteration. */
static int start_iteration(cloud_t *c, int ri, double now)
{
    replica_t *r = &c->rep[ri];
    tally_t *tl = c->tally;
    batch_queue_t q = queue_of(c, r);
    batch_pick_t pick = {.n = 0, .job = r->bjob, .tokens = r->btok};
    order_t *ord = &r->g->ord;
    const batch_order_t *walk = order_walk(ord, &q);
    if (!walk) return -1;
    if (c->policy->pick == batch_pack)   /* the common pick, without a call */
        batch_pack_inline(&c->cfg->batching, &q, walk, c->cap, &c->scratch, &pick);
    else
        c->policy->pick(&c->cfg->batching, &q, now, walk, c->cap, &c->scratch, &pick);
    int nb = pick.n, ns = 0, nd = 0;
    int count = now >= tl->warmup;
    for (int b = 0; b < nb; b++) {
        int i = r->bjob[b];
        cloud_job_t *j = &c->jobs[i];
        /* A prefill chunk computes logits only for the prompt's last token,
         * in its final chunk. */
        int skip = j->kind != CLOUD_PREFILL ? 0 : r->btok[b] - (r->btok[b] == j->tokens);
        service_job_t sj = {.tokens = r->btok[b], .context = j->context, .nohead = skip};
        /* Draft steps run the draft, everything else the target. */
        if (j->kind == CLOUD_DRAFT) r->djob[nd++] = sj;
        else r->sjob[ns++] = sj;
        if (!j->started) first_start(c, j, now, count);
        order_served(ord, j->tenant, r->btok[b]);
        if (j->kind != CLOUD_PREFILL) {
            unlink_queue(c, r, i);
            unlink_tenant_head(c, i);
        }
        if (c->trace)
            trace_event(c->trace, now, j->tenant,
                        j->kind == CLOUD_VERIFY    ? "verify_start"
                        : j->kind == CLOUD_PREFILL ? "prefill_start"
                        : j->kind == CLOUD_DRAFT   ? "cloud_draft_start"
                                                   : "decode_start",
                        j->kind == CLOUD_VERIFY ? (long)j->block : -1L, r->btok[b]);
    }
    if (nb == 0) return 0;   /* nothing fits (cannot happen when validated) */
    double dt = 0;
    if (ns == 0) {
        /* draft steps alone: the target does not run */
    } else if (c->cb.iter_time) {
        dt = c->cb.iter_time(c->cb.ctx, ri, r->sjob, ns);
        if (!(dt >= 0)) return -1;
    } else if (r->g->vt)
        dt = dist_sample(r->g->vt, r->vrng);
    else
        dt = service_iter_time(r->g->sv, r->sjob, ns);
    if (nd > 0) dt += draft_pass(r, nd);
    /* drift.cloud: a modelled iteration varies as a real GPU's does; one
     * that a driver really runs (cb.iter_time) varies on its own. */
    if (r->nrng && !c->cb.iter_time) dt *= drift_factor(r->nrng, r->g->noise_cv);
    if (!(dt >= 0)) dt = 0;
    r->roof = tl->roof_known ? roof_time(r->g, r->sjob, ns) : 0;
    if (nd > 0 && tl->roof_known) r->roof += roof_draft(r->g, r->djob, nd);
    r->iter_end = now + dt;
    if (c->trace) {
        long m = 0;
        for (int b = 0; b < nb; b++) m += r->btok[b];
        trace_batch(c->trace, now, ri, dt, nb, m);
        record_queue_len(c, ri, now);
    }
    r->busy = 1;
    r->nbatch = nb;
    r->iter_start = now;
    r->timer_gen++;   /* a pending window timer is now moot */
    r->timer_at = -1;
    tl->raw.iterations++;
    if (count) hist_add(tl->batch, nb, 1);
    if (dt == INFINITY) return 0;   /* the driver ends it: cloud_iteration_end */
    return engine_schedule(c->eng, now + dt, c->ev_iter, (uint32_t)ri, 0);
}

/* Starts an iteration if the policy says so, else arms the replica's timer
 * for when the policy wants to look again. */
static int try_start(cloud_t *c, int ri, double now)
{
    replica_t *r = &c->rep[ri];
    if (r->busy || r->nqueue == 0) return 0;
    batch_queue_t q = queue_of(c, r);
    double due = batch_when(c->policy, &c->cfg->batching, &q, now);
    if (due <= now) return start_iteration(c, ri, now);
    if (due == INFINITY || r->timer_at == due) return 0;
    r->timer_at = due;
    r->timer_gen++;
    return engine_schedule(c->eng, due, c->ev_kick, (uint32_t)ri,
                           ((uint64_t)r->timer_gen << 1) | 1u);
}

static int on_kick(void *ctx, const engine_event_t *ev)
{
    cloud_t *c = ctx;
    replica_t *r = &c->rep[ev->a];
    if (ev->b == KICK) {
        r->kick_pending = 0;
    } else {
        if ((uint32_t)(ev->b >> 1) != r->timer_gen) return 0;   /* cancelled */
        r->timer_at = -1;
    }
    return try_start(c, (int)ev->a, ev->time);
}

int cloud_submit(cloud_t *c, int ri, const cloud_job_t *spec, double now)
{
    int i = job_alloc(c);
    if (i < 0) return -1;
    replica_t *r = &c->rep[ri];
    cloud_job_t *j = &c->jobs[i];
    *j = *spec;
    j->arrive = now;
    j->started = 0;
    j->prev = r->tail;
    j->next = -1;
    j->tnext = -1;
    if (r->tail >= 0) c->jobs[r->tail].next = i; else r->head = i;
    r->tail = i;
    r->nqueue++;
    int t = j->tenant;
    if (c->ttail[t] >= 0) c->jobs[c->ttail[t]].tnext = i; else c->thead[t] = i;
    c->ttail[t] = i;
    area_to(c, now);
    c->nwaiting++;
    c->tally->raw.queue_arrivals++;
    order_job_in(&r->g->ord, t);
    record_queue_len(c, ri, now);
    if (r->busy) return 0;
    /* Through the zero-delay kick for both policies: the kick decides (start,
     * or arm the window timer) once every same-instant arrival is queued. */
    return schedule_kick(c, ri, now);
}

int cloud_purge(cloud_t *c, int ri, int tenant, double now)
{
    replica_t *r = &c->rep[ri];
    int n = 0, keep_head = -1, keep_tail = -1;
    area_to(c, now);
    for (int i = c->thead[tenant]; i >= 0;) {
        cloud_job_t *j = &c->jobs[i];
        int nxt = j->tnext;
        if (j->kind == CLOUD_VERIFY) {
            unlink_queue(c, r, i);
            if (!j->started) {
                c->nwaiting--;
                c->tally->raw.queue_purged++;
                c->tally->raw.queue_purged_sojourn += now - j->arrive;
            }
            job_release(c, i);
            order_job_out(&r->g->ord, tenant);
            n++;
        } else {
            j->tnext = -1;
            if (keep_tail >= 0) c->jobs[keep_tail].tnext = i; else keep_head = i;
            keep_tail = i;
        }
        i = nxt;
    }
    c->thead[tenant] = keep_head;
    c->ttail[tenant] = keep_tail;
    if (n) record_queue_len(c, ri, now);
    return n;
}

static int on_iter_end(void *ctx, const engine_event_t *ev)
{
    cloud_t *c = ctx;
    int ri = (int)ev->a;
    replica_t *r = &c->rep[ri];
    double now = ev->time;
    tally_t *tl = c->tally;
    tl->raw.busy_s += now - r->iter_start;
    double busy = tally_clip(tl, r->iter_start, now);
    tl->busy += busy;
    if (r->gi < tl->nccfg) tl->rbusy[r->gi] += busy;
    tally_roofline(tl, r->iter_start, now, r->roof);
    for (int b = 0; b < r->nbatch; b++) {
        int i = r->bjob[b];
        cloud_job_t *j = &c->jobs[i];
        int finished = 1;
        int took = r->btok[b];
        if (j->kind == CLOUD_PREFILL) {
            j->tokens -= took;
            j->context += took;
            finished = j->tokens <= 0;
            if (finished) {
                unlink_queue(c, r, i);
                unlink_tenant_head(c, i);
            }
        }
        /* Copy: the callback may submit jobs and move the pool. */
        cloud_job_t done = *j;
        if (finished) {
            job_release(c, i);
            order_job_out(&r->g->ord, done.tenant);
        }
        if (c->cb.job_done(c->cb.ctx, &done, now) != 0) return -1;
    }
    r->busy = 0;
    r->nbatch = 0;
    record_queue_len(c, ri, now);
    /* Deferred like any other start, so that jobs reaching the cloud at
     * this same instant (events already queued for now) join the batch. */
    return r->nqueue ? schedule_kick(c, ri, now) : 0;
}

int cloud_iteration_end(cloud_t *c, int replica, double now)
{
    if (replica < 0 || replica >= c->nrep || !c->rep[replica].busy) return -1;
    engine_event_t ev = {.time = now, .type = c->ev_iter, .a = (uint32_t)replica};
    return on_iter_end(c, &ev);
}

void cloud_finish(cloud_t *c, double end)
{
    tally_t *tl = c->tally;
    area_to(c, end);
    for (int ri = 0; ri < c->nrep; ri++) {
        replica_t *r = &c->rep[ri];
        kv_to(c, r, end);
        if (r->busy) {
            /* An iteration a driver runs (cloud_iteration_end) has no
             * end yet: its work so far counts up to `end`. */
            tally_roofline(tl, r->iter_start, isfinite(r->iter_end) ? r->iter_end : end,
                           r->roof);
            double busy = tally_clip(tl, r->iter_start, end);
            tl->busy += busy;
            if (r->gi < tl->nccfg) tl->rbusy[r->gi] += busy;
            tl->raw.busy_s += end - r->iter_start;
        }
        for (int i = r->head; i >= 0; i = c->jobs[i].next) {
            if (c->jobs[i].started) continue;
            tl->raw.queue_waiting_end++;
            tl->raw.queue_open_sojourn += end - c->jobs[i].arrive;
        }
    }
}

double cloud_kv_bytes_per_token(const cloud_t *c, int replica)
{
    return c->rep[replica].g->kv_bpt;
}

int cloud_queued(const cloud_t *c, int replica) { return c->rep[replica].nqueue; }
int cloud_pinned(const cloud_t *c, int replica) { return c->rep[replica].pinned; }
int cloud_busy(const cloud_t *c, int replica) { return c->rep[replica].busy; }

double cloud_kv_capacity(const cloud_t *c, int replica) { return c->rep[replica].kv_cap; }
