/* The FP16 verify step on the GPU against the CPU references (kernels/ref.h):
 * cuBLAS linear layers (GemmEx and every cublasLt heuristic candidate),
 * flash-decoding attention (forced and automatic splits, GQA, causal q > 1),
 * and one whole layer checked stage by stage on the GPU's own intermediates
 * (so each comparison is tight and a wrong stage cannot hide behind the
 * residual path).
 *
 * Tolerances, per element:
 *  GEMM: both sides accumulate fp16 products (exact in fp32) in fp32 and round
 *    once to fp16: |y − ref| ≤ 2⁻¹⁰·|ref| + 2·k·2⁻²⁴·Σ|x·w| + 2⁻²⁴ (two final
 *    roundings, two worst-case fp32 summations, subnormal floor).
 *  Attention: the output is a convex combination of V rows (|v| ≤ 1); fp32
 *    softmax and sums differ between the two by far less than 1e-4, then
 *    each side rounds to fp16: |o − ref| ≤ 2⁻¹⁰·|ref| + 1e-4.
 *  RMSNorm / SiLU: fp32 with fast intrinsics (rsqrtf, __expf: a few ulp):
 *    |y − ref| ≤ 2⁻⁹·|ref| + 1e-6. Residual adds: bit-exact (the same fp32
 *    add of two fp16 values, rounded once). */
#include <math.h>
#include <string.h>

#include "cutest.h"
#include "cuda/attn_cuda.cuh"
#include "cuda/cugemm.cuh"
#include "cuda/layer_cuda.cuh"

extern "C" {
#include "ref.h"
}

/* The reference of a GEMM and, per element, Σ|x·w| (for the bound). */
typedef struct gemm_truth { uint16_t *ref; double *mag; } gemm_truth_t;

static gemm_truth_t gemm_truth(const uint16_t *w, int n, int k, const uint16_t *x, int t)
{
    gemm_truth_t g;
    g.ref = (uint16_t *)malloc((size_t)t * n * 2);
    g.mag = (double *)malloc((size_t)t * n * sizeof(double));
    ref_gemm_f16(w, n, k, x, t, g.ref);
    float *xf = (float *)malloc((size_t)k * sizeof(float));
    for (int i = 0; i < t; i++) {
        for (int kk = 0; kk < k; kk++) xf[kk] = fabsf(fp16_to_f32(x[(size_t)i * k + kk]));
        for (int j = 0; j < n; j++) {
            double mag = 0;
            for (int kk = 0; kk < k; kk++)
                mag += (double)xf[kk] * fabsf(fp16_to_f32(w[(size_t)j * k + kk]));
            g.mag[(size_t)i * n + j] = mag;
        }
    }
    free(xf);
    return g;
}

static void gemm_truth_free(gemm_truth_t *g) { free(g->ref); free(g->mag); }

/* Counts elements of y outside the GEMM bound against the reference. */
static int gemm_compare(const gemm_truth_t *g, int n, int k, int t, const uint16_t *y,
                        const char *what)
{
    int bad = 0;
    for (int i = 0; i < t; i++)
        for (int j = 0; j < n; j++) {
            double mag = g->mag[(size_t)i * n + j];
            double a = fp16_to_f32(y[(size_t)i * n + j]), b = fp16_to_f32(g->ref[(size_t)i * n + j]);
            double tol = ldexp(fabs(b), -10) + 2.0 * k * ldexp(mag, -24) + ldexp(1.0, -24);
            if (!ct_isfinite16(y[(size_t)i * n + j]) || fabs(a - b) > tol) {
                if (bad < 5)
                    printf("  %s t=%d n=%d k=%d y[%d][%d] = %g, ref %g, tol %g\n", what, t, n, k,
                           i, j, a, b, tol);
                bad++;
            }
        }
    return bad;
}

static int gemm_mismatches(const uint16_t *w, int n, int k, const uint16_t *x, int t,
                           const uint16_t *y, const char *what)
{
    gemm_truth_t g = gemm_truth(w, n, k, x, t);
    int bad = gemm_compare(&g, n, k, t, y, what);
    gemm_truth_free(&g);
    return bad;
}

/* lt_required: the shape is one cublasLt must have candidates for (every
 * dimension a multiple of 8, as in all model shapes); for odd leading
 * dimensions an empty heuristic answer is reported, not failed (calibration
 * then keeps cublasGemmEx alone, as it does for such a shape). */
static void check_gemm(cugemm_t *g, int t, int n, int k, uint64_t seed, int lt_required)
{
    err_t err = {0, {0}};
    ct_rng_t r = {seed};
    uint16_t *w = (uint16_t *)malloc((size_t)n * k * 2), *x = (uint16_t *)malloc((size_t)t * k * 2);
    uint16_t *y = (uint16_t *)malloc((size_t)t * n * 2);
    ct_fill_fp16(&r, w, (size_t)n * k, -0.1f, 0.1f);
    ct_fill_fp16(&r, x, (size_t)t * k, -1.f, 1.f);
    __half *dw = (__half *)ct_upload(w, (size_t)n * k * 2);
    __half *dx = (__half *)ct_upload(x, (size_t)t * k * 2), *dy = NULL;
    CT_CUDA(cudaMalloc((void **)&dy, (size_t)t * n * 2));

    gemm_truth_t truth = gemm_truth(w, n, k, x, t);   /* once, for every candidate */
    CT_CUDA(cudaMemset(dy, 0xff, (size_t)t * n * 2));
    CT_OK(cugemm_ex(g, dw, dx, dy, t, n, k, 0, &err), &err);
    ct_download(y, dy, (size_t)t * n * 2);
    CHECK(gemm_compare(&truth, n, k, t, y, "gemmex") == 0);

    cugemm_plan_t p;
    if (lt_required) {
        CT_OK(cugemm_plan_init(g, &p, t, n, k, &err), &err);
        CHECK(p.nalgo >= 1);
    } else if (cugemm_plan_init(g, &p, t, n, k, &err)) {
        printf("  (t=%d n=%d k=%d: no cublasLt candidate: %s)\n", t, n, k, err.msg);
        (void)cudaGetLastError();
    }
    for (int a = 0; a < p.nalgo; a++) {
        CT_CUDA(cudaMemset(dy, 0xff, (size_t)t * n * 2));
        err_t e2 = {0, {0}};
        /* Split-K partials must be reduced in fp32 (cugemm.cuh): the
         * bound below assumes fp32 accumulation throughout. */
        uint32_t scheme = 0;
        size_t wrote = 0;
        CHECK(cublasLtMatmulAlgoConfigGetAttribute(&p.algo[a].algo,
                                                   CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                                   &scheme, sizeof scheme, &wrote) ==
              CUBLAS_STATUS_SUCCESS);
        if (scheme != CUBLASLT_REDUCTION_SCHEME_NONE &&
            scheme != CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE)
            printf("  lt%d: reduction scheme %u (fp16 partials)\n", a, scheme);
        CHECK(scheme == CUBLASLT_REDUCTION_SCHEME_NONE ||
              scheme == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE);
        if (cugemm_plan_run(g, &p, a, dw, dx, dy, 0, &e2)) {
            /* A candidate the library refuses at run time is skipped by
             * calibration too; it must say so rather than compute garbage. */
            printf("  (lt candidate %d refused: %s)\n", a, e2.msg);
            (void)cudaGetLastError();   /* as calibration does: no stale error */
            continue;
        }
        ct_download(y, dy, (size_t)t * n * 2);
        char what[32];
        snprintf(what, sizeof what, "lt%d", a);
        CHECK(gemm_compare(&truth, n, k, t, y, what) == 0);
    }
    cugemm_plan_fini(&p);
    gemm_truth_free(&truth);
    CT_CUDA(cudaFree(dw));
    CT_CUDA(cudaFree(dx));
    CT_CUDA(cudaFree(dy));
    free(w); free(x); free(y);
}

static void test_gemm(void)
{
    if (!ct_have_gpu()) return;
    err_t err = {0, {0}};
    cugemm_t g;
    CT_OK(cugemm_init(&g, &err), &err);
    check_gemm(&g, 1, 257, 320, 1, 0);
    check_gemm(&g, 5, 130, 64, 2, 0);
    check_gemm(&g, 37, 96, 1000, 3, 1);
    check_gemm(&g, 64, 512, 512, 4, 1);
    /* Few output tiles over a long K: where heuristics pick split-K. */
    check_gemm(&g, 1, 256, 8192, 5, 1);
    check_gemm(&g, 8, 128, 16384, 6, 1);
    cugemm_fini(&g);
}

/* Attention for `batch` sequences with contexts ctx[], q new tokens each;
 * compared with ref_attention per sequence. splits: 0 = automatic. */
static void check_attention(int batch, int q, int heads, int kvh, int D, const int *ctx,
                            int splits, uint64_t seed)
{
    err_t err = {0, {0}};
    ct_rng_t r = {seed};
    int cap = 0;
    for (int b = 0; b < batch; b++) cap = ctx[b] + q > cap ? ctx[b] + q : cap;
    int maxc = cap - q;
    size_t qe = (size_t)batch * q * heads * D, ce = (size_t)batch * kvh * cap * D;
    uint16_t *hq = (uint16_t *)malloc(qe * 2), *hk = (uint16_t *)malloc(ce * 2);
    uint16_t *hv = (uint16_t *)malloc(ce * 2), *ho = (uint16_t *)malloc(qe * 2);
    ct_fill_fp16(&r, hq, qe, -3.f, 3.f);   /* scores spread enough to be peaky */
    ct_fill_fp16(&r, hk, ce, -1.f, 1.f);
    ct_fill_fp16(&r, hv, ce, -1.f, 1.f);

    attn_cuda_args_t a;
    memset(&a, 0, sizeof a);
    a.batch = batch; a.q = q; a.heads = heads; a.kv_heads = kvh; a.head_dim = D;
    a.qp = (const __half *)ct_upload(hq, qe * 2); a.q_ld = (long)heads * D;
    a.kc = (const __half *)ct_upload(hk, ce * 2);
    a.vc = (const __half *)ct_upload(hv, ce * 2);
    a.cap = cap; a.ctx = (const int *)ct_upload(ctx, (size_t)batch * sizeof(int));
    a.max_ctx = maxc;
    CT_CUDA(cudaMalloc((void **)&a.out, qe * 2));
    CT_CUDA(cudaMemset(a.out, 0xff, qe * 2));
    a.out_ld = (long)heads * D;
    attn_cuda_ws_t ws;
    CT_OK(attn_cuda_ws_init(&ws, (long)batch * q * heads, D, &err), &err);
    CT_OK(attn_cuda_run(&a, &ws, splits, 0, &err), &err);
    ct_download(ho, a.out, qe * 2);

    int bad = 0;
    for (int b = 0; b < batch; b++) {
        int L = ctx[b] + q;
        /* Reference layouts: kc [L][kvh][D]; ours [b][kvh][cap][D]. */
        uint16_t *rk = (uint16_t *)malloc((size_t)L * kvh * D * 2);
        uint16_t *rv = (uint16_t *)malloc((size_t)L * kvh * D * 2);
        uint16_t *ro = (uint16_t *)malloc((size_t)q * heads * D * 2);
        for (int p = 0; p < L; p++)
            for (int g = 0; g < kvh; g++)
                for (int d = 0; d < D; d++) {
                    size_t src = (((size_t)b * kvh + g) * cap + p) * D + d;
                    rk[((size_t)p * kvh + g) * D + d] = hk[src];
                    rv[((size_t)p * kvh + g) * D + d] = hv[src];
                }
        CHECK(ref_attention(hq + (size_t)b * q * heads * D, rk, rv, q, ctx[b], heads, kvh, D,
                            ro) == 0);
        for (size_t i = 0; i < (size_t)q * heads * D; i++) {
            uint16_t gv = ho[(size_t)b * q * heads * D + i];
            double x = fp16_to_f32(gv), y = fp16_to_f32(ro[i]);
            double tol = ldexp(fabs(y), -10) + 1e-4;
            if (!ct_isfinite16(gv) || fabs(x - y) > tol) {
                if (bad < 5)
                    printf("  attn b=%d q=%d ctx=%d splits=%d elem %zu: %g vs ref %g\n", b, q,
                           ctx[b], splits, i, x, y);
                bad++;
            }
        }
        free(rk); free(rv); free(ro);
    }
    CHECK(bad == 0);
    attn_cuda_ws_fini(&ws);
    CT_CUDA(cudaFree((void *)a.qp));
    CT_CUDA(cudaFree((void *)a.kc));
    CT_CUDA(cudaFree((void *)a.vc));
    CT_CUDA(cudaFree((void *)a.ctx));
    CT_CUDA(cudaFree(a.out));
    free(hq); free(hk); free(hv); free(ho);
}

static void test_attention_short(void)
{
    if (!ct_have_gpu()) return;
    static const int c1[1] = {0};
    check_attention(1, 1, 4, 4, 128, c1, 1, 10);          /* one key */
    static const int c3[3] = {5, 300, 33};
    check_attention(3, 5, 8, 2, 128, c3, 0, 11);          /* GQA 4:1, causal q = 5 */
    check_attention(3, 9, 8, 2, 128, c3, 3, 12);          /* 36 rows: two row tiles */
    check_attention(3, 2, 4, 1, 64, c3, 1, 13);           /* head_dim 64 */
}

static void test_attention_long_splits(void)
{
    if (!ct_have_gpu()) return;
    static const int c2[2] = {4000, 1500};
    int s[4] = {1, 7, 0, 64};
    for (int i = 0; i < 4; i++) check_attention(2, 3, 8, 8, 128, c2, s[i], 20 + i);
    static const int c1[1] = {2048};
    check_attention(1, 9, 64, 8, 128, c1, 0, 30);         /* 70b-like group of 8 */
}

static void test_auto_splits(void)
{
    attn_cuda_args_t a;
    memset(&a, 0, sizeof a);
    a.batch = 1; a.q = 1; a.heads = 32; a.kv_heads = 32; a.head_dim = 128;
    a.max_ctx = 32768;
    /* 32 units on 132 SMs: ceil(264 / 32) = 9 splits. */
    CHECK(attn_cuda_auto_splits(&a, 132) == 9);
    a.max_ctx = 100;   /* 101 keys: at least 256 keys per split -> 1 */
    CHECK(attn_cuda_auto_splits(&a, 132) == 1);
    a.batch = 64; a.max_ctx = 32768;   /* 2048 units fill the device: 1 */
    CHECK(attn_cuda_auto_splits(&a, 132) == 1);
}

/* ---- one layer, stage by stage --------------------------------------- */

static void rmsnorm_ref(const uint16_t *x, int t, int n, uint16_t *y)
{
    for (int i = 0; i < t; i++) {
        double s = 0;
        for (int j = 0; j < n; j++) {
            double v = fp16_to_f32(x[(size_t)i * n + j]);
            s += v * v;
        }
        double r = 1.0 / sqrt(s / n + 1e-5);
        for (int j = 0; j < n; j++)
            y[(size_t)i * n + j] = f32_to_fp16((float)(fp16_to_f32(x[(size_t)i * n + j]) * r));
    }
}

static int close_count(const uint16_t *got, const uint16_t *ref, size_t n, double rel,
                       double abs_tol, const char *what)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        double a = fp16_to_f32(got[i]), b = fp16_to_f32(ref[i]);
        if (!ct_isfinite16(got[i]) || fabs(a - b) > rel * fabs(b) + abs_tol) {
            if (bad < 5) printf("  %s[%zu] = %g, ref %g\n", what, i, a, b);
            bad++;
        }
    }
    return bad;
}

static uint16_t *dl(const __half *d, size_t n)
{
    uint16_t *h = (uint16_t *)malloc(n * 2);
    ct_download(h, d, n * 2);
    return h;
}

static void test_layer_stages(void)
{
    if (!ct_have_gpu()) return;
    err_t err = {0, {0}};
    ct_rng_t r = {77};
    const layer_cuda_dims_t d = {256, 4, 2, 64, 512, 1};
    const int batch = 2, q = 3, T = batch * q, cap = 64;
    const int ctx[2] = {7, 40};
    layer_cuda_t l;
    cugemm_t g;
    CT_OK(cugemm_init(&g, &err), &err);
    CT_OK(layer_cuda_init(&l, &d, T, batch, cap, LAYER_FP16, &err), &err);
    if (check_failed_now) return;
    {   /* NaN-poison every intermediate: a stage that leaves part of its
         * output unwritten then fails its comparison. */
        __half *inter[] = {l.xn, l.qkv, l.att, l.o, l.h, l.hn, l.gu, l.act, l.down};
        size_t cnt[] = {(size_t)T * d.hidden, (size_t)T * l.qkv_n, (size_t)T * l.att_n,
                        (size_t)T * d.hidden, (size_t)T * d.hidden, (size_t)T * d.hidden,
                        (size_t)T * l.gu_n, (size_t)T * d.ffn, (size_t)T * d.hidden};
        for (int i = 0; i < 9; i++) CT_CUDA(cudaMemset(inter[i], 0xff, cnt[i] * 2));
    }
    const int H = d.hidden;
    size_t nq = (size_t)l.qkv_n * H, no = (size_t)H * l.att_n, ng = (size_t)l.gu_n * H,
           nd = (size_t)H * d.ffn, nc = (size_t)batch * d.kv_heads * cap * d.head_dim;
    uint16_t *wq = (uint16_t *)malloc(nq * 2), *wo = (uint16_t *)malloc(no * 2);
    uint16_t *wg = (uint16_t *)malloc(ng * 2), *wd = (uint16_t *)malloc(nd * 2);
    uint16_t *kc0 = (uint16_t *)malloc(nc * 2), *vc0 = (uint16_t *)malloc(nc * 2);
    uint16_t *x = (uint16_t *)malloc((size_t)T * H * 2);
    ct_fill_fp16(&r, wq, nq, -0.1f, 0.1f);
    ct_fill_fp16(&r, wo, no, -0.1f, 0.1f);
    ct_fill_fp16(&r, wg, ng, -0.1f, 0.1f);
    ct_fill_fp16(&r, wd, nd, -0.05f, 0.05f);
    ct_fill_fp16(&r, kc0, nc, -1.f, 1.f);
    ct_fill_fp16(&r, vc0, nc, -1.f, 1.f);
    ct_fill_fp16(&r, x, (size_t)T * H, -1.f, 1.f);
    CT_CUDA(cudaMemcpy(l.w_qkv, wq, nq * 2, cudaMemcpyHostToDevice));
    CT_CUDA(cudaMemcpy(l.w_o, wo, no * 2, cudaMemcpyHostToDevice));
    CT_CUDA(cudaMemcpy(l.w_gu, wg, ng * 2, cudaMemcpyHostToDevice));
    CT_CUDA(cudaMemcpy(l.w_down, wd, nd * 2, cudaMemcpyHostToDevice));
    CT_CUDA(cudaMemcpy(l.kc, kc0, nc * 2, cudaMemcpyHostToDevice));
    CT_CUDA(cudaMemcpy(l.vc, vc0, nc * 2, cudaMemcpyHostToDevice));
    CT_OK(layer_cuda_set_ctx(&l, ctx, batch, &err), &err);
    __half *dx = (__half *)ct_upload(x, (size_t)T * H * 2), *dy = NULL;
    CT_CUDA(cudaMalloc((void **)&dy, (size_t)T * H * 2));
    CT_CUDA(cudaMemset(dy, 0xff, (size_t)T * H * 2));
    CT_OK(layer_cuda_forward(&l, &g, dx, dy, batch, q, 0, &err), &err);
    if (check_failed_now) return;

    uint16_t *xn = dl(l.xn, (size_t)T * H), *qkv = dl(l.qkv, (size_t)T * l.qkv_n);
    uint16_t *att = dl(l.att, (size_t)T * l.att_n), *o = dl(l.o, (size_t)T * H);
    uint16_t *h = dl(l.h, (size_t)T * H), *hn = dl(l.hn, (size_t)T * H);
    uint16_t *gu = dl(l.gu, (size_t)T * l.gu_n), *act = dl(l.act, (size_t)T * d.ffn);
    uint16_t *down = dl(l.down, (size_t)T * H), *y = dl(dy, (size_t)T * H);
    uint16_t *kc = dl(l.kc, nc), *vc = dl(l.vc, nc);
    uint16_t *ref = (uint16_t *)malloc((size_t)T * (l.qkv_n > d.ffn ? l.qkv_n : d.ffn) * 4);

    rmsnorm_ref(x, T, H, ref);
    CHECK(close_count(xn, ref, (size_t)T * H, ldexp(1, -9), 1e-6, "xn") == 0);
    CHECK(gemm_mismatches(wq, l.qkv_n, H, xn, T, qkv, "qkv") == 0);

    /* Cache: new K/V at ctx[b] + i, bit-exact copies; all else untouched. */
    int cache_bad = 0;
    for (int b = 0; b < batch; b++)
        for (int gk = 0; gk < d.kv_heads; gk++)
            for (int p = 0; p < cap; p++)
                for (int e = 0; e < d.head_dim; e++) {
                    size_t ci = (((size_t)b * d.kv_heads + gk) * cap + p) * d.head_dim + e;
                    uint16_t ek = kc0[ci], ev = vc0[ci];
                    int i = p - ctx[b];
                    if (i >= 0 && i < q) {
                        const uint16_t *row = qkv + (size_t)(b * q + i) * l.qkv_n;
                        ek = row[(d.heads + gk) * d.head_dim + e];
                        ev = row[(d.heads + d.kv_heads + gk) * d.head_dim + e];
                    }
                    cache_bad += kc[ci] != ek || vc[ci] != ev;
                }
    CHECK(cache_bad == 0);

    /* Attention from the GPU's own qkv and cache. */
    for (int b = 0; b < batch; b++) {
        int L = ctx[b] + q, D = d.head_dim, kvh = d.kv_heads;
        uint16_t *qb = (uint16_t *)malloc((size_t)q * d.heads * D * 2);
        uint16_t *rk = (uint16_t *)malloc((size_t)L * kvh * D * 2);
        uint16_t *rv = (uint16_t *)malloc((size_t)L * kvh * D * 2);
        uint16_t *ro = (uint16_t *)malloc((size_t)q * d.heads * D * 2);
        uint16_t *go = (uint16_t *)malloc((size_t)q * d.heads * D * 2);
        for (int i = 0; i < q; i++) {
            memcpy(qb + (size_t)i * d.heads * D, qkv + (size_t)(b * q + i) * l.qkv_n,
                   (size_t)d.heads * D * 2);
            memcpy(go + (size_t)i * d.heads * D, att + (size_t)(b * q + i) * l.att_n,
                   (size_t)d.heads * D * 2);
        }
        for (int p = 0; p < L; p++)
            for (int gk = 0; gk < kvh; gk++)
                for (int e = 0; e < D; e++) {
                    size_t ci = (((size_t)b * kvh + gk) * cap + p) * D + e;
                    rk[((size_t)p * kvh + gk) * D + e] = kc[ci];
                    rv[((size_t)p * kvh + gk) * D + e] = vc[ci];
                }
        CHECK(ref_attention(qb, rk, rv, q, ctx[b], d.heads, kvh, D, ro) == 0);
        CHECK(close_count(go, ro, (size_t)q * d.heads * D, ldexp(1, -10), 1e-4, "att") == 0);
        free(qb); free(rk); free(rv); free(ro); free(go);
    }

    CHECK(gemm_mismatches(wo, H, l.att_n, att, T, o, "o") == 0);
    int add_bad = 0;
    for (size_t i = 0; i < (size_t)T * H; i++)
        add_bad += h[i] != f32_to_fp16(fp16_to_f32(x[i]) + fp16_to_f32(o[i]));
    CHECK(add_bad == 0);
    rmsnorm_ref(h, T, H, ref);
    CHECK(close_count(hn, ref, (size_t)T * H, ldexp(1, -9), 1e-6, "hn") == 0);
    CHECK(gemm_mismatches(wg, l.gu_n, H, hn, T, gu, "gate_up") == 0);
    for (int t = 0; t < T; t++)
        for (int j = 0; j < d.ffn; j++) {
            double gt = fp16_to_f32(gu[(size_t)t * l.gu_n + j]);
            double up = fp16_to_f32(gu[(size_t)t * l.gu_n + d.ffn + j]);
            ref[(size_t)t * d.ffn + j] = f32_to_fp16((float)(gt / (1.0 + exp(-gt)) * up));
        }
    CHECK(close_count(act, ref, (size_t)T * d.ffn, ldexp(1, -9), 1e-6, "act") == 0);
    CHECK(gemm_mismatches(wd, H, d.ffn, act, T, down, "down") == 0);
    int y_bad = 0;
    for (size_t i = 0; i < (size_t)T * H; i++)
        y_bad += y[i] != f32_to_fp16(fp16_to_f32(h[i]) + fp16_to_f32(down[i]));
    CHECK(y_bad == 0);

    free(xn); free(qkv); free(att); free(o); free(h); free(hn); free(gu); free(act);
    free(down); free(y); free(kc); free(vc); free(ref);
    free(wq); free(wo); free(wg); free(wd); free(kc0); free(vc0); free(x);
    CT_CUDA(cudaFree(dx));
    CT_CUDA(cudaFree(dy));
    layer_cuda_fini(&l);
    cugemm_fini(&g);
}

/* The W4A16 layer (edge drafting on a GPU) runs and produces finite output
 * of the right shape; its linear kernel is checked in test_w4a16_cuda. */
static void test_layer_w4_runs(void)
{
    if (!ct_have_gpu()) return;
    err_t err = {0, {0}};
    const layer_cuda_dims_t d = {256, 4, 4, 64, 512, 1};
    const int ctx[1] = {100};
    layer_cuda_t l;
    cugemm_t g;
    CT_OK(cugemm_init(&g, &err), &err);
    CT_OK(layer_cuda_init(&l, &d, 1, 1, 128, LAYER_W4A16, &err), &err);
    CT_OK(layer_cuda_fill_random(&l, 3, 0, &err), &err);
    CT_OK(layer_cuda_set_ctx(&l, ctx, 1, &err), &err);
    ct_rng_t r = {5};
    uint16_t x[256], y[256];
    ct_fill_fp16(&r, x, 256, -1.f, 1.f);
    __half *dx = (__half *)ct_upload(x, sizeof x), *dy = NULL;
    CT_CUDA(cudaMalloc((void **)&dy, sizeof y));
    CT_CUDA(cudaMemset(dy, 0xff, sizeof y));
    CT_OK(layer_cuda_forward(&l, &g, dx, dy, 1, 1, 0, &err), &err);
    ct_download(y, dy, sizeof y);
    int fin = 1, differs = 0;
    for (int i = 0; i < 256; i++) {
        fin &= ct_isfinite16(y[i]);
        differs += y[i] != x[i];
    }
    CHECK(fin);
    CHECK(differs > 128);   /* the layer added something to the residual */
    CT_CUDA(cudaFree(dx));
    CT_CUDA(cudaFree(dy));
    layer_cuda_fini(&l);
    cugemm_fini(&g);
}

int main(void)
{
    RUN(test_auto_splits);
    RUN(test_gemm);
    RUN(test_attention_short);
    RUN(test_attention_long_splits);
    RUN(test_layer_stages);
    RUN(test_layer_w4_runs);
    return check_done();
}
