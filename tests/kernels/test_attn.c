/* Attention: the scalar reference against closed forms (equal keys → mean of
 * the visible values; causality; one dominant key), then the SIMD version of
 * every available path against the reference.
 *
 * Tolerance for SIMD vs reference: scores differ by at most
 * Δs = 2·d·u·max_p Σ|q·k|·scale (two fp32 dot products, u = 2^−24); the
 * softmax weights then differ relatively by at most ~2Δs + 2(L+2)·u (exp and
 * the normalising sum over L positions), so outputs — convex combinations of
 * V — differ by at most that times max|v|, plus one fp16 ulp of the result.
 * We use 4Δs + 4(L + d)·u for margin.
 */
#include <stdint.h>

#include "attn.h"
#include "check.h"
#include "ref.h"

static uint64_t rng = 0xA0761D6478BD642Full;

static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static uint16_t *rand_h(size_t n)
{
    uint16_t *h = malloc(n * 2);
    for (size_t i = 0; i < n; i++) h[i] = f32_to_fp16((float)(2 * urand() - 1));
    return h;
}

/* All keys equal: every score equal, so output = mean of visible values. */
static void test_ref_equal_keys(void)
{
    int ctx = 9, nq = 3, heads = 4, kvh = 2, d = 8, L = ctx + nq;
    uint16_t *q = rand_h((size_t)nq * heads * d), *v = rand_h((size_t)L * kvh * d);
    uint16_t *k = malloc((size_t)L * kvh * d * 2), out[3 * 4 * 8];
    for (int i = 0; i < L * kvh * d; i++) k[i] = f32_to_fp16(0.25f);
    CHECK(ref_attention(q, k, v, nq, ctx, heads, kvh, d, out) == 0);
    for (int i = 0; i < nq; i++)
        for (int h = 0; h < heads; h++)
            for (int e = 0; e < d; e++) {
                double mean = 0;
                for (int p = 0; p <= ctx + i; p++) mean += fp16_to_f32(v[(p * kvh + h / 2) * d + e]);
                mean /= ctx + i + 1;
                CHECK_ABS(fp16_to_f32(out[(i * heads + h) * d + e]), mean, 1e-3 * fabs(mean) + 1e-5);
            }
    free(q);
    free(k);
    free(v);
}

/* Query i must not see positions after ctx + i: changing them changes
 * nothing for i, and changes the last query's output. */
static void test_ref_causal(void)
{
    int ctx = 5, nq = 4, heads = 2, kvh = 1, d = 16, L = ctx + nq;
    uint16_t *q = rand_h((size_t)nq * heads * d), *k = rand_h((size_t)L * kvh * d);
    uint16_t *v = rand_h((size_t)L * kvh * d), a[4 * 2 * 16], b[4 * 2 * 16];
    CHECK(ref_attention(q, k, v, nq, ctx, heads, kvh, d, a) == 0);
    for (int e = 0; e < d; e++) v[(L - 1) * d + e] = f32_to_fp16(50.0f);
    CHECK(ref_attention(q, k, v, nq, ctx, heads, kvh, d, b) == 0);
    CHECK(memcmp(a, b, (size_t)(nq - 1) * heads * d * 2) == 0);
    CHECK(memcmp(a + (nq - 1) * heads * d, b + (nq - 1) * heads * d, (size_t)heads * d * 2) != 0);
    free(q);
    free(k);
    free(v);
}

/* One key aligned with the query and large: weight ≈ 1 on its value. */
static void test_ref_dominant_key(void)
{
    int ctx = 20, d = 4;
    uint16_t q[4], k[21 * 4], v[21 * 4], out[4];
    for (int e = 0; e < d; e++) q[e] = f32_to_fp16(4.0f);
    for (int p = 0; p <= ctx; p++)
        for (int e = 0; e < d; e++) {
            k[p * d + e] = f32_to_fp16(p == 7 ? 4.0f : 0.0f);   /* score 32 vs 0 */
            v[p * d + e] = f32_to_fp16((float)(p + e));
        }
    CHECK(ref_attention(q, k, v, 1, ctx, 1, 1, d, out) == 0);
    for (int e = 0; e < d; e++) CHECK_ABS(fp16_to_f32(out[e]), 7 + e, 0.01);
}

static void simd_case(gemv_ctx_t *c, int nq, int ctx, int heads, int kvh, int d)
{
    int L = ctx + nq;
    uint16_t *q = rand_h((size_t)nq * heads * d), *k = rand_h((size_t)L * kvh * d);
    uint16_t *v = rand_h((size_t)L * kvh * d);
    uint16_t *r = malloc((size_t)nq * heads * d * 2), *o = malloc((size_t)nq * heads * d * 2);
    CHECK(ref_attention(q, k, v, nq, ctx, heads, kvh, d, r) == 0);
    CHECK(attn_run(c, q, k, v, nq, ctx, heads, kvh, d, o) == 0);
    /* |q|,|k|,|v| ≤ 1: Σ|q·k| ≤ d, scale 1/√d. */
    double ds = 2.0 * d * 0x1p-24 * d / sqrt((double)d);
    double tol = 4 * ds + 4.0 * (L + d) * 0x1p-24;
    int bad = 0;
    for (int i = 0; i < nq * heads * d; i++) {
        double ref = fp16_to_f32(r[i]);
        double ulp = fabs(ref) < 0x1p-14 ? 0x1p-24 : ldexp(1.0, (int)floor(log2(fabs(ref))) - 10);
        bad += !(fabs(fp16_to_f32(o[i]) - ref) <= tol + ulp);
    }
    if (bad) printf("  %s nq=%d ctx=%d heads=%d/%d d=%d: %d mismatches\n",
                    gemv_isa_name(gemv_ctx_isa(c)), nq, ctx, heads, kvh, d, bad);
    CHECK(bad == 0);
    free(q);
    free(k);
    free(v);
    free(r);
    free(o);
}

static void test_simd_vs_ref(void)
{
    err_t e;
    for (int isa = 0; isa < GEMV_ISA_COUNT; isa++) {
        if (!gemv_isa_available(isa)) continue;
        for (int th = 1; th <= 2; th++) {
            gemv_ctx_t *c = gemv_ctx_create(th, isa, &e);
            CHECK(c != NULL);
            if (!c) continue;
            simd_case(c, 1, 0, 4, 2, 64);
            simd_case(c, 1, 37, 8, 2, 20);     /* head_dim not a multiple of 8/16 */
            simd_case(c, 5, 300, 4, 4, 64);    /* γ+1 = 5 verify tokens */
            simd_case(c, 3, 1, 6, 3, 128);
            gemv_ctx_free(c);
        }
    }
}

int main(void)
{
    RUN(test_ref_equal_keys);
    RUN(test_ref_causal);
    RUN(test_ref_dominant_key);
    RUN(test_simd_vs_ref);
    return check_done();
}
