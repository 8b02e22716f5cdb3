/* specloop — in-process speculative decoding (see specloop.h). */
#include "specloop.h"

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "engine/rng.h"
#include "spec.h"

/* Keys of this module's random streams (rng_stream's purpose argument;
 * apart from the simulator's RNG_* purposes). */
enum { SL_RNG_EDGE = 1001, SL_RNG_VERIFY = 1002, SL_RNG_BATCH = 1003 };

typedef struct block {
    int gamma;
    int start;            /* index of its first draft in the edge sequence */
    float *q;             /* [gamma][vocab] draft probabilities (sampling) */
} block_t;

typedef struct tenant {
    int plen, goal;       /* prompt length; output tokens wanted */
    int done;
    /* the edge: committed text then its drafts */
    llm_kv_t *dkv;
    int32_t *es;
    int elen, ecommit;
    block_t *blk;         /* [window] waiting blocks, oldest first */
    int nblk;
    gsl_rng *erng;
    /* the verifier: the committed text */
    llm_kv_t *tkv;
    int32_t *vs;
    int vlen;
    gsl_rng *vrng;
    specloop_out_t *out;
    int acap;
} tenant_t;

typedef struct loop {
    const specloop_cfg_t *cfg;
    const llm_model_t *target, *draft;
    llm_run_t *rt, *rd;
    int vocab, nt;
    tenant_t *t;
    llm_span_t *spans;
    int *pick;            /* tenants of the current pass */
    float *logits, *p, *resid;
    gsl_rng *brng;
} loop_t;

static int oom(err_t *err)
{
    return err_set(err, ERR_RUNTIME, "specloop: out of memory");
}

/* A token for a row of logits: the argmax, or a draw from softmax(row/T)
 * (its probabilities left in p when p is not NULL). */
static int32_t choose(const loop_t *L, const float *row, gsl_rng *r, float *p)
{
    if (L->cfg->temp <= 0.0f) return spec_argmax(row, L->vocab);
    spec_softmax(row, L->vocab, L->cfg->temp, p);
    return spec_draw(p, L->vocab, gsl_rng_uniform(r));
}

static int cfg_check(const specloop_cfg_t *c, const llm_model_t *t, const llm_model_t *d,
                     int nt, err_t *err)
{
    if (c->mode != SPECLOOP_SYNC && c->mode != SPECLOOP_ASYNC)
        return err_set(err, ERR_INPUT, "specloop: unknown mode %d", c->mode);
    if (c->gamma < 1 || c->gamma > 64 || c->window < 1 || c->window > 64 || c->max_batch < 0 ||
        c->out_tokens < 1 || nt < 1 || !(c->temp >= 0.0f))
        return err_set(err, ERR_INPUT, "specloop: gamma %d, window %d, max_batch %d, %d "
                       "output tokens, %d tenants, temperature %g", c->gamma, c->window,
                       c->max_batch, c->out_tokens, nt, c->temp);
    if (llm_config(t)->vocab != llm_config(d)->vocab)
        return err_set(err, ERR_INPUT, "specloop: the target's vocabulary (%d) is not the "
                       "draft's (%d)", llm_config(t)->vocab, llm_config(d)->vocab);
    return 0;
}

static void tenant_fini(tenant_t *t, int window)
{
    llm_kv_free(t->dkv);
    llm_kv_free(t->tkv);
    free(t->es);
    free(t->vs);
    for (int b = 0; t->blk && b < window; b++) free(t->blk[b].q);
    free(t->blk);
    if (t->erng) gsl_rng_free(t->erng);
    if (t->vrng) gsl_rng_free(t->vrng);
}

static int tenant_init(loop_t *L, int i, const int32_t *prompt, int plen, specloop_out_t *out,
                       err_t *err)
{
    const specloop_cfg_t *c = L->cfg;
    tenant_t *t = &L->t[i];
    if (plen < 1) return err_set(err, ERR_INPUT, "specloop: tenant %d has an empty prompt", i);
    int cap = plen + c->out_tokens + c->window * c->gamma + 2;
    t->plen = plen;
    t->goal = c->out_tokens;
    t->out = out;
    t->es = malloc((size_t)cap * sizeof *t->es);
    t->vs = malloc((size_t)cap * sizeof *t->vs);
    t->blk = calloc((size_t)c->window, sizeof *t->blk);
    out->tokens = malloc((size_t)c->out_tokens * sizeof *out->tokens);
    t->erng = rng_stream(c->seed, 0, (uint64_t)i, SL_RNG_EDGE);
    t->vrng = rng_stream(c->seed, 0, (uint64_t)i, SL_RNG_VERIFY);
    if (!t->es || !t->vs || !t->blk || !out->tokens || !t->erng || !t->vrng) return oom(err);
    for (int b = 0; c->temp > 0.0f && b < c->window; b++)
        if (!(t->blk[b].q = malloc((size_t)c->gamma * L->vocab * sizeof(float)))) return oom(err);
    if (!(t->dkv = llm_kv_create(L->draft, cap, err)) ||
        !(t->tkv = llm_kv_create(L->target, cap, err)))
        return -1;
    memcpy(t->vs, prompt, (size_t)plen * sizeof *prompt);
    t->vlen = plen;
    return 0;
}

/* The committed tokens so far (the first token included). */
static int committed(const tenant_t *t) { return t->vlen - t->plen; }

static void commit(tenant_t *t, const int32_t *tok, int n)
{
    memcpy(t->vs + t->vlen, tok, (size_t)n * sizeof *tok);
    memcpy(t->out->tokens + committed(t), tok, (size_t)n * sizeof *tok);
    t->vlen += n;
    t->out->n = committed(t);
    if (committed(t) >= t->goal) t->done = 1;
}

/* Every tenant's prompt through the target in one pass: its first token. */
static int prefill(loop_t *L, err_t *err)
{
    for (int i = 0; i < L->nt; i++)
        L->spans[i] = (llm_span_t){L->t[i].tkv, L->t[i].vs, L->t[i].vlen, L->t[i].vlen - 1};
    if (llm_forward(L->rt, L->target, L->spans, L->nt, L->logits, err) != 0) return -1;
    for (int i = 0; i < L->nt; i++) {
        tenant_t *t = &L->t[i];
        int32_t first = choose(L, L->logits + (size_t)i * L->vocab, t->vrng, L->p);
        commit(t, &first, 1);
        memcpy(t->es, t->vs, (size_t)t->vlen * sizeof *t->es);
        t->elen = t->ecommit = t->vlen;
    }
    return 0;
}

static int may_draft(const loop_t *L, const tenant_t *t)
{
    if (t->done) return 0;
    if (L->cfg->mode == SPECLOOP_SYNC) return t->nblk == 0;
    int inflight = t->elen - t->ecommit;
    return t->nblk < L->cfg->window && (t->ecommit - t->plen) + inflight < t->goal;
}

/* One block of gamma drafts for every tenant that may draft, the steps
 * batched across them. */
static int draft_round(loop_t *L, err_t *err)
{
    int n = 0, g = L->cfg->gamma;
    for (int i = 0; i < L->nt; i++)
        if (may_draft(L, &L->t[i])) L->pick[n++] = i;
    for (int j = 0; j < g && n > 0; j++) {
        for (int s = 0; s < n; s++) {
            tenant_t *t = &L->t[L->pick[s]];
            int at = llm_kv_len(t->dkv);
            L->spans[s] = (llm_span_t){t->dkv, t->es + at, t->elen - at, t->elen - at - 1};
        }
        if (llm_forward(L->rd, L->draft, L->spans, n, L->logits, err) != 0) return -1;
        for (int s = 0; s < n; s++) {
            tenant_t *t = &L->t[L->pick[s]];
            block_t *b = &t->blk[t->nblk];
            float *q = b->q ? b->q + (size_t)j * L->vocab : NULL;
            t->es[t->elen++] = choose(L, L->logits + (size_t)s * L->vocab, t->erng, q);
            L->t[L->pick[s]].out->drafted++;
        }
    }
    for (int s = 0; s < n; s++) {
        tenant_t *t = &L->t[L->pick[s]];
        t->blk[t->nblk].gamma = g;
        t->blk[t->nblk].start = t->elen - g;
        t->nblk++;
    }
    return 0;
}

/* The tenants of one verification pass: those with a waiting block, all
 * or a random non-empty subset, at most max_batch. */
static int pick_batch(loop_t *L)
{
    int n = 0;
    for (int i = 0; i < L->nt; i++)
        if (!L->t[i].done && L->t[i].nblk > 0) L->pick[n++] = i;
    if (n > 1 && L->cfg->random_batches) {
        gsl_ran_shuffle(L->brng, L->pick, (size_t)n, sizeof *L->pick);
        n = 1 + (int)gsl_rng_uniform_int(L->brng, (unsigned long)n);
    }
    if (L->cfg->max_batch > 0 && n > L->cfg->max_batch) n = L->cfg->max_batch;
    return n;
}

/* The edge learns the verdict of its oldest block. */
static void edge_verdict(loop_t *L, tenant_t *t, int a, int32_t next, int ncommit)
{
    block_t b = t->blk[0];
    int full = a == b.gamma;
    memmove(t->blk, t->blk + 1, (size_t)(t->nblk - 1) * sizeof *t->blk);
    t->blk[t->nblk - 1] = b;   /* keep its q buffer for reuse */
    t->nblk--;
    if (full && L->cfg->mode == SPECLOOP_ASYNC) {
        t->ecommit += b.gamma;
        return;
    }
    /* A rejection (or a sync verdict): the drafts after the accepted ones
     * and every later block are gone; the correction or bonus follows. */
    if (!full) {
        t->nblk = 0;
        llm_kv_truncate(t->dkv, b.start + a);
    }
    t->elen = b.start + a;
    if (ncommit > a) t->es[t->elen++] = next;
    t->ecommit = t->elen;
}

static void verdict(loop_t *L, tenant_t *t, int a, int32_t next)
{
    const block_t *b = &t->blk[0];
    int full = a == b->gamma, ncommit = a + (full && L->cfg->mode == SPECLOOP_ASYNC ? 0 : 1);
    int left = t->goal - committed(t);
    int32_t tok[65];
    memcpy(tok, t->es + b->start, (size_t)a * sizeof *tok);
    tok[a] = next;
    if (ncommit > left) ncommit = left;
    /* The cache keeps the last committed token and the accepted drafts. */
    llm_kv_truncate(t->tkv, t->vlen + a);
    commit(t, tok, ncommit);
    specloop_out_t *o = t->out;
    if (o->nblocks == t->acap) {
        int ncap = t->acap ? 2 * t->acap : 64;
        int *na = realloc(o->accepted, (size_t)ncap * sizeof *na);
        if (na) {
            o->accepted = na;
            t->acap = ncap;
        }
    }
    if (o->nblocks < t->acap) o->accepted[o->nblocks++] = a;
    edge_verdict(L, t, a, next, ncommit);
    if (t->done) t->nblk = 0;
}

static int verify_round(loop_t *L, err_t *err)
{
    int n = pick_batch(L), g = L->cfg->gamma;
    for (int s = 0; s < n; s++) {
        tenant_t *t = &L->t[L->pick[s]];
        if (t->blk[0].start != t->vlen)   /* the two sides disagree: a bug */
            return err_set(err, ERR_RUNTIME, "specloop: tenant %d: block at %d, committed "
                           "text of %d", L->pick[s], t->blk[0].start, t->vlen);
        /* The span starts at the last committed token (async: after a block
         * accepted whole its last draft is cached; it is run again so that
         * its row checks this block's first draft). */
        llm_kv_truncate(t->tkv, t->vlen - 1);
        int at = llm_kv_len(t->tkv);
        memcpy(t->vs + t->vlen, t->es + t->blk[0].start, (size_t)g * sizeof *t->vs);
        int len = t->vlen - at + g;
        L->spans[s] = (llm_span_t){t->tkv, t->vs + at, len, len - g - 1};
    }
    if (n == 0) return 0;
    if (llm_forward(L->rt, L->target, L->spans, n, L->logits, err) != 0) return -1;
    for (int s = 0; s < n; s++) {
        tenant_t *t = &L->t[L->pick[s]];
        const float *lg = L->logits + (size_t)s * (g + 1) * L->vocab;
        int32_t next;
        int a;
        if (L->cfg->temp <= 0.0f) {
            a = spec_verify_greedy(lg, L->vocab, t->es + t->blk[0].start, g, &next);
        } else {
            for (int j = 0; j <= g; j++)
                spec_softmax(lg + (size_t)j * L->vocab, L->vocab, L->cfg->temp,
                             L->p + (size_t)j * L->vocab);
            a = spec_verify_sample(L->p, t->blk[0].q, L->vocab, t->es + t->blk[0].start, g,
                                   t->vrng, L->resid, &next);
        }
        verdict(L, t, a, next);
    }
    return 0;
}

static int loop_alloc(loop_t *L, err_t *err)
{
    size_t rows = (size_t)L->nt * (size_t)(L->cfg->gamma + 1);
    L->t = calloc((size_t)L->nt, sizeof *L->t);
    L->spans = calloc((size_t)L->nt, sizeof *L->spans);
    L->pick = calloc((size_t)L->nt, sizeof *L->pick);
    L->logits = malloc(rows * (size_t)L->vocab * sizeof *L->logits);
    L->p = malloc((size_t)(L->cfg->gamma + 1) * (size_t)L->vocab * sizeof *L->p);
    L->resid = malloc((size_t)L->vocab * sizeof *L->resid);
    L->brng = rng_stream(L->cfg->seed, 0, 0, SL_RNG_BATCH);
    return L->t && L->spans && L->pick && L->logits && L->p && L->resid && L->brng ? 0 : oom(err);
}

static void loop_free(loop_t *L)
{
    for (int i = 0; L->t && i < L->nt; i++) tenant_fini(&L->t[i], L->cfg->window);
    free(L->t);
    free(L->spans);
    free(L->pick);
    free(L->logits);
    free(L->p);
    free(L->resid);
    if (L->brng) gsl_rng_free(L->brng);
}

static int all_done(const loop_t *L)
{
    for (int i = 0; i < L->nt; i++)
        if (!L->t[i].done) return 0;
    return 1;
}

int specloop_run(const specloop_cfg_t *cfg, const llm_model_t *target, llm_run_t *rt,
                 const llm_model_t *draft, llm_run_t *rd, int ntenants,
                 const int32_t *const *prompts, const int *plens, specloop_out_t *out,
                 err_t *err)
{
    if (cfg_check(cfg, target, draft, ntenants, err) != 0) return -1;
    loop_t L = {cfg, target, draft, rt, rd, llm_config(target)->vocab, ntenants,
                NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    memset(out, 0, (size_t)ntenants * sizeof *out);
    int rc = loop_alloc(&L, err);
    for (int i = 0; rc == 0 && i < ntenants; i++)
        rc = tenant_init(&L, i, prompts[i], plens[i], &out[i], err);
    if (rc == 0) rc = prefill(&L, err);
    while (rc == 0 && !all_done(&L)) {
        rc = draft_round(&L, err);
        if (rc == 0) rc = verify_round(&L, err);
    }
    loop_free(&L);
    if (rc != 0)
        for (int i = 0; i < ntenants; i++) specloop_out_free(&out[i]);
    return rc;
}

void specloop_out_free(specloop_out_t *o)
{
    free(o->tokens);
    free(o->accepted);
    memset(o, 0, sizeof *o);
}

int specloop_generate(const llm_model_t *m, llm_run_t *run, const int32_t *prompt, int plen,
                      int n, float temp, gsl_rng *r, int32_t *out, err_t *err)
{
    int vocab = llm_config(m)->vocab;
    if (plen < 1 || n < 1) return err_set(err, ERR_INPUT, "specloop: %d prompt tokens, %d "
                                          "to generate", plen, n);
    llm_kv_t *kv = llm_kv_create(m, plen + n, err);
    float *lg = malloc((size_t)vocab * sizeof *lg), *p = malloc((size_t)vocab * sizeof *p);
    int rc = kv && lg && p ? 0 : (kv ? oom(err) : -1);
    llm_span_t sp = {kv, prompt, plen, plen - 1};
    for (int i = 0; rc == 0 && i < n; i++) {
        rc = llm_forward(run, m, &sp, 1, lg, err);
        if (rc != 0) break;
        if (temp <= 0.0f) out[i] = spec_argmax(lg, vocab);
        else {
            spec_softmax(lg, vocab, temp, p);
            out[i] = spec_draw(p, vocab, gsl_rng_uniform(r));
        }
        sp = (llm_span_t){kv, &out[i], 1, 0};
    }
    llm_kv_free(kv);
    free(lg);
    free(p);
    return rc;
}
