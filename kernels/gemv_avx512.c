/* gemv_avx512 — AVX-512 (F/BW/VL) + FMA + F16C kernels; compiled with those
 * flags only here and called only when cpu_features() reports them.
 *
 * W4A16: per block of 32 inputs one broadcast 16-byte load and an in-lane
 * byte shuffle spread the 16 bytes over 16 dwords (cheaper than a cross-lane
 * widen); each nibble becomes its weight through a 16-entry table
 * lut[i] = (i − z)·s with one vpermps (which reads only the low 4 index bits:
 * the low nibble needs no mask) — exactly the reference's (q − z)·s. Each
 * decoded vector feeds up to 8 activation rows (tile T). Measured on a
 * 2-core Zen 5, an earlier development machine (M = 1, 11008×4096 from
 * DRAM): widen + (q·s − z·s) 32 GB/s,
 * convert + Σq·x per group 33.5 GB/s, table 39 GB/s. For M ≥ 4 the limit was
 * re-streaming x from L2 for every weight row; w4_rows therefore walks K in
 * chunks whose activations stay in L1 across a block of 8 rows (M = 8,
 * L2-resident weights, one core: 191 → 123 µs for 256×4096). Weight rows
 * are also prefetched 8 KiB ahead in software (PF_BYTES). For M ≤ 2 with
 * groups of 128, w4_chunk128 drops the byte shuffle by reading x in a
 * permuted order (w4_xperm): 11008×4096 M = 1, 2 threads, ≈ 38 → 42–44 GB/s.
 * That is about what two cores can decode and FMA at this clock: the
 * measured read ceiling (up to ~74 GB/s when the host is quiet) is out of
 * reach for fp32 accumulation on 2 cores.
 *
 * Attention (attn_head): one fused pass per query head — scores, vector exp,
 * weighted values — with software prefetch along the strided K/V rows; it
 * replaced per-position calls and scalar expf (7B head shape, context 2048:
 * 8.7 → 13.5 GB/s). Query heads sharing a KV head (GQA) still each re-read
 * K/V from cache; grouping them is the next step.
 */
#if defined(__x86_64__)
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Groups of 128 (or a multiple) with x permuted by w4_xperm: one 64-byte
 * load holds 128 nibbles as 16 dwords of 8; nibble n of every dword is
 * exposed by one shift (vpermps reads only the low 4 index bits), so the
 * in-lane byte shuffle of w4_chunk disappears: 2 shuffle-port ops per 32
 * weights instead of 3, which is what bounds this loop. */
AI void w4_chunk128(const uint8_t *q, const uint16_t *sc, const uint8_t *zp, int g0, int g1,
                    int group, const float *xp, int k, const int T, __m512 *accio, ptrdiff_t pf)
{
    const int NA = NACC(T);
    __m512 acc[TMAX][4];
    for (int t = 0; t < T; t++) {
        acc[t][0] = accio[t];
        for (int a = 1; a < NA; a++) acc[t][a] = _mm512_setzero_ps();
    }
    const __m512 iota = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int g = g0; g < g1; g++) {
        const __m512 lut = _mm512_mul_ps(_mm512_sub_ps(iota, _mm512_set1_ps((float)zp[g])),
                                         _mm512_set1_ps(_cvtsh_ss(sc[g])));
        for (int c = 0; c < group; c += 128) {
            const uint8_t *qb = q + ((size_t)g * (size_t)group + (size_t)c) / 2;
            const float *xb = xp + (size_t)g * (size_t)group + (size_t)c;
            _mm_prefetch((const char *)qb + pf, _MM_HINT_T0);
            const __m512i v = _mm512_loadu_si512((const void *)qb);
#define W4_NIB(N)                                                                            \
    do {                                                                                     \
        __m512 w_ = _mm512_permutexvar_ps((N) ? _mm512_srli_epi32(v, 4 * (N)) : v, lut);      \
        for (int t = 0; t < T; t++)                                                          \
            acc[t][(N) % NA] = _mm512_fmadd_ps(                                              \
                w_, _mm512_loadu_ps(xb + (size_t)t * (size_t)k + 16 * (N)), acc[t][(N) % NA]); \
    } while (0)
            W4_NIB(0);
            W4_NIB(1);
            W4_NIB(2);
            W4_NIB(3);
            W4_NIB(4);
            W4_NIB(5);
            W4_NIB(6);
            W4_NIB(7);
#undef W4_NIB
        }
    }
    for (int t = 0; t < T; t++) {
        __m512 s = acc[t][0];
        for (int a = 1; a < NA; a++) s = _mm512_add_ps(s, acc[t][a]);
        accio[t] = s;
    }
}

/* The 128-nibble path pays off only while the decode is the bottleneck
 * (M ≤ 2; 2 threads, M = 1: 11008×4096 38 → 42–44 GB/s, 2048×8192 35 → 42)
 * and x stays in L1: with more rows (M = 8: 4.5 vs 3.1 ms) or K = 11008
 * (39 → 26 GB/s, not understood) it lost to w4_chunk. Both sides of the
 * call (w4_xperm, w4_block) apply this same rule. */
static inline int use_chunk128(int m, int k, int group)
{
    return m <= 2 && k <= 8192 && group % 128 == 0;
}

/* x in the order w4_chunk128 consumes: within each block of 128 inputs,
 * position 16n + i holds input 32(i/4) + 4(i mod 4) + n/2 + 16(n mod 2) —
 * nibble n of dword i of the block's 64 bytes in the w4a16_packed_t layout.
 * Returns 0 (x left alone) unless use_chunk128. */
static int w4_xperm(const float *x, int m, int k, int group, float *xp)
{
    if (!use_chunk128(m, k, group)) return 0;
    for (int t = 0; t < m; t++)
        for (int b = 0; b < k; b += 128) {
            const float *xs = x + (size_t)t * (size_t)k + (size_t)b;
            float *xd = xp + (size_t)t * (size_t)k + (size_t)b;
            for (int n = 0; n < 8; n++)
                for (int i = 0; i < 16; i++)
                    xd[16 * n + i] = xs[32 * (i / 4) + 4 * (i % 4) + n / 2 + 16 * (n % 2)];
        }
    return 1;
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
/* Tiles of 1–2 rows are chunked too once their activations outgrow L1
 * (X_L1_BYTES), in smaller chunks; chunked rows prefetch their own next
 * chunk (the hardware prefetcher loses 8 interleaved streams). Measured side
 * by side (2 threads, weights from DRAM): 4096×11008 at M = 2, 1745 → ~1080
 * µs; M = 3 and 4, 2330 → ~1430–1700 µs; M = 1 unchanged (unchunked). */
#define X_CHUNK_FLOATS 4096
#define X_CHUNK_SMALL_T 2048
#define X_L1_BYTES 49152

AI void w4_block(const w4a16_packed_t *w, const float *x, int m, int rb, int re, const int T,
                 float *out)
{
    int groups = w->k / w->group;
    int cg = (T < CHUNK_MIN_T ? X_CHUNK_SMALL_T : X_CHUNK_FLOATS) / T / w->group;
    if (cg < 1 || (T < CHUNK_MIN_T && (size_t)T * (size_t)w->k * 4 <= X_L1_BYTES)) cg = groups;
    __m512 part[RB][TMAX];
    for (int r = 0; r < re - rb; r++)
        for (int t = 0; t < T; t++) part[r][t] = _mm512_setzero_ps();
    for (int g0 = 0; g0 < groups; g0 += cg) {
        int g1 = g0 + cg < groups ? g0 + cg : groups;
        for (int r = rb; r < re; r++) {
            const uint8_t *q = w->q + (size_t)r * (size_t)w->k / 2;
            const uint16_t *sc = w->scales + (size_t)r * (size_t)groups;
            const uint8_t *zp = w->zeros + (size_t)r * (size_t)groups;
            ptrdiff_t pf = cg == groups ? PF_BYTES : (ptrdiff_t)cg * w->group / 2;   /* next chunk */
            if (use_chunk128(m, w->k, w->group))
                w4_chunk128(q, sc, zp, g0, g1, w->group, x, w->k, T, part[r - rb], pf);
            else
                w4_chunk(q, sc, zp, g0, g1, w->group, x, w->k, T, part[r - rb], pf);
        }
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
            case 1: w4_block(w, xt, m, rb, re, 1, out); break;
            case 2: w4_block(w, xt, m, rb, re, 2, out); break;
            case 3: w4_block(w, xt, m, rb, re, 3, out); break;
            case 4: w4_block(w, xt, m, rb, re, 4, out); break;
            case 5: w4_block(w, xt, m, rb, re, 5, out); break;
            case 6: w4_block(w, xt, m, rb, re, 6, out); break;
            case 7: w4_block(w, xt, m, rb, re, 7, out); break;
            default: w4_block(w, xt, m, rb, re, 8, out); break;
            }
            for (int r = rb; r < re; r++)
                for (int t = 0; t < T; t++)
                    y[(size_t)(m0 + t) * (size_t)w->n + (size_t)r] = to_h(out[(r - rb) * TMAX + t]);
        }
    }
}

/* ---- int8 kernel (gemv.h: activations quantised to int8 per group) ------
 *
 * Per 128 inputs of a weight row one 64-byte load; AND gives the low
 * nibbles (inputs 32b..32b+15 of each 16-byte lane b), shift + AND the high
 * ones, and x arrives in that split order (gemv_impl.h), so two u8×s8 dot
 * steps per activation row sum 4 products into each dword lane exactly.
 * With VNNI that is vpdpbusd; without, vpmaddubsw (pairs, ≤ 2·15·127, no
 * saturation) + vpmaddwd by ones. Per group the integer lanes are converted
 * once and scaled by s·d; the zero term −z·s·(d·Σxq) is one short vector
 * dot per row after the loop (w4i8_corr). I8_R weight rows are streamed at
 * once: several sequential streams per core keep more lines in flight than
 * one (see kernels/membw.h), which is what the M = 1 rate was short of. */
#define I8_PF 8192
/* Groups ahead to prefetch the interleaved copy's scales and zeros (two
 * slow streams per block beside the weights: a line every 2 or 4 groups). */
#define I8_META_PF 16

AI float w4i8_corr(const uint16_t *sc, const uint8_t *zp, const float *dsum, int groups)
{
    __m512 a = _mm512_setzero_ps();
    for (int g = 0; g < groups; g += 16) {
        __mmask16 mk = groups - g >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (groups - g)) - 1u);
        __m512 s = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mk, sc + g));
        __m512 z = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(mk, zp + g)));
        a = _mm512_fmadd_ps(_mm512_mul_ps(s, z), _mm512_maskz_loadu_ps(mk, dsum + g), a);
    }
    return _mm512_reduce_add_ps(a);
}

#define DOT_MADDUBS(acc, u, s8)                                                              \
    _mm512_add_epi32((acc), _mm512_madd_epi16(_mm512_maddubs_epi16((u), (s8)),              \
                                              _mm512_set1_epi16(1)))
#define DOT_VNNI(acc, u, s8) _mm512_dpbusd_epi32((acc), (u), (s8))

/* Rows rb..rb+nr−1 (nr ≤ R) for T activation rows, groups of 128 (one
 * 64-byte load per row and group); out[r·TMAX + t]. The integer dot of a
 * group is a temporary, so only R·T fp32 accumulators stay in registers. */
#define W4I8_BLOCK(NAME, ATTR, DOT)                                                          \
    ATTR AI void NAME(const w4a16_packed_t *w, const int8_t *xq, const float *d,              \
                      const float *dsum, int rb, int nr, const int R, const int T, float *out) \
    {                                                                                        \
        const int groups = w->k / 128, k = w->k;                                            \
        const __m512i m4 = _mm512_set1_epi8(0x0F);                                          \
        __m512 acc[4][TMAX];                                                                 \
        const uint8_t *q[4];                                                                 \
        const uint16_t *sc[4];                                                               \
        _Pragma("GCC unroll 4") for (int r = 0; r < R; r++) {                                \
            int row = rb + (r < nr ? r : 0);                                                 \
            q[r] = w->q + (size_t)row * (size_t)k / 2;                                       \
            sc[r] = w->scales + (size_t)row * (size_t)groups;                                \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) acc[r][t] = _mm512_setzero_ps(); \
        }                                                                                    \
        for (int g = 0; g < groups; g++) {                                                   \
            __m512 dv[TMAX];                                                                 \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++)                              \
                dv[t] = _mm512_set1_ps(d[(size_t)t * (size_t)groups + (size_t)g]);           \
            _Pragma("GCC unroll 4") for (int r = 0; r < R; r++) {                            \
                const uint8_t *qb = q[r] + (size_t)g * 64;                                   \
                _mm_prefetch((const char *)qb + I8_PF, _MM_HINT_T0);                         \
                __m512i v = _mm512_loadu_si512((const void *)qb);                            \
                __m512i lo = _mm512_and_si512(v, m4);                                        \
                __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);                  \
                __m512 vs = _mm512_set1_ps(_cvtsh_ss(sc[r][g]));                             \
                _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {                        \
                    const int8_t *xt = xq + (size_t)t * (size_t)k + (size_t)g * 128;         \
                    __m512i p = DOT(_mm512_setzero_si512(), lo,                              \
                                    _mm512_loadu_si512((const void *)xt));                   \
                    p = DOT(p, hi, _mm512_loadu_si512((const void *)(xt + 64)));             \
                    acc[r][t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(p), dv[t]), vs, \
                                                acc[r][t]);                                  \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        for (int r = 0; r < nr; r++) {                                                       \
            size_t ro = (size_t)(rb + r) * (size_t)groups;                                   \
            for (int t = 0; t < T; t++)                                                      \
                out[r * TMAX + t] = _mm512_reduce_add_ps(acc[r][t]) -                        \
                                    w4i8_corr(w->scales + ro, w->zeros + ro,                 \
                                              dsum + (size_t)t * (size_t)groups, groups);    \
        }                                                                                    \
    }

/* Weight rows in flight per tile of T activation rows: 4 streams while the
 * accumulators fit the 32 registers (R·T ≤ 16). */
#define I8_R(T) ((T) <= 4 ? 4 : 2)

#define W4I8_ROWS(NAME, BLOCK, ATTR)                                                         \
    ATTR static void NAME(const w4a16_packed_t *w, const int8_t *xq, const float *d,         \
                          const float *dsum, int m, int r0, int r1, uint16_t *y)             \
    {                                                                                        \
        int groups = w->k / 128;                                                             \
        for (int m0 = 0; m0 < m; m0 += TMAX) {                                               \
            int T = m - m0 < TMAX ? m - m0 : TMAX, R = I8_R(T);                              \
            const int8_t *xt = xq + (size_t)m0 * (size_t)w->k;                               \
            const float *dt = d + (size_t)m0 * (size_t)groups, *st = dsum + (size_t)m0 * (size_t)groups; \
            for (int rb = r0; rb < r1; rb += R) {                                            \
                int nr = r1 - rb < R ? r1 - rb : R;                                          \
                float out[4 * TMAX];                                                         \
                switch (T) {                                                                 \
                case 1: BLOCK(w, xt, dt, st, rb, nr, I8_R(1), 1, out); break;                \
                case 2: BLOCK(w, xt, dt, st, rb, nr, I8_R(2), 2, out); break;                \
                case 3: BLOCK(w, xt, dt, st, rb, nr, I8_R(3), 3, out); break;                \
                case 4: BLOCK(w, xt, dt, st, rb, nr, I8_R(4), 4, out); break;                \
                case 5: BLOCK(w, xt, dt, st, rb, nr, I8_R(5), 5, out); break;                \
                case 6: BLOCK(w, xt, dt, st, rb, nr, I8_R(6), 6, out); break;                \
                case 7: BLOCK(w, xt, dt, st, rb, nr, I8_R(7), 7, out); break;                \
                default: BLOCK(w, xt, dt, st, rb, nr, I8_R(8), 8, out); break;               \
                }                                                                            \
                for (int r = 0; r < nr; r++)                                                 \
                    for (int t = 0; t < T; t++)                                              \
                        y[(size_t)(m0 + t) * (size_t)w->n + (size_t)(rb + r)] = to_h(out[r * TMAX + t]); \
            }                                                                                \
        }                                                                                    \
    }

#define NO_ATTR
#define VNNI_ATTR __attribute__((target("avx512vnni")))
W4I8_BLOCK(w4i8_block_bw, NO_ATTR, DOT_MADDUBS)
W4I8_ROWS(w4i8_rows_bw, w4i8_block_bw, NO_ATTR)
W4I8_BLOCK(w4i8_block_vnni, VNNI_ATTR, DOT_VNNI)
W4I8_ROWS(w4i8_rows_vnni, w4i8_block_vnni, VNNI_ATTR)

/* The 16 zeros of a block's group (w4a16_packed_t.mi: byte j holds rows
 * j and j + 8 as nibbles) as floats in row order. */
static inline __m512 meta_zeros16(const uint8_t *zb)
{
    __m128i v = _mm_loadl_epi64((const __m128i *)zb), m = _mm_set1_epi8(0x0F);
    __m128i z = _mm_unpacklo_epi64(_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m));
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(z));
}

/* The int8 kernel on the interleaved copy (w4a16_packed_t.qi): the 16
 * lanes of a vector are 16 weight rows, so per 64-byte load the low nibbles
 * meet 4 activations broadcast (one dot step for 16 rows × 4 inputs) and
 * the high nibbles the next 4; the per-group scale, s·d and the zero term
 * −s·z·(d·Σxq) then cost 4 vector ops per 16 rows × 128 inputs instead of
 * per row (the row-major int8 kernel above pays them per row, which kept it
 * at M = 8 near the fp32 kernel's time). Each block of 16 rows is one
 * sequential stream; I8B blocks are walked at once for more streams. Two
 * dot chains per activation row (low / high nibbles) halve the dependency
 * chain of a group. y takes 16 consecutive outputs per store. */
#define W4I8R16_BLOCK(NAME, ATTR, DOT)                                                       \
    ATTR AI void NAME(const w4a16_packed_t *w, const int8_t *xq, const float *d,              \
                      const float *dsum, int b, int stride, const int NB, const int T, uint16_t *y) \
    {                                                                                        \
        const int groups = w->k / 128, k = w->k;                                            \
        const __m512i m4 = _mm512_set1_epi8(0x0F);                                          \
        __m512 acc[8][TMAX];                                                                 \
        const uint8_t *q[8];                                                                 \
        const uint8_t *mi[8];                                                                \
        _Pragma("GCC unroll 8") for (int bi = 0; bi < NB; bi++) {                            \
            size_t blk = (size_t)(b + bi * stride);                                          \
            q[bi] = w->qi + blk * 8 * (size_t)k;                                             \
            mi[bi] = w->mi + blk * (size_t)groups * W4I8_META_BYTES;                          \
            _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) acc[bi][t] = _mm512_setzero_ps(); \
        }                                                                                    \
        for (int g = 0; g < groups; g++) {                                                   \
            _Pragma("GCC unroll 8") for (int bi = 0; bi < NB; bi++) {                        \
                const uint8_t *qg = q[bi] + (size_t)g * 1024;                                \
                _mm_prefetch((const char *)(mi[bi] + (size_t)(g + I8_META_PF) * W4I8_META_BYTES), _MM_HINT_T0); \
                __m512i pa[TMAX], pb[TMAX];                                                  \
                _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {                        \
                    pa[t] = _mm512_setzero_si512();                                          \
                    pb[t] = _mm512_setzero_si512();                                          \
                }                                                                            \
                _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) {                      \
                    _mm_prefetch((const char *)qg + 64 * i + I8_PF, _MM_HINT_T0);            \
                    __m512i v = _mm512_load_si512((const void *)(qg + 64 * i));              \
                    __m512i lo = _mm512_and_si512(v, m4);                                    \
                    __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);              \
                    _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {                    \
                        const int8_t *xt = xq + (size_t)t * (size_t)k + (size_t)g * 128 + 8 * i; \
                        int32_t x0, x1;                                                      \
                        memcpy(&x0, xt, 4);                                                  \
                        memcpy(&x1, xt + 4, 4);                                              \
                        pa[t] = DOT(pa[t], lo, _mm512_set1_epi32(x0));                       \
                        pb[t] = DOT(pb[t], hi, _mm512_set1_epi32(x1));                       \
                    }                                                                        \
                }                                                                            \
                size_t gm = (size_t)g;                                                       \
                const uint8_t *mg = mi[bi] + gm * W4I8_META_BYTES;                           \
                __m512 sv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)mg));        \
                __m512 zs = _mm512_mul_ps(sv, meta_zeros16(mg + 32));                        \
                _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {                        \
                    size_t tg = (size_t)t * (size_t)groups + (size_t)g;                      \
                    __m512 f = _mm512_cvtepi32_ps(_mm512_add_epi32(pa[t], pb[t]));           \
                    acc[bi][t] = _mm512_fmadd_ps(f, _mm512_mul_ps(sv, _mm512_set1_ps(d[tg])), acc[bi][t]); \
                    acc[bi][t] = _mm512_fnmadd_ps(zs, _mm512_set1_ps(dsum[tg]), acc[bi][t]); \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        for (int bi = 0; bi < NB; bi++)                                                      \
            for (int t = 0; t < T; t++)                                                      \
                _mm256_storeu_si256((__m256i *)(y + (size_t)t * (size_t)w->n + 16 * (size_t)(b + bi * stride)), \
                                    _mm512_cvtps_ph(acc[bi][t], _MM_FROUND_TO_NEAREST_INT |  \
                                                                    _MM_FROUND_NO_EXC));     \
    }

/* Row blocks walked at once per tile of T activation rows (registers:
 * NB·T accumulators + 2·T dot chains). */
#define I8B(T) ((T) <= 4 ? 4 : 1)

/* One call of BLOCK per NB blocks b, b + stride, ...; T a constant. */
#define W4I8R16_CALL(BLOCK, b, stride, NB, T)                                                \
    switch (T) {                                                                             \
    case 1: BLOCK(w, xt, dt, st, b, stride, NB(1), 1, yt); break;                            \
    case 2: BLOCK(w, xt, dt, st, b, stride, NB(2), 2, yt); break;                            \
    case 3: BLOCK(w, xt, dt, st, b, stride, NB(3), 3, yt); break;                            \
    case 4: BLOCK(w, xt, dt, st, b, stride, NB(4), 4, yt); break;                            \
    case 5: BLOCK(w, xt, dt, st, b, stride, NB(5), 5, yt); break;                            \
    case 6: BLOCK(w, xt, dt, st, b, stride, NB(6), 6, yt); break;                            \
    case 7: BLOCK(w, xt, dt, st, b, stride, NB(7), 7, yt); break;                            \
    default: BLOCK(w, xt, dt, st, b, stride, NB(8), 8, yt); break;                           \
    }

#define I8B_ONE(T) 1

/* Blocks [b0, b1) split into I8B(T) equal runs, one stream each, walked in
 * lockstep: run r holds blocks b0 + r·len .. b0 + (r + 1)·len − 1, which lie
 * one after another in memory, so every stream is long and its prefetch
 * runs on into its own next block. (Walking I8B adjacent blocks at once and
 * then the next I8B made the streams 8·K bytes long: each restart lost its
 * prefetch lead.) The blocks left over run one at a time. */
#define W4I8R16_ROWS(NAME, BLOCK, ATTR)                                                      \
    ATTR static void NAME(const w4a16_packed_t *w, const int8_t *xq, const float *d,         \
                          const float *dsum, int m, int b0, int b1, uint16_t *y)             \
    {                                                                                        \
        int groups = w->k / 128;                                                             \
        for (int m0 = 0; m0 < m; m0 += TMAX) {                                               \
            int T = m - m0 < TMAX ? m - m0 : TMAX, NB = I8B(T);                              \
            const int8_t *xt = xq + (size_t)m0 * (size_t)w->k;                               \
            const float *dt = d + (size_t)m0 * (size_t)groups, *st = dsum + (size_t)m0 * (size_t)groups; \
            uint16_t *yt = y + (size_t)m0 * (size_t)w->n;                                    \
            int len = (b1 - b0) / NB, b = b0;                                                \
            for (int j = 0; j < len; j++) W4I8R16_CALL(BLOCK, b0 + j, len, I8B, T)           \
            b = b0 + NB * len;                                                               \
            for (; b < b1; b++) W4I8R16_CALL(BLOCK, b, 1, I8B_ONE, T)                        \
        }                                                                                    \
    }

W4I8R16_BLOCK(w4i8r16_block_bw, NO_ATTR, DOT_MADDUBS)
W4I8R16_ROWS(w4i8r16_rows_bw, w4i8r16_block_bw, NO_ATTR)
W4I8R16_BLOCK(w4i8r16_block_vnni, VNNI_ATTR, DOT_VNNI)
W4I8R16_ROWS(w4i8r16_rows_vnni, w4i8r16_block_vnni, VNNI_ATTR)

/* ---- AMX (tiles) for M > 8 --------------------------------------------
 *
 * TDPBSUD multiplies a tile of signed bytes A [rows][64] by a tile of
 * unsigned bytes B [16][64] laid out as B[k][4n + e] = b(4k + e, n), into
 * int32 C [rows][16]: C[t][n] += Σ_k Σ_e A[t][4k + e]·B[k][4n + e]. With A
 * = up to 16 rows of quantised activations (the natural xq layout, stride
 * K) and n = the 16 rows of a weight block, the low nibbles of step i of
 * the interleaved copy are exactly B's row for inputs 8i..8i+3 and the high
 * nibbles the row for 8i+4..8i+7: each 64-byte step is split into two B
 * rows in an L1 buffer, and one group of 128 inputs is two tile products.
 * Per group the 16 × T integer sums are then scaled as in the VNNI kernel.
 * Linux hands out tile state only on request (arch_prctl
 * ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); without it the first tile
 * instruction raises SIGILL, so amx_ready() asks once per process and the
 * kernel runs only where that succeeded. */
#define AMX_ATTR __attribute__((target("amx-tile,amx-int8")))
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

struct amx_cfg {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

/* 1 when this CPU has AMX-TILE and AMX-INT8, the OS enables tile state in
 * XCR0 and the kernel granted this process its use. Decided once (a racing
 * second caller repeats the same harmless request). */
static int amx_ready(void)
{
    static _Atomic int state = -1;
    int st = state;
    if (st >= 0) return st;
    unsigned a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
    st = 0;
    if ((d >> 24 & 1) && (d >> 25 & 1)) {
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        if ((lo & (3u << 17)) == (3u << 17) &&
            syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0)
            st = 1;
    }
    state = st;
    return st;
}

AMX_ATTR static void w4i8r16_rows_amx(const w4a16_packed_t *w, const int8_t *xq, const float *d,
                                      const float *dsum, int m, int b0, int b1, uint16_t *y)
{
    const int groups = w->k / 128, k = w->k;
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    _Alignas(64) uint8_t bt[2][16][64];
    _Alignas(64) int32_t ct[16][16];
    for (int m0 = 0; m0 < m; m0 += 16) {
        int T = m - m0 < 16 ? m - m0 : 16;
        struct amx_cfg cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.palette = 1;
        cfg.rows[0] = cfg.rows[1] = (uint8_t)T;   /* C, A */
        cfg.rows[2] = 16;                         /* B */
        cfg.colsb[0] = cfg.colsb[1] = cfg.colsb[2] = 64;
        _tile_loadconfig(&cfg);
        const int8_t *xt = xq + (size_t)m0 * (size_t)k;
        const float *dt = d + (size_t)m0 * (size_t)groups, *st = dsum + (size_t)m0 * (size_t)groups;
        for (int b = b0; b < b1; b++) {
            const uint8_t *q = w->qi + (size_t)b * 8 * (size_t)k;
            const uint8_t *mi = w->mi + (size_t)b * (size_t)groups * W4I8_META_BYTES;
            __m512 acc[16];
            for (int t = 0; t < T; t++) acc[t] = _mm512_setzero_ps();
            for (int g = 0; g < groups; g++) {
                const uint8_t *qg = q + (size_t)g * 1024;
                const uint8_t *mg = mi + (size_t)g * W4I8_META_BYTES;
                _mm_prefetch((const char *)(mg + I8_META_PF * W4I8_META_BYTES), _MM_HINT_T0);
                for (int i = 0; i < 16; i++) {
                    _mm_prefetch((const char *)qg + 64 * i + I8_PF, _MM_HINT_T0);
                    __m512i v = _mm512_load_si512((const void *)(qg + 64 * i));
                    _mm512_store_si512((void *)bt[i / 8][2 * (i % 8)], _mm512_and_si512(v, m4));
                    _mm512_store_si512((void *)bt[i / 8][2 * (i % 8) + 1],
                                       _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
                }
                _tile_zero(0);
                _tile_loadd(1, xt + (size_t)g * 128, k);
                _tile_loadd(2, bt[0], 64);
                _tile_dpbsud(0, 1, 2);
                _tile_loadd(1, xt + (size_t)g * 128 + 64, k);
                _tile_loadd(2, bt[1], 64);
                _tile_dpbsud(0, 1, 2);
                _tile_stored(0, ct, 64);
                __m512 sv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)mg));
                __m512 zs = _mm512_mul_ps(sv, meta_zeros16(mg + 32));
                for (int t = 0; t < T; t++) {
                    size_t tg = (size_t)t * (size_t)groups + (size_t)g;
                    __m512 f = _mm512_cvtepi32_ps(_mm512_load_si512((const void *)ct[t]));
                    acc[t] = _mm512_fmadd_ps(f, _mm512_mul_ps(sv, _mm512_set1_ps(dt[tg])), acc[t]);
                    acc[t] = _mm512_fnmadd_ps(zs, _mm512_set1_ps(st[tg]), acc[t]);
                }
            }
            for (int t = 0; t < T; t++)
                _mm256_storeu_si256((__m256i *)(y + (size_t)(m0 + t) * (size_t)w->n + 16 * (size_t)b),
                                    _mm512_cvtps_ph(acc[t], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        }
        _tile_release();
    }
}

/* ext (gemv_impl.h, gemv.h's GEMV_I8_DOT_*): AMX tiles for M > 8 where
 * allowed and available, else VNNI where the CPU has it, else vpmaddubsw.
 * Up to 8 rows the VNNI kernel reads the weights once and was as fast or
 * faster (2 threads, 11008×4096 from DRAM, side by side: M = 2 783 vs 834
 * µs, M = 8 874 vs 922); beyond 8 it walks the weights again per tile of 8
 * and AMX, up to 16 rows in one pass, won (M = 16 1935 vs 1046 µs). */
#define AMX_MIN_M (TMAX + 1)

static void w4i8_r16(const w4a16_packed_t *w, const int8_t *xq, const float *d,
                     const float *dsum, int m, int b0, int b1, uint16_t *y, int ext)
{
    if (ext >= GEMV_I8_DOT_AMX && m >= AMX_MIN_M && amx_ready())
        w4i8r16_rows_amx(w, xq, d, dsum, m, b0, b1, y);
    else if (ext >= GEMV_I8_DOT_VNNI && __builtin_cpu_supports("avx512vnni"))
        w4i8r16_rows_vnni(w, xq, d, dsum, m, b0, b1, y);
    else
        w4i8r16_rows_bw(w, xq, d, dsum, m, b0, b1, y);
}

int gemv_avx512_amx_ready(int m) { return m >= AMX_MIN_M && amx_ready(); }

/* VNNI where the CPU has it (checked once per call: cheap, cached by libgcc). */
static void w4i8_rows(const w4a16_packed_t *w, const int8_t *xq, const float *d,
                      const float *dsum, int m, int r0, int r1, uint16_t *y, int ext)
{
    if (ext >= GEMV_I8_DOT_VNNI && __builtin_cpu_supports("avx512vnni"))
        w4i8_rows_vnni(w, xq, d, dsum, m, r0, r1, y);
    else w4i8_rows_bw(w, xq, d, dsum, m, r0, r1, y);
}

/* The int8 activation quantiser (gemv_impl.h): per group of 128, max|x|
 * over 8 vectors, then round(x·(127/max)) with the conversion's explicit
 * round-to-nearest-even (the portable loop's 1.5·2^23 trick gives the same
 * integers), narrowed to bytes. */
static void w4i8_quant(const uint16_t *x, size_t ng, int8_t *xq, float *d, float *dsum)
{
    for (size_t g = 0; g < ng; g++) {
        const uint16_t *xg = x + g * 128;
        __m512 v[8], mx = _mm512_setzero_ps();
        for (int i = 0; i < 8; i++) {
            v[i] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(xg + 16 * i)));
            mx = _mm512_max_ps(mx, _mm512_abs_ps(v[i]));
        }
        float amax = _mm512_reduce_max_ps(mx);
        float dg = amax / 127.0f, inv = amax > 0.0f ? 127.0f / amax : 0.0f;
        const __m512 vinv = _mm512_set1_ps(inv);
        __m512i sum = _mm512_setzero_si512();
        for (int i = 0; i < 8; i++) {
            __m512i q = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v[i], vinv),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            sum = _mm512_add_epi32(sum, q);
            _mm_storeu_si128((__m128i *)(xq + g * 128 + 16 * (size_t)i), _mm512_cvtepi32_epi8(q));
        }
        d[g] = dg;
        dsum[g] = dg * (float)_mm512_reduce_add_epi32(sum);
    }
}

/* Dense tiles: LOADW(ptr, count-mask) yields 16 fp32 weights. 64 inputs per
 * main step (4 vectors), then 16 at a time, then one masked step. */
#define DENSE_TILE(NAME, WT, LOADW, LOADW_MASK, NAF, PFON)                                   \
    AI void NAME(const WT *w, int k, const float *x, const int T, float *out)                 \
    {                                                                                        \
        const int NA = NAF(T);                                                               \
        const int pf_ = PFON(k);                                                             \
        __m512 acc[TMAX][4];                                                                 \
        for (int t = 0; t < T; t++)                                                          \
            for (int a = 0; a < NA; a++) acc[t][a] = _mm512_setzero_ps();                    \
        int c = 0;                                                                           \
        for (; c + 64 <= k; c += 64) {                                                       \
            if (pf_)                                                                         \
                for (size_t l_ = 0; l_ < 64 * sizeof(WT); l_ += 64)                          \
                    _mm_prefetch((const char *)(w + c) + PF_BYTES + l_, _MM_HINT_T0);        \
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

#define PF_ALWAYS(k) 1
DENSE_TILE(f16_tile, uint16_t, LOAD_H, LOAD_H_MASK, NACC, PF_ALWAYS)
DENSE_TILE(f32_tile, float, LOAD_F, LOAD_F_MASK, NACC, PF_ALWAYS)
/* Batch-invariant tiles (gemv_f16_f32): the same two accumulators per
 * activation row at every T, so a row's sum does not depend on how many
 * rows share its tile. No software prefetch for rows up to 8 KiB (K ≤
 * 4096), the shapes of the real model (kernels/llm): the rows of a slab
 * are one sequential stream, which the hardware prefetcher follows alone,
 * and the prefetches only cost. Measured side by side on a 2-core Zen 4
 * (one thread, M = 1, SmolLM2-135M's 30 layers and head from DRAM): 14.3 →
 * 18.6 GB/s; K = 2048 and 4096 gained alike; K = 11008 was equal either
 * way, and keeps it. */
#define PF_LONG_ROWS(k) ((k) > 4096)
#define NACC_FIXED(T) 2
DENSE_TILE(f16_tile_fixed, uint16_t, LOAD_H, LOAD_H_MASK, NACC_FIXED, PF_LONG_ROWS)

#define STORE_F(v) (v)
DENSE_ROWS(f16_rows, f16_tile, uint16_t, uint16_t, to_h)
DENSE_ROWS(f32_rows, f32_tile, float, float, STORE_F)
DENSE_ROWS(f16_rows_f32_tiles, f16_tile_fixed, uint16_t, float, STORE_F)

/* gemv_f16_f32 for many activation rows (prefill, large verification
 * batches): tiles of 4 weight rows × 2 activation rows, each of the 8 sums
 * running exactly the operations of f16_tile_fixed in its order (two
 * accumulators: the vectors at c and c + 32 of every 64 inputs into the
 * first, c + 16 and c + 48 into the second; 16-input steps and the masked
 * tail into the first; then first + second, reduced), so a row's result is
 * the same bits whichever tile computed it (tests/kernels/test_gemv.c).
 * 16 accumulators share each activation load among 4 weight rows, where
 * f16_tile_fixed's 8-row tiles load one activation vector per FMA; and the
 * activation rows go in blocks that stay in L2 while the slab's weight
 * rows pass over them, where every weight row used to re-stream all of x.
 * Measured side by side on a 2-core Zen 4 (one thread, SmolLM2-135M's
 * shapes, fastest of repeated runs): M = 64, 1.45× the 8-row tiles, M = 16
 * and 24 about 1.2×; M = 8 is slower this way (four
 * interleaved weight streams from DRAM), so below F16F32_BIG_M the 8-row
 * tiles serve. */
#define F16F32_BIG_M 16
#define F16F32_X_BLOCK_BYTES (128 * 1024)

AI void f16_tile_r4(const uint16_t *w, int k, const float *x, const int T, float *y, size_t ldy)
{
    __m512 a0[4][2], a1[4][2];
    for (int r = 0; r < 4; r++)
        for (int t = 0; t < T; t++) a0[r][t] = a1[r][t] = _mm512_setzero_ps();
    int c = 0;
    for (; c + 64 <= k; c += 64)
        for (int r = 0; r < 4; r++) {
            const uint16_t *wr = w + (size_t)r * (size_t)k + c;
            __m512 w0 = LOAD_H(wr), w1 = LOAD_H(wr + 16), w2 = LOAD_H(wr + 32), w3 = LOAD_H(wr + 48);
            for (int t = 0; t < T; t++) {
                const float *xt = x + (size_t)t * (size_t)k + c;
                a0[r][t] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(xt), a0[r][t]);
                a1[r][t] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(xt + 16), a1[r][t]);
                a0[r][t] = _mm512_fmadd_ps(w2, _mm512_loadu_ps(xt + 32), a0[r][t]);
                a1[r][t] = _mm512_fmadd_ps(w3, _mm512_loadu_ps(xt + 48), a1[r][t]);
            }
        }
    for (; c + 16 <= k; c += 16)
        for (int r = 0; r < 4; r++) {
            __m512 w0 = LOAD_H(w + (size_t)r * (size_t)k + c);
            for (int t = 0; t < T; t++)
                a0[r][t] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x + (size_t)t * (size_t)k + c), a0[r][t]);
        }
    if (c < k) {
        __mmask16 mk = (__mmask16)((1u << (k - c)) - 1u);
        for (int r = 0; r < 4; r++) {
            __m512 w0 = LOAD_H_MASK(mk, w + (size_t)r * (size_t)k + c);
            for (int t = 0; t < T; t++)
                a0[r][t] = _mm512_fmadd_ps(
                    w0, _mm512_maskz_loadu_ps(mk, x + (size_t)t * (size_t)k + c), a0[r][t]);
        }
    }
    for (int t = 0; t < T; t++)
        for (int r = 0; r < 4; r++)
            y[(size_t)t * ldy + (size_t)r] = _mm512_reduce_add_ps(_mm512_add_ps(a0[r][t], a1[r][t]));
}

static void f16_rows_f32(const uint16_t *w, int n, int k, const float *x, int m, int r0, int r1,
                         float *y)
{
    if (m < F16F32_BIG_M) {
        f16_rows_f32_tiles(w, n, k, x, m, r0, r1, y);
        return;
    }
    int mbs = (int)(F16F32_X_BLOCK_BYTES / (4 * (size_t)k));
    if (mbs < 2) mbs = 2;
    int r4 = r0 + (r1 - r0) / 4 * 4;
    for (int mb = 0; mb < m; mb += mbs) {
        int me = mb + mbs < m ? mb + mbs : m;
        const float *xb = x + (size_t)mb * (size_t)k;
        float *yb = y + (size_t)mb * (size_t)n;
        for (int r = r0; r < r4; r += 4) {
            const uint16_t *wr = w + (size_t)r * (size_t)k;
            int t = 0;
            for (; t + 2 <= me - mb; t += 2)
                f16_tile_r4(wr, k, xb + (size_t)t * (size_t)k, 2, yb + (size_t)t * (size_t)n + r,
                            (size_t)n);
            if (t < me - mb)
                f16_tile_r4(wr, k, xb + (size_t)t * (size_t)k, 1, yb + (size_t)t * (size_t)n + r,
                            (size_t)n);
        }
        if (r4 < r1) f16_rows_f32_tiles(w, n, k, xb, me - mb, r4, r1, yb);
    }
}

static void h2f(const uint16_t *h, float *f, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(f + i, LOAD_H(h + i));
    if (i < n) {
        __mmask16 mk = (__mmask16)((1u << (n - i)) - 1u);
        _mm512_mask_storeu_ps(f + i, mk, LOAD_H_MASK(mk, h + i));
    }
}

static void f2h(const float *f, uint16_t *h, size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(h + i),
                            _mm512_cvtps_ph(_mm512_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    if (i < n) {
        __mmask16 mk = (__mmask16)((1u << (n - i)) - 1u);
        _mm256_mask_storeu_epi16(h + i, mk,
                                 _mm512_cvtps_ph(_mm512_maskz_loadu_ps(mk, f + i),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
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

/* e^x for x ≤ 0 (clamped at −87: e^−87 is still a normal float):
 * x = n·ln2 + r, |r| ≤ ln2/2 (Cephes split of ln2), e^r by its degree-6
 * Taylor polynomial (truncation 0.347^7/7! ≈ 1.3e−7 relative), times 2^n. */
static inline __m512 exp_neg(__m512 x)
{
    x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 720.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

/* Positions ahead to prefetch: rows of one head are `stride` apart (8 KiB
 * for a 7B model), which the hardware prefetcher does not follow well. */
#define ATTN_PF 8

static inline __mmask16 tail_mask(int left)
{
    return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
}

/* out[0..16·NV) (masked to `left` dims) = inv · Σ_p sc[p]·v[p]: NV is a
 * compile-time constant so the accumulators stay in registers. */
AI void attn_mix(const float *sc, const uint16_t *v, size_t stride, int npos, int left,
                 const int NV, __m512 inv, float *out)
{
    __m512 acc[8];
    __mmask16 mk[8];
    for (int i = 0; i < NV; i++) {
        acc[i] = _mm512_setzero_ps();
        mk[i] = tail_mask(left - 16 * i);
    }
    for (int p = 0; p < npos; p++) {
        const __m512 w = _mm512_set1_ps(sc[p]);
        const uint16_t *vp = v + (size_t)p * stride;
        for (int l = 0; l < 32 * NV; l += 32)
            _mm_prefetch((const char *)(vp + ATTN_PF * stride + l), _MM_HINT_T0);
        for (int i = 0; i < NV; i++) acc[i] = _mm512_fmadd_ps(w, LOAD_H_MASK(mk[i], vp + 16 * i), acc[i]);
    }
    for (int i = 0; i < NV; i++) _mm512_mask_storeu_ps(out + 16 * i, mk[i], _mm512_mul_ps(acc[i], inv));
}

/* Fused head: scores (one K row read per position), max, vector exp and
 * sum, then values with up to 8 accumulators (128 dims) per pass. Replaces
 * per-position calls and scalar expf, which left attention at 2–13 GB/s. */
static void attn_head(const float *q, const uint16_t *k, const uint16_t *v, size_t stride,
                      int npos, int d, float scale, float *sc, float *out)
{
    __m512 mx = _mm512_set1_ps(-INFINITY);
    for (int p = 0; p < npos; p++) {
        const uint16_t *kp = k + (size_t)p * stride;
        for (int l = 0; l < d; l += 32)
            _mm_prefetch((const char *)(kp + ATTN_PF * stride + l), _MM_HINT_T0);
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
        int e = 0;
        for (; e + 32 <= d; e += 32) {
            a0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + e), LOAD_H(kp + e), a0);
            a1 = _mm512_fmadd_ps(_mm512_loadu_ps(q + e + 16), LOAD_H(kp + e + 16), a1);
        }
        for (; e < d; e += 16) {
            __mmask16 mk = tail_mask(d - e);
            a0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mk, q + e), LOAD_H_MASK(mk, kp + e), a0);
        }
        sc[p] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1)) * scale;
    }
    for (int p = 0; p < npos; p += 16)
        mx = _mm512_mask_max_ps(mx, tail_mask(npos - p), mx,
                                _mm512_maskz_loadu_ps(tail_mask(npos - p), sc + p));
    const __m512 vmax = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
    __m512 vsum = _mm512_setzero_ps();
    for (int p = 0; p < npos; p += 16) {
        __mmask16 mk = tail_mask(npos - p);
        __m512 w = _mm512_maskz_mov_ps(mk, exp_neg(_mm512_sub_ps(_mm512_maskz_loadu_ps(mk, sc + p), vmax)));
        _mm512_mask_storeu_ps(sc + p, mk, w);
        vsum = _mm512_add_ps(vsum, w);
    }
    const __m512 inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(vsum));
    for (int e0 = 0; e0 < d; e0 += 128) {
        int nv = (d - e0 + 15) / 16;
        switch (nv > 8 ? 8 : nv) {
        case 1: attn_mix(sc, v + e0, stride, npos, d - e0, 1, inv, out + e0); break;
        case 2: attn_mix(sc, v + e0, stride, npos, d - e0, 2, inv, out + e0); break;
        case 3: attn_mix(sc, v + e0, stride, npos, d - e0, 3, inv, out + e0); break;
        case 4: attn_mix(sc, v + e0, stride, npos, d - e0, 4, inv, out + e0); break;
        case 5: attn_mix(sc, v + e0, stride, npos, d - e0, 5, inv, out + e0); break;
        case 6: attn_mix(sc, v + e0, stride, npos, d - e0, 6, inv, out + e0); break;
        case 7: attn_mix(sc, v + e0, stride, npos, d - e0, 7, inv, out + e0); break;
        default: attn_mix(sc, v + e0, stride, npos, d - e0, 8, inv, out + e0); break;
        }
    }
}

const gemv_impl_t gemv_impl_avx512 = {w4_rows, f16_rows, f32_rows, h2f, dot_f16, axpy_f16, attn_head,
                                      w4_xperm, w4i8_rows, w4i8_r16, w4i8_quant, f16_rows_f32, f2h};

#else
typedef int gemv_avx512_empty_unit;
#endif
