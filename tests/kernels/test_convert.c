/* Converters: synthetic weights are packed here the way each format's
 * reference implementation documents it (AutoGPTQ pack(), AutoAWQ
 * pack with order_map [0,2,4,6,1,3,5,7], ggml block_q4_0), converted back,
 * and compared bit for bit; dequantisation is also checked against each
 * format's own formula. */
#include <stdint.h>

#include "check.h"
#include "convert.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)((rng >> 20) % n);
}

static void random_w(w4a16_t *w, int n, int k, int group)
{
    CHECK(w4a16_init(w, n, k, group) == 0);
    for (int r = 0; r < n; r++)
        for (int c = 0; c < k; c++) w4a16_set_q(w, r, c, rnd(16));
    for (int g = 0; g < n * (k / group); g++) {
        w->scales[g] = (uint16_t)(0x1C00 + rnd(0x1000));   /* 2^-8 … 2^-4 */
        w->zeros[g] = (uint8_t)rnd(16);
    }
}

static int same(const w4a16_t *a, const w4a16_t *b)
{
    size_t groups = (size_t)a->n * (size_t)(a->k / a->group);
    return a->n == b->n && a->k == b->k && a->group == b->group &&
           !memcmp(a->qweight, b->qweight, (size_t)a->n * (size_t)a->k / 2) &&
           !memcmp(a->scales, b->scales, groups * 2) && !memcmp(a->zeros, b->zeros, groups);
}

static float deq(const w4a16_t *w, int r, int c)
{
    int g = r * (w->k / w->group) + c / w->group;
    return (float)((int)w4a16_get_q(w, r, c) - w->zeros[g]) * fp16_to_f32(w->scales[g]);
}

static void gptq_case(int n, int k, int group)
{
    w4a16_t w, back;
    random_w(&w, n, k, group);
    int groups = k / group, zc = (n + 7) / 8;
    uint32_t *qw = calloc((size_t)(k / 8) * n, 4), *qz = calloc((size_t)groups * zc, 4);
    uint16_t *sc = calloc((size_t)groups * n, 2);
    int32_t *gidx = malloc((size_t)k * 4);
    for (int c = 0; c < k; c++) {
        gidx[c] = c / group;
        for (int r = 0; r < n; r++) qw[(c / 8) * n + r] |= (uint32_t)w4a16_get_q(&w, r, c) << (4 * (c % 8));
    }
    for (int g = 0; g < groups; g++)
        for (int r = 0; r < n; r++) {
            unsigned z = w.zeros[r * groups + g];
            qz[g * zc + r / 8] |= (uint32_t)((z - 1) & 15) << (4 * (r % 8));   /* stored z − 1 */
            sc[g * n + r] = w.scales[r * groups + g];
        }
    err_t e;
    CHECK(convert_gptq(qw, qz, sc, gidx, n, k, group, &back, &e) == 0);
    CHECK(same(&w, &back));
    /* AutoGPTQ dequantisation: scales · (q − (zeros + 1)), valid where the
     * stored field did not wrap (z ≥ 1). */
    int bad = 0;
    for (int c = 0; c < k; c++)
        for (int r = 0; r < n; r++) {
            unsigned stored = (qz[(c / group) * zc + r / 8] >> (4 * (r % 8))) & 15;
            if (stored == 15) continue;
            unsigned q = (qw[(c / 8) * n + r] >> (4 * (c % 8))) & 15;
            float ref = fp16_to_f32(sc[(c / group) * n + r]) * (float)((int)q - (int)(stored + 1));
            bad += ref != deq(&back, r, c);
        }
    CHECK(bad == 0);
    w4a16_fini(&back);
    gidx[5] = 1;   /* act-order permutation: rejected */
    CHECK(convert_gptq(qw, qz, sc, gidx, n, k, group, &back, &e) == -1 && e.code == ERR_INPUT);
    free(qw);
    free(qz);
    free(sc);
    free(gidx);
    w4a16_fini(&w);
}

static void test_gptq(void)
{
    gptq_case(17, 384, 128);
    gptq_case(8, 64, 32);
}

static void awq_case(int n, int k, int group)
{
    static const int order_map[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    w4a16_t w, back;
    random_w(&w, n, k, group);
    int groups = k / group, cols = (n + 7) / 8;
    uint32_t *qw = calloc((size_t)k * cols, 4), *qz = calloc((size_t)groups * cols, 4);
    uint16_t *sc = calloc((size_t)groups * n, 2);
    for (int c = 0; c < k; c++)
        for (int col = 0; col < cols; col++)
            for (int i = 0; i < 8; i++) {
                int r = col * 8 + order_map[i];
                if (r < n) qw[c * cols + col] |= (uint32_t)w4a16_get_q(&w, r, c) << (i * 4);
            }
    for (int g = 0; g < groups; g++) {
        for (int col = 0; col < cols; col++)
            for (int i = 0; i < 8; i++) {
                int r = col * 8 + order_map[i];
                if (r < n) qz[g * cols + col] |= (uint32_t)w.zeros[r * groups + g] << (i * 4);
            }
        for (int r = 0; r < n; r++) sc[g * n + r] = w.scales[r * groups + g];
    }
    err_t e;
    CHECK(convert_awq(qw, qz, sc, n, k, group, &back, &e) == 0);
    CHECK(same(&w, &back));
    /* AutoAWQ dequantisation: unpack with the inverse order (slot i holds
     * column order_map[i]), then (q − z)·s. Column 1 sits in slot 4. */
    CHECK(((qw[0] >> 16) & 15) == w4a16_get_q(&w, 1, 0));
    int bad = 0;
    for (int c = 0; c < k; c++)
        for (int col = 0; col < cols; col++)
            for (int i = 0; i < 8; i++) {
                int r = col * 8 + order_map[i];
                if (r >= n) continue;
                int q = (qw[c * cols + col] >> (4 * i)) & 15;
                int z = (qz[(c / group) * cols + col] >> (4 * i)) & 15;
                bad += fp16_to_f32(sc[(c / group) * n + r]) * (float)(q - z) != deq(&back, r, c);
            }
    CHECK(bad == 0);
    free(qw);
    free(qz);
    free(sc);
    w4a16_fini(&w);
    w4a16_fini(&back);
}

static void test_awq(void)
{
    awq_case(16, 256, 128);
    awq_case(13, 192, 64);
}

static void test_q4_0(void)
{
    int n = 3, k = 96, nb = k / 32;
    uint8_t *blocks = malloc((size_t)n * nb * Q4_0_BLOCK_BYTES);
    w4a16_t w, back;
    random_w(&w, n, k, 32);
    for (int g = 0; g < n * nb; g++) w.zeros[g] = 8;            /* q4_0 is symmetric */
    for (int r = 0; r < n; r++)
        for (int b = 0; b < nb; b++) {
            uint8_t *blk = blocks + (r * nb + b) * Q4_0_BLOCK_BYTES;
            uint16_t d = w.scales[r * nb + b];
            blk[0] = (uint8_t)(d & 0xFF);
            blk[1] = (uint8_t)(d >> 8);
            for (int j = 0; j < 16; j++)
                blk[2 + j] = (uint8_t)(w4a16_get_q(&w, r, 32 * b + j) |
                                       w4a16_get_q(&w, r, 32 * b + j + 16) << 4);
        }
    err_t e;
    CHECK(convert_q4_0(blocks, n, k, &back, &e) == 0);
    CHECK(same(&w, &back));
    /* ggml dequantize_row_q4_0: y[j] = (qs[j] & 15) − 8) · d, y[j+16] = (qs[j] >> 4) − 8) · d. */
    int bad = 0;
    for (int r = 0; r < n; r++)
        for (int b = 0; b < nb; b++) {
            const uint8_t *blk = blocks + (r * nb + b) * Q4_0_BLOCK_BYTES;
            float d = fp16_to_f32((uint16_t)(blk[0] | blk[1] << 8));
            for (int j = 0; j < 16; j++) {
                bad += (float)((blk[2 + j] & 15) - 8) * d != deq(&back, r, 32 * b + j);
                bad += (float)((blk[2 + j] >> 4) - 8) * d != deq(&back, r, 32 * b + j + 16);
            }
        }
    CHECK(bad == 0);
    w4a16_fini(&back);
    CHECK(convert_q4_0(blocks, n, 80, &back, &e) == -1 && e.code == ERR_INPUT);
    free(blocks);
    w4a16_fini(&w);
}

int main(void)
{
    RUN(test_gptq);
    RUN(test_awq);
    RUN(test_q4_0);
    return check_done();
}
