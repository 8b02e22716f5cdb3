/* fp16 conversions: exhaustive round trip over all 65536 halves, RNE checked
 * against hand-worked cases and (where the CPU has F16C) against the
 * hardware conversion on a large random sample. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "w4a16.h"

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Every half maps to a float and back to itself; NaNs stay NaNs with the
 * same sign and payload. Decoded values are checked against the IEEE formula
 * (−1)^s · 2^(e−15) · (1 + m/1024), subnormals 2^−14 · m/1024. */
static void test_roundtrip_exhaustive(void)
{
    int bad_rt = 0, bad_val = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = fp16_to_f32((uint16_t)h);
        uint16_t back = f32_to_fp16(f);
        unsigned e = (h >> 10) & 31, m = h & 1023;
        double expect;
        if (e == 31) {
            if (m == 0) expect = INFINITY;
            else {
                bad_val += !isnan(f);
                bad_rt += back != h;
                continue;
            }
        } else if (e == 0) expect = ldexp((double)m, -24);
        else expect = ldexp(1.0 + m / 1024.0, (int)e - 15);
        if (h & 0x8000) expect = -expect;
        bad_val += (double)f != expect || (signbit(f) != 0) != ((h & 0x8000) != 0);
        bad_rt += back != h;
    }
    CHECK(bad_rt == 0);
    CHECK(bad_val == 0);
}

/* Hand-worked round-to-nearest-even cases (ulp of 1.0 in fp16 is 2^−10). */
static void test_rne_cases(void)
{
    CHECK(f32_to_fp16(1.0f) == 0x3C00);
    CHECK(f32_to_fp16(1.0f + 0x1p-11f) == 0x3C00);            /* tie → even (1.0) */
    CHECK(f32_to_fp16(1.0f + 3 * 0x1p-11f) == 0x3C02);        /* tie → even (1 + 2^−9) */
    CHECK(f32_to_fp16(1.0f + 0x1p-11f + 0x1p-20f) == 0x3C01); /* above tie → up */
    CHECK(f32_to_fp16(65504.0f) == 0x7BFF);                   /* max finite */
    CHECK(f32_to_fp16(65519.99f) == 0x7BFF);                  /* below 65520 → max */
    CHECK(f32_to_fp16(65520.0f) == 0x7C00);                   /* tie at max → Inf */
    CHECK(f32_to_fp16(-1e9f) == 0xFC00);
    CHECK(f32_to_fp16(0x1p-24f) == 0x0001);                   /* min subnormal */
    CHECK(f32_to_fp16(0x1p-25f) == 0x0000);                   /* tie → even (0) */
    CHECK(f32_to_fp16(0x1.8p-25f) == 0x0001);                 /* above tie → up */
    CHECK(f32_to_fp16(3 * 0x1p-25f) == 0x0002);               /* 1.5 ulp tie → even 2 */
    CHECK(f32_to_fp16(0x1p-14f - 0x1p-26f) == 0x0400);        /* rounds up into normal */
    CHECK(f32_to_fp16(-0.0f) == 0x8000);
    CHECK(f32_to_fp16(float_of(0x7FC00000u)) == 0x7E00);      /* quiet NaN */
    CHECK((f32_to_fp16(float_of(0x7F800001u)) & 0x7FFF) > 0x7C00); /* low payload stays NaN */
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
__attribute__((target("f16c"))) static uint16_t hw_f32_to_fp16(float f)
{
    return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
#endif

/* 2^22 random non-NaN floats concentrated around the fp16 range (exponent
 * window 2^−30 … 2^17) against the hardware's IEEE conversion. */
static void test_rne_vs_hardware(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("f16c")) {
        printf("  (no F16C: hardware comparison skipped)\n");
        return;
    }
    uint64_t s = 88172645463325252ull;
    int bad = 0;
#if defined(__SANITIZE_ADDRESS__)
    const int n = 1 << 19;
#else
    const int n = 1 << 22;
#endif
    for (int i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        uint32_t u = (uint32_t)s;
        uint32_t e = 97 + (uint32_t)((s >> 32) % 48);          /* 2^−30 … 2^17 */
        u = (u & 0x807FFFFFu) | (e << 23);
        float f = float_of(u);
        if (f32_to_fp16(f) != hw_f32_to_fp16(f)) bad++;
    }
    CHECK(bad == 0);
    CHECK(bits_of(1.0f) == 0x3F800000u);
#else
    printf("  (not x86: hardware comparison skipped)\n");
#endif
}

int main(void)
{
    RUN(test_roundtrip_exhaustive);
    RUN(test_rne_cases);
    RUN(test_rne_vs_hardware);
    return check_done();
}
