#include "realverify.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attn.h"
#include "gemv.h"
#include "w4a16.h"

struct realverify {
    gemv_ctx_t *ctx;
    llm_card_t c;
    int d, hd, kvd, f, nqkv, ngu, maxm, maxj, maxctx;
    uint16_t **wqkv, **wo, **wgu, **wdown;   /* [layers] */
    uint16_t *whead;
    uint16_t *kv;        /* [maxj][layers][2][maxctx][kvd] */
    float *h, *tmp;      /* [maxm][d], [maxm][wide] */
    uint16_t *xh, *yh, *qh, *ah, *mh;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Random fp16 values in [-amp, amp] (a fixed LCG: weights need no
 * quality, only to be there). */
static uint16_t *rand_h(size_t n, float amp, uint64_t *s)
{
    uint16_t *p = malloc(n * sizeof *p);
    if (!p) return NULL;
    for (size_t i = 0; i < n; i++) {
        *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
        p[i] = f32_to_fp16(amp * ((float)(*s >> 40) / 8388608.0f - 1.0f));
    }
    return p;
}

static uint16_t **layers_of(int layers, size_t n, float amp, uint64_t *s)
{
    uint16_t **w = calloc((size_t)layers, sizeof *w);
    for (int L = 0; w && L < layers; L++)
        if (!(w[L] = rand_h(n, amp, s))) return w;   /* freed by the caller */
    return w;
}

static int all_set(uint16_t **w, int n)
{
    if (!w) return 0;
    for (int i = 0; i < n; i++)
        if (!w[i]) return 0;
    return 1;
}

static void free_layers(uint16_t **w, int n)
{
    for (int i = 0; w && i < n; i++) free(w[i]);
    free(w);
}

void realverify_free(realverify_t *v)
{
    if (!v) return;
    int n = v->c.layers;
    free_layers(v->wqkv, n);
    free_layers(v->wo, n);
    free_layers(v->wgu, n);
    free_layers(v->wdown, n);
    free(v->whead);
    free(v->kv);
    free(v->h);
    free(v->tmp);
    free(v->xh);
    free(v->yh);
    free(v->qh);
    free(v->ah);
    free(v->mh);
    gemv_ctx_free(v->ctx);
    free(v);
}

realverify_t *realverify_create(const llm_card_t *card, int max_tokens, int max_jobs,
                                int max_context, int threads, err_t *err)
{
    realverify_t *v = calloc(1, sizeof *v);
    if (!v) {
        err_set(err, ERR_RUNTIME, "testbed: real verification: out of memory");
        return NULL;
    }
    v->c = *card;
    v->d = card->hidden;
    v->hd = card->hidden / card->heads;
    v->kvd = card->kv_heads * v->hd;
    v->f = card->ffn;
    v->nqkv = v->d + 2 * v->kvd;
    v->ngu = card->gated_mlp ? 2 * v->f : v->f;
    v->maxm = max_tokens;
    v->maxj = max_jobs;
    v->maxctx = max_context;
    v->ctx = gemv_ctx_create(threads, GEMV_ISA_AUTO, err);
    if (!v->ctx) {
        realverify_free(v);
        return NULL;
    }
    uint64_t s = 12345;
    int n = card->layers;
    v->wqkv = layers_of(n, (size_t)v->nqkv * v->d, 0.02f, &s);
    v->wo = layers_of(n, (size_t)v->d * v->d, 0.02f, &s);
    v->wgu = layers_of(n, (size_t)v->ngu * v->d, 0.02f, &s);
    v->wdown = layers_of(n, (size_t)v->d * v->f, 0.02f, &s);
    v->whead = rand_h((size_t)card->vocab * v->d, 0.02f, &s);
    v->kv = rand_h((size_t)max_jobs * n * 2 * (size_t)max_context * v->kvd, 1.0f, &s);
    size_t wide = (size_t)card->vocab;
    if ((size_t)v->nqkv > wide) wide = (size_t)v->nqkv;
    if ((size_t)v->ngu > wide) wide = (size_t)v->ngu;
    size_t m = (size_t)max_tokens;
    v->h = calloc(m * v->d, sizeof *v->h);
    v->tmp = calloc(m * wide, sizeof *v->tmp);
    v->xh = calloc(m * v->d, sizeof *v->xh);
    v->yh = calloc(m * wide, sizeof *v->yh);
    v->qh = calloc(m * v->d, sizeof *v->qh);
    v->ah = calloc(m * v->d, sizeof *v->ah);
    v->mh = calloc(m * v->f, sizeof *v->mh);
    if (!all_set(v->wqkv, n) || !all_set(v->wo, n) || !all_set(v->wgu, n) ||
        !all_set(v->wdown, n) || !v->whead || !v->kv || !v->h || !v->tmp || !v->xh ||
        !v->yh || !v->qh || !v->ah || !v->mh) {
        realverify_free(v);
        err_set(err, ERR_RUNTIME, "testbed: real verification: out of memory for "
                "model '%s'", card->name);
        return NULL;
    }
    return v;
}

/* RMSNorm of m rows of h into fp16. */
static void norm_rows(realverify_t *v, int m)
{
    int d = v->d;
    for (int r = 0; r < m; r++) {
        const float *h = v->h + (size_t)r * d;
        double ss = 0;
        for (int i = 0; i < d; i++) ss += (double)h[i] * h[i];
        float inv = (float)(1.0 / sqrt(ss / d + 1e-6));
        for (int i = 0; i < d; i++) v->xh[(size_t)r * d + i] = f32_to_fp16(h[i] * inv);
    }
}

/* h += y (m rows of d, fp16). */
static void residual(realverify_t *v, int m)
{
    size_t n = (size_t)m * v->d;
    gemv_h2f(v->ctx, v->yh, v->tmp, n);
    for (size_t i = 0; i < n; i++) v->h[i] += v->tmp[i];
}

/* Each job's new K, V appended to its cache in layer L, its queries'
 * attention over it into ah. */
static int attention(realverify_t *v, int L, const service_job_t *jobs, int njobs)
{
    const llm_card_t *c = &v->c;
    int r0 = 0;
    for (int j = 0; j < njobs; j++) {
        int q = jobs[j].tokens, ctx = jobs[j].context;
        if (ctx > v->maxctx - q) ctx = v->maxctx - q;
        if (ctx < 0) ctx = 0;
        size_t e = (size_t)v->maxctx * v->kvd;
        uint16_t *kc = v->kv + ((size_t)j * c->layers + L) * 2 * e, *vc = kc + e;
        for (int i = 0; i < q; i++) {
            const uint16_t *row = v->yh + (size_t)(r0 + i) * v->nqkv;
            memcpy(v->qh + (size_t)i * v->d, row, (size_t)v->d * sizeof *row);
            memcpy(kc + (size_t)(ctx + i) * v->kvd, row + v->d, (size_t)v->kvd * sizeof *row);
            memcpy(vc + (size_t)(ctx + i) * v->kvd, row + v->d + v->kvd,
                   (size_t)v->kvd * sizeof *row);
        }
        if (attn_run(v->ctx, v->qh, kc, vc, q, ctx, c->heads, c->kv_heads, v->hd,
                     v->ah + (size_t)r0 * v->d) != 0)
            return -1;
        r0 += q;
    }
    return 0;
}

static int mlp(realverify_t *v, int L, int m)
{
    int f = v->f;
    if (gemv_f16(v->ctx, v->wgu[L], v->ngu, v->d, v->xh, m, v->yh) != 0) return -1;
    gemv_h2f(v->ctx, v->yh, v->tmp, (size_t)m * v->ngu);
    for (int r = 0; r < m; r++) {
        const float *g = v->tmp + (size_t)r * v->ngu;
        for (int i = 0; i < f; i++) {
            float act = g[i] / (1.0f + expf(-g[i]));
            v->mh[(size_t)r * f + i] = f32_to_fp16(v->c.gated_mlp ? act * g[f + i] : act);
        }
    }
    return gemv_f16(v->ctx, v->wdown[L], v->d, f, v->mh, m, v->yh);
}

static int forward(realverify_t *v, const service_job_t *jobs, int njobs, int m)
{
    for (int L = 0; L < v->c.layers; L++) {
        norm_rows(v, m);
        if (gemv_f16(v->ctx, v->wqkv[L], v->nqkv, v->d, v->xh, m, v->yh) != 0 ||
            attention(v, L, jobs, njobs) != 0 ||
            gemv_f16(v->ctx, v->wo[L], v->d, v->d, v->ah, m, v->yh) != 0)
            return -1;
        residual(v, m);
        norm_rows(v, m);
        if (mlp(v, L, m) != 0) return -1;
        residual(v, m);
    }
    norm_rows(v, m);
    if (gemv_f16(v->ctx, v->whead, v->c.vocab, v->d, v->xh, m, v->yh) != 0) return -1;
    for (int r = 0; r < m; r++) {
        const uint16_t *lg = v->yh + (size_t)r * v->c.vocab;
        int best = 0;
        for (int i = 1; i < v->c.vocab; i++)
            if (fp16_to_f32(lg[i]) > fp16_to_f32(lg[best])) best = i;
        /* Bounded residual stream for the next iteration, as calibrate's. */
        for (int i = 0; i < v->d; i++)
            v->h[(size_t)r * v->d + i] = (float)((i * 7 + best) % 13) / 13.0f - 0.5f;
    }
    return 0;
}

double realverify_run(realverify_t *v, const service_job_t *jobs, int njobs, err_t *err)
{
    int m = 0;
    for (int j = 0; j < njobs; j++) m += jobs[j].tokens;
    if (m > v->maxm || njobs > v->maxj)
        return err_set(err, ERR_RUNTIME, "testbed: real verification: an iteration of "
                       "%d tokens in %d jobs exceeds %d tokens / %d jobs", m, njobs,
                       v->maxm, v->maxj);
    double t0 = now_s();
    if (forward(v, jobs, njobs, m) != 0)
        return err_set(err, ERR_RUNTIME, "testbed: real verification: out of memory");
    return now_s() - t0;
}
