/* gemv_neon — AArch64 Advanced SIMD kernels (4 fp32 lanes). Compiled on every
 * target; an empty unit unless __ARM_NEON. Same scheme as gemv_avx2.c: per
 * block of 32 inputs, AND / shift for the nibbles, widen, convert, then
 * (q·s − z·s) — both products exact in fp32, so the weights equal the
 * reference's (q − z)·s — and FMA into fp32 accumulators. On x86 hosts
 * `make test` cross-compiles the kernel tests and runs this path under
 * user-mode QEMU (tests/cli/neon-qemu.sh): checked for correctness there,
 * never timed (QEMU says nothing about speed).
 */
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>

#include "gemv_impl.h"

#define TMAX 4

static inline float32x4_t dq4(uint16x4_t q, float32x4_t vs, float32x4_t vzs)
{
    return vsubq_f32(vmulq_f32(vcvtq_f32_u32(vmovl_u16(q)), vs), vzs);
}

static void w4_tile(const uint8_t *q, const uint16_t *sc, const uint8_t *zp, int groups,
                    int group, const float *x, int k, int T, float *out)
{
    float32x4_t acc[TMAX][2];
    for (int t = 0; t < T; t++) acc[t][0] = acc[t][1] = vdupq_n_f32(0.0f);
    const uint8x16_t mask = vdupq_n_u8(0x0F);
    for (int g = 0; g < groups; g++) {
        float s = fp16_to_f32(sc[g]);
        const float32x4_t vs = vdupq_n_f32(s), vzs = vdupq_n_f32(s * (float)zp[g]);
        const uint8_t *qg = q + (size_t)g * (size_t)(group / 2);
        const float *xg = x + (size_t)g * (size_t)group;
        for (int b = 0; b < group / 32; b++) {
            uint8x16_t v = vld1q_u8(qg + 16 * b);
            uint8x16_t half[2] = {vandq_u8(v, mask), vshrq_n_u8(v, 4)};
            for (int h = 0; h < 2; h++) {
                uint16x8_t lo = vmovl_u8(vget_low_u8(half[h])), hi = vmovl_u8(vget_high_u8(half[h]));
                float32x4_t w0 = dq4(vget_low_u16(lo), vs, vzs), w1 = dq4(vget_high_u16(lo), vs, vzs);
                float32x4_t w2 = dq4(vget_low_u16(hi), vs, vzs), w3 = dq4(vget_high_u16(hi), vs, vzs);
                for (int t = 0; t < T; t++) {
                    const float *xt = xg + (size_t)t * (size_t)k + 32 * b + 16 * h;
                    acc[t][0] = vfmaq_f32(acc[t][0], w0, vld1q_f32(xt));
                    acc[t][1] = vfmaq_f32(acc[t][1], w1, vld1q_f32(xt + 4));
                    acc[t][0] = vfmaq_f32(acc[t][0], w2, vld1q_f32(xt + 8));
                    acc[t][1] = vfmaq_f32(acc[t][1], w3, vld1q_f32(xt + 12));
                }
            }
        }
    }
    for (int t = 0; t < T; t++) out[t] = vaddvq_f32(vaddq_f32(acc[t][0], acc[t][1]));
}

static void w4_rows(const w4a16_packed_t *w, const float *x, const float *xsum, int m, int r0,
                    int r1, uint16_t *y)
{
    (void)xsum;
    int groups = w->k / w->group;
    for (int r = r0; r < r1; r++)
        for (int m0 = 0; m0 < m; m0 += TMAX) {
            int T = m - m0 < TMAX ? m - m0 : TMAX;
            float out[TMAX];
            w4_tile(w->q + (size_t)r * (size_t)w->k / 2, w->scales + (size_t)r * (size_t)groups,
                    w->zeros + (size_t)r * (size_t)groups, groups, w->group,
                    x + (size_t)m0 * (size_t)w->k, w->k, T, out);
            for (int t = 0; t < T; t++) y[(size_t)(m0 + t) * (size_t)w->n + (size_t)r] = f32_to_fp16(out[t]);
        }
}

static inline float32x4_t load_h4(const uint16_t *p)
{
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

static float dot_f16(const float *q, const uint16_t *h, int d)
{
    float32x4_t a = vdupq_n_f32(0.0f);
    int i = 0;
    for (; i + 4 <= d; i += 4) a = vfmaq_f32(a, vld1q_f32(q + i), load_h4(h + i));
    float s = vaddvq_f32(a);
    for (; i < d; i++) s += q[i] * fp16_to_f32(h[i]);
    return s;
}

static void axpy_f16(float a, const uint16_t *h, float *acc, int d)
{
    int i = 0;
    for (; i + 4 <= d; i += 4) vst1q_f32(acc + i, vfmaq_n_f32(vld1q_f32(acc + i), load_h4(h + i), a));
    for (; i < d; i++) acc[i] += a * fp16_to_f32(h[i]);
}

static void f16_rows(const uint16_t *w, int n, int k, const float *x, int m, int r0, int r1,
                     uint16_t *y)
{
    for (int r = r0; r < r1; r++)
        for (int i = 0; i < m; i++)
            y[(size_t)i * (size_t)n + (size_t)r] =
                f32_to_fp16(dot_f16(x + (size_t)i * (size_t)k, w + (size_t)r * (size_t)k, k));
}

/* One dot per (row, activation row): batch-invariant as it stands. */
static void f16_rows_f32(const uint16_t *w, int n, int k, const float *x, int m, int r0, int r1,
                         float *y)
{
    for (int r = r0; r < r1; r++)
        for (int i = 0; i < m; i++)
            y[(size_t)i * (size_t)n + (size_t)r] =
                dot_f16(x + (size_t)i * (size_t)k, w + (size_t)r * (size_t)k, k);
}

static void f32_rows(const float *w, int n, int k, const float *x, int m, int r0, int r1,
                     float *y)
{
    for (int r = r0; r < r1; r++)
        for (int i = 0; i < m; i++) {
            const float *wr = w + (size_t)r * (size_t)k, *xi = x + (size_t)i * (size_t)k;
            float32x4_t a = vdupq_n_f32(0.0f);
            int c = 0;
            for (; c + 4 <= k; c += 4) a = vfmaq_f32(a, vld1q_f32(wr + c), vld1q_f32(xi + c));
            float s = vaddvq_f32(a);
            for (; c < k; c++) s += wr[c] * xi[c];
            y[(size_t)i * (size_t)n + (size_t)r] = s;
        }
}

static void h2f(const uint16_t *h, float *f, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(f + i, load_h4(h + i));
    for (; i < n; i++) f[i] = fp16_to_f32(h[i]);
}

const gemv_impl_t gemv_impl_neon = {w4_rows, f16_rows, f32_rows, h2f, dot_f16, axpy_f16, NULL, NULL, NULL, NULL, NULL,
                                    f16_rows_f32, NULL};

#else
typedef int gemv_neon_empty_unit;
#endif
