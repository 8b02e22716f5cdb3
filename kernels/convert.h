/* convert — real checkpoints' 4-bit tensors into the W4A16 format of
 * w4a16.h (W[n][k], groups along k, w = (q − z)·s). Each converter allocates
 * *out (the caller frees it with w4a16_fini) and is exact: nibbles, fp16
 * scales and zeros are copied, never re-quantised. Shapes: n output features,
 * k input features (PyTorch Linear(in=k, out=n)).
 */
#ifndef SPECSIM_CONVERT_H
#define SPECSIM_CONVERT_H

#include <stdint.h>

#include "base/err.h"
#include "w4a16.h"

/* GPTQ (AutoGPTQ / GPTQ-for-LLaMa packing, "v1" zeros):
 *   qweight [k/8][n]  int32, packed along k: q(k, n) at bits 4·(k mod 8) of
 *                     qweight[k/8][n]
 *   qzeros  [k/g][⌈n/8⌉] int32, packed along n: (z − 1) mod 16 of (group, n) at
 *                     bits 4·(n mod 8) of qzeros[grp][n/8]
 *   scales  [k/g][n]  fp16
 *   g_idx   [k] or NULL: must be the identity grouping k/g (act-order
 *                     checkpoints permute k and are rejected).
 * A stored zero field of 15 decodes to z = 0 (it is z − 1 = −1 wrapped). */
int convert_gptq(const uint32_t *qweight, const uint32_t *qzeros, const uint16_t *scales,
                 const int32_t *g_idx, int n, int k, int group, w4a16_t *out, err_t *err);

/* AWQ (llm-awq / AutoAWQ "GEMM" packing):
 *   qweight [k][⌈n/8⌉] int32, packed along n: nibble slot j (bits 4j) of
 *                     qweight[k][n/8] holds column 8·(n/8) + AWQ_ORDER[j],
 *                     AWQ_ORDER = {0, 2, 4, 6, 1, 3, 5, 7}
 *   qzeros  [k/g][⌈n/8⌉] int32, same packing, z stored as is
 *   scales  [k/g][n]  fp16 */
int convert_awq(const uint32_t *qweight, const uint32_t *qzeros, const uint16_t *scales,
                int n, int k, int group, w4a16_t *out, err_t *err);

/* ggml q4_0: each row of k weights is k/32 blocks of 18 bytes
 * { fp16 d (little-endian); uint8 qs[16] }, element j of the block in the low
 * nibble of qs[j] and element j+16 in the high nibble; w = (q − 8)·d.
 * Result: group 32, z = 8, s = d. k must be a multiple of 32. */
int convert_q4_0(const uint8_t *blocks, int n, int k, w4a16_t *out, err_t *err);

#define Q4_0_BLOCK_BYTES 18

#endif
