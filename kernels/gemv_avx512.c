/* gemv_avx512 — AVX-512 (F/BW/VL) + FMA + F16C kernels; compiled with those
 * flags only here and called only when cpu_features() reports them.
 *
 * W4A16: per block of 32 inputs one broadcast 16-byte load and an in-lane
 * byte shuffle spread the 16 bytes over 16 dwords (cheaper than a cross-lane
 * widen). For 1–2 activation rows the decode is the limit, so each nibble
 * becomes its weight through a 16-entry table lut[i] = (i − z)·s with one
 * vpermps (which reads only the low 4 index bits: no mask) — exactly the
 * reference's (q − z)·s. With 3–8 rows the nibbles are converted to fp32 and
 * FMA'd into per-group sums Σq·x; the group adds s·Σq·x − z·s·Σx (Σx
 * precomputed once per call). Measured on Zen 5 (2 cores, M = 1, 11008×4096):
 * widen + (q·s − z·s) 32 GB/s, Σq·x form 33.5 GB/s, table form 39 GB/s.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#include "gemv_impl.h"

#define AI static inline __attribute__((always_inline))
#define TMAX 8

/* Accumulators per activation row for a tile of T rows (T compile-time). */
#define NACC(T) ((T) <= 1 ? 4 : (T) <= 2 ? 4 : (T) <= 4 ? 2 : 1)

static inline uint16_t to_h(float f)
{
    return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/* Lane L, dword i of each 128-bit lane takes byte 4L + i of the broadcast
 * 16-byte block: 16 bytes → 16 dwords with an in-lane shuffle (cheaper than
 * a cross-lane widen). 0x80 zeroes the upper bytes. */
#define SPREAD_IDX(L) (char)(0x80), (char)(0x80), (char)(0x80), (char)(4 * (L) + 3), \
                      (char)(0x80), (char)(0x80), (char)(0x80), (char)(4 * (L) + 2), \
                      (char)(0x80), (char)(0x80), (char)(0x80), (char)(4 * (L) + 1), \
                      (char)(0x80), (char)(0x80), (char)(0x80), (char)(4 * (L) + 0)

AI void w4_tile_lut(const uint8_t *q, const uint16_t *sc, const uint8_t *zp, int groups, int group,
                const float *x, const float *xsum, int k, const int T, float *out)
{
    (void)xsum;
    const int NA = NACC(T);
    __m512 acc[TMAX][4];
    for (int t = 0; t < T; t++)
        for (int a = 0; a < NA; a++) acc[t][a] = _mm512_setzero_ps();
    const __m512i spread = _mm512_set_epi8(SPREAD_IDX(3), SPREAD_IDX(2), SPREAD_IDX(1), SPREAD_IDX(0));
    const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const int nb = group / 32;
    for (int g = 0; g < groups; g++) {
        const uint8_t *qg = q + (size_t)g * (size_t)(group / 2);
        const float *xg = x + (size_t)g * (size_t)group;
        /* lut[i] = (i − z)·s, exact; vpermps reads only the low 4 bits of
         * each index, so the low nibble needs no mask. */
        const __m512 lut = _mm512_mul_ps(_mm512_sub_ps(iota, _mm512_set1_ps((float)zp[g])),
                                         _mm512_set1_ps(_cvtsh_ss(sc[g])));
#define W4_STEP(B, A0, A1)                                                                   \
    do {                                                                                     \
        __m512i v_ = _mm512_shuffle_epi8(                                                    \
            _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(qg + 16 * (B)))), spread); \
        __m512 w0_ = _mm512_permutexvar_ps(v_, lut);                                         \
        __m512 w1_ = _mm512_permutexvar_ps(_mm512_srli_epi32(v_, 4), lut);                   \
        for (int t = 0; t < T; t++) {                                                        \
            const float *xt_ = xg + (size_t)t * (size_t)k + 32 * (B);                        \
            acc[t][A0] = _mm512_fmadd_ps(w0_, _mm512_loadu_ps(xt_), acc[t][A0]);             \
            acc[t][A1] = _mm512_fmadd_ps(w1_, _mm512_loadu_ps(xt_ + 16), acc[t][A1]);        \
        }                                                                                    \
    } while (0)
        int b = 0;
        for (; b + 2 <= nb; b += 2) {
            W4_STEP(b, 0, 1 % NA);
            W4_STEP(b + 1, 2 % NA, 3 % NA);
        }
        if (b < nb) W4_STEP(b, 0, 1 % NA);
#undef W4_STEP
    }
    for (int t = 0; t < T; t++) {
        __m512 s = acc[t][0];
        for (int a = 1; a < NA; a++) s = _mm512_add_ps(s, acc[t][a]);
        out[t] = _mm512_reduce_add_ps(s);
    }
}

AI void w4_tile_sum(const uint8_t *q, const uint16_t *sc, const uint8_t *zp, int groups, int group,
                const float *x, const float *xsum, int k, const int T, float *out)
{
    __m512 acc[TMAX];
    float corr[TMAX];
    for (int t = 0; t < T; t++) {
        acc[t] = _mm512_setzero_ps();
        corr[t] = 0.0f;
    }
    const __m512i spread = _mm512_set_epi8(SPREAD_IDX(3), SPREAD_IDX(2), SPREAD_IDX(1), SPREAD_IDX(0));
    const __m512i mask = _mm512_set1_epi32(0x0F);
    const int nb = group / 32;
    for (int g = 0; g < groups; g++) {
        const uint8_t *qg = q + (size_t)g * (size_t)(group / 2);
        const float *xg = x + (size_t)g * (size_t)group;
        /* Σ q·x over the group in its own accumulators (independent of the
         * previous group's, so out-of-order execution overlaps groups), then
         * acc += s·Σ; the zero enters as −z·s·Σx with Σx precomputed. */
        __m512 ga[TMAX][2];
        for (int t = 0; t < T; t++) ga[t][0] = ga[t][1] = _mm512_setzero_ps();
        for (int b = 0; b < nb; b++) {
            __m512i v = _mm512_shuffle_epi8(
                _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(qg + 16 * b))), spread);
            __m512 w0 = _mm512_cvtepi32_ps(_mm512_and_si512(v, mask));
            __m512 w1 = _mm512_cvtepi32_ps(_mm512_srli_epi32(v, 4)); /* dword ≤ 255 */
            for (int t = 0; t < T; t++) {
                const float *xt = xg + (size_t)t * (size_t)k + 32 * b;
                ga[t][0] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xt), ga[t][0]);
                ga[t][1] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xt + 16), ga[t][1]);
            }
        }
        float s = _cvtsh_ss(sc[g]);
        const __m512 vs = _mm512_set1_ps(s);
        float zs = s * (float)zp[g];
        for (int t = 0; t < T; t++) {
            acc[t] = _mm512_fmadd_ps(_mm512_add_ps(ga[t][0], ga[t][1]), vs, acc[t]);
            corr[t] += zs * xsum[(size_t)t * (size_t)groups + (size_t)g];
        }
    }
    for (int t = 0; t < T; t++) out[t] = _mm512_reduce_add_ps(acc[t]) - corr[t];
}

/* One row (T = 1, 2: decode-bound, the LUT form is fastest) or up to 8
 * (decode amortised; the Σq·x form keeps fewer live registers). */
AI void w4_tile(const uint8_t *q, const uint16_t *sc, const uint8_t *zp, int groups, int group,
                const float *x, const float *xsum, int k, const int T, float *out)
{
    if (T <= 2) w4_tile_lut(q, sc, zp, groups, group, x, xsum, k, T, out);
    else w4_tile_sum(q, sc, zp, groups, group, x, xsum, k, T, out);
}

static void w4_rows(const w4a16_packed_t *w, const float *x, const float *xsum, int m, int r0,
                    int r1, uint16_t *y)
{
    int groups = w->k / w->group;
    for (int r = r0; r < r1; r++) {
        const uint8_t *q = w->q + (size_t)r * (size_t)w->k / 2;
        const uint16_t *sc = w->scales + (size_t)r * (size_t)groups;
        const uint8_t *zp = w->zeros + (size_t)r * (size_t)groups;
        for (int m0 = 0; m0 < m; m0 += TMAX) {
            int T = m - m0 < TMAX ? m - m0 : TMAX;
            const float *xt = x + (size_t)m0 * (size_t)w->k;
            const float *st = xsum + (size_t)m0 * (size_t)groups;
            float out[TMAX];
            switch (T) {
            case 1: w4_tile(q, sc, zp, groups, w->group, xt, st, w->k, 1, out); break;
            case 2: w4_tile(q, sc, zp, groups, w->group, xt, st, w->k, 2, out); break;
            case 3: w4_tile(q, sc, zp, groups, w->group, xt, st, w->k, 3, out); break;
            case 4: w4_tile(q, sc, zp, groups, w->group, xt, st, w->k, 4, out); break;
            case 5: w4_tile(q, sc, zp, groups, w->group, xt, st, w->k, 5, out); break;
            case 6: w4_tile(q, sc, zp, groups, w->group, xt, st, w->k, 6, out); break;
            case 7: w4_tile(q, sc, zp, groups, w->group, xt, st, w->k, 7, out); break;
            default: w4_tile(q, sc, zp, groups, w->group, xt, st, w->k, 8, out); break;
            }
            for (int t = 0; t < T; t++) y[(size_t)(m0 + t) * (size_t)w->n + (size_t)r] = to_h(out[t]);
        }
    }
}

/* Dense tiles: LOADW(ptr, count-mask) yields 16 fp32 weights. 64 inputs per
 * main step (4 vectors), then 16 at a time, then one masked step. */
#define DENSE_TILE(NAME, WT, LOADW, LOADW_MASK)                                               \
    AI void NAME(const WT *w, int k, const float *x, const int T, float *out)                 \
    {                                                                                        \
        const int NA = NACC(T);                                                              \
        __m512 acc[TMAX][4];                                                                 \
        for (int t = 0; t < T; t++)                                                          \
            for (int a = 0; a < NA; a++) acc[t][a] = _mm512_setzero_ps();                    \
        int c = 0;                                                                           \
        for (; c + 64 <= k; c += 64) {                                                       \
            __m512 w0 = LOADW(w + c), w1 = LOADW(w + c + 16);                                \
            __m512 w2 = LOADW(w + c + 32), w3 = LOADW(w + c + 48);                           \
            for (int t = 0; t < T; t++) {                                                    \
                const float *xt = x + (size_t)t * (size_t)k + c;                             \
                acc[t][0] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xt), acc[t][0]);             \
                acc[t][1 % NA] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xt + 16), acc[t][1 % NA]); \
                acc[t][2 % NA] = _mm512_fmadd_ps(w2, _mm512_loadu_ps(xt + 32), acc[t][2 % NA]); \
                acc[t][3 % NA] = _mm512_fmadd_ps(w3, _mm512_loadu_ps(xt + 48), acc[t][3 % NA]); \
            }                                                                                \
        }                                                                                    \
        for (; c + 16 <= k; c += 16) {                                                       \
            __m512 w0 = LOADW(w + c);                                                        \
            for (int t = 0; t < T; t++)                                                      \
                acc[t][0] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x + (size_t)t * (size_t)k + c), \
                                            acc[t][0]);                                      \
        }                                                                                    \
        if (c < k) {                                                                         \
            __mmask16 mk = (__mmask16)((1u << (k - c)) - 1u);                                \
            __m512 w0 = LOADW_MASK(mk, w + c);                                               \
            for (int t = 0; t < T; t++)                                                      \
                acc[t][0] = _mm512_fmadd_ps(                                                 \
                    w0, _mm512_maskz_loadu_ps(mk, x + (size_t)t * (size_t)k + c), acc[t][0]); \
        }                                                                                    \
        for (int t = 0; t < T; t++) {                                                        \
            __m512 s = acc[t][0];                                                            \
            for (int a = 1; a < NA; a++) s = _mm512_add_ps(s, acc[t][a]);                    \
            out[t] = _mm512_reduce_add_ps(s);                                                \
        }                                                                                    \
    }

#define LOAD_H(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define LOAD_H_MASK(mk, p) _mm512_cvtph_ps(_mm256_maskz_loadu_epi16((mk), (p)))
#define LOAD_F(p) _mm512_loadu_ps(p)
#define LOAD_F_MASK(mk, p) _mm512_maskz_loadu_ps((mk), (p))

DENSE_TILE(f16_tile, uint16_t, LOAD_H, LOAD_H_MASK)
DENSE_TILE(f32_tile, float, LOAD_F, LOAD_F_MASK)

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

#define STORE_F(v) (v)
DENSE_ROWS(f16_rows, f16_tile, uint16_t, uint16_t, to_h)
DENSE_ROWS(f32_rows, f32_tile, float, float, STORE_F)

static void h2f(const uint16_t *h, float *f, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(f + i, LOAD_H(h + i));
    if (i < n) {
        __mmask16 mk = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(f + i, mk, LOAD_H_MASK(mk, h + i));
    }
}

static float dot_f16(const float *q, const uint16_t *h, int d)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int i = 0;
    for (; i + 32 <= d; i += 32) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i), LOAD_H(h + i), a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + i + 16), LOAD_H(h + i + 16), a1);
    }
    for (; i < d; i += 16) {
        __mmask16 mk = d - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (d - i)) - 1u);
        a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mk, q + i), LOAD_H_MASK(mk, h + i), a0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

static void axpy_f16(float a, const uint16_t *h, float *acc, int d)
{
    const __m512 va = _mm512_set1_ps(a);
    for (int i = 0; i < d; i += 16) {
        __mmask16 mk = d - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (d - i)) - 1u);
        __m512 v = _mm512_fmadd_ps(va, LOAD_H_MASK(mk, h + i), _mm512_maskz_loadu_ps(mk, acc + i));
        _mm512_mask_storeu_ps(acc + i, mk, v);
    }
}

const gemv_impl_t gemv_impl_avx512 = {w4_rows, f16_rows, f32_rows, h2f, dot_f16, axpy_f16};

#else
typedef int gemv_avx512_empty_unit;
#endif
