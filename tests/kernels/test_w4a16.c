/* The W4A16 format: nibble layout, byte count, quantise→dequantise error
 * bounds, the scalar reference GEMM against a double-precision sum, and the
 * kernel repack layout. */
#include <stdint.h>

#include "check.h"
#include "gemv.h"
#include "w4a16.h"

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static double urand(void)   /* uniform [0, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* docs/design.md (W4A16 format): element k of a row at bits 4·(k mod 8) of word k/8. */
static void test_layout(void)
{
    w4a16_t w;
    CHECK(w4a16_init(&w, 2, 16, 8) == 0);
    for (int c = 0; c < 16; c++) w4a16_set_q(&w, 1, c, (unsigned)(15 - c));
    CHECK(w.qweight[0] == 0 && w.qweight[1] == 0);        /* row 0 untouched */
    CHECK(w.qweight[2] == 0x89ABCDEFu);                   /* k=0 → 15 in bits 0..3 */
    CHECK(w.qweight[3] == 0x01234567u);
    CHECK(w4a16_get_q(&w, 1, 9) == 6);
    w4a16_fini(&w);
    CHECK(w4a16_init(&w, 2, 100, 8) == -1);              /* k not a multiple of group */
    CHECK(w4a16_init(&w, 2, 96, 12) == -1);              /* group not a multiple of 8 */
    /* 4096×4096 g128: 8 MiB of nibbles + 131072 groups × 2.5 B. */
    CHECK_REL(w4a16_bytes(4096, 4096, 128), 8388608.0 + 131072.0 * 2.5, 1e-15);
}

/* Asymmetric RTN: with the scale s the quantiser chose (fp32, before fp16
 * rounding) every weight is within s/2 of its level; rounding the scale to
 * fp16 moves level i by |i − z|·|s − s16| ≤ 15·|s − s16|. Symmetric: same
 * with s = max|w|/7. The bound is recomputed here from the raw weights. */
static void check_bound(int n, int k, int group, int symmetric, double spread)
{
    float *w = malloc((size_t)n * k * sizeof *w), *d = malloc((size_t)n * k * sizeof *d);
    w4a16_t q;
    CHECK(w && d && w4a16_init(&q, n, k, group) == 0);
    for (int i = 0; i < n * k; i++) w[i] = (float)((urand() - 0.3) * spread);
    w4a16_quantize(w, symmetric, &q);
    w4a16_dequantize(&q, d);
    int bad = 0;
    double worst = 0;
    for (int r = 0; r < n; r++)
        for (int g = 0; g < k / group; g++) {
            double lo = 0, hi = 0, amax = 0;
            for (int e = 0; e < group; e++) {
                double v = w[r * k + g * group + e];
                lo = fmin(lo, v);
                hi = fmax(hi, v);
                amax = fmax(amax, fabs(v));
            }
            double s = symmetric ? amax / 7.0 : (hi - lo) / 15.0;
            double s16 = fp16_to_f32(q.scales[r * (k / group) + g]);
            double bound = s / 2 + 15 * fabs(s - s16) + 1e-6 * s;
            for (int e = 0; e < group; e++) {
                double err = fabs(w[r * k + g * group + e] - d[r * k + g * group + e]);
                if (err > bound) bad++;
                if (s > 0) worst = fmax(worst, err / s);
            }
        }
    CHECK(bad == 0);
    CHECK(worst > 0.3);   /* the bound is not vacuous: errors do approach s/2 */
    free(w);
    free(d);
    w4a16_fini(&q);
}

static void test_quantize_bounds(void)
{
    check_bound(5, 384, 128, 0, 2.0);
    check_bound(3, 96, 32, 0, 0.01);
    check_bound(4, 256, 64, 1, 1.0);
    check_bound(2, 128, 128, 1, 1e-3);
}

/* A constant group: zero must be exact, a constant positive group is
 * reproduced within s/2 where s = c/15. All-zero groups stay zero. */
static void test_quantize_special(void)
{
    float w[256];
    float d[256];
    w4a16_t q;
    CHECK(w4a16_init(&q, 1, 256, 128) == 0);
    for (int i = 0; i < 128; i++) w[i] = 0.0f;
    for (int i = 128; i < 256; i++) w[i] = i % 2 ? 0.0f : 1.5f;
    w4a16_quantize(w, 0, &q);
    w4a16_dequantize(&q, d);
    for (int i = 0; i < 256; i++) CHECK_ABS(d[i], w[i], 1.5 / 15 / 2 + 1e-3);
    for (int i = 0; i < 128; i++) CHECK(d[i] == 0.0f);
    for (int i = 129; i < 256; i += 2) CHECK(d[i] == 0.0f);
    uint16_t h[256];
    for (int i = 0; i < 256; i++) h[i] = f32_to_fp16(w[i]);
    w4a16_t q2;
    CHECK(w4a16_init(&q2, 1, 256, 128) == 0);
    CHECK(w4a16_quantize_fp16(h, 0, &q2) == 0);
    CHECK(memcmp(q.qweight, q2.qweight, 128) == 0 && memcmp(q.scales, q2.scales, 4) == 0);
    w4a16_fini(&q);
    w4a16_fini(&q2);
}

/* The reference against Σ (q − z)·s·x in double: two fp32 summations in k
 * order differ from the exact sum by at most K·u·Σ|w·x| (u = 2^−24), then
 * the fp16 rounding of the output adds at most one half-ulp of fp16. */
static void test_gemm_ref_vs_double(void)
{
    int n = 7, k = 640, m = 3;
    w4a16_t w;
    CHECK(w4a16_init(&w, n, k, 128) == 0);
    for (int r = 0; r < n; r++)
        for (int c = 0; c < k; c++) w4a16_set_q(&w, r, c, (unsigned)(urand() * 16));
    for (int g = 0; g < n * k / 128; g++) {
        w.scales[g] = f32_to_fp16((float)(0.001 + 0.01 * urand()));
        w.zeros[g] = (uint8_t)(urand() * 16);
    }
    uint16_t x[3 * 640], y[3 * 7];
    for (int i = 0; i < m * k; i++) x[i] = f32_to_fp16((float)(2 * urand() - 1));
    w4a16_gemm_ref(&w, x, m, y);
    for (int i = 0; i < m; i++)
        for (int r = 0; r < n; r++) {
            double sum = 0, mag = 0;
            for (int c = 0; c < k; c++) {
                int g = r * (k / 128) + c / 128;
                double wv = ((int)w4a16_get_q(&w, r, c) - w.zeros[g]) * (double)fp16_to_f32(w.scales[g]);
                sum += wv * fp16_to_f32(x[i * k + c]);
                mag += fabs(wv * fp16_to_f32(x[i * k + c]));
            }
            double got = fp16_to_f32(y[i * n + r]);
            CHECK_ABS(got, sum, k * 0x1p-24 * mag + fabs(sum) * 0x1p-11 + 0x1p-25);
        }
    w4a16_fini(&w);
}

/* Packed layout (gemv.h): byte j of block b = q(32b+j) | q(32b+16+j) << 4. */
static void test_repack_layout(void)
{
    w4a16_t w;
    w4a16_packed_t p;
    CHECK(w4a16_init(&w, 3, 192, 64) == 0);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 192; c++) w4a16_set_q(&w, r, c, (unsigned)(urand() * 16));
    for (int g = 0; g < 9; g++) {
        w.scales[g] = (uint16_t)(0x2000 + g);
        w.zeros[g] = (uint8_t)g;
    }
    CHECK(w4a16_repack(&w, &p) == 0);
    int bad = 0;
    for (int r = 0; r < 3; r++)
        for (int b = 0; b < 6; b++)
            for (int j = 0; j < 16; j++) {
                uint8_t byte = p.q[r * 96 + b * 16 + j];
                bad += (byte & 15) != w4a16_get_q(&w, r, 32 * b + j);
                bad += (byte >> 4) != w4a16_get_q(&w, r, 32 * b + 16 + j);
            }
    CHECK(bad == 0);
    CHECK(memcmp(p.scales, w.scales, sizeof w.scales[0] * 9) == 0);
    CHECK(memcmp(p.zeros, w.zeros, 9) == 0);
    w4a16_packed_fini(&p);
    w4a16_fini(&w);
    CHECK(w4a16_init(&w, 1, 48, 16) == 0);
    CHECK(w4a16_repack(&w, &p) == -1);    /* group 16: not a kernel shape */
    w4a16_fini(&w);
}

int main(void)
{
    RUN(test_layout);
    RUN(test_quantize_bounds);
    RUN(test_quantize_special);
    RUN(test_gemm_ref_vs_double);
    RUN(test_repack_layout);
    return check_done();
}
