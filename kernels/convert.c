/* convert — GPTQ, AWQ and ggml q4_0 tensors → W4A16 (see convert.h). */
#include "convert.h"

#include <stddef.h>

static const int awq_order[8] = {0, 2, 4, 6, 1, 3, 5, 7};

static unsigned nibble(uint32_t word, int slot)
{
    return (word >> (4 * slot)) & 0xFu;
}

static int alloc_out(w4a16_t *out, int n, int k, int group, const char *what, err_t *err)
{
    if (n <= 0 || k <= 0 || group <= 0 || group % 8 != 0 || k % group != 0)
        return err_set(err, ERR_INPUT, "%s: bad shape n=%d k=%d group=%d (k must be a multiple "
                       "of the group, the group of 8)", what, n, k, group);
    if (w4a16_init(out, n, k, group) != 0)
        return err_set(err, ERR_RUNTIME, "%s: out of memory for %dx%d", what, n, k);
    return 0;
}

int convert_gptq(const uint32_t *qweight, const uint32_t *qzeros, const uint16_t *scales,
                 const int32_t *g_idx, int n, int k, int group, w4a16_t *out, err_t *err)
{
    if (alloc_out(out, n, k, group, "gptq", err) != 0) return -1;
    if (g_idx)
        for (int c = 0; c < k; c++)
            if (g_idx[c] != c / group) {
                w4a16_fini(out);
                return err_set(err, ERR_INPUT, "gptq: g_idx[%d] = %d, not %d: act-order "
                               "checkpoints are not supported", c, g_idx[c], c / group);
            }
    int groups = k / group, zcols = (n + 7) / 8;
    for (int c = 0; c < k; c++)
        for (int r = 0; r < n; r++)
            w4a16_set_q(out, r, c, nibble(qweight[(size_t)(c / 8) * (size_t)n + (size_t)r], c % 8));
    for (int g = 0; g < groups; g++)
        for (int r = 0; r < n; r++) {
            size_t gi = (size_t)r * (size_t)groups + (size_t)g;
            unsigned stored = nibble(qzeros[(size_t)g * (size_t)zcols + (size_t)(r / 8)], r % 8);
            out->zeros[gi] = (uint8_t)((stored + 1u) & 0xFu);
            out->scales[gi] = scales[(size_t)g * (size_t)n + (size_t)r];
        }
    return 0;
}

int convert_awq(const uint32_t *qweight, const uint32_t *qzeros, const uint16_t *scales,
                int n, int k, int group, w4a16_t *out, err_t *err)
{
    if (alloc_out(out, n, k, group, "awq", err) != 0) return -1;
    int groups = k / group, cols = (n + 7) / 8;
    for (int c = 0; c < k; c++)
        for (int w = 0; w < cols; w++) {
            uint32_t word = qweight[(size_t)c * (size_t)cols + (size_t)w];
            for (int j = 0; j < 8; j++) {
                int r = 8 * w + awq_order[j];
                if (r < n) w4a16_set_q(out, r, c, nibble(word, j));
            }
        }
    for (int g = 0; g < groups; g++)
        for (int w = 0; w < cols; w++) {
            uint32_t word = qzeros[(size_t)g * (size_t)cols + (size_t)w];
            for (int j = 0; j < 8; j++) {
                int r = 8 * w + awq_order[j];
                if (r >= n) continue;
                size_t gi = (size_t)r * (size_t)groups + (size_t)g;
                out->zeros[gi] = (uint8_t)nibble(word, j);
                out->scales[gi] = scales[(size_t)g * (size_t)n + (size_t)r];
            }
        }
    return 0;
}

int convert_q4_0(const uint8_t *blocks, int n, int k, w4a16_t *out, err_t *err)
{
    if (k % 32 != 0) return err_set(err, ERR_INPUT, "q4_0: k = %d is not a multiple of 32", k);
    if (alloc_out(out, n, k, 32, "q4_0", err) != 0) return -1;
    int nb = k / 32;
    for (int r = 0; r < n; r++)
        for (int b = 0; b < nb; b++) {
            const uint8_t *blk = blocks + ((size_t)r * (size_t)nb + (size_t)b) * Q4_0_BLOCK_BYTES;
            size_t gi = (size_t)r * (size_t)nb + (size_t)b;
            out->scales[gi] = (uint16_t)(blk[0] | (blk[1] << 8));
            out->zeros[gi] = 8;
            for (int j = 0; j < 16; j++) {
                w4a16_set_q(out, r, 32 * b + j, blk[2 + j] & 0xFu);
                w4a16_set_q(out, r, 32 * b + j + 16, blk[2 + j] >> 4);
            }
        }
    return 0;
}
