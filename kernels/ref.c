/* ref — scalar references for dense GEMV/GEMM and attention (see ref.h). */
#include "ref.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "w4a16.h"

void ref_gemm_f32(const float *w, int n, int k, const float *x, int m, float *y)
{
    for (int i = 0; i < m; i++)
        for (int r = 0; r < n; r++) {
            const float *wr = w + (size_t)r * (size_t)k, *xi = x + (size_t)i * (size_t)k;
            float acc = 0.0f;
            for (int c = 0; c < k; c++) acc += wr[c] * xi[c];
            y[(size_t)i * (size_t)n + (size_t)r] = acc;
        }
}

void ref_gemm_f16(const uint16_t *w, int n, int k, const uint16_t *x, int m, uint16_t *y)
{
    for (int i = 0; i < m; i++)
        for (int r = 0; r < n; r++) {
            const uint16_t *wr = w + (size_t)r * (size_t)k, *xi = x + (size_t)i * (size_t)k;
            float acc = 0.0f;
            for (int c = 0; c < k; c++) acc += fp16_to_f32(wr[c]) * fp16_to_f32(xi[c]);
            y[(size_t)i * (size_t)n + (size_t)r] = f32_to_fp16(acc);
        }
}

/* One query head over positions 0..last: scores, max, exp-sum, weighted
 * values — the textbook numerically safe softmax. sc holds last+1 floats. */
static void attend_one(const uint16_t *qh, const uint16_t *kc, const uint16_t *vc,
                       int last, int kvh, int kv_heads, int head_dim, float scale,
                       float *sc, uint16_t *oh)
{
    size_t stride = (size_t)kv_heads * (size_t)head_dim;
    size_t hoff = (size_t)kvh * (size_t)head_dim;
    float mx = -INFINITY;
    for (int p = 0; p <= last; p++) {
        const uint16_t *kp = kc + (size_t)p * stride + hoff;
        float s = 0.0f;
        for (int d = 0; d < head_dim; d++) s += fp16_to_f32(qh[d]) * fp16_to_f32(kp[d]);
        sc[p] = s * scale;
        mx = fmaxf(mx, sc[p]);
    }
    float sum = 0.0f;
    for (int p = 0; p <= last; p++) {
        sc[p] = expf(sc[p] - mx);
        sum += sc[p];
    }
    for (int d = 0; d < head_dim; d++) {
        float acc = 0.0f;
        for (int p = 0; p <= last; p++) acc += sc[p] * fp16_to_f32(vc[(size_t)p * stride + hoff + (size_t)d]);
        oh[d] = f32_to_fp16(acc / sum);
    }
}

int ref_attention(const uint16_t *q, const uint16_t *kc, const uint16_t *vc, int nq,
                  int ctx, int heads, int kv_heads, int head_dim, uint16_t *out)
{
    float *sc = malloc((size_t)(ctx + nq) * sizeof *sc);
    if (!sc) return -1;
    float scale = 1.0f / sqrtf((float)head_dim);
    int per_kv = heads / kv_heads;
    for (int i = 0; i < nq; i++)
        for (int h = 0; h < heads; h++) {
            size_t off = ((size_t)i * (size_t)heads + (size_t)h) * (size_t)head_dim;
            attend_one(q + off, kc, vc, ctx + i, h / per_kv, kv_heads, head_dim, scale, sc,
                       out + off);
        }
    free(sc);
    return 0;
}
