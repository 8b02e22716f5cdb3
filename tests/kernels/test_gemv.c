/* Every SIMD path this CPU runs (and the portable one), 1 and 2 threads,
 * against the scalar references at awkward shapes: K a multiple of the group
 * but not of 256, N = 1, 3, 17, 4099, M = 1..16.
 *
 * Tolerance. Kernel and reference both sum K fp32 terms, in different orders
 * (and the W4A16 kernels as Σ_g s·(Σq·x − z·Σx)); each differs from the exact
 * sum by at most (K + g)·u·B, u = 2^−24, where B bounds the magnitudes summed:
 * B = Σ_g s_g·Σ_k (q_k + z_g)·|x_k| ≥ Σ|w·x| (since |q − z| ≤ q + z). So the
 * fp32 results differ by δ ≤ 2(K + g)·u·B, and rounding both to fp16 adds at
 * most one fp16 ulp at the result's magnitude. For dense fp16/fp32 weights
 * B = Σ|w·x| and g = 0 (fp32 output: no ulp term). A deliberately corrupted
 * weight is shown to break this tolerance, so it is tight enough to fail.
 */
#include <stdint.h>

#include "check.h"
#include "gemv.h"
#include "gemv_impl.h"
#include "ref.h"

static uint64_t rng = 0xD1B54A32D192ED03ull;

static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static double ulp16(double v)
{
    v = fabs(v);
    if (v < 0x1p-14) return 0x1p-24;
    return ldexp(1.0, (int)floor(log2(v)) - 10);
}

#define BIG_N 4099   /* cheap enough under ASan too (< 1 s) */

struct w4case {
    w4a16_t w;
    w4a16_packed_t p;
    uint16_t *x, *yref;
    double *bound;   /* [m][n] */
    int m;
};

static void w4case_make(struct w4case *c, int n, int k, int group, int m)
{
    CHECK(w4a16_init(&c->w, n, k, group) == 0);
    for (int r = 0; r < n; r++)
        for (int col = 0; col < k; col++) w4a16_set_q(&c->w, r, col, (unsigned)(urand() * 16));
    int groups = k / group;
    for (int g = 0; g < n * groups; g++) {
        c->w.scales[g] = f32_to_fp16((float)(0.002 + 0.02 * urand()));
        c->w.zeros[g] = (uint8_t)(urand() * 16);
    }
    CHECK(w4a16_repack(&c->w, &c->p) == 0);
    c->m = m;
    c->x = malloc((size_t)m * k * 2);
    c->yref = malloc((size_t)m * n * 2);
    c->bound = malloc((size_t)m * n * sizeof *c->bound);
    for (int i = 0; i < m * k; i++) c->x[i] = f32_to_fp16((float)(2 * urand() - 1));
    w4a16_gemm_ref(&c->w, c->x, m, c->yref);
    for (int i = 0; i < m; i++)
        for (int r = 0; r < n; r++) {
            double b = 0;
            for (int g = 0; g < groups; g++) {
                double s = fp16_to_f32(c->w.scales[r * groups + g]), t = 0;
                int z = c->w.zeros[r * groups + g];
                for (int e = 0; e < group; e++) {
                    int col = g * group + e;
                    t += (w4a16_get_q(&c->w, r, col) + z) * fabs(fp16_to_f32(c->x[i * k + col]));
                }
                b += s * t;
            }
            double delta = 2.0 * (k + group) * 0x1p-24 * b;
            double ref = fp16_to_f32(c->yref[i * n + r]);
            c->bound[i * n + r] = delta + ulp16(fabs(ref) + delta);
        }
}

static void w4case_free(struct w4case *c)
{
    w4a16_fini(&c->w);
    w4a16_packed_fini(&c->p);
    free(c->x);
    free(c->yref);
    free(c->bound);
}

/* Count of outputs outside the bound for activation rows 0..m−1. */
static int w4_mismatches(gemv_ctx_t *ctx, const struct w4case *c, const w4a16_packed_t *p, int m)
{
    int n = c->w.n, bad = 0;
    uint16_t *y = malloc((size_t)m * n * 2);
    CHECK(gemv_w4a16(ctx, p, c->x, m, y) == 0);
    for (int i = 0; i < m; i++)
        for (int r = 0; r < n; r++) {
            double got = fp16_to_f32(y[i * n + r]), ref = fp16_to_f32(c->yref[i * n + r]);
            if (!(fabs(got - ref) <= c->bound[i * n + r])) {
                if (bad < 3)
                    printf("  %s m=%d/%d n=%d k=%d row %d: %.9g vs ref %.9g (tol %.3g)\n",
                           gemv_isa_name(gemv_ctx_isa(ctx)), i, m, n, c->w.k, r, got, ref,
                           c->bound[i * n + r]);
                bad++;
            }
        }
    free(y);
    return bad;
}

static gemv_ctx_t *ctxs[2 * GEMV_ISA_COUNT];
static int nctx;

static void make_contexts(void)
{
    err_t e;
    for (int isa = 0; isa < GEMV_ISA_COUNT; isa++) {
        if (!gemv_isa_available(isa)) {
            CHECK(gemv_ctx_create(1, isa, &e) == NULL && e.code == ERR_INPUT);
            printf("  (path %s not available here)\n", gemv_isa_name(isa));
            continue;
        }
        for (int th = 1; th <= 2; th++) {
            ctxs[nctx] = gemv_ctx_create(th, isa, &e);
            CHECK(ctxs[nctx] != NULL);
            if (ctxs[nctx]) nctx++;
        }
    }
    CHECK(gemv_isa_available(GEMV_ISA_SCALAR));
    CHECK(gemv_isa_available(gemv_isa_best()));
}

static void test_w4a16_small(void)
{
    static const int shapes[][3] = {{1, 384, 128}, {3, 640, 128}, {17, 384, 128},
                                    {17, 96, 32}, {3, 192, 64}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        struct w4case c;
        w4case_make(&c, shapes[s][0], shapes[s][1], shapes[s][2], 16);
        for (int i = 0; i < nctx; i++)
            for (int m = 1; m <= 16; m++) CHECK(w4_mismatches(ctxs[i], &c, &c.p, m) == 0);
        w4case_free(&c);
    }
}

static void test_w4a16_big_n(void)
{
    struct w4case c;
    w4case_make(&c, BIG_N, 640, 128, 16);
    static const int ms[] = {1, 2, 3, 5, 8, 11, 16};
    for (int i = 0; i < nctx; i++)
        for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++)
            CHECK(w4_mismatches(ctxs[i], &c, &c.p, ms[j]) == 0);
    w4case_free(&c);
}

/* Long rows: the paths that walk K in chunks so that 1–2 activation rows
 * stay in L1 (K·M·4 bytes > 48 KiB: K = 6400 at M = 2 with the 128-nibble
 * path, K = 11008 without it) and the usual chunking for M >= 3; K = 11008 is
 * LLaMA-2-7B's down projection. */
static void test_w4a16_long_k(void)
{
    static const int shapes[][3] = {{17, 11008, 128}, {9, 6400, 128}, {5, 12352, 64}};
    static const int ms[] = {1, 2, 3, 4, 8, 9, 16};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        struct w4case c;
        w4case_make(&c, shapes[s][0], shapes[s][1], shapes[s][2], 16);
        for (int i = 0; i < nctx; i++)
            for (size_t j = 0; j < sizeof ms / sizeof ms[0]; j++)
                CHECK(w4_mismatches(ctxs[i], &c, &c.p, ms[j]) == 0);
        w4case_free(&c);
    }
}

/* Swapping two nibbles of one row (a layout bug in miniature) must be caught
 * by the tolerance above, on every path. */
static void test_tolerance_detects_corruption(void)
{
    struct w4case c;
    w4case_make(&c, 17, 384, 128, 1);
    for (int i = 0; i < nctx; i++) {
        w4a16_packed_t bad;
        CHECK(w4a16_packed_init(&bad, 17, 384, 128) == 0);
        memcpy(bad.q, c.p.q, 17 * 192);
        memcpy(bad.scales, c.p.scales, 17 * 3 * 2);
        memcpy(bad.zeros, c.p.zeros, 17 * 3);
        for (int b = 0; b < 12; b++) bad.q[5 * 192 + b] = (uint8_t)(c.p.q[5 * 192 + b] ^ 0x3C);
        CHECK(w4_mismatches(ctxs[i], &c, &bad, 1) >= 1);
        w4a16_packed_fini(&bad);
    }
    w4case_free(&c);
}

/* The int8 kernel (gemv.h) against the exact reference. Independently of
 * the kernel, per (row of x, group): d = max|x|/127 and xq = round(x/d), so
 * |x − d·xq| ≤ d·(1/2 + 2^−16) (the 2^−16 covers the fp32 rounding of d and
 * x/d, |x/d| ≤ 127). Hence |y_int8 − y_exact| ≤ Σ_g s·d·(1/2 + 2^−16)·Σ_k
 * |q − z| = Q, plus the fp32 rounding of both sums, each at most
 * 2(K + g)·u·B with B = Σ_g s·Σ_k (q + z)·(|x| + d) (magnitudes summed by
 * either), plus one fp16 ulp. Also returns the largest |error| relative to
 * the row's Σ|w·x| through *rel, to state the typical size. */
static double w4i8_worst;   /* largest |error| / tolerance seen on good weights */

static int w4i8_mismatches(gemv_ctx_t *ctx, const struct w4case *c, const w4a16_packed_t *p,
                           int m, double *rel)
{
    int n = c->w.n, k = c->w.k, group = c->w.group, groups = k / group, bad = 0;
    uint16_t *y = malloc((size_t)m * n * 2);
    CHECK(gemv_w4a16(ctx, p, c->x, m, y) == 0);
    for (int i = 0; i < m; i++)
        for (int r = 0; r < n; r++) {
            double qerr = 0, b = 0, mag = 0;
            for (int g = 0; g < groups; g++) {
                double s = fp16_to_f32(c->w.scales[r * groups + g]), amax = 0;
                int z = c->w.zeros[r * groups + g];
                for (int e = 0; e < group; e++)
                    amax = fmax(amax, fabs(fp16_to_f32(c->x[i * k + g * group + e])));
                double d = amax / 127.0, sq = 0, sb = 0;
                for (int e = 0; e < group; e++) {
                    int col = g * group + e, q = (int)w4a16_get_q(&c->w, r, col);
                    double xa = fabs(fp16_to_f32(c->x[i * k + col]));
                    sq += abs(q - z);
                    sb += (q + z) * (xa + d);
                    mag += s * abs(q - z) * xa;
                }
                qerr += s * d * (0.5 + 0x1p-16) * sq;
                b += s * sb;
            }
            double delta = qerr + 4.0 * (k + group) * 0x1p-24 * b;
            double ref = fp16_to_f32(c->yref[i * n + r]), got = fp16_to_f32(y[i * n + r]);
            double tol = delta + ulp16(fabs(ref) + delta);
            if (mag > 0 && fabs(got - ref) / mag > *rel) *rel = fabs(got - ref) / mag;
            if (fabs(got - ref) / tol > w4i8_worst) w4i8_worst = fabs(got - ref) / tol;
            if (!(fabs(got - ref) <= tol)) {
                if (bad < 3)
                    printf("  int8 %s m=%d/%d n=%d k=%d row %d: %.9g vs ref %.9g (tol %.3g)\n",
                           gemv_isa_name(gemv_ctx_isa(ctx)), i, m, n, k, r, got, ref, tol);
                bad++;
            }
        }
    free(y);
    return bad;
}

/* The integer sums are exact, so the int8 kernel's result cannot depend on
 * which dot product formed them: at every M, the VNNI level (AVX-VNNI on
 * the AVX2 path, whose M = 8 kernel reads the nibbles as 16·q and scales
 * by s/16; AVX-512 VNNI) gives the vpmaddubsw level's bits exactly. This
 * catches what the error bound of test_w4a16_int8 cannot, such as a scale
 * off by 0.2% (checked: s·0.0626 instead of s/16 in the AVX2 M = 8 kernel
 * passes that test and fails this one). N = 563: an odd number of row
 * blocks per chunk, so the kernels' runs of blocks leave one over. */
static void test_int8_dot_levels_agree(void)
{
    static const int shapes[][2] = {{563, 384}, {48, 11008}};
    err_t e;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        struct w4case c;
        int n = shapes[s][0];
        w4case_make(&c, n, shapes[s][1], 128, 16);
        CHECK(w4a16_packed_interleave(&c.p) == 0 && c.p.qi != NULL);
        uint16_t *y0 = malloc((size_t)16 * n * 2), *y1 = malloc((size_t)16 * n * 2);
        CHECK(y0 && y1);
        for (int i = 0; i < nctx; i++) {
            CHECK(gemv_ctx_set_w4_kernel(ctxs[i], GEMV_W4_INT8, &e) == 0);
            for (int m = 1; m <= 16; m++) {
                gemv_ctx_set_int8_dot_ext(ctxs[i], GEMV_I8_DOT_BASE);
                CHECK(gemv_w4a16(ctxs[i], &c.p, c.x, m, y0) == 0);
                gemv_ctx_set_int8_dot_ext(ctxs[i], GEMV_I8_DOT_VNNI);
                CHECK(gemv_w4a16(ctxs[i], &c.p, c.x, m, y1) == 0);
                if (memcmp(y0, y1, (size_t)m * n * 2) != 0) {
                    printf("  %s m=%d n=%d k=%d: %s and %s differ\n", gemv_isa_name(gemv_ctx_isa(ctxs[i])),
                           m, n, shapes[s][1], gemv_ctx_int8_dot_name(ctxs[i], m), "vpmaddubsw");
                    CHECK(0);
                }
            }
            gemv_ctx_set_int8_dot_ext(ctxs[i], GEMV_I8_DOT_AMX);
            CHECK(gemv_ctx_set_w4_kernel(ctxs[i], GEMV_W4_EXACT, &e) == 0);
        }
        free(y0);
        free(y1);
        w4case_free(&c);
    }
}

/* Every path with the int8 kernel chosen, at every level of integer dot
 * product the CPU has (AMX tiles, VNNI / AVX-VNNI, the vpmaddubsw
 * fallbacks):
 * groups of 128 (the SIMD kernels, row-major and on the interleaved copy)
 * and 32, 64, 256 (the portable one), M = 1..16, N not a multiple of the
 * rows or row blocks streamed at once, N = 563 so that each chunk of row
 * blocks holds several blocks per stream (the streams walk runs of blocks,
 * then the blocks left over), a long K; then a corrupted weight is caught
 * in either layout. */
static void test_w4a16_int8(void)
{
    static const int shapes[][3] = {{1, 384, 128}, {17, 640, 128}, {7, 512, 256},
                                    {5, 11008, 128}, {3, 192, 64}, {17, 96, 32},
                                    {80, 384, 128}, {35, 11008, 128}, {563, 384, 128}};
    double rel = 0;
    err_t e;
    for (int i = 0; i < nctx; i++) CHECK(gemv_ctx_set_w4_kernel(ctxs[i], GEMV_W4_INT8, &e) == 0);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        struct w4case c;
        w4case_make(&c, shapes[s][0], shapes[s][1], shapes[s][2], 16);
        /* Row-major copy only, then with the interleaved copy (group 128:
         * the blocks of 16 rows and the n mod 16 rows left out of them). */
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                int irc = w4a16_packed_interleave(&c.p);
                CHECK(irc == (shapes[s][2] == 128 ? 0 : -1));
                CHECK((c.p.qi != NULL) == (shapes[s][2] == 128 && shapes[s][0] >= 16));
                if (!c.p.qi) break;
            }
            for (int i = 0; i < nctx; i++)
                for (int ext = GEMV_I8_DOT_AMX; ext >= GEMV_I8_DOT_BASE; ext--) {
                    gemv_ctx_set_int8_dot_ext(ctxs[i], ext);
                    for (int m = 1; m <= 16; m += (shapes[s][1] > 4096 || shapes[s][0] > 100 ? 7 : 1))
                        CHECK(w4i8_mismatches(ctxs[i], &c, &c.p, m, &rel) == 0);
                }
        }
        w4case_free(&c);
    }
    printf("  int8 vs exact: largest |error| / sum|w.x| = %.2e, / tolerance = %.2f\n", rel,
           w4i8_worst);
    struct w4case c;
    w4case_make(&c, 17, 384, 128, 16);
    /* Row 5's weights pushed towards the sign of x (q = 15 where x > 0, 0
     * elsewhere): every term of the change has one sign, so it is about
     * Σ|x|·7.5·s, far beyond the int8 bound (about s·Σ|q − z|/254). */
    w4a16_t w2;
    CHECK(w4a16_init(&w2, 17, 384, 128) == 0);
    memcpy(w2.qweight, c.w.qweight, 17 * 48 * 4);
    memcpy(w2.scales, c.w.scales, 17 * 3 * 2);
    memcpy(w2.zeros, c.w.zeros, 17 * 3);
    for (int col = 0; col < 384; col++) w4a16_set_q(&w2, 5, col, fp16_to_f32(c.x[col]) > 0 ? 15 : 0);
    for (int i = 0; i < nctx; i++)
        for (int ext = GEMV_I8_DOT_AMX; ext >= GEMV_I8_DOT_BASE; ext--) {
            w4a16_packed_t bad;
            gemv_ctx_set_int8_dot_ext(ctxs[i], ext);
            CHECK(w4a16_repack(&w2, &bad) == 0);
            CHECK(w4i8_mismatches(ctxs[i], &c, &bad, 1, &rel) >= 1);
            CHECK(w4a16_packed_interleave(&bad) == 0 && bad.qi != NULL);
            CHECK(w4i8_mismatches(ctxs[i], &c, &bad, 1, &rel) >= 1);
            CHECK(w4i8_mismatches(ctxs[i], &c, &bad, 16, &rel) >= 1);   /* AMX where it runs */
            w4a16_packed_fini(&bad);
        }
    /* Which integer dot products ran above (every level on each path). */
    for (int i = 0; i < nctx; i++) {
        printf("  int8 %s, M = 1 / M = 16:", gemv_isa_name(gemv_ctx_isa(ctxs[i])));
        for (int ext = GEMV_I8_DOT_AMX; ext >= GEMV_I8_DOT_BASE; ext--) {
            gemv_ctx_set_int8_dot_ext(ctxs[i], ext);
            printf(" %s/%s", gemv_ctx_int8_dot_name(ctxs[i], 1), gemv_ctx_int8_dot_name(ctxs[i], 16));
        }
        printf("\n");
        gemv_ctx_set_int8_dot_ext(ctxs[i], GEMV_I8_DOT_AMX);
    }
    w4a16_fini(&w2);
    w4case_free(&c);
    for (int i = 0; i < nctx; i++) {
        CHECK(gemv_ctx_set_w4_kernel(ctxs[i], GEMV_W4_EXACT, &e) == 0);
        CHECK(gemv_ctx_w4_kernel(ctxs[i]) == GEMV_W4_EXACT);
    }
    CHECK(gemv_ctx_set_w4_kernel(ctxs[0], GEMV_W4_COUNT, &e) == -1 && e.code == ERR_INPUT);
    CHECK(gemv_w4_kernel_from_name("int8") == GEMV_W4_INT8 &&
          gemv_w4_kernel_from_name("exact") == GEMV_W4_EXACT &&
          gemv_w4_kernel_from_name("int4") == -1);
}

/* The SIMD int8 quantisers (gemv_impl.h: w4i8_quant) against gemv.h's rule
 * written out here: d = max|x|/127 and xq = x·(127/max) rounded to the
 * nearest integer, ties to even (lrintf in the default rounding mode), all
 * zero for an all-zero group; dsum = d·Σxq. Bit for bit: the kernels rely
 * on xq being these integers. Groups include exact ties (max 127, so the
 * factor is 1 and x = k + 1/2), tiny and subnormal fp16 values, and zeros. */
static void test_int8_quantiser(void)
{
    enum { NG = 64 };
    uint16_t x[NG * 128];
    for (int g = 0; g < NG; g++)
        for (int e = 0; e < 128; e++) {
            double v;
            switch (g % 4) {
            case 0: v = 8.0 * (urand() - 0.5); break;
            case 1: v = e == 0 ? 127.0 : (double)((int)(urand() * 254) - 127) + 0.5; break;
            case 2: v = ldexp(urand() - 0.5, -14 - (int)(urand() * 10)); break;
            default: v = g % 8 == 3 ? 0.0 : (urand() < 0.5 ? -1.0 : 1.0) * ldexp(1.0, e % 16 - 8);
            }
            x[g * 128 + e] = f32_to_fp16((float)v);
        }
    int8_t want[NG * 128], got[NG * 128];
    float wd[NG], wsum[NG], gd[NG], gsum[NG];
    for (int g = 0; g < NG; g++) {
        float amax = 0.0f;
        for (int e = 0; e < 128; e++) amax = fmaxf(amax, fabsf(fp16_to_f32(x[g * 128 + e])));
        float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
        long sum = 0;
        for (int e = 0; e < 128; e++) {
            long q = lrintf(fp16_to_f32(x[g * 128 + e]) * inv);
            want[g * 128 + e] = (int8_t)q;
            sum += q;
        }
        wd[g] = amax / 127.0f;
        wsum[g] = wd[g] * (float)sum;
    }
    static const struct { int isa; const gemv_impl_t *impl; } paths[] = {
#if defined(__x86_64__)
        {GEMV_ISA_AVX2, &gemv_impl_avx2},
        {GEMV_ISA_AVX512, &gemv_impl_avx512},
#endif
        {GEMV_ISA_SCALAR, NULL}};
    for (size_t p = 0; paths[p].impl; p++) {
        if (!gemv_isa_available(paths[p].isa) || !paths[p].impl->w4i8_quant) continue;
        memset(got, 0x55, sizeof got);
        paths[p].impl->w4i8_quant(x, NG, got, gd, gsum);
        int bad = 0;
        for (int i = 0; i < NG * 128; i++) bad += got[i] != want[i];
        for (int g = 0; g < NG; g++) bad += memcmp(&gd[g], &wd[g], 4) != 0 || memcmp(&gsum[g], &wsum[g], 4) != 0;
        if (bad) printf("  quantiser %s: %d values differ\n", gemv_isa_name(paths[p].isa), bad);
        CHECK(bad == 0);
    }
}

static void dense_case(int n, int k, int m)
{
    uint16_t *wh = malloc((size_t)n * k * 2), *xh = malloc((size_t)m * k * 2);
    float *wf = malloc((size_t)n * k * 4), *xf = malloc((size_t)m * k * 4);
    uint16_t *yh = malloc((size_t)m * n * 2), *rh = malloc((size_t)m * n * 2);
    float *yf = malloc((size_t)m * n * 4), *rf = malloc((size_t)m * n * 4);
    for (int i = 0; i < n * k; i++) {
        wh[i] = f32_to_fp16((float)(0.1 * (2 * urand() - 1)));
        wf[i] = fp16_to_f32(wh[i]);
    }
    for (int i = 0; i < m * k; i++) {
        xh[i] = f32_to_fp16((float)(2 * urand() - 1));
        xf[i] = fp16_to_f32(xh[i]);
    }
    ref_gemm_f16(wh, n, k, xh, m, rh);
    ref_gemm_f32(wf, n, k, xf, m, rf);
    float *yhf = malloc((size_t)m * n * 4);
    for (int c = 0; c < nctx; c++) {
        CHECK(gemv_f16(ctxs[c], wh, n, k, xh, m, yh) == 0);
        CHECK(gemv_f32(ctxs[c], wf, n, k, xf, m, yf) == 0);
        CHECK(gemv_f16_f32(ctxs[c], wh, n, k, xh, m, yhf) == 0);
        int bad = 0;
        for (int i = 0; i < m; i++)
            for (int r = 0; r < n; r++) {
                double b = 0;
                for (int e = 0; e < k; e++) b += fabs((double)wf[r * k + e] * xf[i * k + e]);
                double delta = 2.0 * k * 0x1p-24 * b;
                double ref16 = fp16_to_f32(rh[i * n + r]);
                bad += !(fabs(fp16_to_f32(yh[i * n + r]) - ref16) <= delta + ulp16(fabs(ref16) + delta));
                bad += !(fabs((double)yf[i * n + r] - rf[i * n + r]) <= delta);
                /* Same products as the fp32 reference (fp16 weights are
                 * exact in fp32), summed in another order. */
                bad += !(fabs((double)yhf[i * n + r] - rf[i * n + r]) <= delta);
            }
        if (bad) printf("  %s dense n=%d k=%d m=%d: %d mismatches\n",
                        gemv_isa_name(gemv_ctx_isa(ctxs[c])), n, k, m, bad);
        CHECK(bad == 0);
    }
    free(wh);
    free(xh);
    free(wf);
    free(xf);
    free(yh);
    free(rh);
    free(yf);
    free(rf);
    free(yhf);
}

static void test_dense(void)
{
    /* K = 1, 7, 77, 333: every vector-tail path (64-, 32-, 16-, 8-wide and
     * scalar/masked remainders). */
    static const int ks[] = {1, 7, 77, 333};
    static const int ns[] = {1, 3, 17};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 3; b++)
            for (int m = 1; m <= 16; m += 5) dense_case(ns[b], ks[a], m);
    dense_case(BIG_N, 100, 3);
}

/* gemv_f16_f32 rows are bit-identical whatever else is in the batch: each
 * row of a batch of m = 1..19 (every tile size and remainder, on every path
 * and thread count) against the same row computed alone, and against the
 * same row placed at another index among other rows. K = 576 and 1536 are
 * SmolLM2-135M's widths (kernels/llm/llm.h verifies on this kernel). */
static int invariant_bad(gemv_ctx_t *ctx, const uint16_t *w, int n, int k, const uint16_t *x,
                         int m, float *y, float *alone)
{
    int bad = 0;
    for (int i = 0; i < m; i++) {
        if (gemv_f16_f32(ctx, w, n, k, x + (size_t)i * k, 1, alone) != 0) return -1;
        bad += memcmp(alone, y + (size_t)i * n, (size_t)n * sizeof *y) != 0;
    }
    return bad;
}

static void test_f16_f32_batch_invariant(void)
{
    static const int ks[] = {576, 1536, 77};
    const int n = 37, mmax = 19;
    for (size_t a = 0; a < 3; a++) {
        int k = ks[a];
        uint16_t *w = malloc((size_t)n * k * 2), *x = malloc((size_t)mmax * k * 2);
        float *y = malloc((size_t)mmax * n * 4), *alone = malloc((size_t)n * 4);
        for (int i = 0; i < n * k; i++) w[i] = f32_to_fp16((float)(0.1 * (2 * urand() - 1)));
        for (int i = 0; i < mmax * k; i++) x[i] = f32_to_fp16((float)(2 * urand() - 1));
        for (int c = 0; c < nctx; c++)
            for (int m = 1; m <= mmax; m++) {
                CHECK(gemv_f16_f32(ctxs[c], w, n, k, x, m, y) == 0);
                int bad = invariant_bad(ctxs[c], w, n, k, x, m, y, alone);
                if (bad) printf("  %s k=%d m=%d: %d rows differ from the row alone\n",
                                gemv_isa_name(gemv_ctx_isa(ctxs[c])), k, m, bad);
                CHECK(bad == 0);
            }
        free(w);
        free(x);
        free(y);
        free(alone);
    }
}

static void chunk_hit(void *a, int i, int n)
{
    (void)n;
    __atomic_fetch_add(&((int *)a)[i], 1, __ATOMIC_RELAXED);
}

static void test_parallel_chunks(void)
{
    /* Every chunk runs exactly once whatever the thread count, also when
     * calls follow each other back to back (stale workers claim nothing). */
    for (int c = 0; c < nctx; c++) {
        int hits[1000] = {0};
        for (int rep = 0; rep < 50; rep++) gemv_parallel(ctxs[c], chunk_hit, hits, 20);
        gemv_parallel(ctxs[c], chunk_hit, hits, 1000);
        int bad = 0;
        for (int i = 0; i < 1000; i++) bad += hits[i] != (i < 20 ? 51 : 1);
        CHECK(bad == 0);
    }
}

int main(void)
{
    make_contexts();
    RUN(test_w4a16_small);
    RUN(test_w4a16_big_n);
    RUN(test_w4a16_long_k);
    RUN(test_tolerance_detects_corruption);
    RUN(test_w4a16_int8);
    RUN(test_int8_dot_levels_agree);
    RUN(test_int8_quantiser);
    RUN(test_dense);
    RUN(test_f16_f32_batch_invariant);
    RUN(test_parallel_chunks);
    for (int i = 0; i < nctx; i++) gemv_ctx_free(ctxs[i]);
    return check_done();
}
