/* gemv_impl — the table each SIMD translation unit (gemv_<isa>.c) fills; private
 * to kernels/gemv*.c. Row-range kernels: compute output rows [r0, r1) for all
 * m activation rows; x is fp32 [m][k]; y is [m][n]. */
#ifndef SPECSIM_GEMV_IMPL_H
#define SPECSIM_GEMV_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "gemv.h"

/* Bytes per block of 16 rows and group in w4a16_packed_t.mi (gemv.h). */
#define W4I8_META_BYTES 40

typedef struct gemv_impl {
    /* xsum [m][k/group]: Σ x over each group, for the −z·s·Σx zero term. */
    void (*w4)(const w4a16_packed_t *w, const float *x, const float *xsum, int m, int r0, int r1,
               uint16_t *y);
    void (*f16)(const uint16_t *w, int n, int k, const float *x, int m, int r0, int r1,
                uint16_t *y);
    void (*f32)(const float *w, int n, int k, const float *x, int m, int r0, int r1, float *y);
    void (*h2f)(const uint16_t *h, float *f, size_t n);
    float (*dot_f16)(const float *q, const uint16_t *h, int d);
    void (*axpy_f16)(float a, const uint16_t *h, float *acc, int d);
    /* One query head over npos cached positions, fused (scores, softmax
     * with a vector exp, weighted values); NULL where not written, then
     * attn.c composes dot_f16 / axpy_f16 / expf. q fp32 [d]; k, v fp16 with
     * `stride` elements between positions; sc: npos floats of scratch; out
     * fp32 [d]. */
    void (*attn_head)(const float *q, const uint16_t *k, const uint16_t *v, size_t stride,
                      int npos, int d, float scale, float *sc, float *out);
    /* NULL, or: writes into xp the activations [m][k] in the order the
     * path's w4 kernel wants and returns 1, or returns 0 (use x as is). */
    int (*w4_xperm)(const float *x, int m, int k, int group, float *xp);
    /* The int8 kernel (see gemv.h), NULL where the path has none (then the
     * portable one runs). Called only for groups of 128 (the default),
     * with xq [m][k] in the split order: in each block of 128 inputs, first
     * inputs 32b..32b+15 for b = 0..3, then 32b+16..32b+31 — the order the
     * low and the high nibbles of 64 packed bytes hold. d [m][groups] per
     * group scales; dsum [m][groups] = d·Σ xq. ext: the highest
     * enum gemv_i8_dot allowed (gemv_ctx_set_int8_dot_ext). */
    void (*w4i8)(const w4a16_packed_t *w, const int8_t *xq, const float *d, const float *dsum,
                 int m, int r0, int r1, uint16_t *y, int ext);
    /* The int8 kernel on the interleaved copy (w4a16_packed_t.qi), NULL
     * where not written: row blocks [b0, b1) of 16 rows; xq [m][k] in
     * natural order; d, dsum, ext as for w4i8. */
    void (*w4i8_r16)(const w4a16_packed_t *w, const int8_t *xq, const float *d,
                     const float *dsum, int m, int b0, int b1, uint16_t *y, int ext);
    /* NULL, or the int8 kernel's activation quantiser for groups of 128
     * in natural order: ng groups of fp16 x → xq, d[g] and dsum[g] = d·Σxq,
     * bit for bit what the portable quantiser (kernels/gemv.c) gives. It
     * runs on one thread before every int8 product, so its speed counts at
     * M = 1 and more at M = 8. */
    void (*w4i8_quant)(const uint16_t *x, size_t ng, int8_t *xq, float *d, float *dsum);
    /* fp16 weights, fp32 output, batch-invariant (gemv_f16_f32 in gemv.h):
     * every (row, activation row) sum runs the same operations in the same
     * order whatever m is, so tiles use a fixed accumulator count. */
    void (*f16_f32)(const uint16_t *w, int n, int k, const float *x, int m, int r0, int r1,
                    float *y);
    /* fp32 → fp16, round to nearest even (gemv_f2h); NULL where not
     * written: then gemv.c loops f32_to_fp16. */
    void (*f2h)(const float *f, uint16_t *h, size_t n);
} gemv_impl_t;

extern const gemv_impl_t gemv_impl_scalar;
/* x86-64 only: the int8 kernels' asm names all sixteen vector registers,
 * which 32-bit x86 does not have; there the scalar path serves. */
#if defined(__x86_64__)
extern const gemv_impl_t gemv_impl_avx2;
extern const gemv_impl_t gemv_impl_avx512;
/* 1 when the AVX-512 path's int8 kernel runs AMX tiles for m activation
 * rows (asks Linux for tile state on the first call that needs it). */
int gemv_avx512_amx_ready(int m);
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
extern const gemv_impl_t gemv_impl_neon;
#endif

/* Dense (fp16/fp32 weight) row kernels shared by the x86 paths: for each
 * output row, tiles of up to 8 activation rows go to TILE(w_row, k, x, T,
 * out), which the including file defines per ISA; the switch makes T a
 * compile-time constant inside each inlined tile. The includer defines
 * TMAX as 8 (the switch below covers 1..8). */
#define DENSE_ROWS(NAME, TILE, WT, YT, STORE)                                                 \
    static void NAME(const WT *w, int n, int k, const float *x, int m, int r0, int r1, YT *y) \
    {                                                                                        \
        for (int r = r0; r < r1; r++) {                                                      \
            const WT *wr = w + (size_t)r * (size_t)k;                                        \
            for (int m0 = 0; m0 < m; m0 += TMAX) {                                           \
                int T = m - m0 < TMAX ? m - m0 : TMAX;                                       \
                const float *xt = x + (size_t)m0 * (size_t)k;                                \
                float out[TMAX];                                                             \
                switch (T) {                                                                 \
                case 1: TILE(wr, k, xt, 1, out); break;                                      \
                case 2: TILE(wr, k, xt, 2, out); break;                                      \
                case 3: TILE(wr, k, xt, 3, out); break;                                      \
                case 4: TILE(wr, k, xt, 4, out); break;                                      \
                case 5: TILE(wr, k, xt, 5, out); break;                                      \
                case 6: TILE(wr, k, xt, 6, out); break;                                      \
                case 7: TILE(wr, k, xt, 7, out); break;                                      \
                default: TILE(wr, k, xt, 8, out); break;                                     \
                }                                                                            \
                for (int t = 0; t < T; t++) y[(size_t)(m0 + t) * (size_t)n + (size_t)r] = STORE(out[t]); \
            }                                                                                \
        }                                                                                    \
    }

#endif
