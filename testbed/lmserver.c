/* accept4: Linux's, for close-on-exec sockets in one call. */
#define _GNU_SOURCE
#include "lmserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "model/batch.h"
#include "conn.h"
#include "model/gamma.h"
#include "model/order.h"
#include "gguf.h"
#include "llm.h"
#include "model/network.h"
#include "entity/proto.h"
#include "server.h"
#include "rt.h"
#include "run/sim.h"
#include "spec.h"
#include "specloop.h"
#include "tallyio.h"
#include "tok.h"
#include "base/wallclock.h"
#include "worker.h"
#include "xio.h"

/* Engine events of this server. */
enum { LM_EV_DOWN = 1, LM_EV_DONE, LM_EV_KICK };
/* The worker's eventfd in the epoll set; tenants use their index. */
#define LM_WORKER_TAG (UINT32_MAX - 1)
/* Drafts per block the wire and the job slots take. */
#define LM_GAMMA_MAX 64

enum { JOB_PREFILL, JOB_VERIFY };

typedef struct job {
    int tenant, kind, gamma, left, started, next;
    uint32_t epoch;
    double arrive;
    int32_t drafts[LM_GAMMA_MAX];
} job_t;

/* A frame on its way down: sent when the downlink delivers it. */
typedef struct down {
    int kind, accepted, gamma, n, next;
    uint32_t epoch;
    uint32_t ids[LM_GAMMA_MAX + 1];
} down_t;

typedef struct lmten {
    conn_t *conn;
    int bye, group;
    network_link_t down;
    llm_kv_t *kv;
    int32_t *vs;            /* the prompt, then the committed tokens */
    int vlen, cap, plen, output, committed;
    int active, admitted, in_batch;
    uint32_t epoch;
    double t_prompt, kv_bytes;
    long finished;          /* requests completed */
} lmten_t;

/* One iteration, as handed to the worker. */
typedef struct iter {
    int n;                  /* jobs */
    int *job;               /* [max_batch] job indices */
    llm_span_t *sp;         /* [max_batch] */
    int *rows;              /* [max_batch] logits rows of each */
    int32_t *out;           /* [max_batch] prefill: first token; verify: next */
    int *acc;               /* [max_batch] verify: accepted drafts */
    float *logits;
    double dt;              /* its time (s); < 0: failed (err) */
    err_t err;
} iter_t;

typedef struct lms {
    const scenario_t *s;
    const lmserver_opts_t *o;
    err_t *err;             /* where the event handlers report failures */
    tally_t *tl;
    int n, lfd, max_batch, max_tokens, sync;
    engine_t *eng;
    rt_t rt;
    double start;
    lmten_t *t;
    /* jobs: a pool with a free list, the FIFO queue through next */
    job_t *jobs;
    int jcap, jfree, qhead, qtail, nwaiting;
    double area_t;
    /* frames going down */
    down_t *dn;
    int dcap, dfree;
    /* KV admission (bytes, as the simulator counts them) */
    double kv_cap, kv_bpt, kv_used, kv_t;
    int *adm;               /* FIFO of waiting tenants */
    int adm_head, adm_n;
    /* the model and its worker */
    gguf_t *g;
    tok_t *tok;
    llm_model_t *m;
    llm_run_t *run;
    worker_t w;
    iter_t it;
    int busy, kick, demoted;
    double iter_start;
    double real_n, real_s;  /* iterations, their measured time */
    /* the same by kind, so that the report can be held against the table
     * of steps the simulator prices: verify-only iterations of one block,
     * of several (with their blocks), and those with a prefill chunk */
    double kind_n[3], kind_s[3], kind_jobs[3];
    long check_bad, check_n;
    int shown;
    int32_t *done;          /* --check: finished requests (finished()) */
    size_t done_len, done_cap;
} lms_t;

/* ---- refusals --------------------------------------------------------------- */

const char *lmserver_refusal(const scenario_t *s)
{
    const cloud_cfg_t *c = &s->cloud;
    const batch_policy_t *pol = c->batching.policy ? c->batching.policy : batch_policy_default();
    if (c->replicas != 1 || c->nrgroups > 1)
        return "--real-model runs one verifier: cloud.replicas must be 1";
    if (c->batching.max_tokens <= 0)
        return "--real-model needs cloud.batching.max_tokens (an iteration's token limit)";
    if (c->batching.multi_block)
        return "--real-model verifies one block per tenant per iteration: "
               "cloud.batching.multi_block must be false";
    if (strcmp(pol->name, "continuous") != 0)
        return "--real-model batches continuously: cloud.batching.policy must be continuous";
    if (c->batching.order && strcmp(c->batching.order->name, "fcfs") != 0)
        return "--real-model serves in arrival order: cloud.batching.order must be fcfs";
    for (int g = 0; g < s->ngroups; g++) {
        const protocol_cfg_t *p = scenario_group_protocol(s, g);
        if (strcmp(p->proto->name, "sync") && strcmp(p->proto->name, "async"))
            return "--real-model runs the sync and async protocols only";
        if (strcmp(p->gamma_policy->name, "fixed") != 0)
            return "--real-model runs a fixed gamma: protocol.gamma_policy must be fixed";
        if (p->gamma > LM_GAMMA_MAX)
            return "--real-model takes blocks of at most 64 drafts";
    }
    return NULL;
}

/* ---- jobs and frames ------------------------------------------------------- */

static int job_alloc(lms_t *S)
{
    if (S->jfree < 0) {
        int ncap = S->jcap ? 2 * S->jcap : 64;
        job_t *nj = realloc(S->jobs, (size_t)ncap * sizeof *nj);
        if (!nj) return -1;
        for (int i = S->jcap; i < ncap; i++) nj[i].next = i + 1 < ncap ? i + 1 : -1;
        S->jobs = nj;
        S->jfree = S->jcap;
        S->jcap = ncap;
    }
    int j = S->jfree;
    S->jfree = S->jobs[j].next;
    return j;
}

static void job_free(lms_t *S, int j)
{
    S->jobs[j].next = S->jfree;
    S->jfree = j;
}

/* The number of jobs waiting for their first iteration, integrated. */
static void area_to(lms_t *S, double now)
{
    S->tl->raw.queue_area += S->nwaiting * (now - S->area_t);
    S->area_t = now;
}

static int enqueue(lms_t *S, const job_t *spec, double now)
{
    int j = job_alloc(S);
    if (j < 0) return err_set(S->err, ERR_RUNTIME, "testbed: verifier: out of memory");
    S->jobs[j] = *spec;
    S->jobs[j].arrive = now;
    S->jobs[j].started = 0;
    S->jobs[j].next = -1;
    if (S->qtail >= 0) S->jobs[S->qtail].next = j;
    else S->qhead = j;
    S->qtail = j;
    area_to(S, now);
    S->nwaiting++;
    S->tl->raw.queue_arrivals++;
    if (!S->busy && !S->kick) {
        S->kick = 1;
        if (engine_schedule(S->eng, now, LM_EV_KICK, 0, 0))
            return err_set(S->err, ERR_RUNTIME, "testbed: verifier: event queue");
    }
    return 0;
}

/* Unlinks job j (prev: its predecessor in the queue, -1 at the head). */
static void unlink_job(lms_t *S, int prev, int j)
{
    int nx = S->jobs[j].next;
    if (prev >= 0) S->jobs[prev].next = nx;
    else S->qhead = nx;
    if (S->qtail == j) S->qtail = prev;
}

/* Unlinks job j wherever it is in the queue. */
static void unlink_job_at(lms_t *S, int j)
{
    int prev = -1;
    for (int k = S->qhead; k >= 0 && k != j; k = S->jobs[k].next) prev = k;
    unlink_job(S, prev, j);
}

/* Drops tenant i's queued verifications (a new epoch). */
static void purge(lms_t *S, int i, double now)
{
    area_to(S, now);
    for (int j = S->qhead, prev = -1; j >= 0;) {
        int nx = S->jobs[j].next;
        if (S->jobs[j].tenant == i && S->jobs[j].kind == JOB_VERIFY && !S->t[i].in_batch) {
            unlink_job(S, prev, j);
            S->nwaiting--;
            S->tl->raw.queue_purged++;
            S->tl->raw.queue_purged_sojourn += now - S->jobs[j].arrive;
            job_free(S, j);
        } else {
            prev = j;
        }
        j = nx;
    }
}

/* Sends a frame down through tenant i's downlink model: it leaves this
 * process when the link delivers it. */
static int send_down(lms_t *S, int i, const down_t *d, double bytes, double now)
{
    if (S->dfree < 0) {
        int ncap = S->dcap ? 2 * S->dcap : 64;
        down_t *nd = realloc(S->dn, (size_t)ncap * sizeof *nd);
        if (!nd) return err_set(S->err, ERR_RUNTIME, "testbed: verifier: out of memory");
        for (int k = S->dcap; k < ncap; k++) nd[k].next = k + 1 < ncap ? k + 1 : -1;
        S->dn = nd;
        S->dfree = S->dcap;
        S->dcap = ncap;
    }
    int k = S->dfree;
    S->dfree = S->dn[k].next;
    S->dn[k] = *d;
    double at = network_send(&S->t[i].down, now, bytes);
    tally_down_bytes(S->tl, i, now, bytes);
    if (engine_schedule(S->eng, at, LM_EV_DOWN, (uint32_t)i, (uint64_t)k))
        return err_set(S->err, ERR_RUNTIME, "testbed: verifier: event queue");
    return 0;
}

static int on_down(void *ctx, const engine_event_t *ev)
{
    lms_t *S = ctx;
    down_t *d = &S->dn[ev->b];
    wire_msg_t m = {.kind = d->kind, .epoch = d->epoch, .gamma = d->gamma,
                    .accepted = d->accepted, .n = d->n, .ids = d->ids};
    int rc = conn_send(S->t[ev->a].conn, &m, S->err);
    d->next = S->dfree;
    S->dfree = (int)ev->b;
    return rc;
}

static double msg_bytes(const lms_t *S, int i, int tokens)
{
    const network_cfg_t *net = &S->s->groups[S->t[i].group].network;
    return net->overhead_bytes + tokens * net->bytes_per_token;
}

/* ---- KV admission ------------------------------------------------------------ */

static void kv_to(lms_t *S, double now)
{
    if (isfinite(S->kv_cap) && S->kv_cap > 0) tally_kv(S->tl, S->kv_used / S->kv_cap, S->kv_t, now);
    S->kv_t = now;
}

static int fits(const lms_t *S, double bytes)
{
    return S->kv_used + bytes <= S->kv_cap || S->kv_used <= 0;
}

static int admit(lms_t *S, int i, double now)
{
    lmten_t *T = &S->t[i];
    kv_to(S, now);
    S->kv_used += T->kv_bytes;
    T->admitted = 1;
    tally_admitted(S->tl, i, now, now - T->t_prompt);
    job_t j = {.tenant = i, .kind = JOB_PREFILL, .left = T->plen, .epoch = T->epoch};
    return enqueue(S, &j, now);
}

static int release(lms_t *S, int i, double now)
{
    kv_to(S, now);
    S->kv_used -= S->t[i].kv_bytes;
    if (S->kv_used < 1e-9 * S->kv_cap || S->kv_used < 0) S->kv_used = 0;
    S->t[i].admitted = 0;
    while (S->adm_n > 0 && fits(S, S->t[S->adm[S->adm_head]].kv_bytes)) {
        int w = S->adm[S->adm_head];
        S->adm_head = (S->adm_head + 1) % S->n;
        S->adm_n--;
        if (admit(S, w, now)) return -1;
    }
    return 0;
}

/* ---- frames from the edge ---------------------------------------------------- */

static int on_prompt(lms_t *S, int i, const wire_msg_t *m, double now, err_t *err)
{
    lmten_t *T = &S->t[i];
    if (m->nids < 1 || m->nids + (int)m->output + LM_GAMMA_MAX + 2 > T->cap || T->active)
        return err_set(err, ERR_RUNTIME, "testbed: verifier: tenant %d: a prompt of %d ids "
                       "for %u tokens (%s)", i, m->nids, m->output,
                       T->active ? "a request is still open" : "no room");
    for (int k = 0; k < m->nids; k++) {
        if (m->ids[k] >= (uint32_t)llm_config(S->m)->vocab)
            return err_set(err, ERR_RUNTIME, "testbed: verifier: tenant %d: token id %u",
                           i, m->ids[k]);
        T->vs[k] = (int32_t)m->ids[k];
    }
    T->vlen = T->plen = m->nids;
    T->output = (int)m->output;
    T->committed = 0;
    T->epoch = m->epoch;
    T->active = 1;
    T->t_prompt = now;
    llm_kv_truncate(T->kv, 0);
    const protocol_cfg_t *p = scenario_group_protocol(S->s, T->group);
    T->kv_bytes = ((double)T->plen + T->output + p->gamma_policy->limit(p->gamma) + 1) * S->kv_bpt;
    if (S->adm_n == 0 && fits(S, T->kv_bytes)) return admit(S, i, now);
    S->adm[(S->adm_head + S->adm_n++) % S->n] = i;
    return 0;
}

static int on_block(lms_t *S, int i, const wire_msg_t *m, double now, err_t *err)
{
    lmten_t *T = &S->t[i];
    if (m->gamma > LM_GAMMA_MAX)
        return err_set(err, ERR_RUNTIME, "testbed: verifier: a block of %d drafts", m->gamma);
    if (!T->active || m->epoch != T->epoch) {
        S->tl->raw.blocks_dropped++;
        return 0;
    }
    job_t j = {.tenant = i, .kind = JOB_VERIFY, .gamma = m->gamma, .epoch = m->epoch};
    for (int k = 0; k < m->gamma; k++) j.drafts[k] = (int32_t)m->ids[k];
    return enqueue(S, &j, now);
}

/* ---- iterations ----------------------------------------------------------- */

/* worker_fn: one forward pass over the iteration's spans, then each job's
 * greedy choice. The loop leaves the iteration alone until the eventfd. */
static int work(void *arg)
{
    lms_t *S = arg;
    iter_t *it = &S->it;
    worker_unlock(&S->w);
    if (!S->demoted) {
        /* Under the event loop's real-time priority (testbed/main.c asks
         * for SCHED_FIFO): its wake-ups must not wait for a forward pass. */
        struct sched_param sp = {.sched_priority = 0};
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
        S->demoted = 1;
    }
    double t0 = wallclock_s();
    int vocab = llm_config(S->m)->vocab, rc = llm_forward(S->run, S->m, it->sp, it->n,
                                                          it->logits, &it->err);
    const float *lg = it->logits;
    for (int b = 0; rc == 0 && b < it->n; b++) {
        const job_t *j = &S->jobs[it->job[b]];
        if (it->rows[b] == 0) continue;
        if (j->kind == JOB_PREFILL) it->out[b] = spec_argmax(lg, vocab);
        else it->acc[b] = spec_verify_greedy(lg, vocab, j->drafts, j->gamma, &it->out[b]);
        lg += (size_t)it->rows[b] * vocab;
    }
    double dt = wallclock_s() - t0;
    worker_lock(&S->w);
    it->dt = rc == 0 ? dt : -1;
    return 1;
}

/* The span of job j (its tokens are in the tenant's vs). */
static int span_of(lms_t *S, int jx, int budget, llm_span_t *sp, int *rows)
{
    job_t *j = &S->jobs[jx];
    lmten_t *T = &S->t[j->tenant];
    if (j->kind == JOB_PREFILL) {
        int take = j->left < budget ? j->left : budget, at = T->plen - j->left;
        *sp = (llm_span_t){T->kv, T->vs + at, take, take == j->left ? take - 1 : take};
        *rows = take == j->left;
        return take;
    }
    /* The last committed token and the drafts, over the cache of the
     * committed text but the last token (async: after a block accepted
     * whole the cache holds its last draft; it is run again so that its
     * row checks this block's first draft). */
    llm_kv_truncate(T->kv, T->vlen - 1);
    int at = llm_kv_len(T->kv), len = T->vlen - at + j->gamma;
    memcpy(T->vs + T->vlen, j->drafts, (size_t)j->gamma * sizeof *j->drafts);
    *sp = (llm_span_t){T->kv, T->vs + at, len, len - j->gamma - 1};
    *rows = j->gamma + 1;
    return len;
}

static void first_start(lms_t *S, job_t *j, double now)
{
    double d = now - j->arrive;
    j->started = 1;
    area_to(S, now);
    S->nwaiting--;
    S->tl->raw.queue_started++;
    S->tl->raw.queue_delay_sum += d;
    tally_queue_delay(S->tl, j->tenant, now, d);
}

/* Takes jobs in arrival order while they fit: at most max_batch jobs and
 * max_tokens tokens, one per tenant (a tenant's later jobs wait behind its
 * first), a prefill cut to the tokens left. */
static int start_iteration(lms_t *S, double now)
{
    iter_t *it = &S->it;
    int budget = S->max_tokens, nb = 0;
    for (int j = S->qhead; j >= 0 && nb < S->max_batch && budget > 0; j = S->jobs[j].next) {
        lmten_t *T = &S->t[S->jobs[j].tenant];
        if (T->in_batch) continue;
        T->in_batch = 1;   /* also when it waits: its later jobs stay behind */
        int take = span_of(S, j, budget, &it->sp[nb], &it->rows[nb]);
        if (take > budget) continue;
        it->job[nb++] = j;
        budget -= take;
    }
    for (int i = 0; i < S->n; i++) S->t[i].in_batch = 0;
    if (nb == 0) return 0;
    for (int b = 0; b < nb; b++) {
        job_t *j = &S->jobs[it->job[b]];
        S->t[j->tenant].in_batch = 1;
        if (!j->started) first_start(S, j, now);
    }
    it->n = nb;
    S->busy = 1;
    S->iter_start = now;
    S->tl->raw.iterations++;
    if (now >= S->tl->warmup) hist_add(S->tl->batch, nb, 1);
    worker_lock(&S->w);
    worker_post(&S->w);
    worker_unlock(&S->w);
    return 0;
}

static int on_kick(void *ctx, const engine_event_t *ev)
{
    lms_t *S = ctx;
    S->kick = 0;
    return S->busy || S->qhead < 0 ? 0 : start_iteration(S, ev->time);
}

/* A finished request: a sample of its text (--verbose), and its prompt and
 * output kept for the check after the run (--check): checking here would
 * stop the event loop for a whole decode. */
static int finished(lms_t *S, int i)
{
    lmten_t *T = &S->t[i];
    T->finished++;
    if (S->o->verbose && !S->shown) {
        S->shown = 1;
        fprintf(stderr, "testbed: tenant %d's request, generated by speculative decoding:\n",
                i);
        for (int k = T->plen; k < T->vlen; k++) {
            const char *p;
            size_t len;
            tok_piece(S->tok, T->vs[k], 1, &p, &len);
            fwrite(p, 1, len, stderr);
        }
        fputs("\n", stderr);
    }
    if (!S->o->check) return 0;
    size_t need = (size_t)T->vlen + 2;
    if (S->done_len + need > S->done_cap) {
        size_t ncap = (S->done_cap + need) * 2;
        int32_t *nd = realloc(S->done, ncap * sizeof *nd);
        if (!nd) return err_set(S->err, ERR_RUNTIME, "testbed: verifier: out of memory");
        S->done = nd;
        S->done_cap = ncap;
    }
    /* plen, output, then the ids */
    S->done[S->done_len++] = T->plen;
    S->done[S->done_len++] = T->output;
    memcpy(S->done + S->done_len, T->vs, (size_t)T->vlen * sizeof *T->vs);
    S->done_len += (size_t)T->vlen;
    return 0;
}

/* --check: every finished request's output against the target decoding
 * its prompt alone. */
static int check_all(lms_t *S, err_t *err)
{
    for (size_t at = 0; at < S->done_len;) {
        int plen = S->done[at], out = S->done[at + 1];
        const int32_t *p = S->done + at + 2;
        int32_t *ref = malloc((size_t)out * sizeof *ref);
        if (!ref) return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
        int rc = specloop_generate(S->m, S->run, p, plen, out, 0.0f, NULL, ref, err);
        if (rc == 0) {
            int k = 0;
            while (k < out && ref[k] == p[plen + k]) k++;
            S->check_n++;
            if (k < out) {
                S->check_bad++;
                fprintf(stderr, "testbed: verifier: a request of %d prompt tokens differs from "
                        "the target's own greedy text at output token %d (%d, alone %d)\n",
                        plen, k, (int)p[plen + k], (int)ref[k]);
            }
        }
        free(ref);
        if (rc) return -1;
        at += 2 + (size_t)plen + (size_t)out;
    }
    return 0;
}

static int prefill_done(lms_t *S, int b, double now)
{
    iter_t *it = &S->it;
    job_t *j = &S->jobs[it->job[b]];
    lmten_t *T = &S->t[j->tenant];
    j->left -= it->sp[b].n;
    if (j->left > 0) return 0;   /* more chunks: stays queued */
    T->vs[T->vlen++] = it->out[b];
    T->committed = 1;
    down_t d = {.kind = WIRE_FIRST, .epoch = T->epoch, .ids = {(uint32_t)it->out[b]}};
    int rc = send_down(S, j->tenant, &d, msg_bytes(S, j->tenant, 1), now);
    if (rc == 0 && T->committed >= T->output) {
        T->active = 0;
        T->epoch++;
        rc = finished(S, j->tenant) || release(S, j->tenant, now);
    }
    return rc;
}

static int verdict(lms_t *S, int b, double now)
{
    iter_t *it = &S->it;
    job_t *j = &S->jobs[it->job[b]];
    int i = j->tenant, a = it->acc[b], g = j->gamma;
    lmten_t *T = &S->t[i];
    tally_verified(S->tl, i, now, g + 1, 0);
    int full = a == g, want = a + (full && !S->sync ? 0 : 1);
    int left = T->output - T->committed, n = want < left ? want : left;
    down_t d = {.kind = WIRE_VERDICT, .epoch = j->epoch, .gamma = g, .accepted = a, .n = n};
    for (int k = 0; k < a; k++) d.ids[k] = (uint32_t)j->drafts[k];
    d.ids[a] = (uint32_t)it->out[b];
    /* The cache keeps the last committed token and the accepted drafts. */
    llm_kv_truncate(T->kv, T->vlen + a);
    for (int k = 0; k < n; k++) T->vs[T->vlen++] = (int32_t)d.ids[k];
    T->committed += n;
    S->tl->raw.verdicts++;
    tally_accepted(S->tl, i, now, a, g);
    int done = T->committed >= T->output;
    /* A rejection ends an epoch under async only: a sync edge sends its
     * next block after the verdict, in the same epoch. */
    if ((!full && !S->sync) || done) {
        T->epoch++;
        purge(S, i, now);
    }
    if (send_down(S, i, &d, msg_bytes(S, i, a + 1), now)) return -1;
    if (!done) return 0;
    T->active = 0;
    return finished(S, i) || release(S, i, now);
}

static int on_done(void *ctx, const engine_event_t *ev)
{
    lms_t *S = ctx;
    iter_t *it = &S->it;
    double now = ev->time;
    if (it->dt < 0) {
        *S->err = it->err;
        return -1;
    }
    tally_t *tl = S->tl;
    tl->raw.busy_s += now - S->iter_start;
    double busy = tally_clip(tl, S->iter_start, now);
    tl->busy += busy;
    if (tl->nccfg > 0) tl->rbusy[0] += busy;
    S->real_n++;
    S->real_s += it->dt;
    int kind = it->n == 1 ? 0 : 1;
    for (int b = 0; b < it->n; b++)
        if (S->jobs[it->job[b]].kind == JOB_PREFILL) kind = 2;
    S->kind_n[kind]++;
    S->kind_s[kind] += it->dt;
    S->kind_jobs[kind] += it->n;
    int rc = 0;
    for (int b = 0; b < it->n && rc == 0; b++) {
        job_t *j = &S->jobs[it->job[b]];
        S->t[j->tenant].in_batch = 0;
        if (j->kind == JOB_VERIFY) {
            unlink_job_at(S, it->job[b]);
            rc = verdict(S, b, now);
            job_free(S, it->job[b]);
        } else {
            rc = prefill_done(S, b, now);
            if (rc == 0 && j->left <= 0) {
                unlink_job_at(S, it->job[b]);
                job_free(S, it->job[b]);
            }
        }
    }
    S->busy = 0;
    if (rc == 0 && S->qhead >= 0) rc = start_iteration(S, now);
    return rc;
}

/* ---- input ------------------------------------------------------------------- */

static int worker_signal(lms_t *S, err_t *err)
{
    worker_drain(&S->w);
    if (engine_schedule(S->eng, rt_now(&S->rt), LM_EV_DONE, 0, 0))
        return err_set(err, ERR_RUNTIME, "testbed: verifier: event queue");
    return 0;
}

/* Frames from tenant `tag`, each taken at the instant it is read. */
static int on_input(void *ctx, uint32_t tag, err_t *err)
{
    lms_t *S = ctx;
    if (tag == LM_WORKER_TAG) return worker_signal(S, err);
    lmten_t *T = &S->t[tag];
    if (conn_fill(T->conn, err)) return -1;
    uint32_t ids[WIRE_IDS_MAX];
    wire_msg_t m = {.ids = ids};
    int rc = 0;
    double now = rt_now(&S->rt);
    while (!T->bye && (rc = conn_next(T->conn, &m, err)) > 0) {
        if (m.kind == WIRE_BYE) T->bye = 1;
        else if (m.kind == WIRE_PROMPT) rc = on_prompt(S, (int)tag, &m, now, err);
        else if (m.kind == WIRE_BLOCK) rc = on_block(S, (int)tag, &m, now, err);
        else rc = err_set(err, ERR_RUNTIME, "testbed: verifier: unexpected frame kind %d "
                          "from tenant %u", m.kind, tag);
        if (rc < 0) return -1;
        m.ids = ids;
    }
    if (rc < 0) return -1;
    if (T->conn->eof && !T->bye)
        return err_set(err, ERR_RUNTIME, "testbed: verifier: tenant %u hung up", tag);
    return 0;
}

/* ---- set-up ------------------------------------------------------------------ */

static int accept_all(lms_t *S, int rep, err_t *err)
{
    unsigned char *expect = malloc((size_t)S->n);
    conn_t **conn = calloc((size_t)S->n, sizeof *conn);
    int rc = expect && conn ? 0 : err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    if (rc == 0) {
        memset(expect, 1, (size_t)S->n);
        rc = server_accept(S->lfd, rep, S->n, expect, conn, &S->start, err);
    }
    /* The tenants own their connections from here (teardown closes them). */
    for (int i = 0; conn && i < S->n; i++) S->t[i].conn = conn[i];
    free(expect);
    free(conn);
    return rc;
}

static int model_init(lms_t *S, err_t *err)
{
    llm_opts_t lo = {LLM_FP16, 0, 0};
    if (!(S->g = gguf_open(S->o->model, err)) || !(S->tok = tok_create(S->g, err)) ||
        !(S->m = llm_load(S->g, &lo, err)) ||
        llm_check_vocab(S->m, S->g, tok_vocab(S->tok), err) ||
        !(S->run = llm_run_create(S->o->threads, err)))
        return -1;
    iter_t *it = &S->it;
    size_t B = (size_t)S->max_batch;
    it->job = calloc(B, sizeof *it->job);
    it->sp = calloc(B, sizeof *it->sp);
    it->rows = calloc(B, sizeof *it->rows);
    it->out = calloc(B, sizeof *it->out);
    it->acc = calloc(B, sizeof *it->acc);
    it->logits = malloc((size_t)S->max_tokens * llm_config(S->m)->vocab * sizeof *it->logits);
    if (!it->job || !it->sp || !it->rows || !it->out || !it->acc || !it->logits)
        return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    return worker_start(&S->w, work, S, "verifier", err);
}

static int tenants_init(lms_t *S, const repl_shared_t *sh, int rep, err_t *err)
{
    const scenario_t *s = S->s;
    S->t = calloc((size_t)S->n, sizeof *S->t);
    S->adm = calloc((size_t)S->n, sizeof *S->adm);
    if (!S->t || !S->adm) return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    for (int i = 0; i < S->n; i++) {
        lmten_t *T = &S->t[i];
        const tenant_group_t *G = scenario_tenant_group(s, i);
        const network_cfg_t *net = &G->network;
        T->group = (int)(G - s->groups);
        T->cap = 4096;
        if (!(T->vs = malloc((size_t)T->cap * sizeof *T->vs)) ||
            !(T->kv = llm_kv_create(S->m, T->cap, err)))
            return T->vs ? -1 : err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
        if (network_link_init(&T->down, net->rtt, net->downlink_bps, &net->jitter, s->seed, rep,
                              (uint64_t)i, RNG_DOWNLINK, err) ||
            repl_link_vary(&sh->groups[T->group], s->seed, rep, i, 1, &T->down, err))
            return -1;
    }
    return 0;
}

static int build(lms_t *S, const repl_shared_t *sh, int rep, err_t *err)
{
    const scenario_t *s = S->s;
    S->max_batch = s->cloud.batching.max_batch;
    S->max_tokens = s->cloud.batching.max_tokens;
    S->sync = !strcmp(scenario_group_protocol(s, 0)->proto->name, "sync");
    S->kv_cap = sh->cgroups[0].kv_capacity;
    S->kv_bpt = sh->cgroups[0].kv_bytes_per_token;
    S->tl->kv_known = isfinite(S->kv_cap) && S->kv_cap > 0;
    S->tl->kv_replicas = S->tl->kv_known;
    S->qhead = S->qtail = S->jfree = S->dfree = -1;
    if (model_init(S, err) || tenants_init(S, sh, rep, err)) return -1;
    if (!(S->eng = engine_create(1024, err))) return -1;
    if (engine_on(S->eng, LM_EV_DOWN, on_down, S) || engine_on(S->eng, LM_EV_DONE, on_done, S) ||
        engine_on(S->eng, LM_EV_KICK, on_kick, S))
        return err_set(err, ERR_RUNTIME, "testbed: verifier: event types");
    return 0;
}

static void teardown(lms_t *S)
{
    worker_stop(&S->w);
    for (int i = 0; S->t && i < S->n; i++) {
        if (S->t[i].conn) {
            conn_close(S->t[i].conn);
            free(S->t[i].conn);
        }
        network_link_fini(&S->t[i].down);
        llm_kv_free(S->t[i].kv);
        free(S->t[i].vs);
    }
    free(S->t);
    free(S->adm);
    free(S->jobs);
    free(S->dn);
    free(S->done);
    free(S->it.job);
    free(S->it.sp);
    free(S->it.rows);
    free(S->it.out);
    free(S->it.acc);
    free(S->it.logits);
    llm_run_free(S->run);
    llm_free(S->m);
    tok_free(S->tok);
    gguf_close(S->g);
    engine_free(S->eng);
    if (S->lfd >= 0) close(S->lfd);
    rt_fini(&S->rt);
}

/* After the end: the work in progress and the queue's open sojourns, then
 * every tenant's BYE. */
static int finish(lms_t *S, double end, err_t *err)
{
    tally_t *tl = S->tl;
    area_to(S, end);
    kv_to(S, end);
    if (S->busy) {
        double busy = tally_clip(tl, S->iter_start, end);
        tl->busy += busy;
        if (tl->nccfg > 0) tl->rbusy[0] += busy;
        tl->raw.busy_s += end - S->iter_start;
    }
    for (int j = S->qhead; j >= 0; j = S->jobs[j].next) {
        if (S->jobs[j].started) continue;
        tl->raw.queue_waiting_end++;
        tl->raw.queue_open_sojourn += end - S->jobs[j].arrive;
    }
    tl->raw.end = end;
    for (int i = 0; i < S->n; i++) {
        uint32_t ids[WIRE_IDS_MAX];
        wire_msg_t m = {.ids = ids};
        while (!S->t[i].bye) {
            if (conn_recv(S->t[i].conn, &m, err)) return -1;
            S->t[i].bye = m.kind == WIRE_BYE;
            m.ids = ids;
        }
    }
    return 0;
}

static int send_tally(const lms_t *S, int fd, err_t *err)
{
    uint64_t head[2] = {tallyio_len(S->tl), engine_events(S->eng)};
    double late[3] = {S->rt.late_sum, S->rt.late_max, S->rt.steps};
    double *v = malloc(head[0] * sizeof *v);
    if (!v) return err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    tallyio_pack(S->tl, v);
    int rc = xio_write(fd, head, sizeof head, err) || xio_write(fd, late, sizeof late, err) ||
             xio_write(fd, v, head[0] * sizeof *v, err);
    free(v);
    return rc ? -1 : 0;
}

static void report(const lms_t *S, int rep)
{
    long done = 0;
    for (int i = 0; i < S->n; i++) done += S->t[i].finished;
    fprintf(stderr, "testbed: replication %d, real verifier (%s, %d thread%s): %.0f iterations, "
            "%.3f ms each on average; %ld requests finished\n", rep, llm_name(S->m),
            S->o->threads, S->o->threads == 1 ? "" : "s", S->real_n,
            S->real_n > 0 ? 1e3 * S->real_s / S->real_n : 0.0, done);
    static const char *const kinds[3] = {"verify, one block", "verify, several blocks",
                                         "with a prefill chunk"};
    for (int k = 0; k < 3; k++)
        if (S->kind_n[k] > 0)
            fprintf(stderr, "testbed: replication %d, real verifier: %s: %.0f iterations of "
                    "%.2f jobs, %.3f ms each on average\n", rep, kinds[k], S->kind_n[k],
                    S->kind_jobs[k] / S->kind_n[k], 1e3 * S->kind_s[k] / S->kind_n[k]);
    /* With nothing finished there is nothing to call lossless. */
    if (S->o->check && S->check_n == 0)
        fprintf(stderr, "testbed: lossless: not checked (no request finished in the run)\n");
    else if (S->o->check)
        fprintf(stderr, "testbed: lossless: %s (%ld of %ld finished requests equal the "
                "target's own greedy text)\n", S->check_bad ? "NO" : "yes",
                S->check_n - S->check_bad, S->check_n);
}

int lmserver_run(const scenario_t *s, const repl_shared_t *sh, int rep,
                 const lmserver_opts_t *opt, int ctl_fd, const volatile sig_atomic_t *stop,
                 err_t *err)
{
    lms_t S;
    memset(&S, 0, sizeof S);
    S.s = s;
    S.o = opt;
    S.err = err;
    S.n = s->ntenants;
    S.lfd = -1;
    S.rt.ep = S.rt.tfd = -1;
    S.tl = sim_tally_create(s);
    int rc = S.tl ? 0 : err_set(err, ERR_RUNTIME, "testbed: verifier: out of memory");
    if (rc == 0) rc = build(&S, sh, rep, err);
    if (rc == 0) rc = server_listen(&S.lfd, ctl_fd, err);
    if (rc == 0) rc = accept_all(&S, rep, err);
    if (rc == 0) rc = rt_init(&S.rt, S.start, stop, err);
    for (int i = 0; rc == 0 && i < S.n; i++) rc = rt_watch(&S.rt, S.t[i].conn->fd, (uint32_t)i, err);
    if (rc == 0) rc = rt_watch(&S.rt, worker_fd(&S.w), LM_WORKER_TAG, err);
    if (rc == 0) rc = rt_run(&S.rt, S.eng, s->duration, on_input, &S, err);
    if (rc == 0) rc = finish(&S, s->duration, err);
    /* The iteration still computing at the end finishes before the model
     * is used again here. */
    worker_stop(&S.w);
    if (rc == 0 && opt->check) rc = check_all(&S, err);
    if (rc == 0 && !opt->quiet) report(&S, rep);
    if (rc == 0 && S.check_bad)
        rc = err_set(err, ERR_RUNTIME, "testbed: verifier: %ld requests differ from the "
                     "target's own greedy text", S.check_bad);
    if (rc == 0) rc = send_tally(&S, ctl_fd, err);
    teardown(&S);
    tally_free(S.tl);
    return rc;
}
