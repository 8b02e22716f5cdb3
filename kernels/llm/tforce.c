/* tforce — acceptance by teacher forcing (see tforce.h). */
#include "tforce.h"

#include <stdlib.h>
#include <string.h>

#include "accrank.h"
#include "engine/rng.h"
#include "spec.h"

/* rng_stream purposes of this module (apart from the simulator's). */
enum { TF_RNG_TEXT = 2001, TF_RNG_OUTCOME = 2002 };

void tforce_text_free(tforce_text_t *t)
{
    free(t->tok);
    free(t->ptok);
    t->tok = NULL;
    t->ptok = NULL;
    t->n = 0;
}

typedef struct gen {
    const llm_model_t *m;
    llm_run_t *r;
    int vocab, n, eos;
    float temp;
    llm_kv_t **kv;
    gsl_rng **rng;
    llm_span_t *sp;
    int *live;
    float *lg, *p;
} gen_t;

/* The next token of text t from its row of logits. */
static void take(gen_t *G, tforce_text_t *t, gsl_rng *rng, const float *row)
{
    if (G->temp <= 0.0f) {
        t->tok[t->n++] = spec_argmax(row, G->vocab);
        return;
    }
    spec_softmax(row, G->vocab, G->temp, G->p);
    int32_t x = spec_draw(G->p, G->vocab, gsl_rng_uniform(rng));
    t->ptok[t->n] = G->p[x];
    t->tok[t->n++] = x;
}

/* Texts [0, nb) of this group to the end: prefill, then one token per
 * live text per pass. */
static int gen_group(gen_t *G, tforce_text_t *tx, int nb, err_t *err)
{
    int live = 0;
    for (int i = 0; i < nb; i++)
        G->sp[i] = (llm_span_t){G->kv[i], tx[i].prompt, tx[i].plen, tx[i].plen - 1};
    if (llm_forward(G->r, G->m, G->sp, nb, G->lg, err) != 0) return -1;
    for (int i = 0; i < nb; i++) {
        take(G, &tx[i], G->rng[i], G->lg + (size_t)i * G->vocab);
        if (tx[i].n < G->n && tx[i].tok[0] != G->eos) G->live[live++] = i;
    }
    while (live > 0) {
        for (int s = 0; s < live; s++) {
            tforce_text_t *t = &tx[G->live[s]];
            G->sp[s] = (llm_span_t){G->kv[G->live[s]], &t->tok[t->n - 1], 1, 0};
        }
        if (llm_forward(G->r, G->m, G->sp, live, G->lg, err) != 0) return -1;
        int still = 0;
        for (int s = 0; s < live; s++) {
            tforce_text_t *t = &tx[G->live[s]];
            take(G, t, G->rng[G->live[s]], G->lg + (size_t)s * G->vocab);
            if (t->n < G->n && t->tok[t->n - 1] != G->eos) G->live[still++] = G->live[s];
        }
        live = still;
    }
    return 0;
}

static void gen_free(gen_t *G, int batch)
{
    for (int i = 0; i < batch; i++) {
        if (G->kv) llm_kv_free(G->kv[i]);
        if (G->rng && G->rng[i]) gsl_rng_free(G->rng[i]);
    }
    free(G->kv);
    free(G->rng);
    free(G->sp);
    free(G->live);
    free(G->lg);
    free(G->p);
}

static int texts_alloc(tforce_text_t *t, int np, int n, float temp)
{
    for (int i = 0; i < np; i++) {
        t[i].n = 0;
        t[i].tok = malloc((size_t)n * sizeof *t[i].tok);
        t[i].ptok = temp > 0.0f ? malloc((size_t)n * sizeof *t[i].ptok) : NULL;
        if (!t[i].tok || (temp > 0.0f && !t[i].ptok)) return -1;
    }
    return 0;
}

int tforce_generate(const llm_model_t *target, llm_run_t *r, tforce_text_t *texts, int np,
                    int n, float temp, uint64_t seed, int eos, int batch, err_t *err)
{
    if (np < 1 || n < 1 || batch < 1)
        return err_set(err, ERR_INPUT, "tforce: %d prompts, %d tokens, batch %d", np, n, batch);
    int vocab = llm_config(target)->vocab, maxp = 0, rc = 0;
    for (int i = 0; i < np; i++) maxp = texts[i].plen > maxp ? texts[i].plen : maxp;
    gen_t G = {target, r, vocab, n, eos, temp, calloc((size_t)batch, sizeof(llm_kv_t *)),
               calloc((size_t)batch, sizeof(gsl_rng *)), calloc((size_t)batch, sizeof(llm_span_t)),
               calloc((size_t)batch, sizeof(int)), malloc((size_t)batch * vocab * sizeof(float)),
               malloc((size_t)vocab * sizeof(float))};
    if (!G.kv || !G.rng || !G.sp || !G.live || !G.lg || !G.p || texts_alloc(texts, np, n, temp))
        rc = err_set(err, ERR_RUNTIME, "tforce: out of memory");
    for (int i = 0; rc == 0 && i < batch; i++)
        if (!(G.kv[i] = llm_kv_create(target, maxp + n, err))) rc = -1;
    for (int g0 = 0; rc == 0 && g0 < np; g0 += batch) {
        int nb = np - g0 < batch ? np - g0 : batch;
        for (int i = 0; i < nb && rc == 0; i++) {
            llm_kv_truncate(G.kv[i], 0);
            if (G.rng[i]) gsl_rng_free(G.rng[i]);
            if (!(G.rng[i] = rng_stream(seed, 0, (uint64_t)(g0 + i), TF_RNG_TEXT)))
                rc = err_set(err, ERR_RUNTIME, "tforce: out of memory");
        }
        if (rc == 0) rc = gen_group(&G, texts + g0, nb, err);
    }
    gen_free(&G, batch);
    if (rc != 0)
        for (int i = 0; i < np; i++) tforce_text_free(&texts[i]);
    return rc;
}

/* The draft's logits after each of t's positions 0 .. n−2 (the rows that
 * predict tokens 1 .. n−1), into *lg (malloc'd, the caller's to free): the
 * prompt and the text read in one pass. 0, or -1 with err. */
static int draft_rows(const llm_model_t *draft, llm_run_t *r, const tforce_text_t *t,
                      float **lg, err_t *err)
{
    int vocab = llm_config(draft)->vocab, len = t->plen + t->n - 1, rows = t->n - 1, rc = 0;
    int32_t *seq = malloc((size_t)len * sizeof *seq);
    *lg = malloc((size_t)rows * vocab * sizeof **lg);
    llm_kv_t *kv = llm_kv_create(draft, len, err);
    if (!kv) rc = -1;
    else if (!seq || !*lg) rc = err_set(err, ERR_RUNTIME, "tforce: out of memory");
    if (rc == 0) {
        memcpy(seq, t->prompt, (size_t)t->plen * sizeof *seq);
        memcpy(seq + t->plen, t->tok, (size_t)(t->n - 1) * sizeof *seq);
        llm_span_t sp = {kv, seq, len, t->plen};
        rc = llm_forward(r, draft, &sp, 1, *lg, err);
    }
    llm_kv_free(kv);
    free(seq);
    if (rc != 0) {
        free(*lg);
        *lg = NULL;
    }
    return rc;
}

int tforce_outcomes(const llm_model_t *draft, llm_run_t *r, const tforce_text_t *t,
                    int text_id, float temp, uint64_t seed, uint8_t *out, err_t *err)
{
    if (t->n < 2) return 0;
    int vocab = llm_config(draft)->vocab;
    float *lg = NULL, *q = malloc((size_t)vocab * sizeof *q);
    gsl_rng *g = temp > 0.0f ? rng_stream(seed, 1, (uint64_t)text_id, TF_RNG_OUTCOME) : NULL;
    int rc = !q || (temp > 0.0f && !g) ? err_set(err, ERR_RUNTIME, "tforce: out of memory")
                                       : draft_rows(draft, r, t, &lg, err);
    for (int j = 1; rc == 0 && j < t->n; j++) {
        const float *row = lg + (size_t)(j - 1) * vocab;
        if (temp <= 0.0f) {
            out[j - 1] = spec_argmax(row, vocab) == t->tok[j];
            continue;
        }
        spec_softmax(row, vocab, temp, q);
        /* Kept with probability min(p, q)/p = min(1, q/p). */
        out[j - 1] = gsl_rng_uniform(g) * t->ptok[j] < q[t->tok[j]];
    }
    free(lg);
    free(q);
    if (g) gsl_rng_free(g);
    return rc;
}

int tforce_ranks(const llm_model_t *draft, llm_run_t *r, const tforce_text_t *t, int cap,
                 uint8_t *out, err_t *err)
{
    if (t->n < 2) return 0;
    if (cap < 1 || cap > 255)
        return err_set(err, ERR_INPUT, "tforce: rank cap %d outside 1 .. 255", cap);
    int vocab = llm_config(draft)->vocab;
    float *lg = NULL;
    if (draft_rows(draft, r, t, &lg, err) != 0) return -1;
    for (int j = 1; j < t->n; j++)
        out[j - 1] = (uint8_t)accrank_rank(lg + (size_t)(j - 1) * vocab, vocab, t->tok[j], cap);
    free(lg);
    return 0;
}
