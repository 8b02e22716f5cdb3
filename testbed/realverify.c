#include "realverify.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "gemv.h"
#include "w4a16.h"
#include "base/wallclock.h"

/* One linear layer's weights: fp16 rows, or W4A16 in the kernels' packed
 * layout (kernels/gemv.h). */
typedef struct lin {
    int n, k;
    uint16_t *h;          /* fp16 [n][k], or NULL */
    w4a16_packed_t q;     /* W4A16 when h is NULL */
} lin_t;

/* The sizes of everything realverify_create allocates, from the card and
 * the limits: realverify_create allocates by it and realverify_bytes adds
 * it up, so that the memory check (testbed/realmem.h) weighs what is
 * built. */
typedef struct plan {
    int w4, d, hd, kvd, f, nqkv, ngu;
    size_t m, wide;   /* work rows; the widest GEMM output (vocab, qkv, gate_up) */
    size_t kv;        /* fp16 elements of all KV caches */
    realverify_size_t bytes;
} plan_t;

struct realverify {
    gemv_ctx_t *ctx;
    llm_card_t c;
    int w4, d, hd, kvd, f, nqkv, ngu, maxm, maxj, maxctx;
    lin_t *wqkv, *wo, *wgu, *wdown;   /* [layers] */
    lin_t whead;
    uint16_t *kv;        /* [maxj][layers][2][maxctx][kvd] */
    float *h, *tmp;      /* [maxm][d], [maxm][wide] */
    uint16_t *xh, *yh, *qh, *ah, *mh;
};

/* Random fp16 values in [-amp, amp] (a fixed LCG: weights need no
 * quality, only to be there). */
static uint64_t lcg(uint64_t *s)
{
    return *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
}

static uint16_t *rand_h(size_t n, float amp, uint64_t *s)
{
    uint16_t *p = malloc(n * sizeof *p);
    if (!p) return NULL;
    for (size_t i = 0; i < n; i++)
        p[i] = f32_to_fp16(amp * ((float)(lcg(s) >> 40) / 8388608.0f - 1.0f));
    return p;
}

/* Random nibbles, small scales and zeros (as build/calibrate's). */
static int rand_w4(w4a16_packed_t *w, int n, int k, uint64_t *s)
{
    if (w4a16_packed_init(w, n, k, W4A16_GROUP_DEFAULT) != 0) return -1;
    size_t qb = (size_t)n * (size_t)k / 2, groups = (size_t)n * (size_t)(k / w->group);
    for (size_t i = 0; i < qb; i += 8) {
        uint64_t r = lcg(s);
        memcpy(w->q + i, &r, qb - i < 8 ? qb - i : 8);
    }
    for (size_t g = 0; g < groups; g++) {
        uint64_t r = lcg(s) >> 24;
        w->scales[g] = f32_to_fp16(0.002f + 0.002f * (float)(r & 0xFFFF) / 65536.0f);
        w->zeros[g] = (uint8_t)((r >> 16) & 15);
    }
    return 0;
}

/* a × b and a + b, SIZE_MAX when past a size_t (and from a SIZE_MAX
 * operand): a model too large to count is too large to build. */
static size_t mul_sat(size_t a, size_t b)
{
    if (a == SIZE_MAX || b == SIZE_MAX) return a && b ? SIZE_MAX : 0;
    return a && b > SIZE_MAX / a ? SIZE_MAX : a * b;
}

static size_t add_sat(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* Bytes of one n × k linear layer as lin_init allocates it: fp16 values,
 * or w4a16_packed_init's arrays (kernels/gemv.c: a nibble per weight, an
 * fp16 scale and a byte zero per group of W4A16_GROUP_DEFAULT). */
static size_t lin_bytes(int w4, int n, int k)
{
    size_t nk = mul_sat((size_t)n, (size_t)k);
    if (!w4) return mul_sat(nk, sizeof(uint16_t));
    size_t groups = mul_sat((size_t)n, (size_t)(k / W4A16_GROUP_DEFAULT));
    return add_sat(nk / 2, mul_sat(groups, sizeof(uint16_t) + sizeof(uint8_t)));
}

/* Fills p for realverify_create's arguments: 0, or -1 with err when it
 * refuses them. */
static int plan_of(plan_t *p, const llm_card_t *card, int quant, int max_tokens,
                   int max_jobs, int max_context, err_t *err)
{
    memset(p, 0, sizeof *p);
    if (quant != PREC_FP16 && quant != PREC_W4A16)
        return err_set(err, ERR_INPUT, "testbed: a real forward pass runs fp16 or w4a16 "
                       "weights");
    if (max_tokens < 1 || max_jobs < 1 || max_context < 1)
        return err_set(err, ERR_INPUT, "testbed: a real forward pass needs room for at "
                       "least one token, job and context position");
    p->w4 = quant == PREC_W4A16;
    p->d = card->hidden;
    p->hd = card->hidden / card->heads;
    p->kvd = card->kv_heads * p->hd;
    p->f = card->ffn;
    if (p->w4 && (p->d % W4A16_GROUP_DEFAULT || p->f % W4A16_GROUP_DEFAULT))
        return err_set(err, ERR_INPUT, "testbed: model '%s' at w4a16: hidden (%d) and ffn "
                       "(%d) must be multiples of %d, the quantisation group", card->name,
                       p->d, p->f, W4A16_GROUP_DEFAULT);
    p->nqkv = p->d + 2 * p->kvd;
    p->ngu = card->gated_mlp ? 2 * p->f : p->f;
    p->m = (size_t)max_tokens;
    p->wide = (size_t)card->vocab;
    if ((size_t)p->nqkv > p->wide) p->wide = (size_t)p->nqkv;
    if ((size_t)p->ngu > p->wide) p->wide = (size_t)p->ngu;
    size_t layer = lin_bytes(p->w4, p->nqkv, p->d);
    layer = add_sat(layer, lin_bytes(p->w4, p->d, p->d));
    layer = add_sat(layer, lin_bytes(p->w4, p->ngu, p->d));
    layer = add_sat(layer, lin_bytes(p->w4, p->d, p->f));
    p->bytes.weights = add_sat(mul_sat((size_t)card->layers, layer),
                               lin_bytes(p->w4, card->vocab, p->d));
    p->kv = mul_sat(mul_sat(mul_sat((size_t)max_jobs, (size_t)card->layers),
                            mul_sat(2, (size_t)max_context)), (size_t)p->kvd);
    p->bytes.kv = mul_sat(p->kv, sizeof(uint16_t));
    /* h and tmp are fp32, the rest fp16: d wide (h, xh, qh, ah), wide
     * (tmp, yh) and ffn (mh). */
    size_t row = (size_t)p->d * (sizeof(float) + 3 * sizeof(uint16_t)) +
                 p->wide * (sizeof(float) + sizeof(uint16_t)) + (size_t)p->f * sizeof(uint16_t);
    p->bytes.work = mul_sat(p->m, row);
    p->bytes.total = add_sat(add_sat(p->bytes.weights, p->bytes.kv), p->bytes.work);
    if (p->bytes.total == SIZE_MAX)
        return err_set(err, ERR_INPUT, "testbed: model '%s': a real forward pass would "
                       "need more bytes than this machine can address", card->name);
    return 0;
}

realverify_size_t realverify_bytes(const llm_card_t *card, int quant, int max_tokens,
                                   int max_jobs, int max_context)
{
    plan_t p;
    err_t err = {0, {0}};
    /* A refused plan has counted nothing, or SIZE_MAX when too large. */
    (void)plan_of(&p, card, quant, max_tokens, max_jobs, max_context, &err);
    return p.bytes;
}

/* 0, or -1 when out of memory or (W4A16) k is not a multiple of the
 * group. */
static int lin_init(lin_t *l, int w4, int n, int k, uint64_t *s)
{
    l->n = n;
    l->k = k;
    if (w4) return rand_w4(&l->q, n, k, s);
    l->h = rand_h((size_t)n * k, 0.02f, s);
    return l->h ? 0 : -1;
}

static void lin_fini(lin_t *l)
{
    if (l->h) free(l->h);
    else w4a16_packed_fini(&l->q);
    memset(l, 0, sizeof *l);
}

static int lin_run(gemv_ctx_t *ctx, const lin_t *l, const uint16_t *x, int m, uint16_t *y)
{
    return l->h ? gemv_f16(ctx, l->h, l->n, l->k, x, m, y) : gemv_w4a16(ctx, &l->q, x, m, y);
}

static lin_t *layers_of(int layers, int w4, int n, int k, uint64_t *s)
{
    lin_t *w = calloc((size_t)layers, sizeof *w);
    for (int L = 0; w && L < layers; L++)
        if (lin_init(&w[L], w4, n, k, s)) {
            for (int i = 0; i <= L; i++) lin_fini(&w[i]);
            free(w);
            return NULL;
        }
    return w;
}

static void free_layers(lin_t *w, int n)
{
    for (int i = 0; w && i < n; i++) lin_fini(&w[i]);
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
    lin_fini(&v->whead);
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

realverify_t *realverify_create(const llm_card_t *card, int quant, int max_tokens,
                                int max_jobs, int max_context, int threads, err_t *err)
{
    plan_t p;
    if (plan_of(&p, card, quant, max_tokens, max_jobs, max_context, err) != 0) return NULL;
    realverify_t *v = calloc(1, sizeof *v);
    if (!v) {
        err_set(err, ERR_RUNTIME, "testbed: real forward pass: out of memory");
        return NULL;
    }
    v->c = *card;
    v->w4 = p.w4;
    v->d = p.d;
    v->hd = p.hd;
    v->kvd = p.kvd;
    v->f = p.f;
    v->nqkv = p.nqkv;
    v->ngu = p.ngu;
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
    v->wqkv = layers_of(n, v->w4, v->nqkv, v->d, &s);
    v->wo = layers_of(n, v->w4, v->d, v->d, &s);
    v->wgu = layers_of(n, v->w4, v->ngu, v->d, &s);
    v->wdown = layers_of(n, v->w4, v->d, v->f, &s);
    int head_rc = lin_init(&v->whead, v->w4, card->vocab, v->d, &s);
    v->kv = rand_h(p.kv, 1.0f, &s);
    size_t m = p.m, wide = p.wide;
    v->h = calloc(m * v->d, sizeof *v->h);
    v->tmp = calloc(m * wide, sizeof *v->tmp);
    v->xh = calloc(m * v->d, sizeof *v->xh);
    v->yh = calloc(m * wide, sizeof *v->yh);
    v->qh = calloc(m * v->d, sizeof *v->qh);
    v->ah = calloc(m * v->d, sizeof *v->ah);
    v->mh = calloc(m * v->f, sizeof *v->mh);
    if (!v->wqkv || !v->wo || !v->wgu || !v->wdown || head_rc || !v->kv || !v->h || !v->tmp || !v->xh ||
        !v->yh || !v->qh || !v->ah || !v->mh) {
        realverify_free(v);
        err_set(err, ERR_RUNTIME, "testbed: real forward pass: out of memory for "
                "model '%s' (%.2f GiB)", card->name, (double)p.bytes.total / 1073741824.0);
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
    if (lin_run(v->ctx, &v->wgu[L], v->xh, m, v->yh) != 0) return -1;
    gemv_h2f(v->ctx, v->yh, v->tmp, (size_t)m * v->ngu);
    for (int r = 0; r < m; r++) {
        const float *g = v->tmp + (size_t)r * v->ngu;
        for (int i = 0; i < f; i++) {
            float act = g[i] / (1.0f + expf(-g[i]));
            v->mh[(size_t)r * f + i] = f32_to_fp16(v->c.gated_mlp ? act * g[f + i] : act);
        }
    }
    return lin_run(v->ctx, &v->wdown[L], v->mh, m, v->yh);
}

static int forward(realverify_t *v, const service_job_t *jobs, int njobs, int m)
{
    for (int L = 0; L < v->c.layers; L++) {
        norm_rows(v, m);
        if (lin_run(v->ctx, &v->wqkv[L], v->xh, m, v->yh) != 0 ||
            attention(v, L, jobs, njobs) != 0 ||
            lin_run(v->ctx, &v->wo[L], v->ah, m, v->yh) != 0)
            return -1;
        residual(v, m);
        norm_rows(v, m);
        if (mlp(v, L, m) != 0) return -1;
        residual(v, m);
    }
    norm_rows(v, m);
    if (lin_run(v->ctx, &v->whead, v->xh, m, v->yh) != 0) return -1;
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
        return err_set(err, ERR_RUNTIME, "testbed: real forward pass: an iteration of "
                       "%d tokens in %d jobs exceeds %d tokens / %d jobs", m, njobs,
                       v->maxm, v->maxj);
    double t0 = wallclock_s();
    if (forward(v, jobs, njobs, m) != 0)
        return err_set(err, ERR_RUNTIME, "testbed: real forward pass: out of memory");
    return wallclock_s() - t0;
}
