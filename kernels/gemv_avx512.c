/* gemv_avx512 — AVX-512 (F/BW/VL) + FMA + F16C kernels; compiled with those
 * flags only here and called only when cpu_features() reports them.
 *
 * W4A16: per block of 32 inputs one broadcast 16-byte load and an in-lane
 * byte shuffle spread the 16 bytes over 16 dwords (cheaper than a cross-lane
 * widen); each nibble becomes its weight through a 16-entry table
 * lut[i] = (i − z)·s with one vpermps (which reads only the low 4 index bits:
 * the low nibble needs no mask) — exactly the reference's (q − z)·s. Each
 * decoded vector feeds up to 8 activation rows (tile T). Measured on this
 * Zen 5 (2 cores, M = 1, 11008×4096 from DRAM): widen + (q·s − z·s) 32 GB/s,
 * convert + Σq·x per group 33.5 GB/s, table 39 GB/s. For M ≥ 4 the limit was
 * re-streaming x from L2 for every weight row; w4_rows therefore walks K in
 * chunks whose activations stay in L1 across a block of 8 rows (M = 8,
 * L2-resident weights, one core: 191 → 123 µs for 256×4096).
 */
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#include <stddef.h>

#include "gemv_impl.h"

#define AI static inline __attribute__((always_inline))
#define TMAX 8

/* Accumulators per activation row for a tile of T rows (T compile-time):
 * with few rows, independent chains hide the FMA latency. */
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

/* Groups g0..g1−1 of one weight row for T activation rows; the running
 * sums live in accio[t] between calls (see w4_block for why). pf: how far
 * ahead of each group to prefetch weights (0: no useful prefetch). */
AI void w4_chunk(const uint8_t *q, const uint16_t *sc, const uint8_t *zp, int g0, int g1,
                 int group, const float *x, int k, const int T, __m512 *accio, ptrdiff_t pf)
{
    const int NA = NACC(T);
    __m512 acc[TMAX][4];
    for (int t = 0; t < T; t++) {
        acc[t][0] = accio[t];
        for (int a = 1; a < NA; a++) acc[t][a] = _mm512_setzero_ps();
    }
    const __m512i spread = _mm512_set_epi8(SPREAD_IDX(3), SPREAD_IDX(2), SPREAD_IDX(1), SPREAD_IDX(0));
    const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const int nb = group / 32;
    for (int g = g0; g < g1; g++) {
        const uint8_t *qg = q + (size_t)g * (size_t)(group / 2);
        const float *xg = x + (size_t)g * (size_t)group;
        _mm_prefetch((const char *)(qg + pf), _MM_HINT_T0);
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
        accio[t] = s;
    }
}

/* Rows in blocks of RB; for tiles of T ≥ CHUNK_MIN_T rows, K in chunks whose
 * activations stay in L1: without the chunking every weight row re-streams
 * all of x (T·K·4 bytes, 128 KiB at T = 8, K = 4096) from L2, which — not
 * the decode — limited M ≥ 4. Running sums wait in part[][] between chunks. */
#define RB 8
/* Tiles of T ≥ CHUNK_MIN_T rows walk K in chunks; fewer rows stream each
 * weight row start to end (interleaving 8 rows' chunks defeats the hardware
 * prefetcher: 2048×8192 at M = 1 fell from 14 to 7 GB/s on one core). */
#define CHUNK_MIN_T 3
/* Software prefetch distance along a weight row, bytes. The hardware
 * prefetcher alone fell behind once rows exceed ~2 KiB (one core, M = 1:
 * 4096×11008 8 GB/s without, 14.5 at 2 KiB, 19.4 at 8 KiB ahead, equal to
 * the 4096×4096 rate). */
#define PF_BYTES 8192
#define X_CHUNK_FLOATS 4096

AI void w4_block(const w4a16_packed_t *w, const float *x, int rb, int re, const int T, float *out)
{
    int groups = w->k / w->group;
    int cg = X_CHUNK_FLOATS / T / w->group;
    if (cg < 1 || T < CHUNK_MIN_T) cg = groups;
    __m512 part[RB][TMAX];
    for (int r = 0; r < re - rb; r++)
        for (int t = 0; t < T; t++) part[r][t] = _mm512_setzero_ps();
    for (int g0 = 0; g0 < groups; g0 += cg) {
        int g1 = g0 + cg < groups ? g0 + cg : groups;
        for (int r = rb; r < re; r++)
            w4_chunk(w->q + (size_t)r * (size_t)w->k / 2, w->scales + (size_t)r * (size_t)groups,
                     w->zeros + (size_t)r * (size_t)groups, g0, g1, w->group, x, w->k, T,
                     part[r - rb], cg == groups ? PF_BYTES : 0);
    }
    for (int r = 0; r < re - rb; r++)
        for (int t = 0; t < T; t++) out[r * TMAX + t] = _mm512_reduce_add_ps(part[r][t]);
}

static void w4_rows(const w4a16_packed_t *w, const float *x, const float *xsum, int m, int r0,
                    int r1, uint16_t *y)
{
    (void)xsum;
    for (int rb = r0; rb < r1; rb += RB) {
        int re = rb + RB < r1 ? rb + RB : r1;
        for (int m0 = 0; m0 < m; m0 += TMAX) {
            int T = m - m0 < TMAX ? m - m0 : TMAX;
            const float *xt = x + (size_t)m0 * (size_t)w->k;
            float out[RB * TMAX];
            switch (T) {
            case 1: w4_block(w, xt, rb, re, 1, out); break;
            case 2: w4_block(w, xt, rb, re, 2, out); break;
            case 3: w4_block(w, xt, rb, re, 3, out); break;
            case 4: w4_block(w, xt, rb, re, 4, out); break;
            case 5: w4_block(w, xt, rb, re, 5, out); break;
            case 6: w4_block(w, xt, rb, re, 6, out); break;
            case 7: w4_block(w, xt, rb, re, 7, out); break;
            default: w4_block(w, xt, rb, re, 8, out); break;
            }
            for (int r = rb; r < re; r++)
                for (int t = 0; t < T; t++)
                    y[(size_t)(m0 + t) * (size_t)w->n + (size_t)r] = to_h(out[(r - rb) * TMAX + t]);
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
            for (size_t l_ = 0; l_ < 64 * sizeof(WT); l_ += 64)                              \
                _mm_prefetch((const char *)(w + c) + PF_BYTES + l_, _MM_HINT_T0);            \
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
