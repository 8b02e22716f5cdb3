/* w4a16 — the reference format, quantiser and scalar ground truth.
 *
 * Nothing here is fast on purpose: these loops define the numbers every
 * optimised kernel is checked against (kernels/gemv*.c, kernels/cuda/).
 */
#include "w4a16.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int w4a16_init(w4a16_t *w, int n, int k, int group)
{
    memset(w, 0, sizeof *w);
    if (n <= 0 || k <= 0 || group <= 0 || group % 8 != 0 || k % group != 0)
        return -1;
    size_t groups = (size_t)n * (size_t)(k / group);
    w->qweight = calloc((size_t)n * (size_t)(k / 8), sizeof *w->qweight);
    w->scales = calloc(groups, sizeof *w->scales);
    w->zeros = calloc(groups, sizeof *w->zeros);
    if (!w->qweight || !w->scales || !w->zeros) {
        w4a16_fini(w);
        return -1;
    }
    w->n = n;
    w->k = k;
    w->group = group;
    return 0;
}

void w4a16_fini(w4a16_t *w)
{
    if (!w) return;
    free(w->qweight);
    free(w->scales);
    free(w->zeros);
    memset(w, 0, sizeof *w);
}

double w4a16_bytes(int n, int k, int group)
{
    double groups = (double)n * (double)(k / group);
    return (double)n * (double)k * 0.5 + groups * 2.5;
}

unsigned w4a16_get_q(const w4a16_t *w, int row, int col)
{
    uint32_t word = w->qweight[(size_t)row * (size_t)(w->k / 8) + (size_t)(col / 8)];
    return (word >> (4 * (col % 8))) & 0xFu;
}

void w4a16_set_q(w4a16_t *w, int row, int col, unsigned q)
{
    uint32_t *word = &w->qweight[(size_t)row * (size_t)(w->k / 8) + (size_t)(col / 8)];
    unsigned sh = 4u * (unsigned)(col % 8);
    *word = (*word & ~(0xFu << sh)) | ((uint32_t)(q & 0xFu) << sh);
}

/* One group of g weights → (q, fp16 scale, zero). The scale used to round is
 * the fp16-rounded one, so dequantisation reproduces exactly what was chosen. */
static void quantize_group(const float *w, int g, int symmetric, w4a16_t *out,
                           int row, int col0, size_t gi)
{
    float scale;
    int zero;
    if (symmetric) {
        float amax = 0.0f;
        for (int i = 0; i < g; i++) amax = fmaxf(amax, fabsf(w[i]));
        scale = amax / 7.0f;
        zero = 8;
    } else {
        /* The range always contains 0: then z = round(−min/s) lies in 0..15
         * without clamping, 0 is exact, and every weight is within s/2 of a
         * level (the GPTQ/AWQ convention). */
        float lo = 0.0f, hi = 0.0f;
        for (int i = 0; i < g; i++) {
            lo = fminf(lo, w[i]);
            hi = fmaxf(hi, w[i]);
        }
        scale = (hi - lo) / 15.0f;
        zero = 0;
        if (scale > 0.0f) {
            float s16 = fp16_to_f32(f32_to_fp16(scale));
            zero = (int)lrintf(-lo / s16);
            zero = zero < 0 ? 0 : zero > 15 ? 15 : zero;
        }
    }
    uint16_t s16 = f32_to_fp16(scale);
    float s = fp16_to_f32(s16);
    out->scales[gi] = s16;
    out->zeros[gi] = (uint8_t)zero;
    for (int i = 0; i < g; i++) {
        long q = s > 0.0f ? lrintf(w[i] / s) + zero : zero;
        q = q < 0 ? 0 : q > 15 ? 15 : q;
        w4a16_set_q(out, row, col0 + i, (unsigned)q);
    }
}

void w4a16_quantize(const float *w, int symmetric, w4a16_t *out)
{
    int groups = out->k / out->group;
    for (int r = 0; r < out->n; r++)
        for (int g = 0; g < groups; g++)
            quantize_group(w + (size_t)r * (size_t)out->k + (size_t)g * (size_t)out->group,
                           out->group, symmetric, out, r, g * out->group,
                           (size_t)r * (size_t)groups + (size_t)g);
}

int w4a16_quantize_fp16(const uint16_t *w, int symmetric, w4a16_t *out)
{
    float *row = malloc((size_t)out->k * sizeof *row);
    if (!row) return -1;
    for (int r = 0; r < out->n; r++) {
        for (int c = 0; c < out->k; c++) row[c] = fp16_to_f32(w[(size_t)r * (size_t)out->k + (size_t)c]);
        int groups = out->k / out->group;
        for (int g = 0; g < groups; g++)
            quantize_group(row + (size_t)g * (size_t)out->group, out->group, symmetric, out, r,
                           g * out->group, (size_t)r * (size_t)groups + (size_t)g);
    }
    free(row);
    return 0;
}

/* (q − z)·s: q − z is an integer of at most 5 bits and s has 11 significant
 * bits, so the product is exact in fp32 — every kernel can reproduce it. */
static inline float dequant_one(const w4a16_t *w, int row, int col)
{
    size_t gi = (size_t)row * (size_t)(w->k / w->group) + (size_t)(col / w->group);
    return (float)((int)w4a16_get_q(w, row, col) - (int)w->zeros[gi]) * fp16_to_f32(w->scales[gi]);
}

void w4a16_dequantize(const w4a16_t *q, float *w)
{
    for (int r = 0; r < q->n; r++)
        for (int c = 0; c < q->k; c++)
            w[(size_t)r * (size_t)q->k + (size_t)c] = dequant_one(q, r, c);
}

void w4a16_gemm_ref(const w4a16_t *w, const uint16_t *x, int m, uint16_t *y)
{
    for (int i = 0; i < m; i++) {
        const uint16_t *xi = x + (size_t)i * (size_t)w->k;
        for (int r = 0; r < w->n; r++) {
            float acc = 0.0f;
            for (int c = 0; c < w->k; c++) acc += dequant_one(w, r, c) * fp16_to_f32(xi[c]);
            y[(size_t)i * (size_t)w->n + (size_t)r] = f32_to_fp16(acc);
        }
    }
}

float fp16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    uint32_t bits;
    if (exp == 0x1F) {
        bits = sign | 0x7F800000u | (mant << 13);
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else {
        /* Subnormal half: mant·2^−24, renormalised for fp32. */
        int e = -1;
        do {
            mant <<= 1;
            e++;
        } while (!(mant & 0x400u));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3FFu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Round right-shift of m by sh bits, to nearest, ties to even. */
static uint32_t shift_rne(uint32_t m, unsigned sh)
{
    uint32_t q = m >> sh;
    uint32_t rem = m & ((1u << sh) - 1u);
    uint32_t half = 1u << (sh - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return q;
}

uint16_t f32_to_fp16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7FFFFFFFu;
    if (ax > 0x7F800000u) {
        /* NaN: keep the top payload bits; never let it collapse into Inf. */
        uint16_t m = (uint16_t)((ax >> 13) & 0x3FFu);
        return (uint16_t)(sign | 0x7C00u | (m ? m : 0x200u));
    }
    if (ax >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);   /* ≥ 65520 → Inf */
    if (ax >= 0x38800000u) {                                    /* normal half */
        uint32_t e = (ax >> 23) - 112u;
        return (uint16_t)(sign | shift_rne((e << 23) | (ax & 0x7FFFFFu), 13));
    }
    if (ax < 0x33000000u) return sign;                          /* ≤ 2^−25 → 0 */
    /* Subnormal half: value = m·2^(e−150) = (m >> (126 − e)) units of 2^−24. */
    uint32_t e = ax >> 23;
    uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
    return (uint16_t)(sign | shift_rne(m, 126u - e));
}
