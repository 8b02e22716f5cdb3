/* lmedge — the edge fleet's real tokens (see lmedge.h). */
#include "lmedge.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "llm.h"
#include "lmdraft.h"
#include "prompts.h"
#include "tok.h"

/* Text room per tenant: the longest prompt, an output and blocks. */
#define LMEDGE_CAP 4096
/* Blocks a tenant may have drafted, on the wire or answered but not yet
 * taken (ring sizes; far above any window). */
#define LMEDGE_RING 64
/* The generation of a prefill job (the edge's generations start at 1). */
#define LMEDGE_PREFILL_GEN UINT64_MAX

typedef struct sent {
    int start, gamma;
    uint32_t epoch;
    int32_t ids[LMDRAFT_K_MAX];
} sent_t;

typedef struct arrived {
    int kind, accepted, n;
    uint32_t epoch;
    uint32_t ids[LMDRAFT_K_MAX + 1];
} arrived_t;

typedef struct ten {
    int32_t *es;
    int elen, ecommit, requests;
    /* the draft in progress */
    uint64_t gen;
    int k, ready;
    double start, model_s;
    int32_t tok[LMDRAFT_K_MAX];
    /* blocks drafted, not yet on the wire; on the wire; frames arrived */
    sent_t out[LMEDGE_RING], wire[LMEDGE_RING];
    int out_h, out_n, wire_h, wire_n;
    arrived_t down[LMEDGE_RING];
    int down_h, down_n;
} ten_t;

struct lmedge {
    gguf_t *g;
    tok_t *tok;
    llm_model_t *m;
    lmdraft_t *d;
    int n, np;
    int32_t **pids;         /* [np] prompt ids */
    int *plen;
    uint32_t *wire_ids;     /* room for a PROMPT's ids */
    ten_t *t;
    lmedge_stats_t st;
    double warmup;
    char name[300];
};

/* ---- set-up ------------------------------------------------------------------ */

static int load_prompts(lmedge_t *e, const char *path, err_t *err)
{
    prompts_t *ps = prompts_load(path, err);
    if (!ps) return -1;
    e->np = ps->n;
    e->pids = calloc((size_t)e->np, sizeof *e->pids);
    e->plen = calloc((size_t)e->np, sizeof *e->plen);
    int rc = e->pids && e->plen ? 0 : err_set(err, ERR_RUNTIME, "testbed: out of memory");
    for (int i = 0; rc == 0 && i < e->np; i++) {
        char *chat = prompts_chat(e->g, ps->p[i].text, err);
        size_t n = 0, cap = 0;
        rc = chat ? tok_encode(e->tok, chat, strlen(chat), 1, &e->pids[i], &n, &cap, err) : -1;
        free(chat);
        if (rc == 0 && (n < 1 || n > LMEDGE_CAP / 2 || n > WIRE_IDS_MAX))
            rc = err_set(err, ERR_INPUT, "%s:%d:1: prompt '%s' has %zu tokens (1 to %d)", path,
                         ps->p[i].line, ps->p[i].category, n, LMEDGE_CAP / 2);
        e->plen[i] = (int)n;
    }
    prompts_free(ps);
    return rc;
}

lmedge_t *lmedge_create(const lmedge_opts_t *o, int n, err_t *err)
{
    lmedge_t *e = calloc(1, sizeof *e);
    llm_opts_t lo;
    if (!e) {
        err_set(err, ERR_RUNTIME, "testbed: out of memory");
        return NULL;
    }
    e->n = n;
    e->warmup = o->warmup;
    int rc = llm_opts_parse(o->draft, &lo, err);
    if (rc == 0 && (!(e->g = gguf_open(o->model, err)) || !(e->tok = tok_create(e->g, err)) ||
                    load_prompts(e, o->prompts, err) || !(e->m = llm_load(e->g, &lo, err)) ||
                    llm_check_vocab(e->m, e->g, tok_vocab(e->tok), err)))
        rc = -1;
    e->t = rc == 0 ? calloc((size_t)n, sizeof *e->t) : NULL;
    e->wire_ids = malloc(WIRE_IDS_MAX * sizeof *e->wire_ids);
    if (rc == 0 && (!e->t || !e->wire_ids)) rc = err_set(err, ERR_RUNTIME, "testbed: out of memory");
    for (int i = 0; rc == 0 && i < n; i++)
        if (!(e->t[i].es = malloc(LMEDGE_CAP * sizeof *e->t[i].es)))
            rc = err_set(err, ERR_RUNTIME, "testbed: out of memory");
    if (rc == 0 && !(e->d = lmdraft_create(e->m, n, LMEDGE_CAP, o->threads, err))) rc = -1;
    if (rc != 0) {
        lmedge_free(e);
        return NULL;
    }
    snprintf(e->name, sizeof e->name, "%s draft of %s", llm_name(e->m), o->model);
    return e;
}

void lmedge_free(lmedge_t *e)
{
    if (!e) return;
    lmdraft_free(e->d);
    for (int i = 0; e->t && i < e->n; i++) free(e->t[i].es);
    for (int i = 0; e->pids && i < e->np; i++) free(e->pids[i]);
    free(e->pids);
    free(e->plen);
    free(e->t);
    free(e->wire_ids);
    llm_free(e->m);
    tok_free(e->tok);
    gguf_close(e->g);
    free(e);
}

int lmedge_fd(const lmedge_t *e) { return lmdraft_fd(e->d); }
const char *lmedge_name(const lmedge_t *e) { return e->name; }
void lmedge_stats(const lmedge_t *e, lmedge_stats_t *st) { *st = e->st; }

/* ---- the request --------------------------------------------------------------- */

int lmedge_prompt(lmedge_t *e, int i, wire_msg_t *m, err_t *err)
{
    ten_t *T = &e->t[i];
    int p = (int)(((long)i + (long)T->requests * e->n) % e->np);
    T->requests++;
    e->st.requests++;
    memcpy(T->es, e->pids[p], (size_t)e->plen[p] * sizeof *T->es);
    T->elen = T->ecommit = e->plen[p];
    T->ready = 0;
    T->gen = 0;
    /* Anything of the last request is over (its blocks left before this
     * prompt: the uplink keeps order). */
    T->out_n = T->wire_n = T->down_n = 0;
    for (int k = 0; k < e->plen[p]; k++) e->wire_ids[k] = (uint32_t)e->pids[p][k];
    m->ids = e->wire_ids;
    m->nids = e->plen[p];
    m->prompt = (uint32_t)e->plen[p];
    return lmdraft_submit(e->d, i, LMEDGE_PREFILL_GEN, T->es, T->elen, 0, err);
}

/* ---- drafting ----------------------------------------------------------------- */

int lmedge_draft_start(lmedge_t *e, int i, uint64_t gen, int k, double now, double model_s,
                       err_t *err)
{
    ten_t *T = &e->t[i];
    if (k < 1 || k > LMDRAFT_K_MAX || T->elen + k > LMEDGE_CAP)
        return err_set(err, ERR_RUNTIME, "testbed: edge: tenant %d: a draft of %d tokens "
                       "after %d", i, k, T->elen);
    T->gen = gen;
    T->k = k;
    T->ready = 0;
    T->start = now;
    T->model_s = model_s;
    return lmdraft_submit(e->d, i, gen, T->es, T->elen, k, err);
}

int lmedge_ready(lmedge_t *e, double now, int *tenant, uint64_t *gen, double *at, err_t *err)
{
    lmdraft_done_t d;
    int got;
    while ((got = lmdraft_take(e->d, &d, err)) > 0) {
        ten_t *T = &e->t[d.tenant];
        if (d.gen == LMEDGE_PREFILL_GEN || d.gen != T->gen || T->ready) continue;
        memcpy(T->tok, d.tok, (size_t)d.k * sizeof *d.tok);
        T->ready = 1;
        e->st.drafts++;
        e->st.drafts_measured += now >= e->warmup;
        e->st.tokens += d.k;
        e->st.real_s += d.secs;
        e->st.model_s += T->model_s;
        *tenant = d.tenant;
        *gen = d.gen;
        *at = T->start + T->model_s > now ? T->start + T->model_s : now;
        if (now > T->start + T->model_s) {
            /* Later than the scenario says: the simulator's draft time is
             * then short of the testbed's (the drafter is overloaded). */
            e->st.late++;
            e->st.late_s += now - (T->start + T->model_s);
            if (now >= e->warmup) {
                e->st.late_measured++;
                e->st.late_measured_s += now - (T->start + T->model_s);
            }
        }
        return 1;
    }
    return got;
}

void lmedge_draft_end(lmedge_t *e, int i, uint64_t gen)
{
    ten_t *T = &e->t[i];
    if (!T->ready || gen != T->gen || T->out_n == LMEDGE_RING) return;
    sent_t *s = &T->out[(T->out_h + T->out_n++) % LMEDGE_RING];
    s->start = T->elen;
    s->gamma = T->k;
    memcpy(s->ids, T->tok, (size_t)T->k * sizeof *T->tok);
    memcpy(T->es + T->elen, T->tok, (size_t)T->k * sizeof *T->tok);
    T->elen += T->k;
    T->ready = 0;
}

int lmedge_block(lmedge_t *e, int i, wire_msg_t *m, err_t *err)
{
    ten_t *T = &e->t[i];
    sent_t *s = &T->out[T->out_h];
    if (T->out_n == 0 || s->gamma != m->gamma || T->wire_n == LMEDGE_RING)
        return err_set(err, ERR_RUNTIME, "testbed: edge: tenant %d sends a block of %d "
                       "drafts it has not drafted", i, m->gamma);
    T->out_h = (T->out_h + 1) % LMEDGE_RING;
    T->out_n--;
    sent_t *w = &T->wire[(T->wire_h + T->wire_n++) % LMEDGE_RING];
    *w = *s;
    w->epoch = m->epoch;
    m->ids = (uint32_t *)w->ids;   /* int32 ids below the vocabulary: the same bits */
    return 0;
}

/* ---- what comes down --------------------------------------------------------- */

int lmedge_arrived(lmedge_t *e, int i, const wire_msg_t *m, err_t *err)
{
    ten_t *T = &e->t[i];
    if (T->down_n == LMEDGE_RING || m->nids > LMDRAFT_K_MAX + 1)
        return err_set(err, ERR_RUNTIME, "testbed: edge: tenant %d: too many frames or ids", i);
    arrived_t *a = &T->down[(T->down_h + T->down_n++) % LMEDGE_RING];
    a->kind = m->kind;
    a->accepted = m->accepted;
    a->n = m->nids;
    a->epoch = m->epoch;
    memcpy(a->ids, m->ids, (size_t)m->nids * sizeof *a->ids);
    return 0;
}

/* The verdict a of tenant T's oldest block of its epoch. */
static int verdict(lmedge_t *e, ten_t *T, const arrived_t *a, err_t *err)
{
    while (T->wire_n > 0 && T->wire[T->wire_h].epoch != a->epoch) {   /* stale */
        T->wire_h = (T->wire_h + 1) % LMEDGE_RING;
        T->wire_n--;
    }
    if (T->wire_n == 0)
        return err_set(err, ERR_RUNTIME, "testbed: edge: a verdict of epoch %u for no block",
                       a->epoch);
    sent_t *b = &T->wire[T->wire_h];
    T->wire_h = (T->wire_h + 1) % LMEDGE_RING;
    T->wire_n--;
    for (int k = 0; k < a->accepted && k < a->n; k++)
        if ((int32_t)a->ids[k] != b->ids[k]) {
            e->st.mismatches++;
            break;
        }
    if (a->accepted == b->gamma && a->n == b->gamma && b->start + b->gamma <= T->elen &&
        T->ecommit == b->start) {
        T->ecommit += b->gamma;   /* async, accepted whole: its drafts stay */
        return 0;
    }
    /* The committed ids from the block's start; every later draft goes. */
    T->elen = b->start;
    for (int k = 0; k < a->n && T->elen < LMEDGE_CAP; k++) T->es[T->elen++] = (int32_t)a->ids[k];
    T->ecommit = T->elen;
    if (a->accepted < b->gamma) T->wire_n = 0;
    return 0;
}

int lmedge_down(lmedge_t *e, int i, err_t *err)
{
    ten_t *T = &e->t[i];
    if (T->down_n == 0) return err_set(err, ERR_RUNTIME, "testbed: edge: no frame to take");
    arrived_t *a = &T->down[T->down_h];
    T->down_h = (T->down_h + 1) % LMEDGE_RING;
    T->down_n--;
    if (a->kind != WIRE_VERDICT) {
        if (a->n == 1 && T->elen < LMEDGE_CAP) T->es[T->elen++] = (int32_t)a->ids[0];
        T->ecommit = T->elen;
        return 0;
    }
    return verdict(e, T, a, err);
}
