/* attn — SIMD attention over a KV cache (see attn.h). */
#include "attn.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

struct attn_job {
    gemv_ctx_t *c;
    const uint16_t *q, *kc, *vc;
    int nq, ctx, heads, kv_heads, head_dim;
    uint16_t *out;
    atomic_int failed;
};

/* Chunk i takes a contiguous run of (query, head) pairs: heads of one query
 * that share a KV head under GQA then reuse its K/V rows from cache. */
static void attn_part(void *arg, int i, int nch)
{
    struct attn_job *j = arg;
    int d = j->head_dim, per_kv = j->heads / j->kv_heads;
    size_t stride = (size_t)j->kv_heads * (size_t)d;
    float *buf = malloc(((size_t)(j->ctx + j->nq) + 2 * (size_t)d) * sizeof *buf);
    if (!buf) {
        atomic_store(&j->failed, 1);
        return;
    }
    float *qf = buf, *acc = buf + d, *sc = buf + 2 * d;
    float scale = 1.0f / sqrtf((float)d);
    int npairs = j->nq * j->heads;
    int p0 = (int)((long long)npairs * i / nch), p1 = (int)((long long)npairs * (i + 1) / nch);
    for (int pair = p0; pair < p1; pair++) {
        int i = pair / j->heads, h = pair % j->heads, last = j->ctx + i;
        size_t off = ((size_t)i * (size_t)j->heads + (size_t)h) * (size_t)d;
        size_t hoff = (size_t)(h / per_kv) * (size_t)d;
        gemv_h2f(j->c, j->q + off, qf, (size_t)d);
        if (gemv_attn_head(j->c, qf, j->kc + hoff, j->vc + hoff, stride, last + 1, d, scale, sc,
                           acc) == 0) {
            for (int e = 0; e < d; e++) j->out[off + (size_t)e] = f32_to_fp16(acc[e]);
            continue;
        }
        float mx = -INFINITY;
        for (int p = 0; p <= last; p++) {
            sc[p] = gemv_dot_f16(j->c, qf, j->kc + (size_t)p * stride + hoff, d) * scale;
            mx = fmaxf(mx, sc[p]);
        }
        float sum = 0.0f;
        for (int p = 0; p <= last; p++) {
            sc[p] = expf(sc[p] - mx);
            sum += sc[p];
        }
        for (int e = 0; e < d; e++) acc[e] = 0.0f;
        for (int p = 0; p <= last; p++)
            gemv_axpy_f16(j->c, sc[p], j->vc + (size_t)p * stride + hoff, acc, d);
        for (int e = 0; e < d; e++) j->out[off + (size_t)e] = f32_to_fp16(acc[e] / sum);
    }
    free(buf);
}

int attn_run(gemv_ctx_t *c, const uint16_t *q, const uint16_t *kc, const uint16_t *vc, int nq,
             int ctx, int heads, int kv_heads, int head_dim, uint16_t *out)
{
    struct attn_job j = {c, q, kc, vc, nq, ctx, heads, kv_heads, head_dim, out, 0};
    atomic_init(&j.failed, 0);
    int nch = 2 * gemv_ctx_threads(c);
    if (nch > nq * heads) nch = nq * heads;
    gemv_parallel(c, attn_part, &j, nch);
    return atomic_load(&j.failed) ? -1 : 0;
}

double attn_bytes(int nq, int ctx, int kv_heads, int head_dim)
{
    return 2.0 * 2.0 * (double)(ctx + nq) * (double)kv_heads * (double)head_dim;
}

double attn_flops(int nq, int ctx, int heads, int head_dim)
{
    /* Query i sees ctx + i + 1 positions; 2 FLOPs per MAC, two products. */
    double pos = (double)nq * (double)ctx + (double)nq * (double)(nq + 1) / 2.0;
    return 4.0 * pos * (double)heads * (double)head_dim;
}
