/* attn — attention of q query tokens over a KV cache with the SIMD
 * primitives of a gemv context, parallel over query heads. Same contract and
 * arguments as ref_attention (ref.h), which is its ground truth.
 */
#ifndef SPECSIM_ATTN_H
#define SPECSIM_ATTN_H

#include <stdint.h>

#include "gemv.h"

/* 0, or -1 when scratch (one score row per thread) cannot be allocated. */
int attn_run(gemv_ctx_t *c, const uint16_t *q, const uint16_t *kc, const uint16_t *vc, int nq,
             int ctx, int heads, int kv_heads, int head_dim, uint16_t *out);

/* Bytes read (K and V of every visible position, once per KV head) and
 * FLOPs (q·k and p·v) of one call, for achieved-rate reporting. */
double attn_bytes(int nq, int ctx, int kv_heads, int head_dim);
double attn_flops(int nq, int ctx, int heads, int head_dim);

#endif
