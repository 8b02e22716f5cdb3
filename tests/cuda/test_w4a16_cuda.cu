/* CUDA W4A16 GEMV / small-M GEMM against the scalar reference
 * (w4a16_gemm_ref), plus the repacked layout and its dequantisation trick
 * checked on the host (those two need no GPU).
 *
 * Tolerance (per output element, derived in w4a16_cuda.cuh): the kernel
 * rounds each product (q−z)·x to fp16 and sums 4 of them per half lane in
 * fp16 before going to fp32, so |y − ref| ≤ 2⁻⁸·Σ_k|x_k·w_k| + 2⁻¹⁰·|ref|
 * (2⁻⁸ = 8 half-ulps of slack for one product rounding + 3 additions, the
 * 2⁻¹⁰ term covers both sides' final fp16 rounding). */
#include <math.h>
#include <string.h>

#include "cutest.h"
#include "cuda/w4a16_cuda.cuh"

/* The layout spec written independently of the code: slot s of a repacked
 * word holds element kElemOfSlot[s] of the 8 inputs. */
static const int kElemOfSlot[8] = {0, 2, 4, 6, 1, 3, 5, 7};

static void test_repack_layout(void)
{
    w4a16_t w;
    ct_rng_t r = {0x1234};
    CHECK(w4a16_init(&w, 3, 256, 128) == 0);
    for (size_t i = 0; i < 3 * 32; i++) w.qweight[i] = (uint32_t)ct_next(&r);
    uint32_t *rp = (uint32_t *)malloc(3 * 32 * 4);
    w4a16_cuda_repack(&w, rp);
    for (int n = 0; n < 3; n++)
        for (int k = 0; k < 256; k++) {
            uint32_t word = rp[n * 32 + k / 8];
            int slot = -1;
            for (int s = 0; s < 8; s++)
                if (kElemOfSlot[s] == k % 8) slot = s;
            CHECK(((word >> (4 * slot)) & 0xf) == w4a16_get_q(&w, n, k));
        }
    free(rp);
    w4a16_fini(&w);
}

/* The magic-number dequantisation, emulated bit for bit on the host: word >>
 * 4j, AND 0x000f000f, OR 0x64006400 gives the fp16 pair (1024 + q[2j],
 * 1024 + q[2j+1]); minus (1024 + z) gives q − z exactly. */
static void test_dequant_trick_host(void)
{
    w4a16_t w;
    ct_rng_t r = {99};
    CHECK(w4a16_init(&w, 1, 128, 128) == 0);
    for (int i = 0; i < 16; i++) w.qweight[i] = (uint32_t)ct_next(&r);
    uint32_t rp[16];
    w4a16_cuda_repack(&w, rp);
    for (int z = 0; z < 16; z++)
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 4; j++) {
                uint32_t v = ((rp[i] >> (4 * j)) & 0x000f000fu) | 0x64006400u;
                float lo = fp16_to_f32((uint16_t)(v & 0xffff));
                float hi = fp16_to_f32((uint16_t)(v >> 16));
                float zz = fp16_to_f32((uint16_t)(0x6400u | (unsigned)z));
                CHECK(lo - zz == (float)((int)w4a16_get_q(&w, 0, 8 * i + 2 * j) - z));
                CHECK(hi - zz == (float)((int)w4a16_get_q(&w, 0, 8 * i + 2 * j + 1) - z));
            }
    w4a16_fini(&w);
}

static void test_rejects_bad_shapes(void)
{
    err_t err = {0, {0}};
    CHECK(w4a16_cuda_check_shape(16, 128, 128, &err) == 0);
    CHECK(w4a16_cuda_check_shape(16, 136, 8, &err) == -1);    /* group 8 */
    CHECK(w4a16_cuda_check_shape(16, 96, 32, &err) == 0);
    CHECK(w4a16_cuda_check_shape(16, 112, 16, &err) == -1);
    CHECK(w4a16_cuda_check_shape(0, 128, 128, &err) == -1);
    CHECK(strstr(err.msg, "unsupported") != NULL);
    w4a16_cuda_t d;
    memset(&d, 0, sizeof d);
    d.n = 16; d.k = 128; d.group = 128;
    CHECK(w4a16_cuda_gemm(&d, NULL, 17, NULL, 0, &err) == -1);  /* m > 16 */
    CHECK(w4a16_cuda_gemm(&d, NULL, 0, NULL, 0, &err) == -1);
}

/* One shape, all m in ms: random asymmetric quantised weights, x in [-1, 1). */
static void check_shape(int n, int k, int group, int symmetric, const int *ms, int nm,
                        uint64_t seed)
{
    err_t err = {0, {0}};
    ct_rng_t r = {seed};
    w4a16_t w;
    CHECK(w4a16_init(&w, n, k, group) == 0);
    float *wf = (float *)malloc((size_t)n * k * sizeof(float));
    for (size_t i = 0; i < (size_t)n * k; i++) wf[i] = ct_unif(&r, -0.1f, 0.1f);
    w4a16_quantize(wf, symmetric, &w);
    w4a16_dequantize(&w, wf);   /* wf now holds the exact weights used */

    const int M = 16;
    uint16_t *x = (uint16_t *)malloc((size_t)M * k * 2);
    uint16_t *y = (uint16_t *)malloc((size_t)M * n * 2);
    uint16_t *ref = (uint16_t *)malloc((size_t)M * n * 2);
    ct_fill_fp16(&r, x, (size_t)M * k, -1.f, 1.f);

    w4a16_cuda_t d;
    CT_OK(w4a16_cuda_upload(&w, &d, &err), &err);
    __half *dx = (__half *)ct_upload(x, (size_t)M * k * 2);
    __half *dy = NULL;
    CT_CUDA(cudaMalloc((void **)&dy, (size_t)M * n * 2));
    for (int mi = 0; mi < nm && !check_failed_now; mi++) {
        int m = ms[mi];
        CT_CUDA(cudaMemset(dy, 0xff, (size_t)M * n * 2));   /* NaN poison */
        CT_OK(w4a16_cuda_gemm(&d, dx, m, dy, 0, &err), &err);
        ct_download(y, dy, (size_t)M * n * 2);
        w4a16_gemm_ref(&w, x, m, ref);
        /* Rows m..M-1 of the output must be untouched (no stray stores). */
        size_t stray = 0;
        for (size_t e = (size_t)m * n; e < (size_t)M * n; e++) stray += y[e] != 0xffffu;
        if (stray) printf("  n=%d k=%d g=%d m=%d: %zu elements written past row m\n", n, k,
                          group, m, stray);
        CHECK(stray == 0);
        int bad = 0;
        for (int i = 0; i < m && bad < 5; i++)
            for (int j = 0; j < n && bad < 5; j++) {
                double mag = 0;
                for (int kk = 0; kk < k; kk++)
                    mag += fabs((double)fp16_to_f32(x[(size_t)i * k + kk]) * wf[(size_t)j * k + kk]);
                double a = fp16_to_f32(y[(size_t)i * n + j]), b = fp16_to_f32(ref[(size_t)i * n + j]);
                double tol = ldexp(mag, -8) + ldexp(fabs(b), -10) + 1e-7;
                if (!ct_isfinite16(y[(size_t)i * n + j]) || fabs(a - b) > tol) {
                    printf("  n=%d k=%d g=%d m=%d y[%d][%d] = %g, ref %g, tol %g\n", n, k, group,
                           m, i, j, a, b, tol);
                    bad++;
                }
            }
        CHECK(bad == 0);
    }
    w4a16_cuda_fini(&d);
    CT_CUDA(cudaFree(dx));
    CT_CUDA(cudaFree(dy));
    free(wf); free(x); free(y); free(ref);
    w4a16_fini(&w);
}

static const int kAllM[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void test_gemm_small_shapes(void)
{
    if (!ct_have_gpu()) return;
    check_shape(1, 128, 128, 0, kAllM, 16, 1);
    check_shape(3, 384, 128, 0, kAllM, 16, 2);
    check_shape(17, 4224, 128, 0, kAllM, 16, 3);   /* K not a multiple of 256 */
    check_shape(33, 1024, 64, 0, kAllM, 16, 4);
    check_shape(64, 512, 32, 1, kAllM, 16, 5);     /* symmetric, group 32 */
    check_shape(8, 1024, 256, 0, kAllM, 16, 6);
}

static void test_gemm_wide(void)
{
    if (!ct_have_gpu()) return;
    /* N = 4099 (not a multiple of the 8 or 16 rows a block covers). */
    check_shape(4099, 256, 128, 0, kAllM, 16, 7);
    static const int ms[3] = {1, 5, 16};
    check_shape(1000, 4096, 128, 0, ms, 3, 8);
}

/* The random device fill is what calibration times on: it must not be
 * zeros, and every zero point must be a 4-bit value. */
static void test_fill_random(void)
{
    if (!ct_have_gpu()) return;
    err_t err = {0, {0}};
    w4a16_cuda_t d;
    CT_OK(w4a16_cuda_init(&d, 64, 256, 128, &err), &err);
    CT_OK(w4a16_cuda_fill_random(&d, 5, 0, &err), &err);
    uint32_t q[64 * 32];
    uint8_t z[128];
    uint16_t s[128];
    ct_download(q, d.q, sizeof q);
    ct_download(z, d.zeros, sizeof z);
    ct_download(s, d.scales, sizeof s);
    int nz = 0, zok = 1, sok = 1;
    for (int i = 0; i < 64 * 32; i++) nz += q[i] != 0;
    for (int i = 0; i < 128; i++) {
        zok &= z[i] < 16;
        float v = fp16_to_f32(s[i]);
        sok &= v >= 0.0019f && v < 0.0201f;
    }
    CHECK(nz > 64 * 32 - 4);
    CHECK(zok);
    CHECK(sok);
    w4a16_cuda_fini(&d);
}

int main(void)
{
    RUN(test_repack_layout);
    RUN(test_dequant_trick_host);
    RUN(test_rejects_bad_shapes);
    RUN(test_gemm_small_shapes);
    RUN(test_gemm_wide);
    RUN(test_fill_random);
    return check_done();
}
