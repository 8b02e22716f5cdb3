/* gemv_avx2 — AVX2 + FMA + F16C kernels; compiled with those flags only here
 * and called only when cpu_features() reports them.
 *
 * W4A16, M ≤ 2 (w4_tile64): x is reordered and scaled once per call
 * (w4_xperm) so that the packed bytes need no shuffle at all: one 32-byte
 * load holds 64 nibbles as 8 dwords of 8; nibble n is isolated IN PLACE by
 * one AND (the top one by a shift) and converted as the integer q·16^n —
 * exact, four significant bits — against x·16^−n, also exact, so each
 * product is the reference's q·x. Σq·x per group is scaled by s once per
 * group and the zero enters as −z·s·Σx. That is 3 vector ops per 8 weights
 * (AND, convert, FMA) against 3.5 for the older decode (w4_tile: two byte
 * shuffles per 32 weights spread bytes over dwords, then AND / shift,
 * convert, FMA), and op count is what bounds AVX2 here: the loop is
 * compute-bound, not memory-bound. Measured on a 2-core Zen 5, an earlier
 * development machine (AVX2 path, 2 threads, M = 1,
 * g128, weights from DRAM, `calibrate --bench --isa avx2`): w4_tile 24–25
 * GB/s; in-place decode 28.6; group of 128 as a compile-time constant (the
 * two 64-input steps unroll) 30.3 (4096×4096 at M = 2: 452 → 407 µs,
 * weights in L3). Tried and dropped: 2 or 8 accumulators
 * instead of 4 (27.8, 27.2); converting a row's scales and zero terms 64
 * groups at a time (25: slower); and skipping the convert by reading the
 * masked nibble as a denormal float, q·2^(4n−149), which reached 37 GB/s
 * but gives wrong results under DAZ and relies on denormal FMA inputs being
 * cheap, which Intel cores (most AVX2-only laptops) do not promise. With
 * M ≥ 3 the activation traffic, not the decode, limits (4096×4096, M = 8:
 * 2.0 ms w4_tile, 2.2 ms w4_tile64), so w4_tile stays for those and for
 * groups that are not a multiple of 64.
 */
#if defined(__x86_64__)
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "gemv_impl.h"

#define AI static inline __attribute__((always_inline))
#define TMAX 8
#define NACC(T) ((T) <= 1 ? 4 : (T) <= 2 ? 2 : 1)
/* Software prefetch distance along a weight row (see gemv_avx512.c). */
#define PF_BYTES 8192

static inline uint16_t to_h(float f)
{
    return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

static inline float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Dword i of 128-bit lane L takes byte 8H + 4L + i of the broadcast block:
 * half H = 0 spreads bytes 0..7, H = 1 bytes 8..15, with in-lane shuffles. */
#define SPREAD_IDX(B) (char)(B), (char)0x80, (char)0x80, (char)0x80, \
                      (char)((B) + 1), (char)0x80, (char)0x80, (char)0x80, \
                      (char)((B) + 2), (char)0x80, (char)0x80, (char)0x80, \
                      (char)((B) + 3), (char)0x80, (char)0x80, (char)0x80

AI void w4_tile(const uint8_t *q, const uint16_t *sc, const uint8_t *zp, int groups, int group,
                const float *x, const float *xsum, int k, const int T, float *out)
{
    __m256 acc[TMAX];
    float corr[TMAX];
    for (int t = 0; t < T; t++) {
        acc[t] = _mm256_setzero_ps();
        corr[t] = 0.0f;
    }
    const __m256i sp0 = _mm256_setr_epi8(SPREAD_IDX(0), SPREAD_IDX(4));
    const __m256i sp1 = _mm256_setr_epi8(SPREAD_IDX(8), SPREAD_IDX(12));
    const __m256i mask = _mm256_set1_epi32(0x0F);
    const int nb = group / 32;
    for (int g = 0; g < groups; g++) {
        const uint8_t *qg = q + (size_t)g * (size_t)(group / 2);
        const float *xg = x + (size_t)g * (size_t)group;
        _mm_prefetch((const char *)qg + PF_BYTES, _MM_HINT_T0);
        /* Σ q·x per group in fresh accumulators, then acc += s·Σ; the zero
         * enters as −z·s·Σx (see gemv_avx512.c). */
        __m256 ga[TMAX][2];
        for (int t = 0; t < T; t++) ga[t][0] = ga[t][1] = _mm256_setzero_ps();
        for (int b = 0; b < nb; b++) {
            __m256i v = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(qg + 16 * b)));
            __m256i v0 = _mm256_shuffle_epi8(v, sp0), v1 = _mm256_shuffle_epi8(v, sp1);
            __m256 w0 = _mm256_cvtepi32_ps(_mm256_and_si256(v0, mask));
            __m256 w1 = _mm256_cvtepi32_ps(_mm256_and_si256(v1, mask));
            __m256 w2 = _mm256_cvtepi32_ps(_mm256_srli_epi32(v0, 4));   /* dword ≤ 255 */
            __m256 w3 = _mm256_cvtepi32_ps(_mm256_srli_epi32(v1, 4));
            for (int t = 0; t < T; t++) {
                const float *xt = xg + (size_t)t * (size_t)k + 32 * b;
                ga[t][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xt), ga[t][0]);
                ga[t][1] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xt + 8), ga[t][1]);
                ga[t][0] = _mm256_fmadd_ps(w2, _mm256_loadu_ps(xt + 16), ga[t][0]);
                ga[t][1] = _mm256_fmadd_ps(w3, _mm256_loadu_ps(xt + 24), ga[t][1]);
            }
        }
        float s = _cvtsh_ss(sc[g]);
        const __m256 vs = _mm256_set1_ps(s);
        float zs = s * (float)zp[g];
        for (int t = 0; t < T; t++) {
            acc[t] = _mm256_fmadd_ps(_mm256_add_ps(ga[t][0], ga[t][1]), vs, acc[t]);
            corr[t] += zs * xsum[(size_t)t * (size_t)groups + (size_t)g];
        }
    }
    for (int t = 0; t < T; t++) out[t] = hsum(acc[t]) - corr[t];
}

/* Groups that are a multiple of 64, x reordered and scaled by w4_xperm (see
 * the header): per 64 inputs one 32-byte load, then per nibble position an
 * AND (or the shift), a convert and an FMA. The 16^−n scaling of x is a
 * power of two far from fp32 under/overflow (fp16 x ≥ 2^−24 → ≥ 2^−48), so
 * the products equal q·x bit for bit. */
AI void w4_tile64(const uint8_t *q, const uint16_t *sc, const uint8_t *zp, int groups, int group,
                  const float *x, const float *xsum, int k, const int T, float *out)
{
    const int NA = NACC(T);
    __m256 acc[TMAX];
    float corr[TMAX];
    for (int t = 0; t < T; t++) {
        acc[t] = _mm256_setzero_ps();
        corr[t] = 0.0f;
    }
    for (int g = 0; g < groups; g++) {
        __m256 ga[TMAX][4];
        for (int t = 0; t < T; t++)
            for (int a = 0; a < NA; a++) ga[t][a] = _mm256_setzero_ps();
        for (int c = 0; c < group; c += 64) {
            const uint8_t *qb = q + ((size_t)g * (size_t)group + (size_t)c) / 2;
            const float *xb = x + (size_t)g * (size_t)group + (size_t)c;
            _mm_prefetch((const char *)qb + PF_BYTES, _MM_HINT_T0);
            const __m256i v = _mm256_loadu_si256((const __m256i *)qb);
#define W4_NIB(N)                                                                            \
    do {                                                                                     \
        __m256i n_ = (N) == 7 ? _mm256_srli_epi32(v, 28)                                     \
                              : _mm256_and_si256(v, _mm256_set1_epi32((int)(0xFu << (4 * (N)))));    \
        __m256 w_ = _mm256_cvtepi32_ps(n_);                                                  \
        for (int t = 0; t < T; t++)                                                          \
            ga[t][(N) % NA] = _mm256_fmadd_ps(                                               \
                w_, _mm256_loadu_ps(xb + (size_t)t * (size_t)k + 8 * (N)), ga[t][(N) % NA]); \
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
        const float s = _cvtsh_ss(sc[g]);
        const __m256 vs = _mm256_set1_ps(s);
        const float zs = s * (float)zp[g];
        for (int t = 0; t < T; t++) {
            __m256 sum = ga[t][0];
            for (int a = 1; a < NA; a++) sum = _mm256_add_ps(sum, ga[t][a]);
            acc[t] = _mm256_fmadd_ps(sum, vs, acc[t]);
            corr[t] += zs * xsum[(size_t)t * (size_t)groups + (size_t)g];
        }
    }
    for (int t = 0; t < T; t++) out[t] = hsum(acc[t]) - corr[t];
}

/* Both sides of the call (w4_xperm, w4_rows) apply this same rule. */
static inline int use_tile64(int m, int group)
{
    return m <= 2 && group % 64 == 0;
}

/* x in the order w4_tile64 consumes: within each block of 64 inputs,
 * position 8n + i holds input 32(i/4) + 4(i mod 4) + n/2 + 16(n mod 2) —
 * nibble n of dword i of the block's 32 bytes in the w4a16_packed_t layout —
 * times 16^−n (n < 7; the top nibble is shifted down instead). */
static int w4_xperm(const float *x, int m, int k, int group, float *xp)
{
    static const float scale[8] = {1.0f, 0x1p-4f, 0x1p-8f, 0x1p-12f,
                                   0x1p-16f, 0x1p-20f, 0x1p-24f, 1.0f};
    if (!use_tile64(m, group)) return 0;
    for (int t = 0; t < m; t++)
        for (int b = 0; b < k; b += 64) {
            const float *xs = x + (size_t)t * (size_t)k + (size_t)b;
            float *xd = xp + (size_t)t * (size_t)k + (size_t)b;
            for (int n = 0; n < 8; n++)
                for (int i = 0; i < 8; i++)
                    xd[8 * n + i] = xs[32 * (i / 4) + 4 * (i % 4) + n / 2 + 16 * (n % 2)] * scale[n];
        }
    return 1;
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
            if (use_tile64(m, w->group)) {
                /* T = m ≤ 2; a constant group of 128 unrolls its two steps. */
                if (w->group == 128 && T == 1) w4_tile64(q, sc, zp, groups, 128, xt, st, w->k, 1, out);
                else if (w->group == 128) w4_tile64(q, sc, zp, groups, 128, xt, st, w->k, 2, out);
                else if (T == 1) w4_tile64(q, sc, zp, groups, w->group, xt, st, w->k, 1, out);
                else w4_tile64(q, sc, zp, groups, w->group, xt, st, w->k, 2, out);
            } else {
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
            }
            for (int t = 0; t < T; t++) y[(size_t)(m0 + t) * (size_t)w->n + (size_t)r] = to_h(out[t]);
        }
    }
}

/* The int8 kernel on the interleaved copy (gemv.h, w4a16_packed_t.qi;
 * see gemv_avx512.c for the scheme): one 64-byte step of a 16-row block is
 * two 32-byte halves of 8 rows. Per half and activation row the low
 * nibbles meet 4 activations broadcast and the high ones the next 4, one
 * dword (one row) per lane. With AVX-VNNI that is two vpdpbusd (u8×s8,
 * 4 products summed into each dword, exact); without, vpmaddubsw (pairs,
 * 4 products ≤ 4·15·127 fit the 16-bit sum) + vpmaddwd by ones. Per group
 * the dwords are converted once and scaled (s·d), and −s·z·(d·Σxq) added.
 * At M = 1 four blocks are walked at once, each its own long stream (see
 * W4I8R16_ROWS in gemv_avx512.c): one stream per thread left the M = 1 rate
 * near 80 % of the read ceiling. */
#define I8_PF 8192
#define I8_META_PF 16   /* groups ahead for the scales and zeros (see gemv_avx512.c) */

/* Zeros of rows 8h..8h+7 of a block's group (w4a16_packed_t.mi: byte j
 * holds rows j and j + 8 as nibbles) as floats. */
static inline __m256 meta_zeros8(const uint8_t *zb, int h)
{
    __m128i v = _mm_loadl_epi64((const __m128i *)zb);
    if (h) v = _mm_srli_epi16(v, 4);
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_and_si128(v, _mm_set1_epi8(0x0F))));
}

/* The scales of rows 8h..8h+7 of a block's group, and those times the
 * zeros: what i8_scale takes. */
static inline __m256 meta_scales8(const uint8_t *mg, int h, __m256 *zs)
{
    __m256 sv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(mg + 16 * h)));
    *zs = _mm256_mul_ps(sv, meta_zeros8(mg + 32, h));
    return sv;
}

/* acc += s·d·Σq·xq − s·z·(d·Σxq) for one row and half (p = Σq·xq). */
static inline __m256 i8_scale(__m256 acc, __m256i p, __m256 sv, __m256 zs, float d, float dsum)
{
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(sv, _mm256_set1_ps(d)), acc);
    return _mm256_fnmadd_ps(zs, _mm256_set1_ps(dsum), acc);
}

/* Stores block blk's 16 outputs (acc[t][h]: rows 8h..8h+7) for T
 * activation rows, n outputs apart. */
static inline void i8_store_block(uint16_t *y, size_t n, size_t blk, __m256 (*acc)[2], int T)
{
    for (int t = 0; t < T; t++)
        for (int h = 0; h < 2; h++)
            _mm_storeu_si128((__m128i *)(y + (size_t)t * n + 16 * blk + 8 * (size_t)h),
                             _mm256_cvtps_ph(acc[t][h], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* The start of a one-block tile kernel of T rows (W4I8R16_HALVES,
 * W4I8R16_QUADS): block b's weights q and metadata mi, zeroed sums. */
#define W4I8R16_TILE_BEGIN                                                                           const int groups = w->k / 128, k = w->k;                                                    __m256 acc[8][2];                                                                            const uint8_t *q = w->qi + (size_t)b * 8 * (size_t)k;                                        const uint8_t *mi = w->mi + (size_t)b * (size_t)groups * W4I8_META_BYTES;                     _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) acc[t][0] = acc[t][1] = _mm256_setzero_ps();

/* The low and the high nibbles of 32 packed weight bytes, one per byte. */
AI void i8_nibbles(__m256i v, __m256i *lo, __m256i *hi)
{
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    *lo = _mm256_and_si256(v, m4);
    *hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
}

/* The 8 int8 activations at x as two broadcasts of 4: the operands of one
 * DOT2 step against a row's low and high nibbles. */
AI void i8_bcast8(const int8_t *x, __m256i *b0, __m256i *b1)
{
    int32_t x0, x1;
    memcpy(&x0, x, 4);
    memcpy(&x1, x + 4, 4);
    *b0 = _mm256_set1_epi32(x0);
    *b1 = _mm256_set1_epi32(x1);
}

#define DOT2_MADDUBS(p, lo, hi, x0, x1)                                                      \
    _mm256_add_epi32((p), _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16((lo), (x0)), \
                                                             _mm256_maddubs_epi16((hi), (x1))), \
                                            _mm256_set1_epi16(1)))
#define DOT2_VNNI(p, lo, hi, x0, x1)                                                         \
    _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32((p), (lo), (x0)), (hi), (x1))


/* NB blocks b, b + stride, ... for T activation rows. */
#define W4I8R16_BLOCK2(NAME, ATTR, DOT2)                                                     \
    ATTR AI void NAME(const w4a16_packed_t *w, const int8_t *xq, const float *d,              \
                      const float *dsum, int b, int stride, const int NB, const int T,        \
                      uint16_t *y)                                                           \
    {                                                                                        \
        const int groups = w->k / 128, k = w->k;                                            \
        __m256 acc[4][4][2];                                                                 \
        const uint8_t *q[4];                                                                 \
        const uint8_t *mi[4];                                                                \
        _Pragma("GCC unroll 4") for (int bi = 0; bi < NB; bi++) {                            \
            size_t blk = (size_t)(b + bi * stride);                                          \
            q[bi] = w->qi + blk * 8 * (size_t)k;                                             \
            mi[bi] = w->mi + blk * (size_t)groups * W4I8_META_BYTES;                          \
            _Pragma("GCC unroll 4") for (int t = 0; t < T; t++) acc[bi][t][0] = acc[bi][t][1] = _mm256_setzero_ps(); \
        }                                                                                    \
        for (int g = 0; g < groups; g++) {                                                   \
            __m256i p[4][4][2];                                                              \
            _Pragma("GCC unroll 4") for (int bi = 0; bi < NB; bi++) {                        \
                _mm_prefetch((const char *)(mi[bi] + (size_t)(g + I8_META_PF) * W4I8_META_BYTES), _MM_HINT_T0); \
                _Pragma("GCC unroll 4") for (int t = 0; t < T; t++)                          \
                    p[bi][t][0] = p[bi][t][1] = _mm256_setzero_si256();                      \
            }                                                                                \
            _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) {                          \
                _Pragma("GCC unroll 4") for (int bi = 0; bi < NB; bi++) {                    \
                    const uint8_t *qg = q[bi] + (size_t)g * 1024 + 64 * (size_t)i;           \
                    _mm_prefetch((const char *)qg + I8_PF, _MM_HINT_T0);                     \
                    _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {                    \
                        __m256i lo, hi, b0, b1;                                              \
                        i8_nibbles(_mm256_load_si256((const __m256i *)(qg + 32 * h)), &lo, &hi); \
                        _Pragma("GCC unroll 4") for (int t = 0; t < T; t++) {                \
                            i8_bcast8(xq + (size_t)t * (size_t)k + (size_t)g * 128 + 8 * i, &b0, &b1); \
                            p[bi][t][h] = DOT2(p[bi][t][h], lo, hi, b0, b1);                 \
                        }                                                                    \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
            _Pragma("GCC unroll 4") for (int bi = 0; bi < NB; bi++)                          \
                _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {                        \
                    __m256 zs, sv = meta_scales8(mi[bi] + (size_t)g * W4I8_META_BYTES, h, &zs); \
                    _Pragma("GCC unroll 4") for (int t = 0; t < T; t++) {                    \
                        size_t tg = (size_t)t * (size_t)groups + (size_t)g;                  \
                        acc[bi][t][h] = i8_scale(acc[bi][t][h], p[bi][t][h], sv, zs, d[tg], dsum[tg]); \
                    }                                                                        \
                }                                                                            \
        }                                                                                    \
        for (int bi = 0; bi < NB; bi++)                                                      \
            i8_store_block(y, (size_t)w->n, (size_t)(b + bi * stride), acc[bi], T);          \
    }

/* T ≥ 2 activation rows, one block: each half (8 rows) of a group is done
 * on its own, so only T dot sums live in registers and T up to 8 fits the
 * 16 (the accumulators are touched once per group and may live in memory).
 * One pass over the weights for M ≤ 8: with 4 rows per pass, M = 8 read
 * every weight twice. The second half's bytes come from L1. */
#define W4I8R16_HALVES(NAME, ATTR, DOT2)                                                     \
    ATTR AI void NAME(const w4a16_packed_t *w, const int8_t *xq, const float *d,              \
                      const float *dsum, int b, const int T, uint16_t *y)                    \
    {                                                                                        \
        W4I8R16_TILE_BEGIN                                                                   \
        for (int g = 0; g < groups; g++) {                                                   \
            const uint8_t *qg = q + (size_t)g * 1024;                                        \
            _Pragma("GCC unroll 1") for (int h = 0; h < 2; h++) {                            \
                /* Keeps the compiler from sharing the 16·T broadcasts of x  \
                 * between the halves (it spilled them all to the stack). */ \
                __asm__ volatile("" ::: "memory");                                           \
                __m256i p[8];                                                                \
                _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) p[t] = _mm256_setzero_si256(); \
                _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) {                      \
                    if (h == 0) _mm_prefetch((const char *)qg + 64 * i + I8_PF, _MM_HINT_T0); \
                    __m256i lo, hi, b0, b1;                                                  \
                    i8_nibbles(_mm256_load_si256((const __m256i *)(qg + 64 * i + 32 * h)), &lo, &hi); \
                    _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {                    \
                        i8_bcast8(xq + (size_t)t * (size_t)k + (size_t)g * 128 + 8 * i, &b0, &b1); \
                        p[t] = DOT2(p[t], lo, hi, b0, b1);                                   \
                    }                                                                        \
                }                                                                            \
                __m256 zs, sv = meta_scales8(mi + (size_t)g * W4I8_META_BYTES, h, &zs);      \
                _Pragma("GCC unroll 8") for (int t = 0; t < T; t++) {                        \
                    size_t tg = (size_t)t * (size_t)groups + (size_t)g;                      \
                    acc[t][h] = i8_scale(acc[t][h], p[t], sv, zs, d[tg], dsum[tg]);          \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        i8_store_block(y, (size_t)w->n, (size_t)b, acc, T);                                  \
    }

/* 2..4 activation rows, one block: per step both halves' nibbles are split
 * once and each row's 4 + 4 activations are broadcast once for both (the
 * halves-apart kernel above loads every broadcast twice). Written for
 * sub-tiles of 4 rows (re-reading the group from L1), but at T > 4 that
 * lost to the halves-apart kernel, so it runs only up to 4. */
#define W4I8R16_QUADS(NAME, ATTR, DOT2)                                                      \
    ATTR AI void NAME(const w4a16_packed_t *w, const int8_t *xq, const float *d,              \
                      const float *dsum, int b, const int T, uint16_t *y)                    \
    {                                                                                        \
        W4I8R16_TILE_BEGIN                                                                   \
        for (int g = 0; g < groups; g++) {                                                   \
            const uint8_t *qg = q + (size_t)g * 1024;                                        \
            const uint8_t *mg = mi + (size_t)g * W4I8_META_BYTES;                            \
            _mm_prefetch((const char *)(mg + I8_META_PF * W4I8_META_BYTES), _MM_HINT_T0);    \
            _Pragma("GCC unroll 2") for (int s0 = 0; s0 < T; s0 += 4) {                      \
                const int TS = T - s0 < 4 ? T - s0 : 4;                                      \
                __asm__ volatile("" ::: "memory");                                           \
                __m256i p[4][2];                                                             \
                _Pragma("GCC unroll 4") for (int t = 0; t < TS; t++) p[t][0] = p[t][1] = _mm256_setzero_si256(); \
                _Pragma("GCC unroll 16") for (int i = 0; i < 16; i++) {                      \
                    if (s0 == 0) _mm_prefetch((const char *)qg + 64 * i + I8_PF, _MM_HINT_T0); \
                    __m256i v0 = _mm256_load_si256((const __m256i *)(qg + 64 * i));          \
                    __m256i v1 = _mm256_load_si256((const __m256i *)(qg + 64 * i + 32));     \
                    __m256i lo0, hi0, lo1, hi1, b0, b1;                                      \
                    i8_nibbles(v0, &lo0, &hi0);                                              \
                    i8_nibbles(v1, &lo1, &hi1);                                              \
                    _Pragma("GCC unroll 4") for (int t = 0; t < TS; t++) {                   \
                        i8_bcast8(xq + (size_t)(s0 + t) * (size_t)k + (size_t)g * 128 + 8 * i, &b0, &b1); \
                        p[t][0] = DOT2(p[t][0], lo0, hi0, b0, b1);                           \
                        p[t][1] = DOT2(p[t][1], lo1, hi1, b0, b1);                           \
                    }                                                                        \
                }                                                                            \
                _Pragma("GCC unroll 2") for (int h = 0; h < 2; h++) {                        \
                    __m256 zs, sv = meta_scales8(mg, h, &zs);                                \
                    _Pragma("GCC unroll 4") for (int t = 0; t < TS; t++) {                   \
                        size_t tg = (size_t)(s0 + t) * (size_t)groups + (size_t)g;           \
                        acc[s0 + t][h] = i8_scale(acc[s0 + t][h], p[t][h], sv, zs, d[tg], dsum[tg]); \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        i8_store_block(y, (size_t)w->n, (size_t)b, acc, T);                                  \
    }

/* T = 1: 4 blocks at once (4 streams; 8 dot sums + 8 accumulators, some
 * spilled, touched once per group); tiles of 2..4 rows: W4I8R16_QUADS, 5..8
 * rows: W4I8R16_HALVES (with AVX-VNNI, tiles of 8 go to i8_group8 below
 * instead). Measured side by side (AVX-VNNI, 2 threads,
 * 512×4096 in cache): M = 4 37 → 29 µs with the quads; M = 8 55 µs with
 * the halves, 63 µs as two quads, and 64–66 µs when each step's two
 * vpdpbusd went to a fresh sum added to the chain afterwards (shorter
 * dependency chains did not help: not latency-bound). */
#define I8_TMAX 8

#define W4I8R16_ROWS2(NAME, BLOCK, QUADS, HALVES, ATTR)                                      \
    ATTR static void NAME(const w4a16_packed_t *w, const int8_t *xq, const float *d,         \
                          const float *dsum, int m, int b0, int b1, uint16_t *y)             \
    {                                                                                        \
        int groups = w->k / 128;                                                             \
        for (int m0 = 0; m0 < m; m0 += I8_TMAX) {                                            \
            int T = m - m0 < I8_TMAX ? m - m0 : I8_TMAX;                                     \
            const int8_t *xt = xq + (size_t)m0 * (size_t)w->k;                               \
            const float *dt = d + (size_t)m0 * (size_t)groups, *st = dsum + (size_t)m0 * (size_t)groups; \
            uint16_t *yt = y + (size_t)m0 * (size_t)w->n;                                    \
            if (T == 1) {                                                                    \
                int len = (b1 - b0) / 4, b = b0 + 4 * len;                                   \
                for (int j = 0; j < len; j++) BLOCK(w, xt, dt, st, b0 + j, len, 4, 1, yt);   \
                for (; b < b1; b++) BLOCK(w, xt, dt, st, b, 1, 1, 1, yt);                    \
                continue;                                                                    \
            }                                                                                \
            for (int b = b0; b < b1; b++) switch (T) {                                       \
                case 2: QUADS(w, xt, dt, st, b, 2, yt); break;                               \
                case 3: QUADS(w, xt, dt, st, b, 3, yt); break;                               \
                case 4: QUADS(w, xt, dt, st, b, 4, yt); break;                               \
                case 5: HALVES(w, xt, dt, st, b, 5, yt); break;                              \
                case 6: HALVES(w, xt, dt, st, b, 6, yt); break;                              \
                case 7: HALVES(w, xt, dt, st, b, 7, yt); break;                              \
                default: HALVES(w, xt, dt, st, b, 8, yt); break;                             \
                }                                                                            \
        }                                                                                    \
    }

#define NO_ATTR
#define VNNI_ATTR __attribute__((target("avxvnni")))
W4I8R16_BLOCK2(w4i8r16_block_mb, NO_ATTR, DOT2_MADDUBS)
W4I8R16_HALVES(w4i8r16_halves_mb, NO_ATTR, DOT2_MADDUBS)
W4I8R16_QUADS(w4i8r16_quads_mb, NO_ATTR, DOT2_MADDUBS)
W4I8R16_ROWS2(w4i8r16_rows_mb, w4i8r16_block_mb, w4i8r16_quads_mb, w4i8r16_halves_mb, NO_ATTR)
W4I8R16_BLOCK2(w4i8r16_block_vnni, VNNI_ATTR, DOT2_VNNI)
W4I8R16_HALVES(w4i8r16_halves_vnni, VNNI_ATTR, DOT2_VNNI)
W4I8R16_QUADS(w4i8r16_quads_vnni, VNNI_ATTR, DOT2_VNNI)
W4I8R16_ROWS2(w4i8r16_rows_vnni, w4i8r16_block_vnni, w4i8r16_quads_vnni, w4i8r16_halves_vnni, VNNI_ATTR)


/* ---- AVX-VNNI, 8 activation rows --------------------------------------
 *
 * At M = 8 the kernel is bound by the core, not by memory, and what bounds
 * the core is vpdpbusd: on the project's Xeon (measured in isolation, see
 * docs/design.md) it issues 2 per cycle on ports 0 and 1 with a latency of
 * 5 cycles, so 10 or more independent sums must be in flight, each taking
 * one dot step at a time, to keep both ports busy. Vector shifts,
 * vcvtdq2ps and FP multiplies also take ports 0 and 1 only, while ANDs,
 * byte shuffles and integer and FP adds can go to port 5. Hence:
 *
 * - no nibble shift: the high nibbles are read in place as 16·q
 *   (v AND 0xF0) and the low ones looked up as 16·q (vpshufb of
 *   v AND 0x0F), so every dot sum is 16·Σq·xq, and 1/16 (exact) joins the
 *   scale; |16·Σq·xq| ≤ 16·128·15·128 < 2^22, so the sum becomes a float
 *   exactly by adding the bits of 1.5·2^23 and subtracting 1.5·2^23
 *   (port 5) instead of vcvtdq2ps. The products and sums are those of the
 *   other kernels, in another order of exact integer adds, so y is bit for
 *   bit theirs (test_gemv compares them).
 * - rows 0..5 half by half (i8_pass6): 12 sums, a row's low- and
 *   high-nibble products apart, so each sum takes one dot step per 8
 *   inputs. The pass stores the nibbles it split, and rows 6 and 7
 *   (i8_pass2) read them back for both halves at once, each row and
 *   half's dot steps going round robin to 3 sums (12 again): each half's
 *   nibbles are split once per group, not once per pass (loads and stores
 *   have ports of their own; the splits take ports 0, 1 or 5). The
 *   previous kernel's 10 sums taking two dot steps each (rows 0..4, both
 *   halves) and 9 (rows 5..7) left the dot products waiting on each
 *   other: in cache 91 ns per block and group against 81.5 now.
 * - the passes in asm with every register named (16 ymm: 12 sums, the
 *   nibbles, a broadcast, the lookup table): with intrinsics gcc hoisted
 *   the broadcasts and spilled sums to make room for them;
 * - two blocks walked group by group (two streams per thread, as M = 1
 *   walks four), each group's 16 prefetches spread over the first pass,
 *   one per 64-byte step, 1.5 KiB ahead: issued all at once at the start
 *   of a group they left the kernel waiting on memory, which undid most
 *   of what the faster passes gained (see docs/design.md).
 * vpmaddubsw cannot take 16·q (its 16-bit pair sums would saturate), so
 * this is AVX-VNNI only. */
#define I8_M8_NB 2        /* blocks walked at once (streams per thread) */
#define I8_M8_PF 1536     /* prefetch distance along each block's weights */
#define I8_MAGIC 12582912.0f   /* 1.5·2^23, float bits 0x4B400000 */

/* The 16·q lookup table and the two nibble masks, read by i8_pass6. */
static const uint8_t i8_nib_consts[96] __attribute__((aligned(32))) = {
    0,   16,  32,  48,  64,  80,  96,  112, 128, 144, 160, 176, 192, 208, 224, 240,
    0,   16,  32,  48,  64,  80,  96,  112, 128, 144, 160, 176, 192, 208, 224, 240,
    15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,
    15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,  15,
    240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240,
    240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240, 240};

/* Broadcasts the 4 activations at byte OFF of step \i of row X into
 * BREG and adds their dot products with nibble register NIB to sum ACC
 * (asm text for the .irp loops below; {vex}: the AVX-VNNI encoding, not
 * AVX-512's). */
#define I8_BDOT(X, OFF, BREG, NIB, ACC)                                                      \
    "vpbroadcastd (\\i*8+" OFF ")(%[" X "]), %%ymm" BREG "\n\t"                              \
    "%{vex%} vpdpbusd %%ymm" BREG ", %%ymm" NIB ", %%ymm" ACC "\n\t"
#define I8_ZERO(R) "vpxor %%xmm" R ", %%xmm" R ", %%xmm" R "\n\t"
#define I8_YMM_ALL                                                                           \
    "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",  \
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory"

/* Rows 0..5 of x (xr[t] = row t's activations of the group) against one
 * half of a group (qh: its 32 bytes at every 64-byte step): out[t] =
 * 16·Σq·xq. Sums: ymm(2t) low nibbles, ymm(2t + 1) high; ymm12 the step's
 * bytes, then its high nibbles; ymm13 its low nibbles; ymm14 a broadcast;
 * ymm15 the table. Step i's nibbles go to nib[128·i] (low) and
 * nib[128·i + 32] (high) for i8_pass2 (the second half's pass gets
 * nib + 64); pf, when not NULL, gets one prefetch per step. */
#define I8_PASS6_ASM(PF)                                                                     \
    __asm__ volatile(                                                                        \
        "vmovdqa (%[c]), %%ymm15\n\t" I8_ZERO("0") I8_ZERO("1") I8_ZERO("2") I8_ZERO("3")    \
            I8_ZERO("4") I8_ZERO("5") I8_ZERO("6") I8_ZERO("7") I8_ZERO("8") I8_ZERO("9")   \
                I8_ZERO("10") I8_ZERO("11")                                                  \
        ".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n\t" PF                               \
        "vmovdqa (\\i*64)(%[q]), %%ymm12\n\t"                                                \
        "vpand 32(%[c]), %%ymm12, %%ymm13\n\t"                                               \
        "vpshufb %%ymm13, %%ymm15, %%ymm13\n\t"                                              \
        "vpand 64(%[c]), %%ymm12, %%ymm12\n\t"                                               \
        "vmovdqa %%ymm13, (\\i*128)(%[nb])\n\t"                                              \
        "vmovdqa %%ymm12, (\\i*128+32)(%[nb])\n\t"                                           \
        I8_BDOT("x0", "0", "14", "13", "0") I8_BDOT("x0", "4", "14", "12", "1")              \
        I8_BDOT("x1", "0", "14", "13", "2") I8_BDOT("x1", "4", "14", "12", "3")              \
        I8_BDOT("x2", "0", "14", "13", "4") I8_BDOT("x2", "4", "14", "12", "5")              \
        I8_BDOT("x3", "0", "14", "13", "6") I8_BDOT("x3", "4", "14", "12", "7")              \
        I8_BDOT("x4", "0", "14", "13", "8") I8_BDOT("x4", "4", "14", "12", "9")              \
        I8_BDOT("x5", "0", "14", "13", "10") I8_BDOT("x5", "4", "14", "12", "11")            \
        ".endr\n\t"                                                                          \
        "vpaddd %%ymm1, %%ymm0, %%ymm0\n\tvpaddd %%ymm3, %%ymm2, %%ymm2\n\t"                 \
        "vpaddd %%ymm5, %%ymm4, %%ymm4\n\tvpaddd %%ymm7, %%ymm6, %%ymm6\n\t"                 \
        "vpaddd %%ymm9, %%ymm8, %%ymm8\n\tvpaddd %%ymm11, %%ymm10, %%ymm10\n\t"              \
        "vmovdqa %%ymm0, (%[o])\n\tvmovdqa %%ymm2, 32(%[o])\n\t"                             \
        "vmovdqa %%ymm4, 64(%[o])\n\tvmovdqa %%ymm6, 96(%[o])\n\t"                           \
        "vmovdqa %%ymm8, 128(%[o])\n\tvmovdqa %%ymm10, 160(%[o])"                            \
        :                                                                                    \
        : [q] "r"(qh), [pf] "r"(pf), [nb] "r"(nib), [c] "r"(i8_nib_consts), [x0] "r"(xr[0]), \
          [x1] "r"(xr[1]), [x2] "r"(xr[2]), [x3] "r"(xr[3]), [x4] "r"(xr[4]), [x5] "r"(xr[5]), \
          [o] "r"(out)                                                                       \
        : I8_YMM_ALL)

VNNI_ATTR AI void i8_pass6(const uint8_t *qh, const char *pf, uint8_t *nib,
                           const int8_t *const *xr, __m256i *out)
{
    if (pf) I8_PASS6_ASM("prefetcht0 (\\i*64)(%[pf])\n\t");
    else I8_PASS6_ASM("");
}

/* One step (I: asm expression) of i8_pass2: low nibbles to sums L0..L3,
 * high to H0..H3 (row 6 half 0, row 6 half 1, row 7 half 0, half 1). */
#define I8_PASS2_STEP(I, L0, L1, L2, L3, H0, H1, H2, H3)                                     \
    "vmovdqa (" I "*128)(%[n]), %%ymm12\n\t"                                                 \
    "vmovdqa (" I "*128+64)(%[n]), %%ymm13\n\t"                                              \
    "vpbroadcastd (" I "*8)(%[x6]), %%ymm14\n\t"                                             \
    "%{vex%} vpdpbusd %%ymm14, %%ymm12, %%ymm" L0 "\n\t"                                     \
    "%{vex%} vpdpbusd %%ymm14, %%ymm13, %%ymm" L1 "\n\t"                                     \
    "vpbroadcastd (" I "*8)(%[x7]), %%ymm14\n\t"                                             \
    "%{vex%} vpdpbusd %%ymm14, %%ymm12, %%ymm" L2 "\n\t"                                     \
    "%{vex%} vpdpbusd %%ymm14, %%ymm13, %%ymm" L3 "\n\t"                                     \
    "vmovdqa (" I "*128+32)(%[n]), %%ymm12\n\t"                                              \
    "vmovdqa (" I "*128+96)(%[n]), %%ymm13\n\t"                                              \
    "vpbroadcastd (" I "*8+4)(%[x6]), %%ymm14\n\t"                                           \
    "%{vex%} vpdpbusd %%ymm14, %%ymm12, %%ymm" H0 "\n\t"                                     \
    "%{vex%} vpdpbusd %%ymm14, %%ymm13, %%ymm" H1 "\n\t"                                     \
    "vpbroadcastd (" I "*8+4)(%[x7]), %%ymm14\n\t"                                           \
    "%{vex%} vpdpbusd %%ymm14, %%ymm12, %%ymm" H2 "\n\t"                                     \
    "%{vex%} vpdpbusd %%ymm14, %%ymm13, %%ymm" H3 "\n\t"
/* Dot step 2i (low nibbles) and 2i + 1 (high) of each row and half go
 * round robin to its 3 sums, 3t..3t + 2: step i ≡ 0, 1, 2 (mod 3). */
#define I8_PASS2_A(I) I8_PASS2_STEP(I, "0", "3", "6", "9", "1", "4", "7", "10")
#define I8_PASS2_B(I) I8_PASS2_STEP(I, "2", "5", "8", "11", "0", "3", "6", "9")
#define I8_PASS2_C(I) I8_PASS2_STEP(I, "1", "4", "7", "10", "2", "5", "8", "11")

/* Rows 6 and 7 (x6, x7) against both halves, the nibbles from i8_pass6's
 * nib (step i: low and high of half 0, then of half 1, 32 bytes each):
 * out[t][h] = 16·Σq·xq. Sums: ymm(3j)..ymm(3j + 2) for j = row 6 half 0,
 * row 6 half 1, row 7 half 0, half 1, each dot step to the next of the
 * three (12 in flight); ymm12, 13 the nibbles of the two halves; ymm14 a
 * broadcast. */
VNNI_ATTR AI void i8_pass2(const uint8_t *nib, const int8_t *x6, const int8_t *x7, __m256i *out)
{
    __asm__ volatile(I8_ZERO("0") I8_ZERO("1") I8_ZERO("2") I8_ZERO("3") I8_ZERO("4")
                     I8_ZERO("5") I8_ZERO("6") I8_ZERO("7") I8_ZERO("8") I8_ZERO("9")
                     I8_ZERO("10") I8_ZERO("11")
                     ".irp i, 0,3,6,9,12\n\t"
                     I8_PASS2_A("\\i") I8_PASS2_B("(\\i+1)") I8_PASS2_C("(\\i+2)")
                     ".endr\n\t"
                     I8_PASS2_A("15")
                     "vpaddd %%ymm1, %%ymm0, %%ymm0\n\tvpaddd %%ymm2, %%ymm0, %%ymm0\n\t"
                     "vpaddd %%ymm4, %%ymm3, %%ymm3\n\tvpaddd %%ymm5, %%ymm3, %%ymm3\n\t"
                     "vpaddd %%ymm7, %%ymm6, %%ymm6\n\tvpaddd %%ymm8, %%ymm6, %%ymm6\n\t"
                     "vpaddd %%ymm10, %%ymm9, %%ymm9\n\tvpaddd %%ymm11, %%ymm9, %%ymm9\n\t"
                     "vmovdqa %%ymm0, (%[o])\n\tvmovdqa %%ymm3, 32(%[o])\n\t"
                     "vmovdqa %%ymm6, 64(%[o])\n\tvmovdqa %%ymm9, 96(%[o])"
                     :
                     : [n] "r"(nib), [x6] "r"(x6), [x7] "r"(x7), [o] "r"(out)
                     : I8_YMM_ALL);
}

/* acc += s·d·Σq·xq − s·z·(d·Σxq) for one row and half, from 16·Σq·xq. */
AI __m256 i8_scale16(__m256 acc, __m256i p16, __m256 s16, __m256 zs, float d, float dsum)
{
    __m256 f = _mm256_sub_ps(_mm256_castsi256_ps(_mm256_add_epi32(p16, _mm256_set1_epi32(0x4B400000))),
                             _mm256_set1_ps(I8_MAGIC));
    acc = _mm256_fmadd_ps(f, _mm256_mul_ps(s16, _mm256_set1_ps(d)), acc);
    return _mm256_fnmadd_ps(zs, _mm256_set1_ps(dsum), acc);
}

/* One group g of one block for 8 rows: qg, mg its weights and metadata,
 * xg = xq + 128g, dg = d + g, sg = dsum + g (rows `groups` apart); nib:
 * 2 KiB of 32-byte aligned scratch. */
VNNI_ATTR AI void i8_group8(const uint8_t *qg, const uint8_t *mg, const int8_t *xg, int k,
                            int groups, const float *dg, const float *sg, __m256 (*acc)[2],
                            uint8_t *nib)
{
    _mm_prefetch((const char *)(mg + I8_META_PF * W4I8_META_BYTES), _MM_HINT_T0);
    __m256 s16[2], zs[2];
    for (int h = 0; h < 2; h++) {
        __m256 sv = meta_scales8(mg, h, &zs[h]);
        s16[h] = _mm256_mul_ps(sv, _mm256_set1_ps(0.0625f));
    }
    const int8_t *xr[8];
    for (int t = 0; t < 8; t++) xr[t] = xg + (size_t)t * (size_t)k;
    __m256i p6[2][6], p2[2][2];
    i8_pass6(qg, (const char *)qg + I8_M8_PF, nib, xr, p6[0]);
    i8_pass6(qg + 32, NULL, nib + 64, xr, p6[1]);
    i8_pass2(nib, xr[6], xr[7], p2[0]);
    for (int t = 0; t < 8; t++)
        for (int h = 0; h < 2; h++)
            acc[t][h] = i8_scale16(acc[t][h], t < 6 ? p6[h][t] : p2[t - 6][h], s16[h], zs[h],
                                   dg[(size_t)t * (size_t)groups], sg[(size_t)t * (size_t)groups]);
}

/* All groups of two blocks, group by group, and of one block. Not inlined
 * into i8_blocks8: there gcc's code for the passes spilled (one block per
 * call measured 15% slower; one group per call 2-4% slower than this). */
VNNI_ATTR __attribute__((noinline)) static void i8_groups2(const uint8_t *const *q,
                                                           const uint8_t *const *mi,
                                                           const int8_t *xq, int k, int groups,
                                                           const float *d, const float *dsum,
                                                           __m256 (*acc)[8][2])
{
    uint8_t nib[2048] __attribute__((aligned(32)));
    for (int g = 0; g < groups; g++) {
        i8_group8(q[0] + (size_t)g * 1024, mi[0] + (size_t)g * W4I8_META_BYTES,
                  xq + (size_t)g * 128, k, groups, d + g, dsum + g, acc[0], nib);
        i8_group8(q[1] + (size_t)g * 1024, mi[1] + (size_t)g * W4I8_META_BYTES,
                  xq + (size_t)g * 128, k, groups, d + g, dsum + g, acc[1], nib);
    }
}

VNNI_ATTR __attribute__((noinline)) static void i8_groups1(const uint8_t *q, const uint8_t *mi,
                                                           const int8_t *xq, int k, int groups,
                                                           const float *d, const float *dsum,
                                                           __m256 (*acc)[2])
{
    uint8_t nib[2048] __attribute__((aligned(32)));
    for (int g = 0; g < groups; g++)
        i8_group8(q + (size_t)g * 1024, mi + (size_t)g * W4I8_META_BYTES, xq + (size_t)g * 128,
                  k, groups, d + g, dsum + g, acc, nib);
}

/* 8 rows, NB ≤ I8_M8_NB blocks b, b + stride, ... walked group by group. */
VNNI_ATTR static void i8_blocks8(const w4a16_packed_t *w, const int8_t *xq, const float *d,
                                 const float *dsum, int b, int stride, int nb, uint16_t *y)
{
    const int groups = w->k / 128, k = w->k;
    __m256 acc[I8_M8_NB][8][2];
    const uint8_t *q[I8_M8_NB], *mi[I8_M8_NB];
    for (int bi = 0; bi < nb; bi++) {
        size_t blk = (size_t)(b + bi * stride);
        q[bi] = w->qi + blk * 8 * (size_t)k;
        mi[bi] = w->mi + blk * (size_t)groups * W4I8_META_BYTES;
        for (int t = 0; t < 8; t++) acc[bi][t][0] = acc[bi][t][1] = _mm256_setzero_ps();
    }
    if (nb == 2) i8_groups2(q, mi, xq, k, groups, d, dsum, acc);
    else i8_groups1(q[0], mi[0], xq, k, groups, d, dsum, acc[0]);
    for (int bi = 0; bi < nb; bi++)
        i8_store_block(y, (size_t)w->n, (size_t)(b + bi * stride), acc[bi], 8);
}

/* AVX-VNNI entry: tiles of 8 rows go to i8_blocks8 (runs of blocks, as
 * M = 1 walks its streams), the rest to W4I8R16_ROWS2's kernels. */
VNNI_ATTR static void w4i8r16_vnni(const w4a16_packed_t *w, const int8_t *xq, const float *d,
                                   const float *dsum, int m, int b0, int b1, uint16_t *y)
{
    int groups = w->k / 128, m8 = m / 8 * 8;
    for (int m0 = 0; m0 < m8; m0 += 8) {
        const int8_t *xt = xq + (size_t)m0 * (size_t)w->k;
        const float *dt = d + (size_t)m0 * (size_t)groups, *st = dsum + (size_t)m0 * (size_t)groups;
        uint16_t *yt = y + (size_t)m0 * (size_t)w->n;
        int len = (b1 - b0) / I8_M8_NB, b = b0 + I8_M8_NB * len;
        for (int j = 0; j < len; j++) i8_blocks8(w, xt, dt, st, b0 + j, len, I8_M8_NB, yt);
        for (; b < b1; b++) i8_blocks8(w, xt, dt, st, b, 1, 1, yt);
    }
    if (m8 < m)
        w4i8r16_rows_vnni(w, xq + (size_t)m8 * (size_t)w->k, d + (size_t)m8 * (size_t)groups,
                          dsum + (size_t)m8 * (size_t)groups, m - m8, b0, b1, y + (size_t)m8 * (size_t)w->n);
}



/* AVX-VNNI (vpdpbusd on ymm) where the CPU has it, else vpmaddubsw. */
static void w4i8_r16(const w4a16_packed_t *w, const int8_t *xq, const float *d,
                     const float *dsum, int m, int b0, int b1, uint16_t *y, int ext)
{
    if (ext >= GEMV_I8_DOT_VNNI && __builtin_cpu_supports("avxvnni")) w4i8r16_vnni(w, xq, d, dsum, m, b0, b1, y);
    else w4i8r16_rows_mb(w, xq, d, dsum, m, b0, b1, y);
}

/* The int8 activation quantiser (gemv_impl.h): per group of 128, max|x|
 * over 16 vectors, then round(x·(127/max)) with the conversion's
 * round-to-nearest-even (the portable loop's 1.5·2^23 trick gives the
 * same integers), packed to bytes. */
static void w4i8_quant(const uint16_t *x, size_t ng, int8_t *xq, float *d, float *dsum)
{
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (size_t g = 0; g < ng; g++) {
        const uint16_t *xg = x + g * 128;
        __m256 v[16], mx = _mm256_setzero_ps();
        for (int i = 0; i < 16; i++) {
            v[i] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(xg + 8 * i)));
            mx = _mm256_max_ps(mx, _mm256_and_ps(v[i], absmask));
        }
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        float amax = _mm_cvtss_f32(m4);
        float dg = amax / 127.0f, inv = amax > 0.0f ? 127.0f / amax : 0.0f;
        const __m256 vinv = _mm256_set1_ps(inv);
        __m256i sum = _mm256_setzero_si256();
        for (int i = 0; i < 16; i += 4) {
            __m256i q[4];
            for (int j = 0; j < 4; j++) {
                q[j] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i + j], vinv));
                sum = _mm256_add_epi32(sum, q[j]);
            }
            __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
            _mm256_storeu_si256((__m256i *)(xq + g * 128 + 8 * (size_t)i),
                                _mm256_permutevar8x32_epi32(b, order));
        }
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
        d[g] = dg;
        dsum[g] = dg * (float)_mm_cvtsi128_si32(s4);
    }
}

/* Dense tiles: 32 inputs per main step (4 vectors), then 8, then scalar. */
#define DENSE_TILE(NAME, WT, LOADW, SCALARW, NAF)                                            \
    AI void NAME(const WT *w, int k, const float *x, const int T, float *out)                 \
    {                                                                                        \
        const int NA = NAF(T);                                                               \
        __m256 acc[TMAX][4];                                                                 \
        float tail[TMAX];                                                                    \
        for (int t = 0; t < T; t++) {                                                        \
            tail[t] = 0.0f;                                                                  \
            for (int a = 0; a < NA; a++) acc[t][a] = _mm256_setzero_ps();                    \
        }                                                                                    \
        int c = 0;                                                                           \
        for (; c + 32 <= k; c += 32) {                                                       \
            for (size_t l_ = 0; l_ < 32 * sizeof(WT); l_ += 64)                              \
                _mm_prefetch((const char *)(w + c) + PF_BYTES + l_, _MM_HINT_T0);            \
            __m256 w0 = LOADW(w + c), w1 = LOADW(w + c + 8);                                 \
            __m256 w2 = LOADW(w + c + 16), w3 = LOADW(w + c + 24);                           \
            for (int t = 0; t < T; t++) {                                                    \
                const float *xt = x + (size_t)t * (size_t)k + c;                             \
                acc[t][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(xt), acc[t][0]);             \
                acc[t][1 % NA] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(xt + 8), acc[t][1 % NA]); \
                acc[t][2 % NA] = _mm256_fmadd_ps(w2, _mm256_loadu_ps(xt + 16), acc[t][2 % NA]); \
                acc[t][3 % NA] = _mm256_fmadd_ps(w3, _mm256_loadu_ps(xt + 24), acc[t][3 % NA]); \
            }                                                                                \
        }                                                                                    \
        for (; c + 8 <= k; c += 8) {                                                         \
            __m256 w0 = LOADW(w + c);                                                        \
            for (int t = 0; t < T; t++)                                                      \
                acc[t][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + (size_t)t * (size_t)k + c), \
                                            acc[t][0]);                                      \
        }                                                                                    \
        for (; c < k; c++)                                                                   \
            for (int t = 0; t < T; t++) tail[t] += SCALARW(w[c]) * x[(size_t)t * (size_t)k + c]; \
        for (int t = 0; t < T; t++) {                                                        \
            __m256 s = acc[t][0];                                                            \
            for (int a = 1; a < NA; a++) s = _mm256_add_ps(s, acc[t][a]);                    \
            out[t] = hsum(s) + tail[t];                                                      \
        }                                                                                    \
    }

#define LOAD_H(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define LOAD_F(p) _mm256_loadu_ps(p)
#define SCALAR_H(v) _cvtsh_ss(v)
#define SCALAR_F(v) (v)

DENSE_TILE(f16_tile, uint16_t, LOAD_H, SCALAR_H, NACC)
DENSE_TILE(f32_tile, float, LOAD_F, SCALAR_F, NACC)
/* Batch-invariant tiles (gemv_f16_f32): the same two accumulators per
 * activation row at every T, so a row's sum does not depend on how many
 * rows share its tile. */
#define NACC_FIXED(T) 2
DENSE_TILE(f16_tile_fixed, uint16_t, LOAD_H, SCALAR_H, NACC_FIXED)

#define STORE_F(v) (v)
DENSE_ROWS(f16_rows, f16_tile, uint16_t, uint16_t, to_h)
DENSE_ROWS(f32_rows, f32_tile, float, float, STORE_F)
DENSE_ROWS(f16_rows_f32, f16_tile_fixed, uint16_t, float, STORE_F)

static void h2f(const uint16_t *h, float *f, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(f + i, LOAD_H(h + i));
    for (; i < n; i++) f[i] = _cvtsh_ss(h[i]);
}

static void f2h(const float *f, uint16_t *h, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(h + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(f + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; i++) h[i] = (uint16_t)_cvtss_sh(f[i], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

static float dot_f16(const float *q, const uint16_t *h, int d)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= d; i += 16) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), LOAD_H(h + i), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), LOAD_H(h + i + 8), a1);
    }
    for (; i + 8 <= d; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), LOAD_H(h + i), a0);
    float s = hsum(_mm256_add_ps(a0, a1));
    for (; i < d; i++) s += q[i] * _cvtsh_ss(h[i]);
    return s;
}

static void axpy_f16(float a, const uint16_t *h, float *acc, int d)
{
    const __m256 va = _mm256_set1_ps(a);
    int i = 0;
    for (; i + 8 <= d; i += 8)
        _mm256_storeu_ps(acc + i, _mm256_fmadd_ps(va, LOAD_H(h + i), _mm256_loadu_ps(acc + i)));
    for (; i < d; i++) acc[i] += a * _cvtsh_ss(h[i]);
}

/* e^x for x ≤ 0, as in gemv_avx512.c (clamp at −87, Cephes ln2 split,
 * degree-6 Taylor, 2^n built in the exponent field: n ≥ −126 after the
 * clamp, so the result stays a normal float). */
static inline __m256 exp_neg(__m256 x)
{
    x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 720.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

/* Positions ahead to prefetch (see gemv_avx512.c). */
#define ATTN_PF 8

/* Fused head (see gemv_avx512.c); d tails and position tails in scalar. */
static void attn_head(const float *q, const uint16_t *k, const uint16_t *v, size_t stride,
                      int npos, int d, float scale, float *sc, float *out)
{
    float mx = -INFINITY;
    for (int p = 0; p < npos; p++) {
        for (int l = 0; l < d; l += 32)
            _mm_prefetch((const char *)(k + (size_t)(p + ATTN_PF) * stride + l), _MM_HINT_T0);
        sc[p] = dot_f16(q, k + (size_t)p * stride, d) * scale;
        mx = sc[p] > mx ? sc[p] : mx;
    }
    const __m256 vmax = _mm256_set1_ps(mx);
    __m256 vsum = _mm256_setzero_ps();
    int p = 0;
    for (; p + 8 <= npos; p += 8) {
        __m256 w = exp_neg(_mm256_sub_ps(_mm256_loadu_ps(sc + p), vmax));
        _mm256_storeu_ps(sc + p, w);
        vsum = _mm256_add_ps(vsum, w);
    }
    float sum = hsum(vsum);
    for (; p < npos; p++) {
        sc[p] = expf(sc[p] - mx);
        sum += sc[p];
    }
    const float inv = 1.0f / sum;
    int e0 = 0;
    for (; e0 + 8 <= d; e0 += 64) {
        int nv = (d - e0) / 8;
        if (nv > 8) nv = 8;
        __m256 acc[8];
        for (int i = 0; i < 8; i++) acc[i] = _mm256_setzero_ps();
        for (int q2 = 0; q2 < npos; q2++) {
            const __m256 w = _mm256_set1_ps(sc[q2]);
            const uint16_t *vp = v + (size_t)q2 * stride + e0;
            for (int l = 0; l < 8 * nv; l += 32)
                _mm_prefetch((const char *)(vp + ATTN_PF * stride + l), _MM_HINT_T0);
            for (int i = 0; i < nv; i++) acc[i] = _mm256_fmadd_ps(w, LOAD_H(vp + 8 * i), acc[i]);
        }
        for (int i = 0; i < nv; i++)
            _mm256_storeu_ps(out + e0 + 8 * i, _mm256_mul_ps(acc[i], _mm256_set1_ps(inv)));
        if (nv < 8) {
            e0 += 8 * nv;
            break;
        }
    }
    for (; e0 < d; e0++) {
        float a = 0.0f;
        for (int q2 = 0; q2 < npos; q2++) a += sc[q2] * _cvtsh_ss(v[(size_t)q2 * stride + (size_t)e0]);
        out[e0] = a * inv;
    }
}

const gemv_impl_t gemv_impl_avx2 = {w4_rows, f16_rows, f32_rows, h2f, dot_f16, axpy_f16, attn_head, w4_xperm, NULL, w4i8_r16, w4i8_quant,
                                    f16_rows_f32, f2h};

#else
typedef int gemv_avx2_empty_unit;
#endif
